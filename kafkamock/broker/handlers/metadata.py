"""Metadata (3): brokers, controller, cluster id, topics and partitions; auto-creates topics when allowed (the
request that creates one is answered UNKNOWN_TOPIC_OR_PARTITION, as Kafka 4 answers it; the next sees the topic).

As Kafka's KRaftMetadataCache answers: only brokers that are up are listed; a partition reports its leader and
leader epoch, its replicas, the in-sync replicas, and the replicas on stopped nodes as offline; a partition with no
leader (every in-sync replica stopped) is LEADER_NOT_AVAILABLE with leader -1. Listing all topics includes the
internal ones (``__consumer_offsets``...), flagged ``is_internal``, as Kafka does; clients filter them out.

Authorization, as Kafka's handleTopicMetadataRequest: a topic needs DESCRIBE. Listing all topics leaves the others
out; a topic asked for by name is TOPIC_AUTHORIZATION_FAILED (whether or not it exists), by id the same with its
id. Auto-creating a topic also needs CREATE on the cluster or on the topic (else TOPIC_AUTHORIZATION_FAILED). The
authorized-operations fields (v8+) are filled when asked for, else -2147483648.
"""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.cluster import (
    INTERNAL_TOPICS,
    NO_LEADER,
    Topic,
    validate_topic_name,
)
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import MetadataRequest, MetadataResponse

if TYPE_CHECKING:
    from kafkamock.broker.cluster import Partition
    from kafkamock.broker.core import Cluster, Request

API_KEY = 3
log = logging.getLogger("kafkamock.broker.metadata")
OMITTED_OPERATIONS = -2147483648
ZERO_UUID = uuid.UUID(int=0)
ResponseTopic = MetadataResponse.MetadataResponseTopic


def describe_partition(p: Partition, live: set[int]) -> MetadataResponse.MetadataResponsePartition:
    """A partition as Metadata shows it: ``live``, the ids of the nodes that are up (asked once per request: asked
    per partition, it was most of a 10,000-partition answer's cost)."""
    return MetadataResponse.MetadataResponsePartition(
        error_code=ErrorCode.LEADER_NOT_AVAILABLE if p.leader_id == NO_LEADER else ErrorCode.NONE,
        partition_index=p.index, leader_id=p.leader_id, leader_epoch=p.leader_epoch,
        replica_nodes=list(p.replicas), isr_nodes=[r for r in p.isr if r in live],
        offline_replicas=[r for r in p.replicas if r not in live],
    )


def describe_topic(topic: Topic, live: set[int]) -> ResponseTopic:
    return ResponseTopic(
        error_code=ErrorCode.NONE, name=topic.name, topic_id=topic.topic_id, is_internal=topic.internal,
        partitions=[describe_partition(p, live) for p in topic.partitions],
        topic_authorized_operations=OMITTED_OPERATIONS,
    )


def _error_topic(name: str | None, topic_id: uuid.UUID, code: ErrorCode, internal: bool = False) -> ResponseTopic:
    return ResponseTopic(error_code=code, name=name, topic_id=topic_id, is_internal=internal, partitions=[],
                         topic_authorized_operations=OMITTED_OPERATIONS)


def _brokers(cluster: Cluster, listener: str | None) -> list[MetadataResponse.MetadataResponseBroker]:
    """The brokers that are up, at their addresses on ``listener`` (Kafka's
    MetadataCache.getAliveBrokerNodes(listenerName))."""
    brokers = []
    for n in cluster.metadata.live_nodes():
        host, port = n.address(listener)
        brokers.append(MetadataResponse.MetadataResponseBroker(node_id=n.node_id, host=host, port=port, rack=n.rack))
    return brokers


def _frame(cluster: Cluster, topics: list[ResponseTopic], listener: str | None = None) -> MetadataResponse:
    """The response around ``topics``: the brokers' endpoints on the request's listener."""
    metadata = cluster.metadata
    return MetadataResponse(
        throttle_time_ms=0, brokers=_brokers(cluster, listener),
        cluster_id=metadata.cluster_id, controller_id=metadata.controller_id, topics=topics,
        cluster_authorized_operations=OMITTED_OPERATIONS,
    )


