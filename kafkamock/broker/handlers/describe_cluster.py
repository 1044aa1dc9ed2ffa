"""DescribeCluster (60): the cluster id, the controller and the brokers, as a broker endpoint answers it.

As Kafka's AuthHelper.computeDescribeClusterResponse: ``endpoint_type`` (v1+) 1 asks for brokers; 2 (controllers)
is MISMATCHED_ENDPOINT_TYPE, since this is a broker endpoint, and any other value UNSUPPORTED_ENDPOINT_TYPE
(both INVALID_REQUEST at v0, which cannot carry the field anyway). ``cluster_authorized_operations`` is
-2147483648 unless requested; with no authorizer every cluster operation is allowed. A stopped node counts as fenced: it is left out, unless ``include_fenced_brokers`` (v2) asks for it, then with
``is_fenced`` true; a node UnregisterBroker removed is not listed at all. The controller is the first node that is
up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import DescribeClusterRequest, DescribeClusterResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 60
BROKER_ENDPOINT, CONTROLLER_ENDPOINT = 1, 2
ENDPOINT_TYPES = {BROKER_ENDPOINT: "BROKER", CONTROLLER_ENDPOINT: "CONTROLLER"}
MISMATCHED_ENDPOINT_TYPE, UNSUPPORTED_ENDPOINT_TYPE = ErrorCode.MISMATCHED_ENDPOINT_TYPE, ErrorCode.UNSUPPORTED_ENDPOINT_TYPE
OMITTED_OPERATIONS = -2147483648


def _error(code: int, message: str) -> DescribeClusterResponse:
    return DescribeClusterResponse(throttle_time_ms=0, error_code=code, error_message=message,
                                   endpoint_type=BROKER_ENDPOINT, cluster_id="", controller_id=-1, brokers=[],
                                   cluster_authorized_operations=OMITTED_OPERATIONS)


def _cluster_operations(cluster: Cluster, request: Request[DescribeClusterRequest]) -> int:
    """As AuthHelper.computeDescribeClusterResponse: the bit field if asked, 0 without DESCRIBE on the cluster."""
    if not request.body.include_cluster_authorized_operations:
        return OMITTED_OPERATIONS
    if not cluster.auth.authorize(request, AclOperation.DESCRIBE, ResourceType.CLUSTER):
        return 0
    return cluster.auth.authorized_operations(request, ResourceType.CLUSTER)


def handle(cluster: Cluster, request: Request[DescribeClusterRequest]) -> DescribeClusterResponse:
    body, version = request.body, request.version
    endpoint_type = body.endpoint_type if version >= 1 else BROKER_ENDPOINT
    if endpoint_type not in ENDPOINT_TYPES:
        return _error(ErrorCode.INVALID_REQUEST if version == 0 else UNSUPPORTED_ENDPOINT_TYPE,
                      f"Unsupported endpoint type {endpoint_type}")
    if endpoint_type != BROKER_ENDPOINT:
        return _error(ErrorCode.INVALID_REQUEST if version == 0 else MISMATCHED_ENDPOINT_TYPE,
                      "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type "
                      f"{ENDPOINT_TYPES[endpoint_type]}")
    metadata = cluster.metadata
    # A stopped node is fenced: listed as such only when the client asks for fenced brokers (v2).
    include_fenced = version >= 2 and body.include_fenced_brokers
    listener = request.connection.listener
    brokers = [DescribeClusterResponse.DescribeClusterBroker(
        broker_id=n.node_id, host=n.address(listener)[0], port=n.address(listener)[1], rack=n.rack,
        is_fenced=not n.up) for n in metadata.nodes.values() if n.registered and (n.up or include_fenced)]
    controller_id = metadata.controller_id
    return DescribeClusterResponse(
        throttle_time_ms=0, error_code=ErrorCode.NONE, error_message=None,
        endpoint_type=BROKER_ENDPOINT, cluster_id=metadata.cluster_id, controller_id=controller_id,
        brokers=brokers,
        cluster_authorized_operations=_cluster_operations(cluster, request),
    )


HANDLER = ApiHandler(API_KEY, handle)
