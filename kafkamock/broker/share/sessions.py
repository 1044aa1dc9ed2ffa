"""Share sessions (KIP-932): what a member's ShareFetch/ShareAcknowledge requests to one node have in common.

Like KIP-227's fetch sessions, keyed by (group id, member id) instead of a session id: epoch 0 opens a session
(replacing the member's old one), each later request must carry the next epoch (INVALID_SHARE_SESSION_EPOCH
otherwise, SHARE_SESSION_NOT_FOUND without a session), and epoch -1 closes it. A session remembers the
share-partitions the member fetches from, so a later request names only what it adds or forgets. A node holds at
most ``group.share.max.share.sessions`` (SHARE_SESSION_LIMIT_REACHED).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from kafkamock.broker.errors import ErrorCode, KafkaError

INITIAL_EPOCH = 0
FINAL_EPOCH = -1
MAX_EPOCH = 2**31 - 1
PartitionKey = tuple[uuid.UUID, int]


@dataclass
class ShareSession:
    group_id: str
    member_id: str
    epoch: int = 1                                   # the epoch the next request must carry
    partitions: set[PartitionKey] = field(default_factory=set)


class ShareSessions:
    """The share sessions of one node."""

    def __init__(self, max_sessions: Callable[[], int]):
        self.sessions: dict[tuple[str, str], ShareSession] = {}
        self.max_sessions = max_sessions

    def begin(self, group_id: str, member_id: str, epoch: int, add: Iterable[PartitionKey] = (),
              forget: Iterable[PartitionKey] = ()) -> ShareSession:
        """The session a request with ``epoch`` works in (opened, advanced, or for -1 the one it closes)."""
        key = (group_id, member_id)
        if epoch == INITIAL_EPOCH:
            if key not in self.sessions and len(self.sessions) >= self.max_sessions():
                raise KafkaError(ErrorCode.SHARE_SESSION_LIMIT_REACHED,
                                 f"The limit of {self.max_sessions()} share sessions is reached.")
            opened = self.sessions[key] = ShareSession(group_id, member_id)
            opened.partitions.update(add)
            return opened
        session = self.sessions.get(key)
        if session is None:
            raise KafkaError(ErrorCode.SHARE_SESSION_NOT_FOUND, f"No share session for member {member_id}.")
        if epoch == FINAL_EPOCH:
            del self.sessions[key]
            return session
        if epoch != session.epoch:
            raise KafkaError(ErrorCode.INVALID_SHARE_SESSION_EPOCH,
                             f"Share session epoch {epoch} is not the expected {session.epoch}.")
        session.epoch = 1 if session.epoch == MAX_EPOCH else session.epoch + 1
        session.partitions.difference_update(forget)
        session.partitions.update(add)
        return session

    def close_member(self, group_id: str, member_id: str) -> ShareSession | None:
        """The member left its group: its session goes (its acquired records are released by the caller)."""
        return self.sessions.pop((group_id, member_id), None)
