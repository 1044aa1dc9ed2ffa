"""ShareGroupHeartbeat (76): KIP-932's one request for joining, staying in and leaving a share group.

The member (its id chosen by the client) reports its subscription; the answer carries its epoch, the heartbeat
interval and, when it changed, the partitions assigned to it — shared with other members when there are more
members than partitions (``share/groups.py``, the ``simple`` assignor).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 76


def _error(code: int, message: str | None) -> ShareGroupHeartbeatResponse:
    """An error answer as Kafka's: the code and message, no member id, epoch 0."""
    return ShareGroupHeartbeatResponse(throttle_time_ms=0, error_code=code, error_message=message, member_id=None,
                                       member_epoch=0, heartbeat_interval_ms=0, assignment=None)


def handle(cluster: Cluster, request: Request[ShareGroupHeartbeatRequest]) -> ShareGroupHeartbeatResponse:
    body = request.body
    cluster.auth.require(request, AclOperation.READ, ResourceType.GROUP, body.group_id)
    if not body.member_id or len(body.member_id) > 36:      # KafkaApis.isMemberIdValid; the code alone
        return _error(ErrorCode.INVALID_REQUEST, None)
    subscribed = set(body.subscribed_topic_names or ())
    if subscribed and cluster.auth.authorized(request, AclOperation.DESCRIBE, ResourceType.TOPIC, subscribed) != subscribed:
        return _error(ErrorCode.TOPIC_AUTHORIZATION_FAILED, None)
    try:
        cluster.groups.check_coordinator(request, body.group_id)
        peer = request.connection.peer.rsplit(":", 1)[0]
        return cluster.groups.share.heartbeat(body, request.client_id or "", "/" + peer)
    except KafkaError as exc:
        return _error(exc.code, exc.message)


def error_response(cluster: Cluster, request: Request[ShareGroupHeartbeatRequest], code: ErrorCode,
                   message: str | None = None) -> ShareGroupHeartbeatResponse:
    return _error(code, None)


HANDLER = ApiHandler(API_KEY, handle, error_response)
