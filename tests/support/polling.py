"""Waiting for what a broker or client does with no notification to wait on: a condition polled to a deadline."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def wait_until(condition: Callable[[], Any], timeout: float, what: str = "condition",
               step: Callable[[], None] | None = None, interval: float = 0.01) -> Any:
    """Call ``step`` (e.g. a client poll that itself blocks for a while), or sleep ``interval``, until
    ``condition()`` is truthy; fail at the deadline. Returns the condition's value."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        if step is not None:
            step()
        else:
            time.sleep(interval)  # the polling interval of a deadline loop, not a stand-in for an event
