"""A log segment: a run of whole record batches, with what a reader needs to find them without decoding.

Kafka's LogSegment keeps a sparse offset index and a time index on disk; here every segment also keeps, in
memory, one entry per batch (its first and last offsets, where it ends, its largest timestamp) in one ``array``, so
a fetch or a timestamp lookup is a bisect away whether the bytes live in memory (``MemorySegment``) or in a file
(``storage.disk.FileSegment``). Subclasses only decide where the bytes go.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Sequence
from typing import cast

Buffer = bytes | bytearray | memoryview
# The batch index holds FIELDS int64s a batch, interleaved (one array, not one per field: four were 450 bytes on
# each of 10,000 one-batch partitions): its base offset, last offset, end position and largest timestamp.
FIELDS = 4
FIRST, LAST, END, MAX_TS = range(FIELDS)
# The batch index of a segment that has no batch yet, shared by all of them: an empty read-only int64 view, which
# reads as an empty array and fails on any write. A segment gets an array of its own with its first batch.
_NO_BATCHES = cast("array[int]", memoryview(b"").cast("q"))


class Segment:
    """Batches ``[base_offset, next_offset)``, in append order.

    ``largest_timestamp`` follows Kafka's LogSegment: the largest batch timestamp seen, or, when no batch
    carries one, the time of the last append (Kafka uses the file's modification time).
    """

    __slots__ = ("base_offset", "created_ms", "last_modified_ms", "batch_index", "size", "largest_ts",
                 "largest_ts_offset", "first_batch_ts")

    def __init__(self, base_offset: int, created_ms: int):
        self.base_offset = base_offset
        self.created_ms = created_ms
        self.last_modified_ms = created_ms
        self.batch_index = _NO_BATCHES   # FIELDS entries a batch: FIRST, LAST, END, MAX_TS
        self.size = 0
        self.largest_ts = -1
        self.largest_ts_offset = -1
        self.first_batch_ts: int | None = None   # Kafka's rollingBasedTimestamp

    # -- what every segment knows ---------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.batch_index) // FIELDS

    @property
    def next_offset(self) -> int:
        index = self.batch_index
        return index[LAST - FIELDS] + 1 if index else self.base_offset

    @property
    def largest_timestamp(self) -> int:
        return self.largest_ts if self.largest_ts >= 0 else self.last_modified_ms

    def first_offset(self, i: int) -> int:
        return self.batch_index[i * FIELDS + FIRST]

    def last_offset(self, i: int) -> int:
        return self.batch_index[i * FIELDS + LAST]

    def end(self, i: int) -> int:
        """Where batch ``i`` ends (the position just after it)."""
        return self.batch_index[i * FIELDS + END]

    def max_timestamp(self, i: int) -> int:
        return self.batch_index[i * FIELDS + MAX_TS]

    def position(self, i: int) -> int:
        """Where batch ``i`` starts."""
        return self.batch_index[i * FIELDS + END - FIELDS] if i else 0

    def batch_size(self, i: int) -> int:
        return self.end(i) - self.position(i)

    def find(self, offset: int) -> int:
        """Index of the first batch whose last offset is at or after ``offset`` (``len(self)`` if none)."""
        # Released on the way out, even by an exception: an array with a live view of it cannot grow.
        with memoryview(self.batch_index) as index, index[LAST::FIELDS] as lasts:
            return bisect.bisect_left(lasts, offset)

    def _index(self, size: int, base_offset: int, last_offset: int, max_timestamp: int, now_ms: int) -> None:
        if self.batch_index is _NO_BATCHES:
            self.batch_index = array("q")
        self.size += size
        self.batch_index.extend((base_offset, last_offset, self.size, max_timestamp))
        self.last_modified_ms = now_ms
        if self.first_batch_ts is None:
            self.first_batch_ts = max_timestamp
        if max_timestamp > self.largest_ts:
            self.largest_ts, self.largest_ts_offset = max_timestamp, last_offset

    def _unindex(self, keep: int) -> None:
        if not keep:
            self.batch_index = _NO_BATCHES
        else:
            del self.batch_index[keep * FIELDS:]
        self.size = self.end(keep - 1) if keep else 0
        self.largest_ts, self.largest_ts_offset = -1, -1
        for i in range(keep):
            ts = self.max_timestamp(i)
            if ts > self.largest_ts:
                self.largest_ts, self.largest_ts_offset = ts, self.last_offset(i)
        if not keep:
            self.first_batch_ts = None

    def time_waited_for_roll(self, now_ms: int, incoming_max_ts: int) -> int:
        """Kafka's LogSegment.timeWaitedForRoll: by record time when the first batch has a timestamp, else by
        the wall clock since the segment was created."""
        if self.first_batch_ts is not None and self.first_batch_ts >= 0:
            return incoming_max_ts - self.first_batch_ts
        return now_ms - self.created_ms

    # -- where the bytes live (subclasses) ------------------------------------------------------------------------

    def append(self, data: Buffer, base_offset: int, last_offset: int, max_timestamp: int, now_ms: int) -> None:
        raise NotImplementedError

    def read(self, i: int, j: int) -> list[Buffer]:
        """Batches ``i`` to ``j - 1`` as buffers (as few as the storage allows; their bytes are the batches')."""
        raise NotImplementedError

    def batch(self, i: int) -> Buffer:
        raise NotImplementedError

    def header(self, i: int) -> Buffer:
        """At least the first ``HEADER_SIZE`` bytes of batch ``i`` (all of it where that costs nothing)."""
        return self.batch(i)

    def truncate(self, keep: int) -> None:
        """Keep the first ``keep`` batches."""
        raise NotImplementedError

    def seal(self) -> None:
        """The segment stops being the active one (Kafka trims its indexes here)."""

    def flush(self) -> None:
        """Make appended bytes durable."""

    def close(self) -> None:
        """Release what the segment holds open."""

    def delete(self) -> None:
        """Remove the segment's bytes for good."""


class MemorySegment(Segment):
    """Batches kept as the buffers they arrived in (a produced batch is a slice of its request frame)."""

    __slots__ = ("batches",)

    def __init__(self, base_offset: int, created_ms: int):
        super().__init__(base_offset, created_ms)
        self.batches: list[Buffer] = []

    def append(self, data: Buffer, base_offset: int, last_offset: int, max_timestamp: int, now_ms: int) -> None:
        self.batches.append(data)
        self._index(len(data), base_offset, last_offset, max_timestamp, now_ms)

    def read(self, i: int, j: int) -> list[Buffer]:
        return self.batches[i:j]

    def batch(self, i: int) -> Buffer:
        return self.batches[i]

    def truncate(self, keep: int) -> None:
        del self.batches[keep:]
        self._unindex(keep)

    def delete(self) -> None:
        self.batches.clear()


def segment_for(segments: Sequence[Segment], bases: Sequence[int], offset: int) -> int:
    """Index of the segment that holds ``offset`` (the last one whose base offset is at or below it)."""
    return max(bisect.bisect_right(bases, offset) - 1, 0)
