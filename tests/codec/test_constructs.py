"""The construct layer: Kafka primitives as constructs, byte-identical to the codec, and compilable."""

from __future__ import annotations

import uuid

import pytest
from construct import Int8sb, Int32sb, Int64sb, Struct
from hypothesis import given
from hypothesis import strategies as st

from kafkamock import codec
from kafkamock.codec.constructs import (
    KafkaArray,
    KafkaBytes,
    KafkaConstructError,
    KafkaString,
    MessageConstruct,
    TaggedFields,
    Uuid,
    UVarInt,
    VarInt,
    VarLong,
)
from kafkamock.codec.generator import uvarint_bytes


@given(st.integers(0, 2**32 - 1))
def test_uvarint_matches_the_codec(n):
    assert UVarInt().build(n) == uvarint_bytes(n)
    assert UVarInt().parse(uvarint_bytes(n)) == n


@pytest.mark.parametrize("value, hexed", [(0, "00"), (-1, "01"), (1, "02"), (-64, "7f"), (64, "8001"),
                                          (2**31 - 1, "feffffff0f"), (-(2**31), "ffffffff0f")])
def test_zigzag_varint_vectors(value, hexed):
    assert VarInt().build(value) == bytes.fromhex(hexed)
    assert VarInt().parse(bytes.fromhex(hexed)) == value


@given(st.integers(-(2**63), 2**63 - 1))
def test_varlong_round_trip(n):
    assert VarLong.parse(VarLong.build(n)) == n


def test_varint_limits():
    with pytest.raises(KafkaConstructError):
        VarInt().build(2**31)
    with pytest.raises(KafkaConstructError):
        UVarInt().parse(bytes.fromhex("8080808080 01"))


# ShareFetchRequest v2 written by hand with the constructs must equal what the compiled codec writes.
AckBatch = Struct("first_offset" / Int64sb, "last_offset" / Int64sb,
                  "acknowledge_types" / KafkaArray(Int8sb, compact=True), "tags" / TaggedFields())
Partition = Struct("partition_index" / Int32sb, "acknowledgement_batches" / KafkaArray(AckBatch, compact=True),
                   "tags" / TaggedFields())
Topic = Struct("topic_id" / Uuid(), "partitions" / KafkaArray(Partition, compact=True), "tags" / TaggedFields())
ShareFetchV2 = Struct(
    "group_id" / KafkaString(compact=True, nullable=True), "member_id" / KafkaString(compact=True, nullable=True),
    "share_session_epoch" / Int32sb, "max_wait_ms" / Int32sb, "min_bytes" / Int32sb, "max_bytes" / Int32sb,
    "max_records" / Int32sb, "batch_size" / Int32sb, "share_acquire_mode" / Int8sb, "is_renew_ack" / Int8sb,
    "topics" / KafkaArray(Topic, compact=True),
    "forgotten_topics_data" / KafkaArray(Struct("topic_id" / Uuid(), "partitions" / KafkaArray(Int32sb, compact=True),
                                                "tags" / TaggedFields()), compact=True),
    "tags" / TaggedFields(),
)

names = st.one_of(st.none(), st.text(max_size=8))
int32 = st.integers(-(2**31), 2**31 - 1)
batches = st.fixed_dictionaries({"first_offset": st.integers(0, 2**40), "last_offset": st.integers(0, 2**40),
                                 "acknowledge_types": st.lists(st.integers(0, 4), max_size=3)})
values = st.fixed_dictionaries({
    "group_id": names, "member_id": names, "share_session_epoch": int32, "max_wait_ms": int32, "min_bytes": int32,
    "max_bytes": int32, "max_records": int32, "batch_size": int32, "share_acquire_mode": st.integers(0, 1),
    "is_renew_ack": st.booleans(),
    "topics": st.lists(st.fixed_dictionaries({"topic_id": st.uuids(), "partitions": st.lists(
        st.fixed_dictionaries({"partition_index": int32, "acknowledgement_batches": st.lists(batches, max_size=2)}),
        max_size=2)}), max_size=2),
})


def _with_tags(value):
    if isinstance(value, dict):
        return {**{k: _with_tags(v) for k, v in value.items()}, "tags": []}
    if isinstance(value, list):
        return [_with_tags(v) for v in value]
    return value


@given(values)
def test_hand_written_struct_equals_the_codec(value):
    expected = codec.encode("ShareFetchRequest", 2, value)
    as_construct = dict(_with_tags(value), is_renew_ack=int(value["is_renew_ack"]), forgotten_topics_data=[])
    assert ShareFetchV2.build(as_construct) == expected
    assert ShareFetchV2.compile().build(as_construct) == expected
    parsed = ShareFetchV2.compile().parse(expected)
    assert parsed.group_id == value["group_id"] and len(parsed.topics) == len(value["topics"])


def test_nullable_rules_and_hostile_counts():
    assert KafkaString(nullable=True).build(None) == b"\xff\xff"
    assert KafkaBytes(compact=True, nullable=True).build(None) == b"\x00"
    with pytest.raises(KafkaConstructError):
        KafkaString().build(None)
    with pytest.raises(KafkaConstructError, match="cannot fit"):
        KafkaArray(Int32sb).parse(bytes.fromhex("7fffffff 00000001"))


def test_message_construct_embeds_a_compiled_message():
    frame = Struct("correlation_id" / Int32sb, "body" / MessageConstruct("ApiVersionsRequest", 3), "trailer" / Int8sb)
    body = {"client_software_name": "a", "client_software_version": "b"}
    data = frame.build({"correlation_id": 9, "body": body, "trailer": 1})
    assert data == (9).to_bytes(4, "big") + codec.encode("ApiVersionsRequest", 3, body) + b"\x01"
    parsed = frame.parse(data)
    assert parsed.body == body and parsed.trailer == 1
    assert frame.compile().parse(data).body == body
    assert Uuid().parse(Uuid().build(uuid.UUID(int=5))) == uuid.UUID(int=5)
