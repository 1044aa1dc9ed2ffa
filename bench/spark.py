"""PySpark speed: rows/s of a batch read and a streaming read + write of N x 100 B records through Spark's own
Kafka connector (``format("kafka")``) from kafkamock and from Apache Kafka 4.3.1, and through kafkamock's
(``format("kafkamock")``) from kafkamock, each next to the same Spark plan without Kafka, measured in the same run.

Method: a ``kafkamock serve`` process and a one-node Kafka 4.3.1 (``make kafka``) each hold a 2-partition topic of
N records of 100 B (written with kafkamock's idempotent producer, Java's default batch.size of 16 kB,
uncompressed). Spark runs ``local[2]`` with Spark's connector on its classpath (``make spark``). The headline ratio
is Spark's connector on kafkamock over Spark's connector on Kafka 4.3.1: kafkamock must never be what slows a
Spark test down. Workloads (each Kafka one for every connector-and-broker pair):
- no-Kafka ceiling: a trivial Python Data Source (``CeilingSource`` below) yielding the connector's schema and the
  same number of rows as pre-built Arrow batches of 10,000 rows with 100 B values, written to Spark's ``noop``
  sink. It is what Spark's Python Data Source path costs with nothing to read: no connector can be faster.
- batch read: ``spark.read.format(...)`` of the topic to the ``noop`` sink (every row is materialised, nothing
  is stored).
- no-Kafka streaming ceiling: ``CeilingSource`` as a stream (Trigger.AvailableNow) into its own Python Arrow
  writer that drops the rows: the streaming plan with no Kafka on either side.
- streaming read + write: ``readStream`` of the topic (Trigger.AvailableNow), ``key`` and ``value`` written to a
  fresh 2-partition topic of the same broker by the same connector's sink (idempotent producer, acks=all).

Rows are counted in every run: by an Observation on the batch reads (the rows the ``noop`` sink saw), and on the
streaming runs by the sum of numInputRows and the sum of the output topic's end offsets (streaming read + write);
a run that saw another number of rows fails the bench. Warm-up rounds (``--warmup``: JVM JIT, Python workers,
codecs) run every workload untimed; then ``--rounds`` rounds run them all in turn. Spark keeps getting faster for
many rounds (its JIT), so a workload that always ran right after another would be favoured: the ceilings run first
in every round, and the Kafka workloads run in the pairs' order in even rounds and in the reverse order in odd ones,
so each broker goes first as often as the other (use an even ``--rounds``). The table gives each workload's median
rows/s and the median of its per-round ratios to the no-Kafka ceiling, to its own plan without Kafka and to Spark's
connector on Kafka 4.3.1. "Kafka's share" is the part of the wall time the plan without Kafka does not spend: the
connector's work, the broker's (a Python process on the same cores) and the sockets. Timings vary from run to run;
only ratios measured in the same run are compared, nothing is asserted on time.

    .venv/bin/python bench/spark.py                          # 1,000,000 records, 2 warm-ups, 6 rounds
    .venv/bin/python bench/spark.py --records 200000 --rounds 1 --no-kafka     # kafkamock only
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from broker import KafkamockBroker  # noqa: E402
from pyspark.sql.datasource import (  # noqa: E402
    DataSource,
    DataSourceReader,
    DataSourceStreamArrowWriter,
    DataSourceStreamReader,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.streaming.datasource import ReadLimit, SupportsTriggerAvailableNow  # noqa: E402

from kafkamock.client import LATEST, KafkaClient, OutgoingRecord, Producer, list_offsets  # noqa: E402

PARTITIONS = 2
VALUE_BYTES = 100
CEILING_BATCH_ROWS = 10_000
CEILING = "kafkamock-bench-ceiling"


# -- the no-Kafka ceiling: defined here, so Spark pickles it by value to its workers ----------------------------

class _Slice(InputPartition):
    def __init__(self, index: int, rows: int):
        super().__init__(index)
        self.index, self.rows = index, rows


def _ceiling_batches(index: int, rows: int):
    """``rows`` rows in the connector's schema, as one pre-built Arrow batch of 100 B values yielded again and
    again."""
    import numpy as np
    import pyarrow as pa

    from kafkamock.spark.rows import arrow_schema

    n = min(rows, CEILING_BATCH_ROWS)
    values = pa.array([b"%010d" % i + b"x" * (VALUE_BYTES - 10) for i in range(n)], pa.binary())
    topic = pa.array(["bench-in"] * n, pa.string())
    batch = pa.RecordBatch.from_arrays([
        pa.nulls(n, pa.binary()), values, topic, pa.array(np.full(n, index, np.int32)),
        pa.array(np.arange(n, dtype=np.int64)),
        pa.array(np.full(n, 1_700_000_000_000_000, np.int64)).cast(pa.timestamp("us", tz="UTC")),
        pa.array(np.zeros(n, np.int32))], schema=arrow_schema(False))
    done = 0
    while done < rows:
        k = min(n, rows - done)
        yield batch if k == n else batch.slice(0, k)
        done += k


def _slices(rows: int) -> list[_Slice]:
    return [_Slice(i, rows // PARTITIONS + (1 if i < rows % PARTITIONS else 0)) for i in range(PARTITIONS)]


class _CeilingReader(DataSourceReader):
    def __init__(self, rows: int):
        self.rows = rows

    def partitions(self):
        return _slices(self.rows)

    def read(self, partition):
        yield from _ceiling_batches(partition.index, partition.rows)


class _CeilingStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, rows: int):
        self.rows = rows

    def initialOffset(self) -> dict:
        return {"rows": 0}

    def prepareForTriggerAvailableNow(self) -> None:
        pass

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        return {"rows": self.rows}

    def partitions(self, start: dict, end: dict):
        return _slices(end["rows"] - start["rows"])

    def read(self, partition):
        yield from _ceiling_batches(partition.index, partition.rows)

    def commit(self, end: dict) -> None:
        pass


class _Dropped(WriterCommitMessage):
    def __init__(self, rows: int):
        self.rows = rows


class _DropWriter(DataSourceStreamArrowWriter):
    def write(self, iterator):
        return _Dropped(sum(batch.num_rows for batch in iterator))

    def commit(self, messages, batchId: int) -> None:
        pass

    def abort(self, messages, batchId: int) -> None:
        pass


class CeilingSource(DataSource):
    """The connector's schema with nothing behind it: pre-built Arrow batches (option ``rows``)."""

    @classmethod
    def name(cls) -> str:
        return CEILING

    def schema(self) -> str:
        from kafkamock.spark.rows import READ_SCHEMA

        return READ_SCHEMA

    def reader(self, schema):
        return _CeilingReader(int(self.options["rows"]))

    def streamReader(self, schema):
        return _CeilingStreamReader(int(self.options["rows"]))

    def streamWriter(self, schema, overwrite: bool):
        return _DropWriter()


