"""The on-disk layout is Kafka's, byte for byte where Kafka defines the bytes, and recovery at start cuts what a
crash left half-written."""

from __future__ import annotations

import errno
import logging
import os
import struct
import uuid

import pytest
from support.storage_logs import TOPIC_ID, Writer, values_of

from kafkamock import records
from kafkamock.broker.cluster import kafka_uuid_string
from kafkamock.storage import DiskStorage, LogConfig
from kafkamock.storage.disk import CLEAN_SHUTDOWN


def open_disk(root, now_ms=0, **config):
    storage = DiskStorage(root)
    return storage, storage.open_log("orders", TOPIC_ID, 3, LogConfig(**config), now_ms)


def test_segment_files_hold_the_batches_exactly(tmp_path):
    storage, plog = open_disk(tmp_path, segment_bytes=300)
    w = Writer(plog)
    for i in range(5):
        w.append([b"v%d" % i * 20], timestamp=1_000 + i)
    d = tmp_path / "orders-3"
    assert sorted(p.name for p in d.iterdir()) == sorted(
        [f"{b:020d}.{ext}" for b in (0, 2, 4) for ext in ("log", "index", "timeindex")]
        + ["partition.metadata", "leader-epoch-checkpoint"])
    stored = b"".join((d / f"{b:020d}.log").read_bytes() for b in (0, 2, 4))
    assert stored == b"".join(bytes(p) for p in plog.read(0, 1 << 30))
    assert [b.base_offset for b in records.decode_batches(stored)] == [0, 1, 2, 3, 4]
    assert (d / "partition.metadata").read_text() == f"version: 0\ntopic_id: {kafka_uuid_string(TOPIC_ID)}\n"


def test_offset_and_time_indexes_follow_kafkas_sparse_rule(tmp_path):
    storage, plog = open_disk(tmp_path, index_interval_bytes=100)
    w = Writer(plog)
    timestamps = [1_000, 3_000, 2_000, 4_000, 4_000, 5_000]
    positions = []
    for ts in timestamps:
        positions.append(plog.active.size)
        w.append([b"x" * 60], timestamp=ts)                       # ~130 bytes each: over 100 since the last entry
    d = tmp_path / "orders-3"
    index = (d / f"{0:020d}.index").read_bytes()
    entries = [struct.unpack_from(">ii", index, i) for i in range(0, len(index), 8)]
    # LogSegment.append: an entry for a batch when more than index.interval.bytes went by before it.
    assert entries == [(k, positions[k]) for k in range(1, 6)]
    timeindex = (d / f"{0:020d}.timeindex").read_bytes()
    time_entries = [struct.unpack_from(">qi", timeindex, i) for i in range(0, len(timeindex), 12)]
    # (largest timestamp so far, its offset), only when it grows.
    assert time_entries == [(3_000, 1), (4_000, 3), (5_000, 5)]


def test_checkpoint_and_properties_files_are_kafkas_text_formats(tmp_path):
    storage, plog = open_disk(tmp_path, segment_bytes=200)
    w = Writer(plog)
    plog.assign_epoch(0, 0)
    w.append([b"a"], epoch=0)
    plog.assign_epoch(4, plog.log_end_offset)
    w.append([b"b" * 100], epoch=4)
    w.append([b"c"], epoch=4)
    plog.delete_before(1, 0)
    storage.save_metadata({"cluster_id": "abc", "node_ids": [1]})
    storage.close([plog], 0)
    d = tmp_path
    assert (d / "orders-3" / "leader-epoch-checkpoint").read_text() == "0\n1\n4 1\n"
    assert (d / "log-start-offset-checkpoint").read_text() == "0\n1\norders 3 1\n"
    assert (d / "recovery-point-offset-checkpoint").read_text() == "0\n1\norders 3 3\n"
    assert (d / "replication-offset-checkpoint").read_text() == "0\n1\norders 3 3\n"
    props = (d / "meta.properties").read_text().splitlines()
    assert props[0].startswith("#") and {"cluster.id=abc", "node.id=1", "version=1"} <= set(props)
    assert (d / CLEAN_SHUTDOWN).exists()


