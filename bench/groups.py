"""Consumer-group speed: many librdkafka consumers joining one group, then committing, on kafkamock and on
librdkafka's mock cluster in the same run.

What is measured (confluent-kafka, the classic protocol with the ``range`` assignor):
- **time to a stable assignment**: from the first ``subscribe()`` of N consumers (default 100) on a topic of P
  partitions (default 100) until every partition is assigned to exactly one member and every member holds its
  share (``on_assign`` callbacks, all consumers polled round-robin from one thread);
- **commit throughput**: for a fixed time (default 5 s), synchronous commits of one partition each
  (``commit(offsets=[TopicPartition(topic, p, offset)], asynchronous=False)``) from the members, driven by T
  threads (default 8), as commits per second.

Both brokers run with ``group.initial.rebalance.delay.ms`` 0 (kafkamock: ``--config``; the mock cluster: its
``rd_kafka_mock_set_group_initial_rebalance_delay_ms``), and the consumers with ``heartbeat.interval.ms`` 100, so
the rounds are not paced by Kafka's 3 s defaults and the figures compare the brokers, not the timers. The mock
cluster has no CreateTopics and auto-creates 4 partitions, so its topic is made with ``rd_kafka_mock_topic_create``
through ctypes on the librdkafka that confluent-kafka ships. kafkamock runs as ``kafkamock serve`` in its own
process; the mock cluster runs inside this process (its threads share the client's CPU, as in bench/broker.py).

Limits: one run per broker (the time to stable is dominated by the clients' rejoin rounds, so it is noisy); the
commit figure is per-request latency-bound with T threads, not the broker's ceiling.

    .venv/bin/python bench/groups.py                      # 100 consumers, 100 partitions, 5 s of commits
    .venv/bin/python bench/groups.py --consumers 20 --partitions 40 --seconds 3
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import confluent_kafka
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

REPO = Path(__file__).resolve().parent.parent
READY = re.compile(r"kafkamock broker ready: bootstrap\.servers=(\S+)")
TOPIC = "bench-groups"


class BenchError(RuntimeError):
    pass


class Kafkamock:
    name = "kafkamock"

    def __init__(self, partitions: int, topic: str = TOPIC) -> None:
        self.log = tempfile.NamedTemporaryFile(prefix="kafkamock-bench-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kafkamock.cli", "serve", "--host", "127.0.0.1", "--port", "0",
             "--config", "group.initial.rebalance.delay.ms=0"],
            cwd=REPO, stdout=subprocess.PIPE, stderr=self.log, text=True)
        deadline = time.monotonic() + 30
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if m := READY.search(line):
                self.bootstrap = m.group(1)
                break
            if time.monotonic() > deadline:
                break
        else:
            raise BenchError(f"kafkamock exited before it was ready; log {self.log.name}")
        threading.Thread(target=lambda: [None for _ in self.proc.stdout], daemon=True).start()
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        text = Path(self.log.name).read_text(errors="replace")
        if "Traceback" in text or " ERROR " in text:
            raise BenchError(f"kafkamock logged an error:\n{text[-3000:]}")
        os.unlink(self.log.name)


class MockCluster:
    """librdkafka's mock cluster, created through its C API (ctypes) so the topic can have P partitions."""

    name = "mock cluster"

    def __init__(self, partitions: int, topic: str = TOPIC) -> None:
        libs = glob.glob(os.path.join(os.path.dirname(confluent_kafka.__file__), "..", "confluent_kafka.libs",
                                      "librdkafka*.so*"))
        if not libs:
            raise BenchError("no librdkafka shared library next to confluent_kafka")
        lib = self.lib = ctypes.CDLL(libs[0])
        lib.rd_kafka_conf_new.restype = ctypes.c_void_p
        lib.rd_kafka_new.restype = ctypes.c_void_p
        lib.rd_kafka_new.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
        lib.rd_kafka_destroy.argtypes = [ctypes.c_void_p]
        lib.rd_kafka_mock_cluster_new.restype = ctypes.c_void_p
        lib.rd_kafka_mock_cluster_new.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.rd_kafka_mock_cluster_destroy.argtypes = [ctypes.c_void_p]
        lib.rd_kafka_mock_cluster_bootstraps.restype = ctypes.c_char_p
        lib.rd_kafka_mock_cluster_bootstraps.argtypes = [ctypes.c_void_p]
        lib.rd_kafka_mock_topic_create.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
        error = ctypes.create_string_buffer(512)
        self.rk = lib.rd_kafka_new(1, lib.rd_kafka_conf_new(), error, len(error))
        self.metadata = lib.rd_kafka_mock_cluster_new(self.rk, 1)
        self.bootstrap = lib.rd_kafka_mock_cluster_bootstraps(self.metadata).decode()
        if lib.rd_kafka_mock_topic_create(self.metadata, topic.encode(), partitions, 1) != 0:
            raise BenchError("rd_kafka_mock_topic_create failed")
        setter = getattr(lib, "rd_kafka_mock_set_group_initial_rebalance_delay_ms", None)
        if setter is not None:
            setter.argtypes = [ctypes.c_void_p, ctypes.c_int]
            setter(self.metadata, 0)

    def stop(self) -> None:
        self.lib.rd_kafka_mock_cluster_destroy(self.metadata)
        self.lib.rd_kafka_destroy(self.rk)


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
    stop = time.monotonic() + seconds
    counts = [0] * threads
    failures: list[BaseException] = []

    def run(k: int) -> None:
        mine = [(members[i], sorted(owned[i])) for i in range(k, len(members), threads) if owned[i]]
        offset = 0
        try:
            while time.monotonic() < stop:
                for member, partitions in mine:
                    offset += 1
                    member.commit(offsets=[TopicPartition(TOPIC, partitions[offset % len(partitions)], offset)],
                                  asynchronous=False)
                    counts[k] += 1
        except BaseException as exc:  # noqa: BLE001 - reported in the table's cell
            failures.append(exc)

    workers = [threading.Thread(target=run, args=(k,)) for k in range(threads)]
    started = time.monotonic()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    if failures:
        raise BenchError(f"commit failed: {failures[0]!r}")
    return sum(counts) / (time.monotonic() - started)


