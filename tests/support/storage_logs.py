"""Writing to and reading from a PartitionLog the way the broker does, for the storage tests."""

from __future__ import annotations

import uuid

from kafkamock import records

TOPIC_ID = uuid.UUID(int=42)


class Writer:
    """Appends batches the way the broker does: offsets assigned at the log end, written into the bytes."""

    def __init__(self, plog):
        self.plog = plog

    def append(self, values, *, keys=None, timestamp=1_000, now_ms=0, epoch=0, producer_id=-1, base_sequence=-1,
               compression="none"):
        base = self.plog.log_end_offset
        keys = keys or [None] * len(values)
        data = bytearray(records.encode_batch(
            [{"key": k, "value": v, "timestamp": timestamp} for k, v in zip(keys, values, strict=True)],
            base_offset=base, partition_leader_epoch=epoch, producer_id=producer_id,
            producer_epoch=0 if producer_id >= 0 else -1, base_sequence=base_sequence, compression=compression))
        last = base + len(values) - 1
        self.plog.append(data, base, last, timestamp, now_ms, epoch, len(values))
        return base, last


def values_of(plog, offset=None, max_bytes=1 << 30) -> list[tuple[int, bytes | None]]:
    start = plog.log_start_offset if offset is None else offset
    out = []
    for part in plog.read(start, max_bytes):
        for batch in records.decode_batches(bytes(part)):
            out += [(r.offset, r.value) for r in batch.records]
    return out
