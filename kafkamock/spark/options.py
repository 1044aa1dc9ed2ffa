"""The options of Spark's Kafka connector, parsed and checked before any job starts, with errors that name the
option at fault. Pure: no Spark, no sockets.

``kafka.*`` options are Kafka client settings under the Java client's names. A read applies the consumer settings
of ``READ_SETTINGS``, a write the producer settings of ``kafkamock.client.config.PRODUCER``; a setting the JVM
connector refuses is refused with its reason, and any other name is refused with a message saying why it would not
take effect here, so no setting is ever dropped silently.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kafkamock.client import config as client_config
from kafkamock.client.cluster import KafkaClient
from kafkamock.client.security import security_from
from kafkamock.spelling import closest

EARLIEST, LATEST = -2, -1
SOURCE_OPTIONS = {"assign", "subscribe", "subscribepattern", "startingoffsets", "endingoffsets",
                  "startingtimestamp", "endingtimestamp", "startingoffsetsbytimestamp", "endingoffsetsbytimestamp",
                  "startingoffsetsbytimestampstrategy", "maxoffsetspertrigger", "minoffsetspertrigger",
                  "maxtriggerdelay", "minpartitions", "maxrecordsperpartition", "includeheaders", "failondataloss",
                  "kafkaconsumer.polltimeoutms", "fetchoffset.numretries", "fetchoffset.retryintervalms",
                  "groupidprefix", "topic"}
SINK_OPTIONS = {"topic", "checkpointlocation"}        # Spark hands a streaming sink its checkpointLocation
_SHOWN = {name.lower(): name for name in (
    "startingOffsets", "endingOffsets", "startingTimestamp", "endingTimestamp", "startingOffsetsByTimestamp",
    "endingOffsetsByTimestamp", "startingOffsetsByTimestampStrategy", "maxOffsetsPerTrigger", "minOffsetsPerTrigger",
    "maxTriggerDelay", "minPartitions", "maxRecordsPerPartition", "includeHeaders", "failOnDataLoss",
    "kafkaConsumer.pollTimeoutMs", "fetchOffset.numRetries", "fetchOffset.retryIntervalMs", "groupIdPrefix",
    "subscribePattern", "checkpointLocation")}
# kafka.* settings Spark's connector refuses, with its reasons (KafkaSourceProvider's checks).
REFUSED_BY_SPARK = {
    "auto.offset.reset": "Instead set the source option 'startingOffsets' to 'earliest' or 'latest' to specify "
                         "where to start. Structured Streaming manages which offsets are consumed itself",
    "key.deserializer": "Keys are deserialized as byte arrays; use DataFrame operations to decode them",
    "value.deserializer": "Values are deserialized as byte arrays; use DataFrame operations to decode them",
    "enable.auto.commit": "Offsets are tracked by Spark's checkpoints, not committed to Kafka",
    "interceptor.classes": "Interceptors can modify the payload, so they are not safe",
}
REFUSED_BY_SPARK_SINK = {
    "key.serializer": "Keys are written from the 'key' column (string or binary)",
    "value.serializer": "Values are written from the 'value' column (string or binary)",
}
# The consumer settings a read applies: fetches, isolation, topic discovery, timeouts, identity.
SECURITY_SETTINGS = ("security.protocol", "sasl.mechanism", "sasl.jaas.config", "ssl.truststore.location",
                     "ssl.truststore.type", "ssl.truststore.certificates", "ssl.keystore.location", "ssl.keystore.type",
                     "ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.key.password",
                     "ssl.endpoint.identification.algorithm")
READ_SETTINGS = ("bootstrap.servers", "client.id", "group.id", "request.timeout.ms", "default.api.timeout.ms",
                 "retry.backoff.ms", "isolation.level", "fetch.min.bytes", "fetch.max.bytes",
                 "fetch.max.wait.ms", "max.partition.fetch.bytes", "allow.auto.create.topics",
                 "exclude.internal.topics", "client.rack", *SECURITY_SETTINGS)
# Consumer settings that cannot take effect in a Spark read, and why (refused rather than ignored).
WITHOUT_EFFECT_ON_READ = {
    **{name: "Spark assigns partitions to its consumers itself: they never join a consumer group" for name in (
        "group.instance.id", "group.protocol", "group.remote.assignor", "partition.assignment.strategy",
        "session.timeout.ms", "heartbeat.interval.ms", "max.poll.interval.ms", "auto.commit.interval.ms")},
    "max.poll.records": "Spark tasks read whole offset ranges as Arrow batches, not polls of records",
    "metadata.max.age.ms": "the connector fetches fresh metadata every time it plans a batch",
}
# The connector's producer defaults where they differ from Java's: large batches for bulk writes.
WRITE_DEFAULTS = {"batch.size": 1_000_000, "linger.ms": 5, "client.id": "kafkamock-spark-producer"}


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
    """The ``kafka.*`` settings of a query, checked. Reads use the consumer fields; writes pass ``producer`` (the
    settings of a ``kafkamock.client.Producer``)."""

    bootstrap_servers: str
    client_id: str = "kafkamock-spark"
    group_id: str | None = None                   # the executors' consumer group id, as Spark names it
    isolation_level: int = 0                      # read_uncommitted, the Java consumer's default
    allow_auto_create_topics: bool = True         # the Java consumer's default
    exclude_internal_topics: bool = True
    request_timeout_s: float = 30.0
    api_timeout_s: float = 60.0                   # default.api.timeout.ms: how long planning may take
    retry_backoff_s: float = 0.1
    fetch_min_bytes: int = 1
    fetch_max_bytes: int = 52_428_800
    fetch_max_wait_ms: int = 500
    max_partition_fetch_bytes: int = 1_048_576
    client_rack: str = ""
    security: dict[str, Any] = field(default_factory=dict)   # security.protocol, sasl.*, ssl.*: as given
    producer: dict[str, Any] = field(default_factory=dict)

    def kafka_client(self) -> KafkaClient:
        """A KafkaClient with these settings (driver planning and worker reads)."""
        return KafkaClient(self.bootstrap_servers, client_id=self.client_id, retry_backoff_s=self.retry_backoff_s,
                           api_timeout_s=self.api_timeout_s, security=security_from(self.security))


@dataclass(frozen=True)
class ByTimestamp:
    """Offsets looked up by record timestamp (ListOffsets by time): ``everywhere`` for every partition
    (startingTimestamp / endingTimestamp), or one timestamp per partition (...OffsetsByTimestamp). When no record
    is that recent, a start follows ``no_match`` ("error" or "latest"); an end is the latest offset."""

    everywhere: int | None = None
    per_partition: tuple[tuple[tuple[str, int], int], ...] = ()
    no_match: str = "error"

    def timestamps(self, partitions: Iterable[tuple[str, int]]) -> dict[tuple[str, int], int]:
        if self.everywhere is not None:
            return {tp: self.everywhere for tp in partitions}
        return dict(self.per_partition)


Offsets = str | dict[tuple[str, int], int] | ByTimestamp   # "earliest" | "latest" | specific offsets | by time


@dataclass(frozen=True)
class ReadOptions:
    client: ClientSettings
    subscription: Subscription
    starting: Offsets
    ending: Offsets
    fail_on_data_loss: bool = True
    include_headers: bool = False
    min_partitions: int | None = None
    max_records_per_partition: int | None = None
    max_offsets_per_trigger: int | None = None
    min_offsets_per_trigger: int | None = None
    max_trigger_delay_ms: int = 15 * 60_000
    poll_timeout_ms: int = 120_000                # kafkaConsumer.pollTimeoutMs (Spark: spark.network.timeout)
    fetch_offset_retries: int = 3                 # fetchOffset.numRetries
    fetch_offset_retry_interval_ms: int = 1_000   # fetchOffset.retryIntervalMs


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


def _int(options: dict[str, str], name: str, shown: str, *, minimum: int = 1) -> int | None:
    raw = options.get(name)
    if raw is None:
        return None
    what = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise KafkaOptionError(f"option '{shown}' must be {what}, not {raw!r}") from None
    if value < minimum:
        raise KafkaOptionError(f"option '{shown}' must be {what}, not {raw!r}")
    return value


def _int_or(options: dict[str, str], name: str, shown: str, default: int) -> int:
    value = _int(options, name, shown, minimum=0)
    return default if value is None else value


_TIME_UNITS = {"us": 0.001, "ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}


def time_string_ms(raw: str, shown: str) -> int:
    """Spark's time strings (``Utils.timeStringAsMs``): ``500``, ``500ms``, ``10s``, ``15m``, ``1h``, ``1d``."""
    match = re.fullmatch(r"\s*(-?\d+)\s*([a-z]*)\s*", str(raw).lower())
    if not match or match.group(2) not in ("", *_TIME_UNITS) or int(match.group(1)) < 0:
        raise KafkaOptionError(f"option '{shown}' must be a time like 500ms, 10s, 15m or 1h, not {raw!r}")
    return int(int(match.group(1)) * _TIME_UNITS.get(match.group(2) or "ms", 1))


