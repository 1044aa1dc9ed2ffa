"""Request and response frames: a 4-byte size prefix, the header at the version the API dictates, the body.

The header version follows Kafka's rule (request header 2 / response header 1 in flexible versions, 1 / 0
otherwise) unless the message's schema overrides it with ``headerVersions`` (ApiVersionsResponse is always
framed with response header v0, so that any client can read it).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Any

from kafkamock.codec.errors import DecodeError, UnsupportedVersionError
from kafkamock.codec.generator import Blobs, blob_parts, join_blobs
from kafkamock.codec.message import Message
from kafkamock.codec.registry import Codec, Registry, default_registry
from kafkamock.schema import MessageSpec

_SIZE = struct.Struct(">i")
_KEY_VERSION = struct.Struct(">hh")


def encode_request(api: int | str, version: int, correlation_id: int, client_id: str | None,
                   body: Mapping[str, Any], *, registry: Registry | None = None) -> bytes:
    """A size-prefixed request frame."""
    reg = registry or default_registry()
    spec = reg.request(api)
    header = {"request_api_key": spec.api_key, "request_api_version": version, "correlation_id": correlation_id,
              "client_id": client_id}
    return join_blobs(*_frame(reg, "RequestHeader", spec, version, header, body))


def encode_response(api: int | str, version: int, correlation_id: int, body: Mapping[str, Any], *,
                    registry: Registry | None = None) -> bytes:
    """A size-prefixed response frame."""
    reg = registry or default_registry()
    return join_blobs(*_frame(reg, "ResponseHeader", reg.response(api), version, {"correlation_id": correlation_id},
                              body))


def encode_response_parts(api: int | str, version: int, correlation_id: int, body: Mapping[str, Any], *,
                          registry: Registry | None = None) -> list[bytes | bytearray | memoryview]:
    """The same frame as a list of buffers (record batches are not copied): for scatter-gather sends."""
    reg = registry or default_registry()
    if type(api) is int:       # a broker's path: the API's codecs in one lookup
        exchange = reg.exchange(api, version)
        return blob_parts(*_framed(exchange.response_header, exchange.response, {"correlation_id": correlation_id},
                                   body))
    return blob_parts(*_frame(reg, "ResponseHeader", reg.response(api), version, {"correlation_id": correlation_id},
                              body))


def _frame(reg: Registry, header_name: str, spec: MessageSpec, version: int, header: Mapping[str, Any],
           body: Mapping[str, Any]) -> tuple[bytearray, Blobs]:
    return _framed(reg.codec(header_name, spec.header_version(version)), reg.codec(spec.name, version), header, body)


def _framed(header_codec: Codec, body_codec: Codec, header: Mapping[str, Any], body: Mapping[str, Any]
            ) -> tuple[bytearray, Blobs]:
    out = bytearray(4)
    big: Blobs = []
    header_codec.write(header, out)
    body_codec.write(body, out, big)
    _SIZE.pack_into(out, 0, len(out) - 4 + sum(len(data) for _, data in big))
    return out, big


def _payload(frame: bytes | bytearray | memoryview, what: str) -> bytes | bytearray:
    data = frame if isinstance(frame, bytes | bytearray) else bytes(frame)  # the decoders read either
    if len(data) < 4:
        raise DecodeError(what, None, 0, "frame is shorter than its 4-byte size prefix")
    (size,) = _SIZE.unpack_from(data, 0)
    if size != len(data) - 4:
        raise DecodeError(what, None, 0, f"size prefix says {size} bytes but {len(data) - 4} follow")
    return data


def decode_request_header(frame: bytes | bytearray | memoryview, *,
                          registry: Registry | None = None) -> tuple[Message, int]:
    """Decode a request frame's header; returns (header, offset of the body in the frame).

    An unknown API key or a version outside the schema raises UnsupportedVersionError carrying the header
    whenever it could be read, as a broker needs it to answer.
    """
    reg = registry or default_registry()
    data = _payload(frame, "RequestHeader")
    if len(data) < 8:
        raise DecodeError("RequestHeader", None, 4, "truncated: the header ends early")
    api_key, version = _KEY_VERSION.unpack_from(data, 4)
    spec = reg.requests.get(api_key)
    if spec is None:
        header = _best_effort_header(reg, data, 1)
        raise UnsupportedVersionError("RequestHeader", version, f"unknown API key {api_key}", api_key=api_key,
                                      header=header)
    header_version = spec.header_version(version)
    if version not in spec.codec_versions:
        header = _best_effort_header(reg, data, header_version)
        raise UnsupportedVersionError(spec.name, version,
                                      f"unsupported version (valid versions: {spec.codec_versions})",
                                      api_key=api_key, header=header)
    return reg.codec("RequestHeader", header_version).decode_from(data, 4)


def _best_effort_header(reg: Registry, data: bytes | bytearray, header_version: int) -> Message | None:
    try:
        return reg.codec("RequestHeader", header_version).decode_from(data, 4)[0]
    except DecodeError:
        return None


def decode_request(frame: bytes | bytearray | memoryview, *,
                   registry: Registry | None = None) -> tuple[Message, Message]:
    """Decode a size-prefixed request frame into (header, body)."""
    reg = registry or default_registry()
    data = frame if type(frame) is bytes else bytes(frame)
    header, pos = decode_request_header(data, registry=reg)
    spec = reg.requests[header.request_api_key]
    body_codec = reg.codec(spec.name, header.request_api_version)
    body, end = body_codec.decode_from(data, pos)
    if end != len(data):
        raise DecodeError(spec.name, body_codec.version, end, f"{len(data) - end} trailing bytes after the message")
    return header, body


def decode_response(api: int | str, version: int, frame: bytes | bytearray | memoryview, *,
                    registry: Registry | None = None) -> tuple[Message, Message]:
    """Decode a size-prefixed response frame of a known API and version into (header, body)."""
    reg = registry or default_registry()
    spec = reg.response(api)
    body_codec = reg.codec(spec.name, version)
    data = _payload(frame, spec.name)
    header, pos = reg.codec("ResponseHeader", spec.header_version(version)).decode_from(data, 4)
    body, end = body_codec.decode_from(data, pos)
    if end != len(data):
        raise DecodeError(spec.name, version, end, f"{len(data) - end} trailing bytes after the message")
    return header, body
