"""The transaction coordinator: producer ids and epochs of transactional ids (KIP-360), transactions and markers.

Kafka's TransactionCoordinator and TransactionStateManager on the core's clock. The coordinator of a transactional
id is the leader of the ``__transaction_state`` partition the id hashes to.

One state path: an operation reads the live ``TxnMetadata``, decides, and returns a ``CoordinatorResult`` whose
records (``TxnRecord``) carry the id's new metadata (``TxnMetadata.prepare``, Kafka's TxnTransitMetadata) and whose
response is the answer. ``_append`` writes each record to the id's partition and then hands it to ``_replay``, the
function ``load`` also feeds every stored record to at start: nothing else changes a transaction's state, so what a
restart rebuilds is what was served. Markers are written straight into the partitions' logs (one process holds
every log), so a transaction goes Prepare* -> Complete* within one request; both records are written, as Kafka
writes them, and a Prepare* that a stop interrupted is completed at load the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, TypeVar

from kafkamock.broker.cluster import GROUP_METADATA_TOPIC, NO_LEADER, TRANSACTION_STATE_TOPIC, partition_for_key
from kafkamock.broker.coordinator_log import logged_batches
from kafkamock.broker.coordinator_result import CoordinatorResult
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.re2_pattern import CompiledPattern
from kafkamock.broker.transactions import records
from kafkamock.broker.transactions.metadata import (
    MAX_EPOCH,
    NO_EPOCH,
    NO_PRODUCER_ID,
    TopicPartition,
    TxnMetadata,
    epoch_exhausted,
)
from kafkamock.broker.transactions.records import TxnRecord
from kafkamock.broker.transactions.state import Event, TxnState, transition
from kafkamock.records import encode_batch, end_txn_marker_batch

if TYPE_CHECKING:
    from kafkamock.broker.cluster import Partition
    from kafkamock.broker.config import BrokerConfig
    from kafkamock.broker.core import Request
    from kafkamock.broker.services import CoordinatorServices

__all__ = ["MAX_EPOCH", "NO_EPOCH", "NO_PRODUCER_ID", "TV2_END_TXN_VERSION", "TransactionCoordinator", "TxnMetadata",
           "epoch_exhausted", "fenced_code"]

log = logging.getLogger("kafkamock.transactions")
E = ErrorCode
TV2_END_TXN_VERSION = 5          # EndTxn v5+: KIP-890 part 2, a new epoch with every transaction

Answer = tuple[ErrorCode, int, int]
"""(error, producer id, epoch): what InitProducerId and EndTxn answer."""
TxnResult = CoordinatorResult[TxnRecord, Answer]
ResponseT = TypeVar("ResponseT")
OffsetsMarker = Callable[[int, int, bool], None]
"""(``__consumer_offsets`` partition, producer id, commit): a marker reached that partition."""


def fenced_code(version: int, first_fenced_version: int) -> ErrorCode:
    """PRODUCER_FENCED (KIP-588) for clients that know it, INVALID_PRODUCER_EPOCH for older versions."""
    return E.PRODUCER_FENCED if version >= first_fenced_version else E.INVALID_PRODUCER_EPOCH


def _failed(code: ErrorCode) -> TxnResult:
    return CoordinatorResult((code, NO_PRODUCER_ID, NO_EPOCH))


class TransactionCoordinator:
    """Every transactional id of the cluster. ``services`` gives the clock, the configs, the logs and the append;
    ``next_producer_id`` hands out producer ids, ``transaction_version`` is the cluster's ``transaction.version``
    level, and ``offsets_marker`` is told of every marker written to ``__consumer_offsets`` (the group
    coordinator's pending transactional offsets)."""

    def __init__(self, services: CoordinatorServices, *, next_producer_id: Callable[[], int],
                 transaction_version: Callable[[], int], offsets_marker: OffsetsMarker) -> None:
        self.services = services
        self._next_producer_id = next_producer_id
        self._transaction_version = transaction_version
        self._offsets_marker = offsets_marker
        self.txns: dict[str, TxnMetadata] = {}

    @property
    def config(self) -> BrokerConfig:
        return self.services.config

    def now(self) -> int:
        return self.services.now_ms()

    # -- where a transactional id lives --------------------------------------------------------------------------

    def _partition(self, transactional_id: str) -> Partition:
        topic = self.services.internal_topic(TRANSACTION_STATE_TOPIC)
        return topic.partitions[partition_for_key(transactional_id, len(topic.partitions))]

    def check_coordinator(self, request: Request, transactional_id: str) -> None:
        """NOT_COORDINATOR unless the request reached the leader of the id's ``__transaction_state`` partition."""
        partition = self._partition(transactional_id)
        if partition.leader_id == NO_LEADER or not self.services.metadata.nodes[partition.leader_id].up:
            raise KafkaError(E.COORDINATOR_NOT_AVAILABLE, "The coordinator is not available.")
        node = request.node if request.node is not None else self.services.first_node()
        if node.node_id != partition.leader_id:
            raise KafkaError(E.NOT_COORDINATOR, f"This is not the correct coordinator for {transactional_id!r}.")

    def coordinates(self, node_id: int, transactional_id: str) -> bool:
        return self._partition(transactional_id).leader_id == node_id

    def coordinator_epoch(self, transactional_id: str) -> int:
        return max(0, self._partition(transactional_id).leader_epoch)

    # -- the one state path ---------------------------------------------------------------------------------------

    def _run(self, result: CoordinatorResult[TxnRecord, ResponseT]) -> ResponseT:
        """Append and replay an operation's records, finish any transaction they moved to PrepareCommit or
        PrepareAbort (its markers, then its Complete* record: Kafka's callback of the prepare's append), and give
        the operation's answer."""
        self._append(result.records)
        for record in result.records:
            meta = self.txns.get(record.transactional_id)
            if meta is not None and meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
                self._complete(meta)
        return result.response

    def _append(self, txn_records: Sequence[TxnRecord]) -> None:
        """Write each record to its id's ``__transaction_state`` partition, then replay it: the only way the state
        of a transactional id changes (Kafka's appendTransactionToLog, whose completion applies the transition)."""
        for record in txn_records:
            batch = encode_batch([records.log_record(record, self.now())])
            self.services.append_internal(self._partition(record.transactional_id), batch)
            self._replay(record)

    def _replay(self, record: TxnRecord) -> None:
        """Apply one record: the id takes the record's metadata, or is gone (a tombstone). The same for a record just
        appended and for one ``load`` reads back at start."""
        transactional_id, metadata = record.transactional_id, record.metadata
        if metadata is None:
            self.txns.pop(transactional_id, None)
            return
        meta = self.txns.get(transactional_id)
        if meta is None:
            self.txns[transactional_id] = metadata.copy()
        else:
            meta.complete(metadata)

    # -- InitProducerId (KIP-360) ---------------------------------------------------------------------------------

    def init_producer_id(self, transactional_id: str, timeout_ms: int, expected: tuple[int, int] | None) -> Answer:
        """(error, producer id, epoch) for a transactional producer (``_init_producer_id``)."""
        return self._run(self._init_producer_id(transactional_id, timeout_ms, expected))

    def _init_producer_id(self, transactional_id: str, timeout_ms: int, expected: tuple[int, int] | None
                          ) -> TxnResult:
        """KIP-360's rules as Kafka 4.3 applies them: no expected id/epoch -> a new epoch (a new instance;
        LastEpoch -1); the expected epoch is the current one -> a new epoch, LastEpoch keeps the old; it is
        LastEpoch -> a retry: the current epoch again (Empty, as Kafka's prepareIncrementProducerEpoch leaves it);
        anything else PRODUCER_FENCED. An exhausted epoch moves to a new producer id. An open transaction is fenced
        and aborted first (``_fence_and_abort``), and the caller is told CONCURRENT_TRANSACTIONS to try again."""
        if not transactional_id:
            return _failed(E.INVALID_REQUEST)
        if not 0 < timeout_ms <= self.config["transaction.max.timeout.ms"]:
            return _failed(E.INVALID_TRANSACTION_TIMEOUT)
        now = self.now()
        meta = self.txns.get(transactional_id)
        if meta is None:      # a new id: its first record (Empty, epoch 0) creates it
            meta = TxnMetadata(transactional_id, self._next_producer_id(), timeout_ms, now)
        if expected is not None:
            pid, epoch = expected
            if not (meta.epoch == NO_EPOCH or pid == meta.producer_id
                    or (pid == meta.prev_producer_id and epoch_exhausted(epoch))):
                return _failed(E.PRODUCER_FENCED)
        if meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            return _failed(E.CONCURRENT_TRANSACTIONS)
        if meta.state is TxnState.ONGOING:
            fenced = self._fence_and_abort(meta, "a new producer instance called InitProducerId")
            return CoordinatorResult((E.CONCURRENT_TRANSACTIONS, NO_PRODUCER_ID, NO_EPOCH), [fenced])
        producer_id, prev_producer_id = meta.producer_id, meta.prev_producer_id
        if epoch_exhausted(meta.epoch) and (expected is None or expected[1] == meta.epoch):
            last = meta.epoch if expected is not None else NO_EPOCH
            producer_id, prev_producer_id = self._next_producer_id(), meta.producer_id
            new_epoch = 0
        elif expected is None:
            new_epoch, last = meta.epoch + 1, NO_EPOCH
        elif meta.epoch == NO_EPOCH or expected[1] == meta.epoch:
            new_epoch, last = meta.epoch + 1, meta.epoch
        elif expected[1] == meta.last_epoch:
            # a retry of a bump that succeeded (or of the abort that fenced it): the same epoch, Empty again
            new_epoch, last = meta.epoch, meta.last_epoch
        else:
            return _failed(E.PRODUCER_FENCED)
        transit = meta.prepare(Event.INIT, producer_id=producer_id, prev_producer_id=prev_producer_id,
                               epoch=new_epoch, last_epoch=last, timeout_ms=timeout_ms, partitions={}, start_ms=-1,
                               last_update_ms=now)
        return CoordinatorResult((E.NONE, transit.producer_id, transit.epoch),
                                 [TxnRecord(transactional_id, transit)])

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
                       partitions: Iterable[TopicPartition], client_version: int = 0) -> ErrorCode:
        """Add partitions to the transaction, starting it if none is open (``_add_partitions``)."""
        return self._run(self._add_partitions(transactional_id, producer_id, epoch, partitions, client_version))

    def _add_partitions(self, transactional_id: str, producer_id: int, epoch: int,
                        partitions: Iterable[TopicPartition], client_version: int
                        ) -> CoordinatorResult[TxnRecord, ErrorCode]:
        """Kafka's handleAddPartitionsToTransaction. ``client_version`` 2: the add is KIP-890 part 2's implicit one,
        by a client that ends with EndTxn v5 (Kafka's prepareAddPartitions records the version of this add)."""
        if not transactional_id:
            return CoordinatorResult(E.INVALID_REQUEST)
        try:
            meta = self._owned(transactional_id, producer_id, epoch)
        except KafkaError as exc:
            return CoordinatorResult(exc.code)
        if meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT, TxnState.PREPARE_EPOCH_FENCE):
            return CoordinatorResult(E.CONCURRENT_TRANSACTIONS)
        wanted = list(dict.fromkeys(partitions))
        if meta.state is TxnState.ONGOING and all(key in meta.partitions for key in wanted):
            return CoordinatorResult(E.NONE)
        now = self.now()
        transit = meta.prepare(Event.ADD, start_ms=meta.start_ms if meta.state is TxnState.ONGOING else now,
                               client_version=client_version, partitions={**meta.partitions, **dict.fromkeys(wanted)},
                               last_update_ms=now)
        return CoordinatorResult(E.NONE, [TxnRecord(transactional_id, transit)])

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

    def offsets_partition(self, group_id: str) -> TopicPartition:
        topic = self.services.internal_topic(GROUP_METADATA_TOPIC)
        return GROUP_METADATA_TOPIC, partition_for_key(group_id, len(topic.partitions))

    # -- EndTxn ---------------------------------------------------------------------------------------------------

    def end_txn(self, transactional_id: str, producer_id: int, epoch: int, commit: bool, version: int) -> Answer:
        """(error, producer id, epoch) of EndTxn (``_end_txn``)."""
        return self._run(self._end_txn(transactional_id, producer_id, epoch, commit, version))

    def _end_txn(self, transactional_id: str, producer_id: int, epoch: int, commit: bool, version: int
                 ) -> TxnResult:
        """Kafka's TransactionCoordinator.endTransaction. From v5 (KIP-890 part 2) every transaction ends with a new
        epoch, which the answer carries, and a retry of such an end (the epoch before the bump) is told NONE; before
        v5, Kafka's transaction version 1 rules. The record is the PrepareCommit/PrepareAbort; ``_run`` completes."""
        if not transactional_id:
            return _failed(E.INVALID_REQUEST)
        meta = self.txns.get(transactional_id)
        if meta is None:
            return _failed(E.INVALID_PRODUCER_ID_MAPPING)
        if version >= TV2_END_TXN_VERSION:
            return self._end_txn_v2(meta, producer_id, epoch, commit)
        if meta.producer_id != producer_id:
            return _failed(E.INVALID_PRODUCER_ID_MAPPING)
        if epoch != meta.epoch:
            return _failed(E.PRODUCER_FENCED)
        state = meta.state
        if state is TxnState.ONGOING:
            prepared = self._prepare_end(meta, commit, client_version=0)
            return CoordinatorResult((E.NONE, NO_PRODUCER_ID, NO_EPOCH), [prepared])
        if state in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT):
            same = (state is TxnState.COMPLETE_COMMIT) == commit
            return _failed(E.NONE if same else E.INVALID_TXN_STATE)
        if state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            same = (state is TxnState.PREPARE_COMMIT) == commit
            return _failed(E.CONCURRENT_TRANSACTIONS if same else E.INVALID_TXN_STATE)
        return _failed(E.INVALID_TXN_STATE)

    def _end_txn_v2(self, meta: TxnMetadata, producer_id: int, epoch: int, commit: bool) -> TxnResult:
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
            return _failed(E.INVALID_PRODUCER_ID_MAPPING)
        if not valid:
            return _failed(E.PRODUCER_FENCED)
        if state is TxnState.ONGOING:
            return self._end_with_bump(meta, commit, nothing_added=False)
        if state in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT):
            ended_so = (state is TxnState.COMPLETE_COMMIT) == commit
            if retry:
                return CoordinatorResult((E.NONE, meta.producer_id, meta.epoch)) if ended_so else _failed(
                    E.INVALID_TXN_STATE)
            if commit:
                return _failed(E.INVALID_TXN_STATE)
            return self._end_with_bump(meta, commit=False, nothing_added=True)
        if state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            same = (state is TxnState.PREPARE_COMMIT) == commit
            return _failed(E.CONCURRENT_TRANSACTIONS if same else E.INVALID_TXN_STATE)
        if state is TxnState.EMPTY and not commit:
            return self._end_with_bump(meta, commit=False, nothing_added=True)
        return _failed(E.INVALID_TXN_STATE)

    def _end_with_bump(self, meta: TxnMetadata, commit: bool, nothing_added: bool) -> TxnResult:
        """End the transaction with transaction version 2's epoch bump; an abort with nothing added starts (and
        ends) its transaction now, as Kafka's prepareAbortOrCommit dates it. The answer is the producer id and
        epoch the transaction completes with (a new id at epoch 0 once an exhausted one is retired)."""
        prepared = self._prepare_end(meta, commit, client_version=2, **self._bump(meta),
                                     start_ms=self.now() if nothing_added else meta.start_ms)
        transit = prepared.metadata
        assert transit is not None
        if transit.next_producer_id != NO_PRODUCER_ID:
            return CoordinatorResult((E.NONE, transit.next_producer_id, 0), [prepared])
        return CoordinatorResult((E.NONE, transit.producer_id, transit.epoch), [prepared])

    def _bump(self, meta: TxnMetadata) -> dict[str, int]:
        """KIP-890 part 2: the markers of a transaction carry the next epoch. An exhausted producer id still writes
        its markers (at the last epoch) and moves to a new id, epoch 0, once they are written (``_complete``), as
        Kafka's prepareComplete does with NextProducerId."""
        next_producer_id = self._next_producer_id() if epoch_exhausted(meta.epoch) else meta.next_producer_id
        return {"next_producer_id": next_producer_id, "last_epoch": meta.epoch, "epoch": min(meta.epoch + 1,
                                                                                                MAX_EPOCH)}

    def _prepare_end(self, meta: TxnMetadata, commit: bool, **changes: int) -> TxnRecord:
        """The PrepareCommit/PrepareAbort record that ends ``meta``'s transaction (with ``changes``)."""
        transit = meta.prepare(Event.COMMIT if commit else Event.ABORT, last_update_ms=self.now(), **changes)
        return TxnRecord(meta.transactional_id, transit)

    def _complete(self, meta: TxnMetadata) -> None:
        """Write the markers of a PrepareCommit/PrepareAbort transaction into every partition of it, then its
        Complete* record (Kafka's prepareComplete after the markers): no partitions, and the new producer id that
        an exhausted epoch asked for."""
        self._write_markers(meta, meta.state is TxnState.PREPARE_COMMIT)
        now = self.now()
        if meta.next_producer_id != NO_PRODUCER_ID:
            transit = meta.prepare(Event.MARKERS_WRITTEN, partitions={}, last_update_ms=now,
                                   producer_id=meta.next_producer_id, prev_producer_id=meta.producer_id,
                                   next_producer_id=NO_PRODUCER_ID, epoch=0)
        else:
            transit = meta.prepare(Event.MARKERS_WRITTEN, partitions={}, last_update_ms=now)
        self._append([TxnRecord(meta.transactional_id, transit)])

    def _write_markers(self, meta: TxnMetadata, commit: bool) -> None:
        coordinator_epoch = self.coordinator_epoch(meta.transactional_id)
        for topic_name, index in sorted(meta.partitions):
            topic = self.services.metadata.topics.get(topic_name)
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

    def write_marker(self, partition: Partition, producer_id: int, epoch: int, commit: bool, coordinator_epoch: int,
                     transaction_version: int = 0) -> None:
        """Append a COMMIT or ABORT marker to one partition and close the producer's transaction there by replaying
        the appended batch, as log recovery does (also what WriteTxnMarkers does). A marker of
        ``__consumer_offsets`` is passed on to ``offsets_marker``."""
        producers = partition.producers
        producers.check_marker(producer_id, epoch, coordinator_epoch, transaction_version)
        batch = end_txn_marker_batch(commit, producer_id=producer_id, producer_epoch=epoch,
                                     coordinator_epoch=coordinator_epoch, timestamp=self.now())
        offset, _ = self.services.append_internal(partition, batch, notify=False)
        producers.replay(batch, offset, (commit, coordinator_epoch))
        if partition.topic == GROUP_METADATA_TOPIC:
            self._offsets_marker(partition.index, producer_id, commit)
        self.services.appended(partition)            # the LSO moved: read_committed fetches look again

    def _fence_and_abort(self, meta: TxnMetadata, why: str) -> TxnRecord:
        """The PrepareAbort record that fences an open transaction's producer and aborts the transaction with the
        fenced epoch: the old instance's next request is fenced (Kafka's prepareFenceProducerEpoch, then an abort
        that does not come from the client). The fence is a pending state Kafka never writes; the abort goes by the
        cluster's transaction version, whatever the client's: at 2 its own bump is the fence (LastEpoch keeps the
        fenced instance's epoch, so that instance's KIP-360 retry gets the new epoch), at 1 the epoch moves by one
        and LastEpoch is forgotten. Either way the epoch moves on once."""
        log.info("transaction %r (producer %d epoch %d) aborted: %s", meta.transactional_id, meta.producer_id,
                 meta.epoch, why)
        if self._transaction_version() >= 2:
            fenced = meta.prepare(Event.FENCE, client_version=2, **self._bump(meta))
        else:
            fenced = meta.prepare(Event.FENCE, epoch=min(meta.epoch + 1, MAX_EPOCH), last_epoch=NO_EPOCH)
        return self._prepare_end(fenced, commit=False)

    # -- periodic work --------------------------------------------------------------------------------------------

    def abort_timed_out(self, now_ms: int) -> None:
        """``transaction.abort.timed.out.transaction.cleanup.interval.ms``: abort transactions open longer than
        their timeout, fencing their producer."""
        for meta in list(self.txns.values()):
            if meta.state is TxnState.ONGOING and now_ms - meta.start_ms > meta.timeout_ms:
                fenced = self._fence_and_abort(meta, f"open longer than its timeout of {meta.timeout_ms} ms")
                self._run(CoordinatorResult(None, [fenced]))

    def expire_transactional_ids(self, now_ms: int) -> None:
        """``transactional.id.expiration.ms`` after its last update, an id with no open transaction is removed (a
        tombstone in the log); using it again gives a new producer id."""
        expiration = self.config["transactional.id.expiration.ms"]
        for meta in list(self.txns.values()):
            if meta.state.completed and now_ms - meta.last_update_ms >= expiration:
                transition(meta.state, Event.EXPIRE)          # Dead: the tombstone removes it
                self._run(CoordinatorResult(None, [TxnRecord(meta.transactional_id, None)]))
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

    # -- load -----------------------------------------------------------------------------------------------------

    def unload(self) -> None:
        """``__transaction_state`` was deleted: the transactional ids its log held are gone (a restart would find
        none), as when Kafka's coordinator resigns its partitions (removeTransactionsForTxnTopicPartition)."""
        if self.txns:
            log.warning("%s deleted: %d transactional id(s) forgotten", TRANSACTION_STATE_TOPIC, len(self.txns))
        self.txns.clear()

    def replay(self) -> None:
        """Start: ``load`` every transactional id from ``__transaction_state``, then finish what a stop left half
        done, as the running coordinator does: a Prepare* state writes its markers and completes (``_complete``), a
        PrepareEpochFence aborts."""
        self.load()
        for meta in list(self.txns.values()):
            if meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
                self._complete(meta)
            elif meta.state is TxnState.PREPARE_EPOCH_FENCE:
                self._run(CoordinatorResult(None, [self._prepare_end(meta, commit=False)]))
        if self.txns:
            log.info("replayed %d transactional id(s) from %s", len(self.txns), TRANSACTION_STATE_TOPIC)

    def load(self) -> None:
        """Feed every record of ``__transaction_state`` to ``_replay``, in log order (Kafka's
        loadTransactionsForTxnTopicPartition); writes nothing."""
        topic = self.services.metadata.topics.get(TRANSACTION_STATE_TOPIC)
        if topic is None:
            return
        for partition, batch in logged_batches(topic):
            if batch.is_control:
                continue
            for rec in batch.records:
                try:
                    record = records.from_log(rec.key, rec.value)
                except ValueError as exc:
                    log.warning("%s-%d offset %d: record skipped: %s", TRANSACTION_STATE_TOPIC, partition.index,
                                rec.offset, exc)
                    continue
                self._replay(record)
