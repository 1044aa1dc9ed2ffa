"""The group coordinator's records (the keys and values of ``__consumer_offsets``): schemas, lookup by record type,
and hand-written byte vectors.

Kafka writes a coordinator record's key as the int16 record type (the schema's ``apiKey``) then the key struct at
version 0, and its value as an int16 version then the value struct at that version; a null value is a tombstone.
Every byte below is written out from the schemas by hand and checked both ways. The group-coordinator classes are
not in kafka-clients, so the Java oracle has nothing to compare these records with (see test_differential.py); the
share group records' vectors are the bytes Kafka 4.3.1's GroupCoordinatorRecordHelpers and
GroupCoordinatorRecordSerde wrote for the same records (kafka-group-coordinator-4.3.1.jar), annotated by hand.
"""

from __future__ import annotations

import json
import struct
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import values

from kafkamock import codec
from kafkamock.codec import Registry, UnknownMessageError, default_registry
from kafkamock.schema import COORDINATOR_TYPES, DEFAULT_STRUCT, SchemaError, load_schema_text

REGISTRY = default_registry()
_INT16 = struct.Struct(">h")


def hx(text: str) -> bytes:
    """Hex with spaces and ``#`` comments, so vectors can be annotated line by line."""
    return bytes.fromhex(" ".join(line.split("#")[0] for line in text.splitlines()))


def record_key(name: str, key: dict) -> bytes:
    """A record key as Kafka writes it: int16 record type, then the key struct at version 0."""
    spec = REGISTRY.message(name)
    return _INT16.pack(spec.record_type) + REGISTRY.codec(name, 0).encode(key)


def record_value(name: str, version: int, value: dict) -> bytes:
    """A record value as Kafka writes it: int16 version, then the value struct at that version."""
    return _INT16.pack(version) + REGISTRY.codec(name, version).encode(value)


def read_record(key: bytes, value: bytes | None) -> tuple[str, dict, int | None, dict | None]:
    """Parse a record the way Kafka's coordinator does: the record type picks the key and value schemas."""
    (record_type,) = _INT16.unpack_from(key)
    key_spec, value_spec = REGISTRY.coordinator_record(record_type)
    decoded_key = REGISTRY.codec(key_spec.name, 0).decode(key[2:])
    if value is None:
        return key_spec.name, decoded_key, None, None
    (version,) = _INT16.unpack_from(value)
    return key_spec.name, decoded_key, version, REGISTRY.codec(value_spec.name, version).decode(value[2:])


# ---- the schemas and the registry -------------------------------------------------------------------------------

RECORD_TYPES = {
    1: ("OffsetCommitKey", "OffsetCommitValue", "0-4", "4+"),
    2: ("GroupMetadataKey", "GroupMetadataValue", "0-4", "4+"),
    3: ("ConsumerGroupMetadataKey", "ConsumerGroupMetadataValue", "0", "0+"),
    4: ("ConsumerGroupPartitionMetadataKey", "ConsumerGroupPartitionMetadataValue", "0", "0+"),
    5: ("ConsumerGroupMemberMetadataKey", "ConsumerGroupMemberMetadataValue", "0", "0+"),
    6: ("ConsumerGroupTargetAssignmentMetadataKey", "ConsumerGroupTargetAssignmentMetadataValue", "0", "0+"),
    7: ("ConsumerGroupTargetAssignmentMemberKey", "ConsumerGroupTargetAssignmentMemberValue", "0", "0+"),
    8: ("ConsumerGroupCurrentMemberAssignmentKey", "ConsumerGroupCurrentMemberAssignmentValue", "0", "0+"),
    10: ("ShareGroupMemberMetadataKey", "ShareGroupMemberMetadataValue", "0", "0+"),
    11: ("ShareGroupMetadataKey", "ShareGroupMetadataValue", "0", "0+"),
    12: ("ShareGroupTargetAssignmentMetadataKey", "ShareGroupTargetAssignmentMetadataValue", "0", "0+"),
    13: ("ShareGroupTargetAssignmentMemberKey", "ShareGroupTargetAssignmentMemberValue", "0", "0+"),
    14: ("ShareGroupCurrentMemberAssignmentKey", "ShareGroupCurrentMemberAssignmentValue", "0", "0+"),
    15: ("ShareGroupStatePartitionMetadataKey", "ShareGroupStatePartitionMetadataValue", "0", "0+"),
    16: ("ConsumerGroupRegularExpressionKey", "ConsumerGroupRegularExpressionValue", "0", "0+"),
}


