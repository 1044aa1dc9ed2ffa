"""UnregisterBroker (64): remove a broker's registration (KIP-500; Admin.unregisterBroker), typically of a broker
that is gone for good.

Kafka's broker forwards it to the controller (ControllerApis.handleUnregisterBroker, with ALTER on the cluster;
ReplicationControlManager.unregisterBroker). A node that is not registered is BROKER_ID_NOT_REGISTERED, "Broker ID
N is not currently registered". Otherwise the node leaves the ISRs and leaderships it had (as when it stops),
DescribeCluster and Metadata no longer list it, and it is no valid target for new replicas. A running node keeps
running unregistered, as Kafka's broker does (its heartbeats are refused), until it is stopped and started again
through the control API, which registers it anew.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import UnregisterBrokerRequest, UnregisterBrokerResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 64


def handle(cluster: Cluster, request: Request[UnregisterBrokerRequest]) -> UnregisterBrokerResponse:
    cluster.auth.require_cluster(request, AclOperation.ALTER)
    try:
        cluster.unregister_broker(request.body.broker_id)
    except KafkaError as exc:
        return error_response(cluster, request, exc.code, exc.message)
    return UnregisterBrokerResponse(throttle_time_ms=0, error_code=ErrorCode.NONE, error_message="")


def error_response(cluster: Cluster, request: Request[UnregisterBrokerRequest], code: ErrorCode,
                   message: str | None = None) -> UnregisterBrokerResponse:
    return UnregisterBrokerResponse(throttle_time_ms=0, error_code=code, error_message=message)


HANDLER = ApiHandler(API_KEY, handle, error_response)
