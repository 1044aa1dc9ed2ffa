"""JSON form of decoded messages, driven by the schema: bytes and records as base64, uuids as strings.

Used by the CLI so that ``kafkamock decode`` output feeds ``kafkamock encode`` unchanged.
"""

from __future__ import annotations

import base64
import binascii
import uuid
from collections.abc import Mapping
from typing import Any

from kafkamock.codec.errors import EncodeError
from kafkamock.schema.model import ArrayType, FieldType, MessageSpec, StructRef, StructSpec

UNKNOWN_TAGS = "_unknown_tagged_fields"


def to_json(spec: MessageSpec, message: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON-serialisable copy of a decoded message."""
    return _struct_out(spec.struct, message)


def from_json(spec: MessageSpec, version: int, obj: Mapping[str, Any]) -> dict[str, Any]:
    """The Python value (bytes, UUIDs) for a JSON object; unknown keys are an error naming them."""
    return _struct_in(spec.struct, obj, spec.name, spec, version)


def _struct_out(struct: StructSpec, value: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in struct.fields:
        if f.key in value:
            out[f.key] = _value_out(f.type, value[f.key])
    if value.get(UNKNOWN_TAGS):
        out[UNKNOWN_TAGS] = [[tag, base64.b64encode(data).decode()] for tag, data in value[UNKNOWN_TAGS]]
    return out


def _value_out(ftype: FieldType, value: Any) -> Any:
    if value is None:
        return None
    if ftype.kind in ("bytes", "records"):
        return base64.b64encode(value).decode()
    if ftype.kind == "uuid":
        return str(value)
    if isinstance(ftype, ArrayType):
        return [_value_out(ftype.element, v) for v in value]
    if isinstance(ftype, StructRef):
        return _struct_out(ftype.struct, value)
    return value


def _struct_in(struct: StructSpec, obj: Any, path: str, spec: MessageSpec, version: int) -> dict[str, Any]:
    if not isinstance(obj, Mapping):
        raise EncodeError(spec.name, version, f"{path}: expected a JSON object")
    known = {f.key: f for f in struct.fields}
    out: dict[str, Any] = {}
    for key, value in obj.items():
        if key == UNKNOWN_TAGS:
            out[key] = [(int(tag), _b64(data, f"{path}.{key}", spec, version)) for tag, data in value]
            continue
        f = known.get(key)
        if f is None:
            raise EncodeError(spec.name, version, f"{path}: no field {key!r} (fields: {', '.join(known)})")
        out[key] = _value_in(f.type, value, f"{path}.{f.name}", spec, version)
    return out


def _value_in(ftype: FieldType, value: Any, path: str, spec: MessageSpec, version: int) -> Any:
    if value is None:
        return None
    if ftype.kind in ("bytes", "records"):
        return _b64(value, path, spec, version)
    if ftype.kind == "uuid":
        try:
            return uuid.UUID(value)
        except (ValueError, TypeError, AttributeError):
            try:
                raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
                return uuid.UUID(bytes=raw)
            except (ValueError, TypeError, binascii.Error):
                raise EncodeError(spec.name, version, f"{path}: {value!r} is not a UUID") from None
    if isinstance(ftype, ArrayType):
        if not isinstance(value, list):
            raise EncodeError(spec.name, version, f"{path}: expected a JSON array")
        return [_value_in(ftype.element, v, f"{path}[{i}]", spec, version) for i, v in enumerate(value)]
    if isinstance(ftype, StructRef):
        return _struct_in(ftype.struct, value, path, spec, version)
    return value


def _b64(value: Any, path: str, spec: MessageSpec, version: int) -> bytes:
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, TypeError, ValueError):
        raise EncodeError(spec.name, version, f"{path}: expected base64 bytes") from None
