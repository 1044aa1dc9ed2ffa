"""The compiled decoder (kafkamock/codec/_decode.c, its programs in decode_program.py) and the generated Python one
are twins: on every message at every version, and on mutated bytes, they give the same Messages (classes, keys in
order, values and their types, the same shared defaults) or the same DecodeError."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import values

from kafkamock.codec import DecodeError, decode_program, default_registry

REGISTRY = default_registry()
CASES = [(spec.name, v) for spec in REGISTRY.schemas for v in spec.codec_versions]

needs_compiled = pytest.mark.skipif(not decode_program.COMPILED and not os.environ.get("CI"),
                                    reason="the compiled decoder was not built (no C compiler); CI builds it")


def twins(name: str, version: int):
    compiled = REGISTRY.codec(name, version).decoder()
    return compiled, getattr(compiled, "python", None)


def same(a, b, path="message") -> None:
    """Equal, and built alike: the same class at every level, keys in the same order, a shared default shared."""
    assert type(a) is type(b), f"{path}: {type(a)} != {type(b)}"
    if isinstance(a, dict):
        assert list(a) == list(b), f"{path}: keys {list(a)} != {list(b)}"
        for key in a:
            same(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same(x, y, f"{path}[{i}]")
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


def outcome(decode, data: bytes, mv=None):
    try:
        return decode(data, 0, mv) if mv is not None else decode(data, 0)
    except DecodeError as exc:
        return ("DecodeError", str(exc), exc.offset)


@needs_compiled
def test_the_compiled_decoder_runs_the_hot_path_messages():
    for name, version in [("HeartbeatRequest", 4), ("OffsetCommitRequest", 9), ("ProduceRequest", 11),
                          ("FetchRequest", 17), ("ShareFetchRequest", 1), ("RequestHeader", 2),
                          ("MetadataResponse", 12)]:
        compiled, python = twins(name, version)
        assert python is not None and compiled is not python, (name, version)


@needs_compiled
@pytest.mark.parametrize("name, version", CASES, ids=[f"{n}-v{v}" for n, v in CASES])
def test_twins_decode_every_message_alike(name, version):
    compiled, python = twins(name, version)
    assert python is not None, f"{name} v{version} has no compiled decoder"
    codec = REGISTRY.codec(name, version)
    spec = REGISTRY.message(name)

    @settings(max_examples=10, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(values(spec, version), st.data())
    def check(value, data):
        wire = codec.encode(value)
        fast, slow = outcome(compiled, wire), outcome(python, wire)
        same(fast, slow)
        framed = bytearray(wire)                     # records fields sliced from a memoryview, as the server asks
        same(outcome(compiled, framed, memoryview(framed)), outcome(python, framed, memoryview(framed)))
        cut = data.draw(st.integers(0, max(len(wire) - 1, 0)))
        same(outcome(compiled, wire[:cut]), outcome(python, wire[:cut]))
        if wire:
            i = data.draw(st.integers(0, len(wire) - 1))
            flipped = bytearray(wire)
            flipped[i] ^= 1 << data.draw(st.integers(0, 7))
            same(outcome(compiled, bytes(flipped)), outcome(python, bytes(flipped)))

    check()


@needs_compiled
def test_what_the_compiled_decoder_leaves_to_python_still_decodes():
    """A tagged field, an unknown one, a string over the limit, bad UTF-8, a null where none may be: the Python
    twin's answer, whatever the compiled road would have made of it."""
    codec = REGISTRY.codec("HeartbeatRequest", 4)
    compiled, python = twins("HeartbeatRequest", 4)
    plain = codec.encode({"group_id": "g", "generation_id": 5, "member_id": "m", "group_instance_id": None})
    tagged = plain[:-1] + bytes([1, 7, 2]) + b"hi"          # one unknown tagged field, tag 7
    message, end = compiled(tagged, 0)
    assert end == len(tagged) and message["_unknown_tagged_fields"] == [(7, b"hi")]
    same(outcome(compiled, tagged), outcome(python, tagged))
    bad_utf8 = bytes([2, 0xFF]) + plain[2:]
    assert outcome(compiled, bad_utf8)[0] == "DecodeError"
    same(outcome(compiled, bad_utf8), outcome(python, bad_utf8))
    null_group = bytes([0]) + plain[2:]
    assert "null for a non-nullable field" in outcome(compiled, null_group)[1]
    too_long = bytes([0x82, 0x80, 0x02]) + b"x" * 32769     # 32,768 bytes: over Kafka's string limit
    assert "over the 32767 limit" in outcome(compiled, too_long)[1]


@needs_compiled
def test_the_compiled_decode_from_takes_its_twins_arguments():
    """``mv`` by keyword as by position; data the compiled road cannot read in place (not one contiguous buffer)
    goes to the Python twin, whose answer it gets."""
    codec = REGISTRY.codec("ProduceRequest", 11)
    compiled, python = twins("ProduceRequest", 11)
    frame = bytearray(codec.encode({"transactional_id": None, "acks": 1, "timeout_ms": 100, "topic_data": [
        {"name": "t", "partition_data": [{"index": 0, "records": b"x" * 100}]}]}))
    by_keyword, by_position = compiled(frame, 0, mv=memoryview(frame)), compiled(frame, 0, memoryview(frame))
    same(by_keyword, by_position)
    same(by_keyword, python(frame, 0, memoryview(frame)))
    assert type(by_keyword[0]["topic_data"][0]["partition_data"][0]["records"]) is memoryview
    strided = memoryview(bytes(frame) * 2)[::2]
    with pytest.raises(BufferError):
        python(strided, 0)
    with pytest.raises(BufferError):
        compiled(strided, 0)
    with pytest.raises(TypeError):
        compiled(frame, 0, view=None)
