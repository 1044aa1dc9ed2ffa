"""ACL bindings and the cluster's set of them: Kafka's AclBinding, AclBindingFilter and the controller's
AclControlManager (what CreateAcls accepts, what a filter matches, what DeleteAcls removes).

A binding is a resource pattern (type, name, LITERAL or PREFIXED) plus an entry (principal, host, operation,
ALLOW or DENY). The set is cluster-wide: every node of a ``Cluster`` reads the same ``AclStore``, and it is saved
with the rest of the cluster metadata (``snapshot``/``restore``). Who may do what is ``authorizer.py``'s business.
The enums are Kafka's codes, in ``kafkamock.security_codes`` (the Admin client sends the same ones).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from enum import IntEnum

from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.security_codes import AclOperation, AclPermissionType, PatternType, ResourceType

__all__ = ["CLUSTER_NAME", "SUPPORTED_OPERATIONS", "WILDCARD", "WILDCARD_PRINCIPAL", "AclBinding", "AclBindingFilter",
           "AclOperation", "AclPermissionType", "AclStore", "PatternType", "ResourceType", "known", "validate_new"]

CLUSTER_NAME = "kafka-cluster"
WILDCARD = "*"
WILDCARD_PRINCIPAL = "User:*"


_O = AclOperation
# AclEntry.supportedOperations: what the authorized-operations bit fields are computed over, per resource type.
SUPPORTED_OPERATIONS: dict[ResourceType, tuple[AclOperation, ...]] = {
    ResourceType.TOPIC: (_O.READ, _O.WRITE, _O.CREATE, _O.DESCRIBE, _O.DELETE, _O.ALTER, _O.DESCRIBE_CONFIGS,
                         _O.ALTER_CONFIGS),
    ResourceType.GROUP: (_O.READ, _O.DESCRIBE, _O.DELETE, _O.DESCRIBE_CONFIGS, _O.ALTER_CONFIGS),
    ResourceType.CLUSTER: (_O.CREATE, _O.CLUSTER_ACTION, _O.DESCRIBE_CONFIGS, _O.ALTER_CONFIGS, _O.IDEMPOTENT_WRITE,
                           _O.ALTER, _O.DESCRIBE),
    ResourceType.TRANSACTIONAL_ID: (_O.DESCRIBE, _O.WRITE, _O.TWO_PHASE_COMMIT),
    ResourceType.DELEGATION_TOKEN: (_O.DESCRIBE,),
    ResourceType.USER: (_O.CREATE_TOKENS, _O.DESCRIBE_TOKENS),
}


def known(enum: type[IntEnum], code: int) -> bool:
    """Whether a wire code names a value other than UNKNOWN (Kafka's ``fromCode`` maps strangers to UNKNOWN, and
    its request classes refuse UNKNOWN while parsing, which closes the connection)."""
    return code != 0 and code in enum._value2member_map_


@dataclass(frozen=True, slots=True)
class AclBinding:
    resource_type: ResourceType
    name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: AclOperation
    permission: AclPermissionType

    def describe(self) -> str:
        return (f"(pattern=ResourcePattern(resourceType={self.resource_type.name}, name={self.name}, "
                f"patternType={self.pattern_type.name}), entry=(principal={self.principal}, host={self.host}, "
                f"operation={self.operation.name}, permissionType={self.permission.name}))")

    def to_json(self) -> dict:
        return {k: (int(v) if isinstance(v, IntEnum) else v) for k, v in asdict(self).items()}

    @classmethod
    def from_json(cls, data: dict) -> AclBinding:
        return cls(ResourceType(data["resource_type"]), data["name"], PatternType(data["pattern_type"]),
                   data["principal"], data["host"], AclOperation(data["operation"]),
                   AclPermissionType(data["permission"]))


@dataclass(frozen=True, slots=True)
class AclBindingFilter:
    """Kafka's AclBindingFilter: None fields and ANY codes match everything; MATCH matches the patterns that
    would apply to the named resource (the literal name, the literal ``*`` and every prefix of it)."""

    resource_type: ResourceType
    name: str | None
    pattern_type: PatternType
    principal: str | None
    host: str | None
    operation: AclOperation
    permission: AclPermissionType

    def matches(self, acl: AclBinding) -> bool:
        return self._matches_pattern(acl) and self._matches_entry(acl)

    def _matches_pattern(self, acl: AclBinding) -> bool:
        if self.resource_type != ResourceType.ANY and self.resource_type != acl.resource_type:
            return False
        if self.pattern_type not in (PatternType.ANY, PatternType.MATCH) and self.pattern_type != acl.pattern_type:
            return False
        if self.name is None:
            return True
        if self.pattern_type in (PatternType.ANY, acl.pattern_type):
            return self.name == acl.name
        if acl.pattern_type == PatternType.LITERAL:        # MATCH against a literal pattern
            return self.name == acl.name or acl.name == WILDCARD
        return self.name.startswith(acl.name)             # MATCH against a prefixed pattern

    def _matches_entry(self, acl: AclBinding) -> bool:
        return ((self.principal is None or self.principal == acl.principal)
                and (self.host is None or self.host == acl.host)
                and (self.operation == AclOperation.ANY or self.operation == acl.operation)
                and (self.permission == AclPermissionType.ANY or self.permission == acl.permission))


def validate_new(acl: AclBinding) -> None:
    """CreateAcls' checks, in Kafka's order (AclApis, then AclControlManager.validateNewAcl); INVALID_REQUEST."""
    def invalid(message: str) -> KafkaError:
        return KafkaError(ErrorCode.INVALID_REQUEST, message)

    if acl.resource_type == ResourceType.CLUSTER and acl.name != CLUSTER_NAME:
        raise invalid(f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}")
    if acl.name == "":
        raise invalid("Invalid empty resource name")
    if acl.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
        raise invalid(f"Invalid resourceType {acl.resource_type.name}")
    if acl.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        raise invalid(f"Invalid patternType {acl.pattern_type.name}")
    if acl.operation in (AclOperation.UNKNOWN, AclOperation.ANY):
        raise invalid(f"Invalid operation {acl.operation.name}")
    if acl.permission not in (AclPermissionType.ALLOW, AclPermissionType.DENY):
        raise invalid(f"Invalid permissionType {acl.permission.name}")
    if ":" not in acl.principal:
        raise invalid(f"Could not parse principal from `{acl.principal}` (no colon is present separating the "
                      "principal type from the principal name)")


class AclStore:
    """The cluster's ACL bindings, in creation order, indexed by resource type for the authorizer."""

    def __init__(self, changed: Callable[[], None] = lambda: None) -> None:
        self._acls: dict[AclBinding, None] = {}
        self._by_type: dict[ResourceType, list[AclBinding]] = {}
        self._changed = changed

    def __len__(self) -> int:
        return len(self._acls)

    def __iter__(self) -> Iterator[AclBinding]:
        return iter(list(self._acls))

    def of_type(self, resource_type: ResourceType) -> list[AclBinding]:
        return self._by_type.get(resource_type, [])

    def create(self, acls: list[AclBinding]) -> list[KafkaError | None]:
        """Add each valid binding (an existing one is a success that changes nothing); one result per binding."""
        results: list[KafkaError | None] = []
        added = False
        for acl in acls:
            try:
                validate_new(acl)
            except KafkaError as exc:
                results.append(exc)
                continue
            if acl not in self._acls:
                self._acls[acl] = None
                added = True
            results.append(None)
        if added:
            self._reindex()
        return results

    def describe(self, flt: AclBindingFilter) -> list[AclBinding]:
        return [acl for acl in self._acls if flt.matches(acl)]

    def delete(self, filters: list[AclBindingFilter]) -> list[list[AclBinding]]:
        """What each filter matches, all judged against the set before any deletion (one binding matched by two
        filters is listed by both, as the controller answers), then removed together."""
        matched = [self.describe(flt) for flt in filters]
        gone = {acl for acls in matched for acl in acls}
        if gone:
            for acl in gone:
                del self._acls[acl]
            self._reindex()
        return matched

    def _reindex(self) -> None:
        self._by_type = {}
        for acl in self._acls:
            self._by_type.setdefault(acl.resource_type, []).append(acl)
        self._changed()

    def snapshot(self) -> list[dict]:
        return [acl.to_json() for acl in self._acls]

    def restore(self, data: list[dict]) -> None:
        self._acls = {AclBinding.from_json(d): None for d in data}
        self._by_type = {}
        for acl in self._acls:
            self._by_type.setdefault(acl.resource_type, []).append(acl)
