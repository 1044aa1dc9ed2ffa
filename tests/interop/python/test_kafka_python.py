"""kafka-python (pure Python client) against a live kafkamock broker: producer, consumer with assign(), admin.

Also pinned old protocol versions (``api_version=(0, 11)`` / ``(0, 10)``): what still works against a broker
that, like Kafka 4.x, serves Produce v3+ and Fetch v4+ only. test_legacy_formats.py covers magic 0/1 data.
"""

from __future__ import annotations

import logging
import time

import pytest
from client_support import (
    CREATE_TOPICS,
    FETCH,
    INIT_PRODUCER_ID,
    LIST_OFFSETS,
    METADATA,
    PRODUCE,
    log_end_offset,
    stored_views,
    wait_until,
)

kafka = pytest.importorskip("kafka")
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition  # noqa: E402
from kafka.admin import NewTopic  # noqa: E402
from kafka.errors import KafkaConnectionError, KafkaTimeoutError, TopicAlreadyExistsError  # noqa: E402

BASE_TS = 1_700_000_000_000


@pytest.fixture(autouse=True)
def _quiet_kafka_python(caplog):
    # kafka-python logs every reconnect at ERROR; the tests assert on the wire instead.
    caplog.set_level(logging.CRITICAL, logger="kafka")


def make_producer(broker, **conf) -> KafkaProducer:
    config = {"bootstrap_servers": broker.bootstrap_servers, "linger_ms": 20, "request_timeout_ms": 5000,
              "max_block_ms": 10000}
    config.update(conf)
    return KafkaProducer(**config)


def make_consumer(broker, **conf) -> KafkaConsumer:
    config = {"bootstrap_servers": broker.bootstrap_servers, "enable_auto_commit": False, "group_id": None,
              "fetch_max_wait_ms": 100, "request_timeout_ms": 5000}
    config.update(conf)
    return KafkaConsumer(**config)


def consume(c: KafkaConsumer, count: int, timeout: float = 15.0) -> list:
    got: list = []
    deadline = time.monotonic() + timeout
    while len(got) < count:
        assert time.monotonic() < deadline, f"got {len(got)} of {count} records before the deadline"
        for records in c.poll(timeout_ms=200).values():
            got.extend(records)
    return got


def sample(n: int) -> list[dict]:
    out = []
    for i in range(n):
        value = None if i % 25 == 7 else (b"payload-%05d;" % i) * (1 + i % 9)
        key = None if i % 10 == 9 else b"key-%d" % (i % 7)
        headers = [("idx", str(i).encode()), ("empty", b"")]
        if i % 3 == 0:
            headers.append(("idx", b"again"))
        out.append({"key": key, "value": value, "headers": headers, "timestamp_ms": BASE_TS + i})
    return out


def send_all(p: KafkaProducer, topic: str, messages: list[dict], **kwargs) -> list:
    futures = [p.send(topic, **m, **kwargs) for m in messages]
    p.flush(timeout=15)
    return [f.get(timeout=15) for f in futures]


def assert_same(records: list, sent: list[dict], first_offset: int = 0) -> None:
    assert [r.offset for r in records] == list(range(first_offset, first_offset + len(sent)))
    for r, want in zip(records, sent, strict=True):
        assert (r.key, r.value, r.timestamp, r.timestamp_type) == (want["key"], want["value"], want["timestamp_ms"], 0)
        assert list(r.headers) == want["headers"]


