"""Helpers for the real-client conformance tests: a wire log of what reached the broker, and polling with
deadlines (never a sleep standing in for an event).

Every test gets a fresh broker from the ``kafka_broker`` fixture (the kafkamock pytest plugin). ``wire_log``
records each request frame the broker's connections decode (API, version, client id, body, or why it was refused)
and each response body the broker encodes, so a test can assert what went over the socket, not only what the
client library reported.
"""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from support import polling

PRODUCE, FETCH, LIST_OFFSETS, METADATA, API_VERSIONS, CREATE_TOPICS, INIT_PRODUCER_ID = 0, 1, 2, 3, 18, 19, 22
DEADLINE_S = 15.0


@dataclass
class WireRequest:
    api_key: int | None
    version: int | None
    client_id: str | None
    body: Any = None
    refused: str | None = None     # why the codec refused the frame (the broker then closes the connection)


@dataclass
class WireResponse:
    api_key: int
    version: int
    correlation_id: int
    body: Any


class WireLog:
    """Requests and responses seen by every broker in this test (appended on the broker thread)."""

    def __init__(self) -> None:
        self.requests: list[WireRequest] = []
        self.responses: list[WireResponse] = []
        self._lock = threading.Lock()

    def add_request(self, item: WireRequest) -> None:
        with self._lock:
            self.requests.append(item)

    def add_response(self, item: WireResponse) -> None:
        with self._lock:
            self.responses.append(item)

    def requests_of(self, api_key: int) -> list[WireRequest]:
        with self._lock:
            return [r for r in self.requests if r.api_key == api_key]

    def responses_of(self, api_key: int) -> list[WireResponse]:
        with self._lock:
            return [r for r in self.responses if r.api_key == api_key]

    def versions(self, api_key: int, client_prefix: str | None = None) -> set[int]:
        """The versions of ``api_key`` sent, by clients whose id starts with ``client_prefix`` when given (another
        test's lingering client may reach a broker of this one: ports are reused)."""
        return {r.version for r in self.requests_of(api_key) if r.version is not None and
                (client_prefix is None or (r.client_id or "").startswith(client_prefix))}

    def refused(self) -> list[WireRequest]:
        with self._lock:
            return [r for r in self.requests if r.refused is not None]


def wait_until(condition: Callable[[], Any], timeout: float = DEADLINE_S, what: str = "condition",
               step: Callable[[], None] | None = None) -> Any:
    """``support.polling.wait_until`` with this package's default deadline."""
    return polling.wait_until(condition, timeout, what, step)


def log_end_offset(broker, topic: str, partition: int = 0) -> int:
    return broker.control.topic(topic)["partitions"][partition]["log_end_offset"]


def stored_batches(broker, topic: str, partition: int = 0) -> int:
    return len(broker.control.stored_batches(topic, partition, limit=1 << 30))


def stored_views(broker, topic: str, partition: int = 0) -> list:
    """The stored batches' headers (``records.BatchView``) of a partition, as the broker keeps them."""
    from kafkamock.records import split_batches

    views = []
    for entry in broker.control.stored_batches(topic, partition, limit=1 << 30):
        found, partial = split_batches(entry["data"])
        assert partial == 0
        views.extend(found)
    return views


# -- a raw client: frames over a plain socket ------------------------------------------------------------------

class RawClient:
    """One plain TCP connection speaking frames built with kafkamock's codec (for bad input and legacy formats)."""

    def __init__(self, bootstrap: str, timeout: float = 10.0):
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.correlation_id = 0

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> RawClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def send_frame(self, frame: bytes) -> None:
        self.sock.sendall(frame)

    def recv_exactly(self, n: int) -> bytes:
        chunks, got = [], 0
        while got < n:
            chunk = self.sock.recv(n - got)
            if not chunk:
                raise ConnectionError(f"connection closed by the broker after {got} of {n} bytes")
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def recv_frame(self) -> bytes:
        size_prefix = self.recv_exactly(4)
        (size,) = struct.unpack(">i", size_prefix)
        return size_prefix + self.recv_exactly(size)

    def send(self, api: int | str, version: int, body: dict, client_id: str | None = "raw-client") -> None:
        """Send one request without waiting for its answer (``receive`` reads it)."""
        from kafkamock import codec

        self.correlation_id += 1
        self.send_frame(codec.encode_request(api, version, self.correlation_id, client_id, body))

    def receive(self, api: int | str, version: int):
        """The decoded (header, body) of the answer to the last request sent."""
        from kafkamock import codec

        header, response = codec.decode_response(api, version, self.recv_frame())
        assert header.correlation_id == self.correlation_id
        return header, response

    def request(self, api: int | str, version: int, body: dict, client_id: str | None = "raw-client"):
        """Send one request and return the decoded (header, body) of its response."""
        self.send(api, version, body, client_id)
        return self.receive(api, version)

    def closed_by_peer(self, timeout: float = 10.0) -> bool:
        """True once the broker has closed this connection (EOF or reset), False if it sent bytes instead."""
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(1)
        except (ConnectionResetError, BrokenPipeError):
            return True
        except TimeoutError:
            raise AssertionError(f"the broker neither answered nor closed the connection within {timeout}s") from None
        return data == b""
