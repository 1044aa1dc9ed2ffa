"""The differential suite's harness: one scenario, two brokers (Apache Kafka 4.3.1 and kafkamock), every field
compared.

A scenario is a function of a ``Run``. It drives one broker through ``run.call`` (a raw request through kafkamock's
codec; the decoded response is observed) or any real client, and says what it saw with ``run.see(label, value)``.
``Differ.check`` runs it on Kafka and on kafkamock at once, with the same topic and group names, normalises what must
differ between two clusters (``normalise``), flattens both into ``path -> value`` leaves and compares them. A
difference fails the scenario unless ``tests/differential/known.toml`` lists it with its reason.

Normalising keeps equality: each cluster-made id (topic ids, member ids, producer ids, session ids, ports...) is
replaced by a placeholder numbered by first appearance (``<uuid#1>``, ``<member#2>``), so "the same id twice" is
still compared while the ids themselves are not. Fields that only measure the broker (throttle times) are dropped.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
import socket
import struct
import time
import tomllib
import uuid
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafkamock import codec
from kafkamock.records import decode_batches
from support.polling import wait_until

KNOWN_FILE = Path(__file__).resolve().parents[1] / "differential" / "known.toml"
# The last figure, for tools/docs_differential_figure.py.
REPORT_FILE = Path(__file__).resolve().parents[2] / ".cache" / "differential.json"

# Fields dropped before comparing: they measure the broker, not its behaviour.
DROPPED = frozenset({"throttle_time_ms"})
# Fields whose values are made by the cluster: replaced by placeholders of their kind, numbered by first appearance
# (values meaning "none" stay as they are: NO_ID).
PLACEHOLDER_KIND = {
    "cluster_id": "cluster", "member_id": "member", "leader": "member", "producer_id": "producer",
    "session_id": "session", "memberid": "member", "instance_id": None, "transactional_producer_id": "producer",
    "port": "port", "leader_id_and_epoch": None, "coordinator_key": None, "pending_member_id": "member",
}
NO_ID = {"producer": (None, -1), "session": (None, 0), "port": (None, -1, 0)}
NO_ID_DEFAULT = (None, "", -1, 0)
# Epoch milliseconds within a day of now inside a text (a time window in an error message) read as "<now>".
NOW_IN_TEXT = re.compile(r"\b1[0-9]{12}\b")
TIME_FIELDS = frozenset({"log_append_time_ms", "transaction_start_time_ms", "last_timestamp",
                         "current_state_timestamp", "max_timestamp", "timestamp_ms", "first_timestamp",
                         "last_timestamp_ms", "lock_timestamp"})
UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class ScenarioError(AssertionError):
    """Unlisted differences between Kafka and kafkamock."""


# -- a connection speaking kafkamock's codec ---------------------------------------------------------------------

class Conn:
    """One TCP connection to a node; requests framed with kafkamock's codec."""

    def __init__(self, address: str, timeout: float = 15.0):
        host, port = address.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.correlation_id = 0

    def close(self) -> None:
        self.sock.close()

    def _recv(self, n: int) -> bytes:
        out = bytearray()
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise ConnectionError(f"closed by the broker after {len(out)} of {n} bytes")
            out += chunk
        return bytes(out)

    def send(self, api: str, version: int, body: Mapping[str, Any], client_id: str | None = "differential") -> int:
        self.correlation_id += 1
        self.sock.sendall(codec.encode_request(api, version, self.correlation_id, client_id, body))
        return self.correlation_id

    def receive(self, api: str, version: int):
        head = self._recv(4)
        frame = head + self._recv(struct.unpack(">i", head)[0])
        header, body = codec.decode_response(api, version, frame)
        return body

    def call(self, api: str, version: int, body: Mapping[str, Any], client_id: str | None = "differential"):
        self.send(api, version, body, client_id)
        return self.receive(api, version)

    def send_frame(self, frame: bytes) -> None:
        self.sock.sendall(frame)

    def closed(self, timeout: float = 10.0) -> str:
        """``"closed"`` when the broker closes the connection, else ``"answered"`` (bytes came) or ``"open"``."""
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(1)
        except (ConnectionResetError, BrokenPipeError):
            return "closed"
        except TimeoutError:
            return "open"
        return "closed" if data == b"" else "answered"


# -- the two brokers ---------------------------------------------------------------------------------------------

