"""AddOffsetsToTxn (25): a group's ``__consumer_offsets`` partition joins the producer's transaction, so that
TxnOffsetCommit may follow (``sendOffsetsToTransaction``). PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v2. Kafka
checks no group id: an empty one joins the partition it hashes to, as any other."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.broker.transactions.coordinator import fenced_code
from kafkamock.codec.messages import AddOffsetsToTxnRequest, AddOffsetsToTxnResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 25
FIRST_FENCED_VERSION = 2


def handle(cluster: Cluster, request: Request[AddOffsetsToTxnRequest]) -> AddOffsetsToTxnResponse:
    body = request.body
    coordinator = cluster.transactions
    if not cluster.auth.authorize(request, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, body.transactional_id):
        return AddOffsetsToTxnResponse(throttle_time_ms=0, error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    if not cluster.auth.authorize(request, AclOperation.READ, ResourceType.GROUP, body.group_id):
        return AddOffsetsToTxnResponse(throttle_time_ms=0, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    try:
        if body.transactional_id:             # an empty one is INVALID_REQUEST, wherever it is sent
            coordinator.check_coordinator(request, body.transactional_id)
    except KafkaError as exc:
        return AddOffsetsToTxnResponse(throttle_time_ms=0, error_code=exc.code)
    code = coordinator.add_partitions(body.transactional_id, body.producer_id, body.producer_epoch,
                                      [coordinator.offsets_partition(body.group_id)])
    if code == ErrorCode.PRODUCER_FENCED:
        code = fenced_code(request.version, FIRST_FENCED_VERSION)
    return AddOffsetsToTxnResponse(throttle_time_ms=0, error_code=code)


HANDLER = ApiHandler(API_KEY, handle)
