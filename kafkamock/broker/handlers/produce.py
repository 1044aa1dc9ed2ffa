"""Produce (0): validate each batch (``log_validator``), check idempotent sequences, assign offsets by rewriting the
batch header in place, append the bytes to the partition's log. Records are decoded only where Kafka decodes them
too (a compression change, out-of-range timestamps, keys on compacted topics).

Authorization (Kafka's handleProduceRequest): a request carrying a transactional batch needs a transactional id and
WRITE on it, else every partition is TRANSACTIONAL_ID_AUTHORIZATION_FAILED (with or without an authorizer); each
topic needs WRITE, else its partitions are TOPIC_AUTHORIZATION_FAILED (checked before the topic's existence, which it
must not disclose). An idempotent producer's right was checked at InitProducerId. An acks=0 request gets no response;
if any partition of it fails, the connection is closed instead, as Kafka does, so the client learns something went
wrong. A partition this node does not lead is NOT_LEADER_OR_FOLLOWER with the
current leader and its address (KIP-951, v10+), so a client can go there without a metadata round trip.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, NamedTuple

from kafkamock.broker import legacy, log_validator
from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.cluster import NotLeader
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.features import TRANSACTION_VERSION
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.broker.outcome import Close
from kafkamock.codec.messages import ProduceRequest, ProduceResponse
from kafkamock.records import CorruptRecordError, split_batches
from kafkamock.records.layout import (
    ATTRIBUTES_OFFSET,
    LEGACY_OVERHEAD_V0,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    TRANSACTIONAL_BIT,
)

if TYPE_CHECKING:
    from kafkamock.broker.cluster import Partition, Topic
    from kafkamock.broker.core import Cluster, Request
    from kafkamock.broker.node import Node
    from kafkamock.codec.message import RecordsValue
    from kafkamock.records.view import BatchView

API_KEY = 0
# A produced batch is stored as a view of its request frame (no copy) unless the frame holds this much more than
# the batch: a stored batch must not keep a large multi-partition request alive.
FRAME_SURPLUS_LIMIT = 4096
# A batch smaller than this is copied all the same: the view alone (a memoryview is 184 bytes) and the frame it keeps
# alive take more memory than the copy (10,000 one-record batches: 3.7 MB of views and frames, 1.4 MB of copies).
VIEW_MIN_BYTES = 1024
RETRIABLE_VERIFY_ERRORS = frozenset({ErrorCode.CONCURRENT_TRANSACTIONS, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
                                     ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR})
IMPLICIT_ADD_VERSION = 12       # Produce v12+: the client relies on KIP-890 part 2's implicit AddPartitionsToTxn
TRANSACTION_ABORTABLE_VERSION = 11      # Produce v11+: the client knows TRANSACTION_ABORTABLE (KIP-1050)
log = logging.getLogger("kafkamock.broker.produce")
PartitionResult = ProduceResponse.PartitionProduceResponse


# Errors Kafka answers without the log start offset (ReplicaManager.appendRecordsToLeader's known exceptions, and
# what KafkaApis refuses before the log is reached); every other append error carries it.
NO_LOG_START = frozenset({
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.MESSAGE_TOO_LARGE,
    ErrorCode.RECORD_LIST_TOO_LARGE, ErrorCode.CORRUPT_MESSAGE, ErrorCode.KAFKA_STORAGE_ERROR,
    ErrorCode.UNKNOWN_TOPIC_ID, ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.INVALID_REQUIRED_ACKS,
    ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.UNKNOWN_LEADER_EPOCH,
    ErrorCode.INVALID_TOPIC_EXCEPTION})


def _partition_result(index: int, code: ErrorCode = ErrorCode.NONE, base_offset: int = -1,
                      log_append_time: int = -1, log_start_offset: int = -1, message: str | None = None,
                      record_errors: list[tuple[int, str]] | None = None) -> PartitionResult:
    return PartitionResult(index=index, error_code=code, base_offset=base_offset, log_append_time_ms=log_append_time,
                           log_start_offset=log_start_offset, error_message=message,
                           record_errors=[ProduceResponse.BatchIndexAndErrorMessage(batch_index=i,
                                                                                    batch_index_error_message=m)
                                          for i, m in record_errors or ()])


def _failure(exc: KafkaError, index: int, partition: Partition | None) -> PartitionResult:
    """A refused partition as Kafka answers it: a message only with KIP-467 record errors and the transaction
    verification's own (Kafka's other errors carry none: LogAppendResult.errorMessage), the log start offset unless
    Kafka never reached the log."""
    if isinstance(exc, log_validator.RecordValidationError):    # (raised by ``append``: the partition is known)
        return _partition_result(index, exc.code, message=exc.message, record_errors=exc.record_errors,
                                 log_start_offset=partition.log.log_start_offset if partition is not None else -1)
    if isinstance(exc, VerificationError):
        return _partition_result(index, exc.code, message=exc.message)
    if isinstance(exc, AppendRefused):
        return _partition_result(index, exc.code, log_start_offset=exc.log_start_offset)
    if partition is None or exc.code in NO_LOG_START or isinstance(exc, log_validator.RequestRecordsError):
        return _partition_result(index, exc.code)          # Kafka never reached the log
    return _partition_result(index, exc.code, log_start_offset=partition.log.log_start_offset)


def _own_buffer(records: RecordsValue) -> bytearray | memoryview:
    """A writable buffer of the batch to patch and keep: the frame's own bytes when the batch is large and most of it."""
    if type(records) is memoryview and not records.readonly:
        frame = records.obj
        if records.nbytes >= VIEW_MIN_BYTES and len(frame) - records.nbytes <= FRAME_SURPLUS_LIMIT:  # type: ignore[arg-type]
            return records
        return bytearray(records)
    if isinstance(records, bytearray):
        return records
    if isinstance(records, (bytes, memoryview)):
        return bytearray(records)
    return bytearray(b"".join(records))   # stored batches, as an encoder takes them (a decoded request has a buffer)


