"""What Kafka's LogValidator checks and changes in a produced batch before it is appended.

Checked on the header and the record framing, without decoding records: the CRC, the magic, the record count
against the offset range, the framing of every record (one varint each), zstd only from Produce v7, no control
batches from clients, ``max.message.bytes``, CreateTime timestamps within ``message.timestamp.before/after.max.ms``,
and, on a compacted topic, a key on every record. Changed: a batch whose compression differs from the topic's
``compression.type`` is re-encoded in the topic's codec (``producer`` keeps the client's), the one time records
are rebuilt on the produce path, as in Kafka.
"""

from __future__ import annotations

from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.records import CorruptRecordError, decode_batches, encode_batch
from kafkamock.records.view import BatchView

NO_TIMESTAMP = -1
# Topic compression.type -> codec ("producer": whatever the client used).
TOPIC_CODECS = {"uncompressed": "none", "gzip": "gzip", "snappy": "snappy", "lz4": "lz4", "zstd": "zstd"}


class RequestRecordsError(KafkaError):
    """Records refused before they reach the log (Kafka's ProduceRequest.validateRecords in KafkaApis)."""


def check_batch(batch: BatchView, version: int | None, max_bytes: int) -> None:
    """Header-level checks (raise KafkaError with Kafka's code)."""
    if batch.magic != 2:
        raise RequestRecordsError(ErrorCode.INVALID_RECORD, "produce requests with version 3+ need v2 record batches")
    if version is not None and version < 7 and batch.compression == "zstd":
        # Kafka's ProduceRequest.validateRecords: zstd arrived with Produce v7 (KIP-110).
        raise KafkaError(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
                         f"produce requests with version {version} are not allowed to use ZStandard compression")
    if batch.compression.startswith("unknown"):
        # Kafka's CompressionType.forId throws an IllegalArgumentException while appending: no ApiException, so
        # UNKNOWN_SERVER_ERROR (with the log start offset), CRC or not.
        raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, f"unknown compression type in {batch.compression}")
    try:
        batch.validate()
    except CorruptRecordError as exc:
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, str(exc)) from None
    if batch.record_count <= 0:
        raise KafkaError(ErrorCode.INVALID_RECORD, f"Invalid reported count for record batch: {batch.record_count}")
    # LogValidator.validateBatch: the offset range the header claims must hold exactly the records it counts.
    if batch.last_offset_delta + 1 != batch.record_count:
        raise KafkaError(ErrorCode.INVALID_RECORD,
                         f"Inconsistent batch offset range [{batch.base_offset}, {batch.last_offset}] and count of "
                         f"records {batch.record_count}")
    try:
        # One varint per record (no decoding): a batch whose records do not fill it as declared is refused, as
        # Kafka's LogValidator does; stored, it would stall every consumer at that offset.
        batch.validate_records()
    except CorruptRecordError as exc:
        raise KafkaError(ErrorCode.INVALID_RECORD, str(exc)) from None
    if batch.size > max_bytes:
        raise KafkaError(ErrorCode.MESSAGE_TOO_LARGE, f"batch of {batch.size} bytes exceeds max.message.bytes {max_bytes}")
    if batch.is_control:
        raise KafkaError(ErrorCode.INVALID_RECORD, "clients cannot write control batches")


class RecordValidationError(KafkaError):
    """KIP-467: records of a batch refused one by one. Kafka answers the partition with the error, a message that
    sums the record errors up, and each refused record's index in the batch with its message, so a client can fail
    just those records."""

    def __init__(self, code: ErrorCode, message: str, record_errors: list[tuple[int, str]]):
        super().__init__(code, message)
        self.record_errors = record_errors


def check_records(batch: BatchView, *, now: int, before_ms: int, after_ms: int, check_times: bool,
                  need_keys: bool, topic_partition: str = "") -> None:
    """Record-level checks that need decoding, done only when they can fail: keyless records on a compacted topic
    (LogValidator.validateKey) and CreateTime timestamps out of range (LogValidator.validateTimestamp; the
    header's max timestamp settles the common case). Every record is checked; the errors are raised together."""
    times = check_times and not (batch.max_timestamp <= now + after_ms and before_ms >= now)
    if not times and not need_keys:
        return
    try:
        (decoded,) = decode_batches(batch.bytes())
    except CorruptRecordError as exc:
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, str(exc)) from None
    errors: list[tuple[int, str]] = []
    bad_time = False
    for index, record in enumerate(decoded.records):
        if need_keys and record.key is None:
            errors.append((index, f"Compacted topic cannot accept message without key in topic partition "
                                  f"{topic_partition}"))
        elif times and record.timestamp != NO_TIMESTAMP and not (
                now - record.timestamp <= before_ms and record.timestamp - now <= after_ms):
            bad_time = True
            errors.append((index, f"Timestamp {record.timestamp} of message with offset {record.offset} is out of "
                                  f"range. The timestamp should be within [{now - before_ms}, {now + after_ms}]"))
    if not errors:
        return
    if bad_time:
        raise RecordValidationError(ErrorCode.INVALID_TIMESTAMP,
                                    "One or more records have been rejected due to invalid timestamp", errors)
    shown = ", ".join(f"RecordError(batchIndex={i}, message='{m}')" for i, m in errors[:3])
    raise RecordValidationError(
        ErrorCode.INVALID_RECORD, f"One or more records have been rejected due to {len(errors)} record errors in "
        f"total, and only showing the first three errors at most: [{shown}]", errors)


def target_codec(topic_compression: str, batch: BatchView) -> str:
    """Kafka's BrokerCompressionType.targetCompression."""
    return TOPIC_CODECS.get(topic_compression, batch.compression)


def recompress(batch: BatchView, codec: str, level: int | None) -> bytearray:
    """The batch re-encoded with ``codec`` (producer id, epoch, sequence, transactional flag and timestamps kept)."""
    try:
        (decoded,) = decode_batches(batch.bytes())
    except CorruptRecordError as exc:
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, str(exc)) from None
    log_append = decoded.timestamp_type == "LogAppendTime"
    return bytearray(encode_batch(
        decoded.records, base_offset=decoded.base_offset, compression=codec, producer_id=decoded.producer_id,
        producer_epoch=decoded.producer_epoch, base_sequence=decoded.base_sequence,
        transactional=decoded.is_transactional, partition_leader_epoch=decoded.partition_leader_epoch,
        timestamp_type=decoded.timestamp_type, log_append_time=decoded.max_timestamp if log_append else None,
        compression_level=level))
