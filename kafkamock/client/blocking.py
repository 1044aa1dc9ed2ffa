"""Blocking faces of the trio clients, for scripts, notebooks and tools: each client runs on its own background
trio thread (as ``kafkamock.testing.start_broker`` does) and every method blocks until it is done there.

    from kafkamock.client.blocking import Consumer
    with Consumer({"bootstrap.servers": "127.0.0.1:9092", "group.id": "g"}) as consumer:
        consumer.subscribe(["orders"])
        records = consumer.poll(1.0)

The async methods of the trio client become blocking ones of the same name and arguments; its plain methods and
properties are read on the client's thread too (the clients are not thread-safe, so nothing runs elsewhere).
Callbacks (commit callbacks, rebalance listeners) run on the client's thread.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import threading
from collections.abc import Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any, ParamSpec, Self, TypeVar, overload

import trio

if TYPE_CHECKING:
    from kafkamock.client.producer import FutureRecordMetadata, RecordMetadata

P = ParamSpec("P")
R = TypeVar("R")


class _ClientThread:
    """A trio loop on a daemon thread that holds one client open until ``close``."""

    def __init__(self, make: Callable[[], Any], name: str):
        self._make = make
        self._ready = threading.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._closing: trio.Event | None = None
        self._error: BaseException | None = None
        self.client: Any = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise self._error

    def _run(self) -> None:
        async def main() -> None:
            self._token = trio.lowlevel.current_trio_token()
            self._closing = trio.Event()
            async with self._make() as client:
                self.client = client
                self._ready.set()
                await self._closing.wait()
        try:
            trio.run(main)
        except BaseException as exc:
            if not self._ready.is_set():
                self._error = exc
        finally:
            self._ready.set()

    @overload
    def call(self, fn: Callable[P, Coroutine[Any, Any, R]], *args: P.args, **kwargs: P.kwargs) -> R: ...

    @overload
    def call(self, fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R: ...

    def call(self, fn: Callable[P, Any], *args: P.args, **kwargs: P.kwargs) -> Any:
        """``fn(*args, **kwargs)`` on the client's thread, awaited there when it is a coroutine function."""
        if self._closing is None or self._closing.is_set() or not self._thread.is_alive():
            raise RuntimeError("the client is closed")
        bound = functools.partial(fn, *args, **kwargs)
        if inspect.iscoroutinefunction(fn):
            return trio.from_thread.run(bound, trio_token=self._token)
        return trio.from_thread.run_sync(bound, trio_token=self._token)

    def close(self) -> None:
        if self._closing is not None and self._thread.is_alive():
            try:
                trio.from_thread.run_sync(self._closing.set, trio_token=self._token)
            except trio.RunFinishedError:
                pass
        self._thread.join()


class _Blocking:
    """Forwards attribute access to a trio client on its own thread; async methods become blocking."""

    _client_path = ""                     # "module:Class" of the trio client

    @property
    def _client_class(self) -> Any:
        module, _, name = self._client_path.partition(":")
        return getattr(importlib.import_module(module), name)

    def __init__(self, config: Mapping[str, Any] | None = None, **kwargs: Any):
        self._thread = _ClientThread(lambda: self._client_class(config, **kwargs),
                                     f"kafkamock-{self._client_class.__name__.lower()}")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        attr = inspect.getattr_static(self._client_class, name, None)
        if attr is None and not hasattr(self._thread.client, name):
            raise AttributeError(name)
        if callable(attr) and not isinstance(attr, (property, staticmethod, classmethod)):
            method = getattr(self._thread.client, name)
            return functools.wraps(method)(lambda *a, **kw: self._thread.call(method, *a, **kw))
        return self._thread.call(getattr, self._thread.client, name)

    def __dir__(self) -> list[str]:
        return [n for n in dir(self._client_class) if not n.startswith("_")]

    def close(self) -> None:
        """Close the client (leaving its group, finishing what it must) and stop its thread."""
        self._thread.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class Consumer(_Blocking):
    """``kafkamock.client.Consumer``, blocking."""
    _client_path = "kafkamock.client.consumer:Consumer"


class ShareConsumer(_Blocking):
    """``kafkamock.client.ShareConsumer``, blocking."""
    _client_path = "kafkamock.client.share_consumer:ShareConsumer"


class BlockingRecordMetadata:
    """What the blocking ``Producer.send`` returns: ``get(timeout_s)`` waits for the record's RecordMetadata (or
    raises its error); ``done()`` and ``result()`` read it without waiting."""

    def __init__(self, thread: _ClientThread, future: FutureRecordMetadata):
        self._thread, self._future = thread, future

    def done(self) -> bool:
        return self._thread.call(self._future.done)

    def result(self) -> RecordMetadata:
        return self._thread.call(self._future.result)

    def get(self, timeout_s: float | None = None) -> RecordMetadata:
        async def wait() -> RecordMetadata:
            with trio.fail_after(timeout_s) if timeout_s is not None else contextlib.nullcontext():
                return await self._future.get()
        return self._thread.call(wait)


class Producer(_Blocking):
    """``kafkamock.client.Producer``, blocking; ``send`` returns a BlockingRecordMetadata."""
    _client_path = "kafkamock.client.producer:Producer"

    def send(self, *args: Any, **kwargs: Any) -> BlockingRecordMetadata:
        future = self._thread.call(self._thread.client.send, *args, **kwargs)
        return BlockingRecordMetadata(self._thread, future)


class Admin(_Blocking):
    """``kafkamock.client.Admin``, blocking."""
    _client_path = "kafkamock.client.admin:Admin"
