"""TxnOffsetCommit (28): a transactional producer commits a group's offsets inside its transaction.

The request goes to the group's coordinator; the group's ``__consumer_offsets`` partition must already be in the
transaction (AddOffsetsToTxn; KIP-890's verification: INVALID_TXN_STATE otherwise), except that v5 on
``transaction.version`` 2 adds it itself (KIP-890 part 2). v3+ names the group member
(``sendOffsetsToTransaction`` with the consumer's group metadata), checked as an OffsetCommit is (UNKNOWN_MEMBER_ID,
ILLEGAL_GENERATION, FENCED_INSTANCE_ID); without one (generation -1, no member id) any group accepts the commit,
as in Kafka. The offsets stay pending until the transaction's marker: OffsetFetch with RequireStable answers
UNSTABLE_OFFSET_COMMIT for them meanwhile.
"""

from __future__ import annotations

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.transactions.coordinator import fenced_code

API_KEY = 28
FIRST_FENCED_VERSION = 3
IMPLICIT_ADD_VERSION = 5
UNKNOWN_GENERATION = -1


def _all(body, code: ErrorCode) -> dict:
    return {"throttle_time_ms": 0, "topics": [
        {"name": t.name, "partitions": [{"partition_index": p.partition_index, "error_code": code}
                                        for p in t.partitions]} for t in body.topics]}


def _validate(broker, request) -> None:
    body, version = request.body, request.version
    groups = broker.groups
    groups.check_coordinator(request, body.group_id)
    if not body.group_id:
        raise KafkaError(ErrorCode.INVALID_GROUP_ID)
    topic, index = broker.transactions.offsets_partition(body.group_id)
    code = ErrorCode.NONE
    if version >= IMPLICIT_ADD_VERSION and broker.config["kafkamock.transaction.version"] >= 2:
        # KIP-890 part 2: a client on transaction.version 2 sends no AddOffsetsToTxn; the commit adds the partition.
        code = broker.transactions.add_partitions(body.transactional_id, body.producer_id, body.producer_epoch,
                                                  [(topic, index)], client_version=2)
    elif broker.config["transaction.partition.verification.enable"]:
        code = broker.transactions.verify_partition(body.transactional_id, body.producer_id, body.producer_epoch,
                                                    topic, index)
    if code:
        if code == ErrorCode.PRODUCER_FENCED:
            raise KafkaError(fenced_code(version, FIRST_FENCED_VERSION))
        if code == ErrorCode.CONCURRENT_TRANSACTIONS:
            raise KafkaError(code)
        raise KafkaError(ErrorCode.INVALID_TXN_STATE if code != ErrorCode.INVALID_PRODUCER_ID_MAPPING else code,
                         "the group's offsets partition is not in the transaction (AddOffsetsToTxn first)")
    generation = body.generation_id if version >= 3 else UNKNOWN_GENERATION
    member_id = body.member_id if version >= 3 else ""
    instance_id = body.group_instance_id if version >= 3 else None
    if generation == UNKNOWN_GENERATION and not member_id and instance_id is None:
        if body.group_id not in groups.groups:       # a standalone group, created by its first commit
            groups.validate_commit(body.group_id, UNKNOWN_GENERATION, "", None, 0, transactional=True)
        return
    groups.validate_commit(body.group_id, generation, member_id, instance_id, 0, transactional=True)


def handle(broker, request) -> dict:
    body, version = request.body, request.version
    broker.require(request, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, body.transactional_id)
    broker.require(request, AclOperation.READ, ResourceType.GROUP, body.group_id)
    try:
        _validate(broker, request)
    except KafkaError as exc:
        return _all(body, exc.code)
    max_metadata = broker.config["offset.metadata.max.bytes"]
    cluster = broker.cluster
    entries, topics = [], []
    readable = broker.authorized(request, AclOperation.READ, ResourceType.TOPIC, [t.name for t in body.topics])
    for t in body.topics:
        topic = cluster.topics.get(t.name)
        results = []
        for p in t.partitions:
            code = ErrorCode.NONE
            if t.name not in readable:
                code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif topic is None or not 0 <= p.partition_index < len(topic.partitions):
                code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif p.committed_metadata is not None and len(p.committed_metadata) > max_metadata:
                code = ErrorCode.OFFSET_METADATA_TOO_LARGE
            else:
                entries.append((t.name, p.partition_index, p.committed_offset,
                                p.committed_leader_epoch if version >= 2 else -1, p.committed_metadata))
            results.append({"partition_index": p.partition_index, "error_code": code})
        topics.append({"name": t.name, "partitions": results})
    broker.groups.txn_commit(body.group_id, body.producer_id, body.producer_epoch, entries)
    return {"throttle_time_ms": 0, "topics": topics}


def error_response(broker, request, code: ErrorCode) -> dict:
    return _all(request.body, code)
