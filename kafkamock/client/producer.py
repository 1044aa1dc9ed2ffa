"""A Kafka producer on trio, behaving like Kafka 4.3's Java ``KafkaProducer``: idempotent by default,
transactional with a ``transactional.id``, and recovering from lost producer state by bumping its epoch (KIP-360).

``send`` appends a record to its partition's open batch and returns a handle at once; a background sender task
(Java's ``Sender``) drains a batch when it holds ``batch.size`` bytes, when ``linger.ms`` has passed, or on
``flush``, and sends the drained batches in one Produce request per leader. Sequence numbers are given when a batch
is drained, one batch per partition is in flight at a time, so a retry can neither reorder nor duplicate.

Errors follow Java's ``Sender`` and ``TransactionManager``:
- retriable errors (NOT_LEADER_OR_FOLLOWER, a dropped connection...) resend the same bytes after ``retry.backoff.ms``
  until ``retries`` or ``delivery.timeout.ms`` runs out; the broker answers a resent batch it already has with
  its first offsets.
- UNKNOWN_PRODUCER_ID or OUT_OF_ORDER_SEQUENCE_NUMBER on an idempotent producer: the producer asks for a new epoch
  with InitProducerId v3+ carrying its current id and epoch, restarts every sequence at 0 and resends the failed
  batches with the new epoch; callers never see the error.
- in a transaction the same errors, and any error that fails a batch, move to ABORTABLE_ERROR: the caller calls
  ``abort_transaction``, which ends the transaction and then bumps the epoch the same way, and goes on.
- PRODUCER_FENCED (also INVALID_PRODUCER_EPOCH on a transactional producer), authorization failures and
  UNSUPPORTED_VERSION move to FATAL_ERROR: every later call raises.

Bulk writers (the Spark sink) call ``send_all``: every record sent, flushed, and the first failure raised.
"""

from __future__ import annotations

import math
import random
import time
from collections import defaultdict, deque
from collections.abc import Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import trio

from kafkamock import records
from kafkamock.client.cluster import COORDINATOR_MOVED, TRANSACTION, KafkaClient
from kafkamock.client.config import PRODUCER, parse
from kafkamock.client.connection import KafkaConnection, KafkaConnectionError
from kafkamock.client.errors import KafkaError
from kafkamock.client.offsets import partition_counts
from kafkamock.client.security import security_from
from kafkamock.client.transactions import (
    ConsumerGroupMetadata,
    IllegalStateError,
    State,
    TransactionAbortedError,
    TransactionState,
)
from kafkamock.client.types import OffsetAndMetadata, TopicPartition
from kafkamock.errors import RETRIABLE, ErrorCode
from kafkamock.records.partitioner import partition_for_key
from kafkamock.records.v2 import encode_v2_region

__all__ = ["ConsumerGroupMetadata", "FutureRecordMetadata", "OutgoingRecord", "Producer", "RecordMetadata"]

E = ErrorCode
RECORD_OVERHEAD = 24            # a v2 record's varints and attributes, roughly, for sizing batches
BATCH_OVERHEAD = 61             # a v2 batch header
NO_PRODUCER_ID, NO_EPOCH = -1, -1
MAX_EPOCH = 32767
IDEMPOTENT_TXN_TIMEOUT_MS = 2_147_483_647      # what Java's idempotent producer sends in InitProducerId
TV1_PRODUCE_MAX, TV1_END_TXN_MAX, TV1_TXN_OFFSET_COMMIT_MAX = 11, 4, 4   # KIP-890 part 2 needs the versions above
CLIENT_ADD_PARTITIONS_MAX = 3   # AddPartitionsToTxn v4+ is the brokers' batched (verify-only) form
TXN_RETRIABLE = RETRIABLE | {E.CONCURRENT_TRANSACTIONS}
METADATA_ERRORS = frozenset({E.UNKNOWN_TOPIC_OR_PARTITION, E.LEADER_NOT_AVAILABLE, E.NOT_LEADER_OR_FOLLOWER,
                             E.FENCED_LEADER_EPOCH, E.UNKNOWN_LEADER_EPOCH, E.NETWORK_EXCEPTION,
                             E.REQUEST_TIMED_OUT})
FATAL_PRODUCE = frozenset({E.PRODUCER_FENCED, E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, E.CLUSTER_AUTHORIZATION_FAILED,
                           E.UNSUPPORTED_VERSION, E.UNSUPPORTED_FOR_MESSAGE_FORMAT})


@dataclass(slots=True)
class OutgoingRecord:
    """A record for ``send_all`` (key and value already bytes)."""

    topic: str
    key: bytes | None
    value: bytes | None
    headers: Sequence[tuple[str, bytes | None]] = ()
    partition: int | None = None
    timestamp: int | None = None


@dataclass(frozen=True, slots=True)
class RecordMetadata:
    """Where a record was written (Java's RecordMetadata): offset -1 when acks=0, timestamp the broker's
    append time on a LogAppendTime topic, else the record's own."""

    topic: str
    partition: int
    offset: int
    timestamp: int


class FutureRecordMetadata:
    """What ``send`` returns: ``await handle`` (or ``await handle.get()``) gives the RecordMetadata or raises the
    record's error; ``done()`` and ``result()`` read it without waiting (after ``flush``, say)."""

    __slots__ = ("_batch", "_index")

    def __init__(self, batch: _Batch, index: int):
        self._batch, self._index = batch, index

    def done(self) -> bool:
        return self._batch.finished.is_set()

    def result(self) -> RecordMetadata:
        batch = self._batch
        if not batch.finished.is_set():
            raise IllegalStateError("the record is not acknowledged yet: await it, or call flush() first")
        if batch.error is not None:
            raise batch.error
        offset = -1 if batch.base_offset < 0 else batch.base_offset + self._index
        timestamp = batch.log_append_time if batch.log_append_time >= 0 else batch.records[self._index]["timestamp"]
        return RecordMetadata(batch.tp.topic, batch.tp.partition, offset, timestamp)

    async def get(self) -> RecordMetadata:
        await self._batch.finished.wait()
        return self.result()

    def __await__(self) -> Generator[Any, None, RecordMetadata]:
        return self.get().__await__()


