"""A partition's log: segments of record batches kept as bytes, with Kafka's roll, retention and flush rules.

The storage interface of docs/architecture.md. The broker appends a batch whose offsets it has already written into the
bytes, reads whole batches from an offset up to a byte limit, moves the log start offset (DeleteRecords),
truncates, and asks for the time-driven work (retention, compaction, flushes) when its clock says so. Where the
bytes live is a ``SegmentStore``'s business: ``MemoryStore`` keeps them in memory, ``storage.disk`` in Kafka's
own on-disk layout. Everything here is the same for both, so retention and compaction behave alike.

As in Kafka (UnifiedLog, LogSegment):
- a segment rolls when the next batch would take it past ``segment.bytes``, or when ``segment.ms`` has passed
  between its first batch's timestamp and the incoming batch's (by the wall clock when batches carry none);
- ``retention.ms`` deletes whole segments, oldest first, whose largest timestamp is older than the limit, and
  ``retention.bytes`` deletes the oldest whole segments while the log stays at or above the limit without them.
  A segment is deleted only when every segment before it is; when that takes in the active segment too (all of
  the log has expired), the log rolls first, so the log start offset moves to the log end and nothing appended
  later is lost;
- ``flush.messages`` / ``flush.ms`` decide when appended bytes are made durable (fsync on disk).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from kafkamock.storage.producer_snapshot import SnapshotEntry
from kafkamock.storage.segment import END, FIELDS, FIRST, Buffer, MemorySegment, Segment, segment_for
from kafkamock.storage.share_snapshot import ShareSnapshot

log = logging.getLogger("kafkamock.storage")
LONG_MAX = 2**63 - 1

LeaderEpochs = tuple[tuple[int, int], ...]
# The leader-epoch cache of nearly every log (epoch 0 from offset 0), one tuple for all: the cache is replaced,
# never changed in place, and a list of its own was 144 bytes on each of 10,000 partitions.
_EPOCH_0_FROM_0: LeaderEpochs = ((0, 0),)


def _epochs(entries: Iterable[tuple[int, int]]) -> LeaderEpochs:
    cache = tuple(entries)
    return _EPOCH_0_FROM_0 if cache == _EPOCH_0_FROM_0 else cache


@dataclass(frozen=True, slots=True)
class LogConfig:
    """The topic configs a log obeys, resolved by the broker (topic value, else its broker synonym)."""

    segment_bytes: int = 1073741824
    segment_ms: int = 604800000
    segment_jitter_ms: int = 0
    index_interval_bytes: int = 4096
    segment_index_bytes: int = 10485760
    flush_messages: int = LONG_MAX
    flush_ms: int = LONG_MAX
    retention_ms: int = 604800000
    retention_bytes: int = -1
    delete: bool = True                  # cleanup.policy has "delete"
    compact: bool = False                # cleanup.policy has "compact"
    delete_retention_ms: int = 86400000
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = LONG_MAX
    min_cleanable_dirty_ratio: float = 0.5
    file_delete_delay_ms: int = 60000


@dataclass(frozen=True, slots=True)
class StoredBatch:
    """One batch as a reader sees it: its offsets, largest timestamp and bytes."""

    base_offset: int
    last_offset: int
    max_timestamp: int
    data: Buffer


class SegmentStore:
    """Where one partition's segments and checkpoints live; this one is memory, and forgets everything. It holds
    nothing of its own, so every in-memory log shares ``MEMORY`` (10,000 partitions, 10,000 fewer objects)."""

    __slots__ = ()

    durable = False
    bounded_by_memory = True

    def new_segment(self, base_offset: int, now_ms: int, config: LogConfig) -> Segment:
        return MemorySegment(base_offset, now_ms)

    def rewrite_segment(self, old: Segment, batches: list[StoredBatch], now_ms: int, config: LogConfig) -> Segment:
        """A segment with ``old``'s base offset holding ``batches`` instead (compaction); replaces ``old``."""
        new = MemorySegment(old.base_offset, old.created_ms)
        for b in batches:
            new.append(b.data, b.base_offset, b.last_offset, b.max_timestamp, now_ms)
        new.last_modified_ms = old.last_modified_ms
        return new

    def remove_segments(self, segments: list[Segment], now_ms: int, delay_ms: int) -> None:
        for segment in segments:
            segment.delete()

    def save_leader_epochs(self, entries: LeaderEpochs) -> None: ...

    def save_log_start_offset(self, offset: int) -> None: ...

    def save_cleaner_offset(self, offset: int) -> None: ...

    def flushed(self, recovery_point: int) -> None: ...

    def save_producer_snapshot(self, offset: int, entries: list[SnapshotEntry]) -> None:
        """Persist producer state at ``offset`` (memory keeps none: the state itself lives in memory)."""

    def load_producer_snapshot(self, up_to: int) -> tuple[int, list[SnapshotEntry]] | None:
        return None

    def save_share_snapshot(self, snapshot: ShareSnapshot) -> None:
        """Persist where a share-partition's latest SHARE_CHECKPOINT is (memory: nothing outlives the process)."""

    def load_share_snapshots(self) -> list[ShareSnapshot] | None:
        """The share snapshots of this partition; None when one did not read back (recovery scans the whole log)."""
        return []

    def remove_share_snapshot(self, group_id: str) -> None: ...

    def maintain(self, now_ms: int) -> None:
        """Time-driven housekeeping of the store (segment files whose deletion was delayed)."""

    def close(self) -> None: ...

    def delete(self) -> None: ...