@dataclass
class Target:
    """A running broker under comparison: ``name`` is ``kafka`` or ``kafkamock``."""

    name: str
    addresses: list[str]
    handle: Any                         # KafkaCluster, or kafkamock's BrokerHandle
    cache: dict[str, Any] = field(default_factory=dict)

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(self.addresses)

    @property
    def ports(self) -> list[int]:
        return [int(a.rsplit(":", 1)[1]) for a in self.addresses]


# -- one scenario on one broker ----------------------------------------------------------------------------------

class Run:
    """What a scenario sees on one broker. Names (``run.name``) are the same on both brokers."""

    def __init__(self, target: Target, scenario_id: str, token: str):
        self.target = target
        self.scenario_id = scenario_id
        self.token = token
        self.observations: list[tuple[str, Any]] = []
        self._conns: dict[int, Conn] = {}
        self._labels: dict[str, int] = {}

    # names and connections

    def name(self, kind: str = "t") -> str:
        """A topic/group/transactional id unique to this scenario (and this suite run), equal on both brokers."""
        return f"{kind}-{self.token}"

    def conn(self, node: int = 0) -> Conn:
        """The scenario's connection to node ``node`` (index into the cluster's nodes)."""
        if node not in self._conns:
            self._conns[node] = Conn(self.target.addresses[node])
        return self._conns[node]

    def new_conn(self, node: int = 0) -> Conn:
        """A connection of its own (closed with the run)."""
        conn = Conn(self.target.addresses[node])
        self._conns[-1 - len(self._conns)] = conn
        return conn

    def close(self) -> None:
        for conn in self._conns.values():
            conn.close()
        self._conns.clear()

    # observing

    def see(self, label: str, value: Any) -> Any:
        """Record what the scenario saw; labels repeat as ``label#2``, ``label#3``."""
        n = self._labels.get(label, 0) + 1
        self._labels[label] = n
        self.observations.append((label if n == 1 else f"{label}#{n}", plain(value)))
        return value

    def call(self, api: str, version: int, body: Mapping[str, Any], *, label: str | None = None, node: int = 0,
             conn: Conn | None = None, see: bool = True, client_id: str | None = "differential"):
        """Send one request and return its decoded response; observed as ``label`` (default ``API vN``)."""
        response = (conn or self.conn(node)).call(api, version, body, client_id)
        if see:
            self.see(label or f"{api} v{version}", response)
        return response

    # set-up helpers (not observed unless asked)

    def create_topic(self, name: str, partitions: int = 1, replication_factor: int = 1,
                     config: Mapping[str, Any] | None = None, *, see: bool = False) -> Any:
        response = self.call("CreateTopics", 7, {
            "topics": [{"name": name, "num_partitions": partitions, "replication_factor": replication_factor,
                        "assignments": [], "configs": [{"name": k, "value": str(v)} for k, v in (config or {}).items()]}],
            "timeout_ms": 30000, "validate_only": False}, see=see, label="CreateTopics")
        error = response.topics[0].error_code
        if error:
            raise AssertionError(f"{self.target.name}: CreateTopics {name}: error {error} "
                                 f"{response.topics[0].error_message}")
        self.wait_for_leaders(name, partitions)
        return response

    def wait_for_leaders(self, topic: str, partitions: int, timeout: float = 20.0) -> None:
        """Until every partition's leader answers ListOffsets for it (Kafka propagates metadata, then creates the
        partition, asynchronously; kafkamock does both at once)."""
        from support.kafka_cluster import wait_for_partitions

        try:
            wait_for_partitions(self.target.bootstrap_servers, topic, partitions, timeout)
        except TimeoutError as exc:
            raise AssertionError(f"{self.target.name}: {exc}") from None

    def produce(self, topic: str, partition: int, records: Iterable[Mapping[str, Any]], *, version: int = 11,
                acks: int = -1, transactional_id: str | None = None, see: bool = True, label: str | None = None,
                node: int = 0, **batch: Any) -> Any:
        """Produce one batch (``kafkamock.records.encode_batch`` keywords in ``batch``)."""
        from kafkamock.records import encode_batch

        data = encode_batch(list(records), **batch)
        return self.call("Produce", version, {
            "transactional_id": transactional_id, "acks": acks, "timeout_ms": 10000,
            "topic_data": [{"name": topic, "partition_data": [{"index": partition, "records": data}]}]},
            see=see, label=label, node=node)

    def until(self, what: str, probe: Callable[[], Any], timeout: float = 30.0, interval: float = 0.05) -> Any:
        """Poll ``probe`` until it returns something truthy (a broker-side event with no notification)."""
        return wait_until(probe, timeout, f"{self.target.name}: {what}", interval=interval)


