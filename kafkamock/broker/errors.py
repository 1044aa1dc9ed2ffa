"""The broker core answers a request (or one part of it) with one of Kafka's error codes by raising ``KafkaError``
(``kafkamock.errors``: the one class the clients raise too)."""

from __future__ import annotations

from kafkamock.errors import ErrorCode, KafkaError

__all__ = ["ErrorCode", "KafkaError"]
