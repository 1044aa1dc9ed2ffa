"""One client connection to one node: size-prefixed frames in, responses out, in order (Kafka serves a
connection's requests one at a time, which also keeps pipelined responses in order).

The core answers each request with an outcome: a response to encode and send, nothing (acks=0), a wait (the
connection parks until the core completes the waiter, which yields another outcome), or close-the-connection.

On a TLS listener the stream is a ``trio.SSLStream``: the handshake comes first, and the client certificate's
subject becomes the principal (SSL listeners). On a SASL listener the core keeps the exchange's state; the edge
only knows SaslHandshake v0's raw-token mode (size-prefixed tokens without Kafka headers) and that, before
authentication, frames are capped at ``sasl.server.max.receive.size``.
"""

from __future__ import annotations

import errno
import logging
import os
import ssl
import struct
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

import trio

from kafkamock.broker import Close, Cluster, Request, Respond, Wait, Waiter
from kafkamock.broker.errors import ErrorCode
from kafkamock.broker.handlers import api_versions
from kafkamock.broker.node import Node
from kafkamock.broker.outcome import NO_RESPONSE, Outcome
from kafkamock.broker.security.principal import ssl_principal
from kafkamock.broker.security.session import State
from kafkamock.codec import (
    DecodeError,
    EncodeError,
    Message,
    StringTooLongError,
    UnsupportedVersionError,
    decode_request_header,
    encode_response,
)
from kafkamock.codec.framing import encode_response_parts
from kafkamock.codec.registry import Exchange, default_registry

if TYPE_CHECKING:
    from kafkamock.server.server import Server

log = logging.getLogger("kafkamock.server")
_SIZE = struct.Struct(">i")
T = TypeVar("T")
_KEY_VERSION = struct.Struct(">hh")
# (api key, version) -> the codecs of every request already read at that version: one lookup per request.
_EXCHANGES: dict[tuple[int, int], Exchange] = {}
API_VERSIONS = 18
IOV_MAX = 1024
# A response as the buffers to send (record batches as views of the stored ones, not joined).
Buffers = list[bytes | bytearray | memoryview]
# ApiVersions answers, encoded: the handler answers with the same object while what it lists stays the same
# (handlers/api_versions.py), so each version's last answer is kept with its encoded body, some eighty APIs that
# took longer to encode than the rest of the request: version -> (that answer, its body's bytes).
_API_VERSIONS_BODIES: dict[int, tuple[object, bytes]] = {}


def encode_answer(api_key: int, version: int, correlation_id: int, body: Message) -> Buffers:
    """A response frame as buffers (``encode_response_parts``), an ApiVersions answer from its kept encoding."""
    if api_key != API_VERSIONS:
        return encode_response_parts(api_key, version, correlation_id, body)
    kept = _API_VERSIONS_BODIES.get(version)
    exchange = default_registry().exchange(api_key, version)
    if kept is None or kept[0] is not body:
        kept = _API_VERSIONS_BODIES[version] = (body, exchange.response.encode(body))
    frame = exchange.response_header.write({"correlation_id": correlation_id}, bytearray(4))
    _SIZE.pack_into(frame, 0, len(frame) - 4 + len(kept[1]))
    return [frame, kept[1]]


def read_request(frame: bytes | bytearray) -> tuple[Message, Message]:
    """Decode a request frame as Kafka's broker does: header, then body; bytes left after the body are ignored.

    Kafka never checks that a request body used the whole frame (``AbstractRequest.parseRequest`` reads the
    fields and stops), and librdkafka up to at least 2.16 relies on it: its "all topics" Metadata v9+ request
    keeps a 4-byte int32 placeholder where the compact-array null is one byte (librdkafka issue #5049), so the
    frame ends with three extra bytes. The codec's own ``decode_request`` is strict; the broker is not.
    """
    exchange = None
    if len(frame) >= 8:
        exchange = _EXCHANGES.get(_KEY_VERSION.unpack_from(frame, 4))
    if exchange is None:                     # not seen yet, or not an API and version the codec knows
        header, _ = decode_request_header(frame)
        exchange = _EXCHANGES[header.request_api_key, header.request_api_version] = default_registry().exchange(
            header.request_api_key, header.request_api_version)
    header, pos = exchange.request_header.decode_from(frame, 4)
    # Records come back as writable views of the frame: the broker rewrites a produced batch's header in place
    # and keeps it, so a produced byte is copied once, from the socket into the frame.
    body, end = exchange.request.decode_from(frame, pos, memoryview(frame))
    if end != len(frame):
        log.debug("ignoring %d trailing byte(s) after %s v%d (as Kafka does)", len(frame) - end,
                  exchange.request.name, header.request_api_version)
    return header, body


