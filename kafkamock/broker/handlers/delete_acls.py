"""DeleteAcls (31): remove the ACL bindings each filter matches (Kafka's AclApis and AclControlManager).

Needs ALTER on the cluster (else CLUSTER_AUTHORIZATION_FAILED on every filter). With no authorizer:
SECURITY_DISABLED. Every filter is matched against the bindings as they were before the request, so a binding two
filters match is listed under both; all matches go together.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation
from kafkamock.broker.errors import ErrorCode
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.broker.handlers.describe_acls import parse_filter
from kafkamock.broker.outcome import Close
from kafkamock.codec.messages import DeleteAclsRequest, DeleteAclsResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 31
NO_AUTHORIZER = "No Authorizer is configured."


def handle(cluster: Cluster, request: Request[DeleteAclsRequest]) -> DeleteAclsResponse | Close:
    parsed = [parse_filter(f) for f in request.body.filters]
    filters = [f for f in parsed if f is not None]
    if len(filters) < len(parsed):
        return Close(f"DeleteAcls with unknown elements: {request.body.filters}")
    cluster.auth.require_cluster(request, AclOperation.ALTER)
    if not cluster.auth.enabled:
        return error_response(cluster, request, ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER)
    matched = cluster.acls.delete(filters)
    return DeleteAclsResponse(throttle_time_ms=0, filter_results=[
        DeleteAclsResponse.DeleteAclsFilterResult(error_code=ErrorCode.NONE, error_message=None, matching_acls=[
            DeleteAclsResponse.DeleteAclsMatchingAcl(
                error_code=ErrorCode.NONE, error_message=None, resource_type=acl.resource_type,
                resource_name=acl.name, pattern_type=acl.pattern_type, principal=acl.principal, host=acl.host,
                operation=acl.operation, permission_type=acl.permission)
            for acl in acls])
        for acls in matched])


def error_response(cluster: Cluster, request: Request[DeleteAclsRequest], code: ErrorCode, message: str | None = None
                   ) -> DeleteAclsResponse:
    return DeleteAclsResponse(throttle_time_ms=0, filter_results=[
        DeleteAclsResponse.DeleteAclsFilterResult(error_code=code, error_message=message, matching_acls=[])
        for _ in request.body.filters])


HANDLER = ApiHandler(API_KEY, handle, error_response)
