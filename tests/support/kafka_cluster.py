"""Apache Kafka 4.3.1 as the tests' reference broker: a KRaft cluster on free 127.0.0.1 ports, started and stopped
by the tests themselves.

    with KafkaCluster(tmp_path) as kafka:                       # one node (broker and controller in one JVM)
        kafka.bootstrap_servers                                 # "127.0.0.1:PORT"
    with KafkaCluster(tmp_path, nodes=3, config={"log.retention.check.interval.ms": 1000}) as kafka: ...

The jars come from ``make kafka`` (tests/java/pom-kafka.xml, resolved with Maven into ``.cache/kafka``; resolved
here on first use when missing). Each node is formatted (``kafka.tools.StorageTool format``, a static quorum of
every node) and started as ``kafka.Kafka server.properties``; ``start`` returns once every node answers Metadata
listing all of them, and raises with the tail of a node's log when one dies or the deadline passes.

Settings are the ones a test wants (``TEST_DEFAULTS``): internal topics replicated ``min(3, nodes)`` times with a
minimum ISR of 1, no initial rebalance delay. Share groups (``share.version=1``), KIP-848 (``group.version=1``)
and transaction version 2 are Kafka 4.3.1's defaults at format time, so nothing else is needed for them.
``config`` adds or overrides broker configs (written to every node's server.properties).
"""

from __future__ import annotations

import base64
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from support.oracle import REPO, _fetch_jars, find_java

KAFKA_VERSION = "4.3.1"
CACHE = REPO / ".cache" / "kafka"
LOG_CONFIG = REPO / "tests" / "java" / "kafka-log4j2.yaml"
JVM_ARGS = ("-Xms128m", "-Xmx512m", "-XX:+UseSerialGC", "-Xshare:auto", "-XX:TieredStopAtLevel=1",
            "-Djava.awt.headless=true")
START_TIMEOUT = 90.0          # seconds for every node to answer, on a busy 2-core machine


def test_defaults(nodes: int) -> dict[str, str]:
    """Broker configs a test run wants, for a cluster of ``nodes``."""
    rf = str(min(3, nodes))
    return {
        "offsets.topic.replication.factor": rf,
        "transaction.state.log.replication.factor": rf,
        "transaction.state.log.min.isr": "1",
        "share.coordinator.state.topic.replication.factor": rf,
        "share.coordinator.state.topic.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",
    }


def _free_ports(count: int) -> list[int]:
    """``count`` distinct ports free on 127.0.0.1 right now (held together so none repeats)."""
    held = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            held.append(s)
        return [s.getsockname()[1] for s in held]
    finally:
        for s in held:
            s.close()


def _metadata_brokers(port: int, timeout: float = 2.0) -> int:
    """How many brokers node at ``port`` lists in a Metadata v12 answer (raises OSError when it does not answer)."""
    from kafkamock import codec

    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(codec.encode_request("Metadata", 12, 1, "kafka-cluster-ready", {
            "topics": [], "allow_auto_topic_creation": False, "include_topic_authorized_operations": False}))
        head = _recv(sock, 4)
        frame = head + _recv(sock, struct.unpack(">i", head)[0])
    _, body = codec.decode_response("Metadata", 12, frame)
    return len(body.brokers)


def _recv(sock: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise ConnectionError("closed")
        out += chunk
    return out


def _call(port: int, api: str, version: int, body: dict, timeout: float = 5.0):
    from kafkamock import codec

    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(codec.encode_request(api, version, 1, "kafka-cluster-ready", body))
        head = _recv(sock, 4)
        frame = head + _recv(sock, struct.unpack(">i", head)[0])
    return codec.decode_response(api, version, frame)[1]


def wait_for_partitions(bootstrap_servers: str, topic: str, partitions: int, timeout: float = 20.0) -> None:
    """Until every partition of ``topic`` has a leader that answers ListOffsets for it: Kafka creates partitions
    after CreateTopics answers, and names a leader in Metadata before that leader can serve it."""
    ports = [int(a.rsplit(":", 1)[1]) for a in bootstrap_servers.split(",")]
    deadline = time.monotonic() + timeout
    seen: object = None
    while True:
        try:
            md = _call(ports[0], "Metadata", 12, {"topics": [{"name": topic, "topic_id": uuid.UUID(int=0)}],
                                                  "allow_auto_topic_creation": False,
                                                  "include_topic_authorized_operations": False})
            by_node = {b.node_id: b.port for b in md.brokers}
            (t,) = md.topics
            seen = [t.error_code, [(p.partition_index, p.leader_id, p.error_code) for p in t.partitions]]
            ready = t.error_code == 0 and len(t.partitions) == partitions and all(
                p.leader_id in by_node and _call(by_node[p.leader_id], "ListOffsets", 7, {
                    "replica_id": -1, "isolation_level": 0, "topics": [{"name": topic, "partitions": [
                        {"partition_index": p.partition_index, "timestamp": -1, "current_leader_epoch": -1}]}]}
                ).topics[0].partitions[0].error_code == 0 for p in t.partitions)
        except (OSError, ValueError) as exc:
            ready, seen = False, exc
        if ready:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"the {partitions} partition(s) of {topic} are not served after {timeout:.0f}s "
                               f"(last seen: {seen!r})")
        time.sleep(0.05)


