"""Compile one (message, version) of the schema model into specialised Python decode/encode functions.

Why generate code: a generic walker pays for every field's type dispatch on every message, and construct's own
compiler reads through a stream object field by field. Here each version gets straight-line code: runs of
fixed-width fields are one ``struct.unpack_from``/``pack`` call on the buffer, nested structs are inlined into
their array loops, lengths are checked against the bytes that remain before anything is allocated, and every
failure surfaces as one error type carrying the byte offset. ``kafkamock.codec.constructs`` wraps the result as
a construct ``Construct`` so it composes with construct code.
"""

from __future__ import annotations

import operator
import struct
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any, Protocol

from kafkamock.codec.message import Message, shared_default
from kafkamock.codec.varint import VarintError
from kafkamock.codec.varint import uvarint_bytes as _uvarint_bytes
from kafkamock.schema.model import (
    DEFAULT_STRUCT,
    PRIMITIVES,
    ZERO_UUID,
    ArrayType,
    FieldSpec,
    FieldType,
    MessageSpec,
    StructRef,
    StructSpec,
)

FORMATS = {"bool": "?", "int8": "b", "int16": "h", "uint16": "H", "int32": "i", "uint32": "I", "int64": "q",
           "float64": "d", "uuid": "16s"}
MAX_STRING = 0x7FFF
ZERO16 = bytes(16)


Blobs = list[tuple[int, bytes]]
"""Large bytes/records values left out of an encoder's output: ``(offset in the output, data)`` in order."""


class DecodeFrom(Protocol):
    """A compiled decoder: the message at ``p`` in ``b`` and the offset after it. With ``mv``, a memoryview of ``b``,
    records fields come back as slices of it (no copy, and writable when ``b`` is a bytearray)."""

    def __call__(self, b: bytes | bytearray, p: int, mv: memoryview | None = None, /) -> tuple[Message, int]: ...


class EncodeInto(Protocol):
    """A compiled encoder: appends ``value`` to ``out`` (and returns it); with ``big``, large bytes/records values
    are listed there instead of copied (see ``join_blobs``)."""

    def __call__(self, value: Mapping[str, Any], out: bytearray, big: Blobs | None = None, /) -> bytearray: ...


class Bad(Exception):
    """Raised inside generated code; the entry points turn it into DecodeError / EncodeError."""


class TooLong(Bad):
    """A string to encode is over the 32767-byte limit (StringTooLongError for the caller)."""


# ---------------------------------------------------------------------------------------------------------------
# Runtime helpers the generated code calls (kept tiny: the common cases are inlined).


def uvarint_tail(b: bytes, p: int, first: int) -> tuple[int, int]:
    """Finish an unsigned varint whose first byte (already consumed) had the continuation bit set."""
    value = first & 0x7F
    shift = 7
    while True:
        x = b[p]
        p += 1
        value |= (x & 0x7F) << shift
        if x < 0x80:
            return value, p
        shift += 7
        if shift > 28:
            raise Bad("unsigned varint is longer than 5 bytes")


def uvarint_bytes(value: int) -> bytes:
    """Kafka's unsigned varint; a value out of range is a Bad value (an EncodeError for the caller)."""
    try:
        return _uvarint_bytes(value)
    except VarintError as exc:
        raise Bad(str(exc)) from None


SMALL_ARRAY = 64
BIG_BLOB = 4096
"""Bytes/records values at least this long are not copied into the output buffer (see ``join_blobs``)."""


def array_unpackers(fmt: str) -> tuple[Callable[[bytes, int], tuple[Any, ...]], ...]:
    """Precompiled unpackers for arrays of 0..63 fixed-width elements: no format string built per array."""
    return tuple(struct.Struct(f">{k}{fmt}").unpack_from for k in range(SMALL_ARRAY))


def blob_parts(out: bytearray, big: Blobs) -> list[bytes | bytearray | memoryview]:
    """The encoded message as buffers: slices of ``out`` with each large blob between them, at its offset.

    A server can hand these to a scatter-gather send and never copy the blobs (record batches) again.
    """
    if not big:
        return [out]
    view = memoryview(out)
    parts: list[bytes | bytearray | memoryview] = []
    last = 0
    for offset, data in big:
        parts.append(view[last:offset])
        parts.append(data)
        last = offset
    if last < len(out):
        parts.append(view[last:])
    return parts


def join_blobs(out: bytearray, big: Blobs) -> bytes:
    """The encoded message as one ``bytes``, in one allocation.

    Copying a 1 MB FetchResponse's record batches into a growing bytearray and then into ``bytes`` costs two
    large buffers per message; on this platform the allocator returns them to the OS each time and page faults
    dominate (measured 5x slower). One ``join`` allocates the result once.
    """
    return bytes(out) if not big else b"".join(blob_parts(out, big))


