"""The Admin client's ACL, client-quota and SCRAM-credential values, modelled on Java's (``org.apache.kafka.common.acl``
and ``.resource``, ``.quota``, and the SCRAM classes of ``org.apache.kafka.clients.admin``). ``kafkamock.client.admin``
re-exports every name here; the calls that take and return them are ``Admin``'s.

    binding = AclBinding(ResourcePattern(AclResourceType.TOPIC, "orders"),
                         AccessControlEntry("User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW))
    (await admin.create_acls([binding])).all()

The enums are Kafka's wire codes (``kafkamock.security_codes``, shared with the broker). ``AclResourceType`` is
Kafka's ``ResourceType`` (TOPIC 2, GROUP 3, CLUSTER 4...), which ACLs name; ``kafkamock.client.admin.ResourceType``
is ``ConfigResource.Type`` (TOPIC 2, BROKER 4, GROUP 32...), which configs name. The two share a name in Java's
packages but not their codes, so a value of one is refused where the other is wanted.

As in Java, a binding names one definite pattern and entry (no ANY, no MATCH: the constructors refuse them, and
``create_acls`` refuses UNKNOWN), while a filter may leave any field open (None or ANY) and match by MATCH.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar, NamedTuple, TypeVar

from kafkamock.client.errors import KafkaError
from kafkamock.security_codes import AclOperation, AclPermissionType, PatternType, ScramMechanism
from kafkamock.security_codes import ResourceType as AclResourceType

__all__ = [
    "AccessControlEntry", "AccessControlEntryFilter", "AclBinding", "AclBindingFilter", "AclOperation",
    "AclPermissionType", "AclResourceType", "ClientQuotaAlteration", "ClientQuotaEntity", "ClientQuotaFilter",
    "ClientQuotaFilterComponent", "DeleteAclsFilterResult", "PatternType", "ResourcePattern", "ResourcePatternFilter",
    "ScramCredentialInfo", "ScramMechanism", "UserScramCredentialDeletion", "UserScramCredentialUpsertion",
    "UserScramCredentialsDescription",
]


def _member(enum: type[Enum], value: Any, what: str) -> Any:
    """``value`` as a member of ``enum``: the member itself, its code or its name. A member of another enum is
    refused, above all the config ResourceType where the ACL one is wanted (same name, other codes)."""
    if isinstance(value, enum):
        return value
    if isinstance(value, Enum):
        raise TypeError(f"{what} must be a {enum.__module__}.{enum.__qualname__}, not {type(value).__module__}."
                        f"{type(value).__qualname__}.{value.name} (the two code sets differ)")
    if isinstance(value, str):
        try:
            return enum[value.upper()]
        except KeyError:
            raise ValueError(f"{what}: no {enum.__qualname__} named {value!r}") from None
    if isinstance(value, int) and not isinstance(value, bool):
        return enum(value)
    raise TypeError(f"{what} must be a {enum.__qualname__}, not {value!r}")


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {value!r}")
    return value


def _optional_text(value: Any, what: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{what} must be a str or None, not {value!r}")
    return value


E = TypeVar("E", bound=Enum)


def decode(enum: type[E], code: int) -> E:
    """A code from a response; one this client does not know is UNKNOWN, as Java's ``fromCode`` has it."""
    try:
        return enum(code)
    except ValueError:
        return enum(0)


# -- ACLs -----------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ResourcePattern:
    """A resource pattern of a binding (Java's ResourcePattern): a type, a name (``*`` for every resource of the
    type when LITERAL) and LITERAL or PREFIXED."""

    resource_type: AclResourceType
    name: str
    pattern_type: PatternType = PatternType.LITERAL

    def __post_init__(self) -> None:
        rtype = _member(AclResourceType, self.resource_type, "resource_type")
        ptype = _member(PatternType, self.pattern_type, "pattern_type")
        _text(self.name, "name")
        if rtype == AclResourceType.ANY:
            raise ValueError("resource_type must not be ANY")
        if ptype in (PatternType.MATCH, PatternType.ANY):
            raise ValueError(f"pattern_type must not be {ptype.name}")
        object.__setattr__(self, "resource_type", rtype)
        object.__setattr__(self, "pattern_type", ptype)

    def to_filter(self) -> ResourcePatternFilter:
        return ResourcePatternFilter(self.resource_type, self.name, self.pattern_type)

    def __str__(self) -> str:
        return (f"ResourcePattern(resourceType={self.resource_type.name}, name={self.name}, "
                f"patternType={self.pattern_type.name})")


