"""Group configs (KIP-848, KIP-932, KIP-1240): per-group settings set through IncrementalAlterConfigs / AlterConfigs on
GROUP resources (type 32) and shown by DescribeConfigs, as Kafka 4.3's GroupConfig and GroupConfigManager keep them.

A group needs no members, nor even to exist, to hold configs. A config a group does not set takes its broker
synonym's current value (``share.delivery.count.limit`` <- ``group.share.delivery.count.limit``), read live, so a
broker config change reaches every group that does not override it; the share configs without a broker synonym
(``share.auto.offset.reset``, ``share.isolation.level``, ``share.renew.acknowledge.enable``) take GroupConfig's own
default.

Validation is GroupConfig.validate's, in its order and words (INVALID_CONFIG): the group's complete new set, merged
over the broker's values, must name known configs ("Unknown group config name: x"), parse as each config's type
("Invalid value x for configuration y: Not a number of type INT"), pass its validator (GroupConfig's atLeast /
ValidString / the offset-reset strategy), lie within the broker's ``group.*.min/max.*`` bounds ("x must be less than
or equal to group.share.max.delivery.count.limit"), and keep each session timeout above its heartbeat interval.
The values a group runs with are clamped into the bounds again when read (GroupConfig.evaluate), since the broker's
bounds may have moved since. Kafka's ``streams.*`` group configs are described as Kafka describes them, but refused:
kafkamock serves no streams groups, and an accepted config must take effect.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kafkamock.broker.config import BrokerConfig, ConfigDef
from kafkamock.broker.errors import ErrorCode, KafkaError

OFFSET_RESETS = ("latest", "earliest")
ISOLATION_LEVELS = ("read_committed", "read_uncommitted")
INT_RE = re.compile(r"[+-]?\d+")


def _auto_offset_reset(value: str) -> bool:
    """ShareGroupAutoOffsetResetStrategy.fromString: latest, earliest or by_duration:<non-negative ISO-8601>."""
    if value in OFFSET_RESETS:
        return True
    if not value.startswith("by_duration:"):
        return False
    from kafkamock.durations import parse_duration_ms
    try:
        return parse_duration_ms(value.split(":", 1)[1]) >= 0
    except ValueError:
        return False


@dataclass(frozen=True)
class GroupConfigSpec:
    """One of Kafka's GroupConfig definitions."""

    name: str
    type: str                                   # INT, STRING, BOOLEAN
    default: Any                                # GroupConfig.CONFIG_DEF's default
    at_least: int | None = None                 # its Range.atLeast
    check: Callable[[Any], str | None] | None = None    # another validator: the reason a value is refused
    synonym: str | None = None                  # the broker config it defaults to
    bounds: tuple[str, str] | None = None       # the broker configs bounding it (min, max)
    served: bool = True                         # False: described, but refused (kafkamock has no such groups)
    broker_default: bool = True                 # defaults to the synonym's value (GroupCoordinatorConfig's
    #                                             extractGroupConfigMap); else to ``default`` until set


def _isolation(value: str) -> str | None:
    return None if value in ISOLATION_LEVELS else "String must be one of: read_committed, read_uncommitted"


def _reset(value: str) -> str | None:
    if _auto_offset_reset(value):
        return None
    return (f"Invalid value `{value}` for configuration share.auto.offset.reset. The value must be either "
            "'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'.")


