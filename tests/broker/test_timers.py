"""The core's keyed timers (session, join and rebalance timeouts) against a plain model: whatever the sequence of
schedules, reschedules and cancellations, each timer runs once, at its last deadline, in deadline order, and
``next_deadline`` is the earliest live one. A timer moved later keeps its heap entry (timers.py)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kafkamock.broker.timers import NEVER, Timers

KEYS = st.sampled_from(["a", "b", "c", "d", "e"])
STEPS = st.lists(st.one_of(
    st.tuples(st.just("schedule"), KEYS, st.integers(0, 200)),
    st.tuples(st.just("unschedule"), KEYS, st.just(0)),
    st.tuples(st.just("tick"), st.just(""), st.integers(0, 60)),
), max_size=80)


@given(steps=STEPS)
@settings(max_examples=300, deadline=None)
def test_timers_run_as_a_plain_model_says(steps):
    timers, model, ran, now = Timers(), {}, [], 0
    for op, key, value in steps:
        if op == "schedule":
            deadline = now + value
            timers.schedule(key, deadline, lambda key=key, deadline=deadline: ran.append((key, deadline)))
            model[key] = deadline
        elif op == "unschedule":
            timers.unschedule(key)
            model.pop(key, None)
        else:
            now += value
            before = len(ran)
            timers.tick(now)
            due = {k: d for k, d in model.items() if d <= now}
            got = ran[before:]
            assert sorted(got) == sorted(due.items())
            assert [d for _, d in got] == sorted(d for _, d in got)       # in deadline order
            for k in due:
                del model[k]
        assert timers.next_deadline() == min(model.values(), default=NEVER)
        for k in "abcde":
            assert timers.scheduled(k) == model.get(k)


def test_pushing_a_timer_back_adds_no_heap_entry():
    timers = Timers()
    timers.schedule("member", 100, lambda: None)
    for deadline in range(101, 10_000):
        timers.schedule("member", deadline, lambda: None)
    assert len(timers._timer_heap) == 1
    assert timers.next_deadline() == 9_999
