"""Record batches straight to Arrow columns, with no Python object per record: the Spark connector's read path.

``decode_fetch`` reads one partition's records of a Fetch response as ``Columns``. For each v2 batch a short Python
loop finds where each record starts (one varint per record: a record's length is all that says where the next one
begins); everything else is done on whole arrays with numpy: the varints of every record of the fetch at once,
keys and values gathered into Arrow binary columns by one ``take`` over the record bytes. Compressed batches are
decompressed first and their records regions joined into one buffer.

What is delivered is what ``kafkamock.client.fetched.deliverable_batches`` delivers (the same read_committed
filtering runs on the batch headers): control batches never, aborted transactions not under read_committed.
Legacy message sets (magic 0/1) go through ``kafkamock.records``' decoder. ``tests/spark/test_columnar.py``
compares this decoder with ``kafkamock.records.decode_batches`` record for record.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from crc32c import crc32c

from kafkamock.client.fetched import _committed
from kafkamock.records import compression
from kafkamock.records.errors import CorruptRecordError
from kafkamock.records.layout import (
    COMPRESSION_MASK,
    CONTROL_BIT,
    CRC_START,
    HEADER,
    HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    TIMESTAMP_TYPE_BIT,
    TRANSACTIONAL_BIT,
)
from kafkamock.records.legacy import decode_legacy
from kafkamock.records.model import RecordBatch
from kafkamock.records.v2 import _varint_slow, decode_v2
from kafkamock.records.view import split_batches

HEADER_TYPE = pa.list_(pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())]))
MIN_BATCH_LENGTH = HEADER_SIZE - LOG_OVERHEAD
_INT32_LIMIT = 2**31 - 1


@dataclass(frozen=True, slots=True)
class Columns:
    """Records in offset order, as columns. ``timestamps`` are milliseconds (-1: none); ``timestamp_types`` 0 for
    CreateTime, 1 for LogAppendTime; ``headers`` is a list<struct<key, value>> column when asked for."""

    keys: pa.Array
    values: pa.Array
    offsets: np.ndarray
    timestamps: np.ndarray
    timestamp_types: np.ndarray
    headers: pa.Array | None = None

    def __len__(self) -> int:
        return len(self.offsets)


class _Head:
    """A v2 batch known by its header only; what ``fetched._committed`` reads of a batch."""

    __slots__ = ("data", "start", "end", "fields", "_records")

    def __init__(self, data: bytes, start: int, end: int, fields: tuple[int, ...]):
        self.data, self.start, self.end, self.fields = data, start, end, fields
        self._records: list | None = None

    @property
    def base_offset(self) -> int:
        return self.fields[0]

    @property
    def last_offset(self) -> int:
        return self.fields[0] + self.fields[6]

    @property
    def is_control(self) -> bool:
        return bool(self.fields[5] & CONTROL_BIT)

    @property
    def is_transactional(self) -> bool:
        return bool(self.fields[5] & TRANSACTIONAL_BIT)

    @property
    def producer_id(self) -> int:
        return self.fields[9]

    @property
    def records(self) -> list:
        """Decoded only when asked: read_committed reads the marker of a control batch."""
        if self._records is None:
            self._records = decode_v2(self.data, self.start, self.end, compression.DEFAULT_MAX_DECOMPRESSED).records
        return self._records


def decode_fetch(data: bytes | bytearray | memoryview | None, aborted_transactions: Sequence[Any] | None,
                 read_committed: bool, start: int = 0, end: int = 2**63 - 1, *, include_headers: bool = False,
                 max_decompressed_bytes: int = compression.DEFAULT_MAX_DECOMPRESSED) -> Columns:
    """The deliverable records of one partition's Fetch data with ``start <= offset < end``, as columns.

    Raises CorruptRecordError as ``kafkamock.records.decode_batches`` does (bad CRC, lengths, compression,
    records that do not fill their batch).
    """
    buf = b"" if data is None else data if type(data) is bytes else bytes(data)
    views, _ = split_batches(buf)
    heads: list[Any] = []
    for view in views:
        magic = buf[view.start + MAGIC_OFFSET]
        if magic == 2:
            heads.append(_v2_head(buf, view.start, view.end))
        elif magic in (0, 1):
            heads.append(decode_legacy(buf, view.start, view.end, max_decompressed_bytes))
        else:
            raise CorruptRecordError(f"unknown magic {magic}", view.start)
    if read_committed and aborted_transactions:
        deliverable = list(_committed(heads, aborted_transactions))
    else:
        deliverable = [h for h in heads if not h.is_control]
    parts: list[Columns] = []
    run: list[_Head] = []
    for head in deliverable:
        if head.last_offset < start or head.base_offset >= end:
            continue
        if isinstance(head, _Head):
            run.append(head)
            continue
        if run:
            parts.append(_decode_v2_run(run, start, end, include_headers, max_decompressed_bytes))
            run = []
        parts.append(_legacy_columns(head, start, end, include_headers))
    if run:
        parts.append(_decode_v2_run(run, start, end, include_headers, max_decompressed_bytes))
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return _empty(include_headers)
    return Columns(
        pa.concat_arrays([p.keys for p in parts]), pa.concat_arrays([p.values for p in parts]),
        np.concatenate([p.offsets for p in parts]), np.concatenate([p.timestamps for p in parts]),
        np.concatenate([p.timestamp_types for p in parts]),
        pa.concat_arrays([p.headers for p in parts]) if include_headers else None)  # type: ignore[misc]


def _v2_head(buf: bytes, pos: int, end: int) -> _Head:
    """The checks ``records.v2.decode_v2`` makes on a batch before its records."""
    fields: tuple[int, ...] = HEADER.unpack_from(buf, pos)         # every header field is an integer
    if fields[1] < MIN_BATCH_LENGTH:
        raise CorruptRecordError(f"batch length {fields[1]} is shorter than a batch header", pos)
    actual = crc32c(memoryview(buf)[pos + CRC_START:end])
    if actual != fields[4]:
        raise CorruptRecordError(f"CRC32C mismatch (stored {fields[4]:#010x}, computed {actual:#010x})", pos)
    if fields[5] & COMPRESSION_MASK >= len(compression.CODECS):
        raise CorruptRecordError(f"unknown compression type {fields[5] & COMPRESSION_MASK}", pos)
    if fields[12] < 0:
        raise CorruptRecordError(f"negative record count {fields[12]}", pos)
    return _Head(buf, pos, end, fields)


def _empty(include_headers: bool) -> Columns:
    return Columns(pa.array([], pa.binary()), pa.array([], pa.binary()), np.zeros(0, np.int64),
                   np.zeros(0, np.int64), np.zeros(0, np.int32), pa.array([], HEADER_TYPE) if include_headers else None)


def _record_starts(b: bytes, p: int, stop: int, count: int, out: list) -> int:
    """Append where each of ``count`` records starts (its length varint) to ``out``; return where the last ends.
    The one loop per record: lengths are checked for sign by the caller, on whole arrays."""
    append = out.append
    for _ in range(count):
        append(p)
        x = b[p]
        if x < 128:
            p += 1 + (x >> 1)
        else:
            y = b[p + 1]
            if y < 128:
                p += (x + (y << 7) - 124) >> 1          # 2 + (((x & 127) | y << 7) >> 1), for x >= 128
            else:
                length, p = _varint_slow(b, p, 5)
                if length < 0:
                    raise CorruptRecordError(f"record length {length} runs past the end of the batch")
                p += length
    return p


def _varints(u: np.ndarray, pos: np.ndarray, max_bytes: int) -> tuple[np.ndarray, np.ndarray]:
    """The zig-zag varints at ``pos`` in ``u`` (as int64) and the positions after them. Positions past the end read
    the last byte: the framing checks after catch any record that does."""
    last = len(u) - 1
    try:
        first = u[pos]
    except IndexError:
        first = u[np.minimum(pos, last)]
    more = first >= 0x80
    if not more.any():
        z = first.astype(np.int64)
        return (z >> 1) ^ -(z & 1), pos + 1
    # Longer varints: byte k of every varint at once (dense: most varints of a field have the same length).
    value = (first & 0x7F).astype(np.uint64)
    size = np.ones(len(pos), np.int64)
    for k in range(1, max_bytes):
        b = u[np.minimum(pos + k, last)]
        value |= np.where(more, (b & 0x7F).astype(np.uint64) << np.uint64(7 * k), np.uint64(0))
        size += more
        more &= b >= 0x80
        if not more.any():
            break
    else:
        raise CorruptRecordError("varint is too long")
    return (value >> np.uint64(1)).astype(np.int64) ^ -(value & np.uint64(1)).astype(np.int64), pos + size


def _binary(pieces_buffer: pa.Buffer, big: bool, starts: np.ndarray, lengths: np.ndarray) -> pa.Array:
    """A binary column of the byte ranges [starts, starts + lengths) of a buffer (in increasing, disjoint order;
    a negative length is null), copied by one Arrow ``take``."""
    n = len(starts)
    nulls = lengths < 0
    if nulls.all():
        return pa.nulls(n, pa.binary())
    sizes = np.maximum(lengths, 0)
    bounds = np.empty(2 * n + 1, np.int64 if big else np.int32)
    bounds[0:2 * n:2] = starts
    bounds[1:2 * n:2] = starts + sizes
    bounds[2 * n] = starts[-1] + sizes[-1] if n else 0
    pieces = pa.Array.from_buffers(pa.large_binary() if big else pa.binary(), 2 * n,
                                   [None, pa.py_buffer(bounds), pieces_buffer])
    taken = pc.take(pieces, pa.array(np.arange(0, 2 * n, 2, dtype=np.int64)))
    if big:
        taken = taken.cast(pa.binary())
    if not nulls.any():
        return taken
    validity = pa.py_buffer(np.packbits(~nulls, bitorder="little"))
    return pa.Array.from_buffers(pa.binary(), n, [validity, taken.buffers()[1], taken.buffers()[2]],
                                 null_count=int(nulls.sum()))


def _decode_v2_run(heads: list[_Head], start: int, end: int, include_headers: bool,
                   max_decompressed: int) -> Columns:
    """The records of consecutive v2 batches, decoded together."""
    data = heads[0].data
    bodies: list[tuple[Any, int, int]] = []
    compressed = False
    for head in heads:
        codec = compression.CODECS[head.fields[5] & COMPRESSION_MASK]
        if codec == "none":
            bodies.append((head.data, head.start + HEADER_SIZE, head.end))
        else:
            compressed = True
            body = compression.decompress(codec, memoryview(head.data)[head.start + HEADER_SIZE:head.end],
                                          max_decompressed)
            bodies.append((body, 0, len(body)))
    # One buffer for every record: the fetch data itself when nothing was compressed, else the regions joined.
    if compressed:
        joined = b"".join(memoryview(b)[p:s] for b, p, s in bodies)
        shifts, at = [], 0
        for _, p, s in bodies:
            shifts.append(at - p)
            at += s - p
    else:
        joined = data
        shifts = [0] * len(bodies)
    starts: list[int] = []
    counts = np.empty(len(heads), np.int64)
    stops = []
    for i, (head, (body, p, stop)) in enumerate(zip(heads, bodies, strict=True)):
        count = head.fields[12]
        if count > stop - p:
            raise CorruptRecordError(f"{count} records cannot fit in {stop - p} bytes", head.start)
        try:
            after = _record_starts(body, p, stop, count, starts)
        except IndexError:
            raise CorruptRecordError("records run past the end of the batch", head.start) from None
        except CorruptRecordError as exc:
            raise CorruptRecordError(exc.reason, head.start) from None
        if after != stop:
            raise CorruptRecordError(f"{stop - after} bytes remain after the last record" if after < stop else
                                     "record length runs past the end of the batch", head.start)
        counts[i] = count
        stops.append(stop + shifts[i])
    u = np.frombuffer(joined, np.uint8)
    v = np.asarray(starts, np.int64)
    if compressed:
        v += np.repeat(np.asarray(shifts, np.int64), counts)
    try:
        return _fields(heads, u, joined, v, counts, np.asarray(stops, np.int64), start, end, include_headers)
    except CorruptRecordError as exc:
        raise CorruptRecordError(exc.reason, heads[0].start) from None


def _fields(heads: list[_Head], u: np.ndarray, joined: bytes, v: np.ndarray, counts: np.ndarray,
            stops: np.ndarray, start: int, end: int, include_headers: bool) -> Columns:
    """Every field of every record at once, from where the records start (``v``)."""
    n = len(v)
    if n == 0:
        return _empty(include_headers)
    length, r = _varints(u, v, 5)
    if (length < 0).any():
        raise CorruptRecordError("negative record length")
    rec_end = r + length
    ts_delta, p = _varints(u, r + 1, 10)         # after the attributes byte
    offset_delta, p = _varints(u, p, 5)
    key_len, key_at = _varints(u, p, 5)
    value_len, value_at = _varints(u, key_at + np.maximum(key_len, 0), 5)
    header_count, headers_at = _varints(u, value_at + np.maximum(value_len, 0), 5)
    if (key_len < -1).any() or (value_len < -1).any():
        raise CorruptRecordError("negative key or value length")
    if (header_count < 0).any():
        raise CorruptRecordError(f"invalid header count {int(header_count.min())}")
    plain = header_count == 0
    if (headers_at[plain] != rec_end[plain]).any() or (headers_at > rec_end).any():
        i = int(np.flatnonzero(np.where(plain, headers_at != rec_end, headers_at > rec_end))[0])
        raise CorruptRecordError(f"record declares {int(length[i])} bytes but holds "
                                 f"{int(headers_at[i] - r[i])} or more")

    base_offsets = np.fromiter((h.fields[0] for h in heads), np.int64, len(heads))
    log_append = np.fromiter((bool(h.fields[5] & TIMESTAMP_TYPE_BIT) for h in heads), bool, len(heads))
    base_ts = np.fromiter((h.fields[8] if h.fields[5] & TIMESTAMP_TYPE_BIT else h.fields[7] for h in heads),
                          np.int64, len(heads))
    offsets = np.repeat(base_offsets, counts) + offset_delta
    timestamps = np.repeat(base_ts, counts) + np.where(np.repeat(log_append, counts), 0, ts_delta)
    types = np.repeat(log_append.astype(np.int32), counts)

    keep = None
    if offsets[0] < start or offsets[-1] >= end:
        keep = (offsets >= start) & (offsets < end)
    headers = _headers(joined, headers_at, header_count, rec_end, keep) if include_headers else None
    if keep is not None:
        offsets, timestamps, types = offsets[keep], timestamps[keep], types[keep]
        key_at, key_len, value_at, value_len = key_at[keep], key_len[keep], value_at[keep], value_len[keep]
    buffer = pa.py_buffer(joined)
    big = len(joined) > _INT32_LIMIT
    return Columns(_binary(buffer, big, key_at, key_len), _binary(buffer, big, value_at, value_len), offsets,
                   timestamps, types, headers)


def _headers(b: bytes, at: np.ndarray, counts: np.ndarray, rec_end: np.ndarray, keep: np.ndarray | None) -> pa.Array:
    """The headers column: decoded in Python, for the records that have any (null for the others, as Spark)."""
    if keep is not None:
        at, counts, rec_end = at[keep], counts[keep], rec_end[keep]
    n = len(at)
    names: list[str] = []
    values: list[bytes | None] = []
    for i in np.flatnonzero(counts).tolist():
        p = int(at[i])
        for _ in range(int(counts[i])):
            hk, p = _varint_slow(b, p, 5)
            if hk < 0:
                raise CorruptRecordError("a header key cannot be null")
            names.append(b[p:p + hk].decode())
            p += hk
            hv, p = _varint_slow(b, p, 5)
            if hv < 0:
                values.append(None)
            else:
                values.append(b[p:p + hv])
                p += hv
        if p != rec_end[i]:
            raise CorruptRecordError(f"record headers end at {p}, not at the record's end {int(rec_end[i])}")
    list_offsets = np.zeros(n + 1, np.int32)
    np.cumsum(counts, out=list_offsets[1:])
    struct = pa.StructArray.from_arrays([pa.array(names, pa.string()), pa.array(values, pa.binary())],
                                        fields=list(HEADER_TYPE.value_type))
    # Spark's connector gives a record without headers null, not an empty array (KafkaRecordToRowConverter).
    return pa.ListArray.from_arrays(pa.array(list_offsets), struct, type=HEADER_TYPE,
                                    mask=pa.array(counts == 0, pa.bool_()))


def _legacy_columns(batch: RecordBatch, start: int, end: int, include_headers: bool) -> Columns:
    """A legacy message (magic 0/1): few records, decoded by ``kafkamock.records``."""
    recs = [r for r in batch.records if start <= r.offset < end]
    ts_type = 1 if batch.timestamp_type == "LogAppendTime" else 0
    return Columns(pa.array([r.key for r in recs], pa.binary()), pa.array([r.value for r in recs], pa.binary()),
                   np.array([r.offset for r in recs], np.int64), np.array([r.timestamp for r in recs], np.int64),
                   np.full(len(recs), ts_type, np.int32),
                   pa.array([None for _ in recs], HEADER_TYPE) if include_headers else None)


# -- writing: Arrow columns to records regions ---------------------------------------------------------------------

BATCH_OVERHEAD = HEADER_SIZE
_MAX_REGION_BYTES = 1 << 30           # rows are encoded this many bytes at a time at most (Arrow's int32 offsets)
_M = np.uint32(0x5BD1E995)


def _zigzag(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Zig-zag encoding of int32-range values (int64), and each one's varint size."""
    z = (values << 1) ^ (values >> 63)
    return z, _varint_size(z)