MEMORY = SegmentStore()


class PartitionLog:
    """Record batches by offset, in segments. Offsets are assigned by the caller, which writes them into the
    batch bytes before ``append``; the log never decodes records (compaction aside)."""

    __slots__ = ("store", "config", "segments", "bases", "log_end_offset", "log_start_offset", "size_bytes",
                 "leader_epochs", "cleaner_offset", "recovery_point", "tombstone_horizon", "unflushed_messages",
                 "last_flush_ms")

    def __init__(self, store: SegmentStore | None = None, config: LogConfig | None = None, *, now_ms: int = 0,
                 segments: list[Segment] | None = None, log_start_offset: int = 0,
                 leader_epochs: Iterable[tuple[int, int]] = (), cleaner_offset: int = 0,
                 recovery_point: int = 0):
        self.store = store = store or MEMORY
        self.config = config = config or LogConfig()
        if not segments:                  # a new log (10,000 partitions are made in one request): nothing to check
            self.segments = [store.new_segment(log_start_offset, now_ms, config)]
            self.bases = [log_start_offset]
            self.log_end_offset = self.log_start_offset = log_start_offset
            self.size_bytes = 0
        else:
            self.segments = segments
            self.bases = [s.base_offset for s in segments]
            self.log_end_offset = segments[-1].next_offset
            self.log_start_offset = min(max(log_start_offset, segments[0].base_offset), self.log_end_offset)
            self.size_bytes = sum(s.size for s in segments)
        self.leader_epochs = _epochs(e for e in leader_epochs if e[1] <= self.log_end_offset)
        self.cleaner_offset = max(cleaner_offset, self.log_start_offset)   # first offset compaction has not seen
        self.recovery_point = recovery_point
        # Earliest delete horizon of a tombstone compaction kept (unknown after a restart: look at once).
        self.tombstone_horizon = 0 if self.store.durable else LONG_MAX
        self.unflushed_messages = 0
        self.last_flush_ms = now_ms

    # -- reading -------------------------------------------------------------------------------------------------

    def __len__(self) -> int:
        """Number of batches (tests and diagnostics)."""
        return sum(len(s) for s in self.segments)

    @property
    def high_watermark(self) -> int:
        return self.log_end_offset  # every replica is in sync: everything appended is committed

    @property
    def active(self) -> Segment:
        return self.segments[-1]

    def _locate(self, offset: int) -> tuple[int, int]:
        """(segment index, batch index) of the first batch whose last offset is at or after ``offset``."""
        k = segment_for(self.segments, self.bases, offset)
        i = self.segments[k].find(offset)
        while i >= len(self.segments[k]) and k + 1 < len(self.segments):
            k, i = k + 1, 0
        return k, i

    def read(self, offset: int, max_bytes: int, *, at_least_one: bool = True, max_offset: int | None = None,
             one_segment: bool = False) -> list[Buffer]:
        """Whole batches from the one containing ``offset``, up to ``max_bytes``, as the stored buffers (a response
        sends them without joining them); with ``one_segment``, from that batch's segment only, as Kafka's
        LocalLog.read reads one segment per fetch. The first batch comes even when it is larger, if
        ``at_least_one`` (KIP-74), so a consumer can always make progress. Batches starting at or after
        ``max_offset`` (a last stable offset, say) are left out."""
        parts: list[Buffer] = []
        total = 0
        k, i = self._locate(offset)
        while k < len(self.segments):
            segment = self.segments[k]
            index, count = segment.batch_index, len(segment)
            j, start, size = i, segment.position(i), 0
            while j < count:
                if max_offset is not None and index[j * FIELDS + FIRST] >= max_offset:
                    break
                end = index[j * FIELDS + END]
                if total + end - start > max_bytes and (parts or j > i or not at_least_one):
                    break
                size = end - start
                j += 1
            if j > i:
                parts.extend(segment.read(i, j))
                total += size
            if j < count or (one_segment and parts):
                break
            k, i = k + 1, 0
        return parts

    def batches(self, from_offset: int | None = None, to_offset: int | None = None) -> Iterator[StoredBatch]:
        """Stored batches from the one containing ``from_offset`` (default: the log start), one at a time."""
        k, i = self._locate(self.log_start_offset if from_offset is None else from_offset)
        while k < len(self.segments):
            segment = self.segments[k]
            while i < len(segment):
                if to_offset is not None and segment.first_offset(i) >= to_offset:
                    return
                yield StoredBatch(segment.first_offset(i), segment.last_offset(i), segment.max_timestamp(i),
                                  segment.batch(i))
                i += 1
            k, i = k + 1, 0

    def headers(self, from_offset: int | None = None) -> Iterator[tuple[int, Buffer]]:
        """(base offset, header bytes) of every batch from the one containing ``from_offset`` (default: the log
        start): what rebuilding producer state, or finding control batches, needs without reading the records."""
        k, i = self._locate(self.log_start_offset if from_offset is None else max(from_offset, self.log_start_offset))
        while k < len(self.segments):
            segment = self.segments[k]
            while i < len(segment):
                yield segment.first_offset(i), segment.header(i)
                i += 1
            k, i = k + 1, 0

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record at or after the log start whose timestamp is at least
        ``timestamp`` (ListOffsets by time; the per-batch largest timestamps skip batches without one)."""
        from kafkamock.records import decode_batches

        for segment in self.segments:
            if segment.largest_ts < timestamp:
                continue
            for i in range(len(segment)):
                if segment.max_timestamp(i) < timestamp or segment.last_offset(i) < self.log_start_offset:
                    continue
                for batch in decode_batches(segment.batch(i)):
                    for record in batch.records:
                        if record.timestamp >= timestamp and record.offset >= self.log_start_offset:
                            return record.offset, record.timestamp
        return None

    def max_timestamp(self) -> tuple[int, int] | None:
        """(offset, timestamp) of the record with the largest timestamp (the earliest such record)."""
        from kafkamock.records import decode_batches

        best: tuple[int, int] | None = None
        for segment in self.segments:
            for i in range(len(segment)):
                if segment.last_offset(i) < self.log_start_offset or (
                        best is not None and segment.max_timestamp(i) <= best[1]):
                    continue
                for batch in decode_batches(segment.batch(i)):
                    for record in batch.records:
                        if record.offset >= self.log_start_offset and (best is None or record.timestamp > best[1]):
                            best = (record.offset, record.timestamp)
        return best

    # -- writing -------------------------------------------------------------------------------------------------

    def append(self, data: Buffer, base_offset: int, last_offset: int, max_timestamp: int, now_ms: int,
               leader_epoch: int = -1, records: int = 1) -> None:
        """Append one batch whose offsets are already in its bytes (``base_offset`` == the log end offset)."""
        if base_offset != self.log_end_offset:
            raise ValueError(f"batch at {base_offset} does not follow the log end {self.log_end_offset}")
        rolled = self._should_roll(len(data), max_timestamp, now_ms)
        if rolled:
            self.roll(now_ms)
        self.active.append(data, base_offset, last_offset, max_timestamp, now_ms)
        self.log_end_offset = last_offset + 1
        self.size_bytes += len(data)
        if leader_epoch >= 0 and (not self.leader_epochs or leader_epoch > self.leader_epochs[-1][0]):
            self.assign_epoch(leader_epoch, base_offset)
        if rolled and self.store.bounded_by_memory and self.config.delete:
            # In memory, a log over retention.bytes sheds its oldest segments when it rolls, by the periodic check's
            # rule, instead of waiting for that check: a fast producer would otherwise hold check-interval x rate
            # bytes more than retention.bytes.
            self._delete_over_size(now_ms)
        self.unflushed_messages += records
        if self.unflushed_messages >= self.config.flush_messages:
            self.flush(now_ms)

    def _should_roll(self, size: int, max_timestamp: int, now_ms: int) -> bool:
        segment, config = self.active, self.config
        if not len(segment):
            return False
        if segment.size > config.segment_bytes - size:
            return True
        if segment.time_waited_for_roll(now_ms, max_timestamp) > config.segment_ms - config.segment_jitter_ms:
            return True
        return len(segment) >= config.segment_index_bytes // 8   # Kafka rolls when the offset index is full

    def roll(self, now_ms: int) -> Segment:
        """Start a new active segment at the log end (a no-op when the active one is empty)."""
        if not len(self.active):
            return self.active
        self.active.seal()
        segment = self.store.new_segment(self.log_end_offset, now_ms, self.config)
        self.segments.append(segment)
        self.bases.append(segment.base_offset)
        return segment

    def epoch_for_offset(self, offset: int) -> int:
        """The leader epoch the record at ``offset`` was written in (Kafka's LeaderEpochFileCache.epochForOffset);
        -1 when no known epoch covers it."""
        found = -1
        for epoch, start in self.leader_epochs:
            if start > offset:
                break
            found = epoch
        return found

    def assign_epoch(self, epoch: int, start_offset: int) -> None:
        """Record that leader epoch ``epoch`` starts at ``start_offset`` (Kafka's LeaderEpochFileCache.assign)."""
        if self.leader_epochs and epoch <= self.leader_epochs[-1][0]:
            return
        entries = list(self.leader_epochs)
        while entries and entries[-1][1] >= start_offset and entries[-1][0] < epoch:
            entries.pop()  # an epoch that never got a record is superseded at the same offset
        entries.append((epoch, start_offset))
        self.leader_epochs = _epochs(entries)
        self.store.save_leader_epochs(self.leader_epochs)

    def delete_before(self, offset: int, now_ms: int) -> None:
        """Move the log start offset up to ``offset`` (DeleteRecords); whole segments below it go."""
        if offset <= self.log_start_offset:
            return
        self.log_start_offset = min(offset, self.log_end_offset)
        self.cleaner_offset = max(self.cleaner_offset, self.log_start_offset)
        self._truncate_epochs_from_start()
        self.store.save_log_start_offset(self.log_start_offset)
        count = 0
        while count < len(self.segments) - 1 and self.segments[count + 1].base_offset <= self.log_start_offset:
            count += 1
        if count:
            self._drop_oldest(count, now_ms, reason="log start offset")

    def truncate_to(self, offset: int) -> None:
        """Drop every batch that ends at or after ``offset``."""
        while len(self.segments) > 1 and self.segments[-1].base_offset >= offset:
            gone = self.segments.pop()
            self.bases.pop()
            self.size_bytes -= gone.size
            gone.delete()
        segment = self.active
        keep = segment.find(offset)
        self.size_bytes -= segment.size - segment.position(keep)
        segment.truncate(keep)
        self.log_end_offset = segment.next_offset
        self.log_start_offset = min(self.log_start_offset, self.log_end_offset)
        # Kafka's truncateFromEnd: epochs that start at or after the new log end are forgotten.
        self.leader_epochs = _epochs(e for e in self.leader_epochs if e[1] < self.log_end_offset)
        self.store.save_leader_epochs(self.leader_epochs)

    def _truncate_epochs_from_start(self) -> None:
        """Kafka's truncateFromStart: the entry in force at the new log start moves up to it."""
        start = self.log_start_offset
        entries = self.leader_epochs
        keep = [e for e in entries if e[1] > start]
        below = [e for e in entries if e[1] <= start]
        if below:
            keep.insert(0, (below[-1][0], start))
        if tuple(keep) != entries:
            self.leader_epochs = _epochs(keep)
            self.store.save_leader_epochs(self.leader_epochs)

    # -- time-driven work ----------------------------------------------------------------------------------------

    def delete_old_segments(self, now_ms: int) -> int:
        """Retention (Kafka's UnifiedLog.deleteOldSegments): segments below the log start offset, then by
        ``retention.bytes`` and ``retention.ms`` when ``cleanup.policy`` has ``delete``. Returns how many went."""
        deleted = self._delete_while(lambda segment, _next: _next is not None
                                     and _next.base_offset <= self.log_start_offset, now_ms, "log start offset")
        config = self.config
        if not config.delete:
            return deleted
        deleted += self._delete_over_size(now_ms)
        if config.retention_ms >= 0:
            deleted += self._delete_while(
                lambda segment, _next: now_ms - segment.largest_timestamp > config.retention_ms, now_ms,
                "retention.ms")
        return deleted

    def _delete_over_size(self, now_ms: int) -> int:
        """``retention.bytes``: the oldest segments go while what remains is still at least the limit."""
        limit = self.config.retention_bytes
        if limit < 0 or self.size_bytes < limit:
            return 0
        excess = [self.size_bytes - limit]

        def over_size(segment: Segment, _next: Segment | None) -> bool:
            if excess[0] - segment.size >= 0:
                excess[0] -= segment.size
                return True
            return False
        return self._delete_while(over_size, now_ms, "retention.bytes")

    def _delete_while(self, predicate: Callable[[Segment, Segment | None], bool], now_ms: int, reason: str) -> int:
        count = 0
        for k, segment in enumerate(self.segments):
            nxt = self.segments[k + 1] if k + 1 < len(self.segments) else None
            upper = nxt.base_offset if nxt is not None else self.log_end_offset
            if nxt is None and not len(segment):
                break            # an empty active segment is never deleted
            if upper > self.high_watermark or not predicate(segment, nxt):
                break
            count += 1
        if not count:
            return 0
        if count == len(self.segments):
            self.roll(now_ms)    # the whole log expired: keep an (empty) active segment at the log end
        self._drop_oldest(count, now_ms, reason)
        return count

    def _drop_oldest(self, count: int, now_ms: int, reason: str) -> None:
        gone, self.segments, self.bases = self.segments[:count], self.segments[count:], self.bases[count:]
        new_start = self.segments[0].base_offset
        if new_start > self.log_start_offset:
            self.log_start_offset = new_start
            self.cleaner_offset = max(self.cleaner_offset, new_start)
            self._truncate_epochs_from_start()
            self.store.save_log_start_offset(new_start)
        self.size_bytes -= sum(s.size for s in gone)
        self.store.remove_segments(gone, now_ms, self.config.file_delete_delay_ms)
        log.debug("deleted %d segment(s) below offset %d (%s)", len(gone), new_start, reason)

    def flush(self, now_ms: int) -> None:
        """Make everything appended durable (fsync on disk) and move the recovery point to the log end."""
        for segment in self.segments:
            if segment.next_offset > self.recovery_point:
                segment.flush()
        self.recovery_point = self.log_end_offset
        self.unflushed_messages = 0
        self.last_flush_ms = now_ms
        self.store.flushed(self.recovery_point)

    def maybe_flush(self, now_ms: int) -> bool:
        """``flush.ms``: flush when unflushed data has waited that long (Kafka's log flusher)."""
        if self.recovery_point < self.log_end_offset and now_ms - self.last_flush_ms >= self.config.flush_ms:
            self.flush(now_ms)
            return True
        return False

    def replace_segments(self, groups: list[tuple[list[int], list[StoredBatch]]], now_ms: int) -> None:
        """Compaction's output: each group of consecutive segments (by index, from the first) becomes one segment
        at the first one's base offset holding the given batches. Groups must cover segments 0..n-1 in order."""
        replaced: list[Segment] = []
        for indexes, batches in groups:
            first = self.segments[indexes[0]]
            merged = [self.segments[k] for k in indexes]
            replaced.append(self.store.rewrite_segment(first, batches, now_ms, self.config))
            if len(merged) > 1:
                self.store.remove_segments(merged[1:], now_ms, self.config.file_delete_delay_ms)
        count = sum(len(indexes) for indexes, _ in groups)
        self.segments[:count] = replaced
        self.bases = [s.base_offset for s in self.segments]
        self.size_bytes = sum(s.size for s in self.segments)

    def close(self) -> None:
        for segment in self.segments:
            segment.close()
        self.store.close()

    def delete(self) -> None:
        """The partition is gone (its topic was deleted): remove every byte."""
        for segment in self.segments:
            segment.delete()
        self.store.delete()

    def describe(self) -> dict[str, object]:
        """Segments and offsets, for the control API and diagnostics."""
        return {"log_start_offset": self.log_start_offset, "log_end_offset": self.log_end_offset,
                "size_bytes": self.size_bytes, "segments": [
                    {"base_offset": s.base_offset, "batches": len(s), "size_bytes": s.size,
                     "largest_timestamp": s.largest_ts} for s in self.segments]}
