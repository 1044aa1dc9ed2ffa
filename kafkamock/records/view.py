"""A zero-copy view of record batches in a buffer: what the broker needs on the hot path.

Produce and fetch never decode records: the broker reads a batch's header fields, validates its CRC, and
rewrites the base offset (and partition leader epoch) in place, on the bytes it will store and serve.
"""

from __future__ import annotations

import bisect
import struct
import zlib
from typing import Protocol

from crc32c import crc32c

from kafkamock.records.compression import CODECS, DEFAULT_MAX_DECOMPRESSED, decompress
from kafkamock.records.errors import CorruptRecordError
from kafkamock.records.framing import walk_records
from kafkamock.records.layout import (
    COMPRESSION_MASK,
    CONTROL_BIT,
    CRC_START,
    HEADER,
    HEADER_SIZE,
    LEGACY_OVERHEAD_V0,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    TIMESTAMP_TYPE_BIT,
    TRANSACTIONAL_BIT,
)


class _Int64Field(Protocol):
    """``struct.Struct(">q")`` as mypy should see it: it packs and unpacks one int (typeshed's ``unpack_from`` says
    ``tuple[Any, ...]``). A declaration only: the hot path calls the ``Struct`` as before."""

    def unpack_from(self, buffer: bytes | bytearray | memoryview, offset: int = 0, /) -> tuple[int]: ...

    def pack_into(self, buffer: bytes | bytearray | memoryview, offset: int, value: int, /) -> None: ...


_OFFSET_LENGTH = struct.Struct(">qi")
_BASE_OFFSET: _Int64Field = struct.Struct(">q")
_INT32 = struct.Struct(">i")
_UINT32 = struct.Struct(">I")

HeaderFields = tuple[int, int, int, int, int, int, int, int, int, int, int, int, int]
"""A v2 batch header as ``HEADER`` unpacks it, in ``BATCH_HEADER_FIELDS`` order (base offset ... records count)."""


