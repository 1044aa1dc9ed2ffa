"""One connection to a broker: typed requests out, responses matched by correlation id, pipelined.

Versions are negotiated with ApiVersions on connect; ``request`` picks the highest version both sides speak.
"""

from __future__ import annotations

import itertools
import random
import ssl
import struct
from collections.abc import Mapping
from typing import Any

import trio

from kafkamock.client.errors import KafkaError
from kafkamock.client.security import Security
from kafkamock.codec import DecodeError, Message, decode_response, default_registry, encode_request

_SIZE = struct.Struct(">i")
API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE = 18, 17, 36


PLAINTEXT = Security()


class KafkaConnectionError(ConnectionError):
    """The connection failed or closed; pending requests fail with it."""


class KafkaConnection:
    def __init__(self, stream: trio.abc.Stream, client_id: str | None):
        self.stream = stream
        self.client_id = client_id
        self.versions: dict[int, tuple[int, int]] = {}
        self._correlation = itertools.count(1)
        self._waiting: dict[int, tuple[int, int, trio.MemorySendChannel[Message | BaseException]]] = {}
        self._send_lock = trio.Lock()
        self._closed: BaseException | None = None
        # KIP-368: a broker that gives the SASL session a lifetime closes the connection when it ends, unless the
        # client authenticates again first. Requests wait at the gate while that runs on the same connection.
        self._security: Security = PLAINTEXT
        self._where = ""
        self._reauth_at: float | None = None
        self._gate = trio.Event()
        self._gate.set()
        self._in_flight = 0
        self._drained = trio.Event()
        self._drained.set()

    @classmethod
    async def connect(cls, nursery: trio.Nursery, host: str, port: int, *, client_id: str | None = "kafkamock",
                      security: Security | None = None) -> KafkaConnection:
        """Connect, with TLS when ``security`` asks for it, negotiate versions, then authenticate (SASL)."""
        security = security or PLAINTEXT
        try:
            stream: trio.abc.Stream = await trio.open_tcp_stream(host, port)
        except OSError as exc:
            raise KafkaConnectionError(f"cannot connect to {host}:{port}: {exc}") from None
        if security.tls:
            assert security.ssl_context is not None
            tls = trio.SSLStream(stream, security.ssl_context, server_hostname=host)
            try:
                await tls.do_handshake()
            except (trio.BrokenResourceError, ssl.SSLError, OSError) as exc:
                await stream.aclose()
                cause = exc.__cause__ or exc
                raise KafkaConnectionError(f"TLS handshake with {host}:{port} failed: {cause}") from None
            stream = tls
        conn = cls(stream, client_id)
        nursery.start_soon(conn._read_loop)
        try:
            await conn._negotiate()
            if security.sasl:
                await conn._authenticate(security, f"{host}:{port}")
        except BaseException:
            await conn.aclose()
            raise
        return conn

    async def _authenticate(self, security: Security, where: str) -> None:
        """SaslHandshake v1, then SaslAuthenticate until the mechanism's exchange is complete (Java's
        SaslClientAuthenticator). A refusal is SASL_AUTHENTICATION_FAILED or UNSUPPORTED_SASL_MECHANISM, fatal."""
        handshake = await self.request("SaslHandshake", {"mechanism": security.mechanism}, version=1)
        if handshake.error_code:
            raise KafkaError(handshake.error_code, f"the broker does not enable {security.mechanism} (enabled: "
                             f"{', '.join(handshake.mechanisms) or 'none'})", what=f"SASL handshake with {where}")
        exchange = security.exchange()
        token: bytes | None = exchange.first()
        lifetime_ms = 0
        while token is not None:
            answer = await self.request("SaslAuthenticate", {"auth_bytes": token})
            if answer.error_code:
                raise KafkaError(answer.error_code, answer.error_message,
                                 what=f"SASL {security.mechanism} authentication with {where}")
            lifetime_ms = getattr(answer, "session_lifetime_ms", 0) or 0
            try:
                token = exchange.answer(bytes(answer.auth_bytes or b""))
            except Exception as exc:       # e.g. a SCRAM server signature that does not match
                raise KafkaError(58, str(exc), what=f"SASL {security.mechanism} authentication with {where}") from None
        self._security, self._where = security, where
        # As Java's client: authenticate again at a random point between 85% and 95% of the session's lifetime.
        self._reauth_at = (trio.current_time() + lifetime_ms / 1000 * random.uniform(0.85, 0.95)
                           if lifetime_ms > 0 else None)

    async def _reauthenticate(self) -> None:
        """Close the gate, let the requests in flight finish, authenticate again, open the gate."""
        if not self._gate.is_set():
            await self._gate.wait()
            return
        self._gate = trio.Event()
        try:
            await self._drained.wait()
            await self._authenticate(self._security, self._where)
        finally:
            self._gate.set()

    async def _negotiate(self) -> None:
        ours = default_registry().api_versions(include_unstable=False)
        response = await self.request("ApiVersions", {"client_software_name": "kafkamock",
                                                      "client_software_version": "0.1.0"}, version=3)
        if response.error_code == 35:  # the broker only speaks an older ApiVersions: it answered in v0
            response = await self.request("ApiVersions", {}, version=0)
        if response.error_code:
            raise KafkaConnectionError(f"ApiVersions failed with error {response.error_code}")
        for k in response.api_keys:
            if k.api_key in ours:
                low, high = max(k.min_version, ours[k.api_key][0]), min(k.max_version, ours[k.api_key][1])
                if low <= high:
                    self.versions[k.api_key] = (low, high)

    def version_for(self, api: int | str) -> int:
        key = default_registry().api_key(api)
        if key == API_VERSIONS and not self.versions:
            return 3
        if key not in self.versions:
            raise KafkaConnectionError(f"the broker does not support {default_registry().request(key).api_name}")
        return self.versions[key][1]

    async def request(self, api: int | str, body: Mapping[str, Any], *, version: int | None = None,
                      expect_response: bool = True) -> Message:
        """Send a request and wait for its response (``expect_response=False``: e.g. acks=0 produce)."""
        if self._closed is not None:
            raise KafkaConnectionError(f"connection closed: {self._closed}")
        key = default_registry().api_key(api)
        if key not in (SASL_HANDSHAKE, SASL_AUTHENTICATE):
            if self._reauth_at is not None and trio.current_time() >= self._reauth_at:
                await self._reauthenticate()
            elif not self._gate.is_set():
                await self._gate.wait()
        version = self.version_for(key) if version is None else version
        correlation_id = next(self._correlation)
        frame = encode_request(key, version, correlation_id, self.client_id, body)
        if not expect_response:
            async with self._send_lock:
                await self.stream.send_all(frame)
            return Message()
        send, receive = trio.open_memory_channel[Message | BaseException](1)
        self._waiting[correlation_id] = (key, version, send)
        self._in_flight += 1
        if self._drained.is_set():
            self._drained = trio.Event()
        try:
            async with self._send_lock:
                await self.stream.send_all(frame)
            result = await receive.receive()
        finally:
            self._in_flight -= 1
            if not self._in_flight:
                self._drained.set()
        if isinstance(result, BaseException):
            raise result
        return result

    async def _read_loop(self) -> None:
        buffer = bytearray()
        try:
            while True:
                while len(buffer) < 8 or len(buffer) < 4 + _SIZE.unpack_from(buffer, 0)[0]:
                    chunk = await self.stream.receive_some(65536)
                    if not chunk:
                        raise KafkaConnectionError("the broker closed the connection")
                    buffer += chunk
                size = _SIZE.unpack_from(buffer, 0)[0]
                frame = bytes(buffer[:4 + size])
                del buffer[:4 + size]
                (correlation_id,) = _SIZE.unpack_from(frame, 4)
                waiting = self._waiting.pop(correlation_id, None)
                if waiting is None:
                    raise KafkaConnectionError(f"response with unknown correlation id {correlation_id}")
                key, version, send = waiting
                try:
                    if key == API_VERSIONS and len(frame) >= 10 and frame[8:10] == b"\x00\x23":
                        version = 0  # UNSUPPORTED_VERSION comes back as ApiVersions v0
                    _, body = decode_response(key, version, frame)
                    send.send_nowait(body)
                except DecodeError as exc:
                    send.send_nowait(exc)
        except (KafkaConnectionError, trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            self._fail(exc if isinstance(exc, KafkaConnectionError) else KafkaConnectionError(str(exc)))

    def _fail(self, exc: BaseException) -> None:
        self._closed = exc
        for _, _, send in self._waiting.values():
            send.send_nowait(exc)
        self._waiting.clear()

    async def aclose(self) -> None:
        self._fail(KafkaConnectionError("closed by the client"))
        await self.stream.aclose()
