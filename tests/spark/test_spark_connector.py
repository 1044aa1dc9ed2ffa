"""Kafka sources and sinks end to end: a real SparkSession (local[2]) reading and writing through Spark's own
connector (against kafkamock and Apache Kafka 4.3.1) and kafkamock's (against kafkamock), checked with a real client
(confluent-kafka) where data leaves Spark (support/spark_sources.py)."""

from __future__ import annotations

import datetime as dt
import json
import time

import pytest
import trio

from kafkamock import records
from kafkamock.client import KafkaClient

confluent_kafka = pytest.importorskip("confluent_kafka")
admin_mod = pytest.importorskip("confluent_kafka.admin")
pytestmark = pytest.mark.slow

TS = 1_700_000_000_000


def append_batch(broker, topic, partition, recs, **kwargs):
    """Produce one batch exactly as encoded here (any compression, null keys and values) with kafkamock.client."""
    data = records.encode_batch(recs, **kwargs)

    async def main():
        async with KafkaClient(broker.bootstrap_servers) as client:
            conn = await client.leader(topic, partition)
            response = await conn.request("Produce", {"transactional_id": None, "acks": -1, "timeout_ms": 5000,
                                                      "topic_data": [{"name": topic, "topic_id": client.topic_ids[topic],
                                                                      "partition_data": [{"index": partition,
                                                                                          "records": data}]}]})
            assert response.responses[0].partition_responses[0].error_code == 0

    trio.run(main)


def stored_batches(broker, topic, partition):
    """The batches of a partition as stored (read back with a raw Fetch: the same on any broker)."""
    async def main():
        async with KafkaClient(broker.bootstrap_servers) as client:
            conn = await client.leader(topic, partition)
            response = await conn.request("Fetch", {
                "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 30, "isolation_level": 0,
                "session_id": 0, "session_epoch": -1, "topics": [{"topic": topic, "topic_id": client.topic_ids[topic],
                                                                  "partitions": [{"partition": partition,
                                                                                  "fetch_offset": 0,
                                                                                  "partition_max_bytes": 1 << 30}]}]})
            return bytes(response.responses[0].partitions[0].records or b"")

    return records.split_batches(trio.run(main))[0]


def consume_all(broker, topic, n, timeout=30):
    c = confluent_kafka.Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "check",
                                  "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    md = c.list_topics(topic, timeout=10)
    c.assign([confluent_kafka.TopicPartition(topic, p, 0) for p in md.topics[topic].partitions])
    got, deadline = [], time.monotonic() + timeout
    while len(got) < n and time.monotonic() < deadline:
        m = c.poll(0.2)
        if m is not None and not m.error():
            got.append(m)
    # Nothing more than n: wait one more poll cycle for strays.
    extra = c.poll(1.0)
    c.close()
    assert extra is None or extra.error(), f"more than {n} messages in {topic}"
    return got


def test_batch_read_gives_exact_rows(source):
    broker = source
    topic = source.create_topic(source.name("spark-batch"), 3)
    expected = []
    for partition, compression in [(0, "none"), (1, "lz4"), (2, "zstd"), (0, "gzip"), (1, "snappy")]:
        base = sum(1 for e in expected if e[1] == partition)
        recs = [{"key": None if i == 0 else b"k%d" % i, "value": None if i == 1 else b"v%d-%d" % (partition, i),
                 "headers": [("h", b"%d" % i), ("n", None)] if i % 2 else [], "timestamp": TS + i}
                for i in range(3)]
        append_batch(broker, topic, partition, recs, compression=compression)
        expected += [(r["key"], partition, base + i, r["value"], r["timestamp"], r["headers"])
                     for i, r in enumerate(recs)]
    df = source.read(subscribe=topic, includeHeaders="true")
    rows = df.collect()
    # A record without headers has null headers, as Spark's connector gives it (not an empty array).
    got = sorted(((r.partition, r.offset, r.key, r.value, int(r.timestamp.timestamp() * 1000),
                   None if r.headers is None else [(h.key, h.value) for h in r.headers]) for r in rows),
                 key=lambda row: row[:2])
    assert got == sorted(((p, o, k, v, ts, list(hs) or None) for k, p, o, v, ts, hs in expected),
                         key=lambda row: row[:2])
    assert {r.topic for r in rows} == {topic} and {r.timestampType for r in rows} == {0}
    assert rows[0].timestamp.tzinfo is None or rows[0].timestamp.utcoffset() == dt.timedelta(0)
    assert "headers" not in source.read(subscribe=topic).columns
    # minPartitions splits offset ranges into more tasks, same rows.
    split = source.read(subscribe=topic, minPartitions="7")
    assert split.rdd.getNumPartitions() >= 7 and split.count() == len(expected)