def test_record_types_and_versions():
    assert REGISTRY.coordinator_records == {t: (k, v) for t, (k, v, _, _) in RECORD_TYPES.items()}
    for record_type, (key, value, valid, flexible) in RECORD_TYPES.items():
        key_spec, value_spec = REGISTRY.coordinator_record(record_type)
        assert (key_spec.name, key_spec.type, key_spec.record_type) == (key, "coordinator-key", record_type)
        assert (str(key_spec.valid_versions), str(key_spec.flexible_versions)) == ("0", "none")
        assert (value_spec.name, value_spec.type, value_spec.record_type) == (value, "coordinator-value", record_type)
        assert (str(value_spec.valid_versions), str(value_spec.flexible_versions)) == (valid, flexible)
    # Requests and responses are untouched: a record type is not an API key, and the names do not collide.
    assert REGISTRY.message("OffsetCommitRequest").record_type is None
    assert REGISTRY.api_key("OffsetCommit") == 8


def test_unknown_record_types_are_refused():
    for bad in (0, 9, 17, -1, "1", None):      # 9: ShareGroupPartitionMetadata, which Kafka 4.3 no longer has
        with pytest.raises(UnknownMessageError, match="coordinator record type"):
            REGISTRY.coordinator_record(bad)


def test_the_loader_wants_an_api_key_on_a_record_and_one_schema_per_record_type(tmp_path):
    doc = {"type": "coordinator-key", "name": "ThingKey", "validVersions": "0", "flexibleVersions": "none",
           "fields": [{"name": "Id", "type": "string", "versions": "0", "about": "Id."}]}
    with pytest.raises(SchemaError, match="needs an integer apiKey"):
        load_schema_text(json.dumps(doc), "ThingKey.json")
    spec = load_schema_text(json.dumps({**doc, "apiKey": 42}), "ThingKey.json")
    assert (spec.api_key, spec.record_type) == (42, 42)
    (tmp_path / "ThingKey.json").write_text(json.dumps({**doc, "apiKey": 42}))
    (tmp_path / "OtherKey.json").write_text(json.dumps({**doc, "apiKey": 42, "name": "OtherKey"}))
    with pytest.raises(SchemaError, match="apiKey 42 is also used by"):
        Registry.from_directory(tmp_path)
    # A key without a value is loaded, but is not a complete record type.
    (tmp_path / "OtherKey.json").unlink()
    assert Registry.from_directory(tmp_path).coordinator_records == {}


def test_a_json_null_default_is_the_empty_default_as_in_kafkas_generator():
    # Kafka's generator reads "default": null as "" (its FieldSpec), so these default to an empty struct and an
    # empty array; only the string "null" makes null the default.
    member = REGISTRY.message("ConsumerGroupMemberMetadataValue")
    assert next(f for f in member.fields if f.name == "ClassicMemberMetadata").default is DEFAULT_STRUCT
    assignment = REGISTRY.message("ConsumerGroupCurrentMemberAssignmentValue")
    partitions = assignment.common_structs[0]
    assert next(f for f in partitions.fields if f.name == "AssignmentEpochs").default == ()


# ---- byte vectors ------------------------------------------------------------------------------------------------

OFFSET_COMMIT_KEY = hx("""
    0001            # record type 1: OffsetCommit
    0001 67         # group: int16 length 1, "g"
    0001 74         # topic: "t"
    00000000        # partition 0
""")

OFFSET_COMMIT_V1 = hx("""
    0001                # value version 1
    0000000000000064    # offset 100
    0000                # metadata: "" (int16 length 0)
    0000018bcfe56800    # commitTimestamp 1700000000000
    0000018bd50bc400    # expireTimestamp 1700086400000 (one day later; only v1 has it)
""")

OFFSET_COMMIT_V3 = hx("""
    0003                # value version 3
    0000000000000064    # offset 100
    00000005            # leaderEpoch 5 (v3+), before metadata
    0001 6d             # metadata "m"
    0000018bcfe56800    # commitTimestamp
""")

