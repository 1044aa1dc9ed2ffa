"""JoinGroup (11): a member joins a classic group and waits for the round to end (``groups/coordinator.py``).

The answer comes when every known member has rejoined or the rebalance timeout passes; the leader's answer lists
the members and their metadata for the protocol the group chose. v4+ first hands a new member its id
(MEMBER_ID_REQUIRED, KIP-394); v5+ carries group.instance.id (KIP-345).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.groups import reply
from kafkamock.broker.groups.coordinator import join_error
from kafkamock.broker.handlers.contract import ApiHandler, HandlerResult

if TYPE_CHECKING:
    from kafkamock.broker.core import Broker, Request

API_KEY = 11


def shape(answer: dict[str, Any], version: int) -> dict[str, Any]:
    if version < 7:
        answer = {**answer, "protocol_type": None, "protocol_name": answer["protocol_name"] or ""}
    if version < 9:
        answer = {**answer, "skip_assignment": False}
    return answer


def handle(broker: Broker, request: Request) -> HandlerResult:
    body, version = request.body, request.version
    broker.auth.require(request, AclOperation.READ, ResourceType.GROUP, body.group_id)
    try:
        broker.groups.check_coordinator(request, body.group_id)
    except KafkaError as exc:
        return shape(join_error(exc.code, body.member_id), version)
    peer = request.connection.peer.rsplit(":", 1)[0]
    answer = broker.groups.join(body, version, request.client_id or "", "/" + peer)
    return reply(broker, answer, lambda a: shape(a, version))


def error_response(broker: Broker, request: Request, code: ErrorCode, message: str | None = None) -> dict[str, Any]:
    return shape(join_error(code, request.body.member_id), request.version)


HANDLER = ApiHandler(API_KEY, handle, error_response)