class ConnectionClosed(Exception):
    """The connection must end (the peer left, or sent something Kafka would hang up on)."""


class FrameReader:
    """Size-prefixed frames from a stream. Received chunks are kept as they are and a frame is assembled with one
    join (or none, when a chunk holds exactly one frame): a 100 KB produce used to be copied twice here.

    With ``receive_into`` (a plain socket), the rest of a frame that the chunks in hand do not hold is read straight
    into the frame's own buffer, so a large produce is copied once, by the kernel, instead of into 64 KB chunks and
    then joined."""

    __slots__ = ("receive", "max_size", "receive_into", "on_bytes", "chunks", "pending", "before_large")

    def __init__(self, receive: Callable[[int], Awaitable[bytes | bytearray]], max_size: int,
                 on_bytes: Callable[[], None] | None = None,
                 receive_into: Callable[[memoryview], Awaitable[int]] | None = None):
        self.receive, self.max_size = receive, max_size
        self.receive_into = receive_into
        self.on_bytes = on_bytes          # called after each received chunk (connections.max.idle.ms counts reads)
        self.chunks: list[bytes] = []
        self.pending = 0
        self.before_large: Callable[[int], None] | None = None   # told the size of a frame read into its own buffer

    async def _fill(self, n: int) -> None:
        while self.pending < n:
            self.feed(await self.receive(max(65536, n - self.pending)))

    def feed(self, chunk: bytes | bytearray) -> None:
        """A chunk read from the stream (empty: the peer closed it)."""
        if not chunk:
            raise ConnectionClosed("peer closed the connection" if not self.pending else
                                   f"peer closed the connection mid-frame ({self.pending} bytes pending)")
        self.chunks.append(bytes(chunk))  # no copy for bytes, which sockets return
        if self.on_bytes is not None:
            self.on_bytes()
        self.pending += len(chunk)

    def _take(self, n: int) -> bytearray:
        """The next ``n`` bytes as one mutable buffer (one copy): the codec's slice of a Produce request's records
        is then already a bytearray, whose header the broker rewrites in place without another copy."""
        parts: list[bytes] = []
        got = 0
        while got < n:
            chunk = self.chunks.pop(0)
            if got + len(chunk) > n:
                self.chunks.insert(0, chunk[n - got:])
                chunk = chunk[:n - got]
            parts.append(chunk)
            got += len(chunk)
        self.pending -= n
        return bytearray().join(parts)

    async def next_frame(self) -> bytearray:
        await self._fill(4)
        head = self.chunks[0] if len(self.chunks[0]) >= 4 else b"".join(self.chunks)[:4]
        (size,) = _SIZE.unpack_from(head, 0)
        if size < 0 or size > self.max_size:
            raise ConnectionClosed(f"request of {size} bytes is over socket.request.max.bytes ({self.max_size})"
                                   if size > 0 else f"invalid request size {size}")
        if self.receive_into is not None and self.pending < 4 + size:
            return await self._read_rest(4 + size)
        await self._fill(4 + size)
        return self._take(4 + size)

    async def _read_rest(self, n: int) -> bytearray:
        """A frame of ``n`` bytes of which the chunks in hand hold only the start: they are copied into the frame's
        buffer and the rest is read into it (never past the frame, so no chunk is left over)."""
        assert self.receive_into is not None
        if self.before_large is not None:
            self.before_large(n)
        frame = bytearray(n)
        have = 0
        for chunk in self.chunks:
            frame[have:have + len(chunk)] = chunk
            have += len(chunk)
        self.chunks.clear()
        self.pending = 0
        view = memoryview(frame)
        while have < n:
            got = await self.receive_into(view[have:])
            if not got:
                raise ConnectionClosed(f"peer closed the connection mid-frame ({have} bytes pending)")
            if self.on_bytes is not None:
                self.on_bytes()
            have += got
        return frame


