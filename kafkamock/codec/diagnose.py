"""Find the field at fault when an encode fails.

The generated encoders do no per-field bookkeeping (it would cost on every message); when one fails on a
value it cannot pack, this walker re-checks the value against the schema to name the field and the reason.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence

from kafkamock.schema.loader import INT_RANGES
from kafkamock.schema.model import ArrayType, FieldSpec, FieldType, MessageSpec, StructRef, StructSpec

_MISSING = object()


def diagnose(spec: MessageSpec, version: int, value: object) -> str | None:
    """The first problem found in ``value`` as ``"Path.Field: reason"``, or None if none is found."""
    return _struct(spec.struct, version, spec, value, spec.name)


def _struct(struct: StructSpec, version: int, spec: MessageSpec, value: object, path: str) -> str | None:
    if not isinstance(value, Mapping):
        return f"{path}: expected a mapping, got {type(value).__name__}"
    for f in struct.fields:
        if not f.present(version):
            continue
        got = value.get(f.key, _MISSING)
        if got is _MISSING:
            continue
        problem = _value(f.type, f, version, spec, got, f"{path}.{f.name}", version in f.nullable_versions)
        if problem:
            return problem
    return None


def _value(ftype: FieldType, f: FieldSpec | None, version: int, spec: MessageSpec, got: object, path: str,
           nullable: bool) -> str | None:
    kind = ftype.kind
    if got is None:
        return None if nullable else f"{path}: null for a non-nullable field"
    if kind in INT_RANGES:
        if not isinstance(got, int):
            return f"{path}: expected an integer, got {type(got).__name__}"
        low, high = INT_RANGES[kind]
        if not low <= got <= high:
            return f"{path}: {got} is out of range for {kind} ({low}..{high})"
        return None
    if kind == "bool":
        return None if isinstance(got, bool | int) else f"{path}: expected a bool, got {type(got).__name__}"
    if kind == "float64":
        return None if isinstance(got, float | int) else f"{path}: expected a float, got {type(got).__name__}"
    if kind == "uuid":
        return None if isinstance(got, uuid.UUID) else f"{path}: expected a uuid.UUID, got {type(got).__name__}"
    if kind == "string":
        if not isinstance(got, str):
            return f"{path}: expected a str, got {type(got).__name__}"
        try:
            got.encode()
        except UnicodeEncodeError as exc:
            return f"{path}: string cannot be encoded as UTF-8 ({exc.reason})"
        return None
    if kind in ("bytes", "records"):
        ok = isinstance(got, bytes | bytearray | memoryview)
        return None if ok else f"{path}: expected bytes, got {type(got).__name__}"
    if kind == "array":
        assert isinstance(ftype, ArrayType)
        if not isinstance(got, Sequence) or isinstance(got, str | bytes):
            return f"{path}: expected a list, got {type(got).__name__}"
        for i, item in enumerate(got):
            problem = _value(ftype.element, None, version, spec, item, f"{path}[{i}]", False)
            if problem:
                return problem
        return None
    if kind == "struct":
        assert isinstance(ftype, StructRef)
        return _struct(ftype.struct, version, spec, got, path)
    return None  # pragma: no cover
