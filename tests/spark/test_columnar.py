"""The connector's columnar decoder (kafkamock.spark.columnar) against kafkamock.records' decoder, record for record:
random fetches of v2 batches (null or bytes keys and values, headers, every codec, CreateTime and LogAppendTime,
large timestamp deltas and multi-byte varints), legacy messages, control batches and transactions committed and
aborted, read uncommitted and committed, cut to a random offset range."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkamock import records
from kafkamock.client.fetched import deliverable_batches
from kafkamock.records import CorruptRecordError, end_txn_marker_batch
from kafkamock.spark.columnar import decode_fetch

Aborted = namedtuple("Aborted", "producer_id first_offset")
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
TS = 1_700_000_000_000

blobs = st.one_of(st.none(), st.binary(max_size=40), st.binary(min_size=100, max_size=300))
headers = st.lists(st.tuples(st.text(max_size=8), st.one_of(st.none(), st.binary(max_size=12))), max_size=3)
record = st.fixed_dictionaries({
    "key": blobs, "value": blobs, "headers": st.one_of(st.just([]), headers),
    "timestamp": st.one_of(st.integers(TS - 10**6, TS + 10**6), st.integers(0, 2**50), st.just(-1))})


@st.composite
def fetches(draw):
    """(fetch data, aborted transactions): batches at increasing offsets, as a partition's log holds them."""
    out, aborted = [], []
    offset = draw(st.integers(0, 1000))
    open_txn: dict[int, int] = {}               # producer id -> first offset of its open transaction
    for _ in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(["plain", "txn", "txn", "end", "end", "legacy"]))
        if kind == "end" and open_txn:
            pid = draw(st.sampled_from(sorted(open_txn)))
            commit = draw(st.booleans())
            if not commit:
                aborted.append(Aborted(pid, open_txn[pid]))
            del open_txn[pid]
            out.append(end_txn_marker_batch(commit, producer_id=pid, producer_epoch=0, coordinator_epoch=0,
                                            timestamp=TS, base_offset=offset))
            offset += 1
            continue
        recs = draw(st.lists(record, min_size=1, max_size=12))
        if kind == "legacy":
            magic = draw(st.sampled_from([0, 1]))
            legacy = [{**r, "headers": [], "timestamp": max(r["timestamp"], 0)} for r in recs]
            out.append(records.encode_batch(legacy, base_offset=offset, magic=magic,
                                            compression=draw(st.sampled_from(CODECS[:4]))))
            offset += len(recs)
            continue
        gaps = draw(st.lists(st.integers(0, 3), min_size=len(recs), max_size=len(recs)))   # compacted holes
        offs = list(np.cumsum([g + (i > 0) for i, g in enumerate(gaps)]) + offset)
        pid, transactional = -1, False
        if kind == "txn":
            pid, transactional = draw(st.integers(1, 3)), True
            open_txn.setdefault(pid, offset)
        log_append = draw(st.booleans())
        out.append(records.encode_batch([{**r, "offset": int(o)} for r, o in zip(recs, offs, strict=True)],
                                        base_offset=offset, compression=draw(st.sampled_from(CODECS)),
                                        producer_id=pid, producer_epoch=0 if pid >= 0 else -1,
                                        base_sequence=0 if pid >= 0 else -1, transactional=transactional,
                                        timestamp_type="LogAppendTime" if log_append else "CreateTime",
                                        log_append_time=TS + 5 if log_append else None))
        offset = int(offs[-1]) + 1
    data = b"".join(out)
    if data and draw(st.booleans()):            # a fetch may end in a partial batch
        data += draw(st.sampled_from(out))[:draw(st.integers(1, 60))]
    return data, aborted


def expected(data, aborted, read_committed, start, end):
    batches, _ = deliverable_batches(data, aborted, read_committed)
    rows = []
    for batch in batches:
        kind = 1 if batch.timestamp_type == "LogAppendTime" else 0
        rows += [(r.offset, r.key, r.value, r.timestamp, kind, [tuple(h) for h in r.headers])
                 for r in batch.records if start <= r.offset < end]
    return rows


def decoded(data, aborted, read_committed, start, end):
    cols = decode_fetch(data, aborted, read_committed, start, end, include_headers=True)
    listed = cols.headers.to_pylist()
    assert all(hs is None or hs for hs in listed)               # no headers is null (as Spark), never []
    heads = [[(h["key"], h["value"]) for h in hs or []] for hs in listed]
    rows = list(zip(cols.offsets.tolist(), cols.keys.to_pylist(), cols.values.to_pylist(), cols.timestamps.tolist(),
                    cols.timestamp_types.tolist(), heads, strict=True))
    assert cols.keys.validate(full=True) is None and cols.values.validate(full=True) is None
    plain = decode_fetch(data, aborted, read_committed, start, end)          # without headers: same records
    assert plain.offsets.tolist() == cols.offsets.tolist() and plain.values.equals(cols.values)
    return rows


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(fetch=fetches(), read_committed=st.booleans(), window=st.tuples(st.integers(0, 1200), st.integers(0, 1200)))
def test_columns_match_the_record_decoder(fetch, read_committed, window):
    data, aborted = fetch
    start, length = window
    end = start + length if length else 2**63 - 1
    assert decoded(data, aborted, read_committed, start, end) == expected(data, aborted, read_committed, start, end)


