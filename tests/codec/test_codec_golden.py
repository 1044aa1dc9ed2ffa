"""Hand-annotated golden vectors: every byte below is written out and explained, and checked both ways."""

from __future__ import annotations

import uuid

import pytest

from kafkamock import codec
from kafkamock.codec import DecodeError, EncodeError, Message, UnknownMessageError, UnsupportedVersionError


def hx(text: str) -> bytes:
    """Hex with spaces and ``#`` comments allowed, so vectors can be annotated line by line."""
    return bytes.fromhex(" ".join(line.split("#")[0] for line in text.splitlines()))


SHARE_FETCH_V2 = {
    "group_id": "g", "member_id": None, "share_session_epoch": 1, "max_wait_ms": 500, "min_bytes": 1,
    "max_bytes": 1048576, "max_records": 100, "batch_size": 10, "share_acquire_mode": 1, "is_renew_ack": False,
    "topics": [{"topic_id": uuid.UUID(int=1), "partitions": [{"partition_index": 0, "acknowledgement_batches": [
        {"first_offset": 5, "last_offset": 7, "acknowledge_types": [1, 4]}]}]}],
    "forgotten_topics_data": [],
}
SHARE_FETCH_V2_BYTES = hx("""
    02 67                                # GroupId: compact nullable string, length 1+1, "g"
    00                                   # MemberId: null is compact length 0
    00000001                             # ShareSessionEpoch
    000001f4                             # MaxWaitMs 500
    00000001                             # MinBytes
    00100000                             # MaxBytes 1 MiB
    00000064                             # MaxRecords 100
    0000000a                             # BatchSize 10
    01                                   # ShareAcquireMode record-limit (KIP-1206)
    00                                   # IsRenewAck false (KIP-1222)
    02                                   # Topics: compact array of 1
    00000000000000000000000000000001     #   TopicId
    02                                   #   Partitions: 1
    00000000                             #     PartitionIndex 0
    02                                   #     AcknowledgementBatches: 1
    0000000000000005                     #       FirstOffset
    0000000000000007                     #       LastOffset
    03 01 04                             #       AcknowledgeTypes [ACCEPT, RENEW]
    00                                   #       no tagged fields (batch)
    00                                   #     no tagged fields (partition)
    00                                   #   no tagged fields (topic)
    01                                   # ForgottenTopicsData: empty
    00                                   # no tagged fields (message)
""")


def test_share_fetch_v2_golden_both_ways():
    assert codec.encode("ShareFetchRequest", 2, SHARE_FETCH_V2) == SHARE_FETCH_V2_BYTES
    decoded = codec.decode("ShareFetchRequest", 2, SHARE_FETCH_V2_BYTES)
    # Every field of the struct is present; PartitionMaxBytes (v0 only) holds its default.
    expected_partition = dict(SHARE_FETCH_V2["topics"][0]["partitions"][0], partition_max_bytes=0)
    assert decoded == dict(SHARE_FETCH_V2, topics=[dict(SHARE_FETCH_V2["topics"][0], partitions=[expected_partition])])
    assert decoded.topics[0].partitions[0].acknowledgement_batches[0].acknowledge_types == [1, 4]
    assert isinstance(decoded.topics[0].topic_id, uuid.UUID)


def test_decoded_message_is_a_mapping_with_attribute_access():
    decoded = codec.decode("ShareFetchRequest", 2, SHARE_FETCH_V2_BYTES)
    assert isinstance(decoded, Message) and isinstance(decoded, dict)
    assert decoded.is_renew_ack is False and decoded["is_renew_ack"] is False
    assert decoded.member_id is None
    with pytest.raises(AttributeError):
        _ = decoded.no_such_field
    # Fields absent at this version still appear, holding their defaults (as Kafka's generated classes do).
    assert decoded.topics[0].partitions[0].partition_max_bytes == 0


def test_nullable_compact_string_null_empty_and_value():
    base = dict(SHARE_FETCH_V2, topics=[])
    assert codec.encode("ShareFetchRequest", 2, dict(base, group_id=None))[:1] == hx("00")
    assert codec.encode("ShareFetchRequest", 2, dict(base, group_id=""))[:1] == hx("01")
    assert codec.encode("ShareFetchRequest", 2, dict(base, group_id="ab"))[:3] == hx("03 61 62")
    for value in (None, "", "ab", "héllo"):
        data = codec.encode("ShareFetchRequest", 2, dict(base, group_id=value))
        assert codec.decode("ShareFetchRequest", 2, data).group_id == value


