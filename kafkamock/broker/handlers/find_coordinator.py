"""FindCoordinator (10): every coordinator (group, transaction, share) lives on this broker."""

from __future__ import annotations

from kafkamock.broker.errors import ErrorCode

API_KEY = 10
KEY_TYPES = {0: "group", 1: "transaction", 2: "share"}


def _answer(broker, key: str, key_type: int) -> dict:
    node = broker.cluster.node(broker.node_id)
    if key_type not in KEY_TYPES:
        return {"key": key, "node_id": -1, "host": "", "port": -1, "error_code": ErrorCode.INVALID_REQUEST,
                "error_message": f"unknown coordinator key type {key_type}"}
    return {"key": key, "node_id": node.node_id, "host": node.host, "port": node.port,
            "error_code": ErrorCode.NONE, "error_message": None}


def handle(broker, request) -> dict:
    body = request.body
    if request.version >= 4:
        return {"throttle_time_ms": 0,
                "coordinators": [_answer(broker, key, body.key_type) for key in body.coordinator_keys]}
    answer = _answer(broker, body.key, body.key_type)
    answer.pop("key")
    return {"throttle_time_ms": 0, **answer}
