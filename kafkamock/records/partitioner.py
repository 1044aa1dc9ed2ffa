"""Kafka's default partitioner for keyed records: ``toPositive(murmur2(key)) % partitions`` (Java's
``BuiltInPartitioner.partitionForKey``), so records seeded through kafkamock land where a Java producer puts them."""

from __future__ import annotations

M = 0x5BD1E995
MASK = 0xFFFFFFFF


def murmur2(data: bytes) -> int:
    """Kafka's ``Utils.murmur2`` (seed 0x9747b28c), as a signed 32-bit int."""
    length = len(data)
    h = (0x9747B28C ^ length) & MASK
    whole = length & ~3
    for i in range(0, whole, 4):
        k = int.from_bytes(data[i:i + 4], "little")
        k = (k * M) & MASK
        k ^= k >> 24
        k = (k * M) & MASK
        h = (h * M) & MASK
        h ^= k
    rest = length & 3
    if rest == 3:
        h ^= data[whole + 2] << 16
    if rest >= 2:
        h ^= data[whole + 1] << 8
    if rest >= 1:
        h ^= data[whole]
        h = (h * M) & MASK
    h ^= h >> 13
    h = (h * M) & MASK
    h ^= h >> 15
    return h - (1 << 32) if h >= 1 << 31 else h


def default_partition(key: bytes | None, partitions: int) -> int:
    """The partition of a keyed record; keyless records go to partition 0 (kafkamock's seeding helpers: Java's
    sticky partitioner would pick any)."""
    if key is None:
        return 0
    return (murmur2(key) & 0x7FFFFFFF) % partitions
