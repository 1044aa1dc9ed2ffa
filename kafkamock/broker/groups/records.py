"""The records of ``__consumer_offsets``, in Kafka's own formats (the group-coordinator schemas in ``schemas/``).

A record's key is an int16 record type followed by the key struct (every key schema has version 0 only; the
type, not a version, says which struct follows, and the legacy type 0 shares type 1's key); its value an int16 version followed by the value
struct, or null for a tombstone. Compaction keeps the last record of each key, so replaying the topic from the start
rebuilds every group and offset.

An operation builds ``GroupRecord``s (type, key, value); the coordinator encodes them into a batch, appends it, and
replays each as a ``LoggedRecord``, the very form ``decode`` gives when the log is read back at a restart.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, NamedTuple

from kafkamock import codec
from kafkamock.codec import Codec, Message
from kafkamock.codec.errors import DecodeError

# record type -> (key schema, value schema): Kafka's CoordinatorRecordType for the group coordinator.
OFFSET_COMMIT_LEGACY, OFFSET_COMMIT, GROUP_METADATA = 0, 1, 2
CONSUMER_GROUP_METADATA, CONSUMER_GROUP_PARTITION_METADATA, CONSUMER_GROUP_MEMBER_METADATA = 3, 4, 5
CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA, CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER = 6, 7
CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT, CONSUMER_GROUP_REGULAR_EXPRESSION = 8, 16
# Share groups (KIP-932); type 9 (ShareGroupPartitionMetadata before KIP-1101's metadata hash) is unused in 4.3.
SHARE_GROUP_MEMBER_METADATA, SHARE_GROUP_METADATA, SHARE_GROUP_TARGET_ASSIGNMENT_METADATA = 10, 11, 12
SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER, SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT = 13, 14
SHARE_GROUP_STATE_PARTITION_METADATA = 15
SHARE_GROUP_RECORD_TYPES = frozenset(range(SHARE_GROUP_MEMBER_METADATA, SHARE_GROUP_STATE_PARTITION_METADATA + 1))
RECORD_TYPES: dict[int, tuple[str, str]] = {
    OFFSET_COMMIT_LEGACY: ("OffsetCommitKey", "OffsetCommitValue"),
    OFFSET_COMMIT: ("OffsetCommitKey", "OffsetCommitValue"),
    GROUP_METADATA: ("GroupMetadataKey", "GroupMetadataValue"),
    CONSUMER_GROUP_METADATA: ("ConsumerGroupMetadataKey", "ConsumerGroupMetadataValue"),
    CONSUMER_GROUP_PARTITION_METADATA: ("ConsumerGroupPartitionMetadataKey", "ConsumerGroupPartitionMetadataValue"),
    CONSUMER_GROUP_MEMBER_METADATA: ("ConsumerGroupMemberMetadataKey", "ConsumerGroupMemberMetadataValue"),
    CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA: ("ConsumerGroupTargetAssignmentMetadataKey",
                                                "ConsumerGroupTargetAssignmentMetadataValue"),
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER: ("ConsumerGroupTargetAssignmentMemberKey",
                                              "ConsumerGroupTargetAssignmentMemberValue"),
    CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT: ("ConsumerGroupCurrentMemberAssignmentKey",
                                               "ConsumerGroupCurrentMemberAssignmentValue"),
    CONSUMER_GROUP_REGULAR_EXPRESSION: ("ConsumerGroupRegularExpressionKey", "ConsumerGroupRegularExpressionValue"),
    SHARE_GROUP_MEMBER_METADATA: ("ShareGroupMemberMetadataKey", "ShareGroupMemberMetadataValue"),
    SHARE_GROUP_METADATA: ("ShareGroupMetadataKey", "ShareGroupMetadataValue"),
    SHARE_GROUP_TARGET_ASSIGNMENT_METADATA: ("ShareGroupTargetAssignmentMetadataKey",
                                             "ShareGroupTargetAssignmentMetadataValue"),
    SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER: ("ShareGroupTargetAssignmentMemberKey", "ShareGroupTargetAssignmentMemberValue"),
    SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT: ("ShareGroupCurrentMemberAssignmentKey",
                                            "ShareGroupCurrentMemberAssignmentValue"),
    SHARE_GROUP_STATE_PARTITION_METADATA: ("ShareGroupStatePartitionMetadataKey",
                                           "ShareGroupStatePartitionMetadataValue"),
}
_INT16 = struct.Struct(">h")
# The value versions Kafka 4.3 writes (OffsetCommitValue: 1 when the offset has its own expire timestamp).
OFFSET_COMMIT_VALUE_VERSION, OFFSET_COMMIT_VALUE_EXPIRING_VERSION, GROUP_METADATA_VALUE_VERSION = 3, 1, 3


class UnknownRecord(ValueError):
    """A record this broker does not read (another coordinator's, or a newer type): replay skips it."""


def encode_key(record_type: int, key: dict[str, Any]) -> bytes:
    out = bytearray(_INT16.pack(record_type))
    return bytes(codec.codec_for(RECORD_TYPES[record_type][0], 0).write(key, out))


def encode_value(record_type: int, version: int, value: dict[str, Any]) -> bytes:
    out = bytearray(_INT16.pack(version))
    return bytes(codec.codec_for(RECORD_TYPES[record_type][1], version).write(value, out))


def latest_value_version(record_type: int) -> int:
    return codec.default_registry().message(RECORD_TYPES[record_type][1]).valid_versions.highest


@dataclass(frozen=True, slots=True)
class GroupRecord:
    """One record an operation writes: its type, key and value (None: a tombstone) at ``version`` (None: the
    latest), as Kafka's CoordinatorRecord. The operation only builds it; replaying it is what changes state."""

    kind: int
    key: dict[str, Any]
    value: dict[str, Any] | None
    version: int | None = None

    def encode(self) -> tuple[bytes, bytes | None]:
        """(key bytes, value bytes) as they are stored."""
        if self.value is None:
            return encode_key(self.kind, self.key), None
        version = latest_value_version(self.kind) if self.version is None else self.version
        return encode_key(self.kind, self.key), encode_value(self.kind, version, self.value)


class LoggedRecord(NamedTuple):
    """A record as read from the log (or just appended to it): what ``replay`` applies."""

    kind: int
    key: Message
    value: Message | None        # None: a tombstone


def record(record_type: int, key: dict[str, Any], value: dict[str, Any] | None, version: int | None = None
           ) -> GroupRecord:
    """One record; ``value`` None is a tombstone."""
    return GroupRecord(record_type, key, value, version)


def decode(key: bytes | None, value: bytes | None) -> LoggedRecord:
    """(record type, key, value or None for a tombstone) of a stored record."""
    if key is None or len(key) < 2:
        raise UnknownRecord("a record without a typed key")
    record_type = _INT16.unpack_from(key)[0]
    names = RECORD_TYPES.get(record_type)
    if names is None:
        raise UnknownRecord(f"record type {record_type}")
    decoded_key = _decode_whole(codec.codec_for(names[0], 0), key)
    if value is None:
        return LoggedRecord(record_type, decoded_key, None)
    version = _INT16.unpack_from(value)[0]
    return LoggedRecord(record_type, decoded_key, _decode_whole(codec.codec_for(names[1], version), value))


def _decode_whole(schema: Codec, data: bytes) -> Message:
    """The struct after a record's 2-byte type or version prefix; bytes left after it are an error, as in
    ``Codec.decode``."""
    if type(data) is not bytes:
        data = bytes(data)
    message, end = schema.decode_from(data, 2)
    if end != len(data):
        raise DecodeError(schema.name, schema.version, end, f"{len(data) - end} trailing bytes after the message")
    return message
