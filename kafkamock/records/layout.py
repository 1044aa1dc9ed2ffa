"""Kafka's record layouts, written once as construct definitions.

These are the reference: the record-batch header format used on the hot path is derived from
``BATCH_HEADER_FIELDS``, the legacy (magic 0/1) message format is parsed with ``LegacyMessage``, and the tests
check the fast v2 record decoder against ``Record`` byte for byte.
"""

from __future__ import annotations

import struct

from construct import (
    Adapter,
    Construct,
    If,
    Int8sb,
    Int16sb,
    Int32sb,
    Int32ub,
    Int64sb,
    PrefixedArray,
    Struct,
    this,
)

from kafkamock.codec.constructs import Context, KafkaBytes, KafkaConstructError, Stream, VarInt, VarLong

# -- RecordBatch v2 (magic 2) ---------------------------------------------------------------------------------

BATCH_HEADER_FIELDS = (
    ("base_offset", Int64sb),
    ("batch_length", Int32sb),             # bytes after this field
    ("partition_leader_epoch", Int32sb),
    ("magic", Int8sb),                     # 2
    ("crc", Int32ub),                      # CRC32C of everything from attributes to the end of the batch
    ("attributes", Int16sb),               # bits 0-2 compression, 3 timestamp type, 4 transactional, 5 control,
                                           # 6 delete horizon
    ("last_offset_delta", Int32sb),
    ("base_timestamp", Int64sb),
    ("max_timestamp", Int64sb),
    ("producer_id", Int64sb),
    ("producer_epoch", Int16sb),
    ("base_sequence", Int32sb),
    ("records_count", Int32sb),
)
BatchHeader = Struct(*(name / subcon for name, subcon in BATCH_HEADER_FIELDS))
HEADER = struct.Struct(">" + "".join(subcon.fmtstr.lstrip("<>=!") for _, subcon in BATCH_HEADER_FIELDS))
"""The same header as one ``struct`` call, for the hot path (61 bytes)."""

HEADER_SIZE = HEADER.size
LOG_OVERHEAD = 12                          # base offset + batch length
CRC_START = 21                             # attributes start here: CRC32C covers [21, end)
MAGIC_OFFSET = 16                          # the same byte in every format, so a reader can dispatch on it
ATTRIBUTES_OFFSET = 21

COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_BIT = 0x08
TRANSACTIONAL_BIT = 0x10
CONTROL_BIT = 0x20
DELETE_HORIZON_BIT = 0x40


class VarBytes(Construct):
    """Bytes with a zig-zag varint length; -1 is null (record keys, values and header values)."""

    def _parse(self, stream: Stream, context: Context, path: str) -> bytes | None:
        n = VarInt()._parse(stream, context, path)
        if n < 0:
            return None
        data = stream.read(n)
        if len(data) != n:
            raise KafkaConstructError("record field runs past the end", path=path)
        return data

    def _build(self, obj: bytes | bytearray | memoryview | None, stream: Stream, context: Context,
               path: str) -> bytes | bytearray | memoryview | None:
        if obj is None:
            VarInt()._build(-1, stream, context, path)
        else:
            VarInt()._build(len(obj), stream, context, path)
            stream.write(bytes(obj))
        return obj

    def _sizeof(self, context: Context, path: str) -> int:
        raise KafkaConstructError("variable size", path=path)


class _VarString(Adapter):
    def _decode(self, obj: bytes | None, context: Context, path: str) -> str:
        if obj is None:
            raise KafkaConstructError("a header key cannot be null", path=path)
        return obj.decode()

    def _encode(self, obj: str, context: Context, path: str) -> bytes:
        return obj.encode()


RecordHeader = Struct("key" / _VarString(VarBytes()), "value" / VarBytes())

Record = Struct(
    "length" / VarInt(),                   # bytes after this field
    "attributes" / Int8sb,                 # unused, 0
    "timestamp_delta" / VarLong,
    "offset_delta" / VarInt(),
    "key" / VarBytes(),
    "value" / VarBytes(),
    "headers" / PrefixedArray(VarInt(), RecordHeader),
)
"""One record inside a v2 batch's (decompressed) records region."""

# -- Legacy message sets (magic 0 and 1) ------------------------------------------------------------------------

LegacyMessage = Struct(
    "offset" / Int64sb,                    # absolute; in a magic 1 compressed set, the wrapper's is the last inner one
    "message_size" / Int32sb,
    "crc" / Int32ub,                       # CRC32 of everything from magic to the end of the message
    "magic" / Int8sb,
    "attributes" / Int8sb,                 # bits 0-2 compression, bit 3 timestamp type (magic 1)
    "timestamp" / If(this.magic == 1, Int64sb),
    "key" / KafkaBytes(nullable=True),
    "value" / KafkaBytes(nullable=True),
)
LEGACY_OVERHEAD_V0 = 26                    # offset, size, crc, magic, attributes, key length, value length
LEGACY_OVERHEAD_V1 = 34                    # ... plus the timestamp

__all__ = [
    "BATCH_HEADER_FIELDS", "BatchHeader", "HEADER", "HEADER_SIZE", "LegacyMessage", "Record",
    "RecordHeader", "VarBytes",
]
