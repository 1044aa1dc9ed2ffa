"""kafkamock's Admin client, modelled on Kafka's Java ``Admin``: topics, configs, records, consumer and share groups,
transactions, ACLs, client quotas and SCRAM credentials — each request sent where Java's Admin sends it.

    async with Admin({"bootstrap.servers": bootstrap}) as admin:
        (await admin.create_topics([NewTopic("orders", 3, 1)])).all()
        print(await admin.describe_topics(["orders"]))

Routing: calls about a group or a transactional id go to its coordinator (FindCoordinator; NOT_COORDINATOR and
COORDINATOR_NOT_AVAILABLE look it up again, COORDINATOR_LOAD_IN_PROGRESS waits), calls about partitions go to their
leaders (a leader change refreshes metadata), cluster calls (CreateTopics, DescribeConfigs, the ACL and quota
calls...) to any broker, AlterUserScramCredentials to the controller, and listings (ListGroups, ListTransactions) to
every broker. Retriable errors are retried every ``retry.backoff.ms``
until ``default.api.timeout.ms``; each request may take ``request.timeout.ms``.

Results: where Java's Admin hands out one future per item (per topic, group, partition...), the method returns a
``Results`` dict {item: value or KafkaError} — ``.all()`` raises the first error, like Java's ``all().get()``.
Where Java has one future for the whole call, the method raises ``KafkaError``. Each docstring says which.

The ACL, client-quota and SCRAM values live in ``admin_security.py`` and are re-exported here.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, NamedTuple, TypeVar

import trio

from kafkamock.client.admin_security import (
    AccessControlEntry,
    AccessControlEntryFilter,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AclResourceType,
    ClientQuotaAlteration,
    ClientQuotaEntity,
    ClientQuotaFilter,
    ClientQuotaFilterComponent,
    DeleteAclsFilterResult,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialsDescription,
    UserScramCredentialUpsertion,
    binding_of,
    creation_body,
    decode,
    filter_body,
)
from kafkamock.client.cluster import COORDINATOR_MOVED, GROUP, TRANSACTION, KafkaClient
from kafkamock.client.config import ADMIN, parse
from kafkamock.client.connection import KafkaConnection, KafkaConnectionError
from kafkamock.client.consumer.classic import decode_assignment
from kafkamock.client.errors import KafkaError
from kafkamock.client.security import security_from
from kafkamock.client.types import OffsetAndMetadata, TopicPartition
from kafkamock.codec import Message
from kafkamock.errors import ErrorCode

__all__ = [
    "EARLIEST", "EARLIEST_LOCAL", "LATEST", "LATEST_TIERED", "MAX_TIMESTAMP", "AccessControlEntry",
    "AccessControlEntryFilter", "AclBinding", "AclBindingFilter", "AclOperation", "AclPermissionType",
    "AclResourceType", "Admin", "AlterConfigOp", "ClientQuotaAlteration", "ClientQuotaEntity", "ClientQuotaFilter",
    "ClientQuotaFilterComponent", "ClusterDescription", "ConfigEntry", "ConfigResource", "ConfigSource",
    "ConsumerGroupDescription", "CreatedTopic", "DeleteAclsFilterResult", "DeletedRecords", "FeatureMetadata",
    "GroupListing", "ListOffsetsResultInfo", "MemberDescription", "NewPartitions", "NewTopic", "Node", "OpType",
    "PatternType", "ProducerState", "ResourcePattern", "ResourcePatternFilter", "ResourceType", "Results",
    "ScramCredentialInfo", "ScramMechanism", "ShareGroupDescription", "ShareMemberDescription",
    "SharePartitionOffsetInfo", "TopicDescription", "TopicListing", "TopicPartitionInfo", "TransactionDescription",
    "TransactionListing", "UserScramCredentialDeletion", "UserScramCredentialUpsertion",
    "UserScramCredentialsDescription",
]

# ListOffsets specs (Java's OffsetSpec); a timestamp in ms (>= 0) asks for the first offset at or after it.
EARLIEST, LATEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED = -2, -1, -3, -4, -5
_SPECS = {"earliest": EARLIEST, "latest": LATEST, "max_timestamp": MAX_TIMESTAMP,
          "earliest_local": EARLIEST_LOCAL, "latest_tiered": LATEST_TIERED}
_ISOLATION = {"read_uncommitted": 0, "read_committed": 1}
_NO_TOPIC_ID = uuid.UUID(int=0)
T = TypeVar("T")

LEADER_MOVED = frozenset({ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.LEADER_NOT_AVAILABLE,
                          ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.UNKNOWN_LEADER_EPOCH})
_CONFIG_TYPES = ("UNKNOWN", "BOOLEAN", "STRING", "INT", "SHORT", "LONG", "DOUBLE", "LIST", "CLASS", "PASSWORD")


# -- values ---------------------------------------------------------------------------------------------------------

class Results(dict):
    """Per-item results {item: value or KafkaError}, in the order asked: Java's map of futures, resolved."""

    @property
    def errors(self) -> dict[Any, KafkaError]:
        return {k: v for k, v in self.items() if isinstance(v, KafkaError)}

    def all(self) -> dict[Any, Any]:
        """Every value, or the first error raised (Java's ``all().get()``)."""
        for value in self.values():
            if isinstance(value, KafkaError):
                raise value
        return dict(self)


@dataclass(frozen=True)
class Node:
    id: int
    host: str
    port: int
    rack: str | None = None


@dataclass(frozen=True)
class ClusterDescription:
    cluster_id: str | None
    controller: Node | None
    nodes: list[Node]


@dataclass(frozen=True)
class FeatureMetadata:
    """Finalized and supported feature version ranges {name: (min, max)} (what ApiVersions v3 tells)."""
    finalized: dict[str, tuple[int, int]]
    finalized_epoch: int | None
    supported: dict[str, tuple[int, int]]


@dataclass
class NewTopic:
    """A topic to create; -1 partitions or replication factor takes the broker's default."""
    name: str
    num_partitions: int = -1
    replication_factor: int = -1
    configs: dict[str, str] = field(default_factory=dict)
    replica_assignments: dict[int, list[int]] | None = None


@dataclass(frozen=True)
class CreatedTopic:
    name: str
    topic_id: uuid.UUID | None
    num_partitions: int
    replication_factor: int
    configs: dict[str, str | None]


@dataclass(frozen=True)
class NewPartitions:
    """Grow a topic to ``total_count`` partitions (``assignments``: the new partitions' replicas)."""
    total_count: int
    assignments: list[list[int]] | None = None


@dataclass(frozen=True)
class TopicListing:
    name: str
    topic_id: uuid.UUID | None
    internal: bool


@dataclass(frozen=True)
class TopicPartitionInfo:
    partition: int
    leader: Node | None
    replicas: list[Node]
    isr: list[Node]


@dataclass(frozen=True)
class TopicDescription:
    name: str
    internal: bool
    partitions: list[TopicPartitionInfo]
    topic_id: uuid.UUID | None


class ResourceType(IntEnum):
    """A config resource's type: Java's ``ConfigResource.Type`` codes. ACLs name resources by Kafka's
    ``ResourceType``, another code set: ``AclResourceType``."""
    UNKNOWN = 0
    TOPIC = 2
    BROKER = 4
    BROKER_LOGGER = 8
    CLIENT_METRICS = 16
    GROUP = 32


class ConfigResource(NamedTuple):
    """A TOPIC (by name), BROKER (by id as a string; "" for the cluster-wide default) or GROUP config set."""
    type: ResourceType
    name: str


class ConfigSource(IntEnum):
    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    DYNAMIC_CLIENT_METRICS_CONFIG = 7
    DYNAMIC_GROUP_CONFIG = 8


@dataclass(frozen=True)
class ConfigEntry:
    name: str
    value: str | None
    source: ConfigSource
    is_sensitive: bool
    is_read_only: bool
    synonyms: list[tuple[str, str | None, ConfigSource]]
    type: str
    documentation: str | None


class OpType(IntEnum):
    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


class AlterConfigOp(NamedTuple):
    """One change of ``incremental_alter_configs``: SET a value, DELETE it (back to the default), APPEND to or
    SUBTRACT from a list."""
    name: str
    value: str | None
    op: OpType = OpType.SET


@dataclass(frozen=True)
class DeletedRecords:
    low_watermark: int


@dataclass(frozen=True)
class ListOffsetsResultInfo:
    offset: int
    timestamp: int
    leader_epoch: int | None


@dataclass(frozen=True)
class GroupListing:
    group_id: str
    type: str | None          # classic, consumer, share, streams (None from brokers before ListGroups v5)
    protocol: str             # the protocol type: "consumer" for consumer groups, "" for simple ones
    state: str | None


@dataclass(frozen=True)
class MemberDescription:
    member_id: str
    instance_id: str | None
    client_id: str
    host: str
    assignment: frozenset[TopicPartition]
    target_assignment: frozenset[TopicPartition] | None = None
    member_epoch: int | None = None


@dataclass(frozen=True)
class ConsumerGroupDescription:
    group_id: str
    is_simple: bool
    members: list[MemberDescription]
    partition_assignor: str
    type: str                 # classic or consumer
    state: str
    coordinator: Node | None
    group_epoch: int | None = None
    target_assignment_epoch: int | None = None


@dataclass(frozen=True)
class ShareMemberDescription:
    member_id: str
    client_id: str
    host: str
    assignment: frozenset[TopicPartition]
    member_epoch: int


@dataclass(frozen=True)
class ShareGroupDescription:
    group_id: str
    members: list[ShareMemberDescription]
    state: str
    coordinator: Node | None
    group_epoch: int
    target_assignment_epoch: int


