"""The broker core: a decoded request and the time in, an outcome and the next deadline out. No sockets, no files,
no wall clock of its own (docs/architecture.md; h11's style).

A newcomer follows one request like this: ``server/connection.py`` reads a frame on the listener of one node and
decodes it with the codec; ``Broker.handle`` (here) logs it, applies any fault the control API pushed, and hands it
to the handler module for its API (``handlers/<api>.py``); the handler looks partitions up through
``Broker.lead`` (``cluster.py``), changes the state (``cluster.py``, the partition's log in ``kafkamock.storage``)
and returns the response body, which the connection encodes and sends. A request that must wait (a long-poll
Fetch) returns a ``Waiter``; the core answers it when what it waits on changes (``notify``) or when ``tick``
reaches its deadline.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kafkamock.broker import authorizer, handlers
from kafkamock.broker.acls import CLUSTER_NAME, AclOperation, AclStore, ResourceType
from kafkamock.broker.clock import Clock, SystemClock
from kafkamock.broker.cluster import INTERNAL_TOPICS, TRANSACTION_STATE_TOPIC, Cluster, Partition, Topic
from kafkamock.broker.config import BrokerConfig, topic_config_value
from kafkamock.broker.connections import Connections
from kafkamock.broker.control import Control
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.faults import Fault, Faults, LoggedRequest, RequestFaults, RequestLog
from kafkamock.broker.features import GROUP_VERSION, SHARE_VERSION, Features
from kafkamock.broker.fetch_sessions import FetchSessions
from kafkamock.broker.groups import GroupCoordinator
from kafkamock.broker.kafka_configs import ConfigError
from kafkamock.broker.kafka_releases import LATEST, RELEASES
from kafkamock.broker.node import Node
from kafkamock.broker.outcome import Close, Outcome, Respond, Wait, Waiter, as_outcome
from kafkamock.broker.quorum import Quorum
from kafkamock.broker.quotas import ClientQuotas
from kafkamock.broker.security import listeners as security_listeners
from kafkamock.broker.security.scram import ScramCredentials
from kafkamock.broker.security.session import SASL_HANDSHAKE, SaslSession, State, login_module
from kafkamock.broker.share.manager import ShareManager
from kafkamock.broker.share.sessions import ShareSessions
from kafkamock.broker.timers import NEVER, Timers, log_key
from kafkamock.broker.transactions import TransactionCoordinator
from kafkamock.codec import Message, default_registry
from kafkamock.storage import DiskStorage, LogConfig, MemoryStorage, PartitionLog, cleaner

log = logging.getLogger("kafkamock.broker")
# APIs that need a finalized feature at level 1 or more (KafkaApis' isConsumerGroupProtocolEnabled and
# isShareGroupProtocolEnabled): KIP-848 consumer groups and KIP-932 share groups.
FEATURE_GATES = {
    **{m.API_KEY: GROUP_VERSION for m in (handlers.consumer_group_heartbeat, handlers.consumer_group_describe)},
    **{m.API_KEY: SHARE_VERSION for m in (
        handlers.share_group_heartbeat, handlers.share_group_describe, handlers.share_fetch, handlers.share_acknowledge,
        handlers.describe_share_group_offsets, handlers.alter_share_group_offsets,
        handlers.delete_share_group_offsets)}}
PRODUCER_ID_BLOCK = 1000
FIRST_PRODUCER_ID = 1000


@dataclass
class ConnectionInfo:
    """What the broker knows about one client connection (for logs and per-connection state)."""

    id: int
    peer: str = "?"
    client_id: str | None = None
    software_name: str | None = None
    software_version: str | None = None
    # Security: the listener the connection came in on, its security protocol, and who the client is
    # (Kafka's KafkaPrincipal as "User:<name>"; set by TLS client authentication or SASL).
    listener: str = "PLAINTEXT"
    security_protocol: str = "PLAINTEXT"
    principal: str = "User:ANONYMOUS"
    # The SASL exchange's state on a SASL listener (None elsewhere): see security/session.py.
    sasl: SaslSession | None = field(default=None, repr=False)

    @property
    def host(self) -> str:
        """The client's address without the port, as ACLs name hosts."""
        host = self.peer.rsplit(":", 1)[0] if ":" in self.peer else self.peer
        return host.strip("[]")


@dataclass
class Request:
    api_key: int
    version: int
    correlation_id: int
    client_id: str | None
    body: Message
    connection: ConnectionInfo = field(default_factory=lambda: ConnectionInfo(0))
    node: Node | None = None                 # the node it arrived on (None: the first node)
    faults: RequestFaults | None = None      # partition-level faults the control API pushed for it
    size: int = 0                            # the request's size in bytes (what a produce quota counts)
    mute_until_ms: int = 0                   # a quota throttled it: read nothing more from its connection until then


