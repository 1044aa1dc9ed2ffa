"""An orders pipeline on Spark Structured Streaming, through Spark's own Kafka connector, against kafkamock.

Orders (JSON) are produced to the topic ``orders``; a streaming query reads them, totals them per minute of
order time, and writes the totals to ``order-totals``; a batch read of that topic shows the result.

    python examples/orders_pipeline.py                               # starts its own broker
    python examples/orders_pipeline.py --bootstrap-servers 127.0.0.1:9092
    python examples/orders_pipeline.py --connector kafkamock         # kafkamock's Python connector, no JVM jar

Spark's connector (``spark-sql-kafka-0-10``) comes from ``KAFKAMOCK_SPARK_JARS`` (``make spark`` resolves it) or
Spark's own package resolution (``kafkamock.spark.session``); the same pipeline runs on ``format("kafkamock")``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import socket
import sys
import tempfile
import time

import trio

from kafkamock.client import KafkaClient, OutgoingRecord, Producer

START_MS = 1_767_225_600_000          # 2026-01-01 00:00 UTC: five minutes of orders from here
CUSTOMERS = ["ada", "grace", "linus", "margaret", "ken"]


def orders(n: int, seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    return [{"order_id": i, "customer": rng.choice(CUSTOMERS), "amount": round(rng.uniform(5, 250), 2),
             "ts": START_MS + i * 300_000 // n} for i in range(n)]


async def produce_orders(bootstrap: str, batch: list[dict]) -> None:
    async with KafkaClient(bootstrap, client_id="orders-producer") as client, \
            Producer({"bootstrap.servers": bootstrap, "client.id": "orders-producer"}) as producer:
        # The orders carry fixed 2026-01-01 timestamps, so the topics keep records forever (retention.ms=-1):
        # with the default 7 days, the broker's first retention check would delete them, as Kafka's would.
        conn = await client.any_broker()
        created = await conn.request("CreateTopics", {"timeout_ms": 10_000, "topics": [
            {"name": name, "num_partitions": 1, "replication_factor": 1,
             "configs": [{"name": "retention.ms", "value": "-1"}]} for name in ("orders", "order-totals")]})
        for topic in created.topics:
            if topic.error_code not in (0, 36):   # 36: TOPIC_ALREADY_EXISTS, from an earlier run
                raise SystemExit(f"cannot create {topic.name}: error {topic.error_code} {topic.error_message}")
        await producer.send_all(OutgoingRecord("orders", o["customer"].encode(), json.dumps(o).encode(),
                                               timestamp=o["ts"]) for o in batch)


def run_pipeline(spark, bootstrap: str, checkpoint: str, connector: str = "kafka") -> None:
    from pyspark.sql import functions as F

    order_schema = "order_id long, customer string, amount double, ts long"
    orders_stream = (spark.readStream.format(connector)
                     .option("kafka.bootstrap.servers", bootstrap)
                     .option("subscribe", "orders")
                     .option("startingOffsets", "earliest")
                     .option("maxOffsetsPerTrigger", "250")
                     .load())
    per_minute = (orders_stream
                  .select(F.from_json(F.col("value").cast("string"), order_schema).alias("o"), "timestamp")
                  .groupBy(F.window("timestamp", "1 minute").alias("minute"))
                  .agg(F.count("*").alias("orders"), F.round(F.sum("o.amount"), 2).alias("revenue")))
    query = (per_minute
             .select(F.date_format("minute.start", "yyyy-MM-dd HH:mm").alias("key"),
                     F.to_json(F.struct("orders", "revenue")).alias("value"))
             .writeStream.format(connector)
             .outputMode("complete")
             .option("kafka.bootstrap.servers", bootstrap)
             .option("topic", "order-totals")
             .option("checkpointLocation", checkpoint)
             .trigger(availableNow=True)
             .start())
    query.awaitTermination()
    batches = [p["numInputRows"] for p in query.recentProgress]
    print(f"streaming query done: {sum(batches)} orders in {len(batches)} micro-batches {batches}")


def show_totals(spark, bootstrap: str, connector: str = "kafka") -> list[tuple[str, int, float]]:
    from pyspark.sql import functions as F

    totals = (spark.read.format(connector)
              .option("kafka.bootstrap.servers", bootstrap)
              .option("subscribe", "order-totals")
              .load()
              .select(F.col("key").cast("string").alias("minute"), "offset",
                      F.from_json(F.col("value").cast("string"), "orders long, revenue double").alias("t")))
    # Complete mode rewrites every minute's total on each micro-batch: the newest record per minute is the answer.
    latest = (totals.groupBy("minute").agg(F.max_by("t", "offset").alias("t"))
              .select("minute", "t.orders", "t.revenue").orderBy("minute"))
    latest.show(truncate=False)
    return [(r.minute, r.orders, r.revenue) for r in latest.collect()]


def wait_for(bootstrap: str, seconds: float) -> None:
    """Poll until the broker accepts a connection (``make run`` starts it just before this script)."""
    host, _, port = bootstrap.split(",")[0].rpartition(":")
    deadline = time.monotonic() + seconds
    while True:
        try:
            socket.create_connection((host, int(port)), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise SystemExit(f"no broker at {bootstrap} after {seconds:.0f} s") from None
            time.sleep(0.2)  # polling a port that is not open yet: there is no event to wait on


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap-servers", help="a running broker (default: start one for this run)")
    parser.add_argument("--orders", type=int, default=1000)
    parser.add_argument("--wait", type=float, default=0, metavar="S",
                        help="wait up to S seconds for --bootstrap-servers to accept connections")
    parser.add_argument("--connector", choices=["kafka", "kafkamock"], default="kafka",
                        help="Spark's own Kafka connector (default) or kafkamock's Python one")
    args = parser.parse_args(argv)
    from kafkamock.testing import spark_session, start_broker

    with contextlib.ExitStack() as stack:
        bootstrap = args.bootstrap_servers
        if bootstrap is None:
            broker = stack.enter_context(start_broker())
            bootstrap = broker.bootstrap_servers
            print(f"started a kafkamock broker at {bootstrap}")
        if args.wait:
            wait_for(bootstrap, args.wait)
        batch = orders(args.orders)
        trio.run(produce_orders, bootstrap, batch)
        print(f"produced {len(batch)} orders to 'orders' at {bootstrap}")
        spark = spark_session(app_name="orders-pipeline")
        stack.callback(spark.stop)
        run_pipeline(spark, bootstrap, stack.enter_context(tempfile.TemporaryDirectory()), args.connector)
        rows = show_totals(spark, bootstrap, args.connector)
        counted = sum(n for _, n, _ in rows)
        print(f"{len(rows)} minutes, {counted} orders, revenue {round(sum(r for *_, r in rows), 2)}")
        return 0 if counted >= len(batch) else 1


if __name__ == "__main__":
    sys.exit(main())
