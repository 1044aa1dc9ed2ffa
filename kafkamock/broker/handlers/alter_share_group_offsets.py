"""AlterShareGroupOffsets (91): set the share-partition start offsets of a share group with no members
(Admin.alterShareGroupOffsets); each named share-partition starts over there, with nothing in flight, and is
initialized for the group (so members are assigned it), as Kafka 4.3's alterShareGroupOffsets.

Topics the principal may not read (TOPIC_AUTHORIZATION_FAILED) and topics that do not exist
(UNKNOWN_TOPIC_OR_PARTITION) are answered first, as KafkaApis does before asking the coordinator; then each named
topic's partitions, a partition the topic lacks UNKNOWN_TOPIC_OR_PARTITION. A group with members is NON_EMPTY_GROUP
("The group is not empty."), a group id of another kind GROUP_ID_NOT_FOUND. With no group yet an empty share group
is created, unless no named topic exists (then nothing is written, and no group appears).
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse
from kafkamock.errors import default_message

if TYPE_CHECKING:
    from kafkamock.broker.cluster import Topic
    from kafkamock.broker.core import Cluster, Request

API_KEY = 91
ZERO_UUID = uuid.UUID(int=0)
UNKNOWN = "This server does not host this topic-partition."
_Response = AlterShareGroupOffsetsResponse


def _top(code: int, message: str | None) -> AlterShareGroupOffsetsResponse:
    return _Response(throttle_time_ms=0, error_code=code, error_message=message, responses=[])


def handle(cluster: Cluster, request: Request[AlterShareGroupOffsetsRequest]) -> AlterShareGroupOffsetsResponse:
    body = request.body
    cluster.auth.require(request, AclOperation.READ, ResourceType.GROUP, body.group_id)
    readable = cluster.auth.authorized(request, AclOperation.READ, ResourceType.TOPIC, [t.topic_name for t in body.topics])
    first: list[AlterShareGroupOffsetsResponse.AlterShareGroupOffsetsResponseTopic] = []
    wanted: list[tuple[AlterShareGroupOffsetsRequest.AlterShareGroupOffsetsRequestTopic, Topic]] = []
    for t in body.topics:
        topic = cluster.metadata.topics.get(t.topic_name)
        if t.topic_name not in readable or topic is None:
            code, message = ((ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed.")
                             if t.topic_name not in readable else (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN))
            first.append(_Response.AlterShareGroupOffsetsResponseTopic(
                topic_name=t.topic_name, topic_id=topic.topic_id if topic else ZERO_UUID,
                partitions=[_Response.AlterShareGroupOffsetsResponsePartition(
                    partition_index=p.partition_index, error_code=code, error_message=message)
                    for p in t.partitions]))
        else:
            wanted.append((t, topic))
    share_groups = cluster.groups.share
    try:
        cluster.groups.check_coordinator(request, body.group_id)
        share_groups.empty_group(body.group_id, create=bool(wanted))
    except KafkaError as exc:
        if exc.code == ErrorCode.GROUP_ID_NOT_FOUND and not wanted:
            return _Response(throttle_time_ms=0, error_code=ErrorCode.NONE, error_message=None, responses=first)
        return _top(exc.code, "The group is not empty." if exc.code == ErrorCode.NON_EMPTY_GROUP else exc.message)
    # The named partitions are being initialized (a record, which makes the group when there is none), the share
    # coordinator starts them over, and then they are initialized: Kafka's alterShareGroupOffsets, the persister's
    # initializeState, and initializeShareGroupState.
    initializing: dict[uuid.UUID, frozenset[int]] = {}
    for t, topic in wanted:
        initializing[topic.topic_id] = initializing.get(topic.topic_id, frozenset()) | {
            p.partition_index for p in t.partitions if topic.partition_at(p.partition_index) is not None}
    share_groups.begin_initializing(body.group_id, initializing)
    responses = list(first)
    for t, topic in wanted:
        partitions = []
        for p in t.partitions:
            partition = topic.partition_at(p.partition_index)
            if partition is not None:
                cluster.share.reset(body.group_id, topic, partition, p.start_offset)
                partitions.append(_Response.AlterShareGroupOffsetsResponsePartition(
                    partition_index=p.partition_index, error_code=ErrorCode.NONE, error_message=None))
            else:
                partitions.append(_Response.AlterShareGroupOffsetsResponsePartition(
                    partition_index=p.partition_index, error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                    error_message=UNKNOWN))
        responses.append(_Response.AlterShareGroupOffsetsResponseTopic(
            topic_name=t.topic_name, topic_id=topic.topic_id, partitions=partitions))
    share_groups.finish_initializing(body.group_id, initializing)
    return _Response(throttle_time_ms=0, error_code=ErrorCode.NONE, error_message=None, responses=responses)


def error_response(cluster: Cluster, request: Request[AlterShareGroupOffsetsRequest], code: ErrorCode,
                   message: str | None = None) -> AlterShareGroupOffsetsResponse:
    """Kafka's getErrorResponse: the error's own message unless a more specific one is given."""
    return _top(code, message if message is not None else default_message(code))


HANDLER = ApiHandler(API_KEY, handle, error_response)
