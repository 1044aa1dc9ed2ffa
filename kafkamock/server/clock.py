"""The broker's clock read off trio's, so a test running under ``trio.testing.MockClock`` drives every broker timer
(long-poll, retention, later group and transaction timeouts) by virtual time, without sleeping:

    clock = trio.testing.MockClock(autojump_threshold=0)
    trio.run(main, clock=clock)          # inside: run_broker(clock=TrioClock()), then await trio.sleep(600)
"""

from __future__ import annotations

import trio

EPOCH_MS = 1_700_000_000_000


class TrioClock:
    """Milliseconds since ``epoch_ms`` at the moment the clock was first read inside trio, advancing with
    ``trio.current_time()`` (the MockClock's virtual time, or trio's monotonic clock)."""

    def __init__(self, epoch_ms: int = EPOCH_MS):
        self.epoch_ms = epoch_ms
        self._t0: float | None = None

    def now_ms(self) -> int:
        try:
            now = trio.current_time()
        except RuntimeError:   # outside trio (building the broker before the run starts)
            return self.epoch_ms
        if self._t0 is None:
            self._t0 = now
        return self.epoch_ms + int((now - self._t0) * 1000)
