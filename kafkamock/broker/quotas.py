"""Client quotas: Kafka's entity model (user, client-id, ip; default entities), DescribeClientQuotas matching,
AlterClientQuotas validation, and the byte-rate throttling of Produce and Fetch (Kafka's ClientQuotaManager).

Why it lives in the core: a quota is a rate over sample windows of the injected clock, and a throttle is a
deadline, so tests move a ``ManualClock`` instead of sleeping. The shell only mutes the connection until
``Request.mute_until_ms`` (KIP-219: the answer goes at once, carrying ``throttle_time_ms``, and the broker then
reads nothing more from that connection for that long).

Rates are Kafka's ``Rate`` over a ``SampledStat``: ``quota.window.num`` samples of ``quota.window.size.seconds``;
a sample that falls out of the window is reset; the rate divides the total by the elapsed window, at least
``(quota.window.num - 1)`` full windows. A violation costs ``(rate - quota) / quota * window`` ms.
"""

from __future__ import annotations

import ipaddress
import logging
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.outcome import NoResponse, Outcome, Respond, Wait, as_outcome

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster
    from kafkamock.broker.request import Request
    from kafkamock.codec import messages

log = logging.getLogger("kafkamock.broker")

USER, CLIENT_ID, IP = "user", "client-id", "ip"
MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED = 0, 1, 2
PRODUCE, FETCH = 0, 1

# Kafka's QuotaConfig: the keys a user/client-id entity takes, and the ip entity's one key, with their types.
USER_CLIENT_KEYS = {"producer_byte_rate": "LONG", "consumer_byte_rate": "LONG", "request_percentage": "DOUBLE",
                    "controller_mutation_rate": "DOUBLE"}
IP_KEYS = {"connection_creation_rate": "INT"}
# What kafkamock enforces. The other two keys are Kafka's but refused with a message (an accepted config takes
# effect or is refused): request_percentage measures request-handler thread time, which a sans-IO core answering
# in microseconds never uses up, and controller_mutation_rate is a token bucket on topic mutations not built yet.
ENFORCED = {"producer_byte_rate", "consumer_byte_rate", "connection_creation_rate"}
_INTEGRAL_MAX = {"INT": 2**31 - 1, "LONG": 2**63 - 1}

Entity = tuple[tuple[str, str | None], ...]     # sorted ((type, name or None for the default), ...)


def principal_user(principal: str) -> str:
    """The user entity name of a principal ("User:alice" -> "alice"), as Kafka's quota sessions name users."""
    return principal.split(":", 1)[1] if ":" in principal else principal


def _entity(components: Iterable[messages.AlterClientQuotasRequest.EntityData]) -> tuple[Entity, str | None]:
    """An AlterClientQuotas entity, validated as Kafka's ClientQuotaControlManager does; (entity, error)."""
    seen: dict[str, str | None] = {}
    if not components:
        return (), "Invalid empty client quota entity"
    for c in components:
        if c.entity_type in seen:
            return (), f"Invalid client quota entity, duplicate entity entry {c.entity_type}"
        if c.entity_type not in (USER, CLIENT_ID, IP):
            return (), f"Unhandled client quota entity type: {c.entity_type}"
        seen[c.entity_type] = c.entity_name
        if c.entity_name is not None and c.entity_name == "":
            return (), f"Empty {c.entity_type} not supported"
    if IP in seen and len(seen) > 1:
        return (), "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId"
    ip = seen.get(IP)
    if ip is not None:
        try:
            ipaddress.ip_address(ip)
        except ValueError:
            return (), f"{ip} is not a valid IP or resolvable host."
    return tuple(sorted(seen.items())), None


def _check_value(keys: dict[str, str], key: str, value: float) -> str | None:
    kind = keys.get(key)
    if kind is None:
        return f"Invalid configuration key {key}"
    if not value > 0.0:
        return f"Quota {key} must be greater than 0"
    if kind in _INTEGRAL_MAX:
        if value > _INTEGRAL_MAX[kind]:
            return f"Proposed value for {key} is too large for {'an INT' if kind == 'INT' else 'a LONG'}."
        if math.isinf(value) or abs(math.fmod(value, 1.0)) > 1e-6:
            return f"{key} cannot be a fractional value."
    if key not in ENFORCED:
        return f"kafkamock does not enforce {key} quotas; refusing rather than ignoring it"
    return None