def test_starting_and_ending_offsets_json_and_assign(source):
    topic = source.create_topic(source.name("spark-offsets"), 2)
    for p in (0, 1):
        append_batch(source, topic, p, [{"key": None, "value": b"%d-%d" % (p, i), "timestamp": TS} for i in range(10)])
    df = source.read(subscribe=topic, startingOffsets=json.dumps({topic: {"0": 3, "1": -2}}),
                     endingOffsets=json.dumps({topic: {"0": 5, "1": -1}}))
    assert sorted((r.partition, r.offset) for r in df.collect()) == [(0, 3), (0, 4)] + [(1, i) for i in range(10)]
    one = source.read(assign=json.dumps({topic: [1]}), startingOffsets=json.dumps({topic: {"1": 8}}))
    assert sorted(r.offset for r in one.collect()) == [8, 9]
    pattern = source.read(subscribePattern=topic[:-3] + ".*")
    assert pattern.count() == 20


def test_nothing_to_read_is_no_rows(source, tmp_path):
    """An empty topic, a partition of it, a pattern that matches nothing: no rows (Spark's connector), never an
    error, in a batch read and in a stream."""
    topic = source.create_topic(source.name("spark-empty"), 2)
    for options in ({"subscribe": topic}, {"assign": json.dumps({topic: [1]})},
                    {"subscribePattern": source.name("nothing") + "-.*"}):
        assert source.read(**options).count() == 0, options
    query = (source.read(stream=True, subscribePattern=source.name("nothing") + "-.*").writeStream.format("memory")
             .queryName(f"nothing_{source.token}").trigger(availableNow=True).start())
    assert query.awaitTermination(120) and query.exception() is None
    assert source.spark.sql(f"select count(*) as n from nothing_{source.token}").collect()[0].n == 0


def test_fail_on_data_loss_after_delete_records(source):
    broker = source
    topic = source.create_topic(source.name("spark-loss"), 1)
    for i in range(3):
        append_batch(broker, topic, 0, [{"key": None, "value": b"%d" % (i * 5 + j), "timestamp": TS} for j in range(5)])
    admin = admin_mod.AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    for f in admin.delete_records([confluent_kafka.TopicPartition(topic, 0, 7)]).values():
        f.result(10)
    start = json.dumps({topic: {"0": 2}})
    with pytest.raises(Exception, match="failOnDataLoss"):
        source.read(subscribe=topic, startingOffsets=start).collect()
    rows = source.read(subscribe=topic, startingOffsets=start, failOnDataLoss="false").collect()
    assert sorted(r.offset for r in rows) == list(range(7, 15))


def test_fail_on_data_loss_after_retention(source):
    """Records aged out by retention (2023 timestamps, a week's retention, segments rolled every 100 ms): a read
    from offset 0 fails with failOnDataLoss, and with it off reads what is left."""
    topic = source.create_topic(source.name("spark-aged"), 1, config={"retention.ms": str(7 * 86_400_000),
                                                                      "segment.ms": "100"})
    append_batch(source, topic, 0, [{"key": None, "value": b"old%d" % i, "timestamp": TS} for i in range(5)])
    time.sleep(0.2)                     # segment.ms: the next append rolls a segment (Kafka's rule is in wall time)
    append_batch(source, topic, 0, [{"key": None, "value": b"new", "timestamp": int(time.time() * 1000)}])
    probe = confluent_kafka.Consumer({"bootstrap.servers": source.bootstrap_servers, "group.id": "probe"})
    try:
        deadline = time.monotonic() + 60
        while probe.get_watermark_offsets(confluent_kafka.TopicPartition(topic, 0), timeout=10)[0] != 5:
            assert time.monotonic() < deadline, "retention did not remove the old segment"   # the broker's check
            time.sleep(0.2)
    finally:
        probe.close()
    start = json.dumps({topic: {"0": 0}})
    with pytest.raises(Exception, match="failOnDataLoss"):
        source.read(subscribe=topic, startingOffsets=start).collect()
    rows = source.read(subscribe=topic, startingOffsets=start, failOnDataLoss="false").collect()
    assert [(r.offset, r.value) for r in rows] == [(5, b"new")]


