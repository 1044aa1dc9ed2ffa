"""The Java oracle itself works: Kafka 4.3.1's serializer agrees with hand-computed bytes, round-trips what it writes,
reports refusals per item, and agrees with our JSON conversions and strategies on every schema we ship.

These tests check the test tooling (tests/java, tests/support, tests/strategies.py), not kafkamock's codec: the
codec's differential tests are built on top of them.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import values
from support.kafka_json import from_kafka_json, kafka_uuid, parse_kafka_uuid, to_kafka_json
from support.oracle import OracleError

from kafkamock.schema import load_schemas

pytestmark = pytest.mark.java

SCHEMAS = load_schemas(Path(__file__).resolve().parents[2] / "schemas")


def hx(text: str) -> bytes:
    """Hex with spaces and ``#`` comments, so vectors can be annotated line by line."""
    return bytes.fromhex(" ".join(line.split("#")[0] for line in text.splitlines()))


def java_round_trip(oracle, name: str, version: int, vals: list[dict], **kw) -> list[dict]:
    """value -> Kafka JSON -> Java encode -> Java decode -> value, batched."""
    spec = SCHEMAS[name]
    encoded = oracle.encode([(name, version, to_kafka_json(spec, version, v, **kw)) for v in vals])
    for v, e in zip(vals, encoded, strict=True):
        assert not isinstance(e, OracleError), (v, e)
    decoded = oracle.decode([(name, version, e) for e in encoded])
    for d in decoded:
        assert not isinstance(d, OracleError), d
    return [from_kafka_json(spec, version, d, **kw) for d in decoded]


# ---- fixed vectors ---------------------------------------------------------------------------------------------


def test_ping(kafka_oracle):
    info = kafka_oracle.ping()
    assert info["kafka"] == "4.3.1"
    assert info["java"].startswith("17")


API_VERSIONS_V3 = hx("""
    02 61      # ClientSoftwareName: compact string, length 1 written as 1+1, then "a"
    02 62      # ClientSoftwareVersion: compact string "b"
    00         # tagged fields: none (v3 is flexible)
""")


def test_api_versions_request_v3_matches_hand_bytes(kafka_oracle):
    data = kafka_oracle.encode_one("ApiVersionsRequest", 3, {"clientSoftwareName": "a", "clientSoftwareVersion": "b"})
    assert data == API_VERSIONS_V3
    assert kafka_oracle.decode_one("ApiVersionsRequest", 3, data) == {
        "clientSoftwareName": "a", "clientSoftwareVersion": "b"}


def test_request_header_v2_client_id_keeps_int16_length(kafka_oracle):
    # ClientId has flexibleVersions "none": even in header v2 it is a classic int16-length nullable string.
    value = {"request_api_key": 18, "request_api_version": 3, "correlation_id": 7, "client_id": "ab"}
    json = to_kafka_json(SCHEMAS["RequestHeader"], 2, value)
    assert json == {"requestApiKey": 18, "requestApiVersion": 3, "correlationId": 7, "clientId": "ab"}
    assert kafka_oracle.encode_one("RequestHeader", 2, json) == hx("""
        0012        # RequestApiKey 18 (ApiVersions)
        0003        # RequestApiVersion 3
        00000007    # CorrelationId 7
        0002 6162   # ClientId: int16 length 2, "ab"
        00          # tagged fields: none
    """)
    assert kafka_oracle.encode_one("RequestHeader", 2, to_kafka_json(SCHEMAS["RequestHeader"], 2,
                                                                     {**value, "client_id": None}))[8:10] == b"\xff\xff"


def test_nullable_struct(kafka_oracle):
    # ConsumerGroupHeartbeatResponse.Assignment is a nullable struct: null is the int8 marker -1, present is 1.
    spec = SCHEMAS["ConsumerGroupHeartbeatResponse"]
    base = {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "member_id": None, "member_epoch": 5,
            "heartbeat_interval_ms": 0, "assignment": None}
    null = kafka_oracle.encode_one(spec.name, 1, to_kafka_json(spec, 1, base))
    assert null == hx("""
        00000000  # ThrottleTimeMs
        0000      # ErrorCode
        00        # ErrorMessage: null compact string
        00        # MemberId: null
        00000005  # MemberEpoch
        00000000  # HeartbeatIntervalMs
        ff        # Assignment: null struct marker -1
        00        # tagged fields
    """)
    with_assignment = {**base, "assignment": {"topic_partitions": []}}
    data = kafka_oracle.encode_one(spec.name, 1, to_kafka_json(spec, 1, with_assignment))
    assert data == null[:-2] + hx("01 01 00 00")  # marker 1, empty compact array, struct tags, message tags
    assert java_round_trip(kafka_oracle, spec.name, 1, [base, with_assignment]) == [base, with_assignment]


