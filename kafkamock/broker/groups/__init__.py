"""Consumer groups: the classic protocol, KIP-848's consumer protocol, committed offsets and KIP-211 expiry.

``coordinator.GroupCoordinator`` is what the handlers call; ``classic.py`` and ``consumer.py`` hold each group
kind's data and state table; ``offsets.py`` the committed offsets; ``records.py`` their durable form in
``__consumer_offsets``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from kafkamock.broker.groups.coordinator import Answer, GroupCoordinator
from kafkamock.broker.groups.pending import Pending
from kafkamock.broker.timers import NEVER
from kafkamock.codec.message import Struct

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster
    from kafkamock.broker.outcome import Waiter

__all__ = ["GroupCoordinator", "Pending", "reply"]

Response = TypeVar("Response", bound=Struct)


def reply(cluster: Cluster, result: Answer | Pending, shape: Callable[[Answer], Response]) -> Response | Waiter:
    """A handler's outcome for a coordinator answer: the answer shaped for the request's version, or, for a
    ``Pending`` (a JoinGroup or SyncGroup waiting for its group's round), a wait that answers when it resolves.
    The round's own timers (rebalance and session timeouts) bound the wait, so the waiter needs no deadline."""
    if not isinstance(result, Pending):
        return shape(result)
    if result.value is not None:            # resolved already
        return shape(result.value)
    pending = result

    def answer(final: bool) -> Response | None:
        value = pending.value
        return shape(value) if value is not None else None

    return cluster.wait((pending,), NEVER, answer)