class Broker:
    """One emulated cluster: its nodes, state and timers; ``handle`` answers a request addressed to a node."""

    def __init__(self, config: BrokerConfig | Mapping[str, object] | None = None, clock: Clock | None = None, *,
                 brokers: int = 1, storage: MemoryStorage | DiskStorage | None = None, host: str = "127.0.0.1",
                 port: int = 9092, cluster_id: str | None = None):
        if brokers < 1:
            raise ValueError("a cluster needs at least one broker")
        self.config = config if isinstance(config, BrokerConfig) else BrokerConfig(config)
        self.listeners = security_listeners.listeners(self.config, host, port)   # refuses a bad setup up front
        for listener in self.listeners:
            if listener.sasl:
                for mechanism in security_listeners.enabled_mechanisms(self.config, listener.name):
                    login_module(self.config, listener.name, mechanism)
        self.clock = clock or SystemClock()
        self.scram_credentials = ScramCredentials(lambda: self.metadata_changed())
        if storage is None:
            storage = DiskStorage(self.config["log.dirs"]) if self.config["log.dirs"] else MemoryStorage()
        self.storage = storage
        first = self.config["node.id"]
        nodes = [Node(first + k, host, port + k if port else 0, self.config.node_config(), rack=self.config["broker.rack"])
                 for k in range(brokers)]
        for k, node in enumerate(nodes):
            node.fetch_sessions = FetchSessions(
                first_id=(k + 1) << 24,
                max_sessions=lambda node=node: node.config["max.incremental.fetch.session.cache.slots"])
            # mypy cannot infer a lambda whose default argument binds the loop variable (python/mypy#15459)
            node.share_sessions = ShareSessions(
                lambda node=node: node.config["group.share.max.share.sessions"])  # type: ignore[misc]
        self.cluster = Cluster(nodes, cluster_id, open_log=self._open_log, changed=self.metadata_changed)
        self.quorum = Quorum(self.cluster, self.now_ms)
        self.registry = default_registry()
        self.timers = Timers()
        self.faults = Faults()
        self.requests = RequestLog(self.config["kafkamock.request.log.max.entries"])
        self.node_listeners: list[Callable[[str, Node], None]] = []   # the shell: "stopped", "started", "drop"
        self.control = Control(self)
        self._supported: dict[int, tuple[int, int]] | None = None
        self._topic_config_cache: dict[tuple, Any] = {}
        self._next_producer_id = FIRST_PRODUCER_ID
        self._producer_id_block_end = FIRST_PRODUCER_ID
        self._restoring = False
        self.acls = AclStore(changed=self.metadata_changed)   # cluster-wide, persisted with the metadata
        self.release = RELEASES[self.config["kafkamock.kafka.version"]]
        self.features = Features(self._transaction_version(), changed=self.metadata_changed,
                                 release=None if self.release.line == LATEST else self.release)
        self.groups = GroupCoordinator(self)
        self.transactions = TransactionCoordinator(self)
        self.share = ShareManager(self, group_config=self.groups.configs.value)
        self.quotas = ClientQuotas(self)
        self.connections = Connections(self)
        self._restore()
        self.groups.replay()
        self.transactions.replay()
        self._schedule()

    @property
    def node_id(self) -> int:
        """The first node's id (the whole cluster, when it has one node)."""
        return next(iter(self.cluster.nodes))

    @property
    def nodes(self) -> list[Node]:
        return list(self.cluster.nodes.values())

    def first_node(self) -> Node:
        return next(iter(self.cluster.nodes.values()))

    # -- wiring for the I/O shell --------------------------------------------------------------------------------

    def set_address(self, node_id: int, host: str, port: int, listener: str | None = None) -> None:
        """The address node ``node_id`` advertises on ``listener`` (its bound one, unless ``advertised.listeners``
        says); the first listener's is also the node's own ``host``/``port`` (logs, the control API)."""
        node = self.cluster.nodes[node_id]
        name = listener or self.listeners[0].name
        node.endpoints[name] = (host, port)
        if name == self.listeners[0].name:
            node.host, node.port = host, port

    def new_connection(self, conn_id: int, peer: str, listener_name: str | None = None) -> ConnectionInfo:
        """What the core keeps for a new connection on a listener (its SASL session on a SASL listener)."""
        listener = next((x for x in self.listeners if x.name == listener_name), self.listeners[0])
        info = ConnectionInfo(conn_id, peer, listener=listener.name, security_protocol=listener.security_protocol)
        if listener.sasl:
            info.sasl = SaslSession(listener.name, security_listeners.enabled_mechanisms(self.config, listener.name))
        return info

    def sasl_raw_token(self, connection: ConnectionInfo, node: Node, token: bytes) -> Outcome:
        """A raw SASL token (after SaslHandshake v0, without Kafka headers): the challenge to send back raw,
        nothing, or close (a failure: v0 has no way to tell the client why)."""
        from kafkamock.broker.handlers.sasl_authenticate import evaluate

        session = connection.sasl
        if session is None or session.state is not State.AUTHENTICATE_RAW:
            return Close("raw SASL token outside a SaslHandshake v0 exchange")
        outcome = evaluate(self, connection, node, token)
        if not isinstance(outcome, tuple):
            return Close(outcome.reason)
        return Respond(outcome[0])          # even empty: Kafka sends every non-null challenge

    def now_ms(self) -> int:
        return self.clock.now_ms()

    def next_deadline(self) -> int:
        """When ``tick`` must run next, on the broker's clock (NEVER: nothing is scheduled)."""
        return self.timers.next_deadline()

    def tick(self) -> None:
        """Answer the waits whose deadline has come and run the periodic work that is due."""
        self.timers.tick(self.now_ms())

    def notify(self, key) -> None:
        self.timers.notify(key)

    def appended(self, partition: Partition) -> None:
        """A partition's log grew: fetches waiting on it look again."""
        self.timers.notify(log_key(partition.topic, partition.index))

    def cancel(self, waiter: Waiter) -> None:
        self.timers.cancel(waiter)

    def close(self) -> None:
        """A clean stop: flush and checkpoint every log, with a producer snapshot each (the disk storage writes
        its clean-shutdown marker)."""
        self._snapshot_producers(self.now_ms())
        self.storage.close([p.log for p in self.cluster.partitions()], self.now_ms())

    def _snapshot_producers(self, _now: int) -> None:
        """Producer snapshot files at the log end of every partition with producer state (Kafka writes them on
        roll and at shutdown; here also with the periodic checkpoints), so the state outlives its batches."""
        for partition in self.cluster.partitions():
            producers = partition.producers
            if producers.changed and partition.log.store.durable:
                partition.log.store.save_producer_snapshot(partition.log.log_end_offset, producers.snapshot())
                producers.changed = False

    # -- requests ------------------------------------------------------------------------------------------------

    def _transaction_version(self) -> int:
        """The initial ``transaction.version``: kafkamock.transaction.version, at most what the emulated release
        supports (a value set above it is refused)."""
        level = self.config["kafkamock.transaction.version"]
        if self.release.line == LATEST:
            return level
        feature = self.release.features.get("transaction.version")
        highest = feature.supported[1] if feature else 0
        if level > highest and "kafkamock.transaction.version" in self.config.static:
            raise ConfigError(f"kafkamock.transaction.version={level} is above what Kafka {self.release.line} "
                              f"supports (transaction.version up to {highest})")
        return min(level, feature.finalized if feature else 0)

    def supported_versions(self) -> dict[int, tuple[int, int]]:
        """{api_key: (min, max)} of the APIs and versions this broker serves (never advertise the others).

        Kafka 4.3's ranges; with ``kafkamock.legacy.protocol.enable`` (or an emulated release before 4.0) also the
        removed versions the codec still knows (Produce v0-2, Fetch v0-3); with ``kafkamock.kafka.version`` the
        emulated release's ranges, cut to those (kafka_releases.py)."""
        if self._supported is None:
            served = self.implemented_versions()
            self._supported = served if self.release.line == LATEST else self.release.cut(served)
        return self._supported

    def implemented_versions(self) -> dict[int, tuple[int, int]]:
        """Every version kafkamock implements, whatever release it presents itself as: Kafka 4.3's, and with the
        legacy protocol (switched on, or implied by a release before 4.0) the removed ones the codec knows."""
        schema_versions = self.registry.api_versions(include_unstable=False)
        legacy = self.config["kafkamock.legacy.protocol.enable"] or self.release.before_4_0
        served = {}
        for key in sorted(handlers.BY_KEY):
            if key in schema_versions:
                low, high = schema_versions[key]
                if legacy and not self.registry.requests[key].legacy_versions.empty:
                    low = self.registry.requests[key].legacy_versions.lowest
                served[key] = (low, high)
        return served

    def advertised_versions(self) -> dict[int, tuple[int, int]]:
        """What ApiVersions lists: the served versions, except that Produce starts at v0 as in Kafka 4.x.

        Kafka 4.0 removed Produce v0-2 yet still lists them, because librdkafka checks compression support
        against a Produce range starting at 0 and would otherwise send every batch uncompressed (KAFKA-18659,
        librdkafka#4956). A request at those versions is refused all the same (the connection closes) unless
        the legacy protocol is on."""
        advertised = dict(self.supported_versions())
        if not self.groups.consumer.enabled():
            for module in (handlers.consumer_group_heartbeat, handlers.consumer_group_describe):
                advertised.pop(module.API_KEY, None)
        if handlers.produce.API_KEY in advertised and not self.release.before_4_0:
            advertised[handlers.produce.API_KEY] = (0, advertised[handlers.produce.API_KEY][1])
        return advertised

    def handle(self, request: Request) -> Outcome:
        """The outcome of a request: a response, no response (acks=0), a wait, or close-the-connection."""
        module = handlers.BY_KEY.get(request.api_key)
        if module is None:  # the server checks first; this is the core's own guard
            raise ValueError(f"unsupported API key {request.api_key}")
        node = request.node
        if node is None:
            node = request.node = self.first_node()
        if not node.up:
            return Close(f"node {node.node_id} is stopped")
        session = request.connection.sasl
        if session is not None and not self._admit(session, request):
            name = self.registry.requests[request.api_key].api_name
            if session.complete:
                return Close(f"SASL session of {request.connection.principal} expired at {session.expiry_ms} "
                             f"and {name} is not a re-authentication (KIP-368)")
            return Close(f"Unexpected Kafka request of type {name} during SASL "
                         f"{'handshake' if session.state in (State.HANDSHAKE_OR_VERSIONS, State.HANDSHAKE) else 'authentication'}"
                         f" (state {session.state.value})")
        self.requests.add(LoggedRequest(
            self.now_ms(), node.node_id, request.api_key, self.registry.requests[request.api_key].api_name,
            request.version, request.correlation_id, request.client_id, request.connection.id,
            request.connection.peer, request.connection.listener, request.connection.principal))
        faults = self.faults.matching(request.api_key, node.node_id)
        if faults:
            return self.quotas.apply(request, self._faulted(module, request, faults))
        return self.quotas.apply(request, self._run(module, request))

    def _admit(self, session: SaslSession, request: Request) -> bool:
        """Whether a request on a SASL connection may proceed (SocketServer's and SaslServerAuthenticator's
        rules): before authentication only what the state allows; after it, anything until the session expires,
        then only a SaslHandshake that starts a re-authentication."""
        if not session.complete:
            if not session.allows(request.api_key):
                return False
            if request.api_key == handlers.api_versions.API_KEY:
                session.step("api_versions")
            return True
        now = self.now_ms()
        if request.api_key == SASL_HANDSHAKE and session.begin_reauthentication(now):
            return True
        return not session.expired(now)

    def _run(self, module, request: Request) -> Outcome:
        gate = FEATURE_GATES.get(request.api_key)
        if gate is not None and self.features.level(gate) < 1:
            # Kafka answers these APIs UNSUPPORTED_VERSION while their feature is finalized below level 1.
            return Respond(self.error_response(module, request, ErrorCode.UNSUPPORTED_VERSION))
        try:
            return as_outcome(module.handle(self, request))
        except AuthorizationFailed as exc:
            return Respond(self.error_response(module, request, exc.code, exc.message))
        finally:
            if request.faults is not None:
                request.faults.settle()

    def _faulted(self, module, request: Request, faults: list[Fault]) -> Outcome:
        """Apply the faults a request matched: partition-level ones where its partitions are looked up; the oldest
        whole-request one (spent at once) as latency first, then a closed connection, then its error code, on
        every partition of a partition API, else as the response's top-level error."""
        partitioned = getattr(module, "PARTITIONED", False)
        by_partition = [f for f in faults if f.partition_level]
        whole = [f for f in faults if not f.partition_level]
        if not whole:
            request.faults = RequestFaults(by_partition, self.faults)
            return self._run(module, request)
        fault = whole[0]
        self.faults.spend(fault)

        def act() -> Outcome:
            if fault.close_connection:
                return Close(f"the control API closes this connection (fault {fault.id})")
            if fault.error_code and not partitioned:
                return Respond(self.error_response(module, request, ErrorCode(fault.error_code)))
            extra = [fault] if fault.error_code else []
            request.faults = RequestFaults(extra + by_partition, self.faults, spent={fault.id})
            return self._run(module, request)

        if fault.latency_ms:
            return Wait(self.wait((), self.now_ms() + fault.latency_ms, lambda final: act() if final else None))
        return act()

    def unencodable(self, request: Request) -> dict:
        """What Kafka answers when a request's response cannot be serialized (an error message quoting a client's
        32767-byte string): the request's error response, UNKNOWN_SERVER_ERROR."""
        return self.error_response(handlers.BY_KEY[request.api_key], request, ErrorCode.UNKNOWN_SERVER_ERROR)

    def error_response(self, module, request: Request, code: ErrorCode, message: str | None = None) -> dict:
        """A whole-request error answer: the handler's own ``error_response``, else the response's top-level
        ErrorCode (every other field at its default). ``message`` goes where the response has room for it."""
        if hasattr(module, "error_response"):
            if message is not None and "message" in inspect.signature(module.error_response).parameters:
                return module.error_response(self, request, code, message)
            return module.error_response(self, request, code)
        spec = self.registry.responses[request.api_key]
        present = {f.name for f in spec.fields if f.present(request.version)}
        if "ErrorCode" not in present:
            raise ValueError(f"{spec.name} v{request.version} has no top-level ErrorCode")
        body: dict = {"throttle_time_ms": 0, "error_code": code}
        if message is not None and "ErrorMessage" in present:
            body["error_message"] = message
        return body

    def wait(self, keys: tuple, deadline_ms: int, check: Callable[[bool], Any]) -> Waiter:
        """Register a waiter (see ``outcome.Waiter``); a handler returns it to make its request wait."""
        waiter = Waiter(keys, deadline_ms, check)
        self.timers.add(waiter)
        return waiter

    # -- authorization (the rules in authorizer.py; which check each API makes, in its handler) ---------------

    @property
    def authorizer_enabled(self) -> bool:
        """``authorizer.class.name`` names Kafka's StandardAuthorizer (or the old AclAuthorizer)."""
        return bool(self.config["authorizer.class.name"])

    def authorizer_settings(self) -> authorizer.Settings:
        return authorizer.Settings(authorizer.parse_super_users(self.config["super.users"]),
                                   self.config["allow.everyone.if.no.acl.found"])

    def authorize(self, request: Request, operation: AclOperation, resource_type: ResourceType,
                  name: str = CLUSTER_NAME, *, log_denied: bool = True) -> bool:
        """May the request's principal, from its host, do ``operation`` on the resource? Always, with no
        authorizer (Kafka's AuthHelper.authorize). ``log_denied=False`` for checks that filter rather than
        refuse (Kafka's Action.logIfDenied)."""
        if not self.authorizer_enabled:
            return True
        conn = request.connection
        allowed = authorizer.authorize(self.acls.of_type(resource_type), self.authorizer_settings(),
                                       conn.principal, conn.host, operation, resource_type, name)
        if not allowed and log_denied:
            log.info("Principal = %s is Denied operation = %s from host = %s on resource = %s:LITERAL:%s "
                     "for request = %s", conn.principal, operation.name, conn.host, resource_type.name, name,
                     self.registry.requests[request.api_key].api_name)
        return allowed

    def authorized(self, request: Request, operation: AclOperation, resource_type: ResourceType,
                   names, *, log_denied: bool = True) -> set[str]:
        """The batch form: which of ``names`` the principal may do ``operation`` on (filterByAuthorized)."""
        return {name for name in set(names)
                if self.authorize(request, operation, resource_type, name, log_denied=log_denied)}

    def authorize_by_resource_type(self, request: Request, operation: AclOperation,
                                   resource_type: ResourceType) -> bool:
        """May the principal do ``operation`` on some resource of the type (Authorizer.authorizeByResourceType)?"""
        if not self.authorizer_enabled:
            return True
        conn = request.connection
        return authorizer.authorize_by_resource_type(self.acls.of_type(resource_type), self.authorizer_settings(),
                                                     conn.principal, conn.host, operation, resource_type)

    def require(self, request: Request, operation: AclOperation, resource_type: ResourceType,
                name: str = CLUSTER_NAME) -> None:
        """Refuse the whole request unless authorized: the handler's error response with the resource type's
        *_AUTHORIZATION_FAILED code (Kafka's ``getErrorResponse`` of that exception)."""
        if not self.authorize(request, operation, resource_type, name):
            raise AuthorizationFailed(AUTHORIZATION_FAILED[resource_type])

    def require_cluster(self, request: Request, operation: AclOperation) -> None:
        """Kafka's AuthHelper.authorizeClusterOperation: refuse the whole request with CLUSTER_AUTHORIZATION_FAILED
        and the message naming the request that Kafka's ClusterAuthorizationException carries."""
        if not self.authorize(request, operation, ResourceType.CLUSTER):
            conn = request.connection
            node = request.node if request.node is not None else self.first_node()
            host, port = node.address(conn.listener)
            described = (f"Request(processor=0, connectionId={host}:{port}-{conn.peer}-0-{conn.id}, "
                         f"session=Session({conn.principal},/{conn.host}), listenerName=ListenerName("
                         f"{conn.listener}), securityProtocol={conn.security_protocol}, buffer=null, "
                         f"envelope=None)")
            raise AuthorizationFailed(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, f"Request {described} is not authorized.")

    def authorized_operations(self, request: Request, resource_type: ResourceType, name: str = CLUSTER_NAME
                              ) -> int:
        """Kafka's authorized-operations bit field of the resource for the request's principal."""
        if not self.authorizer_enabled:
            return authorizer.all_operations(resource_type)
        conn = request.connection
        return authorizer.authorized_operations(self.acls.of_type(resource_type), self.authorizer_settings(),
                                                conn.principal, conn.host, resource_type, name)

    # -- shared helpers for handlers -----------------------------------------------------------------------------

    def lead(self, request: Request, topic: Topic | None, index: int, current_leader_epoch: int = -1, *,
             missing: ErrorCode = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) -> Partition:
        """The partition a request may act on (``Cluster.lead``), after the faults pushed for it."""
        if request.faults is not None and topic is not None:
            code = request.faults.error_for(topic.name, index)
            if code:
                raise KafkaError(ErrorCode(code), "injected by the control API")
        node_id = request.node.node_id if request.node is not None else self.node_id
        return self.cluster.lead(node_id, topic, index, current_leader_epoch, missing=missing)

    def node_config(self, request: Request) -> BrokerConfig:
        return request.node.config if request.node is not None else self.first_node().config

    def topic_config(self, topic: Topic, name: str, node: Node | None = None) -> Any:
        """A topic config's value: the topic's own, else its broker synonym on ``node`` (default: the first)."""
        node = node or self.first_node()
        key = (topic.topic_id, name, node.node_id)
        value = self._topic_config_cache.get(key, self._topic_config_cache)
        if value is self._topic_config_cache:
            value = self._topic_config_cache[key] = topic_config_value(name, topic.configs, node.config)[0]
        return value

    def configs_changed(self) -> None:
        """A topic or broker config changed: caches go, logs take their new settings, timers their new intervals."""
        self._topic_config_cache.clear()
        for topic in self.cluster.topics.values():
            for partition in topic.partitions:
                partition.log.config = self.log_config(topic, partition)
        self.timers.refresh(self.now_ms())
        self.metadata_changed()

    def log_config(self, topic: Topic, partition: Partition | None = None) -> LogConfig:
        """The settings a partition's log obeys, from the topic's configs and its leader's broker configs."""
        node = self.cluster.nodes.get(partition.leader_id) if partition is not None else None

        def get(name: str) -> Any:
            return self.topic_config(topic, name, node)

        policy = str(get("cleanup.policy")).split(",")
        # internal.segment.bytes, Kafka's test-only override, wins over segment.bytes (whose minimum is 1 MiB).
        segment_bytes = get("internal.segment.bytes")
        return LogConfig(
            segment_bytes=segment_bytes if segment_bytes is not None else get("segment.bytes"), segment_ms=get("segment.ms"),
            segment_jitter_ms=get("segment.jitter.ms"), index_interval_bytes=get("index.interval.bytes"),
            segment_index_bytes=get("segment.index.bytes"), flush_messages=get("flush.messages"),
            flush_ms=get("flush.ms"), retention_ms=get("retention.ms"), retention_bytes=get("retention.bytes"),
            delete="delete" in policy, compact="compact" in policy,
            delete_retention_ms=get("delete.retention.ms"), min_compaction_lag_ms=get("min.compaction.lag.ms"),
            max_compaction_lag_ms=get("max.compaction.lag.ms"),
            min_cleanable_dirty_ratio=get("min.cleanable.dirty.ratio"),
            file_delete_delay_ms=get("file.delete.delay.ms"))

    def _open_log(self, topic: Topic, index: int) -> PartitionLog:
        return self.storage.open_log(topic.name, topic.topic_id, index, self.log_config(topic), self.now_ms())

    def append_internal(self, partition: Partition, data: bytes | bytearray, *, notify: bool = True
                        ) -> tuple[int, int]:
        """Append a batch the broker itself writes (a transaction marker, a share-state control batch, a record of
        an internal topic) through the same log interface as produced batches, waking the fetches waiting on the
        partition (unless the caller does once it has updated what they read). Returns its (base offset, last
        offset)."""
        from kafkamock.records import split_batches

        buffer = bytearray(data)
        (batch,), _ = split_batches(buffer)
        plog = partition.log
        base_offset = plog.log_end_offset
        batch.set_base_offset(base_offset)
        batch.set_partition_leader_epoch(partition.leader_epoch)
        last_offset = base_offset + batch.last_offset_delta
        plog.append(buffer, base_offset, last_offset, batch.max_timestamp, self.now_ms(), partition.leader_epoch,
                    batch.record_count)
        if notify:
            self.appended(partition)
        return base_offset, last_offset

    def next_producer_id(self) -> int:
        """A new producer id; ids are handed out in blocks whose end is persisted first, so none repeats after
        a restart (Kafka's ProducerIdsRecord)."""
        if self._next_producer_id >= self._producer_id_block_end:
            self._producer_id_block_end = self._next_producer_id + PRODUCER_ID_BLOCK
            self.metadata_changed()
        pid = self._next_producer_id
        self._next_producer_id += 1
        return pid

    def delete_topic(self, topic: Topic) -> None:
        """DeleteTopics: the topic and its logs go, and the coordinators forget what they kept of it (an internal
        topic's deletion takes every group or transaction its log held, as Kafka's coordinators resign)."""
        self.cluster.delete_topic(topic)
        self.groups.topic_deleted(topic.name)
        if topic.name == TRANSACTION_STATE_TOPIC:
            self.transactions.unload()

    def internal_topic(self, name: str) -> Topic:
        """``__consumer_offsets`` or ``__transaction_state``, created on first use as Kafka creates them (compacted,
        ``offsets.topic.*`` / ``transaction.state.log.*`` settings; replication capped at the number of nodes)."""
        topic = self.cluster.topics.get(name)
        if topic is not None:
            return topic
        prefix = "offsets.topic" if name == "__consumer_offsets" else "transaction.state.log"
        config = self.config
        rf = min(config[f"{prefix}.replication.factor"], len(self.cluster.live_nodes()) or 1)
        return self.cluster.create_topic(name, config[f"{prefix}.num.partitions"], rf, {
            "cleanup.policy": "compact", "compression.type": "producer",
            "segment.bytes": config[f"{prefix}.segment.bytes"]}, internal=True)

    # -- nodes (the control API) ---------------------------------------------------------------------------------

    def stop_node(self, node_id: int) -> None:
        moved = self.cluster.stop_node(node_id)
        self.quorum.node_stopped(node_id)
        node = self.cluster.nodes[node_id]
        for listener in self.node_listeners:
            listener("stopped", node)
        self._leaders_moved(moved)
        log.info("node %d stopped; %d partition leadership(s) moved", node_id, len(moved))

    def start_node(self, node_id: int) -> None:
        moved = self.cluster.start_node(node_id, rebalance=self.config["auto.leader.rebalance.enable"])
        self.quorum.node_started(node_id)
        node = self.cluster.nodes[node_id]
        for listener in self.node_listeners:
            listener("started", node)
        self._leaders_moved(moved)
        log.info("node %d started; %d partition leadership(s) moved to it", node_id, len(moved))

    def move_leader(self, topic: str, index: int, node_id: int) -> Partition:
        partition = self.cluster.partition(topic, index)
        self.cluster.move_leader(partition, node_id)
        self._leaders_moved([partition])
        return partition

    # -- the controller's partition changes (ElectLeaders, AlterPartitionReassignments, UnregisterBroker) ------

    def elect_leader(self, partition: Partition, node_id: int) -> None:
        self.cluster.elect(partition, node_id)
        self._leaders_moved([partition])

    def reassign(self, partition: Partition, target: list[int]) -> None:
        if self.cluster.reassign(partition, target):
            self._leaders_moved([partition])

    def cancel_reassignment(self, partition: Partition, unclean_allowed: bool) -> None:
        if self.cluster.cancel_reassignment(partition, unclean_allowed):
            self._leaders_moved([partition])

    def unregister_broker(self, node_id: int) -> None:
        self._leaders_moved(self.cluster.unregister(node_id))
        log.info("node %d unregistered", node_id)

    def drop_connections(self, node_id: int | None = None) -> None:
        for node in self.nodes:
            if node_id is None or node.node_id == node_id:
                for listener in self.node_listeners:
                    listener("drop", node)

    def _leaders_moved(self, partitions: list[Partition]) -> None:
        for partition in partitions:
            topic = self.cluster.topics.get(partition.topic)
            if topic is not None:
                partition.log.config = self.log_config(topic, partition)
            self.appended(partition)   # fetches waiting on it answer now (with NOT_LEADER_OR_FOLLOWER)
        self._topic_config_cache.clear()

    # -- persistence ---------------------------------------------------------------------------------------------

    def metadata_changed(self) -> None:
        """Topics, partitions, leaders or configs changed: persist them (on disk), and let timers whose interval
        depends on them (a new topic's flush.ms) take the new one."""
        if self._restoring:
            return
        self.quorum.appended()
        self.timers.refresh(self.now_ms())
        snapshot = self.cluster.snapshot()
        snapshot["producer_id_block_end"] = self._producer_id_block_end
        snapshot["group_configs"] = self.groups.configs.snapshot()
        snapshot["client_quotas"] = self.quotas.snapshot()
        snapshot["acls"] = self.acls.snapshot()
        snapshot["scram_credentials"] = self.scram_credentials.snapshot()
        if self.features.overrides:
            snapshot["features"] = self.features.snapshot()
        snapshot["broker_configs"] = {"": self.config.dynamic_layer(cluster_default=True)}
        for node in self.nodes:
            snapshot["broker_configs"][str(node.node_id)] = node.config.dynamic_layer(cluster_default=False)
        self.storage.save_metadata(snapshot)

    def _restore(self) -> None:
        """Bring back what the storage holds: topics, their logs (recovered), producer state, configs, ids."""
        snapshot = self.storage.load_metadata()
        if snapshot is None:
            # A new cluster: Kafka 4.3's controller writes a cluster-level min.insync.replicas when it activates
            # (eligible leader replicas are on), taken from its own setting.
            self.config.replace_dynamic({"min.insync.replicas": self.config["min.insync.replicas"]},
                                        cluster_default=True)
            self.metadata_changed()
            return
        self._restoring = True
        try:
            configs = snapshot.get("broker_configs", {})
            self.config.replace_dynamic(configs.get("", {}), cluster_default=True)
            for node in self.nodes:
                node.config.replace_dynamic(configs.get(str(node.node_id), {}), cluster_default=False)
            self.cluster.restore(snapshot)
            self.storage.remove_strays({(t.name, p.index) for t in self.cluster.topics.values() for p in t.partitions})
            self.groups.configs.restore(snapshot.get("group_configs", {}))
            self.quotas.restore(snapshot.get("client_quotas", []))
            self.acls.restore(snapshot.get("acls", []))
            self.scram_credentials.restore(snapshot.get("scram_credentials", []))
            self.features.restore(snapshot.get("features"))
            self._next_producer_id = self._producer_id_block_end = snapshot.get("producer_id_block_end",
                                                                                 FIRST_PRODUCER_ID)
            for topic in self.cluster.topics.values():
                for partition in topic.partitions:
                    partition.log.config = self.log_config(topic, partition)
                    partition.log.assign_epoch(partition.leader_epoch, partition.log.log_end_offset)
                    producer_snapshot = partition.log.store.load_producer_snapshot(partition.log.log_end_offset)
                    if producer_snapshot is not None:
                        partition.producers.load(producer_snapshot[1])
                    for base_offset, header in partition.log.headers():
                        partition.producers.replay(header, base_offset, _marker(partition.log, base_offset, header))
                    partition.producers.changed = False
                    self.share.restore(topic, partition)
        finally:
            self._restoring = False
        self.metadata_changed()
        log.info("restored %d topic(s) from %s", len(self.cluster.topics), getattr(self.storage, "root", "memory"))

    # -- periodic work -------------------------------------------------------------------------------------------

    def _schedule(self) -> None:
        now = self.now_ms()
        config = self.config
        first = now + config["log.initial.task.delay.ms"]
        self.timers.every("log-retention", lambda: config["log.retention.check.interval.ms"], self._retention,
                          first_ms=first)
        self.timers.every("log-flusher", self._flush_interval, self._flush,
                          first_ms=now + min(self._flush_interval(), NEVER - now))
        self.timers.every("log-cleaner", lambda: config["log.cleaner.backoff.ms"] if config["log.cleaner.enable"]
                          else NEVER, self._clean, first_ms=now + config["log.cleaner.backoff.ms"])
        self.timers.every("checkpoints", lambda: config["log.flush.offset.checkpoint.interval.ms"] or NEVER,
                          self._checkpoint, first_ms=first)
        self.timers.every("offsets-cleanup", lambda: config["offsets.retention.check.interval.ms"],
                          self.groups.expire_offsets, first_ms=now + config["offsets.retention.check.interval.ms"])
        for name, interval, task in (
                ("transaction-abort", "transaction.abort.timed.out.transaction.cleanup.interval.ms",
                 self.transactions.abort_timed_out),
                ("transactional-id-expiration", "transaction.remove.expired.transaction.cleanup.interval.ms",
                 self.transactions.expire_transactional_ids),
                ("producer-id-expiration", "producer.id.expiration.check.interval.ms", self._expire_producers)):
            # mypy cannot infer a lambda whose default argument binds the loop variable (python/mypy#15459)
            self.timers.every(name, lambda key=interval: config[key], task,  # type: ignore[misc]
                              first_ms=now + config[interval])

    def _retention(self, now: int) -> None:
        for topic in list(self.cluster.topics.values()):
            for partition in topic.partitions:
                before = partition.log.log_start_offset
                if partition.log.delete_old_segments(now):
                    log.info("retention deleted segments of %s-%d; log start offset %d -> %d", topic.name,
                             partition.index, before, partition.log.log_start_offset)
                    self.share.log_start_moved(partition, topic)
                partition.log.store.maintain(now)

    def _expire_producers(self, now: int) -> None:
        """``producer.id.expiration.ms``: forget idle producers (none with an open transaction), per partition."""
        expiration = self.config["producer.id.expiration.ms"]
        removed = sum(p.producers.expire(now, expiration, p.log.log_start_offset) for p in self.cluster.partitions())
        if removed:
            log.info("producer state of %d idle producer(s) expired", removed)

    def _flush_interval(self) -> int:
        """How often the flusher looks: ``log.flush.scheduler.interval.ms``, or sooner when a topic's ``flush.ms`` asks
        for it (in Kafka a topic's flush.ms does nothing until the scheduler interval is lowered too; here an
        accepted config takes effect)."""
        wanted = [p.log.config.flush_ms for p in self.cluster.partitions() if p.log.config.flush_ms < NEVER]
        return max(1, min([self.config["log.flush.scheduler.interval.ms"], *wanted]))

    def _flush(self, now: int) -> None:
        for partition in self.cluster.partitions():
            partition.log.maybe_flush(now)

    def _checkpoint(self, now: int) -> None:
        """``log.flush.offset.checkpoint.interval.ms``: the storage's checkpoint files, then producer snapshots."""
        self.storage.write_checkpoints()
        self._snapshot_producers(now)

    def _clean(self, now: int) -> None:
        if not self.config["log.cleaner.enable"]:
            return
        for topic in list(self.cluster.topics.values()):
            for partition in topic.partitions:
                if partition.log.config.compact:
                    result = cleaner.clean(partition.log, now)
                    if result is not None and (result.records_removed or result.segments):
                        log.info("compacted %s-%d: %d record(s) and %d tombstone(s) removed up to offset %d",
                                 topic.name, partition.index, result.records_removed, result.tombstones_removed,
                                 result.end_offset)


