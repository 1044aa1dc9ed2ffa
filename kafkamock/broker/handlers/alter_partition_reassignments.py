"""AlterPartitionReassignments (45): move partitions to new replica lists, or cancel such a move (KIP-455;
Admin.alterPartitionReassignments).

As Kafka's controller (ControllerApis.handleAlterPartitionReassignments, ReplicationControlManager
.alterPartitionReassignments), with ALTER on the cluster. Per partition, in request order: an unknown topic is
UNKNOWN_TOPIC_OR_PARTITION "Unable to find a topic named T.", an unknown partition "Unable to find partition T:P.";
null replicas cancel the reassignment in progress (NO_REASSIGNMENT_IN_PROGRESS when there is none); a target
replica list must be non-empty, of registered brokers, each once (INVALID_REPLICA_ASSIGNMENT, the manual
assignment messages) and, when ``allow_replication_factor_change`` (v1) is false, as long as the current one
(INVALID_REPLICATION_FACTOR "The replication factor is changed from N to M").

The reassignment takes effect at once (``ClusterMetadata.reassign``): the new replicas catch up immediately, the removed
ones go, and Metadata and DescribeTopicPartitions show the target replicas; a leader that was removed hands over
to the first target replica in sync. Only a new replica on a stopped node keeps a reassignment in progress
(ListPartitionReassignments lists it) until the node starts. An empty topic list is answered with Kafka's empty
response: no results, an empty error message, ``allow_replication_factor_change`` true.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 45


def _alter(cluster: Cluster, topic_name: str, wanted: AlterPartitionReassignmentsRequest.ReassignablePartition,
           allow_rf_change: bool) -> None:
    metadata = cluster.metadata
    topic = metadata.topics.get(topic_name)
    if topic is None:
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find a topic named {topic_name}.")
    index = wanted.partition_index
    partition = topic.partition_at(index)
    if partition is None:
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find partition {topic_name}:{index}.")
    if wanted.replicas is None:
        unclean = bool(cluster.topic_config(topic, "unclean.leader.election.enable"))
        cluster.cancel_reassignment(partition, unclean)
        return
    target = list(wanted.replicas)
    metadata.check_assignment(target, None, require_live=False)
    if not allow_rf_change:
        # During a reassignment the count that matters is the one it is heading for.
        current = len((set(partition.replicas) | set(partition.adding)) - set(partition.removing)) \
            if partition.reassigning else len(partition.replicas)
        if current != len(target):
            raise KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR,
                             f"The replication factor is changed from {current} to {len(target)}")
    cluster.reassign(partition, target)


def handle(cluster: Cluster, request: Request[AlterPartitionReassignmentsRequest]
           ) -> AlterPartitionReassignmentsResponse:
    cluster.auth.require_cluster(request, AclOperation.ALTER)
    body = request.body
    if not body.topics:
        return AlterPartitionReassignmentsResponse(throttle_time_ms=0, allow_replication_factor_change=True,
                                                   error_code=ErrorCode.NONE, error_message="", responses=[])
    allow = body.allow_replication_factor_change if request.version >= 1 else True
    responses = []
    for topic in body.topics:
        partitions = []
        for wanted in topic.partitions:
            result = AlterPartitionReassignmentsResponse.ReassignablePartitionResponse(
                partition_index=wanted.partition_index, error_code=ErrorCode.NONE, error_message=None)
            try:
                _alter(cluster, topic.name, wanted, allow)
            except KafkaError as exc:
                result.error_code, result.error_message = exc.code, exc.message
            partitions.append(result)
        responses.append(AlterPartitionReassignmentsResponse.ReassignableTopicResponse(name=topic.name,
                                                                                       partitions=partitions))
    return AlterPartitionReassignmentsResponse(throttle_time_ms=0, allow_replication_factor_change=allow,
                                               error_code=ErrorCode.NONE, error_message=None, responses=responses)


def error_response(cluster: Cluster, request: Request[AlterPartitionReassignmentsRequest], code: ErrorCode,
                   message: str | None = None) -> AlterPartitionReassignmentsResponse:
    """Kafka's getErrorResponse: the error at the top and for every partition named."""
    return AlterPartitionReassignmentsResponse(
        throttle_time_ms=0, allow_replication_factor_change=True, error_code=code, error_message=message,
        responses=[AlterPartitionReassignmentsResponse.ReassignableTopicResponse(name=t.name, partitions=[
            AlterPartitionReassignmentsResponse.ReassignablePartitionResponse(
                partition_index=p.partition_index, error_code=code, error_message=message)
            for p in t.partitions]) for t in request.body.topics])


HANDLER = ApiHandler(API_KEY, handle, error_response)
