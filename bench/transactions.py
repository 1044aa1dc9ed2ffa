"""Transaction speed: a librdkafka transactional producer and a read_committed consumer, on kafkamock, franz-go's
kfake, Apache Kafka 4.3.1 and librdkafka's mock cluster in the same run.

What is measured (confluent-kafka):
- **transactions/s**: one transactional producer doing ``begin_transaction``, 10 ``produce()`` of 100-byte records
  to one partition, ``commit_transaction``, for a fixed time (default 5 s);
- **read_committed consume rate with 50% aborted data**: first N records (default 20,000, each value carrying its
  index) are written in transactions of 100 records that alternate commit and abort; then a consumer with
  ``isolation.level`` = ``read_committed`` reads the partition from offset 0 to its end. It must receive exactly
  the committed half, in order, once each (checked by the indexes, after the clock stops; a broker that hands out
  aborted records, or loses committed ones, is wrong, not fast: its cell says FAILED with what it delivered), and
  the figure is those records per second, from ``assign()`` (the consumer already connected) to the last expected
  record, as bench/broker.py times a consume; the reader then goes on, untimed, to the partition's end, so an extra
  record is still seen. (The clock used to run from the first record to the end, which librdkafka reports only
  after a fetch that waited out fetch.wait.max.ms, 500 ms, for every broker alike: at 20,000 records that wait was
  most of the figure.) The same log read with ``read_uncommitted`` (every record, in order)
  is the row above it.

The brokers (bench/peers.py starts them, one node on 127.0.0.1 each, a fresh one per broker; ``--brokers`` picks
some, of kafkamock, kafkamock-disk, kfake, kfake-disk, kafka, mock, tansu): kafkamock (``kafkamock serve`` in its own
process); kfake (franz-go's fake cluster, pkg/kfake at the pseudo-version bench/kfake/go.mod pins, one broker through
bench/kfake/main.go, ``make kfake``: transactions complete synchronously there, EndTxn writes the markers before it
answers); Kafka 4.3.1 (one KRaft node through tests/support/kafka_cluster.py, its JVM settings: ``-Xmx512m``, serial
GC, C1 only; its transaction state log of one replica, transaction version 2, its default: its EndTxn answers
before the markers are written, so the next transaction's AddPartitionsToTxn gets CONCURRENT_TRANSACTIONS and
librdkafka retries it about 20 ms later, which bounds Kafka near 45-90 transactions/s); and librdkafka's mock
cluster, inside this process (its threads share the client's CPU, as in bench/broker.py). The mock cluster writes
transaction markers but keeps no aborted-transaction index, so its read_committed reader gets the aborted records
too: that cell fails with the count it delivered, and the read_uncommitted row beside it is its rate over the log.

The ratios are kafkamock/peer and kafkamock/best peer (the fastest peer of the row with a figure), above 1
kafkamock faster. The exit status is 1 when a cell failed that is not a peer's known limit.

    .venv/bin/python bench/transactions.py                          # 5 s of transactions, 20,000 records
    .venv/bin/python bench/transactions.py --seconds 10 --records 100000 --brokers kafkamock,kafka
"""

from __future__ import annotations

import argparse
import sys
import time

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from peers import PEERS, BenchError, comparison_table, failed, measure_each, versions

TOPIC = "bench-transactions"
PER_TRANSACTION = 10
PER_CONSUMED_TRANSACTION = 100
DEFAULT_BROKERS = ["kafkamock", "kfake", "kafka", "mock"]
# What a peer cannot do, with the reason, shown in its cell when that row fails there.
KNOWN_LIMITS = {("mock", "read"): "the mock cluster keeps no aborted-transaction index"}


def value(i: int) -> bytes:
    """100 bytes that say which record they are."""
    return b"%010d" % i + bytes(90)


def producer(bootstrap: str, transactional_id: str) -> Producer:
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id, "linger.ms": 0,
                  "log_level": 3})
    p.init_transactions(30)
    return p


def transactions_per_second(bootstrap: str, seconds: float) -> float:
    p = producer(bootstrap, "bench-tps")
    filler = value(0)
    done = 0
    started = time.monotonic()
    stop = started + seconds
    while time.monotonic() < stop:
        p.begin_transaction()
        for _ in range(PER_TRANSACTION):
            p.produce(TOPIC, value=filler, partition=0)
        p.commit_transaction(30)
        done += 1
    return done / (time.monotonic() - started)