def test_a_clean_restart_reads_everything_back(tmp_path):
    storage, plog = open_disk(tmp_path, segment_bytes=300)
    w = Writer(plog)
    for i in range(7):
        w.append([b"%d" % i * 30], timestamp=1_000 + i)
    plog.delete_before(3, 0)
    before, bases = values_of(plog), [s.base_offset for s in plog.segments]
    assert len(bases) > 1
    storage.close([plog], 0)
    again = DiskStorage(tmp_path)
    assert again.clean_start and not (tmp_path / CLEAN_SHUTDOWN).exists()   # the marker is consumed at start
    reopened = again.open_log("orders", TOPIC_ID, 3, LogConfig(segment_bytes=300), 0)
    assert values_of(reopened) == before and reopened.log_start_offset == 3 and reopened.log_end_offset == 7
    assert [s.base_offset for s in reopened.segments] == bases
    assert Writer(reopened).append([b"next"]) == (7, 7)


def _reopen(root, caplog):
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="kafkamock.storage"):
        storage = DiskStorage(root)
        return storage, storage.open_log("orders", TOPIC_ID, 3, LogConfig(segment_bytes=300), 0)


@pytest.mark.parametrize("clean", [True, False])
def test_a_torn_tail_is_cut_with_a_warning(tmp_path, caplog, clean):
    storage, plog = open_disk(tmp_path)
    w = Writer(plog)
    for i in range(3):
        w.append([b"%d" % i])
    if clean:
        storage.close([plog], 0)
    segment = tmp_path / "orders-3" / f"{0:020d}.log"
    intact = segment.stat().st_size
    torn = records.encode_batch([{"value": b"3" * 50, "timestamp": 1}], base_offset=3)
    with open(segment, "ab") as fh:
        fh.write(torn[:40])
    storage, plog = _reopen(tmp_path, caplog)
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warning == (f"recovery: orders-3/{segment.name}: dropped 40 byte(s) from position {intact}: batch at "
                       f"offset 3 is cut short: 40 of {len(torn)} bytes were written")
    assert storage.recovered == [warning]
    assert segment.stat().st_size == intact and [v for _, v in values_of(plog)] == [b"0", b"1", b"2"]
    assert Writer(plog).append([b"3"]) == (3, 3)


def test_a_corrupt_batch_is_cut_only_without_a_clean_shutdown(tmp_path, caplog):
    storage, plog = open_disk(tmp_path)
    w = Writer(plog)
    for i in range(4):
        w.append([b"%d" % i])
    segment = tmp_path / "orders-3" / f"{0:020d}.log"
    data = bytearray(segment.read_bytes())
    views, _ = records.split_batches(bytes(data))
    data[views[2].end - 2] ^= 0x55
    segment.write_bytes(bytes(data))
    storage, plog = _reopen(tmp_path, caplog)                      # no marker: the CRCs are checked
    assert [r.getMessage() for r in caplog.records][0].startswith(
        f"recovery: orders-3/{segment.name}: dropped {len(data) - views[2].start} byte(s) from position "
        f"{views[2].start}: batch at offset 2 is corrupt")
    assert plog.log_end_offset == 2


def test_segments_after_a_cut_are_dropped(tmp_path, caplog):
    storage, plog = open_disk(tmp_path, segment_bytes=150)
    w = Writer(plog)
    for i in range(3):
        w.append([b"%d" % i * 40])
    first = tmp_path / "orders-3" / f"{0:020d}.log"
    with open(first, "ab") as fh:
        fh.write(b"\x00" * 20)
    storage, plog = _reopen(tmp_path, caplog)
    assert plog.log_end_offset == 1 and [s.base_offset for s in plog.segments] == [0]
    assert not (tmp_path / "orders-3" / f"{1:020d}.log").exists()
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 3 and all(m.startswith("recovery: orders-3/") for m in messages)
    assert "follows a cut segment" in messages[1]