# -- Kafka side ---------------------------------------------------------------------------------------------------

async def create_topic(bootstrap: str, topic: str) -> None:
    async with KafkaClient(bootstrap) as client:
        created = await (await client.any_broker()).request("CreateTopics", {"topics": [
            {"name": topic, "num_partitions": PARTITIONS, "replication_factor": 1}], "timeout_ms": 10_000})
        assert created.topics[0].error_code == 0, created


async def fill(bootstrap: str, topic: str, n: int) -> None:
    await create_topic(bootstrap, topic)
    async with Producer({"bootstrap.servers": bootstrap}) as producer:
        chunk = 100_000
        for first in range(0, n, chunk):
            await producer.send_all(
                OutgoingRecord(topic, None, b"%010d" % i + b"x" * (VALUE_BYTES - 10), partition=i % PARTITIONS)
                for i in range(first, min(n, first + chunk)))


async def end_offsets(bootstrap: str, topic: str) -> int:
    async with KafkaClient(bootstrap) as client:
        found = await list_offsets(client, {(topic, p): LATEST for p in range(PARTITIONS)})
        return sum(found.values())


# -- the workloads ------------------------------------------------------------------------------------------------

def observed_noop(df, name: str) -> tuple[float, int]:
    """Seconds to write ``df`` to the noop sink, and how many rows the sink saw."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    seen = Observation(name)
    started = time.perf_counter()
    df.observe(seen, F.count(F.lit(1)).alias("rows")).write.format("noop").mode("overwrite").save()
    return time.perf_counter() - started, seen.get["rows"]


def streamed(df, sink_format: str, options: dict[str, str]) -> tuple[float, int]:
    """Seconds to run ``df`` into the sink with Trigger.AvailableNow, and the sum of numInputRows."""
    with tempfile.TemporaryDirectory() as checkpoint:
        started = time.perf_counter()
        writer = df.writeStream.format(sink_format).option("checkpointLocation", checkpoint)
        for k, v in options.items():
            writer = writer.option(k, v)
        query = writer.trigger(availableNow=True).start()
        query.awaitTermination()
        seconds = time.perf_counter() - started
        return seconds, sum(p["numInputRows"] for p in query.recentProgress)


PAIRS = (("kafka", "kafkamock"), ("kafka", "kafka"), ("kafkamock", "kafkamock"))   # (connector, broker)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=6, help="timed rounds (even: each broker first as often)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed rounds first")
    parser.add_argument("--no-kafka", action="store_true", help="leave Apache Kafka 4.3.1 out")
    args = parser.parse_args(argv)
    n = args.records
    from support.spark_sources import connector_jars

    from kafkamock.spark.session import spark_session

    pairs = [p for p in PAIRS if not (args.no_kafka and p[1] == "kafka")]
    brokers: dict[str, str] = {}
    stops = []
    results: dict[str, list[float]] = {}
    try:
        broker = KafkamockBroker()
        stops.append(broker.stop)
        brokers["kafkamock"] = broker.bootstrap
        if not args.no_kafka:
            from support.kafka_cluster import KafkaCluster

            kafka = KafkaCluster(config={"log.retention.ms": "-1"}).start()
            stops.append(kafka.stop)
            brokers["kafka"] = kafka.bootstrap_servers
        for bootstrap in brokers.values():
            trio.run(fill, bootstrap, "bench-in", n)
        spark = spark_session(master=f"local[{PARTITIONS}]", app_name="kafkamock-bench", jars=connector_jars(),
                              conf={"spark.sql.shuffle.partitions": str(PARTITIONS)})
        spark.dataSource.register(CeilingSource)

        def check(what: str, seen: int) -> None:
            if seen != n:
                raise SystemExit(f"{what} saw {seen} rows, not {n}")

        def ceiling() -> float:
            seconds, seen = observed_noop(spark.read.format(CEILING).option("rows", str(n)).load(), "ceiling")
            check("the no-Kafka ceiling", seen)
            return seconds

        def batch_read(fmt: str, where: str) -> float:
            df = spark.read.format(fmt).option("kafka.bootstrap.servers", brokers[where]).option(
                "subscribe", "bench-in").load()
            seconds, seen = observed_noop(df, f"read-{fmt}-{where}")
            check(f"the batch read ({fmt} on {where})", seen)
            return seconds

        def stream_ceiling() -> float:
            seconds, seen = streamed(spark.readStream.format(CEILING).option("rows", str(n)).load(), CEILING, {})
            check("the no-Kafka streaming ceiling", seen)
            return seconds

        outputs = iter(range(10**6))

        def stream_read_write(fmt: str, where: str) -> float:
            bootstrap, topic = brokers[where], f"bench-out-{next(outputs)}"
            trio.run(create_topic, bootstrap, topic)
            df = (spark.readStream.format(fmt).option("kafka.bootstrap.servers", bootstrap)
                  .option("subscribe", "bench-in").option("startingOffsets", "earliest").load().select("key", "value"))
            seconds, seen = streamed(df, fmt, {"kafka.bootstrap.servers": bootstrap, "topic": topic})
            check(f"the streaming read ({fmt} on {where}, numInputRows)", seen)
            check(f"the streaming write ({fmt} on {where}, {topic}'s end offsets)",
                  trio.run(end_offsets, bootstrap, topic))
            return seconds

        ceilings = [("ceiling", ceiling), ("stream ceiling", stream_ceiling)]
        by_pair = [[(f"read {fmt}@{where}", lambda f=fmt, w=where: batch_read(f, w)),
                    (f"stream {fmt}@{where}", lambda f=fmt, w=where: stream_read_write(f, w))] for fmt, where in pairs]
        for round_ in range(-args.warmup + 1, args.rounds + 1):      # rounds up to 0 warm up and are not counted
            in_turn = by_pair[::-1] if round_ % 2 else by_pair       # odd rounds: the pairs in reverse order
            for name, run in [*ceilings, *(workload for pair in in_turn for workload in pair)]:
                seconds = run()
                if round_ > 0:
                    results.setdefault(name, []).append(seconds)
                    print(f"round {round_}: {name}: {n / seconds:,.0f} rows/s", file=sys.stderr)
        spark.stop()
    finally:
        for stop in reversed(stops):
            stop()

    def rate(name: str) -> float:
        return statistics.median(n / s for s in results[name])

    def ratio(name: str, peer: str) -> float:
        return statistics.median(p / s for s, p in zip(results[name], results[peer], strict=True))

    print(f"{n:,} records x {VALUE_BYTES} B, {PARTITIONS} partitions, Spark local[{PARTITIONS}], {os.cpu_count()} "
          f"cores, median of {args.rounds} round(s) after {args.warmup} warm-up round(s), the brokers' order alternating\n")
    print("| workload | connector | broker | rows/s | vs. no-Kafka ceiling | vs. same plan without Kafka | "
          "vs. Spark's connector on Kafka 4.3.1 |")
    print("|---|---|---|---:|---:|---:|---:|")
    labels = {"read": "batch read -> noop", "stream": "streaming read + write to another topic (AvailableNow)"}
    print(f"| no-Kafka ceiling: Python Data Source, pre-built Arrow batches -> noop | | | {rate('ceiling'):,.0f} | "
          "1.00 | 1.00 | |")
    print(f"| no-Kafka streaming ceiling: same source, AvailableNow -> Python sink that drops rows | | | "
          f"{rate('stream ceiling'):,.0f} | {ratio('stream ceiling', 'ceiling'):.2f} | 1.00 | |")
    for kind, peer in (("read", "ceiling"), ("stream", "stream ceiling")):
        for fmt, where in pairs:
            name = f"{kind} {fmt}@{where}"
            oracle = f"{kind} kafka@kafka"
            versus = f"{ratio(name, oracle):.2f}" if oracle in results else ""
            broker_name = "Kafka 4.3.1" if where == "kafka" else "kafkamock"
            print(f"| {labels[kind]} | `{fmt}` | {broker_name} | {rate(name):,.0f} | {ratio(name, 'ceiling'):.2f} | "
                  f"{ratio(name, peer):.2f} | {versus} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
