"""Logs on disk in Kafka's own layout, so a user can look at them with Kafka's tools, and recovery after a crash.

Under ``log.dirs``::

    meta.properties                      cluster.id, node.id, version (Kafka's)
    kafkamock-metadata.json              topics (names, ids, partitions, replicas, leaders, configs), dynamic
                                         broker configs, the producer-id block: what KRaft's metadata log holds
    recovery-point-offset-checkpoint     Kafka's checkpoint files: per partition, the offset up to which the log
    log-start-offset-checkpoint          was flushed, its log start offset (DeleteRecords), its high watermark,
    replication-offset-checkpoint        and how far compaction got
    cleaner-offset-checkpoint
    .kafka_cleanshutdown                 present only after a clean stop
    orders-0/
        partition.metadata               the topic id
        leader-epoch-checkpoint          leader epochs and the offsets they start at
        00000000000000000000.log         record batches exactly as stored, segment named by its base offset
        00000000000000000000.index       offset index: (relative offset int32, position int32) per
                                         index.interval.bytes
        00000000000000000000.timeindex   time index: (timestamp int64, relative offset int32)

An acknowledged produce has been written to its segment file (the page cache) before the response goes out, so
it survives the process being killed; ``flush.messages`` / ``flush.ms`` add fsyncs for power loss.

Recovery at start (Kafka's LogLoader): without the clean-shutdown marker, every segment from the recovery point
on is read back batch by batch with its CRC checked; the first torn or corrupt batch and everything after it is
cut off, with a WARNING line naming the file, the position and why. The indexes are rebuilt from the batches.
"""

from __future__ import annotations

import errno
import json
import logging
import mmap
import os
import resource
import shutil
import struct
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kafkamock.records.layout import HEADER_SIZE
from kafkamock.storage import checkpoint, producer_snapshot, share_snapshot
from kafkamock.storage.log import LeaderEpochs, LogConfig, PartitionLog, SegmentStore, StoredBatch
from kafkamock.storage.recovery import ScannedBatch, scan_segment
from kafkamock.storage.segment import Buffer, Segment

log = logging.getLogger("kafkamock.storage")
OFFSET_ENTRY = struct.Struct(">ii")     # relative offset, position
TIME_ENTRY = struct.Struct(">qi")       # timestamp, relative offset
CLEAN_SHUTDOWN = ".kafka_cleanshutdown"
METADATA = "kafkamock-metadata.json"
RECOVERY_POINTS = "recovery-point-offset-checkpoint"
LOG_STARTS = "log-start-offset-checkpoint"
HIGH_WATERMARKS = "replication-offset-checkpoint"
CLEANER_OFFSETS = "cleaner-offset-checkpoint"
DELETED_SUFFIX = ".deleted"
# A read of at least this many bytes (a fetch of large batches) is a view of the segment file mapped into memory, not
# a copy; a smaller one is copied (one pread costs less than a mapping then).
MAPPED_READ_BYTES = 64 * 1024


def segment_name(base_offset: int) -> str:
    return f"{base_offset:020d}"


def _write_all(fd: int, data: Buffer) -> None:
    view = memoryview(data).cast("B")
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _pread(fd: int, size: int, position: int) -> bytes:
    data = os.pread(fd, size, position)
    if len(data) == size:
        return data
    parts = [data]
    got = len(data)
    while got < size:
        more = os.pread(fd, size - got, position + got)
        if not more:
            raise OSError(f"segment file ended {size - got} bytes early at position {position + got}")
        parts.append(more)
        got += len(more)
    return b"".join(parts)


class HandlePool:
    """The open segment files of one storage, at most ``capacity`` segments at a time (three descriptors each, and a
    fourth, the mapping's own, once a large read mapped the segment file).

    A segment opens its files when it is used, and the least recently used one closes them: Kafka keeps every
    segment open, but a test double runs under the user's default ulimit (often 1024 descriptors) while a topic may
    have thousands of partitions. Closing loses nothing: every write is in the file (the page cache) already.
    One storage belongs to one broker thread, so a segment is never closed under another thread's read."""

    def __init__(self, capacity: int | None = None):
        self.capacity = capacity if capacity is not None else default_capacity()
        self.open: OrderedDict[FileSegment, None] = OrderedDict()

    def use(self, segment: FileSegment) -> None:
        if segment in self.open:
            self.open.move_to_end(segment)
            return
        while len(self.open) >= self.capacity:
            oldest, _ = self.open.popitem(last=False)
            oldest.close_files()
        segment.open_files()
        self.open[segment] = None

    def forget(self, segment: FileSegment) -> None:
        self.open.pop(segment, None)


