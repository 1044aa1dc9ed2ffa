"""DeleteGroups (42): remove empty groups and their offsets (tombstones in ``__consumer_offsets``).

A group with members is NON_EMPTY_GROUP; one that does not exist GROUP_ID_NOT_FOUND.
"""

from __future__ import annotations

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError

API_KEY = 42


def _delete(broker, request, group_id: str) -> dict:
    if not broker.authorize(request, AclOperation.DELETE, ResourceType.GROUP, group_id):
        return {"group_id": group_id, "error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED}
    try:
        broker.groups.check_coordinator(request, group_id)
    except KafkaError as exc:
        return {"group_id": group_id, "error_code": exc.code}
    return {"group_id": group_id, "error_code": broker.groups.delete_group(group_id)}


def handle(broker, request) -> dict:
    return {"throttle_time_ms": 0, "results": [_delete(broker, request, g) for g in request.body.groups_names]}


def error_response(broker, request, code) -> dict:
    return {"throttle_time_ms": 0, "results": [{"group_id": g, "error_code": code}
                                               for g in request.body.groups_names]}
