"""java_hash_order against orders a JVM printed (kafka-clients 4.3.1's TopicPartition in java.util.HashSet/HashMap),
and the Scala mutable.HashMap order of AddPartitionsToTxn's errors against Kafka 4.3.1's answers."""

from __future__ import annotations

import pytest
from support.broker_calls import call

from kafkamock.broker import Cluster
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


# AddPartitionsToTxn v3 of ta-<s> partitions 0-8 (6 exist), tb-<s> 0-2 (2 exist) and nope-<s> 2, 0, as Apache Kafka
# 4.3.1 answered it (tests/differential/test_transactions.py's scenario, names that once made kafkamock differ):
# partitions in a Scala mutable.HashMap's order, topics in a Java HashMap's.
KAFKA_4_3_1_ANSWERS = {
    "1687ef": [("tb", [(1, 55), (2, 3), (0, 55)]),
               ("ta", [(1, 55), (0, 55), (3, 55), (2, 55), (8, 3), (5, 55), (4, 55), (7, 3), (6, 3)]),
               ("nope", [(0, 3), (2, 3)])],
    "7e344c": [("nope", [(2, 3), (0, 3)]),
               ("ta", [(5, 55), (6, 3), (7, 3), (8, 3), (1, 55), (2, 55), (3, 55), (4, 55), (0, 55)]),
               ("tb", [(1, 55), (0, 55), (2, 3)])],
}


@pytest.mark.parametrize("suffix", sorted(KAFKA_4_3_1_ANSWERS))
def test_add_partitions_errors_come_in_kafkas_scala_map_order(suffix):
    base = f"-test-add-partitions-error-order-many-{suffix}"
    ta, tb, nope = "ta" + base, "tb" + base, "nope" + base
    broker = Cluster({})
    broker.metadata.create_topic(ta, 6, 1)
    broker.metadata.create_topic(tb, 2, 1)
    init = call(broker, "InitProducerId", 5, {"transactional_id": "tx" + base, "transaction_timeout_ms": 60000,
                                              "producer_id": -1, "producer_epoch": -1})
    answer = call(broker, "AddPartitionsToTxn", 3, {
        "v3_and_below_transactional_id": "tx" + base, "v3_and_below_producer_id": init.producer_id,
        "v3_and_below_producer_epoch": init.producer_epoch,
        "v3_and_below_topics": [{"name": ta, "partitions": list(range(9))}, {"name": tb, "partitions": [0, 1, 2]},
                                {"name": nope, "partitions": [2, 0]}]})
    assert [(t.name.split("-")[0], [(p.partition_index, p.partition_error_code) for p in t.results_by_partition])
            for t in answer.results_by_topic_v3_and_below] == KAFKA_4_3_1_ANSWERS[suffix]


# AddPartitionsToTxn v3 of partitions 0 (exists) and 3 (does not) of a one-partition topic, as Kafka 4.3.1 answered
# it: the concatenated map's size is not known up front, so its table starts at 16 buckets (with 8, as a known size
# of 2 would give, these two come out the other way round).
@pytest.mark.parametrize("name, order", [("t-test-add-partitions-v3-errors-be0c68", [(0, 55), (3, 3)]),
                                         ("t-test-add-partitions-v3-errors-2d86c3", [(3, 3), (0, 55)])])
def test_an_unknown_partition_among_two_comes_in_kafkas_order(name, order):
    broker = Cluster({})
    broker.metadata.create_topic(name, 1, 1)
    init = call(broker, "InitProducerId", 5, {"transactional_id": "tx", "transaction_timeout_ms": 60000,
                                              "producer_id": -1, "producer_epoch": -1})
    answer = call(broker, "AddPartitionsToTxn", 3, {
        "v3_and_below_transactional_id": "tx", "v3_and_below_producer_id": init.producer_id,
        "v3_and_below_producer_epoch": init.producer_epoch,
        "v3_and_below_topics": [{"name": name, "partitions": [0, 3]}]})
    [topic] = answer.results_by_topic_v3_and_below
    assert [(p.partition_index, p.partition_error_code) for p in topic.results_by_partition] == order


def test_string_hash_codes_are_java_s():
    """Values Java's String.hashCode gives: over UTF-16 code units (a rocket is a surrogate pair), int32 overflow
    ("polygenelubricants" is Integer.MIN_VALUE), for a long string as for a short one (computed again, not kept)."""
    assert [java_string_hash(s) for s in ("", "a", "hello", "polygenelubricants", "🚀")] == [
        0, 97, 99162322, -2147483648, 31 * 0xD83D + 0xDE80]
    long = "é🚀x" * 10922
    expected = 0
    for unit in long.encode("utf-16-be").hex(" ", 2).split():
        expected = (31 * expected + int(unit, 16)) & 0xFFFFFFFF
    assert java_string_hash(long) == (expected - (1 << 32) if expected >= 1 << 31 else expected)
    java_string_hash.cache_clear()
    assert java_string_hash(long) == java_string_hash("é🚀x" * 10922)
