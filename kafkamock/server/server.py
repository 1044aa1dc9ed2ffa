"""The trio shell around the broker core: one listener per node, one task per connection, and one timer task.

The timer task sleeps until the core's next deadline (``Cluster.next_deadline``) on the core's own clock, or until
the core says an earlier deadline came up (or a ``ManualClock`` moved), then calls ``Cluster.tick``. Nothing else
here knows about time. Stopping a node (control API) closes its listeners and its connections; starting it binds
the same ports again.

Each node listens on every configured listener (``listeners``; by default one PLAINTEXT listener on
``--host``/``--port``), node k on the listener's port + k. A TLS listener wraps each accepted socket in a
``trio.SSLStream`` built from the listener's ``ssl.*`` configs (``tls.py``).
"""

from __future__ import annotations

import itertools
import logging
import socket
import ssl
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TypedDict, Unpack

import trio

from kafkamock.broker import Clock, Cluster, ConnectionInfo
from kafkamock.broker.connections import ADMIT, REFUSE
from kafkamock.broker.node import Node
from kafkamock.broker.outcome import NO_RESPONSE
from kafkamock.broker.security.listeners import Listener, advertised
from kafkamock.broker.timers import NEVER
from kafkamock.server import tls
from kafkamock.server.connection import Connection
from kafkamock.server.errors import InternalError, ListenError, reason
from kafkamock.storage import DiskStorage, MemoryStorage

log = logging.getLogger("kafkamock.server")


@dataclass
class NodeListener:
    """The socket and tasks of one node on one listener."""

    node: Node
    listener: Listener
    host: str = "127.0.0.1"
    port: int = 0
    ssl_context: ssl.SSLContext | None = None
    scope: trio.CancelScope | None = None
    connections: set[Connection] = field(default_factory=set)


