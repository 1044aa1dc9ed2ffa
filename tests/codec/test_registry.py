"""The registry's codecs compile each half (decoder, encoder) on its first use: a broker decodes requests and encodes
responses and never pays for the other two halves, a client the reverse, and nothing is lost by the wait."""

from __future__ import annotations

import sys
import threading
import uuid

import pytest

from kafkamock.codec import Codec, DecodeError, decode_program, default_registry, generator

REGISTRY = default_registry()


@pytest.fixture
def builds(monkeypatch):
    """The names of the halves compiled while the test runs: ("decode" | "encode", message name)."""
    seen: list[tuple[str, str]] = []
    decoder, encoder = generator.build_decoder, generator.build_encoder

    def build_decoder(compiler):
        seen.append(("decode", compiler.spec.name))
        return decoder(compiler)

    def build_encoder(compiler):
        seen.append(("encode", compiler.spec.name))
        return encoder(compiler)

    monkeypatch.setattr(generator, "build_decoder", build_decoder)
    monkeypatch.setattr(generator, "build_encoder", build_encoder)
    return seen


def fresh(name: str, version: int) -> Codec:
    return Codec(REGISTRY.message(name), version, REGISTRY.classes)


FETCH = {"replica_id": -1, "max_wait_ms": 500, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 1,
         "session_id": 0, "session_epoch": -1, "rack_id": "r",
         "topics": [{"topic_id": uuid.UUID("5a3ad3a5-4ad5-4d2b-8f5b-0d14c4a0e0b1"),
                     "partitions": [{"partition": 3, "fetch_offset": 42, "partition_max_bytes": 1 << 20}]}]}


def test_a_codec_compiles_nothing_until_used_and_then_only_the_half_used(builds):
    request, response = fresh("FetchRequest", 17), fresh("FetchResponse", 17)
    assert builds == []
    wire = REGISTRY.codec("FetchRequest", 17).encode(FETCH)
    builds.clear()

    message, end = request.decode_from(wire, 0)          # as a broker reads a request
    assert end == len(wire) and message.topics[0].partitions[0].fetch_offset == 42
    # the compiled decoder takes FetchRequest: its Python twin is not compiled until something needs it
    assert builds == ([] if decode_program.COMPILED else [("decode", "FetchRequest")])
    response.encode({"responses": [{"topic_id": message.topics[0].topic_id, "partitions": [{"partition_index": 3}]}]})
    assert ("encode", "FetchResponse") in builds
    assert ("encode", "FetchRequest") not in builds and ("decode", "FetchResponse") not in builds
    compiled = len(builds)

    request.decode_from(wire, 0)                          # and never again
    request.decode(wire)
    response.encode({"responses": []})
    assert len(builds) == compiled


def test_each_half_once_compiled_takes_its_place(builds):
    codec = fresh("FetchRequest", 17)
    wire = codec.encode(FETCH)
    assert codec.encode_into is codec.encoder()
    assert codec.decode(wire) == codec.decode_from(wire, 0)[0]
    assert codec.decode_from is codec.decoder()
    assert codec.decoder() is not codec.python_decoder() or not decode_program.COMPILED
    assert sorted(builds) == sorted({*builds})            # no half compiled twice


def test_what_the_compiled_decoder_hands_on_compiles_its_python_twin_then(builds):
    codec = fresh("FetchRequest", 17)
    wire = REGISTRY.codec("FetchRequest", 17).encode(FETCH)
    builds.clear()
    with pytest.raises(DecodeError, match="ends early"):  # a cut message: the Python twin says where and why
        codec.decode_from(wire[:-3], 0)
    with pytest.raises(DecodeError, match="trailing bytes"):
        codec.decode(wire + b"\x00")
    assert builds == [("decode", "FetchRequest")]


def test_the_sources_are_those_of_the_halves_compiled():
    codec = fresh("HeartbeatRequest", 4)
    assert codec.decoder_source.startswith("def decode_from(b, p, mv=None):")
    assert codec.encoder_source.startswith("def encode_into(")
    assert codec.python_decoder().__code__.co_filename.endswith("decode")


def test_threads_using_a_new_codec_at_once_get_the_same_bytes_and_messages():
    """Threads that first use a codec together (each compiling a half, the halves sharing one compiler's table of
    constants) get what one thread alone gets."""
    reference = REGISTRY.codec("FetchRequest", 17)
    wire = reference.encode(FETCH)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)                   # threads switch every few bytecodes, inside the compiling
    try:
        for _ in range(20):
            codec = fresh("FetchRequest", 17)
            start = threading.Barrier(8)
            got: list[object] = []

            def use(encode: bool, codec: Codec = codec, start: threading.Barrier = start,
                    got: list[object] = got) -> None:
                start.wait()
                got.append(codec.encode(FETCH) if encode else codec.python_decoder()(wire, 0)[0])

            threads = [threading.Thread(target=use, args=(n % 2 == 0,)) for n in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert got.count(wire) == 4
            assert [m for m in got if m != wire] == [reference.decode(wire)] * 4
    finally:
        sys.setswitchinterval(interval)