def _varint_size(z: np.ndarray) -> np.ndarray:
    """Bytes of the varint of each of ``z`` (non-negative)."""
    size = np.ones(len(z), np.int64)
    if len(z):
        top, step = int(z.max()), 1 << 7
        while top >= step:
            size += z >= step
            step <<= 7
    return size


def _zigzag_size(values: np.ndarray) -> np.ndarray:
    return _varint_size((values << 1) ^ (values >> 63))


def _varints_column(fields: list[tuple[np.ndarray, np.ndarray] | None], n: int, last_row: bytes = b"") -> pa.Array:
    """A binary column whose row i holds, for each field, the varint of row i (None: a 0 byte), with one more row
    ``last_row`` when given: bytes written field by field into one buffer, a few array operations each."""
    sizes = sum(1 if f is None else f[1] for f in fields)
    rows = n + (1 if last_row else 0)
    offsets = np.zeros(rows + 1, np.int64)
    np.cumsum(sizes, out=offsets[1:n + 1])
    total = int(offsets[n])
    out = np.zeros(total + len(last_row), np.uint8)         # 0 bytes need no writing
    if last_row:
        out[total:] = np.frombuffer(last_row, np.uint8)
        offsets[-1] = len(out)
    at = offsets[:n].copy()
    for field in fields:
        if field is None:
            at += 1
            continue
        z, size = field
        longest = int(size.max()) if n else 0
        for j in range(longest):
            byte = ((z >> (7 * j)) & 0x7F).astype(np.uint8)
            if j + 1 < longest:
                byte |= np.where(size > j + 1, 0x80, 0).astype(np.uint8)
            if j == 0:
                out[at] = byte
            else:
                sel = size > j
                out[at[sel] + j] = byte[sel]
        at += size
    return pa.Array.from_buffers(pa.binary(), rows, [None, pa.py_buffer(offsets.astype(np.int32)),
                                                     pa.py_buffer(out)])


