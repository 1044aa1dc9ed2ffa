"""The order in which a ``java.util.HashMap`` (or ``HashSet``) iterates its keys, for answers Kafka builds by
iterating one (the partitions of DescribeTransactions, AddPartitionsToTxn's topics); the order of a Scala 2.13
``mutable.HashMap`` (AddPartitionsToTxn's refused and unknown partitions, a concatenation of such maps) and of an
``immutable.HashMap``, which ``groupBy`` builds (AlterReplicaLogDirs' topics); and the order of the
controller's ``TimelineHashMap`` (a topic's partitions, in ElectLeaders for every partition).

A HashMap iterates its table's buckets in index order and each bucket's chain in insertion order (resizing splits
a chain without reordering it). A key's bucket is ``(h ^ (h >>> 16)) & (n - 1)`` for its ``hashCode`` h; the table
starts at 16 buckets and doubles whenever it holds more than three quarters of its size. (Scala 2.13's mutable
HashMap spreads and indexes hashes the same way.) Chains long enough to become trees (eight keys in one bucket of a
table of 64 or more) are not modelled.
"""

from __future__ import annotations

import functools
import sys
import uuid
from array import array
from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

K = TypeVar("K", bound=Hashable)
INITIAL_BUCKETS = 16
_UTF16_NATIVE = "utf-16-le" if sys.byteorder == "little" else "utf-16-be"   # array("H") reads native order


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


