"""JoinGroup (11): a member joins a classic group and waits for the round to end (``groups/coordinator.py``).

The answer comes when every known member has rejoined or the rebalance timeout passes; the leader's answer lists
the members and their metadata for the protocol the group chose. v4+ first hands a new member its id
(MEMBER_ID_REQUIRED, KIP-394); v5+ carries group.instance.id (KIP-345).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.groups import reply
from kafkamock.broker.groups.coordinator import join_error
from kafkamock.broker.handlers.contract import ApiHandler, HandlerResult
from kafkamock.codec.messages import JoinGroupRequest, JoinGroupResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request
    from kafkamock.broker.groups.coordinator import Answer

API_KEY = 11


def shape(answer: Answer, version: int) -> JoinGroupResponse:
    """The coordinator's answer (a plain body, as it shares its rounds with SyncGroup's) as this version's
    JoinGroupResponse: before v7 no protocol type and a non-null protocol name; before v9 no skip_assignment."""
    return JoinGroupResponse(
        throttle_time_ms=answer["throttle_time_ms"], error_code=answer["error_code"],
        generation_id=answer["generation_id"],
        protocol_type=answer["protocol_type"] if version >= 7 else None,
        protocol_name=answer["protocol_name"] if version >= 7 else answer["protocol_name"] or "",
        leader=answer["leader"], skip_assignment=answer["skip_assignment"] if version >= 9 else False,
        member_id=answer["member_id"],
        members=[JoinGroupResponse.JoinGroupResponseMember(member_id=m["member_id"],
                                                           group_instance_id=m["group_instance_id"],
                                                           metadata=m["metadata"]) for m in answer["members"]])


def handle(cluster: Cluster, request: Request[JoinGroupRequest]) -> HandlerResult:
    body, version = request.body, request.version
    cluster.auth.require(request, AclOperation.READ, ResourceType.GROUP, body.group_id)
    try:
        cluster.groups.check_coordinator(request, body.group_id)
    except KafkaError as exc:
        return shape(join_error(exc.code, body.member_id), version)
    peer = request.connection.peer.rsplit(":", 1)[0]
    answer = cluster.groups.join(body, version, request.client_id or "", "/" + peer)
    return reply(cluster, answer, lambda a: shape(a, version))


def error_response(cluster: Cluster, request: Request[JoinGroupRequest], code: ErrorCode,
                   message: str | None = None) -> JoinGroupResponse:
    return shape(join_error(code, request.body.member_id), request.version)


HANDLER = ApiHandler(API_KEY, handle, error_response)
