"""Connection limits, as Kafka's ConnectionQuotas and Selector apply them, decided in the core on its clock.

- ``max.connections`` (per node, as Kafka counts per broker): at the limit the node stops taking connections in;
  the shell parks a new connection, reading nothing, until one closes (Kafka's acceptor blocks the same way).
- ``max.connections.per.ip`` and ``max.connections.per.ip.overrides``: one more is closed at accept with
  Kafka's log line ("Rejected connection from ..., address already has the configured maximum of N connections.").
- the ip entity's ``connection_creation_rate`` quota (KIP-612): a connection over the rate is closed once its
  throttle time has passed, as Kafka's acceptor delays the close of a throttled socket.
- ``connections.max.idle.ms``: a connection that has neither completed a read nor a write for that long is
  closed. It is how Kafka bounds a half-sent frame and a client that never reads its responses: the broker has
  no per-request read timeout. A connection whose request the core is still answering (a long poll, a group
  round) is not idle. A negative value turns the expiry off, as in Kafka's Selector. As Kafka's
  IdleExpiryManager does, the open connections are kept least recently active first, and one timer, at the
  first one's deadline, serves them all: a connection holds no timer of its own.
"""

from __future__ import annotations

import logging
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kafkamock.broker.config import ip_overrides
from kafkamock.broker.quotas import Rate

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster
    from kafkamock.broker.node import Node

log = logging.getLogger("kafkamock.broker")

ADMIT, WAIT, REFUSE = "admit", "wait", "refuse"


@dataclass
class Admission:
    verdict: str                 # ADMIT, WAIT (no slot on the node yet) or REFUSE
    reason: str = ""
    close_after_ms: int = 0      # REFUSE: the close is delayed until then (a connection-rate throttle)


IDLE_TIMER = "connections-idle"


@dataclass(slots=True)
class _Conn:
    node_id: int
    host: str
    last_active_ms: int
    busy: int = 0
    expired: bool = False        # closed for idleness; counted until the shell reports it ``closed``


class Connections:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        # Every connection counted, least recently active first (a read, a write, a request begun or answered
        # moves it to the end): the first one not yet expired is the next to idle out.
        self.open: OrderedDict[int, _Conn] = OrderedDict()
        self.per_node: Counter[int] = Counter()
        self.per_ip: Counter[tuple[int, str]] = Counter()
        self.closers: list[Callable[[int, str], None]] = []    # the shell: close connection ``id``, with a reason
        self._rates: dict[str, Rate] = {}

    def admit(self, conn_id: int, node: Node, host: str) -> Admission:
        """May connection ``conn_id`` from ``host`` be served by ``node``? An admitted one is counted until
        ``closed``; a WAIT is asked again once another connection has closed."""
        config = node.config
        if self.per_node[node.node_id] >= config["max.connections"]:
            return Admission(WAIT, f"node {node.node_id} has max.connections={config['max.connections']} open")
        limit = ip_overrides(config["max.connections.per.ip.overrides"]).get(host, config["max.connections.per.ip"])
        if self.per_ip[node.node_id, host] >= limit:
            return Admission(REFUSE, f"Rejected connection from {host}, address already has the configured maximum "
                                     f"of {limit} connections.")
        throttle = self._connection_rate(host)
        if throttle:
            return Admission(REFUSE, f"Throttling connection from {host} for {throttle} ms "
                                     "(connection_creation_rate quota)", self.cluster.now_ms() + throttle)
        now = self.cluster.now_ms()
        self.open[conn_id] = _Conn(node.node_id, host, now)
        self.per_node[node.node_id] += 1
        self.per_ip[node.node_id, host] += 1
        idle = self._idle_ms()
        if idle >= 0 and self.cluster.timers.scheduled(IDLE_TIMER) is None:
            # (a timer already set is due no later: the first connection was last active no later than now)
            self.cluster.timers.schedule(IDLE_TIMER, now + idle, self._expire_idle)
        return Admission(ADMIT)

    def _connection_rate(self, host: str) -> int:
        quota = self.cluster.quotas.ip_quota("connection_creation_rate", host)
        if quota is None:
            return 0
        n: int = self.cluster.config["quota.window.num"]
        window_ms: int = self.cluster.config["quota.window.size.seconds"] * 1000
        now = self.cluster.now_ms()
        rate = self._rates.setdefault(host, Rate())
        rate.record(1.0, now, n, window_ms)
        measured = rate.measure(now, n, window_ms)
        if measured <= quota:
            return 0
        rate.record(-1.0, now, n, window_ms)       # not accepted, so not counted (Kafka unrecords it too)
        window = rate.window_ms(now, n, window_ms)
        # Kafka bounds this throttle by quota.window.size.seconds (QuotaUtils.boundedThrottleTime).
        return min(round((measured - quota) / quota * window), window_ms)

    def closed(self, conn_id: int) -> None:
        conn = self.open.pop(conn_id, None)
        if conn is None:
            return
        self.per_node[conn.node_id] -= 1
        self.per_ip[conn.node_id, conn.host] -= 1
        if not self.per_ip[conn.node_id, conn.host]:
            del self.per_ip[conn.node_id, conn.host]
        if not self.open:
            self.cluster.timers.unschedule(IDLE_TIMER)
        self.cluster.share.connection_closed(conn_id)

    # -- idleness ------------------------------------------------------------------------------------------------

    def _idle_ms(self) -> int:
        idle: int = self.cluster.config["connections.max.idle.ms"]
        return idle

    def active(self, conn_id: int) -> None:
        """A read or a write completed on the connection."""
        conn = self.open.get(conn_id)
        if conn is not None:
            conn.last_active_ms = self.cluster.now_ms()
            self.open.move_to_end(conn_id)

    def busy(self, conn_id: int, busy: bool) -> None:
        """The core is answering a request of this connection (it cannot be idle meanwhile)."""
        conn = self.open.get(conn_id)
        if conn is not None:
            conn.busy += 1 if busy else -1
            conn.last_active_ms = self.cluster.now_ms()
            self.open.move_to_end(conn_id)

    def _expire_idle(self) -> None:
        """Close every connection idle for ``connections.max.idle.ms``, from the least recently active on, and set
        the timer for the first one left. One still busy is not idle: it counts as active now."""
        now, idle = self.cluster.now_ms(), self._idle_ms()
        if idle < 0:
            return
        expired: list[tuple[int, _Conn]] = []
        refreshed: list[int] = []
        next_deadline = None
        for conn_id, conn in self.open.items():
            if conn.expired:
                continue
            if now - conn.last_active_ms < idle:
                next_deadline = conn.last_active_ms + idle
                break
            if conn.busy:
                refreshed.append(conn_id)
            else:
                expired.append((conn_id, conn))
        for conn_id in refreshed:
            self.active(conn_id)
        if refreshed and next_deadline is None:
            next_deadline = now + idle
        if next_deadline is not None:
            self.cluster.timers.schedule(IDLE_TIMER, next_deadline, self._expire_idle)
        for conn_id, conn in expired:
            conn.expired = True
            reason = f"idle for {now - conn.last_active_ms} ms (connections.max.idle.ms={idle})"
            for close in self.closers:
                close(conn_id, reason)
