"""A classic group (JoinGroup, SyncGroup, Heartbeat, LeaveGroup): members, generation, state.

Its states and the moves between them are one table, ``TRANSITIONS`` (h2's style: a move the table does not list
is a bug, raised at once). What triggers each move lives in ``coordinator.py``; this module only keeps the data a
group carries and the rules that read it (protocol choice, who has rejoined, which topics the members subscribe
to for KIP-211).
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from kafkamock.broker.groups.offsets import ExpireBy
from kafkamock.broker.groups.pending import Pending
from kafkamock.state_machine import move


class ClassicState(enum.Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


class Event(enum.Enum):
    REBALANCE = "a member joins, leaves, changes its protocols or times out"
    JOINED = "the join phase ends with members"
    JOINED_EMPTY = "the join phase ends with no member left"
    ASSIGNED = "the leader's SyncGroup brings the assignment"
    REMOVED = "the group is deleted or its offsets expire"


S, E = ClassicState, Event
# (state, event) -> next state: Kafka's ClassicGroupState.validPreviousStates written the other way round.
TRANSITIONS: dict[tuple[ClassicState, Event], ClassicState] = {
    (S.EMPTY, E.REBALANCE): S.PREPARING_REBALANCE,
    (S.STABLE, E.REBALANCE): S.PREPARING_REBALANCE,
    (S.COMPLETING_REBALANCE, E.REBALANCE): S.PREPARING_REBALANCE,
    (S.PREPARING_REBALANCE, E.JOINED): S.COMPLETING_REBALANCE,
    (S.PREPARING_REBALANCE, E.JOINED_EMPTY): S.EMPTY,
    (S.COMPLETING_REBALANCE, E.ASSIGNED): S.STABLE,
    (S.EMPTY, E.REMOVED): S.DEAD,
    (S.STABLE, E.REMOVED): S.DEAD,
    (S.PREPARING_REBALANCE, E.REMOVED): S.DEAD,
    (S.COMPLETING_REBALANCE, E.REMOVED): S.DEAD,
}


@dataclass(eq=False)
class ClassicMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]          # (name, metadata) in the member's order of preference
    assignment: bytes = b""
    awaiting_join: Pending | None = None        # its JoinGroup, parked until the join phase ends
    awaiting_sync: Pending | None = None        # its SyncGroup, parked until the leader's arrives
    is_new: bool = False                        # joined in the round under way (Kafka's isNew): may expire waiting

    def heartbeat_satisfied(self) -> bool:
        """Kafka's hasSatisfiedHeartbeat: a member waiting for its round counts as alive, unless it is new (a new
        member's join times out instead: its client may have gone while the request was parked)."""
        return not self.is_new and (self.awaiting_join is not None or self.awaiting_sync is not None)

    def metadata(self, protocol: str | None) -> bytes:
        for name, metadata in self.protocols:
            if name == protocol:
                return metadata
        return b""

    def matches(self, protocols: list[tuple[str, bytes]]) -> bool:
        return self.protocols == protocols

    def vote(self, candidates: set[str]) -> str:
        """Its most preferred protocol among those every member supports."""
        return next(name for name, _ in self.protocols if name in candidates)


