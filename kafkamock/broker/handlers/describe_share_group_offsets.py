"""DescribeShareGroupOffsets (90): each share group's share-partition start offsets (Admin.listShareGroupOffsets), and
from v1 the lag (KIP-1226), as Kafka 4.3's GroupCoordinatorService reads them from the persister's state summary.
Topics null: every partition initialized for the group (``share/groups.py``); none for a group that does not exist
(no error). A share-partition's start offset is what the persister last received: -1 (and no lag) until its first
acknowledgement, release or expired lock, whose write carries the start offset from before it moved
(``share/manager.py`` ``summary``); the lag is the partition's end offset less that start offset less the records
past it whose delivery is complete. Named topics: those that exist in partition order, then those that do not, with
a zero topic id and start offset -1. Topics the principal may not describe are left out of "all", refused when
named.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.broker.share.groups import ShareGroup
from kafkamock.codec.messages import DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request


API_KEY = 90
ZERO_UUID = uuid.UUID(int=0)
_Response = DescribeShareGroupOffsetsResponse
_Group = DescribeShareGroupOffsetsResponse.DescribeShareGroupOffsetsResponseGroup
_Topic = DescribeShareGroupOffsetsResponse.DescribeShareGroupOffsetsResponseTopic
_Partition = DescribeShareGroupOffsetsResponse.DescribeShareGroupOffsetsResponsePartition


def _partition_entry(index: int, start: int = -1, epoch: int = 0, lag: int = -1, code: int = ErrorCode.NONE,
                     message: str | None = None
                     ) -> DescribeShareGroupOffsetsResponse.DescribeShareGroupOffsetsResponsePartition:
    return _Partition(partition_index=index, start_offset=start, leader_epoch=epoch, lag=lag, error_code=code,
                      error_message=message)


def _group(cluster: Cluster, request: Request[DescribeShareGroupOffsetsRequest],
           g: DescribeShareGroupOffsetsRequest.DescribeShareGroupOffsetsRequestGroup
           ) -> DescribeShareGroupOffsetsResponse.DescribeShareGroupOffsetsResponseGroup:
    answer = _Group(group_id=g.group_id, topics=[], error_code=ErrorCode.NONE, error_message=None)
    try:
        if not cluster.auth.authorize(request, AclOperation.DESCRIBE, ResourceType.GROUP, g.group_id):
            raise KafkaError(ErrorCode.GROUP_AUTHORIZATION_FAILED, None)
        cluster.groups.check_coordinator(request, g.group_id)
    except KafkaError as exc:
        answer.error_code, answer.error_message = exc.code, exc.message
        return answer
    metadata = cluster.metadata
    group = cluster.groups.groups.get(g.group_id)
    initialized = group.initialized if isinstance(group, ShareGroup) and not group.dead else {}
    if g.topics is None:
        requested = sorted((metadata.topics_by_id[t].name, sorted(ps)) for t, ps in initialized.items()
                           if t in metadata.topics_by_id)
    else:
        requested = [(t.topic_name, sorted(set(t.partitions))) for t in g.topics]
    describable = cluster.auth.authorized(request, AclOperation.DESCRIBE, ResourceType.TOPIC, [n for n, _ in requested])
    missing = []
    for name, indexes in requested:
        if name not in describable:
            if g.topics is not None:
                answer.topics.append(_Topic(topic_name=name, topic_id=ZERO_UUID, partitions=[
                    _partition_entry(i, code=ErrorCode.TOPIC_AUTHORIZATION_FAILED) for i in indexes]))
            continue
        topic = metadata.topics.get(name)
        if topic is None:
            missing.append(_Topic(topic_name=name, topic_id=ZERO_UUID,
                                  partitions=[_partition_entry(i) for i in indexes]))
            continue
        entry = _Topic(topic_name=name, topic_id=topic.topic_id, partitions=[])
        for index in indexes:
            if topic.partition_at(index) is None:
                entry.partitions.append(_partition_entry(index, code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                                         message="This server does not host this topic-partition."))
                continue
            start, epoch, lag = cluster.share.summary((g.group_id, topic.topic_id, index), topic.partitions[index])
            entry.partitions.append(_partition_entry(index, start, epoch, lag if request.version >= 1 else -1))
        answer.topics.append(entry)
    answer.topics += missing
    return answer


def handle(cluster: Cluster, request: Request[DescribeShareGroupOffsetsRequest]) -> DescribeShareGroupOffsetsResponse:
    return _Response(throttle_time_ms=0, groups=[_group(cluster, request, g) for g in request.body.groups])


def error_response(cluster: Cluster, request: Request[DescribeShareGroupOffsetsRequest], code: ErrorCode,
                   message: str | None = None) -> DescribeShareGroupOffsetsResponse:
    return _Response(throttle_time_ms=0, groups=[_Group(group_id=g.group_id, topics=[], error_code=code,
                                                        error_message=None) for g in request.body.groups])


HANDLER = ApiHandler(API_KEY, handle, error_response)
