"""DescribeShareGroupOffsets (90): each share group's share-partition start offsets (Admin.listShareGroupOffsets), and
from v1 the lag (KIP-1226: offsets up to the read limit whose delivery is not complete).

Topics null: every share-partition the group has state for. A partition without state answers StartOffset -1; an
unknown topic UNKNOWN_TOPIC_OR_PARTITION on each partition. No share group by that id: GROUP_ID_NOT_FOUND.
"""

from __future__ import annotations

import uuid
from typing import Any

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError

API_KEY = 90
ZERO_UUID = uuid.UUID(int=0)


def _partition_entry(index: int, start: int = -1, epoch: int = -1, lag: int = -1, code=ErrorCode.NONE,
                     message=None) -> dict:
    return {"partition_index": index, "start_offset": start, "leader_epoch": epoch, "lag": lag, "error_code": code,
            "error_message": message}


def _group(broker, request, g) -> dict:
    answer = {"group_id": g.group_id, "topics": [], "error_code": ErrorCode.NONE, "error_message": None}
    try:
        if not broker.authorize(request, AclOperation.DESCRIBE, ResourceType.GROUP, g.group_id):
            raise KafkaError(ErrorCode.GROUP_AUTHORIZATION_FAILED, "Group authorization failed.")
        broker.groups.check_coordinator(request, g.group_id)
        group = broker.groups.groups.get(g.group_id)
        if group is None or group.kind != "share" or group.dead:
            raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {g.group_id} is not a share group.")
    except KafkaError as exc:
        answer.update(error_code=exc.code, error_message=exc.message)
        return answer
    share = broker.share
    cluster = broker.cluster
    if g.topics is None:
        wanted: dict[str, list[int]] = {}
        for (_, topic_id, index), _state in share.of_group(g.group_id):
            topic = cluster.topics_by_id.get(topic_id)
            if topic is not None:
                wanted.setdefault(topic.name, []).append(index)
        requested = sorted((name, sorted(ps)) for name, ps in wanted.items())
    else:
        requested = [(t.topic_name, list(t.partitions)) for t in g.topics]
    # Offsets only of topics the principal may describe: the others are left out of "all", refused when named.
    describable = broker.authorized(request, AclOperation.DESCRIBE, ResourceType.TOPIC, [n for n, _ in requested])
    for name, indexes in requested:
        if name not in describable:
            if g.topics is not None:
                answer["topics"].append({"topic_name": name, "topic_id": ZERO_UUID, "partitions": [
                    _partition_entry(i, code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, message="Topic authorization failed.")
                    for i in indexes]})
            continue
        topic = cluster.topics.get(name)
        entry: dict[str, Any] = {"topic_name": name, "topic_id": topic.topic_id if topic else ZERO_UUID,
                                 "partitions": []}
        for index in indexes:
            if topic is None or not 0 <= index < len(topic.partitions):
                entry["partitions"].append(_partition_entry(index, code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                                            message="This server does not host this topic-partition."))
                continue
            partition = topic.partitions[index]
            state = share.partitions.get((g.group_id, topic.topic_id, index))
            if state is None:
                entry["partitions"].append(_partition_entry(index))
            else:
                entry["partitions"].append(_partition_entry(index, state.start_offset, partition.leader_epoch,
                                                            share.lag(g.group_id, state, partition)))
        answer["topics"].append(entry)
    return answer


def handle(broker, request) -> dict:
    return {"throttle_time_ms": 0, "groups": [_group(broker, request, g) for g in request.body.groups]}


def error_response(broker, request, code) -> dict:
    return {"throttle_time_ms": 0, "groups": [{"group_id": g.group_id, "topics": [], "error_code": code,
                                               "error_message": None} for g in request.body.groups]}
