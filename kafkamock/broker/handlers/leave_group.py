"""LeaveGroup (13): members leave a classic group, which rebalances. v3+ names several members, by member id or
group.instance.id (KIP-345), each with its own error; v0-2 one member, its error at the top."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import LeaveGroupRequest, LeaveGroupResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 13


def handle(cluster: Cluster, request: Request[LeaveGroupRequest]) -> LeaveGroupResponse:
    body, version = request.body, request.version
    cluster.auth.require(request, AclOperation.READ, ResourceType.GROUP, body.group_id)
    if version >= 3:
        identities = [(m.member_id, m.group_instance_id, m.reason if version >= 5 else None) for m in body.members]
    else:
        identities = [(body.member_id, None, None)]
    if not body.group_id:
        return error_response(cluster, request, ErrorCode.INVALID_GROUP_ID)
    try:
        cluster.groups.check_coordinator(request, body.group_id)
        errors = cluster.groups.leave(body.group_id, identities)
    except KafkaError as exc:
        if exc.code != ErrorCode.UNKNOWN_MEMBER_ID:
            return error_response(cluster, request, exc.code)
        errors = [exc.code] * len(identities)   # no such group: each member is unknown (Kafka's leaveGroup)
    if version < 3:
        return LeaveGroupResponse(throttle_time_ms=0, error_code=errors[0])
    return LeaveGroupResponse(
        throttle_time_ms=0, error_code=ErrorCode.NONE,
        members=[LeaveGroupResponse.MemberResponse(member_id=member_id or "", group_instance_id=instance_id,
                                                   error_code=error)
                 for (member_id, instance_id, _), error in zip(identities, errors, strict=True)])


def error_response(cluster: Cluster, request: Request[LeaveGroupRequest], code: ErrorCode,
                   message: str | None = None) -> LeaveGroupResponse:
    return LeaveGroupResponse(throttle_time_ms=0, error_code=code, members=[])


HANDLER = ApiHandler(API_KEY, handle, error_response)
