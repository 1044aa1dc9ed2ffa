"""Load Kafka's JSON message-schema language (with ``//`` comments) into the typed model, validating as we go.

Every error is a ``SchemaError`` naming the file and the field, so a bad schema is fixed in one look.
"""

from __future__ import annotations

import base64
import json
import re
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kafkamock.schema.model import (
    COORDINATOR_TYPES,
    DEFAULT_STRUCT,
    MESSAGE_TYPES,
    NULLABLE_KINDS,
    PRIMITIVES,
    VARIABLE,
    ZERO_UUID,
    ArrayType,
    FieldSpec,
    FieldType,
    MessageSpec,
    Primitive,
    SchemaSet,
    StructRef,
    StructSpec,
    snake_case,
)
from kafkamock.schema.versions import MAX_VERSION, Versions

MESSAGE_KEYS = {
    "apiKey", "type", "listeners", "name", "validVersions", "deprecatedVersions", "flexibleVersions",
    "latestVersionUnstable", "headerVersions", "legacyVersions", "fields", "commonStructs", "about",
}
FIELD_KEYS = {
    "name", "type", "versions", "nullableVersions", "flexibleVersions", "default", "ignorable", "mapKey",
    "entityType", "zeroCopy", "tag", "taggedVersions", "fields", "about",
}
STRUCT_KEYS = {"name", "versions", "fields", "about"}
INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1), "int16": (-(2**15), 2**15 - 1), "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1), "uint16": (0, 2**16 - 1), "uint32": (0, 2**32 - 1),
}
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")


class SchemaError(ValueError):
    """A schema file that is not valid Kafka message-schema language."""

    def __init__(self, source: str, where: str, reason: str):
        self.source, self.where, self.reason = source, where, reason
        super().__init__(f"{source}: {where}: {reason}" if where else f"{source}: {reason}")


def strip_comments(text: str) -> str:
    """Remove ``//`` line comments outside JSON strings (Kafka's schema files use them freely)."""
    out: list[str] = []
    i, n, in_string = 0, len(text), False
    while i < n:
        c = text[i]
        if in_string:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
            out.append(c)
        elif c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