def default_capacity() -> int:
    """Segments a storage keeps open: a quarter of the process's descriptor limit (the rest serve sockets and
    other brokers in the same process), at least 8."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    budget = 1 << 16 if soft == resource.RLIM_INFINITY else soft
    return max(8, budget // 4 // 4)


class FileSegment(Segment):
    """A segment in ``<base offset>.log``, with Kafka's sparse ``.index`` and ``.timeindex`` beside it; its files
    are open only while the storage's ``HandlePool`` holds it."""

    def __init__(self, directory: Path, base_offset: int, created_ms: int, config: LogConfig, handles: HandlePool):
        super().__init__(base_offset, created_ms)
        self.directory = directory
        self.config = config
        self.handles = handles
        self.path = directory / f"{segment_name(base_offset)}.log"
        self.offset_entries: list[tuple[int, int]] = []
        self.time_entries: list[tuple[int, int]] = []
        self.bytes_since_index = 0
        self._fds: tuple[int, int, int] | None = None
        self._created = False           # the first open creates the files and empties the indexes
        self._closed = False            # closed for good (deleted, replaced, the log closed): never reopened
        self._map: mmap.mmap | None = None   # the .log file mapped for large reads, as long as it was when mapped
        handles.use(self)

    __hash__ = object.__hash__          # a pool key by identity

    def __eq__(self, other: object) -> bool:
        return self is other

    def open_files(self) -> None:
        index_flags = os.O_RDWR | os.O_CREAT | (0 if self._created else os.O_TRUNC)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            index_fd = os.open(self.index_path, index_flags, 0o644)
            try:
                time_fd = os.open(self.time_index_path, index_flags, 0o644)
            except OSError:
                os.close(index_fd)
                raise
        except OSError:
            os.close(fd)
            raise
        self._fds, self._created = (fd, index_fd, time_fd), True

    def close_files(self) -> None:
        self._map = None        # not closed: the views of a response being sent keep it until they are done
        if self._fds is not None:
            for fd in self._fds:
                try:
                    os.close(fd)
                except OSError:
                    pass
            self._fds = None

    def _files(self) -> tuple[int, int, int]:
        if self._closed:
            raise OSError(errno.EBADF, f"segment {self.path.name} is closed")
        self.handles.use(self)
        assert self._fds is not None
        return self._fds

    @property
    def fd(self) -> int:
        return self._files()[0]

    @property
    def index_fd(self) -> int:
        return self._files()[1]

    @property
    def time_fd(self) -> int:
        return self._files()[2]

    @property
    def index_path(self) -> Path:
        return self.path.with_suffix(".index")

    @property
    def time_index_path(self) -> Path:
        return self.path.with_suffix(".timeindex")

    def append(self, data: Buffer, base_offset: int, last_offset: int, max_timestamp: int, now_ms: int) -> None:
        position = self.size
        _write_all(self.fd, data)
        self._index(len(data), base_offset, last_offset, max_timestamp, now_ms)
        self._maybe_index_entry(last_offset, position, len(data))

    def _maybe_index_entry(self, last_offset: int, position: int, size: int) -> None:
        """Kafka's LogSegment.append: an index entry once more than ``index.interval.bytes`` went by since the last."""
        if self.bytes_since_index > self.config.index_interval_bytes:
            entry = (last_offset - self.base_offset, position)
            self.offset_entries.append(entry)
            os.write(self.index_fd, OFFSET_ENTRY.pack(*entry))
            self._maybe_time_entry()
            self.bytes_since_index = 0
        self.bytes_since_index += size

    def _maybe_time_entry(self) -> None:
        if self.largest_ts >= 0 and (not self.time_entries or self.largest_ts > self.time_entries[-1][0]):
            entry = (self.largest_ts, self.largest_ts_offset - self.base_offset)
            self.time_entries.append(entry)
            os.write(self.time_fd, TIME_ENTRY.pack(*entry))

    def read(self, i: int, j: int) -> list[Buffer]:
        """Batches ``i`` to ``j - 1`` as one buffer: a view of the file mapped into memory when large (Kafka sends
        file regions without copying them; a copy of a megabyte cost a Java consumer a tenth of its rate against
        the same broker in memory), else a copy.

        A view outlives a later truncation of the file only as far as the kernel is concerned: the response
        that holds it fails to send (EFAULT, the connection closes, as Kafka's FileRecords.writeTo fails on a
        truncated file). Nothing in the core keeps a view past the request that read it."""
        start, end = self.position(i), self.end(j - 1)
        if end - start >= MAPPED_READ_BYTES:
            mapped = self._map
            if mapped is None or len(mapped) < end:
                mapped = self._map = mmap.mmap(self.fd, 0, access=mmap.ACCESS_READ)   # the file as it is now
            return [memoryview(mapped)[start:end]]
        return [_pread(self.fd, end - start, start)]

    def batch(self, i: int) -> Buffer:
        start = self.position(i)
        return _pread(self.fd, self.end(i) - start, start)

    def header(self, i: int) -> Buffer:
        start = self.position(i)
        return _pread(self.fd, min(HEADER_SIZE, self.end(i) - start), start)

    def truncate(self, keep: int) -> None:
        self._unindex(keep)
        self._map = None
        os.ftruncate(self.fd, self.size)
        last = self.last_offset(keep - 1) - self.base_offset if keep else -1
        self.offset_entries = [e for e in self.offset_entries if e[0] <= last]
        self.time_entries = [e for e in self.time_entries if e[1] <= last]
        self._rewrite_indexes()

    def _rewrite_indexes(self) -> None:
        os.ftruncate(self.index_fd, 0)
        os.pwrite(self.index_fd, b"".join(OFFSET_ENTRY.pack(*e) for e in self.offset_entries), 0)
        os.ftruncate(self.time_fd, 0)
        os.pwrite(self.time_fd, b"".join(TIME_ENTRY.pack(*e) for e in self.time_entries), 0)

    def rebuild(self, scanned: Iterable[ScannedBatch]) -> None:
        """Take the batches a recovery scan found (the file is already cut to them) and rebuild the indexes."""
        self.offset_entries.clear()
        self.time_entries.clear()
        self.bytes_since_index = 0
        position = 0
        for b in scanned:
            size = b.end - position
            self._index(size, b.base_offset, b.last_offset, b.max_timestamp, self.last_modified_ms)
            if self.bytes_since_index > self.config.index_interval_bytes:
                self.offset_entries.append((b.last_offset - self.base_offset, position))
                if self.largest_ts >= 0 and (not self.time_entries or self.largest_ts > self.time_entries[-1][0]):
                    self.time_entries.append((self.largest_ts, self.largest_ts_offset - self.base_offset))
                self.bytes_since_index = 0
            self.bytes_since_index += size
            position = b.end
        self._rewrite_indexes()

    def adopt(self, other: FileSegment) -> None:
        """Take ``other``'s batch index (its file has been renamed to this one's) and write the indexes."""
        for name in ("batch_index", "size", "largest_ts", "largest_ts_offset", "first_batch_ts",
                     "last_modified_ms", "offset_entries", "time_entries", "bytes_since_index"):
            setattr(self, name, getattr(other, name))
        self._rewrite_indexes()

    def seal(self) -> None:
        """No longer active: the time index gets its final entry and the bytes are flushed, as Kafka does on roll."""
        self._maybe_time_entry()
        self.flush()

    def flush(self) -> None:
        for fd in self._files():
            os.fsync(fd)

    def close(self) -> None:
        self._closed = True
        self.handles.forget(self)
        self.close_files()

    def files(self) -> list[Path]:
        return [self.path, self.index_path, self.time_index_path]

    def delete(self) -> None:
        self.close()
        for path in self.files():
            path.unlink(missing_ok=True)


