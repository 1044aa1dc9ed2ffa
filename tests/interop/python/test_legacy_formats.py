"""Legacy message sets (magic 0 and 1).

What Kafka 4.x does, and kafkamock by default:
- Produce v3+ must carry exactly one magic 2 batch per partition (``ProduceRequest.validateRecords``): a magic 0
  or 1 message set gets INVALID_RECORD (87) for that partition and the connection stays open. Produce v0-v2,
  the only versions that carried magic 0/1, were removed (KIP-896), so a client pinned to them is disconnected
  (see test_kafka_python.py). zstd in Produce v3-v6 gets UNSUPPORTED_COMPRESSION_TYPE (76).
- Logs written before an upgrade can still hold magic 0/1 messages, and Fetch returns them as stored (no
  conversion in Fetch v4+). Clients must read them: here they are placed in the log directly (as an old broker
  would have written them) and read back by librdkafka and kafka-python, next to magic 2 batches.

With ``kafkamock.legacy.protocol.enable`` the broker also serves Produce v0-2 and Fetch v0-3 as Kafka 3.x did:
kafka-python pinned to ``api_version=(0, 9)`` / ``(0, 10, 1)`` produces magic 0/1 message sets (stored as v2
batches) and fetches magic 0/1 (v2 batches converted down), next to modern clients on the same topic.
"""

from __future__ import annotations

import time

import pytest
from client_support import API_VERSIONS, FETCH, PRODUCE, RawClient, log_end_offset, stored_views, wait_until

from kafkamock import records
from kafkamock.testing import start_broker

BASE_TS = 1_600_000_000_000


def append_raw(broker, topic: str, data: bytes, partition: int = 0) -> None:
    """Append already-encoded message sets or batches to a partition's log, as stored by an older broker."""
    views, partial = records.split_batches(data)
    assert partial == 0

    def run():
        p = broker.cluster.metadata.partition(topic, partition)
        for view in views:
            (batch,) = records.decode_batches(view.bytes())
            first, last = batch.records[0].offset, batch.records[-1].offset
            p.log.append(view.bytes(), first, last, max(r.timestamp for r in batch.records), broker.cluster.now_ms())
        broker.cluster.appended(p)
    broker.call(run)


def legacy_log(broker, topic: str) -> list[dict]:
    """A log of: magic 0 (2 messages), magic 1 (2), magic 1 gzip wrapper (3), magic 0 gzip wrapper (2), magic 1
    lz4 wrapper (2), then a magic 2 lz4 batch (2). Returns the expected records in offset order. (No snappy:
    kafka-python needs python-snappy for it.)"""
    expected: list[dict] = []

    def add(magic: int, compression: str, n: int, with_ts: bool) -> None:
        base = len(expected)
        recs = [{"key": b"m%d-%d" % (magic, base + i), "value": b"value-%d" % (base + i),
                 "timestamp": BASE_TS + base + i if with_ts else -1} for i in range(n)]
        append_raw(broker, topic, records.encode_batch(recs, base_offset=base, magic=magic, compression=compression))
        expected.extend({**r, "offset": base + i, "magic": magic} for i, r in enumerate(recs))

    broker.create_topic(topic, 1)
    add(0, "none", 2, False)
    add(1, "none", 2, True)
    add(1, "gzip", 3, True)
    add(0, "gzip", 2, False)
    add(1, "lz4", 2, True)
    add(2, "lz4", 2, True)
    assert log_end_offset(broker, topic) == len(expected) == 13
    return expected