# In GroupConfig.CONFIG_DEF's order (the order values are parsed in, so the first bad one is the one reported).
SPECS: list[GroupConfigSpec] = [
    GroupConfigSpec("consumer.session.timeout.ms", "INT", 45000, 1, synonym="group.consumer.session.timeout.ms",
                    bounds=("group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms")),
    GroupConfigSpec("consumer.heartbeat.interval.ms", "INT", 5000, 1, synonym="group.consumer.heartbeat.interval.ms",
                    bounds=("group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms")),
    GroupConfigSpec("consumer.assignment.interval.ms", "INT", 1000, 0, synonym="group.consumer.assignment.interval.ms",
                    bounds=("group.consumer.min.assignment.interval.ms", "group.consumer.max.assignment.interval.ms"),
                    broker_default=False),
    GroupConfigSpec("share.session.timeout.ms", "INT", 45000, 1, synonym="group.share.session.timeout.ms",
                    bounds=("group.share.min.session.timeout.ms", "group.share.max.session.timeout.ms")),
    GroupConfigSpec("share.heartbeat.interval.ms", "INT", 5000, 1, synonym="group.share.heartbeat.interval.ms",
                    bounds=("group.share.min.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms")),
    GroupConfigSpec("share.record.lock.duration.ms", "INT", 30000, 1000, synonym="group.share.record.lock.duration.ms",
                    bounds=("group.share.min.record.lock.duration.ms", "group.share.max.record.lock.duration.ms")),
    GroupConfigSpec("share.delivery.count.limit", "INT", 5, 2, synonym="group.share.delivery.count.limit",
                    bounds=("group.share.min.delivery.count.limit", "group.share.max.delivery.count.limit")),
    GroupConfigSpec("share.partition.max.record.locks", "INT", 2000, 100,
                    synonym="group.share.partition.max.record.locks",
                    bounds=("group.share.min.partition.max.record.locks",
                            "group.share.max.partition.max.record.locks")),
    GroupConfigSpec("share.auto.offset.reset", "STRING", "latest", check=_reset),
    GroupConfigSpec("share.isolation.level", "STRING", "read_uncommitted", check=_isolation),
    GroupConfigSpec("share.renew.acknowledge.enable", "BOOLEAN", True),
    GroupConfigSpec("share.assignment.interval.ms", "INT", 1000, 0, synonym="group.share.assignment.interval.ms",
                    bounds=("group.share.min.assignment.interval.ms", "group.share.max.assignment.interval.ms"),
                    broker_default=False),
    # Streams groups (KIP-1071) are not served: their configs are described as Kafka describes them, but refused.
    GroupConfigSpec("streams.session.timeout.ms", "INT", 45000, 1, synonym="group.streams.session.timeout.ms",
                    served=False),
    GroupConfigSpec("streams.heartbeat.interval.ms", "INT", 5000, 1, synonym="group.streams.heartbeat.interval.ms",
                    served=False),
    GroupConfigSpec("streams.num.standby.replicas", "INT", 0, 0, synonym="group.streams.num.standby.replicas",
                    served=False),
    GroupConfigSpec("streams.initial.rebalance.delay.ms", "INT", 3000, 0,
                    synonym="group.streams.initial.rebalance.delay.ms", served=False),
    GroupConfigSpec("streams.assignment.interval.ms", "INT", 1000, 0, synonym="group.streams.assignment.interval.ms",
                    served=False),
]
SPEC = {s.name: s for s in SPECS}
GROUP_CONFIGS: dict[str, ConfigDef] = {s.name: ConfigDef(s.name, s.type, s.default) for s in SPECS}
# The order GroupConfig.validateValues checks the bounds in, then its session > heartbeat checks.
BOUNDS_ORDER = ("consumer.heartbeat.interval.ms", "consumer.session.timeout.ms", "consumer.assignment.interval.ms",
                "share.heartbeat.interval.ms",
                "share.session.timeout.ms", "share.record.lock.duration.ms", "share.delivery.count.limit",
                "share.partition.max.record.locks", "share.assignment.interval.ms")
SESSION_OVER_HEARTBEAT = (("consumer.session.timeout.ms", "consumer.heartbeat.interval.ms"),
                          ("share.session.timeout.ms", "share.heartbeat.interval.ms"))


def _invalid(name: str, raw: Any, reason: str) -> KafkaError:
    """ConfigException(name, value, message)'s words."""
    return KafkaError(ErrorCode.INVALID_CONFIG, f"Invalid value {raw} for configuration {name}: {reason}")


