"""Fuzzing a live broker over real sockets (hypothesis): valid-but-hostile requests of every API and version the
broker serves, drawn from the codec's schemas (extreme ints, nulls, odd strings, empty and repeated arrays),
Produce requests carrying compression bombs and garbage batches, and raw mutated frames (flipped bytes, lying
lengths and array counts, truncation, random bytes). Oracles: see ``harness.py``.

In CI (``make test``) this is a seeded, deterministic pass of ``FUZZ_EXAMPLES`` cases (about a minute).
``FUZZ_SECONDS=3600 make fuzz`` keeps drawing fresh random cases for that long; a failure prints the case and
hypothesis' reproduction blob.
"""

from __future__ import annotations

import os
import random
import struct
import time

import pytest
from fuzz.harness import FuzzTarget, batch_with_payload, bombs, peak_mb
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from strategies import values

from kafkamock import codec, records
from kafkamock.broker import handlers

FUZZ_EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "1500"))
FUZZ_SECONDS = float(os.environ.get("FUZZ_SECONDS", "0"))
REGISTRY = codec.default_registry()
SERVED = sorted((key, v) for key in handlers.BY_KEY for v in REGISTRY.requests[key].valid_versions
                if key in codec.api_versions())
EXTREME_INT32 = [0, -1, 1, 2**31 - 1, -(2**31), 0x7FFF, -0x8000, 0x10000, 100 << 20]


@pytest.fixture(scope="module")
def target():
    with FuzzTarget() as t:
        t.handle.create_topic("fuzz-target", 2)
        t.handle.create_topic("fuzz-target-2", 1, {"cleanup.policy": "compact", "compression.type": "lz4"})
        yield t
        t.verify_control()
        t.check_errors()


@st.composite
def structured(draw) -> list[bytes]:
    """One request of a served API and version, every field drawn from its type's whole range."""
    key, version = draw(st.sampled_from(SERVED))
    spec = REGISTRY.requests[key]
    body = draw(values(spec, version))
    client_id = draw(st.none() | st.text(max_size=8))
    return [codec.encode_request(key, version, draw(st.integers(0, 2**31 - 2)), client_id, body)]


_BOMBS: list[bytes] = []


@st.composite
def hostile_produce(draw) -> list[bytes]:
    """A Produce whose batch is a bomb, garbage with a right CRC, a lying record count, or a valid batch."""
    if not _BOMBS:
        _BOMBS.extend(bombs())
    kind = draw(st.sampled_from(["bomb", "garbage", "count", "valid"]))
    compression = draw(st.sampled_from(["none", "gzip", "snappy", "lz4", "zstd"]))
    if kind == "bomb":
        batch = draw(st.sampled_from(_BOMBS))
    elif kind == "garbage":
        batch = batch_with_payload(compression, draw(st.binary(max_size=200)), draw(st.sampled_from(EXTREME_INT32)))
    else:
        rows = draw(st.lists(st.tuples(st.none() | st.binary(max_size=40), st.binary(max_size=200)), min_size=1,
                             max_size=5))
        batch = records.encode_batch([{"key": k, "value": v, "timestamp": 1_700_000_000_000} for k, v in rows],
                                     compression=compression)
        if kind == "count":
            batch = batch_with_payload(compression, batch[61:], draw(st.sampled_from(EXTREME_INT32)))
    topic = draw(st.sampled_from(["fuzz-target", "fuzz-target-2"]))
    version = draw(st.integers(3, 12))
    body = {"transactional_id": None, "acks": draw(st.sampled_from([-1, 0, 1, 2, -2])), "timeout_ms": 1000,
            "topic_data": [{"name": topic, "partition_data": [{"index": draw(st.integers(-1, 2)), "records": batch}]}]}
    return [codec.encode_request("Produce", version, 5, "fuzz", body)]


@st.composite
def mutated(draw) -> list[bytes]:
    """A structured frame with raw damage: the bytes the codec must refuse without crashing anything."""
    frame = bytearray(draw(structured())[0])
    for _ in range(draw(st.integers(1, 4))):
        how = draw(st.sampled_from(["flip", "int32", "int16", "varint", "truncate", "extend", "size"]))
        pos = draw(st.integers(4, max(4, len(frame) - 1)))
        if how == "flip" and pos < len(frame):
            frame[pos] ^= draw(st.integers(1, 255))
        elif how == "int32" and pos + 4 <= len(frame):
            struct.pack_into(">i", frame, pos, draw(st.sampled_from(EXTREME_INT32)))
        elif how == "int16" and pos + 2 <= len(frame):
            struct.pack_into(">h", frame, pos, draw(st.sampled_from([-1, 0x7FFF, -0x8000, 0])))
        elif how == "varint" and pos < len(frame):
            frame[pos:pos + 1] = draw(st.sampled_from([b"\xff\xff\xff\xff\x0f", b"\x80\x80\x80\x80\x80\x80", b"\x00"]))
        elif how == "truncate":
            del frame[pos:]
        elif how == "extend":
            frame += draw(st.binary(min_size=1, max_size=64))
    if draw(st.booleans()):                        # most frames keep an honest size prefix
        struct.pack_into(">i", frame, 0, len(frame) - 4)
    elif len(frame) >= 4:
        struct.pack_into(">i", frame, 0, draw(st.sampled_from(EXTREME_INT32)))
    return [bytes(frame)]


random_bytes = st.binary(min_size=1, max_size=300).map(lambda b: [b])
cases = st.one_of(structured(), structured(), hostile_produce(), mutated(), mutated(), random_bytes)


def _check(target: FuzzTarget, case: list[bytes]) -> None:
    target.run_case(case)


def _run(target: FuzzTarget, examples: int, seed_value: int | None) -> None:
    test = settings(max_examples=examples, deadline=None, database=None, derandomize=seed_value is None,
                    suppress_health_check=list(HealthCheck), print_blob=True)(given(case=cases)(
                        lambda case: _check(target, case)))
    if seed_value is not None:
        test = seed(seed_value)(test)
    test()


def test_fuzz_broker(target):
    """CI: a seeded deterministic pass. With FUZZ_SECONDS set: fresh random seeds until the time is up."""
    if not FUZZ_SECONDS:
        _run(target, FUZZ_EXAMPLES, None)
        return
    end = time.monotonic() + FUZZ_SECONDS
    rng = random.Random()
    while time.monotonic() < end:
        value = rng.randrange(2**32)
        print(f"fuzz: seed {value} ({target.cases} cases so far, peak memory {peak_mb():.0f} MB)", flush=True)
        _run(target, 500, value)