def test_leftovers_and_another_topics_directory_are_cleared(tmp_path, caplog):
    storage, plog = open_disk(tmp_path)
    Writer(plog).append([b"a"])
    d = tmp_path / "orders-3"
    (d / f"{0:020d}.log.deleted").write_bytes(b"old")
    (d / ".cleaning").mkdir()
    (d / "leader-epoch-checkpoint.tmp").write_text("x")
    storage, plog = _reopen(tmp_path, caplog)
    assert sorted(p.name for p in d.iterdir() if p.name.endswith((".deleted", ".tmp")) or p.is_dir()) == []
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="kafkamock.storage"):
        other = DiskStorage(tmp_path).open_log("orders", uuid.UUID(int=7), 3, LogConfig(), 0)
    assert other.log_end_offset == 0                                # a new topic of the same name starts empty
    assert f"orders-3 holds topic id {kafka_uuid_string(TOPIC_ID)}" in caplog.text


def test_share_snapshots_locate_checkpoints_and_a_bad_one_sends_recovery_through_the_log(tmp_path, caplog):
    """KIP-932's share snapshot file: one per share-partition in its partition directory, naming the offset and
    epoch of its latest SHARE_CHECKPOINT; one that does not read back makes ``load_share_snapshots`` say so (None)."""
    from kafkamock.storage.share_snapshot import ShareSnapshot, file_name

    _, plog = open_disk(tmp_path)
    store, d = plog.store, tmp_path / "orders-3"
    store.save_share_snapshot(ShareSnapshot("g:1", 2, 40))
    store.save_share_snapshot(ShareSnapshot("é/..", 1, 7))          # any group id makes a file name
    store.save_share_snapshot(ShareSnapshot("g:1", 3, 50))          # the next checkpoint replaces the file
    assert sorted(store.load_share_snapshots()) == [("g:1", 3, 50), ("é/..", 1, 7)]
    assert sorted(p.name for p in d.glob("*.sharestate")) == sorted([file_name("g:1"), file_name("é/..")])
    (d / file_name("é/..")).write_bytes(b"\x00\x00garbage")
    with caplog.at_level(logging.WARNING, logger="kafkamock.storage"):
        assert store.load_share_snapshots() is None
    assert "ignoring share snapshot" in caplog.text
    store.remove_share_snapshot("é/..")                              # its share-partition was deleted
    assert store.load_share_snapshots() == [("g:1", 3, 50)]


