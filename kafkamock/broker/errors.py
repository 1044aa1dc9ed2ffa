"""KafkaError, with which the core answers a request (or part of it) with one of Kafka's error codes."""

from __future__ import annotations

from kafkamock.errors import ErrorCode

__all__ = ["ErrorCode", "KafkaError"]


class KafkaError(Exception):
    """Raised inside the core to answer a request (or one of its parts) with an error code."""

    def __init__(self, code: ErrorCode, message: str | None = None):
        self.code, self.message = code, message
        super().__init__(f"{code.name}: {message}" if message else code.name)
