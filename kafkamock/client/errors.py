"""Errors the clients raise when a broker answers with one of Kafka's error codes."""

from __future__ import annotations

from kafkamock.errors import RETRIABLE, ErrorCode


class KafkaResponseError(Exception):
    """A broker answered ``what`` with a non-zero error code (``code``; ``name`` is Kafka's name for it)."""

    def __init__(self, code: int, what: str, message: str | None = None):
        self.code = code
        try:
            self.name = ErrorCode(code).name
        except ValueError:
            self.name = f"error {code}"
        self.retriable = code in RETRIABLE
        super().__init__(f"{what}: {self.name} ({code})" + (f": {message}" if message else ""))


def check(code: int, what: str, message: str | None = None) -> None:
    if code:
        raise KafkaResponseError(code, what, message)
