"""Produce (0): validate each batch's header and CRC, check idempotent sequences, assign offsets by rewriting
the batch header in place, append the bytes. Records are never decoded or re-encoded."""

from __future__ import annotations

import logging

from kafkamock.broker import legacy
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.producers import BatchMetadata
from kafkamock.records import CorruptRecordError, decode_batches, split_batches

API_KEY = 0
NO_TIMESTAMP = -1
log = logging.getLogger("kafkamock.broker.produce")


def _partition_result(index: int, code: ErrorCode = ErrorCode.NONE, base_offset: int = -1,
                      log_append_time: int = -1, log_start_offset: int = -1, message: str | None = None) -> dict:
    return {"index": index, "error_code": code, "base_offset": base_offset, "log_append_time_ms": log_append_time,
            "log_start_offset": log_start_offset, "record_errors": [], "error_message": message}


def append(broker, topic, partition, records: bytes | bytearray | memoryview | None,
           version: int | None = None) -> dict:
    """Validate and append one partition's records; the per-partition response. ``version`` is the Produce
    request's version, when the records came from one (zstd needs v7+)."""
    index = partition.index
    plog = partition.log
    if records is None:
        raise KafkaError(ErrorCode.INVALID_RECORD, "records are null")
    # The server hands over a writable view of the request frame: patch it in place, no copy. (The log then keeps
    # the frame alive while it holds the batch.)
    if type(records) is bytearray or (type(records) is memoryview and not records.readonly):
        buffer = records
    else:
        buffer = bytearray(records)
    try:
        views, partial = split_batches(buffer)
    except CorruptRecordError as exc:
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, str(exc)) from None
    if partial or len(views) != 1:
        raise KafkaError(ErrorCode.INVALID_RECORD if not partial else ErrorCode.CORRUPT_MESSAGE,
                         "a produce request needs exactly one whole record batch per partition")
    (batch,) = views
    if batch.magic != 2:
        raise KafkaError(ErrorCode.INVALID_RECORD, "produce requests with version 3+ need v2 record batches")
    if version is not None and version < 7 and batch.compression == "zstd":
        # Kafka's ProduceRequest.validateRecords: zstd arrived with Produce v7 (KIP-110).
        raise KafkaError(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
                         f"produce requests with version {version} are not allowed to use ZStandard compression")
    try:
        batch.validate()
    except CorruptRecordError as exc:
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, str(exc)) from None
    try:
        # One varint per record (no decoding): a batch whose records do not fill it as declared is refused, as
        # Kafka's LogValidator does; stored, it would stall every consumer at that offset.
        batch.validate_records()
    except CorruptRecordError as exc:
        raise KafkaError(ErrorCode.INVALID_RECORD, str(exc)) from None
    max_bytes, log_append = broker.topic_config(topic, "max.message.bytes"), _log_append(broker, topic)
    if batch.size > max_bytes:
        raise KafkaError(ErrorCode.MESSAGE_TOO_LARGE,
                         f"batch of {batch.size} bytes exceeds max.message.bytes {max_bytes}")
    if batch.record_count <= 0:
        raise KafkaError(ErrorCode.INVALID_RECORD, "a batch with no records")
    if batch.is_control:
        raise KafkaError(ErrorCode.INVALID_RECORD, "clients cannot write control batches")
    if batch.is_transactional:
        raise KafkaError(ErrorCode.INVALID_TXN_STATE, "transactions are not supported by this broker yet")
    now = broker.now_ms()
    if not log_append:
        _check_timestamps(broker, topic, batch, now)
    producer_id = batch.producer_id
    if producer_id >= 0:
        duplicate = partition.producers.check(producer_id, batch.producer_epoch, batch.base_sequence,
                                              batch.last_sequence)
        if duplicate is not None:
            # A retry of a batch already written: success, with the offsets it got the first time.
            return _partition_result(index, base_offset=duplicate.base_offset,
                                     log_append_time=duplicate.timestamp if log_append else -1,
                                     log_start_offset=plog.log_start_offset)
    base_offset = plog.log_end_offset
    batch.set_base_offset(base_offset)
    batch.set_partition_leader_epoch(partition.leader_epoch)
    append_time = -1
    if log_append:
        append_time = now
        batch.set_log_append_time(now)
    last_offset = base_offset + batch.last_offset_delta
    plog.append(buffer, base_offset, last_offset, batch.max_timestamp, now)  # the log owns the buffer now
    if producer_id >= 0:
        partition.producers.record(producer_id, batch.producer_epoch, BatchMetadata(
            batch.base_sequence, batch.last_sequence, base_offset, last_offset, append_time))
    return _partition_result(index, base_offset=base_offset, log_append_time=append_time,
                             log_start_offset=plog.log_start_offset)


