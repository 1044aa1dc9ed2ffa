"""Consumer-group speed: many librdkafka consumers joining one group, then committing, on kafkamock, franz-go's
kfake, Apache Kafka 4.3.1 and librdkafka's mock cluster in the same run.

What is measured (confluent-kafka, the classic protocol with the ``range`` assignor):
- **time to a stable assignment**: from the first ``subscribe()`` of N consumers (default 100) on a topic of P
  partitions (default 100) until every partition is assigned to exactly one member and every member holds its
  share (``on_assign`` callbacks, all consumers polled round-robin from one thread);
- **commit throughput**: for a fixed time (default 5 s), synchronous commits of one partition each
  (``commit(offsets=[TopicPartition(topic, p, offset)], asynchronous=False)``) from the members, driven by T
  threads (default 8), as commits per second. Afterwards (untimed) every member reads its partitions' committed
  offsets back (OffsetFetch), and each must be the last one committed to it, or the broker's cell fails.

The brokers (bench/peers.py starts them, one node on 127.0.0.1 each, a fresh one per broker; ``--brokers`` picks
some, of kafkamock, kafkamock-disk, kfake, kfake-disk, kafka, mock, tansu):
- kafkamock: ``kafkamock serve`` in its own process, ``--config group.initial.rebalance.delay.ms=0``;
- kfake: franz-go's fake cluster (pkg/kfake, the pseudo-version bench/kfake/go.mod pins) as one broker through
  bench/kfake/main.go (``make kfake``), in its own process; it has no initial rebalance delay at all (a join
  completes as soon as every known member has joined);
- Kafka 4.3.1: one KRaft node from .cache/kafka/jars through tests/support/kafka_cluster.py (its JVM settings:
  ``-Xmx512m``, serial GC, C1 only), with ``group.initial.rebalance.delay.ms=0``, its offsets topic of one replica;
- mock cluster: librdkafka's mock broker in this process (its threads share the client's CPU), its topic made with
  ``rd_kafka_mock_topic_create``. It keeps its default initial rebalance delay of 3 s: set to 0 with
  ``rd_kafka_mock_group_initial_rebalance_delay_ms`` (or to 100 ms or 1 s), a group of 10 or 100 consumers took 29
  or 58 s to be stable (members waited out session.timeout.ms), and at 3 s it takes about 3 s. (Before bench/peers.py
  this script looked the setter up under a name librdkafka does not export and silently kept the 3 s too.)
The consumers use ``heartbeat.interval.ms`` 100, so rounds are not paced by the client's 3 s default.

Limits: one run per broker (the time to stable is dominated by the clients' rejoin rounds, so it is noisy); the
commit figure is per-request latency-bound with T threads, not the broker's ceiling. The ratios are
kafkamock/peer and kafkamock/best peer (the fastest peer of the row), oriented so that above 1 kafkamock is faster.
The exit status is 1 when any cell failed.

    .venv/bin/python bench/groups.py                      # 100 consumers, 100 partitions, 5 s of commits
    .venv/bin/python bench/groups.py --consumers 20 --partitions 40 --seconds 3 --brokers kafkamock,kfake
"""

from __future__ import annotations

import argparse
import sys
import threading
import time

from confluent_kafka import Consumer, TopicPartition
from peers import PEERS, BenchError, comparison_table, failed, measure_each, versions

TOPIC = "bench-groups"
DEFAULT_BROKERS = ["kafkamock", "kfake", "kafka", "mock"]
BROKER_CONFIGS = {"group.initial.rebalance.delay.ms": "0"}
# The mock cluster keeps its default initial delay of 3 s: at 0 (or 100 ms, 1 s) a group of 10 or 100 consumers took
# 29 s or 58 s to be stable (members waiting out session.timeout.ms), at 3 s about 3 s.
CONFIGS_FOR = {"mock": {}}


