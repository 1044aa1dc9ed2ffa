"""Apache Kafka 4.3.1's broker, topic and group configs as facts, and Kafka's way of reading a value.

``kafka_configs.json`` is written by tools/import_kafka_facts.py from Kafka's own ConfigDefs (and checked against
them by a test): every config's name, type, default (as DescribeConfigs writes it), validator, internal flag, how a
broker config updates dynamically (``read-only``, ``per-broker``, ``cluster-wide``) and its synonyms. This module
loads it into typed records and parses and validates values as Kafka's ``ConfigDef.parseType`` and validators do,
with their error messages, so a refused value reads the same from kafkamock as from Kafka.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

FACTS_FILE = Path(__file__).with_name("kafka_configs.json")
KAFKA_VERSION = "4.3.1"

_INTEGER = re.compile(r"[+-]?[0-9]+")
_DOUBLE = re.compile(r"[+-]?(?:NaN|Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)[fFdD]?")
_BITS = {"SHORT": 16, "INT": 32, "LONG": 64}


class ConfigError(ValueError):
    """A value Kafka (or kafkamock) refuses for a config; the message is Kafka's ConfigException text."""


def invalid(name: str, value: Any, message: str | None = None) -> ConfigError:
    """Kafka's ``ConfigException(name, value, message)``."""
    return ConfigError(f"Invalid value {java_text(value)} for configuration {name}" + (f": {message}" if message else ""))


def java_text(value: Any) -> str:
    """How Java's string concatenation prints a parsed value in a message (lists as ``[a, b]``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(java_text(v) for v in value) + "]"
    if isinstance(value, float):
        return java_double(value)
    return str(value)


def java_double(x: float) -> str:
    """Java's ``Double.toString``: plain between 1e-3 and 1e7 (always with a fraction), else ``d.dddE±n``."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0 or 1e-3 <= abs(x) < 1e7:
        text = repr(float(x))
        return text if "e" not in text else format(Decimal(text), "f")
    sign, digits, exponent = Decimal(repr(float(x))).normalize().as_tuple()
    assert isinstance(exponent, int)
    mantissa = "".join(map(str, digits))
    power = exponent + len(mantissa) - 1
    fraction = mantissa[1:] or "0"
    return f"{'-' if sign else ''}{mantissa[0]}.{fraction}E{power}"


def parse_type(name: str, raw: Any, type_: str) -> Any:
    """Kafka's ``ConfigDef.parseType`` for a string (or an already typed value): bool, int, float, list of str,
    or str; raises ConfigError with Kafka's message."""
    if raw is None:
        return None
    if not isinstance(raw, str):
        return _typed(name, raw, type_)
    trimmed = raw.strip()
    if type_ == "BOOLEAN":
        if trimmed.lower() in ("true", "false"):
            return trimmed.lower() == "true"
        raise invalid(name, raw, "Expected value to be either true or false")
    if type_ in _BITS:
        bits = _BITS[type_]
        if _INTEGER.fullmatch(trimmed) and -(2 ** (bits - 1)) <= int(trimmed) < 2 ** (bits - 1):
            return int(trimmed)
        raise invalid(name, raw, f"Not a number of type {type_}")
    if type_ == "DOUBLE":
        if _DOUBLE.fullmatch(trimmed):
            return float(trimmed.rstrip("fFdD").replace("Infinity", "inf"))
        raise invalid(name, raw, "Not a number of type DOUBLE")
    if type_ == "LIST":
        return [] if not trimmed else re.split(r"\s*,\s*", trimmed)
    return trimmed                      # STRING, PASSWORD, CLASS (a class name: no classes to load here)


def _typed(name: str, value: Any, type_: str) -> Any:
    if type_ == "BOOLEAN" and isinstance(value, bool):
        return value
    if type_ in _BITS and isinstance(value, int) and not isinstance(value, bool):
        bits = _BITS[type_]
        if -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
            return value
        raise invalid(name, value, f"Not a number of type {type_}")
    if type_ == "DOUBLE" and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if type_ == "LIST" and isinstance(value, list | tuple):
        return [str(v) for v in value]
    return parse_type(name, str(value).lower() if isinstance(value, bool) else str(value), type_)


