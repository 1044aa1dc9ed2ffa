"""Broker and topic configuration, with Kafka's names, types and defaults.

Topic configs fall back to their broker-level synonym (``retention.ms`` -> ``log.retention.ms``), and a few broker
configs without a default derive from others (``log.retention.ms`` -> ``log.retention.minutes`` ->
``log.retention.hours``), as in Kafka; DescribeConfigs reports where each value comes from.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kafkamock.broker.authorizer import AUTHORIZER_CLASS_NAMES, parse_super_users

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


def _between(low: int, high: int) -> Callable[[Any], bool]:
    return lambda v: low <= v <= high


def _no_preallocation(v: bool) -> bool:
    """kafkamock writes segment files as they grow; it refuses ``preallocate=true`` rather than ignore it."""
    return v is False


def _gzip_level(v: int) -> bool:
    return v == -1 or 1 <= v <= 9


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


def _rebalance_protocols(v: str) -> bool:
    names = {p.strip().lower() for p in v.split(",") if p.strip()}
    return "classic" in names and names <= {"classic", "consumer"}


def _throttled_replicas(v: str) -> bool:
    """``*``, empty, or ``partition:broker`` pairs (Kafka's ThrottledReplicaListValidator)."""
    return v in ("", "*") or all(re.fullmatch(r"\d+:\d+", p.strip()) for p in v.split(","))


def _super_users(v: str) -> bool:
    try:
        parse_super_users(v)
    except ValueError:
        return False
    return True


BROKER_CONFIGS: dict[str, ConfigDef] = {c.name: c for c in [
    ConfigDef("node.id", "INT", 1, validator=_at_least(0)),     # the first node's id; node k is node.id + k - 1
    ConfigDef("log.dirs", "STRING", ""),                         # empty: logs in memory (kafkamock's default)
    # Listeners (SocketServerConfigs). ``listeners`` empty: one PLAINTEXT listener on ``--host``/``--port``
    # (kafkamock's default; Kafka's is PLAINTEXT://:9092). Node k listens on each listener's port + k.
    ConfigDef("listeners", "STRING", "", validator=_listeners),
    ConfigDef("advertised.listeners", "STRING", "", validator=_listeners),
    ConfigDef("listener.security.protocol.map", "STRING",
              "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL", validator=_protocol_map),
    # TLS (SslConfigs), for SSL and SASL_SSL listeners; each also as listener.name.<listener>.ssl.*. JKS stores are
    # Kafka's default type but Java-only: a listener that would need one is refused at start.
    ConfigDef("ssl.keystore.type", "STRING", "JKS", validator=_one_of("JKS", "PKCS12", "PEM")),
    ConfigDef("ssl.keystore.location", "STRING", ""),
    ConfigDef("ssl.keystore.password", "PASSWORD", ""),
    ConfigDef("ssl.key.password", "PASSWORD", ""),
    ConfigDef("ssl.keystore.certificate.chain", "PASSWORD", ""),
    ConfigDef("ssl.keystore.key", "PASSWORD", ""),
    ConfigDef("ssl.truststore.type", "STRING", "JKS", validator=_one_of("JKS", "PKCS12", "PEM")),
    ConfigDef("ssl.truststore.location", "STRING", ""),
    ConfigDef("ssl.truststore.password", "PASSWORD", ""),
    ConfigDef("ssl.truststore.certificates", "PASSWORD", ""),
    ConfigDef("ssl.client.auth", "STRING", "none", validator=_one_of("none", "requested", "required")),
    ConfigDef("ssl.enabled.protocols", "LIST", "TLSv1.2,TLSv1.3",
              validator=lambda v: bool(v) and all(p in ("TLSv1.2", "TLSv1.3") for p in v.split(","))),
    # Only Kafka's DEFAULT rule (the principal is the certificate's subject DN as RFC 2253 writes it).
    ConfigDef("ssl.principal.mapping.rules", "STRING", "DEFAULT", validator=_one_of("DEFAULT")),
    # SASL (BrokerSecurityConfigs). Kafka's default mechanism is GSSAPI (Kerberos), which kafkamock does not
    # serve: a SASL listener left at it is refused at start, with a message naming what to set.
    ConfigDef("sasl.enabled.mechanisms", "LIST", "GSSAPI"),
    ConfigDef("sasl.jaas.config", "PASSWORD", ""),
    ConfigDef("sasl.server.max.receive.size", "INT", 524288, validator=_at_least(1)),
    ConfigDef("connections.max.reauth.ms", "LONG", 0, validator=_at_least(0)),
    ConfigDef("auto.leader.rebalance.enable", "BOOLEAN", True),
    ConfigDef("offsets.topic.num.partitions", "INT", 50, validator=_at_least(1)),
    ConfigDef("offsets.topic.replication.factor", "SHORT", 3, validator=_at_least(1)),
    ConfigDef("offsets.topic.segment.bytes", "INT", 104857600, validator=_at_least(1)),
    ConfigDef("transaction.state.log.num.partitions", "INT", 50, validator=_at_least(1)),
    ConfigDef("transaction.state.log.replication.factor", "SHORT", 3, validator=_at_least(1)),
    ConfigDef("transaction.state.log.segment.bytes", "INT", 104857600, validator=_at_least(1)),
    ConfigDef("log.initial.task.delay.ms", "LONG", 30000, validator=_at_least(0)),
    ConfigDef("log.flush.scheduler.interval.ms", "LONG", LONG_MAX, validator=_at_least(1)),
    ConfigDef("log.flush.offset.checkpoint.interval.ms", "INT", 60000, validator=_at_least(0)),
    ConfigDef("log.cleaner.enable", "BOOLEAN", True),
    ConfigDef("log.cleaner.backoff.ms", "LONG", 15000, validator=_at_least(0)),
    ConfigDef("auto.create.topics.enable", "BOOLEAN", True),
    ConfigDef("num.partitions", "INT", 1, validator=_at_least(1)),
    ConfigDef("default.replication.factor", "INT", 1, validator=_at_least(1)),
    ConfigDef("delete.topic.enable", "BOOLEAN", True),
    ConfigDef("socket.request.max.bytes", "INT", 104857600, validator=_at_least(1)),
    # Resource limits (Kafka's SocketServerConfigs / QuotaConfig); see README "Limits".
    ConfigDef("queued.max.requests", "INT", 500, validator=_at_least(1)),
    ConfigDef("max.connections", "INT", 2147483647, validator=_at_least(0)),
    ConfigDef("max.connections.per.ip", "INT", 2147483647, validator=_at_least(0)),
    ConfigDef("max.connections.per.ip.overrides", "STRING", "", validator=lambda v: _ip_overrides(v) is not None),
    ConfigDef("connections.max.idle.ms", "LONG", 600000, validator=_at_least(1)),
    ConfigDef("quota.window.num", "INT", 11, validator=_at_least(1)),
    ConfigDef("quota.window.size.seconds", "INT", 1, validator=_at_least(1)),
    ConfigDef("message.max.bytes", "INT", 1048588, validator=_at_least(0)),
    ConfigDef("fetch.max.bytes", "INT", 57671680, validator=_at_least(1024)),
    # Kafka's retention, roll, jitter and flush intervals in ms have no default: unset, they derive from the
    # configs after them (DERIVED_BROKER_CONFIGS), as KafkaConfig.logRetentionTimeMillis and friends do.
    ConfigDef("log.retention.ms", "LONG", None),
    ConfigDef("log.retention.minutes", "INT", None),
    ConfigDef("log.retention.hours", "INT", 168),
    ConfigDef("log.retention.bytes", "LONG", -1),
    ConfigDef("log.retention.check.interval.ms", "LONG", 300000, validator=_at_least(1)),
    ConfigDef("log.cleanup.policy", "LIST", "delete"),
    ConfigDef("log.message.timestamp.type", "STRING", "CreateTime", validator=_one_of("CreateTime", "LogAppendTime")),
    ConfigDef("log.segment.bytes", "INT", 1073741824),
    ConfigDef("log.roll.ms", "LONG", None, validator=_at_least(1)),
    ConfigDef("log.roll.hours", "INT", 168, validator=_at_least(1)),
    ConfigDef("log.cleaner.delete.retention.ms", "LONG", 86400000),
    ConfigDef("log.message.timestamp.before.max.ms", "LONG", LONG_MAX),
    ConfigDef("log.message.timestamp.after.max.ms", "LONG", 3600000),
    ConfigDef("min.insync.replicas", "INT", 1, validator=_at_least(1)),
    ConfigDef("compression.type", "STRING", "producer",
              validator=_one_of("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd")),
    ConfigDef("unclean.leader.election.enable", "BOOLEAN", False),
    ConfigDef("offsets.retention.minutes", "INT", 10080, validator=_at_least(1)),
    ConfigDef("offsets.retention.check.interval.ms", "LONG", 600000, validator=_at_least(1)),
    ConfigDef("offset.metadata.max.bytes", "INT", 4096, validator=_at_least(0)),
    # Classic groups (JoinGroup/SyncGroup/Heartbeat), as Kafka 4.3's GroupCoordinatorConfig.
    ConfigDef("group.min.session.timeout.ms", "INT", 6000, validator=_at_least(0)),
    ConfigDef("group.max.session.timeout.ms", "INT", 1800000, validator=_at_least(0)),
    ConfigDef("group.initial.rebalance.delay.ms", "INT", 3000, validator=_at_least(0)),
    ConfigDef("group.max.size", "INT", 2147483647, validator=_at_least(1)),
    # KIP-848 consumer groups (ConsumerGroupHeartbeat).
    ConfigDef("group.coordinator.rebalance.protocols", "LIST", "classic,consumer", validator=_rebalance_protocols),
    ConfigDef("group.consumer.session.timeout.ms", "INT", 45000, validator=_at_least(1)),
    ConfigDef("group.consumer.min.session.timeout.ms", "INT", 45000, validator=_at_least(1)),
    ConfigDef("group.consumer.max.session.timeout.ms", "INT", 60000, validator=_at_least(1)),
    ConfigDef("group.consumer.heartbeat.interval.ms", "INT", 5000, validator=_at_least(1)),
    ConfigDef("group.consumer.min.heartbeat.interval.ms", "INT", 5000, validator=_at_least(1)),
    ConfigDef("group.consumer.max.heartbeat.interval.ms", "INT", 15000, validator=_at_least(1)),
    ConfigDef("group.consumer.max.size", "INT", 2147483647, validator=_at_least(1)),
    ConfigDef("group.consumer.assignors", "LIST", "uniform,range", validator=_server_assignors),
    # Transactions (Kafka 4.3's TransactionStateManagerConfig / TransactionLogConfig / ProducerStateManagerConfig).
    ConfigDef("transactional.id.expiration.ms", "INT", 604800000, validator=_at_least(1)),
    ConfigDef("transaction.max.timeout.ms", "INT", 900000, validator=_at_least(1)),
    ConfigDef("transaction.abort.timed.out.transaction.cleanup.interval.ms", "INT", 10000, validator=_at_least(1)),
    ConfigDef("transaction.remove.expired.transaction.cleanup.interval.ms", "INT", 3600000,
              validator=_at_least(1)),
    ConfigDef("transaction.partition.verification.enable", "BOOLEAN", True),
    # kafkamock's own: the finalized level of the ``transaction.version`` feature that ApiVersions lists (Kafka sets it
    # when a cluster is formatted: 2, KIP-890 part 2, for a new Kafka 4.x cluster). At 2, Java 4.x producers skip
    # AddPartitionsToTxn/AddOffsetsToTxn (the first Produce v12+ or TxnOffsetCommit v5 adds the partition) and end
    # every transaction with EndTxn v5's epoch bump; 0 or 1 keeps them on the KIP-890 part 1 path.
    ConfigDef("kafkamock.transaction.version", "SHORT", 2, validator=_between(0, 2)),
    ConfigDef("producer.id.expiration.ms", "INT", 86400000, validator=_at_least(1)),
    ConfigDef("producer.id.expiration.check.interval.ms", "INT", 600000, validator=_at_least(1)),
    ConfigDef("group.share.record.lock.duration.ms", "INT", 30000, validator=_at_least(1000)),
    ConfigDef("group.share.min.record.lock.duration.ms", "INT", 15000, validator=_at_least(1000)),
    ConfigDef("group.share.max.record.lock.duration.ms", "INT", 60000, validator=_at_least(1000)),
    ConfigDef("group.share.session.timeout.ms", "INT", 45000, validator=_at_least(1)),
    ConfigDef("group.share.min.session.timeout.ms", "INT", 45000, validator=_at_least(1)),
    ConfigDef("group.share.max.session.timeout.ms", "INT", 60000, validator=_at_least(1)),
    ConfigDef("group.share.heartbeat.interval.ms", "INT", 5000, validator=_at_least(1)),
    ConfigDef("group.share.min.heartbeat.interval.ms", "INT", 5000, validator=_at_least(1)),
    ConfigDef("group.share.max.heartbeat.interval.ms", "INT", 15000, validator=_at_least(1)),
    ConfigDef("group.share.max.size", "SHORT", 200, validator=_between(1, 1000)),
    ConfigDef("group.share.max.share.sessions", "INT", 2000, validator=_at_least(1)),
    ConfigDef("group.share.delivery.count.limit", "INT", 5, validator=_at_least(2)),
    ConfigDef("group.share.partition.max.record.locks", "INT", 2000, validator=_at_least(100)),
    # The bounds of the share group configs (KIP-1240; Kafka 4.3's ShareGroupConfig / GroupCoordinatorConfig).
    ConfigDef("group.share.min.delivery.count.limit", "INT", 2, validator=_between(2, 5)),
    ConfigDef("group.share.max.delivery.count.limit", "INT", 10, validator=_between(5, 25)),
    ConfigDef("group.share.min.partition.max.record.locks", "INT", 100, validator=_between(100, 2000)),
    ConfigDef("group.share.max.partition.max.record.locks", "INT", 4000, validator=_between(2000, 10000)),
    ConfigDef("group.share.assignment.interval.ms", "INT", 1000, validator=_at_least(0)),
    ConfigDef("group.share.min.assignment.interval.ms", "INT", 0, validator=_at_least(0)),
    ConfigDef("group.share.max.assignment.interval.ms", "INT", 15000, validator=_at_least(0)),
    # Kafka 4.3's ShareCoordinatorConfig for its state topic, __share_group_state: accepted and described as Kafka
    # does; kafkamock keeps share state in the topic-partitions themselves (KIP-932's control records), so they
    # configure nothing.
    ConfigDef("share.coordinator.state.topic.num.partitions", "INT", 50, validator=_at_least(1)),
    ConfigDef("share.coordinator.state.topic.replication.factor", "SHORT", 3, validator=_at_least(1)),
    ConfigDef("share.coordinator.state.topic.min.isr", "SHORT", 2, validator=_at_least(1)),
    ConfigDef("share.coordinator.state.topic.segment.bytes", "INT", 104857600, validator=_at_least(1)),
    # kafkamock's own: after this many SHARE_DELTA batches a share-partition writes a fresh SHARE_CHECKPOINT, so a
    # restart replays a short chain (the KIP-932 seed page leaves the length to the implementation).
    ConfigDef("kafkamock.share.delta.chain.max", "INT", 64, validator=_at_least(1)),
    ConfigDef("max.request.partition.size.limit", "INT", 2000, validator=_at_least(1)),
    # Broker-level synonyms of topic configs (ServerTopicConfigSynonyms), defaulting as the topic configs do (or,
    # without a default, deriving from another config: DERIVED_BROKER_CONFIGS).
    ConfigDef("log.cleaner.min.compaction.lag.ms", "LONG", 0, validator=_at_least(0)),
    ConfigDef("log.cleaner.max.compaction.lag.ms", "LONG", LONG_MAX, validator=_at_least(1)),
    ConfigDef("log.cleaner.min.cleanable.ratio", "DOUBLE", 0.5, validator=lambda v: 0 <= v <= 1),
    ConfigDef("log.segment.delete.delay.ms", "LONG", 60000, validator=_at_least(0)),
    ConfigDef("log.flush.interval.messages", "LONG", LONG_MAX, validator=_at_least(1)),
    ConfigDef("log.flush.interval.ms", "LONG", None, validator=_at_least(0)),
    ConfigDef("log.index.interval.bytes", "INT", 4096, validator=_at_least(0)),
    ConfigDef("log.index.size.max.bytes", "INT", 10485760, validator=_at_least(4)),
    ConfigDef("log.preallocate", "BOOLEAN", False, validator=_no_preallocation),
    ConfigDef("log.roll.jitter.ms", "LONG", None, validator=_at_least(0)),
    ConfigDef("log.roll.jitter.hours", "INT", 0, validator=_at_least(0)),
    ConfigDef("log.local.retention.ms", "LONG", -2, validator=_at_least(-2)),
    ConfigDef("log.local.retention.bytes", "LONG", -2, validator=_at_least(-2)),
    ConfigDef("compression.gzip.level", "INT", -1, validator=_gzip_level),
    ConfigDef("compression.lz4.level", "INT", 9, validator=_between(1, 17)),
    ConfigDef("compression.zstd.level", "INT", 3, validator=_between(-131072, 22)),
    # kafkamock's own: also serve Produce v0-2 and Fetch v0-3 (magic 0/1 message sets), removed in Kafka 4.0
    # (KIP-896), the way Kafka 3.x served them. Off by default, as in Kafka 4.x.
    ConfigDef("kafkamock.legacy.protocol.enable", "BOOLEAN", False),
    # kafkamock's own: how many requests the control API's request log keeps (0: none).
    ConfigDef("kafkamock.request.log.max.entries", "INT", 10000, validator=_at_least(0)),
    # ACLs (authorizer.py): empty means no authorizer, every request allowed and the ACL APIs SECURITY_DISABLED.
    ConfigDef("authorizer.class.name", "STRING", "", validator=lambda v: v == "" or v in AUTHORIZER_CLASS_NAMES),
    ConfigDef("super.users", "STRING", "", validator=_super_users),
    ConfigDef("allow.everyone.if.no.acl.found", "BOOLEAN", False),
]}

# Broker configs without a default that derive from others when unset, as Kafka's KafkaConfig computes them
# (logRetentionTimeMillis, logRollTimeMillis, logRollTimeJitterMillis, logFlushIntervalMs): the first of the
# (name, multiplier) fallbacks that is set, else the last one's default, times its multiplier.
DERIVED_BROKER_CONFIGS: dict[str, tuple[tuple[str, int], ...]] = {
    "log.retention.ms": (("log.retention.minutes", 60_000), ("log.retention.hours", 3_600_000)),
    "log.roll.ms": (("log.roll.hours", 3_600_000),),
    "log.roll.jitter.ms": (("log.roll.jitter.hours", 3_600_000),),
    "log.flush.interval.ms": (("log.flush.scheduler.interval.ms", 1),),
}
# The names DescribeConfigs lists as synonyms of a broker config (DynamicBrokerConfig.brokerConfigSynonyms): a
# derived config and its fallbacks are one group, in that order (log.flush.scheduler.interval.ms, a config of its
# own, has no synonym but itself).
BROKER_CONFIG_SYNONYMS: dict[str, tuple[str, ...]] = {
    member: (name, *(n for n, _ in fallbacks))
    for name, fallbacks in DERIVED_BROKER_CONFIGS.items()
    for member in (name, *(n for n, _ in fallbacks)) if member != "log.flush.scheduler.interval.ms"
}

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
    ConfigDef("min.compaction.lag.ms", "LONG", 0, "log.cleaner.min.compaction.lag.ms", _at_least(0)),
    ConfigDef("max.compaction.lag.ms", "LONG", LONG_MAX, "log.cleaner.max.compaction.lag.ms", _at_least(1)),
    ConfigDef("min.cleanable.dirty.ratio", "DOUBLE", 0.5, "log.cleaner.min.cleanable.ratio", lambda v: 0 <= v <= 1),
    ConfigDef("file.delete.delay.ms", "LONG", 60000, "log.segment.delete.delay.ms", _at_least(0)),
    ConfigDef("flush.messages", "LONG", LONG_MAX, "log.flush.interval.messages", _at_least(1)),
    ConfigDef("flush.ms", "LONG", LONG_MAX, "log.flush.interval.ms", _at_least(0)),
    ConfigDef("index.interval.bytes", "INT", 4096, "log.index.interval.bytes", _at_least(0)),
    ConfigDef("preallocate", "BOOLEAN", False, "log.preallocate", _no_preallocation),
    ConfigDef("segment.index.bytes", "INT", 10485760, "log.index.size.max.bytes", _at_least(4)),
    ConfigDef("segment.jitter.ms", "LONG", 0, "log.roll.jitter.ms", _at_least(0)),
    ConfigDef("local.retention.ms", "LONG", -2, "log.local.retention.ms", _at_least(-2)),
    ConfigDef("local.retention.bytes", "LONG", -2, "log.local.retention.bytes", _at_least(-2)),
    ConfigDef("remote.storage.enable", "BOOLEAN", False),
    ConfigDef("remote.log.copy.disable", "BOOLEAN", False),
    ConfigDef("remote.log.delete.on.disable", "BOOLEAN", False),
    ConfigDef("compression.gzip.level", "INT", -1, "compression.gzip.level", _gzip_level),
    ConfigDef("compression.lz4.level", "INT", 9, "compression.lz4.level", _between(1, 17)),
    ConfigDef("compression.zstd.level", "INT", 3, "compression.zstd.level", _between(-131072, 22)),
    ConfigDef("leader.replication.throttled.replicas", "LIST", "", None, _throttled_replicas),
    ConfigDef("follower.replication.throttled.replicas", "LIST", "", None, _throttled_replicas),
]}


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
                     sensitive=base_definition.sensitive)


