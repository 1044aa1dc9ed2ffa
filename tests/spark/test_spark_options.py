"""Each of Spark's Kafka source and sink options end to end, on a real SparkSession (local[2]): Spark's own connector
(``format("kafka")``) against kafkamock and against Apache Kafka 4.3.1, and kafkamock's connector
(``format("kafkamock")``) against kafkamock, with the same expected rows for each (support/spark_sources.py):
timestamps, split and trigger limits, group ids, client settings, read_committed, data loss under a pattern, and a
restart from a checkpoint after the topic grew."""

from __future__ import annotations

import json
import re
import time

import pytest

from kafkamock.client.blocking import Admin, Producer

pytestmark = pytest.mark.slow

TS = 1_700_000_000_000


def reader(spark, broker, *, stream=False, **options):
    """format("kafkamock") on the session's kafkamock, for what only that connector says (its refusals)."""
    r = (spark.readStream if stream else spark.read).format("kafkamock").option(
        "kafka.bootstrap.servers", broker.bootstrap_servers)
    for k, v in options.items():
        r = r.option(k, v)
    return r.load()


def produce(source, topic, rows, **config):
    """rows: (partition, value, timestamp) produced in order; every record acknowledged before returning."""
    with Producer({"bootstrap.servers": source.bootstrap_servers, "linger.ms": 0, **config}) as producer:
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


def timed(source):
    """A topic whose partition 0 has records at TS + 0, 1000, ... 9000 ms and partition 1 at TS + 500, ... 9500."""
    topic = source.create_topic(source.name("spark-ts"), 2)
    produce(source, topic, [(p, b"%d-%d" % (p, i), TS + i * 1000 + p * 500) for i in range(10) for p in (0, 1)])
    return topic


@pytest.fixture(scope="module")
def timed_topic(kafka_broker_session):
    """spark-ts on the session's kafkamock, for the refusal tests of format("kafkamock")."""
    broker = kafka_broker_session
    broker.create_topic("spark-ts", 2)
    with Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 0}) as producer:
        for i in range(10):
            for p in (0, 1):
                producer.send("spark-ts", value=b"%d-%d" % (p, i), partition=p, timestamp=TS + i * 1000 + p * 500)
        producer.flush()
    return "spark-ts"


def test_starting_and_ending_timestamps(source):
    topic = timed(source)
    both = [(p, o) for p in (0, 1) for o in range(3, 10)]
    assert offsets(source.read(subscribe=topic, startingTimestamp=str(TS + 3000))) == both
    # startingTimestamp is preferred to startingOffsetsByTimestamp and startingOffsets, as in Spark.
    assert offsets(source.read(subscribe=topic, startingTimestamp=str(TS + 3000),
                               startingOffsets=json.dumps({topic: {"0": 0, "1": 0}}),
                               startingOffsetsByTimestamp=json.dumps({topic: {"0": TS, "1": TS}}))) == both
    by_partition = source.read(subscribe=topic,
                               startingOffsetsByTimestamp=json.dumps({topic: {"0": TS + 5000, "1": TS}}),
                               endingOffsetsByTimestamp=json.dumps({topic: {"0": TS + 7000, "1": TS + 2000}}))
    assert offsets(by_partition) == [(0, 5), (0, 6), (1, 0), (1, 1)]
    # An end is the first offset at or after the timestamp (exclusive): records strictly before it are read.
    assert offsets(source.read(subscribe=topic, endingTimestamp=str(TS + 1000))) == [(0, 0), (1, 0)]
    # An end later than every record is the latest offset.
    assert len(offsets(source.read(subscribe=topic, endingTimestamp=str(TS + 10**9)))) == 20


def test_a_starting_timestamp_after_every_record_follows_the_strategy(source):
    topic = timed(source)
    # Spark names the first partition of its Admin's answer map (a HashMap: which one depends on the topic's name)
    with pytest.raises(Exception, match=f"No offset matched from request of topic-partition {topic}-[01]"):
        source.read(subscribe=topic, startingTimestamp=str(TS + 10**9)).collect()
    latest = source.read(subscribe=topic, startingTimestamp=str(TS + 9200),
                         startingOffsetsByTimestampStrategy="latest")
    assert offsets(latest) == [(1, 9)]          # partition 0 has nothing that late: it starts at its end


