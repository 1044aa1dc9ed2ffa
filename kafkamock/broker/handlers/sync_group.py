"""SyncGroup (14): the leader brings the assignment; every member waits for its share (``groups/coordinator.py``).

v5+ carries the protocol type and name, which must match the group's (INCONSISTENT_GROUP_PROTOCOL otherwise).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.groups import reply
from kafkamock.broker.groups.coordinator import Answer, sync_error
from kafkamock.broker.handlers.contract import ApiHandler, HandlerResult
from kafkamock.codec.messages import SyncGroupRequest, SyncGroupResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 14


def shape(answer: Answer, version: int) -> SyncGroupResponse:
    """The coordinator's answer as this version's response (v0-4 carry no protocol type or name)."""
    response = SyncGroupResponse(**answer)
    if version < 5:
        response.protocol_type = response.protocol_name = None
    return response


def handle(cluster: Cluster, request: Request[SyncGroupRequest]) -> HandlerResult:
    body, version = request.body, request.version
    cluster.auth.require(request, AclOperation.READ, ResourceType.GROUP, body.group_id)
    try:
        cluster.groups.check_coordinator(request, body.group_id)
    except KafkaError as exc:
        return shape(sync_error(exc.code), version)
    return reply(cluster, cluster.groups.sync(body, version), lambda a: shape(a, version))


def error_response(cluster: Cluster, request: Request[SyncGroupRequest], code: ErrorCode, message: str | None = None
                   ) -> SyncGroupResponse:
    return shape(sync_error(code), request.version)


HANDLER = ApiHandler(API_KEY, handle, error_response)
