"""The wall clock at the server's edge."""

from __future__ import annotations

import time

from kafkamock.broker.clock import SystemClock


def test_readings_in_one_millisecond_are_one_int_object_and_the_next_millisecond_moves_on(monkeypatch):
    clock, now = SystemClock(), [1_700_000_000_123_000_001]
    monkeypatch.setattr(time, "time_ns", lambda: now[0])
    first = clock.now_ms()
    now[0] += 999_000                      # the same millisecond
    assert clock.now_ms() is first and first == 1_700_000_000_123
    now[0] += 1_000                        # the next one
    assert clock.now_ms() == 1_700_000_000_124


def test_it_reads_the_wall_clock():
    before = time.time_ns() // 1_000_000
    assert before <= SystemClock().now_ms() <= time.time_ns() // 1_000_000
