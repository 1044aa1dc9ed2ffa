"""DescribeTransactions (65), KIP-664, the shipped form of KIP-360's DescribeTransactionState: each transactional
id's state, producer id and epoch, timeout, start time and partitions, from its coordinator (NOT_COORDINATOR
elsewhere, TRANSACTIONAL_ID_NOT_FOUND when unknown, INVALID_REQUEST for an empty id). An id answered with an error
carries zeros, as Kafka leaves the other fields at their defaults. Partitions are listed as Kafka's
``HashSet<TopicPartition>`` iterates them, grouped by topic in order of first appearance."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import DescribeTransactionsRequest, DescribeTransactionsResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 65
State = DescribeTransactionsResponse.TransactionState


def _state(cluster: Cluster, request: Request[DescribeTransactionsRequest], transactional_id: str) -> State:
    if not cluster.auth.authorize(request, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, transactional_id):
        return _unanswered(transactional_id, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    if not transactional_id:
        return _unanswered(transactional_id, ErrorCode.INVALID_REQUEST)
    try:
        cluster.transactions.check_coordinator(request, transactional_id)
    except KafkaError as exc:
        return _unanswered(transactional_id, exc.code)
    meta = cluster.transactions.txns.get(transactional_id)
    if meta is None:
        return _unanswered(transactional_id, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND)
    topics: dict[str, list[int]] = {}
    for topic, partition in meta.ordered_partitions():
        topics.setdefault(topic, []).append(partition)
    describable = cluster.auth.authorized(request, AclOperation.DESCRIBE, ResourceType.TOPIC, topics)
    topics = {t: p for t, p in topics.items() if t in describable}   # only the topics the principal may see
    return State(error_code=ErrorCode.NONE, transactional_id=transactional_id,
                 transaction_state=meta.state.wire_name, transaction_timeout_ms=meta.timeout_ms,
                 transaction_start_time_ms=meta.start_ms, producer_id=meta.producer_id, producer_epoch=meta.epoch,
                 topics=[DescribeTransactionsResponse.TopicData(topic=t, partitions=p) for t, p in topics.items()])


def _unanswered(transactional_id: str, code: ErrorCode) -> State:
    return State(error_code=code, transactional_id=transactional_id, transaction_state="", transaction_timeout_ms=0,
                 transaction_start_time_ms=0, producer_id=0, producer_epoch=0, topics=[])


def handle(cluster: Cluster, request: Request[DescribeTransactionsRequest]) -> DescribeTransactionsResponse:
    return DescribeTransactionsResponse(throttle_time_ms=0, transaction_states=[
        _state(cluster, request, tid) for tid in request.body.transactional_ids])


def error_response(cluster: Cluster, request: Request[DescribeTransactionsRequest], code: ErrorCode,
                   message: str | None = None) -> DescribeTransactionsResponse:
    return DescribeTransactionsResponse(throttle_time_ms=0, transaction_states=[
        _unanswered(tid, code) for tid in request.body.transactional_ids])


HANDLER = ApiHandler(API_KEY, handle, error_response)
