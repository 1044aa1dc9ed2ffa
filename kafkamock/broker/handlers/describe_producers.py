"""DescribeProducers (61), KIP-664: the producers with state on each partition (id, epoch, last sequence and
timestamp, coordinator epoch, and the first offset of an open transaction), from the partition's leader."""

from __future__ import annotations

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError

API_KEY = 61
PARTITIONED = True


def _producers(partition) -> list[dict]:
    producers = partition.producers
    return [{"producer_id": pid, "producer_epoch": e.epoch, "last_sequence": e.last_seq,
             "last_timestamp": e.last_timestamp, "coordinator_epoch": e.coordinator_epoch,
             "current_txn_start_offset": -1 if e.txn_first_offset is None else e.txn_first_offset}
            for pid, e in producers.entries.items()]


def handle(broker, request) -> dict:
    topics = []
    readable = broker.authorized(request, AclOperation.READ, ResourceType.TOPIC, [t.name for t in request.body.topics])
    for t in request.body.topics:
        topic = broker.cluster.topics.get(t.name)
        partitions = []
        for index in t.partition_indexes:
            answer = {"partition_index": index, "error_code": ErrorCode.NONE, "error_message": None,
                      "active_producers": []}
            try:
                if t.name not in readable:
                    raise KafkaError(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                answer["active_producers"] = _producers(broker.lead(request, topic, index))
            except KafkaError as exc:
                answer.update(error_code=exc.code, error_message=exc.message)
            partitions.append(answer)
        topics.append({"name": t.name, "partitions": partitions})
    return {"throttle_time_ms": 0, "topics": topics}
