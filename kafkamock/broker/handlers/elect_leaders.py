"""ElectLeaders (43): elect the preferred replica, or (unclean) any live replica, as leader of partitions
(Admin.electLeaders).

As Kafka's controller (ControllerApis.handleElectLeaders, ReplicationControlManager.electLeaders), with ALTER on
the cluster. ``election_type`` (v1+; v0 is preferred) 0 is PREFERRED, 1 UNCLEAN, anything else fails the whole
request: INVALID_REQUEST, "Unknown election type N", for every partition named. An empty partition list is
answered with nothing at all; a null one means every partition, and then only the partitions that needed an
election are listed (every topic is, even with none), in the order of the controller's hash tables (its
``TimelineHashMap`` of a topic's partitions; topics in creation order). Per partition: an unknown topic or partition is
UNKNOWN_TOPIC_OR_PARTITION ("No such topic as T", "No such partition as T-P"); a preferred election where the
preferred replica leads, or an unclean one where the partition has a leader, ELECTION_NOT_NEEDED; a preferred
replica out of sync or stopped PREFERRED_LEADER_NOT_AVAILABLE; no live replica for an unclean election
ELIGIBLE_LEADERS_NOT_AVAILABLE. A successful election moves leadership at once with a leader-epoch bump; as in
Kafka, every entry is judged against the partitions as they were before the request, so a partition named twice
is elected twice (two epoch bumps).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation
from kafkamock.broker.errors import ErrorCode
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.broker.java_hash_order import timeline_hash_order
from kafkamock.codec.messages import ElectLeadersRequest, ElectLeadersResponse
from kafkamock.errors import default_message

if TYPE_CHECKING:
    from kafkamock.broker.cluster import Partition
    from kafkamock.broker.core import Cluster, Request

API_KEY = 43
PREFERRED, UNCLEAN = 0, 1
Result = ElectLeadersResponse.PartitionResult


def _judge(cluster: Cluster, topic_name: str, index: int, election_type: int
           ) -> tuple[ErrorCode, str | None, Partition | None, int]:
    """(error code, message, partition, new leader) for one entry; the state is not changed."""
    topic = cluster.metadata.topics.get(topic_name)
    if topic is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {topic_name}", None, -1
    partition = topic.partition_at(index)
    if partition is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {topic_name}-{index}", None, -1
    judge = cluster.metadata.preferred_election if election_type == PREFERRED else cluster.metadata.unclean_election
    code, leader = judge(partition)
    return code, default_message(code) if code != ErrorCode.NONE else None, partition, leader


def handle(cluster: Cluster, request: Request[ElectLeadersRequest]) -> ElectLeadersResponse:
    cluster.auth.require_cluster(request, AclOperation.ALTER)
    body = request.body
    election_type = body.election_type if request.version >= 1 else PREFERRED
    if body.topic_partitions is not None and not body.topic_partitions:
        return ElectLeadersResponse(throttle_time_ms=0, error_code=ErrorCode.NONE, replica_election_results=[])
    if election_type not in (PREFERRED, UNCLEAN):
        return error_response(cluster, request, ErrorCode.INVALID_REQUEST, f"Unknown election type {election_type}")
    results: list[ElectLeadersResponse.ReplicaElectionResult] = []
    elected: list[tuple[Partition, int]] = []
    if body.topic_partitions is None:
        for topic in list(cluster.metadata.topics.values()):
            partitions = []
            for p in (topic.partitions[i] for i in timeline_hash_order(range(len(topic.partitions)), int)):
                code, message, partition, leader = _judge(cluster, topic.name, p.index, election_type)
                if code != ErrorCode.ELECTION_NOT_NEEDED:
                    partitions.append(Result(partition_id=p.index, error_code=code, error_message=message))
                if code == ErrorCode.NONE and partition is not None:
                    elected.append((partition, leader))
            results.append(ElectLeadersResponse.ReplicaElectionResult(topic=topic.name, partition_result=partitions))
    else:
        for wanted in body.topic_partitions:
            partitions = []
            for index in wanted.partitions:
                code, message, partition, leader = _judge(cluster, wanted.topic, index, election_type)
                partitions.append(Result(partition_id=index, error_code=code, error_message=message))
                if code == ErrorCode.NONE and partition is not None:
                    elected.append((partition, leader))
            results.append(ElectLeadersResponse.ReplicaElectionResult(topic=wanted.topic, partition_result=partitions))
    for partition, leader in elected:
        cluster.elect_leader(partition, leader)
    return ElectLeadersResponse(throttle_time_ms=0, error_code=ErrorCode.NONE, replica_election_results=results)


def error_response(cluster: Cluster, request: Request[ElectLeadersRequest], code: ErrorCode,
                   message: str | None = None) -> ElectLeadersResponse:
    """Kafka's getErrorResponse: the error at the top and for every partition named."""
    topics = request.body.topic_partitions or []
    top = code if request.version >= 1 else ErrorCode.NONE      # v0 has no top-level error code
    return ElectLeadersResponse(throttle_time_ms=0, error_code=top, replica_election_results=[
        ElectLeadersResponse.ReplicaElectionResult(topic=t.topic, partition_result=[
            Result(partition_id=p, error_code=code, error_message=message) for p in t.partitions]) for t in topics])


HANDLER = ApiHandler(API_KEY, handle, error_response)
