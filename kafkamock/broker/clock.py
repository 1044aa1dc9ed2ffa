"""Time, injected: the broker core never reads the wall clock itself, so every timer is testable without sleeping.

The core reads ``now_ms()`` and reports its next deadline; the I/O shell sleeps until then on the same clock.
``SystemClock`` is the wall clock (record timestamps are wall-clock milliseconds, as in Kafka); ``ManualClock``
moves only when a test advances it, and tells its subscribers (the shell wakes its timer task); trio's
``MockClock`` is reached through ``kafkamock.server.clock.TrioClock``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol


class Clock(Protocol):
    def now_ms(self) -> int: ...


class SystemClock:
    """Wall-clock milliseconds, for the server edge. Readings within one millisecond return the same int object:
    timestamps are kept on every partition's log and segment, and the partitions one request makes share one
    instead of holding 32 bytes each."""

    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last = 0

    def now_ms(self) -> int:
        ms = time.time_ns() // 1_000_000
        last = self._last
        if ms == last:
            return last
        self._last = ms
        return ms


class ManualClock:
    """A clock that moves only when told to (tests, simulations); ``subscribe`` to hear when it does."""

    def __init__(self, start_ms: int = 1_700_000_000_000):
        self._now = start_ms
        self._subscribers: list[Callable[[], None]] = []

    def now_ms(self) -> int:
        return self._now

    def advance(self, ms: int) -> None:
        if ms < 0:
            raise ValueError("time does not go backwards")
        self._now += ms
        for callback in list(self._subscribers):
            callback()

    def subscribe(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` after every ``advance`` (from the advancing thread); returns an unsubscribe function."""
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback) if callback in self._subscribers else None
