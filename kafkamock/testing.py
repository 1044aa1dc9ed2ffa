"""Run a real kafkamock broker from synchronous code (tests, notebooks): a trio loop on a background thread.

    with start_broker() as broker:
        producer = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap_servers})
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

import trio

from kafkamock.broker import Broker
from kafkamock.server import Server


class BrokerHandle:
    """A broker running on its own thread; a context manager that stops it on exit."""

    def __init__(self, config: Mapping[str, object] | None = None, host: str = "127.0.0.1", port: int = 0):
        self.broker = Broker(config)
        self.server = Server(self.broker)
        self._host, self._port = host, port
        self._ready = threading.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._cancel: trio.CancelScope | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="kafkamock-broker", daemon=True)

    @property
    def bootstrap_servers(self) -> str:
        return self.server.bootstrap_servers

    def _run(self) -> None:
        async def main() -> None:
            self._token = trio.lowlevel.current_trio_token()
            with trio.CancelScope() as scope:
                self._cancel = scope
                async with trio.open_nursery() as nursery:
                    await nursery.start(self.server.serve, self._host, self._port)
                    self._ready.set()
        try:
            trio.run(main)
        except BaseException as exc:  # surfaced to the starting thread
            self._error = exc
        finally:
            self._ready.set()

    def start(self) -> BrokerHandle:
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise RuntimeError(f"kafkamock broker failed to start: {self._error}") from self._error
        return self

    def call(self, fn, *args):
        """Run ``fn(*args)`` on the broker's thread (the core is not thread-safe) and return its result."""
        assert self._token is not None

        async def run():
            return fn(*args)
        return trio.from_thread.run(run, trio_token=self._token)

    def create_topic(self, name: str, partitions: int = 1, config: Mapping[str, object] | None = None) -> None:
        from kafkamock.broker.config import TOPIC_CONFIGS, parse_value

        configs = {k: parse_value(TOPIC_CONFIGS[k], v) for k, v in (config or {}).items()}
        self.call(lambda: self.broker.cluster.create_topic(name, partitions, 1, configs))

    def stop(self) -> None:
        if self._token is not None and self._cancel is not None and self._thread.is_alive():
            trio.from_thread.run_sync(self._cancel.cancel, trio_token=self._token)
        self._thread.join(timeout=10)

    def __enter__(self) -> BrokerHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def start_broker(config: Mapping[str, object] | None = None, host: str = "127.0.0.1", port: int = 0) -> BrokerHandle:
    """Start a broker on a background thread (port 0: any free port); use as a context manager to stop it."""
    return BrokerHandle(config, host, port).start()
