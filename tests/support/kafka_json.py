"""Convert between kafkamock's Python message values and Apache Kafka's JsonConverter JSON, driven by our schema model.

The Java oracle (tests/java/KafkaOracle.java) speaks the JSON of Kafka's generated ``<Name>DataJsonConverter``s,
so a differential test goes ``value -> to_kafka_json -> Java encode`` and ``Java decode -> from_kafka_json -> value``.

Kafka's JSON conventions (read off kafka-clients 4.3.1's generated converters and Kafka's JsonConverterGenerator):

- keys are the schema field names with the first letter lower-cased (``field.camelCaseName()``):
  ``GroupId -> groupId``, ``ISRNodes -> iSRNodes``; nested structs are JSON objects, arrays JSON arrays, null is null.
- int8/int16/int32/uint16/uint32/int64 are JSON integers (read with range checks; text is rejected);
  float64 is a JSON float (an integer literal such as ``1`` is rejected, so we always send Python floats);
  Jackson writes NaN/Infinity as the strings ``"NaN"``/``"Infinity"``/``"-Infinity"``.
- bool is true/false; string is a JSON string.
- bytes and records are base64 strings (standard alphabet, padded: Jackson's BinaryNode);
  uuid is Kafka's ``Uuid.toString()``: URL-safe base64 of the 16 bytes without padding (22 characters).
- writing (decode side) emits only the fields present at that version; a tagged field only when it differs from
  its default; nothing for fields outside the version. NB Kafka writes every non-null records field as ``""``;
  the oracle puts the real bytes back (see KafkaOracle.java), so here records behave exactly like bytes.
- reading (encode side) requires every non-tagged field of the version (missing -> "unable to locate field ...,
  which is mandatory in version N"); a missing tagged or out-of-version field takes its default; a field present in
  the JSON is read even outside its versions, and Kafka's ``write()`` then rejects it if it is non-ignorable and not
  the default (UnsupportedVersionException) and drops it if ignorable. Unknown keys are ignored.

Our Python convention (what ``kafkamock.codec.decode`` returns and what ``from_kafka_json`` returns): a dict holding
EVERY field of the struct under its snake_case key (``FieldSpec.key``), fields outside the version holding their
schema default, tagged fields their default when not sent; int types -> int, float64 -> float, bool -> bool,
string -> str|None, bytes/records -> bytes|None, uuid -> uuid.UUID, arrays -> list|None, structs -> dict|None.
A schema default of ``()`` is an empty list, ``DEFAULT_STRUCT`` a dict of the struct's defaults (recursively).

Unknown tagged fields (``_unknown_tagged_fields``) are not part of Kafka's JSON and are ignored unless
``unknown_tagged=True`` is passed: then they map to the oracle's own ``_unknownTaggedFields`` extension, as a list of
``(tag, bytes)`` pairs in wire order on the Python side.
"""

from __future__ import annotations

import base64
import math
import uuid
from typing import Any

from kafkamock.schema import DEFAULT_STRUCT, ArrayType, FieldSpec, MessageSpec, StructRef, StructSpec

__all__ = [
    "UNKNOWN_TAGGED_KEY", "default_struct", "default_value", "from_kafka_json", "is_default", "json_name",
    "kafka_uuid", "normalize", "parse_kafka_uuid", "to_kafka_json",
]

UNKNOWN_TAGGED_KEY = "_unknown_tagged_fields"
"""Our key for unknown tagged fields; ``_unknownTaggedFields`` is the oracle's JSON extension for them."""
_JAVA_UNKNOWN_TAGGED = "_unknownTaggedFields"

INT_KINDS = {
    "int8": (-(2**7), 2**7 - 1), "int16": (-(2**15), 2**15 - 1), "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1), "uint16": (0, 2**16 - 1), "uint32": (0, 2**32 - 1),
}
_SPECIAL_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def json_name(field: FieldSpec) -> str:
    """Kafka's JSON key for a field: the schema name with its first letter lower-cased (not snake/camel-cased)."""
    return field.name[:1].lower() + field.name[1:]


def kafka_uuid(value: uuid.UUID) -> str:
    """Kafka's ``Uuid.toString()``: URL-safe base64 without padding, e.g. the zero UUID is ``AAAAAAAAAAAAAAAAAAAAAA``."""
    return base64.urlsafe_b64encode(value.bytes).rstrip(b"=").decode("ascii")


def parse_kafka_uuid(text: str) -> uuid.UUID:
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if len(raw) != 16:
        raise ValueError(f"{text!r} is not a Kafka Uuid (decodes to {len(raw)} bytes)")
    return uuid.UUID(bytes=raw)


def default_struct(struct: StructSpec) -> dict:
    """A fresh dict of every field's default: what an absent non-null struct stands for."""
    return {f.key: default_value(f) for f in struct.fields}


