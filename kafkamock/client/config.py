"""Client settings under the Java client's names (``bootstrap.servers``, ``group.id``...), checked up front.

Each client declares the settings it implements. A name it does not know, or a value out of range, raises
``ValueError`` when the client is built: an accepted setting always takes effect, so nothing is ignored quietly.
Values may be given as Python values or as the strings a properties file holds (``"true"``, ``"5000"``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

_UNSET = object()


@dataclass(frozen=True)
class Setting:
    kind: str                               # int, bool, str, list, choice, callable
    default: Any = None
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    check: Callable[[Any], str | None] | None = None   # returns an error text, or None


def _int(minimum: int | None = 0, maximum: int | None = None, default: Any = None) -> Setting:
    return Setting("int", default, minimum=minimum, maximum=maximum)


def _auto_offset_reset(value: str) -> str | None:
    if value in ("earliest", "latest", "none"):
        return None
    if value.startswith("by_duration:"):
        from kafkamock.durations import parse_duration_ms

        try:
            parse_duration_ms(value.split(":", 1)[1])
        except ValueError as exc:
            return str(exc)
        return None
    return "must be earliest, latest, none or by_duration:<ISO-8601 duration>"


COMMON: dict[str, Setting] = {
    "bootstrap.servers": Setting("list"),
    "client.id": Setting("str", "kafkamock"),
    "request.timeout.ms": _int(1, default=30_000),
    "default.api.timeout.ms": _int(1, default=60_000),
    "retry.backoff.ms": _int(0, default=100),
    "metadata.max.age.ms": _int(0, default=300_000),
    "security.protocol": Setting("choice", "PLAINTEXT", choices=("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")),
    "sasl.mechanism": Setting("choice", "GSSAPI", choices=("GSSAPI", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512",
                                                            "OAUTHBEARER")),
    "sasl.jaas.config": Setting("str"),
    "ssl.truststore.location": Setting("str"),
    "ssl.truststore.type": Setting("choice", "PEM", choices=("PEM",)),
    "ssl.truststore.certificates": Setting("str"),
    "ssl.keystore.location": Setting("str"),
    "ssl.keystore.type": Setting("choice", "PEM", choices=("PEM",)),
    "ssl.keystore.certificate.chain": Setting("str"),
    "ssl.keystore.key": Setting("str"),
    "ssl.key.password": Setting("str"),
    "ssl.endpoint.identification.algorithm": Setting("str", "https"),
}

CONSUMER: dict[str, Setting] = {
    **COMMON,
    "group.id": Setting("str"),
    "group.instance.id": Setting("str"),
    "group.protocol": Setting("choice", "classic", choices=("classic", "consumer")),
    "group.remote.assignor": Setting("choice", None, choices=("uniform", "range")),
    "partition.assignment.strategy": Setting("list", ["range", "cooperative-sticky"]),
    "session.timeout.ms": _int(1, default=45_000),
    "heartbeat.interval.ms": _int(1, default=3_000),
    "max.poll.interval.ms": _int(1, default=300_000),
    "max.poll.records": _int(1, default=500),
    "enable.auto.commit": Setting("bool", True),
    "auto.commit.interval.ms": _int(0, default=5_000),
    "auto.offset.reset": Setting("str", "latest", check=_auto_offset_reset),
    "isolation.level": Setting("choice", "read_uncommitted", choices=("read_uncommitted", "read_committed")),
    "fetch.min.bytes": _int(0, default=1),
    "fetch.max.bytes": _int(0, default=52_428_800),
    "fetch.max.wait.ms": _int(0, default=500),
    "max.partition.fetch.bytes": _int(0, default=1_048_576),
    "allow.auto.create.topics": Setting("bool", True),
    "exclude.internal.topics": Setting("bool", True),
    "client.rack": Setting("str", ""),
    "key.deserializer": Setting("callable"),
    "value.deserializer": Setting("callable"),
}

SHARE_CONSUMER: dict[str, Setting] = {
    **COMMON,
    "group.id": Setting("str"),
    "share.acknowledgement.mode": Setting("choice", "implicit", choices=("implicit", "explicit")),
    "share.acquire.mode": Setting("choice", "batch_optimized", choices=("batch_optimized", "record_limit")),
    "max.poll.records": _int(1, default=500),
    "fetch.min.bytes": _int(0, default=1),
    "fetch.max.bytes": _int(0, default=52_428_800),
    "fetch.max.wait.ms": _int(0, default=500),
    "client.rack": Setting("str", ""),
    "key.deserializer": Setting("callable"),
    "value.deserializer": Setting("callable"),
}

PRODUCER: dict[str, Setting] = {
    **{name: s for name, s in COMMON.items() if name != "default.api.timeout.ms"},   # Java's producer has max.block.ms
    "max.block.ms": _int(0, default=60_000),
    "buffer.memory": _int(1, default=33_554_432),
    "acks": Setting("choice", "all", choices=("all", "-1", "0", "1")),
    "enable.idempotence": Setting("bool", True),
    "transactional.id": Setting("str"),
    "transaction.timeout.ms": _int(1, default=60_000),
    "compression.type": Setting("choice", "none", choices=("none", "gzip", "snappy", "lz4", "zstd")),
    "batch.size": _int(0, default=16_384),
    "linger.ms": _int(0, default=5),
    "max.request.size": _int(1, default=1_048_576),
    "retries": _int(0, default=2_147_483_647),
    "delivery.timeout.ms": _int(1, default=120_000),
    "max.in.flight.requests.per.connection": _int(1, maximum=5, default=5),
    "allow.auto.create.topics": Setting("bool", True),
    "key.serializer": Setting("callable"),
    "value.serializer": Setting("callable"),
}

ADMIN: dict[str, Setting] = dict(COMMON)


def parse(spec: Mapping[str, Setting], given: Mapping[str, Any] | None, what: str) -> dict[str, Any]:
    """The complete settings of a ``what`` client: ``given`` checked against ``spec``, defaults filled in."""
    out = {name: s.default for name, s in spec.items()}
    for name, raw in (given or {}).items():
        setting = spec.get(name)
        if setting is None:
            raise ValueError(f"{what}: unknown or unsupported setting {name!r}")
        try:
            out[name] = None if raw is None else _value(setting, raw)
        except ValueError as exc:
            raise ValueError(f"{what}: invalid value {raw!r} for {name!r}: {exc}") from None
    if not out.get("bootstrap.servers"):
        raise ValueError(f"{what}: 'bootstrap.servers' is required")
    return out


def _value(setting: Setting, raw: Any) -> Any:
    kind = setting.kind
    if kind == "callable":
        if not callable(raw):
            raise ValueError("must be a callable")
        return raw
    if kind == "bool":
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.lower() in ("true", "false"):
            return raw.lower() == "true"
        raise ValueError("must be true or false")
    if kind == "int":
        if isinstance(raw, bool) or not isinstance(raw, (int, str)):
            raise ValueError("must be an integer")
        try:
            value = int(raw)
        except ValueError:
            raise ValueError("must be an integer") from None
        if setting.minimum is not None and value < setting.minimum:
            raise ValueError(f"must be at least {setting.minimum}")
        if setting.maximum is not None and value > setting.maximum:
            raise ValueError(f"must be at most {setting.maximum}")
        return value
    if kind == "list":
        items = raw.split(",") if isinstance(raw, str) else list(raw)
        return [str(i).strip() for i in items if str(i).strip()]
    text = str(raw)
    if kind == "choice" and text not in setting.choices:
        if text.lower() in setting.choices:
            text = text.lower()
        else:
            raise ValueError(f"must be one of {', '.join(setting.choices)}")
    if setting.check is not None and (problem := setting.check(text)):
        raise ValueError(problem)
    return text