def _marker(plog: PartitionLog, base_offset: int, header) -> tuple[bool, int] | None:
    """(commit, coordinator epoch) of the transaction marker a stored control batch holds, else None."""
    from kafkamock.records import decode_batches, decode_control
    from kafkamock.records.layout import CONTROL_BIT, HEADER

    if not HEADER.unpack_from(header, 0)[5] & CONTROL_BIT:
        return None
    for stored in plog.batches(base_offset, base_offset + 1):
        try:
            for batch in decode_batches(stored.data):
                for rec in batch.records:
                    kind, value = decode_control(rec.key, rec.value)
                    if kind in ("COMMIT", "ABORT"):
                        return kind == "COMMIT", value.coordinator_epoch
        except Exception as exc:  # noqa: BLE001 - a corrupt control batch is skipped, as recovery would
            log.warning("control batch at offset %d unreadable: %s", base_offset, exc)
        break
    return None


class AuthorizationFailed(KafkaError):
    """A whole request refused by the authorizer; ``Broker._run`` answers it with the handler's error response."""


AUTHORIZATION_FAILED = {
    ResourceType.TOPIC: ErrorCode.TOPIC_AUTHORIZATION_FAILED, ResourceType.GROUP: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    ResourceType.CLUSTER: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    ResourceType.TRANSACTIONAL_ID: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
}


def error_response_code(exc: BaseException) -> ErrorCode:
    code = getattr(exc, "code", None)
    return code if isinstance(code, ErrorCode) else ErrorCode.UNKNOWN_SERVER_ERROR


__all__ = ["AuthorizationFailed", "Broker", "ConnectionInfo", "INTERNAL_TOPICS", "Request", "log_key"]
