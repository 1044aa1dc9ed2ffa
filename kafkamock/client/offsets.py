"""Partitions and offsets of topics: what a reader plans with before it fetches anything."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

from kafkamock.client.cluster import KafkaClient
from kafkamock.client.errors import KafkaResponseError, check

EARLIEST = -2
LATEST = -1
TopicPartition = tuple[str, int]


async def partition_counts(client: KafkaClient, topics: Iterable[str], *, auto_create: bool = False) -> dict[str, int]:
    """{topic: number of partitions}; an unknown topic raises UNKNOWN_TOPIC_OR_PARTITION (or is created by the
    broker when ``auto_create`` and the broker allows it)."""
    wanted = list(dict.fromkeys(topics))
    if not wanted:
        return {}
    response = await client.metadata(wanted, auto_create=auto_create)
    counts = {}
    for t in response.topics:
        check(t.error_code, f"metadata for topic {t.name!r}")
        counts[t.name] = len(t.partitions)
    for name in wanted:
        if name not in counts:
            raise KafkaResponseError(3, what=f"metadata for topic {name!r}")
    return counts


async def list_offsets(client: KafkaClient, wanted: Mapping[TopicPartition, int], *,
                       isolation_level: int = 0) -> dict[TopicPartition, int]:
    """The offset for each (topic, partition): ``EARLIEST``, ``LATEST`` or a timestamp in ms (the first offset
    whose timestamp is at least it, or -1 when there is none). Requests go to each partition's leader."""
    by_leader: dict[int, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for (topic, partition), spec in wanted.items():
        if (topic, partition) not in client.leaders:
            await client.metadata([topic])
        leader = client.leaders.get((topic, partition))
        if leader is None:
            raise KafkaResponseError(3, what=f"list offsets of {topic}-{partition}")
        by_leader[leader][topic].append({"partition_index": partition, "timestamp": spec})
    out: dict[TopicPartition, int] = {}
    for leader, topics in by_leader.items():
        conn = await client.broker(leader)
        response = await conn.request("ListOffsets", {
            "replica_id": -1, "isolation_level": isolation_level,
            "topics": [{"name": t, "partitions": parts} for t, parts in topics.items()]})
        for t in response.topics:
            for p in t.partitions:
                check(p.error_code, f"list offsets of {t.name}-{p.partition_index}")
                out[(t.name, p.partition_index)] = p.offset
    return out