def _check_timestamps(broker, topic, batch, now: int) -> None:
    """CreateTime topics refuse records stamped outside [now - before.max.ms, now + after.max.ms] (Kafka's
    LogValidator.validateTimestamp; after.max.ms defaults to one hour since KIP-937). The batch header's max
    timestamp settles the common case; the records are decoded only when one may be out of range."""
    after = broker.topic_config(topic, "message.timestamp.after.max.ms")
    before = broker.topic_config(topic, "message.timestamp.before.max.ms")
    if batch.max_timestamp <= now + after and before >= now:
        return  # nothing can be too new, and nothing (but NO_TIMESTAMP, which is exempt) can be too old
    try:
        (decoded,) = decode_batches(batch.bytes())
    except CorruptRecordError as exc:
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, str(exc)) from None
    for record in decoded.records:
        if record.timestamp != NO_TIMESTAMP and not now - before <= record.timestamp <= now + after:
            raise KafkaError(ErrorCode.INVALID_TIMESTAMP,
                             f"Timestamp {record.timestamp} of message with offset {record.offset} is out of range. "
                             f"The timestamp should be within [{now - before}, {now + after}]")


def _log_append(broker, topic) -> bool:
    return broker.topic_config(topic, "message.timestamp.type") == "LogAppendTime"


def handle(broker, request) -> dict | None:
    body, version = request.body, request.version
    acks = body.acks
    responses = []
    appended = False
    for topic_data in body.topic_data:
        if version >= 13:
            topic = broker.cluster.topics_by_id.get(topic_data.topic_id)
            missing = ErrorCode.UNKNOWN_TOPIC_ID
        else:
            topic = broker.cluster.topics.get(topic_data.name)
            missing = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        results = []
        for pd in topic_data.partition_data:
            try:
                if acks not in (-1, 0, 1):
                    raise KafkaError(ErrorCode.INVALID_REQUIRED_ACKS, f"acks={acks}")
                if topic is None or not 0 <= pd.index < len(topic.partitions):
                    raise KafkaError(missing)
                partition = topic.partitions[pd.index]
                if partition.leader_id != broker.node_id:
                    raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER)
                records = pd.records
                if version < 3:  # only reachable with kafkamock.legacy.protocol.enable
                    records = legacy.up_convert(records, broker.topic_config(topic, "compression.type"))
                result = append(broker, topic, partition, records, version)
                appended = appended or result["base_offset"] >= 0
            except KafkaError as exc:
                if exc.code in (ErrorCode.CORRUPT_MESSAGE, ErrorCode.INVALID_RECORD):
                    log.warning("produce to %s-%d from %s refused: %s", topic_data.name, pd.index,
                                request.client_id, exc)
                result = _partition_result(pd.index, exc.code, message=exc.message)
            results.append(result)
        responses.append({"name": topic_data.name, "topic_id": topic_data.topic_id, "partition_responses": results})
    if appended:
        broker.appended()
    if acks == 0:
        return None
    return {"responses": responses, "throttle_time_ms": 0}
