"""Errors the clients raise: ``KafkaError`` carries Kafka's error code, so callers branch on the code (or its
name) the way Java code catches ``ProducerFencedException`` or ``CommitFailedException``."""

from __future__ import annotations

from kafkamock.errors import RETRIABLE, ErrorCode

# Errors after which a producer cannot go on (Java: fatal errors of the TransactionManager).
FATAL = frozenset({
    ErrorCode.PRODUCER_FENCED, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    ErrorCode.UNSUPPORTED_VERSION, ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT, ErrorCode.INVALID_PRODUCER_ID_MAPPING,
    ErrorCode.FENCED_INSTANCE_ID, ErrorCode.UNRELEASED_INSTANCE_ID, ErrorCode.INVALID_TRANSACTION_TIMEOUT,
})


class KafkaError(Exception):
    """A broker answered ``what`` with a non-zero error code, or a client operation failed with one.

    ``code`` is Kafka's error code and ``error`` its ``ErrorCode``; ``retriable`` says the same call may succeed
    later (Kafka's RetriableException), ``fatal`` that the client that raised it cannot be used any more.
    """

    def __init__(self, code: int, what: str, message: str | None = None, *, fatal: bool | None = None):
        self.code = int(code)
        try:
            self.error: ErrorCode | None = ErrorCode(self.code)
            self.name = self.error.name
        except ValueError:
            self.error = None
            self.name = f"error {code}"
        self.retriable = self.code in RETRIABLE
        self.fatal = self.code in FATAL if fatal is None else fatal
        self.what = what
        super().__init__(f"{what}: {self.name} ({code})" + (f": {message}" if message else ""))


KafkaResponseError = KafkaError   # the name the first clients used


class CommitFailedError(KafkaError):
    """A commit that cannot succeed: the group rebalanced and the partitions went to another member
    (Java's CommitFailedException). ``code`` is the broker's answer (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID,
    STALE_MEMBER_EPOCH, REBALANCE_IN_PROGRESS...)."""


class IllegalStateError(RuntimeError):
    """A call the client's state does not allow (Java's IllegalStateException): ``commit_transaction`` with no
    transaction begun, a share consumer's ``poll`` with records of the last poll not acknowledged..."""


def check(code: int, what: str, message: str | None = None) -> None:
    if code:
        raise KafkaError(code, what, message)
