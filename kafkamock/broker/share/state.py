"""A share-partition record's states and the table of their transitions (Kafka's RecordState, KIP-932, KIP-1222).

``transition`` is the only way a record changes state; a pair missing from ``TRANSITIONS`` is refused, and the
share partition answers it with INVALID_RECORD_STATE. A release or an expired lock at the delivery-count limit
archives the record instead of making it available again (``group.share.delivery.count.limit``).
"""

from __future__ import annotations

from enum import Enum, IntEnum


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


class Event(Enum):
    ACQUIRE = "a ShareFetch hands the record to a member"
    ACCEPT = "acknowledged as processed"
    RELEASE = "given back for another delivery"
    REJECT = "refused: never delivered again"
    RENEW = "KIP-1222: the member needs more time; the lock restarts, the state stays"
    LOCK_EXPIRED = "the acquisition lock ran out"
    GAP = "an offset without a record (compaction, a control batch)"
    LIMIT_REACHED = "released or expired at the delivery-count limit"


S = RecordState
TRANSITIONS: dict[tuple[RecordState, Event], RecordState] = {
    (S.AVAILABLE, Event.ACQUIRE): S.ACQUIRED,
    (S.AVAILABLE, Event.GAP): S.ARCHIVED,
    (S.ACQUIRED, Event.ACCEPT): S.ACKNOWLEDGED,
    (S.ACQUIRED, Event.RELEASE): S.AVAILABLE,
    (S.ACQUIRED, Event.REJECT): S.ARCHIVED,
    (S.ACQUIRED, Event.RENEW): S.ACQUIRED,
    (S.ACQUIRED, Event.LOCK_EXPIRED): S.AVAILABLE,
    (S.ACQUIRED, Event.GAP): S.ARCHIVED,
    (S.ACQUIRED, Event.LIMIT_REACHED): S.ARCHIVED,
}
ACK_EVENTS = {AckType.GAP: Event.GAP, AckType.ACCEPT: Event.ACCEPT, AckType.RELEASE: Event.RELEASE,
              AckType.REJECT: Event.REJECT, AckType.RENEW: Event.RENEW}


class InvalidRecordState(ValueError):
    """INVALID_RECORD_STATE, with Kafka's message."""


class InvalidAckRequest(ValueError):
    """INVALID_REQUEST from a share-partition (an acknowledgement of offsets past those in flight), with Kafka's
    message."""


def transition(state: RecordState, event: Event) -> RecordState:
    try:
        return TRANSITIONS[(state, event)]
    except KeyError:
        raise InvalidRecordState(f"a {state.name} record cannot take {event.name}") from None
