"""DescribeGroups (15): classic groups' state, protocol and members.

Members' metadata and the protocol are shown only while the group is Stable, their assignments in every state
(Kafka's ClassicGroupMember.describe and describeNoMetadata). A
group that does not exist, or is not a classic group (a KIP-848 group: ConsumerGroupDescribe describes it), is
Dead, with GROUP_ID_NOT_FOUND from v6 on (KIP-1043).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.groups.classic import ClassicGroup, ClassicState
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import DescribeGroupsRequest, DescribeGroupsResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 15

NOT_ASKED = -(2**31)


def _describe(cluster: Cluster, request: Request[DescribeGroupsRequest], group_id: str
              ) -> DescribeGroupsResponse.DescribedGroup:
    version = request.version
    answer = DescribeGroupsResponse.DescribedGroup(
        error_code=ErrorCode.NONE, error_message=None, group_id=group_id, group_state="Dead", protocol_type="",
        protocol_data="", members=[], authorized_operations=NOT_ASKED)
    try:
        if not cluster.auth.authorize(request, AclOperation.DESCRIBE, ResourceType.GROUP, group_id):
            raise KafkaError(ErrorCode.GROUP_AUTHORIZATION_FAILED)
        cluster.groups.check_coordinator(request, group_id)
    except KafkaError as exc:
        answer.error_code, answer.error_message = exc.code, exc.message if version >= 6 else None
        return answer
    group = cluster.groups.groups.get(group_id)
    if not isinstance(group, ClassicGroup) or group.state is ClassicState.DEAD:
        if version >= 6:
            answer.error_code = ErrorCode.GROUP_ID_NOT_FOUND
            answer.error_message = (f"Group {group_id} not found." if group is None
                                    else f"Group {group_id} is not a classic group.")
    else:
        stable = group.state is ClassicState.STABLE
        answer.group_state = group.state.value
        answer.protocol_type = group.protocol_type or ""
        answer.protocol_data = (group.protocol or "") if stable else ""
        answer.members = [DescribeGroupsResponse.DescribedGroupMember(
            member_id=m.member_id, group_instance_id=m.group_instance_id, client_id=m.client_id,
            client_host=m.client_host, member_metadata=m.metadata(group.protocol) if stable else b"",
            member_assignment=m.assignment) for m in group.members.values()]
    # Kafka fills the operations in for every group answered without an error, a Dead one below v6 included.
    if version >= 3 and request.body.include_authorized_operations and answer.error_code == ErrorCode.NONE:
        answer.authorized_operations = cluster.auth.authorized_operations(request, ResourceType.GROUP, group_id)
    return answer


def handle(cluster: Cluster, request: Request[DescribeGroupsRequest]) -> DescribeGroupsResponse:
    return DescribeGroupsResponse(throttle_time_ms=0, groups=[_describe(cluster, request, g) for g in request.body.groups])


def error_response(cluster: Cluster, request: Request[DescribeGroupsRequest], code: ErrorCode,
                   message: str | None = None) -> DescribeGroupsResponse:
    return DescribeGroupsResponse(throttle_time_ms=0, groups=[
        DescribeGroupsResponse.DescribedGroup(error_code=code, group_id=g, group_state="", protocol_type="",
                                              protocol_data="", members=[]) for g in request.body.groups])


HANDLER = ApiHandler(API_KEY, handle, error_response)