class PlainSocket:
    """A plain TCP connection's reads and writes as non-blocking system calls on its descriptor, waiting on trio only
    when the kernel has nothing to read or no room to write.

    trio's own socket calls pass through the scheduler twice per call even when the call succeeds at once (a
    checkpoint before it, a rescheduling after it): four passes per request-and-response, about a sixth of a small
    request's cost in the broker. Here a request that is already in the buffer is read at once, and a response the
    kernel takes at once is written at once. ``yielded`` tells the connection whether the last request waited; one
    that did not yields once before the next, so a client that pipelines requests cannot starve the other
    connections. Errors are trio's: a reset or a closed peer is ``trio.BrokenResourceError``."""

    __slots__ = ("fd", "yielded")

    def __init__(self, sock: trio.socket.SocketType) -> None:
        self.fd = sock.fileno()
        self.yielded = False

    async def receive(self, max_bytes: int) -> bytes:
        return await self._when_readable(lambda: os.read(self.fd, max_bytes))

    def read_now(self, max_bytes: int) -> bytes | None:
        """What the kernel has for us now (empty: the peer closed), or None when it has nothing yet."""
        try:
            return os.read(self.fd, max_bytes)
        except BlockingIOError:
            return None
        except OSError as exc:
            raise trio.BrokenResourceError(f"socket error: {exc}") from exc

    async def receive_into(self, view: memoryview) -> int:
        return await self._when_readable(lambda: os.readv(self.fd, (view,)))

    async def _when_readable(self, read: Callable[[], T]) -> T:
        """``read()`` at once, or once the kernel has something to read."""
        while True:
            try:
                return read()
            except BlockingIOError:
                self.yielded = True
                await trio.lowlevel.wait_readable(self.fd)
            except OSError as exc:
                raise trio.BrokenResourceError(f"socket error: {exc}") from exc

    async def send(self, views: list[memoryview]) -> None:
        """Write every byte of ``views`` (scatter-gather, at most IOV_MAX buffers a call)."""
        while views:
            try:
                sent = os.writev(self.fd, views[:IOV_MAX])
            except BlockingIOError:
                self.yielded = True
                await trio.lowlevel.wait_writable(self.fd)
                continue
            except OSError as exc:
                if exc.errno == errno.EFAULT:     # a mapped segment file was truncated under the answer's records
                    raise ConnectionClosed("the records being sent were cut from their segment file (truncated "
                                           "meanwhile)") from exc
                raise trio.BrokenResourceError(f"socket error: {exc}") from exc
            while sent:
                if sent >= len(views[0]):
                    sent -= len(views.pop(0))
                else:
                    views[0] = views[0][sent:]
                    sent = 0