def as_binary(column: pa.Array) -> pa.Array:
    """A key or value column (binary or string, maybe large) as binary."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    return column if column.type == pa.binary() else column.cast(pa.binary())


def _lengths(column: pa.Array) -> np.ndarray:
    """Each value's length, -1 for null."""
    if column.null_count == len(column):
        return np.full(len(column), -1, np.int64)
    offsets = np.frombuffer(column.buffers()[1], np.int32, len(column) + 1, column.offset * 4)
    lengths = np.diff(offsets).astype(np.int64)
    if column.null_count:
        lengths[np.asarray(column.is_null())] = -1
    return lengths


def header_blobs(headers: pa.Array | None, n: int) -> pa.Array | None:
    """Each row's encoded headers (count, then key and value of each), or None when no row has any."""
    if headers is None or headers.null_count == len(headers):
        return None
    if isinstance(headers, pa.ChunkedArray):
        headers = headers.combine_chunks()
    counts = pc.fill_null(pc.list_value_length(headers), 0)
    if not pc.any(pc.greater(counts, 0)).as_py():
        return None
    from kafkamock.codec.varint import zigzag_bytes
    blobs = []
    for row in headers.to_pylist():
        if not row:
            blobs.append(b"\x00")
            continue
        parts = [zigzag_bytes(len(row))]
        for h in row:
            if h["key"] is None:
                raise ValueError("a header key cannot be null")
            key = h["key"].encode()
            value = h["value"]
            parts += (zigzag_bytes(len(key)), key, b"\x01" if value is None else zigzag_bytes(len(value)),
                      value or b"")
        blobs.append(b"".join(parts))
    return pa.array(blobs, pa.binary())


