"""Errors are loud in tests: an exception the broker catches to keep serving (a timer task or a handler that raised)
is recorded by the in-process broker (``BrokerHandle.internal_errors``) and fails the test that caused it when
the broker stops, unless the test expected it; the broker keeps serving meanwhile. A client's bad input is not an
internal error. The fixtures are checked through ``pytester`` (a test run inside this test)."""

from __future__ import annotations

import dataclasses
import socket
import struct
import threading
from collections.abc import Iterator

import pytest

from kafkamock import codec
from kafkamock.broker import handlers
from kafkamock.testing import BrokerHandle, start_broker

pytest_plugins = ["pytester"]

LIST_GROUPS = 16


def _raise_in_a_timer(broker: BrokerHandle) -> None:
    """Schedule a keyed timer that raises, due now, and wait until the broker's timer task has run it."""
    ran = threading.Event()

    def boom() -> None:
        ran.set()
        raise RuntimeError("boom in a timer")

    core = broker.cluster
    broker.call(lambda: core.timers.schedule(("test", "boom"), core.now_ms(), boom))
    assert ran.wait(10), "the timer never ran"


def _host_port(broker: BrokerHandle) -> tuple[str, int]:
    host, _, port = broker.bootstrap_servers.split(",")[0].rpartition(":")
    return host, int(port)


def _exchange(broker: BrokerHandle, frame: bytes) -> bytes:
    """Send one frame on a fresh connection; the response frame, or b"" when the broker closed it."""
    with socket.create_connection(_host_port(broker), timeout=10) as sock:
        sock.sendall(frame)
        head = b""
        while len(head) < 4:
            chunk = sock.recv(4 - len(head))
            if not chunk:
                return b""
            head += chunk
        (size,) = struct.unpack(">i", head)
        body = b""
        while len(body) < size:
            chunk = sock.recv(size - len(body))
            if not chunk:
                return b""
            body += chunk
        return head + body


def _list_groups(broker: BrokerHandle) -> bytes:
    return _exchange(broker, codec.encode_request("ListGroups", 4, 7, "loud-test", {"states_filter": []}))


@pytest.fixture
def failing_list_groups(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """ListGroups' declared handler raises (a handler bug) for the length of the test."""
    def boom(broker: object, request: object) -> object:
        raise KeyError("boom in a handler")

    monkeypatch.setitem(handlers.BY_KEY, LIST_GROUPS, dataclasses.replace(handlers.BY_KEY[LIST_GROUPS], handle=boom))
    yield


def test_a_timer_that_raises_is_recorded_and_the_broker_keeps_serving():
    broker = start_broker()
    try:
        _raise_in_a_timer(broker)
        assert _list_groups(broker) != b""                      # still serving
        broker.create_topic("after-the-timer")
    finally:
        broker.stop()
    (error,) = broker.internal_errors
    assert error.where == "timer ('test', 'boom')"
    assert isinstance(error.error, RuntimeError) and str(error.error) == "boom in a timer"
    assert "RuntimeError: boom in a timer" in error.summary() and "in boom" in error.summary()
    assert broker.unexpected_internal_errors() == [error]
    assert broker.unexpected_internal_errors() == []            # each check starts afresh


def test_a_handler_that_raises_closes_the_connection_is_recorded_and_the_broker_keeps_serving(failing_list_groups):
    broker = start_broker()
    try:
        assert _list_groups(broker) == b""                      # the client sees a closed connection, no more
        versions = _exchange(broker, codec.encode_request("ApiVersions", 3, 8, "loud-test", {
            "client_software_name": "t", "client_software_version": "1"}))
        assert codec.decode_response("ApiVersions", 3, versions)[1].error_code == 0
    finally:
        broker.stop()
    (error,) = broker.internal_errors
    assert error.where.startswith("ListGroups v4 on connection ") and "client loud-test" in error.where
    assert isinstance(error.error, KeyError)
    assert "KeyError: 'boom in a handler'" in error.summary()


def test_expected_internal_errors_pass_the_check():
    broker = start_broker()
    try:
        broker.expect_internal_errors()
        _raise_in_a_timer(broker)
    finally:
        broker.stop()
    assert len(broker.internal_errors) == 1
    assert broker.unexpected_internal_errors() == []


def test_bad_input_is_not_an_internal_error():
    broker = start_broker()
    try:
        garbage = struct.pack(">i", 12) + b"\x00\x03\x00\x0c" + b"\xff" * 8            # Metadata v12, truncated
        assert _exchange(broker, garbage) == b""
        unsupported = codec.encode_request("ListGroups", 4, 9, "t", {"states_filter": []})
        unsupported = unsupported[:6] + struct.pack(">h", 99) + unsupported[8:]      # ListGroups v99
        assert _exchange(broker, unsupported) == b""
        assert _list_groups(broker) != b""
    finally:
        broker.stop()
    assert broker.internal_errors == []


# -- the test that caused it fails: pytest's own run of a test file -----------------------------------------------

PROVOKING = '''
import dataclasses
import threading

import pytest

from kafkamock.broker import handlers


def raise_in_a_timer(broker):
    ran = threading.Event()

    def boom():
        ran.set()
        raise RuntimeError("boom in a timer")

    core = broker.cluster
    broker.call(lambda: core.timers.schedule("boom-timer", core.now_ms(), boom))
    assert ran.wait(10)
'''


def test_the_kafka_broker_fixture_fails_the_test_at_teardown(pytester: pytest.Pytester):
    pytester.makepyfile(PROVOKING + '''

def test_timer(kafka_broker):
    raise_in_a_timer(kafka_broker)


def test_quiet(kafka_broker):
    kafka_broker.create_topic("quiet")


@pytest.mark.kafkamock_expect_internal_errors
def test_marked(kafka_broker):
    raise_in_a_timer(kafka_broker)


def test_told(kafka_broker):
    kafka_broker.expect_internal_errors()
    raise_in_a_timer(kafka_broker)
''')
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=4, errors=1)               # test_timer passed, then failed at teardown
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_timer*",
                                 "the kafkamock broker hit 1 internal error(s) during this test*"
                                 "The first one, in timer 'boom-timer':",
                                 "RuntimeError: boom in a timer"])


