"""WriteTxnMarkers (27): write COMMIT or ABORT markers into partitions, as a transaction coordinator asks a
partition leader to (tools such as kafka-transactions.sh use it to abort a hanging transaction). Each partition
must be led here; a marker older than the producer's epoch is INVALID_PRODUCER_EPOCH, one from an older coordinator
epoch TRANSACTION_COORDINATOR_FENCED."""

from __future__ import annotations

from kafkamock.broker.errors import ErrorCode, KafkaError

API_KEY = 27
PARTITIONED = True


def handle(broker, request) -> dict:
    markers = []
    for marker in request.body.markers:
        topics = []
        for t in marker.topics:
            topic = broker.cluster.topics.get(t.name)
            results = []
            for index in t.partition_indexes:
                code = ErrorCode.NONE
                try:
                    partition = broker.lead(request, topic, index)
                    broker.transactions.write_marker(partition, marker.producer_id, marker.producer_epoch,
                                                     marker.transaction_result, marker.coordinator_epoch)
                except KafkaError as exc:
                    code = exc.code
                results.append({"partition_index": index, "error_code": code})
            topics.append({"name": t.name, "partitions": results})
        markers.append({"producer_id": marker.producer_id, "topics": topics})
    return {"markers": markers}
