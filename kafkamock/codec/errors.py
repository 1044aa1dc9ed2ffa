"""Codec errors. Bad bytes raise ``DecodeError`` and nothing else; bad values raise ``EncodeError``."""

from __future__ import annotations


class CodecError(Exception):
    """Base class of every error the codec raises."""


class DecodeError(CodecError, ValueError):
    """Bytes that are not a valid message at that version: says which message, which version, and where."""

    def __init__(self, message: str, version: int | None, offset: int | None, reason: str):
        self.message_name, self.version, self.offset, self.reason = message, version, offset, reason
        at = f" at byte {offset}" if offset is not None else ""
        ver = f" v{version}" if version is not None else ""
        super().__init__(f"cannot decode {message}{ver}{at}: {reason}")


class EncodeError(CodecError, ValueError):
    """A value that cannot be written at that version: names the message, version and field."""

    def __init__(self, message: str, version: int | None, reason: str):
        self.message_name, self.version, self.reason = message, version, reason
        ver = f" v{version}" if version is not None else ""
        super().__init__(f"cannot encode {message}{ver}: {reason}")


class StringTooLongError(EncodeError):
    """A string over Kafka's 32767-byte limit: in a response, a message the broker composed around a client's
    string (Kafka cannot serialize it either, and answers the request's error response instead)."""


class UnsupportedVersionError(DecodeError, EncodeError):
    """A message version (or, in a frame, an API key) that the schemas do not define.

    It is both a DecodeError and an EncodeError, because it can stop either direction. In a request frame it
    carries what could still be read (``api_key``, ``api_version`` and, where the header decoded, ``header``),
    so a broker can answer UNSUPPORTED_VERSION the way Kafka does.
    """

    def __init__(self, message: str, version: int, reason: str, *, api_key: int | None = None,
                 header: object = None):
        self.message_name, self.version, self.offset, self.reason = message, version, None, reason
        self.api_key, self.api_version, self.header = api_key, version, header
        CodecError.__init__(self, f"{message} v{version}: {reason}")


class UnknownMessageError(CodecError, KeyError):
    """A message name, API name or API key that the loaded schemas do not define."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown message"
