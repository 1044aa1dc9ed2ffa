"""Metadata (3): brokers, controller, cluster id, topics and partitions; auto-creates topics when allowed.

As Kafka's KRaftMetadataCache answers: only brokers that are up are listed; a partition reports its leader and
leader epoch, its replicas, the in-sync replicas, and the replicas on stopped nodes as offline; a partition with no
leader (every in-sync replica stopped) is LEADER_NOT_AVAILABLE with leader -1. Listing all topics includes the
internal ones (``__consumer_offsets``...), flagged ``is_internal``, as Kafka does; clients filter them out.
"""

from __future__ import annotations

import uuid

from kafkamock.broker.cluster import NO_LEADER, Topic, validate_topic_name
from kafkamock.broker.errors import ErrorCode, KafkaError

API_KEY = 3
OMITTED_OPERATIONS = -2147483648
ZERO_UUID = uuid.UUID(int=0)


def describe_partition(broker, p) -> dict:
    live = {n.node_id for n in broker.cluster.live_nodes()}
    return {
        "error_code": ErrorCode.LEADER_NOT_AVAILABLE if p.leader_id == NO_LEADER else ErrorCode.NONE,
        "partition_index": p.index, "leader_id": p.leader_id, "leader_epoch": p.leader_epoch,
        "replica_nodes": list(p.replicas), "isr_nodes": [r for r in p.isr if r in live],
        "offline_replicas": [r for r in p.replicas if r not in live],
    }


def describe_topic(broker, topic: Topic, version: int) -> dict:
    return {
        "error_code": ErrorCode.NONE, "name": topic.name, "topic_id": topic.topic_id, "is_internal": topic.internal,
        "partitions": [describe_partition(broker, p) for p in topic.partitions],
        "topic_authorized_operations": OMITTED_OPERATIONS,
    }


def _error_topic(name: str | None, topic_id: uuid.UUID, code: ErrorCode) -> dict:
    return {"error_code": code, "name": name, "topic_id": topic_id, "is_internal": False, "partitions": [],
            "topic_authorized_operations": OMITTED_OPERATIONS}


def _frame(broker, topics: list[dict], listener: str | None = None) -> dict:
    """The response around ``topics``: the brokers' endpoints on the request's listener (Kafka's
    MetadataCache.getAliveBrokerNodes(listenerName))."""
    cluster = broker.cluster
    return {
        "throttle_time_ms": 0,
        "brokers": [n.endpoint(listener) for n in cluster.live_nodes()],
        "cluster_id": cluster.cluster_id, "controller_id": cluster.controller_id, "topics": topics,
        "cluster_authorized_operations": OMITTED_OPERATIONS,
    }


def handle(broker, request) -> dict:
    body, version = request.body, request.version
    cluster = broker.cluster
    config = broker.node_config(request)
    requested = body.topics
    if version == 0 and requested == []:
        requested = None  # v0: an empty list means all topics
    allow_create = body.allow_auto_topic_creation if version >= 4 else True
    topics = []
    by_id = version >= 10 and requested is not None and any(t.topic_id != ZERO_UUID for t in requested)
    if requested is None:
        topics = [describe_topic(broker, t, version) for t in cluster.topics.values()]
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
                if allow_create and config["auto.create.topics.enable"]:
                    try:
                        topic = cluster.create_topic(name, config["num.partitions"],
                                                     config["default.replication.factor"])
                    except KafkaError as exc:  # e.g. more replicas than nodes up
                        topics.append(_error_topic(name, ZERO_UUID, exc.code))
                        continue
                else:
                    topics.append(_error_topic(name, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
                    continue
            topics.append(describe_topic(broker, topic, version))
    return _frame(broker, topics, request.connection.listener)


def error_response(broker, request, code: ErrorCode) -> dict:
    """A fault from the control API: every requested topic (every topic, when all are asked for) gets ``code``."""
    requested = request.body.topics
    if requested is None or (request.version == 0 and requested == []):
        wanted = [(t.name, t.topic_id) for t in broker.cluster.topics.values()]
    else:
        wanted = [(t.name, t.topic_id) for t in requested]
    return _frame(broker, [_error_topic(name, topic_id, code) for name, topic_id in wanted], request.connection.listener)
