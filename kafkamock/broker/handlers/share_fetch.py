"""ShareFetch (78): records for a share-group member, each acquired under a lock; acknowledgements ride along.

In Kafka's order (KafkaApis.handleShareFetchRequest): the share session (``share/sessions.py``: epoch 0 opens, -1
closes and releases what the member still holds there, else the next epoch; acknowledgements in an opening request
are INVALID_REQUEST), then the piggy-backed
acknowledgements (``share/manager.py``; per partition INVALID_REQUEST for malformed batches, INVALID_RECORD_STATE
for offsets the member does not hold), then the fetch over every partition of the session. KIP-1222: with
``IsRenewAck`` (v2) the request only renews — MaxWaitMs, MinBytes, MaxBytes and MaxRecords must be 0 (else
INVALID_REQUEST) and nothing is acquired. Otherwise it waits, as Kafka's DelayedShareFetch, until MinBytes can be
acquired, a partition has an error, or MaxWaitMs passes; MaxRecords bounds the records acquired by the whole request
(batch-optimized mode, KIP-1206's default, completes the batch it started; record-limit mode never exceeds it) and
BatchSize the length of each AcquiredRecords range. AcquisitionLockTimeoutMs tells the group's lock duration.
"""

from __future__ import annotations

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.cluster import NotLeader
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.share.manager import validated_acks
from kafkamock.broker.share.sessions import FINAL_EPOCH, INITIAL_EPOCH
from kafkamock.broker.timers import log_key

API_KEY = 78
PARTITIONED = True
RECORD_LIMIT = 1