class _Loader:
    """Builds one MessageSpec from one parsed JSON document."""

    def __init__(self, source: str):
        self.source = source
        self.structs: dict[str, StructSpec] = {}
        self.common: dict[str, dict[str, Any]] = {}
        self.valid = Versions.NONE
        self.flexible = Versions.NONE

    def fail(self, where: str, reason: str) -> SchemaError:
        return SchemaError(self.source, where, reason)

    def versions(self, where: str, key: str, value: object) -> Versions:
        try:
            return Versions.parse(value)
        except ValueError as e:
            raise self.fail(where, f"{key}: {e}") from None

    def message(self, doc: object) -> MessageSpec:
        if not isinstance(doc, dict):
            raise self.fail("", "a schema must be a JSON object")
        name = doc.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            raise self.fail("", f"missing or invalid message name {name!r}")
        unknown = set(doc) - MESSAGE_KEYS
        if unknown:
            raise self.fail(name, f"unknown key(s) {sorted(unknown)}")
        mtype = doc.get("type")
        if mtype not in MESSAGE_TYPES:
            raise self.fail(name, f"type must be one of {', '.join(MESSAGE_TYPES)}, not {mtype!r}")
        if "validVersions" not in doc:
            raise self.fail(name, "missing validVersions")
        valid = self.versions(name, "validVersions", doc["validVersions"])
        # A retired API keeps its file with validVersions "none" and nothing else (Kafka does this).
        retired = valid.empty
        # kafkamock's extension: versions Kafka has removed (KIP-896) whose layout still follows from the fields'
        # version ranges. The codec handles them; Kafka's validVersions stay as Kafka ships them.
        legacy = self.versions(name, "legacyVersions", doc.get("legacyVersions", "none"))
        if not legacy.empty and (retired or legacy.highest + 1 != valid.lowest):
            raise self.fail(name, f"legacyVersions {legacy} must end right below validVersions {valid}")
        self.valid = valid if legacy.empty else Versions(legacy.lowest, valid.highest)
        if "flexibleVersions" not in doc and not retired:
            raise self.fail(name, "missing flexibleVersions")
        self.flexible = self.versions(name, "flexibleVersions", doc.get("flexibleVersions", "none"))
        api_key = doc.get("apiKey")
        if mtype in ("request", "response", *COORDINATOR_TYPES):
            # A coordinator record's apiKey is its record type, the int16 written in front of its key.
            if not isinstance(api_key, int) or isinstance(api_key, bool) or not 0 <= api_key <= MAX_VERSION:
                raise self.fail(name, f"a {mtype} needs an integer apiKey in 0..32767, not {api_key!r}")
        elif api_key is not None and (not isinstance(api_key, int) or isinstance(api_key, bool)):
            raise self.fail(name, f"apiKey must be an integer, not {api_key!r}")
        unstable = doc.get("latestVersionUnstable", False)
        if not isinstance(unstable, bool):
            raise self.fail(name, "latestVersionUnstable must be true or false")
        deprecated = self.versions(name, "deprecatedVersions", doc.get("deprecatedVersions", "none"))
        listeners = doc.get("listeners", [])
        if not isinstance(listeners, list) or not all(isinstance(x, str) for x in listeners):
            raise self.fail(name, "listeners must be a list of strings")
        header_versions = self.header_versions(name, mtype, doc.get("headerVersions"))

        common = doc.get("commonStructs", [])
        if not isinstance(common, list):
            raise self.fail(name, "commonStructs must be a list")
        for raw in common:
            if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
                raise self.fail(name, "each common struct needs a name")
            if set(raw) - STRUCT_KEYS:
                raise self.fail(f"{name}.{raw['name']}", f"unknown key(s) {sorted(set(raw) - STRUCT_KEYS)}")
            if raw["name"] in self.common:
                raise self.fail(f"{name}.{raw['name']}", "duplicate common struct name")
            self.common[raw["name"]] = raw
        fields = self.fields(name, doc.get("fields", [] if retired else None), self.valid)
        # Common structs are built on first use; build the unused ones too, so they are validated.
        for raw in common:
            self.common_struct(name, raw["name"])
        if not self.flexible.intersect(legacy).empty:
            raise self.fail(name, f"legacyVersions {legacy} cannot be flexible")
        struct = StructSpec(name, self.valid, fields)
        return MessageSpec(
            name=name, type=mtype, valid_versions=valid, flexible_versions=self.flexible, struct=struct,
            legacy_versions=legacy,
            api_key=api_key, listeners=tuple(listeners), latest_version_unstable=unstable,
            deprecated_versions=deprecated, header_versions=header_versions,
            common_structs=tuple(self.structs[c] for c in self.common), source=self.source,
        )

    def header_versions(self, name: str, mtype: str, raw: object) -> tuple[tuple[Versions, int], ...]:
        if raw is None:
            return ()
        if mtype not in ("request", "response") or not isinstance(raw, dict):
            raise self.fail(name, "headerVersions must be an object mapping version ranges to header versions, "
                                  "on a request or response")
        limit = 2 if mtype == "request" else 1
        out: list[tuple[Versions, int]] = []
        for text, header in raw.items():
            versions = self.versions(name, "headerVersions", text)
            if not isinstance(header, int) or isinstance(header, bool) or not 0 <= header <= limit:
                raise self.fail(name, f"headerVersions: {mtype} header version must be 0..{limit}, not {header!r}")
            if any(not v.intersect(versions).empty for v, _ in out):
                raise self.fail(name, f"headerVersions: range {text!r} overlaps another")
            out.append((versions, header))
        return tuple(out)

    def common_struct(self, where: str, type_name: str) -> StructSpec:
        if type_name not in self.structs:
            raw = self.common[type_name]
            versions = self.versions(f"{where}.{type_name}", "versions", raw.get("versions", "0+"))
            self.structs[type_name] = StructSpec(
                type_name, versions, self.fields(type_name, raw.get("fields"), versions)
            )
        return self.structs[type_name]

    def fields(self, struct: str, raw: object, versions: Versions) -> tuple[FieldSpec, ...]:
        if not isinstance(raw, list):
            raise self.fail(struct, "fields must be a list")
        fields = [self.field(struct, f, versions) for f in raw]
        names: set[str] = set()
        keys: set[str] = set()
        tags: dict[int, str] = {}
        for f in fields:
            if f.name in names:
                raise self.fail(f"{struct}.{f.name}", "duplicate field name")
            if f.key in keys:
                raise self.fail(f"{struct}.{f.name}", f"two fields map to the same key {f.key!r}")
            names.add(f.name)
            keys.add(f.key)
            if f.tag is not None:
                if f.tag in tags:
                    raise self.fail(f"{struct}.{f.name}", f"duplicate tag {f.tag} (also on {tags[f.tag]})")
                tags[f.tag] = f.name
        return tuple(fields)

    def field_type(self, where: str, raw: dict[str, Any], versions: Versions) -> FieldType:
        text = raw.get("type")
        if not isinstance(text, str) or not text:
            raise self.fail(where, "missing type")
        array = text.startswith("[]")
        base = text[2:] if array else text
        nested = raw.get("fields")
        if base in PRIMITIVES or base in VARIABLE:
            if nested is not None:
                raise self.fail(where, f"a {text} field cannot have fields")
            if array and base == "records":
                raise self.fail(where, "records cannot be an array element")
            element: FieldType = Primitive(base)
        elif _NAME.match(base):
            if nested is not None:
                if base in self.structs or base in self.common:
                    raise self.fail(where, f"duplicate struct name {base!r}")
                # Reserve the name before descending, so a nested struct of the same name is caught.
                self.structs[base] = StructSpec(base, versions, ())
                self.structs[base] = StructSpec(base, versions, self.fields(base, nested, versions))
                element = StructRef(self.structs[base])
            elif base in self.common:
                element = StructRef(self.common_struct(where, base))
            else:
                raise self.fail(where, f"unknown type {text!r}")
        else:
            raise self.fail(where, f"unknown type {text!r}")
        return ArrayType(element) if array else element

    def field(self, struct: str, raw: object, parent: Versions) -> FieldSpec:
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
            raise self.fail(struct, f"each field needs a name, got {raw!r}")
        where = f"{struct}.{raw['name']}"
        if not _NAME.match(raw["name"]):
            raise self.fail(where, "field names are identifiers (letters and digits)")
        unknown = set(raw) - FIELD_KEYS
        if unknown:
            raise self.fail(where, f"unknown key(s) {sorted(unknown)}")
        if "versions" not in raw and "taggedVersions" not in raw:
            raise self.fail(where, "missing versions")
        # As Kafka's FieldSpec: a tagged field that names no versions exists in its tagged versions.
        versions = self.versions(where, "versions", raw.get("versions", raw.get("taggedVersions")))
        ftype = self.field_type(where, raw, versions)
        nullable = self.versions(where, "nullableVersions", raw.get("nullableVersions", "none"))
        if not nullable.empty and ftype.kind not in NULLABLE_KINDS:
            raise self.fail(where, f"a {ftype} field cannot be nullable")
        flexible = None
        if "flexibleVersions" in raw:
            if ftype.kind not in ("string", "bytes"):
                raise self.fail(where, "only string and bytes fields can override flexibleVersions")
            flexible = self.versions(where, "flexibleVersions", raw["flexibleVersions"])
        for flag in ("ignorable", "mapKey", "zeroCopy"):
            if flag in raw and not isinstance(raw[flag], bool):
                raise self.fail(where, f"{flag} must be true or false")
        if raw.get("zeroCopy") and ftype.kind != "bytes":
            raise self.fail(where, "only bytes fields can be zeroCopy")
        tag = raw.get("tag")
        tagged = self.versions(where, "taggedVersions", raw.get("taggedVersions", "none"))
        if tag is not None:
            if not isinstance(tag, int) or isinstance(tag, bool) or tag < 0:
                raise self.fail(where, f"tag must be a non-negative integer, not {tag!r}")
            if tagged.empty:
                raise self.fail(where, f"tag {tag} needs taggedVersions")
            if raw.get("mapKey"):
                raise self.fail(where, "a tagged field cannot be a mapKey")
            if not versions.contains_range(tagged):
                raise self.fail(where, f"taggedVersions {tagged} are not within versions {versions}")
            if not self.flexible.contains_range(tagged.intersect(self.valid)):
                raise self.fail(where, f"taggedVersions {tagged} are outside the flexible versions {self.flexible}")
        elif not tagged.empty:
            raise self.fail(where, "taggedVersions without a tag")
        entity = raw.get("entityType")
        if entity is not None and not isinstance(entity, str):
            raise self.fail(where, "entityType must be a string")
        about = raw.get("about", "")
        if not isinstance(about, str):
            raise self.fail(where, "about must be a string")
        default = self.default(where, ftype, raw.get("default", ""), versions, nullable)
        return FieldSpec(
            name=raw["name"], type=ftype, versions=versions, nullable_versions=nullable, tagged_versions=tagged,
            tag=tag, default=default, ignorable=raw.get("ignorable", False), map_key=raw.get("mapKey", False),
            entity_type=entity, flexible_versions=flexible, zero_copy=raw.get("zeroCopy", False), about=about,
        )

    def default(self, where: str, ftype: FieldType, raw: object, versions: Versions, nullable: Versions) -> object:
        if raw is None:
            # A JSON null default (``"default": null``, as in ConsumerGroupMemberMetadataValue) is no default at all
            # to Kafka's generator: its FieldSpec reads it as "", so a struct defaults to an empty struct and an array
            # to an empty one. Only the string "null" means null.
            raw = ""
        if isinstance(raw, bool):
            raw = "true" if raw else "false"
        elif isinstance(raw, int | float):
            raw = str(raw)
        if not isinstance(raw, str):
            raise self.fail(where, f"default must be a string, not {raw!r}")
        kind = ftype.kind
        if raw == "null" and kind in NULLABLE_KINDS:
            if not nullable.contains_range(versions.intersect(self.valid)):
                raise self.fail(where, f"null cannot be the default: not all versions {versions} are nullable")
            return None
        try:
            if kind in INT_RANGES:
                if raw == "":
                    return 0
                value = int(raw, 16) if raw.lower().startswith(("0x", "-0x")) else int(raw, 10)
                low, high = INT_RANGES[kind]
                if not low <= value <= high:
                    raise ValueError(f"{value} is out of range for {kind}")
                return value
            if kind == "bool":
                if raw in ("", "false"):
                    return False
                if raw == "true":
                    return True
                raise ValueError(f"{raw!r} is not true or false")
            if kind == "float64":
                return float(raw) if raw else 0.0
            if kind == "string":
                return raw
            if kind == "uuid":
                return _parse_uuid(raw)
            if kind in ("bytes", "records"):
                if raw:
                    raise ValueError("only null or an empty default is allowed")
                return b""
            if kind == "array":
                if raw:
                    raise ValueError("only null or an empty default is allowed")
                return ()
            if kind == "struct":
                if raw:
                    raise ValueError("only null or an empty default is allowed")
                return DEFAULT_STRUCT
        except ValueError as e:
            raise self.fail(where, f"invalid default {raw!r} for {ftype}: {e}") from None
        raise self.fail(where, f"invalid default {raw!r}")  # pragma: no cover


