"""Kafka's wire primitives as ``construct`` constructs, and compiled messages as constructs too.

Use these to describe Kafka-adjacent layouts declaratively (the record-batch layer does), or to embed a whole
Kafka message in a construct ``Struct``:

    >>> from construct import Struct, Int32sb
    >>> frame = Struct("correlation_id" / Int32sb, "body" / MessageConstruct("ApiVersionsResponse", 3))

Every primitive implements construct's compiler hooks (``_emitparse``/``_emitbuild``), so a ``Struct`` made of
them can be ``.compile()``d; ``MessageConstruct`` delegates to the codec's generated functions, which are
already specialised per version (see ``kafkamock.codec.generator``).
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import IO, Any, Protocol

from construct import Construct, ConstructError, StreamError, Subconstruct, stream_read, stream_tell, stream_write

from kafkamock.codec.errors import CodecError
from kafkamock.codec.message import Message
from kafkamock.codec.registry import Registry, default_registry
from kafkamock.codec.varint import VarintError, checked_zigzag_bytes, uvarint_bytes


class KafkaConstructError(ConstructError):
    """A construct-level parse/build failure (wraps what the codec reports)."""


Context = Any
"""construct's context (a ``Container`` chained to its parents): dynamic, whatever the enclosing ``Struct`` holds."""

Stream = IO[bytes]
"""What construct parses from and builds into (a ``BytesIO``, or a file)."""


TaggedItems = Iterable[tuple[int, bytes | bytearray | memoryview]]
"""A tagged-field section to build: ``(tag, data)`` pairs in any order."""


class CodeGen(Protocol):
    """What the ``_emitparse``/``_emitbuild`` hooks use of construct's code generator (``construct.core.CodeGen``)."""

    linkedinstances: dict[int, Construct]

    def append(self, block: str) -> None: ...


def read_uvarint_io(io: Stream) -> int:
    """An unsigned varint from a stream (the interpreted and the compiled constructs both use this)."""
    value = shift = 0
    while True:
        b = io.read(1)
        if not b:
            raise StreamError("stream read less than specified amount, expected 1, found 0")
        value |= (b[0] & 0x7F) << shift
        if b[0] < 0x80:
            return value
        shift += 7
        if shift > 28:
            raise StreamError("unsigned varint is longer than 5 bytes")


def read_varint_io(io: Stream, max_bytes: int) -> int:
    """A zig-zag varint of at most ``max_bytes`` bytes from a stream."""
    value = shift = 0
    for _ in range(max_bytes):
        b = io.read(1)
        if not b:
            raise StreamError("stream read less than specified amount, expected 1, found 0")
        value |= (b[0] & 0x7F) << shift
        if b[0] < 0x80:
            return (value >> 1) ^ -(value & 1)
        shift += 7
    raise StreamError(f"varint is longer than {max_bytes} bytes")


def _read_uvarint(stream: Stream, path: str) -> int:
    try:
        return read_uvarint_io(stream)
    except StreamError as exc:
        raise KafkaConstructError(str(exc), path=path) from None


def _uvarint_bytes(value: int, path: str) -> bytes:
    try:
        return uvarint_bytes(value)
    except VarintError as exc:
        raise KafkaConstructError(str(exc), path=path) from None


def _read_varlong(stream: Stream, path: str, max_bytes: int) -> int:
    try:
        return read_varint_io(stream, max_bytes)
    except StreamError as exc:
        raise KafkaConstructError(str(exc), path=path) from None


def _varlong_bytes(value: int, bits: int, path: str) -> bytes:
    try:
        return checked_zigzag_bytes(value, bits)
    except VarintError as exc:
        raise KafkaConstructError(str(exc), path=path) from None


class UVarInt(Construct):
    """Kafka's unsigned varint (at most 5 bytes, 32 bits): compact lengths and tagged-field headers."""

    def _parse(self, stream: Stream, context: Context, path: str) -> int:
        return _read_uvarint(stream, path)

    def _build(self, obj: int, stream: Stream, context: Context, path: str) -> int:
        _write(stream, _uvarint_bytes(obj, path), path)
        return obj

    def _sizeof(self, context: Context, path: str) -> int:
        raise KafkaConstructError("a varint has no fixed size", path=path)

    def _emitparse(self, code: CodeGen) -> str:
        code.append(_EMIT_HELPERS)
        return "_km_read_uvarint(io)"

    def _emitbuild(self, code: CodeGen) -> str:
        code.append(_EMIT_HELPERS)
        return "(io.write(_km_uvarint_bytes(obj)), obj)[1]"


