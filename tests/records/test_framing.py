"""The record framing walk: the compiled walk (kafkamock/records/_framing.c) and its Python twin agree on every
input, valid batches and broken ones alike, error for error; and CI runs the compiled one."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkamock.records import encode_batch, framing
from kafkamock.records.errors import CorruptRecordError
from kafkamock.records.layout import HEADER_SIZE


def outcome(walk, body, p, stop, count):
    try:
        walk(body, p, stop, count, 7)
    except CorruptRecordError as exc:
        return str(exc), exc.offset
    return "ok"


def compiled_walk(body, p, stop, count, batch_start):
    status, value = framing._framing.walk(body, p, stop, count)
    framing._raise_for(status, value, stop, count, batch_start)


needs_compiled = pytest.mark.skipif(not framing.COMPILED and not os.environ.get("CI"),
                                    reason="the C walk was not built (no compiler)")


def test_ci_runs_the_compiled_walk():
    """`make test` builds the extension (pip install -e .): in CI a missing compiler must not go unnoticed."""
    if os.environ.get("CI"):
        assert framing.COMPILED


@needs_compiled
@given(values=st.lists(st.binary(max_size=300), min_size=1, max_size=40), cut=st.integers(0, 40),
       flip=st.tuples(st.integers(0, 10_000), st.integers(0, 255)), extra=st.integers(-3, 3))
@settings(max_examples=400, deadline=None)
def test_compiled_and_python_walks_agree(values, cut, flip, extra):
    batch = bytearray(encode_batch([{"value": v} for v in values]))
    body, stop = batch, len(batch)
    where, byte = flip
    broken = bytearray(batch)
    if cut:
        broken = broken[:max(HEADER_SIZE, len(broken) - cut)]
    if HEADER_SIZE <= where < len(broken):
        broken[where] = byte
    for data, end in ((body, stop), (broken, min(stop, len(broken))), (broken, len(broken))):
        count = len(values) + extra
        assert outcome(compiled_walk, data, HEADER_SIZE, end, count) == \
            outcome(framing.walk_records_python, data, HEADER_SIZE, end, count)


@needs_compiled
@pytest.mark.parametrize("body, count, expected", [
    (b"\x0c" + b"\0" * 6, 1, "ok"),                                         # one 6-byte record
    (b"\x0a" + b"\0" * 5, 1, "record length 5 does not fit the batch"),      # below the 6-byte minimum
    (b"\x0c" + b"\0" * 6, 2, "records run past the end of the batch"),
    (b"\xff\xff\xff\xff\xff\x01", 1, "record length varint is too long"),
    (b"\x0c" + b"\0" * 6 + b"\0\0", 1, "1 records end 2 bytes before the batch does"),
    (b"\x01" + b"\0" * 6, 1, "record length -1 does not fit the batch"),
])
def test_walk_errors(body, count, expected):
    for walk in (compiled_walk, framing.walk_records_python):
        got = outcome(walk, bytearray(body), 0, len(body), count)
        assert got == (expected if expected == "ok" else (f"corrupt records at byte 7: {expected}", 7))
