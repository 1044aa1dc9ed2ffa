"""The legacy versions (``legacyVersions``: Produce v0-2, Fetch v0-3) against an independent implementation.

Kafka 4.3's Java classes no longer know these versions, so the oracle cannot check them. kafka-python still carries
hand-written classes for them (``kafka.protocol.old``): our bytes must decode there to the same values, and its
re-encoding must give back our bytes exactly.
"""

from __future__ import annotations

import importlib

import pytest
from hypothesis import given, settings
from strategies import values

from kafkamock.codec import UnsupportedVersionError, default_registry

old = pytest.importorskip("kafka.protocol.old.produce").__name__.rsplit(".", 1)[0]

REGISTRY = default_registry()
MODULES = {"Produce": "produce", "Fetch": "fetch"}
CASES = [(spec.name, v) for spec in REGISTRY.schemas for v in spec.legacy_versions]


def test_the_legacy_versions_are_produce_0_to_2_and_fetch_0_to_3():
    assert sorted(CASES) == sorted([(f"Produce{kind}", v) for kind in ("Request", "Response") for v in range(3)]
                                   + [(f"Fetch{kind}", v) for kind in ("Request", "Response") for v in range(4)])
    # Kafka's own ranges are unchanged: these versions are extra, not advertised by the codec's api_versions().
    assert REGISTRY.api_versions()[0][0] == 3 and REGISTRY.api_versions()[1][0] == 4


def _like(ours, theirs):
    """Our decoded value reduced to the keys kafka-python's ``to_object`` has (ours also holds the fields absent at
    this version, with their defaults)."""
    if isinstance(theirs, dict):
        return {k: _like(ours[k], v) for k, v in theirs.items()}
    if isinstance(theirs, list):
        return [_like(o, t) for o, t in zip(ours, theirs, strict=True)]
    if isinstance(ours, bytearray | memoryview):
        return bytes(ours)
    return ours


@pytest.mark.parametrize(("name", "version"), CASES, ids=[f"{n}-v{v}" for n, v in CASES])
def test_bytes_agree_with_kafka_pythons_hand_written_classes(name, version):
    spec = REGISTRY.message(name)
    codec = REGISTRY.codec(name, version)
    module = importlib.import_module(f"{old}.{MODULES[spec.api_name]}")
    theirs = getattr(module, f"{name}_v{version}")

    @settings(max_examples=30)
    @given(values(spec, version))
    def check(value):
        data = codec.encode(value)
        parsed = theirs.decode(data)
        assert parsed.encode() == data
        obj = parsed.to_object()
        assert _like(codec.decode(data), obj) == obj

    check()


def test_legacy_versions_frame_like_any_other():
    from kafkamock.codec import decode_request, encode_request

    body = {"acks": 1, "timeout_ms": 1000,
            "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": b"\x00" * 12}]}]}
    frame = encode_request("Produce", 2, 7, "old-client", body)
    header, decoded = decode_request(frame)
    assert (header.request_api_version, header.correlation_id, decoded.topic_data[0].name) == (2, 7, "t")
    with pytest.raises(UnsupportedVersionError):
        REGISTRY.codec("FetchRequest", -1)