def test_streaming_aggregation_written_back_survives_a_restart(source, tmp_path):
    """orders -> count per customer (complete mode) -> totals topic; stop, produce more, restart from the checkpoint:
    every input row counted exactly once."""
    broker = source
    orders = source.create_topic(source.name("orders"), 2)
    totals_topic = source.create_topic(source.name("totals"), 1)
    producer = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap_servers})

    def produce(first, n):
        for i in range(first, first + n):
            producer.produce(orders, key=b"c%d" % (i % 3), value=b"%d" % i)
        assert producer.flush(15) == 0

    checkpoint = str(tmp_path / "checkpoint")

    def run_once():
        stream = source.read(stream=True, subscribe=orders, startingOffsets="earliest", maxOffsetsPerTrigger="7")
        totals = stream.selectExpr("CAST(key AS STRING) AS customer").groupBy("customer").count()
        query = (source.write_stream(totals.selectExpr("customer AS key", "CAST(count AS STRING) AS value"),
                                     topic=totals_topic, checkpointLocation=checkpoint)
                 .outputMode("complete").trigger(availableNow=True).start())
        assert query.awaitTermination(180)
        assert query.exception() is None
        return [p["numInputRows"] for p in query.recentProgress]

    produce(0, 20)
    first = run_once()
    assert sum(first) == 20 and max(first) <= 7                       # maxOffsetsPerTrigger caps each batch
    produce(20, 10)
    second = run_once()
    assert sum(second) == 10                                         # from the checkpoint: none again, none lost
    messages = consume_all(broker, totals_topic, len([n for n in first + second if n]) * 3, timeout=10)
    latest = {}
    for m in messages:                                               # in offset order: the last count wins
        latest[m.key().decode()] = int(m.value())
    assert latest == {"c0": 10, "c1": 10, "c2": 10}


def test_batch_write_with_keys_partitions_and_headers(source):
    broker, spark = source, source.spark
    topic = source.create_topic(source.name("spark-out"), 4)
    df = spark.createDataFrame(
        [(f"k{i}" if i % 4 else None, f"value-{i}", i % 4 if i % 5 == 0 else None,
          [("h", bytearray(b"%d" % i))]) for i in range(40)],
        "key string, value string, partition int, headers array<struct<key:string,value:binary>>")
    source.write(df, topic=topic)
    got = consume_all(broker, topic, 40)
    by_value = {m.value().decode(): m for m in got}
    assert sorted(by_value) == sorted(f"value-{i}" for i in range(40))
    from kafkamock.records.partitioner import partition_for_key
    for i in range(40):
        m = by_value[f"value-{i}"]
        assert m.headers() == [("h", b"%d" % i)]
        if i % 5 == 0:
            assert m.partition() == i % 4                               # the partition column wins
        elif i % 4:
            assert m.partition() == partition_for_key(b"k%d" % i, 4)    # Kafka's murmur2, as Java would
    # Idempotent: each task's batches carry a producer id and sequences.
    views = [v for p in range(4) for v in stored_batches(broker, topic, p)]
    assert views and all(v.producer_id >= 0 and v.base_sequence >= 0 for v in views)


def test_a_failed_write_surfaces_the_kafka_error(source):
    topic = source.create_topic(source.name("spark-small"), 1, config={"max.message.bytes": "1000"})
    df = source.spark.createDataFrame([("x" * 5000,)], "value string")
    with pytest.raises(Exception, match="MESSAGE_TOO_LARGE|RecordTooLargeException"):
        source.write(df, topic=topic)


