"""Heartbeat (12): a classic member says it is alive; REBALANCE_IN_PROGRESS tells it to rejoin."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import HeartbeatRequest, HeartbeatResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 12


def handle(cluster: Cluster, request: Request[HeartbeatRequest]) -> HeartbeatResponse:
    body = request.body
    cluster.auth.require(request, AclOperation.READ, ResourceType.GROUP, body.group_id)
    try:
        cluster.groups.check_coordinator(request, body.group_id)
        code = cluster.groups.heartbeat(body, request.version)
    except KafkaError as exc:
        code = exc.code
    return HeartbeatResponse(throttle_time_ms=0, error_code=code)


HANDLER = ApiHandler(API_KEY, handle)