def measure(kind, args) -> dict[str, float | str]:
    out: dict[str, float | str] = {}
    broker = kind(args.partitions)
    members: list = []
    try:
        seconds, members, owned = time_to_stable(broker.bootstrap, args.consumers, args.partitions, args.deadline)
        out["stable"] = seconds
        out["commits"] = commit_rate(members, owned, args.seconds, args.threads)
    except BenchError as exc:
        out.setdefault("stable", f"failed: {exc}")
        out.setdefault("commits", "failed")
    finally:
        for member in members:
            member.close()
        broker.stop()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--consumers", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=5.0, help="how long to commit")
    parser.add_argument("--threads", type=int, default=8, help="threads driving the commits")
    parser.add_argument("--deadline", type=float, default=120.0, help="give up on a stable assignment after")
    args = parser.parse_args()
    results = {kind.name: measure(kind, args) for kind in (Kafkamock, MockCluster)}
    ours, peer = results["kafkamock"], results["mock cluster"]

    def cell(value, fmt):
        return fmt.format(value) if isinstance(value, float) else str(value)

    def ratio(a, b, higher_is_better):
        if not isinstance(a, float) or not isinstance(b, float) or not a or not b:
            return "n/a"
        return f"{(a / b if higher_is_better else b / a):.2f}"

    print(f"\n{args.consumers} consumers, {args.partitions} partitions, confluent-kafka "
          f"{confluent_kafka.__version__} / librdkafka {confluent_kafka.libversion()[0]}\n")
    print("| metric | kafkamock | mock cluster | kafkamock/mock cluster (higher is better) |")
    print("|---|---:|---:|---:|")
    print(f"| time to a stable assignment (s) | {cell(ours['stable'], '{:.2f}')} | "
          f"{cell(peer['stable'], '{:.2f}')} | {ratio(ours['stable'], peer['stable'], False)} |")
    print(f"| sync commits/s, one partition each, {args.threads} threads | {cell(ours['commits'], '{:,.0f}')} | "
          f"{cell(peer['commits'], '{:,.0f}')} | {ratio(ours['commits'], peer['commits'], True)} |")


if __name__ == "__main__":
    main()
