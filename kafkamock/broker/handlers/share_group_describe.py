"""ShareGroupDescribe (77): share groups' epochs, assignor and members with their assignments. Another kind of
group, or none, is GROUP_ID_NOT_FOUND ("Group g not found.", "Group g is not a share group."); an empty group id is
INVALID_GROUP_ID. Kafka's order: ids the principal may not describe, empty ids, then the rest batched by
``__consumer_offsets`` partition as its GroupCoordinatorService walks them (``cluster.coordinator_batches``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.cluster import coordinator_batches
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.consumer_group_describe import authorized_view
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.broker.share.groups import NOT_ASKED
from kafkamock.codec.messages import ShareGroupDescribeRequest, ShareGroupDescribeResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 77
_Group = ShareGroupDescribeResponse.DescribedGroup


def _empty(code: ErrorCode, group_id: str, message: str | None = None) -> ShareGroupDescribeResponse.DescribedGroup:
    return _Group(error_code=code, error_message=message, group_id=group_id, group_state="", group_epoch=0,
                  assignment_epoch=0, assignor_name="", members=[], authorized_operations=NOT_ASKED)


def _describe(cluster: Cluster, request: Request[ShareGroupDescribeRequest], group_id: str
              ) -> ShareGroupDescribeResponse.DescribedGroup:
    try:
        cluster.groups.check_coordinator(request, group_id)
    except KafkaError as exc:
        return _empty(exc.code, group_id, exc.message)
    return authorized_view(cluster, request, cluster.groups.share.describe(group_id), lambda m: (m.assignment,))


def handle(cluster: Cluster, request: Request[ShareGroupDescribeRequest]) -> ShareGroupDescribeResponse:
    """Kafka's order: groups the principal may not describe, then empty ids, then the rest."""
    ids = request.body.group_ids
    denied = [g for g in ids if not cluster.auth.authorize(request, AclOperation.DESCRIBE, ResourceType.GROUP, g)]
    allowed = [g for g in ids if g not in denied]
    return ShareGroupDescribeResponse(throttle_time_ms=0, groups=[
        *(_empty(ErrorCode.GROUP_AUTHORIZATION_FAILED, g) for g in denied),
        *(_empty(ErrorCode.INVALID_GROUP_ID, "") for g in allowed if not g),
        *(_describe(cluster, request, g) for batch in coordinator_batches(
            [g for g in allowed if g], cluster.config["offsets.topic.num.partitions"]) for g in batch)])


def error_response(cluster: Cluster, request: Request[ShareGroupDescribeRequest], code: ErrorCode,
                   message: str | None = None) -> ShareGroupDescribeResponse:
    return ShareGroupDescribeResponse(throttle_time_ms=0, groups=[
        _Group(error_code=code, group_id=g, group_state="", group_epoch=0, assignment_epoch=0, assignor_name="",
               members=[], authorized_operations=NOT_ASKED) for g in request.body.group_ids])


HANDLER = ApiHandler(API_KEY, handle, error_response)
