"""Committed offsets of a consumer group: OffsetCommit and OffsetFetch sent to the group's coordinator, with the
retries Kafka's consumer makes (coordinator moved or loading) and the errors it surfaces (a commit from a member the
group no longer knows fails with CommitFailedError)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

import trio

from kafkamock.client.cluster import COORDINATOR_MOVED, GROUP, KafkaClient
from kafkamock.client.errors import CommitFailedError, KafkaError
from kafkamock.client.types import OffsetAndMetadata, TopicPartition
from kafkamock.errors import ErrorCode

COMMIT_FAILED = frozenset({ErrorCode.ILLEGAL_GENERATION, ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.STALE_MEMBER_EPOCH,
                           ErrorCode.REBALANCE_IN_PROGRESS, ErrorCode.FENCED_MEMBER_EPOCH})
RETRY = COORDINATOR_MOVED | {ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.REQUEST_TIMED_OUT,
                             ErrorCode.UNSTABLE_OFFSET_COMMIT}


async def commit_offsets(client: KafkaClient, group_id: str, offsets: Mapping[TopicPartition, OffsetAndMetadata], *,
                         generation: int = -1, member_id: str = "", instance_id: str | None = None,
                         timeout_s: float = 60.0) -> None:
    """OffsetCommit of ``offsets``; raises CommitFailedError when the group rejects the member's generation or
    epoch, KafkaError for any other error (the first one met)."""
    if not offsets:
        return
    deadline = trio.current_time() + timeout_s
    while True:
        conn = await client.coordinator(group_id, GROUP)
        version = conn.version_for("OffsetCommit")
        if version >= 10 and any(tp.topic not in client.topic_ids for tp in offsets):
            await client.metadata(list({tp.topic for tp in offsets}))
        by_topic: dict[str, list[dict]] = defaultdict(list)
        for tp, om in offsets.items():
            by_topic[tp.topic].append({"partition_index": tp.partition, "committed_offset": om.offset,
                                       "committed_leader_epoch": om.leader_epoch, "committed_metadata": om.metadata})
        response = await conn.request("OffsetCommit", {
            "group_id": group_id, "generation_id_or_member_epoch": generation, "member_id": member_id,
            "group_instance_id": instance_id, "retention_time_ms": -1,
            "topics": [{"name": t, "topic_id": client.topic_ids.get(t), "partitions": parts}
                       for t, parts in by_topic.items()]})
        names = client.topic_names
        errors = [(t.name or names.get(t.topic_id, "?"), p.partition_index, p.error_code)
                  for t in response.topics for p in t.partitions if p.error_code]
        if not errors:
            return
        topic, partition, code = errors[0]
        what = f"commit offsets of group {group_id!r} ({topic}-{partition})"
        if code in COMMIT_FAILED:
            raise CommitFailedError(code, "the group rebalanced: the partitions may belong to another member",
                                    what=what)
        if code in RETRY and trio.current_time() < deadline:
            if code in COORDINATOR_MOVED:
                client.forget_coordinator(group_id, GROUP)
            await trio.sleep(client.retry_backoff_s)
            continue
        raise KafkaError(code, what=what)


async def fetch_committed(client: KafkaClient, group_id: str, partitions: Iterable[TopicPartition], *,
                          require_stable: bool = False, member_id: str | None = None, member_epoch: int = -1,
                          timeout_s: float = 60.0) -> dict[TopicPartition, OffsetAndMetadata | None]:
    """The group's committed offsets of ``partitions`` (None: nothing committed). ``require_stable`` (what a
    read_committed consumer asks) waits out offsets a pending transaction will commit."""
    wanted = list(dict.fromkeys(partitions))
    if not wanted:
        return {}
    deadline = trio.current_time() + timeout_s
    while True:
        conn = await client.coordinator(group_id, GROUP)
        version = conn.version_for("OffsetFetch")
        if version >= 10 and any(tp.topic not in client.topic_ids for tp in wanted):
            await client.metadata(list({tp.topic for tp in wanted}))
        by_topic: dict[str, list[int]] = defaultdict(list)
        for tp in wanted:
            by_topic[tp.topic].append(tp.partition)
        if version >= 8:
            body = {"groups": [{"group_id": group_id, "member_id": member_id, "member_epoch": member_epoch,
                                "topics": [{"name": t, "topic_id": client.topic_ids.get(t), "partition_indexes": ps}
                                           for t, ps in by_topic.items()]}], "require_stable": require_stable}
        else:
            body = {"group_id": group_id, "require_stable": require_stable,
                    "topics": [{"name": t, "partition_indexes": ps} for t, ps in by_topic.items()]}
        response = await conn.request("OffsetFetch", body)
        group = response.groups[0] if version >= 8 else response
        code = group.error_code
        names = client.topic_names
        out: dict[TopicPartition, OffsetAndMetadata | None] = {}
        for t in group.topics:
            name = t.name or names.get(t.topic_id, "?")
            for p in t.partitions:
                code = code or p.error_code
                out[TopicPartition(name, p.partition_index)] = (
                    None if p.committed_offset < 0 else
                    OffsetAndMetadata(p.committed_offset, p.metadata or "", p.committed_leader_epoch))
        if not code:
            return {tp: out.get(tp) for tp in wanted}
        if code in RETRY and trio.current_time() < deadline:
            if code in COORDINATOR_MOVED:
                client.forget_coordinator(group_id, GROUP)
            await trio.sleep(client.retry_backoff_s)
            continue
        raise KafkaError(code, what=f"fetch committed offsets of group {group_id!r}")
