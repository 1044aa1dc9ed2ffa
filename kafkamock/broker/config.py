"""Broker and topic configuration: every config of Kafka 4.3.1 (``kafka_configs``), with kafkamock's own few, its
defaults where they are not Kafka's, and its limits, the values Kafka accepts that kafkamock cannot carry out
(refused with a reason rather than stored unused).

Topic configs fall back to their broker-level synonym (``retention.ms`` -> ``log.retention.ms``), and a few broker
configs without a default derive from others (``log.retention.ms`` -> ``log.retention.minutes`` ->
``log.retention.hours``), as in Kafka; DescribeConfigs reports where each value comes from.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kafkamock.broker import kafka_configs
from kafkamock.broker.authorizer import AUTHORIZER_CLASS_NAMES, parse_super_users
from kafkamock.broker.kafka_configs import ConfigError, KafkaConfig, invalid, java_text, parse_type, to_string
from kafkamock.broker.kafka_releases import LATEST, RELEASES
from kafkamock.spelling import closest

LONG_MAX = 2**63 - 1


@dataclass(frozen=True, slots=True)
class ConfigDef:
    """A config as kafkamock serves it: Kafka's definition (``kafka``; None for kafkamock's own configs), the
    default kafkamock uses, and ``limit``: why kafkamock cannot serve a value Kafka would accept (None: it can)."""

    name: str
    type: str                     # BOOLEAN STRING INT SHORT LONG DOUBLE LIST CLASS PASSWORD (Kafka's ConfigType)
    default: Any
    synonym: str | None = None    # the broker config a topic config defaults to
    validator: Callable[[Any], bool] | None = None    # kafkamock's own configs: the values they accept
    sensitive: bool = False
    kafka: KafkaConfig | None = None
    dynamic: str = "read-only"    # broker configs: read-only, per-broker or cluster-wide (Kafka's update modes)
    limit: Callable[[Any], str | None] | None = None


def _at_least(low: int) -> Callable[[Any], bool]:
    return lambda v: v >= low


def _between(low: int, high: int) -> Callable[[Any], bool]:
    return lambda v: low <= v <= high


def _listener(v: str) -> tuple[str, str, int | None] | None:
    """``[NAME://]host:port`` -> (name, host, port); None when malformed. Only the first listener is used."""
    first = v.split(",")[0].strip()
    m = re.fullmatch(r"(?:([A-Za-z0-9_]+)://)?(\[[^\]]*\]|[^:\[\]]*):(\d*)", first)
    if m is None:
        return None
    name, host, port = m.group(1) or "PLAINTEXT", m.group(2).strip("[]"), m.group(3)
    return name, host, int(port) if port else None


def parse_listener(v: str) -> tuple[str, str, int | None]:
    listener = _listener(v)
    if listener is None:
        raise ConfigError(f"Invalid listener {v!r}: expected NAME://host:port")
    return listener


def _ip_overrides(v: str) -> dict[str, int] | None:
    """``max.connections.per.ip.overrides``: ``host:count`` pairs, comma-separated; None when malformed."""
    out: dict[str, int] = {}
    for item in (p.strip() for p in v.split(",")):
        if not item:
            continue
        host, sep, count = item.rpartition(":")
        if not sep or not host or not count.isdigit():
            return None
        out[host.strip("[]")] = int(count)
    return out


def ip_overrides(v: str) -> dict[str, int]:
    return _ip_overrides(v) or {}
def parse_listeners(v: str) -> list[tuple[str, str, int | None]]:
    """Every ``NAME://host:port`` of a ``listeners`` / ``advertised.listeners`` value, in order."""
    return [parse_listener(part) for part in v.split(",") if part.strip()]


def _listeners(v: str) -> bool:
    return all(_listener(part) is not None for part in v.split(",") if part.strip())


def _protocol_map(v: str) -> bool:
    """``NAME:PROTOCOL`` pairs, each protocol one of Kafka's four (SecurityProtocol)."""
    pairs = [p.strip().split(":") for p in v.split(",") if p.strip()]
    return bool(pairs) and all(len(p) == 2 and p[0] and p[1] in SECURITY_PROTOCOLS for p in pairs)


SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")


SERVER_ASSIGNORS = ("uniform", "range")


def server_assignor_names(v: str) -> list[str]:
    """``group.consumer.assignors`` as names: Kafka takes class names (``...assignor.UniformAssignor``); kafkamock
    serves its two built-in assignors, by name or by Kafka's class name."""
    return [a.strip().rsplit(".", 1)[-1].removesuffix("Assignor").lower() for a in v.split(",") if a.strip()]


def _server_assignors(v: str) -> bool:
    names = server_assignor_names(v)
    return bool(names) and all(n in SERVER_ASSIGNORS for n in names)


def _rebalance_protocols(v: str) -> str | None:
    names = {p.strip().lower() for p in v.split(",") if p.strip()}
    if "streams" in names:
        return "kafkamock does not serve streams groups (KIP-1071)"
    return None if "classic" in names else "kafkamock serves the classic protocol in every configuration"


def _super_users(v: str) -> bool:
    try:
        parse_super_users(v)
    except ValueError:
        return False
    return True


# kafkamock's own configs (Kafka has no such names): how kafkamock behaves where the choice is its own.
OWN_CONFIGS: list[ConfigDef] = [
    # The finalized level of the ``transaction.version`` feature that ApiVersions lists (Kafka sets it when a
    # cluster is formatted: 2, KIP-890 part 2, for a new Kafka 4.x cluster). At 2, Java 4.x producers skip
    # AddPartitionsToTxn/AddOffsetsToTxn (the first Produce v12+ or TxnOffsetCommit v5 adds the partition) and end
    # every transaction with EndTxn v5's epoch bump; 0 or 1 keeps them on the KIP-890 part 1 path.
    ConfigDef("kafkamock.transaction.version", "SHORT", 2, validator=_between(0, 2)),
    # After this many SHARE_DELTA batches a share-partition writes a fresh SHARE_CHECKPOINT, so a restart replays
    # a short chain (the KIP-932 seed page leaves the length to the implementation).
    ConfigDef("kafkamock.share.delta.chain.max", "INT", 64, validator=_at_least(1), dynamic="cluster-wide"),
    # Also serve Produce v0-2 and Fetch v0-3 (magic 0/1 message sets), removed in Kafka 4.0 (KIP-896), the way
    # Kafka 3.x served them. Off by default, as in Kafka 4.x.
    ConfigDef("kafkamock.legacy.protocol.enable", "BOOLEAN", False),
    # The Apache Kafka release the broker presents itself as (kafka_releases.py): its ApiVersions ranges and
    # feature levels (`kafkamock serve --kafka-version`).
    ConfigDef("kafkamock.kafka.version", "STRING", LATEST,
              limit=lambda v: None if v in RELEASES else f"kafkamock presents itself as Kafka {', '.join(RELEASES)}"),
    # How many requests the control API's request log keeps (0: none).
    ConfigDef("kafkamock.request.log.max.entries", "INT", 10000, validator=_at_least(0), dynamic="cluster-wide"),
    # StandardAuthorizer's own settings (authorizer.py); Kafka reads them from the broker's properties, outside
    # its KafkaConfig, so DescribeConfigs lists them only when they are set.
    ConfigDef("super.users", "STRING", "", validator=_super_users),
    ConfigDef("allow.everyone.if.no.acl.found", "BOOLEAN", False),
]

# Where kafkamock's defaults are not Kafka's, and why.
KAFKAMOCK_DEFAULTS: dict[str, Any] = {
    "node.id": 1,                     # Kafka requires one; node k of a kafkamock cluster is node.id + k - 1
    "log.dirs": "",                   # empty: logs in memory (kafkamock's default storage)
    "listeners": "",                  # empty: one PLAINTEXT listener on --host/--port (node k: port + k - 1)
    # Kafka's default adds "streams" (KIP-1071 streams groups), which kafkamock does not serve.
    "group.coordinator.rebalance.protocols": "classic,consumer",
}

# Values of configs Kafka accepts that kafkamock cannot serve: a reason for each refused value (checked after
# Kafka's own parsing and validation), so a setting never silently does nothing.
KAFKAMOCK_LIMITS: dict[str, Callable[[Any], str | None]] = {
    "log.preallocate": lambda v: "kafkamock writes segment files as they grow; it does not preallocate them"
    if v else None,
    "listeners": lambda v: None if _listeners(v) else "expected NAME://host:port[,NAME://host:port...]",
    "advertised.listeners": lambda v: None if _listeners(v or "") else "expected NAME://host:port[,...]",
    "listener.security.protocol.map": lambda v: None if _protocol_map(v) else
    "expected NAME:PROTOCOL pairs, each protocol one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL",
    "ssl.keystore.type": lambda v: None if v in ("JKS", "PKCS12", "PEM") else "kafkamock reads PKCS12 and PEM stores",
    "ssl.truststore.type": lambda v: None if v in ("JKS", "PKCS12", "PEM") else "kafkamock reads PKCS12 and PEM stores",
    "ssl.enabled.protocols": lambda v: None if v and all(p in ("TLSv1.2", "TLSv1.3") for p in v.split(",")) else
    "kafkamock's TLS serves TLSv1.2 and TLSv1.3",
    "ssl.principal.mapping.rules": lambda v: None if v == "DEFAULT" else
    "kafkamock maps certificate principals with Kafka's DEFAULT rule only",
    "authorizer.class.name": lambda v: None if v == "" or v in AUTHORIZER_CLASS_NAMES else
    "kafkamock serves StandardAuthorizer's ACLs (org.apache.kafka.metadata.authorizer.StandardAuthorizer)",
    "group.consumer.assignors": lambda v: None if _server_assignors(v) else
    "kafkamock serves the uniform and range server assignors",
    "group.coordinator.rebalance.protocols": _rebalance_protocols,
    "group.share.assignors": lambda v: None if v == "simple" else "kafkamock serves the simple share assignor",
    "remote.log.storage.system.enable": lambda v: "kafkamock has no tiered storage" if v else None,
    "transaction.two.phase.commit.enable": lambda v: "kafkamock does not serve two-phase commit (KIP-939)"
    if v else None,
    "unstable.api.versions.enable": lambda v: "kafkamock serves Kafka 4.3.1's stable API versions only" if v else None,
    "unstable.feature.versions.enable": lambda v: "kafkamock serves Kafka 4.3.1's stable features only" if v else None,
}

# Configs whose only settings kafkamock serves are their defaults: they change what clients see in ways kafkamock
# does not emulate. (Configs that tune machinery kafkamock does not have — threads, buffers, purgatories, the KRaft
# quorum and metadata log, replica fetchers, tiered storage left off, Kerberos, the broker's own client logins —
# are accepted, stored and described as Kafka does, with nothing for them to tune.)
DEFAULT_ONLY: dict[str, str] = {
    "max.connection.creation.rate": "kafkamock does not limit the rate of new connections",
    "config.providers": "kafkamock has no config providers",
    "sasl.oauthbearer.jwks.endpoint.url": "kafkamock validates OAUTHBEARER tokens with Kafka's unsecured validator",
    "sasl.oauthbearer.expected.audience": "kafkamock validates OAUTHBEARER tokens with Kafka's unsecured validator",
    "sasl.oauthbearer.expected.issuer": "kafkamock validates OAUTHBEARER tokens with Kafka's unsecured validator",
    "ssl.cipher.suites": "kafkamock's TLS uses OpenSSL's default cipher suites",
}
_JAVA_CLASSES = "kafkamock cannot load Java classes"


# Kafka's class-list configs (the CLASS-typed ones are refused the same way).
_CLASS_LISTS = ("metric.reporters", "kafka.metrics.reporters", "security.providers")
# Topic configs with a limit of their own.
TOPIC_LIMITS: dict[str, Callable[[Any], str | None]] = {"preallocate": KAFKAMOCK_LIMITS["log.preallocate"]}


def _broker_limit(kafka: KafkaConfig, default: Any) -> Callable[[Any], str | None] | None:
    """A broker config's limit: its own (KAFKAMOCK_LIMITS), else any value but the default refused, with a reason,
    for DEFAULT_ONLY configs and Java class names."""
    if kafka.name in KAFKAMOCK_LIMITS:
        return KAFKAMOCK_LIMITS[kafka.name]
    why = DEFAULT_ONLY.get(kafka.name) or (_JAVA_CLASSES if kafka.name in _CLASS_LISTS else None)
    if why is None:
        return None
    unset = ("", None)
    return lambda v: None if v == default or (v in unset and default in unset) else why


def _joined(value: Any) -> Any:
    return ",".join(value) if isinstance(value, list) else value


def _broker_config(kafka: KafkaConfig) -> ConfigDef:
    default = KAFKAMOCK_DEFAULTS.get(kafka.name, _joined(kafka.default_value))
    return ConfigDef(kafka.name, kafka.type, default, sensitive=kafka.type == "PASSWORD", kafka=kafka,
                     dynamic=kafka.dynamic, limit=_broker_limit(kafka, default))


def _topic_config(kafka: KafkaConfig) -> ConfigDef:
    """A topic config, defaulting to its broker synonym (the first of Kafka's synonyms), dynamic by nature."""
    return ConfigDef(kafka.name, kafka.type, _joined(kafka.default_value),
                     synonym=kafka.synonyms[0] if kafka.synonyms else None, sensitive=kafka.type == "PASSWORD",
                     kafka=kafka, dynamic="per-topic", limit=TOPIC_LIMITS.get(kafka.name))


# Every broker config of Kafka 4.3.1 (internal ones too: Kafka accepts them at start), then kafkamock's own.
BROKER_CONFIGS: dict[str, ConfigDef] = {
    **{name: _broker_config(k) for name, k in kafka_configs.BROKER.items()},
    **{c.name: c for c in OWN_CONFIGS},
}
# Every topic config of Kafka 4.3.1 (LogConfig).
TOPIC_CONFIGS: dict[str, ConfigDef] = {name: _topic_config(k) for name, k in kafka_configs.TOPIC.items()}

# Broker configs without a default that derive from others when unset, as Kafka's KafkaConfig computes them
# (logRetentionTimeMillis, logRollTimeMillis, logRollTimeJitterMillis, logFlushIntervalMs): the first of the
# (name, multiplier) fallbacks that is set, else the last one's default, times its multiplier.
DERIVED_BROKER_CONFIGS: dict[str, tuple[tuple[str, int], ...]] = {
    "log.retention.ms": (("log.retention.minutes", 60_000), ("log.retention.hours", 3_600_000)),
    "log.roll.ms": (("log.roll.hours", 3_600_000),),
    "log.roll.jitter.ms": (("log.roll.jitter.hours", 3_600_000),),
    "log.flush.interval.ms": (("log.flush.scheduler.interval.ms", 1),),
}


# Kafka's listener prefix: ``listener.name.<listener, lower case>.<config>``; SASL configs may also name the
# mechanism (``listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config``).
_LISTENER_PREFIXED = re.compile(r"listener\.name\.([a-z0-9_]+)\.(?:([a-z0-9-]+)\.)?(ssl\..+|sasl\..+|connections\.max\.reauth\.ms)")
_PER_MECHANISM = ("sasl.jaas.config", "connections.max.reauth.ms", "sasl.server.callback.handler.class")


def config_definition(name: str) -> ConfigDef | None:
    """The definition of a broker config, listener-prefixed names included (no default of their own: an unset
    prefixed config falls back to the unprefixed one, see ``listener_config``)."""
    definition = BROKER_CONFIGS.get(name)
    if definition is not None:
        return definition
    m = _LISTENER_PREFIXED.fullmatch(name)
    if m is None:
        return None
    mechanism, base = m.group(2), m.group(3)
    if mechanism is not None and (base not in _PER_MECHANISM or mechanism.upper() not in SASL_MECHANISMS):
        return None
    base_definition = BROKER_CONFIGS.get(base)
    if base_definition is None:
        return None
    return ConfigDef(name, base_definition.type, None, validator=base_definition.validator,
                     sensitive=base_definition.sensitive, kafka=base_definition.kafka,
                     dynamic=base_definition.dynamic, limit=base_definition.limit)


def listener_config(config: BrokerConfig, listener: str, name: str, mechanism: str | None = None) -> Any:
    """A config as a listener sees it: ``listener.name.<l>.<mech>.<name>``, then ``listener.name.<l>.<name>``,
    then ``<name>`` (Kafka's ListenerName.configPrefix and the per-mechanism SASL prefix)."""
    prefix = f"listener.name.{listener.lower()}."
    names = ([prefix + f"{mechanism.lower()}.{name}"] if mechanism else []) + [prefix + name]
    for candidate in names:
        if candidate in config.values:
            return config.values[candidate]
    return config.values[name]


def parse_value(definition: ConfigDef, raw: object, *, limits: bool = True) -> Any:
    """A config value from its string (or native) form, read and validated as Kafka does (Kafka's messages), then
    (``limits``) checked against what kafkamock serves (``check_limit``); raises ConfigError. Lists come back
    comma-joined."""
    if definition.kafka is not None:
        value = definition.kafka.parse(raw)
    else:
        value = parse_type(definition.name, raw, definition.type)
        if definition.validator is not None and not definition.validator(value):
            raise invalid(definition.name, raw)
    if definition.type == "CLASS" and value not in ("", None, definition.default):
        # Kafka loads the class while reading the value; kafkamock has no Java classes to load.
        raise invalid(definition.name, raw, f"Class {str(raw).strip()} could not be found.")
    if isinstance(value, list):
        value = ",".join(value)
    if limits:
        check_limit(definition, value)
    return value


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean X?)`` when a known config name is close to ``name``, else nothing."""
    close = closest(name, known, cutoff=0.8)
    return f" (did you mean {close}?)" if close else ""


def parse_topic_configs(configs: Mapping[str, object] | None) -> dict[str, Any]:
    """Topic configs a user gives by Kafka's names, parsed; ConfigError names an unknown one (and the config likely
    meant) or a refused value."""
    unknown = [k for k in configs or {} if k not in TOPIC_CONFIGS]
    if unknown:
        raise ConfigError(f"Unknown topic config name: {unknown[0]}{did_you_mean(unknown[0], TOPIC_CONFIGS)}")
    return {k: parse_value(TOPIC_CONFIGS[k], v) for k, v in (configs or {}).items()}


def check_limit(definition: ConfigDef, value: Any) -> None:
    """ConfigError when kafkamock cannot serve a value Kafka would accept (the reason in the message)."""
    why = definition.limit(value) if definition.limit is not None else None
    if why:
        raise ConfigError(f"{definition.name}={java_text(format_value(value, definition.type))} is not supported by "
                          f"kafkamock: {why}")


def cross_config_error(values: Mapping[str, Any], config: BrokerConfig) -> str | None:
    """Checks Kafka makes of one broker config against others when it changes (KafkaConfig's requirements)."""
    cordoned = values.get("cordoned.log.dirs")
    if cordoned:
        dirs = set(filter(None, str(config["log.dirs"] or config["log.dir"] or "").split(",")))
        missing = [d for d in str(cordoned).split(",") if d and d != "*" and d not in dirs]
        if missing:
            return ("requirement failed: All entries in cordoned.log.dirs must be present in log.dirs or log.dir. "
                    "Missing entries : " + ",".join(missing))
    return None


def _group_requirements() -> list[tuple[str, str, str]]:
    """GroupCoordinatorConfig's requirements between the group configs of one kind (consumer, share, streams), as
    (config, relation, other config)."""
    out = []
    for kind in ("consumer", "share", "streams"):
        g = f"group.{kind}."
        out += [(g + "max.heartbeat.interval.ms", ">=", g + "min.heartbeat.interval.ms"),
                (g + "heartbeat.interval.ms", ">=", g + "min.heartbeat.interval.ms"),
                (g + "heartbeat.interval.ms", "<=", g + "max.heartbeat.interval.ms"),
                (g + "max.session.timeout.ms", ">=", g + "min.session.timeout.ms"),
                (g + "session.timeout.ms", ">=", g + "min.session.timeout.ms"),
                (g + "session.timeout.ms", "<=", g + "max.session.timeout.ms"),
                (g + "heartbeat.interval.ms", "<", g + "session.timeout.ms"),
                (g + "max.assignment.interval.ms", ">=", g + "min.assignment.interval.ms"),
                (g + "assignment.interval.ms", ">=", g + "min.assignment.interval.ms"),
                (g + "assignment.interval.ms", "<=", g + "max.assignment.interval.ms")]
    return out + [("group.streams.num.standby.replicas", "<=", "group.streams.max.standby.replicas")]


GROUP_REQUIREMENTS = _group_requirements()
_RELATIONS: dict[str, tuple[Callable[[Any, Any], bool], str]] = {
    ">=": (lambda a, b: a >= b, "greater than or equal to"), "<=": (lambda a, b: a <= b, "less than or equal to"),
    "<": (lambda a, b: a < b, "less than")}


def startup_error(config: BrokerConfig) -> str | None:
    """What Kafka refuses to start with among settings that are each valid alone (GroupCoordinatorConfig's
    ``require`` checks: a group heartbeat interval below its minimum, a session timeout above its maximum...)."""
    for name, relation, other in GROUP_REQUIREMENTS:
        holds, words = _RELATIONS[relation]
        if not holds(config[name], config[other]):
            return f"{name} must be {words} {other}"
    return None


def format_value(value: Any, type_: str | None = None) -> str | None:
    """A parsed value as Kafka writes it (``ConfigDef.convertToString``)."""
    return to_string(value, type_ or "")


class BrokerConfig:
    """The settings of one emulated broker: Kafka's names, defaults overridden from the command line, a TOML file
    or the admin APIs.

    Values come in Kafka's layers, highest precedence first: dynamic per-broker (AlterConfigs on BROKER "<id>"),
    dynamic cluster default (BROKER ""), static (command line / TOML), then the built-in default. The static and
    cluster-default layers are shared by every node of a cluster (``node_config`` makes a node's view); each
    node has its own per-broker layer. ``values`` holds every config's own value (None for a config without a
    default that no level sets), ``effective`` the value the broker uses (``DERIVED_BROKER_CONFIGS`` filled in);
    ``dynamic`` and ``static`` name the configs set at those levels.
    """

    def __init__(self, overrides: Mapping[str, object] | None = None, *, shared: BrokerConfig | None = None):
        self.dynamic_broker: dict[str, Any] = {}     # DYNAMIC_BROKER_CONFIG
        self.static_values: dict[str, Any] = shared.static_values if shared is not None else {}
        self.dynamic_default: dict[str, Any] = shared.dynamic_default if shared is not None else {}  # DYNAMIC_DEFAULT_BROKER_CONFIG
        self._peers: list[BrokerConfig] = shared._peers if shared is not None else []
        self._peers.append(self)
        self.values: dict[str, Any] = {}
        self.effective: dict[str, Any] = {}
        self.dynamic: set[str] = set()
        self.static: set[str] = set()
        self.generation = 0
        for name in {**BROKER_CONFIGS, **self.static_values, **self.dynamic_default}:
            self._refresh(name)
        self._refresh_effective()
        for name, raw in (overrides or {}).items():
            self.set(name, raw, static=True)
        if overrides and (why := startup_error(self)):
            raise ConfigError(why)

    def node_config(self) -> BrokerConfig:
        """A node's view: this config's static and cluster-default layers, with a per-broker layer of its own."""
        return BrokerConfig(shared=self)

    def set(self, name: str, raw: object, *, static: bool = False) -> None:
        definition = config_definition(name)
        if definition is None:              # at start, a likely misspelling is named (AlterConfigs keeps Kafka's text)
            raise ConfigError(f"Unknown broker config {name}" + (did_you_mean(name, BROKER_CONFIGS) if static else ""))
        if name not in BROKER_CONFIGS and not static:
            raise ConfigError(f"Listener config {name} can only be set at start")
        (self.static_values if static else self.dynamic_broker)[name] = parse_value(definition, raw)
        self._refresh_all(name, everywhere=static)

    def reset(self, name: str) -> None:
        """Drop the dynamic values of ``name``: the static value (or the default) applies again."""
        if config_definition(name) is None:
            raise ConfigError(f"Unknown broker config {name}")
        self.dynamic_broker.pop(name, None)
        self.dynamic_default.pop(name, None)
        self._refresh_all(name, everywhere=True)

    def dynamic_layer(self, *, cluster_default: bool) -> dict[str, Any]:
        """A copy of the dynamic values set for this broker, or as the cluster-wide default."""
        return dict(self.dynamic_default if cluster_default else self.dynamic_broker)

    def replace_dynamic(self, values: Mapping[str, Any], *, cluster_default: bool) -> None:
        """Replace every dynamic value of one level with ``values`` (already parsed, known names)."""
        layer = self.dynamic_default if cluster_default else self.dynamic_broker
        changed = set(layer) | set(values)
        layer.clear()
        layer.update(values)
        for name in changed:
            self._refresh_all(name, everywhere=cluster_default)

    def sources(self, name: str) -> list[tuple[Any, str]]:
        """(value, source) of every level that supplies ``name``, highest precedence first, ending with the
        default (None for a config without one); the first is the config's own value. ``synonyms`` is what
        DescribeConfigs lists."""
        found = [(layer[name], source) for layer, source in (
            (self.dynamic_broker, "DYNAMIC_BROKER_CONFIG"), (self.dynamic_default, "DYNAMIC_DEFAULT_BROKER_CONFIG"),
            (self.static_values, "STATIC_BROKER_CONFIG")) if name in layer]
        definition = BROKER_CONFIGS.get(name)
        return found + ([(definition.default, "DEFAULT_CONFIG")] if definition is not None else [])

    def synonyms(self, name: str) -> list[tuple[str, Any, str]]:
        """(config name, value, source) of a broker config's synonyms, as Kafka's DescribeConfigs lists them: each
        level (dynamic per-broker, dynamic default, static, default) in turn, the group's names in order at each
        (Kafka's ``brokerConfigSynonyms``), defaults only where there is one; then everything before the first entry
        named ``name`` is dropped (ConfigHelper.configSynonyms: with ``log.retention.hours`` at its default only,
        ``log.retention.ms`` has no synonym at all)."""
        definition = BROKER_CONFIGS.get(name)
        names = definition.kafka.synonyms if definition is not None and definition.kafka is not None else (name,)
        found = [(n, layer[n], source) for layer, source in (
            (self.dynamic_broker, "DYNAMIC_BROKER_CONFIG"), (self.dynamic_default, "DYNAMIC_DEFAULT_BROKER_CONFIG"),
            (self.static_values, "STATIC_BROKER_CONFIG")) for n in names if n in layer]
        found += [(n, BROKER_CONFIGS[n].default, "DEFAULT_CONFIG") for n in names
                  if n in BROKER_CONFIGS and BROKER_CONFIGS[n].default is not None]
        for i, (n, _, _) in enumerate(found):
            if n == name:
                return found[i:]
        return []

    def _derived(self, name: str) -> Any:
        """A derived config's value as the broker uses it: its own, or when unset, the value derived from its
        fallbacks (``DERIVED_BROKER_CONFIGS``; a negative retention is -1, as in Kafka)."""
        value = self.values[name]
        if value is None and name in DERIVED_BROKER_CONFIGS:
            fallbacks = DERIVED_BROKER_CONFIGS[name]
            fallback, factor = next(((n, f) for n, f in fallbacks if self.values.get(n) is not None), fallbacks[-1])
            value = self.values[fallback] * factor
        if name == "log.retention.ms" and value < 0:
            value = -1
        return value

    def _refresh_all(self, name: str, *, everywhere: bool) -> None:
        for config in self._peers if everywhere else (self,):
            config._refresh(name)
            config._refresh_effective()
            config.generation += 1

    def _refresh_effective(self) -> None:
        """``effective`` from ``values``, once per change: lookups (``config[name]``, on every request) stay one
        dict access."""
        self.effective = {**self.values, **{name: self._derived(name) for name in DERIVED_BROKER_CONFIGS}}

    def _refresh(self, name: str) -> None:
        sources = self.sources(name)
        if sources:
            self.values[name] = sources[0][0]
        else:                      # a listener-prefixed config that no level sets (any more)
            self.values.pop(name, None)
        for names, present in ((self.dynamic, name in self.dynamic_broker or name in self.dynamic_default),
                               (self.static, name in self.static_values)):
            if present:
                names.add(name)
            else:
                names.discard(name)

    def __getitem__(self, name: str) -> Any:
        """The value the broker uses (``effective``); ``values`` holds each config's own (None: unset, no default)."""
        return self.effective[name]


def topic_config_value(name: str, topic_overrides: Mapping[str, Any], cluster: BrokerConfig) -> tuple[Any, str]:
    """(value, source) of a topic config: the topic's own value, else its broker synonym's effective value (derived
    configs included: ``retention.ms`` from ``log.retention.hours`` when ``log.retention.ms`` is unset), else the
    topic config's default. The source is that of the first synonym (``topic_config_synonyms``), DEFAULT_CONFIG
    when there is none, as Kafka reports it."""
    if name in topic_overrides:
        return topic_overrides[name], "TOPIC_CONFIG"
    levels = topic_config_synonyms(name, topic_overrides, cluster)
    source = levels[0][2] if levels else "DEFAULT_CONFIG"
    synonym = TOPIC_CONFIGS[name].synonym
    if synonym is not None and synonym in BROKER_CONFIGS:
        return cluster[synonym], source
    return TOPIC_CONFIGS[name].default, source


# Kafka's numeric ids for DescribeConfigs (DescribeConfigsResponse.ConfigSource and .ConfigType).
CONFIG_SOURCE_IDS = {"UNKNOWN": 0, "TOPIC_CONFIG": 1, "DYNAMIC_BROKER_CONFIG": 2, "DYNAMIC_DEFAULT_BROKER_CONFIG": 3,
                     "STATIC_BROKER_CONFIG": 4, "DEFAULT_CONFIG": 5, "DYNAMIC_CLIENT_METRICS_CONFIG": 7,
                     "DYNAMIC_GROUP_CONFIG": 8}
CONFIG_TYPE_IDS = {"UNKNOWN": 0, "BOOLEAN": 1, "STRING": 2, "INT": 3, "SHORT": 4, "LONG": 5, "DOUBLE": 6, "LIST": 7, "CLASS": 8,
                   "PASSWORD": 9}
# The security configs Kafka changes at runtime only per listener (``listener.name.<l>.ssl...``), as
# DynamicBrokerConfig.DYNAMIC_SECURITY_CONFIGS (SslConfigs.RECONFIGURABLE_CONFIGS).
LISTENER_ONLY_SECURITY_CONFIGS = frozenset({
    "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password", "ssl.truststore.type",
    "ssl.truststore.location", "ssl.truststore.password", "ssl.keystore.certificate.chain", "ssl.keystore.key",
    "ssl.truststore.certificates"})
# Broker configs Kafka changes at runtime that kafkamock sets up only when a node starts.
FIXED_AT_START = frozenset({
    "listeners", "listener.security.protocol.map", "sasl.enabled.mechanisms", "sasl.jaas.config", "ssl.client.auth",
    "ssl.enabled.protocols", "ssl.principal.mapping.rules", *LISTENER_ONLY_SECURITY_CONFIGS})


def read_only(name: str) -> bool:
    """DescribeConfigs' ``read_only`` for a broker config: whether Kafka can change it at runtime."""
    definition = config_definition(name)
    return definition is None or definition.dynamic == "read-only"


def _listed(found: list[str]) -> str:
    return "[" + ", ".join(found) + "]"       # a Java Set of names, as Kafka's messages print it


def dynamic_names_error(names: list[str]) -> str | None:
    """Kafka's first checks of a dynamic broker update (DynamicBrokerConfig.validateConfigs), before any value is
    read: configs that are not dynamic, and security configs that change only per listener."""
    fixed = [n for n in names if n in BROKER_CONFIGS and BROKER_CONFIGS[n].dynamic == "read-only"]
    if fixed:
        return "Cannot update these configs dynamically: " + _listed(fixed)
    unprefixed = [n for n in names if n in LISTENER_ONLY_SECURITY_CONFIGS]
    if unprefixed:
        return ("These security configs can be dynamically updated only per-listener using the listener prefix: "
                + _listed(unprefixed))
    return None


def dynamic_update_error(names: list[str], *, cluster_default: bool) -> str | None:
    """Kafka's checks of a dynamic broker update after the values are read (per-broker configs at the cluster
    level), then what kafkamock sets up only at start; or None."""
    listed = _listed
    if cluster_default:
        per_broker = [n for n in names if (n in BROKER_CONFIGS and BROKER_CONFIGS[n].dynamic == "per-broker")
                      or (n not in BROKER_CONFIGS and _LISTENER_PREFIXED.fullmatch(n))]
        if per_broker:
            return ("Cannot update these configs at default cluster level, broker id must be specified: "
                    + listed(per_broker))
    at_start = [n for n in names if n in FIXED_AT_START or _LISTENER_PREFIXED.fullmatch(n)]
    if at_start:
        return ("kafkamock sets up listeners, TLS and SASL when a node starts; restart it to change: "
                + listed(at_start))
    return None



def topic_config_synonyms(name: str, topic_overrides: Mapping[str, Any],
                          cluster: BrokerConfig) -> list[tuple[str, Any, str]]:
    """(config name, value, source) of every level that supplies a topic config, highest precedence first,
    as Kafka lists DescribeConfigs synonyms: the topic's own value, then its broker synonym's (``BrokerConfig.
    synonyms``: ``retention.ms`` -> ``log.retention.ms``, then ``log.retention.minutes`` and ``log.retention.hours``
    at each level that sets them, everything before the first ``log.retention.ms`` dropped). The first entry is
    where the value comes from; an empty list means a default (see ``topic_config_value``)."""
    found: list[tuple[str, Any, str]] = []
    if name in topic_overrides:
        found.append((name, topic_overrides[name], "TOPIC_CONFIG"))
    synonym = TOPIC_CONFIGS[name].synonym
    if synonym is not None and synonym in BROKER_CONFIGS:
        found.extend(cluster.synonyms(synonym))
    return found
