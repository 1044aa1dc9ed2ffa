"""Producer state per partition: epochs, sequences and open transactions, as Kafka's ProducerStateManager keeps them.

Kafka remembers the last five batches of each producer on each partition, so a retried batch is recognised
and answered with its original offsets instead of being written twice. A transactional producer's first batch on
the partition opens its transaction there; the COMMIT or ABORT marker closes it. The earliest open transaction's
first offset is the partition's first unstable offset (the last stable offset, LSO, for read_committed readers),
and every aborted transaction goes to the aborted-transaction index that read_committed fetches return.
The state outlives the batches it came from (retention, DeleteRecords): a producer is forgotten only
``producer.id.expiration.ms`` after its last write, and never while its transaction is open (KIP-360).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import cast

from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.records.layout import CONTROL_BIT, HEADER, TRANSACTIONAL_BIT
from kafkamock.storage.producer_snapshot import SnapshotEntry

NO_SEQUENCE = -1
MAX_EPOCH = 2**15 - 1
MAX_REMEMBERED = 5
INT32_MAX = 2**31 - 1


@dataclass
class BatchMetadata:
    first_seq: int
    last_seq: int
    base_offset: int
    last_offset: int
    timestamp: int


@dataclass
class ProducerEntry:
    epoch: int
    batches: deque[BatchMetadata] = field(default_factory=lambda: deque(maxlen=MAX_REMEMBERED))
    last_timestamp: int = -1
    coordinator_epoch: int = -1
    txn_first_offset: int | None = None      # first offset of its open transaction on this partition

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    """An entry of the aborted-transaction index (Kafka's ``.txnindex``): what a read_committed reader skips."""

    producer_id: int
    first_offset: int
    last_offset: int           # the ABORT marker's offset
    last_stable_offset: int    # the partition's LSO once this transaction ended


def next_seq(seq: int) -> int:
    return 0 if seq == INT32_MAX else seq + 1


# What a partition no producer with an id has written to holds: shared, read-only empty containers, replaced by
# its own at the first write (three of its own were 184 bytes on each of 10,000 partitions that may never see one).
_NO_ENTRIES = cast("dict[int, ProducerEntry]", MappingProxyType({}))
_NO_ONGOING = cast("dict[int, int]", MappingProxyType({}))
_NO_ABORTED = cast("list[AbortedTxn]", ())


class ProducerStates:
    """The producers writing to one partition."""

    __slots__ = ("entries", "ongoing", "aborted", "changed")

    def __init__(self) -> None:
        self.entries: dict[int, ProducerEntry] = _NO_ENTRIES
        self.ongoing: dict[int, int] = _NO_ONGOING   # producer id -> first offset of its open transaction
        self.aborted: list[AbortedTxn] = _NO_ABORTED  # in marker order
        self.changed = False                         # since the last producer snapshot

    def _open(self, producer_id: int, first_offset: int) -> None:
        """The producer's transaction is open here from ``first_offset``."""
        if self.ongoing is _NO_ONGOING:
            self.ongoing = {}
        self.ongoing[producer_id] = first_offset

    def _new_entry(self, producer_id: int, entry: ProducerEntry) -> ProducerEntry:
        if self.entries is _NO_ENTRIES:
            self.entries = {}
        self.entries[producer_id] = entry
        return entry

    def first_unstable_offset(self) -> int | None:
        return min(self.ongoing.values()) if self.ongoing else None

    def last_stable_offset(self, high_watermark: int) -> int:
        first = self.first_unstable_offset()
        return high_watermark if first is None else min(first, high_watermark)

    def has_open_transaction(self, producer_id: int, epoch: int | None = None) -> bool:
        """Is the producer's transaction open here (at ``epoch``, when given: Kafka's hasOngoingTransaction)?"""
        if producer_id not in self.ongoing:
            return False
        return epoch is None or self.entries[producer_id].epoch == epoch

    def aborted_between(self, start: int, end: int) -> list[AbortedTxn]:
        """Aborted transactions a read of offsets [start, end) must be told about (Kafka's collectAbortedTxns)."""
        return [a for a in self.aborted if a.last_offset >= start and a.first_offset < end]

    def check(self, producer_id: int, epoch: int, first_seq: int, last_seq: int,
              transactional: bool = False, added_by_produce: bool = False) -> BatchMetadata | None:
        """Validate an incoming batch: None if it is new and in order, the original batch if it is a duplicate.

        Raises KafkaError with INVALID_PRODUCER_EPOCH, OUT_OF_ORDER_SEQUENCE_NUMBER or INVALID_TXN_STATE, in Kafka's
        order: a duplicate is recognised first, then the epoch, the sequence, and last a plain batch from a producer
        whose transaction is open here. A transaction's first batch that the Produce itself added to the
        transaction (KIP-890 part 2, ``added_by_produce``) must start at sequence 0 when the partition holds no
        batch of the producer.
        """
        entry = self.entries.get(producer_id)
        if added_by_produce and first_seq != 0 and (entry is None or not entry.batches):
            raise KafkaError(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                             f"sequence {first_seq}: a transactions v2 producer with no state here starts at 0")
        if entry is None:
            # Kafka's ProducerAppendInfo.checkSequence: with no state for the producer (its batches went with
            # retention or DeleteRecords, say), any sequence is accepted.
            return None
        if epoch < entry.epoch:
            raise KafkaError(ErrorCode.INVALID_PRODUCER_EPOCH,
                             f"epoch {epoch} is older than the current epoch {entry.epoch}")
        if epoch > entry.epoch:
            if first_seq != 0:
                raise KafkaError(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                                 f"a new epoch must start at sequence 0, not {first_seq}")
        else:
            for batch in entry.batches:
                if batch.first_seq == first_seq and batch.last_seq == last_seq:
                    return batch
            if first_seq != next_seq(entry.last_seq):
                raise KafkaError(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                                 f"expected sequence {next_seq(entry.last_seq)}, got {first_seq}")
        if not transactional and entry.txn_first_offset is not None:
            raise KafkaError(ErrorCode.INVALID_TXN_STATE,
                             f"a non-transactional batch from producer {producer_id}, which has an open transaction")
        return None

    def replay(self, header: bytes | bytearray | memoryview, base_offset: int, marker: tuple[bool, int] | None = None,
               ) -> None:
        """Update the state from the header of a batch just appended at ``base_offset``: the one update, the same
        after a Produce's append, after a transaction marker's and when log recovery reads the stored batches back
        (Kafka's ProducerAppendInfo built from the batch, then ``update``), so a restart rebuilds what was served.
        A control batch's ``marker`` is (commit, coordinator epoch) of the transaction marker it holds. Validation
        (``check``, ``check_marker``) comes before the append; this only records."""
        fields = HEADER.unpack_from(header, 0)
        if fields[3] != 2 or fields[9] < 0:
            return
        if fields[5] & CONTROL_BIT:
            if marker is not None:
                self.end_transaction(fields[9], fields[10], marker[0], base_offset, marker[1], fields[8],
                                     check=False)
            return
        base_seq = fields[11]
        last_seq = -1 if base_seq < 0 else (base_seq + fields[6]) % (INT32_MAX + 1)   # as BatchView.last_sequence
        self.record(fields[9], fields[10], BatchMetadata(base_seq, last_seq, base_offset, base_offset + fields[6],
                                                         fields[8]), transactional=bool(fields[5] & TRANSACTIONAL_BIT))

    def record(self, producer_id: int, epoch: int, batch: BatchMetadata, transactional: bool = False) -> None:
        """A batch was appended: remember it (and the transaction it opens). ``batch.timestamp`` is its largest
        timestamp, which the producer-id expiry measures from, as in Kafka."""
        self.changed = True
        entry = self._entry(producer_id, epoch)
        entry.batches.append(batch)
        entry.last_timestamp = max(entry.last_timestamp, batch.timestamp)
        if transactional and entry.txn_first_offset is None:
            entry.txn_first_offset = batch.base_offset
            self._open(producer_id, batch.base_offset)

    def _entry(self, producer_id: int, epoch: int) -> ProducerEntry:
        entry = self.entries.get(producer_id)
        if entry is None:
            entry = self._new_entry(producer_id, ProducerEntry(epoch))
        elif epoch != entry.epoch:
            # A new epoch starts its sequences again; an open transaction stays open until its marker.
            entry.epoch = epoch
            entry.batches.clear()
        return entry

    def check_marker(self, producer_id: int, epoch: int, coordinator_epoch: int, transaction_version: int = 0
                     ) -> None:
        """May a marker with this epoch and coordinator epoch be written? (Kafka's checkProducerEpoch and
        checkCoordinatorEpoch for markers.) A transaction version 2 marker must carry a newer epoch than the
        producer's (its transaction's bump), except as a retry once the transaction is closed; older markers may
        carry the same one. A negative epoch cannot even be written (Kafka: UNKNOWN_SERVER_ERROR)."""
        if epoch < 0:
            raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, "Invalid negative producer epoch")
        entry = self.entries.get(producer_id)
        if entry is None:
            return
        stale = epoch <= entry.epoch if transaction_version >= 2 else epoch < entry.epoch
        retried = transaction_version >= 2 and epoch == entry.epoch and (
            entry.txn_first_offset is None or epoch == MAX_EPOCH)
        if stale and not retried:
            raise KafkaError(ErrorCode.INVALID_PRODUCER_EPOCH,
                             f"marker epoch {epoch} is not newer than the producer's epoch {entry.epoch} "
                             f"(transaction version {transaction_version})" if transaction_version >= 2 else
                             f"marker epoch {epoch} is older than the producer's epoch {entry.epoch}")
        if coordinator_epoch < entry.coordinator_epoch:
            raise KafkaError(ErrorCode.TRANSACTION_COORDINATOR_FENCED,
                             f"coordinator epoch {coordinator_epoch} is older than {entry.coordinator_epoch}")

    def end_transaction(self, producer_id: int, epoch: int, commit: bool, marker_offset: int, coordinator_epoch: int,
                        timestamp: int, *, check: bool = True) -> AbortedTxn | None:
        """A COMMIT or ABORT marker at ``marker_offset`` closes the producer's transaction here (Kafka's
        appendEndTxnMarker). An older epoch than the producer's is INVALID_PRODUCER_EPOCH, an older coordinator
        epoch TRANSACTION_COORDINATOR_FENCED. Returns the aborted-index entry an ABORT adds."""
        if check:
            self.check_marker(producer_id, epoch, coordinator_epoch)
        self.changed = True
        entry = self._entry(producer_id, epoch)
        entry.coordinator_epoch = coordinator_epoch
        entry.last_timestamp = max(entry.last_timestamp, timestamp)
        first = entry.txn_first_offset
        entry.txn_first_offset = None
        if producer_id in self.ongoing:
            del self.ongoing[producer_id]
        if commit or first is None:
            return None
        unstable = self.first_unstable_offset()
        aborted = AbortedTxn(producer_id, first, marker_offset,
                             marker_offset + 1 if unstable is None else min(unstable, marker_offset + 1))
        if self.aborted is _NO_ABORTED:
            self.aborted = []
        self.aborted.append(aborted)
        return aborted

    def snapshot(self) -> list[SnapshotEntry]:
        """Every producer's state as the entries of a producer snapshot file (Kafka's format)."""
        out = []
        for pid, e in self.entries.items():
            last = e.batches[-1] if e.batches else None
            out.append(SnapshotEntry(pid, e.epoch, e.last_seq, last.last_offset if last else -1,
                                     last.last_offset - last.base_offset if last else 0, e.last_timestamp,
                                     e.coordinator_epoch, -1 if e.txn_first_offset is None else e.txn_first_offset))
        return out

    def load(self, entries: list[SnapshotEntry]) -> None:
        """Start from a producer snapshot (the log replay that follows brings it up to date)."""
        for s in entries:
            entry = self._new_entry(s.producer_id, ProducerEntry(s.epoch, last_timestamp=s.timestamp,
                                                                 coordinator_epoch=s.coordinator_epoch))
            if s.last_offset >= 0:
                first_seq = -1 if s.last_sequence < 0 else (s.last_sequence - s.offset_delta) % (INT32_MAX + 1)
                entry.batches.append(BatchMetadata(first_seq, s.last_sequence, s.last_offset - s.offset_delta,
                                                   s.last_offset, s.timestamp))
            if s.txn_first_offset >= 0:
                entry.txn_first_offset = s.txn_first_offset
                self._open(s.producer_id, s.txn_first_offset)

    def expire(self, now_ms: int, expiration_ms: int, log_start_offset: int) -> int:
        """Forget producers idle for ``producer.id.expiration.ms`` with no open transaction, and aborted-index
        entries wholly below the log start (Kafka's removeExpiredProducers and txn index cleanup)."""
        gone = [pid for pid, e in self.entries.items()
                if e.txn_first_offset is None and now_ms - e.last_timestamp >= expiration_ms]
        for pid in gone:
            del self.entries[pid]
        self.changed = self.changed or bool(gone)
        if any(a.last_offset < log_start_offset for a in self.aborted):
            self.aborted = [a for a in self.aborted if a.last_offset >= log_start_offset]
        return len(gone)
