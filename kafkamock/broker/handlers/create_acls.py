"""CreateAcls (30): add ACL bindings, as Kafka's AclApis and the controller's AclControlManager answer.

Needs ALTER on the cluster (else CLUSTER_AUTHORIZATION_FAILED on every result). With no authorizer every result
is SECURITY_DISABLED. Each binding is checked on its own (acls.validate_new: INVALID_REQUEST with Kafka's
message); creating one that exists already succeeds. A request naming an UNKNOWN resource type, pattern type,
operation or permission (a code Kafka does not know) is refused while parsing, which closes the connection.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
    known,
)
from kafkamock.broker.errors import ErrorCode
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.broker.outcome import Close
from kafkamock.codec.messages import CreateAclsRequest, CreateAclsResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 30
NO_AUTHORIZER = "No Authorizer is configured."


def handle(cluster: Cluster, request: Request[CreateAclsRequest]) -> CreateAclsResponse | Close:
    creations = request.body.creations
    for c in creations:
        if not (known(ResourceType, c.resource_type) and known(PatternType, c.resource_pattern_type)
                and known(AclOperation, c.operation) and known(AclPermissionType, c.permission_type)):
            return Close(f"CreateAcls with unknown elements: {c}")
    cluster.auth.require_cluster(request, AclOperation.ALTER)
    if not cluster.auth.enabled:
        return error_response(cluster, request, ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER)
    bindings = [AclBinding(ResourceType(c.resource_type), c.resource_name, PatternType(c.resource_pattern_type),
                           c.principal, c.host, AclOperation(c.operation), AclPermissionType(c.permission_type))
                for c in creations]
    results = cluster.acls.create(bindings)
    return CreateAclsResponse(throttle_time_ms=0, results=[
        CreateAclsResponse.AclCreationResult(error_code=ErrorCode.NONE, error_message=None) if exc is None
        else CreateAclsResponse.AclCreationResult(error_code=exc.code, error_message=exc.message) for exc in results])


def error_response(cluster: Cluster, request: Request[CreateAclsRequest], code: ErrorCode, message: str | None = None
                   ) -> CreateAclsResponse:
    return CreateAclsResponse(throttle_time_ms=0, results=[
        CreateAclsResponse.AclCreationResult(error_code=code, error_message=message) for _ in request.body.creations])


HANDLER = ApiHandler(API_KEY, handle, error_response)
