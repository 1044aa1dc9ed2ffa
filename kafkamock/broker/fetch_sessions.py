"""KIP-227 fetch sessions: what each emulated broker remembers between a client's incremental fetches.

A session holds the partitions a client fetches and what it was last told about each, so a follow-up request
names only what changed and the response lists only partitions with something new. Each node has its own cache,
bounded as Kafka's is (the oldest session is evicted first).
"""

from __future__ import annotations

import itertools
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Protocol

MAX_SESSIONS = 1000


class SlotCount(Protocol):
    """How many sessions the cache may hold now (``max.incremental.fetch.session.cache.slots``, read at each new
    session). A Protocol rather than ``Callable[[], int]``, which mypy cannot match a lambda binding a loop variable
    in a default argument against (python/mypy#15459), as the broker's is."""

    def __call__(self) -> int: ...


@dataclass(slots=True)
class PartitionFetch:
    """One partition in a fetch: what the client asked for, and what it was last told (for incremental replies)."""

    topic: str
    topic_id: uuid.UUID
    partition: int
    fetch_offset: int
    partition_max_bytes: int
    current_leader_epoch: int = -1
    log_start_offset: int = -1
    last_fetched_epoch: int = -1       # v12+: the epoch of the last record the client has (-1: not given)
    sent_high_watermark: int | None = None
    sent_log_start: int | None = None


@dataclass
class FetchSession:
    id: int
    epoch: int
    partitions: OrderedDict[tuple, PartitionFetch] = field(default_factory=OrderedDict)


class FetchSessions:
    """One node's fetch-session cache (bounded; the oldest session is evicted first). Nodes number their sessions
    from different starts, so a session id sent to the wrong node is never mistaken for one of its own."""

    def __init__(self, first_id: int = 1, max_sessions: SlotCount = lambda: MAX_SESSIONS) -> None:
        self.sessions: OrderedDict[int, FetchSession] = OrderedDict()
        self._ids = itertools.count(first_id)
        self._max_sessions = max_sessions      # max.incremental.fetch.session.cache.slots

    def new(self) -> FetchSession | None:
        """A new session, evicting the oldest when the cache is full; None when it holds no session at all
        (a cache of 0 slots: Kafka then answers a sessionless full fetch)."""
        limit = self._max_sessions()
        if limit <= 0:
            return None
        while len(self.sessions) >= limit:
            self.sessions.popitem(last=False)
        session = FetchSession(next(self._ids), 1)
        self.sessions[session.id] = session
        return session