def array_packers(fmt: str) -> tuple[Callable[..., bytes], ...]:
    return tuple(struct.Struct(f">{k}{fmt}").pack for k in range(SMALL_ARRAY))


def uuid_bytes(value: object) -> bytes:
    if isinstance(value, uuid.UUID):
        return value.bytes
    raise Bad(f"expected a uuid.UUID, got {type(value).__name__}")


# ---------------------------------------------------------------------------------------------------------------
# Source emitter


ConstKey = tuple[str, str | int]
"""What identifies a shared constant of the generated code: ``("struct", fmt)``, ``("class", name)``, ..."""


class Emitter:
    """Collects indented source lines; constants (packers, defaults) are shared through one table."""

    def __init__(self, consts: dict[str, object], const_ids: dict[ConstKey, str]) -> None:
        self.lines: list[str] = []
        self.depth = 1
        self.counter = 0
        self.consts = consts
        self._const_ids = const_ids

    def __call__(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)

    @contextmanager
    def block(self, header: str) -> Iterator[None]:
        self(header)
        self.depth += 1
        yield
        self.depth -= 1

    def tmp(self, prefix: str = "v") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def const(self, key: ConstKey, value: object, prefix: str = "_K") -> str:
        name = self._const_ids.get(key)
        if name is None:
            name = f"{prefix}{len(self.consts)}"
            self._const_ids[key] = name
            self.consts[name] = value
        return name

    def packer(self, fmt: str) -> str:
        return self.const(("struct", fmt), struct.Struct(">" + fmt), "_S")


def is_fixed(ftype: FieldType) -> bool:
    return ftype.kind in PRIMITIVES


def fixed_runs(fields: list[FieldSpec]) -> list[list[FieldSpec] | FieldSpec]:
    """The fields in order, consecutive fixed-width ones grouped into lists: one ``struct`` call per group."""
    out: list[list[FieldSpec] | FieldSpec] = []
    for f in fields:
        if not is_fixed(f.type):
            out.append(f)
        elif out and isinstance(out[-1], list):
            out[-1].append(f)
        else:
            out.append([f])
    return out


# ---------------------------------------------------------------------------------------------------------------
# Defaults


def default_value(f: FieldSpec, version: int) -> object:
    """A fresh Python value for a field's default (the struct form takes every field's default)."""
    d = f.default
    if d is DEFAULT_STRUCT:
        assert isinstance(f.type, StructRef)
        return default_struct(f.type.struct, version)
    if d == () and f.type.kind == "array":
        return []
    return d


def default_struct(spec: StructSpec, version: int) -> Message:
    return Message({f.key: default_value(f, version) for f in spec.fields})


