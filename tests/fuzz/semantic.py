"""The semantic fuzzer: well-encoded requests with hostile values, against ``kafkamock serve`` in its own process.

Where the byte fuzzer (``harness.py``) breaks frames, this one keeps every request decodable and makes its *values*
hostile: for every API and version the broker advertises, a body generated from the message schema with extreme
and negative integers, empty, 32767-byte, unicode and NUL strings, nulls where nullable, empty, long and repeated
arrays, the names and ids of things that exist (topics, internal topics, groups, members, producers) and of things
that do not, and record batches with valid CRCs around hostile headers, keys and producer ids.

The oracles, after every case (``Fuzzer.run``):

- the answer decodes and carries the request's correlation id, or the broker closed the connection and logged a
  WARNING naming the case's client id, or the request legitimately parks (a long poll, a join round: the case
  connection is dropped after ``PARK_S``);
- the broker's log has no ERROR line and no traceback;
- another connection is answered meanwhile: a probe connection's ApiVersions, sent right after the case, comes
  back within ``PROBE_LIMIT_S`` of the same probe sent just before the case (so a machine busy with other work
  does not count against the broker), and a slow case is tried once more before it counts;
- every ``ROUND_EVERY`` cases a real client (librdkafka) creates a topic, produces, consumes and commits;
- at the end the broker restarts on the same data directory and passes that round again.

What the fuzzer holds back (``keep_serviceable``) is what would make Apache Kafka itself unusable for the next
round, not a kafkamock weakness: broker-wide config changes, client quotas and feature updates are sent with
validate-only, and UnregisterBroker never names a live node.
"""

from __future__ import annotations

import re
import socket
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from random import Random
from typing import Any

from fuzz.harness import read_frame
from support.differential import Conn

from kafkamock import codec, records
from kafkamock.schema import DEFAULT_STRUCT, ArrayType, FieldSpec, MessageSpec, StructRef, StructSpec

REGISTRY = codec.default_registry()
PARK_S = 0.4                # a case with no answer by then is parked in the broker (a long poll, a join)
PROBE_LIMIT_S = 0.1         # another connection's ApiVersions, answered within this more while the case is in
ROUND_EVERY = 300
MAX_ELEMENTS = 400          # array elements in one request, all arrays together
TS = 1_700_000_000_000
INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1), "int16": (-(2**15), 2**15 - 1), "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1), "uint16": (0, 2**16 - 1), "uint32": (0, 2**32 - 1),
}
ERROR_LINE = re.compile(r" (ERROR|CRITICAL) |Traceback \(most recent call last\)")


@dataclass
class World:
    """Names and ids that exist on the broker, so that hostile values reach past the first lookup."""

    topics: list[str] = field(default_factory=list)
    topic_ids: list[uuid.UUID] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    transactional_ids: list[str] = field(default_factory=list)
    producer_ids: list[int] = field(default_factory=list)
    member_ids: list[str] = field(default_factory=list)
    node_ids: list[int] = field(default_factory=lambda: [1])


