"""What a consumer makes of one partition of a Fetch response: the batches it may deliver.

Control batches (transaction markers, share-state records) are never delivered. Under read_committed the broker
stops at the last stable offset and names the aborted transactions in the range; the consumer drops their batches
itself, as Kafka's consumer does (``CompletedFetch``): a producer id is aborted from the first offset of its aborted
transaction until its ABORT marker.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from typing import Any

from kafkamock.records import RecordBatch, decode_batches


def deliverable_batches(records: bytes | None, aborted_transactions: Sequence[Any] | None,
                        read_committed: bool) -> tuple[list[RecordBatch], int]:
    """(the data batches to deliver, the offset after the last batch read, control batches included; -1 when the
    data held no complete batch)."""
    batches = decode_batches(records or b"")
    next_offset = batches[-1].last_offset + 1 if batches else -1
    if not read_committed or not aborted_transactions:
        return [b for b in batches if not b.is_control], next_offset
    return list(_committed(batches, aborted_transactions)), next_offset


def _committed(batches: Iterable[RecordBatch], aborted: Sequence[Any]) -> Iterable[RecordBatch]:
    pending = [(a.first_offset, a.producer_id) for a in aborted]
    heapq.heapify(pending)
    aborting: set[int] = set()
    for batch in batches:
        while pending and pending[0][0] <= batch.last_offset:
            aborting.add(heapq.heappop(pending)[1])
        if batch.is_control:
            if batch.is_transactional and batch.records and batch.records[0].control_type == "ABORT":
                aborting.discard(batch.producer_id)
            continue
        if batch.is_transactional and batch.producer_id in aborting:
            continue
        yield batch