def check_read(broker, request, topic_id) -> None:
    """READ on the topic an id names (an unknown id is left to the partition lookup): TOPIC_AUTHORIZATION_FAILED."""
    topic = broker.cluster.topics_by_id.get(topic_id)
    if topic is not None and not broker.authorize(request, AclOperation.READ, ResourceType.TOPIC, topic.name):
        raise KafkaError(ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed.")


def error_response(broker, request, code: ErrorCode, message: str | None = None) -> dict:
    return {"throttle_time_ms": 0, "error_code": code, "error_message": message, "acquisition_lock_timeout_ms": 0,
            "responses": [], "node_endpoints": []}


def handle(broker, request):
    body, version = request.body, request.version
    group_id, member_id, epoch = body.group_id, body.member_id, body.share_session_epoch
    broker.require(request, AclOperation.READ, ResourceType.GROUP, group_id)
    if not group_id:
        return error_response(broker, request, ErrorCode.INVALID_GROUP_ID, "The group id is empty.")
    if not member_id:
        return error_response(broker, request, ErrorCode.INVALID_REQUEST, "The member id is empty.")
    renew = version >= 2 and body.is_renew_ack
    if renew and (body.max_wait_ms or body.min_bytes or body.max_bytes or body.max_records):
        return error_response(broker, request, ErrorCode.INVALID_REQUEST, "A renew request (IsRenewAck) must have "
                              "MaxWaitMs, MinBytes, MaxBytes and MaxRecords set to 0.")
    has_acks = any(p.acknowledgement_batches for t in body.topics for p in t.partitions)
    if epoch == INITIAL_EPOCH and has_acks:
        return error_response(broker, request, ErrorCode.INVALID_REQUEST,
                              "Acknowledge data present in the initial share fetch request.")
    requested = [(t.topic_id, p.partition_index) for t in body.topics for p in t.partitions]
    forgotten = [(f.topic_id, index) for f in body.forgotten_topics_data for index in f.partitions]
    try:
        session = request.node.share_sessions.begin(group_id, member_id, epoch, requested, forgotten)
    except KafkaError as exc:
        return error_response(broker, request, exc.code, exc.message)
    share = broker.share
    results: dict[tuple, dict] = {}
    acked: set[tuple] = set()
    leaders: set[int] = set()

    # Acknowledgements first, so what they release can be acquired by this very fetch.
    for t in body.topics:
        for p in t.partitions:
            if p.acknowledgement_batches:
                entry = results.setdefault((t.topic_id, p.partition_index), _entry(p.partition_index))
                acked.add((t.topic_id, p.partition_index))
                try:
                    acks = validated_acks(p.acknowledgement_batches, version)
                    check_read(broker, request, t.topic_id)
                    topic, partition = _lead(broker, request, t.topic_id, p.partition_index)
                    share.acknowledge(group_id, member_id, topic, partition, acks)
                except NotLeader as exc:
                    _not_leader(entry, exc, leaders, ack=True)
                except KafkaError as exc:
                    entry.update(acknowledge_error_code=exc.code, acknowledge_error_message=exc.message)
    if epoch == FINAL_EPOCH:            # the session closes: what the member still holds there is released
        share.member_left(group_id, member_id, only=session.partitions)
    lock_ms = share.lock_duration_ms(group_id)
    fetching = [] if renew or epoch == FINAL_EPOCH else sorted(session.partitions, key=lambda k: (str(k[0]), k[1]))
    full = epoch == INITIAL_EPOCH
    whole_batches = not (version >= 2 and body.share_acquire_mode == RECORD_LIMIT)
    deadline = broker.now_ms() + max(0, body.max_wait_ms)

    def resolve(key):
        """(topic, partition) to read, or None with the partition's error filled in."""
        entry = results.setdefault(key, _entry(key[1]))
        if entry["error_code"]:
            return None
        try:
            check_read(broker, request, key[0])
            return _lead(broker, request, *key)
        except NotLeader as exc:
            _not_leader(entry, exc, leaders, ack=False)
        except KafkaError as exc:
            entry.update(error_code=exc.code, error_message=exc.message)
        return None

    def complete(final: bool):
        targets = [(key, resolve(key)) for key in fetching]
        errors = any(results[key]["error_code"] for key, _ in targets)
        if not final and body.max_wait_ms > 0 and not errors:
            ready = sum(share.available_bytes(group_id, *target, body.max_bytes) for _, target in targets if target)
            if ready < max(body.min_bytes, 1):
                return None
        records_left, bytes_left = body.max_records, body.max_bytes
        for key, target in targets:
            if target is None or records_left <= 0 or bytes_left <= 0:
                continue
            read = share.fetch(group_id, member_id, *target, max_records=records_left, max_bytes=bytes_left,
                               whole_batches=whole_batches, batch_size=body.batch_size)
            if read.acquired:
                entry = results[key]
                entry["records"] = read.records
                entry["acquired_records"] = [{"first_offset": r.first_offset, "last_offset": r.last_offset,
                                              "delivery_count": r.delivery_count} for r in read.acquired]
                records_left -= sum(r.last_offset - r.first_offset + 1 for r in read.acquired)
                bytes_left -= read.size
        return _response(results, acked, full, lock_ms, broker.cluster.leader_endpoints(leaders, request.connection.listener) if leaders else [])

    ready = complete(not fetching or body.max_wait_ms <= 0)
    if ready is not None:
        return ready
    keys = []
    for topic_id, index in fetching:
        topic = broker.cluster.topics_by_id.get(topic_id)
        if topic is not None:
            keys.append(log_key(topic.name, index))
    return broker.wait(tuple(keys), deadline, complete)


def _lead(broker, request, topic_id, index):
    topic = broker.cluster.topics_by_id.get(topic_id)
    partition = broker.lead(request, topic, index, missing=ErrorCode.UNKNOWN_TOPIC_ID)
    return topic, partition


def _entry(index: int) -> dict:
    return {"partition_index": index, "error_code": ErrorCode.NONE, "error_message": None,
            "acknowledge_error_code": ErrorCode.NONE, "acknowledge_error_message": None,
            "current_leader": {"leader_id": -1, "leader_epoch": -1}, "records": b"", "acquired_records": []}


def _not_leader(entry: dict, exc: NotLeader, leaders: set[int], *, ack: bool) -> None:
    entry["current_leader"] = {"leader_id": exc.leader_id, "leader_epoch": exc.leader_epoch}
    if exc.leader_id >= 0:
        leaders.add(exc.leader_id)
    if ack:
        entry.update(acknowledge_error_code=exc.code, acknowledge_error_message=exc.message)
    else:
        entry.update(error_code=exc.code, error_message=exc.message)


def _response(results: dict, acked: set, full: bool, lock_ms: int, endpoints: list) -> dict:
    """Every partition of an opening (full) request; afterwards those with records, acknowledgements or errors."""
    topics: dict = {}
    for key, entry in sorted(results.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        if not full and key not in acked and not (entry["records"] or entry["error_code"]):
            continue
        topics.setdefault(key[0], []).append(entry)
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "error_message": None,
            "acquisition_lock_timeout_ms": lock_ms,
            "responses": [{"topic_id": t, "partitions": ps} for t, ps in topics.items()],
            "node_endpoints": endpoints}