class Generator:
    """Request bodies drawn from the schemas with ``rng``: every present field, hostile more often than not."""

    def __init__(self, rng: Random, world: World):
        self.rng, self.world = rng, world
        self.elements = 0

    def body(self, spec: MessageSpec, version: int) -> dict:
        self.elements = 0
        return self.struct(spec.struct, version)

    def struct(self, struct: StructSpec, version: int) -> dict:
        return {f.key: self.field(f, version) for f in struct.fields}

    def field(self, f: FieldSpec, version: int) -> Any:
        if not f.present(version) or (f.tagged(version) and self.rng.random() < 0.5):
            return _default(f)
        if f.nullable(version) and self.rng.random() < 0.15:
            return None
        return self.value(f.type, f, version)

    def value(self, ftype, f: FieldSpec, version: int) -> Any:
        rng = self.rng
        if isinstance(ftype, ArrayType):
            n = rng.choices([0, 1, 2, 3, rng.randint(20, 200)], weights=[20, 40, 15, 10, 5])[0]
            n = max(0, min(n, MAX_ELEMENTS - self.elements))
            self.elements += n
            items = [self.value(ftype.element, f, version) for _ in range(n)]
            if items and rng.random() < 0.15:
                items.append(items[0])                     # a duplicate (a repeated topic, partition, member)
            return items
        if isinstance(ftype, StructRef):
            return self.struct(ftype.struct, version)
        kind = ftype.kind
        if kind in INT_RANGES:
            return self.integer(kind, f.name)
        if kind == "bool":
            return rng.random() < 0.5
        if kind == "float64":
            return rng.choice([0.0, -1.0, 1e308, -1e308, float("inf"), float("nan"), rng.random()])
        if kind == "string":
            return self.string(f.name)
        if kind == "bytes":
            return rng.choice([b"", bytes(rng.randrange(256) for _ in range(rng.randint(1, 64))), b"\0" * 65536])
        if kind == "records":
            return self.batch()
        if kind == "uuid":
            return rng.choice([uuid.UUID(int=0), uuid.uuid4(), uuid.UUID(int=(1 << 128) - 1),
                               *(self.world.topic_ids or [uuid.UUID(int=1)])])
        raise TypeError(f"{f.name}: unknown type {ftype}")

    def integer(self, kind: str, name: str) -> int:
        low, high = INT_RANGES[kind]
        rng = self.rng
        lowered = name.lower()
        known: list[int] = []
        if "partition" in lowered or "index" in lowered:
            known = [0, 1, 2, 3, -1, -2]
        elif "producer" in lowered and "id" in lowered:
            known = [*self.world.producer_ids, -1, 0]
        elif "epoch" in lowered or "generation" in lowered:
            known = [-1, 0, 1, 2, 5]
        elif "node" in lowered or "broker" in lowered or "replica" in lowered or "leader" in lowered:
            known = [*self.world.node_ids, -1, 0, 2, 1000]
        elif "timeout" in lowered or "wait" in lowered or "ms" in lowered:
            known = [0, 1, 100, 1000]
        pick = rng.random()
        if known and pick < 0.4:
            return max(low, min(high, rng.choice(known)))
        if pick < 0.75:
            return rng.choice([0, -1, 1, low, high, low + 1, high - 1, max(low, min(high, 1 << 20))])
        return rng.randint(low, high)

    def string(self, name: str) -> str:
        rng = self.rng
        lowered = name.lower()
        known: list[str] = []
        if "topic" in lowered or lowered in ("name", "resource_name"):
            known = [*self.world.topics, "__consumer_offsets", "__transaction_state", "__share_group_state"]
        elif "group" in lowered:
            known = self.world.groups
        elif "transactional" in lowered:
            known = self.world.transactional_ids
        elif "member" in lowered:
            known = self.world.member_ids
        elif "regex" in lowered or "pattern" in lowered:
            known = ["(a+)+b", "(x+x+)+y", ".*", "[", "(?=a)", "a{1001}", "\\p{Greek}+"]
        if known and rng.random() < 0.5:
            return rng.choice(known)
        return rng.choice([
            "", "x" * 32767, "€" * 10922, "a" * 249, "a" * 250, "é🚀", "\0", "nul\0inside", "..", ".", "-",
            " ", "🚀" * 8191, "__internal", "UPPER", "with space", "/slash", "a" * rng.randint(1, 40),
        ])

    def batch(self) -> bytes | None:
        rng = self.rng
        kind = rng.choice(["valid", "valid", "headers", "producer", "garbage", "empty"])
        if kind == "garbage":
            return bytes(rng.randrange(256) for _ in range(rng.randint(1, 120)))
        if kind == "empty":
            return b""
        rows = []
        for i in range(rng.choice([1, 1, 3, 50])):
            headers = []
            if kind == "headers":
                headers = [(rng.choice(["", "h", "x" * 2000, "é🚀", "\0"]),
                            rng.choice([None, b"", b"v", b"\0" * 3000])) for _ in range(rng.choice([1, 3, 100]))]
            rows.append({"key": rng.choice([None, b"", b"k%d" % i]), "value": rng.choice([None, b"", b"v" * 100]),
                         "timestamp": rng.choice([TS, -1, 0, 2**63 - 1, -(2**63)]), "headers": headers})
        batch: dict[str, Any] = {"compression": rng.choice(["none", "gzip", "snappy", "lz4", "zstd"])}
        if kind == "producer":
            batch.update(producer_id=rng.choice([*self.world.producer_ids, 0, 2**63 - 1, 12345]),
                         producer_epoch=rng.choice([0, -1, 32767]), base_sequence=rng.choice([0, -1, 2**31 - 1]),
                         transactional=rng.random() < 0.5)
        try:
            return records.encode_batch(rows, **batch)
        except (ValueError, OverflowError, TypeError):
            return records.encode_batch([{"key": None, "value": b"v", "timestamp": TS}])


