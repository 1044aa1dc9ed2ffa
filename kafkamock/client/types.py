"""The values the clients hand out: partitions, records and committed offsets, named as in Kafka's Java client."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple


class TopicPartition(NamedTuple):
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


class OffsetAndMetadata(NamedTuple):
    """A committed position: the offset of the next record to read, the leader epoch of the record before it
    (-1: unknown) and the committer's metadata string."""

    offset: int
    metadata: str = ""
    leader_epoch: int = -1


class ConsumerRecord(NamedTuple):
    """One record as a consumer sees it. ``timestamp_type`` is 0 (CreateTime) or 1 (LogAppendTime);
    ``leader_epoch`` is the batch's partition leader epoch. ``delivery_count`` is set by share consumers only
    (how many times the record was acquired, this time included); ``key``/``value`` are what the deserializers
    returned (bytes when there are none). A NamedTuple: immutable, and a poll builds one per record, where a frozen
    dataclass costs several times as much."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: int
    key: Any
    value: Any
    headers: Sequence[tuple[str, bytes | None]] = ()
    leader_epoch: int = -1
    delivery_count: int | None = None

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)


class ConsumerGroupMetadata(NamedTuple):
    """A consumer's place in its group (Java's ConsumerGroupMetadata), from ``Consumer.group_metadata()``: what
    ``send_offsets_to_transaction`` sends so the group coordinator fences a zombie that lost its partitions."""

    group_id: str
    generation_id: int = -1
    member_id: str = ""
    group_instance_id: str | None = None