def test_confluent_kafka_reads_legacy_message_sets(kafka_broker):
    confluent_kafka = pytest.importorskip("confluent_kafka")
    expected = legacy_log(kafka_broker, "legacy")
    c = confluent_kafka.Consumer({"bootstrap.servers": kafka_broker.bootstrap_servers, "group.id": "legacy",
                                  "enable.auto.commit": False, "auto.offset.reset": "error"})

    def read_from(offset: int) -> list:
        c.assign([confluent_kafka.TopicPartition("legacy", 0, offset)])
        got: list = []
        deadline = time.monotonic() + 15
        while len(got) < len(expected) - offset:
            assert time.monotonic() < deadline, f"only {len(got)} messages"
            msg = c.poll(0.2)
            if msg is not None:
                assert not msg.error(), msg.error()
                got.append(msg)
        return got

    got = read_from(0)
    assert [(m.offset(), m.key(), m.value()) for m in got] == [(e["offset"], e["key"], e["value"]) for e in expected]
    for m, e in zip(got, expected, strict=True):
        if e["magic"] == 0:
            assert m.timestamp()[0] == confluent_kafka.TIMESTAMP_NOT_AVAILABLE   # magic 0 has no timestamp
        else:
            assert m.timestamp() == (confluent_kafka.TIMESTAMP_CREATE_TIME, e["timestamp"])
    # Start inside the gzip wrapper (offsets 4-6): the whole wrapper comes back, the client skips 4.
    c.unassign()
    assert [m.offset() for m in read_from(5)] == list(range(5, 13))
    c.close()


def test_kafka_python_reads_legacy_message_sets(kafka_broker):
    kafka = pytest.importorskip("kafka")
    expected = legacy_log(kafka_broker, "legacy")
    c = kafka.KafkaConsumer(bootstrap_servers=kafka_broker.bootstrap_servers, group_id=None,
                            enable_auto_commit=False, fetch_max_wait_ms=100)
    tp = kafka.TopicPartition("legacy", 0)
    c.assign([tp])
    c.seek(tp, 0)
    got: list = []
    deadline = time.monotonic() + 15
    while len(got) < len(expected):
        assert time.monotonic() < deadline
        for rs in c.poll(timeout_ms=200).values():
            got.extend(rs)
    c.close()
    assert [(r.offset, r.key, r.value) for r in got] == [(e["offset"], e["key"], e["value"]) for e in expected]
    for r, e in zip(got, expected, strict=True):
        if e["magic"] != 0:
            assert (r.timestamp, r.timestamp_type) == (e["timestamp"], 0)


def _produce_v(raw: RawClient, version: int, topic: str, data: bytes):
    _, response = raw.request("Produce", version, {
        "transactional_id": None, "acks": -1, "timeout_ms": 5000,
        "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": data}]}]})
    return response.responses[0].partition_responses[0]


@pytest.mark.parametrize("magic", [0, 1])
def test_produce_v3_plus_refuses_legacy_message_sets(kafka_broker, wire_log, magic):
    kafka_broker.create_topic("strict", 1)
    legacy = records.encode_batch([{"key": b"k", "value": b"v", "timestamp": BASE_TS}], magic=magic)
    current = records.encode_batch([{"key": b"k", "value": b"v2", "timestamp": BASE_TS}])
    with RawClient(kafka_broker.bootstrap_servers) as raw:
        for version in (3, 8, 9, 11):
            result = _produce_v(raw, version, "strict", legacy)
            assert result.error_code == 87, (version, result)              # INVALID_RECORD
            assert (result.base_offset, result.error_message) == (-1, None)   # as Kafka: the reason is logged only
        # Same connection, still open: a magic 2 batch is accepted.
        assert _produce_v(raw, 3, "strict", current).error_code == 0
    assert log_end_offset(kafka_broker, "strict") == 1
    assert {r.version for r in wire_log.requests_of(PRODUCE)} == {3, 8, 9, 11}


def test_produce_v3_to_v6_refuses_zstd(kafka_broker):
    kafka_broker.create_topic("zstd", 1)
    batch = records.encode_batch([{"key": b"k", "value": b"v" * 100, "timestamp": BASE_TS}], compression="zstd")
    with RawClient(kafka_broker.bootstrap_servers) as raw:
        assert _produce_v(raw, 6, "zstd", batch).error_code == 76          # UNSUPPORTED_COMPRESSION_TYPE
        assert _produce_v(raw, 7, "zstd", batch).error_code == 0
    assert log_end_offset(kafka_broker, "zstd") == 1


