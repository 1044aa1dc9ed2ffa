"""WriteTxnMarkers (27): write COMMIT or ABORT markers into partitions, as a transaction coordinator asks a
partition leader to (tools such as kafka-transactions.sh use it to abort a hanging transaction). Each partition
must be led here; a marker older than the producer's epoch is INVALID_PRODUCER_EPOCH (v2's transaction version 2
markers must be newer than it), one from an older coordinator epoch TRANSACTION_COORDINATOR_FENCED."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import WriteTxnMarkersRequest, WriteTxnMarkersResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 27


Result = WriteTxnMarkersResponse.WritableTxnMarkerResult
TopicResult = WriteTxnMarkersResponse.WritableTxnMarkerTopicResult
PartitionResult = WriteTxnMarkersResponse.WritableTxnMarkerPartitionResult


def handle(cluster: Cluster, request: Request[WriteTxnMarkersRequest]) -> WriteTxnMarkersResponse:
    # from transaction coordinators: ALTER on the cluster, else CLUSTER_ACTION (else the whole request fails)
    if not cluster.auth.authorize(request, AclOperation.ALTER, ResourceType.CLUSTER):
        cluster.auth.require_cluster(request, AclOperation.CLUSTER_ACTION)
    markers: list[Result] = []
    for marker in request.body.markers:
        topics: list[TopicResult] = []
        for t in marker.topics:
            topic = cluster.metadata.topics.get(t.name)
            results: list[PartitionResult] = []
            for index in t.partition_indexes:
                code = ErrorCode.NONE
                try:
                    partition = cluster.lead(request, topic, index)
                    cluster.transactions.write_marker(partition, marker.producer_id, marker.producer_epoch,
                                                     marker.transaction_result, marker.coordinator_epoch,
                                                     marker.transaction_version if request.version >= 2 else 0)
                except KafkaError as exc:
                    code = exc.code
                results.append(PartitionResult(partition_index=index, error_code=code))
            topics.append(TopicResult(name=t.name, partitions=results))
        markers.append(Result(producer_id=marker.producer_id, topics=topics))
    return WriteTxnMarkersResponse(markers=markers)


def error_response(cluster: Cluster, request: Request[WriteTxnMarkersRequest], code: ErrorCode,
                   message: str | None = None) -> WriteTxnMarkersResponse:
    """Every partition of every marker answered with ``code`` (WriteTxnMarkersRequest.getErrorResponse)."""
    return WriteTxnMarkersResponse(markers=[Result(producer_id=m.producer_id, topics=[
        TopicResult(name=t.name, partitions=[PartitionResult(partition_index=i, error_code=code)
                                             for i in t.partition_indexes])
        for t in m.topics]) for m in request.body.markers])


HANDLER = ApiHandler(API_KEY, handle, error_response, partitioned=True)
