"""The pre-4.0 protocol (``kafkamock.legacy.protocol.enable``): Produce v0-2 and Fetch v0-3 carry magic 0/1 messages.

Served the way Kafka 3.x served them, so the log stays magic 2 and every client reads every record:
- Produce v0-2: the message set is converted to one v2 batch (LogValidator's up-conversion): magic 0 messages
  get no timestamp, magic 1 keep theirs; the result then goes through the normal checks and offset assignment.
- Fetch v0-3: batches newer than the reader's magic (0 for Fetch v0-1, 1 for v2-3) are rewritten in it, keeping
  their compression; headers and control batches are dropped, as Kafka's down-conversion drops them.
This is the only path where the broker re-encodes records; Kafka itself does the same there.
"""

from __future__ import annotations

from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.records import CorruptRecordError, decode_batches, encode_batch, split_batches

# Topic compression.type -> the codec a converted batch is written with ("producer": keep the client's).
_TOPIC_CODECS = {"uncompressed": "none", "gzip": "gzip", "snappy": "snappy", "lz4": "lz4", "zstd": "zstd"}


def fetch_magic(fetch_version: int) -> int:
    """The newest message format a Fetch request of this version can read."""
    return 0 if fetch_version <= 1 else 1 if fetch_version <= 3 else 2


def up_convert(records: bytes | bytearray | memoryview | None, topic_compression: str
               ) -> bytes | bytearray | memoryview:
    """A Produce v0-2 message set as one magic 2 batch (a lone v2 batch passes through untouched)."""
    if records is None:
        raise KafkaError(ErrorCode.INVALID_RECORD, "records are null")
    try:
        views, partial = split_batches(records)
        if partial:
            raise KafkaError(ErrorCode.CORRUPT_MESSAGE, "the message set ends in a partial message")
        if not views:
            raise KafkaError(ErrorCode.INVALID_RECORD, "an empty message set")
        if len(views) == 1 and views[0].magic == 2:
            return records
        batches = decode_batches(records)
    except CorruptRecordError as exc:
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, str(exc)) from None
    if any(b.magic == 2 for b in batches):
        raise KafkaError(ErrorCode.INVALID_RECORD, "a message set mixes v2 batches with magic 0/1 messages")
    codec = _TOPIC_CODECS.get(topic_compression, batches[0].compression)
    converted = [{"offset": i, "timestamp": r.timestamp, "key": r.key, "value": r.value}
                 for i, r in enumerate(r for b in batches for r in b.records)]
    return encode_batch(converted, compression=codec)


def down_convert(data: bytes, magic: int) -> bytes:
    """Fetched batches rewritten for a reader of message format ``magic`` (0 or 1)."""
    views, _ = split_batches(data)
    out: list[bytes | bytearray | memoryview] = []
    for view in views:
        if view.magic <= magic:
            out.append(memoryview(data)[view.start:view.end])
            continue
        if view.is_control:
            continue  # transaction markers mean nothing to a magic 0/1 reader
        if view.compression == "zstd":
            # Kafka's answer when a reader too old for zstd meets a zstd batch.
            raise KafkaError(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
                             f"a magic {magic} reader cannot read zstd-compressed batches")
        (batch,) = decode_batches(view.bytes())
        log_append = batch.timestamp_type == "LogAppendTime"
        out.append(encode_batch([r._replace(headers=[]) for r in batch.records], magic=magic,
                                compression=batch.compression,
                                timestamp_type=batch.timestamp_type if magic == 1 else "CreateTime",
                                log_append_time=batch.max_timestamp if log_append and magic == 1 else None))
    return b"".join(out)