def test_kafka_4_lists_produce_from_v0_but_serves_v3_up(kafka_broker, wire_log):
    """KAFKA-18659: ApiVersions lists Produce v0+ (librdkafka needs it to compress), Fetch from v4."""
    with RawClient(kafka_broker.bootstrap_servers) as raw:
        _, response = raw.request("ApiVersions", 3, {"client_software_name": "raw", "client_software_version": "1"})
        ranges = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
        assert ranges[PRODUCE] == (0, 13) and ranges[FETCH] == (4, 18)
        raw.send_frame(_produce_frame(2, "t"))
        assert raw.closed_by_peer()
    assert wire_log.versions(API_VERSIONS) == {3}


def _produce_frame(version: int, topic: str) -> bytes:
    from kafkamock.codec import encode_request

    legacy = records.encode_batch([{"key": b"k", "value": b"v", "timestamp": BASE_TS}], magic=1)
    return encode_request("Produce", version, 1, "raw", {
        "acks": 1, "timeout_ms": 1000, "topic_data": [{"name": topic, "partition_data": [{"index": 0,
                                                                                          "records": legacy}]}]})


# -- kafkamock.legacy.protocol.enable: Kafka 3.x's service of the pre-4.0 versions -------------------------------

@pytest.fixture
def legacy_broker():
    with start_broker({"kafkamock.legacy.protocol.enable": True}) as broker:
        yield broker


OLD_CLIENTS = [((0, 9), None), ((0, 9), "gzip"), ((0, 10, 1), None), ((0, 10, 1), "gzip"), ((0, 10, 1), "lz4")]


def _old_producer_messages(broker, topic: str) -> list[dict]:
    """Every (api_version, compression) of OLD_CLIENTS produces three records; returns them in offset order."""
    kafka = pytest.importorskip("kafka")
    expected = []
    for api, codec in OLD_CLIENTS:
        p = kafka.KafkaProducer(bootstrap_servers=broker.bootstrap_servers, api_version=api,
                                compression_type=codec, linger_ms=20)
        batch = [{"key": b"%s-%d" % (str(codec).encode(), i), "value": f"{api!r} {codec} #{i}".encode(),
                  # magic 0 has no timestamps: the record gets none (-1)
                  "timestamp": BASE_TS + len(expected) + i if api >= (0, 10) else -1} for i in range(3)]
        futures = [p.send(topic, key=m["key"], value=m["value"],
                          timestamp_ms=m["timestamp"] if m["timestamp"] >= 0 else None) for m in batch]
        assert [f.get(timeout=15).offset for f in futures] == list(range(len(expected), len(expected) + 3))
        p.close()
        expected.extend(batch)
    return expected


def test_old_kafka_python_produces_magic_0_and_1_through_produce_v1_and_v2(legacy_broker, wire_log):
    confluent_kafka = pytest.importorskip("confluent_kafka")
    legacy_broker.create_topic("old", 1)
    expected = _old_producer_messages(legacy_broker, "old")
    assert wire_log.versions(PRODUCE, "kafka-python") == {1, 2}  # (0, 9): Produce v1 + magic 0; (0, 10, 1): v2 + magic 1
    old_produces = [r for r in wire_log.requests_of(PRODUCE) if (r.client_id or "").startswith("kafka-python")]
    sent_magics = {records.split_batches(bytes(pd.records))[0][0].magic
                   for r in old_produces for t in r.body.topic_data for pd in t.partition_data}
    assert sent_magics == {0, 1}
    # Stored as Kafka 3.x stores them: v2 batches, one per request, in the producer's compression.
    views = stored_views(legacy_broker, "old")
    assert {v.magic for v in views} == {2}
    assert [v.compression for v in views] == ["none", "gzip", "none", "gzip", "lz4"]

    # A modern client (librdkafka, Fetch v4+) reads them all.
    c = confluent_kafka.Consumer({"bootstrap.servers": legacy_broker.bootstrap_servers, "group.id": "modern",
                                  "enable.auto.commit": False})
    c.assign([confluent_kafka.TopicPartition("old", 0, 0)])
    got: list = []
    wait_until(lambda: len(got) >= len(expected), what="15 messages",
               step=lambda: got.extend(m for m in [c.poll(0.2)] if m is not None and not m.error()))
    c.close()
    assert [(m.offset(), m.key(), m.value()) for m in got] == [(i, e["key"], e["value"])
                                                             for i, e in enumerate(expected)]
    assert [m.timestamp()[1] for m in got] == [e["timestamp"] for e in expected]


