"""Records errors: anything wrong with record bytes is a CorruptRecordError (the broker answers CORRUPT_MESSAGE)."""

from __future__ import annotations


class CorruptRecordError(ValueError):
    """Record bytes that cannot be trusted: bad CRC, bad lengths, truncated or oversized compressed data."""

    def __init__(self, reason: str, offset: int | None = None):
        self.reason, self.offset = reason, offset
        super().__init__(f"corrupt records at byte {offset}: {reason}" if offset is not None else reason)
