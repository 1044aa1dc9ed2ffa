"""ShareAcknowledge (79): a share-group member acknowledges records it acquired, without fetching.

The request works in the member's share session (``share/sessions.py``): epoch 0 cannot acknowledge anything
(INVALID_SHARE_SESSION_EPOCH, as Kafka), -1 acknowledges, closes the session and releases what the member still
holds in it, any other epoch must be the next.
Each partition's batches are checked as ShareFetch checks them (INVALID_REQUEST: malformed batches, an unknown
type, RENEW before v2) and applied all or nothing (INVALID_RECORD_STATE for an offset the member does not hold).
KIP-1222: RENEW (type 4, v2) restarts the lock for the group's current ``share.record.lock.duration.ms``, which the
v2 response returns as AcquisitionLockTimeoutMs.
"""

from __future__ import annotations

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.cluster import NotLeader
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.share_fetch import check_read
from kafkamock.broker.share.manager import validated_acks
from kafkamock.broker.share.sessions import FINAL_EPOCH, INITIAL_EPOCH

API_KEY = 79
PARTITIONED = True


def error_response(broker, request, code: ErrorCode, message: str | None = None) -> dict:
    return {"throttle_time_ms": 0, "error_code": code, "error_message": message, "acquisition_lock_timeout_ms": 0,
            "responses": [], "node_endpoints": []}


def handle(broker, request) -> dict:
    body, version = request.body, request.version
    group_id, member_id, epoch = body.group_id, body.member_id, body.share_session_epoch
    broker.require(request, AclOperation.READ, ResourceType.GROUP, group_id)
    if not group_id:
        return error_response(broker, request, ErrorCode.INVALID_GROUP_ID, "The group id is empty.")
    if not member_id:
        return error_response(broker, request, ErrorCode.INVALID_REQUEST, "The member id is empty.")
    if epoch == INITIAL_EPOCH:
        return error_response(broker, request, ErrorCode.INVALID_SHARE_SESSION_EPOCH,
                              "A share acknowledge request cannot open a share session (epoch 0).")
    try:
        session = request.node.share_sessions.begin(group_id, member_id, epoch)
    except KafkaError as exc:
        return error_response(broker, request, exc.code, exc.message)
    leaders: set[int] = set()
    responses = []
    for t in body.topics:
        partitions = []
        for p in t.partitions:
            entry = {"partition_index": p.partition_index, "error_code": ErrorCode.NONE, "error_message": None,
                     "current_leader": {"leader_id": -1, "leader_epoch": -1}}
            try:
                acks = validated_acks(p.acknowledgement_batches, version)
                check_read(broker, request, t.topic_id)
                topic = broker.cluster.topics_by_id.get(t.topic_id)
                partition = broker.lead(request, topic, p.partition_index, missing=ErrorCode.UNKNOWN_TOPIC_ID)
                if acks:
                    broker.share.acknowledge(group_id, member_id, topic, partition, acks)
            except NotLeader as exc:
                entry.update(error_code=exc.code, error_message=exc.message,
                             current_leader={"leader_id": exc.leader_id, "leader_epoch": exc.leader_epoch})
                if exc.leader_id >= 0:
                    leaders.add(exc.leader_id)
            except KafkaError as exc:
                entry.update(error_code=exc.code, error_message=exc.message)
            partitions.append(entry)
        responses.append({"topic_id": t.topic_id, "partitions": partitions})
    if epoch == FINAL_EPOCH:            # the session closes: what the member still holds there is released
        broker.share.member_left(group_id, member_id, only=session.partitions)
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "error_message": None,
            "acquisition_lock_timeout_ms": broker.share.lock_duration_ms(group_id), "responses": responses,
            "node_endpoints": broker.cluster.leader_endpoints(leaders, request.connection.listener) if leaders else []}
