"""A parked answer: a JoinGroup or SyncGroup waits on one until its group's round ends.

The handler turns it into a ``Waiter`` keyed by the ``Pending`` itself; the coordinator ``resolve``s it and the
broker notifies that key, so exactly the parked request wakes up.
"""

from __future__ import annotations

from typing import Any


class Pending:
    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value: dict[str, Any] | None = None        # the answer (a response body), once resolved

    @property
    def done(self) -> bool:
        return self.value is not None

    def __repr__(self) -> str:
        return f"Pending(done={self.done})"
