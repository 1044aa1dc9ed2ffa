"""Share sessions (KIP-932): what a member's ShareFetch/ShareAcknowledge requests to one node have in common, as Kafka
4.3's ShareSessionCache keeps them.

Keyed by (group id, member id): a ShareFetch with epoch 0 opens a session (dropping the member's old one, whose
records stay acquired), each later request must carry the next epoch (INVALID_SHARE_SESSION_EPOCH otherwise,
SHARE_SESSION_NOT_FOUND without a session), and epoch -1 is the last request, after which the session is released
(its member's acquired records with it). A session remembers the share-partitions the member fetches from, in order,
so a later request names only what it adds or forgets; a partition added later is answered once even without
records. A session belongs to the connection that opened it: when that connection closes, the session goes and its
member's records are released, and a group left without sessions on the node has its share-partitions unloaded. A
member leaving its group does not end its sessions. A node holds at most ``group.share.max.share.sessions``.
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
SessionKey = tuple[str, str]


@dataclass
class ShareSession:
    group_id: str
    member_id: str
    conn_id: int | None = None
    epoch: int = 1                                   # the epoch the next request must carry
    # The session's partitions, in order; True while a partition added by a later request has not been answered.
    partitions: dict[PartitionKey, bool] = field(default_factory=dict)

    @property
    def key(self) -> SessionKey:
        return self.group_id, self.member_id


def next_epoch(epoch: int) -> int:
    return 1 if epoch == MAX_EPOCH else epoch + 1


class ShareSessions:
    """The share sessions of one node."""

    def __init__(self, max_sessions: Callable[[], int]):
        self.sessions: dict[SessionKey, ShareSession] = {}
        self.by_conn: dict[int, tuple[SessionKey, bool]] = {}       # connection -> (session, stale)
        self.max_sessions = max_sessions

    def get(self, group_id: str, member_id: str) -> ShareSession | None:
        return self.sessions.get((group_id, member_id))

    def open(self, group_id: str, member_id: str, partitions: Iterable[PartitionKey],
             conn_id: int | None) -> ShareSession:
        """Epoch 0: a new session in place of the member's old one (SHARE_SESSION_LIMIT_REACHED when full)."""
        self.remove(group_id, member_id)
        if len(self.sessions) >= self.max_sessions():
            raise KafkaError(ErrorCode.SHARE_SESSION_LIMIT_REACHED, None)
        session = self.sessions[(group_id, member_id)] = ShareSession(group_id, member_id, conn_id)
        session.partitions.update((p, False) for p in partitions)
        if conn_id is not None:
            self.by_conn[conn_id] = (session.key, False)
        return session

    def require(self, group_id: str, member_id: str, epoch: int) -> ShareSession:
        """The session a request with a non-zero ``epoch`` works in; -1 does not check the epoch."""
        session = self.sessions.get((group_id, member_id))
        if session is None:
            raise KafkaError(ErrorCode.SHARE_SESSION_NOT_FOUND, None)
        if epoch != FINAL_EPOCH and epoch != session.epoch:
            raise KafkaError(ErrorCode.INVALID_SHARE_SESSION_EPOCH, None)
        return session

    @staticmethod
    def update(session: ShareSession, add: Iterable[PartitionKey], forget: Iterable[PartitionKey]) -> None:
        """A later ShareFetch: partitions added (answered once), then forgotten; the epoch moves on."""
        for p in add:
            if p not in session.partitions:
                session.partitions[p] = True
        for p in forget:
            session.partitions.pop(p, None)
        session.epoch = next_epoch(session.epoch)

    def remove(self, group_id: str, member_id: str) -> ShareSession | None:
        session = self.sessions.pop((group_id, member_id), None)
        if session is not None and session.conn_id is not None and session.conn_id in self.by_conn:
            key, _ = self.by_conn[session.conn_id]
            if key == session.key:
                self.by_conn[session.conn_id] = (key, True)
        return session

    def disconnected(self, conn_id: int) -> tuple[SessionKey | None, str | None]:
        """A connection closed: (the key of the session it still held, to release; the group to check for
        emptiness)."""
        found = self.by_conn.pop(conn_id, None)
        if found is None:
            return None, None
        key, stale = found
        return (None if stale or key not in self.sessions else key), key[0]

    def members(self, group_id: str) -> int:
        return sum(1 for g, _ in self.sessions if g == group_id)
