"""Idempotent-producer state per partition: epochs and sequences, as Kafka's ProducerStateManager keeps them.

Kafka remembers the last five batches of each producer on each partition, so a retried batch is recognised
and answered with its original offsets instead of being written twice.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.records.layout import CONTROL_BIT, HEADER, TIMESTAMP_TYPE_BIT

NO_SEQUENCE = -1
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

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE


def next_seq(seq: int) -> int:
    return 0 if seq == INT32_MAX else seq + 1


class ProducerStates:
    """The producers writing to one partition."""

    def __init__(self) -> None:
        self.entries: dict[int, ProducerEntry] = {}

    def check(self, producer_id: int, epoch: int, first_seq: int, last_seq: int) -> BatchMetadata | None:
        """Validate an incoming batch: None if it is new and in order, the original batch if it is a duplicate.

        Raises KafkaError with INVALID_PRODUCER_EPOCH or OUT_OF_ORDER_SEQUENCE_NUMBER.
        """
        entry = self.entries.get(producer_id)
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
            return None
        for batch in entry.batches:
            if batch.first_seq == first_seq and batch.last_seq == last_seq:
                return batch
        if first_seq != next_seq(entry.last_seq):
            raise KafkaError(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                             f"expected sequence {next_seq(entry.last_seq)}, got {first_seq}")
        return None

    def replay(self, header: bytes | bytearray | memoryview, base_offset: int) -> None:
        """Rebuild state from a stored batch header (log recovery): what the batch's append recorded."""
        fields = HEADER.unpack_from(header, 0)
        if fields[3] != 2 or fields[9] < 0 or fields[5] & CONTROL_BIT:
            return
        base_seq = fields[11]
        last_seq = -1 if base_seq < 0 else (base_seq + fields[6]) % (INT32_MAX + 1)   # as BatchView.last_sequence
        timestamp = fields[8] if fields[5] & TIMESTAMP_TYPE_BIT else -1
        self.record(fields[9], fields[10], BatchMetadata(base_seq, last_seq, base_offset, base_offset + fields[6],
                                                         timestamp))

    def record(self, producer_id: int, epoch: int, batch: BatchMetadata) -> None:
        entry = self.entries.get(producer_id)
        if entry is None or epoch != entry.epoch:
            entry = self.entries[producer_id] = ProducerEntry(epoch)
        entry.batches.append(batch)
        entry.last_timestamp = batch.timestamp