def to_string(value: Any, type_: str) -> str | None:
    """Kafka's ``ConfigDef.convertToString``: how DescribeConfigs writes a parsed value."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if type_ == "LIST":
        return ",".join(value) if isinstance(value, list) else str(value)
    if isinstance(value, float):
        return java_double(value)
    return str(value)


@dataclass(frozen=True, slots=True)
class Validator:
    """One of Kafka's ConfigDef validators, as the facts file describes it; ``check`` raises Kafka's message."""

    kind: str
    text: str
    low: str | None = None
    high: str | None = None
    strings: tuple[str, ...] = ()
    empty_allowed: bool = True
    null_allowed: bool = False

    @staticmethod
    def of(spec: dict | None) -> Validator | None:
        if spec is None:
            return None
        kind = spec["class"]
        if kind == "ValidList":
            inner = spec.get("validString") or {}
            return Validator(kind, spec["text"], strings=tuple(inner.get("validStrings") or ()),
                             empty_allowed=spec.get("isEmptyAllowed") == "true",
                             null_allowed=spec.get("isNullAllowed") == "true")
        if kind == "Range":
            return Validator(kind, spec["text"], low=spec.get("min"), high=spec.get("max"))
        return Validator(kind, spec["text"], strings=tuple(spec.get("validStrings") or ()))

    def check(self, name: str, value: Any) -> None:
        kind = self.kind
        if kind == "Range":
            if value is None:
                raise invalid(name, None, "Value must be non-null")
            if self.low is not None and value < float(self.low):
                raise invalid(name, value, f"Value must be at least {self.low}")
            if self.high is not None and value > float(self.high):
                raise invalid(name, value, f"Value must be no more than {self.high}")
        elif kind == "ValidString":
            if value not in self.strings:
                raise invalid(name, value, "String must be one of: " + ", ".join(self.strings))
        elif kind == "CaseInsensitiveValidString":
            if value is None or value.upper() not in self.strings:
                raise invalid(name, value, "String must be one of (case insensitive): " + ", ".join(self.strings))
        elif kind == "ValidList":
            self._check_list(name, value)
        elif kind == "NonEmptyString":
            if value is not None and not value.strip():
                raise invalid(name, value, "String must be non-empty")
        elif kind == "NonNullValidator":
            if value is None:
                raise invalid(name, "null", "entry must be non null")
        elif kind == "LambdaValidator" and self.text == "[1,...,9] or -1":          # CompressionType GZIP level
            if value is None:
                raise invalid(name, None, "Value must be non-null")
            if value > 9 or (value < 1 and value != -1):
                raise invalid(name, value, "Value must be between 1 and 9 or equal to -1")
        elif kind == "ThrottledReplicaListValidator":
            items = [v.strip() for v in value]
            if not (all(re.fullmatch(r"([0-9]+:[0-9]+)?", s) for s in items) or "".join(items) == "*"):
                raise invalid(name, value, f"{name} must be the literal '*' or a list of replicas in the following "
                                           "format: [partitionId]:[brokerId],[partitionId]:[brokerId],...")
        # Other validators (the KRaft quorum's, share.auto.offset.reset's) belong to configs checked elsewhere.

    def _check_list(self, name: str, value: list[str] | None) -> None:
        if value is None:
            if not self.null_allowed:
                raise ConfigError(f"Configuration '{name}' values must not be null.")
            return
        if not self.empty_allowed and not value:
            valid = "[" + ", ".join(self.strings) + "]" if self.strings else "any non-empty value"
            raise ConfigError(f"Configuration '{name}' must not be empty. Valid values include: {valid}")
        if len(set(value)) != len(value):
            raise ConfigError(f"Configuration '{name}' values must not be duplicated.")
        for item in value:
            if item == "":
                raise ConfigError(f"Configuration '{name}' values must not be empty.")
            if self.strings and item not in self.strings:
                raise invalid(name, item, "String must be one of: " + ", ".join(self.strings))


@dataclass(frozen=True, slots=True)
class KafkaConfig:
    """One config as Kafka 4.3.1 defines it."""

    name: str
    type: str                          # BOOLEAN STRING INT SHORT LONG DOUBLE LIST CLASS PASSWORD
    default: str | None                # as DescribeConfigs writes it; None: no default (or a null one)
    has_default: bool
    internal: bool
    validator: Validator | None
    dynamic: str = "read-only"         # broker configs: read-only, per-broker or cluster-wide
    synonyms: tuple[str, ...] = ()     # broker: DynamicBrokerConfig.brokerConfigSynonyms; topic: its broker ones
    broker_synonym: str | None = None  # group configs: the broker config giving the default

    def parse(self, raw: Any) -> Any:
        """A value as Kafka reads it (typed; lists as lists), validated; raises ConfigError."""
        value = parse_type(self.name, raw, self.type)
        if self.validator is not None:
            self.validator.check(self.name, value)
        return value

    @property
    def default_value(self) -> Any:
        return None if self.default is None else parse_type(self.name, self.default, self.type)


def _load(section: list[dict]) -> dict[str, KafkaConfig]:
    return {c["name"]: KafkaConfig(
        name=c["name"], type=c["type"], default=c["default"], has_default=c["has_default"], internal=c["internal"],
        validator=Validator.of(c["validator"]), dynamic=c.get("dynamic", "read-only"),
        synonyms=tuple(c.get("synonyms", ())), broker_synonym=c.get("broker_synonym")) for c in section}


_FACTS = json.loads(FACTS_FILE.read_text())
assert _FACTS["kafka_version"] == KAFKA_VERSION, _FACTS["kafka_version"]
BROKER: dict[str, KafkaConfig] = _load(_FACTS["broker"])
TOPIC: dict[str, KafkaConfig] = _load(_FACTS["topic"])
GROUP: dict[str, KafkaConfig] = _load(_FACTS["group"])

__all__ = ["BROKER", "GROUP", "KAFKA_VERSION", "TOPIC", "ConfigError", "KafkaConfig", "Validator", "invalid",
           "java_double", "java_text", "parse_type", "to_string"]
