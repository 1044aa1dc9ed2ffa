"""DeleteShareGroupOffsets (92): forget an empty share group's state for whole topics
(Admin.deleteShareGroupOffsets); a later ShareFetch starts those share-partitions by ``share.auto.offset.reset``.

No share group: GROUP_ID_NOT_FOUND; members: NON_EMPTY_GROUP; an unknown topic: UNKNOWN_TOPIC_OR_PARTITION.
"""

from __future__ import annotations

import uuid

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.errors import default_message

API_KEY = 92
ZERO_UUID = uuid.UUID(int=0)


def _top(code, message) -> dict:
    return {"throttle_time_ms": 0, "error_code": code, "error_message": message, "responses": []}


def handle(broker, request) -> dict:
    body = request.body
    broker.require(request, AclOperation.DELETE, ResourceType.GROUP, body.group_id)
    readable = broker.authorized(request, AclOperation.READ, ResourceType.TOPIC, [t.topic_name for t in body.topics])
    try:
        broker.groups.check_coordinator(request, body.group_id)
        broker.groups.share.empty_group(body.group_id, create=False)
    except KafkaError as exc:
        return _top(exc.code, exc.message)
    responses = []
    for t in body.topics:
        topic = broker.cluster.topics.get(t.topic_name)
        if t.topic_name not in readable:
            responses.append({"topic_name": t.topic_name, "topic_id": ZERO_UUID,
                              "error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                              "error_message": "Topic authorization failed."})
            continue
        if topic is None:
            responses.append({"topic_name": t.topic_name, "topic_id": ZERO_UUID,
                              "error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                              "error_message": "The topic does not exist."})
            continue
        for index in range(len(topic.partitions)):
            broker.share.delete((body.group_id, topic.topic_id, index))
        responses.append({"topic_name": t.topic_name, "topic_id": topic.topic_id, "error_code": ErrorCode.NONE,
                          "error_message": None})
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "error_message": None, "responses": responses}


def error_response(broker, request, code, message: str | None = None) -> dict:
    """Kafka's getErrorResponse: the error's own message unless a more specific one is given."""
    return _top(code, message if message is not None else default_message(code))
