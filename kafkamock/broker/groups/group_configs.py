"""Group configs (KIP-848, KIP-932): per-group settings set through IncrementalAlterConfigs / AlterConfigs on GROUP
resources (type 32) and shown by DescribeConfigs, as Kafka 4.3's GroupConfig and GroupConfigManager keep them.

A group needs no members, nor even to exist, to hold configs. A config a group does not set takes its broker
synonym's current value (``share.record.lock.duration.ms`` <- ``group.share.record.lock.duration.ms``), read live,
so a broker config change reaches every group that does not override it. Values must lie within the broker's
min/max bounds (INVALID_CONFIG otherwise, as Kafka's GroupConfig.validate). Kafka's ``streams.*`` group configs
are refused: kafkamock serves no streams groups, and an accepted config must take effect.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafkamock.broker.config import ConfigDef, ConfigError, parse_value
from kafkamock.broker.errors import ErrorCode, KafkaError

OFFSET_RESETS = ("latest", "earliest")
ISOLATION_LEVELS = ("read_uncommitted", "read_committed")


def _auto_offset_reset(value: str) -> bool:
    if value in OFFSET_RESETS:
        return True
    if not value.startswith("by_duration:"):
        return False
    from kafkamock.broker.share.manager import parse_duration_ms
    try:
        return parse_duration_ms(value.split(":", 1)[1]) >= 0
    except ValueError:
        return False


GROUP_CONFIGS: dict[str, ConfigDef] = {c.name: c for c in [
    ConfigDef("consumer.session.timeout.ms", "INT", None),
    ConfigDef("consumer.heartbeat.interval.ms", "INT", None),
    ConfigDef("share.session.timeout.ms", "INT", None),
    ConfigDef("share.heartbeat.interval.ms", "INT", None),
    ConfigDef("share.record.lock.duration.ms", "INT", None),
    ConfigDef("share.auto.offset.reset", "STRING", "latest", validator=_auto_offset_reset),
    ConfigDef("share.isolation.level", "STRING", "read_uncommitted", validator=lambda v: v in ISOLATION_LEVELS),
]}
# The broker config each group config defaults to, and the broker configs bounding it (Kafka's GroupConfig).
SYNONYMS = {
    "consumer.session.timeout.ms": ("group.consumer.session.timeout.ms", "group.consumer.min.session.timeout.ms",
                                    "group.consumer.max.session.timeout.ms"),
    "consumer.heartbeat.interval.ms": ("group.consumer.heartbeat.interval.ms",
                                       "group.consumer.min.heartbeat.interval.ms",
                                       "group.consumer.max.heartbeat.interval.ms"),
    "share.session.timeout.ms": ("group.share.session.timeout.ms", "group.share.min.session.timeout.ms",
                                 "group.share.max.session.timeout.ms"),
    "share.heartbeat.interval.ms": ("group.share.heartbeat.interval.ms", "group.share.min.heartbeat.interval.ms",
                                    "group.share.max.heartbeat.interval.ms"),
    "share.record.lock.duration.ms": ("group.share.record.lock.duration.ms",
                                      "group.share.min.record.lock.duration.ms",
                                      "group.share.max.record.lock.duration.ms"),
}
REFUSED_PREFIXES = ("streams.",)


class GroupConfigs:
    """Every group's own configs; ``value`` is what a group runs with."""

    def __init__(self, broker_config) -> None:
        self.broker_config = broker_config
        self.overrides: dict[str, dict[str, Any]] = {}

    def value(self, group_id: str, name: str) -> Any:
        own = self.overrides.get(group_id, {})
        if name in own:
            return own[name]
        synonym = SYNONYMS.get(name)
        return self.broker_config[synonym[0]] if synonym else GROUP_CONFIGS[name].default

    def of(self, group_id: str) -> dict[str, Any]:
        return dict(self.overrides.get(group_id, {}))

    def set(self, group_id: str, configs: Mapping[str, Any]) -> None:
        """Replace the group's whole set of configs (validated; string or parsed values)."""
        parsed = self.parse(configs)
        if parsed:
            self.overrides[group_id] = parsed
        else:
            self.overrides.pop(group_id, None)

    def parse(self, configs: Mapping[str, Any]) -> dict[str, Any]:
        """Parse and validate a group's complete set of configs (INVALID_CONFIG, in Kafka's words)."""
        parsed: dict[str, Any] = {}
        for name, raw in configs.items():
            if name.startswith(REFUSED_PREFIXES):
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"Group config {name} is not supported: kafkamock "
                                                           "serves no streams groups.")
            definition = GROUP_CONFIGS.get(name)
            if definition is None:
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown group config name: {name}")
            try:
                value = parse_value(definition, raw)
            except ConfigError as exc:
                raise KafkaError(ErrorCode.INVALID_CONFIG, str(exc)) from None
            bounds = SYNONYMS.get(name)
            if bounds is not None:
                low, high = self.broker_config[bounds[1]], self.broker_config[bounds[2]]
                if value < low:
                    raise KafkaError(ErrorCode.INVALID_CONFIG, f"{name} must be greater than or equal to {bounds[1]}")
                if value > high:
                    raise KafkaError(ErrorCode.INVALID_CONFIG, f"{name} must be less than or equal to {bounds[2]}")
            parsed[name] = value
        return parsed

    def snapshot(self) -> dict[str, dict[str, Any]]:
        return {g: dict(c) for g, c in self.overrides.items()}

    def restore(self, saved: Mapping[str, Mapping[str, Any]]) -> None:
        self.overrides = {g: dict(c) for g, c in saved.items()}
