"""ShareFetch (78): records for a share-group member, each acquired under a lock; acknowledgements ride along.

In Kafka's order (KafkaApis.handleShareFetchRequest): a null group id or a bad member id (empty, longer than 36) is
INVALID_REQUEST, KIP-1222's renew request (IsRenewAck, v2) must have MaxWaitMs, MinBytes, MaxBytes and MaxRecords at
0 (INVALID_REQUEST); then the share session (``share/sessions.py``: epoch 0 opens, and may carry no
acknowledgements; -1 is the last request; else the next epoch), then the piggy-backed acknowledgements
(``acknowledge_partitions``: per partition INVALID_REQUEST for malformed batches, UNKNOWN_TOPIC_ID, INVALID_RECORD_STATE
and the share-partition's own refusals, in Kafka's words), then, unless the request only renews, the fetch over the
session's partitions. Errors of the whole request carry only a code, as Kafka's getErrorResponse.

The fetch waits, as Kafka's DelayedShareFetch, until MinBytes can be read for acquisition, a partition has an error,
or MaxWaitMs passes (a session naming a topic id or partition that does not exist fails the whole request with
UNKNOWN_SERVER_ERROR, as Kafka 4.3.1 does; each partition of the group "" fails to load with it). A share-partition the node has not loaded yet (the group's first fetch of it, or the first
since its group's last share session on the node ended) is loaded by the request and can be read from only once the
request waits. A later request of a session reads its partitions from partition ``epoch % n`` on (Kafka's round-robin
rotation), each partition up to an even share of MaxBytes. MaxRecords bounds the records acquired by the whole request (batch-optimized mode, KIP-1206's
default, completes the batches it started; record-limit mode never exceeds it), BatchSize groups new batches into
AcquiredRecords ranges. An opening request answers every partition read; a later one only those with records or
errors, partitions it added (once) and those it acknowledged; a closing one only its acknowledgements, and then the
session is released. AcquisitionLockTimeoutMs tells the group's lock duration.
"""

from __future__ import annotations

import uuid
from collections.abc import Container, Iterable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Protocol, TypeAlias, TypeVar

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.cluster import NotLeader
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.broker.share.manager import Ack
from kafkamock.broker.share.sessions import FINAL_EPOCH, INITIAL_EPOCH
from kafkamock.broker.timers import log_key
from kafkamock.codec.messages import (
    ShareAcknowledgeRequest,
    ShareAcknowledgeResponse,
    ShareFetchRequest,
    ShareFetchResponse,
)

if TYPE_CHECKING:
    from kafkamock.broker.cluster import Partition, Topic
    from kafkamock.broker.core import Cluster, Request
    from kafkamock.broker.outcome import Waiter
    from kafkamock.broker.share.sessions import PartitionKey, ShareSession
    from kafkamock.codec.message import RecordsValue

    ShareRequest: TypeAlias = Request[ShareFetchRequest] | Request[ShareAcknowledgeRequest]

API_KEY = 78
RECORD_LIMIT = 1
MAX_MEMBER_ID = 36
PartitionData = ShareFetchResponse.PartitionData
if TYPE_CHECKING:
    from kafkamock.broker.share.manager import Key
    from kafkamock.broker.share.partition import SharePartition

    Target: TypeAlias = tuple[Key, SharePartition, Partition]
    """A partition a fetch reads: its share-partition's key (group id, topic id, index), that share-partition and
    the topic-partition."""
# A response's NodeEndpoint: ShareFetch's or ShareAcknowledge's (the same fields).
Endpoint = TypeVar("Endpoint", ShareFetchResponse.NodeEndpoint, ShareAcknowledgeResponse.NodeEndpoint)


class AckBatch(Protocol):
    """An AcknowledgementBatch of ShareFetch or ShareAcknowledge."""

    @property
    def first_offset(self) -> int: ...
    @property
    def last_offset(self) -> int: ...
    @property
    def acknowledge_types(self) -> Sequence[int]: ...


