"""Planning on the driver: which partitions a subscription covers, their offsets, and the offset ranges each
Spark task reads (split further for ``minPartitions``; capped by ``maxOffsetsPerTrigger``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import trio

from kafkamock.client import KafkaClient, KafkaResponseError, list_offsets
from kafkamock.client.offsets import EARLIEST, LATEST
from kafkamock.spark.options import ClientSettings, KafkaOptionError, ReadOptions, Subscription

TopicPartition = tuple[str, int]


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


def run(settings: ClientSettings, job, *args):
    """Run ``job(client, *args)`` on a fresh client in a trio loop of its own (driver or Spark worker)."""

    async def main():
        async with KafkaClient(settings.bootstrap_servers, client_id=settings.client_id) as client:
            with trio.fail_after(settings.request_timeout_s * 4):
                return await job(client, *args)

    return trio.run(main)


async def topic_partitions(client: KafkaClient, sub: Subscription, allow_auto_create: bool) -> list[TopicPartition]:
    """The partitions a subscription covers now, in (topic, partition) order."""
    if sub.kind == "subscribePattern":
        response = await client.metadata(None)
        pattern = re.compile(sub.pattern or "")
        return sorted((t.name, p.partition_index) for t in response.topics
                      if t.error_code == 0 and not t.is_internal and pattern.fullmatch(t.name)
                      for p in t.partitions)
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
            raise KafkaResponseError(t.error_code, f"metadata for topic '{t.name}'")
        counts[t.name] = len(t.partitions)
    if sub.kind == "subscribe":
        return sorted((t, p) for t, n in counts.items() for p in range(n))
    for topic, partition in sub.partitions:
        if partition >= counts.get(topic, 0) or partition < 0:
            raise KafkaOptionError(f"option 'assign': {topic}-{partition} does not exist (the topic has "
                                   f"{counts.get(topic, 0)} partition(s))")
    return sorted(set(sub.partitions))


async def resolve(client: KafkaClient, partitions: list[TopicPartition], spec, name: str,
                  isolation_level: int) -> dict[TopicPartition, int]:
    """Offsets for ``partitions`` from an option value: "earliest", "latest" or {(topic, partition): offset}
    with -2/-1 for earliest/latest. A JSON value must name every partition (as Spark requires)."""
    if isinstance(spec, str):
        return await list_offsets(client, {tp: EARLIEST if spec == "earliest" else LATEST for tp in partitions},
                                  isolation_level=isolation_level)
    missing = [tp for tp in partitions if tp not in spec]
    if missing:
        listed = ", ".join(f"{t}-{p}" for t, p in missing)
        raise KafkaOptionError(f"option '{name}' gives specific offsets, so it must name every partition the "
                               f"query reads; missing: {listed}")
    unknown = [tp for tp in spec if tp not in set(partitions)]
    if unknown:
        listed = ", ".join(f"{t}-{p}" for t, p in unknown)
        raise KafkaOptionError(f"option '{name}' names partitions the query does not read: {listed}")
    markers = {tp: spec[tp] for tp in partitions if spec[tp] < 0}
    resolved = await list_offsets(client, markers, isolation_level=isolation_level) if markers else {}
    return {tp: resolved.get(tp, spec[tp]) for tp in partitions}


async def subscribed_offsets(client: KafkaClient, opts: ReadOptions, spec, name: str
                             ) -> tuple[list[TopicPartition], dict[TopicPartition, int]]:
    """The partitions a query's subscription covers now, and their offsets for ``spec`` (see ``resolve``)."""
    parts = await topic_partitions(client, opts.subscription, opts.client.allow_auto_create_topics)
    return parts, await resolve(client, parts, spec, name, opts.client.isolation_level)


def split(ranges: list[OffsetRange], min_partitions: int | None) -> list[OffsetRange]:
    """One range per Kafka partition, or more when ``minPartitions`` asks for more Spark tasks: ranges are cut in
    proportion to their size, as Spark's KafkaOffsetRangeCalculator does."""
    ranges = [r for r in ranges if r.size > 0]
    if not min_partitions or len(ranges) >= min_partitions:
        return ranges
    total = sum(r.size for r in ranges)
    out = []
    for r in ranges:
        parts = max(1, round(r.size * min_partitions / total))
        parts = min(parts, r.size)
        step, extra = divmod(r.size, parts)
        start = r.start
        for i in range(parts):
            end = start + step + (1 if i < extra else 0)
            out.append(OffsetRange(r.topic, r.partition, start, end))
            start = end
    return out


def rate_limit(start: dict[TopicPartition, int], latest: dict[TopicPartition, int],
               max_rows: int) -> dict[TopicPartition, int]:
    """End offsets that read at most ``max_rows`` in all, shared in proportion to each partition's backlog
    (Spark's maxOffsetsPerTrigger)."""
    backlog = {tp: max(0, latest[tp] - start.get(tp, latest[tp])) for tp in latest}
    total = sum(backlog.values())
    if total <= max_rows:
        return dict(latest)
    out = {}
    given = 0
    for tp in sorted(latest):
        share = backlog[tp] * max_rows // total
        out[tp] = start.get(tp, latest[tp]) + share
        given += share
    # Hand the rounding remainder out in partition order, so the limit is met exactly when there is backlog.
    for tp in sorted(latest):
        if given >= max_rows:
            break
        if out[tp] < latest[tp]:
            out[tp] += 1
            given += 1
    return out
