"""ConsumerGroupDescribe (69): KIP-848 groups' epochs, assignor and members with their current and target
assignments. A classic group, or none, is GROUP_ID_NOT_FOUND (Kafka's Admin then falls back to DescribeGroups)."""

from __future__ import annotations

from kafkamock.broker.errors import KafkaError
from kafkamock.broker.handlers.describe_groups import AUTHORIZED_OPERATIONS

API_KEY = 69


def _describe(broker, request, group_id: str) -> dict:
    try:
        broker.groups.check_coordinator(request, group_id)
    except KafkaError as exc:
        return {"error_code": exc.code, "error_message": exc.message, "group_id": group_id, "group_state": "",
                "group_epoch": 0, "assignment_epoch": 0, "assignor_name": "", "members": []}
    return broker.groups.consumer.describe(group_id, request.body.include_authorized_operations,
                                           AUTHORIZED_OPERATIONS)


def handle(broker, request) -> dict:
    return {"throttle_time_ms": 0, "groups": [_describe(broker, request, g) for g in request.body.group_ids]}


def error_response(broker, request, code) -> dict:
    return {"throttle_time_ms": 0, "groups": [
        {"error_code": code, "group_id": g, "group_state": "", "group_epoch": 0, "assignment_epoch": 0,
         "assignor_name": "", "members": []} for g in request.body.group_ids]}