def _parse_uuid(text: str) -> uuid.UUID:
    if not text:
        return ZERO_UUID
    try:
        return uuid.UUID(text)
    except ValueError:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        if len(raw) != 16:
            raise ValueError(f"{text!r} is not a UUID") from None
        return uuid.UUID(bytes=raw)


def load_schema_text(text: str, source: str = "<string>") -> MessageSpec:
    """Load one schema from its text."""
    try:
        doc = json.loads(strip_comments(text))
    except json.JSONDecodeError as e:
        raise SchemaError(source, "", f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
    return _Loader(source).message(doc)


def load_schema_file(path: str | Path) -> MessageSpec:
    path = Path(path)
    return load_schema_text(path.read_text(encoding="utf-8"), str(path))


def load_schemas(paths: str | Path | Iterable[str | Path]) -> SchemaSet:
    """Load every ``*.json`` schema in a directory (or the given files) into a SchemaSet.

    Works on kafkamock's ``schemas/`` and on an upstream Kafka ``common/message`` directory alike.
    """
    if isinstance(paths, str | Path):
        root = Path(paths)
        files = sorted(root.glob("*.json")) if root.is_dir() else [root]
    else:
        files = [Path(p) for p in paths]
    messages: dict[str, MessageSpec] = {}
    apis: dict[tuple[int, str], str] = {}
    for f in files:
        spec = load_schema_file(f)
        if spec.name in messages:
            raise SchemaError(str(f), spec.name, f"duplicate message name (also in {messages[spec.name].source})")
        if spec.type in ("request", "response", *COORDINATOR_TYPES) and spec.api_key is not None:
            other = apis.get((spec.api_key, spec.type))
            if other:
                raise SchemaError(str(f), spec.name, f"apiKey {spec.api_key} is also used by {other}")
            apis[(spec.api_key, spec.type)] = spec.name
        messages[spec.name] = spec
    return SchemaSet(messages)


__all__ = ["SchemaError", "load_schemas", "load_schema_file", "load_schema_text", "strip_comments", "snake_case"]
