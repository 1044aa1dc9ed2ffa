"""Planning on the driver: which partitions a subscription covers, their offsets (earliest, latest, given, or
found by timestamp), and the offset ranges each Spark task reads: split for ``maxRecordsPerPartition`` and
``minPartitions``, capped by ``maxOffsetsPerTrigger``, held back by ``minOffsetsPerTrigger``."""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from typing import TypeVar, TypeVarTuple, Unpack

import trio

from kafkamock.client import KafkaClient, KafkaResponseError, list_offsets
from kafkamock.client.connection import KafkaConnectionError
from kafkamock.client.errors import KafkaError
from kafkamock.client.offsets import EARLIEST, LATEST
from kafkamock.spark.options import ByTimestamp, ClientSettings, KafkaOptionError, Offsets, ReadOptions, Subscription

log = logging.getLogger(__name__)
TopicPartition = tuple[str, int]
NO_OFFSET = -1          # ListOffsets by timestamp: no record that recent
R = TypeVar("R")
Ts = TypeVarTuple("Ts")
# A planning step: what it finds with a connected client (and its own arguments).
Job = Callable[[KafkaClient, Unpack[Ts]], Awaitable[R]]


@dataclass(frozen=True)
class OffsetRange:
    """One Spark task's share of a partition: offsets [start, end)."""

    topic: str
    partition: int
    start: int
    end: int

    @property
    def size(self) -> int:
        return self.end - self.start


def run(settings: ClientSettings, job: Job[*Ts, R], *args: *Ts, retries: int = 0,
        retry_interval_s: float = 1.0) -> R:
    """Run ``job(client, *args)`` on a fresh client in a trio loop of its own (driver or Spark worker).

    A retriable Kafka error or a lost connection is retried ``retries`` times, ``retry_interval_s`` apart, on a
    new client (Spark's fetchOffset.numRetries / fetchOffset.retryIntervalMs); option errors are not."""

    async def attempt() -> tuple[R, None] | tuple[None, Exception]:
        try:
            async with settings.kafka_client() as client:
                try:            # caught inside the client, so the error is not wrapped in its nursery's group
                    with trio.fail_after(settings.api_timeout_s):
                        return await job(client, *args), None
                except (KafkaError, KafkaConnectionError, OSError, trio.TooSlowError) as exc:
                    failure: Exception = exc
        except (KafkaConnectionError, OSError) as exc:
            failure = exc
        return None, failure

    async def main() -> R:
        for number in range(retries + 1):
            outcome = await attempt()
            if outcome[1] is None:
                return outcome[0]
            failure = outcome[1]
            if number == retries or (isinstance(failure, KafkaError) and not failure.retriable):
                raise failure
            log.warning("getting Kafka offsets failed (attempt %d of %d): %s", number + 1, retries + 1, failure)
            await trio.sleep(retry_interval_s)
        raise ValueError(f"cannot plan with {retries} retries: fetchOffset.numRetries must not be negative")

    return trio.run(main)


def plan(opts: ReadOptions, job: Job[*Ts, R], *args: *Ts) -> R:
    """``run`` with the read's retry options."""
    return run(opts.client, job, *args, retries=opts.fetch_offset_retries,
               retry_interval_s=opts.fetch_offset_retry_interval_ms / 1000)


async def topic_partitions(client: KafkaClient, sub: Subscription, settings: ClientSettings) -> list[TopicPartition]:
    """The partitions a subscription covers now, in (topic, partition) order."""
    if sub.kind == "subscribePattern":
        response = await client.metadata(None)
        pattern = re.compile(sub.pattern or "")
        return sorted((t.name, p.partition_index) for t in response.topics
                      if t.error_code == 0 and not (t.is_internal and settings.exclude_internal_topics)
                      and pattern.fullmatch(t.name) for p in t.partitions)
    allow_auto_create = settings.allow_auto_create_topics
    response = await client.metadata(list(sub.topics), auto_create=allow_auto_create)
    counts: dict[str, int] = {}
    for t in response.topics:
        if t.error_code == 5 and allow_auto_create:       # LEADER_NOT_AVAILABLE: just created, ask again
            response = await client.metadata([t.name])
            t = response.topics[0]
        if t.error_code == 3:
            option = "assign" if sub.kind == "assign" else "subscribe"
            hint = "" if allow_auto_create else " (auto-creation is off: 'kafka.allow.auto.create.topics' is false)"
            raise KafkaOptionError(f"option '{option}': topic '{t.name}' does not exist{hint}")
        if t.error_code:
            raise KafkaResponseError(t.error_code, what=f"metadata for topic '{t.name}'")
        counts[t.name] = len(t.partitions)
    if sub.kind == "subscribe":
        return sorted((t, p) for t, n in counts.items() for p in range(n))
    for topic, partition in sub.partitions:
        if partition >= counts.get(topic, 0) or partition < 0:
            raise KafkaOptionError(f"option 'assign': {topic}-{partition} does not exist (the topic has "
                                   f"{counts.get(topic, 0)} partition(s))")
    return sorted(set(sub.partitions))


def _must_cover(partitions: list[TopicPartition], given: Collection[TopicPartition], name: str, what: str) -> None:
    missing = [tp for tp in partitions if tp not in given]
    if missing:
        raise KafkaOptionError(f"option '{name}' gives {what}, so it must name every partition the query reads; "
                               f"missing: {', '.join(f'{t}-{p}' for t, p in missing)}")
    unknown = [tp for tp in given if tp not in set(partitions)]
    if unknown:
        raise KafkaOptionError(f"option '{name}' names partitions the query does not read: "
                               f"{', '.join(f'{t}-{p}' for t, p in sorted(unknown))}")


