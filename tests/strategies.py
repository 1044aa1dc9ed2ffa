"""Hypothesis strategies for valid message values, built from our schema model.

``values(spec, version)`` draws a dict in kafkamock's value convention (see tests/support/kafka_json.py): every
field of every struct present, fields outside ``version`` holding their schema default, present fields drawn from
their type. The values are valid for both kafkamock's codec and Kafka's own serializer, so a differential test can
feed them to both and expect the same bytes:

- ints cover each type's whole range (int8 ... int64, uint16, uint32); float64 is finite; uuids are any 128 bits
  (the zero UUID included); strings have at most ``MAX_STRING`` characters, non-ASCII and astral ones included,
  surrogates excluded (they cannot be UTF-8 encoded); bytes at most ``MAX_BYTES``; arrays 0-``MAX_ARRAY`` elements.
- null only where the field is nullable at that version (nullable strings, bytes, records, arrays, structs).
- tagged fields are sometimes their default (not sent on the wire) and sometimes drawn (sent).
- mapKey arrays may repeat keys: the wire allows it and Kafka's collections keep duplicates (docs/architecture.md).
- records are small arbitrary bytes (or null where nullable). Kafka never parses a records field when it reads or
  writes a message (``MemoryRecords.readableRecords`` just wraps the bytes), and neither does our codec, so any
  bytes round-trip; valid record batches are the business of kafkamock.records' own tests.

Sizes stay small so thousands of examples per test are cheap. Strategies are cached per (spec, version).
"""

from __future__ import annotations

import functools

from hypothesis import strategies as st

from kafkamock.schema import DEFAULT_STRUCT, ArrayType, FieldSpec, MessageSpec, StructRef, StructSpec

MAX_STRING = 24
MAX_BYTES = 16
MAX_RECORDS = 32
MAX_ARRAY = 3

INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1), "int16": (-(2**15), 2**15 - 1), "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1), "uint16": (0, 2**16 - 1), "uint32": (0, 2**32 - 1),
}

__all__ = ["MAX_ARRAY", "MAX_BYTES", "MAX_RECORDS", "MAX_STRING", "default_of", "field_values", "struct_values",
           "values"]


def values(spec: MessageSpec, version: int) -> st.SearchStrategy[dict]:
    """Valid values of ``spec`` at ``version`` (a request, response, header or data message)."""
    if version not in spec.codec_versions:
        raise ValueError(f"{spec.name} has no version {version} (valid: {spec.codec_versions})")
    return struct_values(spec.struct, version)


@functools.cache
def struct_values(struct: StructSpec, version: int) -> st.SearchStrategy[dict]:
    """Values of one struct at ``version``: a fixed dict with every field's key. (StructSpecs hash by identity.)"""
    return st.fixed_dictionaries({f.key: field_values(f, version) for f in struct.fields})


def field_values(field: FieldSpec, version: int) -> st.SearchStrategy:
    if not field.present(version):
        return default_of(field)
    drawn = _type_values(field.type, version, field)
    if field.nullable(version):
        drawn = st.none() | drawn
    if field.tagged(version):
        return default_of(field) | drawn
    return drawn


def default_of(field: FieldSpec) -> st.SearchStrategy:
    """The field's default, built fresh per example (lists and dicts must not be shared between examples)."""
    return st.builds(functools.partial(_default, field))


def _default(field: FieldSpec):
    d = field.default
    if d is DEFAULT_STRUCT:
        assert isinstance(field.type, StructRef)
        return {f.key: _default(f) for f in field.type.struct.fields}
    if isinstance(d, tuple):
        return list(d)
    return d


def _type_values(ftype, version: int, field: FieldSpec) -> st.SearchStrategy:
    if isinstance(ftype, ArrayType):
        return st.lists(_type_values(ftype.element, version, field), max_size=MAX_ARRAY)
    if isinstance(ftype, StructRef):
        # deferred: a struct is only built when drawn, which also keeps a (hypothetical) recursive schema finite
        struct = ftype.struct
        return st.deferred(lambda: struct_values(struct, version))
    kind = ftype.kind
    if kind in INT_RANGES:
        low, high = INT_RANGES[kind]
        return st.integers(low, high)
    if kind == "bool":
        return st.booleans()
    if kind == "float64":
        return st.floats(allow_nan=False, allow_infinity=False)
    if kind == "string":
        return st.text(st.characters(codec="utf-8"), max_size=MAX_STRING)
    if kind == "bytes":
        return st.binary(max_size=MAX_BYTES)
    if kind == "records":
        return st.binary(max_size=MAX_RECORDS)
    if kind == "uuid":
        return st.uuids(allow_nil=True)
    raise TypeError(f"{field.name}: unknown type {ftype}")  # pragma: no cover