@dataclass
class Rate:
    """Kafka's Rate over a SampledStat: ``[window start ms, value]`` samples, at most ``samples`` of them."""

    samples: list[list[float]] = field(default_factory=list)
    current: int = 0

    def _purge(self, now: int, n: int, window_ms: int) -> None:
        for sample in self.samples:
            if now - sample[0] >= n * window_ms:
                sample[0], sample[1] = now, 0.0

    def record(self, value: float, now: int, n: int, window_ms: int) -> None:
        if not self.samples:
            self.samples.append([now, 0.0])
            self.current = 0
        sample = self.samples[self.current]
        if now >= sample[0] + window_ms:
            self.current = (self.current + 1) % n
            if self.current >= len(self.samples):
                self.samples.append([now, 0.0])
            else:
                self.samples[self.current][:] = [now, 0.0]
            sample = self.samples[self.current]
        sample[1] += value

    def window_ms(self, now: int, n: int, window_ms: int) -> int:
        self._purge(now, n, window_ms)
        oldest = min((s[0] for s in self.samples), default=now)
        elapsed = now - oldest
        full = elapsed // window_ms
        if full < n - 1:
            elapsed += (n - 1 - full) * window_ms
        return max(int(elapsed), 1)

    def measure(self, now: int, n: int, window_ms: int) -> float:
        """Units per second."""
        window = self.window_ms(now, n, window_ms)
        return sum(s[1] for s in self.samples) / (window / 1000.0)


