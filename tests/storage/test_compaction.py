"""Compaction (cleanup.policy=compact), as Kafka's LogCleaner does it, in memory and on disk, with the clock passed
in: the latest record per key, tombstones kept for delete.retention.ms after the first pass, the lags and the
dirty ratio, offsets and producer state kept."""

from __future__ import annotations

from support.storage_logs import TOPIC_ID, Writer

from kafkamock import records
from kafkamock.storage import DiskStorage, LogConfig, cleaner

COMPACT = {"compact": True, "delete": False, "segment_bytes": 150, "min_cleanable_dirty_ratio": 0.0,
           "delete_retention_ms": 1_000, "file_delete_delay_ms": 0}


def keyed(plog):
    """[(offset, key, value)] of every record, and the batches' (base, last) offsets."""
    out, ranges = [], []
    for part in plog.read(plog.log_start_offset, 1 << 30):
        for batch in records.decode_batches(bytes(part)):
            ranges.append((batch.base_offset, batch.last_offset))
            out += [(r.offset, r.key, r.value) for r in batch.records]
    return out, ranges


def fill(plog, pairs, **kw):
    w = Writer(plog)
    for key, value in pairs:
        w.append([value], keys=[key], **kw)
    plog.roll(0)                                                   # everything written is now cleanable


def test_the_latest_value_of_each_key_stays(open_log):
    plog = open_log(**COMPACT)
    fill(plog, [(b"a", b"1"), (b"b", b"1"), (b"a", b"2"), (b"c", b"1"), (b"b", b"2"), (b"a", b"3")])
    result = cleaner.clean(plog, 10)
    assert result is not None and result.records_removed == 3 and result.end_offset == 6
    got, ranges = keyed(plog)
    assert got == [(3, b"c", b"1"), (4, b"b", b"2"), (5, b"a", b"3")]
    assert plog.log_start_offset == 0 and plog.log_end_offset == 6
    assert cleaner.clean(plog, 20) is None                          # nothing dirty left
    assert len(plog.segments) < 7                                   # small cleaned segments were merged


def test_tombstones_stay_for_delete_retention_ms_after_the_first_pass(open_log):
    plog = open_log(**COMPACT)
    fill(plog, [(b"a", b"1"), (b"b", b"1"), (b"a", None)])
    cleaner.clean(plog, 5_000)                                     # the first pass keeps the tombstone: horizon 6,000
    got, _ = keyed(plog)
    assert got == [(1, b"b", b"1"), (2, b"a", None)]
    (batch,) = [b for part in plog.read(2, 1 << 30) for b in records.decode_batches(bytes(part))]
    assert batch.has_delete_horizon and batch.base_timestamp == 6_000
    assert batch.records[0].timestamp == 1_000                      # record timestamps are kept
    assert cleaner.clean(plog, 5_999) is None                       # not yet
    Writer(plog).append([b"x"], keys=[b"x"])
    plog.roll(0)
    cleaner.clean(plog, 5_999)
    assert (2, b"a", None) in keyed(plog)[0]
    result = cleaner.clean(plog, 6_000)                             # the horizon passed
    assert result is not None and result.tombstones_removed == 1
    assert keyed(plog)[0] == [(1, b"b", b"1"), (3, b"x", b"x")]


def test_a_tombstone_horizon_survives_a_restart(tmp_path):
    config = LogConfig(**COMPACT)
    storage = DiskStorage(tmp_path)
    plog = storage.open_log("t", TOPIC_ID, 0, config, 0)
    fill(plog, [(b"a", b"1"), (b"a", None), (b"b", b"2")])
    cleaner.clean(plog, 5_000)
    storage.close([plog], 5_000)
    again = DiskStorage(tmp_path).open_log("t", TOPIC_ID, 0, config, 5_000)
    assert keyed(again)[0] == [(1, b"a", None), (2, b"b", b"2")]
    cleaner.clean(again, 5_500)                                     # the horizon came from the batch header: 6,000
    assert (1, b"a", None) in keyed(again)[0]
    cleaner.clean(again, 6_000)
    assert keyed(again)[0] == [(2, b"b", b"2")]


