"""Share-group speed (KIP-932): librdkafka share consumers on kafkamock and on librdkafka's mock cluster (which
implements share groups v1), in the same run.

What is measured (confluent-kafka's ShareConsumer):
- **throughput**: N share consumers (default 8, one thread each, implicit acknowledgement) of one group on a topic
  of P partitions (default 8) receive R records of 100 B (default 200,000; ``--records 1000000`` for the issue's
  figure); records/s from the first produced record until every record was delivered (or the records/s of what
  arrived before ``--deadline``, marked partial), each acknowledged by the consumer's next poll and a final
  ``commit_sync``. The consumers poll before anything is produced, so both brokers start the share-partitions at
  offset 0.
- **round trips** (measured first, on the empty topic): one explicit-mode consumer, K cycles (default 300) of
  ``poll`` (a ShareFetch that finds a record waiting) then ``acknowledge`` + ``commit_sync`` (a ShareAcknowledge);
  p50 and p99 of each, in ms, as the client sees them.

kafkamock runs as ``kafkamock serve`` in its own process; the mock cluster runs inside this process (its threads
share the client's CPU, as in bench/broker.py). One run per broker; the machine has 2 cores, so N consumer threads,
the producer and the broker share them.

    .venv/bin/python bench/share.py
    .venv/bin/python bench/share.py --records 1000000 --consumers 8 --partitions 8
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time

import confluent_kafka
from confluent_kafka import AcknowledgeType, Producer, ShareConsumer
from groups import BenchError, Kafkamock, MockCluster

TOPIC = "bench-share"
VALUE = b"x" * 100


def consumer(bootstrap: str, group: str, mode: str = "implicit") -> ShareConsumer:
    c = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group, "share.acknowledgement.mode": mode,
                       "log_level": 3})
    c.subscribe([TOPIC])
    return c


def throughput(bootstrap: str, consumers: int, records: int, deadline_s: float) -> str:
    """Records/s delivered; "(partial ...)" when not every record arrived before the deadline."""
    counts = [0] * consumers
    stop = threading.Event()
    members = [consumer(bootstrap, "bench-share-throughput") for _ in range(consumers)]

    def run(k: int) -> None:
        c = members[k]
        while not stop.is_set():
            for m in c.poll(0.1):
                if m.error() is None:
                    counts[k] += 1
        c.commit_sync()

    threads = [threading.Thread(target=run, args=(k,), daemon=True) for k in range(consumers)]
    for t in threads:
        t.start()
    time.sleep(3)        # let every consumer join and fetch once: the share-partitions start at offset 0
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "batch.num.messages": 1000,
                         "queue.buffering.max.messages": 1_000_000})
    started = time.monotonic()
    for _ in range(records):
        while True:
            try:
                producer.produce(TOPIC, VALUE)
                break
            except BufferError:
                producer.poll(0.05)
    producer.flush(60)
    try:
        while sum(counts) < records and time.monotonic() - started < deadline_s:
            time.sleep(0.02)
        elapsed = time.monotonic() - started
        delivered = sum(counts)
    finally:
        stop.set()
        for t in threads:
            t.join(30)
        for c in members:
            c.close()
    if delivered > records:
        raise BenchError(f"{delivered} deliveries of {records} records: some came twice")
    if delivered < records:
        return f"{delivered / elapsed:,.0f} (partial: {delivered:,} of {records:,} in {elapsed:.0f} s)"
    return f"{records / elapsed:,.0f}"


def round_trips(bootstrap: str, cycles: int) -> tuple[list[float], list[float]]:
    c = consumer(bootstrap, "bench-share-rtt", "explicit")
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    fetches, acks = [], []
    try:
        deadline = time.monotonic() + 30
        warm = []
        while not warm and time.monotonic() < deadline:              # joined and fetching
            producer.produce(TOPIC, VALUE)
            producer.flush(5)
            warm = c.poll(0.2)
        for m in warm:
            c.acknowledge(m, AcknowledgeType.ACCEPT)
        c.commit_sync()
        for _ in range(cycles):
            producer.produce(TOPIC, VALUE)
            producer.flush(5)
            t0 = time.perf_counter()
            got = c.poll(5.0)
            t1 = time.perf_counter()
            if not got:
                raise BenchError("a produced record did not arrive within 5 s")
            for m in got:
                c.acknowledge(m, AcknowledgeType.ACCEPT)
            t2 = time.perf_counter()
            c.commit_sync()
            t3 = time.perf_counter()
            fetches.append((t1 - t0) * 1000)
            acks.append((t3 - t2) * 1000)
    finally:
        c.close()
    return fetches, acks


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] if len(values) > 1 else values[0]


def measure(kind, args) -> dict[str, float | str]:
    out: dict[str, float | str] = {}
    broker = kind(args.partitions, TOPIC)
    try:
        fetches, acks = round_trips(broker.bootstrap, args.cycles)
        out["rate"] = throughput(broker.bootstrap, args.consumers, args.records, args.deadline)
        out.update(fetch50=percentile(fetches, 50), fetch99=percentile(fetches, 99), ack50=percentile(acks, 50),
                   ack99=percentile(acks, 99))
    except BenchError as exc:
        for key in ("rate", "fetch50", "fetch99", "ack50", "ack99"):
            out.setdefault(key, f"failed: {exc}")
    finally:
        broker.stop()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--consumers", type=int, default=8)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--cycles", type=int, default=300, help="poll/commit cycles for the round-trip figures")
    parser.add_argument("--deadline", type=float, default=300.0, help="give up on the throughput run after")
    args = parser.parse_args()
    results = {kind.name: measure(kind, args) for kind in (Kafkamock, MockCluster)}
    ours, peer = results["kafkamock"], results["mock cluster"]

    def cell(value, fmt=",.0f"):
        return format(value, fmt) if isinstance(value, float) else str(value)

    def ratio(a, b, higher_is_better=True):
        if not (isinstance(a, float) and isinstance(b, float) and a and b):
            return "n/a"
        return f"{a / b:.2f}" if higher_is_better else f"{b / a:.2f}"

    print(f"\nconfluent-kafka {confluent_kafka.__version__} / librdkafka {confluent_kafka.libversion()[0]}\n")
    print("| metric | kafkamock | mock cluster | kafkamock vs mock cluster (>1: kafkamock better) |")
    print("|---|---:|---:|---:|")
    rates = [float(r.split()[0].replace(",", "")) if not r.startswith("failed") else None
             for r in (ours["rate"], peer["rate"])]
    print(f"| records/s delivered and acknowledged ({args.consumers} consumers, {args.partitions} partitions, "
          f"{args.records:,} × 100 B) | {ours['rate']} | {peer['rate']} | {ratio(*rates)} |")
    for key, label in (("fetch50", "ShareFetch round trip p50, ms"), ("fetch99", "ShareFetch round trip p99, ms"),
                       ("ack50", "ShareAcknowledge round trip p50, ms"), ("ack99", "ShareAcknowledge round trip p99, ms")):
        print(f"| {label} | {cell(ours[key], '.2f')} | {cell(peer[key], '.2f')} | "
              f"{ratio(ours[key], peer[key], higher_is_better=False)} |")


if __name__ == "__main__":
    main()
