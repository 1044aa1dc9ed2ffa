"""Retention and DeleteRecords, as Kafka's UnifiedLog.deleteOldSegments does them, in memory and on disk: whole
segments only, oldest first, never past the high watermark, and a whole expired log rolls before it goes."""

from __future__ import annotations

import os

from support.storage_logs import TOPIC_ID, Writer, values_of

from kafkamock.storage import DiskStorage, LogConfig, MemoryStorage


def segmented(open_log, n: int, timestamps=None, **config):
    """A log of ``n`` one-batch segments (segment.bytes below two batches)."""
    plog = open_log(segment_bytes=150, **config)
    w = Writer(plog)
    for i in range(n):
        w.append([bytes([65 + i]) * 40], timestamp=(timestamps or [1_000] * n)[i])
    assert len(plog.segments) == n
    return plog


def test_retention_ms_deletes_segments_by_their_largest_timestamp(open_log):
    plog = segmented(open_log, 4, [1_000, 5_000, 2_000, 9_000], retention_ms=3_000, file_delete_delay_ms=0)
    # now 8,000: segment 0 (1,000) is 7 s old and goes; segment 1 (5,000) is 3 s old, not more than 3 s: it stays,
    # and segment 2 (2,000) behind it stays too (oldest first: deletion stops at the first segment kept).
    assert plog.delete_old_segments(8_000) == 1
    assert plog.log_start_offset == 1 and [s.base_offset for s in plog.segments] == [1, 2, 3]
    assert plog.delete_old_segments(8_001) == 2
    assert plog.log_start_offset == 3


def test_a_wholly_expired_log_rolls_then_goes(open_log):
    plog = segmented(open_log, 2, retention_ms=1_000, file_delete_delay_ms=0)
    assert plog.delete_old_segments(10_000) == 2
    assert plog.log_start_offset == plog.log_end_offset == 2
    assert [s.base_offset for s in plog.segments] == [2] and len(plog.active) == 0
    assert plog.delete_old_segments(20_000) == 0                # an empty active segment never goes
    assert Writer(plog).append([b"new"]) == (2, 2)
    assert values_of(plog) == [(2, b"new")]


def test_one_segment_with_old_records_goes_whole(open_log):
    plog = open_log(retention_ms=1_000, file_delete_delay_ms=0)
    w = Writer(plog)
    w.append([b"old"], timestamp=1)
    w.append([b"new"], timestamp=5_000)
    assert plog.delete_old_segments(5_500) == 0                 # its largest timestamp is young: it all stays
    assert values_of(plog) == [(0, b"old"), (1, b"new")]


def test_retention_bytes_keeps_at_least_the_limit(tmp_path):
    storage = DiskStorage(tmp_path)
    plog = storage.open_log("t", TOPIC_ID, 0, LogConfig(segment_bytes=150, retention_bytes=250,
                                                          file_delete_delay_ms=0), 0)
    w = Writer(plog)
    for i in range(5):
        w.append([bytes([65 + i]) * 40])
    size = plog.segments[0].size                                # ~110 bytes each, 5 segments, until the check
    assert len(plog.segments) == 5
    assert plog.delete_old_segments(0) == 2                     # 550 -> 330: one more would leave 220 < 250
    assert plog.size_bytes == 3 * size and plog.log_start_offset == 2


def test_a_memory_log_sheds_segments_over_retention_bytes_as_it_rolls():
    # In memory a fast producer must not hold check-interval x rate bytes more than retention.bytes: segments go
    # as the log rolls, by the same rule as the periodic check.
    plog = MemoryStorage().open_log("t", TOPIC_ID, 0, LogConfig(segment_bytes=150, retention_bytes=250), 0)
    w = Writer(plog)
    for i in range(5):
        w.append([bytes([65 + i]) * 40])
        assert plog.size_bytes - plog.active.size < 250 + plog.segments[0].size
    size = plog.active.size
    assert plog.log_start_offset == 2 and plog.size_bytes == 3 * size
    assert plog.delete_old_segments(0) == 0


def test_nothing_goes_without_the_delete_policy(open_log):
    plog = segmented(open_log, 3, retention_ms=1, retention_bytes=1, delete=False, compact=True)
    assert plog.delete_old_segments(10**12) == 0 and plog.log_start_offset == 0


def test_delete_before_moves_the_start_and_drops_whole_segments_only(open_log):
    plog = segmented(open_log, 4, file_delete_delay_ms=0)
    plog.delete_before(2, 0)
    assert plog.log_start_offset == 2 and [s.base_offset for s in plog.segments] == [2, 3]
    plog.delete_before(1, 0)                                     # never backwards
    assert plog.log_start_offset == 2
    plog.delete_before(99, 0)                                    # never past the log end
    assert plog.log_start_offset == 4 and [s.base_offset for s in plog.segments] == [3]
    assert values_of(plog, 4) == []


def test_delete_before_inside_a_segment_keeps_the_segment(open_log):
    plog = open_log()
    w = Writer(plog)
    for i in range(3):
        w.append([b"%d" % i])
    plog.delete_before(2, 0)
    assert plog.log_start_offset == 2 and len(plog) == 3          # the batches stay until their segment goes
    assert plog.delete_old_segments(0) == 0


def test_deleted_segment_files_wait_for_file_delete_delay_ms(tmp_path):
    storage = DiskStorage(tmp_path)
    from support.storage_logs import TOPIC_ID

    from kafkamock.storage import LogConfig
    plog = storage.open_log("t", TOPIC_ID, 0, LogConfig(segment_bytes=150, retention_ms=10,
                                                          file_delete_delay_ms=60_000), 0)
    w = Writer(plog)
    for i in range(3):
        w.append([bytes([65 + i]) * 40], timestamp=1_000)
    assert plog.delete_old_segments(1_000 + 1_000) == 3           # all expired: roll, then three segments go
    names = sorted(os.listdir(tmp_path / "t-0"))
    deleted = [n for n in names if n.endswith(".deleted")]
    assert sorted(deleted) == sorted(f"{b:020d}.{ext}.deleted" for b in range(3) for ext in ("log", "index",
                                                                                             "timeindex"))
    plog.store.maintain(2_000 + 59_999)
    assert len([n for n in os.listdir(tmp_path / "t-0") if n.endswith(".deleted")]) == 9
    plog.store.maintain(2_000 + 60_000)
    assert [n for n in os.listdir(tmp_path / "t-0") if n.endswith(".deleted")] == []
    assert sorted(n for n in os.listdir(tmp_path / "t-0") if n.endswith(".log")) == [f"{3:020d}.log"]
