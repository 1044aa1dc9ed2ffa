"""ListTransactions (66), KIP-664: the transactions this node coordinates, filtered by state names, producer ids,
(v1) how long ago their last transaction started (in any state, as Kafka filters) and (v2, KIP-1152) a regular
expression over the transactional id, in RE2's syntax as Kafka's RE2/J reads it (``re2_pattern``), which must match
all of it. Unknown state names are echoed in UnknownStateFilters; a pattern that does not compile is
INVALID_REGULAR_EXPRESSION."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.broker.re2_pattern import Re2SyntaxError, compile_re2
from kafkamock.broker.transactions import TxnState
from kafkamock.codec.messages import ListTransactionsRequest, ListTransactionsResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 66


def handle(cluster: Cluster, request: Request[ListTransactionsRequest]) -> ListTransactionsResponse:
    body, version = request.body, request.version
    states = set(body.state_filters)
    unknown = sorted(s for s in states if TxnState.from_wire_name(s) is None)
    pattern = body.transactional_id_pattern if version >= 2 else None
    regex = None
    if pattern:
        try:
            regex = compile_re2(pattern)
        except Re2SyntaxError:
            return ListTransactionsResponse(throttle_time_ms=0, error_code=ErrorCode.INVALID_REGULAR_EXPRESSION,
                                            unknown_state_filters=[], transaction_states=[])
    duration = body.duration_filter if version >= 1 else -1
    node_id = request.node.node_id if request.node is not None else cluster.node_id
    found = [m for m in cluster.transactions.list(node_id, states, set(body.producer_id_filters), duration, regex)
             if cluster.auth.authorize(request, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, m.transactional_id)]
    return ListTransactionsResponse(
        throttle_time_ms=0, error_code=ErrorCode.NONE, unknown_state_filters=unknown,
        transaction_states=[ListTransactionsResponse.TransactionState(
            transactional_id=m.transactional_id, producer_id=m.producer_id, transaction_state=m.state.wire_name)
            for m in found])


HANDLER = ApiHandler(API_KEY, handle)