class Connection:
    __slots__ = ("server", "cluster", "stream", "ssl_context", "node", "cancel_scope", "info", "mute_until_ms", "plain")

    def __init__(self, server: Server, stream: trio.SocketStream, conn_id: int, node: Node, listener: str | None = None,
                 ssl_context: ssl.SSLContext | None = None):
        self.server = server
        self.cluster: Cluster = server.cluster
        self.stream: trio.abc.Stream = stream
        self.ssl_context = ssl_context
        self.node = node
        self.cancel_scope = trio.CancelScope()
        try:
            host, port = stream.socket.getpeername()[:2]
            peer = f"{host}:{port}"
        except OSError:
            peer = "?"
        self.info = self.cluster.new_connection(conn_id, peer, listener)
        self.mute_until_ms = 0       # a quota throttled the last request: read nothing more until then (KIP-219)
        self.plain = PlainSocket(stream.socket) if ssl_context is None else None

    async def _tls_handshake(self) -> None:
        """Wrap the socket in TLS; on an SSL listener the client certificate (if any) names the principal."""
        assert self.ssl_context is not None
        stream = trio.SSLStream(self.stream, self.ssl_context, server_side=True, https_compatible=True)
        self.stream = stream
        try:
            await stream.do_handshake()
        except trio.BrokenResourceError as exc:
            cause = exc.__cause__ or exc
            raise ConnectionClosed(f"TLS handshake failed: {cause}") from None
        if self.info.security_protocol == "SSL":
            self.info.principal = ssl_principal(stream.getpeercert(binary_form=True))

    async def _drain(self) -> None:
        """Before closing after a last answer (a failed SASL exchange): give the client up to a second to read it
        and hang up itself, discarding what it still sends. Closing at once (with unread input, a reset) lets some
        clients (kafka-python) see the close before the answer, and report a lost connection instead of Kafka's
        error message."""
        with trio.move_on_after(1):
            try:
                while await self.stream.receive_some(65536):
                    pass
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass

    def _max_frame(self) -> int:
        limit: int
        if self.info.sasl is not None and not self.info.sasl.complete:
            limit = self.node.config["sasl.server.max.receive.size"]
        else:
            limit = self.node.config["socket.request.max.bytes"]
        return limit

    async def serve(self) -> None:
        limits = self.cluster.connections
        plain = self.plain
        reader = FrameReader(plain.receive if plain is not None else self.stream.receive_some,
                             self.node.config["socket.request.max.bytes"], self._active,
                             plain.receive_into if plain is not None else None)
        reader.before_large = self.server.before_large_frame
        try:
            with self.cancel_scope:
                if self.ssl_context is not None:
                    await self._tls_handshake()
                    reader.receive = self.stream.receive_some    # the TLS stream from now on
                while True:
                    if plain is not None:
                        if not plain.yielded:       # pipelined requests: let the other connections in
                            await trio.lowlevel.checkpoint()
                        plain.yielded = False
                        if not reader.pending:
                            # Waited for here, at the top of the task, not four calls down in the reader: an idle
                            # connection (most of them, most of the time) then holds about 2 KB less.
                            chunk = plain.read_now(65536)
                            while chunk is None:
                                plain.yielded = True
                                await trio.lowlevel.wait_readable(plain.fd)
                                chunk = plain.read_now(65536)
                            reader.feed(chunk)
                    reader.max_size = self._max_frame()
                    frame = await reader.next_frame()
                    if self.info.sasl is not None and self.info.sasl.state is State.AUTHENTICATE_RAW:
                        await self.raw_token(frame)
                        continue
                    response, close = await self.respond(frame)
                    if response is not None:
                        await self.send(response)
                        limits.active(self.info.id)
                    if close is not None:
                        await self._drain()
                        raise ConnectionClosed(close)
                    if self.mute_until_ms > self.cluster.now_ms():
                        await self.mute()
            log.debug("connection %d from %s to node %d closed by the broker", self.info.id, self.info.peer,
                      self.node.node_id)
        except ConnectionClosed as exc:
            reason = str(exc)
            level = logging.DEBUG if reason.startswith("peer closed the connection") and "mid-frame" not in reason \
                else logging.WARNING
            log.log(level, "connection %d from %s (client %s, %s) to node %d closed: %s", self.info.id,
                    self.info.peer, self.info.client_id, self._software(), self.node.node_id, reason)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            log.debug("connection %d from %s reset by peer", self.info.id, self.info.peer)
        except Exception as exc:
            # Last line of defence: an exception escaping here would cancel trio.serve_listeners and stop the
            # whole broker (every connection and the listener); a bug must only cost this one connection.
            log.exception("connection %d from %s (client %s): unexpected error, closing it", self.info.id,
                          self.info.peer, self.info.client_id)
            self.server.internal_error(f"connection {self._describe()}", exc)
        finally:
            with trio.CancelScope(shield=True), trio.move_on_after(1):
                await self.stream.aclose()

    def _active(self) -> None:
        """A read completed (a method, not a closure: an idle connection holds one small object for it)."""
        self.cluster.connections.active(self.info.id)

    def _describe(self) -> str:
        """The connection, for an internal error's report: its id, peer, client and node."""
        return (f"{self.info.id} from {self.info.peer} (client {self.info.client_id}, {self._software()}) to node "
                f"{self.node.node_id}")

    def _software(self) -> str:
        if self.info.software_name:
            return f"{self.info.software_name} {self.info.software_version}"
        return "software unknown"

    async def raw_token(self, frame: bytearray) -> None:
        """SaslHandshake v0's raw mode: the frame is a bare SASL token, the answer a bare size-prefixed one."""
        outcome = self.cluster.sasl_raw_token(self.info, self.node, bytes(frame[4:]))
        if isinstance(outcome, Close):
            raise ConnectionClosed(outcome.reason)
        if isinstance(outcome, Respond):
            await self.stream.send_all(_SIZE.pack(len(outcome.body)) + outcome.body)

    async def send(self, parts: Buffers) -> None:
        """Send a response given as buffers with scatter-gather writes (the record batches are not joined)."""
        if self.plain is None:               # TLS encrypts one buffer at a time anyway
            await self.stream.send_all(parts[0] if len(parts) == 1 else b"".join(parts))
            return
        # Empty buffers are dropped: a non-flexible response ends right after its records, and a zero-length
        # buffer left at the end would never be "sent".
        await self.plain.send([v for v in (memoryview(p).cast("B") for p in parts) if len(v)])

    async def respond(self, frame: bytes | bytearray) -> tuple[Buffers | None, str | None]:
        """The response's buffers (None: nothing to send) and, when the connection must close after it, why."""
        try:
            header, body = read_request(frame)
        except UnsupportedVersionError as exc:
            return self.unsupported(exc), None
        except DecodeError as exc:
            raise ConnectionClosed(f"malformed request: {exc}") from None
        client_id = header.client_id
        if client_id == self.info.client_id:
            client_id = self.info.client_id     # one string a connection, not one a request (the request log keeps them)
        elif self.info.client_id is None and client_id:
            self.info.client_id = client_id
            self.server.client_seen(self.info, self.node)
        api_key, version = header.request_api_key, header.request_api_version
        served = self.cluster.supported_versions().get(api_key)
        if api_key == API_VERSIONS and served is not None and version > served[1]:
            # Above the broker's range (a broker presenting itself as an older Kafka): answered as a version the
            # codec does not know.
            return self.api_versions_fallback(header.correlation_id), None
        if served is None or not served[0] <= version <= served[1]:
            spec = default_registry().requests.get(api_key)
            name = spec.api_name if spec else api_key
            if served is None:
                raise ConnectionClosed(f"{name} v{version} is not supported by this broker")
            raise ConnectionClosed(f"{name} v{version} is not supported by this broker "
                                   f"(valid versions: {served[0]}-{served[1]})")
        request = Request(api_key, version, header.correlation_id, client_id, body, self.info, self.node,
                          size=len(frame) - 4)
        try:
            outcome = self.cluster.handle(request)
            while isinstance(outcome, Wait):
                outcome = await self.wait(outcome.waiter)
            self.mute_until_ms = request.mute_until_ms
            if isinstance(outcome, Close):
                raise ConnectionClosed(outcome.reason)
            if not isinstance(outcome, Respond):
                return None, None
            # Inside the try: a response the codec refuses (a handler bug) must end this connection only,
            # never escape into the listener's nursery and stop the whole broker.
            try:
                parts = encode_answer(api_key, version, header.correlation_id, outcome.body)
            except StringTooLongError as exc:
                # A message quoting a client's 32767-byte string outgrows Kafka's string limit: Kafka cannot
                # serialize such a response either and answers the request's error response instead.
                name = default_registry().requests[api_key].api_name
                log.warning("the response to %s v%d from %s (client %s) cannot be encoded (%s): answering "
                            "UNKNOWN_SERVER_ERROR, as Kafka does", name, version, self.info.peer, header.client_id, exc)
                try:
                    parts = encode_response_parts(api_key, version, header.correlation_id,
                                                  self.cluster.unencodable(request))
                except EncodeError:
                    raise ConnectionClosed(f"no response to {name} v{version} can be encoded") from None
            return parts, outcome.close
        except (ConnectionClosed, trio.Cancelled):
            raise
        except Exception as exc:
            spec = default_registry().requests[api_key]
            log.exception("error handling %s v%d from %s (client %s)", spec.api_name, version, self.info.peer,
                          header.client_id)
            self.server.internal_error(f"{spec.api_name} v{version} on connection {self._describe()}", exc)
            raise ConnectionClosed(f"internal error handling {spec.api_name} v{version}") from None

    async def wait(self, waiter: Waiter) -> Outcome:
        """Park until the core completes ``waiter`` (an append, its deadline); forget it if the connection goes."""
        if waiter.done and waiter.result is not None:
            return waiter.result
        done = trio.Event()
        waiter.on_done = lambda outcome: done.set()
        self.cluster.connections.busy(self.info.id, True)
        try:
            await done.wait()
        except BaseException:
            self.cluster.cancel(waiter)
            raise
        finally:
            self.cluster.connections.busy(self.info.id, False)
        assert waiter.result is not None
        return waiter.result

    async def mute(self) -> None:
        """Read nothing until the quota's throttle ends: a deadline on the core's clock (Kafka mutes the channel)."""
        deadline, self.mute_until_ms = self.mute_until_ms, 0
        await self.wait(self.cluster.wait((), deadline, lambda final: NO_RESPONSE if final else None))

    def api_versions_fallback(self, correlation_id: int) -> Buffers:
        """KIP-511: UNSUPPORTED_VERSION in a v0 body listing what the broker serves, from which the client picks a
        version both know."""
        body = {"error_code": ErrorCode.UNSUPPORTED_VERSION, "api_keys": api_versions.supported(self.cluster)}
        return [encode_response(API_VERSIONS, 0, correlation_id, body)]

    def unsupported(self, exc: UnsupportedVersionError) -> Buffers:
        """What Kafka does: ApiVersions of an unknown version gets a v0 answer listing what we support;
        any other unknown API or version closes the connection."""
        header = exc.header
        if exc.api_key == API_VERSIONS and isinstance(header, dict):
            return self.api_versions_fallback(header["correlation_id"])
        raise ConnectionClosed(f"unsupported request: {exc}")
