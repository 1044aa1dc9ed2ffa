"""OffsetCommit (8): store a group's committed offsets (``groups/coordinator.py``), v2-v10.

The group checks who commits (a member of the current generation, a KIP-848 member at its epoch, or nobody for
a standalone or admin commit into an empty group); each partition then gets its own error (unknown topic,
metadata over ``offset.metadata.max.bytes``). v2-v4's RetentionTimeMs, when not -1, gives the offsets their own
expire timestamp (KIP-211); v10 names topics by id.
"""

from __future__ import annotations

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError

API_KEY = 8
DEFAULT_RETENTION = -1


def _topic_key(t, version: int) -> dict:
    return {"topic_id": t.topic_id} if version >= 10 else {"name": t.name}


def _all_failed(body, version: int, code: ErrorCode) -> dict:
    return {"throttle_time_ms": 0, "topics": [
        {**_topic_key(t, version), "partitions": [{"partition_index": p.partition_index, "error_code": code}
                                                  for p in t.partitions]} for t in body.topics]}


def handle(broker, request) -> dict:
    body, version = request.body, request.version
    groups = broker.groups
    instance_id = body.group_instance_id if version >= 7 else None
    broker.require(request, AclOperation.READ, ResourceType.GROUP, body.group_id)
    try:
        groups.check_coordinator(request, body.group_id)
        check = groups.validate_commit(body.group_id, body.generation_id_or_member_epoch, body.member_id,
                                       instance_id, version)
    except KafkaError as exc:
        return _all_failed(body, version, exc.code)
    max_metadata = broker.config["offset.metadata.max.bytes"]
    cluster = broker.cluster
    entries, topics = [], []
    resolved = [cluster.topics_by_id.get(t.topic_id) if version >= 10 else cluster.topics.get(t.name)
                for t in body.topics]
    readable = broker.authorized(request, AclOperation.READ, ResourceType.TOPIC,
                                 [topic.name if version >= 10 else t.name
                                  for t, topic in zip(body.topics, resolved, strict=True) if topic is not None or version < 10])
    for t, topic in zip(body.topics, resolved, strict=True):
        missing = ErrorCode.UNKNOWN_TOPIC_ID if version >= 10 else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        name = topic.name if version >= 10 and topic is not None else t.name
        results = []
        for p in t.partitions:
            code = ErrorCode.NONE
            if (topic is not None or version < 10) and name not in readable:
                code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif topic is None:
                code = missing
            elif not 0 <= p.partition_index < len(topic.partitions):
                code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif p.committed_metadata is not None and len(p.committed_metadata) > max_metadata:
                code = ErrorCode.OFFSET_METADATA_TOO_LARGE
            elif check is not None and (refused := check(topic.name, topic.topic_id, p.partition_index)):
                code = refused[0]                    # KIP-1251: not assigned at or before the member's epoch
            else:
                entries.append((topic.name, p.partition_index, p.committed_offset,
                                p.committed_leader_epoch if version >= 6 else -1, p.committed_metadata))
            results.append({"partition_index": p.partition_index, "error_code": code})
        topics.append({**_topic_key(t, version), "partitions": results})
    retention = body.retention_time_ms if 2 <= version <= 4 else DEFAULT_RETENTION
    expire = broker.now_ms() + retention if retention != DEFAULT_RETENTION else None
    groups.commit(body.group_id, entries, expire)
    return {"throttle_time_ms": 0, "topics": topics}


def error_response(broker, request, code) -> dict:
    return _all_failed(request.body, request.version, code)
