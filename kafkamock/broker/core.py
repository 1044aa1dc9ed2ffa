"""The broker core: a decoded request in, a response (or a wait) out. No sockets, no wall clock.

A newcomer follows one request like this: ``server/connection.py`` reads a frame and decodes it with the codec,
``Broker.handle`` (here) finds the handler module for its API (``handlers/<api>.py``), the handler changes the
cluster state (``cluster.py``, ``log.py``) and returns the response body, which the connection encodes and sends.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kafkamock.broker import handlers
from kafkamock.broker.clock import Clock, SystemClock
from kafkamock.broker.cluster import Cluster, Node
from kafkamock.broker.config import BrokerConfig, topic_config_value
from kafkamock.broker.errors import ErrorCode
from kafkamock.codec import Message, default_registry

log = logging.getLogger("kafkamock.broker")


@dataclass
class ConnectionInfo:
    """What the broker knows about one client connection (for logs and per-connection state)."""

    id: int
    peer: str = "?"
    client_id: str | None = None
    software_name: str | None = None
    software_version: str | None = None


@dataclass
class Request:
    api_key: int
    version: int
    correlation_id: int
    client_id: str | None
    body: Message
    connection: ConnectionInfo = field(default_factory=lambda: ConnectionInfo(0))


@dataclass
class Pending:
    """A request that waits (a long-poll Fetch): call ``complete(final)`` again after appends or at the deadline.

    ``complete(False)`` returns the response once it is ready, else None; ``complete(True)`` always returns it.
    """

    deadline_ms: int
    complete: Callable[[bool], Message | dict | None]


class Broker:
    """One emulated cluster's brokers and state; ``handle`` answers requests addressed to ``node_id``."""

    def __init__(self, config: BrokerConfig | Mapping[str, object] | None = None, clock: Clock | None = None, *,
                 host: str = "127.0.0.1", port: int = 9092, cluster_id: str | None = None):
        self.config = config if isinstance(config, BrokerConfig) else BrokerConfig(config)
        self.clock = clock or SystemClock()
        self.node_id = self.config["node.id"]
        self.cluster = Cluster([Node(self.node_id, host, port)], cluster_id)
        self.registry = default_registry()
        self._producer_ids = itertools.count(1000)
        self._append_listeners: list[Callable[[], None]] = []
        self.fetch_sessions = handlers.fetch.FetchSessions()
        self._supported: dict[int, tuple[int, int]] | None = None

    # -- wiring for the I/O shell --------------------------------------------------------------------------------

    def set_address(self, host: str, port: int) -> None:
        """The listener's real address (known once the server has bound its port)."""
        node = self.cluster.node(self.node_id)
        assert node is not None
        node.host, node.port = host, port

    def on_append(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` after every append (the server wakes long-poll fetches with it)."""
        self._append_listeners.append(listener)

    def appended(self) -> None:
        for listener in self._append_listeners:
            listener()

    # -- requests ------------------------------------------------------------------------------------------------

    def supported_versions(self) -> dict[int, tuple[int, int]]:
        """{api_key: (min, max)} of the APIs and versions this broker serves (never advertise the others).

        Kafka 4.3's ranges; with ``kafkamock.legacy.protocol.enable`` also the removed versions the codec still
        knows (Produce v0-2, Fetch v0-3)."""
        if self._supported is None:
            schema_versions = self.registry.api_versions(include_unstable=False)
            legacy = self.config["kafkamock.legacy.protocol.enable"]
            self._supported = {}
            for key in sorted(handlers.BY_KEY):
                if key in schema_versions:
                    low, high = schema_versions[key]
                    if legacy and not self.registry.requests[key].legacy_versions.empty:
                        low = self.registry.requests[key].legacy_versions.lowest
                    self._supported[key] = (low, high)
        return self._supported

    def advertised_versions(self) -> dict[int, tuple[int, int]]:
        """What ApiVersions lists: the served versions, except that Produce starts at v0 as in Kafka 4.x.

        Kafka 4.0 removed Produce v0-2 yet still lists them, because librdkafka checks compression support
        against a Produce range starting at 0 and would otherwise send every batch uncompressed (KAFKA-18659,
        librdkafka#4956). A request at those versions is refused all the same (the connection closes) unless
        the legacy protocol is on."""
        advertised = dict(self.supported_versions())
        if handlers.produce.API_KEY in advertised:
            advertised[handlers.produce.API_KEY] = (0, advertised[handlers.produce.API_KEY][1])
        return advertised

    def handle(self, request: Request) -> Message | dict | Pending | None:
        """The response body for a request (None: no response, as for acks=0 produce)."""
        module = handlers.BY_KEY.get(request.api_key)
        if module is None:  # the server checks first; this is the core's own guard
            raise ValueError(f"unsupported API key {request.api_key}")
        return module.handle(self, request)

    # -- shared helpers for handlers -----------------------------------------------------------------------------

    def now_ms(self) -> int:
        return self.clock.now_ms()

    def next_producer_id(self) -> int:
        return next(self._producer_ids)

    def topic_config(self, topic: Any, name: str) -> Any:
        return topic_config_value(name, topic.configs, self.config)[0]

    def tick(self) -> None:
        """Time-driven work: retention. The server calls this every ``log.retention.check.interval.ms``."""
        now = self.now_ms()
        for topic in list(self.cluster.topics.values()):
            retention_ms = self.topic_config(topic, "retention.ms")
            retention_bytes = self.topic_config(topic, "retention.bytes")
            if "delete" not in str(self.topic_config(topic, "cleanup.policy")):
                continue
            for partition in topic.partitions:
                dropped = partition.log.apply_retention(retention_ms, retention_bytes, now)
                if dropped:
                    log.info("retention deleted %d batch(es) from %s-%d; log start offset now %d", dropped,
                             topic.name, partition.index, partition.log.log_start_offset)


def error_response_code(exc: BaseException) -> ErrorCode:
    code = getattr(exc, "code", None)
    return code if isinstance(code, ErrorCode) else ErrorCode.UNKNOWN_SERVER_ERROR