def time_to_stable(bootstrap: str, consumers: int, partitions: int, deadline_s: float):
    """(seconds, [consumers], {member index: assigned partitions})."""
    owned: dict[int, set[int]] = {i: set() for i in range(consumers)}

    def callbacks(i: int):
        def on_assign(_consumer, assigned):
            owned[i] = {tp.partition for tp in assigned}

        def on_revoke(_consumer, _revoked):
            owned[i] = set()
        return on_assign, on_revoke

    members = [Consumer({"bootstrap.servers": bootstrap, "group.id": "bench", "enable.auto.commit": False,
                         "partition.assignment.strategy": "range", "heartbeat.interval.ms": 100,
                         "session.timeout.ms": 30000, "log_level": 3}) for _ in range(consumers)]
    share = {partitions // consumers, -(-partitions // consumers)}
    started = time.monotonic()
    for i, member in enumerate(members):
        on_assign, on_revoke = callbacks(i)
        member.subscribe([TOPIC], on_assign=on_assign, on_revoke=on_revoke)
    while True:
        for member in members:
            member.poll(0)
        counts = [len(p) for p in owned.values()]
        everything = set().union(*owned.values())
        if sum(counts) == partitions and len(everything) == partitions and set(counts) <= share:
            return time.monotonic() - started, members, owned
        if time.monotonic() - started > deadline_s:
            raise BenchError(f"no stable assignment in {deadline_s:.0f} s ({sum(counts)} of {partitions} owned)")
        time.sleep(0.001)


def commit_rate(members, owned, seconds: float, threads: int) -> float:
    """Commits/s; then every partition's committed offset read back (untimed), which must be the last one
    committed to it."""
    stop = time.monotonic() + seconds
    counts = [0] * threads
    failures: list[BaseException] = []
    last: dict[int, int] = {}   # partition -> the offset last committed to it (each partition has one member)

    def run(k: int) -> None:
        mine = [(members[i], sorted(owned[i])) for i in range(k, len(members), threads) if owned[i]]
        offset = 0
        try:
            while time.monotonic() < stop:
                for member, partitions in mine:
                    offset += 1
                    partition = partitions[offset % len(partitions)]
                    member.commit(offsets=[TopicPartition(TOPIC, partition, offset)], asynchronous=False)
                    last[partition] = offset
                    counts[k] += 1
        except BaseException as exc:  # noqa: BLE001 - reported in the table's cell
            failures.append(exc)

    workers = [threading.Thread(target=run, args=(k,)) for k in range(threads)]
    started = time.monotonic()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    rate = sum(counts) / (time.monotonic() - started)
    if failures:
        raise BenchError(f"commit failed: {failures[0]!r}")
    for i, member in enumerate(members):
        if not owned[i]:
            continue
        for tp in member.committed([TopicPartition(TOPIC, p) for p in sorted(owned[i])], timeout=30):
            if tp.error is not None or tp.offset != last.get(tp.partition, -1001):
                raise BenchError(f"partition {tp.partition}: committed offset read back {tp.offset} ({tp.error}), "
                                 f"last committed {last.get(tp.partition)}")
    return rate


def measure(name: str, args) -> dict[str, object]:
    """Both figures on a fresh broker; a figure that could not be had says why (the other brokers go on)."""
    out: dict[str, object] = {}
    members: list = []
    broker = None
    try:
        broker = PEERS[name](CONFIGS_FOR.get(name, BROKER_CONFIGS))
        broker.create_topic(TOPIC, args.partitions)
        seconds, members, owned = time_to_stable(broker.bootstrap, args.consumers, args.partitions, args.deadline)
        out["stable"] = seconds
        out["commits"] = commit_rate(members, owned, args.seconds, args.threads)
    except Exception as exc:  # noqa: BLE001 - reported in the table's cell
        out.setdefault("stable", failed(exc))
        out.setdefault("commits", failed(exc))
    finally:
        for member in members:
            member.close()
        if broker is not None:
            try:
                broker.stop()
            except BenchError as exc:  # an error in its log, or an unclean exit: its figures do not count
                out = {"stable": failed(exc), "commits": failed(exc)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--consumers", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=5.0, help="how long to commit")
    parser.add_argument("--threads", type=int, default=8, help="threads driving the commits")
    parser.add_argument("--deadline", type=float, default=120.0, help="give up on a stable assignment after")
    args, names, results = measure_each(parser, DEFAULT_BROKERS, measure)
    print(f"\n{args.consumers} consumers, {args.partitions} partitions; {versions(names)}\n")
    print(comparison_table([
        ("time to a stable assignment (s)", "stable", ".2f", False),
        (f"sync commits/s, one partition each, {args.threads} threads", "commits", ",.0f", True)], names, results))
    print("\nkafkamock/peer: above 1, kafkamock is faster (for the time to stable, the peer's time over "
          "kafkamock's).")
    if any(isinstance(v, str) for r in results.values() for v in r.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
