"""Control records: transaction markers (KIP-98) and KIP-932's share-state checkpoints and deltas.

A control record's key is ``int16 version`` + ControlRecordTypeSchema; its value is ``int16 version`` + the
type's value schema. Layouts live in schemas/ as ``"type": "data"`` messages, so the codec compiles them.
SHARE_CHECKPOINT (5) and SHARE_DELTA (6) follow the KIP-932 page (docs/architecture.md): the broker writes them into
the topic-partition whose delivery they reflect, and no application ever sees them: ShareFetch never acquires or
returns them, and Fetch hands them over as control batches, which consumers skip as they skip transaction markers.
(Shipped Kafka later used 5 and 6 for KRaft records, which never appear in a data partition either.)
"""

from __future__ import annotations

import struct
from typing import Any

from kafkamock.codec import DecodeError, codec_for
from kafkamock.records.errors import CorruptRecordError

CONTROL_TYPES = {0: "ABORT", 1: "COMMIT", 2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER", 4: "SNAPSHOT_FOOTER",
                 5: "SHARE_CHECKPOINT", 6: "SHARE_DELTA"}
CONTROL_TYPE_IDS = {name: i for i, name in CONTROL_TYPES.items()}
VALUE_SCHEMAS = {"ABORT": "EndTxnMarker", "COMMIT": "EndTxnMarker", "SHARE_CHECKPOINT": "ShareCheckpointValue",
                 "SHARE_DELTA": "ShareDeltaValue"}
KAFKAMOCK_SCHEMAS = frozenset({"ShareCheckpointValue", "ShareDeltaValue"})
"""Schemas in schemas/ that are kafkamock's own (from the KIP-932 page), not Apache Kafka's."""

_VERSION = struct.Struct(">h")


def control_key(control_type: str) -> bytes:
    """The record key of a control record: key version 0 and the type."""
    try:
        type_id = CONTROL_TYPE_IDS[control_type]
    except KeyError:
        raise ValueError(f"unknown control record type {control_type!r}") from None
    return _VERSION.pack(0) + codec_for("ControlRecordTypeSchema", 0).encode({"type": type_id})


def control_value(control_type: str, value: dict[str, Any], version: int = 0) -> bytes:
    """The record value of a control record: value version and the type's value schema."""
    return _VERSION.pack(version) + codec_for(VALUE_SCHEMAS[control_type], version).encode(value)


def decode_control(key: bytes | None, value: bytes | None) -> tuple[str, Any]:
    """(type name, decoded value) of a control record; the value is None for types without a schema here."""
    if key is None or len(key) < 4:
        raise CorruptRecordError("a control record key needs a version and a type")
    # Bytes 0-1 are the key version; like Kafka, read the type that follows whatever the version.
    (type_id,) = _VERSION.unpack_from(key, 2)
    name = CONTROL_TYPES.get(type_id, "UNKNOWN")
    schema = VALUE_SCHEMAS.get(name)
    if schema is None or value is None:
        return name, None
    if len(value) < 2:
        raise CorruptRecordError(f"{name} control record value is too short")
    (version,) = _VERSION.unpack_from(value, 0)
    try:
        if name in ("ABORT", "COMMIT"):
            # Kafka reads the fields it knows and ignores what newer versions append.
            return name, codec_for(schema, 0).decode_from(bytes(value), 2)[0]
        return name, codec_for(schema, version).decode(value[2:])
    except DecodeError as exc:
        raise CorruptRecordError(f"{name} control record value: {exc}") from None