class BatchView:
    """One batch (or legacy message) inside a buffer, read and patched in place.

    Header fields come from one ``struct`` call on first use; nothing under the header is touched except by
    ``validate`` (a CRC over the bytes). Setters need a writable buffer (``bytearray`` or a writable
    ``memoryview``).
    """

    __slots__ = ("buffer", "start", "end", "_header")

    def __init__(self, buffer: bytes | bytearray | memoryview, start: int, end: int):
        self.buffer, self.start, self.end = buffer, start, end
        self._header: HeaderFields | None = None

    @property
    def size(self) -> int:
        return self.end - self.start

    @property
    def magic(self) -> int:
        return self.buffer[self.start + MAGIC_OFFSET]

    def _fields(self) -> HeaderFields:
        if self._header is None:
            if self.magic != 2:
                raise CorruptRecordError("header fields of a legacy message are not batch fields", self.start)
            self._header = HEADER.unpack_from(self.buffer, self.start)
        return self._header

    @property
    def base_offset(self) -> int:
        return _BASE_OFFSET.unpack_from(self.buffer, self.start)[0]

    @property
    def partition_leader_epoch(self) -> int:
        return self._fields()[2]

    @property
    def crc(self) -> int:
        return self._fields()[4]

    @property
    def attributes(self) -> int:
        return self._fields()[5]

    @property
    def last_offset_delta(self) -> int:
        return self._fields()[6]

    @property
    def last_offset(self) -> int:
        """The last offset in the batch. A legacy message stores exactly this (a compressed wrapper carries its
        last inner offset), so it is also right for magic 0 and 1."""
        if self.magic != 2:
            return self.base_offset
        return self.base_offset + self.last_offset_delta

    @property
    def base_timestamp(self) -> int:
        return self._fields()[7]

    @property
    def max_timestamp(self) -> int:
        return self._fields()[8]

    @property
    def producer_id(self) -> int:
        return self._fields()[9]

    @property
    def producer_epoch(self) -> int:
        return self._fields()[10]

    @property
    def base_sequence(self) -> int:
        return self._fields()[11]

    @property
    def record_count(self) -> int:
        return self._fields()[12]

    @property
    def last_sequence(self) -> int:
        """The sequence of the last record (wrapping as Kafka's does), or -1 without a base sequence."""
        if self.base_sequence < 0:
            return -1
        return (self.base_sequence + self.last_offset_delta) % (2**31)

    @property
    def compression(self) -> str:
        codec = self.attributes & COMPRESSION_MASK
        return CODECS[codec] if codec < len(CODECS) else f"unknown({codec})"

    @property
    def timestamp_type(self) -> str:
        return "LogAppendTime" if self.attributes & TIMESTAMP_TYPE_BIT else "CreateTime"

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_BIT)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_BIT)

    def validate(self) -> None:
        """Check magic, lengths and the CRC (CRC32C for magic 2, CRC32 for legacy); raise CorruptRecordError."""
        magic = self.magic
        if magic == 2:
            if self.size < HEADER_SIZE:
                raise CorruptRecordError("batch is shorter than a batch header", self.start)
            fields = self._fields()
            stored, computed = fields[4], crc32c(memoryview(self.buffer)[self.start + CRC_START:self.end])
            if stored != computed:
                raise CorruptRecordError(f"CRC32C mismatch (stored {stored:#010x}, computed {computed:#010x})",
                                         self.start)
            if fields[5] & COMPRESSION_MASK >= len(CODECS):
                raise CorruptRecordError(f"unknown compression type {fields[5] & COMPRESSION_MASK}", self.start)
            if fields[12] < 0 or fields[6] < 0:
                raise CorruptRecordError("negative record count or last offset delta", self.start)
        elif magic in (0, 1):
            if self.size < LEGACY_OVERHEAD_V0:
                raise CorruptRecordError("message is shorter than a message header", self.start)
            (stored,) = _UINT32.unpack_from(self.buffer, self.start + LOG_OVERHEAD)
            computed = zlib.crc32(memoryview(self.buffer)[self.start + MAGIC_OFFSET:self.end])
            if stored != computed:
                raise CorruptRecordError(f"CRC32 mismatch (stored {stored:#010x}, computed {computed:#010x})",
                                         self.start)
        else:
            raise CorruptRecordError(f"unknown magic {magic}", self.start)

    def validate_records(self, max_decompressed: int = DEFAULT_MAX_DECOMPRESSED) -> None:
        """Check that the records inside a v2 batch are framed as the header says: as many records as it counts,
        each as long as its length prefix, ending exactly at the end of the (decompressed) records region.

        Cheaper than decoding (one varint per record), and enough to refuse a batch a client could never read
        back; Kafka's LogValidator refuses such batches with INVALID_RECORD. Raises CorruptRecordError.
        """
        fields = self._fields()
        codec = fields[5] & COMPRESSION_MASK
        start = self.start + HEADER_SIZE
        if codec == 0:
            body, p, stop = self.buffer, start, self.end
        else:
            body = decompress(CODECS[codec], memoryview(self.buffer)[start:self.end], max_decompressed)
            p, stop = 0, len(body)
        walk_records(body, p, stop, fields[12], self.start)

    def set_base_offset(self, base_offset: int) -> None:
        """Rewrite the base offset in place (the CRC does not cover it)."""
        _BASE_OFFSET.pack_into(self.buffer, self.start, base_offset)
        if self._header is not None:
            self._header = (base_offset, *self._header[1:])

    def set_partition_leader_epoch(self, epoch: int) -> None:
        """Rewrite the partition leader epoch in place (not covered by the CRC either)."""
        _INT32.pack_into(self.buffer, self.start + 12, epoch)
        if self._header is not None:
            h = self._header
            self._header = (*h[:2], epoch, *h[3:])

    def set_log_append_time(self, timestamp: int) -> None:
        """Mark the batch LogAppendTime with ``timestamp`` as its max timestamp, as a broker does for a
        ``message.timestamp.type=LogAppendTime`` topic; both fields are under the CRC, so it is recomputed
        (a pass over the bytes; the records are not decoded)."""
        attributes = self.attributes | TIMESTAMP_TYPE_BIT
        struct.pack_into(">h", self.buffer, self.start + 21, attributes)
        struct.pack_into(">q", self.buffer, self.start + 35, timestamp)
        crc = crc32c(memoryview(self.buffer)[self.start + CRC_START:self.end])
        _UINT32.pack_into(self.buffer, self.start + 17, crc)
        self._header = None

    def bytes(self) -> bytes:
        return bytes(memoryview(self.buffer)[self.start:self.end])

    def __repr__(self) -> str:
        return f"<BatchView magic={self.magic} base_offset={self.base_offset} size={self.size}>"


def split_batches(buffer: bytes | bytearray | memoryview) -> tuple[list[BatchView], int]:
    """The batches in ``buffer`` and the size of a partial batch at its end (0 if none).

    A Fetch response may end in a partial batch, which readers skip, as clients do. A length that cannot be a
    batch at all is corruption, not truncation.
    """
    views: list[BatchView] = []
    pos, n = 0, len(buffer)
    while n - pos >= LOG_OVERHEAD:
        _, length = _OFFSET_LENGTH.unpack_from(buffer, pos)
        if length < LEGACY_OVERHEAD_V0 - LOG_OVERHEAD:
            raise CorruptRecordError(f"batch length {length} is too small", pos)
        end = pos + LOG_OVERHEAD + length
        if end > n:
            break
        views.append(BatchView(buffer, pos, end))
        pos = end
    return views, n - pos


def find_batch(views: list[BatchView], offset: int) -> int | None:
    """Index of the first batch whose last offset is at or after ``offset``: a fetch at a mid-batch offset is
    served from the batch that contains it, whole, as Kafka does."""
    lasts = [v.last_offset for v in views]
    i = bisect.bisect_left(lasts, offset)
    return i if i < len(views) else None
