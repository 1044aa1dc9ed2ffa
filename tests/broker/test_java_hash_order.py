"""java_hash_order against orders a JVM printed (kafka-clients 4.3.1's TopicPartition in java.util.HashSet/HashMap)."""

from __future__ import annotations

from kafkamock.broker.java_hash_order import java_hash_order, java_string_hash, table_size, topic_partition_hash


def test_topic_partitions_in_a_hash_set():
    keys = [(t, p) for t in ("orders", "t", "__consumer_offsets") for p in range(5)]
    # new HashSet<>(that list) printed: 15 keys, 32 buckets
    assert java_hash_order(keys, topic_partition_hash) == [
        ("t", 4), ("__consumer_offsets", 0), ("t", 3), ("t", 2), ("t", 1), ("t", 0), ("orders", 0), ("orders", 1),
        ("orders", 2), ("orders", 3), ("__consumer_offsets", 3), ("orders", 4), ("__consumer_offsets", 4),
        ("__consumer_offsets", 1), ("__consumer_offsets", 2)]


def test_a_shared_bucket_keeps_insertion_order():
    # events-3 and events-0 share a bucket: inserted 3 first, so iterated first
    assert java_hash_order([("events", p) for p in (3, 0, 2, 1)], topic_partition_hash) == [
        ("events", 3), ("events", 0), ("events", 1), ("events", 2)]


def test_strings_in_a_hash_map():
    assert java_hash_order(["orders", "t", "__consumer_offsets", "payments", "a"], java_string_hash) == [
        "a", "t", "payments", "orders", "__consumer_offsets"]


def test_the_table_doubles_past_three_quarters():
    assert [table_size(n) for n in (0, 12, 13, 24, 25)] == [16, 16, 32, 32, 64]