def test_many_batches_and_long_records():
    """Thousands of records over many batches and codecs, values up to 20 kB (3-byte length varints)."""
    rng = np.random.default_rng(7)
    out, offset = [], 0
    for i in range(40):
        recs = [{"key": None if j % 3 else b"k%d" % j, "value": bytes(rng.integers(0, 256, int(rng.integers(0, 20000))
                                                                                  if j % 50 == 0 else 100, np.uint8)),
                 "timestamp": TS + j * 1000} for j in range(200)]
        out.append(records.encode_batch(recs, base_offset=offset, compression=CODECS[i % 5]))
        offset += len(recs)
    data = b"".join(out)
    assert decoded(data, None, False, 0, 2**63 - 1) == expected(data, None, False, 0, 2**63 - 1)
    assert decoded(data, None, False, 150, 7777) == expected(data, None, False, 150, 7777)


def test_empty_and_partial_fetches():
    assert len(decode_fetch(b"", None, False)) == 0
    assert len(decode_fetch(None, None, True)) == 0
    batch = records.encode_batch([{"value": b"v"}])
    assert len(decode_fetch(batch[:-1], None, False)) == 0


@pytest.mark.parametrize("damage", ["crc", "length", "count"])
def test_corrupt_batches_are_refused(damage):
    good = bytearray(records.encode_batch([{"key": b"k", "value": b"v" * 20, "timestamp": TS}] * 3))
    if damage == "crc":
        good[-1] ^= 0xFF
    elif damage == "length":            # a record length that does not fit the batch, CRC made right again
        good[61] = 0x7E
    else:
        good[60] = 9
    if damage != "crc":
        from crc32c import crc32c
        good[17:21] = crc32c(bytes(good[21:])).to_bytes(4, "big")
    with pytest.raises(CorruptRecordError):
        records.decode_batches(bytes(good))
    with pytest.raises(CorruptRecordError):
        decode_fetch(bytes(good), None, False)


# -- writing: records regions from Arrow columns -------------------------------------------------------------------

rows = st.lists(st.tuples(blobs, blobs, st.one_of(st.none(), st.just([]), headers)), min_size=1, max_size=60)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(rows=rows, limit=st.sampled_from([64, 300, 2000, 1 << 20]), string_values=st.booleans())
def test_regions_are_the_bytes_of_encode_batch(rows, limit, string_values):
    """Each region, framed by encode_v2_region, is byte for byte the batch encode_batch makes of its rows; every
    batch fits ``limit`` unless it holds a single record."""
    import pyarrow as pa

    from kafkamock.records.v2 import encode_v2_region
    from kafkamock.spark.columnar import (
        HEADER_TYPE,
        as_binary,
        chunk_bounds,
        encode_regions,
        header_blobs,
        record_sizes,
    )

    keys = pa.array([k for k, _, _ in rows], pa.binary())
    values = pa.array([v for _, v, _ in rows], pa.binary())
    if string_values:            # a string column (the sink takes string or binary), sliced: offsets not at 0
        texts = [None if v is None else v.hex() for _, v, _ in rows]
        values = as_binary(pa.array(["pad", *texts], pa.string()).slice(1))
        rows = [(k, None if t is None else t.encode(), h) for (k, _, h), t in zip(rows, texts, strict=True)]
    hs = [None if h is None else [{"key": k, "value": v} for k, v in h] for _, _, h in rows]
    blobs = header_blobs(pa.array(hs, HEADER_TYPE), len(rows))
    bounds = chunk_bounds(record_sizes(keys, values, blobs, limit), limit)
    assert [a for a, _ in bounds] == [0] + [b for _, b in bounds[:-1]] and bounds[-1][1] == len(rows)
    for (a, b), (region, count) in zip(bounds, encode_regions(keys, values, blobs, bounds), strict=True):
        want = records.encode_batch([{"key": k, "value": v, "headers": h or [], "timestamp": TS}
                                     for k, v, h in rows[a:b]], producer_id=7, producer_epoch=1, base_sequence=a,
                                    compression="lz4")
        got = encode_v2_region(region, count, base_timestamp=TS, max_timestamp=TS, producer_id=7, producer_epoch=1,
                               base_sequence=a, compression_name="lz4")
        assert got == want
        plain = encode_v2_region(region, count, base_timestamp=TS, max_timestamp=TS)
        assert len(plain) <= limit or count == 1


@settings(max_examples=200, deadline=None)
@given(keys=st.lists(st.one_of(st.none(), st.binary(max_size=40), st.binary(min_size=250, max_size=300)),
                     min_size=1, max_size=50), partitions=st.integers(1, 50))
def test_murmur2_partitions_match_the_producer(keys, partitions):
    import pyarrow as pa

    from kafkamock.records.partitioner import partition_for_key
    from kafkamock.spark.columnar import murmur2_partitions

    got = murmur2_partitions(pa.array(["x", *keys], pa.binary()).slice(1), partitions)
    assert got.tolist() == [-1 if k is None else partition_for_key(k, partitions) for k in keys]