def check_read(cluster: Cluster, request: ShareRequest, topic_id: uuid.UUID) -> None:
    """READ on the topic an id names (an unknown id is left to the partition lookup): TOPIC_AUTHORIZATION_FAILED."""
    topic = cluster.metadata.topics_by_id.get(topic_id)
    if topic is not None and not cluster.auth.authorize(request, AclOperation.READ, ResourceType.TOPIC, topic.name):
        raise KafkaError(ErrorCode.TOPIC_AUTHORIZATION_FAILED, None)


Outcome = tuple[ErrorCode, str | None, tuple[int, int] | None]
"""A partition's acknowledgement outcome: error code, message, and the current leader (id, epoch) if known."""


def acknowledge_partitions(cluster: Cluster, request: ShareRequest, group_id: str, member_id: str,
                           parts: Iterable[tuple[uuid.UUID, int, Sequence[AckBatch]]], version: int, renew: bool,
                           leaders: set[int]) -> dict[PartitionKey, Outcome]:
    """One request's acknowledgements, as KafkaApis.handleAcknowledgements (for ShareFetch and ShareAcknowledge):
    ``parts`` are (topic id, partition, AcknowledgementBatches); returns (error code, message, current leader) per
    (topic id, partition). An unknown topic id is UNKNOWN_TOPIC_ID; malformed batches INVALID_REQUEST; a partition
    the topic lacks, or whose share-partition is not loaded, UNKNOWN_TOPIC_OR_PARTITION; the share-partition's own
    refusals carry its words. Partitions without batches are answered NONE only when another partition
    acknowledged something."""
    out: dict[PartitionKey, Outcome] = {}
    empty: list[PartitionKey] = []
    interested: list[tuple[PartitionKey, Topic, list[Ack]]] = []
    for topic_id, index, batches in parts:
        key = (topic_id, index)
        topic = cluster.metadata.topics_by_id.get(topic_id)
        if topic is None:
            out[key] = (ErrorCode.UNKNOWN_TOPIC_ID, None, None)
            continue
        try:
            acks = validated_acks(batches, version, renew)
            check_read(cluster, request, topic_id)
            if topic.partition_at(index) is None:
                raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None)
            if not acks:
                empty.append(key)
                continue
            interested.append((key, topic, acks))
        except KafkaError as exc:
            out[key] = (exc.code, exc.message, None)
    for key, topic, acks in interested:
        try:
            partition = cluster.lead(request, topic, key[1], missing=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            cluster.share.acknowledge(group_id, member_id, topic, partition, acks)
            out[key] = (ErrorCode.NONE, None, None)
        except NotLeader as exc:
            out[key] = (exc.code, exc.message, (exc.leader_id, exc.leader_epoch))
            if exc.leader_id >= 0:
                leaders.add(exc.leader_id)
        except KafkaError as exc:
            out[key] = (exc.code, exc.message, None)
    if interested:
        out.update((key, (ErrorCode.NONE, None, None)) for key in empty)
    return out


def validated_acks(batches: Iterable[AckBatch], version: int, renew: bool = False) -> list[Ack]:
    """A partition's AcknowledgementBatches as ``Ack``s, checked as Kafka's KafkaApis.validateAcknowledgementBatches
    does (INVALID_REQUEST, no message): first <= last, each batch starting at or after the last offset of the one
    before, one type or one per offset, every type known at this version (RENEW, 4, only from v2: KIP-1222), and
    RENEW only in a request that says IsRenewAck."""
    highest = 4 if version >= 2 else 3
    acks: list[Ack] = []
    previous_last = -1
    for batch in batches:
        first, last, types = batch.first_offset, batch.last_offset, tuple(batch.acknowledge_types)
        if first > last or first < previous_last or not types or (len(types) > 1 and last - first != len(types) - 1) \
                or any(not 0 <= t <= highest for t in types) or (4 in types and not renew):
            raise KafkaError(ErrorCode.INVALID_REQUEST, None)
        previous_last = last
        acks.append(Ack(first, last, types))
    return acks


def node_endpoints(cluster: Cluster, request: ShareRequest, leaders: set[int], cls: type[Endpoint]) -> list[Endpoint]:
    """NodeEndpoints (KIP-951) of the leaders named that are up, on the listener the request came in on (as
    ``ClusterMetadata.leader_endpoints``)."""
    listener = request.connection.listener
    out: list[Endpoint] = []
    for node_id in sorted(leaders):
        node = cluster.metadata.nodes.get(node_id)
        if node is not None and node.up:
            host, port = node.address(listener)
            out.append(cls(node_id=node.node_id, host=host, port=port, rack=node.rack))
    return out


def error_response(cluster: Cluster, request: Request[ShareFetchRequest], code: ErrorCode, message: str | None = None
                   ) -> ShareFetchResponse:
    """ShareFetchRequest.getErrorResponse: the code alone."""
    return ShareFetchResponse(throttle_time_ms=0, error_code=code, error_message=None, acquisition_lock_timeout_ms=0,
                              responses=[], node_endpoints=[])


def renew_limits_error(body: ShareFetchRequest) -> str | None:
    """KIP-1222: a renew request reads nothing; Kafka's message names each limit that is not 0."""
    wrong = [text for value, text in ((body.max_bytes, "maxBytes"), (body.min_bytes, "minBytes"),
                                      (body.max_records, "maxRecords"), (body.max_wait_ms, "maxWaitMs")) if value]
    return "".join(f"{t} must be set to 0, " for t in wrong) + "if isRenewAck is true." if wrong else None


def handle(cluster: Cluster, request: Request[ShareFetchRequest]) -> ShareFetchResponse | Waiter:
    body, version = request.body, request.version
    group_id, member_id, epoch = body.group_id, body.member_id, body.share_session_epoch
    if group_id is None:
        return error_response(cluster, request, ErrorCode.INVALID_REQUEST)
    cluster.auth.require(request, AclOperation.READ, ResourceType.GROUP, group_id)
    if not member_id or len(member_id) > MAX_MEMBER_ID:
        return error_response(cluster, request, ErrorCode.INVALID_REQUEST)
    renew = version >= 2 and body.is_renew_ack
    if renew and renew_limits_error(body):
        return error_response(cluster, request, ErrorCode.INVALID_REQUEST)
    has_acks = any(p.acknowledgement_batches for t in body.topics for p in t.partitions)
    requested = [(t.topic_id, p.partition_index) for t in body.topics for p in t.partitions]
    forgotten = [(f.topic_id, index) for f in body.forgotten_topics_data for index in f.partitions]
    sessions = request.arrived_on.share_sessions
    try:
        if epoch == INITIAL_EPOCH:
            if has_acks:
                raise KafkaError(ErrorCode.INVALID_REQUEST, None)
            session = sessions.open(group_id, member_id, requested, request.connection.id)
        else:
            session = sessions.require(group_id, member_id, epoch)
            if epoch != FINAL_EPOCH:
                sessions.update(session, requested, forgotten)
    except KafkaError as exc:
        return error_response(cluster, request, exc.code)
    share = cluster.share
    acks: dict[PartitionKey, Outcome] = {}
    leaders: set[int] = set()

    # Acknowledgements first, so what they release can be acquired by this very fetch.
    if has_acks:
        acks = acknowledge_partitions(cluster, request, group_id, member_id, [
            (t.topic_id, p.partition_index, p.acknowledgement_batches) for t in body.topics for p in t.partitions],
            version, renew, leaders)
    lock_ms = share.lock_duration_ms(group_id)
    fetching = [] if renew or epoch == FINAL_EPOCH else rotated(list(session.partitions), epoch)
    record_limit = version >= 2 and body.share_acquire_mode == RECORD_LIMIT
    deadline = cluster.now_ms() + max(0, body.max_wait_ms)
    errors: dict[PartitionKey, PartitionData] = {}
    targets: dict[PartitionKey, tuple[Topic, Partition]] = {}
    refused: dict[uuid.UUID, KafkaError | None] = {}  # check_read's answer for each topic, asked once a request
    for key in fetching:
        topic = cluster.metadata.topics_by_id.get(key[0])
        if topic is None or topic.partition_at(key[1]) is None:
            # Kafka 4.3.1 fails the whole request while the session holds an unknown topic id or partition
            # (UNKNOWN_SERVER_ERROR, the session's epoch moved on all the same), until a request forgets it.
            return error_response(cluster, request, ErrorCode.UNKNOWN_SERVER_ERROR)
        try:
            if key[0] not in refused:
                try:
                    check_read(cluster, request, key[0])
                    refused[key[0]] = None
                except KafkaError as exc:
                    refused[key[0]] = exc
            failed = refused[key[0]]
            if failed is not None:
                raise KafkaError(failed.code, failed.message)
            if not group_id:        # Kafka's persister cannot load a share-partition of the group "": the load fails
                raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, None)
            targets[key] = (topic, cluster.lead(request, topic, key[1], missing=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
        except NotLeader as exc:
            errors[key] = _fetch_entry(key[1], exc.code, None, leader=(exc.leader_id, exc.leader_epoch))
            if exc.leader_id >= 0:
                leaders.add(exc.leader_id)
        except KafkaError as exc:
            errors[key] = _fetch_entry(key[1], exc.code, None)
    loading = {key for key, (topic, partition) in targets.items()
               if not share.load(group_id, topic, partition)}
    read_committed = share.read_committed(group_id)

    def loaded() -> list[Target]:
        """The targets whose share-partitions are loaded, each with its share-partition (looked up once)."""
        ready = [((group_id, *key), share.share_partition(group_id, topic, partition), partition)
                 for key, (topic, partition) in targets.items() if key not in loading]
        loading.clear()
        return ready

    def complete(final: bool) -> ShareFetchResponse | None:
        ready = loaded()
        if not final and body.max_wait_ms > 0 and not errors:
            wanted, available = max(body.min_bytes, 1), 0
            for _, sp, partition in ready:
                available += share.available_bytes(sp, partition, read_committed, body.max_bytes, wanted - available)
                if available >= wanted:
                    break
            else:
                return None
        return respond(ready)

    def respond(ready: list[Target]) -> ShareFetchResponse:
        results: dict[PartitionKey, PartitionData | None] = dict(errors)
        acquired: set[PartitionKey] = set()           # the partitions that return records
        records_left, bytes_left = body.max_records, body.max_bytes
        acquiring = [target for target in ready if target[1].can_acquire()]   # canAcquireRecords
        for target in acquiring:
            results[target[0][1:]] = None             # read, nothing returned (until a read below says otherwise)
        # PartitionMaxBytesStrategy UNIFORM: each partition read gets an equal share of MaxBytes; as in Kafka's
        # log read, only the first partition that returns data may exceed its share with one whole batch.
        share_bytes = body.max_bytes // len(acquiring) if acquiring else 0
        at_least_one = True
        for share_key, sp, partition in acquiring:
            read = share.fetch(share_key, sp, partition, member_id, read_committed, max_records=records_left,
                               max_bytes=max(min(share_bytes, bytes_left), 0), at_least_one=at_least_one,
                               record_limit=record_limit, batch_size=body.batch_size)
            if read.size:
                at_least_one = False
            if read.acquired:
                key = share_key[1:]
                results[key] = _fetch_entry(key[1], ErrorCode.NONE, None, records=read.records, acquired=[
                    ShareFetchResponse.AcquiredRecords(first_offset=r.first_offset, last_offset=r.last_offset,
                                                       delivery_count=r.delivery_count) for r in read.acquired])
                acquired.add(key)
                records_left -= read.count
                bytes_left -= read.size
        answer = _response(session, epoch, results, acquired, errors.keys(), acks, lock_ms,
                           node_endpoints(cluster, request, leaders, ShareFetchResponse.NodeEndpoint))
        if epoch == FINAL_EPOCH:
            share.release_session(group_id, member_id, request.arrived_on)
        return answer

    if not targets or body.max_wait_ms <= 0:
        return respond(loaded())
    waking = set(loading)
    ready = complete(False)                     # what is loaded already may answer at once
    if ready is not None:
        return ready
    keys = tuple(log_key(topic.name, partition.index) for topic, partition in targets.values())
    for key in waking:                          # loaded now: the waiting request looks at once
        topic, partition = targets[key]
        cluster.timers.schedule(("share-loaded", group_id, *key), cluster.now_ms(), partial(cluster.appended, partition))
    return cluster.wait(keys, deadline, complete)


def rotated(partitions: list[PartitionKey], epoch: int) -> list[PartitionKey]:
    """PartitionRotateStrategy ROUND_ROBIN: a later request of the session starts ``epoch % n`` partitions further
    on, so a partition that always has records cannot starve the others of the request's MaxRecords."""
    if epoch < 1 or len(partitions) < 2:
        return partitions
    at = epoch % len(partitions)
    return partitions[at:] + partitions[:at]


def _fetch_entry(index: int, code: int, message: str | None, leader: tuple[int, int] = (0, 0),
                 records: RecordsValue = b"", acquired: list[ShareFetchResponse.AcquiredRecords] | None = None
                 ) -> PartitionData:
    return PartitionData(
        partition_index=index, error_code=code, error_message=message, acknowledge_error_code=ErrorCode.NONE,
        acknowledge_error_message=None,
        current_leader=ShareFetchResponse.LeaderIdAndEpoch(leader_id=leader[0], leader_epoch=leader[1]),
        records=records, acquired_records=[] if acquired is None else acquired)


def _response(session: ShareSession, epoch: int, results: dict[PartitionKey, PartitionData | None],
              acquired: Container[PartitionKey], errors: Container[PartitionKey], acks: dict[PartitionKey, Outcome],
              lock_ms: int, endpoints: list[ShareFetchResponse.NodeEndpoint]) -> ShareFetchResponse:
    """The answer as Kafka's share fetch contexts build it: an opening request answers every partition read, a later
    one those with records (``acquired``) or errors (``errors``) and the ones added since the last answer;
    acknowledgement outcomes are merged in (a partition only acknowledged gets an entry of its own). A partition
    read without records is None in ``results``: its empty entry is made only when it is shown."""
    shown: dict[PartitionKey, PartitionData] = {}
    every = epoch == INITIAL_EPOCH or epoch == FINAL_EPOCH
    added = session.partitions                      # key -> added since the last answer (shown once)
    for key, entry in results.items():
        if not every:
            flagged = added.get(key)
            failed = bool(errors) and key in errors
            if failed:
                if flagged is not None:
                    added[key] = True                   # an error keeps it due for a showing
            elif flagged:
                added[key] = False
            if not (flagged or failed or key in acquired):
                continue
        shown[key] = entry if entry is not None else _fetch_entry(key[1], ErrorCode.NONE, None)
    for key, (code, message, leader) in acks.items():
        found = shown.get(key)
        entry = shown[key] = found if found is not None else _fetch_entry(key[1], ErrorCode.NONE, None)
        entry.acknowledge_error_code, entry.acknowledge_error_message = code, message
        if leader is not None:
            entry.current_leader = ShareFetchResponse.LeaderIdAndEpoch(leader_id=leader[0], leader_epoch=leader[1])
    topics: dict[uuid.UUID, list[PartitionData]] = {}
    for key, entry in shown.items():
        topics.setdefault(key[0], []).append(entry)
    return ShareFetchResponse(throttle_time_ms=0, error_code=ErrorCode.NONE, error_message=None,
                              acquisition_lock_timeout_ms=lock_ms, responses=[
                                  ShareFetchResponse.ShareFetchableTopicResponse(topic_id=t, partitions=ps)
                                  for t, ps in topics.items()],
                              node_endpoints=endpoints)


HANDLER = ApiHandler(API_KEY, handle, error_response, partitioned=True)