@dataclass(frozen=True)
class ResourcePatternFilter:
    """Which resource patterns a filter matches (Java's ResourcePatternFilter): ANY type, None name and ANY
    pattern type match everything; MATCH matches the patterns that apply to the named resource (the literal name,
    the literal ``*``, and every PREFIXED pattern the name starts with)."""

    resource_type: AclResourceType = AclResourceType.ANY
    name: str | None = None
    pattern_type: PatternType = PatternType.ANY

    ANY: ClassVar[ResourcePatternFilter]

    def __post_init__(self) -> None:
        object.__setattr__(self, "resource_type", _member(AclResourceType, self.resource_type, "resource_type"))
        object.__setattr__(self, "pattern_type", _member(PatternType, self.pattern_type, "pattern_type"))
        _optional_text(self.name, "name")

    @property
    def is_unknown(self) -> bool:
        return self.resource_type == AclResourceType.UNKNOWN or self.pattern_type == PatternType.UNKNOWN

    def find_indefinite_field(self) -> str | None:
        """Why this filter names no single pattern (None if it does): Java's ``findIndefiniteField``."""
        if self.resource_type in (AclResourceType.ANY, AclResourceType.UNKNOWN):
            return f"Resource type is {self.resource_type.name}."
        if self.name is None:
            return "Resource name is NULL."
        if self.pattern_type in (PatternType.MATCH, PatternType.UNKNOWN):
            return f"Resource pattern type is {self.pattern_type.name}."
        return None

    def __str__(self) -> str:
        return (f"ResourcePatternFilter(resourceType={self.resource_type.name}, "
                f"name={'<any>' if self.name is None else self.name}, patternType={self.pattern_type.name})")


ResourcePatternFilter.ANY = ResourcePatternFilter()


@dataclass(frozen=True)
class AccessControlEntry:
    """Who may (ALLOW) or may not (DENY) do what from where (Java's AccessControlEntry): a principal
    ("User:alice", "User:*"), a host ("*" for any), an operation."""

    principal: str
    host: str
    operation: AclOperation
    permission_type: AclPermissionType

    def __post_init__(self) -> None:
        _text(self.principal, "principal")
        _text(self.host, "host")
        op = _member(AclOperation, self.operation, "operation")
        permission = _member(AclPermissionType, self.permission_type, "permission_type")
        if op == AclOperation.ANY:
            raise ValueError("operation must not be ANY")
        if permission == AclPermissionType.ANY:
            raise ValueError("permission_type must not be ANY")
        object.__setattr__(self, "operation", op)
        object.__setattr__(self, "permission_type", permission)

    def to_filter(self) -> AccessControlEntryFilter:
        return AccessControlEntryFilter(self.principal, self.host, self.operation, self.permission_type)

    def __str__(self) -> str:
        return (f"(principal={self.principal}, host={self.host}, operation={self.operation.name}, "
                f"permissionType={self.permission_type.name})")


