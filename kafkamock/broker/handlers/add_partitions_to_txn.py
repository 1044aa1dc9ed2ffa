"""AddPartitionsToTxn (24): partitions join a producer's transaction, which starts with the first of them.

v0-3 come from producers: one transaction, one top-level answer per partition. v4+ (KIP-890) batch several
transactions, each answered on its own, and may be verify-only (is the partition already in the transaction?),
which brokers use before a transaction's first write (a partition not in the transaction is TRANSACTION_ABORTABLE).
Any partition of an unknown topic fails the whole transaction: it gets UNKNOWN_TOPIC_OR_PARTITION and the others
OPERATION_NOT_ATTEMPTED, as Kafka answers. Results Kafka builds from a hash map (those, and verification's) come in
that map's order; the others in request order.
PRODUCER_FENCED is INVALID_PRODUCER_EPOCH for clients before v2.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.cluster import INTERNAL_TOPICS
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.broker.java_hash_order import (
    java_hash_order,
    java_string_hash,
    scala_mutable_hash_order,
    topic_partition_hash,
)
from kafkamock.broker.transactions.coordinator import fenced_code
from kafkamock.codec.messages import AddPartitionsToTxnRequest, AddPartitionsToTxnResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 24
FIRST_FENCED_VERSION = 2
_TopicResult = AddPartitionsToTxnResponse.AddPartitionsToTxnTopicResult
_PartitionResult = AddPartitionsToTxnResponse.AddPartitionsToTxnPartitionResult


def _results(topics: Iterable[AddPartitionsToTxnRequest.AddPartitionsToTxnTopic],
             codes: dict[tuple[str, int], ErrorCode]) -> list[AddPartitionsToTxnResponse.AddPartitionsToTxnTopicResult]:
    """The request's topics and partitions in request order (Kafka's errorResponseForTransaction)."""
    return [_TopicResult(name=t.name, results_by_partition=[
        _PartitionResult(partition_index=p, partition_error_code=codes[(t.name, p)]) for p in t.partitions])
        for t in topics]


def _hashed_results(codes: dict[tuple[str, int], ErrorCode], *, scala: bool = False
                    ) -> list[AddPartitionsToTxnResponse.AddPartitionsToTxnTopicResult]:
    """Per-partition results built from a map (Kafka's resultForTransaction): partitions as the map of
    TopicPartition iterates them (a Java HashMap, or with ``scala`` the Scala ``mutable.HashMap`` that
    concatenating KafkaApis' error maps makes), topics as a ``HashMap<String, ...>`` filled in that order does."""
    by_topic: dict[str, list[AddPartitionsToTxnResponse.AddPartitionsToTxnPartitionResult]] = {}
    order = (scala_mutable_hash_order(codes, topic_partition_hash) if scala
             else java_hash_order(codes, topic_partition_hash))
    for topic, partition in order:
        by_topic.setdefault(topic, []).append(_PartitionResult(partition_index=partition,
                                                               partition_error_code=codes[(topic, partition)]))
    return [_TopicResult(name=t, results_by_partition=by_topic[t]) for t in java_hash_order(by_topic, java_string_hash)]


def _one(cluster: Cluster, request: Request[AddPartitionsToTxnRequest], transactional_id: str, producer_id: int,
         epoch: int, topics: list[AddPartitionsToTxnRequest.AddPartitionsToTxnTopic], verify_only: bool
         ) -> list[AddPartitionsToTxnResponse.AddPartitionsToTxnTopicResult]:
    asked = [(t.name, p) for t in topics for p in t.partitions]
    if request.version <= 3:
        # From clients: WRITE on the transactional id, then on every topic (internal topics are not checked);
        # any refusal fails the whole transaction, the other partitions OPERATION_NOT_ATTEMPTED.
        if not cluster.auth.authorize(request, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactional_id or ""):
            return _results(topics, {key: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED for key in asked})
        names = {name for name, _ in asked if name not in INTERNAL_TOPICS}
        denied = names - cluster.auth.authorized(request, AclOperation.WRITE, ResourceType.TOPIC, names)
    else:
        denied = set()
    metadata = cluster.metadata
    unknown = {(name, p) for name, p in asked if name not in denied and (
        name not in metadata.topics or metadata.topics[name].partition_at(p) is None)}
    if denied or unknown:
        # Kafka concatenates Scala maps of the refused partitions, the unknown ones and the rest: iterated by hash
        codes = {key: ErrorCode.TOPIC_AUTHORIZATION_FAILED for key in asked if key[0] in denied}
        codes.update({key: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION for key in asked if key in unknown})
        codes.update({key: ErrorCode.OPERATION_NOT_ATTEMPTED for key in asked if key not in codes})
        return _hashed_results(codes, scala=True)
    coordinator = cluster.transactions
    try:
        if not transactional_id:
            raise KafkaError(ErrorCode.INVALID_REQUEST)
        coordinator.check_coordinator(request, transactional_id)
    except KafkaError as exc:
        codes = {key: exc.code for key in asked}
        return _hashed_results(codes) if verify_only else _results(topics, codes)
    if verify_only:
        return _hashed_results({key: coordinator.verify_partition(transactional_id, producer_id, epoch, *key)
                                for key in asked})
    # v4+ come from brokers adding a KIP-890 part 2 client's partitions (transaction version 2)
    code = coordinator.add_partitions(transactional_id, producer_id, epoch, asked,
                                      client_version=2 if request.version >= 4 else 0)
    if code == ErrorCode.PRODUCER_FENCED:
        code = fenced_code(request.version, FIRST_FENCED_VERSION)
    return _results(topics, {key: code for key in asked})


def handle(cluster: Cluster, request: Request[AddPartitionsToTxnRequest]) -> AddPartitionsToTxnResponse:
    body, version = request.body, request.version
    if version >= 4:   # batched, from brokers only
        cluster.auth.require_cluster(request, AclOperation.CLUSTER_ACTION)
    if version <= 3:
        return AddPartitionsToTxnResponse(throttle_time_ms=0, results_by_topic_v3_and_below=_one(
            cluster, request, body.v3_and_below_transactional_id, body.v3_and_below_producer_id,
            body.v3_and_below_producer_epoch, body.v3_and_below_topics, False))
    results = [AddPartitionsToTxnResponse.AddPartitionsToTxnResult(
        transactional_id=t.transactional_id,
        topic_results=_one(cluster, request, t.transactional_id, t.producer_id, t.producer_epoch, t.topics,
                           t.verify_only))
        for t in body.transactions]
    return AddPartitionsToTxnResponse(throttle_time_ms=0, error_code=ErrorCode.NONE, results_by_transaction=results)


def error_response(cluster: Cluster, request: Request[AddPartitionsToTxnRequest], code: ErrorCode,
                   message: str | None = None) -> AddPartitionsToTxnResponse:
    body = request.body
    if request.version <= 3:
        topics = body.v3_and_below_topics
        return AddPartitionsToTxnResponse(throttle_time_ms=0, results_by_topic_v3_and_below=_results(
            topics, {(t.name, p): code for t in topics for p in t.partitions}))
    return AddPartitionsToTxnResponse(throttle_time_ms=0, error_code=code, results_by_transaction=[])


HANDLER = ApiHandler(API_KEY, handle, error_response)