class VerificationError(KafkaError):
    """The transaction verification refused the batch before the log (Kafka's ReplicaManager answers it with its
    message, if any, and no log start offset)."""


class AppendRefused(KafkaError):
    """An error the log finds while appending (Kafka's ProducerAppendInfo: epoch, sequence, transaction state): the
    answer carries the log start offset and no message, as Kafka's does; the detail is for the log only."""

    def __init__(self, code: ErrorCode, log_start_offset: int, detail: str):
        super().__init__(code)
        self.log_start_offset, self.detail = log_start_offset, detail


def _verify_transaction(cluster: Cluster, transactional_id: str, topic: Topic, partition: Partition, batch: BatchView,
                        version: int | None) -> bool:
    """A transaction's first batch on a partition needs the partition in the producer's transaction (KIP-890 part 1,
    ``transaction.partition.verification.enable``); a Produce v12+ on ``transaction.version`` 2 adds it itself
    (KIP-890 part 2: such clients send no AddPartitionsToTxn). Kafka's ReplicaManager: an epoch older than the
    partition's is refused first, a batch of a transaction already open here (same epoch) needs nothing, and the
    coordinator's answers are translated for producers: PRODUCER_FENCED -> INVALID_PRODUCER_EPOCH, a partition
    not in the transaction TRANSACTION_ABORTABLE (v11+) or INVALID_TXN_STATE, coordinator trouble
    NOT_ENOUGH_REPLICAS (which every client retries without a metadata refresh). True when this Produce added the
    partition itself."""
    version = version or 0
    coordinator = cluster.transactions
    adds = version >= IMPLICIT_ADD_VERSION and cluster.features.level(TRANSACTION_VERSION) >= 2
    if not adds and not cluster.config["transaction.partition.verification.enable"]:
        return False
    entry = partition.producers.entries.get(batch.producer_id)
    if entry is not None and batch.producer_epoch < entry.epoch:
        raise VerificationError(ErrorCode.INVALID_PRODUCER_EPOCH)
    if partition.producers.has_open_transaction(batch.producer_id, batch.producer_epoch):
        return False
    if adds:
        code = coordinator.add_partitions(transactional_id, batch.producer_id, batch.producer_epoch,
                                          [(topic.name, partition.index)], client_version=2)
    else:
        code = coordinator.verify_partition(transactional_id, batch.producer_id, batch.producer_epoch, topic.name,
                                            partition.index)
    if code == ErrorCode.PRODUCER_FENCED:
        raise VerificationError(ErrorCode.INVALID_PRODUCER_EPOCH)
    if code == ErrorCode.TRANSACTION_ABORTABLE and version < TRANSACTION_ABORTABLE_VERSION:
        code = ErrorCode.INVALID_TXN_STATE
    if code == ErrorCode.INVALID_TXN_STATE:
        raise VerificationError(code, "Partition was not added to the transaction")
    if code in RETRIABLE_VERIFY_ERRORS and (code != ErrorCode.CONCURRENT_TRANSACTIONS or not adds):
        raise VerificationError(ErrorCode.NOT_ENOUGH_REPLICAS, "Unable to verify the partition has been added to "
                                f"the transaction. Underlying error: {code.name}")
    if code:
        raise VerificationError(code)
    return adds


