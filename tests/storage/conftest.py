"""Storage tests run on both homes of a log: memory and Kafka's on-disk layout (under tmp_path)."""

from __future__ import annotations

import pytest
from support.storage_logs import TOPIC_ID

from kafkamock.storage import DiskStorage, LogConfig, MemoryStorage


@pytest.fixture(params=["memory", "disk"])
def storage(request, tmp_path):
    return MemoryStorage() if request.param == "memory" else DiskStorage(tmp_path / "logs")


@pytest.fixture
def open_log(storage):
    """open_log(**LogConfig fields) -> a new PartitionLog of topic "t" partition 0 in this storage."""
    def make(now_ms: int = 0, **config):
        return storage.open_log("t", TOPIC_ID, 0, LogConfig(**config), now_ms)
    return make