def _default(f: FieldSpec) -> Any:
    d = f.default
    if d is DEFAULT_STRUCT:
        assert isinstance(f.type, StructRef)
        return {g.key: _default(g) for g in f.type.struct.fields}
    return list(d) if isinstance(d, tuple) else d


def keep_serviceable(api: str, version: int, body: dict, world: World) -> dict:
    """Hold back what would make Kafka itself unusable for the next round (see the module's docstring)."""
    if api in ("AlterConfigs", "IncrementalAlterConfigs"):
        if any(r.get("resource_type") in (4, 8) for r in body.get("resources") or []):
            body["validate_only"] = True
    elif api == "AlterClientQuotas":
        body["validate_only"] = True
    elif api == "UpdateFeatures":
        if version >= 1:
            body["validate_only"] = True
        else:
            body["feature_updates"] = []
    elif api == "UnregisterBroker" and body.get("broker_id") in world.node_ids:
        body["broker_id"] = 1000
    return body


@dataclass
class Tally:
    cases: int = 0
    outcomes: Counter = field(default_factory=Counter)        # answered / closed / parked
    by_api: Counter = field(default_factory=Counter)
    slowest_probe_s: float = 0.0
    rounds: int = 0


class Fuzzer:
    """One broker process (``support.serve_process.ServeProcess`` with a data directory), its world, the oracles."""

    def __init__(self, broker, world: World, rng: Random):
        self.cluster, self.world, self.rng = broker, world, rng
        self.generator = Generator(rng, world)
        self.tally = Tally()
        self.served = served_versions(broker.bootstrap)
        self.probe = _connect(broker.bootstrap)
        self.log_seen = len(broker.log())

    def close(self) -> None:
        self.probe.close()

    def reconnect_probe(self) -> None:
        self.probe.close()
        self.probe = _connect(self.cluster.bootstrap)

    def pick(self) -> tuple[str, int, dict]:
        key, version = self.rng.choice(self.served)
        spec = REGISTRY.requests[key]
        body = keep_serviceable(spec.api_name, version, self.generator.body(spec, version), self.world)
        return spec.api_name, version, body

    def run(self, api: str, version: int, body: dict) -> str:
        """One case and its oracles; returns how it ended. Raises AssertionError with the case on a finding."""
        self.tally.cases += 1
        client_id = f"fuzz-{self.tally.cases}"
        correlation_id = self.rng.randint(0, 2**31 - 1)
        try:
            frame = codec.encode_request(api, version, correlation_id, client_id, body)
        except codec.EncodeError:
            return "unencodable"             # the generator's value does not fit the field (a string's limit)
        outcome, probe_s = self._send(frame, api, version, correlation_id)
        if probe_s > PROBE_LIMIT_S:         # once more before it counts: a busy machine can be slow once
            outcome, probe_s = self._send(frame, api, version, correlation_id)
        self.tally.slowest_probe_s = max(self.tally.slowest_probe_s, probe_s)
        if probe_s > PROBE_LIMIT_S:
            raise AssertionError(f"another connection waited {probe_s * 1000:.0f} ms longer during "
                                 f"{_show(api, version, body)}")
        written = self._new_log()
        bad = [line for line in written.splitlines() if ERROR_LINE.search(line)]
        if bad:
            raise AssertionError(f"the broker logged an error during {_show(api, version, body)}:\n"
                                 + "\n".join(written.splitlines()[-40:]))
        if outcome == "closed" and not any("WARNING" in line and f"client {client_id}," in line
                                           for line in written.splitlines()):
            raise AssertionError(f"the connection was closed without a WARNING naming why: {_show(api, version, body)}"
                                 f"\n{written[-3000:]}")
        self.tally.outcomes[outcome] += 1
        self.tally.by_api[api] += 1
        return outcome

    def _send(self, frame: bytes, api: str, version: int, correlation_id: int) -> tuple[str, float]:
        """Send the case on a connection of its own; how it ended, and how much longer the probe took while the
        broker had it than just before."""
        baseline = self._probe()
        with _connect(self.cluster.bootstrap) as sock:
            try:
                sock.sendall(frame)
            except (BrokenPipeError, ConnectionResetError):
                return "closed", self._probe() - baseline
            probe_s = self._probe() - baseline
            sock.settimeout(PARK_S)
            try:
                answer = read_frame(sock)
            except TimeoutError:
                return "parked", probe_s
            except (ConnectionError, EOFError):
                return "closed", probe_s
        try:
            header, _ = codec.decode_response(api, version, answer)
        except codec.DecodeError as exc:
            raise AssertionError(f"{api} v{version}: the answer does not decode: {exc}") from None
        assert header.correlation_id == correlation_id, f"{api} v{version}: correlation id {header.correlation_id}"
        return "answered", probe_s

    def _probe(self) -> float:
        started = time.monotonic()
        try:
            self.probe.sendall(codec.encode_request("ApiVersions", 3, 1, "probe", {
                "client_software_name": "probe", "client_software_version": "1"}))
            codec.decode_response("ApiVersions", 3, read_frame(self.probe))
        except (OSError, EOFError) as exc:
            raise AssertionError(f"the probe connection failed: {exc}") from None
        return time.monotonic() - started

    def _new_log(self) -> str:
        text = self.cluster.log()
        written, self.log_seen = text[self.log_seen:], len(text)
        return written

    def real_client_round(self) -> None:
        """librdkafka creates a topic, produces, consumes from a group and commits: the broker still serves."""
        from confluent_kafka import Consumer, Producer, TopicPartition
        from confluent_kafka.admin import AdminClient, NewTopic

        self.tally.rounds += 1
        topic = f"round-{self.tally.rounds}-{uuid.uuid4().hex[:6]}"
        admin = AdminClient({"bootstrap.servers": self.cluster.bootstrap})
        admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(timeout=20)
        producer = Producer({"bootstrap.servers": self.cluster.bootstrap, "enable.idempotence": True,
                             "linger.ms": 0, "message.timeout.ms": 20000})
        for i in range(20):
            producer.produce(topic, key=b"k%d" % i, value=b"v%d" % i)
        assert producer.flush(20) == 0, "the round's records were not all acknowledged"
        group = f"round-group-{self.tally.rounds}"
        consumer = Consumer({"bootstrap.servers": self.cluster.bootstrap, "group.id": group,
                             "auto.offset.reset": "earliest", "enable.auto.commit": False,
                             "fetch.wait.max.ms": 50})
        try:
            consumer.subscribe([topic])
            got: list[bytes] = []
            deadline = time.monotonic() + 30
            while len(got) < 20 and time.monotonic() < deadline:
                for m in consumer.consume(20, timeout=0.5):
                    assert m.error() is None, m.error()
                    got.append(m.value())
            assert sorted(got) == sorted(b"v%d" % i for i in range(20)), f"the round read {len(got)} of 20"
            consumer.commit(asynchronous=False)
            committed = consumer.committed([TopicPartition(topic, p) for p in range(2)], timeout=10)
            assert sum(tp.offset for tp in committed) == 20
        finally:
            consumer.close()
        self.world.topics.append(topic)
        self.world.groups.append(group)
        self._new_log()                     # the round's own lines are not a case's