class DiskStore(SegmentStore):
    """One partition's directory."""

    durable = True
    bounded_by_memory = False

    def __init__(self, storage: DiskStorage, topic: str, partition: int, directory: Path):
        self.storage, self.topic, self.partition, self.directory = storage, topic, partition, directory
        self.pending_deletes: list[tuple[int, list[Path]]] = []

    @property
    def key(self) -> tuple[str, int]:
        return self.topic, self.partition

    def new_segment(self, base_offset: int, now_ms: int, config: LogConfig) -> Segment:
        return FileSegment(self.directory, base_offset, now_ms, config, self.storage.handles)

    def rewrite_segment(self, old: Segment, batches: list[StoredBatch], now_ms: int, config: LogConfig) -> Segment:
        """Write the compacted batches beside ``old`` and swap the files in with one rename each."""
        assert isinstance(old, FileSegment)
        staging = self.directory / ".cleaning"
        staging.mkdir(exist_ok=True)
        staged = FileSegment(staging, old.base_offset, old.created_ms, config, self.storage.handles)
        for b in batches:
            staged.append(b.data, b.base_offset, b.last_offset, b.max_timestamp, now_ms)
        staged.last_modified_ms = old.last_modified_ms
        staged.seal()
        staged.close()
        old.close()
        os.replace(staged.path, old.path)   # the indexes are rewritten from memory below
        staged.index_path.unlink(missing_ok=True)
        staged.time_index_path.unlink(missing_ok=True)
        try:
            staging.rmdir()
        except OSError:
            pass
        new = FileSegment(self.directory, old.base_offset, old.created_ms, config, self.storage.handles)
        new.adopt(staged)
        return new

    def remove_segments(self, segments: list[Segment], now_ms: int, delay_ms: int) -> None:
        """Kafka renames a deleted segment's files to ``*.deleted`` and removes them ``file.delete.delay.ms`` later."""
        paths = []
        for segment in segments:
            assert isinstance(segment, FileSegment)
            segment.close()
            for path in segment.files():
                if path.exists():
                    target = path.with_name(path.name + DELETED_SUFFIX)
                    os.replace(path, target)
                    paths.append(target)
        if delay_ms <= 0:
            _unlink(paths)
        else:
            self.pending_deletes.append((now_ms + delay_ms, paths))

    def maintain(self, now_ms: int) -> None:
        due = [paths for when, paths in self.pending_deletes if when <= now_ms]
        self.pending_deletes = [(when, paths) for when, paths in self.pending_deletes if when > now_ms]
        for paths in due:
            _unlink(paths)

    def save_leader_epochs(self, entries: LeaderEpochs) -> None:
        checkpoint.write_leader_epochs(self.directory / "leader-epoch-checkpoint", entries)

    def save_log_start_offset(self, offset: int) -> None:
        # At once: records below it (DeleteRecords) must not come back after a crash.
        self.storage.log_starts[self.key] = offset
        self.storage.write_checkpoint(LOG_STARTS)

    def save_cleaner_offset(self, offset: int) -> None:
        self.storage.cleaner_offsets[self.key] = offset
        self.storage.dirty.add(CLEANER_OFFSETS)

    def flushed(self, recovery_point: int) -> None:
        # Written with the other checkpoints (``DiskStorage.write_checkpoints``): a stale recovery point only
        # means more to check at the next start.
        self.storage.recovery_points[self.key] = recovery_point
        self.storage.dirty.add(RECOVERY_POINTS)

    def save_producer_snapshot(self, offset: int, entries: list[producer_snapshot.SnapshotEntry]) -> None:
        producer_snapshot.write(self.directory, offset, entries)

    def load_producer_snapshot(self, up_to: int) -> tuple[int, list[producer_snapshot.SnapshotEntry]] | None:
        return producer_snapshot.read_latest(self.directory, up_to)

    def save_share_snapshot(self, snapshot: share_snapshot.ShareSnapshot) -> None:
        share_snapshot.write(self.directory, snapshot)

    def load_share_snapshots(self) -> list[share_snapshot.ShareSnapshot] | None:
        snapshots, unreadable = share_snapshot.read_all(self.directory)
        return None if unreadable else snapshots

    def remove_share_snapshot(self, group_id: str) -> None:
        share_snapshot.remove(self.directory, group_id)

    def close(self) -> None:
        for _, paths in self.pending_deletes:
            _unlink(paths)
        self.pending_deletes.clear()

    def delete(self) -> None:
        self.close()
        shutil.rmtree(self.directory, ignore_errors=True)
        for table in (self.storage.recovery_points, self.storage.log_starts, self.storage.cleaner_offsets):
            table.pop(self.key, None)


