"""Transaction speed: a librdkafka transactional producer and a read_committed consumer, on kafkamock and on
librdkafka's mock cluster in the same run.

What is measured (confluent-kafka):
- **transactions/s**: one transactional producer doing ``begin_transaction``, 10 ``produce()`` of 100-byte records
  to one partition, ``commit_transaction``, for a fixed time (default 5 s);
- **read_committed consume rate with 50% aborted data**: first N records (default 20,000) are written in
  transactions of 100 records that alternate commit and abort; then a consumer with ``isolation.level`` =
  ``read_committed`` reads the partition from offset 0 to its end. It must receive exactly the committed half (the
  bench fails loudly otherwise: a broker that hands out aborted records, or loses committed ones, is wrong, not
  fast), and the figure is those records per second, from the first record to the end.

librdkafka's mock cluster writes transaction markers but keeps no aborted-transaction index, so its read_committed
reader gets the aborted records too: that row reports the mock cluster as failed rather than a misleading rate,
and kafkamock's read_uncommitted rate over the same log is printed beside it as the in-run reference.

kafkamock runs as ``kafkamock serve`` in its own process; the mock cluster inside this process (its threads share
the client's CPU, as in bench/broker.py and bench/groups.py, whose broker handles this bench reuses).

    .venv/bin/python bench/transactions.py                          # 5 s of transactions, 20,000 records
    .venv/bin/python bench/transactions.py --seconds 10 --records 100000
"""

from __future__ import annotations

import argparse
import time

import confluent_kafka
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from groups import BenchError, Kafkamock, MockCluster

TOPIC = "bench-transactions"
VALUE = b"x" * 100
PER_TRANSACTION = 10
PER_CONSUMED_TRANSACTION = 100


def producer(bootstrap: str, transactional_id: str) -> Producer:
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id, "linger.ms": 0,
                  "log_level": 3})
    p.init_transactions(30)
    return p


def transactions_per_second(bootstrap: str, seconds: float) -> float:
    p = producer(bootstrap, "bench-tps")
    done = 0
    started = time.monotonic()
    stop = started + seconds
    while time.monotonic() < stop:
        p.begin_transaction()
        for _ in range(PER_TRANSACTION):
            p.produce(TOPIC, value=VALUE, partition=0)
        p.commit_transaction(30)
        done += 1
    return done / (time.monotonic() - started)


def fill_half_aborted(bootstrap: str, records: int) -> int:
    """Write ``records`` records in transactions of 100 alternating commit/abort; the number committed."""
    p = producer(bootstrap, "bench-fill")
    committed = 0
    for n in range(records // PER_CONSUMED_TRANSACTION):
        p.begin_transaction()
        for _ in range(PER_CONSUMED_TRANSACTION):
            p.produce(TOPIC, value=VALUE, partition=1)
        if p.flush(30):
            raise BenchError("records still queued before the end of a transaction")
        if n % 2 == 0:
            p.commit_transaction(30)
            committed += PER_CONSUMED_TRANSACTION
        else:
            p.abort_transaction(30)
    return committed


def read_rate(bootstrap: str, expected: int, deadline_s: float, isolation: str = "read_committed") -> float:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-{isolation}", "enable.auto.commit": False,
                  "isolation.level": isolation, "enable.partition.eof": True, "log_level": 3,
                  "fetch.max.bytes": 52428800})
    c.assign([TopicPartition(TOPIC, 1, 0)])
    got = 0
    started = time.monotonic()
    first = None                     # the clock runs from the first record, not from the consumer's start-up
    try:
        while True:
            for message in c.consume(1000, 0.2):
                error = message.error()
                if error is None:
                    first = first or time.monotonic()
                    got += 1
                elif error.code() == KafkaError._PARTITION_EOF:
                    if got > expected:
                        raise BenchError(f"{isolation} delivered {got} records, {expected} were expected")
                    if got == expected:
                        return got / (time.monotonic() - (first or started))
                    # an end reported before the records (a reader's first, empty answer): keep reading
                else:
                    raise BenchError(f"consume error: {error}")
            if time.monotonic() - started > deadline_s:
                raise BenchError(f"{isolation} got {got} of {expected} records in {deadline_s:.0f} s")
    finally:
        c.close()


def measure(kind, args) -> dict[str, float | str]:
    out: dict[str, float | str] = {}
    broker = kind(2, TOPIC)
    try:
        out["tps"] = transactions_per_second(broker.bootstrap, args.seconds)
        committed = fill_half_aborted(broker.bootstrap, args.records)
        out["uncommitted"] = read_rate(broker.bootstrap, args.records, args.deadline, "read_uncommitted")
        out["read"] = read_rate(broker.bootstrap, committed, args.deadline)
    except BenchError as exc:
        out.setdefault("tps", f"failed: {exc}")
        out.setdefault("uncommitted", f"failed: {exc}")
        out.setdefault("read", f"failed: {exc}")
    finally:
        broker.stop()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="how long to run transactions")
    parser.add_argument("--records", type=int, default=20_000, help="records written for the read_committed read")
    parser.add_argument("--deadline", type=float, default=60.0, help="give up on a read after")
    args = parser.parse_args()
    results = {kind.name: measure(kind, args) for kind in (Kafkamock, MockCluster)}
    ours, peer = results["kafkamock"], results["mock cluster"]

    def cell(value):
        return f"{value:,.0f}" if isinstance(value, float) else str(value)

    def ratio(a, b):
        return f"{a / b:.2f}" if isinstance(a, float) and isinstance(b, float) and b else "n/a"

    print(f"\nconfluent-kafka {confluent_kafka.__version__} / librdkafka {confluent_kafka.libversion()[0]}\n")
    print("| metric | kafkamock | mock cluster | kafkamock/mock cluster (higher is better) |")
    print("|---|---:|---:|---:|")
    print(f"| transactions/s ({PER_TRANSACTION} × 100 B records each) | {cell(ours['tps'])} | {cell(peer['tps'])} | "
          f"{ratio(ours['tps'], peer['tps'])} |")
    print(f"| read_uncommitted records/s, the same {args.records:,} records | {cell(ours['uncommitted'])} | "
          f"{cell(peer['uncommitted'])} | {ratio(ours['uncommitted'], peer['uncommitted'])} |")
    print(f"| read_committed records/s, {args.records:,} written, 50% aborted | {cell(ours['read'])} | "
          f"{cell(peer['read'])} | {ratio(ours['read'], peer['read'])} |")


if __name__ == "__main__":
    main()