async def resolve(client: KafkaClient, partitions: list[TopicPartition], spec: Offsets, name: str, isolation_level: int,
                  *, starting: bool = True) -> dict[TopicPartition, int]:
    """Offsets for ``partitions`` from an option value: "earliest", "latest", {(topic, partition): offset} with
    -2/-1 for earliest/latest, or a ``ByTimestamp``. Specific offsets or timestamps must name every partition
    (as Spark requires). A timestamp later than every record gives the latest offset for an end, and for a start
    what ``startingOffsetsByTimestampStrategy`` says: fail (error) or the latest offset (latest)."""
    if isinstance(spec, str):
        return await list_offsets(client, {tp: EARLIEST if spec == "earliest" else LATEST for tp in partitions},
                                  isolation_level=isolation_level)
    if isinstance(spec, ByTimestamp):
        timestamps = spec.timestamps(partitions)
        if spec.everywhere is None:
            _must_cover(partitions, timestamps, name, "timestamps")
        found = await list_offsets(client, timestamps, isolation_level=isolation_level) if timestamps else {}
        unmatched = [tp for tp in partitions if found[tp] == NO_OFFSET]
        if unmatched and starting and spec.no_match == "error":
            tp = unmatched[0]
            raise KafkaOptionError(f"No offset matched from request of topic-partition {tp[0]}-{tp[1]} and "
                                   f"timestamp {timestamps[tp]} (option '{name}'; set "
                                   "'startingOffsetsByTimestampStrategy' to 'latest' to start at the latest offset "
                                   "instead)")
        latest = await list_offsets(client, {tp: LATEST for tp in unmatched},
                                    isolation_level=isolation_level) if unmatched else {}
        return {tp: latest.get(tp, found[tp]) for tp in partitions}
    _must_cover(partitions, spec, name, "specific offsets")
    markers = {tp: spec[tp] for tp in partitions if spec[tp] < 0}
    resolved = await list_offsets(client, markers, isolation_level=isolation_level) if markers else {}
    return {tp: resolved.get(tp, spec[tp]) for tp in partitions}


async def subscribed_offsets(client: KafkaClient, opts: ReadOptions, spec: Offsets, name: str, *, starting: bool = True
                             ) -> tuple[list[TopicPartition], dict[TopicPartition, int]]:
    """The partitions a query's subscription covers now, and their offsets for ``spec`` (see ``resolve``)."""
    parts = await topic_partitions(client, opts.subscription, opts.client)
    return parts, await resolve(client, parts, spec, name, opts.client.isolation_level, starting=starting)


def _cut(r: OffsetRange, parts: int) -> list[OffsetRange]:
    """``r`` in ``parts`` near-equal pieces, the remainder going to the last ones (as Spark cuts)."""
    out, start, remaining = [], r.start, r.size
    for i in range(parts):
        size = remaining // (parts - i)
        remaining -= size
        out.append(OffsetRange(r.topic, r.partition, start, start + size))
        start += size
    return [piece for piece in out if piece.size > 0]


def split(ranges: list[OffsetRange], min_partitions: int | None,
          max_records_per_partition: int | None = None) -> list[OffsetRange]:
    """Spark tasks for offset ranges: one per Kafka partition; no task above ``maxRecordsPerPartition``
    offsets; then, when there are still fewer tasks than ``minPartitions``, large ranges cut further in
    proportion to their size, small ones left whole (Spark's KafkaOffsetRangeCalculator)."""
    ranges = [r for r in ranges if r.size > 0]
    if max_records_per_partition:
        ranges = [piece for r in ranges for piece in _cut(r, -(-r.size // max_records_per_partition))]
    if not min_partitions or len(ranges) >= min_partitions:
        return ranges
    total = sum(r.size for r in ranges)

    def parts_for(size: int, whole: int, wanted: int) -> int:
        return max(round(size / whole * wanted), 1)

    unsplit = [r for r in ranges if parts_for(r.size, total, min_partitions) == 1]
    split_total = total - sum(r.size for r in unsplit)
    split_wanted = max(min_partitions - len(unsplit), 1)
    out = []
    for r in ranges:
        if any(r is u for u in unsplit):
            out.append(r)
        else:
            out.extend(_cut(r, parts_for(r.size, split_total, split_wanted)))
    return out


def rate_limit(start: dict[TopicPartition, int], latest: dict[TopicPartition, int],
               max_rows: int) -> dict[TopicPartition, int]:
    """End offsets that read about ``max_rows`` in all, shared in proportion to each partition's backlog
    (Spark's maxOffsetsPerTrigger: a share below one offset is rounded up, so no partition starves)."""
    sizes = {tp: end - start[tp] for tp, end in latest.items() if tp in start and end - start[tp] > 0}
    total = sum(sizes.values())
    if total < 1:
        return dict(latest)
    out = {}
    for tp, end in latest.items():
        if tp not in sizes:
            out[tp] = end
            continue
        share = max_rows * sizes[tp] / total
        out[tp] = min(end, start[tp] + int(share if share >= 1 else 1))
    return out


def held_back(start: dict[TopicPartition, int], latest: dict[TopicPartition, int], min_rows: int,
              now_ms: int, last_trigger_ms: int, max_delay_ms: int) -> bool:
    """Whether a micro-batch waits for more data (Spark's minOffsetsPerTrigger / maxTriggerDelay): it waits
    while fewer than ``min_rows`` offsets are new, until ``max_delay_ms`` has passed since the last batch."""
    if now_ms - last_trigger_ms >= max_delay_ms:
        return False
    new = sum(offset - start.get(tp, 0) for tp, offset in latest.items())
    return new < min_rows