def test_batches_keep_their_offset_range_and_a_producers_last_batch_stays_empty(open_log):
    plog = open_log(**COMPACT)
    w = Writer(plog)
    w.append([b"1", b"2"], keys=[b"a", b"b"], producer_id=9, base_sequence=0)     # offsets 0-1
    w.append([b"3"], keys=[b"c"], producer_id=9, base_sequence=2)                  # offset 2
    w.append([b"x", b"y", b"z"], keys=[b"a", b"b", b"c"])                          # offsets 3-5
    plog.roll(0)
    cleaner.clean(plog, 10)
    got, ranges = keyed(plog)
    assert got == [(3, b"a", b"x"), (4, b"b", b"y"), (5, b"c", b"z")]
    # The producer's first batch lost everything and went; its last (offset 2) stays as an empty header, so the
    # producer's sequence numbers are not forgotten.
    assert ranges == [(2, 2), (3, 5)]
    headers = [records.BatchView(bytes(h), 0, len(h)) for _, h in plog.headers()]
    assert [(v.producer_id, v.base_sequence, v.record_count) for v in headers] == [(9, 2, 0), (-1, -1, 3)]


def test_a_batch_keeps_its_base_and_last_offsets_when_records_go(open_log):
    plog = open_log(**COMPACT)
    w = Writer(plog)
    w.append([b"1", b"2", b"3"], keys=[b"a", b"b", b"c"], compression="zstd")     # offsets 0-2
    w.append([b"4"], keys=[b"b"])                                                 # offset 3
    plog.roll(0)
    cleaner.clean(plog, 10)
    (first, second) = [b for part in plog.read(0, 1 << 30) for b in records.decode_batches(bytes(part))]
    assert (first.base_offset, first.last_offset, first.compression) == (0, 2, "zstd")
    assert [(r.offset, r.key) for r in first.records] == [(0, b"a"), (2, b"c")]
    assert (second.base_offset, second.records[0].value) == (3, b"4")


def test_control_batches_stay(open_log):
    plog = open_log(**COMPACT)
    fill(plog, [(b"a", b"1")])
    marker = bytearray(records.end_txn_marker_batch(True, producer_id=1, producer_epoch=0, coordinator_epoch=0,
                                                    timestamp=1, base_offset=plog.log_end_offset))
    plog.append(marker, 1, 1, 1, 0)
    fill(plog, [(b"a", b"2")])
    cleaner.clean(plog, 10)
    kinds = [(b.base_offset, b.is_control) for part in plog.read(0, 1 << 30)
             for b in records.decode_batches(bytes(part))]
    assert kinds == [(1, True), (2, False)]


def test_the_active_segment_and_young_segments_are_not_cleaned(open_log):
    plog = open_log(**{**COMPACT, "min_compaction_lag_ms": 1_000})
    w = Writer(plog)
    for value in (b"1", b"2", b"3"):
        w.append([value], keys=[b"k"], timestamp=5_000)
    assert cleaner.clean(plog, 5_500) is None                       # every closed segment is younger than the lag
    got = cleaner.clean(plog, 6_001)
    assert got is not None and got.end_offset == plog.active.base_offset == 2
    assert keyed(plog)[0] == [(1, b"k", b"2"), (2, b"k", b"3")]      # the active segment's record is untouched


def test_the_dirty_ratio_and_the_maximum_lag(open_log):
    plog = open_log(**{**COMPACT, "min_cleanable_dirty_ratio": 0.9, "max_compaction_lag_ms": 10_000})
    fill(plog, [(b"a", b"1"), (b"a", b"2")], timestamp=1_000)
    cleaner.clean(plog, 2_000)                                       # all dirty: ratio 1.0 >= 0.9
    fill(plog, [(b"b", b"1")], timestamp=1_000)
    assert cleaner.clean(plog, 2_000) is None                        # one dirty segment of two: below 0.9
    assert cleaner.clean(plog, 11_001) is not None                   # but its records are past the maximum lag


def test_compaction_leaves_delete_policy_logs_alone(open_log):
    plog = open_log(segment_bytes=150)
    fill(plog, [(b"a", b"1"), (b"a", b"2")])
    assert cleaner.clean(plog, 10) is None and len(keyed(plog)[0]) == 2
