"""Decode programs: a message's schema at one version as nested tuples that the compiled decoder
(``kafkamock/codec/_decode.c``) runs, for the messages that come and go on every request.

The generated Python decoder stays the reference: the compiled one takes only the common road (every field fits,
no null where none is allowed, strings within Kafka's limit and valid UTF-8, no tagged field on the wire) and
hands anything else to its Python twin, which decodes it or raises the exact ``DecodeError``. Both build the same
Messages: same classes, same keys in the same order, the same shared defaults. ``COMPILED`` says whether the
extension was built (``pip install`` compiles it where a C compiler is found); without it every codec decodes in
Python.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from kafkamock.codec.message import Message
from kafkamock.schema.model import DEFAULT_STRUCT, ZERO_UUID, ArrayType, FieldSpec, FieldType, StructRef, StructSpec

if TYPE_CHECKING:
    from kafkamock.codec.generator import Compiler, DecodeFrom

    Buffer = bytes | bytearray | memoryview

try:
    from kafkamock.codec import _decode  # type: ignore[attr-defined]
except ImportError:              # built without a C compiler: the Python decoders only
    _decode = None

COMPILED = _decode is not None
if _decode is not None:
    _decode.configure(ZERO_UUID, uuid.UUID, uuid.SafeUUID.unknown)

# The ops and default kinds of _decode.c.
FIXED = {"bool": 1, "int8": 2, "int16": 3, "uint16": 4, "int32": 5, "uint32": 6, "int64": 7, "float64": 8,
         "uuid": 9}
STRING, BYTES, RECORDS, ARRAY, STRUCT = 10, 11, 12, 13, 14
DEF_CONST, DEF_LIST, DEF_CALL = 0, 1, 2
MAX_SLOTS = 64       # values one struct reads (_decode.c keeps them on its stack)


class Unsupported(Exception):
    """A shape the compiled decoder does not take: the message decodes in Python alone."""


def with_compiled(compiler: Compiler, python: DecodeFrom) -> DecodeFrom:
    """``python`` (the generated decoder of ``compiler``'s message, or what compiles it on its first call) behind the
    compiled one, when the extension is built and the message's shape allows (the compiled one carries ``python`` as
    its ``python`` attribute, for tests that hold both twins side by side); ``python`` itself otherwise."""
    if _decode is None:
        return python
    try:
        program = struct_program(compiler, compiler.spec.struct)
    except Unsupported:
        return python
    fast = partial(_decode.decode_from, program, python)
    fast.python = python         # type: ignore[attr-defined]
    return fast                  # type: ignore[return-value]


def whole(decode_from: DecodeFrom, python: Callable[[Buffer], Message]) -> Callable[[Buffer], Message]:
    """``Codec.decode`` (exactly one message): the compiled road where ``decode_from`` has one, behind
    ``python`` (the same check in Python, which raises the exact DecodeError)."""
    if _decode is None or not isinstance(decode_from, partial):
        return python
    return partial(_decode.decode, decode_from.args[0], python)


def struct_program(compiler: Compiler, spec: StructSpec) -> tuple[Any, ...]:
    """(class, reads, fields, flexible) of ``spec`` at the compiler's version (see _decode.c)."""
    version = compiler.version
    slots: dict[str, int] = {}
    reads: list[tuple[Any, ...]] = []
    for f in spec.at(version).regular:
        slots[f.key] = len(reads)
        reads.append((len(reads), *op(compiler, f.type, f, version in f.nullable_versions)))
    if len(reads) > MAX_SLOTS:
        raise Unsupported(f"{spec.name}: {len(reads)} fields")
    fields = tuple((f.key, slots[f.key], DEF_CONST, None) if f.key in slots else (f.key, -1, *default(compiler, f))
                   for f in spec.fields)
    cls = compiler.classes.get((compiler.spec.name, spec.name)) or Message
    return cls, tuple(reads), fields, bool(compiler.flexible)


def op(compiler: Compiler, ftype: FieldType, f: FieldSpec | None, nullable: bool) -> tuple[Any, ...]:
    """(op, args...) reading one value, as ``Compiler.decode_value`` does."""
    kind = ftype.kind
    if kind in FIXED:
        return (FIXED[kind],)
    if kind in ("string", "bytes"):
        return (STRING if kind == "string" else BYTES, bool(compiler.compact(f)), bool(nullable))
    if kind == "records":
        return (RECORDS, bool(compiler.flexible), bool(nullable))
    if kind == "array":
        assert isinstance(ftype, ArrayType)
        elem = ftype.element
        item = (STRUCT, False, False, struct_program(compiler, elem.struct)) if isinstance(elem, StructRef) \
            else op(compiler, elem, None, False)
        return (ARRAY, bool(compiler.flexible), bool(nullable), *item)
    if kind == "struct":
        assert isinstance(ftype, StructRef)
        return (STRUCT, False, bool(nullable), struct_program(compiler, ftype.struct))
    raise Unsupported(kind)


def default(compiler: Compiler, f: FieldSpec) -> tuple[int, Any]:
    """(kind, default) of a field the wire does not carry at this version, the value ``Compiler.default_expr``
    gives: the object itself when immutable (a shared read-only struct default included), a new list, or a
    function building a new struct."""
    d = f.default
    if d is DEFAULT_STRUCT or (d == () and f.type.kind == "array"):
        e = compiler.emitter()
        expr = compiler.default_expr(e, f)
        if expr == "[]":
            return DEF_LIST, None
        if expr in compiler.consts:
            return DEF_CONST, compiler.consts[expr]
        namespace = {"_M": Message, **compiler.consts}
        return DEF_CALL, eval("lambda: " + expr, namespace)  # noqa: S307 - an expression generated from the model
    return DEF_CONST, d
