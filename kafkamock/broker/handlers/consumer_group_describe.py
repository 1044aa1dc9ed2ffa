"""ConsumerGroupDescribe (69): KIP-848 groups' epochs, assignor and members with their current and target
assignments. A classic group, or none, is GROUP_ID_NOT_FOUND (Kafka's Admin then falls back to DescribeGroups)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar, overload

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    ShareGroupDescribeRequest,
    ShareGroupDescribeResponse,
)

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 69
Group = ConsumerGroupDescribeResponse.DescribedGroup
M = TypeVar("M")


class _TopicPartitions(Protocol):
    @property
    def topic_name(self) -> str: ...


class _Assignment(Protocol):
    @property
    def topic_partitions(self) -> Sequence[_TopicPartitions]: ...


class _DescribedGroup(Protocol[M]):
    """What ConsumerGroupDescribe's and ShareGroupDescribe's DescribedGroup share (``M`` their Member)."""

    error_code: int
    error_message: str | None
    group_id: str
    authorized_operations: int
    members: list[M]


@overload
def authorized_view(cluster: Cluster, request: Request[ConsumerGroupDescribeRequest], answer: Group,
                    assignments: Callable[[ConsumerGroupDescribeResponse.Member],
                                          Iterable[ConsumerGroupDescribeResponse.Assignment]]) -> Group: ...
@overload
def authorized_view(cluster: Cluster, request: Request[ShareGroupDescribeRequest],
                    answer: ShareGroupDescribeResponse.DescribedGroup,
                    assignments: Callable[[ShareGroupDescribeResponse.Member],
                                          Iterable[ShareGroupDescribeResponse.Assignment]]
                    ) -> ShareGroupDescribeResponse.DescribedGroup: ...
def authorized_view(cluster: Cluster,
                    request: Request[ConsumerGroupDescribeRequest] | Request[ShareGroupDescribeRequest],
                    answer: _DescribedGroup[M], assignments: Callable[[M], Iterable[_Assignment]]
                    ) -> _DescribedGroup[M]:
    """A described group as Kafka's handler shows it: its authorized-operations bit field when asked, and, with an
    authorizer, TOPIC_AUTHORIZATION_FAILED with no members if an assignment names a topic the principal may not
    describe (``assignments(member)`` lists a member's assignments)."""
    if answer.error_code != ErrorCode.NONE:
        return answer
    if request.body.include_authorized_operations:
        answer.authorized_operations = cluster.auth.authorized_operations(request, ResourceType.GROUP, answer.group_id)
    if cluster.auth.enabled:
        names = {tp.topic_name for m in answer.members for a in assignments(m) for tp in a.topic_partitions}
        if cluster.auth.authorized(request, AclOperation.DESCRIBE, ResourceType.TOPIC, names) != names:
            answer.error_code, answer.members = ErrorCode.TOPIC_AUTHORIZATION_FAILED, []
            answer.error_message = "The group has described topic(s) that the client is not authorized to describe."
    return answer


def _describe(cluster: Cluster, request: Request[ConsumerGroupDescribeRequest], group_id: str) -> Group:
    if not group_id:                             # Kafka answers an empty id before looking for a coordinator
        return Group(error_code=ErrorCode.INVALID_GROUP_ID, error_message=None, group_id="", group_state="",
                     group_epoch=0, assignment_epoch=0, assignor_name="", members=[])
    try:
        if not cluster.auth.authorize(request, AclOperation.DESCRIBE, ResourceType.GROUP, group_id):
            raise KafkaError(ErrorCode.GROUP_AUTHORIZATION_FAILED)
        cluster.groups.check_coordinator(request, group_id)
    except KafkaError as exc:
        return Group(error_code=exc.code, error_message=exc.message, group_id=group_id, group_state="",
                     group_epoch=0, assignment_epoch=0, assignor_name="", members=[])
    answer = cluster.groups.consumer.describe(group_id)
    return authorized_view(cluster, request, answer, lambda m: (m.assignment, m.target_assignment))


def handle(cluster: Cluster, request: Request[ConsumerGroupDescribeRequest]) -> ConsumerGroupDescribeResponse:
    return ConsumerGroupDescribeResponse(throttle_time_ms=0, groups=[_describe(cluster, request, g)
                                                                     for g in request.body.group_ids])


def error_response(cluster: Cluster, request: Request[ConsumerGroupDescribeRequest], code: ErrorCode,
                   message: str | None = None) -> ConsumerGroupDescribeResponse:
    return ConsumerGroupDescribeResponse(throttle_time_ms=0, groups=[
        Group(error_code=code, group_id=g, group_state="", group_epoch=0, assignment_epoch=0, assignor_name="",
              members=[]) for g in request.body.group_ids])


HANDLER = ApiHandler(API_KEY, handle, error_response)