def test_records_bytes_survive_decode(kafka_oracle):
    # Kafka's JsonConverter writes every records field as "" (KIP-673); the oracle puts the real bytes back.
    spec = SCHEMAS["FetchResponse"]
    value = {"responses": [{"topic_id": uuid.UUID(int=7), "partitions": [
        {"partition_index": 3, "records": b"\x00not-a-batch\xff"}, {"partition_index": 4, "records": None}]}]}
    [back] = java_round_trip(kafka_oracle, spec.name, 17, [value])
    partitions = back["responses"][0]["partitions"]
    assert [p["records"] for p in partitions] == [b"\x00not-a-batch\xff", None]


def test_uuid_form():
    assert kafka_uuid(uuid.UUID(int=0)) == "AAAAAAAAAAAAAAAAAAAAAA"
    u = uuid.uuid4()
    assert parse_kafka_uuid(kafka_uuid(u)) == u


def test_refusals_are_per_item(kafka_oracle):
    results = kafka_oracle.encode([
        ("NoSuchMessage", 0, {}),
        ("ApiVersionsRequest", 9, {}),                          # outside 0-4
        ("ApiVersionsRequest", 3, {"clientSoftwareName": "a"}),  # mandatory field missing
        ("ApiVersionsRequest", 3, {"clientSoftwareName": "a", "clientSoftwareVersion": "b"}),
    ])
    assert [type(r) for r in results] == [OracleError, OracleError, OracleError, bytes]
    assert "unknown message NoSuchMessage" in results[0].message
    assert "outside the supported range 0-4" in results[1].message
    assert "clientSoftwareVersion" in results[2].message and "mandatory" in results[2].message
    decoded = kafka_oracle.decode([
        ("ApiVersionsRequest", 3, API_VERSIONS_V3 + b"\x00"),  # strict: a trailing byte is an error
        ("ApiVersionsRequest", 3, API_VERSIONS_V3[:-1]),       # truncated
        ("ApiVersionsRequest", 3, API_VERSIONS_V3),
    ])
    assert isinstance(decoded[0], OracleError) and "1 bytes left over" in decoded[0].message
    assert isinstance(decoded[1], OracleError)
    assert decoded[2] == {"clientSoftwareName": "a", "clientSoftwareVersion": "b"}


def test_keep_absent_lets_java_judge_out_of_version_fields(kafka_oracle):
    spec = SCHEMAS["ShareFetchRequest"]
    base = {"group_id": "g", "member_id": "m"}
    plain = kafka_oracle.encode_one(spec.name, 1, to_kafka_json(spec, 1, base))
    # ShareAcquireMode (v2+) is ignorable: Kafka drops it at v1.
    ignorable = to_kafka_json(spec, 1, {**base, "share_acquire_mode": 1}, keep_absent=True)
    assert ignorable["shareAcquireMode"] == 1
    assert kafka_oracle.encode_one(spec.name, 1, ignorable) == plain
    # IsRenewAck (v2+) is not: setting it at v1 is an error.
    with pytest.raises(OracleError, match="UnsupportedVersionException"):
        kafka_oracle.encode_one(spec.name, 1, to_kafka_json(spec, 1, {**base, "is_renew_ack": True},
                                                            keep_absent=True))


def test_unknown_tagged_fields_extension(kafka_oracle):
    spec = SCHEMAS["ApiVersionsRequest"]
    value = {"client_software_name": "a", "client_software_version": "b", "_unknown_tagged_fields": [(5, b"xy")]}
    data = kafka_oracle.encode_one(spec.name, 3, to_kafka_json(spec, 3, value, unknown_tagged=True))
    assert data == API_VERSIONS_V3[:-1] + hx("01 05 02 7879")  # one tagged field: tag 5, size 2, "xy"
    back = from_kafka_json(spec, 3, kafka_oracle.decode_one(spec.name, 3, data), unknown_tagged=True)
    assert back == value
    assert "_unknown_tagged_fields" not in from_kafka_json(spec, 3, kafka_oracle.decode_one(spec.name, 3, data))


# ---- generated values through Java -----------------------------------------------------------------------------

HANDFUL = [
    ("ShareFetchRequest", 2),
    ("FetchResponse", 17),
    ("MetadataResponse", 12),
    ("ConsumerGroupHeartbeatResponse", 1),
    ("RequestHeader", 2),
    ("ShareFetchResponse", 2),  # records non-nullable here (nullableVersions "0", a version Kafka 4.x dropped)
    ("ProduceRequest", 13),
]


@pytest.mark.parametrize(("name", "version"), HANDFUL, ids=[f"{n}-v{v}" for n, v in HANDFUL])
def test_generated_values_round_trip_through_java(kafka_oracle, name, version):
    """Strategies draw values Java accepts, and Java encode + decode + our conversions give back the same value."""
    spec = SCHEMAS[name]

    @settings(max_examples=100)
    @given(st.lists(values(spec, version), min_size=1, max_size=10))
    def check(vals):
        assert java_round_trip(kafka_oracle, name, version, vals) == vals

    check()