class Compiler:
    """Generates the decoder and encoder source for one message at one version."""

    def __init__(self, spec: MessageSpec, version: int, classes: Mapping[tuple[str, str], type] | None = None):
        self.spec = spec
        self.version = version
        self.classes = classes or {}
        self.flexible = spec.is_flexible(version)
        self.consts: dict[str, object] = {}
        self.const_ids: dict[ConstKey, str] = {}

    def emitter(self) -> Emitter:
        return Emitter(self.consts, self.const_ids)

    def struct_class(self, e: Emitter, spec: StructSpec) -> str:
        """The name, in the generated code, of the class a decoded ``spec`` is built as (``Message`` when the
        registry has no typed class for it)."""
        cls = self.classes.get((self.spec.name, spec.name))
        return "_M" if cls is None else e.const(("class", spec.name), cls, "_C")

    def field_keys(self, e: Emitter, spec: StructSpec) -> str:
        """A constant set of every key a value of ``spec`` may hold: its fields at any version, and
        ``_unknown_tagged_fields``."""
        return e.const(("keys", id(spec)), _field_keys(spec), "_F")

    def all_known(self, e: Emitter, spec: StructSpec) -> str:
        """A constant callable telling whether every key of a value is one ``spec`` may hold: the bound
        ``issuperset`` of ``field_keys`` (a C loop over the value's keys, the cheapest exact check)."""
        return e.const(("known", id(spec)), _field_keys(spec).issuperset, "_KN")

    # -- helpers -----------------------------------------------------------------------------------------------

    def compact(self, f: FieldSpec | None) -> bool:
        if f is not None and f.flexible_versions is not None:
            return self.version in f.flexible_versions
        return self.flexible

    def default_expr(self, e: Emitter, f: FieldSpec) -> str:
        """An expression evaluating to a fresh default value for ``f``."""
        d = f.default
        if d is DEFAULT_STRUCT or (d == () and f.type.kind == "array"):
            if d == ():
                return "[]"
            assert isinstance(f.type, StructRef)
            return self.default_struct_expr(e, f.type.struct)
        if isinstance(d, uuid.UUID):
            return e.const(("uuid", d.int), d)
        return repr(d)

    def default_struct_expr(self, e: Emitter, spec: StructSpec) -> str:
        if all(f.default is not DEFAULT_STRUCT and f.type.kind != "array" for f in spec.fields):
            # Only immutable values inside: one shared, read-only instance serves every absent occurrence.
            shared = shared_default(self.classes.get((self.spec.name, spec.name)),
                                    {f.key: f.default for f in spec.fields})
            return e.const(("default-struct", id(spec)), shared, "_D")
        items = ", ".join(f"{f.key!r}: {self.default_expr(e, f)}" for f in spec.fields)
        return f"{self.struct_class(e, spec)}({{{items}}})"

    # -- decoding ----------------------------------------------------------------------------------------------

    def decoder_source(self) -> str:
        e = self.emitter()
        e.depth = 2
        self.decode_struct(e, self.spec.struct, "result", self.spec.name)
        body = "\n".join(e.lines)
        src = (
            "def decode_from(b, p, mv=None):\n"
            "    n = len(b)\n"
            "    try:\n"
            f"{body}\n"
            "    except _Bad as exc:\n"
            "        raise _DecodeError(_NAME, _VERSION, p, str(exc)) from None\n"
            "    except (IndexError, _StructError):\n"
            "        raise _DecodeError(_NAME, _VERSION, p, 'truncated: the message ends early') from None\n"
            "    except UnicodeDecodeError as exc:\n"
            "        raise _DecodeError(_NAME, _VERSION, p, f'invalid UTF-8 in a string: {exc.reason}') from None\n"
            "    except (ValueError, TypeError, OverflowError, RecursionError, MemoryError) as exc:\n"
            "        raise _DecodeError(_NAME, _VERSION, p, f'{type(exc).__name__}: {exc}') from None\n"
            "    return result, p\n"
        )
        return src

    def read_uvarint(self, e: Emitter, target: str, wide: bool = False, limit: str | None = None) -> None:
        """Inline the one-byte case; ``wide`` also inlines two bytes (lengths of record batches up to 16 KB).

        ``limit`` (the field's path) checks Kafka's 32767-byte string limit, which only a multi-byte varint can
        break, so the check costs nothing in the common one-byte case.
        """
        e(f"{target} = b[p]")
        e("p += 1")
        with e.block(f"if {target} > 127:"):
            if wide:
                with e.block("if b[p] < 128:"):
                    e(f"{target} = ({target} & 127) | (b[p] << 7)")
                    e("p += 1")
                with e.block("else:"):
                    e(f"{target}, p = _uvt(b, p, {target})")
            else:
                e(f"{target}, p = _uvt(b, p, {target})")
            if limit:
                with e.block(f"if {target} > {MAX_STRING + 1}:"):
                    e(f"raise _Bad('{limit}: string length ' + str({target} - 1) + ' is over the 32767 limit')")

    def read_length(self, e: Emitter, target: str, compact: bool, width: str, wide: bool = False,
                    limit: str | None = None) -> None:
        """A length (or count) prefix; -1 means null."""
        if compact:
            self.read_uvarint(e, target, wide, limit)
            e(f"{target} -= 1")
        else:
            fmt = e.packer(width)
            size = struct.calcsize(">" + width)
            e(f"{target}, = {fmt}.unpack_from(b, p)")
            e(f"p += {size}")

    def null_or_fail(self, e: Emitter, length: str, target: str, nullable: bool, message: str) -> None:
        """A negative length or count is null: the value where the version allows it, an error otherwise."""
        with e.block(f"if {length} < 0:"):
            if nullable:
                e(f"{target} = None")
            else:
                e(f"raise _Bad({message!r})")

    def decode_struct(self, e: Emitter, spec: StructSpec, target: str, path: str) -> None:
        v = self.version
        layout = spec.at(v)
        values: dict[str, str] = {}
        for run in fixed_runs(layout.regular):
            if isinstance(run, list):
                fmt = "".join(FORMATS[x.type.kind] for x in run)
                names = [e.tmp() for _ in run]
                packer = e.packer(fmt)
                size = struct.calcsize(">" + fmt)
                e(f"{', '.join(names)}, = {packer}.unpack_from(b, p)")
                e(f"p += {size}")
                for x, name in zip(run, names, strict=True):
                    if x.type.kind == "uuid":
                        e(f"{name} = _ZU if {name} == _Z16 else _UUID(bytes={name})")
                    values[x.key] = name
                continue
            f = run
            name = e.tmp()
            self.decode_value(e, f.type, f, name, f"{path}.{f.name}", v in f.nullable_versions)
            values[f.key] = name
        unknown = None
        if self.flexible and not layout.tagged:
            # The common case: no known tags here, and usually an empty section (one zero byte).
            unknown = e.tmp("u")
            e(f"{unknown} = None")
            with e.block("if b[p]:"):
                e(f"{unknown}, p = _rtags(b, p, n, {path!r})")
            with e.block("else:"):
                e("p += 1")
        elif self.flexible:
            unknown = e.tmp("u")
            e(f"{unknown} = None")
            tagged = layout.tagged
            for f in tagged:
                name = e.tmp()
                e(f"{name} = {self.default_expr(e, f)}")
                values[f.key] = name
            count = e.tmp("c")
            self.read_uvarint(e, count)
            with e.block(f"if {count}:"):
                with e.block(f"if {count} > n - p:"):
                    e(f"raise _Bad('{path}: ' + str({count}) + ' tagged fields cannot fit in the bytes that remain')")
                with e.block(f"for _ in range({count}):"):
                    tag, sz, end = e.tmp("t"), e.tmp("s"), e.tmp("e")
                    self.read_uvarint(e, tag)
                    self.read_uvarint(e, sz)
                    e(f"{end} = p + {sz}")
                    with e.block(f"if {end} > n:"):
                        e(f"raise _Bad('{path}: tagged field ' + str({tag}) + ' runs past the end')")
                    keyword = "if"
                    for f in tagged:
                        with e.block(f"{keyword} {tag} == {f.tag}:"):
                            self.decode_value(e, f.type, f, values[f.key], f"{path}.{f.name}",
                                              v in f.nullable_versions, tagged=True)
                            with e.block(f"if p != {end}:"):
                                e(f"raise _Bad('{path}.{f.name}: tagged field size ' + str({sz}) + "
                                  f"' does not match its contents')")
                        keyword = "elif"
                    with e.block("else:"):
                        with e.block(f"if {unknown} is None:"):
                            e(f"{unknown} = []")
                        e(f"{unknown}.append(({tag}, b[p:{end}]))")
                        e(f"p = {end}")
        items = []
        for f in spec.fields:
            expr = values.get(f.key)
            if expr is None:
                expr = self.default_expr(e, f)
            items.append(f"{f.key!r}: {expr}")
        e(f"{target} = {self.struct_class(e, spec)}({{{', '.join(items)}}})")
        if unknown is not None:
            with e.block(f"if {unknown} is not None:"):
                e(f"{target}['_unknown_tagged_fields'] = {unknown}")

    def decode_value(self, e: Emitter, ftype: FieldType, f: FieldSpec | None, target: str, path: str,
                     nullable: bool, tagged: bool = False) -> None:
        kind = ftype.kind
        if kind in PRIMITIVES:
            fmt = FORMATS[kind]
            packer = e.packer(fmt)
            e(f"{target}, = {packer}.unpack_from(b, p)")
            e(f"p += {struct.calcsize('>' + fmt)}")
            if kind == "uuid":
                e(f"{target} = _ZU if {target} == _Z16 else _UUID(bytes={target})")
            return
        if kind in ("string", "bytes", "records"):
            compact = self.compact(f) if kind != "records" else self.flexible
            length = e.tmp("l")
            # An int16 length cannot exceed Kafka's 32767-byte string limit; a compact one is checked in read_uvarint.
            limit = path if kind == "string" else None
            self.read_length(e, length, compact, "h" if kind == "string" else "i", wide=kind != "string",
                             limit=limit)
            self.null_or_fail(e, length, target, nullable, f"{path}: null for a non-nullable field")
            with e.block("else:"):
                end = e.tmp("e")
                e(f"{end} = p + {length}")
                with e.block(f"if {end} > n:"):
                    e(f"raise _Bad('{path}: length ' + str({length}) + ' runs past the end')")
                if kind == "string":
                    e(f"{target} = b[p:{end}].decode()")
                elif kind == "records":
                    # Zero-copy when asked (as Kafka's readers slice records out of the request buffer).
                    e(f"{target} = b[p:{end}] if mv is None else mv[p:{end}]")
                else:
                    e(f"{target} = b[p:{end}]")
                e(f"p = {end}")
            return
        if kind == "array":
            assert isinstance(ftype, ArrayType)
            count = e.tmp("c")
            self.read_length(e, count, self.flexible, "i")
            self.null_or_fail(e, count, target, nullable, f"{path}: null for a non-nullable array")
            with e.block("else:"):
                with e.block(f"if {count} > n - p:"):
                    e(f"raise _Bad('{path}: ' + str({count}) + ' elements cannot fit in the bytes that remain')")
                elem = ftype.element
                if elem.kind in PRIMITIVES and elem.kind != "uuid":
                    fmt = FORMATS[elem.kind]
                    width = struct.calcsize(">" + fmt)
                    table = e.const(("array-unpackers", fmt), array_unpackers(fmt), "_A")
                    e(f"{target} = list({table}[{count}](b, p) if {count} < {SMALL_ARRAY} else "
                      f"_unpack_from('>' + str({count}) + '{fmt}', b, p))")
                    e(f"p += {count} * {width}")
                else:
                    e(f"{target} = []")
                    item = e.tmp("x")
                    with e.block(f"for _ in range({count}):"):
                        if isinstance(elem, StructRef):
                            self.decode_struct(e, elem.struct, item, f"{path}[]")
                        else:
                            self.decode_value(e, elem, None, item, f"{path}[]", False)
                        e(f"{target}.append({item})")
            return
        if kind == "struct":
            assert isinstance(ftype, StructRef)
            if nullable and tagged:
                # Inside a tagged field Kafka's generator marks a nullable struct with an unsigned varint: 0 for
                # null, 1 before the struct (e.g. ConsumerGroupMemberMetadataValue.ClassicMemberMetadata).
                marker = e.tmp("m")
                self.read_uvarint(e, marker)
                with e.block(f"if {marker} == 0:"):
                    e(f"{target} = None")
                with e.block("else:"):
                    self.decode_struct(e, ftype.struct, target, path)
            elif nullable:
                marker = e.tmp("m")
                e(f"{marker} = b[p]")
                e("p += 1")
                with e.block(f"if {marker} > 127:"):
                    e(f"{target} = None")
                with e.block("else:"):
                    self.decode_struct(e, ftype.struct, target, path)
            else:
                self.decode_struct(e, ftype.struct, target, path)
            return
        raise AssertionError(kind)  # pragma: no cover

    # -- encoding ----------------------------------------------------------------------------------------------

    def encoder_source(self) -> str:
        e = self.emitter()
        e.depth = 2
        self.encode_struct(e, self.spec.struct, "value", "out", self.spec.name)
        body = "\n".join(e.lines)
        src = (
            "def encode_into(value, out, big=None):\n"
            "    try:\n"
            f"{body}\n"
            "    except _TooLong as exc:\n"
            "        raise _StringTooLongError(_NAME, _VERSION, str(exc)) from None\n"
            "    except _Bad as exc:\n"
            "        raise _EncodeError(_NAME, _VERSION, str(exc)) from None\n"
            "    return out\n"
        )
        return src

    def write_uvarint(self, e: Emitter, out: str, expr: str) -> None:
        tmp = e.tmp("w")
        e(f"{tmp} = {expr}")
        with e.block(f"if {tmp} < 128:"):
            e(f"{out}.append({tmp})")
        with e.block("else:"):
            e(f"{out} += _uvb({tmp})")

    def write_length(self, e: Emitter, out: str, expr: str, compact: bool, width: str) -> None:
        if compact:
            self.write_uvarint(e, out, f"{expr} + 1")
        else:
            e(f"{out} += {e.packer(width)}.pack({expr})")

    def write_null(self, e: Emitter, out: str, compact: bool, width: str) -> None:
        if compact:
            e(f"{out}.append(0)")
        else:
            e(f"{out} += {e.const(('null', width), struct.pack('>' + width, -1))}")

    def is_default_expr(self, e: Emitter, f: FieldSpec, val: str) -> str:
        """An expression that is true when ``val`` equals the field's default, as Kafka decides it."""
        d = f.default
        kind = f.type.kind
        if d is None:
            return f"{val} is None"
        if kind in ("array", "bytes", "records"):  # their only non-null default is empty
            return f"({val} is not None and len({val}) == 0)"
        if kind == "struct":
            assert isinstance(f.type, StructRef)
            return f"_isdef({val}, {e.const(('structspec', id(f.type.struct)), f.type.struct)})"
        if isinstance(d, uuid.UUID):
            return f"{val} == {e.const(('uuid', d.int), d)}"
        return f"{val} == {d!r}"

    def encode_struct(self, e: Emitter, spec: StructSpec, src: str, out: str, path: str) -> None:
        v = self.version
        layout = spec.at(v)
        regular, tagged = layout.regular, layout.tagged
        fields = regular + tagged
        names = {f.key: e.tmp() for f in fields}
        unknown = e.tmp("u") if self.flexible else None
        # The prologue reads every field into a local and checks the value's keys, so a misspelt key is an error
        # rather than a field silently left at its default. The usual value holds exactly this version's regular
        # fields: one itemgetter call reads them all and the length shows nothing else is there. Any other value
        # takes the general path.
        count = len(regular)
        if count == 0:
            head = f"if not {src}:"
        else:
            head = f"if len({src}) == {count}:"
        with e.block(head):
            if count:
                keys = tuple(f.key for f in regular)
                picker = e.const(("picker", ",".join(keys)), operator.itemgetter(*keys), "_IG")
                with e.block("try:"):
                    e(f"{', '.join(names[k] for k in keys)} = {picker}({src})")
                with e.block("except KeyError:"):
                    self.fetch_general(e, spec, src, path, fields, names, unknown)
                ok: AbstractContextManager[None] = e.block("else:")
            else:
                ok = nullcontext()
            with ok:
                for f in tagged:
                    e(f"{names[f.key]} = {self.default_value(e, f)}")
                e("pass" if unknown is None else f"{unknown} = None")
        with e.block("else:"):
            self.fetch_general(e, spec, src, path, fields, names, unknown)
        for run in fixed_runs(regular):
            if isinstance(run, list):
                args = [f"_uuidb({names[x.key]})" if x.type.kind == "uuid" else names[x.key] for x in run]
                fmt = "".join(FORMATS[x.type.kind] for x in run)
                e(f"{out} += {e.packer(fmt)}.pack({', '.join(args)})")
                continue
            f = run
            self.encode_value(e, f.type, f, names[f.key], out, f"{path}.{f.name}", v in f.nullable_versions)
        if unknown is None:
            return
        if not tagged:
            with e.block(f"if not {unknown}:"):
                e(f"{out}.append(0)")
            with e.block("else:"):
                e(f"_write_tags({out}, list({unknown}))")
            return
        items = e.tmp("tf")
        e(f"{items} = list({unknown}) if {unknown} else []")
        for f in tagged:
            val = names[f.key]
            with e.block(f"if not ({self.is_default_expr(e, f, val)}):"):
                buf = e.tmp("tb")
                e(f"{buf} = bytearray()")
                self.encode_value(e, f.type, f, val, buf, f"{path}.{f.name}", v in f.nullable_versions,
                                  tagged=True)
                e(f"{items}.append(({f.tag}, {buf}))")
        with e.block(f"if not {items}:"):
            e(f"{out}.append(0)")
        with e.block("else:"):
            e(f"_write_tags({out}, {items})")

    def keys_within(self, e: Emitter, spec: StructSpec, fields: list[FieldSpec]) -> str:
        """A constant callable telling whether a value holds only fields this version has (the bound
        ``issuperset`` of their keys: one C call)."""
        keys = frozenset(f.key for f in fields)
        return e.const(("within", id(spec)), keys.issuperset, "_KV")

    def fetch_general(self, e: Emitter, spec: StructSpec, src: str, path: str, fields: list[FieldSpec],
                      names: dict[str, str], unknown: str | None) -> None:
        """Read the fields of any value: one ``get`` each, with the field's default. A value holding only fields
        this version has needs nothing more; any other key is a misspelt field (an error naming it), a field this
        version lacks (an error unless it holds the default) or the unknown tagged fields read back from the wire."""
        v = self.version
        # A value that is not a mapping fails here (TypeError, AttributeError); Codec.write names the field at fault.
        getter = e.tmp("g")
        e(f"{getter} = {src}.get")
        with e.block(f"if {self.keys_within(e, spec, fields)}({src}):"):
            for f in fields:
                self.fetch_with(e, getter, f, names[f.key])
            e("pass" if unknown is None else f"{unknown} = None")
        with e.block("else:"):
            with e.block(f"if not {self.all_known(e, spec)}({src}):"):
                e(f"raise _Bad(_unknown_keys('{path}', {src}, {self.field_keys(e, spec)}))")
            for f in spec.at(v).absent:
                if f.ignorable:
                    continue
                val = e.tmp()
                e(f"{val} = {getter}({f.key!r}, _MISSING)")
                with e.block(f"if {val} is not _MISSING and not ({self.is_default_expr(e, f, val)}):"):
                    e(f"raise _Bad('{path}.{f.name}: set to a non-default value, but version {v} does not have it')")
            for f in fields:
                self.fetch_with(e, getter, f, names[f.key])
            if unknown is not None:
                e(f"{unknown} = {getter}('_unknown_tagged_fields')")

    def default_value(self, e: Emitter, f: FieldSpec) -> str:
        """The value a field omitted from a value encodes as (shared: only read)."""
        d = f.default
        if d is DEFAULT_STRUCT:
            return "_EMPTY"
        if d == () and f.type.kind == "array":
            return "()"
        if isinstance(d, uuid.UUID):
            return e.const(("uuid", d.int), d)
        return repr(d)

    def fetch_with(self, e: Emitter, getter: str, f: FieldSpec, name: str) -> None:
        e(f"{name} = {getter}({f.key!r}, {self.default_value(e, f)})")

    def encode_value(self, e: Emitter, ftype: FieldType, f: FieldSpec | None, val: str, out: str, path: str,
                     nullable: bool, tagged: bool = False) -> None:
        kind = ftype.kind
        if kind in PRIMITIVES:
            fmt = FORMATS[kind]
            arg = f"_uuidb({val})" if kind == "uuid" else val
            e(f"{out} += {e.packer(fmt)}.pack({arg})")
            return
        if kind in ("string", "bytes", "records"):
            compact = self.compact(f) if kind != "records" else self.flexible
            width = "h" if kind == "string" else "i"
            with e.block(f"if {val} is None:"):
                if nullable:
                    self.write_null(e, out, compact, width)
                else:
                    e(f"raise _Bad('{path}: null for a non-nullable field')")
            if kind == "records":
                # Records may also be a list of buffers (a broker's stored batches), written back to back; with
                # ``big`` they are spliced in by reference, never joined here.
                with e.block(f"elif type({val}) is list:"):
                    self.write_length(e, out, f"sum(map(len, {val}))", compact, width)
                    if out == "out":
                        with e.block("if big is not None:"):
                            e(f"big.extend([(len(out), _x) for _x in {val}])")
                        with e.block("else:"):
                            e(f"out += b''.join({val})")
                    else:
                        e(f"{out} += b''.join({val})")
            with e.block("else:"):
                if kind == "string":
                    data = e.tmp("sb")
                    e(f"{data} = {val}.encode()")
                    with e.block(f"if len({data}) > {MAX_STRING}:"):
                        e(f"raise _TooLong('{path}: string of ' + str(len({data})) + ' bytes is over the 32767 limit')")
                else:
                    data = val
                self.write_length(e, out, f"len({data})", compact, width)
                if kind != "string" and out == "out":
                    # Large blobs (record batches) are kept by reference and joined once at the end.
                    with e.block(f"if big is not None and len({data}) >= {BIG_BLOB}:"):
                        e(f"big.append((len(out), {data}))")
                    with e.block("else:"):
                        e(f"{out} += {data}")
                else:
                    e(f"{out} += {data}")
            return
        if kind == "array":
            assert isinstance(ftype, ArrayType)
            with e.block(f"if {val} is None:"):
                if nullable:
                    self.write_null(e, out, self.flexible, "i")
                else:
                    e(f"raise _Bad('{path}: null for a non-nullable array')")
            with e.block("else:"):
                self.write_length(e, out, f"len({val})", self.flexible, "i")
                elem = ftype.element
                if elem.kind in PRIMITIVES and elem.kind != "uuid":
                    fmt = FORMATS[elem.kind]
                    table = e.const(("array-packers", fmt), array_packers(fmt), "_P")
                    size = e.tmp("n")
                    e(f"{size} = len({val})")
                    e(f"{out} += {table}[{size}](*{val}) if {size} < {SMALL_ARRAY} else "
                      f"_pack('>' + str({size}) + '{fmt}', *{val})")
                else:
                    item = e.tmp("x")
                    with e.block(f"for {item} in {val}:"):
                        if isinstance(elem, StructRef):
                            self.encode_struct(e, elem.struct, item, out, f"{path}[]")
                        else:
                            self.encode_value(e, elem, None, item, out, f"{path}[]", False)
            return
        if kind == "struct":
            assert isinstance(ftype, StructRef)
            if nullable:
                # A nullable struct starts with a marker: int8 -1 / 1, but inside a tagged field the unsigned
                # varint 0 / 1, as Kafka's generator writes them (see decode_value).
                with e.block(f"if {val} is None:"):
                    e(f"{out}.append({0 if tagged else 255})")
                with e.block("else:"):
                    e(f"{out}.append(1)")
                    self.encode_struct(e, ftype.struct, val, out, path)
            else:
                with e.block(f"if {val} is None:"):
                    e(f"raise _Bad('{path}: null for a non-nullable struct')")
                self.encode_struct(e, ftype.struct, val, out, path)
            return
        raise AssertionError(kind)  # pragma: no cover


