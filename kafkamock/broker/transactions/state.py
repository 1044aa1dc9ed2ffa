"""A transactional id's states and the table of their transitions (Kafka's TransactionState).

Every change of state goes through ``transition``: a pair missing from ``TRANSITIONS`` is a bug in the caller, and
raises. The state ids are the ones Kafka writes into ``TransactionLogValue.TransactionStatus``; the names are what
DescribeTransactions and ListTransactions report.
"""

from __future__ import annotations

from enum import Enum, IntEnum

from kafkamock.state_machine import move


class TxnState(IntEnum):
    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    PREPARE_EPOCH_FENCE = 7

    @property
    def wire_name(self) -> str:
        """Kafka's name of the state (``Ongoing``, ``PrepareEpochFence``...)."""
        return "".join(part.capitalize() for part in self.name.split("_"))

    @property
    def completed(self) -> bool:
        """No transaction is open: a new one may start, or the producer may get a new epoch."""
        return self in (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)

    @classmethod
    def from_wire_name(cls, name: str) -> TxnState | None:
        return next((s for s in cls if s.wire_name == name), None)


class Event(Enum):
    INIT = "InitProducerId on a completed transaction: a new epoch (or producer id)"
    ADD = "AddPartitionsToTxn / AddOffsetsToTxn: a transaction starts or grows"
    COMMIT = "EndTxn(commit)"
    ABORT = "EndTxn(abort), or the abort that follows a fence"
    FENCE = "InitProducerId or the transaction timeout on an open transaction: bump the epoch, then abort"
    MARKERS_WRITTEN = "every partition has its COMMIT or ABORT marker"
    EXPIRE = "transactional.id.expiration.ms passed with no transaction"


S = TxnState
_COMPLETED = (S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT)
TRANSITIONS: dict[tuple[TxnState, Event], TxnState] = {
    **{(s, Event.INIT): S.EMPTY for s in _COMPLETED},
    **{(s, Event.ADD): S.ONGOING for s in (*_COMPLETED, S.ONGOING)},
    (S.ONGOING, Event.COMMIT): S.PREPARE_COMMIT,
    (S.ONGOING, Event.ABORT): S.PREPARE_ABORT,
    (S.PREPARE_EPOCH_FENCE, Event.ABORT): S.PREPARE_ABORT,
    # KIP-890 part 2 (EndTxn v5): an abort with nothing open still writes a bumped epoch.
    **{(s, Event.ABORT): S.PREPARE_ABORT for s in _COMPLETED},
    (S.ONGOING, Event.FENCE): S.PREPARE_EPOCH_FENCE,
    (S.PREPARE_COMMIT, Event.MARKERS_WRITTEN): S.COMPLETE_COMMIT,
    (S.PREPARE_ABORT, Event.MARKERS_WRITTEN): S.COMPLETE_ABORT,
    **{(s, Event.EXPIRE): S.DEAD for s in _COMPLETED},
}


def transition(state: TxnState, event: Event) -> TxnState:
    return move(TRANSITIONS, state, event, "transaction")
