"""Record batches through Kafka's own record classes: typed helpers over the Java oracle's records ops.

tests/java/KafkaOracle.java answers two ops built on ``org.apache.kafka.common.record.internal`` (kafka-clients
4.3.1): ``records_build`` (MemoryRecordsBuilder / MemoryRecords.withEndTransactionMarker -> bytes) and
``records_read`` (MemoryRecords.readableRecords(...).batches() and each batch's records -> JSON). This module turns
those into plain Python values so tests can compare them with kafkamock's own records code:

    data = java_build(oracle, magic=2, compression="zstd", base_offset=10,
                      records=[{"offset": 10, "timestamp": 1000, "key": b"k", "value": b"v", "headers": [("h", b"x")]}])
    [batch] = java_read(oracle, data)
    batch["records"] == [{"offset": 10, "timestamp": 1000, "key": b"k", "value": b"v", "headers": [("h", b"x")]}]

A record is ``{"offset": int, "timestamp": int, "key": bytes | None, "value": bytes | None,
"headers": [(str, bytes | None), ...]}``; records read from a control batch also carry ``"control_type"`` (the
ControlRecordType id: 0 ABORT, 1 COMMIT, ...) and, for COMMIT/ABORT, ``"coordinator_epoch"``. On input a record's
``offset`` defaults to ``base_offset + index``, ``key``/``value`` to None and ``headers`` to ``[]``; headers may be
tuples or lists. A batch read back is a dict with exactly the keys of ``BATCH_KEYS`` (see KafkaOracle.java).

``java_build``/``java_read`` raise ``RecordsOracleError`` when Kafka refused the item; the ``_many`` forms return
one result per item with the error in place (not raised), like ``KafkaOracle.encode``.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypedDict

from support.oracle import KafkaOracle, OracleError

__all__ = [
    "BATCH_KEYS",
    "BUILD_DEFAULTS",
    "BatchInfo",
    "RecordValue",
    "RecordsOracleError",
    "build_item",
    "java_build",
    "java_build_many",
    "java_read",
    "java_read_many",
    "records_of",
]

Header = tuple[str, bytes | None]


class RecordValue(TypedDict, total=False):
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: list[Header]
    control_type: int  # control batches only
    coordinator_epoch: int  # COMMIT/ABORT markers only


class BatchInfo(TypedDict):
    base_offset: int
    last_offset: int
    magic: int
    compression: str  # "none" | "gzip" | "snappy" | "lz4" | "zstd"
    timestamp_type: str  # "CreateTime" | "LogAppendTime" | "NoTimestampType"
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    transactional: bool
    control: bool
    partition_leader_epoch: int
    crc_valid: bool  # RecordBatch.isValid()
    crc: int  # RecordBatch.checksum(): CRC32C for v2, CRC32 of the (wrapper) record for v0/v1
    count: int | None  # the v2 header's record count; None for legacy batches
    size_in_bytes: int
    records: list[RecordValue]


BATCH_KEYS = frozenset(BatchInfo.__annotations__)

# Every records_build key with the value Java also assumes when it is absent; "compression_level" (an int, or None
# for Kafka's default level, which is what the producer uses) is the one optional extra.
BUILD_DEFAULTS: dict[str, Any] = {
    "magic": 2,
    "compression": "none",
    "timestamp_type": "CreateTime",
    "base_offset": 0,
    "log_append_time": -1,
    "producer_id": -1,
    "producer_epoch": -1,
    "base_sequence": -1,
    "transactional": False,
    "partition_leader_epoch": -1,
    "records": (),
    "control": None,
}
_BUILD_KEYS = frozenset(BUILD_DEFAULTS) | {"compression_level"}
_RECORD_KEYS = frozenset({"offset", "timestamp", "key", "value", "headers"})


class RecordsOracleError(OracleError):
    """Kafka refused one records_build/records_read item (exception class and message in ``message``)."""

    def __init__(self, op: str, message: str):
        Exception.__init__(self, f"{op}: {message}")
        self.op = op
        self.name, self.version, self.message = op, -1, message


# ---- conversions ------------------------------------------------------------------------------------------------


def _b64(value: bytes | bytearray | memoryview | None) -> str | None:
    return None if value is None else base64.b64encode(bytes(value)).decode("ascii")


def _unb64(value: str | None) -> bytes | None:
    return None if value is None else base64.b64decode(value, validate=True)


def build_item(**params: Any) -> dict:
    """The records_build wire item for these parameters (defaults from ``BUILD_DEFAULTS``; bytes -> base64).

    Unknown keys raise ``TypeError`` so a misspelt parameter cannot silently fall back to a default.
    """
    unknown = set(params) - _BUILD_KEYS
    if unknown:
        raise TypeError(f"unknown records_build parameters: {sorted(unknown)}")
    item = {**BUILD_DEFAULTS, **params}
    if item.get("compression_level") is None:
        item.pop("compression_level", None)
    base = item["base_offset"]
    records = []
    for i, r in enumerate(item["records"]):
        unknown = set(r) - _RECORD_KEYS
        if unknown:
            raise TypeError(f"record {i}: unknown keys {sorted(unknown)}")
        records.append({
            "offset": r.get("offset", base + i),
            "timestamp": r["timestamp"],
            "key": _b64(r.get("key")),
            "value": _b64(r.get("value")),
            "headers": [[name, _b64(value)] for name, value in r.get("headers", ())],
        })
    item["records"] = records
    if item["control"] is not None:
        item["control"] = dict(item["control"])
    return item


def _record(r: Mapping[str, Any]) -> RecordValue:
    out: RecordValue = {
        "offset": r["offset"],
        "timestamp": r["timestamp"],
        "key": _unb64(r["key"]),
        "value": _unb64(r["value"]),
        "headers": [(name, _unb64(value)) for name, value in r["headers"]],
    }
    if "control_type" in r:
        out["control_type"] = r["control_type"]
    if "coordinator_epoch" in r:
        out["coordinator_epoch"] = r["coordinator_epoch"]
    return out


def _batch(b: Mapping[str, Any]) -> BatchInfo:
    out: dict[str, Any] = {k: b[k] for k in BATCH_KEYS if k != "records"}
    out["records"] = [_record(r) for r in b["records"]]
    return out  # type: ignore[return-value]


# ---- the ops ----------------------------------------------------------------------------------------------------


def java_build_many(oracle: KafkaOracle, items: Iterable[Mapping[str, Any]]) -> list[bytes | RecordsOracleError]:
    """Kafka's bytes for each item (keyword dicts as for ``java_build``), or the error Kafka raised for it."""
    wire = [build_item(**item) for item in items]
    return [bytes.fromhex(r["hex"]) if "hex" in r else RecordsOracleError("records_build", r["error"])
            for r in oracle._batched("records_build", wire)]


