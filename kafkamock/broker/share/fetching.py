"""Reading a partition for a share group: which batches a ShareFetch returns and which of their offsets the member
acquires (Kafka's SharePartition.acquire over the batches of a log read).

The log is read from the share-partition start offset up to a limit (the high watermark, or the last stable offset
for ``share.isolation.level=read_committed``). Data batches go out as the stored bytes, whole, as Fetch sends them;
the member acquires only offsets that are Available, up to MaxRecords. Control batches (transaction markers, and the
seed's SHARE_CHECKPOINT / SHARE_DELTA) are never handed out, nor under read_committed the batches of aborted
transactions: their offsets are gaps the share partition archives.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkamock.broker.share.partition import AcquiredRun, SharePartition
from kafkamock.records import BatchView, CorruptRecordError, split_batches


@dataclass
class ShareRead:
    records: list            # buffers of the batches that hold acquired offsets, in log order
    acquired: list[AcquiredRun]
    size: int


EMPTY = ShareRead([], [], 0)


def candidates(plog, share: SharePartition, *, max_bytes: int, limit: int, aborted=None) -> list[BatchView]:
    """The data batches between the SPSO and ``limit`` that hold something the share partition could hand out
    (``aborted``: the read_committed reader's aborted-transaction index, whose batches are skipped)."""
    if share.start_offset < plog.log_start_offset:
        share.move_start(plog.log_start_offset)
    if share.start_offset >= limit:
        return []
    data = []
    for buffer in plog.read(share.start_offset, max(max_bytes, 0), max_offset=limit, one_segment=True):
        try:
            views, _ = split_batches(buffer)
        except CorruptRecordError:
            break
        for view in views:
            if view.last_offset < share.start_offset or view.base_offset >= limit or view.is_control:
                continue
            if aborted and view.is_transactional and _aborted(view, aborted):
                continue
            if share.acquirable(view.base_offset, min(view.last_offset, limit - 1)):
                data.append(view)
    return data


def _aborted(view: BatchView, aborted) -> bool:
    pid, offset = view.producer_id, view.base_offset
    return any(a.producer_id == pid and a.first_offset <= offset <= a.last_offset for a in aborted)


def acquire(share: SharePartition, member: str, data: list[BatchView], *, max_records: int, limit: int, now_ms: int,
            whole_batches: bool, batch_size: int) -> ShareRead:
    """Acquire for ``member`` among ``data`` (from ``candidates``): the AcquiredRecords ranges, at most
    ``batch_size`` records each, and the batches that hold them."""
    if max_records <= 0 or not data:
        return EMPTY
    runs = share.acquire(member, [(v.base_offset, min(v.last_offset, limit - 1)) for v in data], max_records, now_ms,
                         whole_batches=whole_batches)
    if not runs:
        return EMPTY
    chosen = [v for v in data if any(r.first_offset <= v.last_offset and v.base_offset <= r.last_offset
                                     for r in runs)]
    records = [memoryview(v.buffer)[v.start:v.end] for v in chosen]
    return ShareRead(records, _split(runs, batch_size), sum(v.size for v in chosen))


def _split(runs: list[AcquiredRun], batch_size: int) -> list[AcquiredRun]:
    """ShareFetch's BatchSize: "the optimal number of records for batches of acquired records"."""
    if batch_size <= 0:
        return runs
    out = []
    for run in runs:
        first = run.first_offset
        while first <= run.last_offset:
            last = min(run.last_offset, first + batch_size - 1)
            out.append(AcquiredRun(first, last, run.delivery_count))
            first = last + 1
    return out