def listener_config(config: BrokerConfig, listener: str, name: str, mechanism: str | None = None) -> Any:
    """A config as a listener sees it: ``listener.name.<l>.<mech>.<name>``, then ``listener.name.<l>.<name>``,
    then ``<name>`` (Kafka's ListenerName.configPrefix and the per-mechanism SASL prefix)."""
    prefix = f"listener.name.{listener.lower()}."
    names = ([prefix + f"{mechanism.lower()}.{name}"] if mechanism else []) + [prefix + name]
    for candidate in names:
        if candidate in config.values:
            return config.values[candidate]
    return config.values[name]


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

    def node_config(self) -> BrokerConfig:
        """A node's view: this config's static and cluster-default layers, with a per-broker layer of its own."""
        return BrokerConfig(shared=self)

    def set(self, name: str, raw: object, *, static: bool = False) -> None:
        definition = config_definition(name)
        if definition is None:
            raise ConfigError(f"Unknown broker config {name}")
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
        (``BROKER_CONFIG_SYNONYMS``), defaults only where there is one; then everything before the first entry
        named ``name`` is dropped (ConfigHelper.configSynonyms: with ``log.retention.hours`` at its default only,
        ``log.retention.ms`` has no synonym at all)."""
        names = BROKER_CONFIG_SYNONYMS.get(name, (name,))
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


def topic_config_value(name: str, topic_overrides: Mapping[str, Any], broker: BrokerConfig) -> tuple[Any, str]:
    """(value, source) of a topic config: the topic's own value, else its broker synonym's effective value (derived
    configs included: ``retention.ms`` from ``log.retention.hours`` when ``log.retention.ms`` is unset), else the
    topic config's default. The source is that of the first synonym (``topic_config_synonyms``), DEFAULT_CONFIG
    when there is none, as Kafka reports it."""
    if name in topic_overrides:
        return topic_overrides[name], "TOPIC_CONFIG"
    levels = topic_config_synonyms(name, topic_overrides, broker)
    source = levels[0][2] if levels else "DEFAULT_CONFIG"
    synonym = TOPIC_CONFIGS[name].synonym
    if synonym is not None and synonym in BROKER_CONFIGS:
        return broker[synonym], source
    return TOPIC_CONFIGS[name].default, source


# Kafka's numeric ids for DescribeConfigs (DescribeConfigsResponse.ConfigSource and .ConfigType).
CONFIG_SOURCE_IDS = {"UNKNOWN": 0, "TOPIC_CONFIG": 1, "DYNAMIC_BROKER_CONFIG": 2, "DYNAMIC_DEFAULT_BROKER_CONFIG": 3,
                     "STATIC_BROKER_CONFIG": 4, "DEFAULT_CONFIG": 5, "DYNAMIC_CLIENT_METRICS_CONFIG": 7,
                     "DYNAMIC_GROUP_CONFIG": 8}
CONFIG_TYPE_IDS = {"BOOLEAN": 1, "STRING": 2, "INT": 3, "SHORT": 4, "LONG": 5, "DOUBLE": 6, "LIST": 7, "CLASS": 8,
                   "PASSWORD": 9}
# Broker configs that cannot change at runtime here (every other one can be set through the admin APIs).
READ_ONLY_BROKER_CONFIGS = frozenset({
    "node.id", "log.dirs", "listeners", "advertised.listeners", "listener.security.protocol.map",
    "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
    "ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.truststore.type", "ssl.truststore.location",
    "ssl.truststore.password", "ssl.truststore.certificates", "ssl.client.auth", "ssl.enabled.protocols",
    "ssl.principal.mapping.rules", "sasl.enabled.mechanisms", "sasl.jaas.config", "sasl.server.max.receive.size", "kafkamock.legacy.protocol.enable", "kafkamock.transaction.version",
    "offsets.topic.num.partitions", "authorizer.class.name", "super.users", "allow.everyone.if.no.acl.found",
    "offsets.topic.replication.factor", "offsets.topic.segment.bytes", "transaction.state.log.num.partitions",
    "transaction.state.log.replication.factor", "transaction.state.log.segment.bytes",
    "queued.max.requests", "connections.max.idle.ms", "quota.window.num", "quota.window.size.seconds",
    "fetch.max.bytes", "log.retention.minutes", "log.retention.hours", "log.roll.hours", "log.roll.jitter.hours",
})


def topic_config_synonyms(name: str, topic_overrides: Mapping[str, Any],
                          broker: BrokerConfig) -> list[tuple[str, Any, str]]:
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
        found.extend(broker.synonyms(synonym))
    return found