API_VERSIONS_RESPONSE_FRAME = hx("""
    00000020                 # size: 32 bytes follow
    00000007                 # response header v0: CorrelationId 7 (no tagged section, even at v3)
    0000                     # ErrorCode
    02                       # ApiKeys: compact array of 1
    0012 0000 0004 00        #   ApiKey 18, MinVersion 0, MaxVersion 4, no tagged fields
    00000000                 # ThrottleTimeMs
    02                       # tagged fields: 2, in tag order
    01 08 0000000000000005   #   tag 1 FinalizedFeaturesEpoch = 5 (int64, 8 bytes)
    03 01 01                 #   tag 3 ZkMigrationReady = true (1 byte)
""")


def test_api_versions_response_uses_header_v0_and_tagged_fields():
    body = {"error_code": 0, "api_keys": [{"api_key": 18, "min_version": 0, "max_version": 4}],
            "finalized_features_epoch": 5, "zk_migration_ready": True}
    assert codec.encode_response("ApiVersions", 3, 7, body) == API_VERSIONS_RESPONSE_FRAME
    header, decoded = codec.decode_response(18, 3, API_VERSIONS_RESPONSE_FRAME)
    assert header == {"correlation_id": 7}
    assert decoded.finalized_features_epoch == 5 and decoded.zk_migration_ready is True
    assert decoded.supported_features == [] and decoded.throttle_time_ms == 0


def test_tagged_fields_at_default_are_not_written():
    body = {"error_code": 0, "api_keys": [], "finalized_features_epoch": -1, "zk_migration_ready": False}
    assert codec.encode("ApiVersionsResponse", 3, body) == hx("0000 01 00000000 00")


def test_unknown_tagged_fields_are_kept_and_written_back_in_tag_order():
    data = hx("""
        0000 01 00000000           # ErrorCode, no ApiKeys, ThrottleTimeMs
        03                         # three tagged fields
        01 08 0000000000000005     # tag 1: known (FinalizedFeaturesEpoch)
        05 02 abcd                 # tag 5: unknown to this schema
        09 00                      # tag 9: unknown, empty
    """)
    decoded = codec.decode("ApiVersionsResponse", 3, data)
    assert decoded.finalized_features_epoch == 5
    assert decoded["_unknown_tagged_fields"] == [(5, b"\xab\xcd"), (9, b"")]
    assert codec.encode("ApiVersionsResponse", 3, decoded) == data
    # Known and unknown tags are merged into ascending order, as Kafka's RawTaggedFieldWriter does.
    value = dict(decoded, zk_migration_ready=True, _unknown_tagged_fields=[(2_000, b"x"), (2, b"")])
    encoded = codec.encode("ApiVersionsResponse", 3, value)
    assert encoded.endswith(hx("04 01 08 0000000000000005 02 00 03 01 01 d00f 01 78"))


def test_unknown_tags_in_nested_structs_round_trip():
    data = hx("""
        0000 02                    # ErrorCode, ApiKeys: 1
        0012 0000 0004             # ApiKey 18 v0-4
        01 07 01 ff                # nested tagged fields: 1; tag 7, 1 byte
        00000000 00                # ThrottleTimeMs, no tagged fields
    """)
    decoded = codec.decode("ApiVersionsResponse", 3, data)
    assert decoded.api_keys[0]["_unknown_tagged_fields"] == [(7, b"\xff")]
    assert codec.encode("ApiVersionsResponse", 3, decoded) == data


API_VERSIONS_REQUEST_FRAME = hx("""
    0000001d                  # size: 29
    0012 0003 00000007        # request header v2: ApiKey 18, ApiVersion 3, CorrelationId 7
    0003 636c69               # ClientId "cli": int16 length even in header v2 (flexibleVersions "none")
    00                        # header tagged fields
    0a 6b61666b616d6f636b     # ClientSoftwareName "kafkamock" (compact)
    04 302e31                 # ClientSoftwareVersion "0.1"
    00                        # tagged fields
""")


def test_request_frame_header_v2():
    body = {"client_software_name": "kafkamock", "client_software_version": "0.1"}
    assert codec.encode_request("ApiVersions", 3, 7, "cli", body) == API_VERSIONS_REQUEST_FRAME
    header, decoded = codec.decode_request(API_VERSIONS_REQUEST_FRAME)
    assert header == {"request_api_key": 18, "request_api_version": 3, "correlation_id": 7, "client_id": "cli"}
    assert decoded == body


