"""OffsetCommit (8): store a group's committed offsets (``groups/coordinator.py``), v2-v10.

Unknown or unreadable topics and partitions are answered first, as KafkaApis does, without asking the group;
the group then checks who commits (a member of the current generation, a KIP-848 member at its epoch, or nobody
for a standalone or admin commit into an empty group), failing every partition it was asked about when it
refuses (the unknown ones keep their own error); metadata over
``offset.metadata.max.bytes`` is refused per partition. v2-v4's RetentionTimeMs, when not -1, gives the offsets their own
expire timestamp (KIP-211); v10 names topics by id.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.broker.java_long import java_long
from kafkamock.codec.messages import OffsetCommitRequest, OffsetCommitResponse

if TYPE_CHECKING:
    import uuid

    from kafkamock.broker.cluster import Topic
    from kafkamock.broker.core import Cluster, Request
    from kafkamock.broker.groups.coordinator import OffsetEntry

    TopicKey = tuple[uuid.UUID] | tuple[str]         # a topic of the request: by id (v10+) or by name

API_KEY = 8
DEFAULT_RETENTION = -1
RequestTopic = OffsetCommitRequest.OffsetCommitRequestTopic
RequestPartition = OffsetCommitRequest.OffsetCommitRequestPartition
TopicResult = OffsetCommitResponse.OffsetCommitResponseTopic
PartitionResult = OffsetCommitResponse.OffsetCommitResponsePartition


def _topic_result(t: RequestTopic, version: int, partitions: list[PartitionResult]) -> TopicResult:
    """A topic of the answer, named as the request named it: by id (v10+) or by name."""
    if version >= 10:
        return TopicResult(topic_id=t.topic_id, partitions=partitions)
    return TopicResult(name=t.name, partitions=partitions)


def _all_failed(body: OffsetCommitRequest, version: int, code: ErrorCode) -> OffsetCommitResponse:
    return OffsetCommitResponse(throttle_time_ms=0, topics=[
        _topic_result(t, version, _failed(t.partitions, code)) for t in body.topics])


def handle(cluster: Cluster, request: Request[OffsetCommitRequest]) -> OffsetCommitResponse:
    """As KafkaApis.handleOffsetCommitRequest: topics and partitions the cluster does not have (or the principal
    may not read) are answered first, without the group; only when some remain does the group check who
    commits, and an error there (or a partition refused by KIP-1251's check) fails every partition asked."""
    body, version = request.body, request.version
    groups = cluster.groups
    instance_id = body.group_instance_id if version >= 7 else None
    cluster.auth.require(request, AclOperation.READ, ResourceType.GROUP, body.group_id)
    metadata = cluster.metadata
    resolved = [metadata.topics_by_id.get(t.topic_id) if version >= 10 else metadata.topics.get(t.name)
                for t in body.topics]
    readable = cluster.auth.authorized(request, AclOperation.READ, ResourceType.TOPIC,
                                 [topic.name if version >= 10 and topic is not None else t.name
                                  for t, topic in zip(body.topics, resolved, strict=True)
                                  if topic is not None or version < 10])
    answered: dict[TopicKey, list[PartitionResult]] = {}  # the answer's topics, in the order Kafka's builder adds them
    keys: dict[TopicKey, RequestTopic] = {}                  # each topic as the request names it
    valid: list[tuple[TopicKey, Topic, list[RequestPartition]]] = []
    for t, topic in zip(body.topics, resolved, strict=True):
        key: TopicKey = (t.topic_id,) if version >= 10 else (t.name,)
        keys[key] = t
        name = topic.name if topic is not None else t.name
        if version >= 10 and topic is None:
            answered.setdefault(key, []).extend(_failed(t.partitions, ErrorCode.UNKNOWN_TOPIC_ID))
        elif name not in readable:
            answered.setdefault(key, []).extend(_failed(t.partitions, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
        elif topic is None:
            answered.setdefault(key, []).extend(_failed(t.partitions, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
        else:
            ok = []
            for p in t.partitions:
                if topic.partition_at(p.partition_index) is not None:
                    ok.append(p)
                else:
                    answered.setdefault(key, []).append(PartitionResult(
                        partition_index=p.partition_index, error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
            if ok:
                valid.append((key, topic, ok))
    if valid:
        try:
            groups.check_coordinator(request, body.group_id)
            check = groups.validate_commit(body.group_id, body.generation_id_or_member_epoch, body.member_id,
                                           instance_id, version)
            max_metadata = cluster.config["offset.metadata.max.bytes"]
            entries: list[OffsetEntry] = []
            results: list[tuple[TopicKey, int, ErrorCode]] = []
            for key, topic, partitions in valid:
                for p in partitions:
                    if p.committed_metadata is not None and len(p.committed_metadata) > max_metadata:
                        results.append((key, p.partition_index, ErrorCode.OFFSET_METADATA_TOO_LARGE))
                        continue
                    refused = check(topic.name, topic.topic_id, p.partition_index) if check is not None else None
                    if refused:          # KIP-1251: Kafka's validator throws, failing the whole request
                        raise KafkaError(*refused)
                    entries.append((topic.name, p.partition_index, p.committed_offset,
                                    p.committed_leader_epoch if version >= 6 else -1, p.committed_metadata))
                    results.append((key, p.partition_index, ErrorCode.NONE))
        except KafkaError as exc:                # the group refuses: every partition it was asked about
            for key, _, partitions in valid:
                answered.setdefault(key, []).extend(_failed(partitions, exc.code))
            return _answer(keys, answered, version)
        retention = body.retention_time_ms if 2 <= version <= 4 else DEFAULT_RETENTION
        # OffsetMetadataManager's expireTimestampMs: currentTimeMs + retentionTimeMs, a Java long (an extreme
        # retention wraps into the past, and the offset goes at the next cleanup)
        expire = java_long(cluster.now_ms() + retention) if retention != DEFAULT_RETENTION else None
        groups.commit(body.group_id, entries, expire)
        for key, index, code in results:
            answered.setdefault(key, []).append(PartitionResult(partition_index=index, error_code=code))
    return _answer(keys, answered, version)


def _answer(keys: dict[TopicKey, RequestTopic], answered: dict[TopicKey, list[PartitionResult]], version: int
            ) -> OffsetCommitResponse:
    return OffsetCommitResponse(throttle_time_ms=0, topics=[_topic_result(keys[key], version, parts)
                                                            for key, parts in answered.items()])


def _failed(partitions: Iterable[RequestPartition], code: ErrorCode) -> list[PartitionResult]:
    return [PartitionResult(partition_index=p.partition_index, error_code=code) for p in partitions]


def error_response(cluster: Cluster, request: Request[OffsetCommitRequest], code: ErrorCode, message: str | None = None
                   ) -> OffsetCommitResponse:
    return _all_failed(request.body, request.version, code)


HANDLER = ApiHandler(API_KEY, handle, error_response)
