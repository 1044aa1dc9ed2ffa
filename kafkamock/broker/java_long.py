"""Arithmetic as Kafka's Java does it on ``long``: a sum past 2^63 - 1 wraps to a negative number, it does not fail.

Where a client's value (a retention time, an altered start offset) meets the broker's clock or offsets in Kafka's
arithmetic, kafkamock computes the same wrapped result, so an extreme value has Kafka's effect instead of an
integer a record or a response cannot hold.
"""

from __future__ import annotations

__all__ = ["java_long"]


def java_long(value: int) -> int:
    """``value`` as a Java ``long`` holds it (two's complement, 64 bits)."""
    return (value + 2**63) % 2**64 - 2**63