def record_sizes(keys: pa.Array, values: pa.Array, blobs: pa.Array | None, limit: int) -> np.ndarray:
    """An upper bound on each row's size as a record in a batch of at most ``limit`` bytes (its offset delta is
    at most that many records)."""
    kl, vl = _lengths(keys), _lengths(values)
    body = 2 + _zigzag_size(kl) + np.maximum(kl, 0) + _zigzag_size(vl) + np.maximum(vl, 0)
    body = body + (1 if blobs is None else _lengths(blobs))
    body += int(_zigzag_size(np.array([max(limit // 7, 1)]))[0])
    sizes: np.ndarray = body + _zigzag_size(body)
    return sizes


def chunk_bounds(sizes: np.ndarray, limit: int) -> list[tuple[int, int]]:
    """Consecutive row ranges whose records fit a batch of ``limit`` bytes (at least one row each)."""
    cum = np.cumsum(sizes)
    room = limit - BATCH_OVERHEAD
    bounds, start, n = [], 0, len(sizes)
    while start < n:
        before = int(cum[start - 1]) if start else 0
        stop = max(int(np.searchsorted(cum, before + room, side="right")), start + 1)
        bounds.append((start, stop))
        start = stop
    return bounds


def encode_regions(keys: pa.Array, values: pa.Array, blobs: pa.Array | None,
                   bounds: list[tuple[int, int]]) -> list[tuple[memoryview, int]]:
    """The records regions of the row ranges ``bounds`` (offset deltas from 0 in each, timestamp deltas 0), laid
    out as ``kafkamock.records.encode_batch`` lays out the same records; (region, record count) each."""
    n = len(values)
    if n == 0:
        return []
    starts = np.repeat(np.array([a for a, _ in bounds], np.int64), [b - a for a, b in bounds])
    offset_delta = np.arange(n, dtype=np.int64) - starts
    kl, vl = _lengths(keys), _lengths(values)
    od, kz, vz = _zigzag(offset_delta), _zigzag(kl), _zigzag(vl)
    tail = 1 if blobs is None else _lengths(blobs)
    body = _zigzag(2 + od[1] + kz[1] + np.maximum(kl, 0) + vz[1] + np.maximum(vl, 0) + tail)
    # Without headers each record ends in a header count of 0: written as the first byte of the next record's
    # first piece (a last piece holds the last record's), so there is no piece of one byte per record.
    lead: list = [] if blobs is not None else [None]
    end = b"" if blobs is not None else b"\x00"
    if keys.null_count == n:
        pieces = [_varints_column([*lead, body, None, None, od, kz, vz], n, end), values]
    else:
        pieces = [_varints_column([*lead, body, None, None, od, kz], n, end), keys, _varints_column([vz], n), values]
    if blobs is not None:
        pieces.append(blobs)
    k = len(pieces)
    bases = np.cumsum([0] + [len(p) for p in pieces[:-1]])
    order = (np.arange(n, dtype=np.int64)[:, None] + bases).ravel()
    if blobs is None:
        order = np.append(order, bases[0] + n)
    records = pc.take(pa.concat_arrays(pieces), pa.array(order))
    offsets = np.frombuffer(records.buffers()[1], np.int32, len(records) + 1)
    data = memoryview(records.buffers()[2])
    skip = 0 if blobs is not None else 1
    return [(data[int(offsets[a * k]) + skip:int(offsets[b * k]) + skip], b - a) for a, b in bounds]


def murmur2_partitions(keys: pa.Array, partitions: int) -> np.ndarray:
    """Kafka's default partition of each non-null key (``toPositive(murmur2(key)) % partitions``), -1 for null
    keys: ``kafkamock.records.partitioner.partition_for_key`` on whole arrays."""
    n = len(keys)
    out = np.full(n, -1, np.int64)
    lengths = _lengths(keys)
    present = np.flatnonzero(lengths >= 0)
    if not present.size:
        return out
    long = present[lengths[present] > 256]
    short = present[lengths[present] <= 256]
    if long.size:
        from kafkamock.records.partitioner import partition_for_key
        for i in long.tolist():
            out[i] = partition_for_key(keys[i].as_py(), partitions)
    if short.size:
        offsets = np.frombuffer(keys.buffers()[1], np.int32, n + 1, keys.offset * 4).astype(np.int64)
        data = np.frombuffer(keys.buffers()[2], np.uint8) if keys.buffers()[2] is not None else np.zeros(1, np.uint8)
        data = np.concatenate([data, np.zeros(8, np.uint8)])
        start, length = offsets[short], lengths[short]
        with np.errstate(over="ignore"):
            h = np.uint32(0x9747B28C) ^ length.astype(np.uint32)
            words = length // 4
            for w in range(int(words.max()) if len(words) else 0):
                live = np.flatnonzero(words > w)
                at = start[live] + 4 * w
                k = (data[at].astype(np.uint32) | (data[at + 1].astype(np.uint32) << 8)
                     | (data[at + 2].astype(np.uint32) << 16) | (data[at + 3].astype(np.uint32) << 24))
                k = k * _M
                k ^= k >> np.uint32(24)
                k = k * _M
                h[live] = (h[live] * _M) ^ k
            rest = length % 4
            end = start + words * 4
            for extra, shift in ((3, 16), (2, 8)):
                sel = rest >= extra
                h[sel] ^= data[end[sel] + extra - 1].astype(np.uint32) << np.uint32(shift)
            sel = rest >= 1
            h[sel] ^= data[end[sel]].astype(np.uint32)
            h[sel] = h[sel] * _M
            h ^= h >> np.uint32(13)
            h = h * _M
            h ^= h >> np.uint32(15)
        out[short] = (h & np.uint32(0x7FFFFFFF)).astype(np.int64) % partitions
    return out