@pytest.mark.parametrize("compression", [None, "gzip", "lz4", "zstd"])
def test_produce_and_consume_with_assign(kafka_broker, wire_log, compression):
    kafka_broker.create_topic("events", 1)
    sent = sample(150)
    p = make_producer(kafka_broker, compression_type=compression, batch_size=4096)
    metadata = send_all(p, "events", sent)
    p.close()
    assert [m.offset for m in metadata] == list(range(len(sent)))

    # kafka-python 3 is idempotent by default: an InitProducerId, then v2 batches with contiguous sequences.
    assert wire_log.requests_of(INIT_PRODUCER_ID)
    views = stored_views(kafka_broker, "events")
    assert len(views) > 1
    assert {v.compression for v in views} == {compression or "none"}
    assert [v.base_sequence for v in views][0] == 0 and all(v.producer_id >= 0 for v in views)

    c = make_consumer(kafka_broker)
    tp = TopicPartition("events", 0)
    c.assign([tp])
    c.seek_to_beginning(tp)
    assert_same(consume(c, len(sent)), sent)
    assert c.position(tp) == len(sent)
    c.seek(tp, 37)                                                 # mid-batch
    assert_same(consume(c, len(sent) - 37), sent[37:], first_offset=37)
    assert c.end_offsets([tp]) == {tp: len(sent)} and c.beginning_offsets([tp]) == {tp: 0}
    c.close()
    assert wire_log.versions(PRODUCE) and min(wire_log.versions(PRODUCE)) >= 3
    assert min(wire_log.versions(FETCH)) >= 4


def test_multi_partition_and_offsets_for_times(kafka_broker):
    kafka_broker.create_topic("multi", 3)
    p = make_producer(kafka_broker)
    sent = {i: [{"key": b"p%d-%d" % (i, j), "value": b"v", "headers": [], "timestamp_ms": BASE_TS + 10 * j}
                for j in range(5)] for i in range(3)}
    for partition, messages in sent.items():
        send_all(p, "multi", messages, partition=partition)
    # The default partitioner (murmur2 on the key) sends keyed records where Java's would.
    from kafka.partitioner.default import murmur2
    keyed = p.send("multi", key=b"routing-key", value=b"x").get(timeout=10)
    assert keyed.partition == (murmur2(b"routing-key") & 0x7FFFFFFF) % 3
    p.close()

    c = make_consumer(kafka_broker)
    tps = [TopicPartition("multi", i) for i in range(3)]
    c.assign(tps)
    c.seek_to_beginning()
    got = consume(c, 16)
    for i in range(3):
        mine = [r for r in got if r.partition == i]
        assert [r.offset for r in mine] == list(range(len(mine)))
        assert [r.key for r in mine][:5] == [m["key"] for m in sent[i]]
    # ListOffsets by timestamp: the first record at or after BASE_TS + 25 is offset 3 (timestamp BASE_TS + 30).
    found = c.offsets_for_times({tp: BASE_TS + 25 for tp in tps})
    assert {tp.partition: (o.offset, o.timestamp) for tp, o in found.items()} == \
        {i: (3, BASE_TS + 30) for i in range(3)}
    c.close()


def test_admin_create_topics_and_list_topics(kafka_broker, wire_log):
    admin = KafkaAdminClient(bootstrap_servers=kafka_broker.bootstrap_servers, request_timeout_ms=5000)
    response = admin.create_topics([NewTopic("alpha", 2, 1), NewTopic("beta", 1, 1, topic_configs={
        "message.timestamp.type": "LogAppendTime"})])
    assert {t["name"]: t["error_code"] for t in response["topics"]} == {"alpha": 0, "beta": 0}
    assert {"alpha", "beta"} <= set(admin.list_topics())
    described = {t["name"]: t for t in admin.describe_topics(["alpha"])}
    assert sorted(p["partition_index"] for p in described["alpha"]["partitions"]) == [0, 1]
    assert described["alpha"]["error_code"] == 0

    with pytest.raises(TopicAlreadyExistsError):
        admin.create_topics([NewTopic("alpha", 2, 1)])
    response = admin.create_topics({"gamma": {"num_partitions": 1, "replication_factor": 1}}, validate_only=True)
    assert response["topics"][0]["error_code"] == 0
    assert "gamma" not in admin.list_topics()
    admin.close()
    assert wire_log.versions(CREATE_TOPICS) and wire_log.versions(METADATA)


# -- pinned old protocol versions -----------------------------------------------------------------------------