def parse(spec: GroupConfigSpec, raw: Any) -> Any:
    """A value from its string (or already parsed) form, as ConfigDef.parseType and the config's validator do."""
    if spec.type == "INT":
        if isinstance(raw, bool) or not isinstance(raw, int):
            text = str(raw).strip()
            if not INT_RE.fullmatch(text) or not -(2**31) <= int(text) < 2**31:
                raise _invalid(spec.name, raw, "Not a number of type INT")
            value: Any = int(text)
        else:
            value = raw
        if spec.at_least is not None and value < spec.at_least:
            raise _invalid(spec.name, raw, f"Value must be at least {spec.at_least}")
        return value
    if spec.type == "BOOLEAN":
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text not in ("true", "false"):
            raise _invalid(spec.name, raw, "Expected value to be either true or false")
        return text == "true"
    value = str(raw).strip()
    reason = spec.check(value) if spec.check else None
    if reason:
        raise _invalid(spec.name, raw, reason)
    return value


class GroupConfigs:
    """Every group's own configs; ``value`` is what a group runs with."""

    def __init__(self, broker_config: BrokerConfig) -> None:
        self.broker_config = broker_config
        self.overrides: dict[str, dict[str, Any]] = {}

    def default(self, name: str) -> Any:
        """What a group that does not set ``name`` runs with."""
        spec = SPEC[name]
        return self.broker_config[spec.synonym] if spec.synonym else spec.default

    def value(self, group_id: str, name: str) -> Any:
        """The value group ``group_id`` runs with: its own, clamped into the broker's current bounds
        (GroupConfig.evaluate), else the default."""
        own = self.overrides.get(group_id, {})
        if name not in own:
            return self.default(name)
        value = own[name]
        bounds = SPEC[name].bounds
        if bounds is not None:
            value = min(max(value, self.broker_config[bounds[0]]), self.broker_config[bounds[1]])
        return value

    def shown(self, group_id: str, name: str) -> Any:
        """The value DescribeConfigs shows: the group's own as set, else its defaults map's (the broker synonym's
        for the configs GroupCoordinatorConfig.extractGroupConfigMap copies, GroupConfig's default otherwise)."""
        own = self.overrides.get(group_id, {})
        if name in own:
            return own[name]
        spec = SPEC[name]
        return self.broker_config[spec.synonym] if spec.synonym and spec.broker_default else spec.default

    def synonyms(self, group_id: str, name: str) -> list[tuple[str, Any, str]]:
        """(name, value, source) as ConfigHelper.createGroupConfigEntry lists them: the group's own value
        (DYNAMIC_GROUP_CONFIG), then the broker synonym's levels, or GroupConfig's default when it has none."""
        spec = SPEC[name]
        if spec.synonym:
            out = list(self.broker_config.synonyms(spec.synonym))
        else:
            out = [(name, spec.default, "DEFAULT_CONFIG")]
        if name in self.overrides.get(group_id, {}):
            out.insert(0, (name, self.overrides[group_id][name], "DYNAMIC_GROUP_CONFIG"))
        return out

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
        """Parse and validate a group's complete set of configs as GroupConfig.validate does (INVALID_CONFIG)."""
        for name in configs:
            if name not in SPEC:
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown group config name: {name}")
            if not SPEC[name].served:
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"Group config {name} is not supported: kafkamock "
                                                           "serves no streams groups.")
        parsed = {spec.name: parse(spec, configs[spec.name]) for spec in SPECS if spec.name in configs}
        merged = {spec.name: parsed.get(spec.name, self.shown("", spec.name)) for spec in SPECS}
        for spec in (SPEC[n] for n in BOUNDS_ORDER):
            if (not spec.broker_default and spec.name not in parsed):
                continue
            assert spec.bounds is not None                # BOUNDS_ORDER names bounded configs only
            low, high = spec.bounds
            if merged[spec.name] < self.broker_config[low]:
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"{spec.name} must be greater than or equal to {low}")
            if merged[spec.name] > self.broker_config[high]:
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"{spec.name} must be less than or equal to {high}")
        for session, heartbeat in SESSION_OVER_HEARTBEAT:
            if merged[session] <= merged[heartbeat]:
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"{session} must be greater than {heartbeat}")
        return parsed

    def snapshot(self) -> dict[str, dict[str, Any]]:
        return {g: dict(c) for g, c in self.overrides.items()}

    def restore(self, saved: Mapping[str, Mapping[str, Any]]) -> None:
        self.overrides = {g: dict(c) for g, c in saved.items()}
