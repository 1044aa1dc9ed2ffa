"""The records of ``__transaction_state``, in Kafka's format (TransactionLogKey/Value in ``schemas/``).

A record's key is the int16 key version 0 then the transactional id; its value the int16 version then the
transaction's state, or null once the id expired. The topic is compacted, so replaying it keeps each id's last
state. kafkamock writes value version 1 (flexible) so that it can carry KIP-360's last epoch as a tagged field.

``TxnRecord`` is such a record as the coordinator handles it (Kafka's CoordinatorRecord): an operation returns it,
the coordinator appends it (``log_record``) and replays it; loading the log turns each stored record back into one
(``from_log``) for the same replay.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from kafkamock import codec
from kafkamock.broker.transactions.metadata import TxnMetadata

KEY_VERSION = 0
VALUE_VERSION = 1
_INT16 = struct.Struct(">h")
SCHEMAS = frozenset({"TransactionLogKey", "TransactionLogValue"})
"""Kafka's transaction-coordinator schemas: shipped in Kafka's server jars, not in kafka-clients."""


def encode_key(transactional_id: str) -> bytes:
    return _INT16.pack(KEY_VERSION) + codec.encode("TransactionLogKey", KEY_VERSION, {"transactional_id":
                                                                                       transactional_id})


def encode_value(value: dict[str, Any]) -> bytes:
    return _INT16.pack(VALUE_VERSION) + codec.encode("TransactionLogValue", VALUE_VERSION, value)


def decode(key: bytes | None, value: bytes | None) -> tuple[str, Any | None]:
    """(transactional id, value or None for a tombstone); ValueError for a record that is not one of ours."""
    if key is None or len(key) < 2:
        raise ValueError("a transaction log record without a key")
    (key_version,) = _INT16.unpack_from(key)
    if key_version != KEY_VERSION:
        raise ValueError(f"transaction log key version {key_version}")
    transactional_id = codec.decode("TransactionLogKey", 0, memoryview(key)[2:]).transactional_id
    if value is None:
        return transactional_id, None
    (version,) = _INT16.unpack_from(value)
    if not 0 <= version <= VALUE_VERSION:
        raise ValueError(f"transaction log value version {version}")
    return transactional_id, codec.decode("TransactionLogValue", version, memoryview(value)[2:])


@dataclass(frozen=True, slots=True)
class TxnRecord:
    """One ``__transaction_state`` record: the id's new metadata, or None (a tombstone: the id expired)."""

    transactional_id: str
    metadata: TxnMetadata | None


def log_record(record: TxnRecord, timestamp: int) -> dict[str, Any]:
    """The record as ``encode_batch`` takes it."""
    value = None if record.metadata is None else encode_value(record.metadata.value())
    return {"key": encode_key(record.transactional_id), "value": value, "timestamp": timestamp}


def from_log(key: bytes | None, value: bytes | None) -> TxnRecord:
    """The record a stored key and value hold; ValueError for one that is not a transaction log record of ours."""
    transactional_id, decoded = decode(key, value)
    return TxnRecord(transactional_id, None if decoded is None else TxnMetadata.from_value(transactional_id, decoded))