OFFSET_COMMIT_V4 = hx("""
    0004                # value version 4, the first flexible one
    0000000000000064    # offset 100
    00000005            # leaderEpoch 5
    02 6d               # metadata: compact string, length 1 written as 1+1, "m"
    0000018bcfe56800    # commitTimestamp
    00                  # tagged fields: none
""")

COMMIT = {"offset": 100, "metadata": "m", "commit_timestamp": 1_700_000_000_000}


@pytest.mark.parametrize(("version", "value", "expected"), [
    (1, {**COMMIT, "metadata": "", "expire_timestamp": 1_700_086_400_000}, OFFSET_COMMIT_V1),
    (3, {**COMMIT, "leader_epoch": 5}, OFFSET_COMMIT_V3),
    (4, {**COMMIT, "leader_epoch": 5}, OFFSET_COMMIT_V4),
], ids=["v1", "v3", "v4"])
def test_offset_commit(version, value, expected):
    key = {"group": "g", "topic": "t", "partition": 0}
    assert record_key("OffsetCommitKey", key) == OFFSET_COMMIT_KEY
    assert record_value("OffsetCommitValue", version, value) == expected
    assert codec.encode("OffsetCommitValue", version, value) == expected[2:]
    name, got_key, got_version, got_value = read_record(OFFSET_COMMIT_KEY, expected)
    full = {"leader_epoch": -1, "expire_timestamp": -1, **value}  # the fields a version lacks read as defaults
    assert (name, got_key, got_version, got_value) == ("OffsetCommitKey", key, version, full)


def test_offset_commit_tombstone():
    assert read_record(OFFSET_COMMIT_KEY, None) == ("OffsetCommitKey", {"group": "g", "topic": "t", "partition": 0},
                                                    None, None)


GROUP_METADATA_KEY = hx("""
    0002            # record type 2: GroupMetadata
    0001 67         # group "g"
""")

GROUP_METADATA_V3 = hx("""
    0003                    # value version 3 (what Kafka writes for a classic group)
    0008 636f6e73756d6572   # protocolType "consumer"
    00000001                # generation 1
    0005 72616e6765         # protocol "range" (nullable string, int16 length)
    0002 6d31               # leader "m1"
    0000018bcfe56800        # currentStateTimestamp (v2+)
    00000001                # members: int32 count 1
    0002 6d31               #   memberId "m1"
    ffff                    #   groupInstanceId: null (v3+, int16 length -1)
    0001 63                 #   clientId "c"
    0001 68                 #   clientHost "h"
    000493e0                #   rebalanceTimeout 300000 (v1+)
    0000afc8                #   sessionTimeout 45000
    00000002 0001           #   subscription: int32 length 2, 00 01
    00000000                #   assignment: empty bytes
""")

GROUP = {
    "protocol_type": "consumer", "generation": 1, "protocol": "range", "leader": "m1",
    "current_state_timestamp": 1_700_000_000_000,
    "members": [{"member_id": "m1", "group_instance_id": None, "client_id": "c", "client_host": "h",
                 "rebalance_timeout": 300_000, "session_timeout": 45_000, "subscription": b"\x00\x01",
                 "assignment": b""}],
}


def test_group_metadata_v3_with_one_member():
    assert record_key("GroupMetadataKey", {"group": "g"}) == GROUP_METADATA_KEY
    assert record_value("GroupMetadataValue", 3, GROUP) == GROUP_METADATA_V3
    assert read_record(GROUP_METADATA_KEY, GROUP_METADATA_V3) == ("GroupMetadataKey", {"group": "g"}, 3, GROUP)


CONSUMER_GROUP_METADATA_KEY = hx("""
    0003            # record type 3: ConsumerGroupMetadata
    0001 67         # GroupId "g" (keys are never flexible: int16 length)
""")

CONSUMER_GROUP_METADATA_V0 = hx("""
    0000            # value version 0, the latest (and flexible)
    00000007        # Epoch 7
    00              # tagged fields: none (MetadataHash and CreationTimeMs at their defaults 0 and -1)
""")

