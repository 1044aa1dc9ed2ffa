"""Metadata (3): brokers, controller, cluster id, topics and partitions; auto-creates topics when allowed."""

from __future__ import annotations

import uuid

from kafkamock.broker.cluster import Topic, validate_topic_name
from kafkamock.broker.errors import ErrorCode, KafkaError

API_KEY = 3
OMITTED_OPERATIONS = -2147483648
ZERO_UUID = uuid.UUID(int=0)


def describe_topic(broker, topic: Topic, version: int) -> dict:
    return {
        "error_code": ErrorCode.NONE, "name": topic.name, "topic_id": topic.topic_id, "is_internal": topic.internal,
        "partitions": [{
            "error_code": ErrorCode.NONE, "partition_index": p.index, "leader_id": p.leader_id,
            "leader_epoch": p.leader_epoch, "replica_nodes": list(p.replicas), "isr_nodes": list(p.replicas),
            "offline_replicas": [],
        } for p in topic.partitions],
        "topic_authorized_operations": OMITTED_OPERATIONS,
    }


def _error_topic(name: str | None, topic_id: uuid.UUID, code: ErrorCode) -> dict:
    return {"error_code": code, "name": name, "topic_id": topic_id, "is_internal": False, "partitions": [],
            "topic_authorized_operations": OMITTED_OPERATIONS}


def handle(broker, request) -> dict:
    body, version = request.body, request.version
    cluster = broker.cluster
    requested = body.topics
    if version == 0 and requested == []:
        requested = None  # v0: an empty list means all topics
    allow_create = body.allow_auto_topic_creation if version >= 4 else True
    topics = []
    by_id = version >= 10 and requested is not None and any(t.topic_id != ZERO_UUID for t in requested)
    if requested is None:
        topics = [describe_topic(broker, t, version) for t in cluster.topics.values() if not t.internal]
    elif by_id:
        # As Kafka's handleTopicMetadataRequest: any topic id in the request means a lookup by ids, names
        # ignored (the Java admin client sends the name "" beside each id). No auto-creation by id.
        for wanted in requested:
            topic = cluster.topics_by_id.get(wanted.topic_id)
            topics.append(describe_topic(broker, topic, version) if topic else
                          _error_topic(None, wanted.topic_id, ErrorCode.UNKNOWN_TOPIC_ID))
    else:
        for wanted in requested:
            name = wanted.name
            topic = cluster.topics.get(name)
            if topic is None:
                try:
                    validate_topic_name(name)
                except KafkaError as exc:
                    topics.append(_error_topic(name, ZERO_UUID, exc.code))
                    continue
                if allow_create and broker.config["auto.create.topics.enable"]:
                    topic = cluster.create_topic(name, broker.config["num.partitions"],
                                                 broker.config["default.replication.factor"])
                else:
                    topics.append(_error_topic(name, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
                    continue
            topics.append(describe_topic(broker, topic, version))
    return {
        "throttle_time_ms": 0,
        "brokers": [{"node_id": n.node_id, "host": n.host, "port": n.port, "rack": n.rack} for n in cluster.nodes],
        "cluster_id": cluster.cluster_id, "controller_id": cluster.controller_id, "topics": topics,
        "cluster_authorized_operations": OMITTED_OPERATIONS,
    }