# -- normalising and comparing -----------------------------------------------------------------------------------

def plain(value: Any) -> Any:
    """Decoded messages and records as plain JSON-like data (bytes as text or hex; batches decoded)."""
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if k == "records" and isinstance(v, bytes | bytearray | memoryview):
                out[k] = records_view(bytes(v))
            else:
                out[k] = plain(v)
        return out
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, bytes | bytearray | memoryview):
        b = bytes(value)
        try:
            return b.decode()
        except UnicodeDecodeError:
            return "0x" + b.hex()
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def records_view(data: bytes) -> Any:
    """A fetched record set as its batches and records (CRC and sizes dropped: they follow from the rest)."""
    if not data:
        return []
    try:
        batches = decode_batches(data)
    except Exception as exc:  # a broken record set is itself an observation
        return f"<undecodable: {exc}>"
    return [{
        "base_offset": b.base_offset, "last_offset": b.last_offset, "magic": b.magic, "compression": b.compression,
        "timestamp_type": b.timestamp_type, "producer_id": b.producer_id, "producer_epoch": b.producer_epoch,
        "base_sequence": b.base_sequence, "transactional": b.is_transactional, "control": b.is_control,
        "partition_leader_epoch": b.partition_leader_epoch,
        "records": [{"offset": r.offset, "timestamp": r.timestamp, "key": plain(r.key), "value": plain(r.value),
                     "headers": [[k, plain(v)] for k, v in r.headers],
                     **({"control": [r.control_type, plain(r.control_value)]} if r.control_type else {})}
                    for r in b.records]} for b in batches]


class Normaliser:
    """Per run: placeholders numbered by first appearance, so equal ids stay equal."""

    def __init__(self, target: Target):
        self.ports = set(target.ports)
        self.numbers: dict[tuple[str, Any], str] = {}
        self.counters: dict[str, itertools.count] = {}

    def placeholder(self, kind: str, value: Any) -> str:
        key = (kind, value)
        if key not in self.numbers:
            n = next(self.counters.setdefault(kind, itertools.count(1)))
            self.numbers[key] = f"<{kind}#{n}>"
        return self.numbers[key]

    def value(self, key: str | None, v: Any) -> Any:
        if isinstance(v, dict):
            return {k: self.value(k, x) for k, x in v.items() if k not in DROPPED}
        if isinstance(v, list):
            return [self.value(key, x) for x in v]
        if key is None:
            return v
        kind = PLACEHOLDER_KIND.get(key)
        if kind and v not in NO_ID.get(kind, NO_ID_DEFAULT) and not (kind == "member" and v == "-1"):
            return self.placeholder(kind, v)
        if key in TIME_FIELDS and isinstance(v, int) and v > 0:
            return "<time>"
        if isinstance(v, str) and UUID_RE.fullmatch(v) and v != "00000000-0000-0000-0000-000000000000":
            return self.placeholder("uuid", v)
        if key.endswith("topic_id") and isinstance(v, str) and v != "00000000-0000-0000-0000-000000000000":
            return self.placeholder("uuid", v)
        if isinstance(v, str) and NOW_IN_TEXT.search(v):
            now = time.time() * 1000
            v = NOW_IN_TEXT.sub(lambda m: "<now>" if abs(int(m.group()) - now) < 86_400_000 else m.group(), v)
        if isinstance(v, str) and self.ports:
            for port in self.ports:
                if f":{port}" in v:
                    v = v.replace(f":{port}", f":{self.placeholder('port', port)}")
        return v


def flatten(value: Any, path: str = "") -> dict[str, Any]:
    """``{"a.b[0].c": leaf}``; an empty list or dict is a leaf of its own."""
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(flatten(v, f"{path}.{k}" if path else k))
        return out
    if isinstance(value, list) and value:
        out = {}
        for i, v in enumerate(value):
            out.update(flatten(v, f"{path}[{i}]"))
        return out
    return {path: value}


@functools.cache
def _glob(pattern: str) -> re.Pattern:
    return re.compile(re.escape(pattern).replace(r"\*", ".*").replace(r"\?", "."))


def glob_match(pattern: str, text: str) -> bool:
    """``*`` (any run) and ``?`` (one character) are the only wildcards: brackets in scenario ids and field paths
    (``test_x[log.dirs]``, ``a[0]``) are literal."""
    return _glob(pattern).fullmatch(text) is not None


