"""Bootstrap, metadata and leader routing over KafkaConnections: the base the full clients build on."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import trio

from kafkamock.client.connection import KafkaConnection, KafkaConnectionError
from kafkamock.client.errors import KafkaError
from kafkamock.client.security import Security
from kafkamock.codec import Message
from kafkamock.errors import ErrorCode

GROUP, TRANSACTION, SHARE = 0, 1, 2          # FindCoordinator key types


class KafkaClient:
    """``async with KafkaClient("127.0.0.1:9092") as client:`` — connections per broker, opened on demand."""

    def __init__(self, bootstrap_servers: str | Iterable[str], *, client_id: str = "kafkamock",
                 retry_backoff_s: float = 0.1, api_timeout_s: float = 60.0, security: Security | None = None):
        servers = bootstrap_servers.split(",") if isinstance(bootstrap_servers, str) else list(bootstrap_servers)
        self.bootstrap = [_host_port(s) for s in servers if s.strip()]
        self.client_id = client_id
        self.security = security or Security()
        self.brokers: dict[int, tuple[str, int]] = {}
        self.leaders: dict[tuple[str, int], int] = {}
        self.topic_ids: dict[str, Any] = {}
        self.retry_backoff_s, self.api_timeout_s = retry_backoff_s, api_timeout_s
        self._coordinators: dict[tuple[int, str], int] = {}
        self._connections: dict[int | tuple[str, int], KafkaConnection] = {}
        self._nursery: trio.Nursery | None = None
        self._nursery_cm: Any = None

    async def __aenter__(self) -> KafkaClient:
        self._nursery_cm = trio.open_nursery()
        self._nursery = await self._nursery_cm.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        for conn in self._connections.values():
            await conn.aclose()
        assert self._nursery is not None
        self._nursery.cancel_scope.cancel()
        await self._nursery_cm.__aexit__(*exc)

    async def _connect(self, key: int | tuple[Any, Any], host: str, port: int) -> KafkaConnection:
        conn = self._connections.get(key)
        if conn is None or conn._closed is not None:
            assert self._nursery is not None, "use KafkaClient as an async context manager"
            conn = await KafkaConnection.connect(self._nursery, host, port, client_id=self.client_id,
                                                 security=self.security)
            self._connections[key] = conn
        return conn

    @property
    def topic_names(self) -> dict[Any, str]:
        """{topic id: name} of the topics the metadata so far has named."""
        return {v: k for k, v in self.topic_ids.items()}

    async def any_broker(self) -> KafkaConnection:
        errors = []
        for node_id, (host, port) in list(self.brokers.items()):
            try:
                return await self._connect(node_id, host, port)
            except KafkaConnectionError as exc:
                errors.append(str(exc))
        for host, port in self.bootstrap:
            try:
                return await self._connect((host, port), host, port)
            except KafkaConnectionError as exc:
                errors.append(str(exc))
        raise KafkaConnectionError("no broker reachable: " + "; ".join(errors))

    async def broker(self, node_id: int, channel: str | None = None) -> KafkaConnection:
        """The connection to ``node_id``; a named ``channel`` is a connection of its own. A broker answers a
        connection's requests one at a time, in order, so a request that waits (a JoinGroup waiting for the other
        members) must not sit in front of ones that must not wait (a commit)."""
        if node_id not in self.brokers:
            await self.metadata()
        host, port = self.brokers[node_id]
        return await self._connect(node_id if channel is None else (node_id, channel), host, port)

    async def metadata(self, topics: Iterable[str] | None = None, *, auto_create: bool = False) -> Message:
        """Refresh brokers and partition leaders (all topics when ``topics`` is None). With ``auto_create``, topics
        the broker is creating are asked for again until they have leaders (Kafka answers the request that
        creates a topic UNKNOWN_TOPIC_OR_PARTITION), for up to ``api_timeout_s``."""
        conn = await self.any_broker()
        wanted = None if topics is None else [{"name": t} for t in topics]
        deadline = trio.current_time() + self.api_timeout_s
        while True:
            response = await conn.request("Metadata", {"topics": wanted, "allow_auto_topic_creation": auto_create})
            creating = auto_create and any(
                t.error_code in (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.LEADER_NOT_AVAILABLE)
                for t in response.topics)
            if not creating or trio.current_time() >= deadline:
                break
            await trio.sleep(self.retry_backoff_s)
        self.brokers = {b.node_id: (b.host, b.port) for b in response.brokers}
        for t in response.topics:
            if t.error_code == 0:
                self.topic_ids[t.name] = t.topic_id
                for p in t.partitions:
                    self.leaders[(t.name, p.partition_index)] = p.leader_id
        return response

    async def coordinator(self, key: str, key_type: int = GROUP, channel: str | None = None) -> KafkaConnection:
        """The connection to the coordinator of a group (``GROUP``), transactional id (``TRANSACTION``) or
        share group (``SHARE``), found with FindCoordinator and cached until ``forget_coordinator``. Retries
        COORDINATOR_NOT_AVAILABLE and the like for up to ``api_timeout_s``."""
        node_id = self._coordinators.get((key_type, key))
        if node_id is not None and node_id in self.brokers:
            return await self.broker(node_id, channel)
        deadline = trio.current_time() + self.api_timeout_s
        while True:
            conn = await self.any_broker()
            version = conn.version_for("FindCoordinator")
            if version >= 4:
                response = await conn.request("FindCoordinator", {"key_type": key_type, "coordinator_keys": [key]})
                (found,) = response.coordinators
            else:
                found = await conn.request("FindCoordinator", {"key": key, "key_type": key_type})
            if found.error_code == 0:
                self._coordinators[(key_type, key)] = found.node_id
                self.brokers[found.node_id] = (found.host, found.port)
                return await self.broker(found.node_id, channel)
            error = KafkaError(found.error_code, found.error_message, what=f"find the coordinator of {key!r}")
            if not error.retriable or trio.current_time() >= deadline:
                raise error
            await trio.sleep(self.retry_backoff_s)

    def forget_coordinator(self, key: str, key_type: int = GROUP) -> None:
        """Look the coordinator up again next time (after NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE)."""
        self._coordinators.pop((key_type, key), None)

    async def leader(self, topic: str, partition: int) -> KafkaConnection:
        """The connection to the partition's leader (refreshing metadata when it is not known)."""
        if (topic, partition) not in self.leaders:
            await self.metadata([topic])
        node_id = self.leaders.get((topic, partition))
        if node_id is None:
            raise KafkaConnectionError(f"no leader known for {topic}-{partition}")
        return await self.broker(node_id)


COORDINATOR_MOVED = frozenset({ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE})


def _host_port(server: str) -> tuple[str, int]:
    host, _, port = server.strip().rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"bootstrap server {server!r} is not host:port")
    return host.strip("[]"), int(port)
