"""OffsetForLeaderEpoch (23): the end offset of a leader epoch, for consumers checking for log truncation (KIP-320).

Kafka answers from its leader-epoch cache (LeaderEpochFileCache.endOffsetFor), a list of (epoch, start offset)
entries. The partition's log keeps that cache (``PartitionLog.leader_epochs``, persisted as
``leader-epoch-checkpoint``): an epoch starts at the log end when a leader is elected in it and when a batch is
first appended in it, and the entry in force at the log start offset moves up with it. Then, as Kafka:

- the current (latest) epoch ends at the log end offset;
- an older epoch ends where the next known epoch starts, answered with the largest known epoch not above it
  (or the requested epoch itself when none is known below it);
- an epoch above every known one, or -1, is UNDEFINED: leader epoch -1 and end offset -1, without an error.

``current_leader_epoch`` (-1: not given) fences the caller as Fetch does: older is FENCED_LEADER_EPOCH, newer is
UNKNOWN_LEADER_EPOCH. Unknown partitions are UNKNOWN_TOPIC_OR_PARTITION, others' NOT_LEADER_OR_FOLLOWER.
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse

if TYPE_CHECKING:
    from kafkamock.broker.cluster import Partition, Topic
    from kafkamock.broker.core import Cluster, Request

API_KEY = 23
UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1
EpochEndOffset = OffsetForLeaderEpochResponse.EpochEndOffset
TopicResult = OffsetForLeaderEpochResponse.OffsetForLeaderTopicResult


def end_offset_for(partition: Partition, requested: int) -> tuple[int, int]:
    """(leader epoch, end offset) for ``requested``, as LeaderEpochFileCache.endOffsetFor answers."""
    entries = partition.log.leader_epochs
    if requested == UNDEFINED_EPOCH or not entries:
        return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
    if entries[-1][0] == requested:
        return requested, partition.log.log_end_offset
    epochs = [epoch for epoch, _ in entries]
    higher = bisect.bisect_right(epochs, requested)
    if higher == len(entries):
        return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
    if higher == 0:  # older than every known epoch: the data is gone, resume where the first known one starts
        return requested, entries[0][1]
    return entries[higher - 1][0], entries[higher][1]


def _answer(cluster: Cluster, request: Request[OffsetForLeaderEpochRequest], topic: Topic | None, index: int,
            current_leader_epoch: int, leader_epoch: int) -> tuple[int, int]:
    return end_offset_for(cluster.lead(request, topic, index, current_leader_epoch), leader_epoch)


def handle(cluster: Cluster, request: Request[OffsetForLeaderEpochRequest]) -> OffsetForLeaderEpochResponse:
    topics = []
    names = [t.topic for t in request.body.topics]
    # Once inter-broker only (CLUSTER_ACTION); since KIP-320 consumers ask too, with DESCRIBE on the topic.
    allowed = set(names) if cluster.auth.authorize(request, AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER) else \
        cluster.auth.authorized(request, AclOperation.DESCRIBE, ResourceType.TOPIC, names)
    for t in request.body.topics:
        topic = cluster.metadata.topics.get(t.topic)
        results = []
        for p in t.partitions:
            code, leader_epoch, end_offset = ErrorCode.NONE, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
            try:
                if t.topic not in allowed:
                    raise KafkaError(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                leader_epoch, end_offset = _answer(cluster, request, topic, p.partition, p.current_leader_epoch,
                                                   p.leader_epoch)
            except KafkaError as exc:
                code = exc.code
            results.append(EpochEndOffset(error_code=code, partition=p.partition, leader_epoch=leader_epoch,
                                          end_offset=end_offset))
        topics.append(TopicResult(topic=t.topic, partitions=results))
    return OffsetForLeaderEpochResponse(throttle_time_ms=0, topics=topics)


def error_response(cluster: Cluster, request: Request[OffsetForLeaderEpochRequest], code: ErrorCode,
                   message: str | None = None) -> OffsetForLeaderEpochResponse:
    """OffsetsForLeaderEpochRequest.getErrorResponse: every requested partition with the error, no epoch, no
    end offset."""
    return OffsetForLeaderEpochResponse(throttle_time_ms=0, topics=[
        TopicResult(topic=t.topic, partitions=[
            EpochEndOffset(partition=p.partition, error_code=code, leader_epoch=UNDEFINED_EPOCH,
                           end_offset=UNDEFINED_EPOCH_OFFSET) for p in t.partitions])
        for t in request.body.topics])


HANDLER = ApiHandler(API_KEY, handle, error_response, partitioned=True)