@dataclass(frozen=True)
class AccessControlEntryFilter:
    """Which entries a filter matches (Java's AccessControlEntryFilter): None and ANY match everything."""

    principal: str | None = None
    host: str | None = None
    operation: AclOperation = AclOperation.ANY
    permission_type: AclPermissionType = AclPermissionType.ANY

    ANY: ClassVar[AccessControlEntryFilter]

    def __post_init__(self) -> None:
        _optional_text(self.principal, "principal")
        _optional_text(self.host, "host")
        object.__setattr__(self, "operation", _member(AclOperation, self.operation, "operation"))
        object.__setattr__(self, "permission_type",
                           _member(AclPermissionType, self.permission_type, "permission_type"))

    @property
    def is_unknown(self) -> bool:
        return self.operation == AclOperation.UNKNOWN or self.permission_type == AclPermissionType.UNKNOWN

    def find_indefinite_field(self) -> str | None:
        if self.principal is None:
            return "Principal is NULL"
        if self.host is None:
            return "Host is NULL"
        if self.operation in (AclOperation.ANY, AclOperation.UNKNOWN):
            return f"Operation is {self.operation.name}"
        if self.permission_type in (AclPermissionType.ANY, AclPermissionType.UNKNOWN):
            return f"Permission type is {self.permission_type.name}"
        return None

    def __str__(self) -> str:
        return (f"(principal={'<any>' if self.principal is None else self.principal}, "
                f"host={'<any>' if self.host is None else self.host}, operation={self.operation.name}, "
                f"permissionType={self.permission_type.name})")


AccessControlEntryFilter.ANY = AccessControlEntryFilter()


@dataclass(frozen=True)
class AclBinding:
    """One ACL: a resource pattern and an entry (Java's AclBinding)."""

    pattern: ResourcePattern
    entry: AccessControlEntry

    def __post_init__(self) -> None:
        if not isinstance(self.pattern, ResourcePattern) or not isinstance(self.entry, AccessControlEntry):
            raise TypeError("AclBinding(ResourcePattern, AccessControlEntry)")

    @property
    def is_unknown(self) -> bool:
        return self.to_filter().is_unknown

    def to_filter(self) -> AclBindingFilter:
        return AclBindingFilter(self.pattern.to_filter(), self.entry.to_filter())

    def __str__(self) -> str:
        return f"(pattern={self.pattern}, entry={self.entry})"


@dataclass(frozen=True)
class AclBindingFilter:
    """Which bindings ``describe_acls`` lists and ``delete_acls`` removes (Java's AclBindingFilter);
    ``AclBindingFilter.ANY`` matches every binding."""

    pattern_filter: ResourcePatternFilter = ResourcePatternFilter.ANY
    entry_filter: AccessControlEntryFilter = AccessControlEntryFilter.ANY

    ANY: ClassVar[AclBindingFilter]

    def __post_init__(self) -> None:
        if (not isinstance(self.pattern_filter, ResourcePatternFilter)
                or not isinstance(self.entry_filter, AccessControlEntryFilter)):
            raise TypeError("AclBindingFilter(ResourcePatternFilter, AccessControlEntryFilter)")

    @property
    def is_unknown(self) -> bool:
        return self.pattern_filter.is_unknown or self.entry_filter.is_unknown

    def find_indefinite_field(self) -> str | None:
        return self.pattern_filter.find_indefinite_field() or self.entry_filter.find_indefinite_field()

    def __str__(self) -> str:
        return f"(patternFilter={self.pattern_filter}, entryFilter={self.entry_filter})"


AclBindingFilter.ANY = AclBindingFilter()


@dataclass(frozen=True)
class DeleteAclsFilterResult:
    """One binding a ``delete_acls`` filter matched, and the error that kept it (None: deleted) — Java's
    ``DeleteAclsResult.FilterResult``."""

    binding: AclBinding
    error: KafkaError | None


def filter_body(flt: AclBindingFilter) -> dict[str, Any]:
    """A filter as DescribeAcls and DeleteAcls carry it."""
    p, e = flt.pattern_filter, flt.entry_filter
    return {"resource_type_filter": int(p.resource_type), "resource_name_filter": p.name,
            "pattern_type_filter": int(p.pattern_type), "principal_filter": e.principal, "host_filter": e.host,
            "operation": int(e.operation), "permission_type": int(e.permission_type)}


def creation_body(binding: AclBinding) -> dict[str, Any]:
    p, e = binding.pattern, binding.entry
    return {"resource_type": int(p.resource_type), "resource_name": p.name, "resource_pattern_type":
            int(p.pattern_type), "principal": e.principal, "host": e.host, "operation": int(e.operation),
            "permission_type": int(e.permission_type)}