class Server:
    def __init__(self, cluster: Cluster, inherited: dict[tuple[str, int], socket.socket] | None = None):
        self.cluster = cluster
        # Listening sockets a supervisor passed (activation.py), by (host, port): served instead of opening them.
        self.inherited = dict(inherited or {})
        self._ids = itertools.count(1)
        self._wake_event = trio.Event()
        self._nursery: trio.Nursery | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._bind_host = "127.0.0.1"
        self.listeners: dict[int, list[NodeListener]] = {}     # node id -> one per configured listener
        self._clients_seen: set[str | None] = set()
        self.bootstrap_servers = ""                              # the first listener's
        self.bootstrap_by_listener: dict[str, str] = {}
        self._by_id: dict[int, Connection] = {}
        self._slot_freed = trio.Event()
        # Told of every internal error (after its log line): the test harness records them (testing.BrokerHandle).
        self.internal_error_listeners: list[Callable[[InternalError], None]] = []
        # Told the size of each request frame that arrives over several reads (the large ones) before its buffer is
        # allocated (``kafkamock serve`` in memory: memory.WarmHeap).
        self.before_large_frame: Callable[[int], None] | None = None
        cluster.connections.closers.append(self._close_connection)
        cluster.timers.earlier_deadline.append(self._wake)
        cluster.timers.on_error = self.internal_error
        cluster.node_listeners.append(self._node_event)
        self._manual_clock = hasattr(cluster.clock, "subscribe")
        if self._manual_clock:
            cluster.clock.subscribe(self._wake_threadsafe)  # type: ignore[attr-defined]

    def internal_error(self, where: str, error: BaseException) -> None:
        """A bug the broker survived (a handler or a timer task raised; it is logged already): tell the listeners.
        A client's bad input is not one: it gets Kafka's answer or a closed connection, and no call here."""
        report = InternalError(where, error)
        for listener in self.internal_error_listeners:
            listener(report)

    # -- the timer task ------------------------------------------------------------------------------------------

    def _wake(self) -> None:
        self._wake_event.set()

    def _wake_threadsafe(self) -> None:
        """A ManualClock moved (maybe from another thread): wake the timer task on the broker's thread."""
        if self._token is not None:
            try:
                self._token.run_sync_soon(self._wake)
            except trio.RunFinishedError:
                pass

    async def _timer(self) -> None:
        cluster = self.cluster
        while True:
            cluster.tick()
            self._wake_event = trio.Event()
            deadline = cluster.next_deadline()
            remaining = deadline - cluster.now_ms()
            if remaining <= 0:
                await trio.lowlevel.checkpoint()
                continue
            if self._manual_clock or deadline >= NEVER:
                await self._wake_event.wait()        # a manual clock moves only when told
            else:
                with trio.move_on_after(remaining / 1000):
                    await self._wake_event.wait()

    # -- nodes and connections -----------------------------------------------------------------------------------

    def client_seen(self, info: ConnectionInfo, node: Node) -> None:
        """One INFO line per client id (connections themselves are DEBUG: a Spark job opens hundreds)."""
        if info.client_id not in self._clients_seen:
            self._clients_seen.add(info.client_id)
            log.info("client %r connected from %s to node %d", info.client_id, info.peer, node.node_id)

    async def _handle(self, stream: trio.SocketStream, listener: NodeListener) -> None:
        conn = Connection(self, stream, next(self._ids), listener.node, listener.listener.name, listener.ssl_context)
        log.debug("connection %d from %s to node %d on %s", conn.info.id, conn.info.peer, listener.node.node_id,
                  listener.listener.name)
        if not await self._admit(conn):
            return
        listener.connections.add(conn)
        self._by_id[conn.info.id] = conn
        try:
            await conn.serve()
        finally:
            listener.connections.discard(conn)
            self._by_id.pop(conn.info.id, None)
            self.cluster.connections.closed(conn.info.id)
            freed, self._slot_freed = self._slot_freed, trio.Event()
            freed.set()

    async def _admit(self, conn: Connection) -> bool:
        """The core's connection limits (``broker/connections.py``): serve, close at accept, or hold the
        connection unread until a slot frees, as Kafka's acceptor does at max.connections."""
        waited = False
        while True:
            admission = self.cluster.connections.admit(conn.info.id, conn.node, conn.info.host)
            if admission.verdict == ADMIT:
                return True
            if admission.verdict == REFUSE:
                log.info("%s", admission.reason)
                if admission.close_after_ms:
                    await conn.wait(self.cluster.wait((), admission.close_after_ms,
                                                     lambda final: NO_RESPONSE if final else None))
                with trio.CancelScope(shield=True):
                    await conn.stream.aclose()
                return False
            if not waited:
                log.warning("connection %d from %s waits: %s", conn.info.id, conn.info.peer, admission.reason)
                waited = True
            await self._slot_freed.wait()

    def _close_connection(self, conn_id: int, reason: str) -> None:
        """The core closes a connection (connections.max.idle.ms)."""
        conn = self._by_id.get(conn_id)
        if conn is not None:
            log.info("closing connection %d from %s (client %s) to node %d: %s", conn_id, conn.info.peer,
                     conn.info.client_id, conn.node.node_id, reason)
            conn.cancel_scope.cancel()

    async def _listen(self, listener: NodeListener, *,
                      task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        inherited = self.inherited.get((listener.host, listener.port)) if listener.port else None
        if inherited is not None:       # a duplicate: stopping the node closes it, the supervisor keeps the port
            sockets = [trio.SocketListener(trio.socket.from_stdlib_socket(inherited.dup()))]
        else:
            try:
                sockets = await trio.open_tcp_listeners(listener.port, host=listener.host)
            except OSError as exc:
                raise ListenError(f"cannot listen on {listener.host}:{listener.port} (listener {listener.listener.name} "
                                  f"of node {listener.node.node_id}): {reason(exc)}", exc) from None
        listener.port = sockets[0].socket.getsockname()[1]
        with trio.CancelScope() as scope:
            listener.scope = scope
            async with trio.open_nursery() as nursery:
                await nursery.start(trio.serve_listeners, lambda s: self._handle(s, listener), sockets)
                task_status.started()

    def _node_event(self, event: str, node: Node) -> None:
        for listener in self.listeners.get(node.node_id, []):
            if event in ("stopped", "drop"):
                for conn in list(listener.connections):
                    conn.cancel_scope.cancel()
            if event == "stopped" and listener.scope is not None:
                listener.scope.cancel()
                listener.scope = None
            if event == "started" and listener.scope is None and self._nursery is not None:
                self._nursery.start_soon(self._listen, listener)

    def _specs(self, host: str, port: int) -> list[Listener]:
        """The listeners to open: the configured ones, else one PLAINTEXT listener on ``host``/``port``."""
        if self.cluster.config["listeners"]:
            return self.cluster.listeners
        return [Listener(self.cluster.listeners[0].name, "PLAINTEXT", host, port)]

    async def serve(self, host: str = "127.0.0.1", port: int = 9092, *,
                    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED) -> None:
        """Listen for every node on every listener (node k on the listener's port + k, or a free port each when
        the port is 0), then serve. Raises ConfigError for a TLS listener that cannot be set up."""
        self._bind_host = host
        self._token = trio.lowlevel.current_trio_token()
        specs = self._specs(host, port)
        contexts = {spec.name: tls.server_context(self.cluster.config, spec.name, spec.security_protocol)
                    for spec in specs if spec.tls}
        advertise = advertised(self.cluster.config, specs)
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                for k, node in enumerate(self.cluster.nodes):
                    self.listeners[node.node_id] = []
                    for spec in specs:
                        bind = spec.host if spec.host else "0.0.0.0"
                        listener = NodeListener(node, spec, bind, spec.port + k if spec.port else 0,
                                                contexts.get(spec.name))
                        self.listeners[node.node_id].append(listener)
                        if node.up:
                            await nursery.start(self._listen, listener)
                        shown = "127.0.0.1" if bind in ("0.0.0.0", "") else "::1" if bind == "::" else bind
                        adv_host, adv_port = advertise.get(spec.name, (None, None))
                        self.cluster.set_address(node.node_id, adv_host or shown,
                                                adv_port + k if adv_port else listener.port, spec.name)
                for spec in specs:
                    self.bootstrap_by_listener[spec.name] = ",".join(
                        "{}:{}".format(*n.address(spec.name)) for n in self.cluster.nodes)
                self.bootstrap_servers = self.bootstrap_by_listener[specs[0].name]
                unused = set(self.inherited) - {(lst.host, lst.port) for lsts in self.listeners.values() for lst in lsts}
                for host_port in sorted(unused):
                    log.warning("the inherited listening socket %s:%d matches no listener; not served", *host_port)
                nursery.start_soon(self._timer)
                task_status.started(self.bootstrap_servers)
        finally:
            self._nursery = None
            self.cluster.close()


class BrokerOptions(TypedDict, total=False):
    """``Cluster``'s keyword arguments that ``run_broker`` passes on."""

    clock: Clock | None
    brokers: int
    storage: MemoryStorage | DiskStorage | None
    cluster_id: str | None


@asynccontextmanager
async def run_broker(cluster: Cluster | None = None, host: str = "127.0.0.1", port: int = 0,
                     config: Mapping[str, object] | None = None, **broker_options: Unpack[BrokerOptions]
                     ) -> AsyncIterator[Server]:
    """Run a broker inside trio code: ``async with run_broker(brokers=3) as server: server.bootstrap_servers``."""
    server = Server(cluster or Cluster(config, **broker_options))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve, host, port)
        yield server
        nursery.cancel_scope.cancel()
