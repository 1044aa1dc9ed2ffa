"""Codec speed: kafkamock against kio and kafka-python, decode and encode, in one process on the same bytes.

Why this exists: kafkamock compiles each message version into specialised Python functions to keep its codec
cheap. This script checks that claim against the two other Python Kafka codecs on a few large messages, instead of
taking it on trust. It is a measurement, not a test: it fails only when a peer disagrees with kafkamock about
the bytes (so no peer is ever timed on an error path).

Method: each message is built once as a kafkamock value and encoded by kafkamock; every peer decodes those same
bytes, must agree with kafkamock on a few fields, and must re-encode its decoded object to the very same bytes.
Each library then decodes the bytes and encodes its own in-memory form (kafkamock: the plain dict it was given;
kio: its frozen dataclasses; kafka-python: its data containers). Only the message body is coded (no header or
frame). Timing uses ``timeit`` (GC off while timing): the loop count is auto-scaled so one run takes 0.2-0.5 s,
the run is repeated, and the best run is kept. "n/a" means the peer has no codec for that message version
(or is not installed); no other version is substituted.

    make bench                                  # or: PYTHONPATH=. python bench/codec.py
    python bench/codec.py --quick               # one repeat per case: a smoke run
    python bench/codec.py --json results.json   # also write the raw numbers
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import io
import json
import platform
import random
import re
import sys
import timeit
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from functools import partial
from typing import Any

from kafkamock import codec

LIBS = ("kafkamock", "kio", "kafka-python")
OPS = ("decode", "encode")


# --- messages (each built once, as a kafkamock value) ---------------------------------------------------------------

def _rng(seed: int) -> random.Random:
    return random.Random(seed)


def metadata_response() -> dict[str, Any]:
    """MetadataResponse v12: 3 brokers, 100 topics with ids, 12 partitions each, 3 replicas all in sync."""
    rng = _rng(1)
    brokers = [{"node_id": b, "host": f"broker-{b}.kafka.internal", "port": 9092, "rack": f"rack-{b}"} for b in range(3)]
    topics = []
    for t in range(100):
        partitions = []
        for p in range(12):
            replicas = [(p + r) % 3 for r in range(3)]
            partitions.append({"error_code": 0, "partition_index": p, "leader_id": replicas[0], "leader_epoch": 7,
                               "replica_nodes": replicas, "isr_nodes": list(replicas), "offline_replicas": []})
        topics.append({"error_code": 0, "name": f"orders.region-{t:03d}.v1", "topic_id": uuid.UUID(int=rng.getrandbits(128)),
                       "is_internal": False, "partitions": partitions, "topic_authorized_operations": -2147483648})
    return {"throttle_time_ms": 0, "brokers": brokers, "cluster_id": "kafkamock-bench-cluster", "controller_id": 1,
            "topics": topics}


def share_fetch_request() -> dict[str, Any]:
    """ShareFetchRequest v2 carrying 1,000 acknowledgement batches: 4 topics x 5 partitions x 50 batches."""
    rng = _rng(2)
    topics = []
    for _ in range(4):
        partitions = []
        for p in range(5):
            batches = []
            for b in range(50):
                first = 1_000_000 + b * 10
                # mostly one ack type for the whole range; every 4th batch acks each offset on its own
                types = [1, 1, 2, 1, 3, 1, 1, 1, 0, 1] if b % 4 == 3 else [1]
                batches.append({"first_offset": first, "last_offset": first + 9, "acknowledge_types": types})
            partitions.append({"partition_index": p, "acknowledgement_batches": batches})
        topics.append({"topic_id": uuid.UUID(int=rng.getrandbits(128)), "partitions": partitions})
    return {"group_id": "share-group-bench", "member_id": "Oq0dyr1FRmO0EB7FAXR8Bw", "share_session_epoch": 5,
            "max_wait_ms": 500, "min_bytes": 1, "max_bytes": 52_428_800, "max_records": 500, "batch_size": 500,
            "share_acquire_mode": 0, "is_renew_ack": False, "topics": topics, "forgotten_topics_data": []}


def offset_commit_request() -> dict[str, Any]:
    """OffsetCommitRequest v9 committing 1,000 partitions: 10 topics x 100 partitions."""
    topics = [{"name": f"clickstream-{t}", "partitions": [
        {"partition_index": p, "committed_offset": 10_000_000 + 137 * p + t, "committed_leader_epoch": 3,
         "committed_metadata": ""} for p in range(100)]} for t in range(10)]
    return {"group_id": "analytics-consumers", "generation_id_or_member_epoch": 42,
            "member_id": "consumer-1-5e0c6c1a-1f1e-4b7e-9d5c-2f3a4b5c6d7e", "group_instance_id": None, "topics": topics}


def produce_request() -> dict[str, Any]:
    """ProduceRequest v11: one partition carrying one 16 KB record batch (opaque bytes to every codec here)."""
    return {"transactional_id": None, "acks": -1, "timeout_ms": 30_000, "topic_data": [
        {"name": "events", "partition_data": [{"index": 0, "records": _rng(4).randbytes(16 * 1024)}]}]}


def fetch_response() -> dict[str, Any]:
    """FetchResponse v16: 100 partitions (4 topics x 25), each with 10 KB of records."""
    rng = _rng(5)
    responses = [{"topic_id": uuid.UUID(int=rng.getrandbits(128)), "partitions": [
        {"partition_index": p, "error_code": 0, "high_watermark": 5_000_000 + p, "last_stable_offset": 5_000_000 + p,
         "log_start_offset": 0, "aborted_transactions": None, "preferred_read_replica": -1,
         "records": rng.randbytes(10 * 1024)} for p in range(25)]} for _ in range(4)]
    return {"throttle_time_ms": 0, "error_code": 0, "session_id": 123_456, "responses": responses}


def small_produce_request() -> dict[str, Any]:
    """ProduceRequest v11 as a producer sends it at low volume: one partition, one 1 KB record batch."""
    return {"transactional_id": None, "acks": -1, "timeout_ms": 30_000, "topic_data": [
        {"name": "events", "partition_data": [{"index": 0, "records": _rng(6).randbytes(1024)}]}]}


def small_fetch_request() -> dict[str, Any]:
    """FetchRequest v16 of a consumer on one partition (topic id, no session)."""
    return {"replica_id": -1, "max_wait_ms": 500, "min_bytes": 1, "max_bytes": 52_428_800, "isolation_level": 1,
            "session_id": 0, "session_epoch": -1, "topics": [
                {"topic_id": uuid.UUID(int=_rng(7).getrandbits(128)), "partitions": [
                    {"partition": 0, "current_leader_epoch": 3, "fetch_offset": 123_456, "last_fetched_epoch": 3,
                     "log_start_offset": -1, "partition_max_bytes": 1_048_576}]}],
            "forgotten_topics_data": [], "rack_id": ""}


def heartbeat_request() -> dict[str, Any]:
    """HeartbeatRequest v4 of a classic group member."""
    return {"group_id": "analytics-consumers", "generation_id": 42,
            "member_id": "consumer-1-5e0c6c1a-1f1e-4b7e-9d5c-2f3a4b5c6d7e", "group_instance_id": None}


def small_offset_commit_request() -> dict[str, Any]:
    """OffsetCommitRequest v9 committing one partition (a synchronous commit after each record)."""
    return {"group_id": "analytics-consumers", "generation_id_or_member_epoch": 42,
            "member_id": "consumer-1-5e0c6c1a-1f1e-4b7e-9d5c-2f3a4b5c6d7e", "group_instance_id": None,
            "topics": [{"name": "clickstream-0", "partitions": [
                {"partition_index": 7, "committed_offset": 10_000_137, "committed_leader_epoch": 3,
                 "committed_metadata": ""}]}]}


def small_share_fetch_request() -> dict[str, Any]:
    """ShareFetchRequest v1 of a share consumer on one partition, acknowledging one batch of 10 records."""
    return {"group_id": "share-group-bench", "member_id": "Oq0dyr1FRmO0EB7FAXR8Bw", "share_session_epoch": 5,
            "max_wait_ms": 500, "min_bytes": 1, "max_bytes": 52_428_800, "max_records": 500, "batch_size": 500,
            "topics": [{"topic_id": uuid.UUID(int=_rng(8).getrandbits(128)), "partitions": [
                {"partition_index": 0, "acknowledgement_batches": [
                    {"first_offset": 1000, "last_offset": 1009, "acknowledge_types": [1]}]}]}],
            "forgotten_topics_data": []}


# --- the few fields every library must agree on (attribute access works on all three decoded forms) -----------------

def _metadata_facts(m):
    last = m.topics[-1]
    return (m.cluster_id, m.brokers[2].host, len(m.topics), sum(len(t.partitions) for t in m.topics), last.name,
            last.topic_id, last.partitions[-1].partition_index, last.partitions[-1].leader_id, last.partitions[-1].isr_nodes)


def _share_fetch_facts(m):
    part = m.topics[-1].partitions[-1]
    return (m.member_id, m.share_session_epoch, m.topics[-1].topic_id, part.partition_index,
            sum(len(p.acknowledgement_batches) for t in m.topics for p in t.partitions),
            part.acknowledgement_batches[-1].first_offset, part.acknowledgement_batches[-1].acknowledge_types,
            part.acknowledgement_batches[0].acknowledge_types)


def _offset_commit_facts(m):
    last = m.topics[-1].partitions[-1]
    return (m.group_id, m.member_id, sum(len(t.partitions) for t in m.topics), m.topics[-1].name,
            last.partition_index, last.committed_offset, last.committed_leader_epoch, last.committed_metadata)


def _produce_facts(m):
    part = m.topic_data[0].partition_data[0]
    return (m.acks, m.topic_data[0].name, part.index, bytes(part.records))


def _fetch_facts(m):
    last = m.responses[-1].partitions[-1]
    return (m.session_id, sum(len(t.partitions) for t in m.responses), m.responses[-1].topic_id, last.partition_index,
            last.high_watermark, bytes(last.records))


def _fetch_request_facts(m):
    part = m.topics[0].partitions[0]
    return (m.isolation_level, m.topics[0].topic_id, part.fetch_offset, part.partition_max_bytes)


def _heartbeat_facts(m):
    return (m.group_id, m.generation_id, m.member_id, m.group_instance_id)


@dataclass(frozen=True)
class Case:
    label: str
    name: str
    version: int
    build: Callable[[], dict[str, Any]]
    facts: Callable[[Any], tuple]
    kafka_python_module: str  # where kafka-python would define ``name``, if it supports it


CASES = (
    Case("MetadataResponse v12 (100 topics x 12 partitions)", "MetadataResponse", 12, metadata_response,
         _metadata_facts, "kafka.protocol.metadata"),
    Case("ShareFetchRequest v2 (1,000 ack batches)", "ShareFetchRequest", 2, share_fetch_request,
         _share_fetch_facts, "kafka.protocol.consumer"),
    Case("OffsetCommitRequest v9 (1,000 partitions)", "OffsetCommitRequest", 9, offset_commit_request,
         _offset_commit_facts, "kafka.protocol.consumer"),
    Case("ProduceRequest v11 (1 partition, 16 KB batch)", "ProduceRequest", 11, produce_request,
         _produce_facts, "kafka.protocol.producer"),
    Case("FetchResponse v16 (100 partitions x 10 KB)", "FetchResponse", 16, fetch_response,
         _fetch_facts, "kafka.protocol.consumer"),
    # The small messages of the hot path: one per request a client sends over and over.
    Case("ProduceRequest v11 (1 partition, 1 KB batch)", "ProduceRequest", 11, small_produce_request,
         _produce_facts, "kafka.protocol.producer"),
    Case("FetchRequest v16 (1 partition)", "FetchRequest", 16, small_fetch_request,
         _fetch_request_facts, "kafka.protocol.consumer"),
    Case("HeartbeatRequest v4", "HeartbeatRequest", 4, heartbeat_request, _heartbeat_facts,
         "kafka.protocol.consumer"),
    Case("OffsetCommitRequest v9 (1 partition)", "OffsetCommitRequest", 9, small_offset_commit_request,
         _offset_commit_facts, "kafka.protocol.consumer"),
    Case("ShareFetchRequest v1 (1 partition, 1 ack batch)", "ShareFetchRequest", 1, small_share_fetch_request,
         _share_fetch_facts, "kafka.protocol.consumer"),
)


# --- one adapter per library: (decode callable, encode callable, decoded object) or the reason it is n/a ------------

class NotSupported(Exception):
    pass


@dataclass
class Subject:
    decode: Callable[[], Any]
    encode: Callable[[], bytes]
    decoded: Any  # the library's own decoded form, for the agreement check


def kafkamock_subject(case: Case, value: dict[str, Any], data: bytes) -> Subject:
    c = codec.codec_for(case.name, case.version)
    return Subject(partial(c.decode, data), partial(c.encode, value), c.decode(data))


def kio_subject(case: Case, value: dict[str, Any], data: bytes) -> Subject:
    try:
        from kio.serial import entity_reader, entity_writer
    except ImportError as exc:
        raise NotSupported("kio not installed") from exc
    api, kind = re.fullmatch(r"(\w+?)(Request|Response)", case.name).groups()
    module = f"kio.schema.{re.sub(r'(?<!^)(?=[A-Z])', '_', api).lower()}.v{case.version}.{kind.lower()}"
    try:
        entity_type = getattr(importlib.import_module(module), case.name)
    except (ImportError, AttributeError) as exc:
        raise NotSupported(f"kio has no {module}.{case.name}") from exc
    read, write = entity_reader(entity_type), entity_writer(entity_type)
    entity, size = read(data, 0)
    if size != len(data):
        raise AssertionError(f"kio read {size} of {len(data)} bytes of {case.label}")

    def encode() -> bytes:
        buffer = io.BytesIO()
        write(buffer, entity)
        return buffer.getvalue()

    return Subject(partial(read, data, 0), encode, entity)


def kafka_python_subject(case: Case, value: dict[str, Any], data: bytes) -> Subject:
    try:
        module = importlib.import_module(case.kafka_python_module)
    except ImportError as exc:
        raise NotSupported("kafka-python not installed") from exc
    cls = getattr(module, case.name, None)
    if cls is None:
        raise NotSupported(f"kafka-python has no {case.name} class")
    low, high = cls.valid_versions
    if not low <= case.version <= high:
        raise NotSupported(f"kafka-python {case.name} supports v{low}-{high} only")
    versioned = cls[case.version]
    obj = versioned.decode(data)  # bytes in directly: a BytesIO would only add a .read() copy
    return Subject(partial(versioned.decode, data), obj.encode, obj)


ADAPTERS = {"kafkamock": kafkamock_subject, "kio": kio_subject, "kafka-python": kafka_python_subject}


def _normalise(x: Any) -> Any:
    """Compare across libraries: tuples and lists alike, enum members as their ints."""
    if isinstance(x, list | tuple):
        return tuple(_normalise(v) for v in x)
    if isinstance(x, IntEnum):
        return int(x)
    return x


def prepare(case: Case) -> tuple[bytes, dict[str, Subject | str]]:
    """Encode the case with kafkamock, then check every peer decodes and re-encodes those exact bytes."""
    value = case.build()
    data = codec.encode(case.name, case.version, value)
    subjects: dict[str, Subject | str] = {}
    expected = None
    for lib, adapter in ADAPTERS.items():
        try:
            subject = adapter(case, value, data)
        except NotSupported as exc:
            subjects[lib] = str(exc)
            continue
        facts = _normalise(case.facts(subject.decoded))
        if expected is None:
            expected = facts
        elif facts != expected:
            raise AssertionError(f"{lib} decodes {case.label} differently:\n  {facts}\nvs kafkamock\n  {expected}")
        if subject.encode() != data:
            raise AssertionError(f"{lib} does not re-encode {case.label} to the same bytes")
        subjects[lib] = subject
    return data, subjects


# --- timing ---------------------------------------------------------------------------------------------------------

def time_per_op(fn: Callable[[], Any], repeats: int) -> tuple[float, int]:
    """Best seconds per call, and the loop count: loops auto-scaled so one run takes 0.2-0.5 s, best of the runs."""
    timer = timeit.Timer(fn)
    number, first = timer.autorange()  # 1, 2, 5, 10, 20, ... loops until a run takes >= 0.2 s
    runs = [first, *timer.repeat(repeat=repeats - 1, number=number)] if repeats > 1 else [first]
    return min(runs) / number, number


# --- report ---------------------------------------------------------------------------------------------------------

def _us(us: float | None) -> str:
    if us is None:
        return "n/a"
    return f"{us:,.0f}" if us >= 100 else f"{us:.1f}" if us >= 10 else f"{us:.2f}"


def _ratio(peer: float | None, ours: float | None) -> str:
    return "n/a" if peer is None or ours is None else f"{peer / ours:.2f}"


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _kio_reader_kind() -> str:
    try:
        import kio._kio_native as native
        import kio.serial
    except ImportError:
        return "n/a"
    if kio.serial.entity_reader is native.entity_reader:
        return "native (Rust/PyO3 kio._kio_native.entity_reader)"
    return "pure Python"


def measure(repeats: int, only: str | None = None) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """One record per (message, op, library), and each message's size in bytes (``only``: the cases whose label
    contains it)."""
    results, sizes = [], {}
    for case in CASES:
        if only and only not in case.label:
            continue
        data, subjects = prepare(case)
        sizes[case.label] = len(data)
        print(f"timing {case.label} ...", file=sys.stderr, flush=True)
        for op in OPS:
            for lib in LIBS:
                record = {"message": case.name, "version": case.version, "label": case.label, "bytes": len(data),
                          "op": op, "library": lib}
                subject = subjects[lib]
                if isinstance(subject, str):
                    record.update(supported=False, reason=subject, us_per_op=None)
                else:
                    seconds, loops = time_per_op(getattr(subject, op), repeats)
                    record.update(supported=True, us_per_op=seconds * 1e6, loops=loops, runs=repeats)
                results.append(record)
    return results, sizes


def render(results: list[dict[str, Any]], sizes: dict[str, int], meta: dict[str, Any]) -> str:
    cell = {(r["label"], r["op"], r["library"]): r for r in results}
    lines = [f"{meta['python']} on {meta['platform']}; best of {meta['repeats']} run(s) per cell",
             f"kio {meta['kio']} (reader: {meta['kio_reader']}; writer: {meta['kio_writer']}); "
             f"kafka-python {meta['kafka-python']}",
             "message body sizes: " + "; ".join(f"{label.split(' (')[0]}: {n:,} B" for label, n in sizes.items()), "",
             "| message | op | kafkamock µs/op | kio µs/op | kafka-python µs/op | kio/kafkamock | kafka-python/kafkamock |",
             "|---|---|---:|---:|---:|---:|---:|"]
    notes: list[str] = []
    for label in sizes:
        for op in OPS:
            us = {lib: cell[label, op, lib]["us_per_op"] for lib in LIBS}
            lines.append(f"| {label} | {op} | {_us(us['kafkamock'])} | {_us(us['kio'])} | {_us(us['kafka-python'])} | "
                         f"{_ratio(us['kio'], us['kafkamock'])} | {_ratio(us['kafka-python'], us['kafkamock'])} |")
            notes += [f"n/a: {lib}: {cell[label, op, lib]['reason']}" for lib in LIBS
                      if not cell[label, op, lib]["supported"]]
    lines += ["", "Ratios > 1 mean kafkamock is faster.", *dict.fromkeys(notes)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="PATH", help="also write the raw numbers to PATH")
    parser.add_argument("--quick", action="store_true", help="one run per case instead of five (smoke run)")
    parser.add_argument("--only", metavar="TEXT", help="only the messages whose label contains TEXT")
    args = parser.parse_args(argv)
    repeats = 1 if args.quick else 5
    meta = {"python": f"{platform.python_implementation()} {platform.python_version()}", "platform": platform.platform(),
            "kafkamock": _version("kafkamock"), "kio": _version("kio"), "kafka-python": _version("kafka-python"),
            "kio_reader": _kio_reader_kind(), "kio_writer": "pure Python (kio.serial.entity_writer)",
            "repeats": repeats, "quick": args.quick}
    results, sizes = measure(repeats, args.only)
    print(render(results, sizes, meta))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"meta": meta, "sizes": sizes, "results": results}, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
