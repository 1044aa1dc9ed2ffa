"""DeleteGroups (42): remove empty groups and their offsets (tombstones in ``__consumer_offsets``).

A group with members is NON_EMPTY_GROUP; one that does not exist GROUP_ID_NOT_FOUND. Each id is answered once, in
Kafka's order: batched by ``__consumer_offsets`` partition as its GroupCoordinatorService walks them
(``cluster.coordinator_batches``); in a batch, the share groups it refuses first (in the order of its HashMap of
their errors), then the others in the order of the HashSet it makes of the batch; then the ids the principal may
not delete (GROUP_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.cluster import coordinator_batches
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.broker.java_hash_order import (
    java_hash_order,
    java_hashset_order,
    java_string_hash,
)
from kafkamock.codec.messages import DeleteGroupsRequest, DeleteGroupsResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 42
Result = DeleteGroupsResponse.DeletableGroupResult


def _delete(cluster: Cluster, request: Request[DeleteGroupsRequest], group_id: str) -> Result:
    try:
        cluster.groups.check_coordinator(request, group_id)
    except KafkaError as exc:
        return Result(group_id=group_id, error_code=exc.code)
    return Result(group_id=group_id, error_code=cluster.groups.delete_group(group_id))


def handle(cluster: Cluster, request: Request[DeleteGroupsRequest]) -> DeleteGroupsResponse:
    ids = list(dict.fromkeys(request.body.groups_names))
    denied = [g for g in ids if not cluster.auth.authorize(request, AclOperation.DELETE, ResourceType.GROUP, g)]
    allowed = [g for g in ids if g not in denied]
    results: list[Result] = []
    for batch in coordinator_batches(allowed, cluster.config["offsets.topic.num.partitions"]):
        answers = {g: _delete(cluster, request, g) for g in batch}
        # Kafka deletes a batch's share groups first: those it refuses are answered before the others.
        refused = [g for g, a in answers.items() if a.error_code == ErrorCode.NON_EMPTY_GROUP and _is_share(cluster, a)]
        results += [answers[g] for g in java_hash_order(refused, java_string_hash)]
        results += [answers[g] for g in java_hashset_order(batch) if g not in refused]
    return DeleteGroupsResponse(throttle_time_ms=0, results=[
        *results, *(Result(group_id=g, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED) for g in denied)])


def _is_share(cluster: Cluster, answer: Result) -> bool:
    group = cluster.groups.groups.get(answer.group_id)
    return group is not None and group.kind == "share"


def error_response(cluster: Cluster, request: Request[DeleteGroupsRequest], code: ErrorCode,
                   message: str | None = None) -> DeleteGroupsResponse:
    return DeleteGroupsResponse(throttle_time_ms=0, results=[Result(group_id=g, error_code=code)
                                                             for g in request.body.groups_names])


HANDLER = ApiHandler(API_KEY, handle, error_response)
