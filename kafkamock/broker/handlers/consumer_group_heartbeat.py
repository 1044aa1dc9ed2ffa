"""ConsumerGroupHeartbeat (68): KIP-848's one request for joining, staying in and leaving a consumer group.

The member reports its subscription and the partitions it owns; the answer carries its epoch and, when it changed,
its assignment (``groups/consumer.py``). A regular expression subscription resolves to the topics the member
may DESCRIBE; named topics it may not describe refuse the heartbeat (TOPIC_AUTHORIZATION_FAILED). Served only while ``group.coordinator.rebalance.protocols`` lists
``consumer``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 68


def _error(code: ErrorCode, message: str | None, body: ConsumerGroupHeartbeatRequest
           ) -> ConsumerGroupHeartbeatResponse:
    """An error answer as Kafka's: the code and message only (no member id, epoch 0)."""
    return ConsumerGroupHeartbeatResponse(throttle_time_ms=0, error_code=code, error_message=message, member_id=None,
                                          member_epoch=0, heartbeat_interval_ms=0, assignment=None)


def handle(cluster: Cluster, request: Request[ConsumerGroupHeartbeatRequest]) -> ConsumerGroupHeartbeatResponse:
    body = request.body
    if not cluster.groups.consumer.enabled():
        return _error(ErrorCode.UNSUPPORTED_VERSION, "The consumer group protocol is off "
                      "(group.coordinator.rebalance.protocols).", body)
    cluster.auth.require(request, AclOperation.READ, ResourceType.GROUP, body.group_id)
    subscribed = set(body.subscribed_topic_names or ())
    if subscribed and cluster.auth.authorized(request, AclOperation.DESCRIBE, ResourceType.TOPIC, subscribed) != subscribed:
        return _error(ErrorCode.TOPIC_AUTHORIZATION_FAILED, None, body)
    try:
        cluster.groups.check_coordinator(request, body.group_id)
        peer = request.connection.peer.rsplit(":", 1)[0]
        return cluster.groups.consumer.heartbeat(
            body, request.version, request.client_id or "", "/" + peer,
            lambda topics: cluster.auth.authorized(request, AclOperation.DESCRIBE, ResourceType.TOPIC, topics,
                                             log_denied=False))
    except KafkaError as exc:
        return _error(exc.code, exc.message, body)


def error_response(cluster: Cluster, request: Request[ConsumerGroupHeartbeatRequest], code: ErrorCode,
                   message: str | None = None) -> ConsumerGroupHeartbeatResponse:
    return _error(code, None, request.body)


HANDLER = ApiHandler(API_KEY, handle, error_response)
