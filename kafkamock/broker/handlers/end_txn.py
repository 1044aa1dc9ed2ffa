"""EndTxn (26): commit or abort the producer's transaction: the coordinator writes a COMMIT or ABORT marker into
every partition of it, and the group's transactional offsets take effect or vanish with their marker.

v5+ (KIP-890 part 2) ends every transaction with a new epoch, returned with the producer id; a retry with the
epoch before that bump succeeds. PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v2.
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
from kafkamock.codec.messages import EndTxnRequest, EndTxnResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 26
FIRST_FENCED_VERSION = 2


def handle(cluster: Cluster, request: Request[EndTxnRequest]) -> EndTxnResponse:
    body = request.body
    cluster.auth.require(request, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, body.transactional_id)
    try:
        if body.transactional_id:             # an empty one is INVALID_REQUEST, wherever it is sent
            cluster.transactions.check_coordinator(request, body.transactional_id)
    except KafkaError as exc:
        return EndTxnResponse(throttle_time_ms=0, error_code=exc.code, producer_id=NO_PRODUCER_ID,
                              producer_epoch=NO_EPOCH)
    code, producer_id, epoch = cluster.transactions.end_txn(body.transactional_id, body.producer_id,
                                                           body.producer_epoch, body.committed, request.version)
    if code == ErrorCode.PRODUCER_FENCED:
        code = fenced_code(request.version, FIRST_FENCED_VERSION)
    return EndTxnResponse(throttle_time_ms=0, error_code=code, producer_id=producer_id, producer_epoch=epoch)


HANDLER = ApiHandler(API_KEY, handle)
