"""ApiVersions (18): the versions this broker implements; v3+ also names the client software and lists the
cluster's feature levels (``kafkamock/broker/features.py``): those a node supports and those the cluster has
finalized, which a freshly formatted Kafka 4.3.1 cluster starts with and UpdateFeatures changes. Java clients read
``transaction.version`` to pick KIP-890 part 2's transaction protocol. The finalized epoch grows with each change.

Every connection asks first, and the answer lists some eighty APIs: while what it lists stays the same, the handler
answers with the very same response object, and the connection keeps that object's encoding
(``server/connection.py``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from kafkamock.broker.errors import ErrorCode
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import ApiVersionsRequest, ApiVersionsResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 18
_SOFTWARE = re.compile(r"^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$")
# What an answer lists (API versions and feature levels) -> the answer; a few entries (one per configuration a
# process runs brokers with), dropped together past _KEPT.
_ANSWERS: dict[tuple[object, ...], ApiVersionsResponse] = {}
_KEPT = 32
# The last answer and the very objects it was made from (the cluster keeps each the same while it holds): a cluster
# asked again answers without comparing the eighty entries. Holding them keeps their identities from being reused.
_last: tuple[object, object, object, int, ApiVersionsResponse] | None = None


def supported(cluster: Cluster) -> list[ApiVersionsResponse.ApiVersion]:
    return _listed(cluster.advertised_versions())


def _listed(advertised: Mapping[int, tuple[int, int]]) -> list[ApiVersionsResponse.ApiVersion]:
    return [ApiVersionsResponse.ApiVersion(api_key=key, min_version=low, max_version=high)
            for key, (low, high) in advertised.items()]


def handle(cluster: Cluster, request: Request[ApiVersionsRequest]) -> ApiVersionsResponse:
    body = request.body
    if request.version >= 3:
        name, version = body.client_software_name, body.client_software_version
        if not _SOFTWARE.match(name or "") or not _SOFTWARE.match(version or ""):
            # Kafka's ApiVersionsRequest.getErrorResponse: the error alone, no API list
            return ApiVersionsResponse(error_code=ErrorCode.INVALID_REQUEST, api_keys=[], throttle_time_ms=0)
        request.connection.software_name, request.connection.software_version = name, version
    global _last
    features = cluster.features
    advertised, finalized = cluster.advertised_versions(), features.finalized()
    last = _last
    if (last is not None and last[0] is advertised and last[1] is finalized and last[2] is features.supported
            and last[3] == features.epoch):
        return last[4]
    lists = (tuple(advertised.items()), tuple(features.supported.items()), features.epoch, tuple(finalized.items()))
    answer = _ANSWERS.get(lists)
    if answer is None:
        if len(_ANSWERS) >= _KEPT:
            _ANSWERS.clear()
        answer = _ANSWERS[lists] = ApiVersionsResponse(
            error_code=ErrorCode.NONE, throttle_time_ms=0,
            api_keys=_listed(advertised),
            supported_features=[ApiVersionsResponse.SupportedFeatureKey(name=name, min_version=low,
                                                                        max_version=high)
                                for name, (low, high) in features.supported.items()],
            finalized_features_epoch=features.epoch,
            finalized_features=[ApiVersionsResponse.FinalizedFeatureKey(name=name, max_version_level=level,
                                                                        min_version_level=level)
                                for name, level in finalized.items()])
    _last = (advertised, finalized, features.supported, features.epoch, answer)
    return answer


HANDLER = ApiHandler(API_KEY, handle)