@dataclass(frozen=True)
class Known:
    scenario: str | tuple[str, ...]   # a glob, or several
    field: str | tuple[str, ...]
    reason: str
    kafka: Any = None           # when set, the difference is listed only for this value on Kafka's side
    kafkamock: Any = None

    def matches(self, scenario: str, path: str, kafka: Any, mock: Any) -> bool:
        scenarios = (self.scenario,) if isinstance(self.scenario, str) else self.scenario
        fields = (self.field,) if isinstance(self.field, str) else self.field
        if not any(glob_match(s, scenario) for s in scenarios) or not any(glob_match(f, path) for f in fields):
            return False
        return (self.kafka is None or self.kafka == kafka) and (self.kafkamock is None or self.kafkamock == mock)


def load_known(path: Path = KNOWN_FILE) -> list[Known]:
    """The allow-list: ``[[difference]]`` tables with ``scenario``, ``field`` (globs) and ``reason``."""
    if not path.exists():
        return []
    data = tomllib.loads(path.read_text())
    out = []
    for entry in data.get("difference", []):
        missing = {"scenario", "field", "reason"} - set(entry)
        if missing or not str(entry.get("reason", "")).strip():
            raise ValueError(f"{path}: an entry needs scenario, field and a reason: {entry}")
        unknown = set(entry) - {"scenario", "field", "reason", "kafka", "kafkamock"}
        if unknown:
            raise ValueError(f"{path}: unknown keys {sorted(unknown)} in {entry}")
        for key in ("scenario", "field"):
            if isinstance(entry[key], list):
                entry[key] = tuple(entry[key])
        out.append(Known(**entry))
    return out


MISSING = "<absent>"


def _fold_absent(one: dict[str, Any], other: dict[str, Any]) -> None:
    """Where ``one`` has a leaf ``path: None`` and ``other`` has a whole structure under ``path``, compare the
    structure as one field (``path``: absent on one side), so a missing entry counts once, not once per leaf."""
    for path, value in list(one.items()):
        if value is None and path not in other:
            below = [p for p in other if p.startswith(path + ".") or p.startswith(path + "[")]
            if below:
                for p in below:
                    del other[p]
                other[path] = "<present>"


@dataclass
class Comparison:
    scenario: str
    fields: int = 0
    equal: int = 0
    listed: list[tuple[str, Any, Any, Known]] = field(default_factory=list)
    unlisted: list[tuple[str, Any, Any]] = field(default_factory=list)


def compare(scenario: str, kafka: list[tuple[str, Any]], mock: list[tuple[str, Any]],
            known: list[Known]) -> Comparison:
    left = flatten({label: value for label, value in kafka})
    right = flatten({label: value for label, value in mock})
    _fold_absent(left, right)
    _fold_absent(right, left)
    result = Comparison(scenario)
    for path in sorted(set(left) | set(right), key=lambda p: (p not in left, list(left).index(p) if p in left else 0)):
        a, b = left.get(path, MISSING), right.get(path, MISSING)
        result.fields += 1
        if a == b:
            result.equal += 1
            continue
        entry = next((k for k in known if k.matches(scenario, path, a, b)), None)
        if entry is not None:
            result.listed.append((path, a, b, entry))
        else:
            result.unlisted.append((path, a, b))
    return result


@dataclass
class Stats:
    """The whole suite's figure."""

    scenarios: int = 0
    fields: int = 0
    equal: int = 0
    listed: int = 0
    unlisted: int = 0
    failed: list[str] = field(default_factory=list)
    used: set[int] = field(default_factory=set)

    def add(self, c: Comparison, known: list[Known]) -> None:
        self.scenarios += 1
        self.fields += c.fields
        self.equal += c.equal
        self.listed += len(c.listed)
        self.unlisted += len(c.unlisted)
        if c.unlisted:
            self.failed.append(c.scenario)
        for _, _, _, entry in c.listed:
            self.used.add(known.index(entry))

    def to_dict(self) -> dict:
        return {"scenarios": self.scenarios, "fields": self.fields, "equal": self.equal, "listed": self.listed,
                "unlisted": self.unlisted, "failed": list(self.failed), "used": sorted(self.used)}

    def merge(self, part: Mapping[str, Any]) -> None:
        """Add another process's figure (a pytest-xdist worker's) to this one."""
        for key in ("scenarios", "fields", "equal", "listed", "unlisted"):
            setattr(self, key, getattr(self, key) + part[key])
        self.failed.extend(part["failed"])
        self.used.update(part["used"])

    def line(self, known: list[Known]) -> str:
        pct = 100.0 * self.equal / self.fields if self.fields else 100.0
        return (f"differential: {self.scenarios} scenarios, {self.fields} fields compared, {self.equal} equal "
                f"({pct:.2f}%); {self.listed} listed differences ({len(known)} allow-list entries, "
                f"{len(known) - len(self.used)} unused), {self.unlisted} unlisted in {len(self.failed)} scenarios")



