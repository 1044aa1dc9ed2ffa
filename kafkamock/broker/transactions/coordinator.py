"""The transaction coordinator: producer ids and epochs of transactional ids (KIP-360), transactions and markers.

Kafka's TransactionCoordinator and TransactionStateManager on the core's clock. The coordinator of a transactional
id is the leader of the ``__transaction_state`` partition the id hashes to. Every change of a transaction is written
there as a TransactionLogValue record before it is answered, and ``replay`` rebuilds the transactions from those
records at start, finishing any commit or abort that a stop interrupted. Markers are written straight into the
partitions' logs (one process holds every log), so a transaction goes Prepare* -> Complete* within one request;
both records are written, as Kafka writes them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field

from kafkamock.broker.cluster import GROUP_METADATA_TOPIC, NO_LEADER, TRANSACTION_STATE_TOPIC, partition_for_key
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.features import TRANSACTION_VERSION
from kafkamock.broker.java_hash_order import java_hash_order, topic_partition_hash
from kafkamock.broker.re2_pattern import CompiledPattern
from kafkamock.broker.transactions import records
from kafkamock.broker.transactions.state import Event, TxnState, transition
from kafkamock.records import CorruptRecordError, decode_batches, encode_batch, end_txn_marker_batch

log = logging.getLogger("kafkamock.transactions")
E = ErrorCode
NO_PRODUCER_ID = -1
NO_EPOCH = -1
MAX_EPOCH = 2**15 - 1
TV2_END_TXN_VERSION = 5          # EndTxn v5+: KIP-890 part 2, a new epoch with every transaction


def epoch_exhausted(epoch: int) -> bool:
    """Kafka keeps the last epoch free for fencing: at 32766 a producer id is used up (TransactionMetadata)."""
    return epoch >= MAX_EPOCH - 1


@dataclass
class TxnMetadata:
    """One transactional id: its producer id and epoch, and the transaction it has open (Kafka's TransactionMetadata)."""

    transactional_id: str
    producer_id: int
    timeout_ms: int
    last_update_ms: int
    epoch: int = NO_EPOCH
    last_epoch: int = NO_EPOCH              # KIP-360: the epoch before the last bump, for a retried bump
    prev_producer_id: int = NO_PRODUCER_ID
    next_producer_id: int = NO_PRODUCER_ID
    state: TxnState = TxnState.EMPTY
    # the transaction's partitions in the order they joined it (a dict as an ordered set: Kafka's HashSet iterates
    # in hash order, with ties in insertion order; ``ordered_partitions`` gives that order)
    partitions: dict[tuple[str, int], None] = field(default_factory=dict)
    start_ms: int = -1
    client_version: int = 0                 # 2: the client ends transactions with EndTxn v5+ (KIP-890 part 2)

    def to(self, event: Event) -> None:
        self.state = transition(self.state, event)

    def add(self, partitions: Iterable[tuple[str, int]]) -> None:
        for key in partitions:
            self.partitions.setdefault(key, None)

    def ordered_partitions(self) -> list[tuple[str, int]]:
        """The partitions as Kafka's ``HashSet<TopicPartition>`` iterates them (DescribeTransactions lists them so)."""
        return java_hash_order(self.partitions, topic_partition_hash)

    def value(self) -> dict:
        topics: dict[str, list[int]] = {}
        for topic, partition in sorted(self.partitions):
            topics.setdefault(topic, []).append(partition)
        return {"producer_id": self.producer_id, "previous_producer_id": self.prev_producer_id,
                "next_producer_id": self.next_producer_id, "producer_epoch": self.epoch,
                "transaction_timeout_ms": self.timeout_ms, "transaction_status": int(self.state),
                "transaction_partitions": [{"topic": t, "partition_ids": p} for t, p in topics.items()],
                "transaction_last_update_timestamp_ms": self.last_update_ms,
                "transaction_start_timestamp_ms": self.start_ms, "client_transaction_version": self.client_version,
                "last_producer_epoch": self.last_epoch}


def fenced_code(version: int, first_fenced_version: int) -> ErrorCode:
    """PRODUCER_FENCED (KIP-588) for clients that know it, INVALID_PRODUCER_EPOCH for older versions."""
    return E.PRODUCER_FENCED if version >= first_fenced_version else E.INVALID_PRODUCER_EPOCH


class TransactionCoordinator:
    """Every transactional id of the cluster; ``broker`` gives the clock, the configs, the logs and the timers."""

    def __init__(self, broker) -> None:
        self.broker = broker
        self.txns: dict[str, TxnMetadata] = {}
        self.by_producer: dict[int, str] = {}       # producer id -> transactional id
        self._replaying = False

    @property
    def config(self):
        return self.broker.config

    def now(self) -> int:
        return self.broker.now_ms()

    # -- where a transactional id lives --------------------------------------------------------------------------

    def _partition(self, transactional_id: str):
        topic = self.broker.internal_topic(TRANSACTION_STATE_TOPIC)
        return topic.partitions[partition_for_key(transactional_id, len(topic.partitions))]

    def check_coordinator(self, request, transactional_id: str) -> None:
        """NOT_COORDINATOR unless the request reached the leader of the id's ``__transaction_state`` partition."""
        partition = self._partition(transactional_id)
        if partition.leader_id == NO_LEADER or not self.broker.cluster.nodes[partition.leader_id].up:
            raise KafkaError(E.COORDINATOR_NOT_AVAILABLE, "The coordinator is not available.")
        node = request.node if request.node is not None else self.broker.first_node()
        if node.node_id != partition.leader_id:
            raise KafkaError(E.NOT_COORDINATOR, f"This is not the correct coordinator for {transactional_id!r}.")

    def coordinates(self, node_id: int, transactional_id: str) -> bool:
        return self._partition(transactional_id).leader_id == node_id

    def coordinator_epoch(self, transactional_id: str) -> int:
        return max(0, self._partition(transactional_id).leader_epoch)

    def _write(self, meta: TxnMetadata, *, tombstone: bool = False) -> None:
        """Append the id's state to its ``__transaction_state`` partition (nothing while replaying)."""
        if self._replaying:
            return
        value = None if tombstone else records.encode_value(meta.value())
        batch = encode_batch([{"key": records.encode_key(meta.transactional_id), "value": value,
                               "timestamp": self.now()}])
        self.broker.append_internal(self._partition(meta.transactional_id), batch)

    def _set_producer(self, meta: TxnMetadata, producer_id: int) -> None:
        if meta.producer_id != producer_id:
            if self.by_producer.get(meta.producer_id) == meta.transactional_id:
                del self.by_producer[meta.producer_id]
            meta.prev_producer_id = meta.producer_id
            meta.producer_id = producer_id
        self.by_producer[producer_id] = meta.transactional_id

    # -- InitProducerId (KIP-360) ---------------------------------------------------------------------------------

    def init_producer_id(self, transactional_id: str, timeout_ms: int, expected: tuple[int, int] | None
                         ) -> tuple[ErrorCode, int, int]:
        """(error, producer id, epoch) for a transactional producer, by KIP-360's rules as Kafka 4.3 applies them:
        no expected id/epoch -> a new epoch (a new instance; LastEpoch -1); the expected epoch is the current one ->
        a new epoch, LastEpoch keeps the old; it is LastEpoch -> a retry: the current epoch again (Empty, as Kafka's
        prepareIncrementProducerEpoch leaves it); anything else PRODUCER_FENCED. An exhausted epoch moves to a new
        producer id. An open transaction is fenced and aborted first (``_fence_and_abort``), and the caller is told
        CONCURRENT_TRANSACTIONS to try again."""
        if not transactional_id:
            return E.INVALID_REQUEST, NO_PRODUCER_ID, NO_EPOCH
        if not 0 < timeout_ms <= self.config["transaction.max.timeout.ms"]:
            return E.INVALID_TRANSACTION_TIMEOUT, NO_PRODUCER_ID, NO_EPOCH
        now = self.now()
        meta = self.txns.get(transactional_id)
        if meta is None:
            meta = TxnMetadata(transactional_id, self.broker.next_producer_id(), timeout_ms, now)
            self.txns[transactional_id] = meta
            self.by_producer[meta.producer_id] = transactional_id
        if expected is not None:
            pid, epoch = expected
            if not (meta.epoch == NO_EPOCH or pid == meta.producer_id
                    or (pid == meta.prev_producer_id and epoch_exhausted(epoch))):
                return E.PRODUCER_FENCED, NO_PRODUCER_ID, NO_EPOCH
        if meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            return E.CONCURRENT_TRANSACTIONS, NO_PRODUCER_ID, NO_EPOCH
        if meta.state is TxnState.ONGOING:
            self._fence_and_abort(meta, "a new producer instance called InitProducerId")
            return E.CONCURRENT_TRANSACTIONS, NO_PRODUCER_ID, NO_EPOCH
        if epoch_exhausted(meta.epoch) and (expected is None or expected[1] == meta.epoch):
            last = meta.epoch if expected is not None else NO_EPOCH
            self._set_producer(meta, self.broker.next_producer_id())
            new_epoch = 0
        elif expected is None:
            new_epoch, last = meta.epoch + 1, NO_EPOCH
        elif meta.epoch == NO_EPOCH or expected[1] == meta.epoch:
            new_epoch, last = meta.epoch + 1, meta.epoch
        elif expected[1] == meta.last_epoch:
            # a retry of a bump that succeeded (or of the abort that fenced it): the same epoch, Empty again
            new_epoch, last = meta.epoch, meta.last_epoch
        else:
            return E.PRODUCER_FENCED, NO_PRODUCER_ID, NO_EPOCH
        meta.to(Event.INIT)
        meta.epoch, meta.last_epoch, meta.timeout_ms = new_epoch, last, timeout_ms
        meta.partitions.clear()
        meta.start_ms, meta.last_update_ms = -1, now
        self._write(meta)
        return E.NONE, meta.producer_id, meta.epoch

    # -- AddPartitionsToTxn / AddOffsetsToTxn ---------------------------------------------------------------------

    def _owned(self, transactional_id: str, producer_id: int, epoch: int) -> TxnMetadata:
        meta = self.txns.get(transactional_id)
        if meta is None or meta.producer_id != producer_id:
            raise KafkaError(E.INVALID_PRODUCER_ID_MAPPING,
                             f"producer id {producer_id} is not the one of transactional id {transactional_id!r}")
        if meta.epoch != epoch:
            raise KafkaError(E.PRODUCER_FENCED, f"epoch {epoch} is not the current epoch {meta.epoch}")
        return meta

    def add_partitions(self, transactional_id: str, producer_id: int, epoch: int,
                       partitions: Iterable[tuple[str, int]], client_version: int = 0) -> ErrorCode:
        """Add partitions to the transaction, starting it if none is open (Kafka's handleAddPartitionsToTransaction).
        ``client_version`` 2: the add is KIP-890 part 2's implicit one, by a client that ends with EndTxn v5."""
        if not transactional_id:
            return E.INVALID_REQUEST
        try:
            meta = self._owned(transactional_id, producer_id, epoch)
        except KafkaError as exc:
            return exc.code
        if meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT, TxnState.PREPARE_EPOCH_FENCE):
            return E.CONCURRENT_TRANSACTIONS
        wanted = list(dict.fromkeys(partitions))
        if meta.state is TxnState.ONGOING and all(key in meta.partitions for key in wanted):
            return E.NONE
        now = self.now()
        if meta.state is not TxnState.ONGOING:
            meta.start_ms = now
        meta.client_version = client_version          # Kafka's prepareAddPartitions: the version of this add
        meta.to(Event.ADD)
        meta.add(wanted)
        meta.last_update_ms = now
        self._write(meta)
        return E.NONE

    def verify_partition(self, transactional_id: str, producer_id: int, epoch: int, topic: str, partition: int
                         ) -> ErrorCode:
        """KIP-890's verification (Kafka's handleVerifyPartitionsInTransaction): is the partition in the producer's
        transaction? TRANSACTION_ABORTABLE when not (callers turn it into what their clients know); a wrong
        producer id INVALID_PRODUCER_ID_MAPPING, a wrong epoch PRODUCER_FENCED, an ending transaction
        CONCURRENT_TRANSACTIONS."""
        if not transactional_id:
            return E.INVALID_REQUEST
        try:
            meta = self._owned(transactional_id, producer_id, epoch)
        except KafkaError as exc:
            return exc.code
        if meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            return E.CONCURRENT_TRANSACTIONS
        return E.NONE if (topic, partition) in meta.partitions else E.TRANSACTION_ABORTABLE

    def offsets_partition(self, group_id: str) -> tuple[str, int]:
        topic = self.broker.internal_topic(GROUP_METADATA_TOPIC)
        return GROUP_METADATA_TOPIC, partition_for_key(group_id, len(topic.partitions))

    # -- EndTxn ---------------------------------------------------------------------------------------------------

    def end_txn(self, transactional_id: str, producer_id: int, epoch: int, commit: bool, version: int
                ) -> tuple[ErrorCode, int, int]:
        """(error, producer id, epoch) of EndTxn (Kafka's TransactionCoordinator.endTransaction). From v5 (KIP-890
        part 2) every transaction ends with a new epoch, which the answer carries, and a retry of such an end (the
        epoch before the bump) is told NONE; before v5, Kafka's transaction version 1 rules."""
        if not transactional_id:
            return E.INVALID_REQUEST, NO_PRODUCER_ID, NO_EPOCH
        meta = self.txns.get(transactional_id)
        if meta is None:
            return E.INVALID_PRODUCER_ID_MAPPING, NO_PRODUCER_ID, NO_EPOCH
        if version >= TV2_END_TXN_VERSION:
            return self._end_txn_v2(meta, producer_id, epoch, commit)
        if meta.producer_id != producer_id:
            return E.INVALID_PRODUCER_ID_MAPPING, NO_PRODUCER_ID, NO_EPOCH
        if epoch != meta.epoch:
            return E.PRODUCER_FENCED, NO_PRODUCER_ID, NO_EPOCH
        state = meta.state
        if state is TxnState.ONGOING:
            meta.client_version = 0
            self._end(meta, commit)
            return E.NONE, NO_PRODUCER_ID, NO_EPOCH
        if state in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT):
            same = (state is TxnState.COMPLETE_COMMIT) == commit
            return (E.NONE if same else E.INVALID_TXN_STATE), NO_PRODUCER_ID, NO_EPOCH
        if state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            same = (state is TxnState.PREPARE_COMMIT) == commit
            return (E.CONCURRENT_TRANSACTIONS if same else E.INVALID_TXN_STATE), NO_PRODUCER_ID, NO_EPOCH
        return E.INVALID_TXN_STATE, NO_PRODUCER_ID, NO_EPOCH

    def _end_txn_v2(self, meta: TxnMetadata, producer_id: int, epoch: int, commit: bool
                    ) -> tuple[ErrorCode, int, int]:
        """Transaction version 2's table: on a completed transaction a retry (the epoch before the bump, or the last
        epoch of the producer id the bump retired) of the same end is NONE, of the other INVALID_TXN_STATE; with the
        current epoch, an abort ends an empty transaction (another bump) and a commit is INVALID_TXN_STATE."""
        retry_on_overflow = producer_id == meta.prev_producer_id and epoch == MAX_EPOCH - 1 and meta.epoch == 0
        retry_on_bump = meta.epoch == epoch + 1
        state = meta.state
        if state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            valid = retry_on_bump
        elif state in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT):
            valid = retry_on_bump or retry_on_overflow or epoch == meta.epoch
        else:
            valid = epoch == meta.epoch
        retry = retry_on_bump or retry_on_overflow
        if meta.producer_id != producer_id and not retry_on_overflow:
            return E.INVALID_PRODUCER_ID_MAPPING, NO_PRODUCER_ID, NO_EPOCH
        if not valid:
            return E.PRODUCER_FENCED, NO_PRODUCER_ID, NO_EPOCH
        if state is TxnState.ONGOING:
            return self._end_with_bump(meta, commit, nothing_added=False)
        if state in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT):
            ended_so = (state is TxnState.COMPLETE_COMMIT) == commit
            if retry:
                return (E.NONE, meta.producer_id, meta.epoch) if ended_so else (E.INVALID_TXN_STATE, NO_PRODUCER_ID,
                                                                                  NO_EPOCH)
            if commit:
                return E.INVALID_TXN_STATE, NO_PRODUCER_ID, NO_EPOCH
            return self._end_with_bump(meta, commit=False, nothing_added=True)
        if state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            same = (state is TxnState.PREPARE_COMMIT) == commit
            return (E.CONCURRENT_TRANSACTIONS if same else E.INVALID_TXN_STATE), NO_PRODUCER_ID, NO_EPOCH
        if state is TxnState.EMPTY and not commit:
            return self._end_with_bump(meta, commit=False, nothing_added=True)
        return E.INVALID_TXN_STATE, NO_PRODUCER_ID, NO_EPOCH

    def _end_with_bump(self, meta: TxnMetadata, commit: bool, nothing_added: bool) -> tuple[ErrorCode, int, int]:
        """End the transaction with transaction version 2's epoch bump; an abort with nothing added starts (and
        ends) its transaction now, as Kafka's prepareAbortOrCommit dates it."""
        meta.client_version = 2
        self._bump_for_end(meta)
        if nothing_added:
            meta.start_ms = self.now()
        self._end(meta, commit)
        return E.NONE, meta.producer_id, meta.epoch

    def _bump_for_end(self, meta: TxnMetadata) -> None:
        """KIP-890 part 2: the markers of a transaction carry the next epoch. An exhausted producer id still writes
        its markers (at the last epoch) and moves to a new id, epoch 0, once they are written (``_end``), as Kafka's
        prepareComplete does with NextProducerId."""
        if epoch_exhausted(meta.epoch):
            meta.next_producer_id = self.broker.next_producer_id()
        meta.last_epoch = meta.epoch
        meta.epoch = min(meta.epoch + 1, MAX_EPOCH)

    def _end(self, meta: TxnMetadata, commit: bool) -> None:
        """Prepare, write every partition's marker, complete: the two records Kafka writes, around the markers."""
        now = self.now()
        meta.to(Event.COMMIT if commit else Event.ABORT)
        meta.last_update_ms = now
        self._write(meta)
        self._write_markers(meta, commit)
        meta.to(Event.MARKERS_WRITTEN)
        meta.partitions.clear()
        if meta.next_producer_id != NO_PRODUCER_ID:
            self._set_producer(meta, meta.next_producer_id)
            meta.next_producer_id, meta.epoch = NO_PRODUCER_ID, 0
        meta.last_update_ms = self.now()
        self._write(meta)

    def _write_markers(self, meta: TxnMetadata, commit: bool) -> None:
        coordinator_epoch = self.coordinator_epoch(meta.transactional_id)
        for topic_name, index in sorted(meta.partitions):
            topic = self.broker.cluster.topics.get(topic_name)
            partition = None if topic is None else topic.partition_at(index)
            if partition is None:
                log.info("transaction %r: %s-%d is gone; no marker", meta.transactional_id, topic_name, index)
                continue
            try:
                self.write_marker(partition, meta.producer_id, meta.epoch, commit, coordinator_epoch,
                                  meta.client_version)
            except KafkaError as exc:
                log.warning("transaction %r: marker for %s-%d refused: %s", meta.transactional_id, topic_name,
                            index, exc)

    def write_marker(self, partition, producer_id: int, epoch: int, commit: bool, coordinator_epoch: int,
                     transaction_version: int = 0) -> None:
        """Append a COMMIT or ABORT marker to one partition and close the producer's transaction there (also
        what WriteTxnMarkers does). The group coordinator applies or drops transactional offsets at a marker of
        ``__consumer_offsets``."""
        producers = partition.producers
        producers.check_marker(producer_id, epoch, coordinator_epoch, transaction_version)
        now = self.now()
        batch = end_txn_marker_batch(commit, producer_id=producer_id, producer_epoch=epoch,
                                     coordinator_epoch=coordinator_epoch, timestamp=now)
        offset, _ = self.broker.append_internal(partition, batch, notify=False)
        producers.end_transaction(producer_id, epoch, commit, offset, coordinator_epoch, now, check=False)
        if partition.topic == GROUP_METADATA_TOPIC:
            self.broker.groups.transaction_ended(partition.index, producer_id, commit)
        self.broker.appended(partition)              # the LSO moved: read_committed fetches look again

    def _fence_and_abort(self, meta: TxnMetadata, why: str) -> None:
        """Fence an open transaction's producer and abort the transaction with the fenced epoch: the old instance's
        next request is fenced (Kafka's prepareFenceProducerEpoch, then an abort that does not come from the
        client). The fence is a pending state Kafka never writes; the abort goes by the cluster's transaction
        version, whatever the client's: at 2 its own bump is the fence (LastEpoch keeps the fenced instance's
        epoch, so that instance's KIP-360 retry gets the new epoch), at 1 the epoch moves by one and LastEpoch is
        forgotten. Either way the epoch moves on once."""
        log.info("transaction %r (producer %d epoch %d) aborted: %s", meta.transactional_id, meta.producer_id,
                 meta.epoch, why)
        meta.to(Event.FENCE)
        if self.broker.features.level(TRANSACTION_VERSION) >= 2:
            meta.client_version = 2
            self._bump_for_end(meta)
        else:
            if meta.epoch < MAX_EPOCH:
                meta.epoch += 1
            meta.last_epoch = NO_EPOCH
        meta.last_update_ms = self.now()
        self._end(meta, commit=False)

    # -- periodic work --------------------------------------------------------------------------------------------

    def abort_timed_out(self, now_ms: int) -> None:
        """``transaction.abort.timed.out.transaction.cleanup.interval.ms``: abort transactions open longer than
        their timeout, fencing their producer."""
        for meta in list(self.txns.values()):
            if meta.state is TxnState.ONGOING and now_ms - meta.start_ms > meta.timeout_ms:
                self._fence_and_abort(meta, f"open longer than its timeout of {meta.timeout_ms} ms")

    def expire_transactional_ids(self, now_ms: int) -> None:
        """``transactional.id.expiration.ms`` after its last update, an id with no open transaction is removed (a
        tombstone in the log); using it again gives a new producer id."""
        expiration = self.config["transactional.id.expiration.ms"]
        for meta in list(self.txns.values()):
            if meta.state.completed and now_ms - meta.last_update_ms >= expiration:
                meta.to(Event.EXPIRE)
                self._write(meta, tombstone=True)
                del self.txns[meta.transactional_id]
                if self.by_producer.get(meta.producer_id) == meta.transactional_id:
                    del self.by_producer[meta.producer_id]
                log.info("transactional id %r expired", meta.transactional_id)

    # -- admin ----------------------------------------------------------------------------------------------------

    def list(self, node_id: int, states: set[str], producer_ids: set[int], min_duration_ms: int,
             regex: CompiledPattern | None) -> list[TxnMetadata]:
        """The transactions this node coordinates that pass ListTransactions' filters (all of them must). The duration
        filter keeps, as Kafka's TransactionStateManager does, every id (whatever its state) whose last transaction
        started more than that long ago; an id that never started one (start -1) always passes."""
        now = self.now()
        found = []
        for meta in self.txns.values():
            if not self.coordinates(node_id, meta.transactional_id):
                continue
            if states and meta.state.wire_name not in states:
                continue
            if producer_ids and meta.producer_id not in producer_ids:
                continue
            if min_duration_ms >= 0 and now - meta.start_ms <= min_duration_ms:
                continue
            if regex is not None and not regex.fullmatch(meta.transactional_id):
                continue
            found.append(meta)
        return found

    # -- replay ---------------------------------------------------------------------------------------------------

    def unload(self) -> None:
        """``__transaction_state`` was deleted: the transactional ids its log held are gone (a restart would find
        none), as when Kafka's coordinator resigns its partitions."""
        if self.txns:
            log.warning("%s deleted: %d transactional id(s) forgotten", TRANSACTION_STATE_TOPIC, len(self.txns))
        self.txns.clear()
        self.by_producer.clear()

    def replay(self) -> None:
        """Rebuild every transactional id from ``__transaction_state``; finish what a stop left half done (a
        Prepare* state writes its markers, a PrepareEpochFence aborts)."""
        topic = self.broker.cluster.topics.get(TRANSACTION_STATE_TOPIC)
        if topic is None:
            return
        self._replaying = True
        try:
            for partition in topic.partitions:
                for stored in partition.log.batches():
                    try:
                        batches = decode_batches(stored.data)
                    except CorruptRecordError as exc:
                        log.warning("%s-%d: unreadable batch at %d skipped: %s", TRANSACTION_STATE_TOPIC,
                                    partition.index, stored.base_offset, exc)
                        continue
                    for batch in batches:
                        if batch.is_control:
                            continue
                        for rec in batch.records:
                            self._apply(partition.index, rec)
        finally:
            self._replaying = False
        for meta in list(self.txns.values()):
            self.by_producer[meta.producer_id] = meta.transactional_id
            if meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
                self._write_markers(meta, meta.state is TxnState.PREPARE_COMMIT)
                meta.to(Event.MARKERS_WRITTEN)
                meta.partitions.clear()
                meta.last_update_ms = self.now()
                self._write(meta)
            elif meta.state is TxnState.PREPARE_EPOCH_FENCE:
                meta.to(Event.ABORT)
                self._write(meta)
                self._write_markers(meta, False)
                meta.to(Event.MARKERS_WRITTEN)
                meta.partitions.clear()
                self._write(meta)
        if self.txns:
            log.info("replayed %d transactional id(s) from %s", len(self.txns), TRANSACTION_STATE_TOPIC)

    def _apply(self, index: int, rec) -> None:
        try:
            transactional_id, value = records.decode(rec.key, rec.value)
        except ValueError as exc:
            log.warning("%s-%d offset %d: record skipped: %s", TRANSACTION_STATE_TOPIC, index, rec.offset, exc)
            return
        if value is None:
            self.txns.pop(transactional_id, None)
            return
        try:
            state = TxnState(value.transaction_status)
        except ValueError:
            log.warning("transactional id %r: unknown state %d skipped", transactional_id, value.transaction_status)
            return
        self.txns[transactional_id] = TxnMetadata(
            transactional_id, value.producer_id, value.transaction_timeout_ms,
            value.transaction_last_update_timestamp_ms, epoch=value.producer_epoch,
            last_epoch=getattr(value, "last_producer_epoch", NO_EPOCH),
            prev_producer_id=getattr(value, "previous_producer_id", NO_PRODUCER_ID),
            next_producer_id=getattr(value, "next_producer_id", NO_PRODUCER_ID), state=state,
            partitions=dict.fromkeys((p.topic, i) for p in value.transaction_partitions or [] for i in p.partition_ids),
            start_ms=value.transaction_start_timestamp_ms,
            client_version=getattr(value, "client_transaction_version", 0))
