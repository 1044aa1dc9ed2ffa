"""Read one partition's records between two offsets: the consumer side that batch jobs and Spark tasks need
(no group, no commits; the caller says where to start and stop).

``fetch_range`` yields each Fetch's record data undecoded (the Spark connector decodes it into Arrow columns);
``read_range`` decodes it into records.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import trio

from kafkamock.client.cluster import KafkaClient
from kafkamock.client.errors import KafkaResponseError
from kafkamock.client.fetched import deliverable_batches
from kafkamock.records import Record, split_batches

FETCH_MAX_BYTES = 50 * 1024 * 1024      # Kafka consumer defaults: fetch.max.bytes,
PARTITION_MAX_BYTES = 1024 * 1024       # max.partition.fetch.bytes (grown when one batch is larger)
LEADERSHIP_MOVED = (5, 6, 74, 75)       # LEADER_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER, FENCED/UNKNOWN_LEADER_EPOCH
STALE_TOPIC = (3, 100, 103)             # UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID, INCONSISTENT_TOPIC_ID


@dataclass(frozen=True, slots=True)
class FetchedChunk:
    """Records of one fetch, in offset order, within the range asked for. ``timestamp_type`` is 0 (CreateTime)
    or 1 (LogAppendTime) per record. ``log_start_offset`` tells a gap (data deleted) from a compaction hole."""

    records: list[Record]
    timestamp_types: list[int]
    next_offset: int
    log_start_offset: int
    high_watermark: int


@dataclass(frozen=True, slots=True)
class RawFetch:
    """One partition's data of one Fetch, not decoded: ``records`` holds whole batches from the one holding
    ``fetch_offset`` (a partial batch at the end ignored), ``next_offset`` is the offset after the last whole batch,
    control batches included (the next fetch's offset), ``aborted_transactions`` as the broker named them under
    read_committed."""

    records: bytes
    aborted_transactions: Any
    fetch_offset: int
    next_offset: int
    log_start_offset: int
    high_watermark: int


async def fetch_range(client: KafkaClient, topic: str, partition: int, start: int, end: int, *,
                      wait_timeout_s: float = 60.0, isolation_level: int = 0,
                      partition_max_bytes: int = PARTITION_MAX_BYTES, max_bytes: int = FETCH_MAX_BYTES,
                      min_bytes: int = 1, max_wait_ms: int = 500, rack_id: str = "") -> AsyncIterator[RawFetch]:
    """Fetch ``topic``-``partition`` from ``start`` until a fetch reaches ``end``, yielding each Fetch that moved
    on. OFFSET_OUT_OF_RANGE raises KafkaResponseError (code 1): the caller decides whether that is data loss. Waits
    up to ``wait_timeout_s`` for offsets that are not there yet (TimeoutError)."""
    offset = start
    deadline = trio.current_time() + wait_timeout_s
    partition_bytes = partition_max_bytes
    refreshed = False
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
            raise KafkaResponseError(response.error_code, what=f"fetch {topic}-{partition}")
        (data,) = [p for t in response.responses for p in t.partitions]
        if data.error_code:
            if data.error_code in LEADERSHIP_MOVED:          # leadership moved: refresh and retry
                await client.metadata([topic])
                continue
            if data.error_code in STALE_TOPIC and not refreshed:   # a topic id from before a re-creation
                refreshed = True
                await client.metadata([topic])
                continue
            raise KafkaResponseError(data.error_code, what=f"fetch {topic}-{partition} at offset {offset}")
        refreshed = False
        records = data.records or b""
        views, _ = split_batches(records)
        next_offset = max(offset, views[-1].last_offset + 1) if views else offset
        if next_offset == offset:
            if records and len(records) >= partition_bytes:
                partition_bytes *= 2                      # one batch larger than the limit, cut off: ask for more
                continue
            if trio.current_time() > deadline:
                raise TimeoutError(f"{topic}-{partition}: offset {offset} not available within {wait_timeout_s}s "
                                   f"(high watermark {data.high_watermark}, wanted up to {end})")
            continue                                # long-poll again: the broker waits up to max_wait_ms
        yield RawFetch(records if type(records) is bytes else bytes(records), data.aborted_transactions, offset,
                       next_offset, data.log_start_offset, data.high_watermark)
        offset = next_offset
        deadline = trio.current_time() + wait_timeout_s


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
    async for raw in fetch_range(client, topic, partition, start, end, wait_timeout_s=wait_timeout_s,
                                 isolation_level=isolation_level, partition_max_bytes=partition_max_bytes,
                                 max_bytes=max_bytes, min_bytes=min_bytes, max_wait_ms=max_wait_ms, rack_id=rack_id):
        offset = raw.fetch_offset
        records, types = [], []
        batches, _ = deliverable_batches(raw.records, raw.aborted_transactions, isolation_level == 1)
        for batch in batches:
            ts_type = 1 if batch.timestamp_type == "LogAppendTime" else 0
            for r in batch.records:
                if offset <= r.offset < end:
                    records.append(r)
                    types.append(ts_type)
        yield FetchedChunk(records, types, min(raw.next_offset, end), raw.log_start_offset, raw.high_watermark)