def test_request_frame_header_v1_for_non_flexible_versions():
    frame = codec.encode_request("ApiVersions", 2, 9, None, {})
    assert frame == hx("""
        0000000a              # size: 10
        0012 0002 00000009    # ApiKey 18, ApiVersion 2, CorrelationId 9
        ffff                  # ClientId null; header v1 has no tagged fields; ApiVersions v2 has an empty body
    """)
    header, body = codec.decode_request(frame)
    assert header.client_id is None and body == {"client_software_name": "", "client_software_version": ""}


def test_response_header_v1_for_flexible_versions():
    frame = codec.encode_response("ShareAcknowledge", 2, 3, {})
    assert frame[4:9] == hx("00000003 00")  # CorrelationId then an empty tagged section


def test_non_ignorable_field_at_a_version_without_it_is_an_error():
    with pytest.raises(EncodeError, match=r"IsRenewAck.*version 1"):
        codec.encode("ShareAcknowledgeRequest", 1, {"group_id": "g", "is_renew_ack": True})
    # At its default it is fine: Kafka only refuses non-default values.
    codec.encode("ShareAcknowledgeRequest", 1, {"group_id": "g", "is_renew_ack": False})


def test_ignorable_field_at_a_version_without_it_is_dropped():
    v1 = dict(SHARE_FETCH_V2, share_acquire_mode=0, is_renew_ack=False)
    with_mode = dict(v1, share_acquire_mode=1)
    assert codec.encode("ShareFetchRequest", 1, with_mode) == codec.encode("ShareFetchRequest", 1, v1)
    # OffsetCommit v5 dropped RetentionTimeMs (ignorable): a v2-style retention is silently dropped.
    assert codec.encode("OffsetCommitRequest", 5, {"group_id": "g", "retention_time_ms": 60_000}) == \
        codec.encode("OffsetCommitRequest", 5, {"group_id": "g"})


def test_offset_commit_v4_carries_retention_time():
    data = codec.encode("OffsetCommitRequest", 4, {"group_id": "g", "generation_id_or_member_epoch": 3,
                                                     "member_id": "m", "retention_time_ms": 60_000, "topics": []})
    assert data == hx("""
        0001 67                  # GroupId "g" (int16 length: not flexible before v8)
        00000003                 # GenerationIdOrMemberEpoch
        0001 6d                  # MemberId "m"
        000000000000ea60         # RetentionTimeMs 60000 (v2-v4, KIP-211)
        00000000                 # Topics: empty (int32 count)
    """)


def test_init_producer_id_v3_epoch_bump_fields():
    data = codec.encode("InitProducerIdRequest", 3, {"transactional_id": None, "transaction_timeout_ms": 60000,
                                                        "producer_id": 42, "producer_epoch": 7})
    assert data == hx("""
        00                       # TransactionalId null (compact)
        0000ea60                 # TransactionTimeoutMs
        000000000000002a         # ProducerId 42 (KIP-360)
        0007                     # ProducerEpoch 7
        00                       # tagged fields
    """)
    assert codec.decode("InitProducerIdRequest", 3, data).producer_epoch == 7


def test_null_for_non_nullable_field_is_an_encode_error():
    with pytest.raises(EncodeError, match="MemberId"):
        codec.encode("OffsetCommitRequest", 4, {"group_id": "g", "member_id": None})


def test_bad_values_name_the_field():
    with pytest.raises(EncodeError, match=r"ShareFetchRequest\.MaxWaitMs: .*out of range"):
        codec.encode("ShareFetchRequest", 2, {"max_wait_ms": 2**40})
    with pytest.raises(EncodeError, match=r"Topics\[0\]\.TopicId: expected a uuid"):
        codec.encode("ShareFetchRequest", 2, {"topics": [{"topic_id": "not-a-uuid"}]})
    with pytest.raises(EncodeError, match=r"GroupId: expected a str"):
        codec.encode("ShareFetchRequest", 2, {"group_id": 5})
    with pytest.raises(EncodeError, match="over the 32767 limit"):
        codec.encode("ShareFetchRequest", 2, {"group_id": "x" * 40_000})


def test_describe_transaction_state_resolves_to_describe_transactions():
    reg = codec.default_registry()
    assert reg.api_key("DescribeTransactionState") == 65 == reg.api_key("DescribeTransactions")
    frame = codec.encode_request("DescribeTransactionState", 0, 1, "c", {"transactional_ids": ["t"]})
    header, body = codec.decode_request(frame)
    assert header.request_api_key == 65 and body.transactional_ids == ["t"]


