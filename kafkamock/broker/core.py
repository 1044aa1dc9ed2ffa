"""The broker core: a decoded request and the time in, an outcome and the next deadline out. No sockets, no files,
no wall clock of its own (docs/architecture.md; h11's style).

A newcomer follows one request like this: ``server/connection.py`` reads a frame on the listener of one node and
decodes it with the codec; ``Cluster.handle`` (here) logs it, applies any fault the control API pushed, and hands it
to the handler module for its API (``handlers/<api>.py``); the handler looks partitions up through
``Cluster.lead`` (``cluster.py``), changes the state (``cluster.py``, the partition's log in ``kafkamock.storage``)
and returns the response body, which the connection encodes and sends. A request that must wait (a long-poll
Fetch) returns a ``Waiter``; the core answers it when what it waits on changes (``notify``) or when ``tick``
reaches its deadline.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Mapping
from typing import Any, TypeVar

from kafkamock.broker import handlers
from kafkamock.broker.acls import AclStore
from kafkamock.broker.auth_helper import AuthHelper, AuthorizationFailed
from kafkamock.broker.clock import Clock, SystemClock
from kafkamock.broker.cluster import INTERNAL_TOPICS, TRANSACTION_STATE_TOPIC, ClusterMetadata, Partition, Topic
from kafkamock.broker.config import BrokerConfig, topic_config_value
from kafkamock.broker.connections import Connections
from kafkamock.broker.control import Control
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.faults import Fault, Faults, LoggedRequest, RequestFaults, RequestLog
from kafkamock.broker.features import GROUP_VERSION, SHARE_VERSION, TRANSACTION_VERSION, Features
from kafkamock.broker.fetch_sessions import FetchSessions
from kafkamock.broker.groups import GroupCoordinator
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.broker.housekeeping import Housekeeping
from kafkamock.broker.kafka_configs import ConfigError
from kafkamock.broker.kafka_releases import LATEST, RELEASES
from kafkamock.broker.node import Node
from kafkamock.broker.outcome import Close, Outcome, Respond, Wait, Waiter, as_outcome
from kafkamock.broker.persistence import MetadataPersistence, recover_producer_state
from kafkamock.broker.producer_ids import ProducerIds
from kafkamock.broker.quorum import Quorum
from kafkamock.broker.quotas import ClientQuotas
from kafkamock.broker.request import ConnectionInfo, Request
from kafkamock.broker.security import listeners as security_listeners
from kafkamock.broker.security.scram import ScramCredentials
from kafkamock.broker.security.session import SASL_HANDSHAKE, SaslSession, State, login_module
from kafkamock.broker.share.manager import ShareManager
from kafkamock.broker.share.sessions import ShareSessions
from kafkamock.broker.timers import Timers, log_key
from kafkamock.broker.transactions import TransactionCoordinator
from kafkamock.codec import default_registry
from kafkamock.codec.message import Struct
from kafkamock.storage import DiskStorage, LogConfig, MemoryStorage, PartitionLog

T = TypeVar("T")
log = logging.getLogger("kafkamock.broker")
# APIs that need a finalized feature at level 1 or more (KafkaApis' isConsumerGroupProtocolEnabled and
# isShareGroupProtocolEnabled): KIP-848 consumer groups and KIP-932 share groups.
FEATURE_GATES = {
    **{m.API_KEY: GROUP_VERSION for m in (handlers.consumer_group_heartbeat, handlers.consumer_group_describe)},
    **{m.API_KEY: SHARE_VERSION for m in (
        handlers.share_group_heartbeat, handlers.share_group_describe, handlers.share_fetch, handlers.share_acknowledge,
        handlers.describe_share_group_offsets, handlers.alter_share_group_offsets,
        handlers.delete_share_group_offsets)}}


class Cluster:
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
            storage = (DiskStorage(self.config["log.dirs"]) if self.config["log.dirs"] else
                       MemoryStorage(keeps_metadata=False))
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
        # Set last, once every part it saves exists; the parts report their changes from the start.
        self._persistence: MetadataPersistence | None = None
        # While a request is handled, its metadata changes are counted here and saved once when it is done (None:
        # no request in hand, a change is saved at once).
        self._held_changes: int | None = None
        self.metadata = ClusterMetadata(nodes, cluster_id, open_log=self._open_log, changed=self.metadata_changed)
        self.quorum = Quorum(self.metadata, self.now_ms)
        self.registry = default_registry()
        self.timers = Timers()
        self.faults = Faults()
        self.requests = RequestLog(self.config["kafkamock.request.log.max.entries"])
        self.node_listeners: list[Callable[[str, Node], None]] = []   # the shell: "stopped", "started", "drop"
        self.control = Control(self)
        self._supported: dict[int, tuple[int, int]] | None = None
        self._advertised: dict[bool, dict[int, tuple[int, int]]] = {}    # consumer protocol served -> the list
        self._topic_config_cache: dict[tuple, Any] = {}
        self.producer_ids = ProducerIds(block_taken=self.metadata_changed)
        self.acls = AclStore(changed=self.metadata_changed)   # cluster-wide, persisted with the metadata
        self.auth = AuthHelper(self.acls, self.config, self.registry)
        self.release = RELEASES[self.config["kafkamock.kafka.version"]]
        self.features = Features(self._transaction_version(), changed=self.metadata_changed,
                                 release=None if self.release.line == LATEST else self.release)
        self.groups = GroupCoordinator(self, share_group_deleted=lambda group_id: self.share.group_deleted(group_id))
        self.transactions = TransactionCoordinator(
            self, next_producer_id=self.next_producer_id,
            transaction_version=lambda: self.features.level(TRANSACTION_VERSION),
            offsets_marker=self.groups.transaction_ended)
        self.share = ShareManager(self, group_config=self.groups.configs.value)
        self.quotas = ClientQuotas(self)
        self.connections = Connections(self)
        self.persistence = self._persistence = MetadataPersistence(
            self.storage, self.metadata, self.config, self.nodes, {
                "producer_id_block_end": (self.producer_ids, None), "group_configs": (self.groups.configs, {}),
                "client_quotas": (self.quotas, []), "acls": (self.acls, []),
                "scram_credentials": (self.scram_credentials, []), "features": (self.features, None)},
            after_change=self._metadata_saved, worth_saving={"features": lambda: bool(self.features.overrides)})
        self.persistence.restore(self._partition_restored)
        self.groups.replay()
        self.transactions.replay()
        self.housekeeping = Housekeeping(self.metadata, self.config, self.storage, self.timers,
                                         log_start_moved=self.share.log_start_moved)
        self.housekeeping.schedule(self.now_ms(), [
            ("offsets-cleanup", "offsets.retention.check.interval.ms", self.groups.expire_offsets),
            ("transaction-abort", "transaction.abort.timed.out.transaction.cleanup.interval.ms",
             self.transactions.abort_timed_out),
            ("transactional-id-expiration", "transaction.remove.expired.transaction.cleanup.interval.ms",
             self.transactions.expire_transactional_ids)])

    @property
    def node_id(self) -> int:
        """The first node's id (the whole cluster, when it has one node)."""
        return next(iter(self.metadata.nodes))

    @property
    def nodes(self) -> list[Node]:
        return list(self.metadata.nodes.values())

    def first_node(self) -> Node:
        return next(iter(self.metadata.nodes.values()))

    # -- wiring for the I/O shell --------------------------------------------------------------------------------

    def set_address(self, node_id: int, host: str, port: int, listener: str | None = None) -> None:
        """The address node ``node_id`` advertises on ``listener`` (its bound one, unless ``advertised.listeners``
        says); the first listener's is also the node's own ``host``/``port`` (logs, the control API)."""
        node = self.metadata.nodes[node_id]
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

    def notify(self, key: Hashable) -> None:
        self.timers.notify(key)

    def appended(self, partition: Partition) -> None:
        """A partition's log grew: fetches waiting on it look again."""
        self.timers.notify(log_key(partition.topic, partition.index))

    def cancel(self, waiter: Waiter) -> None:
        self.timers.cancel(waiter)

    def close(self) -> None:
        """A clean stop: flush and checkpoint every log, with a producer snapshot each (the disk storage writes
        its clean-shutdown marker)."""
        self.housekeeping.snapshot_producers(self.now_ms())
        self.storage.close([p.log for p in self.metadata.partitions()], self.now_ms())

    # -- requests ------------------------------------------------------------------------------------------------

    def _transaction_version(self) -> int:
        """The initial ``transaction.version``: kafkamock.transaction.version, at most what the emulated release
        supports (a value set above it is refused)."""
        level: int = self.config["kafkamock.transaction.version"]
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

    def advertised_versions(self) -> Mapping[int, tuple[int, int]]:
        """What ApiVersions lists: the served versions, except that Produce starts at v0 as in Kafka 4.x.

        Kafka 4.0 removed Produce v0-2 yet still lists them, because librdkafka checks compression support
        against a Produce range starting at 0 and would otherwise send every batch uncompressed (KAFKA-18659,
        librdkafka#4956). A request at those versions is refused all the same (the connection closes) unless
        the legacy protocol is on.

        The same object while what it lists stays the same (every connection's ApiVersions asks): not to be changed.
        """
        consumer = self.groups.consumer.enabled()
        advertised = self._advertised.get(consumer)
        if advertised is None:
            advertised = dict(self.supported_versions())
            if not consumer:
                for module in (handlers.consumer_group_heartbeat, handlers.consumer_group_describe):
                    advertised.pop(module.API_KEY, None)
            if handlers.produce.API_KEY in advertised and not self.release.before_4_0:
                advertised[handlers.produce.API_KEY] = (0, advertised[handlers.produce.API_KEY][1])
            self._advertised[consumer] = advertised
        return advertised

    def handle(self, request: Request) -> Outcome:
        """The outcome of a request: a response, no response (acks=0), a wait, or close-the-connection."""
        handler = handlers.BY_KEY.get(request.api_key)
        if handler is None:  # the server checks first; this is the core's own guard
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
            self.now_ms(), node.node_id, request.api_key, self.registry.api_names[request.api_key],
            request.version, request.correlation_id, request.client_id, request.connection.id,
            request.connection.peer, request.connection.listener, request.connection.principal))
        faults = self.faults.matching(request.api_key, node.node_id)
        self._held_changes = 0
        try:
            if faults:
                return self.quotas.apply(request, self._faulted(handler, request, faults))
            return self.quotas.apply(request, self._run(handler, request))
        finally:
            self._save_held_changes()

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

    def _run(self, handler: ApiHandler, request: Request) -> Outcome:
        gate = FEATURE_GATES.get(request.api_key)
        if gate is not None and self.features.level(gate) < 1:
            # Kafka answers these APIs UNSUPPORTED_VERSION while their feature is finalized below level 1.
            return Respond(handler.error_response(self, request, ErrorCode.UNSUPPORTED_VERSION))
        try:
            return as_outcome(handler.handle(self, request))
        except AuthorizationFailed as exc:
            return Respond(handler.error_response(self, request, exc.code, exc.message))
        finally:
            if request.faults is not None:
                request.faults.settle()

    def _faulted(self, handler: ApiHandler, request: Request, faults: list[Fault]) -> Outcome:
        """Apply the faults a request matched: partition-level ones where its partitions are looked up; the oldest
        whole-request one (spent at once) as latency first, then a closed connection, then its error code, on
        every partition of a partition API, else as the response's top-level error."""
        by_partition = [f for f in faults if f.partition_level]
        whole = [f for f in faults if not f.partition_level]
        if not whole:
            request.faults = RequestFaults(by_partition, self.faults)
            return self._run(handler, request)
        fault = whole[0]
        self.faults.spend(fault)

        def act() -> Outcome:
            if fault.close_connection:
                return Close(f"the control API closes this connection (fault {fault.id})")
            if fault.error_code and not handler.partitioned:
                return Respond(handler.error_response(self, request, ErrorCode(fault.error_code)))
            extra = [fault] if fault.error_code else []
            request.faults = RequestFaults(extra + by_partition, self.faults, spent={fault.id})
            return self._run(handler, request)

        if fault.latency_ms:
            return Wait(self.wait((), self.now_ms() + fault.latency_ms, lambda final: act() if final else None))
        return act()

    def unencodable(self, request: Request) -> Struct:
        """What Kafka answers when a request's response cannot be serialized (an error message quoting a client's
        32767-byte string): the request's error response, UNKNOWN_SERVER_ERROR."""
        return handlers.BY_KEY[request.api_key].error_response(self, request, ErrorCode.UNKNOWN_SERVER_ERROR)

    def wait(self, keys: tuple, deadline_ms: int, check: Callable[[bool], Any]) -> Waiter:
        """Register a waiter (see ``outcome.Waiter``); a handler returns it to make its request wait."""
        waiter = Waiter(keys, deadline_ms, check)
        self.timers.add(waiter)
        return waiter

    # -- shared helpers for handlers -----------------------------------------------------------------------------

    def lead(self, request: Request, topic: Topic | None, index: int, current_leader_epoch: int = -1, *,
             missing: ErrorCode = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) -> Partition:
        """The partition a request may act on (``ClusterMetadata.lead``), after the faults pushed for it."""
        if request.faults is not None and topic is not None:
            code = request.faults.error_for(topic.name, index)
            if code:
                raise KafkaError(ErrorCode(code), "injected by the control API")
        node_id = request.node.node_id if request.node is not None else self.node_id
        return self.metadata.lead(node_id, topic, index, current_leader_epoch, missing=missing)

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
        for topic in self.metadata.topics.values():
            for partition in topic.partitions:
                partition.log.config = self.log_config(topic, partition)
        self.timers.refresh(self.now_ms())
        self.metadata_changed()

    def derived_config(self, what: str, topic: Topic, node: Node | None, build: Callable[[], T]) -> T:
        """``what``, built by ``build`` from the topic's configs on ``node`` (a log's settings, what a produce
        checks), kept until a topic or broker config changes (the configs' cache is cleared then)."""
        key = (what, topic.topic_id, node.node_id if node is not None else None)
        found = self._topic_config_cache.get(key, self._topic_config_cache)
        if found is self._topic_config_cache:
            found = self._topic_config_cache[key] = build()
        return found  # type: ignore[no-any-return]

    def log_config(self, topic: Topic, partition: Partition | None = None) -> LogConfig:
        """The settings a partition's log obeys, from the topic's configs and its leader's broker configs."""
        node = self.metadata.nodes.get(partition.leader_id) if partition is not None else None
        return self.derived_config("log config", topic, node, lambda: self._log_config(topic, node))

    def _log_config(self, topic: Topic, node: Node | None) -> LogConfig:
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
        """A new producer id (``producer_ids.py``: none repeats after a restart)."""
        return self.producer_ids.take()

    def delete_topic(self, topic: Topic) -> None:
        """DeleteTopics: the topic and its logs go, and the coordinators forget what they kept of it (an internal
        topic's deletion takes every group or transaction its log held, as Kafka's coordinators resign)."""
        self.metadata.delete_topic(topic)
        self.groups.topic_deleted(topic.name, topic.topic_id)
        if topic.name == TRANSACTION_STATE_TOPIC:
            self.transactions.unload()

    def internal_topic(self, name: str) -> Topic:
        """``__consumer_offsets`` or ``__transaction_state``, created on first use as Kafka creates them (compacted,
        ``offsets.topic.*`` / ``transaction.state.log.*`` settings; replication capped at the number of nodes)."""
        topic = self.metadata.topics.get(name)
        if topic is not None:
            return topic
        prefix = "offsets.topic" if name == "__consumer_offsets" else "transaction.state.log"
        config = self.config
        rf = min(config[f"{prefix}.replication.factor"], len(self.metadata.live_nodes()) or 1)
        return self.metadata.create_topic(name, config[f"{prefix}.num.partitions"], rf, {
            "cleanup.policy": "compact", "compression.type": "producer",
            "segment.bytes": config[f"{prefix}.segment.bytes"]}, internal=True)

    # -- nodes (the control API) ---------------------------------------------------------------------------------

    def stop_node(self, node_id: int) -> None:
        moved = self.metadata.stop_node(node_id)
        self.quorum.node_stopped(node_id)
        node = self.metadata.nodes[node_id]
        for listener in self.node_listeners:
            listener("stopped", node)
        self._leaders_moved(moved)
        log.info("node %d stopped; %d partition leadership(s) moved", node_id, len(moved))

    def start_node(self, node_id: int) -> None:
        moved = self.metadata.start_node(node_id, rebalance=self.config["auto.leader.rebalance.enable"])
        self.quorum.node_started(node_id)
        node = self.metadata.nodes[node_id]
        for listener in self.node_listeners:
            listener("started", node)
        self._leaders_moved(moved)
        log.info("node %d started; %d partition leadership(s) moved to it", node_id, len(moved))

    def move_leader(self, topic: str, index: int, node_id: int) -> Partition:
        partition = self.metadata.partition(topic, index)
        self.metadata.move_leader(partition, node_id)
        self._leaders_moved([partition])
        return partition

    # -- the controller's partition changes (ElectLeaders, AlterPartitionReassignments, UnregisterBroker) ------

    def elect_leader(self, partition: Partition, node_id: int) -> None:
        self.metadata.elect(partition, node_id)
        self._leaders_moved([partition])

    def reassign(self, partition: Partition, target: list[int]) -> None:
        if self.metadata.reassign(partition, target):
            self._leaders_moved([partition])

    def cancel_reassignment(self, partition: Partition, unclean_allowed: bool) -> None:
        if self.metadata.cancel_reassignment(partition, unclean_allowed):
            self._leaders_moved([partition])

    def unregister_broker(self, node_id: int) -> None:
        self._leaders_moved(self.metadata.unregister(node_id))
        log.info("node %d unregistered", node_id)

    def drop_connections(self, node_id: int | None = None) -> None:
        for node in self.nodes:
            if node_id is None or node.node_id == node_id:
                for listener in self.node_listeners:
                    listener("drop", node)

    def _leaders_moved(self, partitions: list[Partition]) -> None:
        for partition in partitions:
            topic = self.metadata.topics.get(partition.topic)
            if topic is not None:
                partition.log.config = self.log_config(topic, partition)
            self.appended(partition)   # fetches waiting on it answer now (with NOT_LEADER_OR_FOLLOWER)
        self._topic_config_cache.clear()

    # -- persistence (persistence.py) ----------------------------------------------------------------------------

    def metadata_changed(self) -> None:
        """Topics, partitions, leaders or configs changed: persist them (on disk), and let timers whose interval
        depends on them (a new topic's flush.ms) take the new one. During a request the change is saved with the
        request's others when it is done, before its response: a CreateTopics of 100 topics saved every topic after
        each one, quadratic in the topics."""
        if self._held_changes is not None:
            self._held_changes += 1
        elif self._persistence is not None:      # (None while the parts are built: restore saves at its end)
            self._persistence.changed()

    def _save_held_changes(self) -> None:
        held, self._held_changes = self._held_changes, None
        if held and self._persistence is not None:
            for _ in range(held - 1):            # one metadata record each, as Kafka's log has
                self.quorum.appended()
            self._persistence.changed()

    def _metadata_saved(self) -> None:
        self.quorum.appended()
        self.timers.refresh(self.now_ms())

    def _partition_restored(self, partition: Partition) -> None:
        topic = self.metadata.topics[partition.topic]
        partition.log.config = self.log_config(topic, partition)
        partition.log.assign_epoch(partition.leader_epoch, partition.log.log_end_offset)
        recover_producer_state(partition)
        self.share.restore(topic, partition)


__all__ = ["AuthorizationFailed", "Cluster", "ConnectionInfo", "INTERNAL_TOPICS", "Request", "log_key"]
