"""A share-partition record's states and which moves between them are allowed (Kafka's RecordState, KIP-932,
KIP-1222).

``allowed`` is Kafka's RecordState.validateTransition: Available only to Acquired; Acquired to Available,
Acknowledged or Archived; nothing out of Acknowledged or Archived, and never to the same state. A release or an
expired lock at the delivery-count limit archives the record instead of making it available again
(``share.delivery.count.limit``); RENEW (KIP-1222) is no move at all, only a new lock.
"""

from __future__ import annotations

from enum import IntEnum


class RecordState(IntEnum):
    """Kafka's ids, which the SHARE_CHECKPOINT / SHARE_DELTA runs carry (Acquired is never written)."""

    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVED = 4


class AckType(IntEnum):
    """ShareFetch/ShareAcknowledge acknowledgement types; RENEW (KIP-1222) from v2."""

    GAP = 0
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3
    RENEW = 4


S = RecordState


def allowed(current: RecordState, new: RecordState) -> bool:
    """RecordState.validateTransition."""
    if new is current or current in (S.ACKNOWLEDGED, S.ARCHIVED):
        return False
    return current is not S.AVAILABLE or new is S.ACQUIRED


class InvalidRecordState(ValueError):
    """INVALID_RECORD_STATE, with Kafka's message."""


class InvalidAckRequest(ValueError):
    """INVALID_REQUEST from a share-partition (an acknowledgement of offsets past those in flight), with Kafka's
    message."""
