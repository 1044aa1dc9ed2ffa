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
  round) is not idle.
"""

from __future__ import annotations

import logging
from collections import Counter
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


@dataclass(slots=True)
class _Conn:
    node_id: int
    host: str
    last_active_ms: int
    busy: int = 0


class Connections:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.open: dict[int, _Conn] = {}
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
        self._schedule_idle(conn_id, now + self._idle_ms())
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
        self.cluster.timers.unschedule(("connection-idle", conn_id))
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

    def busy(self, conn_id: int, busy: bool) -> None:
        """The core is answering a request of this connection (it cannot be idle meanwhile)."""
        conn = self.open.get(conn_id)
        if conn is not None:
            conn.busy += 1 if busy else -1
            conn.last_active_ms = self.cluster.now_ms()

    def _schedule_idle(self, conn_id: int, deadline: int) -> None:
        self.cluster.timers.schedule(("connection-idle", conn_id), deadline, lambda: self._check_idle(conn_id))

    def _check_idle(self, conn_id: int) -> None:
        conn = self.open.get(conn_id)
        if conn is None:
            return
        now, idle = self.cluster.now_ms(), self._idle_ms()
        if conn.busy or now - conn.last_active_ms < idle:
            self._schedule_idle(conn_id, max(conn.last_active_ms, now if conn.busy else 0) + idle)
            return
        reason = f"idle for {now - conn.last_active_ms} ms (connections.max.idle.ms={idle})"
        for close in self.closers:
            close(conn_id, reason)