def default_value(field: FieldSpec) -> Any:
    """The field's schema default in our convention, as a fresh (mutable) value."""
    d = field.default
    if d is DEFAULT_STRUCT:
        return default_struct(_struct_of(field))
    if isinstance(d, tuple):
        return list(d)
    return d


def normalize(ftype, value: Any) -> Any:
    """A canonical form for comparisons: structs filled out with defaults, tuples as lists, DEFAULT_STRUCT expanded."""
    if value is None:
        return None
    if isinstance(ftype, ArrayType):
        return [normalize(ftype.element, v) for v in value]
    if isinstance(ftype, StructRef):
        if value is DEFAULT_STRUCT:
            value = {}
        out = {}
        for f in ftype.struct.fields:
            out[f.key] = normalize(f.type, value[f.key]) if f.key in value else normalize(f.type, default_value(f))
        if value.get(UNKNOWN_TAGGED_KEY):  # Kafka's equals() counts them: such a struct is never the default
            raw = value[UNKNOWN_TAGGED_KEY]
            out[UNKNOWN_TAGGED_KEY] = [(t, bytes(d)) for t, d in (raw.items() if isinstance(raw, dict) else raw)]
        return out
    return value


def is_default(field: FieldSpec, value: Any) -> bool:
    """Whether a value equals the field's default the way Kafka's generated non-default checks see it."""
    return normalize(field.type, value) == normalize(field.type, default_value(field))


def _struct_of(field: FieldSpec) -> StructSpec:
    t = field.type.element if isinstance(field.type, ArrayType) else field.type
    assert isinstance(t, StructRef), field
    return t.struct


def _spec_struct(spec: MessageSpec | StructSpec) -> StructSpec:
    return spec.struct if isinstance(spec, MessageSpec) else spec


# ---- Python value -> Kafka JSON --------------------------------------------------------------------------------


def to_kafka_json(spec: MessageSpec | StructSpec, version: int, value: dict, *, keep_absent: bool = False,
                  unknown_tagged: bool = False) -> dict:
    """Our value -> the JSON Kafka's ``<Name>DataJsonConverter.read(json, version)`` takes.

    Missing keys take their defaults (so partial dicts are fine); an unknown key is a ``KeyError`` (catches typos).
    Fields outside ``version`` are left out, as Kafka's own ``write`` does, unless ``keep_absent`` is set: then
    those holding a non-default value are sent too, so Java's ``write()`` rejects a non-ignorable one as our codec
    must. Types are checked, ranges and nullability are not: Java's verdict on those is the point of the oracle.
    """
    return _struct_to_json(_spec_struct(spec), version, value, keep_absent, unknown_tagged, spec.name)


def _struct_to_json(struct: StructSpec, version: int, value: Any, keep_absent: bool, unknown_tagged: bool,
                    where: str) -> dict:
    if value is DEFAULT_STRUCT:
        value = {}
    if not isinstance(value, dict):
        raise TypeError(f"{where}: expected a dict for struct {struct.name}, got {type(value).__name__}")
    known = {f.key for f in struct.fields}
    extra = set(value) - known - {UNKNOWN_TAGGED_KEY}
    if extra:
        raise KeyError(f"{where}: unknown key(s) {sorted(extra)} for struct {struct.name}")
    out: dict = {}
    for f in struct.fields:
        v = value[f.key] if f.key in value else default_value(f)
        if f.present(version):
            if f.tagged(version) and is_default(f, v):
                continue  # as Kafka writes it; its reader defaults a missing tagged field
        elif not keep_absent or is_default(f, v):
            continue
        out[json_name(f)] = _to_json(f.type, version, v, keep_absent, unknown_tagged, f"{where}.{f.name}")
    if unknown_tagged and value.get(UNKNOWN_TAGGED_KEY):
        raw = value[UNKNOWN_TAGGED_KEY]
        pairs = raw.items() if isinstance(raw, dict) else raw
        out[_JAVA_UNKNOWN_TAGGED] = [
            {"tag": int(tag), "data": base64.b64encode(bytes(data)).decode("ascii")} for tag, data in pairs
        ]
    return out


