"""Logs kept in memory (the default, for tests): segments of the buffers batches arrived in; nothing survives the
process. ``DiskStorage`` (``storage.disk``) is the durable counterpart with the same interface."""

from __future__ import annotations

import shutil
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafkamock.storage.log import MEMORY, LogConfig, PartitionLog


@dataclass
class MemoryStorage:
    """Logs in memory (the default for tests): nothing survives the process.

    A cluster given this storage saves its metadata here, and a new cluster given the same storage starts from it.
    With ``keeps_metadata`` False (the storage a cluster makes for itself, which nothing else can hand to another
    cluster) nothing is saved: a snapshot of every topic and partition on each metadata change cost time and memory
    in proportion to all the partitions there are."""

    durable: bool = False
    metadata: dict[str, Any] | None = field(default=None, repr=False)
    keeps_metadata: bool = True

    def open_log(self, topic: str, topic_id: uuid.UUID, partition: int, config: LogConfig, now_ms: int) -> PartitionLog:
        return PartitionLog(MEMORY, config, now_ms=now_ms)

    def load_metadata(self) -> dict[str, Any] | None:
        return self.metadata

    def save_metadata(self, metadata: dict[str, Any]) -> None:
        if self.keeps_metadata:
            self.metadata = metadata

    def write_checkpoints(self) -> None: ...

    def remove_strays(self, partitions: set[tuple[str, int]]) -> None: ...

    def space(self, log_dir: str) -> tuple[int, int]:
        """(total, usable) bytes of the volume ``log_dir`` (Kafka's default directory) would be on, as Kafka keeping
        its logs there would report them: its nearest existing ancestor's (the logs themselves are in memory)."""
        path = Path(log_dir)
        while not path.exists() and path != path.parent:
            path = path.parent
        usage = shutil.disk_usage(path)
        return usage.total, usage.free

    def close(self, logs: list[PartitionLog], now_ms: int) -> None:
        for partition_log in logs:
            partition_log.close()
