"""Each of Spark's Kafka source and sink options end to end, on a real SparkSession (local[2]) against a live broker:
timestamps, split and trigger limits, group ids, client settings, read_committed, data loss under a pattern, and a
restart from a checkpoint after the topic grew."""

from __future__ import annotations

import json
import time

import pytest

from kafkamock.client.blocking import Admin, Producer

pytestmark = pytest.mark.slow

TS = 1_700_000_000_000


def reader(spark, broker, *, stream=False, **options):
    r = (spark.readStream if stream else spark.read).format("kafkamock").option(
        "kafka.bootstrap.servers", broker.bootstrap_servers)
    for k, v in options.items():
        r = r.option(k, v)
    return r.load()


def produce(broker, topic, rows, **config):
    """rows: (partition, value, timestamp) produced in order; every record acknowledged before returning."""
    with Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 0, **config}) as producer:
        handles = [producer.send(topic, value=value, partition=p, timestamp=ts) for p, value, ts in rows]
        producer.flush()
        return [h.get(10) for h in handles]


def offsets(df):
    return sorted((r.partition, r.offset) for r in df.collect())


def stream_all(df, name, **writer_options):
    """Run a stream with Trigger.AvailableNow into a memory table; the (partition, offset) pairs it read."""
    query = df.writeStream.format("memory").queryName(name).trigger(availableNow=True)
    for k, v in writer_options.items():
        query = query.option(k, v)
    running = query.start()
    assert running.awaitTermination(120)
    assert running.exception() is None
    spark = df.sparkSession
    return sorted((r.partition, r.offset) for r in spark.sql(f"select partition, offset from {name}").collect())


@pytest.fixture(scope="module")
def timed_topic(kafka_broker_session):
    """spark-ts: partition 0 has records at TS + 0, 1000, ... 9000 ms; partition 1 at TS + 500, 1500, ... 9500."""
    broker = kafka_broker_session
    broker.create_topic("spark-ts", 2)
    produce(broker, "spark-ts", [(p, b"%d-%d" % (p, i), TS + i * 1000 + p * 500) for i in range(10) for p in (0, 1)])
    return "spark-ts"


def test_starting_and_ending_timestamps(spark, kafka_broker_session, timed_topic):
    broker, topic = kafka_broker_session, timed_topic
    both = [(p, o) for p in (0, 1) for o in range(3, 10)]
    assert offsets(reader(spark, broker, subscribe=topic, startingTimestamp=str(TS + 3000))) == both
    # startingTimestamp is preferred to startingOffsetsByTimestamp and startingOffsets, as in Spark.
    assert offsets(reader(spark, broker, subscribe=topic, startingTimestamp=str(TS + 3000),
                          startingOffsets=json.dumps({topic: {"0": 0, "1": 0}}),
                          startingOffsetsByTimestamp=json.dumps({topic: {"0": TS, "1": TS}}))) == both
    by_partition = reader(spark, broker, subscribe=topic,
                          startingOffsetsByTimestamp=json.dumps({topic: {"0": TS + 5000, "1": TS}}),
                          endingOffsetsByTimestamp=json.dumps({topic: {"0": TS + 7000, "1": TS + 2000}}))
    assert offsets(by_partition) == [(0, 5), (0, 6), (1, 0), (1, 1)]
    # An end is the first offset at or after the timestamp (exclusive): records strictly before it are read.
    assert offsets(reader(spark, broker, subscribe=topic, endingTimestamp=str(TS + 1000))) == [(0, 0), (1, 0)]
    # An end later than every record is the latest offset.
    assert len(offsets(reader(spark, broker, subscribe=topic, endingTimestamp=str(TS + 10**9)))) == 20


def test_a_starting_timestamp_after_every_record_follows_the_strategy(spark, kafka_broker_session, timed_topic):
    broker, topic = kafka_broker_session, timed_topic
    with pytest.raises(Exception, match="No offset matched from request of topic-partition spark-ts-0"):
        reader(spark, broker, subscribe=topic, startingTimestamp=str(TS + 10**9)).collect()
    latest = reader(spark, broker, subscribe=topic, startingTimestamp=str(TS + 9200),
                    startingOffsetsByTimestampStrategy="latest")
    assert offsets(latest) == [(1, 9)]          # partition 0 has nothing that late: it starts at its end


