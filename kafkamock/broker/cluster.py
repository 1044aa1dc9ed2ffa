"""Cluster state: brokers, topics, partitions (leader, leader epoch, replicas) and their logs.

The cluster has N brokers from day one (N = 1 by default): every partition has a leader and a leader epoch, and
requests are checked against "is this broker the leader?", so multi-broker emulation is configuration.
"""

from __future__ import annotations

import base64
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.log import PartitionLog
from kafkamock.broker.producers import ProducerStates

LEGAL_TOPIC = re.compile(r"^[a-zA-Z0-9._-]+$")
MAX_TOPIC_LENGTH = 249


@dataclass
class Node:
    node_id: int
    host: str
    port: int
    rack: str | None = None


@dataclass
class Partition:
    topic: str
    index: int
    leader_id: int
    replicas: list[int]
    leader_epoch: int = 0
    log: PartitionLog = field(default_factory=PartitionLog)
    producers: ProducerStates = field(default_factory=ProducerStates)


@dataclass
class Topic:
    name: str
    topic_id: uuid.UUID
    partitions: list[Partition]
    configs: dict[str, Any] = field(default_factory=dict)
    internal: bool = False


def kafka_uuid_string(value: uuid.UUID) -> str:
    """Kafka's Uuid.toString(): URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")


def validate_topic_name(name: str | None) -> None:
    if not name:
        raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, "Topic name is illegal, it can't be empty")
    if name in (".", ".."):
        raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, "Topic name cannot be \".\" or \"..\"")
    if len(name) > MAX_TOPIC_LENGTH:
        raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION,
                         f"Topic name is illegal, it can't be longer than {MAX_TOPIC_LENGTH} characters")
    if not LEGAL_TOPIC.match(name):
        raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION,
                         f"Topic name \"{name}\" is illegal, it contains a character other than ASCII "
                         "alphanumerics, '.', '_' and '-'")


class Cluster:
    def __init__(self, nodes: list[Node], cluster_id: str | None = None, id_source: Any = None):
        self.nodes = nodes
        self.cluster_id = cluster_id or kafka_uuid_string(uuid.uuid4())
        self.controller_id = nodes[0].node_id
        self.topics: dict[str, Topic] = {}
        self.topics_by_id: dict[uuid.UUID, Topic] = {}
        self._next_leader = 0

    def node(self, node_id: int) -> Node | None:
        return next((n for n in self.nodes if n.node_id == node_id), None)

    def create_topic(self, name: str, num_partitions: int, replication_factor: int,
                     configs: dict[str, Any] | None = None, *, validate_only: bool = False) -> Topic:
        validate_topic_name(name)
        if name in self.topics:
            raise KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
        if num_partitions < 1:
            raise KafkaError(ErrorCode.INVALID_PARTITIONS, "Number of partitions must be larger than 0.")
        if replication_factor < 1:
            raise KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, "Replication factor must be larger than 0.")
        if replication_factor > len(self.nodes):
            raise KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR,
                             f"Unable to replicate the partition {replication_factor} time(s): The target "
                             f"replication factor of {replication_factor} cannot be reached because only "
                             f"{len(self.nodes)} broker(s) are registered.")
        topic = Topic(name, uuid.uuid4(), [], dict(configs or {}))
        for i in range(num_partitions):
            topic.partitions.append(self._new_partition(name, i, replication_factor))
        if not validate_only:
            self.topics[name] = topic
            self.topics_by_id[topic.topic_id] = topic
        return topic

    def _new_partition(self, topic: str, index: int, replication_factor: int) -> Partition:
        ids = [n.node_id for n in self.nodes]
        start = self._next_leader % len(ids)
        self._next_leader += 1
        replicas = [ids[(start + k) % len(ids)] for k in range(replication_factor)]
        return Partition(topic, index, replicas[0], replicas)

    def add_partitions(self, topic: Topic, total: int, *, validate_only: bool = False,
                       assignments: list[list[int]] | None = None) -> None:
        """Grow ``topic`` to ``total`` partitions; ``assignments`` (already validated) gives the replicas of each
        new partition, the first being its leader; without it they are placed round-robin."""
        if total <= len(topic.partitions):
            raise KafkaError(ErrorCode.INVALID_PARTITIONS,
                             f"Topic currently has {len(topic.partitions)} partitions, which is higher than or "
                             f"equal to the requested {total}.")
        if validate_only:
            return
        rf = len(topic.partitions[0].replicas) if topic.partitions else 1
        for k, i in enumerate(range(len(topic.partitions), total)):
            if assignments is not None:
                replicas = list(assignments[k])
                topic.partitions.append(Partition(topic.name, i, replicas[0], replicas))
            else:
                topic.partitions.append(self._new_partition(topic.name, i, rf))

    def delete_topic(self, topic: Topic) -> None:
        del self.topics[topic.name]
        del self.topics_by_id[topic.topic_id]

    def topic(self, name: str) -> Topic:
        topic = self.topics.get(name)
        if topic is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Unknown topic {name}")
        return topic

    def partition(self, name: str, index: int) -> Partition:
        topic = self.topics.get(name)
        if topic is None or not 0 <= index < len(topic.partitions):
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        return topic.partitions[index]
