"""The producer's transaction state machine as one table, and the values transactions exchange with consumers.

States and legal moves are Kafka 4.3's ``TransactionManager.State.isTransitionValid``; an idempotent producer
walks the same table (UNINITIALIZED -> INITIALIZING -> READY, and FATAL_ERROR), a transactional one all of it.
An illegal call raises ``IllegalStateError`` (Java's IllegalStateException), a call after a fatal error the
``KafkaError`` that caused it.
"""

from __future__ import annotations

import enum

from kafkamock.client.errors import IllegalStateError, KafkaError
from kafkamock.client.types import ConsumerGroupMetadata
from kafkamock.errors import ErrorCode

__all__ = ["ConsumerGroupMetadata", "IllegalStateError", "State", "TransactionAbortedError", "TransactionState"]


class State(enum.Enum):
    UNINITIALIZED = "UNINITIALIZED"
    INITIALIZING = "INITIALIZING"
    READY = "READY"
    IN_TRANSACTION = "IN_TRANSACTION"
    COMMITTING = "COMMITTING_TRANSACTION"
    ABORTING = "ABORTING_TRANSACTION"
    ABORTABLE_ERROR = "ABORTABLE_ERROR"
    FATAL_ERROR = "FATAL_ERROR"


S = State
# target state -> the states it may be entered from (FATAL_ERROR: from anywhere; nothing leaves it)
TRANSITIONS: dict[State, frozenset[State]] = {
    S.UNINITIALIZED: frozenset({S.READY, S.ABORTABLE_ERROR}),
    S.INITIALIZING: frozenset({S.UNINITIALIZED, S.ABORTING}),
    S.READY: frozenset({S.INITIALIZING, S.COMMITTING, S.ABORTING}),
    S.IN_TRANSACTION: frozenset({S.READY}),
    S.COMMITTING: frozenset({S.IN_TRANSACTION}),
    S.ABORTING: frozenset({S.IN_TRANSACTION, S.ABORTABLE_ERROR}),
    S.ABORTABLE_ERROR: frozenset({S.IN_TRANSACTION, S.COMMITTING, S.ABORTABLE_ERROR, S.INITIALIZING}),
    S.FATAL_ERROR: frozenset(State) - {S.FATAL_ERROR},
}


class TransactionAbortedError(KafkaError):
    """A record's batch was dropped because its transaction was aborted (Java's TransactionAbortedException)."""

    def __init__(self, what: str = "send") -> None:
        super().__init__(ErrorCode.UNKNOWN_SERVER_ERROR, "Failing batch since transaction was aborted", what=what,
                         fatal=False)


class TransactionState:
    """The current state, the error that caused an error state, and the checked moves between states."""

    def __init__(self) -> None:
        self.state = State.UNINITIALIZED
        self.last_error: BaseException | None = None

    def to(self, target: State, error: BaseException | None = None) -> None:
        if self.state is State.FATAL_ERROR or self.state not in TRANSITIONS[target]:
            if self.state is State.FATAL_ERROR and self.last_error is not None:
                raise self.last_error
            raise IllegalStateError(f"Invalid transition attempted from state {self.state.value} to state "
                                    f"{target.value}")
        self.state = target
        if target in (State.ABORTABLE_ERROR, State.FATAL_ERROR):
            self.last_error = error
        elif target is not State.ABORTING:
            self.last_error = None

    def fatal(self, error: BaseException) -> None:
        if self.state is not State.FATAL_ERROR:
            self.to(State.FATAL_ERROR, error)

    def abortable(self, error: BaseException) -> None:
        """Java's transitionToAbortableError: ignored while an abort is already under way."""
        if self.state in (State.ABORTING, State.FATAL_ERROR):
            return
        self.to(State.ABORTABLE_ERROR, error)

    def fail_if_error(self, what: str) -> None:
        """Java's maybeFailWithError: an error state refuses every further call but abort (checked by the caller)."""
        if self.state is State.FATAL_ERROR or self.state is State.ABORTABLE_ERROR:
            error = self.last_error
            if isinstance(error, KafkaError):
                raise KafkaError(error.code, f"Cannot execute transactional method because we are in an "
                                 f"error state ({self.state.value}): {error}", what=what, fatal=error.fatal) from error
            raise IllegalStateError(f"{what}: the producer is in state {self.state.value}") from error

    def require(self, what: str, *states: State) -> None:
        if self.state not in states:
            raise IllegalStateError(f"Cannot call {what} in state {self.state.value} (it needs "
                                    f"{' or '.join(s.value for s in states)})")
