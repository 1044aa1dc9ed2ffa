"""The control API's model: what a test may do to, and read from, a running cluster, as plain JSON-ready values.

One model, reached three ways: from Python (``broker.control`` on a ``start_broker()`` handle, run on the broker's
thread), over HTTP+JSON (``kafkamock serve --control-port``, ``server/control_http.py``) and from the command line
(``kafkamock ctl``, which speaks that HTTP). Anchored on kfake's control functions and librdkafka's
``rd_kafka_mock_*``: push error codes or latency for the next requests of an API (optionally on one node, topic
or partition), drop connections, stop and start nodes, move partition leaders, and list topics, offsets and the
request log. Bad input raises ``ControlError`` (HTTP 400, or 404 for something that does not exist).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from kafkamock.broker.errors import ErrorCode
from kafkamock.broker.faults import Fault
from kafkamock.codec import default_registry

if TYPE_CHECKING:
    from kafkamock.broker.cluster import Partition, Topic
    from kafkamock.broker.core import Cluster
    from kafkamock.broker.node import Node


class ControlError(ValueError):
    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def api_key_of(value: Any) -> int:
    """An API key from its number or its name (``0``, ``"Produce"``, ``"produce"``)."""
    registry = default_registry()
    if isinstance(value, bool):
        raise ControlError(f"api_key must be an API key or name, not {value!r}")
    if isinstance(value, int) or (isinstance(value, str) and value.strip().isdigit()):
        key = int(value)
        if key not in registry.requests:
            raise ControlError(f"unknown API key {key}")
        return key
    if isinstance(value, str):
        for key, spec in registry.requests.items():
            if spec.api_name.lower() == value.strip().lower():
                return key
    raise ControlError(f"unknown API {value!r}")


def error_code_of(value: Any) -> int:
    """An error code from its number or its name (``6``, ``"NOT_LEADER_OR_FOLLOWER"``)."""
    if isinstance(value, bool):
        raise ControlError(f"error_code must be an error code or name, not {value!r}")
    try:
        if isinstance(value, int) or (isinstance(value, str) and value.strip().lstrip("-").isdigit()):
            return int(ErrorCode(int(value)))
        if isinstance(value, str):
            return int(ErrorCode[value.strip().upper()])
    except (KeyError, ValueError):
        pass
    raise ControlError(f"unknown error code {value!r}")


def _optional_int(name: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ControlError(f"{name} must be an integer")
    try:
        return int(value)
    except ValueError:
        raise ControlError(f"{name} must be an integer, not {value!r}") from None


class Control:
    def __init__(self, cluster: Cluster) -> None:
        self._cluster = cluster

    # -- nodes ---------------------------------------------------------------------------------------------------

    def nodes(self) -> list[dict]:
        return [{"node_id": n.node_id, "host": n.host, "port": n.port, "up": n.up, "rack": n.rack}
                for n in self._cluster.nodes]

    def _node(self, node_id: Any) -> Node:
        nid = _optional_int("node_id", node_id)
        node = self._cluster.metadata.nodes.get(nid) if nid is not None else None
        if node is None:
            raise ControlError(f"no node {node_id} (nodes: {sorted(self._cluster.metadata.nodes)})", 404)
        return node

    def stop_node(self, node_id: Any) -> dict:
        node = self._node(node_id)
        if node.up:
            self._cluster.stop_node(node.node_id)
        return self._describe_node(node)

    def start_node(self, node_id: Any) -> dict:
        """Start a stopped node; a running node that UnregisterBroker removed registers again (as on a restart)."""
        node = self._node(node_id)
        if not node.up or not node.registered:
            self._cluster.start_node(node.node_id)
        return self._describe_node(node)

    def _describe_node(self, node: Node) -> dict:
        return {"node_id": node.node_id, "host": node.host, "port": node.port, "up": node.up, "rack": node.rack}

    def drop_connections(self, node_id: Any = None) -> dict:
        if node_id is not None:
            self._node(node_id)
        self._cluster.drop_connections(_optional_int("node_id", node_id))
        return {"dropped": "all" if node_id is None else int(node_id)}

    # -- partitions ----------------------------------------------------------------------------------------------

    def move_leader(self, topic: str, partition: Any, node_id: Any) -> dict:
        index = _optional_int("partition", partition)
        t = self._cluster.metadata.topics.get(topic)
        if t is None or index is None or t.partition_at(index) is None:
            raise ControlError(f"no partition {topic}-{partition}", 404)
        node = self._node(node_id)
        if not node.up:
            raise ControlError(f"node {node.node_id} is stopped: start it before moving a leader to it", 409)
        p = self._cluster.move_leader(topic, index, node.node_id)
        return self._describe_partition(t, p)

    def topics(self) -> list[dict]:
        return [self.topic(name) for name in sorted(self._cluster.metadata.topics)]

    def topic(self, name: str) -> dict:
        t = self._cluster.metadata.topics.get(name)
        if t is None:
            raise ControlError(f"no topic {name!r}", 404)
        from kafkamock.broker.cluster import kafka_uuid_string

        return {"name": t.name, "topic_id": kafka_uuid_string(t.topic_id), "internal": t.internal,
                "configs": {k: v for k, v in t.configs.items()},
                "partitions": [self._describe_partition(t, p) for p in t.partitions]}

    def _describe_partition(self, topic: Topic, p: Partition) -> dict:
        plog = p.log
        return {"topic": topic.name, "partition": p.index, "leader": p.leader_id, "leader_epoch": p.leader_epoch,
                "replicas": list(p.replicas), "isr": list(p.isr), "log_start_offset": plog.log_start_offset,
                "log_end_offset": plog.log_end_offset, "high_watermark": plog.high_watermark,
                "size_bytes": plog.size_bytes, "segments": len(plog.segments)}

    def stored_batches(self, topic: str, partition: Any, from_offset: Any = None, limit: Any = 1000) -> list[dict]:
        """The record batches a partition's log holds, as stored (from the log start, or the batch holding
        ``from_offset``): offsets, header fields, and ``data``, the batch's bytes (base64 over HTTP)."""
        from kafkamock.records import split_batches

        t = self._cluster.metadata.topics.get(topic)
        index = _optional_int("partition", partition)
        found = None if t is None or index is None else t.partition_at(index)
        if found is None:
            raise ControlError(f"no partition {topic}-{partition}", 404)
        plog = found.log
        start = _optional_int("from_offset", from_offset)
        count = _optional_int("limit", limit) or 0
        out: list[dict] = []
        for stored in plog.batches(start if start is not None else plog.log_start_offset):
            if len(out) >= count:
                break
            data = bytes(stored.data)
            (view,), _ = split_batches(data)
            entry = {"base_offset": stored.base_offset, "last_offset": stored.last_offset, "size": len(data),
                     "magic": view.magic, "data": data}
            if view.magic == 2:
                entry.update(compression=view.compression, record_count=view.record_count,
                             producer_id=view.producer_id, producer_epoch=view.producer_epoch,
                             base_sequence=view.base_sequence, partition_leader_epoch=view.partition_leader_epoch,
                             max_timestamp=view.max_timestamp, transactional=view.is_transactional,
                             control=view.is_control)
            out.append(entry)
        return out

    # -- faults --------------------------------------------------------------------------------------------------

    def push_fault(self, api_key: Any, error_code: Any = 0, count: Any = 1, node_id: Any = None,
                   topic: str | None = None, partition: Any = None, latency_ms: Any = 0,
                   close_connection: bool = False) -> dict:
        if node_id is not None:
            self._node(node_id)
        if topic is not None and not isinstance(topic, str):
            raise ControlError("topic must be a string")
        if not isinstance(close_connection, bool):
            raise ControlError("close_connection must be true or false")
        try:
            fault = Fault(api_key_of(api_key), error_code_of(error_code or 0), _optional_int("count", count) or 0,
                          _optional_int("node_id", node_id), topic, _optional_int("partition", partition),
                          _optional_int("latency_ms", latency_ms) or 0, close_connection)
        except ValueError as exc:
            if isinstance(exc, ControlError):
                raise
            raise ControlError(str(exc)) from None
        return self._cluster.faults.push(fault).as_dict()

    def faults(self) -> list[dict]:
        return [f.as_dict() for f in self._cluster.faults.pending]

    def clear_faults(self) -> dict:
        cleared = len(self._cluster.faults.pending)
        self._cluster.faults.clear()
        return {"cleared": cleared}

    # -- request log ---------------------------------------------------------------------------------------------

    def requests(self, api_key: Any = None, node_id: Any = None) -> list[dict]:
        key = api_key_of(api_key) if api_key is not None else None
        return self._cluster.requests.list(api_key=key, node_id=_optional_int("node_id", node_id))

    def scram_user(self, name: str, password: str, mechanisms: Iterable[str] = ("SCRAM-SHA-256", "SCRAM-SHA-512"),
                   iterations: int = 4096) -> dict:
        """Store SCRAM credentials for a user (what AlterUserScramCredentials or Kafka's ``kafka-configs
        --add-config 'SCRAM-SHA-512=[password=...]'`` would), persisted with the metadata."""
        self._cluster.scram_credentials.set_password(name, password, tuple(mechanisms), iterations)
        return {"user": name, "mechanisms": list(mechanisms), "iterations": iterations}

    def clear_requests(self) -> dict:
        cleared = len(self._cluster.requests.entries)
        self._cluster.requests.clear()
        return {"cleared": cleared}

    # -- the cluster ---------------------------------------------------------------------------------------------

    def cluster(self) -> dict:
        return {"cluster_id": self._cluster.metadata.cluster_id, "controller_id": self._cluster.metadata.controller_id,
                "nodes": self.nodes(), "storage": "disk" if self._cluster.storage.durable else "memory"}

    # -- data and groups -----------------------------------------------------------------------------------------

    def create_topic(self, name: str, partitions: Any = 1, replication_factor: Any = 1,
                     configs: dict | None = None) -> dict:
        """A topic, as CreateTopics would make it (its configs by Kafka's names, validated)."""
        from kafkamock.broker.config import ConfigError, parse_topic_configs
        from kafkamock.broker.errors import KafkaError

        count = _optional_int("partitions", partitions) or 0
        rf = _optional_int("replication_factor", replication_factor) or 0
        if name in self._cluster.metadata.topics:
            raise ControlError(f"topic {name!r} already exists")
        if count < 1 or rf < 1:
            raise ControlError("partitions and replication_factor must be at least 1")
        if rf > len(self._cluster.metadata.nodes):
            raise ControlError(f"replication_factor {rf} is more than the {len(self._cluster.metadata.nodes)} nodes")
        try:
            parsed = parse_topic_configs(configs)
        except ConfigError as exc:
            raise ControlError(str(exc)) from None
        try:
            self._cluster.metadata.create_topic(name, count, rf, parsed)
        except KafkaError as exc:
            raise ControlError(exc.message or exc.code.name) from None
        return self.topic(name)

    def produce(self, topic: str, records: list, partition: Any = None) -> list[dict]:
        """Append ``records`` (each ``{"value": ..., "key": ..., "headers": {name: value}, "timestamp": ms}``,
        text or bytes, or a bare value) through the broker's produce path: to ``partition``, else by key as Kafka's
        default partitioner does (murmur2), keyless records to partition 0. Returns each record's partition and
        offset; consumers waiting on the partitions are woken as by a Produce."""
        from kafkamock.broker.handlers.produce import append
        from kafkamock.records import encode_batch
        from kafkamock.records.partitioner import partition_for_key

        t, fixed = self._topic_and_partition(topic, partition)
        now = self._cluster.now_ms()
        by_partition: dict[int, list[dict]] = {}
        order: list[tuple[int, int]] = []
        for record in records:
            r = _record(record, now)
            index = fixed.index if fixed is not None else (
                partition_for_key(r["key"], len(t.partitions)) if r["key"] is not None else 0)
            order.append((index, len(by_partition.setdefault(index, []))))
            by_partition[index].append(r)
        bases = {}
        for index, batch in by_partition.items():
            p = t.partitions[index]     # a partition asked for, or one the key (or 0) picks: always in range
            result = append(self._cluster, t, p, encode_batch(batch))
            self._cluster.appended(p)
            bases[index] = result["base_offset"]
        return [{"partition": index, "offset": bases[index] + i} for index, i in order]

    def records(self, topic: str, partition: Any = None, from_offset: Any = 0, limit: Any = 1000) -> list[dict]:
        """The data records of a topic (one partition, or all of them in turn) from ``from_offset`` up to the high
        watermark, decoded: partition, offset, timestamp, key, value, headers (bytes; the HTTP API sends text,
        or base64 where a value is not UTF-8). Control batches (transaction markers, share state) are left out."""
        from kafkamock.records import decode_batches

        t, found = self._topic_and_partition(topic, partition)
        start = _optional_int("from_offset", from_offset) or 0
        count = _optional_int("limit", limit) or 0
        out: list[dict] = []
        for p in [found] if found is not None else t.partitions:
            plog = p.log
            for stored in plog.batches(max(start, plog.log_start_offset)):
                for batch in decode_batches(bytes(stored.data)):
                    if batch.is_control:
                        continue
                    for rec in batch.records:
                        if start <= rec.offset < plog.high_watermark and len(out) < count:
                            out.append({"partition": p.index, "offset": rec.offset, "timestamp": rec.timestamp,
                                        "key": rec.key, "value": rec.value,
                                        "headers": [(name, value) for name, value in rec.headers]})
                if stored.base_offset >= plog.high_watermark or len(out) >= count:
                    break
        return out

    def _topic_and_partition(self, topic: str, partition: Any) -> tuple[Topic, Partition | None]:
        """The topic (404 when there is none) and the partition asked for, if any (404 when it has none)."""
        t = self._cluster.metadata.topics.get(topic)
        if t is None:
            raise ControlError(f"no topic {topic!r}", 404)
        index = _optional_int("partition", partition)
        if index is None:
            return t, None
        found = t.partition_at(index)
        if found is None:
            raise ControlError(f"no partition {topic}-{index}", 404)
        return t, found

    def groups(self) -> list[dict]:
        return [self.group(g.group_id) for g in sorted(self._cluster.groups.list_groups(None, None),
                                                       key=lambda g: g.group_id)]

    def group(self, group_id: str) -> dict:
        """A group's type, state, members and committed offsets."""
        group = self._cluster.groups.groups.get(group_id)
        if group is None:
            raise ControlError(f"no group {group_id!r}", 404)
        offsets = self._cluster.groups.fetch_offsets(group_id, None) if group.kind != "share" else []
        return {"group_id": group_id, "type": group.kind, "state": group.state_name,
                "members": sorted(group.members),
                "offsets": [{"topic": t, "partition": p, "offset": o.offset, "metadata": o.metadata}
                            for t, p, o in sorted(offsets, key=lambda x: (x[0], x[1])) if o is not None]}


def _record(record: Any, now: int) -> dict:
    """One record to produce, from a mapping or a bare value; text is UTF-8."""
    def as_bytes(value: Any) -> bytes | None:
        if value is None or isinstance(value, bytes):
            return value
        if isinstance(value, bytearray | memoryview):
            return bytes(value)
        return str(value).encode()
    if not isinstance(record, dict):
        record = {"value": record}
    unknown = set(record) - {"key", "value", "headers", "timestamp"}
    if unknown:
        raise ControlError(f"a record has key, value, headers and timestamp; not {', '.join(sorted(unknown))}")
    headers = record.get("headers") or {}
    pairs = headers.items() if isinstance(headers, dict) else headers
    return {"key": as_bytes(record.get("key")), "value": as_bytes(record.get("value")),
            "headers": [(str(name), as_bytes(value)) for name, value in pairs],
            "timestamp": int(record.get("timestamp", now))}
