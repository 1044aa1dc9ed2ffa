"""State machines as tables (h2's style): ``(state, event) -> next state``, where a pair the table does not list is
an error in the caller, never a silent no-op.

One home for the move and its error, used by the broker's classic groups, transactions and SASL sessions and by the
client's KIP-983 revocation (which is why it lives above both ``broker`` and ``client``).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TypeVar

StateT = TypeVar("StateT", bound=Hashable)
EventT = TypeVar("EventT", bound=Hashable)


class IllegalTransition(RuntimeError):
    """A move the table does not list: the machine's ``what`` in ``state`` cannot take ``event``."""

    def __init__(self, what: str, state: object, event: object) -> None:
        super().__init__(f"{what}: no move from {_name(state)} on {_name(event)}")
        self.state, self.event = state, event


def move(table: Mapping[tuple[StateT, EventT], StateT], state: StateT, event: EventT, what: str) -> StateT:
    """The state ``event`` leads to from ``state``; ``IllegalTransition`` naming ``what`` when the table has none."""
    try:
        return table[(state, event)]
    except KeyError:
        raise IllegalTransition(what, state, event) from None


def _name(value: object) -> str:
    for attribute in ("wire_name", "value", "name"):
        named = getattr(value, attribute, None)
        if isinstance(named, str):
            return named
    return str(value)
