"""Kafka 4.3.1's own schema directory: every file loads, every version compiles, and ours (imported from 4.3.0,
whose message schemas 4.3.1 keeps unchanged) carry the same facts."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from kafkamock.broker.transactions.records import SCHEMAS as TRANSACTION_LOG_SCHEMAS
from kafkamock.codec import Registry, default_registry
from kafkamock.records.control import KAFKAMOCK_SCHEMAS
from kafkamock.schema import COORDINATOR_TYPES

pytestmark = pytest.mark.java  # needs the kafka-clients jar fetched by `make java`


@pytest.fixture(scope="module")
def upstream_dir(tmp_path_factory) -> Path:
    from support.oracle import DEFAULT_CACHE, _fetch_jars

    jar = next(j for j in _fetch_jars(Path(DEFAULT_CACHE)) if j.name.startswith("kafka-clients-"))
    out = tmp_path_factory.mktemp("kafka-4.3.1-schemas")
    with zipfile.ZipFile(jar) as z:
        for name in z.namelist():
            if name.startswith("common/message/") and name.endswith(".json"):
                (out / Path(name).name).write_bytes(z.read(name))
    return out


def test_every_upstream_schema_loads_and_compiles(upstream_dir):
    reg = Registry.from_directory(upstream_dir)
    assert len(reg.schemas) == 198
    compiled = 0
    for spec in reg.schemas:
        for version in spec.valid_versions:
            codec = reg.codec(spec.name, version)
            data = codec.encode({})
            assert codec.encode(codec.decode(data)) == data
            compiled += 1
    assert compiled > 600


def _facts(fields):
    out = []
    for f in fields:
        inner = getattr(f.type, "struct", None) or getattr(getattr(f.type, "element", None), "struct", None)
        out.append((f.name, str(f.type), str(f.versions), str(f.nullable_versions), str(f.tagged_versions), f.tag,
                    repr(f.default), f.ignorable, f.map_key, f.entity_type, str(f.flexible_versions), f.zero_copy,
                    _facts(inner.fields) if inner is not None else None))
    return out


def test_our_schemas_carry_kafkas_protocol_facts(upstream_dir):
    upstream = Registry.from_directory(upstream_dir).schemas
    for ours in default_registry().schemas:
        if ours.name in KAFKAMOCK_SCHEMAS:
            continue
        if ours.type in COORDINATOR_TYPES or ours.name in TRANSACTION_LOG_SCHEMAS:
            # The group coordinator's records ship in Kafka's group-coordinator module, not in kafka-clients' schema
            # directory: there is nothing here to compare them with (tests/codec/test_coordinator_records.py pins
            # their bytes).
            continue
        theirs = upstream[ours.name]
        assert (ours.api_key, ours.type, str(ours.valid_versions), str(ours.flexible_versions),
                ours.latest_version_unstable) == (theirs.api_key, theirs.type, str(theirs.valid_versions),
                                                   str(theirs.flexible_versions), theirs.latest_version_unstable)
        assert _facts(ours.fields) == _facts(theirs.fields), ours.name
        for version in ours.valid_versions:
            assert ours.header_version(version) == (0 if ours.name == "ApiVersionsResponse"
                                                    else theirs.header_version(version))
