"""Decoded records and batches: frozen, slotted value types (kio's style), plain data with no behaviour."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

Header = tuple[str, bytes | None]


class Record(NamedTuple):
    """One record. In a control batch, ``control_type`` names the marker and ``control_value`` decodes it.

    A NamedTuple rather than a frozen dataclass: equally immutable, and a fetch decodes one per record, where
    a frozen dataclass's constructor cost five times as much.
    """

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: Sequence[Header] = ()
    control_type: str | None = None
    control_value: Any = None


@dataclass(frozen=True, slots=True)
class RecordBatch:
    """A record batch (magic 2), or a legacy message with its inner messages (magic 0/1)."""

    base_offset: int
    magic: int
    compression: str
    timestamp_type: str
    producer_id: int
    producer_epoch: int
    base_sequence: int
    is_transactional: bool
    is_control: bool
    records: list[Record]
    partition_leader_epoch: int = -1
    last_offset: int = -1
    base_timestamp: int = -1
    max_timestamp: int = -1
    has_delete_horizon: bool = False
    crc: int = 0
    size: int = 0

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1


TIMESTAMP_TYPES = ("CreateTime", "LogAppendTime")
"""Kafka's TimestampType names, by the value of attribute bit 3 (magic 0 messages have "NoTimestampType")."""
NO_TIMESTAMP_TYPE = "NoTimestampType"