CONSUMER_GROUP_METADATA_V0_TAGGED = hx("""
    0000                    # value version 0
    00000007                # Epoch 7
    02                      # tagged fields: 2
    00 08 0102030405060708  #   tag 0 MetadataHash, 8 bytes
    01 08 0000018bcfe56800  #   tag 1 CreationTimeMs, 8 bytes
""")


def test_consumer_group_metadata_at_its_latest_version():
    assert REGISTRY.message("ConsumerGroupMetadataValue").valid_versions.highest == 0
    assert record_key("ConsumerGroupMetadataKey", {"group_id": "g"}) == CONSUMER_GROUP_METADATA_KEY
    plain = {"epoch": 7, "metadata_hash": 0, "creation_time_ms": -1}
    assert record_value("ConsumerGroupMetadataValue", 0, {"epoch": 7}) == CONSUMER_GROUP_METADATA_V0
    assert read_record(CONSUMER_GROUP_METADATA_KEY, CONSUMER_GROUP_METADATA_V0)[3] == plain
    tagged = {"epoch": 7, "metadata_hash": 0x0102030405060708, "creation_time_ms": 1_700_000_000_000}
    assert record_value("ConsumerGroupMetadataValue", 0, tagged) == CONSUMER_GROUP_METADATA_V0_TAGGED
    assert read_record(CONSUMER_GROUP_METADATA_KEY, CONSUMER_GROUP_METADATA_V0_TAGGED)[3] == tagged


MEMBER_WITHOUT_CLASSIC_METADATA = hx("""
    0000            # value version 0
    00              # InstanceId: null (compact nullable string)
    00              # RackId: null
    02 63           # ClientId "c"
    02 68           # ClientHost "h"
    02 02 74        # SubscribedTopicNames: compact array of 1, "t"
    00              # SubscribedTopicRegex: null
    00000bb8        # RebalanceTimeoutMs 3000
    02 72           # ServerAssignor "r"
    01              # tagged fields: 1
    00 01 00        #   tag 0 ClassicMemberMetadata, 1 byte: the varint 0 that marks a null struct
""")

MEMBER_WITH_CLASSIC_METADATA = hx("""
    0000            # value version 0
    00 00 02 63 02 68 02 02 74 00 00000bb8 02 72   # as above
    01              # tagged fields: 1
    00 0b           #   tag 0 ClassicMemberMetadata, 11 bytes
    01              #     the varint 1 that marks a present struct
    0000afc8        #     SessionTimeoutMs 45000
    02              #     SupportedProtocols: 1
    02 72 01 00     #       Name "r", Metadata: empty compact bytes, no tagged fields
    00              #     no tagged fields in ClassicMemberMetadata
""")


def test_consumer_group_member_metadata_null_and_present_classic_metadata():
    # A consumer-protocol member has null ClassicMemberMetadata, and Kafka writes that null: the field's default is
    # an empty struct (see the JSON-null-default test), so null is not the default.
    member = {"instance_id": None, "rack_id": None, "client_id": "c", "client_host": "h",
              "subscribed_topic_names": ["t"], "subscribed_topic_regex": None, "rebalance_timeout_ms": 3000,
              "server_assignor": "r", "classic_member_metadata": None}
    assert record_value("ConsumerGroupMemberMetadataValue", 0, member) == MEMBER_WITHOUT_CLASSIC_METADATA
    assert read_record(record_key("ConsumerGroupMemberMetadataKey", {"group_id": "g", "member_id": "m"}),
                       MEMBER_WITHOUT_CLASSIC_METADATA)[1:] == ({"group_id": "g", "member_id": "m"}, 0, member)
    classic = {**member, "classic_member_metadata": {
        "session_timeout_ms": 45_000, "supported_protocols": [{"name": "r", "metadata": b""}]}}
    assert record_value("ConsumerGroupMemberMetadataValue", 0, classic) == MEMBER_WITH_CLASSIC_METADATA
    assert codec.decode("ConsumerGroupMemberMetadataValue", 0, MEMBER_WITH_CLASSIC_METADATA[2:]) == classic


