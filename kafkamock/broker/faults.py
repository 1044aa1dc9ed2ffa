"""Faults on demand and the request log: what the control API injects into, and reads out of, request handling.

A fault names an API key and, optionally, a node, a topic and a partition. The next ``count`` requests it
matches get ``error_code`` (0: none), wait ``latency_ms`` before they are handled, or lose their connection
(``close_connection``), as librdkafka's ``rd_kafka_mock_push_request_errors`` / ``rd_kafka_mock_broker_set_rtt``
and kfake's control functions do. Partition-level faults are applied where the core looks partitions up
(``ClusterMetadata.lead``), so a faulted partition is answered with the error and nothing else about it changes; the
other partitions of the same request are served normally.
"""

from __future__ import annotations

import itertools
from collections import deque
from dataclasses import asdict, dataclass, field


@dataclass
class Fault:
    api_key: int
    error_code: int = 0
    count: int = 1
    node_id: int | None = None
    topic: str | None = None
    partition: int | None = None
    latency_ms: int = 0
    close_connection: bool = False
    id: int = 0
    hits: int = 0

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ValueError("count must be at least 1")
        if self.latency_ms < 0:
            raise ValueError("latency_ms must not be negative")
        if not (self.error_code or self.latency_ms or self.close_connection):
            raise ValueError("a fault needs an error_code, a latency_ms or close_connection")
        if self.partition is not None and self.topic is None:
            raise ValueError("a partition needs a topic")
        if self.topic is not None and (self.latency_ms or self.close_connection):
            raise ValueError("latency_ms and close_connection act on whole requests: give no topic or partition")
        if self.topic is not None and not self.error_code:
            raise ValueError("a fault for a topic needs an error_code")

    @property
    def partition_level(self) -> bool:
        return self.topic is not None

    def covers(self, topic: str, partition: int) -> bool:
        return (self.topic is None or self.topic == topic) and (self.partition is None or self.partition == partition)

    def as_dict(self) -> dict:
        return asdict(self)


class Faults:
    def __init__(self) -> None:
        self.pending: list[Fault] = []
        self._ids = itertools.count(1)

    def push(self, fault: Fault) -> Fault:
        fault.id = next(self._ids)
        self.pending.append(fault)
        return fault

    def clear(self) -> None:
        self.pending.clear()

    def matching(self, api_key: int, node_id: int) -> list[Fault]:
        """The faults that may apply to a request of ``api_key`` on ``node_id``, oldest first."""
        if not self.pending:
            return []
        return [f for f in self.pending if f.api_key == api_key and f.node_id in (None, node_id)]

    def spend(self, fault: Fault) -> None:
        """One request was affected by ``fault``."""
        fault.hits += 1
        fault.count -= 1
        if fault.count <= 0 and fault in self.pending:
            self.pending.remove(fault)


@dataclass
class RequestFaults:
    """The partition-level faults of one request, applied by ``ClusterMetadata.lead``-style lookups: each fault counts
    once per request it touched."""

    faults: list[Fault]
    owner: Faults
    spent: set[int] = field(default_factory=set)      # already counted (a whole-request fault)
    touched: set[int] = field(default_factory=set)

    def error_for(self, topic: str, partition: int) -> int:
        for fault in self.faults:
            if fault.error_code and fault.covers(topic, partition):
                self.touched.add(fault.id)
                return fault.error_code
        return 0

    def settle(self) -> None:
        for fault in self.faults:
            if fault.id in self.touched and fault.id not in self.spent:
                self.owner.spend(fault)


@dataclass(frozen=True, slots=True)
class LoggedRequest:
    time_ms: int
    node_id: int
    api_key: int
    api_name: str
    api_version: int
    correlation_id: int
    client_id: str | None
    connection_id: int
    peer: str
    listener: str = "PLAINTEXT"
    principal: str = "User:ANONYMOUS"       # who sent it (TLS client certificate or SASL), as Kafka's KafkaPrincipal

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__slots__}


class RequestLog:
    """The last ``capacity`` requests the cluster received, for tests to look at over the control API."""

    def __init__(self, capacity: int):
        self.entries: deque[LoggedRequest] = deque(maxlen=max(capacity, 0) or 1)
        self.enabled = capacity > 0

    def add(self, entry: LoggedRequest) -> None:
        if self.enabled:
            self.entries.append(entry)

    def list(self, *, api_key: int | None = None, node_id: int | None = None) -> list[dict]:
        return [e.as_dict() for e in self.entries
                if (api_key is None or e.api_key == api_key) and (node_id is None or e.node_id == node_id)]

    def clear(self) -> None:
        self.entries.clear()
