"""FindCoordinator (10): which node coordinates a group, a transactional id or a share-partition's state.

As Kafka's KafkaApis.getCoordinator: a group id (key type 0) hashes onto a partition of ``__consumer_offsets``
and a transactional id (1) onto one of ``__transaction_state`` (``abs(key.hashCode()) % partitions``, Java's
String.hashCode); the coordinator is that partition's leader. The internal topic is created on first use (Kafka
answers COORDINATOR_NOT_AVAILABLE once while it creates it; kafkamock creates it at once). A partition with no
leader is COORDINATOR_NOT_AVAILABLE. Key type 2 (share, v6+, brokers only) names ``groupId:topicId:partition``
(SharePartitionKey's format, else INVALID_REQUEST, as Kafka). Kafka hashes it onto ``__share_group_state``; here the
share-partition's state is in the topic-partition itself (KIP-932's control records), so its coordinator is that
partition's leader; a key naming no partition (Kafka answers it all the same) is hashed onto the live nodes. Any
other key type, or share before v6, is INVALID_REQUEST. v4+ answers several keys at once.
A group key needs DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED), a transactional id DESCRIBE on it
(TRANSACTIONAL_ID_AUTHORIZATION_FAILED), a share key CLUSTER_ACTION (else the whole request fails).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.cluster import (
    GROUP_METADATA_TOPIC,
    NO_LEADER,
    TRANSACTION_STATE_TOPIC,
    parse_kafka_uuid,
    partition_for_key,
)
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import FindCoordinatorRequest, FindCoordinatorResponse
from kafkamock.errors import default_message

if TYPE_CHECKING:
    from kafkamock.broker.cluster import Partition
    from kafkamock.broker.core import Cluster, Request
    from kafkamock.broker.node import Node

API_KEY = 10
GROUP, TRANSACTION, SHARE = 0, 1, 2
KEY_TYPES = {GROUP: "group", TRANSACTION: "transaction", SHARE: "share"}
Coordinator = FindCoordinatorResponse.Coordinator


def coordinator_partition(cluster: Cluster, key_type: int, key: str) -> Partition | None:
    """The partition whose leader coordinates ``key`` (None for a share key naming no partition)."""
    if key_type in (GROUP, TRANSACTION):
        topic = cluster.internal_topic(GROUP_METADATA_TOPIC if key_type == GROUP else TRANSACTION_STATE_TOPIC)
        return topic.partitions[partition_for_key(key, len(topic.partitions))]
    tokens = key.split(":")
    if len(tokens) < 3 or not ":".join(tokens[:-2]).strip():
        raise KafkaError(ErrorCode.INVALID_REQUEST, None)
    try:
        topic_id = parse_kafka_uuid(tokens[-2])
        index = int(tokens[-1])
    except ValueError:
        raise KafkaError(ErrorCode.INVALID_REQUEST, None) from None
    named = cluster.metadata.topics_by_id.get(topic_id)
    return None if named is None else named.partition_at(index)


def _coordinator_node(cluster: Cluster, key_type: int, key: str) -> Node | None:
    """The node coordinating ``key`` (None when its partition has no leader)."""
    partition = coordinator_partition(cluster, key_type, key)
    if partition is None:              # a share key naming no partition: no state anywhere, any live node will do
        live = sorted(cluster.metadata.live_nodes(), key=lambda n: n.node_id)
        return live[partition_for_key(key, len(live))] if live else None
    return cluster.metadata.nodes.get(partition.leader_id) if partition.leader_id != NO_LEADER else None


def _answer(cluster: Cluster, request: Request[FindCoordinatorRequest], key: str, key_type: int, version: int
            ) -> Coordinator:
    listener = request.connection.listener          # the coordinator's address on the client's listener
    try:
        if key_type == GROUP and not cluster.auth.authorize(request, AclOperation.DESCRIBE, ResourceType.GROUP, key):
            raise KafkaError(ErrorCode.GROUP_AUTHORIZATION_FAILED)
        if key_type == TRANSACTION and not cluster.auth.authorize(request, AclOperation.DESCRIBE,
                                                            ResourceType.TRANSACTIONAL_ID, key):
            raise KafkaError(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
        if key_type == SHARE and version >= 6:
            cluster.auth.require(request, AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER)
        if key_type not in KEY_TYPES or (key_type == SHARE and version < 6):
            # (Kafka's InvalidRequestException for an unknown key type carries the error's default message)
            raise KafkaError(ErrorCode.INVALID_REQUEST, default_message(ErrorCode.INVALID_REQUEST)
                             if key_type not in KEY_TYPES else "share coordinators need FindCoordinator v6+")
        node = _coordinator_node(cluster, key_type, key)
        if node is None or not node.up:
            raise KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE, "The coordinator is not available.")
        host, port = node.address(listener)
        return Coordinator(key=key, node_id=node.node_id, host=host, port=port, error_code=ErrorCode.NONE,
                           error_message="" if key_type == SHARE else None)
    except KafkaError as exc:
        # Kafka's answers to share keys never carry a message (its coordinator entries leave the field empty).
        return _error(key, exc.code, "" if key_type == SHARE and version >= 4 else exc.message)


def _error(key: str, code: ErrorCode, message: str | None) -> Coordinator:
    return Coordinator(key=key, node_id=-1, host="", port=-1, error_code=code, error_message=message)


def _single(answer: Coordinator) -> FindCoordinatorResponse:
    """Before v4, the one key's answer is the response's own fields."""
    return FindCoordinatorResponse(throttle_time_ms=0, node_id=answer.node_id, host=answer.host, port=answer.port,
                                   error_code=answer.error_code, error_message=answer.error_message)


def handle(cluster: Cluster, request: Request[FindCoordinatorRequest]) -> FindCoordinatorResponse:
    body = request.body
    if request.version >= 4:
        return FindCoordinatorResponse(throttle_time_ms=0, coordinators=[
            _answer(cluster, request, key, body.key_type, request.version) for key in body.coordinator_keys])
    return _single(_answer(cluster, request, body.key, body.key_type, request.version))


def error_response(cluster: Cluster, request: Request[FindCoordinatorRequest], code: ErrorCode,
                   message: str | None = None) -> FindCoordinatorResponse:
    if request.version >= 4:
        return FindCoordinatorResponse(throttle_time_ms=0, coordinators=[
            _error(key, code, None) for key in request.body.coordinator_keys])
    return _single(_error("", code, None))


HANDLER = ApiHandler(API_KEY, handle, error_response)
