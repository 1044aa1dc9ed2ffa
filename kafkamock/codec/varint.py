"""Kafka's varints, written once: unsigned (compact lengths, tagged fields) and zig-zag (record fields).

Readers stay inline where they are hot (the generated codecs, the record loop); these are the writers.
"""

from __future__ import annotations


class VarintError(ValueError):
    """A value that does not fit the varint asked for."""


def uvarint_bytes(value: int) -> bytes:
    """Kafka's unsigned varint, at most 32 bits (5 bytes)."""
    if value < 0 or value > 0xFFFFFFFF:
        raise VarintError(f"{value} does not fit an unsigned varint")
    if value < 0x80:
        return _ONE_BYTE[value]
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def zigzag_bytes(value: int) -> bytes:
    """Kafka's zig-zag varint (Java's ByteUtils.writeVarlong; also right for 32-bit values in range)."""
    if -64 <= value < 64:
        return _SMALL[value + 64]
    z = (value << 1) ^ (value >> 63)
    if z < 0x4000:
        return bytes(((z & 0x7F) | 0x80, z >> 7))
    out = bytearray()
    while z > 0x7F:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def checked_zigzag_bytes(value: int, bits: int) -> bytes:
    """``zigzag_bytes`` after checking that ``value`` fits ``bits`` (32 or 64) signed bits."""
    if not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
        raise VarintError(f"{value} does not fit a {bits}-bit varint")
    return zigzag_bytes(value)


_ONE_BYTE = [bytes([v]) for v in range(0x80)]
_SMALL = [bytes([((v << 1) ^ (v >> 63)) & 0xFF]) for v in range(-64, 64)]
