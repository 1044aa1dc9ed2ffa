"""Share-group speed (KIP-932): librdkafka share consumers on kafkamock, franz-go's kfake, Apache Kafka 4.3.1 and
librdkafka's mock cluster (which implements share groups v1), in the same run.

What is measured (confluent-kafka's ShareConsumer):
- **throughput**: N share consumers (default 8, one thread each, implicit acknowledgement) of one group on a topic
  of P partitions (default 8) receive R records of 100 B (default 200,000; ``--records 1000000`` for the issue's
  figure), each value carrying its index; records/s from the first produced record until every record was
  delivered (or the records/s of what arrived before ``--deadline``, marked partial), each acknowledged by the
  consumer's next poll and a final ``commit_sync``. Every index must arrive once (checked after the clock stops:
  a record delivered twice or one never delivered fails the cell; a partial run is only checked for doubles).
- **round trips** (measured first, on a topic of its own, also of P partitions): one explicit-mode consumer, K cycles (default 300) of
  ``poll`` (a ShareFetch that finds the record just produced) then ``acknowledge`` + ``commit_sync`` (a
  ShareAcknowledge); p50 and p99 of each, in ms, as the client sees them. Each cycle's record is checked by its
  value; a record seen twice fails the cell.

Both groups get ``share.auto.offset.reset=earliest`` before their consumers start: a share group starts its
share-partitions at the latest offset by default, and the members get their partitions only at a heartbeat after
the group is initialised, so records produced before then were never delivered. It is set with IncrementalAlterConfigs on the GROUP resource (``incremental_alter_configs``,
``ResourceType.GROUP``) on kafkamock, kfake and Kafka; the mock cluster answers no such request and takes it for
every share group with ``rd_kafka_mock_sharegroup_set_auto_offset_reset``. Every broker also gets
``group.share.heartbeat.interval.ms=500`` (and, where it exists, ``group.share.min.heartbeat.interval.ms=500``; 5 s
is the default everywhere), so the assignment of the N members settles within the 3 s the consumers are given
before the first record is produced, rather than the clock paying for it.

The brokers (bench/peers.py starts them, one node on 127.0.0.1 each, a fresh one per broker; ``--brokers`` picks
some, of kafkamock, kafkamock-disk, kfake, kfake-disk, kafka, mock, tansu): kafkamock (``kafkamock serve`` in its own
process); kfake (franz-go's fake cluster, pkg/kfake at the pseudo-version bench/kfake/go.mod pins, which has
ShareGroupHeartbeat, ShareFetch and ShareAcknowledge, one broker through bench/kfake/main.go, ``make kfake``); Kafka
4.3.1 (one KRaft node through tests/support/kafka_cluster.py, its JVM settings: ``-Xmx512m``, serial GC, C1 only;
share groups are on by default in 4.3.1, its share-group state topic of one replica); and librdkafka's mock
cluster, inside this process (its threads share the client's CPU, as in bench/broker.py; it drops every share
session when any client connection closes, which this script never does mid-measure). One run per broker; the
machine has 2 cores, so N consumer threads, the producer and the broker share them.

The ratios are kafkamock/peer and kafkamock/best peer (the fastest peer of the row with a figure; for the round
trips, the peer's time over kafkamock's), above 1 kafkamock faster. The exit status is 1 when any cell failed.

    .venv/bin/python bench/share.py
    .venv/bin/python bench/share.py --records 1000000 --consumers 8 --partitions 8 --brokers kafkamock,kafka
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time

from confluent_kafka import AcknowledgeType, Producer, ShareConsumer
from peers import PEERS, BenchError, comparison_table, failed, measure_each, versions

TOPIC = "bench-share"
RTT_TOPIC = "bench-share-rtt"        # its own topic: the throughput group, reading from the earliest offset, must
                                     # see only its own records
THROUGHPUT_GROUP = "bench-share-throughput"
RTT_GROUP = "bench-share-rtt"
DEFAULT_BROKERS = ["kafkamock", "kfake", "kafka", "mock"]
HEARTBEAT_MS = "500"
BROKER_CONFIGS = {"group.share.heartbeat.interval.ms": HEARTBEAT_MS,
                  "group.share.min.heartbeat.interval.ms": HEARTBEAT_MS}
SETTLE_S = 3.0              # consumers polling before the first record is produced


def value(i: int) -> bytes:
    """100 bytes that say which record they are."""
    return b"%010d" % i + bytes(90)


def index(v: bytes | None) -> int:
    return int(v[:10]) if v and len(v) == 100 else -1


def consumer(bootstrap: str, group: str, mode: str = "implicit", topic: str = TOPIC) -> ShareConsumer:
    c = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group, "share.acknowledgement.mode": mode,
                       "log_level": 3})
    c.subscribe([topic])
    return c


def throughput(bootstrap: str, consumers: int, records: int, deadline_s: float) -> float | tuple[float, str]:
    """Records/s delivered; (records/s, "partial ...") when not every record arrived before the deadline."""
    got: list[list[bytes]] = [[] for _ in range(consumers)]
    stop = threading.Event()
    members = [consumer(bootstrap, THROUGHPUT_GROUP) for _ in range(consumers)]
    failures: list[BaseException] = []

    def run(k: int) -> None:
        c, mine = members[k], got[k]
        try:
            while not stop.is_set():
                for m in c.poll(0.1):
                    if m.error() is None:
                        mine.append(m.value())
                    else:
                        raise BenchError(f"consumer {k}: {m.error()}")
            c.commit_sync()
        except Exception as exc:  # noqa: BLE001 - reported in the table's cell
            failures.append(exc)

    threads = [threading.Thread(target=run, args=(k,), daemon=True) for k in range(consumers)]
    for t in threads:
        t.start()
    time.sleep(SETTLE_S)     # every consumer joined, its assignment settled, fetching
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "batch.num.messages": 1000,
                         "queue.buffering.max.messages": 1_000_000})
    values = [value(i) for i in range(records)]
    started = time.monotonic()
    for v in values:
        while True:
            try:
                producer.produce(TOPIC, v)
                break
            except BufferError:
                producer.poll(0.05)
    if producer.flush(60):
        raise BenchError("records still undelivered to the broker 60 s after the last produce()")
    try:
        while sum(map(len, got)) < records and time.monotonic() - started < deadline_s and not failures:
            time.sleep(0.02)
        elapsed = time.monotonic() - started
        delivered = sum(map(len, got))
    finally:
        stop.set()
        for t in threads:
            t.join(30)
        for c in members:
            c.close()
    if failures:
        raise BenchError(str(failures[0]))
    seen = sorted(index(v) for mine in got for v in mine)
    doubles = len(seen) - len(set(seen))
    if doubles:
        raise BenchError(f"{doubles:,} of {len(seen):,} deliveries were of records already delivered")
    if delivered < records:
        return delivered / elapsed, f"partial: {delivered:,} of {records:,} in {elapsed:.0f} s"
    if seen != list(range(records)):
        raise BenchError("the records delivered are not the ones produced")
    return records / elapsed


def round_trips(bootstrap: str, cycles: int) -> tuple[list[float], list[float]]:
    c = consumer(bootstrap, RTT_GROUP, "explicit", RTT_TOPIC)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    fetches, acks = [], []
    seen: set[int] = set()

    def take(messages) -> list:
        for m in messages:
            if m.error() is not None:
                raise BenchError(f"share consumer: {m.error()}")
            i = index(m.value())
            if i in seen:
                raise BenchError(f"record {i} delivered twice")
            seen.add(i)
        return messages

    def accept(messages) -> None:
        for m in messages:
            c.acknowledge(m, AcknowledgeType.ACCEPT)

    try:
        deadline = time.monotonic() + 30
        n = 0
        while not seen and time.monotonic() < deadline:              # joined and fetching
            n += 1
            producer.produce(RTT_TOPIC, value(-n))
            producer.flush(5)
            accept(take(c.poll(0.2)))
        if not seen:
            raise BenchError("the share consumer got no record in 30 s")
        c.commit_sync()
        for k in range(cycles):
            producer.produce(RTT_TOPIC, value(k))
            producer.flush(5)
            t0 = time.perf_counter()
            got: list = []
            while k not in seen:                 # a warm-up record may still come first: acknowledged with it
                polled = c.poll(5.0)
                if not polled:
                    raise BenchError(f"cycle {k}: a produced record did not arrive within 5 s")
                got += take(polled)
            t1 = time.perf_counter()
            accept(got)
            c.commit_sync()
            t2 = time.perf_counter()
            fetches.append((t1 - t0) * 1000)
            acks.append((t2 - t1) * 1000)
    finally:
        c.close()
    return fetches, acks


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] if len(values) > 1 else values[0]


KEYS = ("rate", "fetch50", "fetch99", "ack50", "ack99")


def measure(name: str, args) -> dict[str, object]:
    out: dict[str, object] = {}
    broker = None
    try:
        broker = PEERS[name](BROKER_CONFIGS)
        broker.create_topic(TOPIC, args.partitions)
        broker.create_topic(RTT_TOPIC, args.partitions)
        for group in (RTT_GROUP, THROUGHPUT_GROUP):
            broker.set_group_config(group, "share.auto.offset.reset", "earliest")
        fetches, acks = round_trips(broker.bootstrap, args.cycles)
        out.update(fetch50=percentile(fetches, 50), fetch99=percentile(fetches, 99), ack50=percentile(acks, 50),
                   ack99=percentile(acks, 99))
        out["rate"] = throughput(broker.bootstrap, args.consumers, args.records, args.deadline)
    except Exception as exc:  # noqa: BLE001 - reported in the table's cells
        for key in KEYS:
            out.setdefault(key, failed(exc))
    finally:
        if broker is not None:
            try:
                broker.stop()
            except BenchError as exc:  # an error in its log, or an unclean exit: its figures do not count
                out = dict.fromkeys(KEYS, failed(exc))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--consumers", type=int, default=8)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--cycles", type=int, default=300, help="poll/commit cycles for the round-trip figures")
    parser.add_argument("--deadline", type=float, default=300.0, help="give up on the throughput run after")
    args, names, results = measure_each(parser, DEFAULT_BROKERS, measure)
    print(f"\n{versions(names)}\n")
    print(comparison_table([
        (f"records/s delivered and acknowledged ({args.consumers} consumers, {args.partitions} partitions, "
         f"{args.records:,} × 100 B)", "rate", ",.0f", True),
        ("ShareFetch round trip p50, ms", "fetch50", ".2f", False),
        ("ShareFetch round trip p99, ms", "fetch99", ".2f", False),
        ("ShareAcknowledge round trip p50, ms", "ack50", ".2f", False),
        ("ShareAcknowledge round trip p99, ms", "ack99", ".2f", False)], names, results))
    if any(isinstance(v, str) for r in results.values() for v in r.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
