"""Legacy message sets, magic 0 and 1: old clients still send them (kafka-python pinned to an old api_version).

Each top-level message is one "batch": either one record, or a compressed wrapper whose value is a message set
of inner records. Offsets follow Kafka: inner offsets are absolute in magic 0; in magic 1 they are relative and
the wrapper carries the absolute offset of the last inner record.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from construct import ConstructError

from kafkamock.records import compression
from kafkamock.records.errors import CorruptRecordError
from kafkamock.records.layout import (
    COMPRESSION_MASK,
    LEGACY_OVERHEAD_V0,
    LEGACY_OVERHEAD_V1,
    LOG_OVERHEAD,
    TIMESTAMP_TYPE_BIT,
    LegacyMessage,
)
from kafkamock.records.model import NO_TIMESTAMP_TYPE, TIMESTAMP_TYPES, Record, RecordBatch
from kafkamock.records.v2 import _fields

_OFFSET_SIZE = struct.Struct(">qi")
CRC_START = 16  # CRC32 covers magic .. end


class _Wrapper(Protocol):
    """What ``_inner_records`` reads of a compressed wrapper as ``LegacyMessage`` parses it (a construct Container
    whose value was checked to be there)."""

    offset: int
    timestamp: int | None   # None at magic 0
    value: bytes


def decode_legacy(data: bytes, pos: int, end: int, max_decompressed: int, *, inner: bool = False) -> RecordBatch:
    """Decode the legacy message at ``data[pos:end]``, with its inner messages if it is a compressed wrapper."""
    magic = data[pos + 16]
    size = end - pos - LOG_OVERHEAD
    overhead = (LEGACY_OVERHEAD_V1 if magic == 1 else LEGACY_OVERHEAD_V0) - LOG_OVERHEAD
    if size < overhead:
        raise CorruptRecordError(f"message size {size} is smaller than a magic {magic} message", pos)
    try:
        msg = LegacyMessage.parse(data[pos:end])
    except ConstructError as exc:
        raise CorruptRecordError(f"malformed magic {magic} message: {exc}", pos) from None
    actual = zlib.crc32(memoryview(data)[pos + CRC_START:end])
    if actual != msg.crc:
        raise CorruptRecordError(f"CRC32 mismatch (stored {msg.crc:#010x}, computed {actual:#010x})", pos)
    codec_id = msg.attributes & COMPRESSION_MASK
    if codec_id >= len(compression.CODECS) or compression.CODECS[codec_id] == "zstd":
        raise CorruptRecordError(f"invalid compression type {codec_id} for magic {magic}", pos)
    codec = compression.CODECS[codec_id]
    if magic == 0:
        timestamp_type, timestamp = NO_TIMESTAMP_TYPE, -1
    else:
        timestamp_type = TIMESTAMP_TYPES[1 if msg.attributes & TIMESTAMP_TYPE_BIT else 0]
        timestamp = msg.timestamp
    if codec == "none":
        records = [Record(msg.offset, timestamp, msg.key, msg.value, [])]
    else:
        if inner:
            raise CorruptRecordError("a compressed message inside a compressed message", pos)
        if msg.value is None:
            raise CorruptRecordError("a compressed wrapper message without a value", pos)
        records = _inner_records(msg, magic, codec, timestamp_type, max_decompressed, pos)
    return RecordBatch(
        base_offset=records[0].offset, magic=magic, compression=codec, timestamp_type=timestamp_type,
        producer_id=-1, producer_epoch=-1, base_sequence=-1, is_transactional=False, is_control=False,
        records=records, last_offset=records[-1].offset, base_timestamp=timestamp,
        max_timestamp=timestamp if codec != "none" else timestamp, crc=msg.crc, size=end - pos,
    )


def _inner_records(wrapper: _Wrapper, magic: int, codec: str, timestamp_type: str, max_decompressed: int,
                   pos: int) -> list[Record]:
    inner = compression.decompress(codec, wrapper.value, max_decompressed, legacy_lz4=magic == 0)
    messages: list[Record] = []
    p = 0
    while p + LOG_OVERHEAD <= len(inner):
        _, size = _OFFSET_SIZE.unpack_from(inner, p)
        stop = p + LOG_OVERHEAD + size
        if size < 0 or stop > len(inner):
            raise CorruptRecordError("inner message runs past the end of the compressed set", pos)
        if inner[p + 16] != magic:
            raise CorruptRecordError(f"inner message magic {inner[p + 16]} differs from the wrapper's {magic}", pos)
        messages.extend(decode_legacy(inner, p, stop, max_decompressed, inner=True).records)
        p = stop
    if p != len(inner) or not messages:
        raise CorruptRecordError("compressed message set is empty or ends in a partial message", pos)
    if magic == 1:
        # Relative inner offsets: the wrapper holds the absolute offset of the last inner message.
        shift = wrapper.offset - messages[-1].offset
        log_append = wrapper.timestamp if timestamp_type == "LogAppendTime" else None
        messages = [Record(r.offset + shift, log_append if log_append is not None else r.timestamp, r.key, r.value, [])
                    for r in messages]
    return messages


def _message(offset: int, magic: int, attributes: int, timestamp: int, key: bytes | None,
             value: bytes | None) -> bytes:
    raw = bytearray(LegacyMessage.build({"offset": offset, "message_size": 0, "crc": 0, "magic": magic,
                                         "attributes": attributes, "timestamp": timestamp if magic == 1 else None,
                                         "key": key, "value": value}))
    struct.pack_into(">i", raw, 8, len(raw) - LOG_OVERHEAD)
    struct.pack_into(">I", raw, 12, zlib.crc32(memoryview(raw)[CRC_START:]))
    return bytes(raw)


def encode_legacy(records: Iterable[Record | Mapping[str, Any]], *, magic: int, base_offset: int = 0,
                  compression_name: str = "none", timestamp_type: str = "CreateTime",
                  log_append_time: int | None = None, compression_level: int | None = None) -> bytes:
    """A magic 0 or 1 message set as Kafka's legacy builder writes it (one wrapper message when compressed)."""
    if magic not in (0, 1):
        raise ValueError("legacy magic is 0 or 1")
    codec_id = compression.codec_id(compression_name)
    if compression_name == "zstd":
        raise ValueError("zstd needs magic 2")
    ts_bit = TIMESTAMP_TYPE_BIT if magic == 1 and timestamp_type == "LogAppendTime" else 0
    items = [_fields(r, i, base_offset) for i, r in enumerate(records)]
    if not items:
        raise ValueError("a message set needs at least one record")
    if any(headers for *_, headers in items):
        raise ValueError("magic 0 and 1 messages cannot carry headers")
    if ts_bit and log_append_time is None:
        raise ValueError("a LogAppendTime message set needs log_append_time")

    def stamp(ts: int) -> int:
        return log_append_time if ts_bit else ts  # type: ignore[return-value]

    if codec_id == 0:
        return b"".join(_message(off, magic, ts_bit, stamp(ts), key, value) for off, ts, key, value, _ in items)
    first = items[0][0]
    inner = b"".join(
        _message(off - first if magic == 1 else off, magic, 0, ts, key, value)
        for off, ts, key, value, _ in items
    )
    wrapper_ts = stamp(max(ts for _, ts, *_ in items))
    value = compression.compress(compression_name, inner, compression_level, legacy_lz4=magic == 0)
    return _message(items[-1][0], magic, codec_id | ts_bit, wrapper_ts, None, value)
