"""Legacy message sets (magic 0 and 1) on a broker that, like Kafka 4.x, accepts Produce v3+ only.

What Kafka 4.x does, and kafkamock with it:
- Produce v3+ must carry exactly one magic 2 batch per partition (``ProduceRequest.validateRecords``): a magic 0
  or 1 message set gets INVALID_RECORD (87) for that partition and the connection stays open. Produce v0-v2,
  the only versions that carried magic 0/1, were removed (KIP-896), so a client pinned to them is disconnected
  (see test_kafka_python.py). zstd in Produce v3-v6 gets UNSUPPORTED_COMPRESSION_TYPE (76).
- Logs written before an upgrade can still hold magic 0/1 messages, and Fetch returns them as stored (no
  conversion in Fetch v4+). Clients must read them: here they are placed in the log directly (as an old broker
  would have written them) and read back by librdkafka and kafka-python, next to magic 2 batches.
"""

from __future__ import annotations

import time

import pytest
from client_support import PRODUCE, RawClient, log_end_offset

from kafkamock import records

BASE_TS = 1_600_000_000_000


def append_raw(broker, topic: str, data: bytes, partition: int = 0) -> None:
    """Append already-encoded message sets or batches to a partition's log, as stored by an older broker."""
    views, partial = records.split_batches(data)
    assert partial == 0

    def run():
        plog = broker.broker.cluster.partition(topic, partition).log
        for view in views:
            (batch,) = records.decode_batches(view.bytes())
            first, last = batch.records[0].offset, batch.records[-1].offset
            plog.append(view.bytes(), first, last, max(r.timestamp for r in batch.records), broker.broker.now_ms())
        broker.broker.appended()
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
            assert result.base_offset == -1
            if version >= 8:
                assert "v2 record batches" in result.error_message
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
