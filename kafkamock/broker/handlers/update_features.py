"""UpdateFeatures (57): change the cluster's finalized feature levels (KIP-584; Admin.updateFeatures).

Kafka's broker forwards it to the controller (ControllerApis.handleUpdateFeatures, with ALTER on the cluster;
QuorumController.updateFeatures, FeatureControlManager). The checks and their messages are in ``features.py``; the
first feature that fails fails them all: INVALID_UPDATE_VERSION, "The update failed for all features since the
following feature had an error: ...", and nothing changes. v1+ asks for a downgrade with ``upgrade_type`` and may
only validate; v0's ``allow_downgrade`` never reaches Kafka's controller, which reads the absent ``upgrade_type``
as an upgrade, so a v0 downgrade is refused. On success v0 and v1 list every feature named with
NONE (a feature named twice twice); v2 lists none. A change is seen at once in ApiVersions' finalized features,
with a new epoch, and takes effect where kafkamock implements the feature.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation
from kafkamock.broker.errors import ErrorCode
from kafkamock.broker.features import FeatureUpdate, UpdateRefused
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import UpdateFeaturesRequest, UpdateFeaturesResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 57


def handle(cluster: Cluster, request: Request[UpdateFeaturesRequest]) -> UpdateFeaturesResponse:
    cluster.auth.require_cluster(request, AclOperation.ALTER)
    body, version = request.body, request.version
    updates = [FeatureUpdate(u.feature, u.max_version_level, u.upgrade_type) for u in body.feature_updates]
    try:
        cluster.features.update(updates, version >= 1 and body.validate_only, cluster.metadata.controller_id)
    except UpdateRefused as exc:
        return UpdateFeaturesResponse(
            throttle_time_ms=0, error_code=exc.code, results=[],
            error_message="The update failed for all features since the following feature had an error: "
                          + exc.message)
    # Kafka sets each result's message to Errors.NONE's, the text "NONE"
    results = [UpdateFeaturesResponse.UpdatableFeatureResult(feature=u.feature, error_code=ErrorCode.NONE,
                                                             error_message="NONE")
               for u in body.feature_updates] if version <= 1 else []
    return UpdateFeaturesResponse(throttle_time_ms=0, error_code=ErrorCode.NONE, error_message=None, results=results)


def error_response(cluster: Cluster, request: Request[UpdateFeaturesRequest], code: ErrorCode,
                   message: str | None = None) -> UpdateFeaturesResponse:
    """Kafka's UpdateFeaturesResponse.createWithErrors: the error at the top, no per-feature results."""
    return UpdateFeaturesResponse(throttle_time_ms=0, error_code=code, error_message=message, results=[])


HANDLER = ApiHandler(API_KEY, handle, error_response)
