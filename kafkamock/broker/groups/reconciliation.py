"""KIP-848 reconciliation: how one member moves from what it owns to its target assignment.

Kafka 4.3.1's CurrentAssignmentBuilder, as a table. A member is in one of three states; on each heartbeat the
state's step computes the member's next (epoch, state, assigned, pending revocation), or leaves it as it is:

* ``STABLE``: at its epoch; a newer target epoch starts the next step, a changed subscription drops the
  partitions of topics it no longer subscribes to.
* ``UNREVOKED_PARTITIONS``: it must give partitions up first. It keeps its epoch and only the partitions it keeps,
  and waits until its heartbeat no longer lists the revoked ones (or its rebalance timeout fences it).
* ``UNRELEASED_PARTITIONS``: it is at the new epoch but some partitions of its target are still owned by other
  members; each heartbeat hands over those that became free.

Revocation always comes before assignment: a member never gets a partition another member still owns. Each
assigned partition keeps the epoch it was assigned at (KIP-1251): an offset commit with an older member epoch is
accepted for the partitions assigned at or before it.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kafkamock.broker.groups.consumer import ConsumerMember

Partitions = dict[uuid.UUID, frozenset[int]]
Epochs = dict[uuid.UUID, dict[int, int]]          # topic id -> partition -> the epoch it was assigned at


class MemberState(enum.IntEnum):
    """Kafka's MemberState, with its record values (ConsumerGroupCurrentMemberAssignmentValue.State)."""
    STABLE = 0
    UNREVOKED_PARTITIONS = 1
    UNRELEASED_PARTITIONS = 2


@dataclass(frozen=True)
class Reconciled:
    epoch: int
    previous_epoch: int
    state: MemberState
    assigned: Epochs
    pending_revocation: Epochs


def plain(epochs: Mapping[uuid.UUID, Mapping[int, int]]) -> Partitions:
    """The partitions of an epochs map (topics with none left out)."""
    return {t: frozenset(ps) for t, ps in epochs.items() if ps}


def _owns_any(owned: Partitions | None, partitions: Mapping[uuid.UUID, Mapping[int, int]]) -> bool:
    """Kafka's ownsRevokedPartitions: whether the member still reports any of ``partitions`` (an unknown report
    counts as yes)."""
    if owned is None:
        return True
    return any(p in partitions.get(t, {}) for t, ps in owned.items() for p in ps)


@dataclass
class Step:
    """One reconciliation: the member as it is, and what the heartbeat and the group say."""
    epoch: int
    state: MemberState
    assigned: Epochs
    pending_revocation: Epochs
    target_epoch: int
    target: Mapping[uuid.UUID, frozenset[int]]
    owned: Partitions | None
    subscribed: frozenset[uuid.UUID]
    subscription_changed: bool
    is_taken: Callable[[uuid.UUID, int], bool]       # owned (assigned or revoking) by any member

    def moved(self, epoch: int, state: MemberState, assigned: Epochs, pending: Epochs) -> Reconciled:
        return Reconciled(epoch, self.epoch, state, assigned, pending)   # Kafka's updateMemberEpoch

    def next_assignment(self) -> Reconciled:
        """Kafka's computeNextAssignment."""
        unreleased = False
        assigned: Epochs = {}
        revoke: Epochs = {}
        to_assign: dict[uuid.UUID, set[int]] = {}
        for topic_id in set(self.target) | set(self.assigned):
            wanted = self.target.get(topic_id, frozenset()) if topic_id in self.subscribed else frozenset()
            current = self.assigned.get(topic_id, {})
            kept = {p: e for p, e in current.items() if p in wanted}
            gone = {p: e for p, e in current.items() if p not in wanted}
            mine_revoking = self.pending_revocation.get(topic_id, {})
            pending = set(wanted) - set(kept)
            blocked = {p for p in pending if self.is_taken(topic_id, p) and p not in mine_revoking}
            unreleased = unreleased or bool(blocked)
            pending -= blocked
            if kept:
                assigned[topic_id] = kept
            if gone:
                revoke[topic_id] = gone
            if pending:
                to_assign[topic_id] = pending
        if revoke and _owns_any(self.owned, revoke):
            return self.moved(self.epoch, MemberState.UNREVOKED_PARTITIONS, assigned, revoke)
        for topic_id, partitions in to_assign.items():
            assigned.setdefault(topic_id, {}).update(dict.fromkeys(partitions, self.target_epoch))
        state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
        return self.moved(self.target_epoch, state, assigned, {})

    def current_assignment(self) -> Reconciled | None:
        """Kafka's updateCurrentAssignment: only drop the topics the member no longer subscribes to."""
        if not self.assigned:
            return None
        if not self.subscribed and not self.pending_revocation:
            assigned: Epochs = {}
            pending: Epochs = {t: dict(ps) for t, ps in self.assigned.items()}
        else:
            assigned = {t: dict(ps) for t, ps in self.assigned.items() if t in self.subscribed}
            if len(assigned) == len(self.assigned):
                return None
            pending = {t: dict(ps) for t, ps in self.pending_revocation.items()}
            for t, ps in self.assigned.items():
                if t not in self.subscribed:
                    pending.setdefault(t, {}).update(ps)
        if pending and _owns_any(self.owned, pending):
            return self.moved(self.epoch, MemberState.UNREVOKED_PARTITIONS, assigned, pending)
        return self.moved(self.epoch, self.state, assigned, self.pending_revocation)


def _from_stable(step: Step) -> Reconciled | None:
    if step.epoch != step.target_epoch:
        return step.next_assignment()
    if step.subscription_changed:
        return step.current_assignment()
    return None


def _from_unrevoked(step: Step) -> Reconciled | None:
    if _owns_any(step.owned, step.pending_revocation):
        return step.current_assignment() if step.subscription_changed else None
    return step.next_assignment()


def _from_unreleased(step: Step) -> Reconciled | None:
    return step.next_assignment()


STEPS: dict[MemberState, Callable[[Step], Reconciled | None]] = {
    MemberState.STABLE: _from_stable,
    MemberState.UNREVOKED_PARTITIONS: _from_unrevoked,
    MemberState.UNRELEASED_PARTITIONS: _from_unreleased,
}


def reconcile(member: ConsumerMember, target_epoch: int, target: Mapping[uuid.UUID, frozenset[int]],
              owned: Partitions | None, is_taken: Callable[[uuid.UUID, int], bool], subscribed: frozenset[uuid.UUID],
              subscription_changed: bool = False) -> Reconciled | None:
    """The member's next state, or None when it stays as it is (Kafka's maybeReconcile). ``owned`` is what its
    heartbeat reports (None when the heartbeat left it out); ``subscribed`` the topic ids its subscription names
    (a target partition of another topic is treated as not targeted)."""
    if not subscription_changed and member.state is MemberState.STABLE and member.member_epoch == target_epoch:
        return None
    step = Step(member.member_epoch, member.state, member.assigned, member.pending_revocation, target_epoch,
                dict(target), owned, subscribed, subscription_changed, is_taken)
    return STEPS[member.state](step)
