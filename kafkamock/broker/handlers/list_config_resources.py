"""ListConfigResources (74, formerly ListClientMetricsResources): the resources that have configs
(KIP-1142; Admin.listConfigResources, and listClientMetricsResources at v0).

As Kafka's KafkaApis.handleListConfigResources, with DESCRIBE_CONFIGS on the cluster (else
CLUSTER_AUTHORIZATION_FAILED). v0 lists client-metrics resources only; v1 takes resource types (TOPIC 2, BROKER 4,
BROKER_LOGGER 8, CLIENT_METRICS 16, GROUP 32; none: all of them), and one it does not know fails the request with
UNSUPPORTED_VERSION. Kafka's order: groups with configs of their own, client-metrics resources, each broker as a
logger resource, each broker, then every topic (internal ones included). kafkamock keeps no client-metrics
resources (it has no client telemetry, KIP-714), so none is listed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import ListConfigResourcesRequest, ListConfigResourcesResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 74
TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 2, 4, 8, 16, 32
SUPPORTED = (TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP)


def handle(cluster: Cluster, request: Request[ListConfigResourcesRequest]) -> ListConfigResourcesResponse:
    if not cluster.auth.authorize(request, AclOperation.DESCRIBE_CONFIGS, ResourceType.CLUSTER):
        return error_response(cluster, request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    if request.version == 0:
        types = {CLIENT_METRICS}
    else:
        types = set(request.body.resource_types) or set(SUPPORTED)
        if not types <= set(SUPPORTED):
            return error_response(cluster, request, ErrorCode.UNSUPPORTED_VERSION)
    found: list[tuple[str, int]] = []
    if GROUP in types:
        found += [(group_id, GROUP) for group_id in cluster.groups.configs.overrides]
    nodes = [str(n.node_id) for n in cluster.metadata.live_nodes()]
    if BROKER_LOGGER in types:
        found += [(node_id, BROKER_LOGGER) for node_id in nodes]
    if BROKER in types:
        found += [(node_id, BROKER) for node_id in nodes]
    if TOPIC in types:
        found += [(name, TOPIC) for name in cluster.metadata.topics]
    return ListConfigResourcesResponse(
        throttle_time_ms=0, error_code=ErrorCode.NONE,
        config_resources=[ListConfigResourcesResponse.ConfigResource(resource_name=name, resource_type=kind)
                          for name, kind in found])


def error_response(cluster: Cluster, request: Request[ListConfigResourcesRequest], code: ErrorCode,
                   message: str | None = None) -> ListConfigResourcesResponse:
    return ListConfigResourcesResponse(throttle_time_ms=0, error_code=code, config_resources=[])


HANDLER = ApiHandler(API_KEY, handle, error_response)
