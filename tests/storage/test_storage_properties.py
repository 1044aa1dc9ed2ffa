"""Property: any sequence of appends, rolls, DeleteRecords, truncations and retention passes leaves a memory log and
a disk log alike, and a disk log reopened (cleanly or after a crash) gives the same reads again. (retention.bytes
is left out: a memory log also applies it when it rolls, which test_retention covers.)"""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from kafkamock import records
from kafkamock.storage import DiskStorage, LogConfig, MemoryStorage

TOPIC_ID = uuid.UUID(int=5)
CONFIG = LogConfig(segment_bytes=400, retention_ms=50_000, file_delete_delay_ms=0)

operations = st.lists(st.one_of(
    st.tuples(st.just("append"), st.integers(1, 8), st.integers(0, 300), st.integers(0, 100_000)),
    st.tuples(st.just("append"), st.integers(1, 3), st.integers(0, 40), st.integers(0, 100_000)),
    st.tuples(st.just("roll")),
    st.tuples(st.just("delete_before"), st.integers(0, 60)),
    st.tuples(st.just("truncate"), st.integers(0, 60)),
    st.tuples(st.just("retention"), st.integers(0, 200_000)),
), min_size=3, max_size=60)


def apply(plog, op, now: list[int]) -> None:
    if op[0] == "append":
        _, count, size, ts = op
        base = plog.log_end_offset
        data = bytearray(records.encode_batch(
            [{"key": b"k%d" % i, "value": bytes([i % 251]) * size, "timestamp": ts + i} for i in range(count)],
            base_offset=base))
        now[0] += 10
        plog.append(data, base, base + count - 1, ts + count - 1, now[0], 0, count)
    elif op[0] == "roll":
        plog.roll(now[0])
    elif op[0] == "delete_before":
        if op[1] <= plog.high_watermark:
            plog.delete_before(op[1], now[0])
    elif op[0] == "truncate":
        if op[1] >= plog.log_start_offset:
            plog.truncate_to(op[1])
    else:
        plog.delete_old_segments(op[1])


def snapshot(plog) -> tuple:
    reads = [bytes(b"".join(bytes(p) for p in plog.read(o, 1 << 30))) for o in range(plog.log_start_offset,
                                                                                 plog.log_end_offset + 1)]
    return (plog.log_start_offset, plog.log_end_offset, [s.base_offset for s in plog.segments], reads,
            plog.leader_epochs)


@settings(max_examples=80)
@given(operations, st.booleans())
def test_memory_and_disk_logs_agree_and_disk_logs_come_back(ops, clean):
    with tempfile.TemporaryDirectory() as tmp:
        memory = MemoryStorage().open_log("t", TOPIC_ID, 0, CONFIG, 0)
        storage = DiskStorage(Path(tmp))
        disk = storage.open_log("t", TOPIC_ID, 0, CONFIG, 0)
        now_m, now_d = [0], [0]
        for op in ops:
            apply(memory, op, now_m)
            apply(disk, op, now_d)
            assert snapshot(memory) == snapshot(disk), op
        expected = snapshot(disk)
        if clean:
            storage.close([disk], now_d[0])
        else:
            for segment in disk.segments:       # a crash: nothing flushed or closed on purpose
                segment.close()
        again = DiskStorage(Path(tmp)).open_log("t", TOPIC_ID, 0, CONFIG, now_d[0])
        # The log start offset and leader epochs are checkpointed when they change, so even a crash keeps them.
        assert snapshot(again) == expected