def test_api_versions_from_schemas():
    versions = codec.api_versions()
    assert versions[18] == (0, 4)          # ApiVersions
    assert versions[78] == (1, 2)          # ShareFetch (v2: KIP-1222)
    assert versions[79] == (1, 2)          # ShareAcknowledge
    assert versions[22] == (0, 6)          # InitProducerId
    assert versions[65] == (0, 0)          # DescribeTransactions
    assert versions[8] == (2, 10)          # OffsetCommit: Kafka 4.x dropped v0-v1
    assert codec.api_versions(include_unstable=False)[22] == (0, 5)


def test_unknown_names_and_versions():
    with pytest.raises(UnknownMessageError):
        codec.encode("NoSuchRequest", 0, {})
    with pytest.raises(UnsupportedVersionError):
        codec.encode("ShareFetchRequest", 0, {})
    with pytest.raises(DecodeError):  # an unsupported version is a DecodeError too
        codec.decode("ShareFetchRequest", 3, b"")


# ----------------------------------------------------------------------------------------------------- bad bytes


@pytest.mark.parametrize("data, reason", [
    (SHARE_FETCH_V2_BYTES[:-3], "ends early"),
    (SHARE_FETCH_V2_BYTES + b"\x00", "trailing"),
    (hx("03 ff fe") + SHARE_FETCH_V2_BYTES[2:], "UTF-8"),
    (hx("02 67 00") + bytes(26) + hx("ffffffff0f"), "cannot fit"),          # Topics count 2^32-2
    (hx("02 67 00") + bytes(26) + hx("8080808080 01"), "longer than 5 bytes"),  # varint too long
    (hx("ffffffff0f"), "over the 32767 limit"),                                     # string length 2^32-2
    (b"", "ends early"),
])
def test_bad_bytes_raise_decode_error_with_name_version_offset(data, reason):
    with pytest.raises(DecodeError, match=reason) as info:
        codec.decode("ShareFetchRequest", 2, data)
    assert info.value.message_name == "ShareFetchRequest" and info.value.version == 2
    assert isinstance(info.value.offset, int) and 0 <= info.value.offset <= len(data)


def test_null_where_not_nullable_is_a_decode_error():
    # OffsetCommitRequest v4: GroupId is a non-nullable int16-length string; -1 is null.
    with pytest.raises(DecodeError, match="GroupId: null"):
        codec.decode("OffsetCommitRequest", 4, hx("ffff"))


def test_tagged_field_whose_size_disagrees_with_its_contents():
    data = hx("0000 01 00000000 01 01 04 0000000000000005")  # tag 1 claims 4 bytes, int64 needs 8
    with pytest.raises(DecodeError, match="does not match"):
        codec.decode("ApiVersionsResponse", 3, data)


def test_frames_with_bad_size_prefix():
    with pytest.raises(DecodeError, match="size prefix"):
        codec.decode_request(API_VERSIONS_REQUEST_FRAME[:-1])
    with pytest.raises(DecodeError, match="shorter"):
        codec.decode_request(b"\x00\x00")


def test_unsupported_request_version_keeps_the_header():
    frame = bytearray(API_VERSIONS_REQUEST_FRAME)
    frame[6:8] = (99).to_bytes(2, "big")  # ApiVersions v99: unknown to us, still header v2 (flexible 3+)
    with pytest.raises(UnsupportedVersionError) as info:
        codec.decode_request(bytes(frame))
    assert info.value.api_key == 18 and info.value.api_version == 99
    assert info.value.header.correlation_id == 7 and info.value.header.client_id == "cli"


def test_unknown_api_key_in_a_frame():
    frame = bytearray(API_VERSIONS_REQUEST_FRAME)
    frame[4:6] = (999).to_bytes(2, "big")
    with pytest.raises(UnsupportedVersionError, match="unknown API key 999") as info:
        codec.decode_request(bytes(frame))
    assert info.value.api_key == 999


def test_absent_struct_defaults_are_shared_and_read_only():
    data = codec.encode("FetchResponse", 16, {"responses": [{"partitions": [{"partition_index": 0},
                                                                             {"partition_index": 1}]}]})
    parts = codec.decode("FetchResponse", 16, data).responses[0].partitions
    assert parts[0].current_leader == {"leader_id": -1, "leader_epoch": -1}
    with pytest.raises(TypeError, match="assign a new dict"):
        parts[0].current_leader["leader_id"] = 3
    parts[0].current_leader = {"leader_id": 3, "leader_epoch": 7}  # replacing the field is the way
    assert parts[1].current_leader.leader_id == -1
    again = codec.decode("FetchResponse", 16, codec.encode("FetchResponse", 16, codec.decode("FetchResponse", 16, data)))
    assert again == codec.decode("FetchResponse", 16, data)
    import copy
    assert copy.deepcopy(parts[1].current_leader) == {"leader_id": -1, "leader_epoch": -1}


