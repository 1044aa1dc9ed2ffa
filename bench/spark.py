"""PySpark connector speed: rows/s for a batch read and a streaming write of 1,000,000 x 100 B records, and how
much of that time is the connector's own work.

Method: a ``kafkamock serve`` process holds a 2-partition topic of N records of 100 B (written with kafkamock's
idempotent producer, uncompressed). Spark runs ``local[2]`` with Arrow batches from the Python workers.
- batch read: ``spark.read.format("kafkamock")...load()`` written to Spark's ``noop`` sink (every row is
  materialised, nothing is stored).
- streaming write: ``readStream`` of the same topic with Trigger.AvailableNow, written to a second topic.
The connector's share is measured by running its worker code alone, in this process, on the same offset ranges:
``read_arrow`` (fetch + decode + Arrow) for the read and ``write_arrow`` (Arrow -> batches -> produce, acks=all)
for the write. Spark's share is the rest of the Spark run (JVM planning, Arrow transfer to the JVM, scheduling).

    .venv/bin/python bench/spark.py                 # 1,000,000 records
    .venv/bin/python bench/spark.py --records 200000
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))
from broker import KafkamockBroker  # noqa: E402

from kafkamock.client import KafkaClient, OutgoingRecord, Producer  # noqa: E402
from kafkamock.spark.options import client_settings  # noqa: E402
from kafkamock.spark.planning import OffsetRange  # noqa: E402
from kafkamock.spark.tasks import read_arrow, write_arrow  # noqa: E402

PARTITIONS = 2


async def fill(bootstrap: str, topic: str, n: int) -> None:
    async with KafkaClient(bootstrap) as client, Producer({"bootstrap.servers": bootstrap}) as producer:
        created = await (await client.any_broker()).request("CreateTopics", {"topics": [
            {"name": topic, "num_partitions": PARTITIONS, "replication_factor": 1}], "timeout_ms": 10_000})
        assert created.topics[0].error_code == 0, created
        chunk = 100_000
        for first in range(0, n, chunk):
            await producer.send_all(OutgoingRecord(topic, None, b"%010d" % i + b"x" * 90, partition=i % PARTITIONS)
                                    for i in range(first, min(n, first + chunk)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    n = args.records
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    from kafkamock.spark import register

    broker = KafkamockBroker()
    try:
        bootstrap = broker.bootstrap
        trio.run(fill, bootstrap, "bench-in", n)
        spark = (SparkSession.builder.master(f"local[{PARTITIONS}]").appName("kafkamock-bench")
                 .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2").getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        register(spark)
        source = spark.read.format("kafkamock").option("kafka.bootstrap.servers", bootstrap).option(
            "subscribe", "bench-in")
        source.load().limit(10).collect()                                     # warm up workers and codecs
        started = time.perf_counter()
        source.load().write.format("noop").mode("overwrite").save()
        read_s = time.perf_counter() - started

        with tempfile.TemporaryDirectory() as checkpoint:
            started = time.perf_counter()
            query = (spark.readStream.format("kafkamock").option("kafka.bootstrap.servers", bootstrap)
                     .option("subscribe", "bench-in").option("startingOffsets", "earliest").load()
                     .select("key", "value")
                     .writeStream.format("kafkamock").option("kafka.bootstrap.servers", bootstrap)
                     .option("topic", "bench-out").option("checkpointLocation", checkpoint)
                     .trigger(availableNow=True).start())
            query.awaitTermination()
            write_s = time.perf_counter() - started
            written = sum(p["numInputRows"] for p in query.recentProgress)
        spark.stop()
        if written != n:
            raise SystemExit(f"the streaming write saw {written} rows, not {n}")

        # The connector alone: the worker code on the same ranges, one after the other in this process.
        settings = client_settings({"kafka.bootstrap.servers": bootstrap})
        per_partition = n // PARTITIONS
        started = time.perf_counter()
        batches = []
        for p in range(PARTITIONS):
            batches += list(read_arrow(settings, OffsetRange("bench-in", p, 0, per_partition), False, True))
        connector_read_s = time.perf_counter() - started
        started = time.perf_counter()
        for p in range(PARTITIONS):
            half = batches[p * len(batches) // PARTITIONS:(p + 1) * len(batches) // PARTITIONS]
            write_arrow(settings, (b.select(["key", "value"]) for b in half), "bench-connector-out")
        connector_write_s = time.perf_counter() - started
    finally:
        broker.stop()

    def row(name: str, spark_s: float, connector_s: float) -> str:
        # Spark ran PARTITIONS tasks at once; the connector-alone run did them one after the other.
        share = connector_s / (spark_s * PARTITIONS)
        return (f"| {name} | {n / spark_s:,.0f} | {spark_s:.2f} | {n / connector_s:,.0f} | {share:.0%} | "
                f"{1 - share:.0%} |")

    print(f"{n:,} x 100 B records, {PARTITIONS} partitions, Spark local[{PARTITIONS}], Arrow batches\n")
    print("| workload | Spark rows/s | Spark s | connector alone rows/s (1 core) | connector share | Spark share |")
    # share: the connector's time alone over the task time Spark had (wall time x tasks running at once)
    print("|---|---:|---:|---:|---:|---:|")
    print(row("batch read (noop sink)", read_s, connector_read_s))
    # The streaming query reads and writes: the connector's part is both.
    print(row("streaming read + write (AvailableNow)", write_s, connector_read_s + connector_write_s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
