"""Appending, reading and rolling, the same in memory and on disk."""

from __future__ import annotations

import pytest
from support.storage_logs import Writer, values_of

from kafkamock import records
from kafkamock.storage.log import PartitionLog
from kafkamock.storage.segment import FIELDS, MemorySegment


def test_append_and_read_whole_batches(open_log):
    plog = open_log()
    w = Writer(plog)
    assert w.append([b"a", b"b"]) == (0, 1)
    assert w.append([b"c"]) == (2, 2)
    assert (plog.log_start_offset, plog.log_end_offset, plog.high_watermark, len(plog)) == (0, 3, 3, 2)
    assert values_of(plog) == [(0, b"a"), (1, b"b"), (2, b"c")]
    assert values_of(plog, 1)[0] == (0, b"a")               # a mid-batch offset reads the batch holding it
    assert values_of(plog, 3) == []
    with pytest.raises(ValueError, match="does not follow"):
        plog.append(b"x" * 70, 7, 7, 0, 0)


def test_read_limits_keep_the_first_batch_whole(open_log):
    plog = open_log()
    w = Writer(plog)
    for i in range(4):
        w.append([bytes([i]) * 100])
    size = plog.segments[0].batch_size(0)
    assert len(values_of(plog, 0, max_bytes=1)) == 1           # KIP-74: one batch even over the limit
    assert plog.read(0, 1, at_least_one=False) == []
    assert len(values_of(plog, 0, max_bytes=size * 2)) == 2
    assert len(values_of(plog, 0, max_bytes=size * 2 - 1)) == 1
    assert [b.base_offset for b in plog.batches(1, to_offset=3)] == [1, 2]
    assert sum(len(p) for p in plog.read(0, 1 << 30, max_offset=2)) == size * 2   # batches from offset 2 left out


def test_reads_span_segments_and_headers_list_every_batch(open_log):
    plog = open_log(segment_bytes=150)                         # each ~110-byte batch gets its own segment
    w = Writer(plog)
    for i in range(5):
        w.append([bytes([65 + i]) * 40], producer_id=7, base_sequence=i)
    assert [s.base_offset for s in plog.segments] == [0, 1, 2, 3, 4]
    assert [v for _, v in values_of(plog, 1)] == [bytes([65 + i]) * 40 for i in range(1, 5)]
    headers = list(plog.headers())
    assert [base for base, _ in headers] == [0, 1, 2, 3, 4]
    assert [records.BatchView(bytes(h), 0, len(h)).base_sequence for _, h in headers] == [0, 1, 2, 3, 4]


def test_timestamp_lookups(open_log):
    plog = open_log(segment_bytes=200)
    w = Writer(plog)
    for ts in (100, 300, 200, 300):
        w.append([b"x"], timestamp=ts)
    assert plog.offset_for_timestamp(150) == (1, 300)
    assert plog.offset_for_timestamp(300) == (1, 300)
    assert plog.offset_for_timestamp(301) is None
    assert plog.max_timestamp() == (1, 300)                    # the earliest record with the largest timestamp


def test_roll_by_segment_bytes(open_log):
    plog = open_log(segment_bytes=300)
    w = Writer(plog)
    for _ in range(6):
        w.append([b"v" * 50])                                  # ~120 bytes each: two per segment
    assert [len(s) for s in plog.segments] == [2, 2, 2]
    assert [s.base_offset for s in plog.segments] == [0, 2, 4]
    assert plog.size_bytes == sum(s.size for s in plog.segments)


def test_roll_by_segment_ms_follows_record_time(open_log):
    plog = open_log(segment_ms=1000)
    w = Writer(plog)
    w.append([b"a"], timestamp=10_000, now_ms=0)
    w.append([b"b"], timestamp=10_900, now_ms=999_999)         # record time decides, not the wall clock
    assert len(plog.segments) == 1
    w.append([b"c"], timestamp=11_001, now_ms=0)
    assert [s.base_offset for s in plog.segments] == [0, 2]


