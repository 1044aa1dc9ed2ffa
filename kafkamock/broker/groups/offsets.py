"""Committed offsets of every group, and KIP-211's rule for when they expire.

Kafka's OffsetMetadataManager in small: a group's offsets by topic and partition; ``expired`` answers which of them
the periodic cleanup removes, given the group's expiration condition (``offsets_expire_by`` on each group kind).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from kafkamock.broker.errors import ErrorCode


@dataclass(frozen=True, slots=True)
class CommittedOffset:
    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp_ms: int
    expire_timestamp_ms: int | None = None    # set by OffsetCommit v2-v4 with an explicit RetentionTimeMs
    record_offset: int = -1                   # where its record is in __consumer_offsets (which of two came last)


ExpireBy = Callable[[CommittedOffset], int]
"""KIP-211: the timestamp an offset's retention counts from (a group kind's ``offsets_expire_by``)."""

CommitCheck = Callable[[str, uuid.UUID | None, int], tuple[ErrorCode, str] | None]
"""KIP-1251's per-partition check of an OffsetCommit (``validate_commit``): (topic, topic id, partition) -> None, or
the error and message that refuse it."""


class GroupOffsets:
    """One group's committed offsets: {topic: {partition: CommittedOffset}}."""

    __slots__ = ("by_topic",)

    def __init__(self) -> None:
        self.by_topic: dict[str, dict[int, CommittedOffset]] = {}

    def __bool__(self) -> bool:
        return bool(self.by_topic)

    def get(self, topic: str, partition: int) -> CommittedOffset | None:
        return self.by_topic.get(topic, {}).get(partition)

    def put(self, topic: str, partition: int, offset: CommittedOffset) -> None:
        self.by_topic.setdefault(topic, {})[partition] = offset

    def remove(self, topic: str, partition: int) -> bool:
        partitions = self.by_topic.get(topic)
        if partitions is None or partition not in partitions:
            return False
        del partitions[partition]
        if not partitions:
            del self.by_topic[topic]
        return True

    def items(self) -> Iterator[tuple[str, int, CommittedOffset]]:
        for topic, partitions in self.by_topic.items():
            for partition, offset in partitions.items():
                yield topic, partition, offset

    def expired(self, base_timestamp: ExpireBy, subscribed: Callable[[str], bool],
                now_ms: int, retention_ms: int) -> list[tuple[str, int]]:
        """KIP-211 (Kafka's cleanupExpiredOffsets): offsets of topics the group does not subscribe to whose time
        is up: an explicit expire timestamp (a v2-v4 commit with RetentionTimeMs) when there is one, else
        ``retention_ms`` after the base timestamp the group's condition gives (the time it became Empty, or the
        commit time)."""
        found = []
        for topic, partitions in self.by_topic.items():
            if subscribed(topic):
                continue
            for partition, offset in partitions.items():
                if offset.expire_timestamp_ms is not None:
                    due = now_ms >= offset.expire_timestamp_ms
                else:
                    due = now_ms - base_timestamp(offset) >= retention_ms
                if due:
                    found.append((topic, partition))
        return found