def test_a_stream_starts_at_a_timestamp(spark, kafka_broker_session, timed_topic):
    df = reader(spark, kafka_broker_session, stream=True, subscribe=timed_topic, startingTimestamp=str(TS + 8000))
    assert stream_all(df, "from_timestamp") == [(0, 8), (0, 9), (1, 8), (1, 9)]


def test_max_records_per_partition_and_min_partitions(spark, kafka_broker_session):
    broker, topic = kafka_broker_session, "spark-split"
    broker.create_topic(topic, 2)
    produce(broker, topic, [(0, b"a", TS)] * 30 + [(1, b"b", TS)] * 10)
    capped = reader(spark, broker, subscribe=topic, maxRecordsPerPartition="8")
    assert capped.rdd.getNumPartitions() == 4 + 2
    assert offsets(capped) == [(0, o) for o in range(30)] + [(1, o) for o in range(10)]
    more = reader(spark, broker, subscribe=topic, maxRecordsPerPartition="8", minPartitions="10")
    assert more.rdd.getNumPartitions() >= 10 and more.count() == 40


def _memory_stream(spark, broker, topic, name, **options):
    df = reader(spark, broker, stream=True, subscribe=topic, startingOffsets="earliest", **options)
    return df.writeStream.format("memory").queryName(name).start()


def _rows(spark, name):
    return spark.sql(f"select count(*) as n from {name}").collect()[0].n


def test_min_offsets_per_trigger_waits_for_enough_new_records(spark, kafka_broker_session):
    broker, topic = kafka_broker_session, "spark-min-trigger"
    broker.create_topic(topic, 2)
    produce(broker, topic, [(i % 2, b"x", TS) for i in range(5)])
    query = _memory_stream(spark, broker, topic, "min_trigger", minOffsetsPerTrigger="20", maxTriggerDelay="1h")
    try:
        query.processAllAvailable()
        assert _rows(spark, "min_trigger") == 5           # the first batch never waits (as in Spark)
        produce(broker, topic, [(i % 2, b"y", TS) for i in range(10)])
        query.processAllAvailable()
        assert _rows(spark, "min_trigger") == 5           # 10 new records < 20: held back
        produce(broker, topic, [(i % 2, b"z", TS) for i in range(10)])
        query.processAllAvailable()
        assert _rows(spark, "min_trigger") == 25          # 20 new: one batch with all of them
    finally:
        query.stop()


def test_max_trigger_delay_runs_a_short_batch_in_the_end(spark, kafka_broker_session):
    broker, topic = kafka_broker_session, "spark-trigger-delay"
    broker.create_topic(topic, 1)
    produce(broker, topic, [(0, b"x", TS)] * 3)
    query = _memory_stream(spark, broker, topic, "trigger_delay", minOffsetsPerTrigger="1000", maxTriggerDelay="1s")
    try:
        query.processAllAvailable()
        assert _rows(spark, "trigger_delay") == 3
        produce(broker, topic, [(0, b"y", TS)] * 4)
        deadline = time.monotonic() + 90
        while _rows(spark, "trigger_delay") < 7:          # far below the minimum: only the delay can trigger it
            assert time.monotonic() < deadline and query.exception() is None
            query.awaitTermination(0.2)
        assert _rows(spark, "trigger_delay") == 7
    finally:
        query.stop()


def _fetch_client_ids(broker) -> set[str]:
    return {r["client_id"] for r in broker.control.requests(api_key="Fetch")}