@pytest.mark.parametrize(("options", "message"), [
    ({"subscribe": "t"}, "kafka.bootstrap.servers"),
    ({"kafka.bootstrap.servers": "B", "subscribe": "t", "assign": '{"t":[0]}'}, "'assign', 'subscribe'"),
    ({"kafka.bootstrap.servers": "B", "subscribe": "no-such-topic", "kafka.allow.auto.create.topics": "false"},
     "option 'subscribe': topic 'no-such-topic' does not exist"),
    ({"kafka.bootstrap.servers": "B", "subscribe": "t", "startingOffsets": "latest"}, "startingOffsets"),
    ({"kafka.bootstrap.servers": "B", "subscribe": "t", "kafka.auto.offset.reset": "earliest"}, "startingOffsets"),
])
def test_bad_options_name_the_option(spark, kafka_broker_session, options, message):
    r = spark.read.format("kafkamock")
    for k, v in options.items():
        r = r.option(k, kafka_broker_session.bootstrap_servers if v == "B" else v)
    with pytest.raises(Exception, match=message.replace("'", ".").replace("(", r"\(")):
        r.load().collect()


def test_bad_write_schema_is_refused(spark, kafka_broker_session):
    df = spark.createDataFrame([("x",)], "payload string")
    with pytest.raises(Exception, match="Required attribute 'value' not found"):
        (df.write.mode("append").format("kafkamock")
         .option("kafka.bootstrap.servers", kafka_broker_session.bootstrap_servers).option("topic", "t").save())


def test_share_state_control_batches_are_never_rows(mock_source):
    """A share group's SHARE_CHECKPOINT / SHARE_DELTA batches sit between the records and at the end of the partition;
    Spark reads every record, none of them, and reaches the end offset."""
    source = broker = mock_source
    topic = source.create_topic(source.name("spark-share-state"), 1)
    group = source.name("spark-sg")
    append_batch(broker, topic, 0, [{"key": None, "value": b"a%d" % i, "timestamp": TS} for i in range(3)])

    async def share():
        async with KafkaClient(broker.bootstrap_servers) as client:      # one connection: the session is its own
            conn = await client.leader(topic, 0)
            joined = await conn.request("ShareGroupHeartbeat", {
                "group_id": group, "member_id": "m", "member_epoch": 0, "rack_id": None,
                "subscribed_topic_names": [topic]})
            assert joined.error_code == 0
            got = []
            # The share-partition starts ("latest": past a0-a2); b0-b2 (3-5) are acquired and accepted, which writes
            # a checkpoint at 6; c0 (7) is acquired and accepted: a delta at 8, the end of the partition.
            for epoch, produced, acks in ((0, None, []), (1, b"b", []), (2, None, [(3, 5)]), (3, b"c", []),
                                          (4, None, [(7, 7)])):
                if produced is not None:
                    data = records.encode_batch([{"key": None, "value": produced + b"%d" % i, "timestamp": TS}
                                                 for i in range(3 if produced == b"b" else 1)])
                    await conn.request("Produce", {"transactional_id": None, "acks": -1, "timeout_ms": 5000,
                                                   "topic_data": [{"name": topic, "topic_id": client.topic_ids[topic],
                                                                   "partition_data": [{"index": 0, "records": data}]}]})
                answer = await conn.request("ShareFetch", {
                    "group_id": group, "member_id": "m", "share_session_epoch": epoch,
                    "max_wait_ms": 2000 if produced else 0, "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 100,
                    "batch_size": 100, "share_acquire_mode": 0, "is_renew_ack": False, "forgotten_topics_data": [],
                    "topics": [{"topic_id": client.topic_ids[topic], "partitions": [
                        {"partition_index": 0, "acknowledgement_batches": [
                            {"first_offset": f, "last_offset": last, "acknowledge_types": [1]}
                            for f, last in acks]}]}]})
                assert answer.error_code == 0
                got += [(r.first_offset, r.last_offset) for t in answer.responses for p in t.partitions
                        for r in p.acquired_records]
            return got

    assert trio.run(share) == [(3, 5), (7, 7)]
    handle = source.handle
    assert handle.call(lambda b=handle.cluster: b.metadata.topics[topic].partitions[0].log.high_watermark) == 9
    rows = source.read(subscribe=topic).collect()
    assert sorted((r.offset, r.value) for r in rows) == [(0, b"a0"), (1, b"a1"), (2, b"a2"), (3, b"b0"), (4, b"b1"),
                                                         (5, b"b2"), (7, b"c0")]
