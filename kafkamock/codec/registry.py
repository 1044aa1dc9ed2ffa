"""The schema registry: messages by name, APIs by key or name, coordinator records by record type, and the cache of
compiled codecs."""

from __future__ import annotations

import struct
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafkamock.codec import decode_program, generator
from kafkamock.codec.diagnose import diagnose
from kafkamock.codec.errors import (
    DecodeError,
    EncodeError,
    StringTooLongError,
    UnknownMessageError,
    UnsupportedVersionError,
)
from kafkamock.codec.message import Message
from kafkamock.schema import COORDINATOR_TYPES, MessageSpec, SchemaSet, load_schemas

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schemas"

# Names a KIP page uses for an API that shipped under another name (see docs/architecture.md).
API_ALIASES = {"DescribeTransactionState": "DescribeTransactions"}

_ENCODE_FAILURES = (struct.error, TypeError, AttributeError, ValueError, OverflowError, UnicodeEncodeError)


_BUILDING = threading.RLock()
"""Held while a codec compiles one of its halves: a codec's halves share its compiler's table of constants."""


class Codec:
    """One message at one version, each half compiled on its first use.

    A broker decodes requests and encodes responses, a client the reverse: neither ever needs the other two halves,
    and compiling one is most of what a codec's first use costs (a FetchResponse's encoder is 440 generated lines).
    Where the compiled decoder takes a message, its generated Python twin (what it hands anything unusual to) is
    compiled only when first needed too."""

    __slots__ = ("spec", "name", "version", "decode_from", "encode_into", "decode", "_compiler", "_decoder",
                 "_python", "_encoder", "_sources")

    def __init__(self, spec: MessageSpec, version: int, classes: Mapping[tuple[str, str], type] | None = None):
        self.spec, self.name, self.version = spec, spec.name, version
        self._compiler = generator.Compiler(spec, version, classes)
        self._decoder: generator.DecodeFrom | None = None
        self._python: generator.DecodeFrom | None = None
        self._encoder: generator.EncodeInto | None = None
        self._sources: dict[str, str] = {}
        # Until its half is compiled, each of these three compiles it, takes its place and runs it.
        # decode_from(data, pos, mv=None) -> (message, end). With ``mv``, a memoryview of ``data``, records fields
        # come back as slices of it (no copy, and writable when ``data`` is a bytearray).
        self.decode_from: generator.DecodeFrom = self._first_decode_from
        # decode(data) -> message: exactly one message, trailing bytes are an error (compiled where it can be).
        self.decode: Callable[[bytes | bytearray | memoryview], Message] = self._first_decode
        self.encode_into: generator.EncodeInto = self._first_encode_into

    def decoder(self) -> generator.DecodeFrom:
        """The decoder, compiled now if it was not yet: the compiled one where the message's shape allows (its
        Python twin behind it, compiled when first needed), the generated Python one otherwise."""
        with _BUILDING:
            if self._decoder is None:
                lazy_python = self._python_decode_from
                decoder = decode_program.with_compiled(self._compiler, lazy_python)
                if decoder is lazy_python:           # no compiled road for this message: Python, directly
                    decoder = self.python_decoder()
                self.decode = decode_program.whole(decoder, self._decode)
                self.decode_from = self._decoder = decoder
            return self._decoder

    def python_decoder(self) -> generator.DecodeFrom:
        """The generated Python decoder (the reference the compiled one is checked against), compiled now if it was
        not yet."""
        with _BUILDING:
            if self._python is None:
                self._python, self._sources["decode"] = generator.build_decoder(self._compiler)
            return self._python

    def encoder(self) -> generator.EncodeInto:
        """The generated encoder, compiled now if it was not yet."""
        with _BUILDING:
            if self._encoder is None:
                self._encoder, self._sources["encode"] = generator.build_encoder(self._compiler)
                self.encode_into = self._encoder
            return self._encoder

    @property
    def decoder_source(self) -> str:
        self.python_decoder()
        return self._sources["decode"]

    @property
    def encoder_source(self) -> str:
        self.encoder()
        return self._sources["encode"]

    def _first_decode_from(self, data: bytes | bytearray, pos: int, mv: memoryview | None = None, /
                           ) -> tuple[Message, int]:
        return self.decoder()(data, pos, mv)

    def _first_decode(self, data: bytes | bytearray | memoryview) -> Message:
        self.decoder()
        return self.decode(data)

    def _first_encode_into(self, value: Mapping[str, Any], out: bytearray, big: generator.Blobs | None = None, /
                           ) -> bytearray:
        return self.encoder()(value, out, big)

    def _python_decode_from(self, data: bytes | bytearray, pos: int, mv: memoryview | None = None, /
                            ) -> tuple[Message, int]:
        """What the compiled decoder hands a message it does not take: the Python decoder, compiled on first need."""
        python = self._python if self._python is not None else self.python_decoder()
        return python(data, pos, mv)

    def _decode(self, data: bytes | bytearray | memoryview) -> Message:
        """Decode exactly one message: trailing bytes are an error."""
        if type(data) is not bytes:
            data = bytes(data)
        message, end = self.decode_from(data, 0)
        if end == len(data):
            return message
        raise DecodeError(self.name, self.version, end, f"{len(data) - end} trailing bytes after the message")

    def encode(self, value: Mapping[str, Any]) -> bytes:
        out = bytearray()
        big: generator.Blobs = []
        self.write(value, out, big)
        return generator.join_blobs(out, big)

    def write(self, value: Mapping[str, Any], out: bytearray, big: generator.Blobs | None = None) -> bytearray:
        """Append the encoded message to ``out``; on a bad value, name the field at fault.

        With a ``big`` list, large bytes/records values are not copied into ``out`` but listed as
        ``(offset, data)`` for ``generator.join_blobs`` to splice in.
        """
        try:
            return self.encode_into(value, out, big)
        except StringTooLongError:
            raise                   # named already, and its kind matters to a broker (Kafka's error response)
        except _ENCODE_FAILURES as exc:
            fallback = exc.reason if isinstance(exc, EncodeError) else f"{type(exc).__name__}: {exc}"
            reason = diagnose(self.spec, self.version, value) or fallback
            raise EncodeError(self.name, self.version, reason) from None

    def __repr__(self) -> str:
        return f"<Codec {self.name} v{self.version}>"


