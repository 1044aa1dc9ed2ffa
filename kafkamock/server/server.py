"""The trio shell around the broker core: listener, one task per connection, long-poll waits, the retention timer."""

from __future__ import annotations

import itertools
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio

from kafkamock.broker import Broker, Pending
from kafkamock.server.connection import Connection

log = logging.getLogger("kafkamock.server")


class Server:
    def __init__(self, broker: Broker):
        self.broker = broker
        self._appended = trio.Event()
        self._ids = itertools.count(1)
        broker.on_append(self._wake)
        self.bootstrap_servers = ""

    def _wake(self) -> None:
        self._appended.set()
        self._appended = trio.Event()

    async def wait(self, pending: Pending):
        """Wait for a long-poll request: re-check after every append, answer at the deadline at the latest."""
        while True:
            response = pending.complete(False)
            if response is not None:
                return response
            remaining = (pending.deadline_ms - self.broker.now_ms()) / 1000
            if remaining <= 0:
                return pending.complete(True)
            event = self._appended
            with trio.move_on_after(remaining):
                await event.wait()

    async def _handle(self, stream: trio.SocketStream) -> None:
        conn = Connection(self, stream, next(self._ids))
        log.info("connection %d from %s", conn.info.id, conn.info.peer)
        await conn.serve()

    async def _retention(self) -> None:
        while True:
            await trio.sleep(self.broker.config["log.retention.check.interval.ms"] / 1000)
            self.broker.tick()

    async def serve(self, host: str = "127.0.0.1", port: int = 9092, *,
                    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED) -> None:
        listeners = await trio.open_tcp_listeners(port, host=host)
        bound_host, bound_port = listeners[0].socket.getsockname()[:2]
        self.broker.set_address(bound_host, bound_port)
        self.bootstrap_servers = f"{bound_host}:{bound_port}"
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._retention)
            await nursery.start(trio.serve_listeners, self._handle, listeners)
            task_status.started(self.bootstrap_servers)


@asynccontextmanager
async def run_broker(broker: Broker | None = None, host: str = "127.0.0.1", port: int = 0,
                     config: dict | None = None) -> AsyncIterator[Server]:
    """Run a broker inside trio code: ``async with run_broker() as server: server.bootstrap_servers``."""
    server = Server(broker or Broker(config))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve, host, port)
        yield server
        nursery.cancel_scope.cancel()