def test_a_stream_starts_at_a_timestamp(source):
    df = source.read(stream=True, subscribe=timed(source), startingTimestamp=str(TS + 8000))
    assert stream_all(df, f"from_timestamp_{source.token}") == [(0, 8), (0, 9), (1, 8), (1, 9)]


def test_max_records_per_partition_and_min_partitions(source):
    topic = source.create_topic(source.name("spark-split"), 2)
    produce(source, topic, [(0, b"a", TS)] * 30 + [(1, b"b", TS)] * 10)
    capped = source.read(subscribe=topic, maxRecordsPerPartition="8")
    # Spark 4.2's batch reads split by minPartitions only (KafkaOffsetRangeCalculator.apply reads no other option;
    # its micro-batches split by maxRecordsPerPartition too); kafkamock's connector splits both, same rows.
    assert capped.rdd.getNumPartitions() == (2 if source.fmt == "kafka" else 4 + 2)
    assert offsets(capped) == [(0, o) for o in range(30)] + [(1, o) for o in range(10)]
    more = source.read(subscribe=topic, maxRecordsPerPartition="8", minPartitions="10")
    assert more.rdd.getNumPartitions() >= 10 and more.count() == 40


def _memory_stream(source, topic, name, **options):
    df = source.read(stream=True, subscribe=topic, startingOffsets="earliest", **options)
    return df.writeStream.format("memory").queryName(name).start()


def _rows(spark, name):
    return spark.sql(f"select count(*) as n from {name}").collect()[0].n


def test_min_offsets_per_trigger_waits_for_enough_new_records(source):
    topic, name, spark = source.create_topic(source.name("spark-min-trigger"), 2), f"min_{source.token}", source.spark
    produce(source, topic, [(i % 2, b"x", TS) for i in range(5)])
    query = _memory_stream(source, topic, name, minOffsetsPerTrigger="20", maxTriggerDelay="1h")
    try:
        query.processAllAvailable()
        assert _rows(spark, name) == 5           # the first batch never waits (as in Spark)
        produce(source, topic, [(i % 2, b"y", TS) for i in range(10)])
        query.processAllAvailable()
        assert _rows(spark, name) == 5           # 10 new records < 20: held back
        produce(source, topic, [(i % 2, b"z", TS) for i in range(10)])
        query.processAllAvailable()
        assert _rows(spark, name) == 25          # 20 new: one batch with all of them
    finally:
        query.stop()


def test_max_trigger_delay_runs_a_short_batch_in_the_end(source):
    topic, name, spark = source.create_topic(source.name("spark-delay"), 1), f"delay_{source.token}", source.spark
    produce(source, topic, [(0, b"x", TS)] * 3)
    query = _memory_stream(source, topic, name, minOffsetsPerTrigger="1000", maxTriggerDelay="1s")
    try:
        query.processAllAvailable()
        assert _rows(spark, name) == 3
        produce(source, topic, [(0, b"y", TS)] * 4)
        deadline = time.monotonic() + 90
        while _rows(spark, name) < 7:          # far below the minimum: only the delay can trigger it
            assert time.monotonic() < deadline and query.exception() is None
            query.awaitTermination(0.2)
        assert _rows(spark, name) == 7
    finally:
        query.stop()


def test_max_offsets_per_trigger_splits_the_backlog(source):
    """A backlog of 25 records with maxOffsetsPerTrigger 10: three micro-batches of 10, 10 and 5."""
    topic, name, spark = source.create_topic(source.name("spark-max-trigger"), 1), f"max_{source.token}", source.spark
    produce(source, topic, [(0, b"x", TS)] * 25)
    query = _memory_stream(source, topic, name, maxOffsetsPerTrigger="10")
    try:
        query.processAllAvailable()
        sizes = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
        assert sizes == [10, 10, 5] and _rows(spark, name) == 25
    finally:
        query.stop()


