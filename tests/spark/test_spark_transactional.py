"""The transactional sink (``kafka.transactional.id``): a micro-batch that Spark runs again is written once.

Spark records a micro-batch as done in the checkpoint's commit log after the sink's tasks finished. A driver that
dies between the two runs the batch again on restart; the test removes that record, as such a crash would."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkamock.client.blocking import Admin, Producer

pytestmark = pytest.mark.slow


def _read(spark, broker, topic, committed: bool):
    r = spark.read.format("kafkamock").option("kafka.bootstrap.servers", broker.bootstrap_servers).option(
        "subscribe", topic)
    if committed:
        r = r.option("kafka.isolation.level", "read_committed")
    return sorted(row.value for row in r.load().collect())


def _replay(spark, broker, source: str, sink: str, checkpoint: Path, **sink_options) -> None:
    """Run the stream to the end, forget that its last micro-batch was committed, and run it again."""

    def run():
        writer = (spark.readStream.format("kafkamock").option("kafka.bootstrap.servers", broker.bootstrap_servers)
                  .option("subscribe", source).option("startingOffsets", "earliest").option("maxOffsetsPerTrigger", 6)
                  .load().select("value").writeStream.format("kafkamock")
                  .option("kafka.bootstrap.servers", broker.bootstrap_servers).option("topic", sink)
                  .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True))
        for k, v in sink_options.items():
            writer = writer.option(k, v)
        query = writer.start()
        assert query.awaitTermination(120) and query.exception() is None
        return [p["batchId"] for p in query.recentProgress if p["numInputRows"]]

    batches = run()
    assert len(batches) >= 2
    commits = checkpoint / "commits"
    last = max(int(f.name) for f in commits.iterdir() if f.name.isdigit())
    (commits / str(last)).unlink()
    (commits / f".{last}.crc").unlink(missing_ok=True)
    assert run() == [last]                                    # Spark ran the last micro-batch again


@pytest.fixture
def topics(kafka_broker_session, request):
    broker = kafka_broker_session
    source, sink = f"eos-in-{request.node.name[-12:]}", f"eos-out-{request.node.name[-12:]}"
    broker.create_topic(source, 2)
    broker.create_topic(sink, 2)
    with Producer({"bootstrap.servers": broker.bootstrap_servers}) as producer:
        for i in range(20):
            producer.send(source, value=b"row-%02d" % i, partition=i % 2)
        producer.flush()
    return source, sink


def test_a_replayed_micro_batch_is_written_once_with_a_transactional_id(spark, kafka_broker_session, topics,
                                                                        tmp_path):
    broker, (source, sink) = kafka_broker_session, topics
    _replay(spark, broker, source, sink, tmp_path / "checkpoint", **{"kafka.transactional.id": "eos-app"})
    expected = [b"row-%02d" % i for i in range(20)]
    assert _read(spark, broker, sink, committed=True) == expected
    assert _read(spark, broker, sink, committed=False) == expected      # the replayed tasks wrote nothing at all
    with Admin({"bootstrap.servers": broker.bootstrap_servers}) as admin:
        markers = admin.list_consumer_group_offsets("eos-app-0")
    assert markers and all('"batch"' in m.metadata for m in markers.values())


def test_without_a_transactional_id_the_replay_writes_again(spark, kafka_broker_session, topics, tmp_path):
    """The same replay with the plain sink duplicates the batch (at-least-once, as Spark's Kafka sink)."""
    broker, (source, sink) = kafka_broker_session, topics
    _replay(spark, broker, source, sink, tmp_path / "checkpoint")
    written = _read(spark, broker, sink, committed=True)
    assert len(written) > 20 and set(written) == {b"row-%02d" % i for i in range(20)}


def test_a_transactional_batch_write_commits_per_task(spark, kafka_broker_session, topics):
    broker, (_, sink) = kafka_broker_session, topics
    df = spark.createDataFrame([(f"v{i}",) for i in range(30)], "value string").repartition(3)
    (df.write.mode("append").format("kafkamock").option("kafka.bootstrap.servers", broker.bootstrap_servers)
     .option("topic", sink).option("kafka.transactional.id", "eos-batch").save())
    assert _read(spark, broker, sink, committed=True) == sorted(b"v%d" % i for i in range(30))
    stored = [b for p in (0, 1) for b in broker.control.stored_batches(sink, p, limit=1 << 20)]
    data, markers = [b for b in stored if not b["control"]], [b for b in stored if b["control"]]
    assert data and all(b["transactional"] for b in data)
    assert len({b["producer_id"] for b in data}) == 3 and markers     # one transaction per task, each committed