def test_roll_by_segment_ms_uses_the_wall_clock_without_timestamps(open_log):
    plog = open_log(segment_ms=1000, now_ms=5_000)
    w = Writer(plog)
    w.append([b"a"], timestamp=-1, now_ms=5_000)
    w.append([b"b"], timestamp=-1, now_ms=5_900)
    assert len(plog.segments) == 1
    w.append([b"c"], timestamp=-1, now_ms=6_001)
    assert len(plog.segments) == 2


def test_roll_when_the_offset_index_would_be_full(open_log):
    plog = open_log(segment_index_bytes=16)                    # room for two index entries
    w = Writer(plog)
    for _ in range(5):
        w.append([b"x"])
    assert [len(s) for s in plog.segments] == [2, 2, 1]


def test_leader_epoch_cache(open_log):
    plog = open_log()
    w = Writer(plog)
    plog.assign_epoch(0, 0)
    w.append([b"a", b"b"], epoch=0)
    plog.assign_epoch(1, plog.log_end_offset)                  # a leader elected at offset 2, no records yet
    plog.assign_epoch(2, plog.log_end_offset)                  # and another: epoch 1 never got a record
    w.append([b"c"], epoch=2)
    w.append([b"d"], epoch=3)                                  # an append in a newer epoch starts it
    assert plog.leader_epochs == ((0, 0), (2, 2), (3, 3))
    plog.assign_epoch(2, 9)                                    # not newer: ignored
    plog.truncate_to(3)                                        # Kafka's truncateFromEnd: epoch 3 started at 3
    assert plog.log_end_offset == 3 and plog.leader_epochs == ((0, 0), (2, 2))
    plog.delete_before(1, 0)                                   # truncateFromStart: the entry in force moves up
    assert plog.leader_epochs == ((0, 1), (2, 2))
    plog.delete_before(2, 0)
    assert plog.leader_epochs == ((2, 2),)


def test_truncate_to_drops_whole_batches_and_segments(open_log):
    plog = open_log(segment_bytes=150)
    w = Writer(plog)
    for i in range(4):
        w.append([bytes([i]) * 40])
    plog.truncate_to(2)
    assert plog.log_end_offset == 2 and [s.base_offset for s in plog.segments] == [0, 1]
    assert w.append([b"again"]) == (2, 2)
    assert values_of(plog)[-1] == (2, b"again")


def test_logs_share_the_first_leader_epoch_and_a_new_epoch_replaces_one_logs_own():
    a, b = PartitionLog(), PartitionLog()
    a.assign_epoch(0, 0)
    b.assign_epoch(0, 0)
    assert a.leader_epochs is b.leader_epochs == ((0, 0),)
    a.assign_epoch(1, 0)                                       # epoch 0 never got a record: superseded
    assert a.leader_epochs == ((1, 0),) and b.leader_epochs == ((0, 0),)


def test_a_segment_indexes_each_batch_in_one_array_and_truncation_cuts_it():
    segment = MemorySegment(10, created_ms=0)
    for k, (size, ts) in enumerate(((70, 5), (80, 9), (90, 7))):
        segment.append(b"x" * size, 10 + 2 * k, 11 + 2 * k, ts, now_ms=1)
    assert len(segment.batch_index) == 3 * FIELDS and len(segment) == 3 and segment.next_offset == 16
    assert [segment.end(i) for i in range(3)] == [70, 150, 240] and segment.position(2) == 150
    assert [segment.find(o) for o in (9, 10, 11, 12, 15, 16)] == [0, 0, 0, 1, 2, 3]
    assert (segment.largest_ts, segment.largest_ts_offset) == (9, 13)
    segment.truncate(1)
    assert len(segment) == 1 and segment.size == 70 and segment.next_offset == 12
    assert (segment.largest_ts, segment.largest_ts_offset) == (5, 11)
    segment.truncate(0)
    assert len(segment) == 0 and segment.next_offset == 10 and segment.find(10) == 0
    segment.append(b"x" * 70, 10, 11, 5, now_ms=1)
    with pytest.raises(TypeError) as failed:
        segment.find(None)                                     # type: ignore[arg-type]
    segment.append(b"x" * 80, 12, 13, 9, now_ms=1)             # the failed bisect left no view holding the index
    assert failed.value is not None and segment.find(12) == 1