class ProduceSettings(NamedTuple):
    """The topic configs every produced batch is checked against, read once per topic and node."""

    max_message_bytes: int
    min_insync_replicas: int
    log_append_time: bool                  # message.timestamp.type=LogAppendTime
    timestamp_before_max_ms: int
    timestamp_after_max_ms: int
    need_keys: bool                        # cleanup.policy has compact
    compression_type: str


def _settings(cluster: Cluster, topic: Topic, node: Node) -> ProduceSettings:
    def config(name: str) -> Any:       # a topic config's value: its type is the config's
        return cluster.topic_config(topic, name, node)

    return ProduceSettings(
        config("max.message.bytes"), config("min.insync.replicas"),
        config("message.timestamp.type") == "LogAppendTime", config("message.timestamp.before.max.ms"),
        config("message.timestamp.after.max.ms"), "compact" in str(config("cleanup.policy")).split(","),
        config("compression.type"))


def append(cluster: Cluster, topic: Topic, partition: Partition, records: RecordsValue | None,
           version: int | None = None, *, acks: int = -1, node: Node | None = None,
           transactional_id: str | None = None) -> PartitionResult:
    """Validate and append one partition's records; the per-partition response. ``version`` is the Produce
    request's version, when the records came from one (zstd needs v7+)."""
    index = partition.index
    plog = partition.log
    if records is None:
        raise log_validator.RequestRecordsError(ErrorCode.INVALID_RECORD, "records are null")
    buffer = _own_buffer(records)
    try:
        views, partial = split_batches(buffer)
    except CorruptRecordError as exc:
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, str(exc)) from None
    if len(views) != 1:
        # As ProduceRequest.validateRecords: none (a batch longer than the bytes sent is no batch to Kafka's
        # iterator) or more than one is INVALID_RECORD.
        raise log_validator.RequestRecordsError(ErrorCode.INVALID_RECORD,
                                                "a produce request needs exactly one whole record batch per partition")
    (batch,) = views

    node = node or cluster.first_node()
    settings = cluster.derived_config("produce settings", topic, node, lambda: _settings(cluster, topic, node))
    log_validator.check_batch(batch, version, settings.max_message_bytes)
    if partial:
        # Bytes after the batch that are not a whole batch: Kafka's iterator stops before them; kafkamock does not
        # store them with the batch.
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, f"{partial} bytes after the batch are not a record batch")
    if acks == -1 and len(partition.isr) < settings.min_insync_replicas:
        raise KafkaError(ErrorCode.NOT_ENOUGH_REPLICAS,
                         f"The size of the current ISR {partition.isr} is insufficient to satisfy the min.isr "
                         f"requirement of {settings.min_insync_replicas} for partition {topic.name}-{index}")
    now = cluster.now_ms()
    log_append = settings.log_append_time
    log_validator.check_records(batch, now=now, before_ms=settings.timestamp_before_max_ms,
                                after_ms=settings.timestamp_after_max_ms, check_times=not log_append,
                                need_keys=settings.need_keys, topic_partition=f"{topic.name}-{index}")
    producer_id = batch.producer_id
    transactional = batch.is_transactional
    added = transactional and transactional_id is not None and _verify_transaction(
        cluster, transactional_id, topic, partition, batch, version)
    if producer_id >= 0:
        try:
            duplicate = partition.producers.check(producer_id, batch.producer_epoch, batch.base_sequence,
                                                  batch.last_sequence, transactional, added)
        except KafkaError as exc:
            raise AppendRefused(exc.code, plog.log_start_offset, str(exc)) from None
        if duplicate is not None:
            # A retry of a batch already written: success, with the offsets it got the first time.
            # (Kafka answers the batch's stored timestamp as its append time, whatever the timestamp type.)
            return _partition_result(index, base_offset=duplicate.base_offset, log_append_time=duplicate.timestamp,
                                     log_start_offset=plog.log_start_offset)
    codec = log_validator.target_codec(settings.compression_type, batch)
    if codec != batch.compression:
        level = cluster.topic_config(topic, f"compression.{codec}.level", node) if codec in ("gzip", "lz4", "zstd") \
            else None
        buffer = log_validator.recompress(batch, codec, level)
        (batch,), _ = split_batches(buffer)
    base_offset = plog.log_end_offset
    batch.set_base_offset(base_offset)
    batch.set_partition_leader_epoch(partition.leader_epoch)
    append_time = -1
    if log_append:
        append_time = now
        batch.set_log_append_time(now)
    last_offset = base_offset + batch.last_offset_delta
    plog.append(buffer, base_offset, last_offset, batch.max_timestamp, now, partition.leader_epoch,
                batch.record_count)  # the log owns the buffer now
    if producer_id >= 0:
        partition.producers.replay(buffer, base_offset)      # the stored header, as log recovery replays it
    return _partition_result(index, base_offset=base_offset, log_append_time=append_time,
                             log_start_offset=plog.log_start_offset)