@dataclass(frozen=True)
class SharePartitionOffsetInfo:
    start_offset: int
    leader_epoch: int | None
    lag: int | None


@dataclass(frozen=True)
class TransactionDescription:
    coordinator_id: int
    state: str
    producer_id: int
    producer_epoch: int
    transaction_timeout_ms: int
    transaction_start_time_ms: int | None
    topic_partitions: frozenset[TopicPartition]


@dataclass(frozen=True)
class TransactionListing:
    transactional_id: str
    producer_id: int
    state: str


@dataclass(frozen=True)
class ProducerState:
    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp: int
    coordinator_epoch: int | None
    current_transaction_start_offset: int | None


def _error(code: int, what: str, message: str | None = None, *, retriable: bool | None = None) -> KafkaError:
    error = KafkaError(code, message, what=what)
    if retriable is not None:
        error.retriable = retriable
    return error


def _cluster_error(code: int, what: str, message: str | None = None) -> KafkaError:
    """A per-item error of a cluster call (CreateTopics, DeleteTopics, CreatePartitions, configs): final, as in
    Java, but for NOT_CONTROLLER and THROTTLING_QUOTA_EXCEEDED, which are tried again."""
    return _error(code, what, message,
                  retriable=code in (ErrorCode.NOT_CONTROLLER, ErrorCode.THROTTLING_QUOTA_EXCEEDED))


def _tps(assignment: Message | None) -> frozenset[TopicPartition]:
    if assignment is None:
        return frozenset()
    return frozenset(TopicPartition(t.topic_name, p) for t in assignment.topic_partitions for p in t.partitions)


# -- the client -----------------------------------------------------------------------------------------------------