class VarInt(Construct):
    """Kafka's zig-zag signed varint: 32 bits (record headers and lengths) or 64 bits (record deltas)."""

    def __init__(self, bits: int = 32) -> None:
        super().__init__()
        if bits not in (32, 64):
            raise ValueError("bits must be 32 or 64")
        self.bits = bits
        self.max_bytes = 5 if bits == 32 else 10

    def _parse(self, stream: Stream, context: Context, path: str) -> int:
        return _read_varlong(stream, path, self.max_bytes)

    def _build(self, obj: int, stream: Stream, context: Context, path: str) -> int:
        _write(stream, _varlong_bytes(obj, self.bits, path), path)
        return obj

    def _sizeof(self, context: Context, path: str) -> int:
        raise KafkaConstructError("a varint has no fixed size", path=path)

    def _emitparse(self, code: CodeGen) -> str:
        code.append(_EMIT_HELPERS)
        return f"_km_read_varint(io, {self.max_bytes})"

    def _emitbuild(self, code: CodeGen) -> str:
        code.append(_EMIT_HELPERS)
        return f"(io.write(_km_varint_bytes(obj, {self.bits})), obj)[1]"


VarLong = VarInt(64)


class _Length(Construct):
    """A length or count prefix: int16/int32 (-1 = null) in classic versions, uvarint N+1 (0 = null) in compact."""

    def __init__(self, compact: bool, width: str) -> None:
        super().__init__()
        self.compact = compact
        self.packer = struct.Struct(">" + width)

    def read(self, stream: Stream, path: str) -> int:
        if self.compact:
            return _read_uvarint(stream, path) - 1
        n: int = self.packer.unpack(stream_read(stream, self.packer.size, path))[0]
        return n

    def write(self, n: int, stream: Stream, path: str) -> None:
        data = _uvarint_bytes(n + 1, path) if self.compact else self.packer.pack(n)
        _write(stream, data, path)


class KafkaBytes(_Length):
    """Kafka bytes (and records): int32 length or compact; ``nullable`` allows null."""

    what = "bytes"

    def __init__(self, compact: bool = False, nullable: bool = False, width: str = "i") -> None:
        super().__init__(compact, width)
        self.nullable = nullable

    def _parse(self, stream: Stream, context: Context, path: str) -> object:
        n = self.read(stream, path)
        if n < 0:
            if self.nullable:
                return None
            raise KafkaConstructError(f"null for non-nullable {self.what}", path=path)
        return self._from_wire(stream_read(stream, n, path), path)

    def _build(self, obj: Any, stream: Stream, context: Context, path: str) -> Any:
        if obj is None:
            if not self.nullable:
                raise KafkaConstructError(f"null for non-nullable {self.what}", path=path)
            self.write(-1, stream, path)
            return obj
        data = self._to_wire(obj, path)
        self.write(len(data), stream, path)
        stream_write(stream, data, len(data), path)
        return obj

    def _from_wire(self, data: bytes, path: str) -> object:
        return data

    def _to_wire(self, obj: Any, path: str) -> bytes:
        return bytes(obj)

    def _sizeof(self, context: Context, path: str) -> int:
        raise KafkaConstructError(f"{self.what} have no fixed size", path=path)


class KafkaString(KafkaBytes):
    """A Kafka string: int16 length or compact (uvarint length + 1), UTF-8, at most 32767 bytes as in Kafka."""

    what = "string"

    def __init__(self, compact: bool = False, nullable: bool = False) -> None:
        super().__init__(compact, nullable, width="h")

    def _from_wire(self, data: bytes, path: str) -> object:
        if len(data) > 0x7FFF:
            raise KafkaConstructError(f"string length {len(data)} is over the limit", path=path)
        try:
            return data.decode()
        except UnicodeDecodeError as exc:
            raise KafkaConstructError(f"invalid UTF-8: {exc.reason}", path=path) from None

    def _to_wire(self, obj: Any, path: str) -> bytes:
        data: bytes = obj.encode()
        if len(data) > 0x7FFF:
            raise KafkaConstructError(f"string of {len(data)} bytes is over the 32767 limit", path=path)
        return data


class KafkaArray(Subconstruct):
    """A Kafka array of ``subcon``: int32 count or compact (uvarint count + 1); ``nullable`` allows null.

    The count is checked against the bytes that remain (when the stream can tell) before anything is read,
    as Kafka does, so a hostile count cannot make the parser spin or allocate.
    """

    def __init__(self, subcon: Construct, compact: bool = False, nullable: bool = False) -> None:
        super().__init__(subcon)
        self.length = _Length(compact, "i")
        self.nullable = nullable

    def _parse(self, stream: Stream, context: Context, path: str) -> list[Any] | None:
        n = self.length.read(stream, path)
        if n < 0:
            if self.nullable:
                return None
            raise KafkaConstructError("null for a non-nullable array", path=path)
        remaining = _remaining(stream)
        if remaining is not None and n > remaining:
            raise KafkaConstructError(f"{n} elements cannot fit in the {remaining} bytes that remain", path=path)
        return [self.subcon._parsereport(stream, context, path) for _ in range(n)]

    def _build(self, obj: Sequence[Any] | None, stream: Stream, context: Context, path: str) -> Sequence[Any] | None:
        if obj is None:
            if not self.nullable:
                raise KafkaConstructError("null for a non-nullable array", path=path)
            self.length.write(-1, stream, path)
            return obj
        self.length.write(len(obj), stream, path)
        for item in obj:
            self.subcon._build(item, stream, context, path)
        return obj

    def _sizeof(self, context: Context, path: str) -> int:
        raise KafkaConstructError("an array has no fixed size", path=path)


