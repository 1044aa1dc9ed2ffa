"""Log compaction (``cleanup.policy=compact``): keep the latest record of each key, as Kafka's LogCleaner does.

One pass over one log, the way Kafka cleans it:

1. The cleanable range ends at the first uncleanable offset: the active segment's base offset, or an earlier
   segment's whose records are younger than ``min.compaction.lag.ms``. Its dirty part starts where the last
   pass stopped (the cleaner offset).
2. A log is cleaned when its dirty part is at least ``min.cleanable.dirty.ratio`` of the cleanable range, when
   its oldest dirty segment is older than ``max.compaction.lag.ms``, or when a retained tombstone's delete
   horizon has passed.
3. An offset map of the dirty part gives each key's latest offset. Every closed segment below the end of the
   range is rewritten without the records an older offset of a key (a record whose key comes again later).
4. Tombstones (null values) stay for ``delete.retention.ms`` after the pass that first keeps them (KIP-534: the
   batch is rewritten with a delete horizon in its header, so the clock survives restarts), then go.
5. A v2 batch keeps its base offset, last offset, producer id, epoch and base sequence; a batch that loses every
   record is dropped, except a producer's last batch in the log, which stays as an empty header so its
   sequence numbers are not forgotten. Control batches are kept.

Records are decoded here (the one place besides the legacy protocol where the broker does): compaction is about
keys.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from kafkamock.records import CorruptRecordError, decode_batches, encode_batch
from kafkamock.storage.log import LONG_MAX, PartitionLog, StoredBatch

log = logging.getLogger("kafkamock.storage.cleaner")


@dataclass
class CleanResult:
    segments: int = 0             # segments rewritten
    records_removed: int = 0
    tombstones_removed: int = 0
    end_offset: int = 0           # the new cleaner offset


def first_uncleanable_offset(plog: PartitionLog, now_ms: int, upper: int) -> int:
    """Where cleaning must stop: the active segment, a segment inside the minimum compaction lag, or ``upper``
    (the high watermark; the last stable offset once transactions exist)."""
    end = plog.active.base_offset
    lag = plog.config.min_compaction_lag_ms
    for segment in plog.segments[:-1]:
        if lag > 0 and segment.largest_timestamp > now_ms - lag:
            end = segment.base_offset
            break
    # Only whole segments are cleaned: stop at the start of the segment that holds ``upper``.
    for segment in plog.segments:
        if segment.next_offset > upper:
            end = min(end, segment.base_offset)
            break
    return end


def needs_cleaning(plog: PartitionLog, now_ms: int, upper: int) -> bool:
    config = plog.config
    if not config.compact or len(plog.segments) < 2:
        return False
    end = first_uncleanable_offset(plog, now_ms, upper)
    if plog.tombstone_horizon <= now_ms and end > plog.log_start_offset:
        return True
    dirty = total = 0
    first_dirty_ts = None
    for segment in plog.segments:
        if segment.base_offset >= end:
            break
        total += segment.size
        if segment.next_offset > plog.cleaner_offset:
            dirty += segment.size
            if first_dirty_ts is None:
                first_dirty_ts = segment.first_batch_ts if segment.first_batch_ts is not None and \
                    segment.first_batch_ts >= 0 else segment.created_ms
    if not dirty:
        return False
    if config.max_compaction_lag_ms < LONG_MAX and first_dirty_ts is not None and \
            now_ms - first_dirty_ts > config.max_compaction_lag_ms:
        return True
    return dirty / total >= config.min_cleanable_dirty_ratio


def clean(plog: PartitionLog, now_ms: int, upper: int | None = None) -> CleanResult | None:
    """Compact ``plog`` once if it needs it (see the module docstring); None when it did not."""
    upper = plog.high_watermark if upper is None else upper
    if not needs_cleaning(plog, now_ms, upper):
        return None
    end = first_uncleanable_offset(plog, now_ms, upper)
    try:
        latest = _offset_map(plog, max(plog.cleaner_offset, plog.log_start_offset), end)
        last_batch_of_producer = _last_batches(plog)
        result = CleanResult(end_offset=end)
        cleaned: list[tuple[list[StoredBatch], bool, int]] = []   # per segment: kept batches, changed?, size
        horizon = LONG_MAX
        for segment in plog.segments:
            if segment.base_offset >= end:
                break
            kept: list[StoredBatch] = []
            changed = False
            for i in range(len(segment)):
                stored = StoredBatch(segment.first_offset(i), segment.last_offset(i), segment.max_timestamp(i),
                                     segment.batch(i))
                out, removed, tombstones, batch_horizon = _filter(
                    stored, latest, now_ms, plog.config.delete_retention_ms, last_batch_of_producer)
                horizon = min(horizon, batch_horizon)
                result.records_removed += removed
                result.tombstones_removed += tombstones
                changed = changed or out is not stored
                if out is not None:
                    kept.append(out)
            cleaned.append((kept, changed, sum(len(b.data) for b in kept)))
        groups = _group(cleaned, plog.config.segment_bytes)
        if any(len(g) > 1 or cleaned[g[0]][1] for g in groups):
            plog.replace_segments([(g, [b for k in g for b in cleaned[k][0]]) for g in groups], now_ms)
            result.segments = len(cleaned)
    except CorruptRecordError as exc:  # the log was checked when written: this would be a bug, not bad input
        log.error("compaction of a log stopped: %s", exc)
        return None
    plog.tombstone_horizon = horizon
    plog.cleaner_offset = max(plog.cleaner_offset, end)
    plog.store.save_cleaner_offset(plog.cleaner_offset)
    return result


def _group(cleaned: list[tuple[list[StoredBatch], bool, int]], segment_bytes: int) -> list[list[int]]:
    """Consecutive cleaned segments merged while they fit in ``segment.bytes`` (Kafka's groupSegmentsBySize), so
    a compacted log does not keep a trail of near-empty segments."""
    groups: list[list[int]] = []
    size = 0
    for k, (_, _, kept_size) in enumerate(cleaned):
        if groups and size + kept_size <= segment_bytes:
            groups[-1].append(k)
            size += kept_size
        else:
            groups.append([k])
            size = kept_size
    return groups


def _offset_map(plog: PartitionLog, start: int, end: int) -> dict[bytes, int]:
    latest: dict[bytes, int] = {}
    for stored in plog.batches(start, end):
        for batch in decode_batches(stored.data):
            if batch.is_control:
                continue
            for record in batch.records:
                if record.key is not None and record.offset < end:
                    latest[record.key] = record.offset
    return latest


def _last_batches(plog: PartitionLog) -> dict[int, int]:
    """{producer id: base offset of its last batch in the log}."""
    from kafkamock.records.layout import HEADER

    last: dict[int, int] = {}
    for stored in plog.batches():
        fields = HEADER.unpack_from(stored.data, 0)
        if fields[3] == 2 and fields[9] >= 0:
            last[fields[9]] = stored.base_offset
    return last


def _filter(stored: StoredBatch, latest: dict[bytes, int], now_ms: int, delete_retention_ms: int,
            last_batch_of_producer: dict[int, int]) -> tuple[StoredBatch | None, int, int, int]:
    """The batch as compaction leaves it (``stored`` itself when unchanged, None when it goes), how many records
    and tombstones went, and the delete horizon of the tombstones it keeps (LONG_MAX: none)."""
    (batch,) = decode_batches(stored.data)
    if batch.is_control or batch.magic != 2:
        return stored, 0, 0, LONG_MAX
    horizon = batch.base_timestamp if batch.has_delete_horizon else None
    kept = []
    tombstones_removed = 0
    for record in batch.records:
        newest = latest.get(record.key) if record.key is not None else None
        if newest is not None and record.offset < newest:
            continue
        if record.value is None and horizon is not None and now_ms >= horizon:
            tombstones_removed += 1
            continue
        kept.append(record)
    has_tombstones = any(r.value is None for r in kept)
    new_horizon = horizon if horizon is not None else (now_ms + delete_retention_ms if has_tombstones else None)
    removed = len(batch.records) - len(kept)
    keep_horizon = new_horizon if has_tombstones and new_horizon is not None else LONG_MAX
    if not removed and new_horizon == horizon:
        return stored, 0, 0, keep_horizon
    if not kept and last_batch_of_producer.get(batch.producer_id) != batch.base_offset:
        return None, removed, tombstones_removed, LONG_MAX
    data = encode_batch(
        [{"offset": r.offset, "timestamp": r.timestamp, "key": r.key, "value": r.value, "headers": r.headers}
         for r in kept],
        base_offset=batch.base_offset, last_offset=batch.last_offset, compression=batch.compression if kept else "none",
        producer_id=batch.producer_id, producer_epoch=batch.producer_epoch, base_sequence=batch.base_sequence,
        transactional=batch.is_transactional, partition_leader_epoch=batch.partition_leader_epoch,
        timestamp_type=batch.timestamp_type,
        log_append_time=batch.max_timestamp if batch.timestamp_type == "LogAppendTime" else None,
        delete_horizon_ms=new_horizon if kept else None, max_timestamp_if_empty=batch.max_timestamp)
    return StoredBatch(batch.base_offset, batch.last_offset, batch.max_timestamp, data), removed, \
        tombstones_removed, keep_horizon