def _fetch_client_ids(control) -> set[str]:
    return {r["client_id"] for r in control.requests(api_key="Fetch")}


def _new_fetch_client_ids(control, read) -> set[str]:
    """The client ids of the Fetch requests a read sent. A Java consumer an earlier read left in Spark's consumer
    pool may still deliver a prefetch after the log is cleared: its id, already in the log before, is left out."""
    before = _fetch_client_ids(control)
    control.clear_requests()
    read()
    return _fetch_client_ids(control) - before


def test_group_id_prefix_and_group_id_name_the_consumers_as_spark_does(mock_source):
    source, control = mock_source, mock_source.control
    topic = timed(source)
    ids = _new_fetch_client_ids(control, lambda: source.read(subscribe=topic, groupIdPrefix="billing").collect())
    # The Java consumer numbers its client ids per JVM (consumer-<group>-<n>): kafkamock's connector starts at 1.
    assert ids and all(re.fullmatch(r"consumer-billing-[0-9a-f-]{36}-executor-\d+", i) for i in ids), ids
    ids = _new_fetch_client_ids(control, lambda: source.read(subscribe=topic).collect())
    assert ids and all(re.fullmatch(r"consumer-spark-kafka-relation-[0-9a-f-]{36}-executor-\d+", i) for i in ids), ids
    ids = _new_fetch_client_ids(control, lambda: source.read(
        subscribe=topic, groupIdPrefix="ignored", **{"kafka.group.id": "audited"}).collect())
    assert ids and all(re.fullmatch(r"consumer-audited-\d+", i) for i in ids), ids
    ids = _new_fetch_client_ids(control, lambda: source.read(subscribe=topic, **{"kafka.client.id": "mine"}).collect())
    assert ids == {"mine"}


def test_fetch_sizes_take_effect(mock_source):
    source = mock_source
    topic = source.create_topic(source.name("spark-fetch-size"), 1)
    for i in range(20):                                   # 20 batches of about 1.2 kB
        produce(source, topic, [(0, b"%02d" % i + b"v" * 100, TS)] * 10)

    def fetches(**options):
        source.control.clear_requests()
        assert source.read(subscribe=topic, **options).count() == 200
        return len(source.control.requests(api_key="Fetch"))

    small = fetches(**{"kafka.max.partition.fetch.bytes": "1024"})
    assert small >= 20                                    # one batch per fetch: each is above the limit
    assert fetches() < small


def test_producer_settings_take_effect(mock_source):
    source = mock_source
    topic = source.create_topic(source.name("spark-batches"), 1)
    df = source.spark.createDataFrame([(f"value-{i:03d}" + "x" * 90,) for i in range(100)],
                                      "value string").coalesce(1)
    source.write(df, topic=topic, **{"kafka.linger.ms": "1000"})   # one batch, whatever the machine's speed
    whole = len(source.control.stored_batches(topic, 0, limit=1 << 20))
    source.write(df, topic=topic, **{"kafka.batch.size": "1000", "kafka.compression.type": "gzip",
                                     "kafka.linger.ms": "1000"})
    stored = source.control.stored_batches(topic, 0, limit=1 << 20)
    assert whole <= 2 and len(stored) - whole >= 10       # batches of at most 1000 bytes: about 10 records each
    assert {b["compression"] for b in stored[whole:]} == {"gzip"}


def test_request_timeout_bounds_a_write(mock_source):
    source = mock_source
    topic = source.create_topic(source.name("spark-slow"), 1)
    source.control.push_fault("Produce", latency_ms=30_000, count=50)
    df = source.spark.createDataFrame([("v",)], "value string")
    started = time.monotonic()
    try:
        with pytest.raises(Exception, match="(?i)timed? ?out|REQUEST_TIMED_OUT|delivery"):
            source.write(df, topic=topic, **{"kafka.request.timeout.ms": "1000", "kafka.delivery.timeout.ms": "3000"})
    finally:
        source.control.clear_faults()
    assert time.monotonic() - started < 25                # not the 30 s the broker would have taken


