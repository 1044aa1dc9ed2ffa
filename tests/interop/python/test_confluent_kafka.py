"""confluent-kafka (librdkafka) against a live kafkamock broker over real sockets.

Consumers use assign(), never subscribe(): the broker has no group coordinator yet (no JoinGroup/SyncGroup/
OffsetCommit), so nothing here commits offsets either.
"""

from __future__ import annotations

import time

import pytest
from client_support import FETCH, INIT_PRODUCER_ID, LIST_OFFSETS, PRODUCE, stored_views, wait_until

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import (  # noqa: E402
    OFFSET_BEGINNING,
    OFFSET_END,
    TIMESTAMP_CREATE_TIME,
    TIMESTAMP_LOG_APPEND_TIME,
    Consumer,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

BASE_TS = 1_700_000_000_000


def producer(broker, **conf) -> Producer:
    config = {"bootstrap.servers": broker.bootstrap_servers, "enable.idempotence": True, "acks": "all",
              "linger.ms": 20, "message.timeout.ms": 15000}
    config.update(conf)
    return Producer(config)


def consumer(broker, **conf) -> Consumer:
    config = {"bootstrap.servers": broker.bootstrap_servers, "group.id": "kafkamock-assign-only",
              "enable.auto.commit": False, "enable.auto.offset.store": False, "auto.offset.reset": "error",
              "fetch.wait.max.ms": 100}
    config.update(conf)
    return Consumer(config)


def produce_all(p: Producer, topic: str, messages: list[dict]) -> list:
    """Produce and flush; returns the delivery reports (message objects) in delivery order. Fails on any error."""
    reports: list = []
    errors: list = []

    def on_delivery(err, msg):
        (errors if err else reports).append(err or msg)

    for m in messages:
        p.produce(topic, on_delivery=on_delivery, **m)
        p.poll(0)
    remaining = p.flush(15)
    assert remaining == 0, f"{remaining} message(s) still in flight"
    assert not errors, errors
    return reports


def consume(c: Consumer, count: int, timeout: float = 15.0, allow_errors: bool = False) -> list:
    """Poll until ``count`` messages arrived (deadline: ``timeout``); consumer errors fail the test unless allowed."""
    got: list = []
    deadline = time.monotonic() + timeout
    while len(got) < count:
        assert time.monotonic() < deadline, f"got {len(got)} of {count} messages before the deadline"
        msg = c.poll(0.2)
        if msg is None:
            continue
        if msg.error():
            if msg.error().code() == KafkaError._PARTITION_EOF:
                continue
            assert allow_errors, f"consumer error: {msg.error()}"
            got.append(msg)
            continue
        got.append(msg)
    return got


def sample_messages(n: int) -> list[dict]:
    """Keys, values and headers of varied shapes: null key, null and empty value, a large compressible value,
    several headers including a null-valued one, binary bytes; timestamps set explicitly."""
    out = []
    for i in range(n):
        value: bytes | None = (b"value-%06d|" % i) * (1 + i % 7)
        if i % 50 == 3:
            value = None
        elif i % 50 == 4:
            value = b""
        elif i % 50 == 5:
            value = bytes(range(256)) * 400        # ~100 KB
        key = None if i % 10 == 9 else b"key-%d" % (i % 13)
        headers = [("idx", str(i).encode()), ("bin", bytes([i % 256, 0, 255]))]
        if i % 3 == 0:
            headers.append(("nullable", None))
        if i % 4 == 0:
            headers.append(("idx", b"duplicate-name"))
        out.append({"key": key, "value": value, "headers": headers, "timestamp": BASE_TS + i})
    return out


def assert_same(received: list, sent: list[dict], first_offset: int = 0, timestamp_type: int = TIMESTAMP_CREATE_TIME):
    assert [m.offset() for m in received] == list(range(first_offset, first_offset + len(sent)))
    for msg, want in zip(received, sent, strict=True):
        assert msg.key() == want["key"]
        assert msg.value() == want["value"]
        assert (msg.headers() or []) == want["headers"]
        assert msg.timestamp() == (timestamp_type, want["timestamp"])


# -- produce and consume back -----------------------------------------------------------------------------------

@pytest.mark.parametrize("compression", ["none", "lz4", "zstd", "gzip", "snappy"])
def test_idempotent_produce_and_consume_back(kafka_broker, wire_log, compression):
    kafka_broker.create_topic("orders", 1)
    sent = sample_messages(120)
    p = producer(kafka_broker, **{"compression.type": compression, "batch.num.messages": 40})
    reports = produce_all(p, "orders", sent)
    assert sorted(r.offset() for r in reports) == list(range(len(sent)))

    # On the wire: an idempotent producer id, then v2 batches in the requested codec with contiguous sequences.
    assert wire_log.requests_of(INIT_PRODUCER_ID), "no InitProducerId: the producer was not idempotent"
    producer_id = wire_log.responses_of(INIT_PRODUCER_ID)[0].body["producer_id"]
    views = stored_views(kafka_broker, "orders")
    assert len(views) >= 3, "expected several batches (batch.num.messages=40)"
    assert {v.compression for v in views} == {compression}
    assert {v.producer_id for v in views} == {producer_id}
    sequence = 0
    for v in views:
        assert v.magic == 2 and v.base_sequence == sequence
        sequence = v.last_sequence + 1
    assert sequence == len(sent)
    assert all(r.version >= 3 for r in wire_log.requests_of(PRODUCE))

    c = consumer(kafka_broker)
    c.assign([TopicPartition("orders", 0, OFFSET_BEGINNING)])
    received = consume(c, len(sent))
    c.close()
    assert_same(received, sent)


def test_partitioner_spreads_keys_like_java(kafka_broker):
    """murmur2_random is the Java client's partitioner: every keyed message lands where Java would put it, and
    each partition reads back in offset order."""
    from kafka.partitioner.default import murmur2

    partitions = 4
    kafka_broker.create_topic("spread", partitions)
    sent = [{"key": b"customer-%d" % i, "value": b"event-%d" % i, "headers": [], "timestamp": BASE_TS + i}
            for i in range(200)]
    p = producer(kafka_broker, partitioner="murmur2_random")
    reports = produce_all(p, "spread", sent)
    by_key = {r.key(): r.partition() for r in reports}
    for key, partition in by_key.items():
        assert partition == (murmur2(key) & 0x7FFFFFFF) % partitions, key
    assert set(by_key.values()) == set(range(partitions))

    c = consumer(kafka_broker)
    c.assign([TopicPartition("spread", i, OFFSET_BEGINNING) for i in range(partitions)])
    received = consume(c, len(sent))
    c.close()
    per_partition: dict[int, list] = {}
    for m in received:
        per_partition.setdefault(m.partition(), []).append(m)
    for partition, msgs in per_partition.items():
        assert [m.offset() for m in msgs] == list(range(len(msgs)))
        expected = [s for s in sent if by_key[s["key"]] == partition]
        assert [(m.key(), m.value(), m.timestamp()[1]) for m in msgs] == \
            [(s["key"], s["value"], s["timestamp"]) for s in expected]


def test_explicit_partitions_and_empty_partition(kafka_broker):
    kafka_broker.create_topic("explicit", 3)
    sent = {0: [b"a0", b"a1"], 2: [b"c0"]}
    p = producer(kafka_broker)
    for partition, values in sent.items():
        produce_all(p, "explicit", [{"value": v, "partition": partition} for v in values])
    c = consumer(kafka_broker, **{"enable.partition.eof": True})
    c.assign([TopicPartition("explicit", i, OFFSET_BEGINNING) for i in range(3)])
    got: dict[int, list[bytes]] = {0: [], 1: [], 2: []}
    eof: set[int] = set()

    def step():
        msg = c.poll(0.2)
        if msg is None:
            return
        if msg.error():
            assert msg.error().code() == KafkaError._PARTITION_EOF, msg.error()
            eof.add(msg.partition())
        else:
            got[msg.partition()].append(msg.value())

    wait_until(lambda: eof == {0, 1, 2} and sum(map(len, got.values())) == 3, what="EOF on all partitions",
               step=step)
    c.close()
    assert got == {0: [b"a0", b"a1"], 1: [], 2: [b"c0"]}
    low_high = Consumer({"bootstrap.servers": kafka_broker.bootstrap_servers, "group.id": "w"})
    assert low_high.get_watermark_offsets(TopicPartition("explicit", 0), timeout=10) == (0, 2)
    assert low_high.get_watermark_offsets(TopicPartition("explicit", 1), timeout=10) == (0, 0)
    low_high.close()


# -- admin --------------------------------------------------------------------------------------------------------

def test_admin_create_topics_and_list_topics(kafka_broker, wire_log):
    admin = AdminClient({"bootstrap.servers": kafka_broker.bootstrap_servers})
    futures = admin.create_topics([
        NewTopic("payments", num_partitions=3, replication_factor=1),
        NewTopic("audit", num_partitions=1, replication_factor=1, config={"retention.ms": "3600000"}),
    ], operation_timeout=10)
    for topic, future in futures.items():
        assert future.result(timeout=10) is None, topic

    metadata = admin.list_topics(timeout=10)
    assert {"payments", "audit"} <= set(metadata.topics)
    assert sorted(metadata.topics["payments"].partitions) == [0, 1, 2]
    (broker_id,) = metadata.brokers
    host, port = kafka_broker.bootstrap_servers.rsplit(":", 1)
    assert (metadata.brokers[broker_id].host, metadata.brokers[broker_id].port) == (host, int(port))
    for partition in metadata.topics["payments"].partitions.values():
        assert partition.leader == broker_id and partition.replicas == [broker_id] and partition.isrs == [broker_id]
        assert partition.error is None
    assert metadata.cluster_id == kafka_broker.cluster.metadata.cluster_id
    assert metadata.controller_id == broker_id
    assert kafka_broker.call(lambda: kafka_broker.cluster.metadata.topics["audit"].configs) == {"retention.ms": 3600000}

    # Errors come back per topic, as Kafka sends them.
    futures = admin.create_topics([NewTopic("payments", 3, 1), NewTopic("bad name!", 1, 1),
                                   NewTopic("zero", 0, 1), NewTopic("odd", 1, 1, config={"no.such": "1"})],
                                  operation_timeout=10)
    codes = {}
    for topic, future in futures.items():
        with pytest.raises(KafkaException) as info:
            future.result(timeout=10)
        codes[topic] = info.value.args[0].code()
    assert codes == {"payments": KafkaError.TOPIC_ALREADY_EXISTS, "bad name!": KafkaError.TOPIC_EXCEPTION,
                     "zero": KafkaError.INVALID_PARTITIONS, "odd": KafkaError.INVALID_CONFIG}

    # validate_only creates nothing.
    future = admin.create_topics([NewTopic("dry-run", 2, 1)], validate_only=True, operation_timeout=10)["dry-run"]
    assert future.result(timeout=10) is None
    assert "dry-run" not in admin.list_topics(timeout=10).topics
    assert wire_log.versions(19), "no CreateTopics request seen"


def test_auto_create_on_produce(kafka_broker):
    p = producer(kafka_broker)
    reports = produce_all(p, "created-on-demand", [{"value": b"hello"}])
    assert [(r.partition(), r.offset()) for r in reports] == [(0, 0)]
    assert "created-on-demand" in kafka_broker.cluster.metadata.topics


# -- seeking, offsets out of range ---------------------------------------------------------------------------------

def _one_batch_of_ten(kafka_broker, topic: str) -> list[dict]:
    kafka_broker.create_topic(topic, 1)
    sent = [{"key": b"k%d" % i, "value": b"v%d" % i, "headers": [("n", b"%d" % i)], "timestamp": BASE_TS + i}
            for i in range(10)]
    p = producer(kafka_broker, **{"linger.ms": 10000, "compression.type": "lz4"})
    produce_all(p, topic, sent)   # flush() sends the lingering batch: all ten records in one batch
    views = stored_views(kafka_broker, topic)
    assert [(v.base_offset, v.last_offset) for v in views] == [(0, 9)]
    return sent


def test_assign_and_seek_to_mid_batch_offsets(kafka_broker, wire_log):
    sent = _one_batch_of_ten(kafka_broker, "seek")
    c = consumer(kafka_broker)
    c.assign([TopicPartition("seek", 0, 5)])          # mid-batch: the broker returns the whole batch from 0
    assert_same(consume(c, 5), sent[5:], first_offset=5)
    assert fetched_offsets(wire_log, kafka_broker, "seek")[0] == 5

    c.seek(TopicPartition("seek", 0, 2))
    assert_same(consume(c, 8), sent[2:], first_offset=2)
    c.seek(TopicPartition("seek", 0, 9))
    assert_same(consume(c, 1), sent[9:], first_offset=9)
    c.seek(TopicPartition("seek", 0, OFFSET_BEGINNING))
    assert_same(consume(c, 10), sent)
    assert c.position([TopicPartition("seek", 0)])[0].offset == 10
    c.close()


def fetched_offsets(wire_log, broker, topic: str) -> list[int]:
    """Every fetch offset asked for on ``topic`` (Fetch v12 and older name the topic, v13+ send its id)."""
    topic_id = broker.cluster.metadata.topics[topic].topic_id
    return [p.fetch_offset for r in wire_log.requests_of(FETCH) for t in r.body.topics
            if t.topic == topic or t.topic_id == topic_id for p in t.partitions]


@pytest.mark.parametrize("start", [OFFSET_BEGINNING, OFFSET_END, 3])
def test_logical_and_absolute_start_offsets(kafka_broker, wire_log, start):
    sent = _one_batch_of_ten(kafka_broker, "logical")
    c = consumer(kafka_broker)
    c.assign([TopicPartition("logical", 0, start)])
    if start == OFFSET_END:
        # END resolves to 10 through ListOffsets LATEST; once a Fetch at 10 is on the wire, produce one more.
        wait_until(lambda: 10 in fetched_offsets(wire_log, kafka_broker, "logical"), what="a Fetch at the log end",
                   step=lambda: c.poll(0.1))
        extra = [{"key": b"late", "value": b"after-end", "headers": [], "timestamp": BASE_TS + 99}]
        produce_all(producer(kafka_broker), "logical", extra)
        assert_same(consume(c, 1), extra, first_offset=10)
    else:
        first = 0 if start == OFFSET_BEGINNING else start
        assert_same(consume(c, 10 - first), sent[first:], first_offset=first)
    c.close()


def test_offset_out_of_range_resets_to_earliest(kafka_broker, wire_log):
    sent = _one_batch_of_ten(kafka_broker, "oor")
    c = consumer(kafka_broker, **{"auto.offset.reset": "earliest"})
    c.assign([TopicPartition("oor", 0, 500)])
    assert_same(consume(c, 10), sent)
    c.close()
    fetch_errors = [p["error_code"] for r in wire_log.responses_of(FETCH) for t in r.body["responses"]
                    for p in t["partitions"]]
    assert 1 in fetch_errors, "the broker never answered OFFSET_OUT_OF_RANGE (1)"
    # librdkafka resets to the log start offset the Fetch response carried (or asks ListOffsets EARLIEST).
    offsets = fetched_offsets(wire_log, kafka_broker, "oor")
    assert offsets[0] == 500 and 0 in offsets, offsets


def test_offset_out_of_range_resets_to_latest(kafka_broker, wire_log):
    _one_batch_of_ten(kafka_broker, "oor-latest")
    c = consumer(kafka_broker, **{"auto.offset.reset": "latest"})
    c.assign([TopicPartition("oor-latest", 0, 500)])

    wait_until(lambda: 10 in fetched_offsets(wire_log, kafka_broker, "oor-latest"),
               what="a Fetch at the reset offset 10", step=lambda: c.poll(0.1))
    asked = [p.timestamp for r in wire_log.requests_of(LIST_OFFSETS) for t in r.body.topics for p in t.partitions]
    assert -1 in asked, f"no ListOffsets LATEST after the reset (timestamps asked: {asked})"
    extra = [{"key": b"new", "value": b"after-reset-%d" % i, "headers": [], "timestamp": BASE_TS + 100 + i}
             for i in range(3)]
    produce_all(producer(kafka_broker), "oor-latest", extra)
    assert_same(consume(c, 3), extra, first_offset=10)
    c.close()


def test_offset_out_of_range_with_reset_error(kafka_broker):
    _one_batch_of_ten(kafka_broker, "oor-error")
    c = consumer(kafka_broker, **{"auto.offset.reset": "error"})
    c.assign([TopicPartition("oor-error", 0, 500)])
    (msg,) = consume(c, 1, allow_errors=True)
    assert msg.error().code() == KafkaError._AUTO_OFFSET_RESET, msg.error()
    assert "out of range" in msg.error().str().lower() or "offset" in msg.error().str().lower()
    c.close()


# -- timestamps -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("compression", ["none", "zstd"])
def test_log_append_time_topic(kafka_broker, compression):
    kafka_broker.create_topic("appended", 1, config={"message.timestamp.type": "LogAppendTime"})
    sent = [{"key": b"k%d" % i, "value": b"v%d" % i, "headers": [], "timestamp": 1_000 + i} for i in range(20)]
    before = int(time.time() * 1000)
    reports = produce_all(producer(kafka_broker, **{"compression.type": compression}), "appended", sent)
    after = int(time.time() * 1000)
    for r in reports:  # the produce response's LogAppendTime reaches the delivery report
        kind, ts = r.timestamp()
        assert kind == TIMESTAMP_LOG_APPEND_TIME and before <= ts <= after, r.timestamp()

    c = consumer(kafka_broker)
    c.assign([TopicPartition("appended", 0, OFFSET_BEGINNING)])
    received = consume(c, len(sent))
    c.close()
    assert [(m.key(), m.value()) for m in received] == [(s["key"], s["value"]) for s in sent]
    for m in received:
        kind, ts = m.timestamp()
        assert kind == TIMESTAMP_LOG_APPEND_TIME and before <= ts <= after, m.timestamp()
        assert ts >= 1_000_000                     # not the producer's CreateTime
    views = stored_views(kafka_broker, "appended")
    assert all(v.timestamp_type == "LogAppendTime" for v in views)