def test_a_handler_error_fails_the_test_with_the_factory_and_with_start_broker(pytester: pytest.Pytester):
    pytester.makepyfile(PROVOKING + '''
import socket

from kafkamock import codec
from kafkamock.testing import start_broker


@pytest.fixture
def failing_list_groups(monkeypatch):
    def boom(broker, request):
        raise KeyError("boom in a handler")

    monkeypatch.setitem(handlers.BY_KEY, 16, dataclasses.replace(handlers.BY_KEY[16], handle=boom))


def list_groups(broker):
    host, _, port = broker.bootstrap_servers.rpartition(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(codec.encode_request("ListGroups", 4, 7, "inner", {"states_filter": []}))
        assert sock.recv(4) == b""


def test_factory(kafka_broker_factory, failing_list_groups):
    quiet, loud = kafka_broker_factory(), kafka_broker_factory()
    list_groups(loud)


def test_with_block(failing_list_groups):
    with start_broker() as broker:
        list_groups(broker)


def test_with_block_that_raises(failing_list_groups):
    with start_broker() as broker:
        list_groups(broker)
        assert False, "the test's own failure"
''')
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=2, errors=1)     # test_factory passed, then failed at teardown
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_factory*",
                                 "*in ListGroups v4 on connection * (client inner, *) to node *:*",
                                 "*KeyError: 'boom in a handler'*"])
    result.stdout.fnmatch_lines(["*_ test_with_block _*", "*the kafkamock broker hit 1 internal error(s)*"])
    result.stdout.fnmatch_lines(["*_ test_with_block_that_raises _*", "*the test's own failure*",
                                 "*the kafkamock broker hit 1 internal error(s)*"])


def test_the_session_broker_fails_only_the_test_that_caused_it(pytester: pytest.Pytester):
    pytester.makepyfile(PROVOKING + '''

def test_first(kafka_broker_session):
    kafka_broker_session.create_topic("first")


def test_provoking(kafka_broker_session):
    raise_in_a_timer(kafka_broker_session)


def test_after(kafka_broker_session):
    kafka_broker_session.create_topic("after")


@pytest.mark.kafkamock_expect_internal_errors
def test_marked(kafka_broker_session):
    raise_in_a_timer(kafka_broker_session)


def test_last(kafka_broker_session):
    kafka_broker_session.create_topic("last")
''')
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=5, errors=1)
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_provoking*"])


def test_a_misspelt_response_field_fails_the_test_that_produced_it(pytester: pytest.Pytester):
    """A handler whose answer names a field the response does not have (``groupz``): the codec refuses to encode it
    (naming the field and the likely one), the client sees a closed connection, and the test that sent the request
    fails, instead of a client decoding an empty list and the test passing by luck."""
    pytester.makepyfile(PROVOKING + '''
import socket
import struct

from kafkamock import codec


def test_list_groups(kafka_broker, monkeypatch):
    def misspelt(broker, request):
        return {"throttle_time_ms": 0, "error_code": 0, "groupz": []}

    monkeypatch.setitem(handlers.BY_KEY, 16, dataclasses.replace(handlers.BY_KEY[16], handle=misspelt))
    host, port = kafka_broker.bootstrap_servers.split(",")[0].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(codec.encode_request("ListGroups", 4, 1, "misspelt", {"states_filter": []}))
        assert sock.recv(4) == b""                 # the broker closes the connection: no answer can be encoded
''')
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)             # the request "worked"; the teardown fails the test
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_list_groups*",
                                 "*EncodeError*ListGroupsResponse: unknown field 'groupz' (did you mean 'groups'?)*"])