class Admin:
    """Kafka's Admin as a trio async context manager (``kafkamock.client.blocking.Admin`` blocks instead).

    Settings are the common client settings (``kafkamock.client.config.ADMIN``).
    """

    def __init__(self, config: Mapping[str, Any] | None = None, **settings: Any):
        self.settings = parse(ADMIN, {**(config or {}), **settings}, "admin")
        s = self.settings
        self.api_timeout_s = s["default.api.timeout.ms"] / 1000
        self.request_timeout_s = s["request.timeout.ms"] / 1000
        self.retry_backoff_s = s["retry.backoff.ms"] / 1000
        self.client = KafkaClient(s["bootstrap.servers"], client_id=s["client.id"], security=security_from(s),
                                  retry_backoff_s=self.retry_backoff_s, api_timeout_s=self.api_timeout_s)
        self._racks: dict[int, str | None] = {}
        self._closed = False

    async def __aenter__(self) -> Admin:
        await self.client.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the connections. The client's nursery is closed as if nothing failed, so an error from the
        ``async with`` body comes out as itself rather than inside an ExceptionGroup."""
        if not self._closed:
            self._closed = True
            await self.client.__aexit__(None, None, None)

    # -- plumbing ---------------------------------------------------------------------------------------------------

    async def _send(self, conn: KafkaConnection, api: str, body: Mapping[str, Any], *,
                    version: int | None = None) -> Message:
        """One request, given up after ``request.timeout.ms`` (the connection is then closed, as Java's is)."""
        with trio.move_on_after(self.request_timeout_s):
            return await conn.request(api, body, version=version)
        await conn.aclose()
        raise KafkaConnectionError(f"{api} got no response within request.timeout.ms")

    async def _retry_items(self, what: str, items: Iterable[Any],
                           attempt: Callable[[list[Any]], Awaitable[Mapping[Any, Any]]]) -> Results:
        """``attempt(pending)`` answers the pending items ({item: value or KafkaError}); an item answered with a
        retriable error, or left unanswered because the request failed, is tried again after retry.backoff.ms
        until default.api.timeout.ms has passed, and then keeps its last error."""
        wanted = list(dict.fromkeys(items))
        done: dict[Any, Any] = {}
        pending = wanted
        deadline = trio.current_time() + self.api_timeout_s
        while pending:
            try:
                answers = await attempt(pending)
            except KafkaConnectionError as exc:
                failure = _error(ErrorCode.NETWORK_EXCEPTION, what, str(exc))
                answers = {item: failure for item in pending}
            except KafkaError as exc:
                answers = {item: exc for item in pending}
            retry = []
            for item in pending:
                outcome = answers.get(item)
                if item not in answers:
                    outcome = _error(ErrorCode.UNKNOWN_SERVER_ERROR, what, f"the broker did not answer for {item!r}")
                if (isinstance(outcome, KafkaError) and outcome.retriable
                        and trio.current_time() + self.retry_backoff_s < deadline):
                    retry.append(item)
                else:
                    done[item] = outcome
            pending = retry
            if pending:
                await trio.sleep(self.retry_backoff_s)
        return Results((item, done[item]) for item in wanted)

    async def _retry_one(self, what: str, attempt: Callable[[], Awaitable[T]]) -> T:
        """A whole-call result with the retries of ``_retry_items``; its error is raised."""
        async def one(_: list[Any]) -> dict[Any, Any]:
            return {None: await attempt()}
        outcome = (await self._retry_items(what, [None], one))[None]
        if isinstance(outcome, KafkaError):
            raise outcome
        result: T = outcome         # what ``attempt`` answered (Results holds it untyped)
        return result

    async def _by_coordinator(self, keys: list[str], key_type: int,
                              send: Callable[[KafkaConnection, list[str]], Awaitable[Mapping[str, Any]]]
                              ) -> dict[str, Any]:
        """Group ``keys`` by coordinator and ``send`` each batch; a key whose coordinator moved (or could not be
        reached) is forgotten, so the retry finds it again."""
        batches: dict[int, tuple[KafkaConnection, list[str]]] = {}
        answers: dict[str, Any] = {}
        for key in keys:
            try:
                conn = await self.client.coordinator(key, key_type)
            except KafkaError as exc:
                answers[key] = exc
                continue
            batches.setdefault(id(conn), (conn, []))[1].append(key)
        for conn, batch in batches.values():
            try:
                got = await send(conn, batch)
            except (KafkaConnectionError, KafkaError) as exc:
                got = {key: exc if isinstance(exc, KafkaError) else _error(ErrorCode.NETWORK_EXCEPTION,
                                                                            "coordinator call", str(exc))
                       for key in batch}
            for key in batch:
                outcome = got.get(key)
                if isinstance(outcome, KafkaError) and outcome.code in COORDINATOR_MOVED | {ErrorCode.NETWORK_EXCEPTION}:
                    self.client.forget_coordinator(key, key_type)
                if key in got:
                    answers[key] = outcome
        return answers

    async def _coordinated(self, what: str, key: str, key_type: int,
                           send: Callable[[KafkaConnection], Awaitable[T | KafkaError]]) -> T:
        """One call to the coordinator of ``key``, retried (coordinator looked up again) as Java retries it;
        ``send`` answers its result or an error (a retriable one is retried, the last one raised)."""
        async def attempt(pending: list[str]) -> dict[str, Any]:
            async def batch(conn: KafkaConnection, _: list[str]) -> dict[str, Any]:
                return {key: await send(conn)}
            return await self._by_coordinator(pending, key_type, batch)
        outcome = (await self._retry_items(what, [key], attempt))[key]
        if isinstance(outcome, KafkaError):
            raise outcome
        result: T = outcome         # what ``send`` answered (Results holds it untyped)
        return result

    async def _metadata(self, topics: Iterable[str] | None) -> Message:
        response = await self.client.metadata(None if topics is None else list(topics))
        self._racks.update({b.node_id: b.rack for b in response.brokers})
        return response

    def _node(self, node_id: int) -> Node | None:
        """The node of an id that may be -1 (no leader, no controller): None for it."""
        return None if node_id < 0 else self._broker_node(node_id)

    def _broker_node(self, node_id: int) -> Node:
        """The node of a broker id (a broker list's, a replica's): host "" and port -1 for one not known."""
        if node_id not in self.client.brokers:
            return Node(node_id, "", -1)
        host, port = self.client.brokers[node_id]
        return Node(node_id, host, port, self._racks.get(node_id))

    def _node_id_of(self, conn: KafkaConnection) -> int:
        """The broker id a connection goes to (KafkaClient keys its connections to known brokers by id)."""
        return next((n for n, c in self.client._connections.items() if c is conn and isinstance(n, int)), -1)

    async def _by_leader(self, what: str, partitions: Iterable[TopicPartition],
                         send: Callable[[KafkaConnection, list[TopicPartition]], Awaitable[Mapping[Any, Any]]]
                         ) -> Results:
        """Send each partition's part to its leader (metadata refreshed on every attempt, so a leader change is
        followed); an unknown topic or partition fails at once, as in Java's PartitionLeaderStrategy."""
        async def attempt(pending: list[TopicPartition]) -> dict[TopicPartition, Any]:
            response = await self._metadata({tp.topic for tp in pending})
            known = {t.name: t for t in response.topics}
            answers: dict[TopicPartition, Any] = {}
            by_leader: dict[int, list[TopicPartition]] = defaultdict(list)
            for tp in pending:
                topic = known.get(tp.topic)
                if topic is None or topic.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
                    answers[tp] = _error(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"{what} {tp}", retriable=False)
                elif topic.error_code:
                    answers[tp] = _error(topic.error_code, f"{what} {tp}")
                elif not any(p.partition_index == tp.partition for p in topic.partitions):
                    answers[tp] = _error(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"{what} {tp}", "no such partition",
                                         retriable=False)
                else:
                    leader = self.client.leaders.get((tp.topic, tp.partition), -1)
                    if leader < 0:
                        answers[tp] = _error(ErrorCode.LEADER_NOT_AVAILABLE, f"{what} {tp}")
                    else:
                        by_leader[leader].append(tp)
            for leader, tps in by_leader.items():
                try:
                    answers.update(await send(await self.client.broker(leader), tps))
                except KafkaConnectionError as exc:
                    answers.update({tp: _error(ErrorCode.NETWORK_EXCEPTION, f"{what} {tp}", str(exc)) for tp in tps})
            return answers
        return await self._retry_items(what, [TopicPartition(*tp) for tp in partitions], attempt)

    async def _every_broker(self, what: str, send: Callable[[KafkaConnection], Awaitable[Any]]) -> list[Any]:
        """``send`` to every broker of the cluster (ListGroups, ListTransactions); the first error is raised."""
        response = await self._retry_one(what, lambda: self._metadata([]))
        brokers = [b.node_id for b in response.brokers]

        async def attempt(pending: list[int]) -> dict[int, Any]:
            answers = {}
            for node_id in pending:
                try:
                    answers[node_id] = await send(await self.client.broker(node_id))
                except KafkaConnectionError as exc:
                    answers[node_id] = _error(ErrorCode.NETWORK_EXCEPTION, what, str(exc))
            return answers
        return list((await self._retry_items(what, brokers, attempt)).all().values())

    # -- cluster ----------------------------------------------------------------------------------------------------

    async def describe_cluster(self) -> ClusterDescription:
        """Brokers, controller and cluster id: DescribeCluster (Metadata from brokers without it). Raises
        KafkaError."""
        async def attempt() -> ClusterDescription:
            conn = await self.client.any_broker()
            try:
                conn.version_for("DescribeCluster")
            except KafkaConnectionError:
                response = await self._metadata([])
                return ClusterDescription(response.cluster_id, self._node(response.controller_id),
                                          [self._broker_node(b.node_id) for b in response.brokers])
            response = await self._send(conn, "DescribeCluster", {"include_cluster_authorized_operations": False,
                                                                   "endpoint_type": 1})
            if response.error_code:
                raise KafkaError(response.error_code, response.error_message, what="describe the cluster")
            nodes = {b.broker_id: Node(b.broker_id, b.host, b.port, b.rack) for b in response.brokers}
            for node in nodes.values():
                self.client.brokers[node.id] = (node.host, node.port)
                self._racks[node.id] = node.rack
            controller = nodes.get(response.controller_id) if response.controller_id >= 0 else None
            return ClusterDescription(response.cluster_id, controller, list(nodes.values()))
        return await self._retry_one("describe the cluster", attempt)

    async def describe_features(self) -> FeatureMetadata:
        """Finalized and supported features, from ApiVersions v3 (as Java's describeFeatures). Raises KafkaError."""
        async def attempt() -> FeatureMetadata:
            conn = await self.client.any_broker()
            response = await self._send(conn, "ApiVersions", {"client_software_name": "kafkamock",
                                                              "client_software_version": "0.1.0"}, version=3)
            if response.error_code:
                raise KafkaError(response.error_code, what="describe features")
            epoch = response.finalized_features_epoch
            return FeatureMetadata(
                {f.name: (f.min_version_level, f.max_version_level) for f in response.finalized_features or ()},
                None if epoch is None or epoch < 0 else epoch,
                {f.name: (f.min_version, f.max_version) for f in response.supported_features or ()})
        return await self._retry_one("describe features", attempt)

    # -- topics -----------------------------------------------------------------------------------------------------

    async def create_topics(self, new_topics: Iterable[NewTopic], *, validate_only: bool = False) -> Results:
        """CreateTopics to any broker. Per-topic results {name: CreatedTopic or KafkaError} (TOPIC_ALREADY_EXISTS,
        INVALID_PARTITIONS, INVALID_REPLICATION_FACTOR, INVALID_CONFIG...), as Java's ``values()``."""
        by_name = {t.name: t for t in new_topics}

        async def attempt(pending: list[str]) -> dict[str, Any]:
            conn = await self.client.any_broker()
            response = await self._send(conn, "CreateTopics", {
                "topics": [{"name": n, "num_partitions": by_name[n].num_partitions,
                            "replication_factor": by_name[n].replication_factor,
                            "assignments": [{"partition_index": p, "broker_ids": ids}
                                            for p, ids in (by_name[n].replica_assignments or {}).items()],
                            "configs": [{"name": k, "value": None if v is None else str(v)}
                                        for k, v in by_name[n].configs.items()]} for n in pending],
                "timeout_ms": int(self.api_timeout_s * 1000), "validate_only": validate_only})
            answers: dict[str, Any] = {}
            for t in response.topics:
                if t.error_code:
                    answers[t.name] = _cluster_error(t.error_code, f"create topic {t.name!r}", t.error_message)
                    continue
                topic_id = t.get("topic_id")
                answers[t.name] = CreatedTopic(
                    t.name, None if topic_id in (None, _NO_TOPIC_ID) else topic_id, t.get("num_partitions", -1),
                    t.get("replication_factor", -1), {c.name: c.value for c in t.get("configs") or ()})
            return answers
        return await self._retry_items("create topics", by_name, attempt)

    async def delete_topics(self, topics: Iterable[str | uuid.UUID]) -> Results:
        """DeleteTopics to any broker, by name or by topic id. Per-topic results {topic: None or KafkaError}
        (UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID), as Java's ``topicNameValues()``/``topicIdValues()``."""
        async def attempt(pending: list[str | uuid.UUID]) -> dict[Any, Any]:
            conn = await self.client.any_broker()
            version = conn.version_for("DeleteTopics")
            body: dict[str, Any]
            if version >= 6:
                body = {"topics": [{"name": None, "topic_id": t} if isinstance(t, uuid.UUID)
                                   else {"name": t, "topic_id": _NO_TOPIC_ID} for t in pending]}
            elif any(isinstance(t, uuid.UUID) for t in pending):
                raise KafkaError(ErrorCode.UNSUPPORTED_VERSION, what="delete topics by id")
            else:
                body = {"topic_names": list(pending)}
            response = await self._send(conn, "DeleteTopics", {**body, "timeout_ms": int(self.api_timeout_s * 1000)})
            answers: dict[Any, Any] = {}
            for r in response.responses:
                key = r.name if r.name in pending else r.get("topic_id")
                answers[key] = (_cluster_error(r.error_code, f"delete topic {key}", r.get("error_message"))
                                if r.error_code else None)
            return answers
        return await self._retry_items("delete topics", topics, attempt)

    async def list_topics(self, *, include_internal: bool = False) -> dict[str, TopicListing]:
        """{name: TopicListing} of every topic (Metadata for all topics); raises KafkaError."""
        response = await self._retry_one("list topics", lambda: self._metadata(None))
        return {t.name: TopicListing(t.name, t.topic_id, t.is_internal) for t in sorted(response.topics,
                                                                                       key=lambda t: t.name)
                if t.error_code == 0 and (include_internal or not t.is_internal)}

    async def describe_topics(self, names: Iterable[str]) -> Results:
        """Partitions (leader, replicas, ISR), topic id and internal flag: DescribeTopicPartitions, paged with its
        cursor (Metadata from brokers without it). Per-topic results {name: TopicDescription or KafkaError}
        (UNKNOWN_TOPIC_OR_PARTITION fails at once), as Java's ``topicNameValues()``."""
        async def attempt(pending: list[str]) -> dict[str, Any]:
            await self._metadata([])            # the brokers, for the leaders' and replicas' nodes
            conn = await self.client.any_broker()
            try:
                conn.version_for("DescribeTopicPartitions")
            except KafkaConnectionError:
                return await self._describe_topics_by_metadata(pending)
            found: dict[str, dict[str, Any]] = {}
            answers: dict[str, Any] = {}
            cursor = None
            while True:
                response = await self._send(conn, "DescribeTopicPartitions", {
                    "topics": [{"name": n} for n in pending], "response_partition_limit": 2000, "cursor": cursor})
                for t in response.topics:
                    if t.error_code:
                        answers[t.name] = _error(t.error_code, f"describe topic {t.name!r}",
                                                 retriable=False if t.error_code == 3 else None)
                        continue
                    entry = found.setdefault(t.name, {"id": t.topic_id, "internal": t.is_internal, "partitions": []})
                    entry["partitions"].extend(self._partition_info(p) for p in t.partitions)
                cursor = response.next_cursor
                if cursor is None:
                    break
                cursor = {"topic_name": cursor.topic_name, "partition_index": cursor.partition_index}
            for name, entry in found.items():
                answers[name] = TopicDescription(name, entry["internal"],
                                                 sorted(entry["partitions"], key=lambda p: p.partition), entry["id"])
            return answers
        return await self._retry_items("describe topics", names, attempt)

    def _partition_info(self, p: Message) -> TopicPartitionInfo:
        return TopicPartitionInfo(p.partition_index, self._node(p.leader_id),
                                  [self._broker_node(r) for r in p.replica_nodes],
                                  [self._broker_node(r) for r in p.isr_nodes])

    async def _describe_topics_by_metadata(self, names: list[str]) -> dict[str, Any]:
        response = await self._metadata(names)
        answers: dict[str, Any] = {}
        for t in response.topics:
            if t.error_code:
                answers[t.name] = _error(t.error_code, f"describe topic {t.name!r}",
                                         retriable=False if t.error_code == 3 else None)
            else:
                answers[t.name] = TopicDescription(t.name, t.is_internal, sorted(
                    (self._partition_info(p) for p in t.partitions), key=lambda p: p.partition), t.topic_id)
        return answers

    async def create_partitions(self, new_partitions: Mapping[str, int | NewPartitions], *,
                                validate_only: bool = False) -> Results:
        """Grow topics to the given total partition counts (CreatePartitions to any broker). Per-topic results
        {topic: None or KafkaError} (INVALID_PARTITIONS for a count not above the current one,
        UNKNOWN_TOPIC_OR_PARTITION), as Java's ``values()``."""
        wanted = {t: n if isinstance(n, NewPartitions) else NewPartitions(n) for t, n in new_partitions.items()}

        async def attempt(pending: list[str]) -> dict[str, Any]:
            conn = await self.client.any_broker()
            response = await self._send(conn, "CreatePartitions", {
                "topics": [{"name": t, "count": wanted[t].total_count,
                            "assignments": None if (assignments := wanted[t].assignments) is None else
                            [{"broker_ids": ids} for ids in assignments]} for t in pending],
                "timeout_ms": int(self.api_timeout_s * 1000), "validate_only": validate_only})
            return {r.name: _cluster_error(r.error_code, f"create partitions of {r.name!r}", r.error_message)
                    if r.error_code else None
                    for r in response.results}
        return await self._retry_items("create partitions", wanted, attempt)

    # -- configs ----------------------------------------------------------------------------------------------------

    def _config_target(self, resource: ConfigResource) -> int | None:
        """A BROKER (or BROKER_LOGGER) resource naming a broker goes to that broker; the rest to any broker."""
        if resource.type in (ResourceType.BROKER, ResourceType.BROKER_LOGGER) and resource.name:
            return int(resource.name)
        return None

    async def _config_call(self, what: str, resources: Iterable[ConfigResource],
                           send: Callable[[KafkaConnection, list[ConfigResource]], Awaitable[Mapping[Any, Any]]]
                           ) -> Results:
        async def attempt(pending: list[ConfigResource]) -> dict[ConfigResource, Any]:
            by_target: dict[int | None, list[ConfigResource]] = defaultdict(list)
            for r in pending:
                by_target[self._config_target(r)].append(r)
            answers: dict[ConfigResource, Any] = {}
            if any(t is not None and t not in self.client.brokers for t in by_target):
                await self._metadata([])
            for target, batch in by_target.items():
                if target is not None and target not in self.client.brokers:
                    answers.update({r: _error(ErrorCode.BROKER_NOT_AVAILABLE, f"configs of {r}", "no such broker",
                                              retriable=False) for r in batch})
                    continue
                conn = await (self.client.any_broker() if target is None else self.client.broker(target))
                answers.update(await send(conn, batch))
            return answers
        return await self._retry_items(what, [_config_resource(r) for r in resources], attempt)

    async def describe_configs(self, resources: Iterable[ConfigResource], *, include_synonyms: bool = False,
                               include_documentation: bool = False) -> Results:
        """DescribeConfigs (a broker's own configs to that broker). Per-resource results {resource: {name:
        ConfigEntry} or KafkaError}, as Java's ``values()``."""
        async def send(conn: KafkaConnection, batch: list[ConfigResource]) -> dict[ConfigResource, Any]:
            response = await self._send(conn, "DescribeConfigs", {
                "resources": [{"resource_type": int(r.type), "resource_name": r.name, "configuration_keys": None}
                              for r in batch],
                "include_synonyms": include_synonyms, "include_documentation": include_documentation})
            answers: dict[ConfigResource, Any] = {}
            for r in response.results:
                key = ConfigResource(ResourceType(r.resource_type), r.resource_name)
                if r.error_code:
                    answers[key] = _cluster_error(r.error_code, f"describe configs of {key}", r.error_message)
                    continue
                answers[key] = {c.name: ConfigEntry(
                    c.name, c.value, _source(c.get("config_source", 0)), c.is_sensitive, c.read_only,
                    [(s.name, s.value, _source(s.source)) for s in c.get("synonyms") or ()],
                    _CONFIG_TYPES[c.get("config_type", 0)] if 0 <= c.get("config_type", 0) < len(_CONFIG_TYPES)
                    else "UNKNOWN", c.get("documentation")) for c in r.configs}
            return answers
        return await self._config_call("describe configs", resources, send)

    async def incremental_alter_configs(self, changes: Mapping[ConfigResource, Iterable[AlterConfigOp]], *,
                                        validate_only: bool = False) -> Results:
        """IncrementalAlterConfigs: SET, DELETE, APPEND or SUBTRACT single configs. Per-resource results
        {resource: None or KafkaError} (INVALID_CONFIG, UNKNOWN_TOPIC_OR_PARTITION...), as Java's ``values()``."""
        ops = {_config_resource(r): list(c) for r, c in changes.items()}

        async def send(conn: KafkaConnection, batch: list[ConfigResource]) -> dict[ConfigResource, Any]:
            response = await self._send(conn, "IncrementalAlterConfigs", {"resources": [
                {"resource_type": int(r.type), "resource_name": r.name, "configs": [
                    {"name": op.name, "config_operation": int(op.op), "value": op.value} for op in ops[r]]}
                for r in batch], "validate_only": validate_only})
            return _alter_results(response, "alter configs")
        return await self._config_call("alter configs", ops, send)

    async def alter_configs(self, configs: Mapping[ConfigResource, Mapping[str, str | None]], *,
                            validate_only: bool = False) -> Results:
        """AlterConfigs (deprecated in Java): replaces a resource's whole dynamic config set with ``configs``.
        Per-resource results {resource: None or KafkaError}, as Java's ``values()``."""
        wanted = {_config_resource(r): dict(c) for r, c in configs.items()}

        async def send(conn: KafkaConnection, batch: list[ConfigResource]) -> dict[ConfigResource, Any]:
            response = await self._send(conn, "AlterConfigs", {"resources": [
                {"resource_type": int(r.type), "resource_name": r.name, "configs": [
                    {"name": k, "value": None if v is None else str(v)} for k, v in wanted[r].items()]}
                for r in batch], "validate_only": validate_only})
            return _alter_results(response, "alter configs")
        return await self._config_call("alter configs", wanted, send)

    # -- records ----------------------------------------------------------------------------------------------------

    async def delete_records(self, before: Mapping[TopicPartition, int]) -> Results:
        """Delete the records below each offset (-1: the high watermark), DeleteRecords to each leader.
        Per-partition results {tp: DeletedRecords(low_watermark) or KafkaError} (OFFSET_OUT_OF_RANGE...), as
        Java's ``lowWatermarks()``."""
        wanted = {TopicPartition(*tp): offset for tp, offset in before.items()}

        async def send(conn: KafkaConnection, tps: list[TopicPartition]) -> dict[TopicPartition, Any]:
            by_topic: dict[str, list[dict]] = defaultdict(list)
            for tp in tps:
                by_topic[tp.topic].append({"partition_index": tp.partition, "offset": wanted[tp]})
            response = await self._send(conn, "DeleteRecords", {
                "topics": [{"name": t, "partitions": ps} for t, ps in by_topic.items()],
                "timeout_ms": int(self.request_timeout_s * 1000)})
            return {TopicPartition(t.name, p.partition_index):
                    KafkaError(p.error_code, what=f"delete records of {t.name}-{p.partition_index}") if p.error_code
                    else DeletedRecords(p.low_watermark) for t in response.topics for p in t.partitions}
        return await self._by_leader("delete records", wanted, send)

    async def list_offsets(self, specs: Mapping[TopicPartition, str | int], *,
                           isolation_level: str = "read_uncommitted") -> Results:
        """ListOffsets to each leader; a spec is "earliest", "latest", "max_timestamp" (the record with the
        highest timestamp), one of the module's constants, or a timestamp in ms (the first offset at or after it;
        offset -1 when there is none). read_committed's "latest" is the last stable offset. Per-partition results
        {tp: ListOffsetsResultInfo or KafkaError}, as Java's ``partitionResult(tp)``."""
        if isolation_level not in _ISOLATION:
            raise ValueError(f"isolation_level must be one of {', '.join(_ISOLATION)}")
        wanted = {TopicPartition(*tp): _SPECS[s] if isinstance(s, str) else int(s) for tp, s in specs.items()}

        async def send(conn: KafkaConnection, tps: list[TopicPartition]) -> dict[TopicPartition, Any]:
            by_topic: dict[str, list[dict]] = defaultdict(list)
            for tp in tps:
                by_topic[tp.topic].append({"partition_index": tp.partition, "current_leader_epoch": -1,
                                           "timestamp": wanted[tp]})
            response = await self._send(conn, "ListOffsets", {
                "replica_id": -1, "isolation_level": _ISOLATION[isolation_level],
                "topics": [{"name": t, "partitions": ps} for t, ps in by_topic.items()],
                "timeout_ms": int(self.request_timeout_s * 1000)})
            return {TopicPartition(t.name, p.partition_index):
                    KafkaError(p.error_code, what=f"list offsets of {t.name}-{p.partition_index}") if p.error_code
                    else ListOffsetsResultInfo(p.offset, p.timestamp, None if p.leader_epoch < 0 else p.leader_epoch)
                    for t in response.topics for p in t.partitions}
        return await self._by_leader("list offsets", wanted, send)

    # -- groups -----------------------------------------------------------------------------------------------------

    async def list_groups(self, *, types: Iterable[str] | None = None, states: Iterable[str] | None = None,
                          protocol_types: Iterable[str] | None = None) -> list[GroupListing]:
        """Every group of the cluster (ListGroups to every broker, merged), filtered by the broker on ``types``
        (classic, consumer, share, streams) and ``states`` (Stable, Empty...), and here on ``protocol_types``.
        Raises KafkaError (Java's ``all()``)."""
        types_filter, states_filter = list(types or ()), list(states or ())

        async def send(conn: KafkaConnection) -> Any:
            response = await self._send(conn, "ListGroups", {"states_filter": states_filter,
                                                             "types_filter": types_filter})
            if response.error_code:
                return KafkaError(response.error_code, what="list groups")
            return [GroupListing(g.group_id, g.get("group_type") or None, g.protocol_type, g.get("group_state"))
                    for g in response.groups]
        listings = {g.group_id: g for answer in await self._every_broker("list groups", send) for g in answer}
        wanted_protocols = None if protocol_types is None else set(protocol_types)
        return sorted((g for g in listings.values() if wanted_protocols is None or g.protocol in wanted_protocols),
                      key=lambda g: g.group_id)

    async def list_consumer_groups(self, *, states: Iterable[str] | None = None,
                                   types: Iterable[str] | None = None) -> list[GroupListing]:
        """Consumer groups only (classic groups of protocol "consumer" or "" and KIP-848 groups): Java's
        ``listGroups(ListGroupsOptions.forConsumerGroups())``. Raises KafkaError."""
        return await self.list_groups(types=types or ("classic", "consumer"), states=states,
                                      protocol_types=("consumer", ""))

    async def describe_consumer_groups(self, group_ids: Iterable[str]) -> Results:
        """ConsumerGroupDescribe to each group's coordinator; a group it does not know as a KIP-848 group
        (GROUP_ID_NOT_FOUND, or a broker without the API) is asked again with DescribeGroups, whose members'
        assignments are decoded from ConsumerProtocolAssignment — as Java does. Per-group results
        {group: ConsumerGroupDescription or KafkaError}, as Java's ``describedGroups()``."""
        classic: set[str] = set()

        async def send(conn: KafkaConnection, batch: list[str]) -> dict[str, Any]:
            answers: dict[str, Any] = {}
            coordinator = self._node(self._node_id_of(conn))
            modern = [g for g in batch if g not in classic]
            try:
                conn.version_for("ConsumerGroupDescribe")
            except KafkaConnectionError:
                classic.update(modern)
                modern = []
            if modern:
                response = await self._send(conn, "ConsumerGroupDescribe", {"group_ids": modern,
                                                                            "include_authorized_operations": False})
                for g in response.groups:
                    if g.error_code == ErrorCode.GROUP_ID_NOT_FOUND:     # not a KIP-848 group: maybe classic
                        classic.add(g.group_id)
                    elif g.error_code:
                        answers[g.group_id] = KafkaError(g.error_code, g.error_message,
                                                         what=f"describe group {g.group_id!r}")
                    else:
                        answers[g.group_id] = _consumer_group(g, coordinator)
            old = [g for g in batch if g in classic and g not in answers]
            if old:
                response = await self._send(conn, "DescribeGroups", {"groups": old,
                                                                     "include_authorized_operations": False})
                for g in response.groups:
                    answers[g.group_id] = _classic_group(g, coordinator)
            return answers

        async def attempt(pending: list[str]) -> dict[str, Any]:
            return await self._by_coordinator(pending, GROUP, send)
        return await self._retry_items("describe consumer groups", group_ids, attempt)

    async def delete_consumer_groups(self, group_ids: Iterable[str]) -> Results:
        """DeleteGroups to each group's coordinator. Per-group results {group: None or KafkaError}
        (NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND), as Java's ``deletedGroups()``."""
        return await self._delete_groups("delete consumer groups", group_ids, GROUP)

    async def _delete_groups(self, what: str, group_ids: Iterable[str], key_type: int) -> Results:
        async def send(conn: KafkaConnection, batch: list[str]) -> dict[str, Any]:
            response = await self._send(conn, "DeleteGroups", {"groups_names": batch})
            return {r.group_id: KafkaError(r.error_code, what=f"delete group {r.group_id!r}") if r.error_code else None
                    for r in response.results}

        async def attempt(pending: list[str]) -> dict[str, Any]:
            return await self._by_coordinator(pending, key_type, send)
        return await self._retry_items(what, group_ids, attempt)

    async def list_consumer_group_offsets(self, group_id: str, partitions: Iterable[TopicPartition] | None = None, *,
                                          require_stable: bool = False) -> dict[TopicPartition, OffsetAndMetadata | None]:
        """The group's committed offsets (OffsetFetch to its coordinator): of ``partitions`` (None for one not
        committed), or every committed one. A partition with an error is left out, as Java does; a group error
        raises KafkaError (Java's ``partitionsToOffsetAndMetadata()``)."""
        wanted = None if partitions is None else [TopicPartition(*tp) for tp in partitions]

        async def send(conn: KafkaConnection) -> dict[TopicPartition, OffsetAndMetadata | None] | KafkaError:
            version = conn.version_for("OffsetFetch")
            topic_ids: dict[str, Any] = {}
            if version >= 10 and wanted:
                await self._metadata({tp.topic for tp in wanted})
                topic_ids = self.client.topic_ids
            by_topic: dict[str, list[int]] = defaultdict(list)
            for tp in wanted or ():
                by_topic[tp.topic].append(tp.partition)
            if version >= 8:
                topics = None if wanted is None else [
                    {"name": t, "topic_id": topic_ids.get(t, _NO_TOPIC_ID), "partition_indexes": ps}
                    for t, ps in by_topic.items()]
                response = await self._send(conn, "OffsetFetch", {
                    "groups": [{"group_id": group_id, "member_id": None, "member_epoch": -1, "topics": topics}],
                    "require_stable": require_stable})
                (group,) = response.groups
                code, topics_out = group.error_code, group.topics
            else:
                response = await self._send(conn, "OffsetFetch", {
                    "group_id": group_id, "require_stable": require_stable,
                    "topics": None if wanted is None else [{"name": t, "partition_indexes": ps}
                                                           for t, ps in by_topic.items()]})
                code, topics_out = response.get("error_code", 0), response.topics
            if code:
                return KafkaError(code, what=f"list offsets of group {group_id!r}")
            names = self.client.topic_names
            if any(t.get("topic_id") not in names for t in topics_out if not t.get("name")):
                await self._metadata(None)                  # v10 names topics by id only
                names = self.client.topic_names
            out: dict[TopicPartition, OffsetAndMetadata | None] = {}
            for t in topics_out:
                name = t.get("name") or names.get(t.get("topic_id"), "?")
                for p in t.partitions:
                    if p.error_code:
                        continue
                    tp = TopicPartition(name, p.partition_index)
                    out[tp] = None if p.committed_offset < 0 else OffsetAndMetadata(
                        p.committed_offset, p.metadata or "", p.get("committed_leader_epoch", -1))
            if wanted is not None:
                out = {tp: out.get(tp) for tp in wanted}
            return out
        return await self._coordinated(f"list offsets of group {group_id!r}", group_id, GROUP, send)

    async def alter_consumer_group_offsets(self, group_id: str,
                                           offsets: Mapping[TopicPartition, OffsetAndMetadata | int]) -> Results:
        """Commit offsets for a group that has no members (OffsetCommit with no member, to its coordinator).
        Per-partition results {tp: None or KafkaError} (UNKNOWN_MEMBER_ID while the group has members), as Java's
        ``partitionResult(tp)``."""
        wanted = {TopicPartition(*tp): o if isinstance(o, OffsetAndMetadata) else OffsetAndMetadata(int(o))
                  for tp, o in offsets.items()}

        async def send(conn: KafkaConnection) -> Results | KafkaError:
            version = conn.version_for("OffsetCommit")
            if version >= 10:
                await self._metadata({tp.topic for tp in wanted})
            by_topic: dict[str, list[dict]] = defaultdict(list)
            for tp, om in wanted.items():
                by_topic[tp.topic].append({"partition_index": tp.partition, "committed_offset": om.offset,
                                           "committed_leader_epoch": om.leader_epoch,
                                           "committed_metadata": om.metadata})
            response = await self._send(conn, "OffsetCommit", {
                "group_id": group_id, "generation_id_or_member_epoch": -1, "member_id": "",
                "group_instance_id": None, "retention_time_ms": -1,
                "topics": [{"name": t, "topic_id": self.client.topic_ids.get(t, _NO_TOPIC_ID), "partitions": ps}
                           for t, ps in by_topic.items()]})
            names = self.client.topic_names
            results = {TopicPartition(t.get("name") or names.get(t.get("topic_id"), "?"), p.partition_index):
                       p.error_code for t in response.topics for p in t.partitions}
            moved = next((c for c in results.values() if c in COORDINATOR_MOVED
                          or c == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS), None)
            if moved is not None:
                return KafkaError(moved, what=f"alter offsets of group {group_id!r}")
            return Results((tp, KafkaError(c, what=f"alter offset of {tp} in group {group_id!r}") if c else None)
                           for tp, c in results.items())
        return await self._coordinated(f"alter offsets of group {group_id!r}", group_id, GROUP, send)

    async def delete_consumer_group_offsets(self, group_id: str, partitions: Iterable[TopicPartition]) -> Results:
        """OffsetDelete to the group's coordinator. Per-partition results {tp: None or KafkaError}
        (GROUP_SUBSCRIBED_TO_TOPIC while a member reads the topic; a group error such as GROUP_ID_NOT_FOUND fails
        every partition), as Java's ``partitionResult(tp)``."""
        wanted = [TopicPartition(*tp) for tp in partitions]

        async def send(conn: KafkaConnection) -> Results | KafkaError:
            by_topic: dict[str, list[dict]] = defaultdict(list)
            for tp in wanted:
                by_topic[tp.topic].append({"partition_index": tp.partition})
            response = await self._send(conn, "OffsetDelete", {
                "group_id": group_id, "topics": [{"name": t, "partitions": ps} for t, ps in by_topic.items()]})
            if response.error_code:
                error = KafkaError(response.error_code, what=f"delete offsets of group {group_id!r}")
                if error.retriable:
                    return error
                return Results((tp, error) for tp in wanted)
            return Results((TopicPartition(t.name, p.partition_index),
                            KafkaError(p.error_code, what=f"delete offset of {t.name}-{p.partition_index}")
                            if p.error_code else None) for t in response.topics for p in t.partitions)
        return await self._coordinated(f"delete offsets of group {group_id!r}", group_id, GROUP, send)

    async def remove_members_from_consumer_group(self, group_id: str,
                                                 instance_ids: Iterable[str] | None = None) -> Results:
        """LeaveGroup for static members (by group.instance.id), or for every member when ``instance_ids`` is
        None (the group described first, as Java's ``removeMembersFromConsumerGroup`` with no members does).
        Per-member results {instance id or member id: None or KafkaError}, as Java's ``memberResult()``."""
        if instance_ids is None:
            described = (await self.describe_consumer_groups([group_id]))[group_id]
            if isinstance(described, KafkaError):
                raise described
            members = [{"member_id": m.member_id, "group_instance_id": m.instance_id,
                        "reason": "removed by the admin client"} for m in described.members]
        else:
            members = [{"member_id": "", "group_instance_id": i, "reason": "removed by the admin client"}
                       for i in instance_ids]

        async def send(conn: KafkaConnection) -> Results | KafkaError:
            response = await self._send(conn, "LeaveGroup", {"group_id": group_id, "members": members})
            if response.error_code:
                return KafkaError(response.error_code, what=f"remove members of group {group_id!r}")
            return Results((m.group_instance_id or m.member_id,
                            KafkaError(m.error_code, what=f"remove member {m.group_instance_id or m.member_id!r}")
                            if m.error_code else None) for m in response.members)
        if not members:
            return Results()
        return await self._coordinated(f"remove members of group {group_id!r}", group_id, GROUP, send)

    # -- share groups -----------------------------------------------------------------------------------------------

    async def describe_share_groups(self, group_ids: Iterable[str]) -> Results:
        """ShareGroupDescribe to each group's coordinator. Per-group results {group: ShareGroupDescription or
        KafkaError} (GROUP_ID_NOT_FOUND), as Java's ``describedGroups()``."""
        async def send(conn: KafkaConnection, batch: list[str]) -> dict[str, Any]:
            coordinator = self._node(self._node_id_of(conn))
            response = await self._send(conn, "ShareGroupDescribe", {"group_ids": batch,
                                                                     "include_authorized_operations": False})
            answers: dict[str, Any] = {}
            for g in response.groups:
                if g.error_code:
                    answers[g.group_id] = KafkaError(g.error_code, g.error_message,
                                                     what=f"describe share group {g.group_id!r}")
                    continue
                answers[g.group_id] = ShareGroupDescription(
                    g.group_id, [ShareMemberDescription(m.member_id, m.client_id, m.client_host, _tps(m.assignment),
                                                        m.member_epoch) for m in g.members],
                    g.group_state, coordinator, g.group_epoch, g.assignment_epoch)
            return answers

        async def attempt(pending: list[str]) -> dict[str, Any]:
            return await self._by_coordinator(pending, GROUP, send)
        return await self._retry_items("describe share groups", group_ids, attempt)

    async def list_share_group_offsets(self, group_id: str, partitions: Iterable[TopicPartition] | None = None
                                       ) -> dict[TopicPartition, SharePartitionOffsetInfo | None]:
        """The share group's start offsets (DescribeShareGroupOffsets to its coordinator), of ``partitions`` or of
        every partition it has state for. A partition with an error is left out (None when asked for); a group
        error raises KafkaError (Java's ``partitionsToOffsetInfo()``)."""
        wanted = None if partitions is None else [TopicPartition(*tp) for tp in partitions]

        async def send(conn: KafkaConnection) -> dict[TopicPartition, SharePartitionOffsetInfo | None] | KafkaError:
            by_topic: dict[str, list[int]] = defaultdict(list)
            for tp in wanted or ():
                by_topic[tp.topic].append(tp.partition)
            response = await self._send(conn, "DescribeShareGroupOffsets", {"groups": [{
                "group_id": group_id, "topics": None if wanted is None else
                [{"topic_name": t, "partitions": ps} for t, ps in by_topic.items()]}]})
            (group,) = response.groups
            if group.error_code:
                return KafkaError(group.error_code, group.error_message,
                                  what=f"list offsets of share group {group_id!r}")
            out: dict[TopicPartition, SharePartitionOffsetInfo | None] = {}
            for t in group.topics:
                for p in t.partitions:
                    if p.error_code or p.start_offset < 0:
                        continue
                    lag = p.get("lag", -1)
                    out[TopicPartition(t.topic_name, p.partition_index)] = SharePartitionOffsetInfo(
                        p.start_offset, None if p.leader_epoch < 0 else p.leader_epoch, None if lag < 0 else lag)
            if wanted is not None:
                out = {tp: out.get(tp) for tp in wanted}
            return out
        return await self._coordinated(f"list offsets of share group {group_id!r}", group_id, GROUP, send)

    async def alter_share_group_offsets(self, group_id: str, offsets: Mapping[TopicPartition, int]) -> Results:
        """Set a share group's start offsets (AlterShareGroupOffsets to its coordinator; the group must have no
        members). Per-partition results {tp: None or KafkaError}; a group error (NON_EMPTY_GROUP,
        GROUP_ID_NOT_FOUND) fails every partition — Java's ``partitionResult(tp)``."""
        wanted = {TopicPartition(*tp): int(o) for tp, o in offsets.items()}

        async def send(conn: KafkaConnection) -> Results | KafkaError:
            by_topic: dict[str, list[dict]] = defaultdict(list)
            for tp, offset in wanted.items():
                by_topic[tp.topic].append({"partition_index": tp.partition, "start_offset": offset})
            response = await self._send(conn, "AlterShareGroupOffsets", {
                "group_id": group_id, "topics": [{"topic_name": t, "partitions": ps} for t, ps in by_topic.items()]})
            if response.error_code:
                error = KafkaError(response.error_code, response.error_message,
                                   what=f"alter offsets of share group {group_id!r}")
                return error if error.retriable else Results((tp, error) for tp in wanted)
            return Results((TopicPartition(t.topic_name, p.partition_index),
                            KafkaError(p.error_code, p.error_message,
                                       what=f"alter offset of {t.topic_name}-{p.partition_index}")
                            if p.error_code else None)
                           for t in response.responses for p in t.partitions)
        return await self._coordinated(f"alter offsets of share group {group_id!r}", group_id, GROUP, send)

    async def delete_share_group_offsets(self, group_id: str, topics: Iterable[str]) -> Results:
        """Forget a share group's state for whole topics (DeleteShareGroupOffsets to its coordinator; the group
        must have no members). Per-topic results {topic: None or KafkaError}; a group error fails every topic —
        Java's ``topicResult(topic)``."""
        wanted = list(dict.fromkeys(topics))

        async def send(conn: KafkaConnection) -> Results | KafkaError:
            response = await self._send(conn, "DeleteShareGroupOffsets", {
                "group_id": group_id, "topics": [{"topic_name": t} for t in wanted]})
            if response.error_code:
                error = KafkaError(response.error_code, response.error_message,
                                   what=f"delete offsets of share group {group_id!r}")
                return error if error.retriable else Results((t, error) for t in wanted)
            return Results((t.topic_name, KafkaError(t.error_code, t.error_message,
                                                     what=f"delete offsets of {t.topic_name!r}")
                            if t.error_code else None)
                           for t in response.responses)
        return await self._coordinated(f"delete offsets of share group {group_id!r}", group_id, GROUP, send)

    async def delete_share_groups(self, group_ids: Iterable[str]) -> Results:
        """DeleteGroups to each share group's coordinator. Per-group results {group: None or KafkaError}
        (NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND), as Java's ``deletedGroups()``."""
        return await self._delete_groups("delete share groups", group_ids, GROUP)

    # -- transactions -----------------------------------------------------------------------------------------------

    async def describe_transactions(self, transactional_ids: Iterable[str]) -> Results:
        """DescribeTransactions to each id's transaction coordinator. Per-id results {id: TransactionDescription
        or KafkaError} (TRANSACTIONAL_ID_NOT_FOUND), as Java's ``description(id)``."""
        async def send(conn: KafkaConnection, batch: list[str]) -> dict[str, Any]:
            node_id = self._node_id_of(conn)
            response = await self._send(conn, "DescribeTransactions", {"transactional_ids": batch})
            answers: dict[str, Any] = {}
            for s in response.transaction_states:
                if s.error_code:
                    answers[s.transactional_id] = KafkaError(s.error_code, what=f"describe transaction "
                                                                           f"{s.transactional_id!r}")
                    continue
                answers[s.transactional_id] = TransactionDescription(
                    node_id, s.transaction_state, s.producer_id, s.producer_epoch, s.transaction_timeout_ms,
                    None if s.transaction_start_time_ms < 0 else s.transaction_start_time_ms,
                    frozenset(TopicPartition(t.topic, p) for t in s.topics for p in t.partitions))
            return answers

        async def attempt(pending: list[str]) -> dict[str, Any]:
            return await self._by_coordinator(pending, TRANSACTION, send)
        return await self._retry_items("describe transactions", transactional_ids, attempt)

    describe_transaction_state = describe_transactions

    async def list_transactions(self, *, states: Iterable[str] | None = None,
                                producer_ids: Iterable[int] | None = None, duration_filter_ms: int | None = None,
                                transactional_id_pattern: str | None = None) -> list[TransactionListing]:
        """Every transactional id the coordinators know (ListTransactions to every broker, merged), filtered by
        state (Ongoing, PrepareCommit...), producer id, running longer than ``duration_filter_ms`` and a regular
        expression on the id. Raises KafkaError (Java's ``all()``)."""
        body = {"state_filters": list(states or ()), "producer_id_filters": list(producer_ids or ()),
                "duration_filter": -1 if duration_filter_ms is None else duration_filter_ms,
                "transactional_id_pattern": transactional_id_pattern}

        async def send(conn: KafkaConnection) -> Any:
            version = conn.version_for("ListTransactions")
            if (duration_filter_ms is not None and version < 1) or (transactional_id_pattern is not None
                                                                   and version < 2):
                return _error(ErrorCode.UNSUPPORTED_VERSION, "list transactions with this filter", retriable=False)
            response = await self._send(conn, "ListTransactions", body)
            if response.error_code:
                return KafkaError(response.error_code, what="list transactions")
            return [TransactionListing(s.transactional_id, s.producer_id, s.transaction_state)
                    for s in response.transaction_states]
        listings = {t.transactional_id: t for answer in await self._every_broker("list transactions", send)
                    for t in answer}
        return sorted(listings.values(), key=lambda t: t.transactional_id)

    async def describe_producers(self, partitions: Iterable[TopicPartition]) -> Results:
        """The active producers of each partition (DescribeProducers to its leader). Per-partition results
        {tp: [ProducerState] or KafkaError}, as Java's ``partitionResult(tp)``."""
        async def send(conn: KafkaConnection, tps: list[TopicPartition]) -> dict[TopicPartition, Any]:
            by_topic: dict[str, list[int]] = defaultdict(list)
            for tp in tps:
                by_topic[tp.topic].append(tp.partition)
            response = await self._send(conn, "DescribeProducers", {
                "topics": [{"name": t, "partition_indexes": ps} for t, ps in by_topic.items()]})
            return {TopicPartition(t.name, p.partition_index):
                    KafkaError(p.error_code, p.error_message,
                               what=f"describe producers of {t.name}-{p.partition_index}")
                    if p.error_code else [ProducerState(
                        s.producer_id, s.producer_epoch, s.last_sequence, s.last_timestamp,
                        None if s.coordinator_epoch < 0 else s.coordinator_epoch,
                        None if s.current_txn_start_offset < 0 else s.current_txn_start_offset)
                        for s in p.active_producers]
                    for t in response.topics for p in t.partitions}
        return await self._by_leader("describe producers", partitions, send)

    async def abort_transaction(self, partition: TopicPartition, producer_id: int, producer_epoch: int,
                                coordinator_epoch: int) -> None:
        """Abort a hanging transaction on one partition: an ABORT marker written by WriteTxnMarkers to the
        partition's leader (what Java's ``abortTransaction`` does; take the values from ``describe_producers``).
        Raises KafkaError."""
        tp = TopicPartition(*partition)

        async def send(conn: KafkaConnection, tps: list[TopicPartition]) -> dict[TopicPartition, Any]:
            response = await self._send(conn, "WriteTxnMarkers", {"markers": [{
                "producer_id": producer_id, "producer_epoch": producer_epoch, "transaction_result": False,
                "topics": [{"name": tp.topic, "partition_indexes": [tp.partition]}],
                "coordinator_epoch": coordinator_epoch}]})
            return {TopicPartition(t.name, p.partition_index):
                    KafkaError(p.error_code, what=f"abort the transaction of producer {producer_id} on {tp}")
                    if p.error_code else None
                    for m in response.markers for t in m.topics for p in t.partitions}
        (await self._by_leader("abort transaction", [tp], send)).all()

    # -- ACLs -------------------------------------------------------------------------------------------------------

    async def create_acls(self, bindings: Iterable[AclBinding]) -> Results:
        """CreateAcls to any broker. Per-binding results {binding: None or KafkaError}, as Java's ``values()``:
        INVALID_REQUEST for a binding with an UNKNOWN field (refused here, unsent, as Java refuses it) or one the
        broker refuses (a principal without a type, a CLUSTER not named kafka-cluster...), SECURITY_DISABLED
        without an authorizer, CLUSTER_AUTHORIZATION_FAILED without ALTER on the cluster. Creating a binding that
        exists already succeeds."""
        wanted = list(dict.fromkeys(bindings))
        refused: dict[AclBinding, KafkaError] = {}
        for b in wanted:
            if not isinstance(b, AclBinding):
                raise TypeError(f"create_acls takes AclBindings, not {b!r}")
            reason = b.to_filter().find_indefinite_field()
            if reason is not None:
                refused[b] = _error(ErrorCode.INVALID_REQUEST, f"create ACL {b}", f"Invalid ACL creation: {reason}",
                                    retriable=False)

        async def attempt(pending: list[AclBinding]) -> dict[AclBinding, Any]:
            conn = await self.client.any_broker()
            response = await self._send(conn, "CreateAcls", {"creations": [creation_body(b) for b in pending]})
            _same_count(response.results, pending, "create ACLs")
            return {b: _cluster_error(r.error_code, f"create ACL {b}", r.error_message) if r.error_code else None
                    for b, r in zip(pending, response.results, strict=True)}
        sent = await self._retry_items("create ACLs", [b for b in wanted if b not in refused], attempt)
        return Results((b, refused[b] if b in refused else sent[b]) for b in wanted)

    async def describe_acls(self, filter: AclBindingFilter = AclBindingFilter.ANY) -> list[AclBinding]:
        """The bindings ``filter`` matches (DescribeAcls to any broker). Raises KafkaError (Java's ``values()``):
        INVALID_REQUEST for a filter with an UNKNOWN field, SECURITY_DISABLED without an authorizer,
        CLUSTER_AUTHORIZATION_FAILED without DESCRIBE on the cluster."""
        if not isinstance(filter, AclBindingFilter):
            raise TypeError(f"describe_acls takes an AclBindingFilter, not {filter!r}")
        if filter.is_unknown:
            raise _error(ErrorCode.INVALID_REQUEST, "describe ACLs",
                         "The AclBindingFilter must not contain UNKNOWN elements.", retriable=False)

        async def attempt() -> list[AclBinding]:
            conn = await self.client.any_broker()
            response = await self._send(conn, "DescribeAcls", filter_body(filter))
            if response.error_code:
                raise KafkaError(response.error_code, response.error_message, what="describe ACLs")
            return [binding_of(r.resource_type, r.resource_name, r.pattern_type,
                               a.principal, a.host, a.operation, a.permission_type)
                    for r in response.resources for a in r.acls]
        return await self._retry_one("describe ACLs", attempt)

    async def delete_acls(self, filters: Iterable[AclBindingFilter]) -> Results:
        """DeleteAcls to any broker: every binding a filter matches goes. Per-filter results {filter:
        [DeleteAclsFilterResult(binding, None or KafkaError)] or KafkaError}, as Java's ``values()``: the bindings
        the filter matched (a binding two filters match is listed under both), each with its own error; a filter's
        own error is SECURITY_DISABLED, CLUSTER_AUTHORIZATION_FAILED... A filter with an UNKNOWN field fails the
        whole call (every filter INVALID_REQUEST, nothing sent), as in Java."""
        wanted = list(dict.fromkeys(filters))
        for f in wanted:
            if not isinstance(f, AclBindingFilter):
                raise TypeError(f"delete_acls takes AclBindingFilters, not {f!r}")
        if any(f.is_unknown for f in wanted):
            error = _error(ErrorCode.INVALID_REQUEST, "delete ACLs", "Filters contain UNKNOWN elements",
                           retriable=False)
            return Results((f, error) for f in wanted)

        async def attempt(pending: list[AclBindingFilter]) -> dict[AclBindingFilter, Any]:
            conn = await self.client.any_broker()
            response = await self._send(conn, "DeleteAcls", {"filters": [filter_body(f) for f in pending]})
            _same_count(response.filter_results, pending, "delete ACLs")
            answers: dict[AclBindingFilter, Any] = {}
            for f, r in zip(pending, response.filter_results, strict=True):
                if r.error_code:
                    answers[f] = _cluster_error(r.error_code, f"delete ACLs matching {f}", r.error_message)
                    continue
                matched = []
                for m in r.matching_acls:
                    binding = binding_of(m.resource_type, m.resource_name, m.pattern_type,
                                         m.principal, m.host, m.operation, m.permission_type)
                    matched.append(DeleteAclsFilterResult(binding, KafkaError(
                        m.error_code, m.error_message, what=f"delete ACL {binding}") if m.error_code else None))
                answers[f] = matched
            return answers
        return await self._retry_items("delete ACLs", wanted, attempt)

    # -- client quotas ----------------------------------------------------------------------------------------------

    async def describe_client_quotas(self, filter: ClientQuotaFilter | Iterable[ClientQuotaFilterComponent], *,
                                     strict: bool = False) -> dict[ClientQuotaEntity, dict[str, float]]:
        """The quotas of the entities ``filter`` matches (DescribeClientQuotas to any broker): {entity: {key:
        value}}. ``filter`` is a ClientQuotaFilter or its components; ``strict`` (or a ``contains_only`` filter)
        leaves out entities that name other entity types too. Raises KafkaError (Java's ``entities()``):
        INVALID_REQUEST for a bad filter, CLUSTER_AUTHORIZATION_FAILED without DESCRIBE_CONFIGS on the cluster."""
        flt = filter if isinstance(filter, ClientQuotaFilter) else ClientQuotaFilter(tuple(filter), strict)
        body = {"components": [{"entity_type": c.entity_type, "match_type": c.match_type, "match": c.match}
                               for c in flt.components], "strict": strict or flt.strict}

        async def attempt() -> dict[ClientQuotaEntity, dict[str, float]]:
            conn = await self.client.any_broker()
            response = await self._send(conn, "DescribeClientQuotas", body)
            if response.error_code:
                raise KafkaError(response.error_code, response.error_message, what="describe client quotas")
            return {ClientQuotaEntity({d.entity_type: d.entity_name for d in e.entity}):
                    {v.key: v.value for v in e["values"]} for e in response.entries or ()}
        return await self._retry_one("describe client quotas", attempt)

    async def alter_client_quotas(self, alterations: Iterable[ClientQuotaAlteration], *,
                                  validate_only: bool = False) -> Results:
        """Set or remove quota values (AlterClientQuotas to any broker); ``validate_only`` checks and changes
        nothing. Per-entity results {entity: None or KafkaError} (INVALID_REQUEST with the broker's message for a
        bad entity, an unknown key or a bad value), as Java's ``values()``."""
        changes = [a if isinstance(a, ClientQuotaAlteration) else ClientQuotaAlteration(*a) for a in alterations]

        async def attempt(pending: list[ClientQuotaEntity]) -> dict[ClientQuotaEntity, Any]:
            conn = await self.client.any_broker()
            response = await self._send(conn, "AlterClientQuotas", {"entries": [
                {"entity": [{"entity_type": t, "entity_name": n} for t, n in a.entity.items()],
                 "ops": [{"key": op.key, "value": 0.0 if op.value is None else op.value, "remove": op.value is None}
                         for op in a.ops]}
                for a in changes if a.entity in pending], "validate_only": validate_only})
            answers: dict[ClientQuotaEntity, Any] = {}
            for e in response.entries:
                entity = ClientQuotaEntity({d.entity_type: d.entity_name for d in e.entity})
                if answers.get(entity) is None:         # an entity altered twice keeps its first error
                    answers[entity] = (_cluster_error(e.error_code, f"alter client quotas of {dict(entity)}",
                                                      e.error_message) if e.error_code else None)
            return answers
        return await self._retry_items("alter client quotas", [a.entity for a in changes], attempt)

    # -- SCRAM credentials ------------------------------------------------------------------------------------------

    async def describe_user_scram_credentials(self, users: Iterable[str] | None = None) -> Results:
        """Which SCRAM mechanisms (and iteration counts) users have credentials for: DescribeUserScramCredentials to
        any broker, for ``users`` or every user with a credential. Per-user results {user:
        UserScramCredentialsDescription or KafkaError} (RESOURCE_NOT_FOUND for a user without credentials,
        DUPLICATE_RESOURCE for one named twice), as Java's ``description(user)``; a whole-request error raises."""
        names = None if users is None else list(users)

        async def attempt() -> Results:
            conn = await self.client.any_broker()
            response = await self._send(conn, "DescribeUserScramCredentials", {
                "users": None if names is None else [{"name": u} for u in names]})
            if response.error_code:
                raise KafkaError(response.error_code, response.error_message, what="describe SCRAM credentials")
            return Results((r.user, KafkaError(r.error_code, r.error_message,
                                               what=f"describe SCRAM credentials of {r.user!r}") if r.error_code else
                            UserScramCredentialsDescription(r.user, [
                                ScramCredentialInfo(decode(ScramMechanism, c.mechanism), c.iterations)
                                for c in r.credential_infos]))
                           for r in response.results)
        return await self._retry_one("describe SCRAM credentials", attempt)

    async def alter_user_scram_credentials(
            self, alterations: Iterable[UserScramCredentialUpsertion | UserScramCredentialDeletion]) -> Results:
        """Upsert and delete users' SCRAM credentials: AlterUserScramCredentials to the controller (the Metadata
        response's; NOT_CONTROLLER looks it up again), as Java's Admin sends it. An upsertion sends its salt and
        SaltedPassword, never the password. Per-user results {user: None or KafkaError}, as Java's ``values()``:
        refused here, unsent, as Java refuses them, an empty user or password (UNACCEPTABLE_CREDENTIAL) and an
        UNKNOWN mechanism (UNSUPPORTED_SASL_MECHANISM) — every alteration of that user is then dropped; from the
        broker, too few or many iterations (UNACCEPTABLE_CREDENTIAL), a user altered twice (DUPLICATE_RESOURCE), a
        deleted credential that does not exist (RESOURCE_NOT_FOUND)."""
        changes = list(alterations)
        for a in changes:
            if not isinstance(a, UserScramCredentialUpsertion | UserScramCredentialDeletion):
                raise TypeError(f"alter_user_scram_credentials takes UserScramCredentialUpsertion and "
                                f"UserScramCredentialDeletion, not {a!r}")
        users = list(dict.fromkeys(a.user for a in changes))
        refused: dict[str, KafkaError] = {}

        def refuse(a: Any, code: ErrorCode, message: str) -> None:
            refused[a.user] = _error(code, f"alter SCRAM credentials of {a.user!r}", message, retriable=False)

        for a in (a for a in changes if isinstance(a, UserScramCredentialDeletion)):
            if not a.user:
                refuse(a, ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty")
            elif a.mechanism == ScramMechanism.UNKNOWN:
                refuse(a, ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism")
        upsertions: dict[tuple[str, ScramMechanism], dict[str, Any]] = {}
        for a in (a for a in changes if isinstance(a, UserScramCredentialUpsertion) and a.user not in refused):
            if not a.user:
                refuse(a, ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty")
            elif not a.password:
                refuse(a, ErrorCode.UNACCEPTABLE_CREDENTIAL, "Password must not be empty")
            elif a.mechanism == ScramMechanism.UNKNOWN:
                refuse(a, ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism")
            else:
                upsertions[(a.user, a.mechanism)] = {"name": a.user, "mechanism": int(a.mechanism),
                                                     "iterations": a.iterations, "salt": a.salt,
                                                     "salted_password": a.salted_password()}
        deletions = [{"name": a.user, "mechanism": int(a.mechanism)} for a in changes
                     if isinstance(a, UserScramCredentialDeletion) and a.user not in refused]

        async def attempt(pending: list[str]) -> dict[str, Any]:
            controller = (await self._metadata([])).controller_id
            if controller < 0 or controller not in self.client.brokers:
                raise _error(ErrorCode.NOT_CONTROLLER, "alter SCRAM credentials", "no controller known yet",
                             retriable=True)
            conn = await self.client.broker(controller)
            response = await self._send(conn, "AlterUserScramCredentials", {
                "deletions": [d for d in deletions if d["name"] in pending],
                "upsertions": [u for u in upsertions.values() if u["name"] in pending]})
            return {r.user: _cluster_error(r.error_code, f"alter SCRAM credentials of {r.user!r}", r.error_message)
                    if r.error_code else None for r in response.results}
        sent = await self._retry_items("alter SCRAM credentials", [u for u in users if u not in refused], attempt)
        return Results((u, refused[u] if u in refused else sent[u]) for u in users)


# -- decoding -------------------------------------------------------------------------------------------------------

def _source(code: int) -> ConfigSource:
    try:
        return ConfigSource(code)
    except ValueError:
        return ConfigSource.UNKNOWN


def _config_resource(resource: ConfigResource | tuple[Any, str]) -> ConfigResource:
    """A config resource with its type as ConfigResource.Type (``ResourceType``). Kafka's ACL resource type
    (``AclResourceType``) is refused rather than converted: its codes name other things (GROUP is 3, not 32; 4 is
    CLUSTER, not BROKER)."""
    rtype, name = resource
    if isinstance(rtype, AclResourceType):
        raise TypeError(f"a ConfigResource takes a kafkamock.client.admin.ResourceType (ConfigResource.Type), not "
                        f"AclResourceType.{rtype.name}")
    return ConfigResource(ResourceType(rtype), name)


def _alter_results(response: Message, what: str) -> dict[ConfigResource, Any]:
    return {ConfigResource(ResourceType(r.resource_type), r.resource_name):
            _cluster_error(r.error_code, f"{what} of {r.resource_name!r}", r.error_message) if r.error_code
            else None
            for r in response.responses}


def _consumer_group(g: Message, coordinator: Node | None) -> ConsumerGroupDescription:
    members = [MemberDescription(m.member_id, m.instance_id, m.client_id, m.client_host, _tps(m.assignment),
                                 _tps(m.target_assignment), m.member_epoch) for m in g.members]
    return ConsumerGroupDescription(g.group_id, False, members, g.assignor_name, "consumer", g.group_state,
                                    coordinator, g.group_epoch, g.assignment_epoch)


def _classic_group(g: Message, coordinator: Node | None) -> Any:
    if g.error_code:
        return KafkaError(g.error_code, g.get("error_message"), what=f"describe group {g.group_id!r}")
    if g.protocol_type not in ("consumer", ""):
        return _error(ErrorCode.INVALID_GROUP_ID, f"describe group {g.group_id!r}",
                      f"not a consumer group (protocol type {g.protocol_type!r})", retriable=False)
    if g.group_state == "Dead":                    # brokers before DescribeGroups v6 say Dead for no group
        return KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, what=f"describe group {g.group_id!r}")
    members = [MemberDescription(m.member_id, m.get("group_instance_id"), m.client_id, m.client_host,
                                 frozenset(decode_assignment(m.member_assignment))) for m in g.members]
    return ConsumerGroupDescription(g.group_id, g.protocol_type == "", members, g.protocol_data, "classic",
                                    g.group_state, coordinator)


def _same_count(results: list[Any], sent: list[Any], what: str) -> None:
    """CreateAcls and DeleteAcls answer by position: one result per binding or filter sent."""
    if len(results) != len(sent):
        raise _error(ErrorCode.UNKNOWN_SERVER_ERROR, what,
                     f"the broker answered {len(results)} results for {len(sent)} items", retriable=False)
