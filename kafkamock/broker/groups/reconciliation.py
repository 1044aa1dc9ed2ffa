"""KIP-848 reconciliation: how one member moves from what it owns to its target assignment.

Kafka's CurrentAssignmentBuilder, as a table. A member is in one of three states; on each heartbeat the state's
step computes the member's next (epoch, state, assigned, pending revocation):

* ``STABLE``: at the group's assignment epoch; a newer target starts the next step.
* ``UNREVOKED_PARTITIONS``: it must give partitions up first. It keeps its epoch and only the partitions it keeps,
  and waits until its heartbeat no longer lists the revoked ones (or its rebalance timeout fences it).
* ``UNRELEASED_PARTITIONS``: it is at the new epoch but some partitions of its target are still owned by members
  that have not revoked them; each heartbeat hands over those that became free.

Revocation always comes before assignment: a member never gets a partition another member still owns.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass

Partitions = dict[uuid.UUID, frozenset[int]]


class MemberState(enum.IntEnum):
    """Kafka's MemberState, with its record values (ConsumerGroupCurrentMemberAssignmentValue.State)."""
    UNRELEASED_PARTITIONS = 0
    UNREVOKED_PARTITIONS = 1
    STABLE = 2


@dataclass(frozen=True)
class Reconciled:
    epoch: int
    state: MemberState
    assigned: Partitions
    pending_revocation: Partitions


def _next_assignment(epoch: int, target_epoch: int, assigned: Partitions, target: Partitions,
                     owned: Partitions | None, is_free: Callable[[uuid.UUID, int], bool]) -> Reconciled:
    """Kafka's computeNextAssignment."""
    kept: Partitions = {}
    with_new: Partitions = {}
    revoke: Partitions = {}
    unreleased = False
    for topic_id in set(assigned) | set(target):
        current = assigned.get(topic_id, frozenset())
        wanted = target.get(topic_id, frozenset())
        stays = current & wanted
        free = {p for p in wanted - current if is_free(topic_id, p)}
        unreleased = unreleased or len(free) < len(wanted - current)
        if stays:
            kept[topic_id] = stays
        if stays or free:
            with_new[topic_id] = frozenset(stays | free)
        if current - wanted:
            revoke[topic_id] = frozenset(current - wanted)
    if revoke and _owns_any(owned, revoke):
        return Reconciled(epoch, MemberState.UNREVOKED_PARTITIONS, kept, revoke)
    if unreleased:
        return Reconciled(target_epoch, MemberState.UNRELEASED_PARTITIONS, with_new, {})
    return Reconciled(target_epoch, MemberState.STABLE, with_new, {})


def _owns_any(owned: Partitions | None, partitions: Partitions) -> bool:
    """Whether the member still reports any of ``partitions`` (an unknown report counts as yes)."""
    if owned is None:
        return True
    return any(owned.get(t, frozenset()) & ps for t, ps in partitions.items())


def _from_stable(member, target_epoch, target, owned, is_free):
    if member.member_epoch == target_epoch:
        return None
    return _next_assignment(member.member_epoch, target_epoch, member.assigned, target, owned, is_free)


def _from_unrevoked(member, target_epoch, target, owned, is_free):
    if owned is None or _owns_any(owned, member.pending_revocation):
        return None                                   # still owns what it must give up: wait
    return _next_assignment(min(member.member_epoch + 1, target_epoch), target_epoch, member.assigned, target,
                            owned, is_free)


def _from_unreleased(member, target_epoch, target, owned, is_free):
    return _next_assignment(member.member_epoch, target_epoch, member.assigned, target, owned, is_free)


STEPS: dict[MemberState, Callable] = {
    MemberState.STABLE: _from_stable,
    MemberState.UNREVOKED_PARTITIONS: _from_unrevoked,
    MemberState.UNRELEASED_PARTITIONS: _from_unreleased,
}


def reconcile(member, target_epoch: int, target: Mapping[uuid.UUID, frozenset[int]], owned: Partitions | None,
              is_free: Callable[[uuid.UUID, int], bool]) -> Reconciled | None:
    """The member's next state, or None when it stays as it is. ``owned`` is what its heartbeat reports (None when
    the heartbeat left it out); ``is_free`` says whether no other member owns a partition."""
    return STEPS[member.state](member, target_epoch, dict(target), owned, is_free)