@functools.lru_cache(maxsize=128)
def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units, int32 overflow): Kafka hashes coordinator keys and
    HashMap keys with it. A loop over every code unit, 2 ms for a 32,767-character topic name, so the last 128
    strings' hashes are kept (Java keeps a string's hash in the string): a request naming one long topic 400 times
    (the semantic fuzzer's) held every other connection for 60 ms."""
    units = array("H", text.encode(_UTF16_NATIVE))
    h = 0
    for unit in units:
        h = (31 * h + unit) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def java_uuid_hash(u: uuid.UUID) -> int:
    """Kafka's ``Uuid.hashCode``: the two longs xored, then folded to an int."""
    bits = u.int
    h = ((bits >> 64) ^ bits) & 0xFFFFFFFFFFFFFFFF
    return ((h >> 32) ^ h) & 0xFFFFFFFF


def topic_partition_hash(key: tuple[str, int]) -> int:
    """Kafka's ``TopicPartition.hashCode``: ``31 * (31 + partition) + topic.hashCode()``."""
    topic, partition = key
    return _int32(31 * (31 + partition) + java_string_hash(topic))


def table_size(count: int, initial: int = INITIAL_BUCKETS) -> int:
    """The bucket count of a HashMap holding ``count`` keys (load factor 0.75)."""
    n = initial
    while count > n * 3 // 4:
        n *= 2
    return n


def bucket(hash_code: int, buckets: int) -> int:
    h = hash_code & 0xFFFFFFFF
    return (h ^ (h >> 16)) & (buckets - 1)


def java_hash_order(keys: Iterable[K], hash_of: Callable[[K], int], initial_capacity: int | None = None, *,
                    head_insert: bool = False) -> list[K]:
    """``keys`` (in insertion order, duplicates ignored) in the order a HashMap holding them iterates them; one
    made with ``new HashMap<>(initial_capacity)`` starts at the power of two at or above that capacity. A map
    filled by ``computeIfAbsent`` links each new key at the head of its bucket (``head_insert``): the reverse
    order within a bucket."""
    unique = list(dict.fromkeys(keys))
    initial = INITIAL_BUCKETS
    if initial_capacity is not None:
        initial = 1
        while initial < initial_capacity:
            initial *= 2
    buckets = table_size(len(unique), initial)
    order = sorted((bucket(hash_of(k), buckets), -i if head_insert else i, k) for i, k in enumerate(unique))
    return [k for _, _, k in order]


def scala_mutable_hash_order(keys: Iterable[K], hash_of: Callable[[K], int]) -> list[K]:
    """``keys`` in the order a Scala 2.13 ``mutable.HashMap`` built from a collection of unknown size iterates them
    (what KafkaApis' ``map1 ++ map2`` of its error maps makes, checked against Kafka 4.3.1's answers): its table
    starts at 16 buckets and doubles when an insert would reach three quarters; a key's bucket is its spread hash
    ``h ^ (h >>> 16)`` masked to the table, and each bucket's chain is kept sorted by that spread hash (signed), so
    insertion order does not matter."""
    unique = list(dict.fromkeys(keys))
    buckets = INITIAL_BUCKETS
    for size in range(len(unique)):
        if size + 1 >= int(buckets * 0.75):
            buckets *= 2

    def spread(k: K) -> int:
        h = hash_of(k) & 0xFFFFFFFF
        return _int32(h ^ (h >> 16))
    return sorted(unique, key=lambda k: (spread(k) & (buckets - 1), spread(k)))


def java_hashset_order(keys: Iterable[str]) -> list[str]:
    """The order of ``new HashSet<>(keys)`` (a String set sized for the collection: ``max(n / .75 + 1, 16)``)."""
    unique = list(dict.fromkeys(keys))
    return java_hash_order(unique, java_string_hash, max(int(len(unique) / 0.75) + 1, INITIAL_BUCKETS))


def scala_improve(hash_code: int) -> int:
    """Scala's ``Hashing.improve``, which its immutable HashMap applies to a key's hashCode."""
    h = _int32(hash_code + ~_int32(hash_code << 9))
    h = _int32(h ^ ((h & 0xFFFFFFFF) >> 14))
    h = _int32(h + _int32(h << 4))
    return (h ^ ((h & 0xFFFFFFFF) >> 10)) & 0xFFFFFFFF


def scala_hash_order(keys: Iterable[K], hash_of: Callable[[K], int], shift: int = 0) -> list[K]:
    """``keys`` in the order a Scala 2.13 ``immutable.HashMap`` (a CHAMP trie) iterates them: at each level the
    keys alone in their 5-bit slot, by slot, then the slots shared by several keys, each a level deeper (keys
    whose whole hash is equal keep their insertion order)."""
    unique = list(dict.fromkeys(keys))
    if shift >= 32:
        return unique
    slots: dict[int, list[K]] = {}
    for k in unique:
        slots.setdefault((scala_improve(hash_of(k)) >> shift) & 31, []).append(k)
    alone = [group[0] for _, group in sorted(slots.items()) if len(group) == 1]
    shared = [scala_hash_order(group, hash_of, shift + 5) for _, group in sorted(slots.items()) if len(group) > 1]
    return alone + [k for group in shared for k in group]


FIBONACCI = -7046029254386353131      # Knuth's multiplicative constant, as Kafka's BaseHashTable uses it


def _timeline_slot(hash_code: int, slots: int) -> int:
    """BaseHashTable.findSlot: the top log2(slots) bits of the hash times the constant (64-bit)."""
    return ((hash_code * FIBONACCI) & 0xFFFFFFFFFFFFFFFF) >> (65 - slots.bit_length())


def timeline_hash_order(keys: Iterable[K], hash_of: Callable[[K], int]) -> list[K]:
    """``keys`` (inserted in this order, none removed) in the order Kafka's ``TimelineHashMap`` iterates them: a
    table of at least 2 slots that doubles before it would pass three quarters full (moving each slot's keys, in
    order, to their new slots), iterated slot by slot, each slot's keys last-in first."""
    slots: list[list[K]] = [[], []]
    size = 0
    for key in dict.fromkeys(keys):
        if (size + 1) * 0.75 > len(slots):
            grown: list[list[K]] = [[] for _ in range(2 * len(slots))]
            for old in slots:
                for k in old:
                    grown[_timeline_slot(hash_of(k), len(grown))].append(k)
            slots = grown
        slots[_timeline_slot(hash_of(key), len(slots))].append(key)
        size += 1
    return [k for slot in slots for k in reversed(slot)]


__all__ = ["bucket", "java_hash_order", "java_hashset_order", "java_string_hash", "java_uuid_hash", "scala_hash_order",
           "table_size", "timeline_hash_order", "topic_partition_hash"]