def test_read_committed_drops_aborted_transactions_and_stops_at_the_lso(source, tmp_path):
    spark, topic = source.spark, source.create_topic(source.name("spark-txn"), 1)
    config = {"bootstrap.servers": source.bootstrap_servers, "transactional.id": source.name("spark-txn-writer")}
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
        values = sorted(r.value for r in source.read(subscribe=topic, **committed).collect())
        assert values == sorted([b"commit-%d" % i for i in range(4)] + [b"commit-%d" % i for i in range(3)])
        everything = [r.value for r in source.read(subscribe=topic).collect()]
        assert len(everything) == 4 + 5 + 3 + 2 and b"open-0" in everything
        checkpoint = str(tmp_path / "txn")
        stream = source.read(stream=True, subscribe=topic, startingOffsets="earliest", **committed)
        first = (stream.select("value").writeStream.format("parquet").option("path", str(tmp_path / "out"))
                 .option("checkpointLocation", checkpoint).trigger(availableNow=True).start())
        assert first.awaitTermination(120) and first.exception() is None
        assert spark.read.parquet(str(tmp_path / "out")).count() == 7
        producer.commit_transaction()
    again = (source.read(stream=True, subscribe=topic, **committed).select("value").writeStream
             .format("parquet").option("path", str(tmp_path / "out")).option("checkpointLocation", checkpoint)
             .trigger(availableNow=True).start())
    assert again.awaitTermination(120) and again.exception() is None
    got = sorted(r.value for r in spark.read.parquet(str(tmp_path / "out")).collect())
    assert got == sorted([b"commit-%d" % i for i in range(4)] + [b"commit-%d" % i for i in range(3)]
                         + [b"open-0", b"open-1"])


def test_a_restarted_stream_reads_partitions_added_meanwhile(source, tmp_path):
    spark, topic = source.spark, source.create_topic(source.name("spark-grow"), 2)
    produce(source, topic, [(i % 2, b"a%d" % i, TS) for i in range(10)])
    out, checkpoint = str(tmp_path / "out"), str(tmp_path / "checkpoint")

    def run():
        query = (source.read(stream=True, subscribe=topic, startingOffsets="earliest")
                 .selectExpr("partition", "offset", "value").writeStream.format("parquet").option("path", out)
                 .option("checkpointLocation", checkpoint).trigger(availableNow=True).start())
        assert query.awaitTermination(120) and query.exception() is None

    run()
    with Admin({"bootstrap.servers": source.bootstrap_servers}) as admin:
        admin.create_partitions({topic: 4}).all()
    produce(source, topic, [(p, b"b%d" % p, TS) for p in range(4)] * 2)
    run()
    rows = sorted((r.partition, r.offset) for r in spark.read.parquet(out).collect())
    assert rows == sorted([(p, o) for p in (0, 1) for o in range(7)] + [(p, o) for p in (2, 3) for o in range(2)])


@pytest.mark.parametrize("fail_on_data_loss", [True, False])
def test_a_deleted_topic_under_subscribe_pattern_is_data_loss(source, fail_on_data_loss):
    stem = source.name("spark-gone-strict" if fail_on_data_loss else "spark-gone-lenient")
    kept, doomed = f"{stem}-kept", f"{stem}-doomed"
    for topic in (kept, doomed):
        source.create_topic(topic, 1)
        produce(source, topic, [(0, b"x", TS)] * 3)
    df = source.read(stream=True, subscribePattern=f"{stem}-.*", startingOffsets="earliest",
                     failOnDataLoss=str(fail_on_data_loss).lower())
    name = stem.replace("-", "_")
    query = df.writeStream.format("memory").queryName(name).start()
    try:
        query.processAllAvailable()
        assert _rows(source.spark, name) == 6
        with Admin({"bootstrap.servers": source.bootstrap_servers}) as admin:
            admin.delete_topics([doomed]).all()
        produce(source, kept, [(0, b"y", TS)] * 2)
        if fail_on_data_loss:
            with pytest.raises(Exception, match=f"{doomed}-0"):
                query.processAllAvailable()
        else:
            query.processAllAvailable()
            assert _rows(source.spark, name) == 8 and query.exception() is None
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