@pytest.mark.parametrize(("api", "fetch_version", "magic"), [((0, 9), 1, 0), ((0, 10, 1), 3, 1)])
def test_old_kafka_python_fetches_magic_0_and_1_from_v2_batches(legacy_broker, wire_log, api, fetch_version, magic):
    kafka = pytest.importorskip("kafka")
    confluent_kafka = pytest.importorskip("confluent_kafka")
    legacy_broker.create_topic("mixed", 1)
    expected = _old_producer_messages(legacy_broker, "mixed")
    # Modern batches too, with headers (magic 0/1 cannot carry them: dropped). (No snappy: kafka-python needs
    # python-snappy for it.)
    p = confluent_kafka.Producer({"bootstrap.servers": legacy_broker.bootstrap_servers, "compression.type": "gzip",
                                  "linger.ms": 20})
    for i in range(3):
        p.produce("mixed", key=b"new-%d" % i, value=b"modern #%d" % i, headers=[("h", b"x")],
                  timestamp=BASE_TS + 100 + i)
    assert p.flush(15) == 0
    expected += [{"key": b"new-%d" % i, "value": b"modern #%d" % i, "timestamp": BASE_TS + 100 + i} for i in range(3)]

    c = kafka.KafkaConsumer(bootstrap_servers=legacy_broker.bootstrap_servers, api_version=api, group_id=None,
                            enable_auto_commit=False, fetch_max_wait_ms=100)
    tp = kafka.TopicPartition("mixed", 0)
    c.assign([tp])
    c.seek(tp, 4)                                                 # inside the first gzip batch
    got: list = []
    wait_until(lambda: len(got) >= len(expected) - 4, what="the messages",
               step=lambda: got.extend(r for rs in c.poll(timeout_ms=200).values() for r in rs))
    c.close()
    assert [(r.offset, r.key, r.value) for r in got] == [(i, e["key"], e["value"])
                                                       for i, e in enumerate(expected) if i >= 4]
    if magic == 0:
        assert {r.timestamp for r in got} == {None}               # magic 0 has no timestamp
    else:
        assert [r.timestamp for r in got] == [e["timestamp"] for i, e in enumerate(expected) if i >= 4]
    assert all(not r.headers for r in got)

    assert wire_log.versions(FETCH, "kafka-python") == {fetch_version}   # (not a lingering client of another test)
    fetched = b"".join(b"".join(p["records"]) for r in wire_log.responses_of(FETCH)
                       for t in r.body["responses"] for p in _partitions(t) if p["records"])
    batches = records.decode_batches(fetched)
    assert batches and {b.magic for b in batches} == {magic}
    assert {b.compression for b in batches} == {"gzip", "lz4", "none"}


def _partitions(topic):
    return [p if isinstance(p, dict) else dict(p) for p in topic["partitions"]]


def test_legacy_fetch_of_zstd_batches_is_refused_per_partition(legacy_broker):
    legacy_broker.create_topic("z", 1)
    batch = records.encode_batch([{"key": b"k", "value": b"v" * 50, "timestamp": BASE_TS}], compression="zstd")
    with RawClient(legacy_broker.bootstrap_servers) as raw:
        assert _produce_v(raw, 7, "z", batch).error_code == 0
        _, response = raw.request("Fetch", 3, {
            "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20,
            "topics": [{"topic": "z", "partitions": [{"partition": 0, "fetch_offset": 0,
                                                      "partition_max_bytes": 1 << 20}]}]})
        (partition,) = response.responses[0].partitions
        assert partition.error_code == 76                          # UNSUPPORTED_COMPRESSION_TYPE
        assert partition.high_watermark == -1                      # KafkaApis answers it as an error partition