def test_string_length_limit_boundary():
    from kafkamock.codec.generator import uvarint_bytes

    longest = "x" * 32767
    data = codec.encode("ShareFetchRequest", 2, dict(SHARE_FETCH_V2, group_id=longest))
    assert codec.decode("ShareFetchRequest", 2, data).group_id == longest
    # Kafka refuses a string of 32768 bytes even though a compact length could express it.
    too_long = uvarint_bytes(32768 + 1) + b"x" * 32768 + data[len(uvarint_bytes(32768)) + 32767:]
    with pytest.raises(DecodeError, match="GroupId: string length 32768 is over the 32767 limit"):
        codec.decode("ShareFetchRequest", 2, too_long)


# -- SCRAM credential and SASL messages (added with the security listeners) ------------------------------------

ALTER_SCRAM_V0 = {"deletions": [{"name": "u", "mechanism": 1}],
                  "upsertions": [{"name": "v", "mechanism": 2, "iterations": 4096, "salt": b"\x01\x02",
                                  "salted_password": b"\xff"}]}
ALTER_SCRAM_V0_BYTES = hx("""
    02                                   # Deletions: compact array of 1
    02 75                                #   Name "u"
    01                                   #   Mechanism 1 (SCRAM-SHA-256)
    00                                   #   tagged fields
    02                                   # Upsertions: 1
    02 76                                #   Name "v"
    02                                   #   Mechanism 2 (SCRAM-SHA-512)
    00001000                             #   Iterations 4096
    03 0102                              #   Salt: compact bytes, length 2+1
    02 ff                                #   SaltedPassword: 1 byte
    00                                   #   tagged fields
    00                                   # tagged fields
""")
DESCRIBE_SCRAM_RESPONSE_V0 = {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "results": [
    {"user": "v", "error_code": 0, "error_message": None, "credential_infos": [{"mechanism": 2, "iterations": 8192}]}]}
DESCRIBE_SCRAM_RESPONSE_V0_BYTES = hx("""
    00000000                             # ThrottleTimeMs
    0000                                 # ErrorCode
    00                                   # ErrorMessage: null
    02                                   # Results: 1
    02 76                                #   User "v"
    0000                                 #   ErrorCode
    00                                   #   ErrorMessage: null
    02                                   #   CredentialInfos: 1
    02                                   #     Mechanism 2
    00002000                             #     Iterations 8192
    00                                   #     tagged fields
    00                                   #   tagged fields
    00                                   # tagged fields
""")
SASL_AUTHENTICATE_RESPONSE_V1 = {"error_code": 58, "error_message": "no", "auth_bytes": b"", "session_lifetime_ms": 5}
SASL_AUTHENTICATE_RESPONSE_V1_BYTES = hx("""
    003a                                 # ErrorCode 58 SASL_AUTHENTICATION_FAILED
    0002 6e6f                            # ErrorMessage: int16 length, "no" (v1 is not flexible)
    00000000                             # AuthBytes: int32 length 0
    0000000000000005                     # SessionLifetimeMs (v1+, KIP-368)
""")


@pytest.mark.parametrize(("name", "version", "value", "data"), [
    ("AlterUserScramCredentialsRequest", 0, ALTER_SCRAM_V0, ALTER_SCRAM_V0_BYTES),
    ("DescribeUserScramCredentialsResponse", 0, DESCRIBE_SCRAM_RESPONSE_V0, DESCRIBE_SCRAM_RESPONSE_V0_BYTES),
    ("SaslAuthenticateResponse", 1, SASL_AUTHENTICATE_RESPONSE_V1, SASL_AUTHENTICATE_RESPONSE_V1_BYTES),
])
def test_security_messages_golden_both_ways(name, version, value, data):
    assert codec.encode(name, version, value) == data
    assert codec.decode(name, version, data) == value


def test_a_string_over_kafkas_limit_is_its_own_error():
    """32767 bytes fit; one more is StringTooLongError (a broker answers Kafka's error response for it), still an
    EncodeError naming the field."""
    from kafkamock.codec import StringTooLongError

    codec.encode("CreateTopicsResponse", 7, {"topics": [{"name": "t", "error_message": "x" * 32767}]})
    with pytest.raises(StringTooLongError, match=r"Topics\[\]\.ErrorMessage: string of 32768 bytes"):
        codec.encode("CreateTopicsResponse", 7, {"topics": [{"name": "t", "error_message": "x" * 32768}]})
    with pytest.raises(EncodeError):
        codec.encode("CreateTopicsResponse", 7, {"topics": [{"name": "t", "error_message": "€" * 10923}]})
