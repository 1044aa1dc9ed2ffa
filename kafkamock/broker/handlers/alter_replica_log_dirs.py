"""AlterReplicaLogDirs (34): move replicas of the node the request arrived on to another of its log directories
(Admin.alterReplicaLogDirs).

As Kafka's KafkaApis.handleAlterReplicaLogDirsRequest and ReplicaManager.alterReplicaLogDirs, with ALTER on the
cluster (else CLUSTER_AUTHORIZATION_FAILED for every partition). A partition named twice goes to the last
directory named for it. Each partition, in order: a topic name too long for the future log's directory name
(over 255 characters) is INVALID_TOPIC_EXCEPTION; a path that is not the node's log directory, as an absolute
path, LOG_DIR_NOT_FOUND; a cordoned directory INVALID_REPLICA_ASSIGNMENT; an unknown topic or partition
UNKNOWN_TOPIC_OR_PARTITION; a partition with no replica on the node REPLICA_NOT_AVAILABLE. A node has one log
directory (``describe_log_dirs.log_dir``), so a replica is already where it is asked to be: nothing moves.

Kafka builds the answer from hash maps: the partitions in a ``java.util.HashMap``'s order, grouped into topics in
the order of the Scala ``immutable.HashMap`` that ``groupBy`` makes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.broker.handlers.describe_log_dirs import cordoned, log_dir
from kafkamock.broker.java_hash_order import (
    java_hash_order,
    java_string_hash,
    scala_hash_order,
    topic_partition_hash,
)
from kafkamock.codec.messages import AlterReplicaLogDirsRequest, AlterReplicaLogDirsResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 34
FUTURE_DIR_SUFFIX = len(".") + 32 + len("-future")    # "<topic>-<partition>.<uuid without dashes>-future"


def _error(cluster: Cluster, request: Request[AlterReplicaLogDirsRequest], path: str, topic: str, index: int
           ) -> ErrorCode:
    if len(f"{topic}-{index}") + FUTURE_DIR_SUFFIX > 255:
        return ErrorCode.INVALID_TOPIC_EXCEPTION
    if path != log_dir(cluster):
        return ErrorCode.LOG_DIR_NOT_FOUND
    if cordoned(cluster, request, path):
        return ErrorCode.INVALID_REPLICA_ASSIGNMENT
    t = cluster.metadata.topics.get(topic)
    partition = None if t is None else t.partition_at(index)
    if partition is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    node_id = request.node.node_id if request.node is not None else cluster.node_id
    if node_id not in partition.replicas:
        return ErrorCode.REPLICA_NOT_AVAILABLE
    return ErrorCode.NONE


def _answer(dirs: dict[tuple[str, int], ErrorCode]) -> AlterReplicaLogDirsResponse:
    """Results in Kafka's order for ``{(topic, partition): error code}``."""
    order = java_hash_order(dirs, topic_partition_hash)
    results: list[AlterReplicaLogDirsResponse.AlterReplicaLogDirTopicResult] = []
    for topic in scala_hash_order([t for t, _ in order], java_string_hash):
        keys = java_hash_order([k for k in order if k[0] == topic], topic_partition_hash)
        results.append(AlterReplicaLogDirsResponse.AlterReplicaLogDirTopicResult(topic_name=topic, partitions=[
            AlterReplicaLogDirsResponse.AlterReplicaLogDirPartitionResult(partition_index=p, error_code=dirs[(t, p)])
            for t, p in keys]))
    return AlterReplicaLogDirsResponse(throttle_time_ms=0, results=results)


def handle(cluster: Cluster, request: Request[AlterReplicaLogDirsRequest]) -> AlterReplicaLogDirsResponse:
    if not cluster.auth.authorize(request, AclOperation.ALTER, ResourceType.CLUSTER):
        return error_response(cluster, request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    targets: dict[tuple[str, int], str] = {}
    for d in request.body.dirs:
        for t in d.topics:
            for p in t.partitions:
                targets[(t.name, p)] = d.path
    return _answer({(topic, index): _error(cluster, request, path, topic, index)
                    for (topic, index), path in targets.items()})


def error_response(cluster: Cluster, request: Request[AlterReplicaLogDirsRequest], code: ErrorCode,
                   message: str | None = None) -> AlterReplicaLogDirsResponse:
    """Kafka's getErrorResponse: every partition named, in request order, with the error."""
    return AlterReplicaLogDirsResponse(throttle_time_ms=0, results=[
        AlterReplicaLogDirsResponse.AlterReplicaLogDirTopicResult(topic_name=t.name, partitions=[
            AlterReplicaLogDirsResponse.AlterReplicaLogDirPartitionResult(partition_index=p, error_code=code)
            for p in t.partitions])
        for d in request.body.dirs for t in d.topics])


HANDLER = ApiHandler(API_KEY, handle, error_response)