def test_group_id_prefix_and_group_id_name_the_consumers_as_spark_does(spark, kafka_broker_session, timed_topic):
    broker = kafka_broker_session
    broker.control.clear_requests()
    reader(spark, broker, subscribe=timed_topic, groupIdPrefix="billing").collect()
    ids = _fetch_client_ids(broker)
    assert ids and all(i.startswith("consumer-billing-") and i.endswith("-executor-1") for i in ids), ids
    broker.control.clear_requests()
    reader(spark, broker, subscribe=timed_topic).collect()
    ids = _fetch_client_ids(broker)
    assert ids and all(i.startswith("consumer-spark-kafka-relation-") and i.endswith("-executor-1") for i in ids), ids
    broker.control.clear_requests()
    reader(spark, broker, subscribe=timed_topic, groupIdPrefix="ignored", **{"kafka.group.id": "audited"}).collect()
    assert _fetch_client_ids(broker) == {"consumer-audited-1"}
    broker.control.clear_requests()
    reader(spark, broker, subscribe=timed_topic, **{"kafka.client.id": "mine"}).collect()
    assert _fetch_client_ids(broker) == {"mine"}


def test_fetch_sizes_take_effect(spark, kafka_broker_session):
    broker, topic = kafka_broker_session, "spark-fetch-size"
    broker.create_topic(topic, 1)
    for i in range(20):                                   # 20 batches of about 1.2 kB
        produce(broker, topic, [(0, b"%02d" % i + b"v" * 100, TS)] * 10)

    def fetches(**options):
        broker.control.clear_requests()
        assert reader(spark, broker, subscribe=topic, **options).count() == 200
        return len(broker.control.requests(api_key="Fetch"))

    small = fetches(**{"kafka.max.partition.fetch.bytes": "1024"})
    assert small >= 20                                    # one batch per fetch: each is above the limit
    assert fetches() < small


def test_producer_settings_take_effect(spark, kafka_broker_session):
    broker = kafka_broker_session
    broker.create_topic("spark-batches", 1)
    df = spark.createDataFrame([(f"value-{i:03d}" + "x" * 90,) for i in range(100)], "value string").coalesce(1)

    def write(**options):
        w = df.write.mode("append").format("kafkamock").option("kafka.bootstrap.servers", broker.bootstrap_servers)
        for k, v in {"topic": "spark-batches", **options}.items():
            w = w.option(k, v)
        w.save()

    write()
    whole = len(broker.control.stored_batches("spark-batches", 0, limit=1 << 20))
    write(**{"kafka.batch.size": "1000", "kafka.compression.type": "gzip"})
    stored = broker.control.stored_batches("spark-batches", 0, limit=1 << 20)
    assert whole <= 2 and len(stored) - whole >= 10       # batches of at most 1000 bytes: about 10 records each


def test_request_timeout_bounds_a_write(spark, kafka_broker_session):
    broker = kafka_broker_session
    broker.create_topic("spark-slow", 1)
    broker.control.push_fault("Produce", latency_ms=30_000, count=50)
    df = spark.createDataFrame([("v",)], "value string")
    started = time.monotonic()
    try:
        with pytest.raises(Exception, match="(?i)timed? ?out|REQUEST_TIMED_OUT|delivery"):
            (df.write.mode("append").format("kafkamock").option("kafka.bootstrap.servers", broker.bootstrap_servers)
             .option("topic", "spark-slow").option("kafka.request.timeout.ms", "1000")
             .option("kafka.delivery.timeout.ms", "3000").save())
    finally:
        broker.control.clear_faults()
    assert time.monotonic() - started < 25                # not the 30 s the broker would have taken


