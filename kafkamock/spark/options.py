"""The options of Spark's Kafka connector, parsed and checked before any job starts, with errors that name the
option at fault. Pure: no Spark, no sockets."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

EARLIEST, LATEST = -2, -1
SOURCE_OPTIONS = {"assign", "subscribe", "subscribepattern", "startingoffsets", "endingoffsets",
                  "maxoffsetspertrigger", "minpartitions", "includeheaders", "failondataloss", "topic",
                  "kafkaconsumer.polltimeoutms", "fetchoffset.numretries", "fetchoffset.retryintervalms",
                  "groupidprefix", "path"}
# kafka.* settings Spark's connector refuses, with the option to use instead (KafkaSourceProvider's checks).
UNSUPPORTED_KAFKA = {
    "auto.offset.reset": "Instead set the source option 'startingOffsets' to 'earliest' or 'latest' to specify "
                         "where to start",
    "key.deserializer": "Keys are always read as byte arrays; use DataFrame operations to decode them",
    "value.deserializer": "Values are always read as byte arrays; use DataFrame operations to decode them",
    "key.serializer": "Keys are written from the 'key' column (string or binary)",
    "value.serializer": "Values are written from the 'value' column (string or binary)",
    "enable.auto.commit": "Offsets are tracked by Spark's checkpoints, not committed to Kafka",
    "interceptor.classes": "Interceptors are not supported",
}


class KafkaOptionError(ValueError):
    """A bad or missing option; the message names it."""


@dataclass(frozen=True)
class Subscription:
    """What to read: exactly one of ``assign`` ({topic: [partitions]}), ``subscribe`` or ``subscribePattern``."""

    kind: str                                   # "assign" | "subscribe" | "subscribePattern"
    topics: tuple[str, ...] = ()
    partitions: tuple[tuple[str, int], ...] = ()
    pattern: str | None = None


@dataclass(frozen=True)
class ClientSettings:
    """The ``kafka.*`` settings the connector's clients use (others are accepted and ignored, as a Java client
    ignores settings it does not know, with a warning)."""

    bootstrap_servers: str
    client_id: str = "kafkamock-spark"
    isolation_level: int = 0                      # read_uncommitted, the Java consumer's default
    allow_auto_create_topics: bool = True         # the Java consumer's default
    acks: int = -1
    idempotent: bool = True
    compression: str = "none"
    batch_size: int = 1_000_000
    max_request_size: int = 1_048_576
    request_timeout_s: float = 30.0
    extra: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ReadOptions:
    client: ClientSettings
    subscription: Subscription
    starting: str | dict[tuple[str, int], int]    # "earliest" | "latest" | {(topic, partition): offset}
    ending: str | dict[tuple[str, int], int]
    fail_on_data_loss: bool = True
    include_headers: bool = False
    min_partitions: int | None = None
    max_offsets_per_trigger: int | None = None


@dataclass(frozen=True)
class WriteOptions:
    client: ClientSettings
    topic: str | None = None


def _lower(options: Mapping[str, str]) -> dict[str, str]:
    return {k.lower(): v for k, v in options.items() if v is not None}


def _bool(options: dict[str, str], name: str, default: bool, shown: str) -> bool:
    raw = options.get(name)
    if raw is None:
        return default
    if str(raw).strip().lower() in ("true", "false"):
        return str(raw).strip().lower() == "true"
    raise KafkaOptionError(f"option '{shown}' must be 'true' or 'false', not {raw!r}")


def _positive_int(options: dict[str, str], name: str, shown: str) -> int | None:
    raw = options.get(name)
    if raw is None:
        return None
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise KafkaOptionError(f"option '{shown}' must be a positive integer, not {raw!r}") from None
    if value <= 0:
        raise KafkaOptionError(f"option '{shown}' must be a positive integer, not {raw!r}")
    return value


def client_settings(options: Mapping[str, str]) -> ClientSettings:
    opts = _lower(options)
    servers = opts.get("kafka.bootstrap.servers", "").strip()
    if not servers:
        raise KafkaOptionError("option 'kafka.bootstrap.servers' must be specified for configuring Kafka consumer "
                               "and producer (e.g. .option(\"kafka.bootstrap.servers\", \"127.0.0.1:9092\"))")
    for server in servers.split(","):
        host, _, port = server.strip().rpartition(":")
        if not host or not port.isdigit():
            raise KafkaOptionError(f"option 'kafka.bootstrap.servers': {server.strip()!r} is not host:port")
    kafka = {k[len("kafka."):]: v for k, v in opts.items() if k.startswith("kafka.") and k != "kafka.bootstrap.servers"}
    for name, why in UNSUPPORTED_KAFKA.items():
        if name in kafka:
            raise KafkaOptionError(f"Kafka option 'kafka.{name}' is not supported. {why}.")
    isolation = kafka.pop("isolation.level", "read_uncommitted").strip().lower()
    if isolation not in ("read_uncommitted", "read_committed"):
        raise KafkaOptionError(f"option 'kafka.isolation.level' must be read_uncommitted or read_committed, "
                               f"not {isolation!r}")
    acks_raw = kafka.pop("acks", "all").strip().lower()
    acks = {"all": -1, "-1": -1, "1": 1, "0": 0}.get(acks_raw)
    if acks is None:
        raise KafkaOptionError(f"option 'kafka.acks' must be all, -1, 0 or 1, not {acks_raw!r}")
    idempotent = _bool(kafka, "enable.idempotence", acks == -1, "kafka.enable.idempotence")
    kafka.pop("enable.idempotence", None)
    if idempotent and acks != -1:
        raise KafkaOptionError("option 'kafka.enable.idempotence' needs 'kafka.acks' = all")
    compression = kafka.pop("compression.type", "none").strip().lower()
    if compression not in ("none", "gzip", "snappy", "lz4", "zstd"):
        raise KafkaOptionError(f"option 'kafka.compression.type' must be none, gzip, snappy, lz4 or zstd, "
                               f"not {compression!r}")
    numbers = {}
    for name, default in (("batch.size", 1_000_000), ("max.request.size", 1_048_576),
                          ("request.timeout.ms", 30_000)):
        numbers[name] = _positive_int(kafka, name, f"kafka.{name}") or default
        kafka.pop(name, None)
    return ClientSettings(
        bootstrap_servers=servers, client_id=kafka.pop("client.id", "kafkamock-spark"),
        isolation_level=1 if isolation == "read_committed" else 0,
        allow_auto_create_topics=_bool(kafka, "allow.auto.create.topics", True, "kafka.allow.auto.create.topics"),
        acks=acks, idempotent=idempotent, compression=compression, batch_size=numbers["batch.size"],
        max_request_size=numbers["max.request.size"], request_timeout_s=numbers["request.timeout.ms"] / 1000,
        extra={k: v for k, v in kafka.items() if k != "allow.auto.create.topics"})


def _subscription(opts: dict[str, str]) -> Subscription:
    given = [name for name in ("assign", "subscribe", "subscribepattern") if name in opts]
    shown = {"assign": "assign", "subscribe": "subscribe", "subscribepattern": "subscribePattern"}
    if len(given) != 1:
        listed = ", ".join(f"'{shown[g]}'" for g in given) or "none"
        raise KafkaOptionError(f"exactly one of the options 'assign', 'subscribe', 'subscribePattern' must be "
                               f"specified for a Kafka source (given: {listed})")
    kind = given[0]
    raw = opts[kind]
    if kind == "subscribe":
        topics = tuple(t.strip() for t in raw.split(",") if t.strip())
        if not topics:
            raise KafkaOptionError(f"option 'subscribe' names no topic: {raw!r}")
        return Subscription("subscribe", topics=topics)
    if kind == "subscribepattern":
        if not raw.strip():
            raise KafkaOptionError("option 'subscribePattern' is empty")
        try:
            re.compile(raw)
        except re.error as exc:
            raise KafkaOptionError(f"option 'subscribePattern' is not a valid pattern: {exc}") from None
        return Subscription("subscribePattern", pattern=raw)
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict) or not all(isinstance(v, list) and all(isinstance(p, int) for p in v)
                                               for v in parsed.values()):
        raise KafkaOptionError(f"option 'assign' must be JSON like {{\"topicA\":[0,1],\"topicB\":[2,4]}}, "
                               f"not {raw!r}")
    partitions = tuple((t, p) for t, ps in parsed.items() for p in ps)
    if not partitions:
        raise KafkaOptionError("option 'assign' assigns no partition")
    return Subscription("assign", topics=tuple(parsed), partitions=partitions)


def parse_offsets(raw: str, name: str) -> str | dict[tuple[str, int], int]:
    """``earliest``, ``latest`` or JSON ``{"topic":{"0":23,"1":-2}}`` (-2 earliest, -1 latest)."""
    text = raw.strip()
    if text.lower() in ("earliest", "latest"):
        return text.lower()
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    ok = isinstance(parsed, dict) and all(
        isinstance(ps, dict) and all(str(p).lstrip("-").isdigit() and isinstance(o, int) and not isinstance(o, bool)
                                     for p, o in ps.items()) for ps in parsed.values())
    if not ok:
        raise KafkaOptionError(f"option '{name}' must be 'earliest', 'latest' or JSON like "
                               f"{{\"topicA\":{{\"0\":23,\"1\":-1}}}}, not {raw!r}")
    out = {(t, int(p)): o for t, ps in parsed.items() for p, o in ps.items()}
    for (t, p), o in out.items():
        if o < EARLIEST:
            raise KafkaOptionError(f"option '{name}': offset {o} for {t}-{p} is not valid (use -2 for earliest, "
                                   "-1 for latest, or an offset >= 0)")
    return out


def read_options(options: Mapping[str, str], *, streaming: bool) -> ReadOptions:
    opts = _lower(options)
    client = client_settings(opts)
    subscription = _subscription(opts)
    starting = parse_offsets(opts.get("startingoffsets", "latest" if streaming else "earliest"), "startingOffsets")
    ending: str | dict[tuple[str, int], int] = "latest"
    if streaming:
        if "endingoffsets" in opts:
            raise KafkaOptionError("option 'endingOffsets' is not allowed for streaming queries (it is for batch "
                                   "queries only)")
    else:
        if starting == "latest" or (isinstance(starting, dict) and LATEST in starting.values()):
            raise KafkaOptionError("option 'startingOffsets' can't be latest for batch queries on Kafka")
        ending = parse_offsets(opts.get("endingoffsets", "latest"), "endingOffsets")
        if ending == "earliest" or (isinstance(ending, dict) and EARLIEST in ending.values()):
            raise KafkaOptionError("option 'endingOffsets' can't be earliest for batch queries on Kafka")
        if "maxoffsetspertrigger" in opts:
            raise KafkaOptionError("option 'maxOffsetsPerTrigger' is for streaming queries only")
    return ReadOptions(
        client=client, subscription=subscription, starting=starting, ending=ending,
        fail_on_data_loss=_bool(opts, "failondataloss", True, "failOnDataLoss"),
        include_headers=_bool(opts, "includeheaders", False, "includeHeaders"),
        min_partitions=_positive_int(opts, "minpartitions", "minPartitions"),
        max_offsets_per_trigger=_positive_int(opts, "maxoffsetspertrigger", "maxOffsetsPerTrigger"))


def write_options(options: Mapping[str, str]) -> WriteOptions:
    opts = _lower(options)
    topic = opts.get("topic")
    if topic is not None and not topic.strip():
        raise KafkaOptionError("option 'topic' is empty")
    return WriteOptions(client=client_settings(opts), topic=topic.strip() if topic else None)