class DifferentialFigure:
    """The suite's figure as a session figure (support/session_figures.py): the allow-list and the counts; its
    report is the terminal line and ``.cache/differential.json``."""

    def __init__(self) -> None:
        self.known = load_known()
        self.stats = Stats()

    def to_dict(self) -> dict:
        return self.stats.to_dict()

    def merge(self, part: Mapping[str, Any]) -> None:
        self.stats.merge(part)

    def report(self, write_line: Callable[[str], None]) -> None:
        stats, known = self.stats, self.known
        line = stats.line(known)
        write_line(line)
        unused = [k for i, k in enumerate(known) if i not in stats.used]
        REPORT_FILE.parent.mkdir(parents=True, exist_ok=True)
        REPORT_FILE.write_text(json.dumps({
            "scenarios": stats.scenarios, "fields": stats.fields, "equal": stats.equal, "listed": stats.listed,
            "unlisted": stats.unlisted, "failed": stats.failed, "allow_list": len(known),
            "unused": [{"scenario": k.scenario, "field": k.field} for k in unused], "line": line}, indent=1))

def report(c: Comparison, limit: int = 40) -> str:
    lines = [f"{len(c.unlisted)} unlisted difference(s) in {c.scenario} (Kafka 4.3.1 | kafkamock):"]
    for path, a, b in c.unlisted[:limit]:
        lines.append(f"  {path}: {a!r} | {b!r}")
    if len(c.unlisted) > limit:
        lines.append(f"  ... and {len(c.unlisted) - limit} more")
    lines.append("List a difference with its reason in tests/differential/known.toml only when kafkamock cannot or "
                 "should not answer as Kafka does.")
    return "\n".join(lines)


Scenario = Callable[[Run], None]


class Differ:
    """Runs scenarios on a pair of targets and keeps the suite's figure."""

    def __init__(self, targets: Callable[..., tuple[Target, Target]], known: list[Known], stats: Stats):
        self._targets, self.known, self.stats = targets, known, stats

    def check(self, scenario_id: str, scenario: Scenario, *, nodes: int = 1,
              config: Mapping[str, Any] | None = None, own: str | None = None) -> Comparison:
        """Run ``scenario`` on Kafka, then on kafkamock, and compare. ``nodes``/``config`` pick the broker pair
        (shared by the scenarios asking for the same); ``own`` names a pair of its own, for scenarios whose steps
        would change what others rely on (deleting an internal topic)."""
        kafka, mock = self._targets(nodes, dict(config or {}), own)
        token = f"{re.sub(r'[^A-Za-z0-9]+', '-', scenario_id).strip('-')[:80]}-{uuid.uuid4().hex[:6]}"

        def on(target: Target) -> list[tuple[str, Any]]:
            run = Run(target, scenario_id, token)
            try:
                scenario(run)
            finally:
                run.close()
            norm = Normaliser(target)
            return [(label, norm.value(None, value)) for label, value in run.observations]

        # The two brokers are independent clusters under the same names: the scenario runs on both at once (most of
        # its time is spent waiting on a broker), and the first failure is reported with the broker it failed on.
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix="differential") as pool:
            futures = [(target, pool.submit(on, target)) for target in (kafka, mock)]
        seen = []
        for target, future in futures:
            exc = future.exception()
            if exc is not None:
                raise AssertionError(f"scenario {scenario_id} failed on {target.name}: "
                                     f"{type(exc).__name__}: {exc}") from exc
            seen.append(future.result())
        result = compare(scenario_id, seen[0], seen[1], self.known)
        self.stats.add(result, self.known)
        if result.unlisted:
            raise ScenarioError(report(result))
        return result


__all__ = ["Comparison", "Conn", "Differ", "Known", "Run", "ScenarioError", "Stats", "Target", "compare", "flatten",
           "load_known", "plain"]