def client_settings(options: Mapping[str, str], *, role: str = "read", group_id: str | None = None
                    ) -> ClientSettings:
    """The ``kafka.*`` settings for a read (``role="read"``: consumer and planning) or a write (a producer).

    Every name is checked: refused as Spark refuses it, applied, or refused with the reason it could not take
    effect. Values are checked as the Java client checks them."""
    opts = _lower(options)
    servers = opts.get("kafka.bootstrap.servers", "").strip()
    if not servers:
        raise KafkaOptionError("option 'kafka.bootstrap.servers' must be specified for configuring Kafka consumer "
                               "and producer (e.g. .option(\"kafka.bootstrap.servers\", \"127.0.0.1:9092\"))")
    for server in servers.split(","):
        host, _, port = server.strip().rpartition(":")
        if not host or not port.isdigit():
            raise KafkaOptionError(f"option 'kafka.bootstrap.servers': {server.strip()!r} is not host:port")
    kafka = {k[len("kafka."):]: v for k, v in opts.items() if k.startswith("kafka.")}
    refused = {**REFUSED_BY_SPARK, **REFUSED_BY_SPARK_SINK} if role == "write" else REFUSED_BY_SPARK
    for name, why in refused.items():
        if name in kafka:
            raise KafkaOptionError(f"Kafka option 'kafka.{name}' is not supported. {why}.")
    if role == "write":
        return _write_settings(servers, kafka)
    return _read_settings(servers, kafka, group_id)


