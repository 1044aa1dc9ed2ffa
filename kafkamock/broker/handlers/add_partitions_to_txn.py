"""AddPartitionsToTxn (24): partitions join a producer's transaction, which starts with the first of them.

v0-3 come from producers: one transaction, one top-level answer per partition. v4+ (KIP-890) batch several
transactions, each answered on its own, and may be verify-only (is the partition already in the transaction?),
which brokers use before a transaction's first write. Any partition of an unknown topic fails the whole
transaction: it gets UNKNOWN_TOPIC_OR_PARTITION and the others OPERATION_NOT_ATTEMPTED, as Kafka answers.
PRODUCER_FENCED is INVALID_PRODUCER_EPOCH for clients before v2.
"""

from __future__ import annotations

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.cluster import INTERNAL_TOPICS
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.transactions.coordinator import fenced_code

API_KEY = 24
FIRST_FENCED_VERSION = 2


def _results(topics, codes: dict[tuple[str, int], ErrorCode]) -> list[dict]:
    return [{"name": t.name, "results_by_partition": [{"partition_index": p, "partition_error_code":
                                                      codes[(t.name, p)]} for p in t.partitions]}
            for t in topics]


def _one(broker, request, transactional_id: str, producer_id: int, epoch: int, topics, verify_only: bool
         ) -> list[dict]:
    asked = [(t.name, p) for t in topics for p in t.partitions]
    if request.version <= 3:
        # From clients: WRITE on the transactional id, then on every topic (internal topics are not checked);
        # any refusal fails the whole transaction, the other partitions OPERATION_NOT_ATTEMPTED.
        if not broker.authorize(request, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactional_id or ""):
            return _results(topics, {key: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED for key in asked})
        names = {name for name, _ in asked if name not in INTERNAL_TOPICS}
        denied = names - broker.authorized(request, AclOperation.WRITE, ResourceType.TOPIC, names)
        if denied:
            return _results(topics, {key: ErrorCode.TOPIC_AUTHORIZATION_FAILED if key[0] in denied
                                     else ErrorCode.OPERATION_NOT_ATTEMPTED for key in asked})
    try:
        broker.transactions.check_coordinator(request, transactional_id or "")
    except KafkaError as exc:
        return _results(topics, {key: exc.code for key in asked})
    cluster = broker.cluster
    unknown = {(name, p) for name, p in asked
               if name not in cluster.topics or not 0 <= p < len(cluster.topics[name].partitions)}
    if unknown:
        return _results(topics, {key: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if key in unknown
                                 else ErrorCode.OPERATION_NOT_ATTEMPTED for key in asked})
    coordinator = broker.transactions
    if verify_only:
        codes = {key: coordinator.verify_partition(transactional_id, producer_id, epoch, *key) for key in asked}
    else:
        code = coordinator.add_partitions(transactional_id, producer_id, epoch, asked)
        codes = {key: code for key in asked}
    if request.version < FIRST_FENCED_VERSION:
        codes = {k: fenced_code(request.version, FIRST_FENCED_VERSION) if c == ErrorCode.PRODUCER_FENCED else c
                 for k, c in codes.items()}
    return _results(topics, codes)


def handle(broker, request) -> dict:
    body, version = request.body, request.version
    if version >= 4:   # batched, from brokers only
        broker.require_cluster(request, AclOperation.CLUSTER_ACTION)
    if version <= 3:
        return {"throttle_time_ms": 0, "results_by_topic_v3_and_below": _one(
            broker, request, body.v3_and_below_transactional_id, body.v3_and_below_producer_id,
            body.v3_and_below_producer_epoch, body.v3_and_below_topics, False)}
    results = [{"transactional_id": t.transactional_id, "topic_results": _one(
        broker, request, t.transactional_id, t.producer_id, t.producer_epoch, t.topics, t.verify_only)}
        for t in body.transactions]
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "results_by_transaction": results}


def error_response(broker, request, code: ErrorCode) -> dict:
    body = request.body
    if request.version <= 3:
        topics = body.v3_and_below_topics
        return {"throttle_time_ms": 0, "results_by_topic_v3_and_below": _results(
            topics, {(t.name, p): code for t in topics for p in t.partitions})}
    return {"throttle_time_ms": 0, "error_code": code, "results_by_transaction": []}
