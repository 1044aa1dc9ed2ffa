"""RecordBatch v2 (magic 2): decode and encode, byte-compatible with Kafka's MemoryRecordsBuilder.

The record loop is hand-inlined (varints decoded in place, one function call per record at most) because it
runs once per record on every fetch a client decodes; ``layout.Record`` is the construct reference it is
tested against.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from crc32c import crc32c

from kafkamock.codec.varint import zigzag_bytes as _zigzag
from kafkamock.records import compression
from kafkamock.records.control import decode_control
from kafkamock.records.errors import CorruptRecordError
from kafkamock.records.layout import (
    COMPRESSION_MASK,
    CONTROL_BIT,
    CRC_START,
    DELETE_HORIZON_BIT,
    HEADER,
    HEADER_SIZE,
    LOG_OVERHEAD,
    TIMESTAMP_TYPE_BIT,
    TRANSACTIONAL_BIT,
)
from kafkamock.records.model import TIMESTAMP_TYPES, Header, Record, RecordBatch

MIN_BATCH_LENGTH = HEADER_SIZE - LOG_OVERHEAD
_new = tuple.__new__  # builds a Record without the NamedTuple constructor's argument handling


def _varint_slow(b: bytes, p: int, max_bytes: int = 10) -> tuple[int, int]:
    """A zig-zag varint of any length (the inline fast path handles one byte)."""
    value = shift = 0
    for _ in range(max_bytes):
        x = b[p]
        p += 1
        value |= (x & 0x7F) << shift
        if x < 0x80:
            return (value >> 1) ^ -(value & 1), p
        shift += 7
    raise CorruptRecordError("varint is too long")


def decode_v2(data: bytes, pos: int, end: int, max_decompressed: int) -> RecordBatch:
    """Decode the batch at ``data[pos:end]`` (its length already checked against the buffer)."""
    (base_offset, batch_length, leader_epoch, magic, crc, attributes, last_offset_delta, base_timestamp,
     max_timestamp, producer_id, producer_epoch, base_sequence, count) = HEADER.unpack_from(data, pos)
    if batch_length < MIN_BATCH_LENGTH:
        raise CorruptRecordError(f"batch length {batch_length} is shorter than a batch header", pos)
    actual = crc32c(memoryview(data)[pos + CRC_START:end])
    if actual != crc:
        raise CorruptRecordError(f"CRC32C mismatch (stored {crc:#010x}, computed {actual:#010x})", pos)
    codec_id = attributes & COMPRESSION_MASK
    if codec_id >= len(compression.CODECS):
        raise CorruptRecordError(f"unknown compression type {codec_id}", pos)
    if count < 0:
        raise CorruptRecordError(f"negative record count {count}", pos)
    codec = compression.CODECS[codec_id]
    timestamp_type = TIMESTAMP_TYPES[1 if attributes & TIMESTAMP_TYPE_BIT else 0]
    is_control = bool(attributes & CONTROL_BIT)
    if codec == "none":
        body, start, stop = data, pos + HEADER_SIZE, end
    else:
        body = compression.decompress(codec, memoryview(data)[pos + HEADER_SIZE:end], max_decompressed)
        start, stop = 0, len(body)
    log_append = max_timestamp if timestamp_type == "LogAppendTime" else None
    try:
        records = _decode_records(body, start, stop, count, base_offset, base_timestamp, log_append, is_control)
    except CorruptRecordError as exc:
        raise CorruptRecordError(exc.reason, pos) from None
    except (IndexError, UnicodeDecodeError, ValueError) as exc:
        raise CorruptRecordError(f"malformed record: {exc}", pos) from None
    return RecordBatch(
        base_offset=base_offset, magic=magic, compression=codec, timestamp_type=timestamp_type,
        producer_id=producer_id, producer_epoch=producer_epoch, base_sequence=base_sequence,
        is_transactional=bool(attributes & TRANSACTIONAL_BIT), is_control=is_control, records=records,
        partition_leader_epoch=leader_epoch, last_offset=base_offset + last_offset_delta,
        base_timestamp=base_timestamp, max_timestamp=max_timestamp,
        has_delete_horizon=bool(attributes & DELETE_HORIZON_BIT), crc=crc, size=end - pos,
    )


def _decode_records(b: bytes, p: int, stop: int, count: int, base_offset: int, base_timestamp: int,
                    log_append: int | None, is_control: bool) -> list[Record]:
    if count > stop - p:
        raise CorruptRecordError(f"{count} records cannot fit in {stop - p} bytes")
    records = []
    for _ in range(count):
        x = b[p]
        if x < 128:
            length = (x >> 1) ^ -(x & 1)
            p += 1
        elif b[p + 1] < 128:
            x = (x & 127) | (b[p + 1] << 7)
            length = (x >> 1) ^ -(x & 1)
            p += 2
        else:
            length, p = _varint_slow(b, p, 5)
        record_start = p
        if length < 0 or p + length > stop:
            raise CorruptRecordError(f"record length {length} runs past the end of the batch")
        p += 1  # attributes: unused
        x = b[p]
        if x < 128:
            ts_delta = (x >> 1) ^ -(x & 1)
            p += 1
        elif b[p + 1] < 128:
            x = (x & 127) | (b[p + 1] << 7)
            ts_delta = (x >> 1) ^ -(x & 1)
            p += 2
        else:
            ts_delta, p = _varint_slow(b, p)
        x = b[p]
        if x < 128:
            offset_delta = (x >> 1) ^ -(x & 1)
            p += 1
        elif b[p + 1] < 128:
            x = (x & 127) | (b[p + 1] << 7)
            offset_delta = (x >> 1) ^ -(x & 1)
            p += 2
        else:
            offset_delta, p = _varint_slow(b, p, 5)
        x = b[p]
        if x < 128:
            n = (x >> 1) ^ -(x & 1)
            p += 1
        elif b[p + 1] < 128:
            x = (x & 127) | (b[p + 1] << 7)
            n = (x >> 1) ^ -(x & 1)
            p += 2
        else:
            n, p = _varint_slow(b, p, 5)
        if n < 0:
            key = None
        else:
            key = b[p:p + n]
            p += n
        x = b[p]
        if x < 128:
            n = (x >> 1) ^ -(x & 1)
            p += 1
        elif b[p + 1] < 128:
            x = (x & 127) | (b[p + 1] << 7)
            n = (x >> 1) ^ -(x & 1)
            p += 2
        else:
            n, p = _varint_slow(b, p, 5)
        if n < 0:
            value = None
        else:
            value = b[p:p + n]
            p += n
        x = b[p]
        if x < 128:
            n = (x >> 1) ^ -(x & 1)
            p += 1
        elif b[p + 1] < 128:
            x = (x & 127) | (b[p + 1] << 7)
            n = (x >> 1) ^ -(x & 1)
            p += 2
        else:
            n, p = _varint_slow(b, p, 5)
        headers: list[Header] = []
        if n:
            if n < 0 or n > stop - p:
                raise CorruptRecordError(f"invalid header count {n}")
            for _ in range(n):
                hk, p = _varint_slow(b, p, 5)
                if hk < 0:
                    raise CorruptRecordError("a header key cannot be null")
                name = b[p:p + hk].decode()
                p += hk
                hv, p = _varint_slow(b, p, 5)
                if hv < 0:
                    headers.append((name, None))
                else:
                    headers.append((name, b[p:p + hv]))
                    p += hv
        if p - record_start != length:
            raise CorruptRecordError(f"record declares {length} bytes but holds {p - record_start}")
        offset = base_offset + offset_delta
        timestamp = log_append if log_append is not None else base_timestamp + ts_delta
        if is_control:
            control_type, control_value = decode_control(key, value)
            records.append(_new(Record, (offset, timestamp, key, value, headers, control_type, control_value)))
        else:
            records.append(_new(Record, (offset, timestamp, key, value, headers, None, None)))
    if p != stop:
        raise CorruptRecordError(f"{stop - p} bytes remain after the last record")
    return records


# -- encoding ---------------------------------------------------------------------------------------------------


def _fields(record: Record | Mapping[str, Any], index: int,
            base_offset: int) -> tuple[int, int, bytes | None, bytes | None, Sequence[Header]]:
    if type(record) is dict or (not isinstance(record, Record) and isinstance(record, Mapping)):
        get = record.get
        return (get("offset", base_offset + index), get("timestamp", -1), get("key"), get("value"),
                get("headers") or ())
    if isinstance(record, Record):
        return record[:5]
    raise TypeError(f"a record must be a Record or a mapping, not {type(record).__name__}")


def encode_v2(records: Iterable[Record | Mapping[str, Any]], *, base_offset: int = 0, compression_name: str = "none",
              producer_id: int = -1, producer_epoch: int = -1, base_sequence: int = -1,
              transactional: bool = False, control: bool = False, partition_leader_epoch: int = -1,
              timestamp_type: str = "CreateTime", log_append_time: int | None = None,
              delete_horizon_ms: int | None = None, compression_level: int | None = None,
              last_offset: int | None = None, max_timestamp_if_empty: int = -1) -> bytes:
    """One v2 batch, laid out exactly as Kafka's MemoryRecordsBuilder lays it out.

    ``last_offset`` overrides the batch's last offset (Kafka's log cleaner keeps a v2 batch's offset range when it
    drops records from it); with it, a batch may hold no records at all (DefaultRecordBatch.writeEmptyHeader: the
    cleaner keeps a producer's last batch header so its sequence numbers survive), stamped with
    ``max_timestamp_if_empty``.
    """
    codec_id = compression.codec_id(compression_name)
    if timestamp_type not in TIMESTAMP_TYPES:
        raise ValueError(f"timestamp_type must be one of {TIMESTAMP_TYPES}")
    # One buffer for header and records: the header is filled in at the end (copies of a 1 MB region were most
    # of the encode time).
    body = bytearray(HEADER_SIZE)
    # Kafka keeps the delete horizon in the base timestamp field, and record deltas are relative to it.
    base_timestamp: int | None = delete_horizon_ms
    max_timestamp = -1
    count = 0
    previous = base_offset - 1
    for i, record in enumerate(records):
        offset, timestamp, key, value, headers = _fields(record, i, base_offset)
        if offset <= previous:
            raise ValueError(f"record offsets must increase: {offset} after {previous}")
        previous = offset
        if base_timestamp is None:
            base_timestamp = timestamp
        if timestamp > max_timestamp:
            max_timestamp = timestamp
        ts = _zigzag(timestamp - base_timestamp)
        od = _zigzag(offset - base_offset)
        kl = b"\x01" if key is None else _zigzag(len(key))
        vl = b"\x01" if value is None else _zigzag(len(value))
        size = 1 + len(ts) + len(od) + len(kl) + len(vl) + (len(key) if key else 0) + (len(value) if value else 0)
        if headers:
            hparts = [_zigzag(len(headers))]
            for name, hvalue in headers:
                raw = name.encode()
                hparts += (_zigzag(len(raw)), raw, b"\x01" if hvalue is None else _zigzag(len(hvalue)),
                           hvalue or b"")
            hbytes = b"".join(hparts)
        else:
            hbytes = b"\x00"
        body += _zigzag(size + len(hbytes))
        body += b"\x00"  # record attributes: unused
        body += ts
        body += od
        body += kl
        if key:
            body += key
        body += vl
        if value:
            body += value
        body += hbytes
        count += 1
    if last_offset is None:
        if count == 0:
            raise ValueError("a record batch needs at least one record")
        last_offset = previous
    elif last_offset < max(previous, base_offset):
        raise ValueError(f"last_offset {last_offset} is below the batch's last record ({previous})")
    elif count == 0:  # writeEmptyHeader: a header alone, uncompressed
        codec_id = 0
        max_timestamp = max_timestamp_if_empty
        if base_timestamp is None:
            base_timestamp = max_timestamp_if_empty
    attributes = codec_id
    if timestamp_type == "LogAppendTime":
        attributes |= TIMESTAMP_TYPE_BIT
        if log_append_time is None:
            raise ValueError("a LogAppendTime batch needs log_append_time")
        max_timestamp = log_append_time
    if transactional:
        attributes |= TRANSACTIONAL_BIT
    if control:
        attributes |= CONTROL_BIT
    assert base_timestamp is not None
    if delete_horizon_ms is not None:
        attributes |= DELETE_HORIZON_BIT
    if codec_id:
        region = compression.compress(compression_name, memoryview(body)[HEADER_SIZE:], compression_level)
        del body[HEADER_SIZE:]
        body += region
    HEADER.pack_into(body, 0, base_offset, len(body) - LOG_OVERHEAD, partition_leader_epoch, 2, 0, attributes,
                     last_offset - base_offset, base_timestamp, max_timestamp, producer_id, producer_epoch,
                     base_sequence, count)
    body[17:21] = crc32c(memoryview(body)[CRC_START:]).to_bytes(4, "big")
    return bytes(body)


def encode_v2_region(region: bytes | memoryview, count: int, *, base_timestamp: int,
                     max_timestamp: int, base_offset: int = 0, compression_name: str = "none",
                     producer_id: int = -1, producer_epoch: int = -1, base_sequence: int = -1,
                     transactional: bool = False, partition_leader_epoch: int = -1,
                     compression_level: int | None = None) -> bytes:
    """A CreateTime v2 batch around ``count`` records already encoded: ``region`` is the uncompressed records
    region (offset deltas 0 to count-1, timestamp deltas from ``base_timestamp``), laid out as ``encode_v2`` lays
    out the same records (bulk writers encode records from columns, see kafkamock.spark.columnar)."""
    if count <= 0:
        raise ValueError("a record batch needs at least one record")
    codec_id = compression.codec_id(compression_name)
    body = bytearray(HEADER_SIZE)
    if codec_id:
        body += compression.compress(compression_name, region, compression_level)
    else:
        body += region
    attributes = codec_id | (TRANSACTIONAL_BIT if transactional else 0)
    HEADER.pack_into(body, 0, base_offset, len(body) - LOG_OVERHEAD, partition_leader_epoch, 2, 0, attributes,
                     count - 1, base_timestamp, max_timestamp, producer_id, producer_epoch, base_sequence, count)
    body[17:21] = crc32c(memoryview(body)[CRC_START:]).to_bytes(4, "big")
    return bytes(body)