def _setting_error(exc: ValueError) -> KafkaOptionError:
    """The client config's message, naming the option as the user wrote it."""
    found = re.search(r"invalid value (.*) for '([^']+)': (.*)", str(exc))
    if found:
        return KafkaOptionError(f"option 'kafka.{found.group(2)}': invalid value {found.group(1)}, "
                                f"{found.group(3)}")
    return KafkaOptionError(str(exc))


def _check_security(given: Mapping[str, Any]) -> None:
    """TLS and SASL settings checked on the driver, before any task runs (a missing JAAS entry, a login module
    that does not match the mechanism, a trust store that cannot be read)."""
    try:
        security_from(given)
    except (ValueError, OSError) as exc:
        raise KafkaOptionError(f"option 'kafka.security.protocol' / 'kafka.sasl.*' / 'kafka.ssl.*': {exc}") from None


def _read_settings(servers: str, kafka: dict[str, str], group_id: str | None) -> ClientSettings:
    for name in kafka:
        if name in READ_SETTINGS:
            continue
        if name in WITHOUT_EFFECT_ON_READ:
            raise KafkaOptionError(f"option 'kafka.{name}' would have no effect on a read: "
                                   f"{WITHOUT_EFFECT_ON_READ[name]}")
        if name in client_config.PRODUCER:
            raise KafkaOptionError(f"option 'kafka.{name}' is a producer setting; a read only uses consumers")
        raise KafkaOptionError(f"option 'kafka.{name}' is not a Kafka consumer setting the connector knows "
                               f"(it applies: {', '.join('kafka.' + n for n in READ_SETTINGS)})")
    spec = {name: client_config.CONSUMER[name] for name in READ_SETTINGS}
    try:
        s = client_config.parse(spec, kafka, "Kafka consumer")
    except ValueError as exc:
        raise _setting_error(exc) from None
    group = s["group.id"] or group_id
    security = {name: kafka[name] for name in SECURITY_SETTINGS if name in kafka}
    _check_security(security)
    return ClientSettings(
        bootstrap_servers=servers,
        client_id=s["client.id"] if "client.id" in kafka else (f"consumer-{group}-1" if group else "consumer-1"),
        group_id=group, isolation_level=1 if s["isolation.level"] == "read_committed" else 0,
        allow_auto_create_topics=s["allow.auto.create.topics"], exclude_internal_topics=s["exclude.internal.topics"],
        request_timeout_s=s["request.timeout.ms"] / 1000, api_timeout_s=s["default.api.timeout.ms"] / 1000,
        retry_backoff_s=s["retry.backoff.ms"] / 1000, fetch_min_bytes=s["fetch.min.bytes"],
        fetch_max_bytes=s["fetch.max.bytes"], fetch_max_wait_ms=s["fetch.max.wait.ms"],
        max_partition_fetch_bytes=s["max.partition.fetch.bytes"], client_rack=s["client.rack"], security=security)


