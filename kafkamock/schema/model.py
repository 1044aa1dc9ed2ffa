"""The typed model of a message schema, as loaded and validated from Kafka's JSON schema language.

The model is immutable and version-independent; ``StructSpec.at(version)`` gives the flat view a codec needs
for one version (which fields are on the wire, in which order, which are tagged).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from kafkamock.schema.versions import Versions

PRIMITIVES = {
    "bool": 1, "int8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4, "int64": 8, "float64": 8, "uuid": 16,
}
"""Fixed-width types and their sizes in bytes."""

VARIABLE = ("string", "bytes", "records")
NULLABLE_KINDS = ("string", "bytes", "records", "array", "struct")
MESSAGE_TYPES = ("request", "response", "header", "data", "metadata", "coordinator-key", "coordinator-value")
COORDINATOR_TYPES = ("coordinator-key", "coordinator-value")
"""Record schemas of a coordinator's log (e.g. ``__consumer_offsets``): coded like "data" messages, and their
``apiKey`` is the record type that Kafka writes as the int16 in front of the key."""

_SNAKE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def snake_case(name: str) -> str:
    """``GroupId`` -> ``group_id``, ``ISRNodes`` -> ``isr_nodes``, ``IsRenewAck`` -> ``is_renew_ack``."""
    return _SNAKE.sub("_", name).lower()


@dataclass(frozen=True, slots=True)
class Primitive:
    name: str  # one of PRIMITIVES or VARIABLE

    @property
    def kind(self) -> str:
        return self.name

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class ArrayType:
    element: FieldType

    kind: Literal["array"] = "array"

    def __str__(self) -> str:
        return f"[]{self.element}"


@dataclass(frozen=True, slots=True, eq=False)
class StructRef:
    """A field whose type is a struct (inline or from commonStructs)."""

    struct: StructSpec

    kind: Literal["struct"] = "struct"

    def __str__(self) -> str:
        return self.struct.name


FieldType = Primitive | ArrayType | StructRef


@dataclass(frozen=True, slots=True, eq=False)
class FieldSpec:
    name: str
    type: FieldType
    versions: Versions
    nullable_versions: Versions = Versions.NONE
    tagged_versions: Versions = Versions.NONE
    tag: int | None = None
    default: object = None  # the parsed default (immutable form: tuples for arrays)
    ignorable: bool = False
    map_key: bool = False
    entity_type: str | None = None
    flexible_versions: Versions | None = None  # a string/bytes field's own override
    zero_copy: bool = False
    about: str = ""
    key: str = field(init=False)
    """The field's name in decoded messages (snake_case), computed once."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", snake_case(self.name))

    def present(self, version: int) -> bool:
        return version in self.versions or version in self.tagged_versions

    def tagged(self, version: int) -> bool:
        return version in self.tagged_versions

    def nullable(self, version: int) -> bool:
        return version in self.nullable_versions


@dataclass(frozen=True, slots=True, eq=False)
class StructSpec:
    name: str
    versions: Versions
    fields: tuple[FieldSpec, ...]

    def at(self, version: int) -> StructLayout:
        return StructLayout(self, version)


@dataclass(frozen=True, slots=True, eq=False)
class StructLayout:
    """Which fields of a struct are on the wire at one version."""

    spec: StructSpec
    version: int

    @property
    def regular(self) -> list[FieldSpec]:
        v = self.version
        return [f for f in self.spec.fields if v in f.versions and not f.tagged(v)]

    @property
    def tagged(self) -> list[FieldSpec]:
        return sorted((f for f in self.spec.fields if f.tagged(self.version)), key=lambda f: f.tag or 0)

    @property
    def absent(self) -> list[FieldSpec]:
        return [f for f in self.spec.fields if not f.present(self.version)]


@dataclass(frozen=True, slots=True, eq=False)
class MessageSpec:
    name: str
    type: str  # one of MESSAGE_TYPES
    valid_versions: Versions
    flexible_versions: Versions
    struct: StructSpec
    api_key: int | None = None
    listeners: tuple[str, ...] = ()
    latest_version_unstable: bool = False
    deprecated_versions: Versions = Versions.NONE
    header_versions: tuple[tuple[Versions, int], ...] = ()
    common_structs: tuple[StructSpec, ...] = ()
    source: str = ""  # the file it came from, for error messages
    legacy_versions: Versions = Versions.NONE  # removed from Kafka, still decodable (kafkamock's legacyVersions)

    @property
    def codec_versions(self) -> Versions:
        """Every version the codec reads and writes: Kafka's ``valid_versions`` plus any legacy ones below."""
        if self.legacy_versions.empty:
            return self.valid_versions
        return Versions(self.legacy_versions.lowest, self.valid_versions.highest)

    @property
    def fields(self) -> tuple[FieldSpec, ...]:
        return self.struct.fields

    @property
    def record_type(self) -> int | None:
        """The record type of a coordinator-key/value schema (its ``apiKey``: OffsetCommit 1, GroupMetadata 2, ...),
        else None. In ``__consumer_offsets`` the record key is this int16 then the key struct at version 0."""
        return self.api_key if self.type in COORDINATOR_TYPES else None

    @property
    def api_name(self) -> str:
        """``ShareFetchRequest`` -> ``ShareFetch``."""
        for suffix in ("Request", "Response"):
            if self.type == suffix.lower() and self.name.endswith(suffix):
                return self.name[: -len(suffix)]
        return self.name

    def is_flexible(self, version: int) -> bool:
        return version in self.flexible_versions

    def header_version(self, version: int) -> int:
        """The request/response header version that frames this message at ``version``."""
        for versions, header in self.header_versions:
            if version in versions:
                return header
        if self.type == "request":
            return 2 if self.is_flexible(version) else 1
        return 1 if self.is_flexible(version) else 0


ZERO_UUID = uuid.UUID(int=0)


class _DefaultStruct:
    """The default of a non-null struct field: a struct whose fields all take their defaults."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "DEFAULT_STRUCT"


DEFAULT_STRUCT = _DefaultStruct()


@dataclass(frozen=True, slots=True)
class SchemaSet:
    """All messages loaded from one directory, by name and by API key."""

    messages: dict[str, MessageSpec] = field(default_factory=dict)

    def __getitem__(self, name: str) -> MessageSpec:
        return self.messages[name]

    def __contains__(self, name: object) -> bool:
        return name in self.messages

    def __iter__(self) -> Iterator[MessageSpec]:
        return iter(self.messages.values())

    def __len__(self) -> int:
        return len(self.messages)