def java_build(oracle: KafkaOracle, **params: Any) -> bytes:
    """The MemoryRecords bytes Kafka builds for these parameters; raises ``RecordsOracleError`` if it refuses."""
    [result] = java_build_many(oracle, [params])
    if isinstance(result, RecordsOracleError):
        raise result
    return result


def java_read_many(oracle: KafkaOracle,
                   datas: Iterable[bytes | bytearray | memoryview]) -> list[list[BatchInfo] | RecordsOracleError]:
    """Kafka's view of each record set: its batches with their (decompressed) records, or the error it raised."""
    wire = [{"hex": bytes(d).hex()} for d in datas]
    return [[_batch(b) for b in r["batches"]] if "batches" in r else RecordsOracleError("records_read", r["error"])
            for r in oracle._batched("records_read", wire)]


def java_read(oracle: KafkaOracle, data: bytes | bytearray | memoryview) -> list[BatchInfo]:
    """The batches Kafka reads from ``data``; raises ``RecordsOracleError`` if it refuses."""
    [result] = java_read_many(oracle, [data])
    if isinstance(result, RecordsOracleError):
        raise result
    return result


def records_of(batches: Sequence[BatchInfo]) -> list[RecordValue]:
    """All records of all batches, in order (legacy uncompressed sets hold one record per batch)."""
    return [r for b in batches for r in b["records"]]