def _write_settings(servers: str, kafka: dict[str, str]) -> ClientSettings:
    for name in kafka:
        if name not in client_config.PRODUCER:
            where = "a consumer setting; a write only uses a producer" if name in client_config.CONSUMER else \
                "not a Kafka producer setting the connector knows"
            raise KafkaOptionError(f"option 'kafka.{name}' is {where}")
    given = {**WRITE_DEFAULTS, **kafka}
    try:
        producer = client_config.parse(client_config.PRODUCER, given, "Kafka producer")
    except ValueError as exc:
        raise _setting_error(exc) from None
    security = {name: kafka[name] for name in SECURITY_SETTINGS if name in kafka}
    _check_security(security)
    if producer["enable.idempotence"] and producer["acks"] not in ("all", "-1"):
        if "enable.idempotence" in kafka:
            raise KafkaOptionError("option 'kafka.enable.idempotence' needs 'kafka.acks' = all")
        given["enable.idempotence"] = "false"      # Java turns idempotence off by default when acks is not all
    return ClientSettings(bootstrap_servers=servers, client_id=producer["client.id"],
                          request_timeout_s=producer["request.timeout.ms"] / 1000,
                          allow_auto_create_topics=producer["allow.auto.create.topics"], security=security,
                          producer={k: v for k, v in given.items()})


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
            re.compile(raw.strip())
        except re.error as exc:
            raise KafkaOptionError(f"option 'subscribePattern' is not a valid pattern: {exc}") from None
        return Subscription("subscribePattern", pattern=raw.strip())
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


def _partition_json(raw: str, name: str, example: str, *, minimum: int) -> dict[tuple[str, int], int]:
    try:
        parsed = json.loads(raw.strip())
    except ValueError:
        parsed = None
    ok = isinstance(parsed, dict) and all(
        isinstance(ps, dict) and all(str(p).lstrip("-").isdigit() and isinstance(o, int) and not isinstance(o, bool)
                                     for p, o in ps.items()) for ps in parsed.values())
    if not ok:
        raise KafkaOptionError(f"option '{name}' must be JSON like {example}, not {raw!r}")
    out = {(t, int(p)): o for t, ps in parsed.items() for p, o in ps.items()}
    for (t, p), o in out.items():
        if o < minimum:
            what = "offset" if minimum < 0 else "timestamp"
            hint = " (use -2 for earliest, -1 for latest, or an offset >= 0)" if minimum < 0 else \
                " (milliseconds since the epoch)"
            raise KafkaOptionError(f"option '{name}': {what} {o} for {t}-{p} is not valid{hint}")
    return out