def test_current_member_assignment_epochs_null_empty_and_set():
    base = {"member_epoch": 2, "previous_member_epoch": 1, "state": 0, "partitions_pending_revocation": []}
    topic = {"topic_id": uuid.UUID(int=1), "partitions": [0]}
    head = hx("00000002 00000001 00 02 00000000000000000000000000000001 02 00000000")
    tail = hx("01 00")  # PartitionsPendingRevocation: empty; the value's own tagged fields: none
    for epochs, tags in ((None, "01 00 01 00"), ([], "00"), ([3], "01 00 05 02 00000003")):
        value = {**base, "assigned_partitions": [{**topic, "assignment_epochs": epochs}]}
        assert codec.encode("ConsumerGroupCurrentMemberAssignmentValue", 0, value) == head + hx(tags) + tail
        assert codec.decode("ConsumerGroupCurrentMemberAssignmentValue", 0, head + hx(tags) + tail) == value


# ---- share groups (record types 10-15) --------------------------------------------------------------------------

TOPIC_T, TOPIC_U = uuid.UUID(int=1), uuid.UUID(int=2)
SHARE_VECTORS = {
    # name: (key schema, key, key bytes, value schema, value, value bytes)
    "ShareGroupMetadata": ("ShareGroupMetadataKey", {"group_id": "g"}, "000b 0001 67",
                           "ShareGroupMetadataValue", {"epoch": 7, "metadata_hash": 0x0102030405060708}, """
        0000                # value version 0
        00000007            # Epoch 7
        0102030405060708    # MetadataHash: a plain int64 here (tagged in ConsumerGroupMetadataValue)
        00                  # tagged fields: none
    """),
    "ShareGroupMemberMetadata": ("ShareGroupMemberMetadataKey", {"group_id": "g", "member_id": "m"},
                                 "000a 0001 67 0001 6d", "ShareGroupMemberMetadataValue",
                                 {"rack_id": None, "client_id": "c", "client_host": "/h",
                                  "subscribed_topic_names": ["t", "u"]}, """
        0000                # value version 0
        00                  # RackId: null
        02 63               # ClientId "c"
        03 2f68             # ClientHost "/h"
        03 0274 0275        # SubscribedTopicNames: compact array of 2, "t", "u" (Kafka sorts them)
        00                  # tagged fields: none
    """),
    "ShareGroupCurrentMemberAssignment": ("ShareGroupCurrentMemberAssignmentKey",
                                          {"group_id": "g", "member_id": "m"}, "000e 0001 67 0001 6d",
                                          "ShareGroupCurrentMemberAssignmentValue",
                                          {"member_epoch": 3, "previous_member_epoch": 2, "state": 0,
                                           "assigned_partitions": [{"topic_id": TOPIC_T, "partitions": [0, 1]}]}, """
        0000                # value version 0
        00000003            # MemberEpoch 3
        00000002            # PreviousMemberEpoch 2
        00                  # State: Stable
        02                  # AssignedPartitions: compact array of 1
        00000000000000000000000000000001   # TopicId
        03 00000000 00000001               # Partitions [0, 1]
        00                  #   tagged fields of the entry: none
        00                  # tagged fields: none
    """),
    "ShareGroupTargetAssignmentMember": ("ShareGroupTargetAssignmentMemberKey", {"group_id": "g", "member_id": "m"},
                                         "000d 0001 67 0001 6d", "ShareGroupTargetAssignmentMemberValue",
                                         {"topic_partitions": [{"topic_id": TOPIC_T, "partitions": [0, 1]}]}, """
        0000                # value version 0
        02 00000000000000000000000000000001 03 00000000 00000001 00   # [TopicId 1: 0, 1]
        00                  # tagged fields: none
    """),
    "ShareGroupTargetAssignmentMetadata": ("ShareGroupTargetAssignmentMetadataKey", {"group_id": "g"},
                                           "000c 0001 67", "ShareGroupTargetAssignmentMetadataValue",
                                           {"assignment_epoch": 3, "assignment_timestamp": 1_700_000_000_000}, """
        0000                # value version 0
        00000003            # AssignmentEpoch 3
        01 00 08 0000018bcfe56800   # tagged fields: 1, tag 0 AssignmentTimestamp (KIP-1263), 8 bytes
    """),
    "ShareGroupTargetAssignmentMetadata-no-timestamp": (
        "ShareGroupTargetAssignmentMetadataKey", {"group_id": "g"}, "000c 0001 67",
        "ShareGroupTargetAssignmentMetadataValue", {"assignment_epoch": 3, "assignment_timestamp": 0}, """
        0000 00000003 00    # AssignmentTimestamp 0 is the default: not written
    """),
    "ShareGroupStatePartitionMetadata": ("ShareGroupStatePartitionMetadataKey", {"group_id": "g"}, "000f 0001 67",
                                         "ShareGroupStatePartitionMetadataValue", {
        "initializing_topics": [{"topic_id": TOPIC_U, "topic_name": "u", "partitions": [0]}],
        "initialized_topics": [{"topic_id": TOPIC_T, "topic_name": "t", "partitions": [0, 1]}],
        "deleting_topics": []}, """
        0000                # value version 0
        02 00000000000000000000000000000002 02 75 02 00000000 00   # InitializingTopics: [u (id 2): 0]
        02 00000000000000000000000000000001 02 74 03 00000000 00000001 00   # InitializedTopics: [t (id 1): 0, 1]
        01                  # DeletingTopics: empty
        00                  # tagged fields: none
    """),
    "ShareGroupStatePartitionMetadata-deleting": (
        "ShareGroupStatePartitionMetadataKey", {"group_id": "g"}, "000f 0001 67",
        "ShareGroupStatePartitionMetadataValue", {
            "initializing_topics": [], "initialized_topics": [],
            "deleting_topics": [{"topic_id": TOPIC_T, "topic_name": "t"}]}, """
        0000 01 01          # value version 0; no initializing, no initialized topics
        02 00000000000000000000000000000001 02 74 00   # DeletingTopics: [t (id 1)]
        00
    """),
}