def read_unknown_tags(b: bytes, p: int, n: int, path: str) -> tuple[list[tuple[int, bytes]], int]:
    """Read a tagged-field section holding only tags the schema does not know: kept raw, to be written back."""
    count = b[p]
    p += 1
    if count > 127:
        count, p = uvarint_tail(b, p, count)
    if count > n - p:
        raise Bad(f"{path}: {count} tagged fields cannot fit in the bytes that remain")
    items = []
    for _ in range(count):
        tag = b[p]
        p += 1
        if tag > 127:
            tag, p = uvarint_tail(b, p, tag)
        size = b[p]
        p += 1
        if size > 127:
            size, p = uvarint_tail(b, p, size)
        end = p + size
        if end > n:
            raise Bad(f"{path}: tagged field {tag} runs past the end")
        items.append((tag, b[p:end]))
        p = end
    return items, p


def write_tags(out: bytearray, items: list[tuple[int, bytes]]) -> None:
    """Write a tagged-field section: count, then (tag, size, bytes) in ascending tag order, as Kafka does."""
    items.sort(key=lambda item: item[0])
    out += uvarint_bytes(len(items))
    previous = -1
    for tag, data in items:
        if not isinstance(tag, int) or tag < 0:
            raise Bad(f"invalid tag {tag!r} in _unknown_tagged_fields")
        if tag == previous:
            raise Bad(f"tag {tag} is written twice")
        previous = tag
        out += uvarint_bytes(tag)
        out += uvarint_bytes(len(data))
        out += data


