"""TxnOffsetCommit (28): a transactional producer commits a group's offsets inside its transaction.

The request goes to the group's coordinator; the group's ``__consumer_offsets`` partition must already be in the
transaction (AddOffsetsToTxn; KIP-890's verification: TRANSACTION_ABORTABLE otherwise, INVALID_TXN_STATE before v4;
a fenced producer is INVALID_PRODUCER_EPOCH, as Kafka's partition verification tells it), except that v5 on
``transaction.version`` 2 adds it itself (KIP-890 part 2). v3+ names the group member
(``sendOffsetsToTransaction`` with the consumer's group metadata), checked as an OffsetCommit is (UNKNOWN_MEMBER_ID,
ILLEGAL_GENERATION, FENCED_INSTANCE_ID); without one (generation -1, no member id) any group accepts the commit,
as in Kafka. The offsets stay pending until the transaction's marker: OffsetFetch with RequireStable answers
UNSTABLE_OFFSET_COMMIT for them meanwhile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.features import TRANSACTION_VERSION
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import TxnOffsetCommitRequest, TxnOffsetCommitResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request
    from kafkamock.broker.groups.coordinator import OffsetEntry

API_KEY = 28
IMPLICIT_ADD_VERSION = 5
TRANSACTION_ABORTABLE_VERSION = 4       # v4+: the client knows TRANSACTION_ABORTABLE (KIP-1050)
UNKNOWN_GENERATION = -1
TopicResult = TxnOffsetCommitResponse.TxnOffsetCommitResponseTopic
PartitionResult = TxnOffsetCommitResponse.TxnOffsetCommitResponsePartition


def _all(body: TxnOffsetCommitRequest, code: ErrorCode) -> TxnOffsetCommitResponse:
    return TxnOffsetCommitResponse(throttle_time_ms=0, topics=[
        TopicResult(name=t.name, partitions=[PartitionResult(partition_index=p.partition_index, error_code=code)
                                             for p in t.partitions]) for t in body.topics])


def _verify(cluster: Cluster, request: Request[TxnOffsetCommitRequest]) -> None:
    """The group's ``__consumer_offsets`` partition must be in the transaction (KIP-890 part 1's verification, or
    part 2's implicit add for v5), checked as Kafka's ReplicaManager does for a coordinator's write: an epoch older
    than the partition's is INVALID_PRODUCER_EPOCH, an open transaction of this producer there needs nothing, and the
    transaction coordinator's answer comes back as producers know it (PRODUCER_FENCED -> INVALID_PRODUCER_EPOCH, a
    partition not in the transaction TRANSACTION_ABORTABLE, INVALID_TXN_STATE before v4)."""
    body, version = request.body, request.version
    coordinator = cluster.transactions
    adds = version >= IMPLICIT_ADD_VERSION and cluster.features.level(TRANSACTION_VERSION) >= 2
    if not adds and not cluster.config["transaction.partition.verification.enable"]:
        return
    topic, index = coordinator.offsets_partition(body.group_id)
    producers = cluster.internal_topic(topic).partitions[index].producers
    entry = producers.entries.get(body.producer_id)
    if entry is not None and body.producer_epoch < entry.epoch:
        raise KafkaError(ErrorCode.INVALID_PRODUCER_EPOCH)
    if producers.has_open_transaction(body.producer_id, body.producer_epoch):
        return
    if adds:
        # KIP-890 part 2: a client on transaction.version 2 sends no AddOffsetsToTxn; the commit adds the partition.
        code = coordinator.add_partitions(body.transactional_id, body.producer_id, body.producer_epoch,
                                          [(topic, index)], client_version=2)
    else:
        code = coordinator.verify_partition(body.transactional_id, body.producer_id, body.producer_epoch, topic, index)
    if code == ErrorCode.PRODUCER_FENCED:
        code = ErrorCode.INVALID_PRODUCER_EPOCH
    elif code == ErrorCode.TRANSACTION_ABORTABLE and version < TRANSACTION_ABORTABLE_VERSION:
        code = ErrorCode.INVALID_TXN_STATE
    if code:
        raise KafkaError(code)


def _validate(cluster: Cluster, request: Request[TxnOffsetCommitRequest]) -> None:
    body, version = request.body, request.version
    groups = cluster.groups
    groups.check_coordinator(request, body.group_id)
    if not body.group_id:
        raise KafkaError(ErrorCode.INVALID_GROUP_ID)
    _verify(cluster, request)
    generation = body.generation_id if version >= 3 else UNKNOWN_GENERATION
    member_id = body.member_id if version >= 3 else ""
    instance_id = body.group_instance_id if version >= 3 else None
    if generation == UNKNOWN_GENERATION and not member_id and instance_id is None:
        if body.group_id not in groups.groups:       # a standalone group, created by its first commit
            groups.validate_commit(body.group_id, UNKNOWN_GENERATION, "", None, 0, transactional=True)
        return
    groups.validate_commit(body.group_id, generation, member_id, instance_id, 0, transactional=True)


def handle(cluster: Cluster, request: Request[TxnOffsetCommitRequest]) -> TxnOffsetCommitResponse:
    """Kafka's handleTxnOffsetCommitRequest: partitions of unreadable or unknown topics are answered at once (first
    in the answer); the others go to the group coordinator, whose errors (verification, membership) are theirs
    alone. With no such partition left, the coordinator is not asked at all."""
    body, version = request.body, request.version
    cluster.auth.require(request, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, body.transactional_id)
    cluster.auth.require(request, AclOperation.READ, ResourceType.GROUP, body.group_id)
    metadata = cluster.metadata
    answer: dict[str, list[PartitionResult]] = {}
    valid: list[tuple[str, TxnOffsetCommitRequest.TxnOffsetCommitRequestPartition]] = []
    readable = cluster.auth.authorized(request, AclOperation.READ, ResourceType.TOPIC, [t.name for t in body.topics])
    for t in body.topics:
        topic = metadata.topics.get(t.name)
        for p in t.partitions:
            code = ErrorCode.NONE
            if t.name not in readable:
                code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif topic is None or topic.partition_at(p.partition_index) is None:
                code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            if code:
                answer.setdefault(t.name, []).append(PartitionResult(partition_index=p.partition_index,
                                                                     error_code=code))
            else:
                valid.append((t.name, p))
    if valid:
        try:
            _validate(cluster, request)
            failed = None
        except KafkaError as exc:
            failed = exc.code
        max_metadata = cluster.config["offset.metadata.max.bytes"]
        entries: list[OffsetEntry] = []
        for name, p in valid:
            code = failed or ErrorCode.NONE
            if not code and p.committed_metadata is not None and len(p.committed_metadata) > max_metadata:
                code = ErrorCode.OFFSET_METADATA_TOO_LARGE
            elif not code:
                entries.append((name, p.partition_index, p.committed_offset,
                                p.committed_leader_epoch if version >= 2 else -1, p.committed_metadata))
            answer.setdefault(name, []).append(PartitionResult(partition_index=p.partition_index, error_code=code))
        if entries:
            cluster.groups.txn_commit(body.group_id, body.producer_id, body.producer_epoch, entries)
    return TxnOffsetCommitResponse(throttle_time_ms=0, topics=[TopicResult(name=name, partitions=parts)
                                                               for name, parts in answer.items()])


def error_response(cluster: Cluster, request: Request[TxnOffsetCommitRequest], code: ErrorCode,
                   message: str | None = None) -> TxnOffsetCommitResponse:
    return _all(request.body, code)


HANDLER = ApiHandler(API_KEY, handle, error_response)
