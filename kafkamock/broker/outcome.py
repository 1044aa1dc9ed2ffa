"""What the core answers a request with, typed: a response, no response, a wait, or close-the-connection.

The I/O shell acts on it: it encodes and sends a ``Respond``, sends nothing for ``NoResponse`` (acks=0), parks
the connection on a ``Wait`` until the core completes its ``Waiter`` (which yields another outcome), and hangs up
on ``Close`` with the reason in its log line.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Respond:
    body: Any          # a dict or codec Message for the response schema of the request's API and version
    close: str | None = None   # then close the connection, for this reason (a failed SASL exchange)


@dataclass(frozen=True, slots=True)
class NoResponse:
    """Nothing goes back (a Produce with acks=0)."""


@dataclass(frozen=True, slots=True)
class Close:
    reason: str


@dataclass(eq=False)
class Waiter:
    """A request that waits for something (a partition's log to grow, a group round, a lock, a timeout).

    The core calls ``check(False)`` whenever one of ``keys`` changes and ``check(True)`` at ``deadline_ms``; the
    first call that returns an outcome (or a body) completes the waiter, and ``on_done`` (set by the shell)
    hears it.
    """

    keys: tuple[Hashable, ...]
    deadline_ms: int
    check: Callable[[bool], Any]
    on_done: Callable[[Outcome], None] | None = field(default=None, repr=False)
    result: Outcome | None = None
    done: bool = False


@dataclass(frozen=True, slots=True)
class Wait:
    waiter: Waiter


Outcome = Respond | NoResponse | Close | Wait
NO_RESPONSE = NoResponse()


def as_outcome(result: Any) -> Outcome:
    """A handler's return value as an outcome: a body is a response, None is no response."""
    if isinstance(result, (Respond, NoResponse, Close, Wait)):
        return result
    if result is None:
        return NO_RESPONSE
    if isinstance(result, Waiter):
        return Wait(result)
    return Respond(result)
