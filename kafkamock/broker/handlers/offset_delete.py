"""OffsetDelete (47): remove some committed offsets of a group.

Refused for a whole non-empty group that does not run the consumer protocol (NON_EMPTY_GROUP), and per
partition of a topic its members still subscribe to (GROUP_SUBSCRIBED_TO_TOPIC); unknown groups are
GROUP_ID_NOT_FOUND; unknown topics and partitions UNKNOWN_TOPIC_OR_PARTITION without asking the group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import OffsetDeleteRequest, OffsetDeleteResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 47
Partition = OffsetDeleteResponse.OffsetDeleteResponsePartition


def handle(cluster: Cluster, request: Request[OffsetDeleteRequest]) -> OffsetDeleteResponse:
    body = request.body
    cluster.auth.require(request, AclOperation.DELETE, ResourceType.GROUP, body.group_id)
    readable = cluster.auth.authorized(request, AclOperation.READ, ResourceType.TOPIC, [t.name for t in body.topics])
    topics_now = cluster.metadata.topics
    known = [t for t in body.topics if t.name in topics_now and t.name in readable]
    try:
        cluster.groups.check_coordinator(request, body.group_id)
        results = cluster.groups.delete_offsets(
            body.group_id, [(t.name, [p.partition_index for p in t.partitions
                                      if topics_now[t.name].partition_at(p.partition_index) is not None])
                            for t in known])
    except KafkaError as exc:
        return error_response(cluster, request, exc.code)
    topics: dict[str, list[Partition]] = {}
    for t in body.topics:                    # unknown topics are answered without asking the group (KafkaApis)
        if t.name not in readable:
            topics[t.name] = [Partition(partition_index=p.partition_index,
                                        error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED) for p in t.partitions]
        elif t.name not in topics_now:
            topics[t.name] = [Partition(partition_index=p.partition_index,
                                        error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) for p in t.partitions]
        else:                                # a partition the topic does not have (KafkaApis checks each)
            topics[t.name] = [Partition(partition_index=p.partition_index,
                                        error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) for p in t.partitions
                              if topics_now[t.name].partition_at(p.partition_index) is None]
    for name, index, code in results:
        topics.setdefault(name, []).append(Partition(partition_index=index, error_code=code))
    return OffsetDeleteResponse(error_code=ErrorCode.NONE, throttle_time_ms=0, topics=[
        OffsetDeleteResponse.OffsetDeleteResponseTopic(name=name, partitions=parts) for name, parts in topics.items()])


def error_response(cluster: Cluster, request: Request[OffsetDeleteRequest], code: ErrorCode,
                   message: str | None = None) -> OffsetDeleteResponse:
    return OffsetDeleteResponse(error_code=code, throttle_time_ms=0, topics=[])


HANDLER = ApiHandler(API_KEY, handle, error_response)
