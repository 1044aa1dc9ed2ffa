"""DescribeProducers (61), KIP-664: the producers with state on each partition (id, epoch, last sequence and
timestamp, coordinator epoch, and the first offset of an open transaction), from the partition's leader."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.cluster import validate_topic_name
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import DescribeProducersRequest, DescribeProducersResponse

if TYPE_CHECKING:
    from kafkamock.broker.cluster import Partition, Topic
    from kafkamock.broker.core import Cluster, Request

API_KEY = 61
PartitionResponse = DescribeProducersResponse.PartitionResponse


def _producers(partition: Partition) -> list[DescribeProducersResponse.ProducerState]:
    producers = partition.producers
    return [DescribeProducersResponse.ProducerState(
                producer_id=pid, producer_epoch=e.epoch, last_sequence=e.last_seq, last_timestamp=e.last_timestamp,
                coordinator_epoch=e.coordinator_epoch,
                current_txn_start_offset=-1 if e.txn_first_offset is None else e.txn_first_offset)
            for pid, e in producers.entries.items()]


def _topic_error(topic_name: str, readable: set[str], topics: dict[str, Topic]) -> tuple[ErrorCode, str | None] | None:
    """A whole topic's error, with the message Kafka's ApiError gives it (its exception's, else the error's own)."""
    try:
        validate_topic_name(topic_name)
    except KafkaError as exc:
        return exc.code, exc.message
    if topic_name not in readable:
        return ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed."
    if topic_name not in topics:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition."
    return None


def handle(cluster: Cluster, request: Request[DescribeProducersRequest]) -> DescribeProducersResponse:
    """Kafka's handleDescribeProducersRequest: a topic's error (invalid name, unauthorized, unknown) answers each of
    its partitions with a message; a partition's own (not here, not led here) comes without one."""
    topics: list[DescribeProducersResponse.TopicResponse] = []
    readable = cluster.auth.authorized(request, AclOperation.READ, ResourceType.TOPIC, [t.name for t in request.body.topics])
    for t in request.body.topics:
        topic = cluster.metadata.topics.get(t.name)
        failed = _topic_error(t.name, readable, cluster.metadata.topics)
        partitions: list[PartitionResponse] = []
        for index in t.partition_indexes:
            answer = PartitionResponse(partition_index=index, error_code=ErrorCode.NONE, error_message=None,
                                       active_producers=[])
            if failed is not None:
                answer.error_code, answer.error_message = failed
            else:
                try:
                    answer.active_producers = _producers(cluster.lead(request, topic, index))
                except KafkaError as exc:
                    answer.error_code = exc.code
            partitions.append(answer)
        topics.append(DescribeProducersResponse.TopicResponse(name=t.name, partitions=partitions))
    return DescribeProducersResponse(throttle_time_ms=0, topics=topics)


def error_response(cluster: Cluster, request: Request[DescribeProducersRequest], code: ErrorCode,
                   message: str | None = None) -> DescribeProducersResponse:
    """DescribeProducersRequest.getErrorResponse: every requested partition with the error and no producers."""
    return DescribeProducersResponse(throttle_time_ms=0, topics=[
        DescribeProducersResponse.TopicResponse(name=t.name, partitions=[
            PartitionResponse(partition_index=i, error_code=code, error_message=message, active_producers=[])
            for i in t.partition_indexes])
        for t in request.body.topics])


HANDLER = ApiHandler(API_KEY, handle, error_response, partitioned=True)
