"""OffsetFetch (9): a group's committed offsets, v1-v10 (``groups/coordinator.py``).

v8+ asks for several groups at once, each with its own error; v9+ may name a KIP-848 member and its epoch
(STALE_MEMBER_EPOCH when behind); v10 names topics by id. A group with no offset answers -1 for each partition
asked (or no topic when all were asked), never an error, as Kafka does. ``RequireStable`` (v7+) matters once
transactional commits are pending (UNSTABLE_OFFSET_COMMIT). A group needs DESCRIBE (else
GROUP_AUTHORIZATION_FAILED for it) and offsets are shown only for topics with DESCRIBE: a topic asked for is
TOPIC_AUTHORIZATION_FAILED on its partitions, and one not asked for is left out, as Kafka's handleOffsetFetchRequest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler, HandlerResult

if TYPE_CHECKING:
    from kafkamock.broker.core import Broker, Request
    from kafkamock.broker.groups.offsets import CommittedOffset
    from kafkamock.codec import messages

API_KEY = 9


def _partition(index: int, committed: CommittedOffset | None, code: ErrorCode = ErrorCode.NONE) -> dict[str, Any]:
    if committed is None:
        return {"partition_index": index, "committed_offset": -1, "committed_leader_epoch": -1, "metadata": "",
                "error_code": code}
    return {"partition_index": index, "committed_offset": committed.offset,
            "committed_leader_epoch": committed.leader_epoch, "metadata": committed.metadata, "error_code": code}


def _fetch_group(broker: Broker, request: Request, group_id: str,
                 topics: list[messages.OffsetFetchRequest.OffsetFetchRequestTopics] | None, member_id: str | None,
                 member_epoch: int, by_id: bool, require_stable: bool = False
                 ) -> tuple[ErrorCode, list[dict[str, Any]]]:
    """(error, [topic answer]) for one group. Before v8 ``topics`` are the request's OffsetFetchRequestTopic,
    the same without the topic id that only v10 (``by_id``) reads."""
    if not broker.auth.authorize(request, AclOperation.DESCRIBE, ResourceType.GROUP, group_id):
        return ErrorCode.GROUP_AUTHORIZATION_FAILED, []
    cluster = broker.cluster
    denied: list[dict[str, Any]] = []
    asked: list[tuple[str, list[int]]] | None = None
    unknown: list[dict[str, Any]] = []
    names_to_keys: dict[str, dict[str, Any]] = {}
    if topics is not None:
        asked = []
        for t in topics:
            if by_id:
                topic = cluster.topics_by_id.get(t.topic_id)
                if topic is None:
                    unknown.append({"topic_id": t.topic_id, "partitions": [
                        _partition(p, None, ErrorCode.UNKNOWN_TOPIC_ID) for p in t.partition_indexes]})
                    continue
                names_to_keys[topic.name] = {"topic_id": t.topic_id}
                asked.append((topic.name, list(t.partition_indexes)))
            else:
                names_to_keys[t.name] = {"name": t.name}
                asked.append((t.name, list(t.partition_indexes)))
        describable = broker.auth.authorized(request, AclOperation.DESCRIBE, ResourceType.TOPIC, names_to_keys)
        denied = [{**names_to_keys[name], "partitions": [_partition(p, None, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                                                         for p in indexes]}
                  for name, indexes in asked if name not in describable]
        asked = [(name, indexes) for name, indexes in asked if name in describable]
    try:
        broker.groups.check_coordinator(request, group_id)
        found = broker.groups.fetch_offsets(group_id, asked, member_id, member_epoch)
    except KafkaError as exc:
        return exc.code, []
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for name, index, committed in found:
        if require_stable and broker.groups.has_pending_offset(group_id, name, index):
            by_topic.setdefault(name, []).append(_partition(index, None, ErrorCode.UNSTABLE_OFFSET_COMMIT))
            continue
        by_topic.setdefault(name, []).append(_partition(index, committed))
    answers: list[dict[str, Any]] = []
    if topics is None:       # all of the group's topics: the ones the principal may not describe are left out
        describable = broker.auth.authorized(request, AclOperation.DESCRIBE, ResourceType.TOPIC, by_topic)
        by_topic = {name: parts for name, parts in by_topic.items() if name in describable}
    for name, partitions in by_topic.items():
        key = names_to_keys.get(name)
        if key is None:
            if by_id:
                topic = cluster.topics.get(name)
                if topic is None:
                    continue              # the topic is gone: v10 cannot name it
                key = {"topic_id": topic.topic_id}
            else:
                key = {"name": name}
        answers.append({**key, "partitions": partitions})
    return ErrorCode.NONE, answers + denied + unknown


def handle(broker: Broker, request: Request) -> HandlerResult:
    body, version = request.body, request.version
    if version >= 8:
        groups = []
        for g in body.groups:
            code, topics = _fetch_group(broker, request, g.group_id, g.topics, g.member_id if version >= 9 else None,
                                        g.member_epoch if version >= 9 else -1, version >= 10, body.require_stable)
            groups.append({"group_id": g.group_id, "topics": topics, "error_code": code})
        return {"throttle_time_ms": 0, "groups": groups}
    code, topics = _fetch_group(broker, request, body.group_id, body.topics, None, -1, False,
                                version >= 7 and body.require_stable)
    if version < 2 and code:
        topics = [{"name": t.name, "partitions": [_partition(p, None, code) for p in t.partition_indexes]}
                  for t in body.topics or []]
        code = ErrorCode.NONE
    return {"throttle_time_ms": 0, "topics": topics, "error_code": code}


def error_response(broker: Broker, request: Request, code: ErrorCode, message: str | None = None) -> dict[str, Any]:
    body, version = request.body, request.version
    if version >= 8:
        return {"throttle_time_ms": 0, "groups": [{"group_id": g.group_id, "topics": [], "error_code": code}
                                                  for g in body.groups]}
    if version < 2:
        return {"throttle_time_ms": 0, "topics": [
            {"name": t.name, "partitions": [_partition(p, None, code) for p in t.partition_indexes]}
            for t in body.topics or []]}
    return {"throttle_time_ms": 0, "topics": [], "error_code": code}


HANDLER = ApiHandler(API_KEY, handle, error_response)
