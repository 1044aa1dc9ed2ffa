"""ListGroups (16): the groups of the nodes asked, filtered by state (v4+, KIP-518) and type (v5+, KIP-848).

Each node lists the groups it coordinates (Kafka's Admin asks every node and merges the answers).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import ListGroupsRequest, ListGroupsResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 16


def handle(cluster: Cluster, request: Request[ListGroupsRequest]) -> ListGroupsResponse:
    body, version = request.body, request.version
    states = {s.lower() for s in body.states_filter} if version >= 4 else set()
    types = {t.lower() for t in body.types_filter} if version >= 5 else set()
    node_id = request.node.node_id if request.node is not None else cluster.node_id
    listed: list[ListGroupsResponse.ListedGroup] = []
    # DESCRIBE on the cluster lists every group; otherwise only the groups the principal may describe.
    every = cluster.auth.authorize(request, AclOperation.DESCRIBE, ResourceType.CLUSTER)
    for group in cluster.groups.list_groups(states, types):
        if cluster.groups.coordinator_id(group.group_id) != node_id:
            continue
        if not every and not cluster.auth.authorize(request, AclOperation.DESCRIBE, ResourceType.GROUP, group.group_id):
            continue
        listed.append(ListGroupsResponse.ListedGroup(group_id=group.group_id, protocol_type=group.protocol_type or "",
                                                     group_state=group.state_name, group_type=group.kind))
    return ListGroupsResponse(throttle_time_ms=0, error_code=0, groups=listed)


HANDLER = ApiHandler(API_KEY, handle)
