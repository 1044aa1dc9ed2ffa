"""Fetch (1): whole batches from the fetch offset, long-poll on MaxWaitMs/MinBytes, KIP-227 fetch sessions.

Sessions (each node keeps its own): epoch 0 opens a session holding the requested partitions; later requests
(epoch n) add, update (``fetch_offset``…) or forget partitions, and the response lists only the partitions with
something new (records, a changed high watermark / log start offset, or an error). Epoch -1 is a sessionless full
fetch (and closes the session it names).

Waiting, as Kafka's DelayedFetch: the answer goes at once when MaxWaitMs is 0, when at least MinBytes are there
(MinBytes 0: always), or when a partition has an error; otherwise the request waits on its partitions' logs and
is answered when an append brings enough bytes, or at MaxWaitMs. A partition this node does not lead is
NOT_LEADER_OR_FOLLOWER (or FENCED_LEADER_EPOCH) with the current leader (v12+) and its address (v16+, KIP-951).
Fetch v4-v9 cannot carry zstd batches: such a read is UNSUPPORTED_COMPRESSION_TYPE, as in Kafka. A consumer
needs READ on each topic of the session's partitions, else TOPIC_AUTHORIZATION_FAILED for its partitions (an
unknown topic id stays UNKNOWN_TOPIC_ID, as in Kafka's handleFetchRequest).
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from kafkamock.broker import legacy, quotas
from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.cluster import NotLeader
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.fetch_sessions import FetchSession, PartitionFetch
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.broker.timers import log_key
from kafkamock.codec.messages import FetchRequest, FetchResponse
from kafkamock.records import CorruptRecordError, split_batches

if TYPE_CHECKING:
    from kafkamock.broker.cluster import Partition
    from kafkamock.broker.core import Cluster, Request
    from kafkamock.broker.outcome import Waiter
    from kafkamock.storage.segment import Buffer

API_KEY = 1
INITIAL_EPOCH = 0
FINAL_EPOCH = -1
ZERO_UUID = uuid.UUID(int=0)
# Errors KafkaApis answers itself, around the replica manager's read (FetchResponse.partitionResponse: an empty
# aborted list); the replica manager's own errors carry none.
REFUSED_BEFORE_READ = frozenset({ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_ID,
                                 ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE})


PartitionData = FetchResponse.PartitionData
Part = tuple[PartitionFetch, PartitionData]
"""A partition of the response: what was asked for, and its PartitionData."""


def _key(topic_name: str, topic_id: uuid.UUID, partition: int, by_id: bool) -> tuple[str | uuid.UUID, int]:
    return (topic_id if by_id else topic_name, partition)


def _requested(cluster: Cluster, topics: list[FetchRequest.FetchTopic], by_id: bool) -> list[PartitionFetch]:
    wanted = []
    for t in topics:
        if by_id:
            topic = cluster.metadata.topics_by_id.get(t.topic_id)
            name = topic.name if topic else ""
        else:
            name = t.topic
        for p in t.partitions:
            wanted.append(PartitionFetch(name, t.topic_id, p.partition, p.fetch_offset, p.partition_max_bytes,
                                         p.current_leader_epoch, p.log_start_offset, p.last_fetched_epoch))
    return wanted


def _forgotten(forgotten: list[FetchRequest.ForgottenTopic], by_id: bool) -> list[tuple[str | uuid.UUID, int]]:
    out: list[tuple[str | uuid.UUID, int]] = []
    for f in forgotten:
        for partition in f.partitions:
            out.append((f.topic_id if by_id else f.topic, partition))
    return out


def handle(cluster: Cluster, request: Request[FetchRequest]) -> FetchResponse | Waiter:
    body, version = request.body, request.version
    by_id = version >= 13
    if body.replica_id >= 0 or (version >= 15 and body.replica_state.replica_id >= 0):
        return _top_error(ErrorCode.NOT_LEADER_OR_FOLLOWER, 0)  # no followers in this cluster
    sessions = request.arrived_on.fetch_sessions
    session_id, epoch = (body.session_id, body.session_epoch) if version >= 7 else (0, FINAL_EPOCH)
    requested = _requested(cluster, body.topics, by_id)
    session: FetchSession | None = None
    incremental = False
    if epoch == FINAL_EPOCH:
        if session_id:
            sessions.sessions.pop(session_id, None)
        fetches = requested
    elif epoch == INITIAL_EPOCH:
        if session_id:
            sessions.sessions.pop(session_id, None)
        session = sessions.new()
        if session is None:                       # no session slots: a sessionless full fetch
            fetches = requested
        else:
            for pf in requested:
                session.partitions[_key(pf.topic, pf.topic_id, pf.partition, by_id)] = pf
            fetches = list(session.partitions.values())
    else:
        session = sessions.sessions.get(session_id)
        if session is None:
            return _top_error(ErrorCode.FETCH_SESSION_ID_NOT_FOUND, 0)
        if session.epoch != epoch:
            return _top_error(ErrorCode.INVALID_FETCH_SESSION_EPOCH, 0)
        for key in _forgotten(body.forgotten_topics_data, by_id):
            session.partitions.pop(key, None)
        for pf in requested:
            key = _key(pf.topic, pf.topic_id, pf.partition, by_id)
            old = session.partitions.get(key)
            if old is not None:
                pf.sent_high_watermark, pf.sent_log_start = old.sent_high_watermark, old.sent_log_start
            session.partitions[key] = pf
        session.epoch += 1
        incremental = True
        fetches = list(session.partitions.values())
    response_session = session.id if session is not None else 0

    read_committed = version >= 4 and body.isolation_level == 1
    max_bytes = _max_bytes(cluster, request)
    min_bytes = min(body.min_bytes, max_bytes)
    deadline = cluster.now_ms() + max(0, body.max_wait_ms)
    readable = cluster.auth.authorized(request, AclOperation.READ, ResourceType.TOPIC, [pf.topic for pf in fetches if pf.topic])

    def complete(final: bool) -> FetchResponse | None:
        parts, total, leaders = _read(cluster, request, fetches, max_bytes, read_committed, version, incremental,
                                      readable)
        if not final and body.max_wait_ms > 0 and total < min_bytes and not _has_error(parts):
            return None
        for pf, data in parts:
            # What the client now knows, so the next incremental reply can leave unchanged partitions out.
            pf.sent_high_watermark = _hw(cluster, pf)
            pf.sent_log_start = _log_start(cluster, pf)
            if incremental and data.records and session is not None:
                # Kafka's IncrementalFetchContext: a partition that returned records goes to the back of the
                # session, so the next responses give the others their turn within max_bytes.
                session.partitions.move_to_end(_key(pf.topic, pf.topic_id, pf.partition, by_id))
        response = _response(parts, response_session, by_id)
        if leaders and version >= 16:
            response.node_endpoints = _node_endpoints(cluster, leaders, request.connection.listener)
        return response

    ready = complete(False)
    if ready is not None:
        return ready
    return cluster.wait(tuple(log_key(pf.topic, pf.partition) for pf in fetches), deadline, complete)


def _partition(cluster: Cluster, pf: PartitionFetch) -> Partition | None:
    topic = cluster.metadata.topics.get(pf.topic)
    return None if topic is None else topic.partition_at(pf.partition)


def _hw(cluster: Cluster, pf: PartitionFetch) -> int | None:
    partition = _partition(cluster, pf)
    return None if partition is None else partition.log.high_watermark


def _log_start(cluster: Cluster, pf: PartitionFetch) -> int | None:
    partition = _partition(cluster, pf)
    return None if partition is None else partition.log.log_start_offset


def _has_error(parts: list[Part]) -> bool:
    return any(data.error_code for _, data in parts)


def _max_bytes(cluster: Cluster, request: Request[FetchRequest]) -> int:
    """The response's byte budget, as KafkaApis computes it: the request's max_bytes (v3+), the broker's
    ``fetch.max.bytes``, and for a consumer under a fetch quota the most its quota window holds."""
    configured: int = cluster.node_config(request)["fetch.max.bytes"]
    limit: int = min(request.body.max_bytes if request.version >= 3 else 2**31 - 1, configured)
    if request.body.replica_id < 0:
        window = cluster.quotas.max_in_window(quotas.FETCH, quotas.principal_user(request.connection.principal),
                                             request.client_id or "")
        if window is not None:
            limit = min(limit, window)
    return limit


def _read(cluster: Cluster, request: Request[FetchRequest], fetches: list[PartitionFetch], max_bytes: int,
          read_committed: bool, version: int, incremental: bool, readable: set[str]
          ) -> tuple[list[Part], int, set[int]]:
    parts: list[Part] = []
    total = 0
    leaders: set[int] = set()
    for pf in fetches:
        code = ErrorCode.NONE
        high_watermark = last_stable_offset = log_start_offset = -1
        aborted: list[FetchResponse.AbortedTransaction] | None = [] if read_committed else None
        batches: list[Buffer] = []
        diverging: FetchResponse.EpochEndOffset | None = None
        current_leader: FetchResponse.LeaderIdAndEpoch | None = None
        try:
            if pf.topic and pf.topic not in readable:
                raise KafkaError(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
            topic = cluster.metadata.topics.get(pf.topic) if pf.topic else None
            # By topic id, an unknown id is UNKNOWN_TOPIC_ID; a partition the known topic lacks is still
            # UNKNOWN_TOPIC_OR_PARTITION, as for a fetch by name (KafkaApis' metadataCache.contains).
            missing = ErrorCode.UNKNOWN_TOPIC_ID if version >= 13 and topic is None \
                else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            partition = cluster.lead(request, topic, pf.partition, pf.current_leader_epoch, missing=missing)
            plog = partition.log
            producers = partition.producers
            stable = producers.last_stable_offset(plog.high_watermark)
            high_watermark, last_stable_offset, log_start_offset = plog.high_watermark, stable, plog.log_start_offset
            if version >= 12 and pf.last_fetched_epoch >= 0:
                diverging = _diverging_epoch(partition, pf)
            if diverging is None:
                if not plog.log_start_offset <= pf.fetch_offset <= plog.log_end_offset:
                    raise KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE)
                budget = min(pf.partition_max_bytes, max_bytes - total)
                if budget > 0 or total == 0:
                    # The stored batches go out as they are: the codec splices the list into the response
                    # unjoined. read_committed stops at the last stable offset and names the aborted transactions
                    # it covers.
                    read = plog.read(pf.fetch_offset, max(budget, 0), at_least_one=total == 0,
                                     max_offset=stable if read_committed else None, one_segment=True)
                    if read_committed and read and producers.aborted:
                        aborted = [FetchResponse.AbortedTransaction(producer_id=a.producer_id,
                                                                    first_offset=a.first_offset)
                                   for a in producers.aborted_between(pf.fetch_offset, _end_offset(read, stable))]
                    if version < 10:
                        _refuse_zstd(read, version)
                    if version < 4:  # only reachable with kafkamock.legacy.protocol.enable
                        read = [legacy.down_convert(b"".join(read), legacy.fetch_magic(version))]
                    size = sum(map(len, read))
                    if size:
                        batches = read
                        total += size
        except KafkaError as exc:
            # Kafka answers an error partition without offsets (-1); one it refused before reading its log
            # (unknown, not led, not allowed) with an empty aborted list, a failed read with none.
            code = exc.code
            high_watermark = last_stable_offset = log_start_offset = -1
            aborted = [] if exc.code in REFUSED_BEFORE_READ else None
            if isinstance(exc, NotLeader) and exc.leader_id >= 0 and version >= 12:
                current_leader = FetchResponse.LeaderIdAndEpoch(leader_id=exc.leader_id, leader_epoch=exc.leader_epoch)
                leaders.add(exc.leader_id)
        if incremental and diverging is None and not (
                batches or code or pf.sent_high_watermark != high_watermark or pf.sent_log_start != log_start_offset):
            continue        # unchanged: an incremental reply leaves it out
        data = PartitionData(partition_index=pf.partition, error_code=code, high_watermark=high_watermark,
                             last_stable_offset=last_stable_offset, log_start_offset=log_start_offset,
                             aborted_transactions=aborted, preferred_read_replica=-1, records=b"")
        if batches:
            data.records = batches  # the stored batches, written back to back without a copy
        if diverging is not None:
            data.diverging_epoch = diverging
        if current_leader is not None:
            data.current_leader = current_leader
        parts.append((pf, data))
    return parts, total, leaders


def _diverging_epoch(partition: Partition, pf: PartitionFetch) -> FetchResponse.EpochEndOffset | None:
    """KIP-320 on the fetch path (Kafka's Partition.readRecords): where the client's last fetched epoch ends on this
    leader. OFFSET_OUT_OF_RANGE when the epoch is unknown here or the offset is below the log start; the diverging
    epoch when the leader's log has that epoch ending before the fetch offset (or only an older epoch)."""
    from kafkamock.broker.handlers.offset_for_leader_epoch import end_offset_for

    epoch, end_offset = end_offset_for(partition, pf.last_fetched_epoch)
    if epoch < 0 or end_offset < 0:
        raise KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE)
    if pf.fetch_offset < partition.log.log_start_offset:
        raise KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE)
    if epoch < pf.last_fetched_epoch or end_offset < pf.fetch_offset:
        return FetchResponse.EpochEndOffset(epoch=epoch, end_offset=end_offset)
    return None


