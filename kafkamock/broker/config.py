"""Broker and topic configuration, with Kafka's names, types and defaults.

Topic configs fall back to their broker-level synonym (``retention.ms`` -> ``log.retention.ms``), as in Kafka;
DescribeConfigs reports where each value comes from.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

LONG_MAX = 2**63 - 1


@dataclass(frozen=True, slots=True)
class ConfigDef:
    name: str
    type: str                     # BOOLEAN STRING INT SHORT LONG DOUBLE LIST CLASS PASSWORD (Kafka's ConfigType)
    default: Any
    synonym: str | None = None    # the broker config a topic config defaults to
    validator: Callable[[Any], bool] | None = None
    sensitive: bool = False


def _one_of(*choices: str) -> Callable[[Any], bool]:
    return lambda v: v in choices


def _at_least(low: int) -> Callable[[Any], bool]:
    return lambda v: v >= low


BROKER_CONFIGS: dict[str, ConfigDef] = {c.name: c for c in [
    ConfigDef("node.id", "INT", 0),
    ConfigDef("auto.create.topics.enable", "BOOLEAN", True),
    ConfigDef("num.partitions", "INT", 1, validator=_at_least(1)),
    ConfigDef("default.replication.factor", "INT", 1, validator=_at_least(1)),
    ConfigDef("delete.topic.enable", "BOOLEAN", True),
    ConfigDef("socket.request.max.bytes", "INT", 104857600, validator=_at_least(1)),
    ConfigDef("message.max.bytes", "INT", 1048588, validator=_at_least(0)),
    ConfigDef("log.retention.ms", "LONG", 604800000),
    ConfigDef("log.retention.bytes", "LONG", -1),
    ConfigDef("log.retention.check.interval.ms", "LONG", 300000, validator=_at_least(1)),
    ConfigDef("log.cleanup.policy", "LIST", "delete"),
    ConfigDef("log.message.timestamp.type", "STRING", "CreateTime", validator=_one_of("CreateTime", "LogAppendTime")),
    ConfigDef("log.segment.bytes", "INT", 1073741824),
    ConfigDef("log.roll.ms", "LONG", 604800000),
    ConfigDef("log.cleaner.delete.retention.ms", "LONG", 86400000),
    ConfigDef("log.message.timestamp.before.max.ms", "LONG", LONG_MAX),
    ConfigDef("log.message.timestamp.after.max.ms", "LONG", 3600000),
    ConfigDef("min.insync.replicas", "INT", 1, validator=_at_least(1)),
    ConfigDef("compression.type", "STRING", "producer",
              validator=_one_of("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd")),
    ConfigDef("unclean.leader.election.enable", "BOOLEAN", False),
    ConfigDef("offsets.retention.minutes", "INT", 10080, validator=_at_least(1)),
    ConfigDef("offsets.retention.check.interval.ms", "LONG", 600000, validator=_at_least(1)),
    ConfigDef("transactional.id.expiration.ms", "INT", 604800000, validator=_at_least(1)),
    ConfigDef("producer.id.expiration.ms", "INT", 86400000, validator=_at_least(1)),
    ConfigDef("group.share.record.lock.duration.ms", "INT", 30000, validator=_at_least(1000)),
    ConfigDef("group.share.delivery.count.limit", "INT", 5, validator=_at_least(2)),
]}

TOPIC_CONFIGS: dict[str, ConfigDef] = {c.name: c for c in [
    ConfigDef("cleanup.policy", "LIST", "delete", "log.cleanup.policy",
              lambda v: all(p in ("delete", "compact") for p in str(v).split(",")) and bool(v)),
    ConfigDef("retention.ms", "LONG", 604800000, "log.retention.ms", _at_least(-1)),
    ConfigDef("retention.bytes", "LONG", -1, "log.retention.bytes"),
    ConfigDef("max.message.bytes", "INT", 1048588, "message.max.bytes", _at_least(0)),
    ConfigDef("message.timestamp.type", "STRING", "CreateTime", "log.message.timestamp.type",
              _one_of("CreateTime", "LogAppendTime")),
    ConfigDef("message.timestamp.before.max.ms", "LONG", LONG_MAX, "log.message.timestamp.before.max.ms",
              _at_least(0)),
    ConfigDef("message.timestamp.after.max.ms", "LONG", 3600000, "log.message.timestamp.after.max.ms",
              _at_least(0)),
    ConfigDef("segment.bytes", "INT", 1073741824, "log.segment.bytes", _at_least(14)),
    ConfigDef("segment.ms", "LONG", 604800000, "log.roll.ms", _at_least(1)),
    ConfigDef("delete.retention.ms", "LONG", 86400000, "log.cleaner.delete.retention.ms", _at_least(0)),
    ConfigDef("min.insync.replicas", "INT", 1, "min.insync.replicas", _at_least(1)),
    ConfigDef("compression.type", "STRING", "producer", "compression.type",
              _one_of("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd")),
    ConfigDef("unclean.leader.election.enable", "BOOLEAN", False, "unclean.leader.election.enable"),
    ConfigDef("min.compaction.lag.ms", "LONG", 0, None, _at_least(0)),
    ConfigDef("max.compaction.lag.ms", "LONG", LONG_MAX, None, _at_least(1)),
    ConfigDef("min.cleanable.dirty.ratio", "DOUBLE", 0.5, None, lambda v: 0 <= v <= 1),
    ConfigDef("file.delete.delay.ms", "LONG", 60000, None, _at_least(0)),
    ConfigDef("flush.messages", "LONG", LONG_MAX, None, _at_least(1)),
    ConfigDef("flush.ms", "LONG", LONG_MAX, None, _at_least(0)),
    ConfigDef("index.interval.bytes", "INT", 4096, None, _at_least(0)),
    ConfigDef("preallocate", "BOOLEAN", False),
    ConfigDef("segment.index.bytes", "INT", 10485760, None, _at_least(4)),
    ConfigDef("segment.jitter.ms", "LONG", 0, None, _at_least(0)),
    ConfigDef("local.retention.ms", "LONG", -2, None, _at_least(-2)),
    ConfigDef("local.retention.bytes", "LONG", -2, None, _at_least(-2)),
    ConfigDef("remote.storage.enable", "BOOLEAN", False),
]}


class ConfigError(ValueError):
    """An unknown config name or a value its definition refuses (Kafka answers INVALID_CONFIG)."""


def parse_value(definition: ConfigDef, raw: object) -> Any:
    """A config value from its string (or native) form, validated; raises ConfigError."""
    try:
        if definition.type == "BOOLEAN":
            if isinstance(raw, bool):
                value: Any = raw
            elif str(raw).strip().lower() in ("true", "false"):
                value = str(raw).strip().lower() == "true"
            else:
                raise ValueError("expected true or false")
        elif definition.type in ("INT", "SHORT", "LONG"):
            value = int(str(raw).strip())
            if definition.type == "INT" and not -(2**31) <= value < 2**31:
                raise ValueError("out of range for an int")
        elif definition.type == "DOUBLE":
            value = float(str(raw).strip())
        elif definition.type == "LIST":
            value = ",".join(p.strip() for p in str(raw).split(",") if p.strip())
        else:
            value = str(raw)
    except ValueError as exc:
        raise ConfigError(f"Invalid value {raw} for configuration {definition.name}: {exc}") from None
    if definition.validator is not None and not definition.validator(value):
        raise ConfigError(f"Invalid value {raw} for configuration {definition.name}")
    return value


def format_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class BrokerConfig:
    """The broker's settings: Kafka's names, defaults overridden from the command line, a TOML file or the API."""

    def __init__(self, overrides: Mapping[str, object] | None = None):
        self.values: dict[str, Any] = {name: d.default for name, d in BROKER_CONFIGS.items()}
        self.dynamic: set[str] = set()
        self.static: set[str] = set()
        for name, raw in (overrides or {}).items():
            self.set(name, raw, static=True)

    def set(self, name: str, raw: object, *, static: bool = False) -> None:
        definition = BROKER_CONFIGS.get(name)
        if definition is None:
            raise ConfigError(f"Unknown broker config {name}")
        self.values[name] = parse_value(definition, raw)
        (self.static if static else self.dynamic).add(name)

    def reset(self, name: str) -> None:
        definition = BROKER_CONFIGS.get(name)
        if definition is None:
            raise ConfigError(f"Unknown broker config {name}")
        self.dynamic.discard(name)
        if name not in self.static:
            self.values[name] = definition.default

    def __getitem__(self, name: str) -> Any:
        return self.values[name]


def topic_config_value(name: str, topic_overrides: Mapping[str, Any], broker: BrokerConfig) -> tuple[Any, str]:
    """(value, source) of a topic config: the topic's own, else its broker synonym, else the default."""
    if name in topic_overrides:
        return topic_overrides[name], "TOPIC_CONFIG"
    definition = TOPIC_CONFIGS[name]
    if definition.synonym and definition.synonym in broker.values and (
            definition.synonym in broker.dynamic or definition.synonym in broker.static):
        source = "DYNAMIC_BROKER_CONFIG" if definition.synonym in broker.dynamic else "STATIC_BROKER_CONFIG"
        return broker[definition.synonym], source
    return definition.default, "DEFAULT_CONFIG"
