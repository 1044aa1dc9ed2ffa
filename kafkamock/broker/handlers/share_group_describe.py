"""ShareGroupDescribe (77): share groups' epochs, assignor and members with their assignments. Another kind of
group, or none, is GROUP_ID_NOT_FOUND."""

from __future__ import annotations

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.consumer_group_describe import authorized_view

API_KEY = 77


def _describe(broker, request, group_id: str) -> dict:
    try:
        if not broker.authorize(request, AclOperation.DESCRIBE, ResourceType.GROUP, group_id):
            raise KafkaError(ErrorCode.GROUP_AUTHORIZATION_FAILED)
        broker.groups.check_coordinator(request, group_id)
    except KafkaError as exc:
        return {"error_code": exc.code, "error_message": exc.message, "group_id": group_id, "group_state": "",
                "group_epoch": 0, "assignment_epoch": 0, "assignor_name": "", "members": [],
                "authorized_operations": -2147483648}
    answer = broker.groups.share.describe(group_id)
    return authorized_view(broker, request, answer, lambda m: (m["assignment"],))


def handle(broker, request) -> dict:
    return {"throttle_time_ms": 0, "groups": [_describe(broker, request, g) for g in request.body.group_ids]}


def error_response(broker, request, code) -> dict:
    return {"throttle_time_ms": 0, "groups": [
        {"error_code": code, "group_id": g, "group_state": "", "group_epoch": 0, "assignment_epoch": 0,
         "assignor_name": "", "members": [], "authorized_operations": -2147483648}
        for g in request.body.group_ids]}