@pytest.mark.parametrize("name", sorted(SHARE_VECTORS))
def test_share_group_records_match_kafkas_bytes(name):
    key_schema, key, key_hex, value_schema, value, value_hex = SHARE_VECTORS[name]
    assert record_key(key_schema, key) == hx(key_hex)
    assert record_value(value_schema, 0, value) == hx(value_hex)
    assert read_record(hx(key_hex), hx(value_hex)) == (key_schema, key, 0, value)
    assert read_record(hx(key_hex), None) == (key_schema, key, None, None)        # its tombstone


def test_share_groups_write_these_records_as_kafka_does():
    """The records the share group coordinator writes (``broker/share/groups.py``'s builders), byte for byte the
    vectors above; and a member leaving writes Kafka's three tombstones in Kafka's order."""
    from kafkamock.broker.groups import records
    from kafkamock.broker.share.groups import Initializing, ShareGroup, ShareMember

    group = ShareGroup("g", group_epoch=7, metadata_hash=0x0102030405060708, assignment_epoch=3,
                       assignment_timestamp=1_700_000_000_000, target={"m": {TOPIC_T: frozenset({1, 0})}},
                       initialized={TOPIC_T: frozenset({0, 1})}, initializing={TOPIC_U: Initializing(frozenset({0}), 5)})
    member = ShareMember("m", member_epoch=3, previous_member_epoch=2, client_id="c", client_host="/h",
                         subscribed_topic_names=["t", "u"], assigned={TOPIC_T: frozenset({1, 0})})
    names = {TOPIC_T: "t", TOPIC_U: "u"}
    for built, name in ((group.group_record(), "ShareGroupMetadata"),
                        (group.member_record(member), "ShareGroupMemberMetadata"),
                        (group.assignment_record(member), "ShareGroupCurrentMemberAssignment"),
                        (group.target_member_record("m"), "ShareGroupTargetAssignmentMember"),
                        (group.target_metadata_record(), "ShareGroupTargetAssignmentMetadata"),
                        (group.state_record(names), "ShareGroupStatePartitionMetadata")):
        _, _, key_hex, _, _, value_hex = SHARE_VECTORS[name]
        assert built.encode() == (hx(key_hex), hx(value_hex)), name
    group.initialized, group.initializing, group.deleting = {}, {}, frozenset({TOPIC_T})
    _, _, key_hex, _, _, value_hex = SHARE_VECTORS["ShareGroupStatePartitionMetadata-deleting"]
    assert group.state_record(names).encode() == (hx(key_hex), hx(value_hex))
    tombstones = [r.encode() for r in group.member_tombstones("m")]
    assert tombstones == [(hx("000e 0001 67 0001 6d"), None), (hx("000d 0001 67 0001 6d"), None),
                          (hx("000a 0001 67 0001 6d"), None)]
    assert [r.kind for r in ShareGroup("g", members={"m": member}, target={"m": {}}).tombstones()] == [
        records.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT, records.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER,
        records.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA, records.SHARE_GROUP_MEMBER_METADATA,
        records.SHARE_GROUP_STATE_PARTITION_METADATA, records.SHARE_GROUP_METADATA]   # ShareGroup's own order


