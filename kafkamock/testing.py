"""Run a real kafkamock cluster from synchronous code (tests, notebooks): a trio loop on a background thread.

    with start_broker(brokers=3) as broker:
        producer = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap_servers})
        broker.control.stop_node(2)                   # the control API, run on the broker's thread
        broker.control.push_fault("Produce", "NOT_LEADER_OR_FOLLOWER", count=2)

``spark_session()`` (from ``kafkamock.spark.session``) is a local SparkSession with Spark's own Kafka connector on
its classpath, to point a pipeline's ``format("kafka")`` at ``broker.bootstrap_servers``.

Errors are loud in tests: an exception the broker catches to keep serving (a handler or a timer task that raised:
a bug, which a client sees only as a closed connection or a retry) is recorded, and under pytest the test fails
when the broker stops (``with`` block's end, or the fixtures' teardown) unless it called
``expect_internal_errors()``. A client's bad input is not an internal error: Kafka's answer to it is no bug.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from types import TracebackType
from typing import Any, TypeVar, TypeVarTuple, cast

import trio

from kafkamock.broker import Cluster
from kafkamock.broker.clock import Clock
from kafkamock.broker.control import Control
from kafkamock.server import Server
from kafkamock.server.errors import InternalError, ListenError
from kafkamock.spark.session import spark_session

R = TypeVar("R")
Ts = TypeVarTuple("Ts")


class ThreadedControl:
    """``Control``'s methods, each run on the broker's thread (the core is not thread-safe)."""

    def __init__(self, handle: BrokerHandle):
        self._handle = handle

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(Control, name, None)
        if name.startswith("_") or not inspect.isfunction(method):
            raise AttributeError(name)
        control = self._handle.cluster.control
        return lambda *args, **kwargs: self._handle.call(lambda: getattr(control, name)(*args, **kwargs))

    def __dir__(self) -> list[str]:
        return [n for n, v in vars(Control).items() if inspect.isfunction(v) and not n.startswith("_")]


class BrokerHandle:
    """A cluster running on its own thread; a context manager that stops it on exit.

    ``control`` is the control API (see ``kafkamock.broker.control.Control``); ``control_url`` its HTTP address
    when ``control_port`` was given (0: any free port). ``internal_errors`` are the bugs the broker survived (see
    the module's doc).
    """

    def __init__(self, config: Mapping[str, object] | None = None, host: str = "127.0.0.1", port: int = 0, *,
                 brokers: int = 1, data_dir: str | os.PathLike[str] | None = None, clock: Clock | None = None,
                 control_port: int | None = None):
        settings = dict(config or {})
        if data_dir is not None:
            settings["log.dirs"] = os.fspath(data_dir)
        self.cluster = Cluster(settings, clock, brokers=brokers)
        self.server = Server(self.cluster)
        # Typed as what it forwards to: Control's methods, with their signatures, run on the broker's thread.
        self.control = cast(Control, ThreadedControl(self))
        self.control_url: str | None = None
        self._internal_errors: list[InternalError] = []     # appended on the broker's thread
        self._checked = 0                                   # how many of them a check has seen
        self._errors_expected = False
        self._errors_lock = threading.Lock()
        self.server.internal_error_listeners.append(self._record)
        self._host, self._port, self._control_port = host, port, control_port
        self._ready = threading.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._cancel: trio.CancelScope | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="kafkamock-broker", daemon=True)

    @property
    def bootstrap_servers(self) -> str:
        return self.server.bootstrap_servers

    @property
    def node_id(self) -> int:
        return self.cluster.node_id

    def _run(self) -> None:
        async def main() -> None:
            self._token = trio.lowlevel.current_trio_token()
            with trio.CancelScope() as scope:
                self._cancel = scope
                async with trio.open_nursery() as nursery:
                    await nursery.start(self.server.serve, self._host, self._port)
                    if self._control_port is not None:
                        from kafkamock.server.control_http import serve_control

                        self.control_url = await nursery.start(serve_control, self.cluster.control, self._host,
                                                               self._control_port)
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
            from kafkamock.broker.config import ConfigError
            from kafkamock.server.errors import leaf

            cause = leaf(self._error, (ListenError, ConfigError))
            if cause is not None:               # a busy port, a bad listener config: that, in one line
                raise cause.with_traceback(None) from None
            inner = leaf(self._error, (Exception,)) or self._error
            raise RuntimeError(f"kafkamock broker failed to start: {inner!r}") from self._error
        return self

    def call(self, fn: Callable[[*Ts], R], *args: *Ts) -> R:
        """Run ``fn(*args)`` on the broker's thread (the core is not thread-safe) and return its result."""
        assert self._token is not None

        async def run() -> R:
            return fn(*args)
        return trio.from_thread.run(run, trio_token=self._token)

    def create_topic(self, name: str, partitions: int = 1, config: Mapping[str, object] | None = None, *,
                     replication_factor: int = 1) -> None:
        from kafkamock.broker.config import parse_topic_configs

        configs = parse_topic_configs(config)
        self.call(lambda: self.cluster.metadata.create_topic(name, partitions, replication_factor, configs))

    def produce(self, topic: str, records: Iterable[object], partition: int | None = None) -> list[dict]:
        """Seed ``topic`` without a client: ``records`` are values, or mappings with ``key``, ``value``,
        ``headers`` and ``timestamp`` (text or bytes); keyed records go where Kafka's default partitioner puts them,
        unless ``partition`` says. Returns each record's ``{"partition", "offset"}``."""
        return self.control.produce(topic, list(records), partition)

    def records(self, topic: str, partition: int | None = None, from_offset: int = 0, limit: int = 1000
                ) -> list[dict]:
        """What ``topic`` holds, decoded (``partition``, ``offset``, ``timestamp``, ``key``, ``value``,
        ``headers``), up to the high watermark, without a consumer."""
        return self.control.records(topic, partition, from_offset, limit)

    def wait_for_group(self, group_id: str, *, state: str | None = None, members: int | None = None,
                       timeout: float = 10.0) -> dict[str, Any]:
        """Wait until ``group_id`` exists (and is in ``state``, e.g. ``"Stable"``, and has ``members`` members);
        returns the group as ``control.group`` describes it. TimeoutError says what was seen last."""
        import time

        from kafkamock.broker.control import ControlError

        deadline = time.monotonic() + timeout
        seen: dict[str, Any] | None = None
        while True:
            try:
                seen = self.control.group(group_id)
            except ControlError:
                seen = None
            if seen is not None and (state is None or seen["state"].lower() == state.lower()) and (
                    members is None or len(seen["members"]) == members):
                return seen
            if time.monotonic() >= deadline:
                now = "no such group" if seen is None else f"{seen['state']} with {len(seen['members'])} members"
                want = " and ".join(w for w in (f"state {state}" if state else "",
                                                f"{members} members" if members is not None else "") if w)
                raise TimeoutError(f"group {group_id!r} not {want or 'there'} after {timeout:g} s: {now}")
            time.sleep(0.02)

    def stop(self) -> None:
        if self._token is not None and self._cancel is not None and self._thread.is_alive():
            trio.from_thread.run_sync(self._cancel.cancel, trio_token=self._token)
        self._thread.join(timeout=10)

    def __enter__(self) -> BrokerHandle:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        """Stop the broker; under pytest, fail the test for the internal errors the broker recorded
        (``fail_on_internal_errors``), or, when the block raised, add them to its exception as a note."""
        self.stop()
        if "PYTEST_CURRENT_TEST" not in os.environ:
            return
        if exc is None:
            self.fail_on_internal_errors()
            return
        errors = self.unexpected_internal_errors()
        if errors:
            exc.add_note(internal_errors_report(errors))

    # -- internal errors (loud in tests) -------------------------------------------------------------------------

    def _record(self, error: InternalError) -> None:
        with self._errors_lock:
            self._internal_errors.append(error)

    @property
    def internal_errors(self) -> list[InternalError]:
        """Every internal error the broker recorded (where, and the exception): bugs it survived."""
        with self._errors_lock:
            return list(self._internal_errors)

    def expect_internal_errors(self) -> None:
        """The test provokes internal errors on purpose (a fuzzer, a test of this very check): the next check
        passes whatever was recorded until then. The ``kafkamock_expect_internal_errors`` marker does the same for
        the pytest fixtures."""
        with self._errors_lock:
            self._errors_expected = True

    def unexpected_internal_errors(self) -> list[InternalError]:
        """A check: the internal errors recorded since the last one, unless they were expected (then none). The
        next check starts afresh (and expects nothing again), so a shared broker checks each test on its own."""
        if self._token is not None and self._thread.is_alive():
            # One round trip through the broker's thread: an error it is reporting right now (a timer that raised
            # in the step that also woke the test) is recorded before the check reads the list.
            with contextlib.suppress(trio.RunFinishedError):
                trio.from_thread.run_sync(lambda: None, trio_token=self._token)
        with self._errors_lock:
            new = self._internal_errors[self._checked:]
            self._checked = len(self._internal_errors)
            expected, self._errors_expected = self._errors_expected, False
        return [] if expected else new

    def fail_on_internal_errors(self) -> None:
        """A check that fails the running test (``pytest.fail``) for unexpected internal errors."""
        fail_for_internal_errors(self.unexpected_internal_errors())


def internal_errors_report(errors: list[InternalError]) -> str:
    """What a test that hit internal errors fails with: how many, and the first one's place and traceback."""
    return (f"the kafkamock broker hit {len(errors)} internal error(s) during this test: a bug it survived, which a "
            "client sees only as a closed connection or a retry. The first one, " + errors[0].summary() + "\n"
            "(A test that provokes them on purpose calls broker.expect_internal_errors() or is marked "
            "@pytest.mark.kafkamock_expect_internal_errors.)")


def fail_for_internal_errors(errors: list[InternalError]) -> None:
    """``pytest.fail`` with ``internal_errors_report`` (an AssertionError without pytest), when there are any."""
    if not errors:
        return
    report = internal_errors_report(errors)
    try:
        import pytest
    except ImportError:
        raise AssertionError(report) from None
    pytest.fail(report, pytrace=False)


# What start_broker (and the pytest fixtures) change from Kafka's defaults, for tests.
TEST_CONFIG: dict[str, object] = {"group.initial.rebalance.delay.ms": 0}


def start_broker(config: Mapping[str, object] | None = None, host: str = "127.0.0.1", port: int = 0, *,
                 brokers: int = 1, data_dir: str | os.PathLike[str] | None = None, clock: Clock | None = None,
                 control_port: int | None = None, kafka_version: str | None = None) -> BrokerHandle:
    """Start a cluster of ``brokers`` nodes on a background thread (port 0: free ports), in memory or, with
    ``data_dir``, on disk; use as a context manager to stop it. ``kafka_version`` ("2.8", "3.9", "4.0" ... "4.3")
    presents it as that Apache Kafka release (its ApiVersions ranges and feature levels).

    Where a test broker should not behave as a production one, ``TEST_CONFIG`` says so and ``config`` overrides
    it: classic groups rebalance as soon as their members have joined (Kafka's 3 s
    ``group.initial.rebalance.delay.ms`` would make every group test wait for nothing; Kafka's own test setups set
    0 too)."""
    config = {**TEST_CONFIG, **(config or {})}
    if kafka_version is not None:
        config = {**(config or {}), "kafkamock.kafka.version": kafka_version}
    return BrokerHandle(config, host, port, brokers=brokers, data_dir=data_dir, clock=clock,
                        control_port=control_port).start()


__all__ = ["TEST_CONFIG", "BrokerHandle", "InternalError", "ListenError", "ThreadedControl", "fail_for_internal_errors",
           "internal_errors_report", "spark_session", "start_broker"]