def test_read_committed_drops_aborted_transactions_and_stops_at_the_lso(spark, kafka_broker_session, tmp_path):
    broker, topic = kafka_broker_session, "spark-txn"
    broker.create_topic(topic, 1)
    config = {"bootstrap.servers": broker.bootstrap_servers, "transactional.id": "spark-txn-writer"}
    with Producer(config) as producer:
        producer.init_transactions()
        for outcome, n in (("commit", 4), ("abort", 5), ("commit", 3)):
            producer.begin_transaction()
            for i in range(n):
                producer.send(topic, value=b"%s-%d" % (outcome.encode(), i))
            producer.flush()                              # in the log before the marker, even when aborted
            producer.commit_transaction() if outcome == "commit" else producer.abort_transaction()
        producer.begin_transaction()                      # left open: past the last stable offset
        for i in range(2):
            producer.send(topic, value=b"open-%d" % i)
        producer.flush()
        committed = {"kafka.isolation.level": "read_committed"}
        values = sorted(r.value for r in reader(spark, broker, subscribe=topic, **committed).collect())
        assert values == sorted([b"commit-%d" % i for i in range(4)] + [b"commit-%d" % i for i in range(3)])
        everything = [r.value for r in reader(spark, broker, subscribe=topic).collect()]
        assert len(everything) == 4 + 5 + 3 + 2 and b"open-0" in everything
        checkpoint = str(tmp_path / "txn")
        stream = reader(spark, broker, stream=True, subscribe=topic, startingOffsets="earliest", **committed)
        first = (stream.select("value").writeStream.format("parquet").option("path", str(tmp_path / "out"))
                 .option("checkpointLocation", checkpoint).trigger(availableNow=True).start())
        assert first.awaitTermination(120) and first.exception() is None
        assert spark.read.parquet(str(tmp_path / "out")).count() == 7
        producer.commit_transaction()
    again = (reader(spark, broker, stream=True, subscribe=topic, **committed).select("value").writeStream
             .format("parquet").option("path", str(tmp_path / "out")).option("checkpointLocation", checkpoint)
             .trigger(availableNow=True).start())
    assert again.awaitTermination(120) and again.exception() is None
    got = sorted(r.value for r in spark.read.parquet(str(tmp_path / "out")).collect())
    assert got == sorted([b"commit-%d" % i for i in range(4)] + [b"commit-%d" % i for i in range(3)]
                         + [b"open-0", b"open-1"])


def test_a_restarted_stream_reads_partitions_added_meanwhile(spark, kafka_broker_session, tmp_path):
    broker, topic = kafka_broker_session, "spark-grow"
    broker.create_topic(topic, 2)
    produce(broker, topic, [(i % 2, b"a%d" % i, TS) for i in range(10)])
    out, checkpoint = str(tmp_path / "out"), str(tmp_path / "checkpoint")

    def run():
        query = (reader(spark, broker, stream=True, subscribe=topic, startingOffsets="earliest")
                 .selectExpr("partition", "offset", "value").writeStream.format("parquet").option("path", out)
                 .option("checkpointLocation", checkpoint).trigger(availableNow=True).start())
        assert query.awaitTermination(120) and query.exception() is None

    run()
    with Admin({"bootstrap.servers": broker.bootstrap_servers}) as admin:
        admin.create_partitions({topic: 4}).all()
    produce(broker, topic, [(p, b"b%d" % p, TS) for p in range(4)] * 2)
    run()
    rows = sorted((r.partition, r.offset) for r in spark.read.parquet(out).collect())
    assert rows == sorted([(p, o) for p in (0, 1) for o in range(7)] + [(p, o) for p in (2, 3) for o in range(2)])


@pytest.mark.parametrize("fail_on_data_loss", [True, False])
def test_a_deleted_topic_under_subscribe_pattern_is_data_loss(spark, kafka_broker_session, fail_on_data_loss):
    broker = kafka_broker_session
    suffix = "strict" if fail_on_data_loss else "lenient"
    kept, doomed = f"spark-gone-{suffix}-kept", f"spark-gone-{suffix}-doomed"
    for topic in (kept, doomed):
        broker.create_topic(topic, 1)
        produce(broker, topic, [(0, b"x", TS)] * 3)
    df = reader(spark, broker, stream=True, subscribePattern=f"spark-gone-{suffix}-.*", startingOffsets="earliest",
                failOnDataLoss=str(fail_on_data_loss).lower())
    name = f"gone_{suffix}"
    query = df.writeStream.format("memory").queryName(name).start()
    try:
        query.processAllAvailable()
        assert _rows(spark, name) == 6
        with Admin({"bootstrap.servers": broker.bootstrap_servers}) as admin:
            admin.delete_topics([doomed]).all()
        produce(broker, kept, [(0, b"y", TS)] * 2)
        if fail_on_data_loss:
            with pytest.raises(Exception, match=f"{doomed}-0 are gone"):
                query.processAllAvailable()
        else:
            query.processAllAvailable()
            assert _rows(spark, name) == 8 and query.exception() is None
    finally:
        query.stop()


