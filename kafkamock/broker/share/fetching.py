"""Reading a partition for a share group: which batches a ShareFetch returns and which of their offsets the member
acquires (Kafka's SharePartition.acquire over the batches of a log read).

The log is read from the share-partition start offset up to a limit (the high watermark, or the last stable offset
for ``share.isolation.level=read_committed``). Data batches go out as the stored bytes, whole, as Fetch sends them;
the member acquires only offsets that are Available, up to MaxRecords. Control batches (transaction markers, and the
seed's SHARE_CHECKPOINT / SHARE_DELTA) are never handed out: their offsets are gaps the share partition archives.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkamock.broker.share.partition import AcquiredRun, SharePartition
from kafkamock.records import CorruptRecordError, split_batches


@dataclass
class ShareRead:
    records: list            # buffers of the batches that hold acquired offsets, in log order
    acquired: list[AcquiredRun]
    size: int


def read_for_share(plog, share: SharePartition, member: str, *, max_records: int, max_bytes: int, limit: int,
                   now_ms: int) -> ShareRead:
    if share.start_offset < plog.log_start_offset:
        share.move_start(plog.log_start_offset)
    if max_records <= 0 or share.start_offset >= limit:
        return ShareRead([], [], 0)
    data = []
    for buffer in plog.read(share.start_offset, max(max_bytes, 0), max_offset=limit):
        try:
            views, _ = split_batches(buffer)
        except CorruptRecordError:
            break
        for view in views:
            if view.last_offset < share.start_offset or view.base_offset >= limit:
                continue
            if not view.is_control:
                data.append(view)
    acquired = share.acquire(member, [(v.base_offset, min(v.last_offset, limit - 1)) for v in data], max_records,
                             now_ms)
    if not acquired:
        return ShareRead([], [], 0)
    wanted = [(r.first_offset, r.last_offset) for r in acquired]
    chosen = [v for v in data if any(first <= v.last_offset and v.base_offset <= last for first, last in wanted)]
    records = [memoryview(v.buffer)[v.start:v.end] for v in chosen]
    return ShareRead(records, acquired, sum(v.size for v in chosen))
