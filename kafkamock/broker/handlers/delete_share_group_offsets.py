"""DeleteShareGroupOffsets (92): forget an empty share group's state for whole topics
(Admin.deleteShareGroupOffsets), as Kafka 4.3: the topics are no longer initialized for the group, and a later
ShareFetch starts their share-partitions by ``share.auto.offset.reset``.

No share group: GROUP_ID_NOT_FOUND ("Group g not found."); members: NON_EMPTY_GROUP ("The group is not empty.").
Topics the principal may not read come first (TOPIC_AUTHORIZATION_FAILED), then the topics deleted, then the others:
a topic that does not exist, or has no state in the group ("There is no offset information to delete."), is
UNKNOWN_TOPIC_OR_PARTITION.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse
from kafkamock.errors import default_message

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 92
ZERO_UUID = uuid.UUID(int=0)
TopicResult = DeleteShareGroupOffsetsResponse.DeleteShareGroupOffsetsResponseTopic


def _top(code: int, message: str | None) -> DeleteShareGroupOffsetsResponse:
    return DeleteShareGroupOffsetsResponse(throttle_time_ms=0, error_code=code, error_message=message, responses=[])


def _topic(name: str, topic_id: uuid.UUID, code: int = ErrorCode.NONE, message: str | None = None) -> TopicResult:
    return TopicResult(topic_name=name, topic_id=topic_id, error_code=code, error_message=message)


def handle(cluster: Cluster, request: Request[DeleteShareGroupOffsetsRequest]) -> DeleteShareGroupOffsetsResponse:
    body = request.body
    cluster.auth.require(request, AclOperation.DELETE, ResourceType.GROUP, body.group_id)
    if not body.group_id:
        return _top(ErrorCode.INVALID_GROUP_ID, None)
    readable = cluster.auth.authorized(request, AclOperation.READ, ResourceType.TOPIC, [t.topic_name for t in body.topics])
    try:
        cluster.groups.check_coordinator(request, body.group_id)
        group = cluster.groups.share.group(body.group_id)
        if group.members:
            raise KafkaError(ErrorCode.NON_EMPTY_GROUP, "The group is not empty.")
    except KafkaError as exc:
        return _top(exc.code, exc.message)
    denied = [_topic(t.topic_name, ZERO_UUID, ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                     "Topic authorization failed.") for t in body.topics if t.topic_name not in readable]
    deleted: list[TopicResult] = []
    errors: list[TopicResult] = []
    partitions: dict[uuid.UUID, frozenset[int]] = {}
    for t in body.topics:
        if t.topic_name not in readable:
            continue
        topic = cluster.metadata.topics.get(t.topic_name)
        if topic is None:
            errors.append(_topic(t.topic_name, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                 "This server does not host this topic-partition."))
        elif topic.topic_id in group.initialized or topic.topic_id in group.deleting:
            # initialized: its partitions; still being deleted (an earlier delete cut short): all of them
            partitions[topic.topic_id] = group.initialized.get(topic.topic_id) or frozenset(
                range(len(topic.partitions)))
            deleted.append(_topic(t.topic_name, topic.topic_id))
        else:
            errors.append(_topic(t.topic_name, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                 "There is no offset information to delete."))
    # The topics' state is being deleted (a record), the share coordinator forgets it, and the deletion is complete
    # (another): Kafka's sharePartitionsEligibleForOffsetDeletion, the persister's deleteState and
    # completeDeleteShareGroupOffsets.
    cluster.groups.share.begin_deleting(body.group_id, partitions)
    for topic_id, indexes in partitions.items():
        for index in sorted(indexes):
            cluster.share.delete((body.group_id, topic_id, index))
    cluster.groups.share.finish_deleting(body.group_id, partitions)
    return DeleteShareGroupOffsetsResponse(throttle_time_ms=0, error_code=ErrorCode.NONE, error_message=None,
                                           responses=denied + deleted + errors)


def error_response(cluster: Cluster, request: Request[DeleteShareGroupOffsetsRequest], code: ErrorCode,
                   message: str | None = None) -> DeleteShareGroupOffsetsResponse:
    """Kafka's getErrorResponse: the error's own message unless a more specific one is given."""
    return _top(code, message if message is not None else default_message(code))


HANDLER = ApiHandler(API_KEY, handle, error_response)
