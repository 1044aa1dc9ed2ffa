"""A transactional id's durable state (Kafka's TransactionMetadata) and how a change of it is prepared and completed.

An operation never assigns the fields of the live ``TxnMetadata`` a coordinator holds: ``prepare`` gives a detached
copy in the new state (Kafka's ``prepareTransitionTo`` and its ``TxnTransitMetadata``), which is what the operation's
``__transaction_state`` record carries; ``complete`` takes it over (Kafka's ``completeTransitionTo``) and is called
only by the coordinator's replay of that record once it is appended, the replay that loading the log uses too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any

from kafkamock.broker.java_hash_order import java_hash_order, topic_partition_hash
from kafkamock.broker.transactions.state import Event, TxnState, transition

if TYPE_CHECKING:
    from kafkamock.codec import messages

NO_PRODUCER_ID = -1
NO_EPOCH = -1
MAX_EPOCH = 2**15 - 1

TopicPartition = tuple[str, int]


def epoch_exhausted(epoch: int) -> bool:
    """Kafka keeps the last epoch free for fencing: at 32766 a producer id is used up (TransactionMetadata)."""
    return epoch >= MAX_EPOCH - 1


@dataclass
class TxnMetadata:
    """One transactional id: its producer id and epoch, and the transaction it has open (Kafka's TransactionMetadata).
    Every field is durable: ``value`` writes them all, ``from_value`` reads them all back."""

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
    partitions: dict[TopicPartition, None] = field(default_factory=dict)
    start_ms: int = -1
    client_version: int = 0                 # 2: the client ends transactions with EndTxn v5+ (KIP-890 part 2)

    def prepare(self, event: Event, **changes: Any) -> TxnMetadata:
        """The metadata ``event`` leads to, with ``changes``, as a detached copy (Kafka's prepareTransitionTo): an
        illegal move raises ``IllegalTransition`` here, before anything is written; ``self`` is left as it is."""
        unknown = changes.keys() - FIELDS
        if unknown:
            raise TypeError(f"TxnMetadata has no field {', '.join(sorted(unknown))}")
        values = {**vars(self), **changes, "state": transition(self.state, event)}
        values["partitions"] = dict(values["partitions"])
        # a copy by its __dict__: dataclasses.replace costs a few microseconds more, three times a transaction
        transit = object.__new__(TxnMetadata)
        vars(transit).update(values)
        return transit

    def complete(self, transit: TxnMetadata) -> None:
        """Take over every field of ``transit`` (Kafka's completeTransitionTo). Only the replay of an appended (or
        loaded) ``__transaction_state`` record calls this: the one place the live state changes."""
        vars(self).update(vars(transit))              # every field (a plain dataclass: its fields are its __dict__)
        self.partitions = dict(transit.partitions)     # its own set: the record's stays the record's

    def copy(self) -> TxnMetadata:
        return replace(self, partitions=dict(self.partitions))

    def ordered_partitions(self) -> list[TopicPartition]:
        """The partitions as Kafka's ``HashSet<TopicPartition>`` iterates them (DescribeTransactions lists them so)."""
        return java_hash_order(self.partitions, topic_partition_hash)

    def value(self) -> dict[str, Any]:
        """The fields of a ``TransactionLogValue`` record (partitions sorted, grouped by topic)."""
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

    @classmethod
    def from_value(cls, transactional_id: str, value: messages.TransactionLogValue) -> TxnMetadata:
        """The metadata a decoded ``TransactionLogValue`` holds (fields of later versions default as Kafka's do);
        ValueError for a state kafkamock does not know."""
        try:
            state = TxnState(value.transaction_status)
        except ValueError:
            raise ValueError(f"unknown transaction state {value.transaction_status}") from None
        partitions: Iterable[TopicPartition] = ((p.topic, i) for p in value.transaction_partitions or []
                                                for i in p.partition_ids)
        return cls(transactional_id, value.producer_id, value.transaction_timeout_ms,
                   value.transaction_last_update_timestamp_ms, epoch=value.producer_epoch,
                   last_epoch=getattr(value, "last_producer_epoch", NO_EPOCH),
                   prev_producer_id=getattr(value, "previous_producer_id", NO_PRODUCER_ID),
                   next_producer_id=getattr(value, "next_producer_id", NO_PRODUCER_ID), state=state,
                   partitions=dict.fromkeys(partitions), start_ms=value.transaction_start_timestamp_ms,
                   client_version=getattr(value, "client_transaction_version", 0))


FIELDS = frozenset(f.name for f in fields(TxnMetadata))
"""Every field of a transactional id's metadata: all durable."""
