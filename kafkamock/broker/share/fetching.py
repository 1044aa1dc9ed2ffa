"""Reading a partition for a share group: which batches a ShareFetch returns and which of their offsets the member
acquires (Kafka's DelayedShareFetch log read, SharePartition.acquire and ShareFetchUtils.processFetchResponse).

The log is read from the share-partition's next fetch offset (past the last offset acquired, or back at the first
record released again) up to a limit: the high watermark, or the last stable offset for
``share.isolation.level=read_committed``. Every batch read counts, transaction markers too: as in Kafka their
offsets are acquired with the rest, and the client acknowledges them as gaps. Under read_committed the batches of
aborted transactions are acquired and archived at once, and left out of the AcquiredRecords. The response carries
the read's batches from the one holding the first acquired offset to the one holding the last, as stored.

The share-state control batches (SHARE_CHECKPOINT / SHARE_DELTA, the seed page's "not returned to consumer at all")
are the exception: never acquired, never returned, and not counted towards MinBytes. The data between them is
acquired piece by piece, so AcquiredRecords never span one; with none in the read (the share state is written after
the records it is about, so a read only meets one when records were produced after it) the acquisition is Kafka's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kafkamock.broker.share.partition import AcquiredRun, SharePartition
from kafkamock.records import BatchView, CorruptRecordError, split_batches

if TYPE_CHECKING:
    from kafkamock.broker.producers import AbortedTxn
    from kafkamock.storage import PartitionLog


@dataclass
class ShareRead:
    records: list            # buffers of the batches returned, in log order
    acquired: list[AcquiredRun]
    count: int               # records acquired
    size: int


EMPTY = ShareRead([], [], 0, 0)


def read(plog: PartitionLog, share: SharePartition, *, max_bytes: int, limit: int, at_least_one: bool = True,
         max_records: int | None = None, enough_bytes: int | None = None) -> tuple[int, list[BatchView]]:
    """(fetch offset, batches read from it up to ``limit`` and ``max_bytes``), or no batches when nothing can be
    acquired; the first batch comes even past ``max_bytes`` when ``at_least_one``.

    The read stops early once it holds all an acquisition could take (every in-flight offset and ``max_records``
    more) or, for MinBytes, ``enough_bytes`` of data: Kafka's log read fills MaxBytes and the acquisition drops the
    rest, which for a partition of small batches would be thousands of batches parsed to be thrown away."""
    if share.start_offset < plog.log_start_offset:
        share.move_start(plog.log_start_offset)       # Kafka: OFFSET_OUT_OF_RANGE, then updateCacheAndOffsets
    offset = share.next_fetch_offset()
    known = share.state_only
    if known is not None and known[0] <= offset < known[1] <= limit:
        offset = known[1]                             # share-state batches only up to there: nothing to acquire
    if offset >= limit:                               # nothing new (most partitions of most fetches): no more checks
        return offset, []
    if not share.can_acquire():
        return share.end_offset + 1, []
    new_from = max(offset, share.end_offset + 1) if share.cached else offset    # never acquired from here on
    views: list[BatchView] = []
    start, budget, first = offset, max(max_bytes, 0), at_least_one
    window = max(max_records or 0, 64)
    new_records = data = 0
    while True:
        stop = limit if max_records is None and enough_bytes is None else min(limit, max(start, new_from) + window)
        got: list[BatchView] = []
        for buffer in plog.read(start, budget, at_least_one=first, max_offset=stop, one_segment=True):
            try:
                found, _ = split_batches(buffer)
            except CorruptRecordError:
                break
            got += [v for v in found if v.base_offset < limit and v.last_offset >= start]
        if not got:
            break
        views += got
        budget -= sum(v.size for v in got)
        first = False
        for v in got:
            if not is_share_state(v):
                data += v.size
                if v.last_offset >= new_from:
                    new_records += v.last_offset - max(v.base_offset, new_from) + 1
        end = got[-1].last_offset + 1
        if (end < stop or end >= limit or budget <= 0 or (max_records is not None and new_records >= max_records)
                or (enough_bytes is not None and data >= enough_bytes)):
            break
        start, window = end, window * 2
    _note_state_only(share, offset, views)
    return offset, views


def _note_state_only(share: SharePartition, offset: int, views: list[BatchView]) -> None:
    """Remember the run of share-state batches a read from ``offset`` began with (contiguous, so no offset in it is
    anyone's record), joined to the run the read skipped to get there."""
    end = offset
    for view in views:
        if not is_share_state(view) or view.base_offset > end or view.last_offset < end:
            break
        end = view.last_offset + 1
    if end > offset:
        known = share.state_only
        share.state_only = (known[0] if known is not None and known[1] == offset else offset, end)


def is_share_state(view: BatchView) -> bool:
    """A SHARE_CHECKPOINT / SHARE_DELTA batch: a control batch no transaction wrote."""
    return view.is_control and not view.is_transactional


def data_bytes(views: list[BatchView]) -> int:
    """Bytes of what a fetch could hand out (MinBytes): the share-state batches are nobody's records."""
    return sum(v.size for v in views if not is_share_state(v))


def _pieces(fetch_offset: int, views: list[BatchView]) -> list[tuple[int, list[BatchView]]]:
    """The read split at its share-state batches: (fetch offset, batches) of each run of other batches."""
    out: list[tuple[int, list[BatchView]]] = []
    current: list[BatchView] = []
    offset = fetch_offset
    for view in views:
        if is_share_state(view):
            if current:
                out.append((offset, current))
            current, offset = [], view.last_offset + 1
        else:
            current.append(view)
    if current:
        out.append((offset, current))
    return out


def aborted_views(views: list[BatchView], aborted: list[AbortedTxn] | None) -> list[BatchView]:
    """The transactional data batches of aborted transactions among ``views`` (the read_committed reader's
    aborted-transaction index)."""
    if not aborted:
        return []
    return [v for v in views if v.is_transactional and not v.is_control and any(
        a.producer_id == v.producer_id and a.first_offset <= v.base_offset <= a.last_offset for a in aborted)]


def acquire(share: SharePartition, member: str, fetch_offset: int, views: list[BatchView], *, max_records: int,
            now_ms: int, record_limit: bool, batch_size: int, aborted: list[AbortedTxn] | None = None) -> ShareRead:
    """Acquire for ``member`` among ``views`` (from ``read``) and pick the batches to return."""
    if max_records <= 0 or not views:
        return EMPTY
    runs: list[AcquiredRun] = []
    taken = 0
    for offset, piece in _pieces(fetch_offset, views):
        if taken >= max_records:
            break
        got = share.acquire(member, [(v.base_offset, v.last_offset) for v in piece], max_records - taken, now_ms,
                            record_limit=record_limit, batch_size=batch_size, fetch_offset=offset)
        runs += got
        taken += sum(r.last_offset - r.first_offset + 1 for r in got)
    for view in aborted_views(views, aborted):
        runs = share.archive(view.base_offset, view.last_offset, runs)
    if not runs:
        return EMPTY
    chosen = _slice([v for v in views if not is_share_state(v)], runs[0].first_offset, runs[-1].last_offset)
    records = [memoryview(v.buffer)[v.start:v.end] for v in chosen]
    count = sum(r.last_offset - r.first_offset + 1 for r in runs)
    return ShareRead(records, runs, count, sum(v.size for v in chosen))


def _slice(views: list[BatchView], first: int, last: int) -> list[BatchView]:
    """ShareFetchUtils.maybeSliceFetchRecords: from the last batch starting at or before the first acquired offset
    to the last batch starting at or before the last one."""
    if len(views) == 1:
        return views
    start = 0
    for i, view in enumerate(views):
        if view.base_offset <= first:
            start = i
    return [v for i, v in enumerate(views) if i == start or (i > start and v.base_offset <= last)]