def test_api_version_0_11_uses_the_oldest_versions_the_broker_serves(kafka_broker, wire_log):
    """(0, 11) is Produce v3 + magic 2, Fetch v5, ListOffsets v2, Metadata v4, CreateTopics v2, InitProducerId v0:
    all inside the broker's ranges, so everything works."""
    api = {"api_version": (0, 11)}
    admin = KafkaAdminClient(bootstrap_servers=kafka_broker.bootstrap_servers, request_timeout_ms=5000, **api)
    admin.create_topics([NewTopic("old", 1, 1)])
    assert "old" in admin.list_topics()
    admin.close()
    sent = sample(40)
    p = make_producer(kafka_broker, **api)
    send_all(p, "old", sent)
    p.close()
    c = make_consumer(kafka_broker, **api)
    tp = TopicPartition("old", 0)
    c.assign([tp])
    c.seek_to_beginning(tp)
    assert_same(consume(c, len(sent)), sent)
    c.close()
    ours = "kafka-python"
    assert wire_log.versions(PRODUCE, ours) == {3}
    assert wire_log.versions(FETCH, ours) == {5}
    assert wire_log.versions(LIST_OFFSETS, ours) == {2}
    assert wire_log.versions(CREATE_TOPICS, ours) == {2}
    assert wire_log.versions(INIT_PRODUCER_ID, ours) == {0}
    assert {v.magic for v in stored_views(kafka_broker, "old")} == {2}
    assert not wire_log.refused()


@pytest.mark.slow  # waits out the producer's delivery timeout
def test_api_version_0_10_producer_is_refused_like_kafka_4(kafka_broker, wire_log, caplog):
    """(0, 10) means magic 1 message sets in Produce v2. Kafka 4.x lists Produce from v0 in ApiVersions (for
    librdkafka, KAFKA-18659) but serves v3+ only (KIP-896): it closes the connection on the Produce v2 frame, as for
    any version it does not serve. kafka-python ignores ApiVersions when api_version is pinned, retries on each new
    connection and fails the record at delivery_timeout_ms. Nothing is appended. (kafkamock serves these versions
    with kafkamock.legacy.protocol.enable: test_legacy_formats.py.)"""
    caplog.set_level(logging.INFO, logger="kafkamock")
    kafka_broker.create_topic("legacy", 1)
    p = make_producer(kafka_broker, api_version=(0, 10), delivery_timeout_ms=1500, request_timeout_ms=1000,
                      linger_ms=0, retry_backoff_ms=50)
    future = p.send("legacy", key=b"k", value=b"v", timestamp_ms=BASE_TS)
    # The record fails at delivery_timeout_ms with the timeout, or with the disconnect kafka-python saw last.
    with pytest.raises((KafkaTimeoutError, KafkaConnectionError)):
        future.get(timeout=15)
    p.close(timeout=2)
    assert wire_log.versions(PRODUCE, "kafka-python") == {2}
    assert not wire_log.responses_of(PRODUCE)
    assert "Produce v2 is not supported by this broker (valid versions: 3-13)" in caplog.text
    assert log_end_offset(kafka_broker, "legacy") == 0


def test_api_version_0_10_consumer_is_refused_like_kafka_4(kafka_broker, wire_log, caplog):
    """(0, 10) fetches with Fetch v2 (magic 0/1 message sets); Kafka 4.x serves Fetch v4+ only."""
    caplog.set_level(logging.INFO, logger="kafkamock")
    kafka_broker.create_topic("legacy-read", 1)
    p = make_producer(kafka_broker)
    send_all(p, "legacy-read", sample(3))
    p.close()
    c = make_consumer(kafka_broker, api_version=(0, 10), request_timeout_ms=1000, reconnect_backoff_ms=20)
    tp = TopicPartition("legacy-read", 0)
    c.assign([tp])
    c.seek(tp, 0)                        # no ListOffsets (v0 is refused too): fetch straight from offset 0
    received: list = []
    wait_until(lambda: "Fetch v2 is not supported by this broker (valid versions: 4-18)" in caplog.text,
               what="a refused Fetch", step=lambda: received.extend(r for rs in c.poll(timeout_ms=100).values()
                                                                    for r in rs))
    c.close()
    assert received == []
    assert wire_log.versions(FETCH, "kafka-python") == {2}
    assert not wire_log.responses_of(FETCH)
