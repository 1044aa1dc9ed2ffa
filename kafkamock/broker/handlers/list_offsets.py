"""ListOffsets (2): earliest, latest, max-timestamp and by-timestamp offset lookups.

With READ_COMMITTED (v2+), "latest" is the last stable offset and a lookup by time finds nothing at or beyond it,
as Kafka's fetchOffsetForTimestamp with an isolation level. Each topic needs DESCRIBE, else its partitions are
TOPIC_AUTHORIZATION_FAILED."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import ListOffsetsRequest, ListOffsetsResponse

if TYPE_CHECKING:
    from kafkamock.broker.cluster import Partition
    from kafkamock.broker.core import Cluster, Request

API_KEY = 2
READ_COMMITTED = 1
LATEST, EARLIEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED, EARLIEST_PENDING_UPLOAD = -1, -2, -3, -4, -5, -6
# The first request version that may ask for each special timestamp (Kafka's ReplicaManager); any other negative
# timestamp, or one asked for at an older version, is UNSUPPORTED_VERSION.
SPECIAL_SINCE = {EARLIEST: 1, LATEST: 1, MAX_TIMESTAMP: 7, EARLIEST_LOCAL: 8, LATEST_TIERED: 9,
                 EARLIEST_PENDING_UPLOAD: 11}
PartitionResponse = ListOffsetsResponse.ListOffsetsPartitionResponse


def _lookup(cluster: Cluster, partition: Partition, timestamp: int, version: int, read_committed: bool = False
            ) -> tuple[int, int, int]:
    """(timestamp, offset, leader epoch) as Kafka's UnifiedLog.fetchOffsetByTimestamp answers (epoch -1: none)."""
    plog = partition.log
    limit = partition.producers.last_stable_offset(plog.high_watermark) if read_committed else plog.high_watermark
    if timestamp == LATEST:
        return -1, limit, partition.leader_epoch
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        return -1, plog.log_start_offset, partition.leader_epoch
    if timestamp in (LATEST_TIERED, EARLIEST_PENDING_UPLOAD):
        return -1, -1, -1  # no tiered storage here
    if timestamp == MAX_TIMESTAMP:
        found = plog.max_timestamp()
        return (found[1], found[0], plog.epoch_for_offset(found[0])) if found else (-1, -1, -1)
    found = plog.offset_for_timestamp(timestamp)
    return (found[1], found[0], plog.epoch_for_offset(found[0])) if found and found[0] < limit else (-1, -1, -1)


def handle(cluster: Cluster, request: Request[ListOffsetsRequest]) -> ListOffsetsResponse:
    body, version = request.body, request.version
    topics = []
    describable = cluster.auth.authorized(request, AclOperation.DESCRIBE, ResourceType.TOPIC,
                                         [t.name for t in body.topics])
    read_committed = version >= 2 and body.isolation_level == READ_COMMITTED
    for t in body.topics:
        results = []
        topic = cluster.metadata.topics.get(t.name)
        for p in t.partitions:
            code, timestamp, offset, epoch = ErrorCode.NONE, -1, -1, -1
            try:
                if t.name not in describable:
                    raise KafkaError(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                partition = cluster.lead(request, topic, p.partition_index, p.current_leader_epoch)
                if p.timestamp < 0 and version < SPECIAL_SINCE.get(p.timestamp, 2**15):
                    raise KafkaError(ErrorCode.UNSUPPORTED_VERSION)
                timestamp, offset, epoch = _lookup(cluster, partition, p.timestamp, version, read_committed)
                if version < 4:  # LeaderEpoch is a v4+ field (not ignorable): older versions must leave it -1
                    epoch = -1
            except KafkaError as exc:
                code = exc.code
            results.append(PartitionResponse(partition_index=p.partition_index, error_code=code, timestamp=timestamp,
                                             offset=offset, leader_epoch=epoch))
        topics.append(ListOffsetsResponse.ListOffsetsTopicResponse(name=t.name, partitions=results))
    return ListOffsetsResponse(throttle_time_ms=0, topics=topics)


def error_response(cluster: Cluster, request: Request[ListOffsetsRequest], code: ErrorCode,
                   message: str | None = None) -> ListOffsetsResponse:
    """ListOffsetsRequest.getErrorResponse: every requested partition with the error, unknown timestamp, offset and
    leader epoch."""
    return ListOffsetsResponse(throttle_time_ms=0, topics=[
        ListOffsetsResponse.ListOffsetsTopicResponse(name=t.name, partitions=[
            PartitionResponse(partition_index=p.partition_index, error_code=code, timestamp=-1, offset=-1,
                              leader_epoch=-1) for p in t.partitions])
        for t in request.body.topics])


HANDLER = ApiHandler(API_KEY, handle, error_response, partitioned=True)