@dataclass(eq=False)
class ClassicGroup:
    group_id: str
    state: ClassicState = ClassicState.EMPTY
    state_timestamp_ms: int = -1              # when it last changed state (KIP-211's current_state_timestamp)
    generation: int = 0
    protocol_type: str | None = None
    protocol: str | None = None
    leader_id: str | None = None
    members: dict[str, ClassicMember] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)   # group.instance.id -> member id
    pending_members: set[str] = field(default_factory=set)         # KIP-394: ids handed out, not joined yet
    pending_sync: set[str] = field(default_factory=set)            # members that have not synced this generation
    subscribed_topics: set[str] | None = None                      # None: unknown (not a consumer protocol)
    new_member_added: bool = False
    initial_delay_left: int | None = None                          # set while group.initial.rebalance.delay runs

    kind: ClassVar[Literal["classic"]] = "classic"

    def transition(self, event: Event, now_ms: int) -> None:
        self.state = move(TRANSITIONS, self.state, event, f"group {self.group_id}")
        self.state_timestamp_ms = now_ms

    def is_empty(self) -> bool:
        return self.state is ClassicState.EMPTY

    @property
    def state_name(self) -> str:
        return self.state.value

    def has_member(self, member_id: str) -> bool:
        return member_id in self.members

    def add_member(self, member: ClassicMember) -> None:
        if not self.members:
            self.protocol_type = member.protocol_type
        self.members[member.member_id] = member
        if member.group_instance_id is not None:
            self.static_members[member.group_instance_id] = member.member_id
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.pending_members.discard(member.member_id)

    def remove_member(self, member_id: str) -> ClassicMember | None:
        member = self.members.pop(member_id, None)
        if member is None:
            return None
        if member.group_instance_id is not None and self.static_members.get(member.group_instance_id) == member_id:
            del self.static_members[member.group_instance_id]
        self.pending_sync.discard(member_id)
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)
        return member

    def replace_static_member(self, instance_id: str, old_id: str, new_id: str) -> ClassicMember:
        member = self.members.pop(old_id)
        member.member_id = new_id
        self.members[new_id] = member
        self.static_members[instance_id] = new_id
        if self.leader_id == old_id:
            self.leader_id = new_id
        return member            # a pending sync stays under the old id, as in Kafka: its expiry still rebalances

    def static_member_id(self, instance_id: str | None) -> str | None:
        return self.static_members.get(instance_id) if instance_id is not None else None

    # -- protocols -----------------------------------------------------------------------------------------------

    def candidate_protocols(self) -> set[str]:
        sets = [{name for name, _ in m.protocols} for m in self.members.values()]
        return set.intersection(*sets) if sets else set()

    def supports(self, protocol_type: str, protocols: list[tuple[str, bytes]]) -> bool:
        """Whether a member with these protocols may join (Kafka's supportsProtocols)."""
        names = {name for name, _ in protocols}
        if not self.members:
            return bool(protocol_type) and bool(names)
        return protocol_type == self.protocol_type and bool(names & self.candidate_protocols())

    def select_protocol(self) -> str:
        candidates = self.candidate_protocols()
        votes = Counter(m.vote(candidates) for m in self.members.values())
        return max(votes, key=lambda name: votes[name])   # Counter keeps first-seen order on ties

    def all_joined(self) -> bool:
        return not self.pending_members and all(m.awaiting_join is not None for m in self.members.values())

    def not_rejoined(self) -> list[ClassicMember]:
        return [m for m in self.members.values() if m.awaiting_join is None]

    def max_rebalance_timeout(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    # -- KIP-211: what the members subscribe to ------------------------------------------------------------------

    def compute_subscribed_topics(self, parse_subscription: Callable[[bytes], set[str] | None]) -> None:
        """The topics the members subscribe to, read from their ConsumerProtocolSubscription (Kafka's
        computeSubscribedTopics): None (unknown) unless the group runs the consumer protocol and every
        subscription reads; the empty set for a consumer group with no member."""
        self.subscribed_topics = None
        if self.protocol_type != "consumer":
            return
        if not self.members:
            self.subscribed_topics = set()
            return
        if self.protocol is None:
            return
        topics: set[str] = set()
        for member in self.members.values():
            parsed = parse_subscription(member.metadata(self.protocol))
            if parsed is None:
                return
            topics |= parsed
        self.subscribed_topics = topics

    def is_subscribed_to(self, topic: str) -> bool:
        """Kafka's isSubscribedToTopic: only a known subscription counts."""
        return self.subscribed_topics is not None and topic in self.subscribed_topics

    def offsets_expire_by(self) -> ExpireBy | None:
        """KIP-211: which timestamp an offset's retention counts from, or None when none of them may expire
        (Kafka's ClassicGroup.offsetExpirationCondition). Empty group with a protocol type: the time it became
        Empty; Stable consumer-protocol group with known subscriptions: each offset's commit time (only the
        topics no member subscribes to are looked at); standalone (no protocol type): each commit time."""
        if self.protocol_type:
            if self.state is ClassicState.EMPTY:
                stamp = self.state_timestamp_ms
                return (lambda offset: stamp) if stamp >= 0 else (lambda offset: offset.commit_timestamp_ms)
            if self.uses_consumer_protocol() and self.subscribed_topics is not None \
                    and self.state is ClassicState.STABLE:
                return lambda offset: offset.commit_timestamp_ms
            return None
        return lambda offset: offset.commit_timestamp_ms

    def uses_consumer_protocol(self) -> bool:
        return self.protocol_type == "consumer"
