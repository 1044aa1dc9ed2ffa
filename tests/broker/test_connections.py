"""Connection limits in the core (broker/connections.py), on a ManualClock: ``connections.max.idle.ms`` closes a
connection at exactly its deadline, whatever the order of reads, writes, busy requests and closes, with one timer
for all the connections (as Kafka's IdleExpiryManager), and never when the value is negative (Kafka's Selector)."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from kafkamock.broker import Cluster
from kafkamock.broker.clock import ManualClock
from kafkamock.broker.connections import ADMIT, IDLE_TIMER

IDLE = 1_000


def cluster(idle: int = IDLE) -> tuple[Cluster, ManualClock, list[tuple[int, str]]]:
    clock = ManualClock()
    broker = Cluster({"connections.max.idle.ms": idle}, clock=clock)
    closed: list[tuple[int, str]] = []
    broker.connections.closers.append(lambda conn_id, reason: closed.append((conn_id, reason)))
    return broker, clock, closed


def admit(broker: Cluster, conn_id: int) -> None:
    assert broker.connections.admit(conn_id, broker.nodes[0], "127.0.0.1").verdict == ADMIT


def advance(broker: Cluster, clock: ManualClock, ms: int) -> None:
    """Move the clock in steps no longer than the next deadline, running the timers due at each, as the shell does."""
    end = clock.now_ms() + ms
    while True:
        step_to = min(broker.next_deadline(), end)
        if step_to > clock.now_ms():
            clock.advance(step_to - clock.now_ms())
        broker.tick()
        if clock.now_ms() >= end and broker.next_deadline() > end:
            return


def test_an_idle_connection_closes_at_its_deadline_and_a_read_or_write_pushes_it_back():
    broker, clock, closed = cluster()
    admit(broker, 1)
    admit(broker, 2)
    advance(broker, clock, 600)
    broker.connections.active(1)                 # 1 active at 600: due at 1,600
    advance(broker, clock, 399)
    assert closed == []
    advance(broker, clock, 1)                    # 2 reaches 1,000 ms idle
    assert closed == [(2, "idle for 1000 ms (connections.max.idle.ms=1000)")]
    advance(broker, clock, 599)
    assert [c for c, _ in closed] == [2]
    advance(broker, clock, 1)
    assert [c for c, _ in closed] == [2, 1]


def test_a_busy_connection_is_not_idle_and_counts_as_active_from_the_check_on():
    broker, clock, closed = cluster()
    admit(broker, 1)
    broker.connections.busy(1, True)             # a long poll the core is still answering
    advance(broker, clock, 5 * IDLE)
    assert closed == []
    broker.connections.busy(1, False)            # answered at 5,000: idle from then
    advance(broker, clock, IDLE - 1)
    assert closed == []
    advance(broker, clock, 1)
    assert [c for c, _ in closed] == [1]


def test_an_expired_connection_is_closed_once_and_stays_counted_until_the_shell_closes_it():
    broker, clock, closed = cluster()
    admit(broker, 1)
    advance(broker, clock, IDLE)
    admit(broker, 2)
    advance(broker, clock, 3 * IDLE)             # 2 expires too; 1 (not closed yet by the shell) is not re-closed
    assert [c for c, _ in closed] == [1, 2]
    assert set(broker.connections.open) == {1, 2}
    broker.connections.closed(1)
    broker.connections.closed(2)
    assert not broker.connections.open
    assert broker.timers.scheduled(IDLE_TIMER) is None


def test_a_negative_idle_time_turns_the_expiry_off():
    broker, clock, closed = cluster(idle=-1)
    admit(broker, 1)
    advance(broker, clock, 100 * IDLE)
    assert closed == []
    assert broker.timers.scheduled(IDLE_TIMER) is None


def test_a_thousand_connections_share_one_timer():
    broker, clock, closed = cluster()
    for conn_id in range(1_000):
        admit(broker, conn_id)
        advance(broker, clock, 1)
    assert list(broker.timers._timers) == [IDLE_TIMER]          # the one idle timer, and no timer a connection
    advance(broker, clock, IDLE)
    assert [c for c, _ in closed] == list(range(1_000))


CONNS = st.integers(0, 3)
STEPS = st.lists(st.one_of(
    st.tuples(st.just("open"), CONNS),
    st.tuples(st.just("active"), CONNS),
    st.tuples(st.just("busy"), CONNS),
    st.tuples(st.just("answered"), CONNS),
    st.tuples(st.just("closed"), CONNS),
    st.tuples(st.just("wait"), st.sampled_from([1, IDLE // 4, IDLE // 2, IDLE - 1, IDLE]) | st.integers(0, 2 * IDLE)),
), max_size=60)


@given(steps=STEPS)
@example(steps=[("open", 0), ("open", 1), ("wait", 500), ("active", 0), ("wait", 600)])   # the later one first
@example(steps=[("open", 0), ("open", 1), ("wait", 500), ("busy", 0), ("answered", 0), ("wait", 600)])
@settings(max_examples=300, deadline=None)
def test_connections_close_when_a_plain_model_says(steps):
    """Model: a connection not busy closes at (its last read, write or request begun or answered) + idle, once; a
    busy one does not, and when a check finds it so it counts as active at that check."""
    broker, clock, closed = cluster()
    model: dict[int, list[int]] = {}          # conn id -> [last active, busy count, closed for idleness (0/1)]
    closed_by_model: list[int] = []
    for op, value in steps:
        now = clock.now_ms()
        if op == "open" and value not in model:
            admit(broker, value)
            model[value] = [now, 0, 0]
        elif op in ("active", "busy", "answered") and value in model:
            if op == "answered" and not model[value][1]:
                continue
            if op == "active":
                broker.connections.active(value)
            else:
                broker.connections.busy(value, op == "busy")
                model[value][1] += 1 if op == "busy" else -1
            model[value][0] = now
        elif op == "closed" and value in model:
            broker.connections.closed(value)
            del model[value]
        elif op == "wait":
            for moment in range(now + 1, now + value + 1):    # the model, a millisecond at a time
                for conn_id, state in model.items():
                    if state[2] or moment - state[0] < IDLE:
                        continue
                    if state[1]:
                        state[0] = moment
                    else:
                        state[2] = 1
                        closed_by_model.append(conn_id)
            advance(broker, clock, value)
            assert sorted(c for c, _ in closed) == sorted(closed_by_model)
        assert set(broker.connections.open) == set(model)
