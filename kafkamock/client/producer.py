"""An idempotent producer: records grouped into v2 batches per partition, sequence numbers per partition, retries
that cannot duplicate (the broker answers a resent batch with its first offsets).

Built for bulk writers (a Spark task hands over its rows and waits for all of them): ``send_all`` partitions,
batches and sends everything, retries what is retriable and raises the first error that is not.
"""

from __future__ import annotations

import itertools
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import trio

from kafkamock import records
from kafkamock.client.cluster import KafkaClient
from kafkamock.client.errors import KafkaResponseError
from kafkamock.client.offsets import partition_counts
from kafkamock.client.partitioner import partition_for_key
from kafkamock.errors import ErrorCode

RECORD_OVERHEAD = 24   # a v2 record's varints and attributes, roughly, for sizing batches
DUPLICATE_SEQUENCE = 46


@dataclass(slots=True)
class OutgoingRecord:
    topic: str
    key: bytes | None
    value: bytes | None
    headers: Sequence[tuple[str, bytes | None]] = ()
    partition: int | None = None
    timestamp: int | None = None


@dataclass(slots=True)
class _Batch:
    topic: str
    partition: int
    records: list[dict] = field(default_factory=list)
    size: int = 0
    data: bytes = b""
    base_sequence: int = -1


class Producer:
    """``async with Producer(client) as p: await p.send_all(records)`` (acks=all, idempotent by default)."""

    def __init__(self, client: KafkaClient, *, acks: int = -1, idempotent: bool = True, compression: str = "none",
                 batch_size: int = 1_000_000, max_request_size: int = 1_048_576, timeout_ms: int = 30_000,
                 retries: int = 20, retry_backoff_s: float = 0.1, auto_create_topics: bool = True):
        if idempotent and acks != -1:
            raise ValueError("an idempotent producer needs acks=all (-1)")
        self.client, self.acks, self.idempotent, self.compression = client, acks, idempotent, compression
        self.batch_size, self.max_request_size, self.timeout_ms = batch_size, max_request_size, timeout_ms
        self.retries, self.retry_backoff_s, self.auto_create_topics = retries, retry_backoff_s, auto_create_topics
        self.producer_id, self.producer_epoch = -1, -1
        self._sequences: dict[tuple[str, int], int] = defaultdict(int)
        self._sticky = itertools.count()
        self._partitions: dict[str, int] = {}

    async def __aenter__(self) -> Producer:
        if self.idempotent:
            await self._init_producer_id()
        return self

    async def __aexit__(self, *exc) -> None:
        return None

    async def _init_producer_id(self) -> None:
        for attempt in range(self.retries + 1):
            conn = await self.client.any_broker()
            response = await conn.request("InitProducerId", {"transactional_id": None,
                                                             "transaction_timeout_ms": 60_000})
            if response.error_code == 0:
                self.producer_id, self.producer_epoch = response.producer_id, response.producer_epoch
                return
            error = KafkaResponseError(response.error_code, "InitProducerId")
            if not error.retriable or attempt == self.retries:
                raise error
            await trio.sleep(self.retry_backoff_s)

    async def partitions(self, topic: str) -> int:
        if topic not in self._partitions:
            self._partitions.update(await partition_counts(self.client, [topic],
                                                           auto_create=self.auto_create_topics))
        return self._partitions[topic]

    async def send_all(self, outgoing: Iterable[OutgoingRecord]) -> dict[tuple[str, int], list[int]]:
        """Send every record; returns {(topic, partition): [base offset of each batch]} once all are written."""
        batches: list[_Batch] = []
        open_batches: dict[tuple[str, int], _Batch] = {}
        sticky: dict[str, int] = {}
        now = int(time.time() * 1000)
        for rec in outgoing:
            count = await self.partitions(rec.topic)
            partition = rec.partition
            if partition is None:
                if rec.key is not None:
                    partition = partition_for_key(rec.key, count)
                else:  # sticky: keyless records fill one partition's batch, then move on (Kafka's default)
                    partition = sticky.setdefault(rec.topic, next(self._sticky) % count)
            elif not 0 <= partition < count:
                raise KafkaResponseError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                         f"produce to {rec.topic}-{partition}",
                                         f"the topic has {count} partition(s)")
            size = RECORD_OVERHEAD + len(rec.key or b"") + len(rec.value or b"") + sum(
                len(k) + len(v or b"") + 8 for k, v in rec.headers)
            batch = open_batches.get((rec.topic, partition))
            if batch is None or (batch.records and batch.size + size > self.batch_size):
                batch = open_batches[(rec.topic, partition)] = _Batch(rec.topic, partition)
                batches.append(batch)
            batch.records.append({"key": rec.key, "value": rec.value, "headers": list(rec.headers),
                                  "timestamp": now if rec.timestamp is None else rec.timestamp})
            batch.size += size
            if rec.key is None and rec.partition is None and batch.size >= self.batch_size:
                sticky.pop(rec.topic, None)        # this partition's batch is full: the next keyless record moves
        for batch in batches:
            self._seal(batch)
        results: dict[tuple[str, int], list[int]] = defaultdict(list)
        await self._send(batches, results)
        return dict(results)

    def _seal(self, batch: _Batch) -> None:
        tp = (batch.topic, batch.partition)
        if self.idempotent:
            batch.base_sequence = self._sequences[tp]
            self._sequences[tp] = (batch.base_sequence + len(batch.records)) & 0x7FFFFFFF
        batch.data = records.encode_batch(batch.records, compression=self.compression,
                                          producer_id=self.producer_id, producer_epoch=self.producer_epoch,
                                          base_sequence=batch.base_sequence)
        batch.records = []                         # the bytes are what gets (re)sent from now on

    async def _send(self, batches: list[_Batch], results: dict) -> None:
        pending = batches
        attempt = 0
        while pending:
            by_leader: dict[int, list[_Batch]] = defaultdict(list)
            for batch in pending:
                await self.client.leader(batch.topic, batch.partition)
                by_leader[self.client.leaders[(batch.topic, batch.partition)]].append(batch)
            failed: list[_Batch] = []
            for leader, group in by_leader.items():
                # A request carries at most one batch per partition, so a partition's batches go in sequence order.
                while group:
                    request: list[_Batch] = []
                    rest: list[_Batch] = []
                    seen: set[tuple[str, int]] = set()
                    size = 0
                    for batch in group:
                        tp = (batch.topic, batch.partition)
                        if tp in seen or (request and size + len(batch.data) > self.max_request_size):
                            rest.append(batch)
                            continue
                        seen.add(tp)
                        request.append(batch)
                        size += len(batch.data)
                    group = rest
                    retry = await self._produce(leader, request, results)
                    if retry:                          # later batches of those partitions must follow them
                        failed.extend(retry)
                        failed.extend(group)
                        break
            if not failed:
                return
            attempt += 1
            if attempt > self.retries:
                raise KafkaResponseError(ErrorCode.REQUEST_TIMED_OUT, "produce",
                                         f"{len(failed)} batch(es) still failing after {self.retries} retries")
            await trio.sleep(self.retry_backoff_s)
            await self.client.metadata(list({b.topic for b in failed}))
            pending = sorted(failed, key=lambda b: (b.topic, b.partition, b.base_sequence))

    async def _produce(self, leader: int, request: list[_Batch], results: dict) -> list[_Batch]:
        """One Produce request; returns the batches to retry, raises on an error that is not retriable."""
        by_topic: dict[str, list[_Batch]] = defaultdict(list)
        for batch in request:
            by_topic[batch.topic].append(batch)
        conn = await self.client.broker(leader)
        body = {"transactional_id": None, "acks": self.acks, "timeout_ms": self.timeout_ms, "topic_data": [
            {"name": topic, "topic_id": self.client.topic_ids.get(topic),
             "partition_data": [{"index": b.partition, "records": b.data} for b in group]}
            for topic, group in by_topic.items()]}
        if self.acks == 0:
            await conn.request("Produce", body, expect_response=False)
            return []
        response = await conn.request("Produce", body)
        index = {(b.topic, b.partition): b for b in request}
        by_id = {v: k for k, v in self.client.topic_ids.items()}
        retry = []
        for t in response.responses:
            name = t.name or by_id.get(t.topic_id, "")
            for p in t.partition_responses:
                batch = index[(name, p.index)]
                if p.error_code in (0, DUPLICATE_SEQUENCE):
                    results[(name, p.index)].append(p.base_offset)
                    continue
                error = KafkaResponseError(p.error_code, f"produce to {name}-{p.index}", p.error_message)
                if not error.retriable:
                    raise error
                retry.append(batch)
        return retry
