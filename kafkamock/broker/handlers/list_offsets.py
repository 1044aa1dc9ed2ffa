"""ListOffsets (2): earliest, latest, max-timestamp and by-timestamp offset lookups.

With READ_COMMITTED (v2+), "latest" is the last stable offset and a lookup by time finds nothing at or beyond it,
as Kafka's fetchOffsetForTimestamp with an isolation level. Each topic needs DESCRIBE, else its partitions are
TOPIC_AUTHORIZATION_FAILED."""

from __future__ import annotations

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError

API_KEY = 2
PARTITIONED = True
READ_COMMITTED = 1
LATEST, EARLIEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED, EARLIEST_PENDING_UPLOAD = -1, -2, -3, -4, -5, -6


def _lookup(broker, partition, timestamp: int, version: int, read_committed: bool = False) -> tuple[int, int]:
    plog = partition.log
    limit = partition.producers.last_stable_offset(plog.high_watermark) if read_committed else plog.high_watermark
    if timestamp == LATEST:
        return -1, limit
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        return -1, plog.log_start_offset
    if timestamp in (LATEST_TIERED, EARLIEST_PENDING_UPLOAD):
        return -1, -1  # no tiered storage here
    if timestamp == MAX_TIMESTAMP:
        found = plog.max_timestamp()
        return (found[1], found[0]) if found else (-1, -1)
    if timestamp < 0:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"unknown special timestamp {timestamp}")
    found = plog.offset_for_timestamp(timestamp)
    return (found[1], found[0]) if found and found[0] < limit else (-1, -1)


def handle(broker, request) -> dict:
    body, version = request.body, request.version
    topics = []
    describable = broker.authorized(request, AclOperation.DESCRIBE, ResourceType.TOPIC, [t.name for t in body.topics])
    for t in body.topics:
        results = []
        topic = broker.cluster.topics.get(t.name)
        for p in t.partitions:
            result = {"partition_index": p.partition_index, "error_code": ErrorCode.NONE, "timestamp": -1,
                      "offset": -1, "leader_epoch": -1}
            try:
                if t.name not in describable:
                    raise KafkaError(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                partition = broker.lead(request, topic, p.partition_index, p.current_leader_epoch)
                if p.timestamp == MAX_TIMESTAMP and version < 7:
                    raise KafkaError(ErrorCode.UNSUPPORTED_VERSION)
                timestamp, offset = _lookup(broker, partition, p.timestamp, version,
                                            version >= 2 and body.isolation_level == READ_COMMITTED)
                result.update(timestamp=timestamp, offset=offset)
                if version >= 4:  # LeaderEpoch is a v4+ field (not ignorable): older versions must leave it -1
                    result["leader_epoch"] = partition.leader_epoch
            except KafkaError as exc:
                result["error_code"] = exc.code
            results.append(result)
        topics.append({"name": t.name, "partitions": results})
    return {"throttle_time_ms": 0, "topics": topics}