@dataclass(frozen=True, slots=True)
class Exchange:
    """One API at one version as it crosses a connection: the codecs of the request's header and body and of the
    response's, looked up once (a broker frames every request and response with them)."""

    api_key: int
    version: int
    api_name: str
    request_header: Codec
    request: Codec
    response_header: Codec
    response: Codec


class Registry:
    """Messages loaded from one schema directory, with their codecs compiled on first use.

    Coordinator records (``"type": "coordinator-key"``/``"coordinator-value"``, e.g. the group coordinator's
    ``__consumer_offsets`` records) are coded like any message and also found by record type (their ``apiKey``):
    ``coordinator_records`` is ``{record_type: (key_name, value_name)}`` and ``coordinator_record(1)`` gives the
    ``(key, value)`` specs of OffsetCommit. Kafka writes such a record's key as the int16 record type, then the key
    struct at version 0; its value as an int16 version, then the value struct at that version (null: a tombstone).
    """

    def __init__(self, schemas: SchemaSet, classes: Mapping[tuple[str, str], type] | None = None):
        """``classes``: (message, struct) -> the class a decoded struct is built as (kafkamock.codec.messages for
        kafkamock's own schemas; plain ``Message`` for another directory's)."""
        self.schemas = schemas
        self.classes = classes
        self._codecs: dict[tuple[str, int], Codec] = {}
        self._exchanges: dict[tuple[int, int], Exchange] = {}
        self.requests: dict[int, MessageSpec] = {}
        self.responses: dict[int, MessageSpec] = {}
        self._api_names: dict[str, int] = {}
        self.api_names: dict[int, str] = {}          # api key -> API name (ShareFetch)
        self._coordinator: dict[str, dict[int, MessageSpec]] = {t: {} for t in COORDINATOR_TYPES}
        for spec in schemas:
            if spec.record_type is not None:
                self._coordinator[spec.type][spec.record_type] = spec
            if spec.api_key is None or spec.type not in ("request", "response"):
                continue
            (self.requests if spec.type == "request" else self.responses)[spec.api_key] = spec
            self._api_names[spec.api_name] = spec.api_key
            self.api_names[spec.api_key] = spec.api_name
        keys, values = self._coordinator["coordinator-key"], self._coordinator["coordinator-value"]
        self.coordinator_records: dict[int, tuple[str, str]] = {
            t: (keys[t].name, values[t].name) for t in sorted(keys.keys() & values.keys())
        }
        """{record_type: (key schema name, value schema name)} for every record type with both a key and a value."""
        for alias, target in API_ALIASES.items():
            if target in self._api_names:
                self._api_names.setdefault(alias, self._api_names[target])

    @classmethod
    def from_directory(cls, path: str | Path) -> Registry:
        """A registry over any directory of Kafka schema files (ours, or an upstream release's)."""
        return cls(load_schemas(path))

    def message(self, name: str) -> MessageSpec:
        try:
            return self.schemas[name]
        except KeyError:
            raise UnknownMessageError(f"unknown message {name!r}") from None

    def codec(self, name: str, version: int) -> Codec:
        codec = self._codecs.get((name, version))
        if codec is None:
            spec = self.message(name)
            if not isinstance(version, int) or version not in spec.codec_versions:
                raise UnsupportedVersionError(
                    name, version, f"unsupported version (valid versions: {spec.codec_versions})",
                    api_key=spec.api_key,
                )
            codec = self._codecs[(name, version)] = Codec(spec, version, self.classes)
        return codec

    def exchange(self, api_key: int, version: int) -> Exchange:
        """The codecs of API ``api_key`` at ``version`` (cached); an unknown API or version raises
        UnknownMessageError or UnsupportedVersionError as ``codec`` does."""
        exchange = self._exchanges.get((api_key, version))
        if exchange is None:
            request, response = self.request(api_key), self.response(api_key)
            exchange = self._exchanges[(api_key, version)] = Exchange(
                api_key, version, request.api_name,
                self.codec("RequestHeader", request.header_version(version)), self.codec(request.name, version),
                self.codec("ResponseHeader", response.header_version(version)), self.codec(response.name, version))
        return exchange

    def api_key(self, api: int | str) -> int:
        """Resolve an API given as a key (``78``) or a name (``"ShareFetch"``, ``"ShareFetchRequest"``)."""
        if isinstance(api, int) and not isinstance(api, bool):
            if api in self.requests or api in self.responses:
                return api
        elif isinstance(api, str):
            for suffix in ("Request", "Response"):
                if api.endswith(suffix) and api[: -len(suffix)] in self._api_names:
                    return self._api_names[api[: -len(suffix)]]
            if api in self._api_names:
                return self._api_names[api]
        raise UnknownMessageError(f"unknown API {api!r}")

    def request(self, api: int | str) -> MessageSpec:
        key = self.api_key(api)
        if key not in self.requests:
            raise UnknownMessageError(f"API {api!r} has no request schema")
        return self.requests[key]

    def response(self, api: int | str) -> MessageSpec:
        key = self.api_key(api)
        if key not in self.responses:
            raise UnknownMessageError(f"API {api!r} has no response schema")
        return self.responses[key]

    def coordinator_record(self, record_type: int) -> tuple[MessageSpec, MessageSpec]:
        """The (key, value) schemas of a coordinator record type, e.g. 1 -> (OffsetCommitKey, OffsetCommitValue)."""
        names = self.coordinator_records.get(record_type) if isinstance(record_type, int) else None
        if names is None:
            raise UnknownMessageError(f"unknown coordinator record type {record_type!r}")
        return self.schemas[names[0]], self.schemas[names[1]]

    def api_versions(self, include_unstable: bool = True) -> dict[int, tuple[int, int]]:
        """{api_key: (min, max)} for every request in the schemas; optionally without unstable latest versions."""
        out = {}
        for key, spec in sorted(self.requests.items()):
            valid = spec.valid_versions
            if valid.empty:
                continue
            high = valid.highest
            if spec.latest_version_unstable and not include_unstable:
                high -= 1
            if high >= valid.lowest:
                out[key] = (valid.lowest, high)
        return out


_default: Registry | None = None


def default_registry() -> Registry:
    """The registry over kafkamock's own ``schemas/``, loaded once."""
    global _default
    if _default is None:
        from kafkamock.codec.messages import STRUCTS

        _default = Registry(load_schemas(SCHEMA_DIR), STRUCTS)
    return _default