def binding_of(resource_type: int, name: str, pattern_type: int, principal: str, host: str, operation: int,
               permission_type: int) -> AclBinding:
    """A binding from a DescribeAcls or DeleteAcls response."""
    return AclBinding(ResourcePattern(decode(AclResourceType, resource_type), name, decode(PatternType, pattern_type)),
                      AccessControlEntry(principal, host, decode(AclOperation, operation),
                                         decode(AclPermissionType, permission_type)))


# -- client quotas --------------------------------------------------------------------------------------------------

class ClientQuotaEntity(Mapping[str, str | None]):
    """The entity a quota applies to (Java's ClientQuotaEntity): {entity type: name}, the types ``USER``,
    ``CLIENT_ID`` and ``IP``; a None name is the type's default entity. Hashable, so results are keyed by it.

        ClientQuotaEntity({ClientQuotaEntity.USER: "alice", ClientQuotaEntity.CLIENT_ID: None})
    """

    USER: ClassVar[str] = "user"
    CLIENT_ID: ClassVar[str] = "client-id"
    IP: ClassVar[str] = "ip"

    __slots__ = ("_entries",)

    def __init__(self, entries: Mapping[str, str | None]):
        self._entries: dict[str, str | None] = {_text(t, "entity type"): _optional_text(n, "entity name")
                         for t, n in dict(entries).items()}

    def __getitem__(self, entity_type: str) -> str | None:
        return self._entries[entity_type]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __hash__(self) -> int:
        return hash(frozenset(self._entries.items()))

    def __repr__(self) -> str:
        return f"ClientQuotaEntity({self._entries!r})"


@dataclass(frozen=True)
class ClientQuotaFilterComponent:
    """One entity type's condition in a ClientQuotaFilter (Java's ClientQuotaFilterComponent); make it with
    ``of_entity``, ``of_default_entity`` or ``of_entity_type``. ``match_type`` is DescribeClientQuotas' code."""

    entity_type: str
    match_type: int
    match: str | None = None

    EXACT: ClassVar[int] = 0
    DEFAULT: ClassVar[int] = 1
    SPECIFIED: ClassVar[int] = 2

    @classmethod
    def of_entity(cls, entity_type: str, name: str) -> ClientQuotaFilterComponent:
        """The entity of this type with this name."""
        return cls(_text(entity_type, "entity type"), cls.EXACT, _text(name, "entity name"))

    @classmethod
    def of_default_entity(cls, entity_type: str) -> ClientQuotaFilterComponent:
        """The type's default entity."""
        return cls(_text(entity_type, "entity type"), cls.DEFAULT, None)

    @classmethod
    def of_entity_type(cls, entity_type: str) -> ClientQuotaFilterComponent:
        """Any entity of this type, named or default."""
        return cls(_text(entity_type, "entity type"), cls.SPECIFIED, None)


@dataclass(frozen=True)
class ClientQuotaFilter:
    """Which quota entities ``describe_client_quotas`` lists (Java's ClientQuotaFilter): those that satisfy every
    component, and with ``strict`` only those that name no other entity type."""

    components: tuple[ClientQuotaFilterComponent, ...] = ()
    strict: bool = False

    def __post_init__(self) -> None:
        components = tuple(self.components)
        if not all(isinstance(c, ClientQuotaFilterComponent) for c in components):
            raise TypeError("components must be ClientQuotaFilterComponents (of_entity, of_default_entity, "
                            "of_entity_type)")
        object.__setattr__(self, "components", components)

    @classmethod
    def contains(cls, components: Iterable[ClientQuotaFilterComponent]) -> ClientQuotaFilter:
        return cls(tuple(components), False)

    @classmethod
    def contains_only(cls, components: Iterable[ClientQuotaFilterComponent]) -> ClientQuotaFilter:
        return cls(tuple(components), True)

    @classmethod
    def all(cls) -> ClientQuotaFilter:
        return cls((), False)