def _wait_rows(spark, name, query, n, timeout=90):
    """Until the memory table ``name`` has ``n`` rows (a stream's next triggers are Spark's to schedule)."""
    deadline = time.monotonic() + timeout
    while _rows(spark, name) < n:
        assert time.monotonic() < deadline, f"{name}: {_rows(spark, name)} of {n} rows"
        assert query.exception() is None, query.exception()
        query.awaitTermination(0.2)
    return _rows(spark, name)


def test_subscribe_pattern_picks_up_a_topic_created_later(source):
    stem = source.name("spark-appearing")
    first = source.create_topic(f"{stem}-a", 1)
    produce(source, first, [(0, b"a", TS)] * 3)
    name = stem.replace("-", "_")
    query = (source.read(stream=True, subscribePattern=f"{stem}-.*", startingOffsets="earliest")
             .writeStream.format("memory").queryName(name).start())
    try:
        assert _wait_rows(source.spark, name, query, 3) == 3
        later = source.create_topic(f"{stem}-b", 2)
        produce(source, later, [(p, b"b", TS) for p in (0, 1)] * 2)
        assert _wait_rows(source.spark, name, query, 7) == 7     # the new topic, read from its earliest offset
        topics = {r.topic for r in source.spark.sql(f"select topic from {name}").collect()}
        assert topics == {first, later}
    finally:
        query.stop()


def test_a_stream_starts_at_latest_by_default(source):
    topic = source.create_topic(source.name("spark-latest"), 2)
    produce(source, topic, [(p, b"old", TS) for p in (0, 1)])
    name = f"latest_{source.token}"
    query = source.read(stream=True, subscribe=topic).writeStream.format("memory").queryName(name).start()
    try:
        query.processAllAvailable()
        assert _rows(source.spark, name) == 0
        produce(source, topic, [(p, b"new", TS) for p in (0, 1)] * 2)
        assert _wait_rows(source.spark, name, query, 4) == 4
        assert {r.value for r in source.spark.sql(f"select value from {name}").collect()} == {b"new"}
    finally:
        query.stop()


def test_a_processing_time_trigger_reads_what_arrives(source):
    topic = source.create_topic(source.name("spark-processing-time"), 1)
    name = f"ticks_{source.token}"
    query = (source.read(stream=True, subscribe=topic, startingOffsets="earliest").writeStream.format("memory")
             .queryName(name).trigger(processingTime="300 milliseconds").start())
    try:
        for i in range(3):
            produce(source, topic, [(0, b"%d" % i, TS)])
            assert _wait_rows(source.spark, name, query, i + 1) == i + 1
        # each record came in a trigger of its own (it was produced after the previous one was read)
        assert sum(1 for p in query.recentProgress if p["numInputRows"]) == 3
    finally:
        query.stop()


def test_the_sink_writes_to_the_topic_column_unless_the_option_names_one(source):
    a, b = source.create_topic(source.name("spark-to-a"), 1), source.create_topic(source.name("spark-to-b"), 1)
    rows = source.spark.createDataFrame([(a, "1"), (b, "2"), (b, "3")], "topic string, value string")
    source.write(rows)
    assert sorted(r.value for r in source.read(subscribe=a).collect()) == [b"1"]
    assert sorted(r.value for r in source.read(subscribe=b).collect()) == [b"2", b"3"]
    source.write(rows, topic=a)                                  # the option wins over the column
    assert sorted(r.value for r in source.read(subscribe=a).collect()) == [b"1", b"1", b"2", b"3"]
