"""Classic-protocol partition assignors, run by the group leader on every member's subscription.

They use Kafka's protocol names and reach the same kind of answer as the Java assignors, so a kafkamock consumer
can lead a group in which Java or librdkafka consumers take part (and follow one they lead):

- ``range``: per topic, members in order get consecutive partitions, the first ones one more.
- ``roundrobin``: all partitions in order dealt to the members that subscribe to each topic.
- ``cooperative-sticky``: balanced, keeps what members own, and never hands a partition straight from one member to
  another: a moving partition is only taken from its owner in this round and assigned in the next one (KIP-429).
"""

from __future__ import annotations

import struct
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kafkamock.client.types import TopicPartition

_GENERATION = struct.Struct(">i")


@dataclass
class MemberSubscription:
    member_id: str
    topics: list[str]
    owned: list[TopicPartition] = field(default_factory=list)
    generation: int = -1
    instance_id: str | None = None
    rack: str | None = None

    @property
    def sort_key(self) -> str:
        return self.instance_id or self.member_id   # Java orders members by group.instance.id, else member id


Assignment = dict[str, list[TopicPartition]]


def range_assign(members: Sequence[MemberSubscription], partitions: Mapping[str, int]) -> Assignment:
    out: Assignment = {m.member_id: [] for m in members}
    by_topic: dict[str, list[MemberSubscription]] = defaultdict(list)
    for m in members:
        for t in set(m.topics):
            by_topic[t].append(m)
    for topic in sorted(by_topic):
        count = partitions.get(topic, 0)
        subscribers = sorted(by_topic[topic], key=lambda m: m.sort_key)
        if not count:
            continue
        each, extra = divmod(count, len(subscribers))
        start = 0
        for i, m in enumerate(subscribers):
            n = each + (1 if i < extra else 0)
            out[m.member_id].extend(TopicPartition(topic, p) for p in range(start, start + n))
            start += n
    return out


def roundrobin_assign(members: Sequence[MemberSubscription], partitions: Mapping[str, int]) -> Assignment:
    out: Assignment = {m.member_id: [] for m in members}
    ordered = sorted(members, key=lambda m: m.sort_key)
    turn = 0
    for topic in sorted({t for m in members for t in m.topics}):
        for p in range(partitions.get(topic, 0)):
            for _ in range(len(ordered)):
                m = ordered[turn % len(ordered)]
                turn += 1
                if topic in m.topics:
                    out[m.member_id].append(TopicPartition(topic, p))
                    break
    return out


def sticky_assign(members: Sequence[MemberSubscription], partitions: Mapping[str, int]) -> Assignment:
    """A balanced assignment that keeps each member's owned partitions where balance allows. When two members
    claim a partition, the claim of the highest generation wins (the other is stale, as in Java's assignor)."""
    ordered = sorted(members, key=lambda m: m.sort_key)
    subscribed = {m.member_id: set(m.topics) for m in ordered}
    all_parts = [TopicPartition(t, p) for t in sorted({t for m in ordered for t in m.topics})
                 for p in range(partitions.get(t, 0))]
    valid = set(all_parts)
    claims: dict[TopicPartition, tuple[int, str]] = {}
    for m in ordered:
        for tp in m.owned:
            if tp in valid and tp.topic in subscribed[m.member_id]:
                if tp not in claims or m.generation > claims[tp][0]:
                    claims[tp] = (m.generation, m.member_id)
    out: Assignment = {m.member_id: [] for m in ordered}
    if not ordered:
        return out
    total = len(all_parts)
    floor, ceil_slots = divmod(total, len(ordered))     # ceil_slots members may hold floor + 1
    # keep owned partitions, up to floor (+1 for as many members as the remainder allows)
    unassigned: list[TopicPartition] = []
    kept: dict[str, list[TopicPartition]] = defaultdict(list)
    for tp, (_, owner) in sorted(claims.items()):
        kept[owner].append(tp)
    for m in ordered:
        mine = kept.get(m.member_id, [])
        limit = floor
        if len(mine) > floor and ceil_slots:
            limit = floor + 1
            ceil_slots -= 1
        out[m.member_id] = mine[:limit]
        unassigned.extend(mine[limit:])
    unassigned.extend(tp for tp in all_parts if tp not in claims)
    for tp in sorted(unassigned):
        candidates = [m for m in ordered if tp.topic in subscribed[m.member_id]]
        if not candidates:
            continue
        target = min(candidates, key=lambda m: (len(out[m.member_id]), m.sort_key))
        out[target.member_id].append(tp)
    _rebalance(out, ordered, subscribed)
    return out


def _rebalance(out: Assignment, ordered: Sequence[MemberSubscription], subscribed: Mapping[str, set[str]]) -> None:
    """Move partitions from the fullest to the emptiest member that can take them until no move helps (members
    with different subscriptions cannot always be even)."""
    while True:
        moved = False
        for donor in sorted(ordered, key=lambda m: -len(out[m.member_id])):
            for taker in sorted(ordered, key=lambda m: len(out[m.member_id])):
                if len(out[donor.member_id]) - len(out[taker.member_id]) <= 1:
                    break
                movable = [tp for tp in out[donor.member_id] if tp.topic in subscribed[taker.member_id]]
                if movable:
                    tp = movable[-1]
                    out[donor.member_id].remove(tp)
                    out[taker.member_id].append(tp)
                    moved = True
                    break
            if moved:
                break
        if not moved:
            return


def cooperative_sticky_assign(members: Sequence[MemberSubscription], partitions: Mapping[str, int]) -> Assignment:
    """The sticky assignment, minus the partitions that would move between members this round (KIP-429): their
    owner gives them up now, and the rebalance that follows the revocation assigns them."""
    target = sticky_assign(members, partitions)
    owner: dict[TopicPartition, str] = {}
    for m in members:
        for tp in m.owned:
            owner.setdefault(tp, m.member_id)
    return {mid: [tp for tp in tps if owner.get(tp, mid) == mid] for mid, tps in target.items()}


ASSIGNORS = {"range": range_assign, "roundrobin": roundrobin_assign, "cooperative-sticky": cooperative_sticky_assign}
COOPERATIVE = frozenset({"cooperative-sticky"})
JAVA_NAMES = {  # the Java class names users put in partition.assignment.strategy
    "org.apache.kafka.clients.consumer.RangeAssignor": "range",
    "org.apache.kafka.clients.consumer.RoundRobinAssignor": "roundrobin",
    "org.apache.kafka.clients.consumer.CooperativeStickyAssignor": "cooperative-sticky",
}


def assignor_names(configured: Sequence[str]) -> list[str]:
    names = [JAVA_NAMES.get(n, n) for n in configured]
    unknown = [n for n in names if n not in ASSIGNORS]
    if unknown or not names:
        raise ValueError(f"partition.assignment.strategy: unknown assignor(s) {unknown}; "
                         f"known: {', '.join(ASSIGNORS)}")
    return names


def user_data(name: str, generation: int) -> bytes | None:
    """Java's CooperativeStickyAssignor puts the generation of the owned partitions in its user data."""
    return _GENERATION.pack(generation) if name == "cooperative-sticky" else None


def generation_of(name: str, data: bytes | None, subscription_generation: int) -> int:
    if subscription_generation >= 0:
        return subscription_generation
    if name == "cooperative-sticky" and data and len(data) >= 4:
        generation: int = _GENERATION.unpack_from(data)[0]
        return generation
    return -1
