"""DeleteRecords (21): move a partition's log start offset forward ("delete records before offset N").

As Kafka's leader does it (Partition.deleteRecordsOnLeader, UnifiedLog.maybeIncrementLogStartOffset): offset -1
means the high watermark; a negative offset, or one beyond the high watermark, is OFFSET_OUT_OF_RANGE; a topic
whose ``cleanup.policy`` lacks ``delete`` refuses with POLICY_VIOLATION; an offset at or below the current log
start changes nothing. The answer is the partition's low watermark (its log start offset), or -1 on error.
Fetches below the new log start offset then fail with OFFSET_OUT_OF_RANGE.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import DeleteRecordsRequest, DeleteRecordsResponse

if TYPE_CHECKING:
    from kafkamock.broker.cluster import Topic
    from kafkamock.broker.core import Cluster, Request

API_KEY = 21
HIGH_WATERMARK = -1
INVALID_LOW_WATERMARK = -1


def _delete(cluster: Cluster, request: Request[DeleteRecordsRequest], topic: Topic | None, index: int, offset: int) -> int:
    partition = cluster.lead(request, topic, index)
    assert topic is not None        # lead refused an unknown topic
    if "delete" not in str(cluster.topic_config(topic, "cleanup.policy", request.node)).split(","):
        raise KafkaError(ErrorCode.POLICY_VIOLATION,
                         f"Records of partition {topic.name}-{index} can not be deleted due to the configured policy")
    plog = partition.log
    target = plog.high_watermark if offset == HIGH_WATERMARK else offset
    if target < 0:
        raise KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE, f"The offset {target} for partition {topic.name}-{index} is "
                                                        "not valid")
    if target > plog.high_watermark:
        raise KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE,
                         f"Cannot increment the log start offset to {target} of partition {topic.name}-{index} since "
                         f"it is larger than the high watermark {plog.high_watermark}")
    plog.delete_before(target, cluster.now_ms())
    cluster.share.log_start_moved(partition, topic)
    return plog.log_start_offset


def handle(cluster: Cluster, request: Request[DeleteRecordsRequest]) -> DeleteRecordsResponse:
    topics = []
    deletable = cluster.auth.authorized(request, AclOperation.DELETE, ResourceType.TOPIC,
                                       [t.name for t in request.body.topics])
    for t in request.body.topics:
        topic = cluster.metadata.topics.get(t.name)
        results = []
        for p in t.partitions:
            low_watermark, code = INVALID_LOW_WATERMARK, ErrorCode.NONE
            try:
                if t.name not in deletable:
                    raise KafkaError(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                low_watermark = _delete(cluster, request, topic, p.partition_index, p.offset)
            except KafkaError as exc:
                code = exc.code
            results.append(DeleteRecordsResponse.DeleteRecordsPartitionResult(
                partition_index=p.partition_index, low_watermark=low_watermark, error_code=code))
        topics.append(DeleteRecordsResponse.DeleteRecordsTopicResult(name=t.name, partitions=results))
    return DeleteRecordsResponse(throttle_time_ms=0, topics=topics)


def error_response(cluster: Cluster, request: Request[DeleteRecordsRequest], code: ErrorCode,
                   message: str | None = None) -> DeleteRecordsResponse:
    """DeleteRecordsRequest.getErrorResponse: every requested partition with the error and no low watermark."""
    return DeleteRecordsResponse(throttle_time_ms=0, topics=[
        DeleteRecordsResponse.DeleteRecordsTopicResult(name=t.name, partitions=[
            DeleteRecordsResponse.DeleteRecordsPartitionResult(partition_index=p.partition_index,
                                                               low_watermark=INVALID_LOW_WATERMARK, error_code=code)
            for p in t.partitions]) for t in request.body.topics])


HANDLER = ApiHandler(API_KEY, handle, error_response, partitioned=True)