def is_default_struct(value: object, spec: StructSpec) -> bool:
    """Kafka writes a tagged struct, or refuses one at a version without it, only when it is not the default.

    Called on every encode of a struct-typed tagged field (FetchResponse has three per partition), so the
    per-struct checks are worked out once and cached.
    """
    if value is _EMPTY:
        return True
    if not isinstance(value, dict | Mapping):
        return False
    checks = _DEFAULT_CHECKS.get(id(spec))
    if checks is None:
        checks = _DEFAULT_CHECKS[id(spec)] = _default_checks(spec)
    get = value.get
    for key, mode, default in checks:
        got = get(key, _MISSING)
        if got is _MISSING:
            continue
        if mode == 0:
            if got != default:
                return False
        elif mode == 1:  # arrays, bytes, records whose default is empty
            if got is None or len(got) != 0:
                return False
        elif not is_default_struct(got, default):  # type: ignore[arg-type]  # mode 2 holds a StructSpec
            return False
    return not get("_unknown_tagged_fields")


_DEFAULT_CHECKS: dict[int, list[tuple[str, int, object]]] = {}


def _default_checks(spec: StructSpec) -> list[tuple[str, int, object]]:
    checks: list[tuple[str, int, object]] = []
    for f in spec.fields:
        if f.default is DEFAULT_STRUCT:
            assert isinstance(f.type, StructRef)
            checks.append((f.key, 2, f.type.struct))
        elif f.default is not None and f.type.kind in ("array", "bytes", "records"):
            checks.append((f.key, 1, None))
        else:
            checks.append((f.key, 0, f.default))
    return checks