def _end_offset(batches: list[Buffer], stable: int) -> int:
    """The offset after the last batch read (Kafka's upper bound for the aborted transactions to return)."""
    try:
        views, _ = split_batches(batches[-1])
    except CorruptRecordError:
        return stable
    return min(views[-1].last_offset + 1, stable) if views else stable


def _refuse_zstd(batches: list[Buffer], version: int) -> None:
    """Kafka refuses to send zstd batches to a Fetch older than v10 (KIP-110), legacy versions excepted (they
    down-convert, which answers the same)."""
    for buffer in batches:
        try:
            views, _ = split_batches(buffer)
        except CorruptRecordError:
            continue
        if any(v.magic == 2 and v.compression == "zstd" for v in views):
            raise KafkaError(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
                             f"Fetch v{version} cannot carry zstd-compressed batches (v10+ can)")


def _response(parts: list[Part], session_id: int, by_id: bool) -> FetchResponse:
    topics: list[FetchResponse.FetchableTopicResponse] = []
    partitions: list[PartitionData] = []
    last: str | uuid.UUID | None = None
    for pf, data in parts:
        key = pf.topic_id if by_id else pf.topic
        if not topics or key != last:
            partitions = []
            topics.append(FetchResponse.FetchableTopicResponse(topic=pf.topic, topic_id=pf.topic_id,
                                                               partitions=partitions))
            last = key
        partitions.append(data)
    return FetchResponse(throttle_time_ms=0, error_code=ErrorCode.NONE, session_id=session_id, responses=topics)


