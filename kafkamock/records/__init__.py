"""Kafka's record formats: RecordBatch v2, legacy message sets (magic 0/1), compression and control records.

    >>> from kafkamock import records
    >>> data = records.encode_batch([{"key": b"k", "value": b"v", "timestamp": 1}], base_offset=5)
    >>> [r.value for r in records.decode_batches(data)[0].records]
    [b'v']

``decode_batches`` decodes everything (clients, tools, the Spark connector); the broker's hot path uses the
zero-copy ``split_batches``/``BatchView`` instead and never re-encodes records.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kafkamock.records.compression import CODECS, DEFAULT_MAX_DECOMPRESSED
from kafkamock.records.control import CONTROL_TYPES, control_key, control_value, decode_control
from kafkamock.records.errors import CorruptRecordError
from kafkamock.records.layout import LOG_OVERHEAD, MAGIC_OFFSET
from kafkamock.records.legacy import decode_legacy, encode_legacy
from kafkamock.records.model import Record, RecordBatch
from kafkamock.records.v2 import decode_v2, encode_v2
from kafkamock.records.view import BatchView, find_batch, split_batches


def decode_batches(data: bytes | bytearray | memoryview, *,
                   max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED) -> list[RecordBatch]:
    """Every batch in ``data`` (any magic), decompressed and decoded; a partial batch at the end is ignored.

    Raises CorruptRecordError on a bad CRC, bad lengths, unknown magic or compression, corrupt or truncated
    compressed data, or a batch that decompresses to more than ``max_decompressed_bytes``.
    """
    buf = data if type(data) is bytes else bytes(data)
    views, _ = split_batches(buf)
    batches = []
    for view in views:
        magic = buf[view.start + MAGIC_OFFSET]
        if magic == 2:
            batches.append(decode_v2(buf, view.start, view.end, max_decompressed_bytes))
        elif magic in (0, 1):
            batches.append(decode_legacy(buf, view.start, view.end, max_decompressed_bytes))
        else:
            raise CorruptRecordError(f"unknown magic {magic}", view.start)
    return batches


def encode_batch(records: Iterable[Record | Mapping[str, Any]], *, base_offset: int = 0, compression: str = "none",
                 producer_id: int = -1, producer_epoch: int = -1, base_sequence: int = -1,
                 transactional: bool = False, control: bool = False, partition_leader_epoch: int = -1,
                 timestamp_type: str = "CreateTime", log_append_time: int | None = None, magic: int = 2,
                 delete_horizon_ms: int | None = None, compression_level: int | None = None,
                 last_offset: int | None = None, max_timestamp_if_empty: int = -1) -> bytes:
    """Encode records as one batch (magic 2), or as a legacy message set (magic 0/1).

    Records are ``Record`` objects or mappings with ``key``, ``value``, ``headers`` (list of ``(str, bytes |
    None)``), ``timestamp`` (default -1) and optionally ``offset`` (default ``base_offset`` + position).
    """
    if magic == 2:
        return encode_v2(records, base_offset=base_offset, compression_name=compression, producer_id=producer_id,
                         producer_epoch=producer_epoch, base_sequence=base_sequence, transactional=transactional,
                         control=control, partition_leader_epoch=partition_leader_epoch,
                         timestamp_type=timestamp_type, log_append_time=log_append_time,
                         delete_horizon_ms=delete_horizon_ms, compression_level=compression_level,
                         last_offset=last_offset, max_timestamp_if_empty=max_timestamp_if_empty)
    if last_offset is not None:
        raise ValueError("last_offset needs magic 2")
    if transactional or control or producer_id != -1:
        raise ValueError("idempotent, transactional and control batches need magic 2")
    return encode_legacy(records, magic=magic, base_offset=base_offset, compression_name=compression,
                         timestamp_type=timestamp_type, log_append_time=log_append_time,
                         compression_level=compression_level)


def end_txn_marker_batch(commit: bool, *, producer_id: int, producer_epoch: int, coordinator_epoch: int,
                         timestamp: int, base_offset: int = 0, partition_leader_epoch: int = -1) -> bytes:
    """A COMMIT or ABORT transaction marker batch, as the transaction coordinator writes it (KIP-98)."""
    kind = "COMMIT" if commit else "ABORT"
    record = {"key": control_key(kind), "value": control_value(kind, {"coordinator_epoch": coordinator_epoch}),
              "timestamp": timestamp}
    return encode_v2([record], base_offset=base_offset, producer_id=producer_id, producer_epoch=producer_epoch,
                     transactional=True, control=True, partition_leader_epoch=partition_leader_epoch)


def share_checkpoint_batch(group_id: str, checkpoint_epoch: int, start_offset: int, end_offset: int,
                           states: Iterable[Mapping[str, int]], *, timestamp: int, base_offset: int = 0,
                           partition_leader_epoch: int = -1, summary_start_offset: int = -1,
                           delivery_complete_count: int = -1) -> bytes:
    """A SHARE_CHECKPOINT control batch (KIP-932): the whole durable state of a share-partition.

    ``states`` are runs ``{"base_offset", "last_offset", "state", "delivery_count"}``; persist an Acquired
    record as Available (0) with its delivery count less one, as the KIP says. The two tagged summary fields carry
    what DescribeShareGroupOffsets reports (-1: nothing yet).
    """
    value = {"group_id": group_id, "checkpoint_epoch": checkpoint_epoch, "start_offset": start_offset,
             "end_offset": end_offset, "states": list(states), "summary_start_offset": summary_start_offset,
             "delivery_complete_count": delivery_complete_count}
    return _control_batch("SHARE_CHECKPOINT", value, timestamp, base_offset, partition_leader_epoch)


def share_delta_batch(group_id: str, checkpoint_epoch: int, delta_index: int, start_offset: int,
                      states: Iterable[Mapping[str, int]], *, timestamp: int, base_offset: int = 0,
                      partition_leader_epoch: int = -1, summary_start_offset: int = -1,
                      delivery_complete_count: int = -1) -> bytes:
    """A SHARE_DELTA control batch (KIP-932): the runs that changed, chained to checkpoint ``checkpoint_epoch``."""
    value = {"group_id": group_id, "checkpoint_epoch": checkpoint_epoch, "delta_index": delta_index,
             "start_offset": start_offset, "states": list(states), "summary_start_offset": summary_start_offset,
             "delivery_complete_count": delivery_complete_count}
    return _control_batch("SHARE_DELTA", value, timestamp, base_offset, partition_leader_epoch)


def _control_batch(kind: str, value: dict[str, Any], timestamp: int, base_offset: int, leader_epoch: int) -> bytes:
    record = {"key": control_key(kind), "value": control_value(kind, value), "timestamp": timestamp}
    return encode_v2([record], base_offset=base_offset, control=True, partition_leader_epoch=leader_epoch)


__all__ = [
    "CODECS", "CONTROL_TYPES", "BatchView", "CorruptRecordError", "DEFAULT_MAX_DECOMPRESSED", "LOG_OVERHEAD",
    "Record", "RecordBatch", "control_key", "control_value", "decode_batches", "decode_control", "encode_batch",
    "end_txn_marker_batch", "find_batch", "share_checkpoint_batch", "share_delta_batch", "split_batches",
]
