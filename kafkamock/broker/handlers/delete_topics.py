"""DeleteTopics (20): delete topics by name (v1-5) or by name or topic id (v6), as Kafka's controller does it.

Kafka's rules (ControllerApis.deleteTopics): with ``delete.topic.enable=false`` every topic fails with
TOPIC_DELETION_DISABLED (INVALID_REQUEST before v3); a v6 entry must name the topic or its id, not both and not
neither (INVALID_REQUEST); a name or id given twice is INVALID_REQUEST ("Duplicate topic name." / "Duplicate
topic id."), once per duplicate; an unknown name is UNKNOWN_TOPIC_OR_PARTITION and an unknown id UNKNOWN_TOPIC_ID,
with no error message, as Kafka sends them. A deleted topic is answered with its name and id.
"""

from __future__ import annotations

import uuid
from collections import Counter
from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import DeleteTopicsRequest, DeleteTopicsResponse
from kafkamock.errors import default_message

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 20
ZERO_UUID = uuid.UUID(int=0)
Result = DeleteTopicsResponse.DeletableTopicResult


def _result(name: str | None, topic_id: uuid.UUID, code: ErrorCode, message: str | None = None) -> Result:
    if message is None and code in (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_ID):
        message = default_message(code)       # Kafka's controller answers with the exception's default message
    return Result(name=name, topic_id=topic_id, error_code=code, error_message=message)


def _wanted(request: Request[DeleteTopicsRequest]) -> list[tuple[str | None, uuid.UUID]]:
    """The topics asked for, as (name, id): v6+ names a topic or gives its id, earlier versions name it."""
    body = request.body
    if request.version >= 6:
        return [(t.name, t.topic_id) for t in body.topics]
    return [(name, ZERO_UUID) for name in body.topic_names]


def handle(cluster: Cluster, request: Request[DeleteTopicsRequest]) -> DeleteTopicsResponse:
    version = request.version
    wanted = _wanted(request)
    if not cluster.node_config(request)["delete.topic.enable"]:
        # Kafka fails the whole request; its error response repeats each entry as given, without a message.
        code = ErrorCode.INVALID_REQUEST if version < 3 else ErrorCode.TOPIC_DELETION_DISABLED
        return DeleteTopicsResponse(throttle_time_ms=0, responses=[_result(name, tid, code) for name, tid in wanted])

    results: list[Result] = []
    names = Counter(name for name, tid in wanted if name is not None and tid == ZERO_UUID)
    ids = Counter(tid for name, tid in wanted if name is None and tid != ZERO_UUID)
    for name, tid in wanted:
        if name is None and tid == ZERO_UUID:
            results.append(_result(None, ZERO_UUID, ErrorCode.INVALID_REQUEST,
                                   "Neither topic name nor id were specified."))
        elif name is not None and tid != ZERO_UUID:
            results.append(_result(name, tid, ErrorCode.INVALID_REQUEST,
                                   "You may not specify both topic name and topic id."))
    results += [_result(name, ZERO_UUID, ErrorCode.INVALID_REQUEST, "Duplicate topic name.")
                for name, n in names.items() if n > 1]
    results += [_result(None, tid, ErrorCode.INVALID_REQUEST, "Duplicate topic id.")
                for tid, n in ids.items() if n > 1]

    # Authorization (ControllerApis.deleteTopics): DELETE on the cluster, else DELETE on each topic; a topic the
    # principal may not even DESCRIBE is refused without a word on whether it exists (nor its name, asked by id).
    known = [cluster.metadata.topics_by_id[tid].name for tid in ids if tid in cluster.metadata.topics_by_id]
    if cluster.auth.authorize(request, AclOperation.DELETE, ResourceType.CLUSTER):
        describable = deletable = set(names) | set(known)
    else:
        describable = cluster.auth.authorized(request, AclOperation.DESCRIBE, ResourceType.TOPIC, [*names, *known])
        deletable = cluster.auth.authorized(request, AclOperation.DELETE, ResourceType.TOPIC, [*names, *known])
    denied = ErrorCode.TOPIC_AUTHORIZATION_FAILED

    # Ids first, then names (a name that resolves to an id already given is refused, and so is that id).
    to_delete: dict[uuid.UUID, str] = {}
    for tid, n in ids.items():
        if n > 1:
            continue
        topic = cluster.metadata.topics_by_id.get(tid)
        if topic is None:
            results.append(_result(None, tid, ErrorCode.UNKNOWN_TOPIC_ID))
        elif topic.name not in deletable:
            results.append(_result(topic.name if topic.name in describable else None, tid, denied))
        else:
            to_delete[tid] = topic.name
    refused: set[uuid.UUID] = set()
    for name, n in names.items():
        if n > 1:
            continue
        topic = cluster.metadata.topics.get(name)
        if name not in describable:
            results.append(_result(name, ZERO_UUID, denied))
        elif topic is None:
            results.append(_result(name, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
        elif name not in deletable:
            results.append(_result(name, ZERO_UUID, denied))
        elif topic.topic_id in to_delete or topic.topic_id in refused or ids.get(topic.topic_id, 0) > 1:
            to_delete.pop(topic.topic_id, None)
            refused.add(topic.topic_id)
            results.append(_result(name, topic.topic_id, ErrorCode.INVALID_REQUEST,
                                   "The provided topic name maps to an ID that was already supplied."))
        else:
            to_delete[topic.topic_id] = name

    for tid, name in to_delete.items():
        cluster.delete_topic(cluster.metadata.topics_by_id[tid])
        results.append(_result(name, tid, ErrorCode.NONE))
    return DeleteTopicsResponse(throttle_time_ms=0, responses=results)


def error_response(cluster: Cluster, request: Request[DeleteTopicsRequest], code: ErrorCode, message: str | None = None
                   ) -> DeleteTopicsResponse:
    return DeleteTopicsResponse(throttle_time_ms=0, responses=[_result(name, tid, code)
                                                               for name, tid in _wanted(request)])


HANDLER = ApiHandler(API_KEY, handle, error_response)
