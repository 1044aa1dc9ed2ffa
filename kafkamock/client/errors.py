"""Errors the clients raise: ``KafkaError`` carries Kafka's error code, so callers branch on the code (or its
name) the way Java code catches ``ProducerFencedException`` or ``CommitFailedException``."""

from __future__ import annotations

from kafkamock.errors import FATAL, ErrorCode, KafkaError

__all__ = ["FATAL", "CommitFailedError", "ErrorCode", "IllegalStateError", "KafkaError", "KafkaResponseError", "check"]

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
        raise KafkaError(code, message, what=what)
