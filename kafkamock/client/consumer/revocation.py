"""KIP-983's delayed revocation: which owned partitions are revoked at the start of the next poll, which one poll
later, and which were lost during the last poll.

The state of each owned partition moves by a table. A revoke the group asks for is completed at the start of the
next poll, unless the application calls ``delay_revoke``, which pushes it one more poll away (and can be called again
then). A partition is lost when the consumer's membership ends before it was revoked (session timeout, fencing,
max.poll.interval.ms): it leaves every list at once and ``lost_partitions()`` names it until the next poll.
"""

from __future__ import annotations

from collections.abc import Iterable

from kafkamock.client.types import TopicPartition
from kafkamock.state_machine import move

OWNED, REVOKE_NEXT, REVOKE_THEREAFTER = "owned", "revoke-next", "revoke-thereafter"
REVOKED, LOST = "revoked", "lost"              # terminal: the partition is no longer the consumer's

# (state, event) -> next state. Events: the group asks for a revoke ("revoke"), gives the partition back before the
# revoke completed ("keep"), the application delays it ("delay"), a poll starts ("poll"), membership ends ("lose").
TRANSITIONS: dict[tuple[str, str], str] = {
    (OWNED, "revoke"): REVOKE_NEXT,
    (OWNED, "keep"): OWNED,
    (OWNED, "delay"): OWNED,
    (OWNED, "poll"): OWNED,
    (OWNED, "lose"): LOST,
    (REVOKE_NEXT, "revoke"): REVOKE_NEXT,
    (REVOKE_NEXT, "keep"): OWNED,
    (REVOKE_NEXT, "delay"): REVOKE_THEREAFTER,
    (REVOKE_NEXT, "poll"): REVOKED,
    (REVOKE_NEXT, "lose"): LOST,
    (REVOKE_THEREAFTER, "revoke"): REVOKE_THEREAFTER,
    (REVOKE_THEREAFTER, "keep"): OWNED,
    (REVOKE_THEREAFTER, "delay"): REVOKE_THEREAFTER,
    (REVOKE_THEREAFTER, "poll"): REVOKE_NEXT,
    (REVOKE_THEREAFTER, "lose"): LOST,
}


class Ownership:
    """The partitions a group member owns, and where each stands in KIP-983's revocation."""

    def __init__(self) -> None:
        self.state: dict[TopicPartition, str] = {}
        self.lost: set[TopicPartition] = set()

    def _apply(self, tps: Iterable[TopicPartition], event: str) -> set[TopicPartition]:
        """Apply ``event`` to ``tps`` (those owned); returns the ones that reached a terminal state."""
        ended = set()
        for tp in tps:
            current = self.state.get(tp)
            if current is None:
                continue
            after = move(TRANSITIONS, current, event, f"KIP-983 ownership of {tp}")
            if after in (REVOKED, LOST):
                del self.state[tp]
                ended.add(tp)
                if after == LOST:
                    self.lost.add(tp)
            else:
                self.state[tp] = after
        return ended

    def owned(self) -> set[TopicPartition]:
        return set(self.state)

    def add(self, tps: Iterable[TopicPartition]) -> set[TopicPartition]:
        """Newly assigned partitions (returns those not owned before); owned ones pending a revoke are kept."""
        new = {tp for tp in tps if tp not in self.state}
        self._apply(set(tps) - new, "keep")
        for tp in new:
            self.state[tp] = OWNED
            self.lost.discard(tp)
        return new

    def request_revoke(self, tps: Iterable[TopicPartition]) -> set[TopicPartition]:
        """The group asks for ``tps``; returns those newly on the revoke-next list."""
        fresh = {tp for tp in tps if self.state.get(tp) == OWNED}
        self._apply(tps, "revoke")
        return fresh

    def start_poll(self) -> set[TopicPartition]:
        """KIP-983's start of poll: the revoke-next list is due now (returned), the lost list is emptied, and the
        revoke-thereafter list becomes the revoke-next list."""
        self.lost = set()
        return self._apply(list(self.state), "poll")

    def lose(self, tps: Iterable[TopicPartition] | None = None) -> set[TopicPartition]:
        """Membership ended (all partitions, or ``tps``) before a revoke: lost."""
        return self._apply(list(self.state) if tps is None else tps, "lose")

    def delay(self, tps: Iterable[TopicPartition]) -> bool:
        wanted = set(tps)
        if any(tp not in self.state for tp in wanted):
            return False                   # lost (or never owned): too late to delay
        self._apply(wanted, "delay")
        return True

    def pending(self, *states: str) -> set[TopicPartition]:
        return {tp for tp, s in self.state.items() if s in states}

    def clear(self) -> None:
        self.state.clear()
        self.lost.clear()
