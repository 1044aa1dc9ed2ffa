"""KIP-848's server-side assignors: ``uniform`` (Kafka's default) and ``range``.

An assignor maps each member to the partitions it should own (the group's *target assignment*); the
reconciliation in ``reconciliation.py`` then moves every member there, revoking before it assigns. Both are
deterministic (members and partitions are visited in sorted order), so a replay or a second run gives the same
answer, and both only hand a member partitions of topics it subscribes to.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterable, Mapping
from typing import Protocol

from kafkamock.broker.java_hash_order import java_hash_order, java_string_hash, java_uuid_hash

# member id -> topic id -> partitions
Assignment = dict[str, dict[uuid.UUID, frozenset[int]]]
Subscriptions = Mapping[str, frozenset[uuid.UUID]]        # member id -> the topic ids it subscribes to
Current = Mapping[str, Mapping[uuid.UUID, frozenset[int]]]  # member id -> topic id -> the partitions it has
TopicPartition = tuple[uuid.UUID, int]


class Assignor(Protocol):
    name: str

    def assign(self, subscriptions: Subscriptions, partitions: Mapping[uuid.UUID, int], current: Current,
               instances: Mapping[str, str | None] | None = None) -> Assignment: ...


class UniformAssignor:
    """Every partition of a subscribed topic to one subscriber, balanced to within one partition among the members
    that could take it, and sticky. When every member subscribes to the same topics this is Kafka's
    UniformHomogeneousAssignmentBuilder step for step (members in its HashMap's order, each keeping up to its
    quota of its current partitions, the rest handed out in order); otherwise one greedy pass plus a balancing
    pass (Kafka's heterogeneous builder reaches the same balance by another route)."""

    name = "uniform"

    def assign(self, subscriptions: Subscriptions, partitions: Mapping[uuid.UUID, int], current: Current,
               instances: Mapping[str, str | None] | None = None) -> Assignment:
        members = list(subscriptions)
        if members and len({subscriptions[m] for m in members}) == 1:
            return self._homogeneous(members, subscriptions[members[0]], partitions, current)
        return self._heterogeneous(subscriptions, partitions, current)

    def _homogeneous(self, members: list[str], subscribed: frozenset[uuid.UUID], partitions: Mapping[uuid.UUID, int],
                     current: Current) -> Assignment:
        """Kafka's UniformHomogeneousAssignmentBuilder."""
        topics = [t for t in java_hash_order(subscribed, java_uuid_hash) if t in partitions]
        if not topics:
            return {m: {} for m in members}
        order = java_hash_order(members, java_string_hash)
        taken = {(t, p) for m in members for t, ps in (current.get(m) or {}).items() for p in ps}
        unassigned = [(t, p) for t in topics for p in range(partitions[t]) if (t, p) not in taken]
        total = sum(partitions[t] for t in topics)
        minimum, extra = divmod(total, len(order))
        owned: dict[str, set[tuple[uuid.UUID, int]]] = {}
        unfilled: list[tuple[str, int]] = []
        for index, member in enumerate(order):
            quota = minimum
            with_extra = False
            if extra > 0:
                quota += 1
                with_extra = True
            kept: set[tuple[uuid.UUID, int]] = set()
            for topic_id, held in java_ordered_items(current.get(member) or {}):
                if topic_id not in topics:
                    continue
                if len(held) <= quota:
                    kept.update((topic_id, p) for p in held)
                    quota -= len(held)
                    continue
                for p in sorted(held):
                    if quota > 0:
                        kept.add((topic_id, p))
                        quota -= 1
                    else:
                        unassigned.append((topic_id, p))
            if quota > 0 and with_extra and len(order) - index > extra:
                quota -= 1
                with_extra = False
            if quota > 0:
                unfilled.append((member, quota))
            if with_extra:
                extra -= 1
            owned[member] = kept
        position = 0
        for member, quota in unfilled:
            for _ in range(quota):
                if position >= len(unassigned):
                    break
                owned[member].add(unassigned[position])
                position += 1
        return {m: _by_topic(owned[m]) for m in members}

    def _heterogeneous(self, subscriptions: Subscriptions, partitions: Mapping[uuid.UUID, int], current: Current
                       ) -> Assignment:
        members = sorted(subscriptions)
        owned: dict[str, set[tuple[uuid.UUID, int]]] = {m: set() for m in members}
        taken: set[tuple[uuid.UUID, int]] = set()
        for member in members:                                # stickiness: keep what is still valid
            for topic_id, kept in (current.get(member) or {}).items():
                if topic_id not in subscriptions[member] or topic_id not in partitions:
                    continue
                for p in kept:
                    if p < partitions[topic_id] and (topic_id, p) not in taken:
                        owned[member].add((topic_id, p))
                        taken.add((topic_id, p))
        subscribers = {t: [m for m in members if t in subscriptions[m]] for t in partitions}
        for topic_id in sorted(partitions, key=str):          # the rest to the least loaded subscriber
            candidates = subscribers[topic_id]
            if not candidates:
                continue
            for p in range(partitions[topic_id]):
                if (topic_id, p) in taken:
                    continue
                target = min(candidates, key=lambda m: (len(owned[m]), m))
                owned[target].add((topic_id, p))
                taken.add((topic_id, p))
        moved = True
        while moved:                                          # balance: move from the fullest while it helps
            moved = False
            for giver in sorted(members, key=lambda m: (-len(owned[m]), m)):
                for topic_id, p in sorted(owned[giver], key=lambda tp: (str(tp[0]), -tp[1])):
                    taker = min(subscribers[topic_id], key=lambda m: (len(owned[m]), m))
                    if len(owned[taker]) < len(owned[giver]) - 1:
                        owned[giver].discard((topic_id, p))
                        owned[taker].add((topic_id, p))
                        moved = True
                        break
                if moved:
                    break
        return {m: _by_topic(owned[m]) for m in members}


def java_ordered_items(assignment: Mapping[uuid.UUID, frozenset[int]]) -> list[tuple[uuid.UUID, frozenset[int]]]:
    return [(t, assignment[t]) for t in java_hash_order(assignment, java_uuid_hash)]


class RangeAssignor:
    """Kafka's RangeAssignor: members sorted (static members first, by instance id, then the rest by member id);
    per topic, its subscribers in that order each take a contiguous range: ``n // k`` partitions, the first
    ``n % k`` one more (the classic RangeAssignor's rule, so co-partitioned topics land together)."""

    name = "range"

    def assign(self, subscriptions: Subscriptions, partitions: Mapping[uuid.UUID, int], current: Current,
               instances: Mapping[str, str | None] | None = None) -> Assignment:
        instances = instances or {}
        members = sorted(subscriptions, key=lambda m: (instances.get(m) is None, instances.get(m) or "", m))
        owned: dict[str, set[tuple[uuid.UUID, int]]] = {m: set() for m in members}
        for topic_id, count in partitions.items():
            subscribers = [m for m in members if topic_id in subscriptions[m]]
            if not subscribers:
                continue
            share, extra = divmod(count, len(subscribers))
            start = 0
            for index, member in enumerate(subscribers):
                size = share + (1 if index < extra else 0)
                owned[member].update((topic_id, p) for p in range(start, start + size))
                start += size
        return {m: _by_topic(owned[m]) for m in members}


class SimpleShareAssignor:
    """Share groups' ``simple`` assignor (KIP-932), Kafka 4.3's SimpleAssignor: members need not own partitions
    alone. With one subscription for all (homogeneous), each partition goes to ``ceil(members / partitions)``
    members and member i to its share of those assignments (SimpleHomogeneousAssignmentBuilder's desired counts),
    keeping what members have where that stays within both; with different subscriptions the same is done topic by
    topic among its subscribers. Kafka walks hash maps keyed by member ids and random topic ids; here the walk is in
    sorted order, so which member gets which partition may differ, not how many each gets.

    ``partitions`` maps a topic id to its assignable partitions (a count, or the partitions themselves)."""

    name = "simple"

    def assign(self, subscriptions: Subscriptions, partitions: Mapping[uuid.UUID, int | Iterable[int]],
               current: Mapping[str, Mapping[uuid.UUID, Iterable[int]]]) -> Assignment:
        members = sorted(subscriptions)
        assignable = {t: sorted(range(ps) if isinstance(ps, int) else ps) for t, ps in partitions.items()}
        if not members:
            return {}
        topic_sets = {subscriptions[m] for m in members}
        if len(topic_sets) == 1:
            topics = sorted(next(iter(topic_sets)) & assignable.keys(), key=str)
            owned = _share_homogeneous(members, [(t, p) for t in topics for p in assignable[t]], current)
        else:
            owned = {m: set() for m in members}
            for topic in sorted(assignable, key=str):
                subscribers = [m for m in members if topic in subscriptions[m]]
                if subscribers:
                    part = _share_homogeneous(subscribers, [(topic, p) for p in assignable[topic]],
                                              {m: {topic: (current.get(m) or {}).get(topic, ())} for m in subscribers})
                    for m, tps in part.items():
                        owned[m] |= tps
        return {m: _by_topic(owned[m]) for m in members}


def _share_homogeneous(members: list[str], targets: list[TopicPartition],
                       current: Mapping[str, Mapping[uuid.UUID, Iterable[int]]]) -> dict[str, set[TopicPartition]]:
    """SimpleHomogeneousAssignmentBuilder over ``targets`` (the assignable partitions, in order)."""
    owned: dict[str, set[tuple[uuid.UUID, int]]] = {m: set() for m in members}
    if not targets:
        return owned
    n, p = len(members), len(targets)
    sharing = (n + p - 1) // p
    precise = sharing * p / n
    desired = {m: math.ceil(precise * (i + 1)) - math.ceil(precise * i) for i, m in enumerate(members)}
    wanted = set(targets)
    by_partition: dict[tuple[uuid.UUID, int], list[str]] = {tp: [] for tp in targets}
    unfilled: list[str] = []
    for m in members:                                   # keep what is still wanted, up to the member's count
        kept = sorted((tp for tp in ((t, q) for t, qs in (current.get(m) or {}).items() for q in qs) if tp in wanted),
                      key=lambda tp: (str(tp[0]), tp[1]))[:desired[m]]
        for tp in kept:
            owned[m].add(tp)
            by_partition[tp].append(m)
    for tp in targets:                                  # no partition shared beyond the desired sharing
        while len(by_partition[tp]) > sharing:
            owned[by_partition[tp].pop()].discard(tp)
    unfilled = [m for m in members if len(owned[m]) < desired[m]]
    cursor = 0
    for tp in targets:                                  # the rest, round the unfilled members
        progressed = True
        while len(by_partition[tp]) < sharing and unfilled and progressed:
            progressed = False
            for _ in range(len(unfilled)):
                m = unfilled[cursor % len(unfilled)]
                cursor += 1
                if m in by_partition[tp]:
                    continue
                owned[m].add(tp)
                by_partition[tp].append(m)
                progressed = True
                if len(owned[m]) >= desired[m]:
                    unfilled.remove(m)
                break
        if not unfilled:
            break
    return owned


def _by_topic(pairs: set[tuple[uuid.UUID, int]]) -> dict[uuid.UUID, frozenset[int]]:
    topics: dict[uuid.UUID, set[int]] = {}
    for topic_id, p in pairs:
        topics.setdefault(topic_id, set()).add(p)
    return {t: frozenset(ps) for t, ps in topics.items()}


ASSIGNORS: dict[str, Assignor] = {a.name: a for a in (UniformAssignor(), RangeAssignor())}
SHARE_ASSIGNOR = SimpleShareAssignor()
