"""OffsetForLeaderEpoch (23): the end offset of a leader epoch, for consumers checking for log truncation (KIP-320).

Kafka answers from its leader-epoch cache (LeaderEpochFileCache.endOffsetFor), a list of (epoch, start offset)
entries. Here the cache is read off the log itself: each stored batch carries the partition leader epoch it was
written under, the first batch of each epoch starts it, the entry below the log start offset is moved up to it
(as Kafka's truncateFromStart does), and the partition's current epoch starts at the log end if nothing was
written under it yet (Kafka records that when a broker becomes leader). Then, as Kafka:

- the current (latest) epoch ends at the log end offset;
- an older epoch ends where the next known epoch starts, answered with the largest known epoch not above it
  (or the requested epoch itself when none is known below it);
- an epoch above every known one, or -1, is UNDEFINED: leader epoch -1 and end offset -1, without an error.

``current_leader_epoch`` (-1: not given) fences the caller as Fetch does: older is FENCED_LEADER_EPOCH, newer is
UNKNOWN_LEADER_EPOCH. Unknown partitions are UNKNOWN_TOPIC_OR_PARTITION, others' NOT_LEADER_OR_FOLLOWER.
"""

from __future__ import annotations

import bisect
import struct

from kafkamock.broker.errors import ErrorCode, KafkaError

API_KEY = 23
UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1
_EPOCH_AND_MAGIC = struct.Struct(">ib")  # partitionLeaderEpoch (bytes 12-15) and magic (byte 16) of a batch header


def epoch_starts(partition) -> list[tuple[int, int]]:
    """The partition's leader-epoch cache: (epoch, start offset) by increasing epoch."""
    plog = partition.log
    entries: list[tuple[int, int]] = []
    for stored in plog.batches_from(plog.log_start_offset):
        epoch, magic = _EPOCH_AND_MAGIC.unpack_from(stored.data, 12)
        if magic >= 2 and epoch >= 0 and (not entries or epoch > entries[-1][0]):
            entries.append((epoch, stored.base_offset))
    if entries and entries[0][1] < plog.log_start_offset:
        entries[0] = (entries[0][0], plog.log_start_offset)
    if not entries or partition.leader_epoch > entries[-1][0]:
        entries.append((partition.leader_epoch, plog.log_end_offset))
    return entries


def end_offset_for(partition, requested: int) -> tuple[int, int]:
    """(leader epoch, end offset) for ``requested``, as LeaderEpochFileCache.endOffsetFor answers."""
    entries = epoch_starts(partition)
    if requested == UNDEFINED_EPOCH:
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


def _answer(broker, topic, index: int, current_leader_epoch: int, leader_epoch: int) -> tuple[int, int]:
    if topic is None or not 0 <= index < len(topic.partitions):
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    partition = topic.partitions[index]
    if current_leader_epoch != -1:
        if current_leader_epoch < partition.leader_epoch:
            raise KafkaError(ErrorCode.FENCED_LEADER_EPOCH)
        if current_leader_epoch > partition.leader_epoch:
            raise KafkaError(ErrorCode.UNKNOWN_LEADER_EPOCH)
    if partition.leader_id != broker.node_id:
        raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    return end_offset_for(partition, leader_epoch)


def handle(broker, request) -> dict:
    topics = []
    for t in request.body.topics:
        topic = broker.cluster.topics.get(t.topic)
        results = []
        for p in t.partitions:
            result = {"error_code": ErrorCode.NONE, "partition": p.partition, "leader_epoch": UNDEFINED_EPOCH,
                      "end_offset": UNDEFINED_EPOCH_OFFSET}
            try:
                result["leader_epoch"], result["end_offset"] = _answer(
                    broker, topic, p.partition, p.current_leader_epoch, p.leader_epoch)
            except KafkaError as exc:
                result["error_code"] = exc.code
            results.append(result)
        topics.append({"topic": t.topic, "partitions": results})
    return {"throttle_time_ms": 0, "topics": topics}