RECORD_OVERHEAD_V0 = LEGACY_OVERHEAD_V0 - LOG_OVERHEAD   # Kafka's LegacyRecord.RECORD_OVERHEAD_V0: the smallest size


class MalformedBatches(KafkaError):
    """A batch header Kafka cannot even walk (its ByteBufferLogInputStream): the whole request fails."""


def _has_transactional_records(body: ProduceRequest) -> bool:
    """Kafka's RequestUtils.hasTransactionalRecords: whether the first batch of some partition is transactional,
    partitions in order, stopping at the first that is. Reading a first batch's header walks it as Kafka's
    ByteBufferLogInputStream does, so a size below a message's or an unknown magic fails the whole request with
    CORRUPT_MESSAGE and Kafka's message (MalformedBatches)."""
    for topic_data in body.topic_data:
        for pd in topic_data.partition_data:
            records: bytes | bytearray | memoryview | None = pd.records  # type: ignore[assignment]  # (decoded)
            if records is None or len(records) < LOG_OVERHEAD:
                continue
            size = int.from_bytes(records[8:12], "big", signed=True)
            if size < RECORD_OVERHEAD_V0:
                raise MalformedBatches(ErrorCode.CORRUPT_MESSAGE, f"Record size {size} is less than the minimum "
                                                                  f"record overhead ({RECORD_OVERHEAD_V0})")
            if len(records) <= MAGIC_OFFSET:
                continue
            magic = int.from_bytes(records[MAGIC_OFFSET:MAGIC_OFFSET + 1], "big", signed=True)
            if not 0 <= magic <= 2:
                raise MalformedBatches(ErrorCode.CORRUPT_MESSAGE, f"Invalid magic found in record: {magic}")
            if len(records) < LOG_OVERHEAD + size:
                continue                       # a partial first batch: no batch to Kafka's iterator
            if magic == 2 and records[ATTRIBUTES_OFFSET + 1] & TRANSACTIONAL_BIT:
                return True
    return False


def _endpoints(cluster: Cluster, request: Request[ProduceRequest], leaders: set[int]
               ) -> list[ProduceResponse.NodeEndpoint]:
    return [ProduceResponse.NodeEndpoint(**endpoint)
            for endpoint in cluster.metadata.leader_endpoints(leaders, request.connection.listener)]


