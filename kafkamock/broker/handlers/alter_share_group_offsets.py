"""AlterShareGroupOffsets (91): set the share-partition start offsets of a share group with no members
(Admin.alterShareGroupOffsets); each named share-partition starts over there, with nothing in flight.

A group with members is NON_EMPTY_GROUP; a group id of another kind GROUP_ID_NOT_FOUND; no group yet: an empty
share group is created, as Kafka does, so the offsets apply when members come. A negative offset is INVALID_REQUEST
for its partition, an unknown topic or partition UNKNOWN_TOPIC_OR_PARTITION.
"""

from __future__ import annotations

import uuid

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.errors import default_message

API_KEY = 91
ZERO_UUID = uuid.UUID(int=0)


def _top(code, message) -> dict:
    return {"throttle_time_ms": 0, "error_code": code, "error_message": message, "responses": []}


def handle(broker, request) -> dict:
    body = request.body
    broker.require(request, AclOperation.READ, ResourceType.GROUP, body.group_id)
    readable = broker.authorized(request, AclOperation.READ, ResourceType.TOPIC, [t.topic_name for t in body.topics])
    try:
        broker.groups.check_coordinator(request, body.group_id)
        broker.groups.share.empty_group(body.group_id)
    except KafkaError as exc:
        return _top(exc.code, exc.message)
    responses = []
    for t in body.topics:
        topic = broker.cluster.topics.get(t.topic_name)
        partitions = []
        for p in t.partitions:
            code, message = ErrorCode.NONE, None
            if t.topic_name not in readable:
                code, message = ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed."
            elif topic is None or not 0 <= p.partition_index < len(topic.partitions):
                code, message = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "The topic-partition does not exist."
            elif p.start_offset < 0:
                code, message = ErrorCode.INVALID_REQUEST, f"Start offset {p.start_offset} is negative."
            else:
                broker.share.reset(body.group_id, topic, topic.partitions[p.partition_index], p.start_offset)
            partitions.append({"partition_index": p.partition_index, "error_code": code, "error_message": message})
        responses.append({"topic_name": t.topic_name, "topic_id": topic.topic_id if topic else ZERO_UUID,
                          "partitions": partitions})
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "error_message": None, "responses": responses}


def error_response(broker, request, code, message: str | None = None) -> dict:
    """Kafka's getErrorResponse: the error's own message unless a more specific one is given."""
    return _top(code, message if message is not None else default_message(code))