def _to_json(ftype, version: int, v: Any, keep_absent: bool, unknown_tagged: bool, where: str) -> Any:
    if v is None:
        return None  # nullability is Java's to judge
    if isinstance(ftype, ArrayType):
        if not isinstance(v, list | tuple):
            raise TypeError(f"{where}: expected a list, got {type(v).__name__}")
        return [_to_json(ftype.element, version, e, keep_absent, unknown_tagged, f"{where}[{i}]")
                for i, e in enumerate(v)]
    if isinstance(ftype, StructRef):
        return _struct_to_json(ftype.struct, version, v, keep_absent, unknown_tagged, where)
    kind = ftype.kind
    if kind in INT_KINDS:
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"{where}: expected an int for {kind}, got {type(v).__name__}")
        return v
    if kind == "bool":
        if not isinstance(v, bool):
            raise TypeError(f"{where}: expected a bool, got {type(v).__name__}")
        return v
    if kind == "float64":
        if not isinstance(v, int | float) or isinstance(v, bool):
            raise TypeError(f"{where}: expected a float, got {type(v).__name__}")
        return float(v)  # Kafka rejects an integer literal for float64
    if kind == "string":
        if not isinstance(v, str):
            raise TypeError(f"{where}: expected a str, got {type(v).__name__}")
        return v
    if kind in ("bytes", "records"):
        if not isinstance(v, bytes | bytearray | memoryview):
            raise TypeError(f"{where}: expected bytes for {kind}, got {type(v).__name__}")
        return base64.b64encode(bytes(v)).decode("ascii")
    if kind == "uuid":
        if not isinstance(v, uuid.UUID):
            raise TypeError(f"{where}: expected a uuid.UUID, got {type(v).__name__}")
        return kafka_uuid(v)
    raise TypeError(f"{where}: unknown type {ftype}")  # pragma: no cover


# ---- Kafka JSON -> Python value --------------------------------------------------------------------------------


def from_kafka_json(spec: MessageSpec | StructSpec, version: int, json: dict, *, unknown_tagged: bool = False) -> dict:
    """Kafka's ``<Name>DataJsonConverter.write(data, version)`` JSON -> our value (every field, defaults filled in).

    Strict: a key that is no field of the struct is a ``KeyError`` (Java only writes known fields; the oracle's
    ``_unknownTaggedFields`` extension is dropped unless ``unknown_tagged``), and JSON types must match the schema.
    """
    return _struct_from_json(_spec_struct(spec), version, json, unknown_tagged, spec.name)


def _struct_from_json(struct: StructSpec, version: int, node: Any, unknown_tagged: bool, where: str) -> dict:
    if not isinstance(node, dict):
        raise TypeError(f"{where}: expected a JSON object for struct {struct.name}, got {type(node).__name__}")
    out: dict = {}
    seen = 0
    for f in struct.fields:
        name = json_name(f)
        if name in node:
            seen += 1
            out[f.key] = _from_json(f.type, version, node[name], unknown_tagged, f"{where}.{f.name}")
        else:
            out[f.key] = default_value(f)
    if _JAVA_UNKNOWN_TAGGED in node:
        seen += 1
        if unknown_tagged:
            out[UNKNOWN_TAGGED_KEY] = [(int(e["tag"]), base64.b64decode(e["data"], validate=True))
                                       for e in node[_JAVA_UNKNOWN_TAGGED]]
    if seen != len(node):
        names = {json_name(f) for f in struct.fields} | {_JAVA_UNKNOWN_TAGGED}
        raise KeyError(f"{where}: unknown JSON key(s) {sorted(set(node) - names)} for struct {struct.name}")
    return out


def _from_json(ftype, version: int, node: Any, unknown_tagged: bool, where: str) -> Any:
    if node is None:
        return None
    if isinstance(ftype, ArrayType):
        if not isinstance(node, list):
            raise TypeError(f"{where}: expected a JSON array, got {type(node).__name__}")
        return [_from_json(ftype.element, version, e, unknown_tagged, f"{where}[{i}]") for i, e in enumerate(node)]
    if isinstance(ftype, StructRef):
        return _struct_from_json(ftype.struct, version, node, unknown_tagged, where)
    kind = ftype.kind
    if kind in INT_KINDS:
        if not isinstance(node, int) or isinstance(node, bool):
            raise TypeError(f"{where}: expected a JSON integer for {kind}, got {node!r}")
        return node
    if kind == "bool":
        if not isinstance(node, bool):
            raise TypeError(f"{where}: expected true/false, got {node!r}")
        return node
    if kind == "float64":
        if isinstance(node, str) and node in _SPECIAL_FLOATS:
            return _SPECIAL_FLOATS[node]
        if not isinstance(node, int | float) or isinstance(node, bool):
            raise TypeError(f"{where}: expected a JSON number for float64, got {node!r}")
        return float(node)
    if kind == "string":
        if not isinstance(node, str):
            raise TypeError(f"{where}: expected a JSON string, got {node!r}")
        return node
    if kind in ("bytes", "records"):
        if not isinstance(node, str):
            raise TypeError(f"{where}: expected a base64 string for {kind}, got {node!r}")
        return base64.b64decode(node, validate=True)
    if kind == "uuid":
        if not isinstance(node, str):
            raise TypeError(f"{where}: expected a Kafka Uuid string, got {node!r}")
        return parse_kafka_uuid(node)
    raise TypeError(f"{where}: unknown type {ftype}")  # pragma: no cover
