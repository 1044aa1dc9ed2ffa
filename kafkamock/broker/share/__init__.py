"""Share groups (KIP-932, KIP-1206, KIP-1222, KIP-1240) as Kafka 4.3.1 runs them: membership (``groups.py``), share
sessions (``sessions.py``), share-partitions with their in-flight batches and acquisition locks (``partition.py``,
``state.py``), reading a partition for a share group (``fetching.py``), a share-partition's durable state and the
replay of the KIP-932 page's SHARE_CHECKPOINT / SHARE_DELTA records that builds it (``persisted.py``), and every
share-partition with its durable state, those records written as control batches into the topic-partition itself
(``manager.py``).
"""

from kafkamock.broker.share.partition import AcquiredRun, SharePartition
from kafkamock.broker.share.state import AckType, RecordState

__all__ = ["AckType", "AcquiredRun", "RecordState", "SharePartition"]
