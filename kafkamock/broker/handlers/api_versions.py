"""ApiVersions (18): the versions this broker implements; v3+ also names the client software and lists the
cluster's feature levels (``kafkamock/broker/features.py``): those a node supports and those the cluster has
finalized, which a freshly formatted Kafka 4.3.1 cluster starts with and UpdateFeatures changes. Java clients read
``transaction.version`` to pick KIP-890 part 2's transaction protocol. The finalized epoch grows with each change."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.errors import ErrorCode
from kafkamock.broker.handlers.contract import HandlerResult

if TYPE_CHECKING:
    from kafkamock.broker.core import Broker, Request


import re

from kafkamock.broker.handlers.contract import ApiHandler

API_KEY = 18
_SOFTWARE = re.compile(r"^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$")


def supported(broker: Broker) -> list[dict[str, int]]:
    return [{"api_key": key, "min_version": low, "max_version": high}
            for key, (low, high) in broker.advertised_versions().items()]


def handle(broker: Broker, request: Request) -> HandlerResult:
    body = request.body
    error = ErrorCode.NONE
    if request.version >= 3:
        name, version = body.client_software_name, body.client_software_version
        if not _SOFTWARE.match(name or "") or not _SOFTWARE.match(version or ""):
            error = ErrorCode.INVALID_REQUEST
        else:
            request.connection.software_name, request.connection.software_version = name, version
    if error:      # Kafka's ApiVersionsRequest.getErrorResponse: the error alone, no API list
        return {"error_code": error, "api_keys": [], "throttle_time_ms": 0}
    features = broker.features
    return {"error_code": error, "api_keys": supported(broker), "throttle_time_ms": 0,
            "supported_features": [{"name": name, "min_version": low, "max_version": high}
                                   for name, (low, high) in features.supported.items()],
            "finalized_features_epoch": features.epoch,
            "finalized_features": [{"name": name, "max_version_level": level, "min_version_level": level}
                                   for name, level in features.finalized().items()]}


HANDLER = ApiHandler(API_KEY, handle)