def _field_keys(spec: StructSpec) -> frozenset[str]:
    return frozenset(f.key for f in spec.fields) | {"_unknown_tagged_fields"}


def unknown_keys(path: str, value: Mapping[str, object], known: frozenset[str]) -> str:
    """The error for a value holding keys its struct does not have, naming them (and the nearest known ones)."""
    from kafkamock.spelling import closest

    unknown = sorted(str(k) for k in value.keys() - known)
    hints = []
    for key in unknown:
        close = closest(key, known)
        hints.append(f"{key!r}" + (f" (did you mean {close!r}?)" if close else ""))
    return f"{path}: unknown field{'s' if len(unknown) > 1 else ''} {', '.join(hints)}"


def _namespace(compiler: Compiler) -> dict[str, object]:
    """The globals a generated decoder or encoder runs with: the helpers it calls and the compiler's constants."""
    from kafkamock.codec.errors import DecodeError, EncodeError, StringTooLongError

    spec = compiler.spec
    namespace: dict[str, object] = {
        "_Bad": Bad, "_TooLong": TooLong, "_StringTooLongError": StringTooLongError, "_DecodeError": DecodeError,
        "_EncodeError": EncodeError, "_StructError": struct.error,
        "_NAME": spec.name, "_VERSION": compiler.version, "_M": Message, "_uvt": uvarint_tail, "_uvb": uvarint_bytes,
        "_UUID": uuid.UUID, "_ZU": ZERO_UUID, "_Z16": ZERO16, "_uuidb": uuid_bytes, "_unpack_from": struct.unpack_from,
        "_pack": struct.pack, "_write_tags": write_tags, "_rtags": read_unknown_tags, "_isdef": is_default_struct, "_MISSING": _MISSING,
        "_unknown_keys": unknown_keys,
        "_EMPTY": _EMPTY,
    }
    namespace.update(compiler.consts)
    return namespace


def build_decoder(compiler: Compiler) -> tuple[DecodeFrom, str]:
    """Compile (decode_from, its source): the generated Python decoder of ``compiler``'s message version."""
    source = compiler.decoder_source()
    return _compiled(compiler, source, "decode", "decode_from"), source  # type: ignore[return-value]


def build_encoder(compiler: Compiler) -> tuple[EncodeInto, str]:
    """Compile (encode_into, its source): the generated encoder of ``compiler``'s message version."""
    source = compiler.encoder_source()
    return _compiled(compiler, source, "encode", "encode_into"), source  # type: ignore[return-value]


def _compiled(compiler: Compiler, source: str, kind: str, name: str) -> object:
    """The function ``name`` that ``source`` (generated from the model) defines, run with the compiler's globals."""
    namespace = _namespace(compiler)
    filename = f"<kafkamock codec {compiler.spec.name} v{compiler.version}> {kind}"
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - source generated from the model
    return namespace[name]


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


_MISSING = _Missing()
_EMPTY: dict[str, object] = {}