def served_versions(bootstrap: str) -> list[tuple[int, int]]:
    """(api key, version) for every version the broker advertises of an API the codec knows."""
    with _connect(bootstrap) as sock:
        sock.sendall(codec.encode_request("ApiVersions", 3, 1, "fuzz", {
            "client_software_name": "fuzz", "client_software_version": "1"}))
        _, body = codec.decode_response("ApiVersions", 3, read_frame(sock))
    return [(k.api_key, v) for k in body.api_keys if k.api_key in REGISTRY.requests
            for v in range(k.min_version, k.max_version + 1)]


def build_world(bootstrap: str) -> World:
    """Topics, a group with offsets, a transactional producer and a share group to aim at."""
    world = World()
    conn = Conn(bootstrap)
    try:
        for name, partitions, configs in (("fuzz-a", 3, []), ("fuzz-b", 1, []),
                                          ("fuzz-c", 1, [{"name": "cleanup.policy", "value": "compact"}]),
                                          ("a" * 249, 1, [])):     # what a backtracking regex chokes on
            conn.call("CreateTopics", 7, {"topics": [{"name": name, "num_partitions": partitions,
                                                      "replication_factor": 1, "assignments": [],
                                                      "configs": configs}],
                                          "timeout_ms": 10000, "validate_only": False})
            world.topics.append(name)
        meta = conn.call("Metadata", 12, {"topics": None, "allow_auto_topic_creation": False,
                                          "include_topic_authorized_operations": False})
        world.topic_ids = [t.topic_id for t in meta.topics if t.name in world.topics]
        conn.call("FindCoordinator", 4, {"key_type": 0, "coordinator_keys": ["fuzz-g"]})
        conn.call("OffsetCommit", 9, {"group_id": "fuzz-g", "generation_id_or_member_epoch": -1, "member_id": "",
                                      "group_instance_id": None, "topics": [
                                          {"name": "fuzz-a", "partitions": [{"partition_index": 0,
                                                                             "committed_offset": 1,
                                                                             "committed_leader_epoch": -1,
                                                                             "committed_metadata": ""}]}]})
        member = uuid.uuid4().hex[:22]
        beat = conn.call("ConsumerGroupHeartbeat", 1, {
            "group_id": "fuzz-cg", "member_id": member, "member_epoch": 0, "instance_id": None, "rack_id": None,
            "rebalance_timeout_ms": 30000, "subscribed_topic_names": ["fuzz-a"], "subscribed_topic_regex": None,
            "server_assignor": None, "topic_partitions": []})
        share = conn.call("ShareGroupHeartbeat", 1, {"group_id": "fuzz-sg", "member_id": uuid.uuid4().hex[:22],
                                                     "member_epoch": 0, "rack_id": None,
                                                     "subscribed_topic_names": ["fuzz-b"]})
        world.member_ids = [member, share.member_id or ""]
        world.groups = ["fuzz-g", "fuzz-cg", "fuzz-sg"]
        assert beat.error_code == 0, beat
        for tid in ("fuzz-tx", "a" * 249):
            conn.call("FindCoordinator", 4, {"key_type": 1, "coordinator_keys": [tid]})
            init = conn.call("InitProducerId", 5, {"transactional_id": tid, "transaction_timeout_ms": 60000,
                                                   "producer_id": -1, "producer_epoch": -1})
            world.transactional_ids.append(tid)
            world.producer_ids.append(init.producer_id)
    finally:
        conn.close()
    return world


def _show(api: str, version: int, body: dict) -> str:
    text = repr(body)
    return f"{api} v{version} {text[:1500]}{'...' if len(text) > 1500 else ''}"


def _connect(bootstrap: str) -> socket.socket:
    host, port = bootstrap.rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=10)


def peak_rss_mb(pid: int) -> float:
    """The broker process's peak resident memory (VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0
