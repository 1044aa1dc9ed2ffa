"""ApiVersions (18): the versions this broker implements; v3+ also names the client software and lists feature
levels, as a freshly formatted Kafka 4.3.1 cluster does: ``transaction.version`` (supported 0-2, finalized at
``kafkamock.transaction.version``), which Java clients read to pick KIP-890 part 2's transaction protocol,
``share.version`` 1 (KIP-932 share groups), ``group.version`` 1 (KIP-848 consumer groups),
``eligible.leader.replicas.version`` 1, ``metadata.version`` 30 (4.3-IV0) and ``kraft.version`` (supported, finalized
at 0: a static quorum, so not listed). ``streams.version`` is not listed: kafkamock serves no streams groups."""

from __future__ import annotations

import re

from kafkamock.broker.errors import ErrorCode

API_KEY = 18
TRANSACTION_VERSION = "transaction.version"
SHARE_VERSION = "share.version"          # KIP-932: share groups are served (level 1)
FINALIZED_FEATURES_EPOCH = 1      # the levels never change while the broker runs
# Kafka 4.3.1's features: the levels a node supports, and those a new cluster finalizes (transaction.version's
# comes from the config). Kafka lists them in name order.
SUPPORTED = {"eligible.leader.replicas.version": (0, 1), "group.version": (0, 1), "kraft.version": (0, 1),
             "metadata.version": (7, 30), SHARE_VERSION: (0, 1), TRANSACTION_VERSION: (0, 2)}
FINALIZED = {"eligible.leader.replicas.version": 1, "group.version": 1, "kraft.version": 0, "metadata.version": 30,
             SHARE_VERSION: 1}
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
    levels = {**FINALIZED, TRANSACTION_VERSION: broker.config["kafkamock.transaction.version"]}
    return {"error_code": error, "api_keys": supported(broker), "throttle_time_ms": 0,
            "supported_features": [{"name": name, "min_version": low, "max_version": high}
                                   for name, (low, high) in SUPPORTED.items()],
            "finalized_features_epoch": FINALIZED_FEATURES_EPOCH,
            "finalized_features": [{"name": name, "max_version_level": level, "min_version_level": level}
                                   for name, level in levels.items() if level > 0]}
