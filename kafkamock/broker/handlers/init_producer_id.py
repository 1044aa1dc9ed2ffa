"""InitProducerId (22): a producer id and epoch, for idempotent producers and transactional ids (KIP-360).

Without a transactional id any node hands out a fresh producer id (also when an idempotent producer asks for an
epoch bump with its current id and epoch: Kafka answers that with a new id too). With one, the request must reach
the id's transaction coordinator, which applies KIP-360's rules (``transactions/coordinator.py``). v3+ carries the
producer's current id and epoch; one without the other is INVALID_REQUEST. Clients before v4 do not know
PRODUCER_FENCED and get INVALID_PRODUCER_EPOCH instead. v6's two-phase commit (KIP-939) is refused as Kafka refuses
it while ``transaction.two.phase.commit.enable`` is off.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.broker.transactions.coordinator import (
    NO_EPOCH,
    NO_PRODUCER_ID,
    fenced_code,
)
from kafkamock.codec.messages import InitProducerIdRequest, InitProducerIdResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 22
FIRST_FENCED_VERSION = 4


def _answer(code: ErrorCode, producer_id: int = NO_PRODUCER_ID, epoch: int = NO_EPOCH) -> InitProducerIdResponse:
    return InitProducerIdResponse(throttle_time_ms=0, error_code=code, producer_id=producer_id, producer_epoch=epoch,
                                  ongoing_txn_producer_id=NO_PRODUCER_ID, ongoing_txn_producer_epoch=NO_EPOCH)


def handle(cluster: Cluster, request: Request[InitProducerIdRequest]) -> InitProducerIdResponse:
    body, version = request.body, request.version
    # A transactional producer needs WRITE on its id; an idempotent one IDEMPOTENT_WRITE on the cluster or WRITE on
    # some topic (Kafka's handleInitProducerIdRequest).
    if body.transactional_id is not None:
        if not cluster.auth.authorize(request, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, body.transactional_id):
            return _answer(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    elif not (cluster.auth.authorize(request, AclOperation.IDEMPOTENT_WRITE, ResourceType.CLUSTER)
              or cluster.auth.authorize_by_resource_type(request, AclOperation.WRITE, ResourceType.TOPIC)):
        return _answer(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    expected = None
    if version >= 3:
        pid, epoch = body.producer_id, body.producer_epoch
        if (pid == NO_PRODUCER_ID) != (epoch == NO_EPOCH):
            return _answer(ErrorCode.INVALID_REQUEST)
        if pid != NO_PRODUCER_ID:
            expected = (pid, epoch)
    if version >= 6 and body.enable2_pc:
        return _answer(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    if version >= 6 and body.keep_prepared_txn:
        return _answer(ErrorCode.INVALID_REQUEST)
    transactional_id = body.transactional_id
    if transactional_id is None:
        return _answer(ErrorCode.NONE, cluster.next_producer_id(), 0)
    try:
        cluster.transactions.check_coordinator(request, transactional_id)
    except KafkaError as exc:
        return _answer(exc.code)
    code, producer_id, epoch = cluster.transactions.init_producer_id(transactional_id, body.transaction_timeout_ms,
                                                                    expected)
    if code == ErrorCode.PRODUCER_FENCED:
        code = fenced_code(version, FIRST_FENCED_VERSION)
    return _answer(code, producer_id, epoch)


HANDLER = ApiHandler(API_KEY, handle)