class Uuid(Construct):
    """A 16-byte UUID as ``uuid.UUID`` (Kafka's ZERO_UUID is ``UUID(int=0)``)."""

    def _parse(self, stream: Stream, context: Context, path: str) -> uuid.UUID:
        return uuid.UUID(bytes=stream_read(stream, 16, path))

    def _build(self, obj: uuid.UUID, stream: Stream, context: Context, path: str) -> uuid.UUID:
        if not isinstance(obj, uuid.UUID):
            raise KafkaConstructError(f"expected a uuid.UUID, got {type(obj).__name__}", path=path)
        stream_write(stream, obj.bytes, 16, path)
        return obj

    def _sizeof(self, context: Context, path: str) -> int:
        return 16

    def _emitparse(self, code: CodeGen) -> str:
        code.append("from uuid import UUID as _km_UUID")
        return "_km_UUID(bytes=io.read(16))"

    def _emitbuild(self, code: CodeGen) -> str:
        return "(io.write(obj.bytes), obj)[1]"


class TaggedFields(Construct):
    """A tagged-field section kept raw: a list of ``(tag, bytes)`` in ascending tag order."""

    def _parse(self, stream: Stream, context: Context, path: str) -> list[tuple[int, bytes]]:
        count = _read_uvarint(stream, path)
        remaining = _remaining(stream)
        if remaining is not None and count > remaining:
            raise KafkaConstructError(f"{count} tagged fields cannot fit in the bytes that remain", path=path)
        items: list[tuple[int, bytes]] = []
        for _ in range(count):
            tag = _read_uvarint(stream, path)
            size = _read_uvarint(stream, path)
            items.append((tag, stream_read(stream, size, path)))
        return items

    def _build(self, obj: TaggedItems | None, stream: Stream, context: Context, path: str) -> TaggedItems | None:
        items = sorted(obj or (), key=lambda item: item[0])
        _write(stream, _uvarint_bytes(len(items), path), path)
        for tag, data in items:
            _write(stream, _uvarint_bytes(tag, path), path)
            _write(stream, _uvarint_bytes(len(data), path), path)
            stream_write(stream, bytes(data), len(data), path)
        return obj

    def _sizeof(self, context: Context, path: str) -> int:
        raise KafkaConstructError("a tagged-field section has no fixed size", path=path)


class MessageConstruct(Construct):
    """A whole Kafka message at one version, parsed and built by the compiled codec."""

    def __init__(self, name: str, version: int, registry: Registry | None = None) -> None:
        super().__init__()
        self.codec = (registry or default_registry()).codec(name, version)

    def _parse(self, stream: Stream, context: Context, path: str) -> Message:
        start: int = stream_tell(stream, path)
        data = stream.read()
        try:
            message, end = self.codec.decode_from(data, 0)
        except CodecError as exc:
            raise KafkaConstructError(str(exc), path=path) from None
        stream.seek(start + end)
        return message

    def _build(self, obj: Mapping[str, Any], stream: Stream, context: Context, path: str) -> Mapping[str, Any]:
        try:
            data = self.codec.encode(obj)
        except CodecError as exc:
            raise KafkaConstructError(str(exc), path=path) from None
        stream_write(stream, data, len(data), path)
        return obj

    def _sizeof(self, context: Context, path: str) -> int:
        raise KafkaConstructError("a message has no fixed size", path=path)

    def _emitparse(self, code: CodeGen) -> str:
        code.linkedinstances[id(self)] = self
        return f"linkedinstances[{id(self)}]._parse(io, this, '(compiled)')"

    def _emitbuild(self, code: CodeGen) -> str:
        code.linkedinstances[id(self)] = self
        return f"linkedinstances[{id(self)}]._build(obj, io, this, '(compiled)')"


def _write(stream: Stream, data: bytes, path: str) -> None:
    stream_write(stream, data, len(data), path)


def _remaining(stream: Stream) -> int | None:
    try:
        here = stream.tell()
        end = stream.seek(0, 2)
        stream.seek(here)
        return end - here
    except (OSError, AttributeError, ValueError):
        return None


# What compiled constructs call: the same functions as the interpreted path, imported into the compiled module.
_EMIT_HELPERS = (
    "from kafkamock.codec.constructs import read_uvarint_io as _km_read_uvarint, read_varint_io as _km_read_varint\n"
    "from kafkamock.codec.varint import uvarint_bytes as _km_uvarint_bytes\n"
    "from kafkamock.codec.varint import checked_zigzag_bytes as _km_varint_bytes\n"
)


__all__ = [
    "KafkaArray", "KafkaBytes", "KafkaConstructError", "KafkaString", "MessageConstruct", "TaggedFields",
    "UVarInt", "Uuid", "VarInt", "VarLong",
]
