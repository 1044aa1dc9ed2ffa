"""Read one partition's records between two offsets: the consumer side that batch jobs and Spark tasks need
(no group, no commits; the caller says where to start and stop)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import trio

from kafkamock.client.cluster import KafkaClient
from kafkamock.client.errors import KafkaResponseError
from kafkamock.client.fetched import deliverable_batches
from kafkamock.records import Record

FETCH_MAX_BYTES = 50 * 1024 * 1024      # Kafka consumer defaults: fetch.max.bytes,
PARTITION_MAX_BYTES = 1024 * 1024       # max.partition.fetch.bytes (grown when one batch is larger)


@dataclass(frozen=True, slots=True)
class FetchedChunk:
    """Records of one fetch, in offset order, within the range asked for. ``timestamp_type`` is 0 (CreateTime)
    or 1 (LogAppendTime) per record. ``log_start_offset`` tells a gap (data deleted) from a compaction hole."""

    records: list[Record]
    timestamp_types: list[int]
    next_offset: int
    log_start_offset: int
    high_watermark: int


async def read_range(client: KafkaClient, topic: str, partition: int, start: int, end: int, *,
                     wait_timeout_s: float = 60.0, isolation_level: int = 0,
                     partition_max_bytes: int = PARTITION_MAX_BYTES, max_bytes: int = FETCH_MAX_BYTES,
                     min_bytes: int = 1, max_wait_ms: int = 500, rack_id: str = "") -> AsyncIterator[FetchedChunk]:
    """Fetch ``topic``-``partition`` from ``start`` up to (not including) ``end``, one chunk per Fetch.

    Control records (transaction markers) are skipped, and under read_committed (``isolation_level=1``) so are
    the batches of aborted transactions. OFFSET_OUT_OF_RANGE at ``start`` raises
    KafkaResponseError (code 1): the caller decides whether that is data loss. Records below ``start`` in the
    first batch (a fetch returns whole batches) are dropped. Waits up to ``wait_timeout_s`` for offsets that are
    not yet there.
    """
    offset = start
    deadline = trio.current_time() + wait_timeout_s
    partition_bytes = partition_max_bytes
    while offset < end:
        conn = await client.leader(topic, partition)
        version = conn.version_for("Fetch")
        topic_id = client.topic_ids.get(topic)
        response = await conn.request("Fetch", {
            "replica_id": -1, "max_wait_ms": max_wait_ms, "min_bytes": min_bytes, "max_bytes": max_bytes,
            "isolation_level": isolation_level, "session_id": 0, "session_epoch": -1,
            "topics": [{"topic": topic, "topic_id": topic_id, "partitions": [
                {"partition": partition, "fetch_offset": offset, "partition_max_bytes": partition_bytes}]}],
            "forgotten_topics_data": [], "rack_id": rack_id}, version=version)
        if response.error_code:
            raise KafkaResponseError(response.error_code, f"fetch {topic}-{partition}")
        (data,) = [p for t in response.responses for p in t.partitions]
        if data.error_code:
            if data.error_code in (6, 74, 75, 5):        # leadership moved: refresh and retry
                await client.metadata([topic])
                continue
            raise KafkaResponseError(data.error_code, f"fetch {topic}-{partition} at offset {offset}")
        records, types = [], []
        batches, after = deliverable_batches(data.records, data.aborted_transactions, isolation_level == 1)
        next_offset = max(offset, after)
        for batch in batches:
            ts_type = 1 if batch.timestamp_type == "LogAppendTime" else 0
            for r in batch.records:
                if offset <= r.offset < end:
                    records.append(r)
                    types.append(ts_type)
        if next_offset == offset:
            if data.records and len(data.records) >= partition_bytes:
                partition_bytes *= 2                      # one batch larger than the limit, cut off: ask for more
                continue
            if trio.current_time() > deadline:
                raise TimeoutError(f"{topic}-{partition}: offset {offset} not available within {wait_timeout_s}s "
                                   f"(high watermark {data.high_watermark}, wanted up to {end})")
            continue                                # long-poll again: the broker waits up to max_wait_ms
        offset = min(next_offset, end)
        deadline = trio.current_time() + wait_timeout_s
        yield FetchedChunk(records, types, offset, data.log_start_offset, data.high_watermark)
