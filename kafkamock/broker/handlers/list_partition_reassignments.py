"""ListPartitionReassignments (46): the reassignments in progress (KIP-455; Admin.listPartitionReassignments).

As Kafka's controller (ControllerApis.handleListPartitionReassignments, ReplicationControlManager
.listPartitionReassignments), with DESCRIBE on the cluster. ``topics`` null lists every partition being
reassigned; otherwise the named partitions that are, unknown topics and partitions being left out. Each shows its
replicas (the target followed by those being removed) and the replicas being added and removed. kafkamock's
reassignments complete at once unless a new replica's node is stopped, so most answers are empty.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation
from kafkamock.broker.errors import ErrorCode
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse

if TYPE_CHECKING:
    from kafkamock.broker.cluster import Partition
    from kafkamock.broker.core import Cluster, Request

API_KEY = 46
Ongoing = ListPartitionReassignmentsResponse.OngoingPartitionReassignment
OngoingTopic = ListPartitionReassignmentsResponse.OngoingTopicReassignment


def _ongoing(partition: Partition) -> Ongoing:
    return Ongoing(partition_index=partition.index, replicas=list(partition.replicas),
                   adding_replicas=list(partition.adding), removing_replicas=list(partition.removing))


def handle(cluster: Cluster, request: Request[ListPartitionReassignmentsRequest]) -> ListPartitionReassignmentsResponse:
    cluster.auth.require_cluster(request, AclOperation.DESCRIBE)
    metadata = cluster.metadata
    topics = []
    if request.body.topics is None:
        for topic in metadata.topics.values():
            partitions = [_ongoing(p) for p in topic.partitions if p.reassigning]
            if partitions:
                topics.append(OngoingTopic(name=topic.name, partitions=partitions))
    else:
        for wanted in request.body.topics:
            named = metadata.topics.get(wanted.name)
            if named is None:
                continue
            found = (named.partition_at(i) for i in wanted.partition_indexes)
            partitions = [_ongoing(p) for p in found if p is not None and p.reassigning]
            if partitions:
                topics.append(OngoingTopic(name=named.name, partitions=partitions))
    return ListPartitionReassignmentsResponse(throttle_time_ms=0, error_code=ErrorCode.NONE, error_message=None,
                                              topics=topics)


def error_response(cluster: Cluster, request: Request[ListPartitionReassignmentsRequest], code: ErrorCode,
                   message: str | None = None) -> ListPartitionReassignmentsResponse:
    """Kafka's getErrorResponse: the error, and each named partition with nothing else."""
    return ListPartitionReassignmentsResponse(throttle_time_ms=0, error_code=code, error_message=message, topics=[
        OngoingTopic(name=t.name, partitions=[Ongoing(partition_index=i, replicas=[], adding_replicas=[],
                                                      removing_replicas=[]) for i in t.partition_indexes])
        for t in request.body.topics or []])


HANDLER = ApiHandler(API_KEY, handle, error_response)