class KafkaNode:
    """One JVM: broker and controller of node ``node_id``."""

    def __init__(self, node_id: int, port: int, controller_port: int, workdir: Path):
        self.node_id, self.port, self.controller_port = node_id, port, controller_port
        self.workdir = workdir
        self.data_dir = workdir / "data"
        self.properties = workdir / "server.properties"
        self.process: subprocess.Popen | None = None

    @property
    def log_path(self) -> Path:
        return self.workdir / "server.log"

    def log_tail(self, lines: int = 40) -> str:
        text = ""
        for path in (self.workdir / "stdout.log", self.log_path):
            if path.exists():
                text += path.read_text(errors="replace")
        return "\n".join(text.splitlines()[-lines:])


class KafkaCluster:
    """A KRaft cluster of ``nodes`` combined broker+controller nodes (ids 1..nodes) of Apache Kafka 4.3.1."""

    def __init__(self, workdir: str | Path | None = None, nodes: int = 1, config: Mapping[str, Any] | None = None,
                 features: Mapping[str, int] | None = None):
        if nodes < 1:
            raise ValueError("a cluster has at least one node")
        self._owned_dir = workdir is None
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="kafka-4.3.1-")).resolve()
        self.config = {**test_defaults(nodes), **{k: str(v) for k, v in (config or {}).items()}}
        self.features = dict(features or {})      # feature levels set at format time (transaction.version=1...)
        self.cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        ports = _free_ports(2 * nodes)
        self.nodes = [KafkaNode(k + 1, ports[2 * k], ports[2 * k + 1], self.workdir / f"node-{k + 1}")
                      for k in range(nodes)]
        self._classpath: str | None = None
        self._java: str | None = None

    # -- the addresses clients use ------------------------------------------------------------------------------

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"127.0.0.1:{n.port}" for n in self.nodes)

    @property
    def version(self) -> str:
        return KAFKA_VERSION

    # -- start and stop -----------------------------------------------------------------------------------------

    def _server_properties(self, node: KafkaNode) -> str:
        voters = ",".join(f"{n.node_id}@127.0.0.1:{n.controller_port}" for n in self.nodes)
        base = {
            "process.roles": "broker,controller",
            "node.id": str(node.node_id),
            "controller.quorum.voters": voters,
            "listeners": f"PLAINTEXT://127.0.0.1:{node.port},CONTROLLER://127.0.0.1:{node.controller_port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs": str(node.data_dir),
        }
        return "".join(f"{k}={v}\n" for k, v in {**base, **self.config}.items())

    def _java_command(self, main: str, *args: str, node: KafkaNode) -> list[str]:
        assert self._java and self._classpath
        return [self._java, *JVM_ARGS, f"-Dkafka.logs.dir={node.workdir}",
                f"-Dlog4j2.configurationFile={LOG_CONFIG}", "-cp", self._classpath, main, *args]

    def start(self) -> KafkaCluster:
        found = find_java()
        if found is None:
            raise FileNotFoundError("Kafka 4.3.1 needs a JDK 17 (java on PATH or in $JAVA_HOME/bin)")
        self._java = found[0]
        self._classpath = os.pathsep.join(str(j) for j in _fetch_jars(CACHE, "kafka"))
        formats = []
        for node in self.nodes:
            node.workdir.mkdir(parents=True, exist_ok=True)
            node.properties.write_text(self._server_properties(node))
            # --cluster-id=ID: a base64 id may start with '-', which the tool would take for an option.
            formats.append((node, subprocess.Popen(
                self._java_command("kafka.tools.StorageTool", "format", f"--cluster-id={self.cluster_id}", "-c",
                                   str(node.properties), "--ignore-formatted",
                                   *(arg for name, level in self.features.items()
                                     for arg in ("--feature", f"{name}={level}")), node=node),
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)))
        for node, proc in formats:
            out, _ = proc.communicate(timeout=START_TIMEOUT)
            if proc.returncode != 0:
                raise RuntimeError(f"formatting Kafka node {node.node_id} failed:\n{out[-3000:]}")
        for node in self.nodes:
            with (node.workdir / "stdout.log").open("wb") as out:
                node.process = subprocess.Popen(self._java_command("kafka.Kafka", str(node.properties), node=node),
                                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def wait_ready(self, timeout: float = START_TIMEOUT) -> None:
        """Until every node answers Metadata naming every node (polling the processes: no event to wait on)."""
        deadline = time.monotonic() + timeout
        pending = list(self.nodes)
        while pending:
            node = pending[0]
            assert node.process is not None
            if node.process.poll() is not None:
                raise RuntimeError(f"Kafka node {node.node_id} exited with {node.process.returncode}:\n"
                                   f"{node.log_tail()}")
            try:
                if _metadata_brokers(node.port) == len(self.nodes):
                    pending.pop(0)
                    continue
            except (OSError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"Kafka node {node.node_id} not ready after {timeout:.0f}s:\n{node.log_tail()}")
            time.sleep(0.1)

    def stop(self) -> None:
        """Kill every node (the cluster is thrown away, so no controlled shutdown) and remove an owned work dir."""
        for node in self.nodes:
            if node.process is not None and node.process.poll() is None:
                os.killpg(node.process.pid, signal.SIGKILL)
        for node in self.nodes:
            if node.process is not None:
                node.process.wait(timeout=30)
                node.process = None
        if self._owned_dir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> KafkaCluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def logs(self, lines: int = 60) -> str:
        """The tail of every node's log, for a failure report."""
        return "\n".join(f"--- Kafka node {n.node_id} ---\n{n.log_tail(lines)}" for n in self.nodes)


def start_kafka(nodes: int = 1, config: Mapping[str, Any] | None = None,
                workdir: str | Path | None = None) -> KafkaCluster:
    return KafkaCluster(workdir, nodes, config).start()


# kafkamock's own settings that stand for something a Kafka cluster fixes at format time.
KAFKAMOCK_FEATURE_CONFIGS = {"kafkamock.transaction.version": "transaction.version"}


class ReferenceClusters:
    """The Kafka 4.3.1 clusters of a test session: one per (nodes, broker configs, features), started on first use
    and kept, since a start costs seconds. Tests sharing one use names of their own (topics, groups, ids).

    ``for_kafkamock_options`` maps the options a test gives kafkamock (its ``kafkamock`` marker: ``brokers``,
    ``config``) to the cluster Kafka needs for the same test: kafkamock's own configs that Kafka fixes at format
    time become features, other ``kafkamock.*`` configs have no counterpart and are left out."""

    def __init__(self) -> None:
        self._clusters: dict[tuple, KafkaCluster] = {}

    def get(self, nodes: int = 1, config: Mapping[str, Any] | None = None,
            features: Mapping[str, int] | None = None, own: str | None = None) -> KafkaCluster:
        """The cluster for these settings; ``own`` names a cluster of its own (for steps that would change what
        other tests rely on, such as deleting an internal topic)."""
        settings = {k: str(v) for k, v in (config or {}).items()}
        key = (nodes, tuple(sorted(settings.items())), tuple(sorted((features or {}).items())), own)
        if key not in self._clusters:
            self._clusters[key] = KafkaCluster(nodes=nodes, config=settings, features=features).start()
        return self._clusters[key]

    def for_kafkamock_options(self, options: Mapping[str, Any]) -> KafkaCluster:
        config, features = {}, {}
        for name, value in (options.get("config") or {}).items():
            if name in KAFKAMOCK_FEATURE_CONFIGS:
                features[KAFKAMOCK_FEATURE_CONFIGS[name]] = int(value)
            elif not name.startswith("kafkamock."):
                config[name] = value
        return self.get(options.get("brokers", 1), config, features)

    def close(self) -> None:
        for cluster in self._clusters.values():
            cluster.stop()
        self._clusters.clear()


__all__: Iterable[str] = ["KAFKA_VERSION", "KafkaCluster", "ReferenceClusters", "start_kafka", "test_defaults",
                          "wait_for_partitions"]
