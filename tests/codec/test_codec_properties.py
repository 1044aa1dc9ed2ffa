"""Property tests over every (message, version) in schemas/: round trips, and bad bytes only ever DecodeError."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import values

from kafkamock import codec
from kafkamock.codec import DecodeError, default_registry

REGISTRY = default_registry()
CASES = [(spec.name, v) for spec in REGISTRY.schemas for v in spec.codec_versions]
REQUESTS = [(spec, v) for spec in REGISTRY.requests.values() for v in spec.codec_versions]


def test_every_message_version_is_covered():
    assert len(CASES) > 400  # 90 schemas, each version of each


@pytest.mark.parametrize("name, version", CASES, ids=[f"{n}-v{v}" for n, v in CASES])
def test_round_trip(name, version):
    spec = REGISTRY.message(name)
    c = REGISTRY.codec(name, version)

    @settings(max_examples=15, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(values(spec, version))
    def check(value):
        data = c.encode(value)
        decoded = c.decode(data)
        assert decoded == value
        assert c.encode(decoded) == data

    check()


@st.composite
def request_frames(draw):
    spec, version = draw(st.sampled_from(REQUESTS))
    body = draw(values(spec, version))
    return codec.encode_request(spec.api_key, version, draw(st.integers(-(2**31), 2**31 - 1)),
                                draw(st.one_of(st.none(), st.text(max_size=5))), body)


def mutations(frame_strategy):
    """A valid frame, then truncated, bit-flipped, overwritten with a hostile length, or extended."""
    @st.composite
    def mutate(draw):
        frame = bytearray(draw(frame_strategy))
        kind = draw(st.sampled_from(["truncate", "flip", "hostile", "extend"]))
        if kind == "truncate":
            frame = frame[: draw(st.integers(0, len(frame) - 1))]
        elif kind == "flip":
            for _ in range(draw(st.integers(1, 4))):
                i = draw(st.integers(0, len(frame) - 1))
                frame[i] ^= 1 << draw(st.integers(0, 7))
        elif kind == "hostile":
            i = draw(st.integers(4, max(4, len(frame) - 1)))
            frame[i:i + 5] = draw(st.sampled_from([b"\xff\xff\xff\xff\x0f", b"\x7f\xff\xff\xff", b"\x80\x80\x80\x80\x80",
                                                   b"\xff\xff", b"\xfe\xff\xff\xff\x07"]))
        else:
            frame += draw(st.binary(min_size=1, max_size=8))
        if kind != "truncate" and draw(st.booleans()):
            frame[0:4] = (len(frame) - 4).to_bytes(4, "big")  # keep the size prefix consistent, so the body is read
        return bytes(frame)
    return mutate()


@settings(max_examples=3000, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutations(request_frames()))
def test_mutated_request_frames_raise_only_decode_error(frame):
    try:
        codec.decode_request(frame)
    except DecodeError as exc:
        assert exc.message_name and str(exc)
        if exc.offset is not None:
            assert 0 <= exc.offset <= len(frame)


@settings(max_examples=1500, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.sampled_from(CASES), st.binary(max_size=64))
def test_random_bytes_as_any_message_raise_only_decode_error(case, data):
    name, version = case
    try:
        codec.decode(name, version, data)
    except DecodeError as exc:
        assert exc.message_name == name and exc.version == version


@settings(max_examples=1500, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.sampled_from(CASES).flatmap(lambda c: st.tuples(st.just(c), values(REGISTRY.message(c[0]), c[1]))),
       st.data())
def test_every_truncation_of_a_valid_body_is_a_decode_error(case_value, data):
    (name, version), value = case_value
    body = codec.encode(name, version, value)
    cut = data.draw(st.integers(0, max(0, len(body) - 1)))
    if cut == len(body):
        return
    with pytest.raises(DecodeError):
        codec.decode(name, version, body[:cut])


def test_records_can_be_decoded_as_views_of_the_buffer():
    """``decode_from(data, pos, memoryview(data))``: records fields are slices of the caller's buffer (what the
    broker uses to rewrite a produced batch in place); every other field decodes as usual."""
    codec_ = REGISTRY.codec("ProduceRequest", 9)
    value = {"transactional_id": "tx", "acks": -1, "timeout_ms": 5, "topic_data": [
        {"name": "t", "partition_data": [{"index": 0, "records": b"batch-bytes"}, {"index": 1, "records": None}]}]}
    frame = bytearray(codec_.encode(value))
    decoded, end = codec_.decode_from(frame, 0, memoryview(frame))
    records = decoded.topic_data[0].partition_data[0].records
    assert type(records) is memoryview and bytes(records) == b"batch-bytes" and end == len(frame)
    assert decoded.topic_data[0].partition_data[1].records is None and decoded.transactional_id == "tx"
    records[0:5] = b"BATCH"                                           # writable, and it is the frame itself
    assert b"BATCH-bytes" in frame
    assert type(codec_.decode_from(bytes(frame), 0)[0].topic_data[0].partition_data[0].records) is bytes


@pytest.mark.parametrize("version", [4, 11, 12, 16])
def test_records_given_as_a_list_of_buffers_encode_as_their_concatenation(version):
    """A broker hands its stored batches over as a list; the bytes are those of the joined records, and a
    scatter-gather encoding passes the large buffers through by reference."""
    from kafkamock.codec.framing import encode_response, encode_response_parts

    big, small = bytearray(b"a" * 5000), memoryview(b"b" * 10)

    def body(records):
        return {"responses": [{"topic": "t", "topic_id": uuid.UUID(int=7), "partitions": [
            {"partition_index": 0, "high_watermark": 3, "records": records}]}]}

    joined = encode_response("Fetch", version, 1, body(bytes(big) + bytes(small)))
    assert encode_response("Fetch", version, 1, body([big, small])) == joined
    parts = encode_response_parts("Fetch", version, 1, body([big, small]))
    assert b"".join(parts) == joined and any(p is big for p in parts)
    assert REGISTRY.codec("FetchResponse", version).encode(body([])) == REGISTRY.codec(
        "FetchResponse", version).encode(body(b""))
