"""Kafka's small text files in a log directory, in Kafka's formats, each written atomically (temp file, fsync,
rename) so a crash leaves the old version or the new one, never half of either.

- ``recovery-point-offset-checkpoint``, ``log-start-offset-checkpoint``, ``replication-offset-checkpoint``,
  ``cleaner-offset-checkpoint``: ``0`` (version), the entry count, then ``topic partition offset`` lines
  (Kafka's OffsetCheckpointFile);
- ``leader-epoch-checkpoint`` in a partition directory: ``0``, the count, then ``epoch start_offset`` lines;
- ``partition.metadata``: ``version: 0`` and ``topic_id: <id>``;
- ``meta.properties``: ``key=value`` lines (``cluster.id``, ``node.id``, ``version``, ``directory.id``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

log = logging.getLogger("kafkamock.storage")
VERSION = 0


def write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _entries(path: Path, width: int) -> list[list[str]]:
    """The entry lines of a versioned checkpoint file; [] when missing; ValueError when malformed."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    if len(lines) < 2 or lines[0].strip() != str(VERSION):
        raise ValueError(f"{path}: not a version {VERSION} checkpoint file")
    count = int(lines[1])
    rows = [line.split() for line in lines[2:2 + count]]
    if len(rows) != count or any(len(r) != width for r in rows):
        raise ValueError(f"{path}: expected {count} entries of {width} fields")
    return rows


def read_offsets(path: Path) -> dict[tuple[str, int], int]:
    """An OffsetCheckpointFile: {(topic, partition): offset}. A malformed file is logged and ignored (Kafka
    then falls back to recovering the logs it covers)."""
    try:
        return {(topic, int(partition)): int(offset) for topic, partition, offset in _entries(path, 3)}
    except ValueError as exc:
        log.warning("ignoring %s", exc)
        return {}


def write_offsets(path: Path, offsets: Mapping[tuple[str, int], int]) -> None:
    lines = [str(VERSION), str(len(offsets))]
    lines += [f"{topic} {partition} {offset}" for (topic, partition), offset in sorted(offsets.items())]
    write_atomically(path, "\n".join(lines) + "\n")


def read_leader_epochs(path: Path) -> list[tuple[int, int]]:
    try:
        return [(int(epoch), int(offset)) for epoch, offset in _entries(path, 2)]
    except ValueError as exc:
        log.warning("ignoring %s", exc)
        return []


def write_leader_epochs(path: Path, entries: Iterable[tuple[int, int]]) -> None:
    entries = list(entries)
    lines = [str(VERSION), str(len(entries))] + [f"{epoch} {offset}" for epoch, offset in entries]
    write_atomically(path, "\n".join(lines) + "\n")


def read_properties(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, _, value = line.partition("=")
            out[key.strip()] = value.strip()
    return out


def write_properties(path: Path, values: Mapping[str, str], comment: str) -> None:
    lines = [f"#{comment}"] + [f"{key}={value}" for key, value in values.items()]
    write_atomically(path, "\n".join(lines) + "\n")


def write_partition_metadata(path: Path, topic_id: str) -> None:
    write_atomically(path, f"version: {VERSION}\ntopic_id: {topic_id}\n")


def read_partition_metadata(path: Path) -> str | None:
    try:
        for line in path.read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "topic_id":
                return value.strip()
    except FileNotFoundError:
        pass
    return None