def _open_descriptors(root) -> int:
    """How many of this process's descriptors point into ``root``."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith(str(root)):
                count += 1
        except OSError:
            continue
    return count


def test_segment_files_stay_open_only_within_the_pools_capacity(tmp_path):
    """Forty partitions of three segments on a pool of four segments: never more than twelve descriptors into the
    data directory, and every write, read and index entry survives the closing and reopening."""
    from kafkamock.storage.disk import HandlePool

    storage = DiskStorage(tmp_path, HandlePool(capacity=4))
    logs = [storage.open_log("wide", TOPIC_ID, p, LogConfig(segment_bytes=300, index_interval_bytes=100), 0)
            for p in range(40)]
    writers = [Writer(plog) for plog in logs]
    for round_ in range(6):
        for p, w in enumerate(writers):
            w.append([b"%d-%d:" % (p, round_) + b"x" * 60], timestamp=1_000 + round_)
            assert _open_descriptors(tmp_path) <= 12
    for p, plog in enumerate(logs):
        assert [v[:v.index(b":")] for _, v in values_of(plog)] == [b"%d-%d" % (p, r) for r in range(6)]
        assert len(plog.segments) == 3
        first = tmp_path / f"wide-{p}" / f"{0:020d}.index"
        assert len(first.read_bytes()) == 8                  # the entry written before the segment was evicted
    storage.close(logs, 0)
    assert _open_descriptors(tmp_path) == 0
    again = DiskStorage(tmp_path, HandlePool(capacity=4))
    reopened = [again.open_log("wide", TOPIC_ID, p, LogConfig(segment_bytes=300), 0) for p in range(40)]
    assert [len(values_of(plog)) for plog in reopened] == [6] * 40
    assert _open_descriptors(tmp_path) <= 12


def test_a_share_snapshot_of_a_group_id_too_long_for_a_file_name_is_kept_under_its_digest(tmp_path):
    """A group id of 32767 bytes would make a hex file name of 65534 characters: the snapshot goes under the id's
    SHA-256 instead, reads back with its id, and is removed by it."""
    from kafkamock.storage import share_snapshot
    from kafkamock.storage.share_snapshot import ShareSnapshot

    for group in ("g", "é" * 50, "€" * 10922):
        written = share_snapshot.write(tmp_path, ShareSnapshot(group, 3, 42))
        assert len(written.name) <= 255
        assert ShareSnapshot(group, 3, 42) in share_snapshot.read_all(tmp_path)[0]
        share_snapshot.remove(tmp_path, group)
        assert not written.exists()


def test_a_closed_segment_is_never_reopened(tmp_path):
    """A segment closed for good (its files renamed for deletion) must not come back as an empty file at its old
    path when something still holds it: reading it fails instead."""
    import errno

    from kafkamock.storage.disk import HandlePool

    storage = DiskStorage(tmp_path, HandlePool(capacity=2))
    plog = storage.open_log("gone", TOPIC_ID, 0, LogConfig(segment_bytes=200), 0)
    Writer(plog).append([b"x" * 50], timestamp=1_000)
    segment = plog.segments[0]
    segment.close()
    with pytest.raises(OSError) as closed:
        segment.batch(0)
    assert closed.value.errno == errno.EBADF
    assert segment.path.exists()                    # the one file it had, not a new empty one


def test_a_large_read_is_a_view_of_the_mapped_file_and_follows_appends_truncation_and_closing(tmp_path):
    """A read of at least MAPPED_READ_BYTES is a view of the segment file mapped into memory (no copy), a smaller
    one a copy; the mapping follows the file as it grows and is truncated, and goes with the files when the pool
    closes them, once no view holds it. A view the file was truncated under cannot be sent (EFAULT), which the
    connection turns into a closed connection; it never crashes the process."""
    import gc
    import socket

    from kafkamock.storage.disk import MAPPED_READ_BYTES

    storage, plog = open_disk(tmp_path)
    w = Writer(plog)
    w.append([b"a" * 100])
    w.append([b"b" * MAPPED_READ_BYTES])
    file = tmp_path / "orders-3" / f"{0:020d}.log"
    (small,) = plog.read(0, 10)                      # the first batch alone: copied
    assert type(small) is bytes and small == file.read_bytes()[:len(small)]
    whole = plog.read(0, 1 << 30)
    assert [type(p) for p in whole] == [memoryview] and bytes(whole[0]) == file.read_bytes()
    w.append([b"c" * MAPPED_READ_BYTES])             # the file grew past the mapping: mapped again
    grown = plog.read(0, 1 << 30)
    assert bytes(grown[0]) == file.read_bytes() and [v for _, v in values_of(plog)][-1] == b"c" * MAPPED_READ_BYTES
    plog.truncate_to(2)                              # the third batch cut off
    assert b"".join(bytes(p) for p in plog.read(0, 1 << 30)) == file.read_bytes()
    assert [o for o, _ in values_of(plog)] == [0, 1]
    a, b = socket.socketpair()
    try:
        with pytest.raises(OSError) as refused:      # the old view's last batch is past the file's end now
            os.writev(a.fileno(), [grown[0][-100:]])
        assert refused.value.errno == errno.EFAULT
    finally:
        a.close()
        b.close()
    del whole, grown, small
    storage.close([plog], 0)
    gc.collect()
    assert _open_descriptors(tmp_path) == 0