def parse_offsets(raw: str, name: str) -> str | dict[tuple[str, int], int]:
    """``earliest``, ``latest`` or JSON ``{"topic":{"0":23,"1":-2}}`` (-2 earliest, -1 latest)."""
    text = raw.strip()
    if text.lower() in ("earliest", "latest"):
        return text.lower()
    return _partition_json(text, name, '{"topicA":{"0":23,"1":-1}}', minimum=EARLIEST)


def _offsets(opts: dict[str, str], which: str, default: str, strategy: str) -> tuple[Offsets, str]:
    """Spark's order of preference: ``<which>Timestamp``, then ``<which>OffsetsByTimestamp``, then
    ``<which>Offsets``. Returns the spec and the option it came from."""
    everywhere, per_partition, plain = f"{which}Timestamp", f"{which}OffsetsByTimestamp", f"{which}Offsets"
    if everywhere.lower() in opts:
        raw = str(opts[everywhere.lower()]).strip()
        if not raw.isdigit():
            raise KafkaOptionError(f"option '{everywhere}' must be one timestamp in milliseconds since the epoch, "
                                   f"not {raw!r}")
        return ByTimestamp(everywhere=int(raw), no_match=strategy), everywhere
    if per_partition.lower() in opts:
        table = _partition_json(opts[per_partition.lower()], per_partition, '{"topicA":{"0":1700000000000}}',
                                minimum=0)
        return ByTimestamp(per_partition=tuple(sorted(table.items())), no_match=strategy), per_partition
    return parse_offsets(opts.get(plain.lower(), default), plain), plain


def _check_batch_limits(starting: Offsets, ending: Offsets, start_name: str, end_name: str) -> None:
    """Spark's checks of a batch query's bounds before it plans anything."""
    if starting == "latest" or (isinstance(starting, dict) and LATEST in starting.values()):
        raise KafkaOptionError(f"option '{start_name}' can't be latest for batch queries on Kafka")
    if ending == "earliest" or (isinstance(ending, dict) and EARLIEST in ending.values()):
        raise KafkaOptionError(f"option '{end_name}' can't be earliest for batch queries on Kafka")
    pairs = None
    if isinstance(starting, dict) and isinstance(ending, dict):
        pairs = (starting, ending)
    elif isinstance(starting, ByTimestamp) and isinstance(ending, ByTimestamp) and starting.per_partition \
            and ending.per_partition:
        pairs = (dict(starting.per_partition), dict(ending.per_partition))
    if pairs is None:
        return
    first, last = pairs
    if set(first) != set(last):
        raise KafkaOptionError(f"options '{start_name}' and '{end_name}' must name the same partitions: "
                               f"{_listed(set(first) ^ set(last))} appear in only one")
    for tp in sorted(first):
        if first[tp] >= 0 and last[tp] >= 0 and first[tp] > last[tp]:
            raise KafkaOptionError(f"option '{start_name}' for {tp[0]}-{tp[1]} ({first[tp]}) is after "
                                   f"'{end_name}' ({last[tp]})")


def _listed(partitions: Iterable[tuple[str, int]]) -> str:
    return ", ".join(f"{t}-{p}" for t, p in sorted(partitions))


def unique_group_id(opts: Mapping[str, str], *, streaming: bool) -> str:
    """The consumer group id Spark gives a query's executors: ``<groupIdPrefix>-<uuid>-executor`` (prefix
    ``spark-kafka-source`` for streams, ``spark-kafka-relation`` for batch reads). ``kafka.group.id`` replaces it."""
    prefix = str(_lower(opts).get("groupidprefix", "spark-kafka-source" if streaming else "spark-kafka-relation"))
    if not prefix.strip():
        raise KafkaOptionError("option 'groupIdPrefix' is empty")
    return f"{prefix.strip()}-{uuid.uuid4()}-executor"


