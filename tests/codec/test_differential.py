"""Differential tests against Apache Kafka 4.3.1's own serializer (the generated ``*Data`` classes, via the oracle).

For every message and every valid version in schemas/: values drawn from the schema encode to exactly Java's
bytes, and kafkamock decodes Java's bytes back to the value. Fields set at a version that lacks them are refused
(or dropped, when ignorable) exactly when Java refuses (or drops) them.
"""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import values
from support.kafka_json import to_kafka_json
from support.oracle import OracleError

from kafkamock.broker.transactions.records import SCHEMAS as TRANSACTION_LOG_SCHEMAS
from kafkamock.codec import EncodeError, default_registry
from kafkamock.records.control import KAFKAMOCK_SCHEMAS
from kafkamock.schema import COORDINATOR_TYPES, DEFAULT_STRUCT, FieldSpec, MessageSpec

pytestmark = pytest.mark.java

REGISTRY = default_registry()


def _has_kafka_class(spec: MessageSpec) -> bool:
    """Whether the oracle's kafka-clients 4.3.1 has a generated class for ``spec``. Not kafkamock's own layouts
    (KIP-932 share-state records), and not the group coordinator's records (coordinator-key/-value): their classes
    are generated in Kafka's group-coordinator module, which is not in kafka-clients (test_coordinator_records.py
    checks them against hand-written bytes instead), nor the transaction coordinator's (Kafka's server jars)."""
    return (spec.name not in KAFKAMOCK_SCHEMAS and spec.type not in COORDINATOR_TYPES
            and spec.name not in TRANSACTION_LOG_SCHEMAS)


CASES = [(spec.name, v) for spec in REGISTRY.schemas if _has_kafka_class(spec) for v in spec.valid_versions]


@pytest.mark.parametrize(("name", "version"), CASES, ids=[f"{n}-v{v}" for n, v in CASES])
def test_bytes_equal_kafkas_and_kafkas_bytes_decode_to_the_value(kafka_oracle, name, version):
    spec = REGISTRY.message(name)
    codec = REGISTRY.codec(name, version)

    @settings(max_examples=6)
    @given(st.lists(values(spec, version), min_size=1, max_size=6))
    def check(vals):
        java = kafka_oracle.encode([(name, version, to_kafka_json(spec, version, v)) for v in vals])
        for value, expected in zip(vals, java, strict=True):
            assert not isinstance(expected, OracleError), expected
            assert codec.encode(value) == expected
            assert codec.decode(expected) == value

    check()


def _non_default(f: FieldSpec):
    """A simple value that differs from the field's default, or None when there is no obvious one."""
    kind = f.type.kind
    if kind in ("int8", "int16", "int32", "int64", "uint16", "uint32"):
        return 1 if f.default != 1 else 2
    return {"bool": not f.default, "float64": 1.5, "string": "x" if f.default != "x" else "y", "bytes": b"x",
            "records": b"x", "uuid": uuid.UUID(int=1),
            "array": None if f.default is not None else []}.get(kind)


ABSENT = [
    (spec.name, version, f.key)
    for spec in REGISTRY.schemas if _has_kafka_class(spec)
    for version in spec.valid_versions
    for f in spec.fields
    if not f.present(version) and f.default is not DEFAULT_STRUCT and _non_default(f) is not None
]


def test_out_of_version_fields_are_refused_or_dropped_as_kafka_does(kafka_oracle):
    assert len(ABSENT) > 50
    items, ours = [], []
    for name, version, key in ABSENT:
        spec = REGISTRY.message(name)
        f = next(x for x in spec.fields if x.key == key)
        value = {key: _non_default(f)}
        items.append((name, version, to_kafka_json(spec, version, value, keep_absent=True)))
        try:
            ours.append(REGISTRY.codec(name, version).encode(value))
        except EncodeError as exc:
            assert f.name in str(exc) and not f.ignorable
            ours.append(None)
    for (name, version, key), mine, java in zip(ABSENT, ours, kafka_oracle.encode(items), strict=True):
        if isinstance(java, OracleError):
            assert mine is None, f"{name} v{version} {key}: Java refuses ({java}), kafkamock wrote {mine!r}"
        else:
            assert mine == java, f"{name} v{version} {key}: Java wrote {java!r}, kafkamock {mine!r}"