# ---- properties --------------------------------------------------------------------------------------------------

RECORD_VERSIONS = [(t, v) for t in sorted(RECORD_TYPES)
                   for v in REGISTRY.coordinator_record(t)[1].valid_versions]


@pytest.mark.parametrize(("record_type", "version"), RECORD_VERSIONS,
                         ids=[f"{RECORD_TYPES[t][1]}-v{v}" for t, v in RECORD_VERSIONS])
def test_records_round_trip_through_their_framing(record_type, version):
    key_spec, value_spec = REGISTRY.coordinator_record(record_type)

    @settings(max_examples=25)
    @given(values(key_spec, 0), st.one_of(st.none(), values(value_spec, version)))
    def check(key, value):
        key_bytes = record_key(key_spec.name, key)
        value_bytes = None if value is None else record_value(value_spec.name, version, value)
        assert key_bytes[:2] == _INT16.pack(record_type)
        expected_version = None if value is None else version
        assert read_record(key_bytes, value_bytes) == (key_spec.name, key, expected_version, value)

    check()


def test_every_record_schema_is_a_coordinator_type():
    names = {n for pair in REGISTRY.coordinator_records.values() for n in pair}
    assert names == {s.name for s in REGISTRY.schemas if s.type in COORDINATOR_TYPES}


# ---- __transaction_state ------------------------------------------------------------------------------------------

def test_transaction_log_records_match_kafkas_bytes():
    """TransactionLogKey/Value as Kafka's TransactionLog writes them: key version 0 + the id; value version + state.
    Version 1 (flexible) carries the previous producer id and kafkamock's KIP-360 last epoch as tagged fields."""
    from kafkamock.broker.transactions import records as txn_records

    assert txn_records.encode_key("tx") == hx("0000 0002 7478")
    value = {"producer_id": 1000, "producer_epoch": 2, "transaction_timeout_ms": 60000, "transaction_status": 1,
             "transaction_partitions": [{"topic": "t", "partition_ids": [0, 1]}],
             "transaction_last_update_timestamp_ms": 5, "transaction_start_timestamp_ms": 4}
    v0 = hx("""
        00000000000003e8   # ProducerId 1000
        0002               # ProducerEpoch
        0000ea60           # TransactionTimeoutMs 60000
        01                 # TransactionStatus: Ongoing
        00000001 0001 74 00000002 00000000 00000001   # [t: 0, 1]
        0000000000000005   # TransactionLastUpdateTimestampMs
        0000000000000004   # TransactionStartTimestampMs
    """)
    assert REGISTRY.codec("TransactionLogValue", 0).encode(value) == v0
    v1 = hx("""
        00000000000003e8 0002 0000ea60 01
        02 02 74 03 00000000 00000001 00   # compact arrays and strings, the partition's empty tags
        0000000000000005 0000000000000004
        02                                 # two tagged fields
        00 08 00000000000003e7             # tag 0 PreviousProducerId 999
        64 02 0001                         # tag 100 LastProducerEpoch 1
    """)
    encoded = txn_records.encode_value({**value, "previous_producer_id": 999, "last_producer_epoch": 1})
    assert encoded == hx("0001") + v1
    tid, decoded = txn_records.decode(hx("0000 0002 7478"), encoded)
    assert tid == "tx" and decoded.previous_producer_id == 999 and decoded.last_producer_epoch == 1
    assert txn_records.decode(hx("0000 0002 7478"), None) == ("tx", None)
    _, old = txn_records.decode(hx("0000 0002 7478"), hx("0000") + v0)
    assert old.producer_id == 1000 and old.transaction_partitions[0].partition_ids == [0, 1]