@dataclass(frozen=True)
class ClientQuotaAlteration:
    """Changes to one entity's quotas (Java's ClientQuotaAlteration): ``ops`` are (key, value) pairs or a
    {key: value} mapping; a None value removes the key.

        ClientQuotaAlteration({"user": "alice"}, {"producer_byte_rate": 1_048_576, "consumer_byte_rate": None})
    """

    class Op(NamedTuple):
        key: str
        value: float | None

    entity: ClientQuotaEntity
    ops: tuple[ClientQuotaAlteration.Op, ...]

    def __post_init__(self) -> None:
        entity = self.entity if isinstance(self.entity, ClientQuotaEntity) else ClientQuotaEntity(self.entity)
        pairs = self.ops.items() if isinstance(self.ops, Mapping) else self.ops
        ops = tuple(ClientQuotaAlteration.Op(_text(k, "quota key"), None if v is None else float(v))
                    for k, v in pairs)
        object.__setattr__(self, "entity", entity)
        object.__setattr__(self, "ops", ops)


# -- SCRAM credentials ----------------------------------------------------------------------------------------------

class ScramCredentialInfo(NamedTuple):
    """A user's credential for one mechanism, without its secrets (Java's ScramCredentialInfo)."""
    mechanism: ScramMechanism
    iterations: int


@dataclass(frozen=True)
class UserScramCredentialsDescription:
    """The SCRAM mechanisms a user has credentials for (Java's UserScramCredentialsDescription)."""
    name: str
    credential_infos: list[ScramCredentialInfo]


def _mechanism(value: Any) -> ScramMechanism:
    """A mechanism from its member, code or name ("SCRAM-SHA-256"); anything else is UNKNOWN, which
    ``alter_user_scram_credentials`` answers with UNSUPPORTED_SASL_MECHANISM, as Java does."""
    if isinstance(value, ScramMechanism):
        return value
    if isinstance(value, str):
        return ScramMechanism.from_mechanism_name(value.upper().replace("_", "-"))
    if isinstance(value, int) and not isinstance(value, bool):
        return decode(ScramMechanism, value)
    raise TypeError(f"mechanism must be a ScramMechanism, not {value!r}")


def random_salt() -> bytes:
    """Java's salt for an upsertion (UserScramCredentialUpsertion, ScramFormatter.secureRandomBytes): the UTF-8
    bytes of a random 130-bit number written in base 36."""
    n = secrets.randbits(130)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, d = divmod(n, 36)
        out = digits[d] + out
        if not n:
            return out.encode()


@dataclass(frozen=True)
class UserScramCredentialUpsertion:
    """Set a user's credential for one mechanism (Java's UserScramCredentialUpsertion). The password never leaves
    the client: ``alter_user_scram_credentials`` sends the salt and SaltedPassword = Hi(password, salt, iterations)
    (RFC 5802, PBKDF2 with the mechanism's HMAC), as Java's Admin does. Without a salt a random one is made here, as
    Java's constructor makes it."""

    user: str
    mechanism: ScramMechanism
    iterations: int
    password: bytes = field(repr=False)
    salt: bytes | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "mechanism", _mechanism(self.mechanism))
        password = self.password.encode() if isinstance(self.password, str) else bytes(self.password)
        object.__setattr__(self, "password", password)
        object.__setattr__(self, "salt", random_salt() if self.salt is None else bytes(self.salt))
        object.__setattr__(self, "iterations", int(self.iterations))

    def salted_password(self) -> bytes:
        """Hi(password, salt, iterations): Java's ScramFormatter.hi, which is PBKDF2-HMAC with one block of the
        hash's size (an iteration count below 1 computes one iteration, as Java's loop does; the broker refuses
        fewer than 4096)."""
        assert self.salt is not None                  # made in __post_init__
        return hashlib.pbkdf2_hmac(self.mechanism.hash_name, self.password, self.salt, max(1, self.iterations))


@dataclass(frozen=True)
class UserScramCredentialDeletion:
    """Remove a user's credential for one mechanism (Java's UserScramCredentialDeletion)."""

    user: str
    mechanism: ScramMechanism

    def __post_init__(self) -> None:
        object.__setattr__(self, "mechanism", _mechanism(self.mechanism))
