"""A partition's log: raw record batches by offset, kept as the bytes clients sent (offsets rewritten in place).

The storage interface from DESIGN.md §2: append raw batch bytes, read from an offset up to a byte limit,
truncate, delete before an offset. This one keeps batches in memory; segment files can come later behind the
same methods.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from kafkamock.records import decode_batches


@dataclass(slots=True)
class StoredBatch:
    data: bytes | bytearray | memoryview  # the batch with offsets assigned (a view of its produce request frame)
    base_offset: int
    last_offset: int
    max_timestamp: int
    append_time_ms: int


class PartitionLog:
    def __init__(self) -> None:
        self._batches: list[StoredBatch] = []
        self._lasts: list[int] = []
        self.log_start_offset = 0
        self.log_end_offset = 0
        self.size_bytes = 0

    def __len__(self) -> int:
        return len(self._batches)

    @property
    def high_watermark(self) -> int:
        return self.log_end_offset  # one replica: everything appended is committed

    def append(self, data: bytes | bytearray | memoryview, base_offset: int, last_offset: int, max_timestamp: int,
               now_ms: int) -> None:
        """Append one batch whose offsets are already assigned (base_offset == log_end_offset)."""
        if base_offset != self.log_end_offset:
            raise ValueError(f"batch at {base_offset} does not follow the log end {self.log_end_offset}")
        self._batches.append(StoredBatch(data, base_offset, last_offset, max_timestamp, now_ms))
        self._lasts.append(last_offset)
        self.log_end_offset = last_offset + 1
        self.size_bytes += len(data)

    def read(self, offset: int, max_bytes: int, *, at_least_one: bool = True) -> bytes:
        """Whole batches from the one containing ``offset``, up to ``max_bytes``; the first batch is returned
        even when it is larger, if ``at_least_one`` (KIP-74), so a consumer can always make progress."""
        return b"".join(self.read_parts(offset, max_bytes, at_least_one=at_least_one))

    def read_parts(self, offset: int, max_bytes: int, *, at_least_one: bool = True) -> list:
        """``read`` as the stored buffers themselves, for a response that sends them without joining them."""
        i = bisect.bisect_left(self._lasts, offset)
        parts: list[bytes | bytearray | memoryview] = []
        total = 0
        while i < len(self._batches):
            data = self._batches[i].data
            if total + len(data) > max_bytes and (parts or not at_least_one):
                break
            parts.append(data)
            total += len(data)
            i += 1
        return parts

    def batches_from(self, offset: int) -> list[StoredBatch]:
        return self._batches[bisect.bisect_left(self._lasts, offset):]

    def delete_before(self, offset: int) -> None:
        """Move the log start offset up to ``offset``, dropping batches wholly below it."""
        if offset <= self.log_start_offset:
            return
        self.log_start_offset = min(offset, self.log_end_offset)
        i = bisect.bisect_left(self._lasts, self.log_start_offset)
        for gone in self._batches[:i]:
            self.size_bytes -= len(gone.data)
        del self._batches[:i]
        del self._lasts[:i]

    def truncate(self, offset: int) -> None:
        """Drop everything at and after ``offset`` (a whole batch at a time)."""
        i = bisect.bisect_left(self._lasts, offset)
        for gone in self._batches[i:]:
            self.size_bytes -= len(gone.data)
        del self._batches[i:]
        del self._lasts[i:]
        self.log_end_offset = self._batches[-1].last_offset + 1 if self._batches else max(self.log_start_offset,
                                                                                            min(offset, self.log_end_offset))

    def apply_retention(self, retention_ms: int, retention_bytes: int, now_ms: int) -> int:
        """Delete whole batches past ``retention.ms`` (by their largest timestamp, as Kafka does with segments)
        or beyond ``retention.bytes``; never the active end of the log. Returns how many batches went."""
        drop = 0
        n = len(self._batches)
        if retention_ms >= 0:
            while drop < n - 1 and now_ms - self._batches[drop].max_timestamp > retention_ms:
                drop += 1
        if retention_bytes >= 0:
            size = self.size_bytes - sum(len(b.data) for b in self._batches[:drop])
            while drop < n - 1 and size > retention_bytes:
                size -= len(self._batches[drop].data)
                drop += 1
        if drop:
            self.delete_before(self._batches[drop].base_offset)
        return drop

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record whose timestamp is at least ``timestamp``."""
        for stored in self._batches:
            if stored.max_timestamp < timestamp:
                continue
            for batch in decode_batches(stored.data):
                for record in batch.records:
                    if record.timestamp >= timestamp and record.offset >= self.log_start_offset:
                        return record.offset, record.timestamp
        return None

    def max_timestamp(self) -> tuple[int, int] | None:
        """(offset, timestamp) of the record with the largest timestamp (the earliest such record)."""
        best: tuple[int, int] | None = None
        for stored in self._batches:
            if best is not None and stored.max_timestamp <= best[1]:
                continue
            for batch in decode_batches(stored.data):
                for record in batch.records:
                    if record.offset >= self.log_start_offset and (best is None or record.timestamp > best[1]):
                        best = (record.offset, record.timestamp)
        return best
