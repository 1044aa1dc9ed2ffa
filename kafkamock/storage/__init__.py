"""Where partition logs live: the storage interface (``PartitionLog`` over segments) and its two homes.

``MemoryStorage`` keeps batches in memory (the default, for tests); ``DiskStorage`` keeps them in Kafka's own
on-disk layout under ``log.dirs`` and recovers them at start. The broker core is handed one of them and never
touches files itself. ``cleaner`` compacts logs whose ``cleanup.policy`` has ``compact``.
"""

from kafkamock.storage.disk import DiskStorage
from kafkamock.storage.log import LogConfig, PartitionLog, SegmentStore, StoredBatch
from kafkamock.storage.memory import MemoryStorage

__all__ = ["DiskStorage", "LogConfig", "MemoryStorage", "PartitionLog", "SegmentStore", "StoredBatch"]
