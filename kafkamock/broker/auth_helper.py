"""Which principal may do what, for the handlers: Kafka's AuthHelper over the ACL rules of ``authorizer.py``.

A handler asks ``cluster.auth`` (``require``, ``require_cluster``, ``authorize``, ``authorized``,
``authorized_operations``); a refusal of the whole request is an ``AuthorizationFailed``, which the dispatch answers
with the handler's error response. With no ``authorizer.class.name`` everything is allowed, as in Kafka.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

from kafkamock.broker import authorizer
from kafkamock.broker.acls import CLUSTER_NAME, AclOperation, AclStore, ResourceType
from kafkamock.broker.config import BrokerConfig
from kafkamock.broker.errors import ErrorCode, KafkaError

if TYPE_CHECKING:
    from kafkamock.broker.request import Request
    from kafkamock.codec import Registry

log = logging.getLogger("kafkamock.broker")


class AuthHelper:
    """The authorization checks of one cluster: its ACLs and its authorizer settings."""

    def __init__(self, acls: AclStore, config: BrokerConfig, registry: Registry) -> None:
        self.acls, self.config, self.registry = acls, config, registry

    @property
    def enabled(self) -> bool:
        """``authorizer.class.name`` names Kafka's StandardAuthorizer (or the old AclAuthorizer)."""
        return bool(self.config["authorizer.class.name"])

    def settings(self) -> authorizer.Settings:
        return authorizer.Settings(authorizer.parse_super_users(self.config["super.users"]),
                                   self.config["allow.everyone.if.no.acl.found"])

    def authorize(self, request: Request, operation: AclOperation, resource_type: ResourceType,
                  name: str = CLUSTER_NAME, *, log_denied: bool = True) -> bool:
        """May the request's principal, from its host, do ``operation`` on the resource? Always, with no
        authorizer (Kafka's AuthHelper.authorize). ``log_denied=False`` for checks that filter rather than
        refuse (Kafka's Action.logIfDenied)."""
        if not self.enabled:
            return True
        conn = request.connection
        allowed = authorizer.authorize(self.acls.of_type(resource_type), self.settings(),
                                       conn.principal, conn.host, operation, resource_type, name)
        if not allowed and log_denied:
            log.info("Principal = %s is Denied operation = %s from host = %s on resource = %s:LITERAL:%s "
                     "for request = %s", conn.principal, operation.name, conn.host, resource_type.name, name,
                     self.registry.requests[request.api_key].api_name)
        return allowed

    def authorized(self, request: Request, operation: AclOperation, resource_type: ResourceType,
                   names: Iterable[str], *, log_denied: bool = True) -> set[str]:
        """The batch form: which of ``names`` the principal may do ``operation`` on (filterByAuthorized)."""
        return {name for name in set(names)
                if self.authorize(request, operation, resource_type, name, log_denied=log_denied)}

    def authorize_by_resource_type(self, request: Request, operation: AclOperation,
                                   resource_type: ResourceType) -> bool:
        """May the principal do ``operation`` on some resource of the type (Authorizer.authorizeByResourceType)?"""
        if not self.enabled:
            return True
        conn = request.connection
        return authorizer.authorize_by_resource_type(self.acls.of_type(resource_type), self.settings(),
                                                     conn.principal, conn.host, operation, resource_type)

    def require(self, request: Request, operation: AclOperation, resource_type: ResourceType,
                name: str = CLUSTER_NAME) -> None:
        """Refuse the whole request unless authorized: the handler's error response with the resource type's
        *_AUTHORIZATION_FAILED code (Kafka's ``getErrorResponse`` of that exception)."""
        if not self.authorize(request, operation, resource_type, name):
            raise AuthorizationFailed(AUTHORIZATION_FAILED[resource_type])

    def require_cluster(self, request: Request, operation: AclOperation) -> None:
        """Kafka's AuthHelper.authorizeClusterOperation: refuse the whole request with CLUSTER_AUTHORIZATION_FAILED
        and the message naming the request that Kafka's ClusterAuthorizationException carries."""
        if not self.authorize(request, operation, ResourceType.CLUSTER):
            conn = request.connection
            node = request.arrived_on
            host, port = node.address(conn.listener)
            described = (f"Request(processor=0, connectionId={host}:{port}-{conn.peer}-0-{conn.id}, "
                         f"session=Session({conn.principal},/{conn.host}), listenerName=ListenerName("
                         f"{conn.listener}), securityProtocol={conn.security_protocol}, buffer=null, "
                         f"envelope=None)")
            raise AuthorizationFailed(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, f"Request {described} is not authorized.")

    def authorized_operations(self, request: Request, resource_type: ResourceType, name: str = CLUSTER_NAME
                              ) -> int:
        """Kafka's authorized-operations bit field of the resource for the request's principal."""
        if not self.enabled:
            return authorizer.all_operations(resource_type)
        conn = request.connection
        return authorizer.authorized_operations(self.acls.of_type(resource_type), self.settings(),
                                                conn.principal, conn.host, resource_type, name)


class AuthorizationFailed(KafkaError):
    """A whole request refused by the authorizer; ``Cluster._run`` answers it with the handler's error response."""


AUTHORIZATION_FAILED = {
    ResourceType.TOPIC: ErrorCode.TOPIC_AUTHORIZATION_FAILED, ResourceType.GROUP: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    ResourceType.CLUSTER: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    ResourceType.TRANSACTIONAL_ID: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
}
