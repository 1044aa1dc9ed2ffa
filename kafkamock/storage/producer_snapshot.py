"""Producer snapshot files (``00000000000000000042.snapshot``), in Kafka's format (ProducerStateManager, version 1).

A snapshot holds each producer's last state at an offset: id, epoch, last sequence, last offset and offset delta of
its last batch, the batch's timestamp, the coordinator epoch and the first offset of its open transaction (-1:
none). It lets the state outlive the batches it came from (retention, DeleteRecords, KIP-360) across a restart.

Layout: int16 version (1), uint32 CRC-32C of everything after it, then an int32 count of 42-byte entries
(int64 id, int16 epoch, int32 last sequence, int64 last offset, int32 offset delta, int64 timestamp, int32
coordinator epoch, int64 transaction first offset). Written atomically (temp file, fsync, rename).
"""

from __future__ import annotations

import logging
import os
import struct
from pathlib import Path
from typing import NamedTuple

import crc32c

log = logging.getLogger("kafkamock.storage")
VERSION = 1
SUFFIX = ".snapshot"
_HEAD = struct.Struct(">hIi")
_ENTRY = struct.Struct(">qhiqiqiq")


class SnapshotEntry(NamedTuple):
    producer_id: int
    epoch: int
    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int
    coordinator_epoch: int
    txn_first_offset: int


def file_name(offset: int) -> str:
    return f"{offset:020d}{SUFFIX}"


def encode(entries: list[SnapshotEntry]) -> bytes:
    body = struct.pack(">i", len(entries)) + b"".join(_ENTRY.pack(*e) for e in entries)
    return struct.pack(">hI", VERSION, crc32c.crc32c(body)) + body


def decode(data: bytes) -> list[SnapshotEntry]:
    """The entries of a snapshot; ValueError for a wrong version, a CRC mismatch or a bad length."""
    if len(data) < _HEAD.size:
        raise ValueError("too short for a producer snapshot")
    version, crc, count = _HEAD.unpack_from(data)
    if version != VERSION:
        raise ValueError(f"producer snapshot version {version}")
    if crc32c.crc32c(data[6:]) != crc:
        raise ValueError("producer snapshot CRC mismatch")
    if len(data) != _HEAD.size + count * _ENTRY.size:
        raise ValueError(f"producer snapshot of {count} entries has {len(data)} bytes")
    return [SnapshotEntry(*_ENTRY.unpack_from(data, _HEAD.size + k * _ENTRY.size)) for k in range(count)]


def write(directory: Path, offset: int, entries: list[SnapshotEntry], keep: int = 2) -> Path:
    """Write the snapshot at ``offset`` and remove all but the newest ``keep`` snapshots of the directory."""
    path = directory / file_name(offset)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        fh.write(encode(entries))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    for old in offsets(directory)[:-keep]:
        (directory / file_name(old)).unlink(missing_ok=True)
    return path


def offsets(directory: Path) -> list[int]:
    return sorted(int(p.stem) for p in directory.glob(f"*{SUFFIX}") if p.stem.isdigit())


def read_latest(directory: Path, up_to: int | None = None) -> tuple[int, list[SnapshotEntry]] | None:
    """(offset, entries) of the newest readable snapshot at or below ``up_to``; unreadable ones are logged and
    skipped, as Kafka skips a corrupt snapshot and rebuilds from the log."""
    for offset in reversed(offsets(directory)):
        if up_to is not None and offset > up_to:
            continue
        path = directory / file_name(offset)
        try:
            return offset, decode(path.read_bytes())
        except (OSError, ValueError) as exc:
            log.warning("ignoring producer snapshot %s/%s: %s", directory.name, path.name, exc)
    return None