def _node_endpoints(cluster: Cluster, leader_ids: set[int], listener: str | None) -> list[FetchResponse.NodeEndpoint]:
    """NodeEndpoints (KIP-951) of the leaders the response names that are up, on the request's listener (as
    ``ClusterMetadata.leader_endpoints``)."""
    endpoints = []
    for node_id in sorted(leader_ids):
        node = cluster.metadata.nodes.get(node_id)
        if node is not None and node.up:
            host, port = node.address(listener)
            endpoints.append(FetchResponse.NodeEndpoint(node_id=node.node_id, host=host, port=port, rack=node.rack))
    return endpoints


def _top_error(code: ErrorCode, session_id: int) -> FetchResponse:
    return FetchResponse(throttle_time_ms=0, error_code=code, session_id=session_id, responses=[])


def error_response(cluster: Cluster, request: Request[FetchRequest], code: ErrorCode, message: str | None = None
                   ) -> FetchResponse:
    """FetchRequest.getErrorResponse: the top-level error, and before v13 every requested partition with it too
    (clients without a top-level error code read it there)."""
    body = request.body
    topics = [] if request.version >= 13 else [
        FetchResponse.FetchableTopicResponse(topic=t.topic, topic_id=t.topic_id, partitions=[
            PartitionData(partition_index=p.partition, error_code=code, high_watermark=-1, last_stable_offset=-1,
                          log_start_offset=-1, aborted_transactions=None, preferred_read_replica=-1, records=b"")
            for p in t.partitions]) for t in body.topics]
    return FetchResponse(throttle_time_ms=0, error_code=code, session_id=body.session_id, responses=topics)


HANDLER = ApiHandler(API_KEY, handle, error_response, partitioned=True)