def handle(cluster: Cluster, request: Request[ProduceRequest]) -> ProduceResponse | Close | None:
    body, version = request.body, request.version
    acks = body.acks
    node = request.node
    try:
        transactional = _has_transactional_records(body)
    except MalformedBatches as exc:
        if acks == 0:
            return Close(f"acks=0 produce failed: {exc.message}")
        return error_response(cluster, request, exc.code, exc.message)
    if transactional and (
            body.transactional_id is None or not cluster.auth.authorize(request, AclOperation.WRITE,
                                                                  ResourceType.TRANSACTIONAL_ID,
                                                                  body.transactional_id)):
        if acks == 0:
            return Close("acks=0 produce failed: TRANSACTIONAL_ID_AUTHORIZATION_FAILED")
        return error_response(cluster, request, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    topics = [cluster.metadata.topics_by_id.get(t.topic_id) if version >= 13 else None for t in body.topic_data]
    writable = cluster.auth.authorized(request, AclOperation.WRITE, ResourceType.TOPIC,
                                 [t.name if t is not None else td.name for t, td in zip(topics, body.topic_data, strict=True)])
    responses: list[ProduceResponse.TopicProduceResponse] = []
    failed = None
    leaders: set[int] = set()
    for topic_data, by_id in zip(body.topic_data, topics, strict=True):
        if version >= 13:
            topic, name = by_id, by_id.name if by_id is not None else None
            missing = ErrorCode.UNKNOWN_TOPIC_ID
        else:
            topic, name = cluster.metadata.topics.get(topic_data.name), topic_data.name
            missing = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        results: list[PartitionResult] = []
        for pd in topic_data.partition_data:
            partition = None
            try:
                if name is not None and name not in writable:
                    raise KafkaError(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                if acks not in (-1, 0, 1):
                    raise KafkaError(ErrorCode.INVALID_REQUIRED_ACKS, f"acks={acks}")
                if topic is None:               # what Cluster.lead answers for a topic the cluster does not have
                    raise KafkaError(missing)
                if topic.internal and topic.partition_at(pd.index) is not None:
                    # ReplicaManager.appendToLocalLog: only the coordinators write there (no message, no offsets)
                    raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, f"Cannot append to internal topic {name}")
                partition = cluster.lead(request, topic, pd.index, missing=missing)
                records = pd.records
                if version < 3:  # only reachable with kafkamock.legacy.protocol.enable
                    stored_in = cluster.metadata.topics[partition.topic]     # (lead found it)
                    if records is not None and not isinstance(records, (bytes, bytearray, memoryview)):
                        # stored batches (the encoder's form); a decoded request has a buffer
                        records = b"".join(records)
                    records = legacy.up_convert(records, cluster.topic_config(stored_in, "compression.type", node))
                result = append(cluster, topic, partition, records, version, acks=acks, node=node,
                                transactional_id=body.transactional_id)
                if result.base_offset >= 0:
                    cluster.appended(partition)
            except KafkaError as exc:
                if exc.code in (ErrorCode.CORRUPT_MESSAGE, ErrorCode.INVALID_RECORD):
                    # The message, not the exception: its traceback pins the frames that decompressed the batch
                    # (up to 64 MB of a bomb) for as long as any handler keeps the log record.
                    log.warning("produce to %s-%d from %s refused: %s", topic_data.name, pd.index,
                                request.client_id, str(exc))
                result = _failure(exc, pd.index, partition)
                if isinstance(exc, NotLeader) and exc.leader_id >= 0 and version >= 10:
                    result.current_leader = ProduceResponse.LeaderIdAndEpoch(leader_id=exc.leader_id,
                                                                             leader_epoch=exc.leader_epoch)
                    leaders.add(exc.leader_id)
                failed = failed or (exc.detail if isinstance(exc, AppendRefused) else str(exc))
            results.append(result)
        responses.append(ProduceResponse.TopicProduceResponse(name=topic_data.name, topic_id=topic_data.topic_id,
                                                              partition_responses=results))
    if acks == 0:
        # Kafka closes the connection of an acks=0 producer whose request failed: it gets no response to read
        # the error from, and a closed connection makes it refresh its metadata.
        return Close(f"acks=0 produce failed: {failed}") if failed is not None else None
    response = ProduceResponse(responses=responses, throttle_time_ms=0)
    if leaders and version >= 10:
        response.node_endpoints = _endpoints(cluster, request, leaders)
    return response


def error_response(cluster: Cluster, request: Request[ProduceRequest], code: ErrorCode, message: str | None = None
                   ) -> ProduceResponse:
    """Every partition of the request answered with ``code`` (ProduceRequest.getErrorResponse, which carries the
    exception's message)."""
    return ProduceResponse(throttle_time_ms=0, responses=[
        ProduceResponse.TopicProduceResponse(name=t.name, topic_id=t.topic_id, partition_responses=[
            _partition_result(pd.index, code, message=message) for pd in t.partition_data])
        for t in request.body.topic_data])


HANDLER = ApiHandler(API_KEY, handle, error_response, partitioned=True)
