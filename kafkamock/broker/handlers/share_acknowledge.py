"""ShareAcknowledge (79): a share-group member acknowledges records it acquired, without fetching.

As Kafka's KafkaApis.handleShareAcknowledgeRequest: a null group id or a bad member id is INVALID_REQUEST; the
request works in the member's share session (``share/sessions.py``): epoch 0 cannot be used
(INVALID_SHARE_SESSION_EPOCH), -1 acknowledges and then releases the session (what the member still holds in it is
released), any other epoch must be the next; errors of the whole request carry only a code. Each partition's batches
are checked and applied as ShareFetch's (``share_fetch.acknowledge_partitions``): INVALID_REQUEST for malformed
batches (RENEW only with IsRenewAck, from v2), UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_OR_PARTITION, and the
share-partition's refusals in Kafka's words. KIP-1222: RENEW restarts the lock for the group's current
``share.record.lock.duration.ms``, which the response returns as AcquisitionLockTimeoutMs.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.broker.handlers.share_fetch import MAX_MEMBER_ID, acknowledge_partitions, node_endpoints
from kafkamock.broker.share.sessions import FINAL_EPOCH, INITIAL_EPOCH
from kafkamock.codec.messages import ShareAcknowledgeRequest, ShareAcknowledgeResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 79


def error_response(cluster: Cluster, request: Request[ShareAcknowledgeRequest], code: ErrorCode,
                   message: str | None = None) -> ShareAcknowledgeResponse:
    """ShareAcknowledgeRequest.getErrorResponse: the code alone."""
    return ShareAcknowledgeResponse(throttle_time_ms=0, error_code=code, error_message=None,
                                    acquisition_lock_timeout_ms=0, responses=[], node_endpoints=[])


def handle(cluster: Cluster, request: Request[ShareAcknowledgeRequest]) -> ShareAcknowledgeResponse:
    body, version = request.body, request.version
    group_id, member_id, epoch = body.group_id, body.member_id, body.share_session_epoch
    if group_id is None:
        return error_response(cluster, request, ErrorCode.INVALID_REQUEST)
    cluster.auth.require(request, AclOperation.READ, ResourceType.GROUP, group_id)
    if not member_id or len(member_id) > MAX_MEMBER_ID:
        return error_response(cluster, request, ErrorCode.INVALID_REQUEST)
    sessions = request.arrived_on.share_sessions
    try:
        if epoch == INITIAL_EPOCH:
            raise KafkaError(ErrorCode.INVALID_SHARE_SESSION_EPOCH, None)
        session = sessions.require(group_id, member_id, epoch)
        if epoch != FINAL_EPOCH:
            sessions.update(session, (), ())
    except KafkaError as exc:
        return error_response(cluster, request, exc.code)
    leaders: set[int] = set()
    renew = version >= 2 and body.is_renew_ack
    outcome = acknowledge_partitions(cluster, request, group_id, member_id, [
        (t.topic_id, p.partition_index, p.acknowledgement_batches) for t in body.topics for p in t.partitions],
        version, renew, leaders)
    if epoch == FINAL_EPOCH:
        cluster.share.release_session(group_id, member_id, request.arrived_on)
    topics: dict[uuid.UUID, list[ShareAcknowledgeResponse.PartitionData]] = {}
    for (topic_id, index), (code, message, leader) in outcome.items():
        topics.setdefault(topic_id, []).append(ShareAcknowledgeResponse.PartitionData(
            partition_index=index, error_code=code, error_message=message,
            current_leader=ShareAcknowledgeResponse.LeaderIdAndEpoch(leader_id=leader[0] if leader else 0,
                                                                     leader_epoch=leader[1] if leader else 0)))
    return ShareAcknowledgeResponse(
        throttle_time_ms=0, error_code=ErrorCode.NONE, error_message=None,
        acquisition_lock_timeout_ms=cluster.share.lock_duration_ms(group_id),
        responses=[ShareAcknowledgeResponse.ShareAcknowledgeTopicResponse(topic_id=t, partitions=ps)
                   for t, ps in topics.items()],
        node_endpoints=node_endpoints(cluster, request, leaders, ShareAcknowledgeResponse.NodeEndpoint))


HANDLER = ApiHandler(API_KEY, handle, error_response, partitioned=True)