@pytest.mark.parametrize(("options", "message"), [
    ({"kafka.session.timeout.ms": "10"}, "'kafka.session.timeout.ms' would have no effect on a read"),
    ({"kafka.linger.ms": "10"}, "'kafka.linger.ms' is a producer setting"),
    ({"kafka.no.such.setting": "1"}, "'kafka.no.such.setting' is not a Kafka consumer setting"),
    ({"kafka.fetch.max.bytes": "lots"}, "'kafka.fetch.max.bytes': invalid value 'lots'"),
    ({"kafka.enable.auto.commit": "true"}, "'kafka.enable.auto.commit' is not supported"),
    ({"kafka.security.protocol": "SASL_SSL"}, "sasl.mechanism 'GSSAPI' is not supported"),
    ({"kafka.security.protocol": "SASL_PLAINTEXT", "kafka.sasl.mechanism": "PLAIN"}, "needs sasl.jaas.config"),
    ({"kafka.security.protocol": "SSL", "kafka.ssl.truststore.location": "/no/such/ca.pem"}, "No such file"),
    ({"maxOffsetsPerTrigger": "10"}, "'maxOffsetsPerTrigger' is for streaming queries only"),
    ({"maxTriggerDelay": "5m"}, "'maxTriggerDelay' is for streaming queries only"),
    ({"startingOffsetsByTimestamp": '{"spark-ts":{"0":1}}'}, "must name every partition .* missing: spark-ts-1"),
    ({"startingOffsetsByTimestampStrategy": "earliest"}, "'startingOffsetsByTimestampStrategy' must be"),
    ({"startingTimestamp": "yesterday"}, "'startingTimestamp' must be one timestamp"),
    ({"endingOffsets": '{"spark-ts":{"0":1}}', "startingOffsets": '{"spark-ts":{"0":0,"1":0}}'},
     "must name the same partitions"),
    ({"maxRecordsPerPartition": "0"}, "'maxRecordsPerPartition' must be a positive integer"),
])
def test_bad_read_options_name_the_option(spark, kafka_broker_session, timed_topic, options, message):
    with pytest.raises(Exception, match=message.replace("'", ".")):
        reader(spark, kafka_broker_session, subscribe=timed_topic, **options).collect()


@pytest.mark.parametrize(("options", "message"), [
    ({"endingTimestamp": "1"}, "'endingTimestamp' is not allowed for streaming queries"),
    ({"minOffsetsPerTrigger": "10", "maxOffsetsPerTrigger": "5"}, "'minOffsetsPerTrigger' .10. is higher"),
    ({"maxTriggerDelay": "soon"}, "'maxTriggerDelay' must be a time"),
])
def test_bad_stream_options_name_the_option(spark, kafka_broker_session, timed_topic, options, message):
    with pytest.raises(Exception, match=message.replace("'", ".")):
        df = reader(spark, kafka_broker_session, stream=True, subscribe=timed_topic, **options)
        df.writeStream.format("memory").queryName("never").start().processAllAvailable()


@pytest.mark.parametrize(("options", "message"), [
    ({"kafka.isolation.level": "read_committed"}, "'kafka.isolation.level' is a consumer setting"),
    ({"kafka.key.serializer": "x"}, "'kafka.key.serializer' is not supported"),
    ({"kafka.acks": "2"}, "'kafka.acks': invalid value '2'"),
])
def test_bad_write_options_name_the_option(spark, kafka_broker_session, options, message):
    df = spark.createDataFrame([("v",)], "value string")
    w = df.write.mode("append").format("kafkamock").option("kafka.bootstrap.servers",
                                                            kafka_broker_session.bootstrap_servers)
    for k, v in {"topic": "spark-never", **options}.items():
        w = w.option(k, v)
    with pytest.raises(Exception, match=message.replace("'", ".")):
        w.save()


def test_a_misspelt_option_is_refused_with_the_right_name(spark, kafka_broker_session, timed_topic):
    with pytest.raises(Exception, match="option 'startingoffset' is not an option of a Kafka source; did you mean "
                                        "'startingOffsets'"):
        reader(spark, kafka_broker_session, subscribe=timed_topic, startingOffset="earliest").collect()