def _unlink(paths: list[Path]) -> None:
    for path in paths:
        path.unlink(missing_ok=True)


class DiskStorage:
    """Every partition log under one ``log.dirs`` directory, plus the cluster metadata that must survive a restart."""

    durable = True
    keeps_metadata = True

    def __init__(self, root: str | os.PathLike[str], handles: HandlePool | None = None) -> None:
        self.root = Path(root)
        self.handles = handles or HandlePool()
        self.root.mkdir(parents=True, exist_ok=True)
        marker = self.root / CLEAN_SHUTDOWN
        self.clean_start = marker.exists()
        marker.unlink(missing_ok=True)
        self.recovery_points = checkpoint.read_offsets(self.root / RECOVERY_POINTS)
        self.log_starts = checkpoint.read_offsets(self.root / LOG_STARTS)
        self.cleaner_offsets = checkpoint.read_offsets(self.root / CLEANER_OFFSETS)
        self.high_watermarks = checkpoint.read_offsets(self.root / HIGH_WATERMARKS)
        self.recovered: list[str] = []     # one line per file that recovery had to cut (tests, diagnostics)
        self.dirty: set[str] = set()       # checkpoint files whose table changed since they were written

    # -- cluster metadata ----------------------------------------------------------------------------------------

    def load_metadata(self) -> dict[str, Any] | None:
        path = self.root / METADATA
        if not path.exists():
            return None
        metadata: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))   # what save_metadata wrote
        return metadata

    def save_metadata(self, metadata: dict[str, Any]) -> None:
        checkpoint.write_atomically(self.root / METADATA, json.dumps(metadata, indent=1, sort_keys=True))
        meta = self.root / "meta.properties"
        if not meta.exists():
            checkpoint.write_properties(meta, {
                "cluster.id": metadata.get("cluster_id", ""), "directory.id": _kafka_uuid(uuid.uuid4()),
                "node.id": str(metadata.get("node_ids", [1])[0]), "version": "1"},
                time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime()))

    def space(self, log_dir: str | None = None) -> tuple[int, int]:
        """(total, usable) bytes of the volume holding ``log.dirs``, as DescribeLogDirs v4+ reports them."""
        usage = shutil.disk_usage(self.root)
        return usage.total, usage.free

    def write_checkpoints(self) -> None:
        """Write the checkpoint files that changed (the broker calls this every
        ``log.flush.offset.checkpoint.interval.ms``, as Kafka's checkpoint task does)."""
        for name in sorted(self.dirty):
            self.write_checkpoint(name)

    def write_checkpoint(self, name: str) -> None:
        self.dirty.discard(name)
        table = {RECOVERY_POINTS: self.recovery_points, LOG_STARTS: self.log_starts,
                 CLEANER_OFFSETS: self.cleaner_offsets, HIGH_WATERMARKS: self.high_watermarks}[name]
        checkpoint.write_offsets(self.root / name, table)

    # -- partition logs ------------------------------------------------------------------------------------------

    def open_log(self, topic: str, topic_id: uuid.UUID, partition: int, config: LogConfig,
                 now_ms: int) -> PartitionLog:
        """The partition's log: recovered from its directory when there is one, else a new empty one."""
        directory = self.root / f"{topic}-{partition}"
        directory.mkdir(exist_ok=True)
        store = DiskStore(self, topic, partition, directory)
        wanted_id = _kafka_uuid(topic_id)
        found_id = checkpoint.read_partition_metadata(directory / "partition.metadata")
        if found_id is not None and found_id != wanted_id:
            # A directory left by an earlier topic of the same name: its data is not this topic's.
            log.warning("%s holds topic id %s, not %s: removing its old data", directory.name, found_id, wanted_id)
            for child in directory.iterdir():
                shutil.rmtree(child) if child.is_dir() else child.unlink()
        if found_id != wanted_id:
            checkpoint.write_partition_metadata(directory / "partition.metadata", wanted_id)
        segments = self._load_segments(store, config, now_ms)
        key = (topic, partition)
        return PartitionLog(
            store, config, now_ms=now_ms, segments=segments or None,
            log_start_offset=self.log_starts.get(key, segments[0].base_offset if segments else 0),
            leader_epochs=checkpoint.read_leader_epochs(directory / "leader-epoch-checkpoint"),
            cleaner_offset=self.cleaner_offsets.get(key, 0),
            recovery_point=self.recovery_points.get(key, 0))

    def remove_strays(self, partitions: set[tuple[str, int]]) -> None:
        """Remove the partition directories the metadata does not name (a crash between creating a partition's
        directory and writing the metadata, a partition of a deleted topic): Kafka's stray logs. Otherwise the
        next partition of that name would adopt their records."""
        for directory in sorted(self.root.iterdir()):
            topic, _, index = directory.name.rpartition("-")
            if not directory.is_dir() or not topic or not index.isdigit() or (topic, int(index)) in partitions:
                continue
            if not (directory / "partition.metadata").exists() and not any(directory.glob("*.log")):
                continue
            log.warning("%s is in no topic's metadata: a stray log, removed", directory.name)
            shutil.rmtree(directory, ignore_errors=True)
            for table in (self.recovery_points, self.log_starts, self.cleaner_offsets, self.high_watermarks):
                table.pop((topic, int(index)), None)

    def _load_segments(self, store: DiskStore, config: LogConfig, now_ms: int) -> list[Segment]:
        directory = store.directory
        for leftover in list(directory.glob(f"*{DELETED_SUFFIX}")) + list(directory.glob("*.tmp")):
            leftover.unlink(missing_ok=True)
        shutil.rmtree(directory / ".cleaning", ignore_errors=True)
        bases = sorted(int(p.stem) for p in directory.glob("*.log") if p.stem.isdigit())
        recovery_point = self.recovery_points.get(store.key, 0)
        segments: list[Segment] = []
        for n, base in enumerate(bases):
            path = directory / f"{segment_name(base)}.log"
            if segments and base < segments[-1].next_offset:
                self._cut(path, 0, path.stat().st_size, f"segment starts at {base}, inside the previous one")
                self._drop_files(bases[n:], directory)
                break
            next_base = bases[n + 1] if n + 1 < len(bases) else None
            needs_check = not self.clean_start and (next_base is None or next_base > recovery_point)
            scan = scan_segment(path, base, validate=needs_check)
            mtime_ms = int(path.stat().st_mtime * 1000)
            if scan.problem is not None:
                self._cut(path, scan.valid_bytes, scan.file_bytes, scan.problem)
                with open(path, "r+b") as fh:
                    fh.truncate(scan.valid_bytes)
            segment = FileSegment(directory, base, mtime_ms, config, self.handles)
            segment.last_modified_ms = mtime_ms
            segment.rebuild(scan.batches)
            segments.append(segment)
            if scan.problem is not None:
                self._drop_files(bases[n + 1:], directory)   # nothing after a cut can be trusted
                break
        return segments

    def _cut(self, path: Path, valid: int, total: int, problem: str) -> None:
        line = (f"recovery: {path.parent.name}/{path.name}: dropped {total - valid} byte(s) from position "
                f"{valid}: {problem}")
        log.warning(line)
        self.recovered.append(line)

    def _drop_files(self, bases: list[int], directory: Path) -> None:
        for base in bases:
            for suffix in (".log", ".index", ".timeindex"):
                path = directory / f"{segment_name(base)}{suffix}"
                if path.exists():
                    if suffix == ".log":
                        self._cut(path, 0, path.stat().st_size, "follows a cut segment")
                    path.unlink()

    def close(self, logs: list[PartitionLog], now_ms: int) -> None:
        """A clean stop: flush every log, write the checkpoints and the clean-shutdown marker."""
        for partition_log in logs:
            store = partition_log.store
            if isinstance(store, DiskStore):
                partition_log.flush(now_ms)
                self.log_starts[store.key] = partition_log.log_start_offset
                self.high_watermarks[store.key] = partition_log.high_watermark
            partition_log.close()
        for name in (RECOVERY_POINTS, LOG_STARTS, HIGH_WATERMARKS, CLEANER_OFFSETS):
            self.write_checkpoint(name)
        (self.root / CLEAN_SHUTDOWN).write_text("")


def _kafka_uuid(value: uuid.UUID) -> str:
    import base64

    return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")
