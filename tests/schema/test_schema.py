"""The schema language loader: what it accepts, and how it names the file and field of what it refuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafkamock.codec import Registry
from kafkamock.schema import SchemaError, Versions, load_schema_text, load_schemas, snake_case

ROOT = Path(__file__).resolve().parents[2]


def message(fields, **top):
    doc = {"apiKey": 1000, "type": "request", "name": "TestRequest", "validVersions": "0-3",
           "flexibleVersions": "2+", "fields": fields}
    doc.update(top)
    return "// a comment, then the schema\n" + json.dumps(doc)


def field(**kw):
    return {"name": "Value", "type": "int32", "versions": "0+", **kw}


def refuse(text: str, *fragments: str) -> SchemaError:
    with pytest.raises(SchemaError) as info:
        load_schema_text(text, "Test.json")
    for fragment in ("Test.json", *fragments):
        assert fragment in str(info.value), str(info.value)
    return info.value


def test_versions_parse():
    assert str(Versions.parse("2+")) == "2+" and 7 in Versions.parse("2+")
    assert list(Versions.parse("1-3")) == [1, 2, 3]
    assert Versions.parse("none").empty and 0 not in Versions.parse("none")
    for bad in ("3-1", "x", "1-", "-1", "40000"):
        with pytest.raises(ValueError):
            Versions.parse(bad)


def test_snake_case():
    assert snake_case("GroupId") == "group_id"
    assert snake_case("IsRenewAck") == "is_renew_ack"
    assert snake_case("ISRNodes") == "isr_nodes"
    assert snake_case("timeoutMs") == "timeout_ms"
    assert snake_case("ThrottleTimeMs") == "throttle_time_ms"


def test_comments_inside_strings_are_kept():
    spec = load_schema_text(message([field(name="Url", type="string", default="http://x//y")]))
    assert spec.fields[0].default == "http://x//y"


@pytest.mark.parametrize("fields, fragments", [
    ([field(type="int33")], ["TestRequest.Value", "unknown type 'int33'"]),
    ([field(type="[]Missing")], ["TestRequest.Value", "unknown type '[]Missing'"]),
    ([field(versions="3-1")], ["TestRequest.Value", "backwards"]),
    ([field(versions="x")], ["TestRequest.Value", "malformed version range"]),
    ([field(tag=0, taggedVersions="2+"), field(name="Other", tag=0, taggedVersions="2+")],
     ["TestRequest.Other", "duplicate tag 0"]),
    ([field(tag=0, taggedVersions="0+")], ["TestRequest.Value", "outside the flexible versions"]),
    ([field(tag=0)], ["TestRequest.Value", "needs taggedVersions"]),
    ([field(taggedVersions="2+")], ["TestRequest.Value", "taggedVersions without a tag"]),
    ([field(), field()], ["TestRequest.Value", "duplicate field name"]),
    ([field(nullableVersions="0+")], ["TestRequest.Value", "cannot be nullable"]),
    ([field(type="string", nullableVersions="1+", default="null")], ["null cannot be the default"]),
    ([field(default="99999999999")], ["invalid default", "out of range"]),
    ([field(type="bool", default="maybe")], ["invalid default"]),
    ([field(nullableVersion="0+")], ["TestRequest.Value", "unknown key(s) ['nullableVersion']"]),
    ([field(flexibleVersions="none")], ["only string and bytes fields can override flexibleVersions"]),
    ([field(type="[]Thing", fields=[field()]), field(name="Other", type="[]Thing", fields=[field()])],
     ["duplicate struct name 'Thing'"]),
    ([{"type": "int32", "versions": "0+"}], ["each field needs a name"]),
    ([field(versions=None)], ["version range must be a string"]),
])
def test_malformed_fields_are_refused_naming_file_and_field(fields, fragments):
    refuse(message(fields), *fragments)


def test_malformed_messages_are_refused():
    refuse("{ not json", "invalid JSON at line 1")
    refuse(message([], type="query"), "type must be one of")
    refuse(message([], apiKey=None), "needs an integer apiKey")
    refuse(message([], validVersions="4-2"), "validVersions", "backwards")
    refuse(message([], extra=1), "unknown key(s) ['extra']")
    refuse(message([], headerVersions={"0+": 5}), "header version must be 0..2")
    text = message([])
    doc = json.loads(text.split("\n", 1)[1])
    del doc["flexibleVersions"]
    refuse(json.dumps(doc), "missing flexibleVersions")


def test_common_structs_and_nested_structs():
    spec = load_schema_text(message(
        [field(name="Items", type="[]Item"), field(name="Leader", type="Pair", versions="2+")],
        commonStructs=[{"name": "Item", "versions": "0+", "fields": [field(name="A")]},
                       {"name": "Pair", "versions": "0+", "fields": [field(name="B", type="int64")]}],
    ))
    assert [s.name for s in spec.common_structs] == ["Item", "Pair"]
    assert spec.fields[0].type.element.struct.fields[0].name == "A"


def test_our_schemas_load_and_cover_the_issue_list():
    schemas = load_schemas(ROOT / "schemas")
    apis = {s.api_name for s in schemas if s.type == "request"}
    required = """Produce Fetch ListOffsets Metadata OffsetCommit OffsetFetch FindCoordinator JoinGroup Heartbeat
        LeaveGroup SyncGroup DescribeGroups ListGroups SaslHandshake ApiVersions CreateTopics DeleteTopics
        DeleteRecords InitProducerId OffsetForLeaderEpoch AddPartitionsToTxn AddOffsetsToTxn EndTxn WriteTxnMarkers
        TxnOffsetCommit DescribeConfigs AlterConfigs SaslAuthenticate CreatePartitions DeleteGroups
        IncrementalAlterConfigs OffsetDelete DescribeCluster DescribeProducers DescribeTransactions ListTransactions
        ConsumerGroupHeartbeat ConsumerGroupDescribe DescribeTopicPartitions ShareGroupHeartbeat ShareGroupDescribe
        ShareFetch ShareAcknowledge""".split()
    assert set(required) <= apis
    for api in required:
        assert f"{api}Response" in schemas
    assert "RequestHeader" in schemas and "ResponseHeader" in schemas
    # Every field has a description of its own.
    def walk(fields):
        for f in fields:
            assert f.about, f.name
            inner = getattr(f.type, "struct", None) or getattr(getattr(f.type, "element", None), "struct", None)
            if inner is not None:
                walk(inner.fields)
    for spec in schemas:
        walk(spec.fields)


def test_registry_over_any_directory(tmp_path):
    (tmp_path / "TestRequest.json").write_text(message([field(), field(name="Name", type="string", versions="1+")]))
    reg = Registry.from_directory(tmp_path)
    assert reg.api_versions() == {1000: (0, 3)}
    codec = reg.codec("TestRequest", 1)
    assert codec.decode(codec.encode({"value": 5, "name": "x"})) == {"value": 5, "name": "x"}
