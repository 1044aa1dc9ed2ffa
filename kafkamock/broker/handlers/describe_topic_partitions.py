"""DescribeTopicPartitions (75): topics and their partitions, paged by a cursor (KIP-966; what the Java admin
client's ``describeTopics`` uses).

As Kafka's DescribeTopicPartitionsRequestHandler and KRaftMetadataCache.getTopicMetadataForDescribeTopicResponse:

- an empty ``topics`` list means every topic (internal ones included); otherwise the named topics. Either way
  only names at or after the cursor's topic count, and they are answered sorted by name, each once;
- a page holds at most ``min(response_partition_limit, max.request.partition.size.limit)`` partitions (at least
  1). The cursor's topic starts at the cursor's partition, the others at 0. When a topic does not fit,
  ``next_cursor`` names it and the first partition left out; when the page is full before a topic starts,
  ``next_cursor`` points at that topic's partition 0;
- a named topic that does not exist is UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION for an illegal name);
  missing topics are skipped when listing all;
- a cursor whose topic is not among the named topics, or whose partition is negative, fails the request:
  INVALID_REQUEST for every named topic;
- partitions carry leader, leader epoch, replicas, ISR, offline replicas, and empty eligible-leader-replica lists
  (Kafka sends empty lists, not null, when ELR is off, and the Java admin client reads them without a null check);
  ``topic_authorized_operations`` is the principal's bit field (every topic operation with no authorizer); a
  topic without DESCRIBE is left out of a listing and TOPIC_AUTHORIZATION_FAILED when named.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.cluster import INTERNAL_TOPICS, Topic, validate_topic_name
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 75
ZERO_UUID = uuid.UUID(int=0)
ResponseTopic = DescribeTopicPartitionsResponse.DescribeTopicPartitionsResponseTopic
ResponsePartition = DescribeTopicPartitionsResponse.DescribeTopicPartitionsResponsePartition


def _partitions(cluster: Cluster, topic: Topic, start: int, limit: int) -> tuple[list[ResponsePartition], int]:
    """The partitions of one page from ``start``, and the partition the next page starts at (-1: none left)."""
    alive = {n.node_id for n in cluster.metadata.live_nodes()}
    upper = min(len(topic.partitions), start + limit)
    out = []
    for p in topic.partitions[start:upper]:
        out.append(ResponsePartition(
            error_code=ErrorCode.NONE, partition_index=p.index,
            leader_id=p.leader_id if p.leader_id in alive else -1, leader_epoch=p.leader_epoch,
            replica_nodes=list(p.replicas), isr_nodes=[r for r in p.isr if r in alive],
            eligible_leader_replicas=[], last_known_elr=[],
            offline_replicas=[r for r in p.replicas if r not in alive],
        ))
    return out, upper if upper < len(topic.partitions) else -1


def _missing(name: str, operations: int) -> ResponseTopic:
    try:
        validate_topic_name(name)
        code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    except KafkaError as exc:
        code = exc.code
    return ResponseTopic(error_code=code, name=name, topic_id=ZERO_UUID, is_internal=name in INTERNAL_TOPICS,
                         partitions=[], topic_authorized_operations=operations)


def handle(cluster: Cluster, request: Request[DescribeTopicPartitionsRequest]) -> DescribeTopicPartitionsResponse:
    body = request.body
    cursor = body.cursor
    cursor_topic = cursor.topic_name if cursor is not None else ""
    all_topics = not body.topics
    names = cluster.metadata.topics.keys() if all_topics else [t.name for t in body.topics]
    selected = sorted({name for name in names if name >= cursor_topic})
    describable = cluster.auth.authorized(request, AclOperation.DESCRIBE, ResourceType.TOPIC, selected)
    try:
        if cursor is not None and not all_topics and cursor.topic_name not in selected:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "DescribeTopicPartitionsRequest topic list should contain "
                                                        f"the cursor topic: {cursor.topic_name}")
        if cursor is not None and cursor.partition_index < 0:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "DescribeTopicPartitionsRequest cursor partition must be "
                                                        "valid")
    except KafkaError as exc:
        return error_response(cluster, request, exc.code)

    remaining = max(min(cluster.node_config(request)["max.request.partition.size.limit"],
                        body.response_partition_limit), 1)
    topics: list[ResponseTopic] = []
    next_cursor = None
    # Topics the principal may not describe: left out of a listing, TOPIC_AUTHORIZATION_FAILED when named.
    denied = [ResponseTopic(error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, name=name, topic_id=ZERO_UUID,
                            is_internal=False, partitions=[])
              for name in selected if name not in describable and not all_topics]
    for name in selected:
        if name not in describable:
            continue
        if remaining == 0:
            next_cursor = DescribeTopicPartitionsResponse.Cursor(topic_name=name, partition_index=0)
            break
        topic = cluster.metadata.topics.get(name)
        if topic is None:
            if not all_topics:
                topics.append(_missing(name, cluster.auth.authorized_operations(request, ResourceType.TOPIC, name)))
            continue
        start = cursor.partition_index if cursor is not None and name == cursor_topic else 0
        partitions, next_partition = _partitions(cluster, topic, start, remaining)
        topics.append(ResponseTopic(error_code=ErrorCode.NONE, name=name, topic_id=topic.topic_id,
                                    is_internal=topic.internal or name in INTERNAL_TOPICS, partitions=partitions,
                                    topic_authorized_operations=cluster.auth.authorized_operations(
                                        request, ResourceType.TOPIC, name)))
        if next_partition != -1:
            next_cursor = DescribeTopicPartitionsResponse.Cursor(topic_name=name, partition_index=next_partition)
            break
        remaining -= len(partitions)
    return DescribeTopicPartitionsResponse(throttle_time_ms=0, topics=topics + denied, next_cursor=next_cursor)


def error_response(cluster: Cluster, request: Request[DescribeTopicPartitionsRequest], code: ErrorCode,
                   message: str | None = None) -> DescribeTopicPartitionsResponse:
    return DescribeTopicPartitionsResponse(throttle_time_ms=0, next_cursor=None, topics=[
        ResponseTopic(error_code=code, name=t.name, is_internal=False, partitions=[]) for t in request.body.topics])


HANDLER = ApiHandler(API_KEY, handle, error_response)
