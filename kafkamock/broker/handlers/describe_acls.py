"""DescribeAcls (29): the ACL bindings one filter matches, grouped by resource pattern (Kafka's AclApis).

Needs DESCRIBE on the cluster (else CLUSTER_AUTHORIZATION_FAILED). With no authorizer: SECURITY_DISABLED. The
filter matches as Kafka's AclBindingFilter (acls.py); an UNKNOWN code closes the connection, as Kafka's request
parser refuses it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from kafkamock.broker.acls import (
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
    known,
)
from kafkamock.broker.errors import ErrorCode
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.broker.outcome import Close
from kafkamock.codec.messages import DescribeAclsRequest, DescribeAclsResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 29
NO_AUTHORIZER = "No Authorizer is configured on the broker"


class AclFilterFields(Protocol):
    """The filter fields DescribeAclsRequest and DeleteAclsRequest's DeleteAclsFilter share."""

    @property
    def resource_type_filter(self) -> int: ...
    @property
    def resource_name_filter(self) -> str | None: ...
    @property
    def pattern_type_filter(self) -> int: ...
    @property
    def principal_filter(self) -> str | None: ...
    @property
    def host_filter(self) -> str | None: ...
    @property
    def operation(self) -> int: ...
    @property
    def permission_type(self) -> int: ...


def parse_filter(f: AclFilterFields) -> AclBindingFilter | None:
    """A request's filter fields as an AclBindingFilter; None if a code is unknown to Kafka."""
    if not (known(ResourceType, f.resource_type_filter) and known(PatternType, f.pattern_type_filter)
            and known(AclOperation, f.operation) and known(AclPermissionType, f.permission_type)):
        return None
    return AclBindingFilter(ResourceType(f.resource_type_filter), f.resource_name_filter,
                            PatternType(f.pattern_type_filter), f.principal_filter, f.host_filter,
                            AclOperation(f.operation), AclPermissionType(f.permission_type))


def handle(cluster: Cluster, request: Request[DescribeAclsRequest]) -> DescribeAclsResponse | Close:
    flt = parse_filter(request.body)
    if flt is None:
        return Close(f"DescribeAcls with unknown elements: {request.body}")
    cluster.auth.require_cluster(request, AclOperation.DESCRIBE)
    if not cluster.auth.enabled:
        return error_response(cluster, request, ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER)
    resources: dict[tuple[ResourceType, str, PatternType], list[DescribeAclsResponse.AclDescription]] = {}
    for acl in cluster.acls.describe(flt):
        resources.setdefault((acl.resource_type, acl.name, acl.pattern_type), []).append(
            DescribeAclsResponse.AclDescription(principal=acl.principal, host=acl.host, operation=acl.operation,
                                                permission_type=acl.permission))
    return DescribeAclsResponse(throttle_time_ms=0, error_code=ErrorCode.NONE, error_message=None, resources=[
        DescribeAclsResponse.DescribeAclsResource(resource_type=rtype, resource_name=name, pattern_type=ptype,
                                                  acls=acls)
        for (rtype, name, ptype), acls in resources.items()])


def error_response(cluster: Cluster, request: Request[DescribeAclsRequest], code: ErrorCode,
                   message: str | None = None) -> DescribeAclsResponse:
    return DescribeAclsResponse(throttle_time_ms=0, error_code=code, error_message=message, resources=[])


HANDLER = ApiHandler(API_KEY, handle, error_response)
