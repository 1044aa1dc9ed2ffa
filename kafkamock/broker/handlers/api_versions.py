"""ApiVersions (18): the versions this broker implements; v3+ also names the client software and lists feature
levels: ``transaction.version`` (supported 0-2, finalized at ``kafkamock.transaction.version``), which Java clients
read to pick KIP-890 part 2's transaction protocol, and ``share.version`` 1 (KIP-932 share groups are served)."""

from __future__ import annotations

import re

from kafkamock.broker.errors import ErrorCode

API_KEY = 18
TRANSACTION_VERSION = "transaction.version"
SHARE_VERSION = "share.version"          # KIP-932: share groups are served (level 1)
FINALIZED_FEATURES_EPOCH = 1      # the levels never change while the broker runs
_SOFTWARE = re.compile(r"^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$")


def supported(broker) -> list[dict]:
    return [{"api_key": key, "min_version": low, "max_version": high}
            for key, (low, high) in broker.advertised_versions().items()]


def handle(broker, request) -> dict:
    body = request.body
    error = ErrorCode.NONE
    if request.version >= 3:
        name, version = body.client_software_name, body.client_software_version
        if not _SOFTWARE.match(name or "") or not _SOFTWARE.match(version or ""):
            error = ErrorCode.INVALID_REQUEST
        else:
            request.connection.software_name, request.connection.software_version = name, version
    level = broker.config["kafkamock.transaction.version"]
    return {"error_code": error, "api_keys": supported(broker), "throttle_time_ms": 0,
            "supported_features": [{"name": SHARE_VERSION, "min_version": 0, "max_version": 1},
                                   {"name": TRANSACTION_VERSION, "min_version": 0, "max_version": 2}],
            "finalized_features_epoch": FINALIZED_FEATURES_EPOCH,
            "finalized_features": [{"name": SHARE_VERSION, "max_version_level": 1, "min_version_level": 1},
                                   {"name": TRANSACTION_VERSION, "max_version_level": level,
                                    "min_version_level": level}]}
