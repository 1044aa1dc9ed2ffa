"""Reading a segment file back at start: every batch's place and offsets, and where a torn or corrupt tail starts.

Kafka's LogSegment.recover: walk the batches from the start of the file, check each one's framing (and its
CRC where the segment may hold unflushed data), stop at the first that fails, truncate the file there and
rebuild the indexes from what was read. A batch cut short by a crash mid-write, or bytes that are not a batch,
end the valid part; the caller logs what went.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from typing import IO

from kafkamock.records import CorruptRecordError
from kafkamock.records.layout import HEADER, HEADER_SIZE, LEGACY_OVERHEAD_V0, LOG_OVERHEAD, MAGIC_OFFSET
from kafkamock.records.view import BatchView

CHUNK = 4 << 20
_OFFSET_LENGTH = struct.Struct(">qi")
_LEGACY_TIMESTAMP = struct.Struct(">q")   # magic 1: the timestamp follows crc (4), magic (1), attributes (1)
MAX_BATCH = 1 << 30


@dataclass
class ScannedBatch:
    base_offset: int
    last_offset: int
    end: int              # position just after the batch
    max_timestamp: int
    leader_epoch: int


@dataclass
class Scan:
    """What a segment file holds: its valid batches, and why the rest (from ``valid_bytes``) is not valid."""

    batches: list[ScannedBatch] = field(default_factory=list)
    valid_bytes: int = 0
    file_bytes: int = 0
    problem: str | None = None


def scan_segment(path: str | os.PathLike[str], base_offset: int, *, validate: bool) -> Scan:
    """Walk the batches of ``path``. ``validate``: also check every CRC (segments past the recovery point)."""
    scan = Scan()
    expected = base_offset
    with open(path, "rb", buffering=0) as fh:
        scan.file_bytes = os.fstat(fh.fileno()).st_size
        buf = b""
        buf_pos = 0            # file position of buf[0]
        pos = 0                # file position of the next batch
        while True:
            rel = pos - buf_pos
            if len(buf) - rel < LOG_OVERHEAD:
                buf, buf_pos, rel = _refill(fh, buf, rel, pos, LOG_OVERHEAD)
                if len(buf) - rel < LOG_OVERHEAD:
                    if len(buf) - rel:
                        scan.problem = f"{len(buf) - rel} byte(s) too short for a batch header"
                    break
            batch_offset, length = _OFFSET_LENGTH.unpack_from(buf, rel)
            if not LEGACY_OVERHEAD_V0 - LOG_OVERHEAD <= length <= MAX_BATCH:
                scan.problem = f"batch length {length} at offset {batch_offset} is not a batch's"
                break
            size = LOG_OVERHEAD + length
            if len(buf) - rel < size:
                buf, buf_pos, rel = _refill(fh, buf, rel, pos, size)
                if len(buf) - rel < size:
                    scan.problem = (f"batch at offset {batch_offset} is cut short: {len(buf) - rel} of {size} "
                                    "bytes were written")
                    break
            magic = buf[rel + MAGIC_OFFSET]
            view = BatchView(buf, rel, rel + size)
            try:
                if magic == 2:
                    if size < HEADER_SIZE:
                        raise CorruptRecordError("batch is shorter than a batch header", rel)
                    fields = HEADER.unpack_from(buf, rel)
                    last_offset, max_ts, epoch = fields[0] + fields[6], fields[8], fields[2]
                elif magic in (0, 1):
                    last_offset, epoch = batch_offset, -1
                    max_ts = _LEGACY_TIMESTAMP.unpack_from(buf, rel + LOG_OVERHEAD + 6)[0] if magic == 1 else -1
                else:
                    raise CorruptRecordError(f"unknown magic {magic}", rel)
                if validate:
                    view.validate()
            except CorruptRecordError as exc:
                scan.problem = f"batch at offset {batch_offset} is corrupt: {exc}"
                break
            first = batch_offset if magic == 2 else last_offset
            if first < expected or last_offset < first:
                scan.problem = (f"batch offsets {first}-{last_offset} do not follow offset {expected - 1}")
                break
            pos += size
            scan.batches.append(ScannedBatch(first, last_offset, pos, max_ts, epoch))
            expected = last_offset + 1
        scan.valid_bytes = pos
    if scan.problem is None and scan.valid_bytes != scan.file_bytes:
        scan.problem = f"{scan.file_bytes - scan.valid_bytes} trailing byte(s)"
    return scan


def _refill(fh: IO[bytes], buf: bytes, rel: int, pos: int, need: int) -> tuple[bytes, int, int]:
    """Keep the unread part of ``buf`` and read more, at least ``need`` bytes when the file has them."""
    rest = buf[rel:]
    chunks = [rest]
    have = len(rest)
    while have < max(need, CHUNK):
        chunk = fh.read(max(need, CHUNK) - have)
        if not chunk:
            break
        chunks.append(chunk)
        have += len(chunk)
    return b"".join(chunks), pos, 0
