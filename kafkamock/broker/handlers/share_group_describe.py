"""ShareGroupDescribe (77): share groups' epochs, assignor and members with their assignments. Another kind of
group, or none, is GROUP_ID_NOT_FOUND ("Group g not found.", "Group g is not a share group."); an empty group id is
INVALID_GROUP_ID. Kafka's order: ids the principal may not describe, empty ids, then the rest batched by
``__consumer_offsets`` partition as its GroupCoordinatorService walks them (``cluster.coordinator_batches``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.cluster import coordinator_batches
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.consumer_group_describe import authorized_view
from kafkamock.broker.handlers.contract import ApiHandler, HandlerResult

if TYPE_CHECKING:
    from kafkamock.broker.core import Broker, Request

API_KEY = 77


def _describe(broker: Broker, request: Request, group_id: str) -> dict[str, Any]:
    try:
        broker.groups.check_coordinator(request, group_id)
    except KafkaError as exc:
        return {"error_code": exc.code, "error_message": exc.message, "group_id": group_id, "group_state": "",
                "group_epoch": 0, "assignment_epoch": 0, "assignor_name": "", "members": [],
                "authorized_operations": -2147483648}
    answer = broker.groups.share.describe(group_id)
    return authorized_view(broker, request, answer, lambda m: (m["assignment"],))


def handle(broker: Broker, request: Request) -> HandlerResult:
    """Kafka's order: groups the principal may not describe, then empty ids, then the rest."""
    ids = request.body.group_ids
    denied = [g for g in ids if not broker.auth.authorize(request, AclOperation.DESCRIBE, ResourceType.GROUP, g)]
    allowed = [g for g in ids if g not in denied]
    empty: dict[str, Any] = {"error_message": None, "group_state": "", "group_epoch": 0, "assignment_epoch": 0,
                             "assignor_name": "", "members": [], "authorized_operations": -2147483648}
    return {"throttle_time_ms": 0, "groups": [
        *({**empty, "error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED, "group_id": g} for g in denied),
        *({**empty, "error_code": ErrorCode.INVALID_GROUP_ID, "group_id": ""} for g in allowed if not g),
        *(_describe(broker, request, g) for batch in coordinator_batches(
            [g for g in allowed if g], broker.config["offsets.topic.num.partitions"]) for g in batch)]}


def error_response(broker: Broker, request: Request, code: ErrorCode, message: str | None = None) -> dict[str, Any]:
    return {"throttle_time_ms": 0, "groups": [
        {"error_code": code, "group_id": g, "group_state": "", "group_epoch": 0, "assignment_epoch": 0,
         "assignor_name": "", "members": [], "authorized_operations": -2147483648}
        for g in request.body.group_ids]}


HANDLER = ApiHandler(API_KEY, handle, error_response)