def fill_half_aborted(bootstrap: str, records: int) -> list[int]:
    """Write ``records`` records (value ``i`` at the i-th) in transactions of 100 alternating commit/abort; the
    indexes committed."""
    p = producer(bootstrap, "bench-fill")
    committed: list[int] = []
    for n in range(records // PER_CONSUMED_TRANSACTION):
        p.begin_transaction()
        first = n * PER_CONSUMED_TRANSACTION
        for i in range(first, first + PER_CONSUMED_TRANSACTION):
            p.produce(TOPIC, value=value(i), partition=1)
        if p.flush(30):
            raise BenchError("records still queued before the end of a transaction")
        if n % 2 == 0:
            p.commit_transaction(30)
            committed += range(first, first + PER_CONSUMED_TRANSACTION)
        else:
            p.abort_transaction(30)
    return committed


def read_rate(bootstrap: str, expected: list[int], deadline_s: float, isolation: str = "read_committed") -> float:
    """Records/s from assign() (the consumer already connected) until as many records as ``expected`` are in
    hand; then (untimed) on to the partition's end, and the records must be ``expected``, in order. The clock does
    not wait for the end: the end is reported by a fetch that found nothing more, which waits out
    fetch.wait.max.ms (500 ms) first."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-{isolation}", "enable.auto.commit": False,
                  "isolation.level": isolation, "enable.partition.eof": True, "log_level": 3,
                  "fetch.max.bytes": 52428800})
    got: list[bytes] = []
    last = None
    try:
        c.list_topics(TOPIC, timeout=30)       # connected before the clock starts
        started = time.monotonic()
        c.assign([TopicPartition(TOPIC, 1, 0)])
        while True:
            for message in c.consume(1000, 0.2):
                error = message.error()
                if error is None:
                    got.append(message.value())
                    if len(got) == len(expected):
                        last = time.monotonic()
                elif error.code() == KafkaError._PARTITION_EOF:
                    if last is not None:
                        check(got, expected, isolation)
                        return len(expected) / (last - started)
                    # an end reported before the records (a reader's first, empty answer): keep reading
                else:
                    raise BenchError(f"consume error: {error}")
            if time.monotonic() - started > deadline_s:
                raise BenchError(f"{isolation} got {len(got):,} of {len(expected):,} records in {deadline_s:.0f} s")
    finally:
        c.close()


def check(got: list[bytes], expected: list[int], isolation: str) -> None:
    indexes = [int(v[:10]) if v and len(v) == 100 else -1 for v in got]
    if indexes != expected:
        wrong = next((k for k, (a, b) in enumerate(zip(indexes, expected, strict=False)) if a != b),
                     min(len(got), len(expected)))
        raise BenchError(f"{isolation} delivered {len(got):,} records, {len(expected):,} were expected; the first "
                         f"difference is at record {wrong:,}")


def measure(name: str, args) -> dict[str, object]:
    out: dict[str, object] = {}
    broker = None
    try:
        broker = PEERS[name]()
        broker.create_topic(TOPIC, 2)
        out["tps"] = transactions_per_second(broker.bootstrap, args.seconds)
        committed = fill_half_aborted(broker.bootstrap, args.records)
        whole = list(range(args.records // PER_CONSUMED_TRANSACTION * PER_CONSUMED_TRANSACTION))
        out["uncommitted"] = read_rate(broker.bootstrap, whole, args.deadline, "read_uncommitted")
        out["read"] = read_rate(broker.bootstrap, committed, args.deadline)
    except Exception as exc:  # noqa: BLE001 - reported in the table's cells
        for key in ("tps", "uncommitted", "read"):
            out.setdefault(key, failed(exc))
    finally:
        if broker is not None:
            try:
                broker.stop()
            except BenchError as exc:  # an error in its log, or an unclean exit: its figures do not count
                out = dict.fromkeys(("tps", "uncommitted", "read"), failed(exc))
    for (peer, key), reason in KNOWN_LIMITS.items():
        if peer == name and isinstance(out.get(key), str):
            out[key] = f"{out[key]} ({reason})"
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="how long to run transactions")
    parser.add_argument("--records", type=int, default=20_000, help="records written for the read_committed read")
    parser.add_argument("--deadline", type=float, default=60.0, help="give up on a read after")
    args, names, results = measure_each(parser, DEFAULT_BROKERS, measure)
    print(f"\n{versions(names)}\n")
    print(comparison_table([
        (f"transactions/s ({PER_TRANSACTION} × 100 B records each)", "tps", ",.0f", True),
        (f"read_uncommitted records/s, the same {args.records:,} records", "uncommitted", ",.0f", True),
        (f"read_committed records/s, {args.records:,} written, 50% aborted", "read", ",.0f", True)], names, results))
    unexpected = [(n, k) for n, r in results.items() for k, v in r.items()
                  if isinstance(v, str) and (n, k) not in KNOWN_LIMITS]
    if unexpected:
        sys.exit(1)


if __name__ == "__main__":
    main()