class ClientQuotas:
    """The quota entities and their values, and the produce/fetch byte-rate sensors of the clients."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.entities: dict[Entity, dict[str, float]] = {}
        self._sensors: dict[tuple[int, str, str], Rate] = {}

    # -- persistence ---------------------------------------------------------------------------------------------

    def snapshot(self) -> list[dict[str, Any]]:
        return [{"entity": [list(c) for c in entity], "values": dict(values)}
                for entity, values in sorted(self.entities.items(), key=lambda kv: repr(kv[0]))]

    def restore(self, data: list[dict[str, Any]]) -> None:
        self.entities = {tuple((t, n) for t, n in e["entity"]): dict(e["values"]) for e in data}

    # -- DescribeClientQuotas ------------------------------------------------------------------------------------

    def describe(self, components: Iterable[messages.DescribeClientQuotasRequest.ComponentData], strict: bool
                 ) -> list[tuple[Entity, dict[str, float]]]:
        """The entities a filter matches (Kafka's ClientQuotasImage.describe); raises KafkaError."""
        exact: dict[str, str | None] = {}
        typed: set[str] = set()
        for c in components:
            if not c.entity_type:
                raise KafkaError(ErrorCode.INVALID_REQUEST, "Invalid empty entity type.")
            if c.entity_type in exact or c.entity_type in typed:
                raise KafkaError(ErrorCode.INVALID_REQUEST,
                                 f"Entity type {c.entity_type} cannot appear more than once in the filter.")
            if c.entity_type not in (USER, CLIENT_ID, IP):
                raise KafkaError(ErrorCode.UNSUPPORTED_VERSION, f"Unsupported entity type {c.entity_type}")
            if c.match_type == MATCH_EXACT:
                if c.match is None:
                    raise KafkaError(ErrorCode.INVALID_REQUEST,
                                     "Request specified MATCH_TYPE_EXACT, but set match string to null.")
                exact[c.entity_type] = c.match
            elif c.match_type == MATCH_DEFAULT:
                if c.match is not None:
                    raise KafkaError(ErrorCode.INVALID_REQUEST,
                                     "Request specified MATCH_TYPE_DEFAULT, but also specified a match string.")
                exact[c.entity_type] = None
            elif c.match_type == MATCH_SPECIFIED:
                if c.match is not None:
                    raise KafkaError(ErrorCode.INVALID_REQUEST,
                                     "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.")
                typed.add(c.entity_type)
            else:
                raise KafkaError(ErrorCode.UNSUPPORTED_VERSION, f"Unknown match type {c.match_type}")
        if (IP in exact or IP in typed) and ({USER, CLIENT_ID} & (set(exact) | typed)):
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Invalid entity filter component combination. IP filter "
                                                        "component should not be used with user or clientId "
                                                        "filter component.")
        out = []
        for entity, values in self.entities.items():
            names = dict(entity)
            if strict and len(names) != len(exact) + len(typed):
                continue
            if all(t in names and names[t] == v for t, v in exact.items()) and all(t in names for t in typed):
                out.append((entity, dict(values)))
        return out

    # -- AlterClientQuotas ---------------------------------------------------------------------------------------

    def alter(self, entries: Iterable[messages.AlterClientQuotasRequest.EntryData], validate_only: bool
              ) -> list[tuple[list[messages.AlterClientQuotasRequest.EntityData], ErrorCode, str | None]]:
        """Apply (or only check) each entry; one (request entity, error, message) per entry, as Kafka answers."""
        results: list[tuple[list[messages.AlterClientQuotasRequest.EntityData], ErrorCode, str | None]] = []
        planned: dict[Entity, dict[str, float | None]] = {}
        seen: set[Entity] = set()
        for entry in entries:
            entity, error = _entity(entry.entity)
            if error is None and entity in seen:
                error = f"Ignoring duplicate entity {dict(entity)}"
            seen.add(entity)
            ops: dict[str, float | None] = {}

            if error is None:
                keys = IP_KEYS if dict(entity).keys() == {IP} else USER_CLIENT_KEYS
                for op in entry.ops:
                    if op.key in ops:
                        error = f"Duplicate quota key {op.key} not updating quota for this entity {dict(entity)}"
                        break
                    ops[op.key] = None if op.remove else op.value
                    if not op.remove:
                        error = _check_value(keys, op.key, op.value)
                        if error:
                            break
            if error is not None:
                results.append((entry.entity, ErrorCode.INVALID_REQUEST, error))
                continue
            planned[entity] = ops
            results.append((entry.entity, ErrorCode.NONE, None))
        if not validate_only and planned:
            for entity, ops in planned.items():
                values = self.entities.setdefault(entity, {})
                for key, value in ops.items():
                    if value is None:
                        values.pop(key, None)
                    else:
                        values[key] = float(value)
                if not values:
                    del self.entities[entity]
            self._sensors.clear()   # a changed quota may move a client to another level's shared sensor
            self.cluster.metadata_changed()
        return results

    # -- which quota applies (Kafka's DefaultQuotaCallback precedence) -------------------------------------------

    def quota_for(self, key: str, user: str, client_id: str) -> tuple[float, str, str] | None:
        """(limit, user tag, client tag) of the most specific quota ``key`` for this user and client id; the tags
        name the sensor, so that clients under one user-level quota share it as Kafka's metric tags do."""
        levels = (((USER, user), (CLIENT_ID, client_id)), ((USER, user), (CLIENT_ID, None)), ((USER, user),),
                  ((USER, None), (CLIENT_ID, client_id)), ((USER, None), (CLIENT_ID, None)), ((USER, None),),
                  ((CLIENT_ID, client_id),), ((CLIENT_ID, None),))
        for level in levels:
            values = self.entities.get(tuple(sorted(level)))
            if values is not None and key in values:
                names = dict(level)
                return values[key], user if USER in names else "", client_id if CLIENT_ID in names else ""
        return None

    def ip_quota(self, key: str, ip: str) -> float | None:
        for entity in (((IP, ip),), ((IP, None),)):
            values = self.entities.get(entity)
            if values is not None and key in values:
                return values[key]
        return None

    def max_in_window(self, kind: int, user: str, client_id: str) -> int | None:
        """The most one response may carry under the client's byte-rate quota: the quota over the window's full
        samples, ``quota * (quota.window.num - 1) * quota.window.size.seconds`` (Kafka's
        getMaxValueInQuotaWindow), so that one fetch can never owe more than the window; None without a quota."""
        quota = self.quota_for("producer_byte_rate" if kind == PRODUCE else "consumer_byte_rate", user, client_id)
        if quota is None:
            return None
        n, window_ms = self._window()
        return int(min(quota[0] * (n - 1) * window_ms / 1000, 2**31 - 1))

    # -- recording -----------------------------------------------------------------------------------------------

    def _window(self) -> tuple[int, int]:
        config = self.cluster.config
        n: int = config["quota.window.num"]
        seconds: int = config["quota.window.size.seconds"]
        return n, seconds * 1000

    def record(self, kind: int, user: str, client_id: str, value: float, now: int) -> int:
        """Record ``value`` bytes against the client's produce or fetch quota; the throttle time in ms (0: none)."""
        key = "producer_byte_rate" if kind == PRODUCE else "consumer_byte_rate"
        quota = self.quota_for(key, user, client_id)
        if quota is None:
            return 0
        limit, user_tag, client_tag = quota
        n, window_ms = self._window()
        rate = self._sensors.setdefault((kind, user_tag, client_tag), Rate())
        rate.record(value, now, n, window_ms)
        measured = rate.measure(now, n, window_ms)
        if measured <= limit:
            return 0
        return round((measured - limit) / limit * rate.window_ms(now, n, window_ms))

    def unrecord(self, kind: int, user: str, client_id: str, value: float, now: int) -> None:
        """A throttled Fetch returns no data, so its bytes are taken back (Kafka's unrecordQuotaSensor)."""
        key = "producer_byte_rate" if kind == PRODUCE else "consumer_byte_rate"
        quota = self.quota_for(key, user, client_id)
        if quota is not None:
            n, window_ms = self._window()
            self._sensors.setdefault((kind, quota[1], quota[2]), Rate()).record(-value, now, n, window_ms)

    # -- Produce and Fetch outcomes ------------------------------------------------------------------------------

    def apply(self, request: Request, outcome: Outcome) -> Outcome:
        """Throttle a Produce or Fetch outcome (a wait's, once it is answered); other APIs pass through."""
        if request.api_key not in (PRODUCE, FETCH) or not self.entities:
            return outcome
        if isinstance(outcome, Wait):
            waiter = outcome.waiter
            check = waiter.check

            def throttled(final: bool) -> Outcome | None:
                result = check(final)
                return None if result is None else self.apply(request, as_outcome(result))

            waiter.check = throttled
            return outcome
        if not isinstance(outcome, (Respond, NoResponse)):
            return outcome
        now = self.cluster.now_ms()
        user, client_id = principal_user(request.connection.principal), request.client_id or ""
        if request.api_key == PRODUCE:
            throttle = self.record(PRODUCE, user, client_id, request.size, now)
        else:
            size = _fetch_size(outcome.body) if isinstance(outcome, Respond) else 0
            throttle = self.record(FETCH, user, client_id, size, now)
            if throttle and isinstance(outcome, Respond) and getattr(request.body, "replica_id", -1) < 0:
                self.unrecord(FETCH, user, client_id, size, now)
                outcome.body["responses"] = []      # Kafka's getThrottledResponse: no data while throttled
        if throttle <= 0:
            return outcome
        request.mute_until_ms = max(request.mute_until_ms, now + throttle)
        if isinstance(outcome, Respond) and request.version >= 1:
            outcome.body["throttle_time_ms"] = max(outcome.body.get("throttle_time_ms", 0) or 0, throttle)
        log.debug("client %r (%s) throttled %d ms on %s", client_id, user, throttle,
                  "Produce" if request.api_key == PRODUCE else "Fetch")
        return outcome


def _fetch_size(body: Mapping[str, Any]) -> int:
    """The bytes a Fetch response carries: its record batches (the fixed fields are noise next to them)."""
    total = 0
    for topic in body.get("responses", ()):
        for partition in topic.get("partitions", ()):
            records = partition.get("records")
            if isinstance(records, list):
                total += sum(len(r) for r in records)
            elif records:
                total += len(records)
    return total