@dataclass(eq=False, slots=True)
class _Batch:
    tp: TopicPartition
    created: float                                  # trio time
    records: Any = field(default_factory=list)      # dicts, or an _Encoded's stand-ins
    size: int = BATCH_OVERHEAD
    data: bytes | None = None                       # sealed: the bytes every (re)send carries
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_EPOCH
    base_sequence: int = -1
    attempts: int = 0
    retry_at: float = 0.0
    finished: trio.Event = field(default_factory=trio.Event)
    error: BaseException | None = None
    base_offset: int = -1
    log_append_time: int = -1
    encoded: _Encoded | None = None                 # records given already encoded (send_encoded)

    @property
    def last_sequence(self) -> int:
        return (self.base_sequence + len(self.records) - 1) & 0x7FFFFFFF


@dataclass(frozen=True, slots=True)
class _Encoded:
    """Records handed over encoded: a v2 batch's records region, all stamped with ``timestamp``."""

    region: Any
    count: int
    timestamp: int

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index: int) -> dict:
        if not -self.count <= index < self.count:
            raise IndexError(index)
        return {"timestamp": self.timestamp}


class Producer:
    """``async with Producer({"bootstrap.servers": "127.0.0.1:9092"}) as producer:`` then ``await producer.send(
    "topic", b"value")``; the Java client's settings (``kafkamock.client.config.PRODUCER``)."""

    def __init__(self, config: Mapping[str, Any] | None = None):
        given = dict(config or {})
        s = self.settings = parse(PRODUCER, given, "producer")
        self.acks = {"all": -1, "-1": -1, "1": 1, "0": 0}[s["acks"]]
        self.transactional_id: str | None = s["transactional.id"]
        explicit = given.get("enable.idempotence") is not None
        idempotent = s["enable.idempotence"]
        if self.transactional_id is not None and explicit and not idempotent:
            raise ValueError("producer: cannot set a transactional.id without enable.idempotence")
        if idempotent and self.acks != -1:
            if explicit or self.transactional_id is not None:
                raise ValueError("producer: must set acks to all in order to use the idempotent producer")
            idempotent = False      # Java: idempotence is on by default only where the other settings allow it
        if idempotent and s["retries"] == 0:
            if explicit or self.transactional_id is not None:
                raise ValueError("producer: must set retries to non-zero when using the idempotent producer")
            idempotent = False
        self.idempotent = idempotent
        self.compression = s["compression.type"]
        self.batch_size = s["batch.size"]
        self.linger_s = s["linger.ms"] / 1000
        self.max_request_size = s["max.request.size"]
        self.retries = s["retries"]
        self.retry_backoff_s = s["retry.backoff.ms"] / 1000
        self.request_timeout_s = s["request.timeout.ms"] / 1000
        self.delivery_timeout_s = s["delivery.timeout.ms"] / 1000
        self.max_block_s = s["max.block.ms"] / 1000
        self.max_in_flight = s["max.in.flight.requests.per.connection"]
        self.metadata_max_age_s = s["metadata.max.age.ms"] / 1000
        self.buffer_memory = s["buffer.memory"]
        self.key_serializer, self.value_serializer = s["key.serializer"], s["value.serializer"]
        self.producer_id, self.producer_epoch = NO_PRODUCER_ID, NO_EPOCH
        self.transaction_v2 = False          # KIP-890 part 2, from the finalized feature transaction.version
        self._txn = TransactionState()
        self._client: KafkaClient | None = None
        self._nursery: trio.Nursery | None = None
        self._nursery_cm: Any = None
        self._closed = False
        self._stopping = False
        self._queues: dict[TopicPartition, deque[_Batch]] = {}
        self._in_flight: dict[TopicPartition, _Batch] = {}
        self._requests_per_leader: dict[int, int] = defaultdict(int)
        self._incomplete: set[_Batch] = set()
        self._buffered = 0
        self._flushing = 0
        self._wakeup = trio.Event()
        self._progress = trio.Event()
        self._next_seq: dict[TopicPartition, int] = {}
        self._last_acked_seq: dict[TopicPartition, int] = {}
        self._last_acked_offset: dict[TopicPartition, int] = {}
        self._bump_partitions: set[TopicPartition] = set()      # idempotent: an epoch bump is due for these
        self._epoch_bump_required = False                         # transactional: bump when the abort is done
        self._needs_producer_id = self.idempotent and self.transactional_id is None
        self._init_error_until = 0.0
        self._txn_partitions: set[TopicPartition] = set()
        self._txn_started = False
        self._partition_counts: dict[str, tuple[int, float]] = {}
        self._sticky: dict[str, int] = {}
        self._metadata_stale: set[str] = set()

    # -- life cycle -----------------------------------------------------------------------------------------------

    async def __aenter__(self) -> Producer:
        s = self.settings
        self._client = KafkaClient(s["bootstrap.servers"], client_id=s["client.id"], security=security_from(s),
                                   retry_backoff_s=self.retry_backoff_s, api_timeout_s=self.max_block_s)
        await self._client.__aenter__()
        self._nursery_cm = trio.open_nursery()
        self._nursery = await self._nursery_cm.__aenter__()
        self._nursery.start_soon(self._sender_loop)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self, timeout: float | None = None) -> None:
        """Send what is buffered (waiting up to ``timeout`` seconds, forever when None), abort an open transaction
        as Java does at shutdown, and release the connections. Records still unsent after ``timeout`` fail."""
        if self._closed:
            return
        self._closed = True
        try:
            with trio.move_on_after(math.inf if timeout is None else timeout):
                if self._txn.state in (State.IN_TRANSACTION, State.ABORTABLE_ERROR):
                    try:
                        await self.abort_transaction()
                    except (KafkaError, IllegalStateError, KafkaConnectionError):
                        pass
                await self._wait_until_sent()
        finally:
            for batch in list(self._incomplete):
                self._fail_batch(batch, KafkaError(E.REQUEST_TIMED_OUT,
                                                   "the producer was closed before the record was sent",
                                                   what=f"send to {batch.tp}", fatal=False))
            self._stopping = True
            if self._nursery is not None:
                self._nursery.cancel_scope.cancel()
                await self._nursery_cm.__aexit__(None, None, None)
                self._nursery = None
            if self._client is not None:
                await self._client.__aexit__(None, None, None)

    # -- sending --------------------------------------------------------------------------------------------------

    def _check_can_send(self) -> None:
        """What Java's send checks first: the producer is open, a transactional one is in a transaction (after
        init_transactions), and no fatal error failed it."""
        self._check_open("send")
        if self.transactional_id is not None:
            self._txn.fail_if_error("send")
            if self.producer_id == NO_PRODUCER_ID:
                raise IllegalStateError("Cannot perform a transactional send before completing a call to "
                                        "init_transactions")
            self._txn.require("send", State.IN_TRANSACTION)
        elif self._txn.state is State.FATAL_ERROR:
            raise self._txn.last_error or IllegalStateError("the producer failed")

    async def send(self, topic: str, value: Any = None, key: Any = None, partition: int | None = None,
                   timestamp: int | None = None, headers: Sequence[tuple[str, bytes | None]] | None = None
                   ) -> FutureRecordMetadata:
        """Append a record to its partition's batch; the handle resolves once the broker acknowledged it."""
        self._check_can_send()
        if self.key_serializer is not None and key is not None:
            key = self.key_serializer(key)
        if self.value_serializer is not None and value is not None:
            value = self.value_serializer(value)
        return await self._append(topic, key, value, partition, timestamp, list(headers or ()))

    async def send_all(self, outgoing: Iterable[OutgoingRecord]) -> dict[tuple[str, int], list[int]]:
        """Send every record and flush; raises the first record's error, else returns {(topic, partition): [base
        offset of each batch]} (the Spark sink's bulk path)."""
        handles = []
        for rec in outgoing:
            handles.append(await self.send(rec.topic, rec.value, rec.key, rec.partition, rec.timestamp,
                                           rec.headers))
        await self.flush()
        results: dict[tuple[str, int], list[int]] = defaultdict(list)
        seen: set[int] = set()
        for handle in handles:
            batch = handle._batch
            if batch.error is not None:
                raise batch.error
            if id(batch) not in seen:
                seen.add(id(batch))
                results[(batch.tp.topic, batch.tp.partition)].append(batch.base_offset)
        return dict(results)

    async def send_encoded(self, topic: str, partition: int, region: bytes | memoryview, count: int,
                           timestamp: int | None = None) -> FutureRecordMetadata:
        """Append ``count`` records already encoded, as one batch of their own: ``region`` is a v2 batch's
        uncompressed records region (offset deltas 0 to ``count`` - 1, timestamp deltas 0 from ``timestamp``,
        now when None). The producer adds the header, its compression, producer id, epoch and sequence when it
        sends the batch, as for records sent one by one. The handle resolves to the batch's first record. The bulk
        path of the Spark sink, which encodes records from Arrow columns (kafkamock.spark.columnar)."""
        self._check_can_send()
        if count <= 0:
            raise ValueError("send_encoded needs at least one record")
        partitions = await self.partitions_for(topic)
        if not 0 <= partition < partitions:
            raise KafkaError(E.UNKNOWN_TOPIC_OR_PARTITION, f"the topic has {partitions} partition(s)",
                             what=f"send to {topic}-{partition}")
        size = len(region)
        if size + BATCH_OVERHEAD > self.max_request_size:
            raise KafkaError(E.MESSAGE_TOO_LARGE, f"the batch is {size + BATCH_OVERHEAD} bytes when serialized, "
                             f"larger than max.request.size ({self.max_request_size})",
                             what=f"send to {topic}-{partition}")
        await self._wait_for_room(size, topic, partition)
        tp = TopicPartition(topic, partition)
        queue = self._queues.get(tp)
        if queue is None:
            queue = self._queues[tp] = deque()
        encoded = _Encoded(region, count, int(time.time() * 1000) if timestamp is None else timestamp)
        batch = _Batch(tp, trio.current_time(), records=encoded, size=BATCH_OVERHEAD + size, encoded=encoded)
        queue.append(batch)
        self._incomplete.add(batch)
        self._buffered += size
        self._wake()
        await trio.lowlevel.checkpoint()
        return FutureRecordMetadata(batch, 0)

    async def flush(self) -> None:
        """Send every buffered record now (ignoring ``linger.ms``) and wait until each is acknowledged or failed.
        Like Java's flush it raises nothing for failed records: their handles do."""
        self._check_open("flush")
        await self._wait_until_sent()

    async def _wait_until_sent(self) -> None:
        self._flushing += 1
        try:
            self._wake()
            while self._incomplete:
                self._progress = event = trio.Event() if self._progress.is_set() else self._progress
                await event.wait()
        finally:
            self._flushing -= 1

    async def partitions_for(self, topic: str) -> int:
        """How many partitions ``topic`` has (metadata cached for ``metadata.max.age.ms``)."""
        cached = self._partition_counts.get(topic)
        now = trio.current_time()
        if cached is None or now - cached[1] > self.metadata_max_age_s or topic in self._metadata_stale:
            assert self._client is not None, "use the Producer as an async context manager"
            deadline = now + self.max_block_s
            while True:
                try:
                    counts = await partition_counts(self._client, [topic],
                                                    auto_create=self.settings["allow.auto.create.topics"])
                    break
                except KafkaError as exc:
                    if not exc.retriable or trio.current_time() + self.retry_backoff_s > deadline:
                        raise
                    await trio.sleep(self.retry_backoff_s)
            self._partition_counts[topic] = (counts[topic], now)
            self._metadata_stale.discard(topic)
        return self._partition_counts[topic][0]

    async def _append(self, topic: str, key: bytes | None, value: bytes | None, partition: int | None,
                      timestamp: int | None, headers: list) -> FutureRecordMetadata:
        count = await self.partitions_for(topic)
        if partition is None:
            if key is not None:
                partition = partition_for_key(key, count)
            else:       # sticky: keyless records fill one partition's batch, then move on (Java's default)
                partition = self._sticky.get(topic)
                if partition is None or partition >= count:
                    partition = self._sticky[topic] = random.randrange(count)
        elif not 0 <= partition < count:
            raise KafkaError(E.UNKNOWN_TOPIC_OR_PARTITION, f"the topic has {count} partition(s)",
                             what=f"send to {topic}-{partition}")
        size = RECORD_OVERHEAD + len(key or b"") + len(value or b"") + sum(
            len(k) + len(v or b"") + 8 for k, v in headers)
        if size + BATCH_OVERHEAD > self.max_request_size:
            raise KafkaError(E.MESSAGE_TOO_LARGE, f"the record is {size + BATCH_OVERHEAD} bytes when serialized, "
                             f"larger than max.request.size ({self.max_request_size})",
                             what=f"send to {topic}-{partition}")
        await self._wait_for_room(size, topic, partition)
        tp = TopicPartition(topic, partition)
        queue = self._queues.get(tp)
        if queue is None:
            queue = self._queues[tp] = deque()
        batch = queue[-1] if queue else None
        limit = min(max(self.batch_size, 1), self.max_request_size)
        new_batch = (batch is None or batch.data is not None or batch.encoded is not None
                     or (batch.records and batch.size + size > limit))
        if new_batch:
            if batch is not None and key is None and self._sticky.get(topic) == partition and batch.records:
                self._sticky.pop(topic, None)           # its batch is full: the next keyless record moves on
            batch = _Batch(tp, trio.current_time())
            queue.append(batch)
            self._incomplete.add(batch)
        assert batch is not None
        batch.records.append({"key": key, "value": value, "headers": headers,
                              "timestamp": int(time.time() * 1000) if timestamp is None else timestamp})
        batch.size += size
        self._buffered += size
        handle = FutureRecordMetadata(batch, len(batch.records) - 1)
        if new_batch or batch.size >= self.batch_size:
            self._wake()
            await trio.lowlevel.checkpoint()            # let the sender drain full batches
        return handle

    async def _wait_for_room(self, size: int, topic: str, partition: int) -> None:
        while self._buffered + size > self.buffer_memory and self._incomplete:
            with trio.move_on_after(self.max_block_s) as waited:   # Java blocks send up to max.block.ms for space
                self._wake()
                await self._wait_progress()
            if waited.cancelled_caught:
                raise KafkaError(E.REQUEST_TIMED_OUT, "no room in buffer.memory "
                                 f"within max.block.ms ({self.settings['max.block.ms']})",
                                 what=f"send to {topic}-{partition}", fatal=False)
            self._check_open("send")

    # -- transactions ---------------------------------------------------------------------------------------------

    async def init_transactions(self) -> None:
        """Get the transactional id's producer id and epoch, fencing older instances (their open transaction is
        aborted by the coordinator) and finishing whatever the id left behind."""
        self._check_open("init_transactions")
        self._require_transactional("init_transactions")
        self._txn.to(State.INITIALIZING)
        await self._refresh_transaction_version()
        await self._init_transactional_id(NO_PRODUCER_ID, NO_EPOCH)

    def begin_transaction(self) -> None:
        self._check_open("begin_transaction")
        self._require_transactional("begin_transaction")
        self._txn.fail_if_error("begin_transaction")
        self._txn.to(State.IN_TRANSACTION)
        self._txn_started = False
        self._txn_partitions.clear()

    async def send_offsets_to_transaction(self, offsets: Mapping[Any, Any], group: Any) -> None:
        """Commit a consumer group's offsets with the transaction: ``offsets`` maps (topic, partition) to an
        OffsetAndMetadata or a plain offset; ``group`` is a group id or a consumer's group metadata
        (ConsumerGroupMetadata, or the Consumer's ``group_metadata()``) whose generation and member id let the
        coordinator refuse the commit of a member that lost its partitions."""
        self._check_open("send_offsets_to_transaction")
        self._require_transactional("send_offsets_to_transaction")
        self._txn.fail_if_error("send_offsets_to_transaction")
        self._txn.require("send_offsets_to_transaction", State.IN_TRANSACTION)
        meta = ConsumerGroupMetadata(group) if isinstance(group, str) else group
        if not self.transaction_v2:   # KIP-890 part 2 leaves the add to the group coordinator
            await self._txn_call("AddOffsetsToTxn", {
                "transactional_id": self.transactional_id, "producer_id": self.producer_id,
                "producer_epoch": self.producer_epoch, "group_id": meta.group_id}, "add offsets to the transaction")
        self._txn_started = True
        by_topic: dict[str, list[dict]] = defaultdict(list)
        for tp, spec in offsets.items():
            topic, index = tp
            om = spec if isinstance(spec, OffsetAndMetadata) else OffsetAndMetadata(int(spec))
            by_topic[topic].append({"partition_index": index, "committed_offset": om.offset,
                                    "committed_leader_epoch": om.leader_epoch, "committed_metadata": om.metadata})
        await self._txn_offset_commit(meta, dict(by_topic))

    async def commit_transaction(self) -> None:
        """Flush, then commit: the transaction's records become visible to read_committed readers together."""
        self._check_open("commit_transaction")
        self._require_transactional("commit_transaction")
        self._txn.fail_if_error("commit_transaction")
        self._txn.require("commit_transaction", State.IN_TRANSACTION)
        await self._wait_until_sent()
        self._txn.fail_if_error("commit_transaction")          # a batch of the transaction failed
        self._txn.to(State.COMMITTING)
        await self._end_transaction(commit=True)

    async def abort_transaction(self) -> None:
        """Drop the records not yet sent, abort, and (after an abortable error) bump the epoch with InitProducerId
        carrying the current id and epoch (KIP-360), restarting the sequences; the producer is READY again."""
        self._check_open("abort_transaction", allow_closing=True)
        self._require_transactional("abort_transaction")
        if self._txn.state is State.FATAL_ERROR:
            self._txn.fail_if_error("abort_transaction")
        self._txn.to(State.ABORTING)
        self._fail_queued(TransactionAbortedError("send"))
        while self._in_flight:            # EndTxn goes after every in-flight batch is answered
            await self._wait_progress()
        await self._end_transaction(commit=False)

    async def _end_transaction(self, commit: bool) -> None:
        what = "commit the transaction" if commit else "abort the transaction"
        if self._txn_started:
            version = None
            if not self.transaction_v2:
                version = min(TV1_END_TXN_MAX, (await self._coordinator()).version_for("EndTxn"))
            response = await self._txn_call("EndTxn", {
                "transactional_id": self.transactional_id, "producer_id": self.producer_id,
                "producer_epoch": self.producer_epoch, "committed": commit}, what, version=version)
            if getattr(response, "producer_id", -1) not in (None, -1):    # EndTxn v5: the epoch moved on
                self._set_producer(response.producer_id, response.producer_epoch)
        self._txn_started = False
        self._txn_partitions.clear()
        if self._epoch_bump_required:
            self._txn.to(State.INITIALIZING)
            await self._init_transactional_id(self.producer_id, self.producer_epoch)
        else:
            self._txn.to(State.READY)

    async def _init_transactional_id(self, producer_id: int, epoch: int) -> None:
        body = {"transactional_id": self.transactional_id,
                "transaction_timeout_ms": self.settings["transaction.timeout.ms"]}
        conn = await self._coordinator()
        if producer_id != NO_PRODUCER_ID and conn.version_for("InitProducerId") >= 3:
            body.update(producer_id=producer_id, producer_epoch=epoch)
        response = await self._txn_call("InitProducerId", body, "InitProducerId")
        self._set_producer(response.producer_id, response.producer_epoch)
        self._epoch_bump_required = False
        self._txn.to(State.READY)

    async def _refresh_transaction_version(self) -> None:
        """Java 4.3: transactions use KIP-890 part 2 (implicit partition adds, EndTxn v5 bumping the epoch) when
        the brokers finalized the feature ``transaction.version`` at 2 or more."""
        conn = await self._coordinator()
        level = 0
        if conn.version_for("ApiVersions") >= 3:
            response = await conn.request("ApiVersions", {"client_software_name": "kafkamock",
                                                          "client_software_version": "0.1.0"}, version=3)
            for feature in response.finalized_features or ():
                if feature.name == "transaction.version":
                    level = feature.max_version_level
        self.transaction_v2 = level >= 2 and conn.version_for("Produce") >= 12 and conn.version_for("EndTxn") >= 5

    async def _coordinator(self) -> KafkaConnection:
        assert self._client is not None and self.transactional_id is not None
        return await self._client.coordinator(self.transactional_id, TRANSACTION)

    async def _txn_call(self, api: str, body: dict, what: str, *, version: int | None = None) -> Any:
        """A request to the transaction coordinator, retried on a moved coordinator, a lost connection,
        CONCURRENT_TRANSACTIONS and other retriable errors for up to ``max.block.ms``; other errors go through
        ``_transaction_error``."""
        assert self._client is not None and self.transactional_id is not None
        deadline = trio.current_time() + self.max_block_s
        backoff = min(self.retry_backoff_s, 0.02) if api == "AddPartitionsToTxn" else self.retry_backoff_s
        while True:
            try:
                conn = await self._coordinator()
                response = await conn.request(api, body, version=version)
                code = response.error_code if api != "AddPartitionsToTxn" else _add_partitions_error(response)
            except KafkaConnectionError:
                self._client.forget_coordinator(self.transactional_id, TRANSACTION)
                code = E.NETWORK_EXCEPTION
            if code == 0:
                return response
            if code in COORDINATOR_MOVED:
                self._client.forget_coordinator(self.transactional_id, TRANSACTION)
            if code not in TXN_RETRIABLE:
                raise self._transaction_error(code, what, api)
            if trio.current_time() + backoff > deadline:
                raise KafkaError(E.REQUEST_TIMED_OUT, f"still {ErrorCode(code).name} after "
                                 f"max.block.ms ({self.settings['max.block.ms']})", what=what, fatal=False)
            await trio.sleep(backoff)

    def _transaction_error(self, code: int, what: str, api: str) -> KafkaError:
        """Java's TxnRequestHandlers: fencing, authorization and INVALID_TXN_STATE are fatal; an unknown producer
        or a bad id mapping abortable with an epoch bump; the rest abortable (or fatal when unexpected)."""
        if code in (E.PRODUCER_FENCED, E.INVALID_PRODUCER_EPOCH):
            error = KafkaError(E.PRODUCER_FENCED, "There is a newer producer with the same transactionalId "
                               "which fences the current one", what=what, fatal=True)
            self._to_fatal(error)
        elif code in (E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, E.INVALID_TXN_STATE, E.CLUSTER_AUTHORIZATION_FAILED,
                      E.UNSUPPORTED_VERSION, E.UNSUPPORTED_FOR_MESSAGE_FORMAT, E.INVALID_TRANSACTION_TIMEOUT):
            if api == "InitProducerId" and code in (E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
                                                    E.CLUSTER_AUTHORIZATION_FAILED):
                error = KafkaError(code, what=what, fatal=False)
                self._to_abortable(error, bump=False)
            else:
                error = KafkaError(code, what=what, fatal=True)
                self._to_fatal(error)
        elif code in (E.UNKNOWN_PRODUCER_ID, E.INVALID_PRODUCER_ID_MAPPING):
            error = KafkaError(code, what=what, fatal=False)
            self._to_abortable(error, bump=True)
        elif code in (E.TRANSACTION_ABORTABLE, E.GROUP_AUTHORIZATION_FAILED, E.TOPIC_AUTHORIZATION_FAILED,
                      E.FENCED_INSTANCE_ID, E.UNKNOWN_MEMBER_ID, E.ILLEGAL_GENERATION, E.OPERATION_NOT_ATTEMPTED):
            error = KafkaError(code, what=what, fatal=False)
            self._to_abortable(error, bump=False)
        else:
            error = KafkaError(code, "unexpected error", what=what, fatal=True)
            self._to_fatal(error)
        return error

    async def _txn_offset_commit(self, meta: Any, by_topic: dict[str, list[dict]]) -> None:
        assert self._client is not None
        group_id = meta.group_id
        body = {"transactional_id": self.transactional_id, "group_id": group_id, "producer_id": self.producer_id,
                "producer_epoch": self.producer_epoch, "generation_id": getattr(meta, "generation_id", -1),
                "member_id": getattr(meta, "member_id", ""),
                "group_instance_id": getattr(meta, "group_instance_id", None)}
        pending = dict(by_topic)
        deadline = trio.current_time() + self.max_block_s
        what = f"commit offsets of group {group_id!r} in the transaction"
        while pending:
            try:
                conn = await self._client.coordinator(group_id)
                version = conn.version_for("TxnOffsetCommit")
                if not self.transaction_v2:
                    version = min(version, TV1_TXN_OFFSET_COMMIT_MAX)
                response = await conn.request("TxnOffsetCommit", {
                    **body, "topics": [{"name": t, "partitions": p} for t, p in pending.items()]}, version=version)
                failed: dict[str, list[dict]] = defaultdict(list)
                for t in response.topics:
                    asked = {p["partition_index"]: p for p in pending.get(t.name, ())}
                    for p in t.partitions:
                        code = p.error_code
                        if code == 0:
                            continue
                        if code in COORDINATOR_MOVED or code == E.REQUEST_TIMED_OUT:
                            self._client.forget_coordinator(group_id)
                        elif code not in TXN_RETRIABLE:
                            if code in (E.UNKNOWN_MEMBER_ID, E.ILLEGAL_GENERATION):
                                error = KafkaError(code, "Transaction offset Commit failed due to consumer "
                                                   "group metadata mismatch", what=what, fatal=False)
                                self._to_abortable(error, bump=False)
                                raise error
                            raise self._transaction_error(code, what, "TxnOffsetCommit")
                        failed[t.name].append(asked[p.partition_index])
                pending = dict(failed)
            except KafkaConnectionError:
                self._client.forget_coordinator(group_id)
            if pending:
                if trio.current_time() + self.retry_backoff_s > deadline:
                    raise KafkaError(E.REQUEST_TIMED_OUT, "retriable errors until max.block.ms", what=what, fatal=False)
                await trio.sleep(self.retry_backoff_s)

    # -- state changes --------------------------------------------------------------------------------------------

    def _set_producer(self, producer_id: int, epoch: int) -> None:
        """A new producer id or epoch: every partition's sequence starts again at 0 (Java resets them all)."""
        if (producer_id, epoch) != (self.producer_id, self.producer_epoch):
            self.producer_id, self.producer_epoch = producer_id, epoch
            self._next_seq.clear()
            self._last_acked_seq.clear()
            self._last_acked_offset.clear()
            for queue in self._queues.values():     # batches never accepted are resent with the new epoch
                for batch in queue:
                    batch.data = None

    def _to_fatal(self, error: BaseException) -> None:
        self._txn.fatal(error)
        self._fail_queued(error)
        self._wake()

    def _to_abortable(self, error: BaseException, *, bump: bool) -> None:
        if self.transactional_id is None:
            return
        if bump:
            self._epoch_bump_required = True
        self._txn.abortable(error)
        if self._txn.state is State.ABORTABLE_ERROR:
            self._fail_queued(error)
        self._wake()

    def _fail_queued(self, error: BaseException) -> None:
        """Fail every batch not in flight (Java's abortUndrainedBatches)."""
        for queue in self._queues.values():
            while queue:
                self._fail_batch(queue.popleft(), error)

    def _check_open(self, what: str, *, allow_closing: bool = False) -> None:
        if self._client is None:
            raise IllegalStateError(f"{what}: use the Producer as an async context manager (async with)")
        if self._closed and not allow_closing:
            raise IllegalStateError(f"Cannot perform operation {what} after producer has been closed")

    def _require_transactional(self, what: str) -> None:
        if self.transactional_id is None:
            raise IllegalStateError(f"Transactional method {what} invoked on a non-transactional producer")

    def _wake(self) -> None:
        self._wakeup.set()

    async def _wait_progress(self) -> None:
        self._progress = event = trio.Event() if self._progress.is_set() else self._progress
        await event.wait()

    @property
    def state(self) -> State:
        """The transaction state (Java's TransactionManager state)."""
        return self._txn.state

    # -- the sender -----------------------------------------------------------------------------------------------

    async def _sender_loop(self) -> None:
        while True:
            self._wakeup = trio.Event()
            try:
                deadline = await self._run_once()
            except (KafkaConnectionError, KafkaError) as exc:
                if isinstance(exc, KafkaError) and exc.fatal:
                    self._to_fatal(exc)
                deadline = trio.current_time() + self.retry_backoff_s
            except Exception as exc:     # a bug must not leave senders waiting forever: fail them with it
                error = KafkaError(E.UNKNOWN_SERVER_ERROR, repr(exc), what="the producer's sender", fatal=True)
                error.__cause__ = exc
                self._to_fatal(error)
                deadline = math.inf
            with trio.move_on_at(deadline):
                await self._wakeup.wait()

    async def _run_once(self) -> float:
        """One pass of Java's Sender.runOnce: expire, get a producer id, bump the epoch, add partitions to the
        transaction, drain ready batches into Produce requests. Returns when to look again at the latest."""
        now = trio.current_time()
        self._expire(now)
        if not self._incomplete:
            return math.inf
        if self._needs_producer_id and self.producer_id == NO_PRODUCER_ID:
            if now < self._init_error_until:
                return self._init_error_until
            if not await self._init_idempotent(NO_PRODUCER_ID, NO_EPOCH):
                return self._init_error_until
        if self._bump_partitions and not self._in_flight and not self._sealed_outside_bump():
            if not await self._init_idempotent(self.producer_id, self.producer_epoch):
                return self._init_error_until
        if self._metadata_stale and self._client is not None:
            topics = list(self._metadata_stale)
            self._metadata_stale.clear()
            await self._client.metadata(topics)
        if self.transactional_id is not None and not self.transaction_v2:
            await self._add_partitions_to_txn()
        return self._drain(trio.current_time())

    def _sealed_outside_bump(self) -> bool:
        return any(q and q[0].data is not None for tp, q in self._queues.items() if tp not in self._bump_partitions)

    async def _init_idempotent(self, producer_id: int, epoch: int) -> bool:
        """InitProducerId without a transactional id: a first producer id, or (KIP-360) a new epoch for the current
        one, asked for with the current id and epoch (v3+); a broker may answer with a new producer id instead."""
        assert self._client is not None
        conn = await self._client.any_broker()
        body: dict[str, Any] = {"transactional_id": None, "transaction_timeout_ms": IDEMPOTENT_TXN_TIMEOUT_MS}
        if producer_id != NO_PRODUCER_ID and conn.version_for("InitProducerId") >= 3:
            body.update(producer_id=producer_id, producer_epoch=epoch)
        response = await conn.request("InitProducerId", body)
        if response.error_code:
            error = KafkaError(response.error_code, what="InitProducerId")
            if not error.retriable and response.error_code != E.CONCURRENT_TRANSACTIONS:
                self._to_fatal(KafkaError(response.error_code, what="InitProducerId", fatal=True))
            self._init_error_until = trio.current_time() + self.retry_backoff_s
            return False
        if self._txn.state is State.UNINITIALIZED:
            self._txn.to(State.INITIALIZING)
            self._txn.to(State.READY)
        self._set_producer(response.producer_id, response.producer_epoch)
        self._bump_partitions.clear()
        return True

    async def _add_partitions_to_txn(self) -> None:
        """AddPartitionsToTxn for the partitions that have records queued and are not in the transaction yet."""
        if self._txn.state is not State.IN_TRANSACTION and self._txn.state is not State.COMMITTING:
            return
        new = sorted(tp for tp, q in self._queues.items() if q and tp not in self._txn_partitions)
        if not new:
            return
        by_topic: dict[str, list[int]] = defaultdict(list)
        for tp in new:
            by_topic[tp.topic].append(tp.partition)
        topics = [{"name": t, "partitions": p} for t, p in by_topic.items()]
        conn = await self._coordinator()
        version = min(CLIENT_ADD_PARTITIONS_MAX, conn.version_for("AddPartitionsToTxn"))
        try:
            await self._txn_call("AddPartitionsToTxn", {
                "v3_and_below_transactional_id": self.transactional_id, "v3_and_below_producer_id": self.producer_id,
                "v3_and_below_producer_epoch": self.producer_epoch, "v3_and_below_topics": topics},
                f"add {', '.join(map(str, new))} to the transaction", version=version)
        except KafkaError:
            return                       # the error state is set and the batches failed
        self._txn_partitions.update(new)
        self._txn_started = True

    def _expire(self, now: float) -> None:
        """delivery.timeout.ms: a batch not acknowledged in time fails (Java's TimeoutException)."""
        for tp, queue in self._queues.items():
            while queue and now - queue[0].created >= self.delivery_timeout_s:
                batch = queue.popleft()
                sealed = batch.data is not None
                self._fail_batch(batch, KafkaError(
                    E.REQUEST_TIMED_OUT, f"Expiring {len(batch.records)} record(s): delivery.timeout.ms has passed",
                    what=f"send to {tp}", fatal=False))
                if sealed:        # its sequence may or may not have been written
                    self._after_failed_sealed_batch(batch, KafkaError(E.REQUEST_TIMED_OUT, what=f"send to {tp}"))

    def _drain(self, now: float) -> float:
        """Seal the ready head batch of each partition and send them, one request per leader."""
        assert self._client is not None
        next_check = math.inf
        by_leader: dict[int, list[_Batch]] = defaultdict(list)
        sizes: dict[int, int] = defaultdict(int)
        bumping = bool(self._bump_partitions)
        can_send = self.transactional_id is None or self._txn.state in (State.IN_TRANSACTION, State.COMMITTING,
                                                                        State.ABORTING)
        for tp, queue in self._queues.items():
            if not queue or tp in self._in_flight or not can_send:
                continue
            batch = queue[0]
            next_check = min(next_check, batch.created + self.delivery_timeout_s)
            if self.idempotent and self.producer_id == NO_PRODUCER_ID:
                continue
            if bumping and (batch.data is None or tp in self._bump_partitions):
                continue
            if self.transactional_id is not None and not self.transaction_v2 and tp not in self._txn_partitions:
                continue
            if batch.retry_at > now:
                next_check = min(next_check, batch.retry_at)
                continue
            ready = (batch.data is not None or batch.encoded is not None or len(queue) > 1
                     or batch.size >= self.batch_size or self._flushing or self._closed
                     or now >= batch.created + self.linger_s)      # an encoded batch cannot grow: no linger
            if not ready:
                next_check = min(next_check, batch.created + self.linger_s)
                continue
            leader = self._client.leaders.get(tp)
            if leader is None:
                self._metadata_stale.add(tp.topic)
                next_check = min(next_check, now + self.retry_backoff_s)
                continue
            if self._requests_per_leader[leader] >= self.max_in_flight:
                continue
            if sizes[leader] and sizes[leader] + batch.size > self.max_request_size:
                next_check = now
                continue
            queue.popleft()
            if self.transactional_id is not None:   # with KIP-890 part 2 the Produce itself adds the partition
                self._txn_started = True
                self._txn_partitions.add(tp)
            self._seal(batch)
            by_leader[leader].append(batch)
            sizes[leader] += len(batch.data or b"")
            self._in_flight[tp] = batch
        assert self._nursery is not None
        for leader, batches in by_leader.items():
            self._requests_per_leader[leader] += 1
            self._nursery.start_soon(self._produce, leader, batches)
        return next_check

    def _seal(self, batch: _Batch) -> None:
        if batch.data is not None:
            return
        if self.idempotent:
            batch.producer_id, batch.producer_epoch = self.producer_id, self.producer_epoch
            batch.base_sequence = self._next_seq.get(batch.tp, 0)
            self._next_seq[batch.tp] = (batch.base_sequence + len(batch.records)) & 0x7FFFFFFF
        if batch.encoded is not None:
            batch.data = encode_v2_region(batch.encoded.region, batch.encoded.count,
                                          base_timestamp=batch.encoded.timestamp, max_timestamp=batch.encoded.timestamp,
                                          compression_name=self.compression, producer_id=batch.producer_id,
                                          producer_epoch=batch.producer_epoch, base_sequence=batch.base_sequence,
                                          transactional=self.transactional_id is not None)
            return
        batch.data = records.encode_batch(batch.records, compression=self.compression,
                                          producer_id=batch.producer_id, producer_epoch=batch.producer_epoch,
                                          base_sequence=batch.base_sequence,
                                          transactional=self.transactional_id is not None)

    async def _produce(self, leader: int, batches: list[_Batch]) -> None:
        assert self._client is not None
        conn: KafkaConnection | None = None
        try:
            by_topic: dict[str, list[_Batch]] = defaultdict(list)
            for batch in batches:
                by_topic[batch.tp.topic].append(batch)
            body = {"transactional_id": self.transactional_id, "acks": self.acks,
                    "timeout_ms": self.settings["request.timeout.ms"], "topic_data": [
                        {"name": topic, "topic_id": self._client.topic_ids.get(topic),
                         "partition_data": [{"index": b.tp.partition, "records": b.data} for b in group]}
                        for topic, group in by_topic.items()]}
            try:
                conn = await self._client.broker(leader)
                version = conn.version_for("Produce")
                if self.transactional_id is not None and not self.transaction_v2:
                    version = min(version, TV1_PRODUCE_MAX)
                if self.acks == 0:
                    await conn.request("Produce", body, version=version, expect_response=False)
                    for batch in batches:
                        self._complete(batch, -1, -1)
                    return
                with trio.fail_after(self.request_timeout_s):
                    response = await conn.request("Produce", body, version=version)
            except (KafkaConnectionError, trio.TooSlowError, OSError) as exc:
                if isinstance(exc, trio.TooSlowError) and conn is not None:
                    await conn.aclose()             # Java disconnects a request that timed out
                why = (f"no answer within request.timeout.ms ({self.settings['request.timeout.ms']} ms)"
                       if isinstance(exc, trio.TooSlowError) else str(exc) or type(exc).__name__)
                for batch in batches:
                    self._on_error(batch, E.NETWORK_EXCEPTION, -1, why)
                return
            index = {b.tp: b for b in batches}
            names = self._client.topic_names
            answered: set[TopicPartition] = set()
            for t in response.responses:
                name = t.name or names.get(t.topic_id, "")
                for p in t.partition_responses:
                    tp = TopicPartition(name, p.index)
                    if tp not in index:
                        continue
                    batch = index[tp]
                    answered.add(batch.tp)
                    if p.error_code in (0, E.DUPLICATE_SEQUENCE_NUMBER):
                        self._complete(batch, p.base_offset, p.log_append_time_ms)
                    else:
                        self._on_error(batch, p.error_code, p.log_start_offset, p.error_message)
            for tp, batch in index.items():
                if tp not in answered:
                    self._on_error(batch, E.NETWORK_EXCEPTION, -1, "no answer for the partition")
        finally:
            for batch in batches:
                if self._in_flight.get(batch.tp) is batch:
                    del self._in_flight[batch.tp]
            self._requests_per_leader[leader] -= 1
            self._wake()
            self._progress.set()

    def _complete(self, batch: _Batch, base_offset: int, log_append_time: int) -> None:
        if batch.base_sequence >= 0:
            self._last_acked_seq[batch.tp] = batch.last_sequence
            if base_offset >= 0:
                self._last_acked_offset[batch.tp] = base_offset + len(batch.records) - 1
        batch.base_offset, batch.log_append_time = base_offset, log_append_time if log_append_time else -1
        self._finish(batch)

    def _fail_batch(self, batch: _Batch, error: BaseException) -> None:
        batch.error = error
        self._finish(batch)

    def _finish(self, batch: _Batch) -> None:
        if batch in self._incomplete:
            self._incomplete.discard(batch)
            self._buffered -= batch.size - BATCH_OVERHEAD
        batch.finished.set()
        self._progress.set()

    def _retry(self, batch: _Batch, *, unseal: bool = False) -> None:
        batch.attempts += 1
        batch.retry_at = trio.current_time() + self.retry_backoff_s
        if unseal:
            batch.data = None
        self._queues[batch.tp].appendleft(batch)

    def _can_retry(self, batch: _Batch) -> bool:
        return (batch.attempts < self.retries and trio.current_time() - batch.created < self.delivery_timeout_s
                and not self._closed_for_good())

    def _closed_for_good(self) -> bool:
        return self._stopping or self._txn.state is State.FATAL_ERROR

    def _on_error(self, batch: _Batch, code: int, log_start_offset: int, message: str | None) -> None:
        """One partition's error (Java's Sender.completeBatch with TransactionManager.canRetry)."""
        tp = batch.tp
        error = KafkaError(code, message, what=f"produce to {tp}")
        transactional = self.transactional_id is not None
        if self._txn.state is State.FATAL_ERROR:
            self._fail_batch(batch, self._txn.last_error or error)
            return
        if transactional and self._txn.state in (State.ABORTING, State.ABORTABLE_ERROR):
            self._fail_batch(batch, self._txn.last_error or TransactionAbortedError())
            return
        if code in METADATA_ERRORS:
            self._metadata_stale.add(tp.topic)
        if self.idempotent and code == E.UNKNOWN_PRODUCER_ID and self._can_retry(batch):
            if not transactional:                       # KIP-360: bump the epoch, resend from sequence 0
                self._bump_partitions.add(tp)
                self._retry(batch, unseal=True)
                return
            if log_start_offset == -1:
                self._retry(batch)
                return
            if self._last_acked_offset.get(tp, -1) < log_start_offset:   # the log's head went: restart at 0
                self._next_seq[tp] = 0
                self._retry(batch, unseal=True)
                return
        elif self.idempotent and code == E.OUT_OF_ORDER_SEQUENCE_NUMBER and self._can_retry(batch):
            if batch.base_sequence != (self._last_acked_seq.get(tp, -1) + 1) & 0x7FFFFFFF:
                self._retry(batch)                      # not the next batch: an earlier one is still on its way
                return
            if not transactional:                       # a real gap: bump the epoch, resend from sequence 0
                self._bump_partitions.add(tp)
                self._retry(batch, unseal=True)
                return
        elif code in RETRIABLE and self._can_retry(batch):
            self._retry(batch)
            return
        if code in FATAL_PRODUCE or (transactional and code == E.INVALID_PRODUCER_EPOCH):
            if code in (E.INVALID_PRODUCER_EPOCH, E.PRODUCER_FENCED):
                error = KafkaError(E.PRODUCER_FENCED, "There is a newer producer with the same "
                                   "transactionalId which fences the current one", what=f"produce to {tp}", fatal=True)
            else:
                error = KafkaError(code, message, what=f"produce to {tp}", fatal=True)
            self._fail_batch(batch, error)
            self._to_fatal(error)
            return
        if code in RETRIABLE and trio.current_time() - batch.created >= self.delivery_timeout_s:
            error = KafkaError(E.REQUEST_TIMED_OUT, f"Expiring {len(batch.records)} record(s): "
                               f"delivery.timeout.ms ({self.settings['delivery.timeout.ms']} ms) has passed since "
                               f"the batch was created; the last attempt failed with {ErrorCode(code).name}: "
                               f"{message}", what=f"produce to {tp}", fatal=False)
        self._fail_batch(batch, error)
        self._after_failed_sealed_batch(batch, error)

    def _after_failed_sealed_batch(self, batch: _Batch, error: KafkaError) -> None:
        """A batch that had a sequence failed: the transaction must be aborted (then the epoch is bumped), or an
        idempotent producer bumps its epoch so the partition's next batch is no gap."""
        if batch.base_sequence < 0:
            return
        if self.transactional_id is not None:
            self._to_abortable(error, bump=True)
        else:
            self._bump_partitions.add(batch.tp)


def _add_partitions_error(response: Any) -> int:
    """The first error of an AddPartitionsToTxn v0-3 answer, OPERATION_NOT_ATTEMPTED last."""
    codes = [p.partition_error_code for t in response.results_by_topic_v3_and_below for p in t.results_by_partition]
    real = [c for c in codes if c and c != E.OPERATION_NOT_ATTEMPTED]
    return real[0] if real else (E.OPERATION_NOT_ATTEMPTED if any(codes) else 0)
