"""The Kafka wire codec: messages compiled from the JSON schemas in ``schemas/``, plus request/response framing.

    >>> from kafkamock import codec
    >>> data = codec.encode("ShareAcknowledgeRequest", 2, {"group_id": "g", "member_id": "m", "is_renew_ack": True})
    >>> codec.decode("ShareAcknowledgeRequest", 2, data).is_renew_ack
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafkamock.codec.errors import (
    CodecError,
    DecodeError,
    EncodeError,
    StringTooLongError,
    UnknownMessageError,
    UnsupportedVersionError,
)
from kafkamock.codec.framing import (
    decode_request,
    decode_request_header,
    decode_response,
    encode_request,
    encode_response,
)
from kafkamock.codec.message import Message
from kafkamock.codec.registry import Codec, Registry, default_registry


def encode(name: str, version: int, value: Mapping[str, Any]) -> bytes:
    """Encode ``value`` (a mapping with snake_case keys; missing fields take their defaults) as ``name`` v``version``."""
    return default_registry().codec(name, version).encode(value)


def decode(name: str, version: int, data: bytes | bytearray | memoryview) -> Message:
    """Decode exactly one ``name`` v``version`` message from ``data``."""
    return default_registry().codec(name, version).decode(data)


def codec_for(name: str, version: int) -> Codec:
    """The compiled codec for one message version (cached)."""
    return default_registry().codec(name, version)


def api_versions(include_unstable: bool = True) -> dict[int, tuple[int, int]]:
    """{api_key: (min, max)} of every API in schemas/ (``include_unstable=False`` leaves out unstable latest)."""
    return default_registry().api_versions(include_unstable)


__all__ = [
    "Codec", "CodecError", "DecodeError", "EncodeError", "Message", "Registry", "StringTooLongError", "UnknownMessageError",
    "UnsupportedVersionError", "api_versions", "codec_for", "decode", "decode_request", "decode_request_header",
    "decode_response", "default_registry", "encode", "encode_request", "encode_response",
]
