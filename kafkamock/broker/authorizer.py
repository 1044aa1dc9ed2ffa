"""Kafka's StandardAuthorizer as pure functions of the ACL set, the principal, the client host and the action.

The rules (StandardAuthorizerData): a super user is always allowed. Otherwise every binding whose pattern applies
to the resource (the literal name, the literal ``*``, a prefix of the name) counts; among those whose principal
(the caller or ``User:*``), host (the caller's or ``*``) and operation match, one DENY denies, else one ALLOW
allows. An ALLOW of READ, WRITE, DELETE or ALTER implies DESCRIBE, an ALLOW of ALTER_CONFIGS implies
DESCRIBE_CONFIGS, and ALL matches every operation (a DENY of READ does not deny DESCRIBE). If bindings apply to
the resource but none matched, the answer is no; if none applies at all, ``allow.everyone.if.no.acl.found``
decides (false by default, as in Kafka).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kafkamock.broker.acls import (
    SUPPORTED_OPERATIONS,
    WILDCARD,
    WILDCARD_PRINCIPAL,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)

STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
AUTHORIZER_CLASS_NAMES = (STANDARD_AUTHORIZER, "kafka.security.authorizer.AclAuthorizer")

_IMPLIES_DESCRIBE = frozenset({AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE,
                               AclOperation.ALTER})
_IMPLIES_DESCRIBE_CONFIGS = frozenset({AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS})


@dataclass(frozen=True, slots=True)
class Settings:
    """The authorizer's configs: ``super.users`` (principals, semicolon-separated in Kafka's config) and
    ``allow.everyone.if.no.acl.found``."""

    super_users: frozenset[str] = frozenset()
    allow_if_no_acl: bool = False


def parse_super_users(value: str) -> frozenset[str]:
    """``super.users`` as Kafka reads it: split on ``;``, trimmed, empty parts dropped; each must be Type:name."""
    users = frozenset(p.strip() for p in value.split(";") if p.strip())
    for user in users:
        if ":" not in user:
            raise ValueError(f"expected a principal in the form Type:name, got {user!r}")
    return users


def applies(acl: AclBinding, name: str) -> bool:
    """Whether a binding's resource pattern covers the resource ``name`` (of the binding's type)."""
    if acl.pattern_type == PatternType.LITERAL:
        return acl.name == name or acl.name == WILDCARD
    return acl.pattern_type == PatternType.PREFIXED and name.startswith(acl.name)


def _entry_result(acl: AclBinding, principal: str, host: str, operation: AclOperation) -> bool | None:
    """StandardAuthorizerData.findResult: True (allow), False (deny) or None (the entry does not match)."""
    if acl.principal != principal and acl.principal != WILDCARD_PRINCIPAL:
        return None
    if acl.host != WILDCARD and acl.host != host:
        return None
    allow = acl.permission == AclPermissionType.ALLOW
    if acl.operation != AclOperation.ALL:
        if allow and operation == AclOperation.DESCRIBE:
            if acl.operation not in _IMPLIES_DESCRIBE:
                return None
        elif allow and operation == AclOperation.DESCRIBE_CONFIGS:
            if acl.operation not in _IMPLIES_DESCRIBE_CONFIGS:
                return None
        elif acl.operation != operation:
            return None
    return allow


def authorize(acls: Iterable[AclBinding], settings: Settings, principal: str, host: str,
              operation: AclOperation, resource_type: ResourceType, name: str) -> bool:
    """May ``principal`` connecting from ``host`` do ``operation`` on the resource? ``acls`` may hold any
    bindings; only those of ``resource_type`` count."""
    if principal in settings.super_users:
        return True
    has_resource_acls = allowed = False
    for acl in acls:
        if acl.resource_type != resource_type or not applies(acl, name):
            continue
        has_resource_acls = True
        result = _entry_result(acl, principal, host, operation)
        if result is False:
            return False
        allowed = allowed or result is True
    if allowed:
        return True
    return False if has_resource_acls else settings.allow_if_no_acl


def authorize_by_resource_type(acls: Iterable[AclBinding], settings: Settings, principal: str, host: str,
                               operation: AclOperation, resource_type: ResourceType) -> bool:
    """Kafka's Authorizer.authorizeByResourceType: may the principal do ``operation`` on at least one resource of
    the type (InitProducerId without a transactional id: WRITE on any topic)? An ALLOW counts unless a DENY of
    the same literal name or of a prefix of it (a prefixed DENY) dominates it; a wildcard DENY denies all."""
    acls = [a for a in acls if a.resource_type == resource_type]
    if authorize(acls, settings, principal, host, operation, resource_type, "hardcode"):
        return True
    deny_literal: set[str] = set()
    deny_prefixed: set[str] = set()
    allow: list[AclBinding] = []
    wildcard_allow = False
    for acl in acls:
        if acl.host not in (host, WILDCARD) or acl.principal not in (principal, WILDCARD_PRINCIPAL):
            continue
        if acl.operation not in (operation, AclOperation.ALL):
            continue
        if acl.permission == AclPermissionType.DENY:
            if acl.pattern_type == PatternType.LITERAL:
                if acl.name == WILDCARD:
                    return False
                deny_literal.add(acl.name)
            elif acl.pattern_type == PatternType.PREFIXED:
                deny_prefixed.add(acl.name)
        elif acl.permission == AclPermissionType.ALLOW:
            if acl.pattern_type == PatternType.LITERAL and acl.name == WILDCARD:
                wildcard_allow = True
            else:
                allow.append(acl)
    if wildcard_allow:
        return True
    for acl in allow:
        if acl.pattern_type == PatternType.LITERAL and acl.name in deny_literal:
            continue
        if not any(acl.name[:k] in deny_prefixed for k in range(1, len(acl.name) + 1)):
            return True
    return False


def authorized_operations(acls: Iterable[AclBinding], settings: Settings, principal: str, host: str,
                          resource_type: ResourceType, name: str) -> int:
    """The operations the principal may do on a resource, as Kafka's bit field (``Utils.to32BitField`` of the
    allowed operations' codes among those the resource type supports)."""
    acls = list(acls)
    return sum(1 << op for op in SUPPORTED_OPERATIONS[resource_type]
               if authorize(acls, settings, principal, host, op, resource_type, name))


def all_operations(resource_type: ResourceType) -> int:
    """The bit field with no authorizer: every operation the resource type supports."""
    return sum(1 << op for op in SUPPORTED_OPERATIONS[resource_type])
