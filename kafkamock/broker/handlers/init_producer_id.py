"""InitProducerId (22): producer ids for idempotent producers (transactions arrive in a later issue)."""

from __future__ import annotations

from kafkamock.broker.errors import ErrorCode

API_KEY = 22


def handle(broker, request) -> dict:
    body = request.body
    if body.transactional_id is not None:
        # Transactions are not implemented yet, and their APIs are not advertised; answer as a broker
        # without a transaction coordinator would.
        return {"throttle_time_ms": 0, "error_code": ErrorCode.COORDINATOR_NOT_AVAILABLE, "producer_id": -1,
                "producer_epoch": -1}
    # An idempotent producer (also when it asks for an epoch bump, KIP-360) gets a fresh producer id.
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "producer_id": broker.next_producer_id(),
            "producer_epoch": 0}