def _check_names(opts: dict[str, str], known: set[str], what: str) -> None:
    """Spark's Kafka connector ignores an option it does not know; a misspelt ``startingOffset`` would then read
    from the wrong place without a word, so an unknown name is refused, with the closest known one."""
    for name in opts:
        if name.startswith("kafka.") or name in known:
            continue
        if name == "path":
            raise KafkaOptionError(f"a Kafka {what} has no path: name topics with "
                                   f"{'subscribe, subscribePattern or assign' if what == 'source' else 'topic'}, "
                                   "not load(path) or save(path)")
        close = closest(name, known)
        hint = f"; did you mean '{_SHOWN.get(close, close)}'?" if close else ""
        raise KafkaOptionError(f"option '{name}' is not an option of a Kafka {what}{hint}")


def read_options(options: Mapping[str, str], *, streaming: bool) -> ReadOptions:
    opts = _lower(options)
    _check_names(opts, SOURCE_OPTIONS - {"topic"}, "source")
    client = client_settings(opts, role="read", group_id=unique_group_id(opts, streaming=streaming))
    subscription = _subscription(opts)
    strategy = str(opts.get("startingoffsetsbytimestampstrategy", "error")).strip().lower()
    if strategy not in ("error", "latest"):
        raise KafkaOptionError(f"option 'startingOffsetsByTimestampStrategy' must be 'error' or 'latest', not "
                               f"{opts['startingoffsetsbytimestampstrategy']!r}")
    starting, start_name = _offsets(opts, "starting", "latest" if streaming else "earliest", strategy)
    ending: Offsets = "latest"
    trigger = {"maxoffsetspertrigger": "maxOffsetsPerTrigger", "minoffsetspertrigger": "minOffsetsPerTrigger",
               "maxtriggerdelay": "maxTriggerDelay"}
    if streaming:
        for name in ("endingOffsets", "endingOffsetsByTimestamp", "endingTimestamp"):
            if name.lower() in opts:
                raise KafkaOptionError(f"option '{name}' is not allowed for streaming queries (it is for batch "
                                       "queries only)")
    else:
        ending, end_name = _offsets(opts, "ending", "latest", strategy)
        _check_batch_limits(starting, ending, start_name, end_name)
        for key, shown in trigger.items():
            if key in opts:
                raise KafkaOptionError(f"option '{shown}' is for streaming queries only")
    max_per_trigger = _int(opts, "maxoffsetspertrigger", "maxOffsetsPerTrigger")
    min_per_trigger = _int(opts, "minoffsetspertrigger", "minOffsetsPerTrigger")
    if max_per_trigger and min_per_trigger and min_per_trigger > max_per_trigger:
        raise KafkaOptionError(f"option 'minOffsetsPerTrigger' ({min_per_trigger}) is higher than "
                               f"'maxOffsetsPerTrigger' ({max_per_trigger})")
    delay = time_string_ms(opts["maxtriggerdelay"], "maxTriggerDelay") if "maxtriggerdelay" in opts else 15 * 60_000
    return ReadOptions(
        client=client, subscription=subscription, starting=starting, ending=ending,
        fail_on_data_loss=_bool(opts, "failondataloss", True, "failOnDataLoss"),
        include_headers=_bool(opts, "includeheaders", False, "includeHeaders"),
        min_partitions=_int(opts, "minpartitions", "minPartitions"),
        max_records_per_partition=_int(opts, "maxrecordsperpartition", "maxRecordsPerPartition"),
        max_offsets_per_trigger=max_per_trigger, min_offsets_per_trigger=min_per_trigger,
        max_trigger_delay_ms=delay,
        poll_timeout_ms=_int(opts, "kafkaconsumer.polltimeoutms", "kafkaConsumer.pollTimeoutMs") or 120_000,
        fetch_offset_retries=_int_or(opts, "fetchoffset.numretries", "fetchOffset.numRetries", 3),
        fetch_offset_retry_interval_ms=_int_or(opts, "fetchoffset.retryintervalms", "fetchOffset.retryIntervalMs",
                                               1_000))


def write_options(options: Mapping[str, str]) -> WriteOptions:
    opts = _lower(options)
    _check_names(opts, SINK_OPTIONS, "sink")
    topic = opts.get("topic")
    if topic is not None and not topic.strip():
        raise KafkaOptionError("option 'topic' is empty")
    return WriteOptions(client=client_settings(opts, role="write"), topic=topic.strip() if topic else None)