def handle(cluster: Cluster, request: Request[MetadataRequest]) -> MetadataResponse:
    body, version = request.body, request.version
    metadata = cluster.metadata
    live = {n.node_id for n in metadata.live_nodes()}
    config = cluster.node_config(request)
    requested = body.topics
    if version == 0 and requested == []:
        requested = None  # v0: an empty list means all topics
    allow_create = body.allow_auto_topic_creation if version >= 4 else True
    if requested is not None and version < 12 and any(t.name is None or t.topic_id != ZERO_UUID for t in requested):
        # Kafka's handleTopicMetadataRequest: topic ids (and so null names) only from v12, else the whole request
        # is an InvalidRequestException, answered by MetadataRequest.getErrorResponse: no brokers, no cluster id, no
        # controller, each topic with the error (a null name becomes "").
        return MetadataResponse(
            throttle_time_ms=0, brokers=[], cluster_id=None, controller_id=-1,
            cluster_authorized_operations=OMITTED_OPERATIONS,
            topics=[_error_topic(t.name or "", t.topic_id, ErrorCode.INVALID_REQUEST) for t in requested])
    topics: list[ResponseTopic] = []
    denied: list[ResponseTopic] = []
    by_id = version >= 10 and requested is not None and any(t.topic_id != ZERO_UUID for t in requested)
    if requested is None:
        names = list(metadata.topics)
    elif by_id:
        names = [metadata.topics_by_id[t.topic_id].name for t in requested if t.topic_id in metadata.topics_by_id]
    else:
        # A null name (v12+, without an id) is looked up, authorized and validated as the empty name, which no
        # topic and no ACL has (the authorizer cannot match None), and answered with its null name.
        names = [t.name or "" for t in requested]
    describable = cluster.auth.authorized(request, AclOperation.DESCRIBE, ResourceType.TOPIC, names)
    if requested is None:
        topics = [describe_topic(t, live) for t in metadata.topics.values() if t.name in describable]
    elif by_id:
        # As Kafka's handleTopicMetadataRequest: any topic id in the request means a lookup by ids, names
        # ignored (the Java admin client sends the name "" beside each id). No auto-creation by id.
        for wanted in requested:
            topic = metadata.topics_by_id.get(wanted.topic_id)
            if topic is None:
                topics.append(_error_topic(None, wanted.topic_id, ErrorCode.UNKNOWN_TOPIC_ID))
            elif topic.name not in describable:   # ids are not secret: the id comes back, the name does not
                denied.append(_error_topic(None, wanted.topic_id, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
            else:
                topics.append(describe_topic(topic, live))
    else:
        for wanted in requested:
            name = wanted.name or ""
            if name not in describable:           # no word on whether it exists
                denied.append(_error_topic(wanted.name, ZERO_UUID, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
                continue
            topic = metadata.topics.get(name)
            if topic is None and allow_create and config["auto.create.topics.enable"] and not (
                    cluster.auth.authorize(request, AclOperation.CREATE, ResourceType.CLUSTER)
                    or cluster.auth.authorize(request, AclOperation.CREATE, ResourceType.TOPIC, name)):
                denied.append(_error_topic(wanted.name, ZERO_UUID, ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                                           internal=name in INTERNAL_TOPICS))
                continue
            if topic is None:
                try:
                    validate_topic_name(name)
                except KafkaError as exc:
                    topics.append(_error_topic(wanted.name, ZERO_UUID, exc.code))
                    continue
                if allow_create and config["auto.create.topics.enable"]:
                    # As Kafka 4's AutoTopicCreationManager: the topic is created (Kafka asks its controller), and
                    # the request that triggered it is answered UNKNOWN_TOPIC_OR_PARTITION; the next one sees it.
                    try:
                        metadata.create_topic(name, config["num.partitions"], config["default.replication.factor"])
                    except KafkaError as exc:  # e.g. more replicas than nodes up: Kafka's controller logs it
                        log.warning("auto topic creation of %s failed: %s", name, exc)
                    topics.append(_error_topic(name, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                               internal=name in INTERNAL_TOPICS))
                    continue
                else:
                    topics.append(_error_topic(name, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
                    continue
            topics.append(describe_topic(topic, live))
    response = _frame(cluster, topics + denied, request.connection.listener)
    if version >= 8:
        if version <= 10 and body.include_cluster_authorized_operations:
            response.cluster_authorized_operations = (
                cluster.auth.authorized_operations(request, ResourceType.CLUSTER)
                if cluster.auth.authorize(request, AclOperation.DESCRIBE, ResourceType.CLUSTER) else 0)
        if body.include_topic_authorized_operations:
            for t in topics:
                if t.name is not None:
                    t.topic_authorized_operations = cluster.auth.authorized_operations(request, ResourceType.TOPIC,
                                                                                      t.name)
    return response


def error_response(cluster: Cluster, request: Request[MetadataRequest], code: ErrorCode,
                   message: str | None = None) -> MetadataResponse:
    """A fault from the control API: every requested topic (every topic, when all are asked for) gets ``code``."""
    requested = request.body.topics
    if requested is None or (request.version == 0 and requested == []):
        wanted: list[tuple[str | None, uuid.UUID]] = [(t.name, t.topic_id) for t in cluster.metadata.topics.values()]
    else:
        wanted = [(t.name if t.name is not None or request.version >= 12 else "", t.topic_id) for t in requested]
    return _frame(cluster, [_error_topic(name, topic_id, code) for name, topic_id in wanted],
                  request.connection.listener)


HANDLER = ApiHandler(API_KEY, handle, error_response)
