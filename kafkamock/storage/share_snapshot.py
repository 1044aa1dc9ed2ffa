"""Share snapshot files (KIP-932 seed page): one per share-partition, in its topic-partition's directory, saying where
the latest SHARE_CHECKPOINT control batch is, so a restart reads it and the deltas after it without scanning the log.

Name: the group id's UTF-8 bytes in hex, ``.sharestate`` (any group id is a valid file name that way), or, for a
group id too long for a file name that way, ``sha256-`` and the hex digest of those bytes (the file holds the id,
so reading never depends on the name). Layout:
int16 version (0), uint32 CRC-32C of everything after it, int32 checkpoint epoch, int64 offset of the checkpoint
batch, int16 length + the group id in UTF-8. Written atomically (temp file, fsync, rename). A file that does not read
back is logged and counted: the log itself still holds the checkpoints, so recovery then scans the whole log for them.
"""

from __future__ import annotations

import hashlib
import logging
import os
import struct
from pathlib import Path
from typing import NamedTuple

import crc32c

log = logging.getLogger("kafkamock.storage")
VERSION = 0
SUFFIX = ".sharestate"
_HEAD = struct.Struct(">hI")
_BODY = struct.Struct(">iqh")


class ShareSnapshot(NamedTuple):
    group_id: str
    checkpoint_epoch: int
    checkpoint_offset: int


MAX_HEX_NAME = 200       # file names are at most 255 bytes on common file systems


def file_name(group_id: str) -> str:
    name = group_id.encode().hex()
    if len(name) > MAX_HEX_NAME:
        name = "sha256-" + hashlib.sha256(group_id.encode()).hexdigest()
    return name + SUFFIX


def encode(snapshot: ShareSnapshot) -> bytes:
    group = snapshot.group_id.encode()
    body = _BODY.pack(snapshot.checkpoint_epoch, snapshot.checkpoint_offset, len(group)) + group
    return _HEAD.pack(VERSION, crc32c.crc32c(body)) + body


def decode(data: bytes) -> ShareSnapshot:
    if len(data) < _HEAD.size + _BODY.size:
        raise ValueError("too short for a share snapshot")
    version, crc = _HEAD.unpack_from(data)
    if version != VERSION:
        raise ValueError(f"share snapshot version {version}")
    if crc32c.crc32c(data[_HEAD.size:]) != crc:
        raise ValueError("share snapshot CRC mismatch")
    epoch, offset, length = _BODY.unpack_from(data, _HEAD.size)
    start = _HEAD.size + _BODY.size
    if len(data) != start + length:
        raise ValueError("share snapshot length mismatch")
    return ShareSnapshot(data[start:].decode(), epoch, offset)


def write(directory: Path, snapshot: ShareSnapshot) -> Path:
    path = directory / file_name(snapshot.group_id)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        fh.write(encode(snapshot))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return path


def read_all(directory: Path) -> tuple[list[ShareSnapshot], int]:
    """The snapshots of a partition directory, and how many files did not read back."""
    out, unreadable = [], 0
    for path in sorted(directory.glob(f"*{SUFFIX}")):
        try:
            out.append(decode(path.read_bytes()))
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            log.warning("ignoring share snapshot %s/%s: %s", directory.name, path.name, exc)
            unreadable += 1
    return out, unreadable


def remove(directory: Path, group_id: str) -> None:
    (directory / file_name(group_id)).unlink(missing_ok=True)
