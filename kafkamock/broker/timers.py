"""Everything the core does on its own clock: waiting requests and periodic tasks.

``Timers`` keeps waiters keyed by what they wait on (``notify(key)`` re-checks those), a heap of their deadlines,
and Kafka's periodic tasks (retention, flushes, compaction, checkpoints, and later group and transaction
timeouts). ``next_deadline()`` tells the shell when to call ``tick(now)`` next; nothing here sleeps, so a test
drives every timer by moving a fake clock.
"""

from __future__ import annotations

import heapq
import itertools
import logging
from collections import defaultdict
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from kafkamock.broker.outcome import Outcome, Waiter, as_outcome

log = logging.getLogger("kafkamock.broker")
NEVER = 2**63 - 1


def log_key(topic: str, partition: int) -> tuple:
    """What a Fetch waiting for a partition's log to grow waits on."""
    return ("log", topic, partition)


@dataclass(eq=False)
class Periodic:
    name: str
    interval_ms: Callable[[], int]     # read each time, so a config change takes effect at the next run
    run: Callable[[int], None]
    due_ms: int


class Timers:
    def __init__(self) -> None:
        self._by_key: defaultdict[Hashable, set[Waiter]] = defaultdict(set)
        self._deadlines: list[tuple[int, int, Waiter]] = []
        self._seq = itertools.count()
        self.periodic: list[Periodic] = []
        # key -> (deadline, seq, run, the deadline of its entry in the heap): a timer moved later keeps its heap
        # entry, which is pushed again at the new deadline when it comes up (a session timeout is pushed back by
        # every heartbeat and commit: one heap entry each was most of their cost, and a heap of stale entries).
        self._timers: dict[Hashable, tuple[int, int, Callable[[], None], int]] = {}
        self._timer_heap: list[tuple[int, int, Hashable]] = []
        self.earlier_deadline: list[Callable[[], None]] = []   # the shell's "wake your timer task"
        # The shell's report of a task that raised (after the log line): which task, and the exception.
        self.on_error: Callable[[str, Exception], None] | None = None

    # -- waiters -------------------------------------------------------------------------------------------------

    def add(self, waiter: Waiter) -> None:
        earlier = waiter.deadline_ms < self.next_deadline()
        for key in waiter.keys:
            self._by_key[key].add(waiter)
        heapq.heappush(self._deadlines, (waiter.deadline_ms, next(self._seq), waiter))
        if earlier:
            self._wake()

    def notify(self, key: Hashable) -> None:
        """Something ``key`` names changed: waiters on it check whether they can answer now."""
        waiters = self._by_key.get(key)
        if not waiters:
            return
        for waiter in list(waiters):
            if not waiter.done:
                result = waiter.check(False)
                if result is not None:
                    self.complete(waiter, as_outcome(result))

    def complete(self, waiter: Waiter, outcome: Outcome) -> None:
        self._forget(waiter)
        waiter.result = outcome
        if waiter.on_done is not None:
            waiter.on_done(outcome)

    def cancel(self, waiter: Waiter) -> None:
        """The connection went away: the waiter will never be answered."""
        self._forget(waiter)

    def _forget(self, waiter: Waiter) -> None:
        waiter.done = True
        for key in waiter.keys:
            waiters = self._by_key.get(key)
            if waiters is not None:
                waiters.discard(waiter)
                if not waiters:
                    del self._by_key[key]

    def waiting(self) -> int:
        return sum(1 for _, _, w in self._deadlines if not w.done)

    # -- periodic tasks ------------------------------------------------------------------------------------------

    def every(self, name: str, interval_ms: Callable[[], int], run: Callable[[int], None], *, first_ms: int) -> None:
        self.periodic.append(Periodic(name, interval_ms, run, first_ms))

    def refresh(self, now_ms: int) -> None:
        """Intervals may have changed (a config was altered): no task waits longer than its new interval."""
        for task in self.periodic:
            interval = max(task.interval_ms(), 1)
            if interval < NEVER - now_ms:
                task.due_ms = min(task.due_ms, now_ms + interval)
        self._wake()

    # -- keyed one-shot timers (session, rebalance and join timeouts) ---------------------------------------------

    def schedule(self, key: Hashable, deadline_ms: int, run: Callable[[], None]) -> None:
        """Run ``run`` at ``deadline_ms``; scheduling the same key again replaces the earlier timer (Kafka's
        coordinator timer: one heartbeat expiry per member, one join deadline per group)."""
        current = self._timers.get(key)
        if current is not None and current[3] <= deadline_ms:       # its heap entry comes up first: reuse it
            self._timers[key] = (deadline_ms, current[1], run, current[3])
            return
        earlier = deadline_ms < self.next_deadline()
        seq = next(self._seq)
        self._timers[key] = (deadline_ms, seq, run, deadline_ms)
        heapq.heappush(self._timer_heap, (deadline_ms, seq, key))
        if earlier:
            self._wake()

    def unschedule(self, key: Hashable) -> None:
        self._timers.pop(key, None)

    def unschedule_where(self, matches: Callable[[Hashable], bool]) -> None:
        """Drop every keyed timer whose key ``matches`` (a coordinator forgetting all it held)."""
        for key in [k for k in self._timers if matches(k)]:
            del self._timers[key]

    def scheduled(self, key: Hashable) -> int | None:
        """The deadline of the timer under ``key``, or None."""
        timer = self._timers.get(key)
        return timer[0] if timer is not None else None

    def _next_timer(self) -> int:
        heap, timers = self._timer_heap, self._timers
        while heap:
            entry_deadline, seq, key = heap[0]
            timer = timers.get(key)
            if timer is None or timer[1] != seq:                     # unscheduled or replaced: a stale entry
                heapq.heappop(heap)
            elif timer[0] > entry_deadline:                          # moved later since: push it at its deadline
                heapq.heapreplace(heap, (timer[0], seq, key))
                timers[key] = (timer[0], seq, timer[2], timer[0])
            else:
                return entry_deadline
        return NEVER

    # -- the clock -----------------------------------------------------------------------------------------------

    def next_deadline(self) -> int:
        while self._deadlines and self._deadlines[0][2].done:
            heapq.heappop(self._deadlines)
        deadline = min(self._deadlines[0][0] if self._deadlines else NEVER, self._next_timer())
        for task in self.periodic:
            if task.due_ms < deadline:
                deadline = task.due_ms
        return deadline

    def tick(self, now_ms: int) -> None:
        """Answer the waiters whose deadline has come, and run the periodic tasks that are due."""
        while self._deadlines and self._deadlines[0][0] <= now_ms:
            _, _, waiter = heapq.heappop(self._deadlines)
            if not waiter.done:
                self.complete(waiter, as_outcome(waiter.check(True)))
        while self._next_timer() <= now_ms:
            _, seq, key = heapq.heappop(self._timer_heap)
            run = self._timers.pop(key)[2]
            try:
                run()
            except Exception as exc:
                log.exception("timer %r failed", key)
                if self.on_error is not None:
                    self.on_error(f"timer {key!r}", exc)
        for task in self.periodic:
            if task.due_ms <= now_ms:
                try:
                    task.run(now_ms)
                except Exception as exc:
                    log.exception("periodic task %s failed", task.name)
                    if self.on_error is not None:
                        self.on_error(f"periodic task {task.name}", exc)
                interval = max(task.interval_ms(), 1)
                task.due_ms = now_ms + interval if interval < NEVER - now_ms else NEVER

    def _wake(self) -> None:
        for callback in self.earlier_deadline:
            callback()
