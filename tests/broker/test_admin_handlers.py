"""Admin APIs of the broker core, without sockets: DeleteTopics, CreatePartitions, DeleteRecords,
OffsetForLeaderEpoch, DescribeConfigs, AlterConfigs, IncrementalAlterConfigs, DescribeCluster and
DescribeTopicPartitions. Every request goes through the codec at a real version and every response is encoded at
the same version, so a field the version lacks would fail here."""

from __future__ import annotations

import uuid

import pytest
from support.broker_calls import call

from kafkamock import records
from kafkamock.broker import Cluster
from kafkamock.broker.errors import ErrorCode as E

ZERO = uuid.UUID(int=0)
TOPIC, BROKER = 2, 4
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
SOURCE = {"TOPIC": 1, "DYNAMIC_BROKER": 2, "DYNAMIC_DEFAULT": 3, "STATIC": 4, "DEFAULT": 5}
MISMATCHED_ENDPOINT_TYPE, UNSUPPORTED_ENDPOINT_TYPE = 114, 115


def produce(broker, *vals, topic="t", partition=0, timestamp=None, key=None):
    ts = broker.now_ms() if timestamp is None else timestamp
    data = records.encode_batch([{"key": key, "value": v, "timestamp": ts} for v in vals])
    response = call(broker, "Produce", 9, {"acks": -1, "timeout_ms": 1000, "topic_data": [
        {"name": topic, "partition_data": [{"index": partition, "records": data}]}]})
    result = response.responses[0].partition_responses[0]
    assert result.error_code == E.NONE, result
    return result.base_offset


def fetch_error(broker, offset, topic="t", partition=0):
    response = call(broker, "Fetch", 12, {
        "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1_000_000, "session_epoch": -1,
        "topics": [{"topic": topic, "partitions": [
            {"partition": partition, "fetch_offset": offset, "partition_max_bytes": 1_000_000}]}]})
    return response.responses[0].partitions[0].error_code


# -- DeleteTopics -----------------------------------------------------------------------------------------------

def delete_topics(broker, version, names=(), topics=()):
    body = {"timeout_ms": 1000}
    if version >= 6:
        body["topics"] = [{"name": n, "topic_id": i} for n, i in topics]
    else:
        body["topic_names"] = list(names)
    return call(broker, "DeleteTopics", version, body).responses


@pytest.mark.parametrize("version", [1, 3, 4, 5])
def test_delete_topics_by_name(broker, version):
    broker.metadata.create_topic("u", 1, 1)
    topic_id = broker.metadata.topics["t"].topic_id
    results = {r.name: r for r in delete_topics(broker, version, ["t", "nope"])}
    assert results["t"].error_code == E.NONE
    assert results["nope"].error_code == E.UNKNOWN_TOPIC_OR_PARTITION
    # Kafka 4.3.1 sends its default message for an unknown topic (v5+ carries messages)
    assert results["nope"].error_message == ("This server does not host this topic-partition." if version >= 5 else None)
    assert "t" not in broker.metadata.topics and topic_id not in broker.metadata.topics_by_id
    assert "u" in broker.metadata.topics
    assert fetch_error(broker, 0) == E.UNKNOWN_TOPIC_OR_PARTITION


def test_delete_topics_duplicate_names_get_one_error_with_a_message_at_v5(broker):
    (result,) = delete_topics(broker, 5, ["t", "t"])
    assert (result.name, result.error_code, result.error_message) == ("t", E.INVALID_REQUEST, "Duplicate topic name.")
    assert "t" in broker.metadata.topics
    (result,) = delete_topics(broker, 4, ["t", "t"])  # no error_message before v5
    assert result.error_code == E.INVALID_REQUEST and result.error_message is None


def test_delete_topics_by_id_v6(broker):
    broker.metadata.create_topic("u", 1, 1)
    t_id, u_id = broker.metadata.topics["t"].topic_id, broker.metadata.topics["u"].topic_id
    unknown = uuid.uuid4()
    results = delete_topics(broker, 6, topics=[(None, t_id), ("u", ZERO), (None, unknown), ("x", unknown),
                                               (None, ZERO)])
    by_key = {(r.name, r.topic_id): r for r in results}
    assert by_key[("t", t_id)].error_code == E.NONE          # by id: answered with the name too
    assert by_key[("u", u_id)].error_code == E.NONE          # by name: answered with the id too
    assert by_key[(None, unknown)].error_code == E.UNKNOWN_TOPIC_ID
    assert by_key[("x", unknown)].error_code == E.INVALID_REQUEST
    assert by_key[("x", unknown)].error_message == "You may not specify both topic name and topic id."
    assert by_key[(None, ZERO)].error_message == "Neither topic name nor id were specified."
    assert broker.metadata.topics == {} and broker.metadata.topics_by_id == {}


def test_delete_topics_v6_name_and_id_of_the_same_topic(broker):
    t_id = broker.metadata.topics["t"].topic_id
    (result,) = delete_topics(broker, 6, topics=[(None, t_id), ("t", ZERO)])
    assert (result.name, result.topic_id, result.error_code) == ("t", t_id, E.INVALID_REQUEST)
    assert "t" in broker.metadata.topics
    results = delete_topics(broker, 6, topics=[(None, t_id), (None, t_id)])
    assert [(r.name, r.topic_id, r.error_message) for r in results] == [(None, t_id, "Duplicate topic id.")]


@pytest.mark.parametrize(("version", "code"), [(1, E.INVALID_REQUEST), (2, E.INVALID_REQUEST),
                                               (3, E.TOPIC_DELETION_DISABLED), (6, E.TOPIC_DELETION_DISABLED)])
def test_delete_topics_disabled(clock, version, code):
    broker = Cluster({"delete.topic.enable": "false"}, clock=clock)
    broker.metadata.create_topic("t", 1, 1)
    results = delete_topics(broker, version, ["t"], topics=[("t", ZERO)])
    assert [(r.name, r.error_code) for r in results] == [("t", code)]
    assert "t" in broker.metadata.topics


# -- CreatePartitions -------------------------------------------------------------------------------------------

def create_partitions(broker, version, topics, validate_only=False):
    return call(broker, "CreatePartitions", version, {
        "topics": [{"name": n, "count": c, "assignments": a} for n, c, a in topics],
        "timeout_ms": 1000, "validate_only": validate_only}).results


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_create_partitions_grows_the_topic(broker, version):
    (result,) = create_partitions(broker, version, [("t", 4, None)])
    assert (result.error_code, result.error_message) == (E.NONE, None)
    topic = broker.metadata.topics["t"]
    assert [p.index for p in topic.partitions] == [0, 1, 2, 3]
    assert produce(broker, b"x", partition=3) == 0
    meta = call(broker, "Metadata", 12, {"topics": [{"name": "t"}]})
    assert len(meta.topics[0].partitions) == 4


def test_create_partitions_errors(broker):
    broker.metadata.create_topic("u", 1, 1)
    results = {r.name: r for r in create_partitions(broker, 3, [
        ("t", 2, None), ("u", 1, None), ("u", 3, None), ("nope", 3, None), ("dup", 3, None), ("dup", 4, None)])}
    assert len(results) == 4
    assert results["t"].error_code == E.INVALID_PARTITIONS
    assert results["t"].error_message == "Topic already has 2 partition(s)."
    assert results["u"].error_code == E.INVALID_REQUEST and results["u"].error_message == "Duplicate topic name."
    assert results["dup"].error_code == E.INVALID_REQUEST
    assert results["nope"].error_code == E.UNKNOWN_TOPIC_OR_PARTITION
    (smaller,) = create_partitions(broker, 1, [("t", 1, None)])
    assert smaller.error_code == E.INVALID_PARTITIONS
    assert smaller.error_message == "The topic t currently has 2 partition(s); 1 would not be an increase."
    assert len(broker.metadata.topics["t"].partitions) == 2 and len(broker.metadata.topics["u"].partitions) == 1


def test_create_partitions_validate_only(broker):
    (result,) = create_partitions(broker, 2, [("t", 5, None)], validate_only=True)
    assert result.error_code == E.NONE and len(broker.metadata.topics["t"].partitions) == 2


def test_create_partitions_with_assignments(clock):
    broker = Cluster(clock=clock, brokers=2)               # nodes 1 and 2
    broker.metadata.create_topic("t", 2, 1)
    (ok,) = create_partitions(broker, 3, [("t", 4, [{"broker_ids": [2]}, {"broker_ids": [1]}])])
    assert ok.error_code == E.NONE
    parts = broker.metadata.topics["t"].partitions
    assert [(p.leader_id, p.replicas) for p in parts[2:]] == [(2, [2]), (1, [1])]
    for assignments, message in [
        ([{"broker_ids": [1]}], "Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified."),
        ([{"broker_ids": [1]}, {"broker_ids": [7]}], "includes broker 7, but no such broker is registered"),
        ([{"broker_ids": [1]}, {"broker_ids": []}], "includes an empty replica list"),
        ([{"broker_ids": [1]}, {"broker_ids": [2, 2]}], "includes the broker 2 more than once"),
        ([{"broker_ids": [1]}, {"broker_ids": [1, 2]}], "with 2 replica(s), but this is not consistent"),
    ]:
        (bad,) = create_partitions(broker, 0, [("t", 6, assignments)])
        assert bad.error_code == E.INVALID_REPLICA_ASSIGNMENT and message in bad.error_message
    assert len(broker.metadata.topics["t"].partitions) == 4


# -- DeleteRecords ----------------------------------------------------------------------------------------------

def delete_records(broker, version, offsets, topic="t"):
    response = call(broker, "DeleteRecords", version, {"timeout_ms": 1000, "topics": [
        {"name": topic, "partitions": [{"partition_index": p, "offset": o} for p, o in offsets]}]})
    return [(r.partition_index, r.low_watermark, r.error_code) for r in response.topics[0].partitions]


@pytest.mark.parametrize("version", [0, 1, 2])
def test_delete_records_moves_the_log_start_offset(broker, version):
    for i in range(3):
        produce(broker, b"%d" % (2 * i), b"%d" % (2 * i + 1))      # offsets 0-5 in three batches
    assert delete_records(broker, version, [(0, 3)]) == [(0, 3, E.NONE)]
    plog = broker.metadata.partition("t", 0).log
    # Kafka deletes whole segments only: the log start moves, the batches below it stay until their segment goes.
    assert plog.log_start_offset == 3 and len(plog) == 3
    assert fetch_error(broker, 2) == E.OFFSET_OUT_OF_RANGE
    assert fetch_error(broker, 3) == E.NONE
    earliest = call(broker, "ListOffsets", 7, {"replica_id": -1, "topics": [
        {"name": "t", "partitions": [{"partition_index": 0, "timestamp": -2}]}]})
    assert earliest.topics[0].partitions[0].offset == 3
    assert delete_records(broker, version, [(0, 1)]) == [(0, 3, E.NONE)]   # below the start: nothing changes
    assert delete_records(broker, version, [(0, 7), (0, -2)]) == [(0, -1, E.OFFSET_OUT_OF_RANGE)] * 2
    assert delete_records(broker, version, [(0, -1), (1, -1)]) == [(0, 6, E.NONE), (1, 0, E.NONE)]
    assert plog.log_start_offset == 6 and fetch_error(broker, 5) == E.OFFSET_OUT_OF_RANGE
    assert fetch_error(broker, 6) == E.NONE
    assert delete_records(broker, version, [(2, 0)]) == [(2, -1, E.UNKNOWN_TOPIC_OR_PARTITION)]
    assert delete_records(broker, version, [(0, 0)], topic="nope") == [(0, -1, E.UNKNOWN_TOPIC_OR_PARTITION)]


def test_delete_records_refused_on_compacted_topics(broker):
    broker.metadata.create_topic("c", 1, 1, {"cleanup.policy": "compact"})
    produce(broker, b"a", topic="c", key=b"k")
    assert delete_records(broker, 2, [(0, 1)], topic="c") == [(0, -1, E.POLICY_VIOLATION)]
    assert incremental(broker, 1, [(TOPIC, "c", [("cleanup.policy", SET, "compact,delete")])]) == [("c", E.NONE, None)]
    assert delete_records(broker, 2, [(0, 1)], topic="c") == [(0, 1, E.NONE)]


# -- OffsetForLeaderEpoch ---------------------------------------------------------------------------------------

def epoch_end(broker, version, parts, topic="t"):
    """parts: (partition, leader_epoch, current_leader_epoch) -> [(error, leader_epoch, end_offset)]"""
    body = {"topics": [{"topic": topic, "partitions": [
        {"partition": p, "leader_epoch": e, "current_leader_epoch": c} for p, e, c in parts]}]}
    if version >= 3:
        body["replica_id"] = -1
    response = call(broker, "OffsetForLeaderEpoch", version, body)
    return [(r.error_code, r.leader_epoch, r.end_offset) for r in response.topics[0].partitions]


@pytest.mark.parametrize("version", [2, 3, 4])
def test_offset_for_leader_epoch(broker, version):
    assert epoch_end(broker, version, [(0, 0, -1)]) == [(E.NONE, 0, 0)]        # empty log: the current epoch
    produce(broker, b"a", b"b", b"c")
    assert epoch_end(broker, version, [(0, 0, 0), (0, 1, -1), (0, -1, -1)]) == [
        (E.NONE, 0, 3),        # the current epoch ends at the log end offset
        (E.NONE, -1, -1),      # above every known epoch: UNDEFINED, no error
        (E.NONE, -1, -1),      # UNDEFINED_EPOCH asks for nothing
    ]
    partition = broker.metadata.partition("t", 0)
    broker.metadata.set_leader(partition, partition.leader_id)   # two elections; new batches carry epoch 2
    broker.metadata.set_leader(partition, partition.leader_id)
    produce(broker, b"d", b"e")
    assert epoch_end(broker, version, [(0, 0, 2), (0, 1, 2), (0, 2, 2), (0, 3, 2)]) == [
        (E.NONE, 0, 3),        # epoch 0 ends where epoch 2 starts
        (E.NONE, 0, 3),        # no epoch 1: the largest epoch below it, ending where the next one starts
        (E.NONE, 2, 5),
        (E.NONE, -1, -1),
    ]
    assert epoch_end(broker, version, [(0, 2, 1), (0, 2, 3)]) == [
        (E.FENCED_LEADER_EPOCH, -1, -1), (E.UNKNOWN_LEADER_EPOCH, -1, -1)]
    assert epoch_end(broker, version, [(5, 0, -1)]) == [(E.UNKNOWN_TOPIC_OR_PARTITION, -1, -1)]
    assert epoch_end(broker, version, [(0, 0, -1)], topic="nope") == [(E.UNKNOWN_TOPIC_OR_PARTITION, -1, -1)]
    # Records deleted below epoch 2's start: epoch 0 is gone and epoch 2 starts at the new log start offset.
    assert delete_records(broker, 2, [(0, 4)]) == [(0, 4, E.NONE)]
    assert epoch_end(broker, version, [(0, 0, -1), (0, 2, -1)]) == [(E.NONE, 0, 4), (E.NONE, 2, 5)]


def test_offset_for_leader_epoch_new_epoch_without_records(broker):
    produce(broker, b"a")
    partition = broker.metadata.partition("t", 0)
    broker.metadata.set_leader(partition, partition.leader_id)   # a new epoch starts at the log end, no records yet
    assert epoch_end(broker, 4, [(0, 0, 1), (0, 1, 1)]) == [(E.NONE, 0, 1), (E.NONE, 1, 1)]


# -- DescribeConfigs / AlterConfigs / IncrementalAlterConfigs ---------------------------------------------------

def describe(broker, version, resources, synonyms=False, docs=False):
    body = {"resources": [{"resource_type": t, "resource_name": n, "configuration_keys": keys}
                          for t, n, keys in resources]}
    if version >= 1:
        body["include_synonyms"] = synonyms
    if version >= 3:
        body["include_documentation"] = docs
    return call(broker, "DescribeConfigs", version, body).results


def described(broker, version, rtype, name, keys=None, synonyms=False):
    (result,) = describe(broker, version, [(rtype, name, keys)], synonyms)
    assert result.error_code == E.NONE, result
    return {c.name: c for c in result.configs}


def alter(broker, version, resources, validate_only=False):
    """resources: (type, name, {config: value})"""
    return [(r.resource_name, r.error_code, r.error_message) for r in call(broker, "AlterConfigs", version, {
        "resources": [{"resource_type": t, "resource_name": n,
                       "configs": [{"name": k, "value": v} for k, v in configs.items()]}
                      for t, n, configs in resources],
        "validate_only": validate_only}).responses]


def incremental(broker, version, resources, validate_only=False):
    """resources: (type, name, [(config, op, value)])"""
    return [(r.resource_name, r.error_code, r.error_message) for r in call(broker, "IncrementalAlterConfigs", version, {
        "resources": [{"resource_type": t, "resource_name": n,
                       "configs": [{"name": k, "config_operation": op, "value": v} for k, op, v in ops]}
                      for t, n, ops in resources],
        "validate_only": validate_only}).responses]


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_describe_topic_configs(broker, version):
    configs = described(broker, version, TOPIC, "t")
    retention = configs["retention.ms"]
    assert (retention.value, retention.config_source, retention.read_only, retention.is_sensitive) == \
        ("604800000", SOURCE["DEFAULT"], False, False)
    assert retention.synonyms == []
    assert configs["cleanup.policy"].value == "delete"
    assert configs["min.cleanable.dirty.ratio"].value == "0.5"
    assert configs["unclean.leader.election.enable"].value == "false"
    if version >= 3:
        types = {name: configs[name].config_type for name in
                 ("cleanup.policy", "min.cleanable.dirty.ratio", "preallocate", "message.timestamp.type",
                  "max.message.bytes", "retention.ms")}
        assert types == {"cleanup.policy": 7, "min.cleanable.dirty.ratio": 6, "preallocate": 1,
                         "message.timestamp.type": 2, "max.message.bytes": 3, "retention.ms": 5}
        assert retention.documentation is None
    else:
        assert retention.config_type == 0  # not on the wire before v3

    # log.retention.ms has no default (its value comes from log.retention.hours): no synonym at all, as in Kafka
    synonyms = described(broker, version, TOPIC, "t", synonyms=True)["retention.ms"].synonyms
    assert synonyms == []
    synonyms = described(broker, version, TOPIC, "t", synonyms=True)["retention.bytes"].synonyms
    assert [(s.name, s.value, s.source) for s in synonyms] == [("log.retention.bytes", "-1", SOURCE["DEFAULT"])]
    assert described(broker, version, TOPIC, "t", synonyms=True)["remote.storage.enable"].synonyms == []

    assert incremental(broker, 1, [(TOPIC, "t", [("retention.ms", SET, "1000")])]) == [("t", E.NONE, None)]
    filtered = described(broker, version, TOPIC, "t", keys=["retention.ms", "no.such.config"], synonyms=True)
    assert list(filtered) == ["retention.ms"]
    assert (filtered["retention.ms"].value, filtered["retention.ms"].config_source) == ("1000", SOURCE["TOPIC"])
    assert [(s.name, s.value, s.source) for s in filtered["retention.ms"].synonyms] == [
        ("retention.ms", "1000", SOURCE["TOPIC"])]


def test_describe_topic_configs_follow_the_broker_levels(clock):
    broker = Cluster({"log.retention.ms": "100"}, clock=clock)
    broker.metadata.create_topic("t", 1, 1)
    retention = described(broker, 4, TOPIC, "t", synonyms=True)["retention.ms"]
    assert (retention.value, retention.config_source) == ("100", SOURCE["STATIC"])
    assert incremental(broker, 1, [(BROKER, "", [("log.retention.ms", SET, "200")])]) == [("", E.NONE, None)]
    retention = described(broker, 4, TOPIC, "t", synonyms=True)["retention.ms"]
    assert (retention.value, retention.config_source) == ("200", SOURCE["DYNAMIC_DEFAULT"])
    assert [(s.name, s.value, s.source) for s in retention.synonyms] == [
        ("log.retention.ms", "200", SOURCE["DYNAMIC_DEFAULT"]), ("log.retention.ms", "100", SOURCE["STATIC"]),
        ("log.retention.hours", "168", SOURCE["DEFAULT"])]
    assert incremental(broker, 0, [(BROKER, "1", [("log.retention.ms", SET, "300")])]) == [("1", E.NONE, None)]
    retention = described(broker, 4, TOPIC, "t")["retention.ms"]
    assert (retention.value, retention.config_source) == ("300", SOURCE["DYNAMIC_BROKER"])
    assert broker.topic_config(broker.metadata.topics["t"], "retention.ms") == 300
    assert incremental(broker, 0, [(BROKER, "1", [("log.retention.ms", DELETE, None)])]) == [("1", E.NONE, None)]
    assert broker.first_node().config["log.retention.ms"] == 200


def synonyms_of(config) -> list[tuple[str, str | None, int]]:
    return [(s.name, s.value, s.source) for s in config.synonyms]


def test_retention_roll_jitter_and_flush_ms_have_no_default_and_derive_as_in_kafka(clock):
    """log.retention.ms, log.roll.ms, log.roll.jitter.ms and log.flush.interval.ms have no default in Kafka: unset,
    the broker uses log.retention.minutes/hours, log.roll.hours, log.roll.jitter.hours and
    log.flush.scheduler.interval.ms, and DescribeConfigs lists synonyms from the first one named as the topic
    config's broker synonym on (what Kafka 3.8's broker answers for the same settings)."""
    broker = Cluster({"log.retention.hours": "24", "log.roll.hours": "2", "log.roll.jitter.hours": "1",
                     "log.flush.scheduler.interval.ms": "9000"}, clock=clock)
    broker.metadata.create_topic("t", 1, 1)
    topic = broker.metadata.topics["t"]
    assert [broker.topic_config(topic, n) for n in ("retention.ms", "segment.ms", "segment.jitter.ms", "flush.ms")] \
        == [86_400_000, 7_200_000, 3_600_000, 9000]
    assert topic.partitions[0].log.config.retention_ms == 86_400_000
    configs = described(broker, 4, TOPIC, "t", synonyms=True)
    for name, value in (("retention.ms", "86400000"), ("segment.ms", "7200000"), ("segment.jitter.ms", "3600000")):
        assert (configs[name].value, configs[name].config_source, configs[name].synonyms) == \
            (value, SOURCE["DEFAULT"], []), name
    assert (configs["flush.ms"].value, configs["flush.ms"].config_source) == ("9000", SOURCE["DEFAULT"])
    assert configs["flush.ms"].synonyms == []

    node = described(broker, 4, BROKER, "1", synonyms=True)
    for name in ("log.retention.ms", "log.retention.minutes", "log.roll.ms", "log.roll.jitter.ms",
                 "log.flush.interval.ms"):
        assert (node[name].value, node[name].config_source, node[name].synonyms) == (None, SOURCE["DEFAULT"], []), name
    assert (node["log.retention.hours"].value, node["log.retention.hours"].read_only) == ("24", True)
    assert synonyms_of(node["log.retention.hours"]) == [("log.retention.hours", "24", SOURCE["STATIC"]),
                                                        ("log.retention.hours", "168", SOURCE["DEFAULT"])]
    assert not node["log.retention.ms"].read_only
    assert alter(broker, 0, [(BROKER, "1", {"log.retention.hours": "5"})]) == [
        ("1", E.INVALID_REQUEST, "Cannot update these configs dynamically: [log.retention.hours]")]

    # Set at the broker: the ms configs come first, their fallbacks after them
    assert incremental(broker, 1, [(BROKER, "1", [("log.retention.ms", SET, "300000"),
                                                  ("log.flush.interval.ms", SET, "7000")])]) == [("1", E.NONE, None)]
    configs = described(broker, 4, TOPIC, "t", synonyms=True)
    assert (configs["retention.ms"].value, configs["retention.ms"].config_source) == ("300000",
                                                                                      SOURCE["DYNAMIC_BROKER"])
    assert synonyms_of(configs["retention.ms"]) == [
        ("log.retention.ms", "300000", SOURCE["DYNAMIC_BROKER"]), ("log.retention.hours", "24", SOURCE["STATIC"]),
        ("log.retention.hours", "168", SOURCE["DEFAULT"])]
    assert synonyms_of(configs["flush.ms"]) == [
        ("log.flush.interval.ms", "7000", SOURCE["DYNAMIC_BROKER"]),
        ("log.flush.scheduler.interval.ms", "9000", SOURCE["STATIC"]),
        ("log.flush.scheduler.interval.ms", str(2**63 - 1), SOURCE["DEFAULT"])]
    assert broker.topic_config(topic, "retention.ms") == 300_000
    node = described(broker, 4, BROKER, "1", synonyms=True)
    assert synonyms_of(node["log.retention.ms"]) == synonyms_of(configs["retention.ms"])

    # minutes before hours; a negative retention is -1 (none), whatever the unit
    assert Cluster({"log.retention.minutes": "3", "log.retention.hours": "1"}, clock=clock).config[
        "log.retention.ms"] == 180_000
    assert Cluster({"log.retention.hours": "-1"}, clock=clock).config["log.retention.ms"] == -1
    assert Cluster({"log.roll.ms": "5000", "log.roll.hours": "1"}, clock=clock).config["log.roll.ms"] == 5000


def test_describe_broker_configs_each_node_reports_its_own_node_id(clock):
    cluster = Cluster(brokers=3, clock=clock)
    for node_id in (1, 2, 3):
        (result,) = call(cluster, "DescribeConfigs", 4, {
            "resources": [{"resource_type": BROKER, "resource_name": str(node_id), "configuration_keys": ["node.id"]}],
            "include_synonyms": True, "include_documentation": False}, node_id=node_id).results
        assert result.error_code == E.NONE, result
        (config,) = result.configs
        assert (config.value, config.read_only) == (str(node_id), True)
        # Every Kafka node has its node.id in its properties (kafkamock's nodes as if they had it there too).
        assert synonyms_of(config) == [("node.id", str(node_id), SOURCE["STATIC"])]
    numbered = Cluster({"node.id": 5}, brokers=2, clock=clock)
    (result,) = call(numbered, "DescribeConfigs", 4, {
        "resources": [{"resource_type": BROKER, "resource_name": "6", "configuration_keys": ["node.id"]}],
        "include_synonyms": True, "include_documentation": False}, node_id=6).results
    assert synonyms_of(result.configs[0]) == [("node.id", "6", SOURCE["STATIC"])]    # node.id has no default


@pytest.mark.parametrize("version", [1, 4])
def test_describe_broker_configs(broker, version):
    configs = described(broker, version, BROKER, "1", synonyms=True)
    assert {"log.retention.ms", "num.partitions", "delete.topic.enable", "node.id"} <= set(configs)
    assert configs["node.id"].read_only and not configs["log.retention.ms"].read_only
    assert configs["num.partitions"].read_only          # Kafka cannot change it at runtime
    assert (configs["num.partitions"].value, configs["num.partitions"].config_source) == ("1", SOURCE["DEFAULT"])
    assert [(s.name, s.source) for s in configs["num.partitions"].synonyms] == [("num.partitions", SOURCE["DEFAULT"])]
    # "": only dynamic cluster defaults; a new cluster has min.insync.replicas there (Kafka 4.3's ELR bootstrap).
    assert list(described(broker, version, BROKER, "")) == ["min.insync.replicas"]
    assert incremental(broker, 1, [(BROKER, "", [("log.cleaner.backoff.ms", SET, "3000")])]) == [("", E.NONE, None)]
    defaults = described(broker, version, BROKER, "", synonyms=True)
    assert list(defaults) == ["log.cleaner.backoff.ms", "min.insync.replicas"]
    assert defaults["log.cleaner.backoff.ms"].config_source == SOURCE["DYNAMIC_DEFAULT"]
    assert [(s.value, s.source) for s in defaults["log.cleaner.backoff.ms"].synonyms] == [
        ("3000", SOURCE["DYNAMIC_DEFAULT"])]
    mine = described(broker, version, BROKER, "1", keys=["log.cleaner.backoff.ms"])["log.cleaner.backoff.ms"]
    assert (mine.value, mine.config_source) == ("3000", SOURCE["DYNAMIC_DEFAULT"])
    assert broker.first_node().config["log.cleaner.backoff.ms"] == 3000


@pytest.mark.parametrize("version", [1, 4])
def test_describe_configs_errors(broker, version):
    results = describe(broker, version, [(TOPIC, "nope", None), (TOPIC, "bad name", None), (BROKER, "2", None),
                                         (BROKER, "x", None), (32, "", None), (16, "metrics", None)])
    assert [(r.resource_name, r.error_code) for r in results] == [
        ("nope", E.UNKNOWN_TOPIC_OR_PARTITION), ("bad name", E.INVALID_TOPIC_EXCEPTION),
        ("2", E.INVALID_REQUEST), ("x", E.INVALID_REQUEST), ("", E.INVALID_REQUEST), ("metrics", E.INVALID_REQUEST)]
    assert all(r.configs == [] for r in results)
    assert results[0].error_message == ""      # as Kafka: no message for an unknown topic
    assert results[2].error_message == "Unexpected broker id, expected 1 or empty string, but received 2"
    assert results[3].error_message == "Broker id must be an integer, but it is: x"
    # A resource type Kafka does not know fails the whole request.
    results = describe(broker, version, [(TOPIC, "t", None), (99, "x", None)])
    assert [(r.resource_type, r.error_code) for r in results] == [(TOPIC, E.INVALID_REQUEST), (99, E.INVALID_REQUEST)]


@pytest.mark.parametrize("version", [0, 1, 2])
def test_alter_configs_replaces_the_whole_set(broker, version):
    topic = broker.metadata.topics["t"]
    assert alter(broker, version, [(TOPIC, "t", {"retention.ms": "1000", "cleanup.policy": "compact,delete"})]) \
        == [("t", E.NONE, None)]
    assert topic.configs == {"retention.ms": 1000, "cleanup.policy": "compact,delete"}
    assert alter(broker, version, [(TOPIC, "t", {"retention.bytes": "2048"})]) == [("t", E.NONE, None)]
    assert topic.configs == {"retention.bytes": 2048}
    configs = described(broker, 4, TOPIC, "t")
    assert configs["retention.ms"].config_source == SOURCE["DEFAULT"]
    assert (configs["retention.bytes"].value, configs["retention.bytes"].config_source) == ("2048", SOURCE["TOPIC"])
    assert alter(broker, version, [(TOPIC, "t", {"retention.ms": "5"})], validate_only=True) == [("t", E.NONE, None)]
    assert topic.configs == {"retention.bytes": 2048}
    node = broker.first_node().config
    assert alter(broker, version, [(BROKER, "1", {"log.retention.ms": "1234"})]) == [("1", E.NONE, None)]
    # (min.insync.replicas is dynamic at the cluster level from the start: Kafka 4.3's ELR bootstrap.)
    assert node["log.retention.ms"] == 1234 and node.dynamic == {"log.retention.ms", "min.insync.replicas"}
    assert alter(broker, version, [(BROKER, "1", {})]) == [("1", E.NONE, None)]
    assert node["log.retention.ms"] == 604800000 and node.dynamic == {"min.insync.replicas"}


@pytest.mark.parametrize("version", [0, 2])
def test_alter_configs_errors(broker, version):
    topic = broker.metadata.topics["t"]
    topic.configs["retention.ms"] = 10
    results = alter(broker, version, [
        (TOPIC, "t", {"retention.mss": "1"}),
        (TOPIC, "nope", {"retention.ms": "1"}),
        (TOPIC, "", {"retention.ms": "1"}),
        (TOPIC, "bad name", {}),
        (BROKER, "1", {"node.id": "3"}),
        (BROKER, "2", {"log.retention.ms": "1"}),
        (BROKER, "", {"log.retention.ms": "abc"}),
        (99, "x", {}),
        (32, "group", {"no.such.group.config": "1"}),
    ])
    codes = [(name, code) for name, code, _ in results]
    assert codes == [
        ("t", E.INVALID_CONFIG), ("nope", E.UNKNOWN_TOPIC_OR_PARTITION), ("", E.INVALID_REQUEST),
        ("bad name", E.INVALID_TOPIC_EXCEPTION), ("1", E.INVALID_REQUEST), ("2", E.INVALID_REQUEST),
        ("", E.INVALID_REQUEST), ("x", E.INVALID_REQUEST), ("group", E.INVALID_CONFIG)]
    messages = [message for _, _, message in results]
    assert messages[0] == "Unknown topic config name: retention.mss"
    assert messages[4] == "Cannot update these configs dynamically: [node.id]"
    assert messages[5] == "Unexpected broker id, expected 1, but received 2"
    assert messages[7] == "Unknown resource type 99"
    assert alter(broker, version, [(BROKER, "", {"no.such.config": "1"})])[0][1] == E.INVALID_CONFIG
    assert broker.config.dynamic == {"min.insync.replicas"}      # the ELR bootstrap's, untouched
    assert topic.configs == {"retention.ms": 10}
    assert alter(broker, version, [(TOPIC, "t", {"retention.ms": "x"})])[0][1] == E.INVALID_CONFIG
    assert alter(broker, version, [(TOPIC, "t", {"retention.ms": None})])[0][1:] == (
        E.INVALID_REQUEST, "Null value not supported for : retention.ms")
    duplicated = alter(broker, version, [(TOPIC, "t", {"retention.ms": "1"}), (TOPIC, "t", {"retention.ms": "2"})])
    assert duplicated == [("t", E.INVALID_REQUEST, "Each resource must appear at most once.")] * 2
    assert topic.configs == {"retention.ms": 10}


@pytest.mark.parametrize("version", [0, 1])
def test_incremental_alter_configs_operations(broker, version):
    topic = broker.metadata.topics["t"]
    ok = [("t", E.NONE, None)]
    assert incremental(broker, version, [(TOPIC, "t", [("retention.ms", SET, "1000"),
                                                       ("cleanup.policy", APPEND, "compact")])]) == ok
    assert topic.configs == {"retention.ms": 1000, "cleanup.policy": "delete,compact"}
    assert incremental(broker, version, [(TOPIC, "t", [("cleanup.policy", SUBTRACT, "delete")])]) == ok
    assert topic.configs["cleanup.policy"] == "compact"
    assert incremental(broker, version, [(TOPIC, "t", [("cleanup.policy", APPEND, "compact,delete")])]) == ok
    assert topic.configs["cleanup.policy"] == "compact,delete"
    throttled = "leader.replication.throttled.replicas"
    assert incremental(broker, version, [(TOPIC, "t", [(throttled, APPEND, "0:0")])]) == ok
    assert incremental(broker, version, [(TOPIC, "t", [(throttled, APPEND, "1:0,0:0")])]) == ok
    assert topic.configs[throttled] == "0:0,1:0"
    assert incremental(broker, version, [(TOPIC, "t", [(throttled, SUBTRACT, "0:0")])]) == ok
    assert topic.configs[throttled] == "1:0"
    assert incremental(broker, version, [(TOPIC, "t", [("retention.ms", DELETE, None), (throttled, DELETE, None),
                                                       ("segment.ms", DELETE, None)])]) == ok
    assert topic.configs == {"cleanup.policy": "compact,delete"}
    assert incremental(broker, version, [(TOPIC, "t", [("retention.ms", SET, "5")])], validate_only=True) == ok
    assert topic.configs == {"cleanup.policy": "compact,delete"}


@pytest.mark.parametrize("version", [0, 1])
def test_incremental_alter_configs_errors(broker, version):
    topic = broker.metadata.topics["t"]
    topic.configs["retention.ms"] = 10
    results = incremental(broker, version, [
        (TOPIC, "t", [("retention.ms", SET, "20"), ("retention.bytes", APPEND, "1")]),
        (TOPIC, "u", [("retention.ms", SET, None)]),
        (TOPIC, "v", [("retention.ms", 7, "1")]),
        (TOPIC, "w", [("retention.ms", SET, "1"), ("retention.ms", DELETE, None)]),
        (TOPIC, "nope", [("retention.ms", SET, "1")]),
        (TOPIC, "x", [("no.such", SET, "1")]),
        (BROKER, "1", [("log.retention.ms", SUBTRACT, "1")]),
        (BROKER, "3", [("log.retention.ms", SET, "1")]),
        (99, "y", []),
    ])
    assert results == [
        ("t", E.INVALID_CONFIG, "Can't APPEND to key retention.bytes because its type is not LIST."),
        ("u", E.INVALID_REQUEST, "Null value not supported for : retention.ms"),
        ("v", E.UNKNOWN_SERVER_ERROR, None),      # Kafka's OpType.forId throws: no message
        ("w", E.INVALID_REQUEST, "Error due to duplicate config keys"),
        ("nope", E.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'nope' does not exist."),
        ("x", E.INVALID_CONFIG, "Unknown topic config name: no.such"),
        ("1", E.INVALID_CONFIG, "Config value subtract is not allowed for config key: log.retention.ms"),
        ("3", E.INVALID_REQUEST, "Unexpected broker id, expected 1, but received 3"),
        ("y", E.INVALID_REQUEST, "Unknown resource type 99"),
    ]
    assert topic.configs == {"retention.ms": 10}   # a failed resource changes none of its configs
    # Each resource stands alone: one failing does not stop another.
    mixed = incremental(broker, version, [(TOPIC, "t", [("retention.ms", SET, "30")]),
                                          (TOPIC, "nope", [("retention.ms", SET, "1")])])
    assert [code for _, code, _ in mixed] == [E.NONE, E.UNKNOWN_TOPIC_OR_PARTITION]
    assert topic.configs == {"retention.ms": 30}


def test_retention_set_through_incremental_alter_configs(broker, clock):
    # One batch per segment (segment size below two batches), so retention can take them one at a time. Kafka 4
    # refuses a segment.bytes under 1 MiB; internal.segment.bytes is its test-only override.
    assert incremental(broker, 1, [(TOPIC, "t", [("segment.bytes", SET, "100")])]) == [
        ("t", E.INVALID_CONFIG, "Invalid value 100 for configuration segment.bytes: Value must be at least 1048576")]
    assert incremental(broker, 1, [(TOPIC, "t", [("internal.segment.bytes", SET, "100")])]) == [("t", E.NONE, None)]
    now = clock.now_ms()
    produce(broker, b"old", timestamp=now - 200_000)
    produce(broker, b"older-ish", timestamp=now - 100_000)
    produce(broker, b"new", timestamp=now)
    plog = broker.metadata.partition("t", 0).log
    assert len(plog.segments) == 3
    clock.advance(30_000)                                            # log.initial.task.delay.ms
    broker.tick()
    assert plog.log_start_offset == 0                                # a week's retention by default
    assert incremental(broker, 1, [(TOPIC, "t", [("retention.ms", SET, "400000")])]) == [("t", E.NONE, None)]
    clock.advance(300_000)                                           # log.retention.check.interval.ms
    broker.tick()
    # 330 s on, the segments are 530, 430 and 330 s old: the first two are past 400 s, the last is not.
    assert plog.log_start_offset == 2 and fetch_error(broker, 0) == E.OFFSET_OUT_OF_RANGE
    assert incremental(broker, 1, [(TOPIC, "t", [("retention.ms", DELETE, None),
                                                 ("retention.bytes", SET, "200")])]) == [("t", E.NONE, None)]
    produce(broker, b"a" * 100, timestamp=clock.now_ms())
    produce(broker, b"b" * 100, timestamp=clock.now_ms())
    clock.advance(300_000)
    # By size, as Kafka: the oldest segments go while what remains is still at least retention.bytes (a log in
    # memory applies it as it rolls, the next check finds nothing more to do).
    sizes = [seg.size for seg in plog.segments]
    assert plog.log_start_offset == 3 and sum(sizes) >= 200 and sum(sizes) - sizes[0] < 200
    broker.tick()
    assert plog.log_start_offset == 3
    assert described(broker, 4, TOPIC, "t", keys=["retention.bytes"])["retention.bytes"].value == "200"


# -- DescribeCluster ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", [0, 1, 2])
def test_describe_cluster(clock, version):
    broker = Cluster(clock=clock, brokers=3)
    broker.set_address(2, "127.0.0.2", 9093)
    broker.metadata.nodes[2].rack = "rack-b"
    broker.stop_node(3)
    body = {"include_cluster_authorized_operations": False}
    if version >= 2:
        body["include_fenced_brokers"] = True
    response = call(broker, "DescribeCluster", version, body)
    assert (response.error_code, response.error_message) == (E.NONE, None)
    assert response.cluster_id == broker.metadata.cluster_id and response.controller_id == 1
    fenced = [(3, "127.0.0.1", 9094, None, True)] if version >= 2 else []    # a stopped node, when asked for
    assert [(b.broker_id, b.host, b.port, b.rack, b.is_fenced) for b in response.brokers] == [
        (1, "127.0.0.1", 9092, None, False), (2, "127.0.0.2", 9093, "rack-b", False)] + fenced
    assert response.cluster_authorized_operations == -2147483648
    assert response.endpoint_type == 1
    body["include_cluster_authorized_operations"] = True
    # No authorizer: every cluster operation (CREATE ALTER DESCRIBE CLUSTER_ACTION DESCRIBE_CONFIGS ALTER_CONFIGS
    # IDEMPOTENT_WRITE).
    assert call(broker, "DescribeCluster", version, body).cluster_authorized_operations == 8096


@pytest.mark.parametrize("version", [1, 2])
def test_describe_cluster_endpoint_types(broker, version):
    controllers = call(broker, "DescribeCluster", version, {"endpoint_type": 2})
    assert controllers.error_code == MISMATCHED_ENDPOINT_TYPE and controllers.brokers == []
    assert controllers.error_message == ("The request was sent to an endpoint of type BROKER, but we wanted an "
                                         "endpoint of type CONTROLLER")
    unknown = call(broker, "DescribeCluster", version, {"endpoint_type": 3})
    assert (unknown.error_code, unknown.error_message) == (UNSUPPORTED_ENDPOINT_TYPE, "Unsupported endpoint type 3")


# -- DescribeTopicPartitions ----------------------------------------------------------------------------------------

def describe_partitions(broker, names=(), limit=2000, cursor=None):
    response = call(broker, "DescribeTopicPartitions", 0, {
        "topics": [{"name": n} for n in names], "response_partition_limit": limit,
        "cursor": {"topic_name": cursor[0], "partition_index": cursor[1]} if cursor else None})
    pages = [(t.name, t.error_code, [p.partition_index for p in t.partitions]) for t in response.topics]
    nxt = (response.next_cursor.topic_name, response.next_cursor.partition_index) if response.next_cursor else None
    return response, pages, nxt


def test_describe_topic_partitions_lists_every_topic_sorted(clock):
    broker = Cluster(clock=clock)
    for name, n in (("b", 3), ("a", 2), ("c", 1)):
        broker.metadata.create_topic(name, n, 1)
    response, pages, nxt = describe_partitions(broker)
    assert pages == [("a", E.NONE, [0, 1]), ("b", E.NONE, [0, 1, 2]), ("c", E.NONE, [0])] and nxt is None
    topic = response.topics[0]
    assert topic.topic_id == broker.metadata.topics["a"].topic_id and not topic.is_internal
    assert topic.topic_authorized_operations == 3576   # every topic operation, as with no authorizer
    p = topic.partitions[0]
    assert (p.error_code, p.leader_id, p.leader_epoch, p.replica_nodes, p.isr_nodes, p.offline_replicas) == \
        (E.NONE, 1, 0, [1], [1], [])
    assert p.eligible_leader_replicas == [] and p.last_known_elr == []


def test_describe_topic_partitions_pages_with_a_cursor(clock):
    broker = Cluster(clock=clock)
    for name, n in (("b", 3), ("a", 2), ("c", 1)):
        broker.metadata.create_topic(name, n, 1)
    _, pages, nxt = describe_partitions(broker, limit=2)
    assert (pages, nxt) == ([("a", E.NONE, [0, 1])], ("b", 0))      # full before b starts: b's partition 0
    _, pages, nxt = describe_partitions(broker, limit=2, cursor=nxt)
    assert (pages, nxt) == ([("b", E.NONE, [0, 1])], ("b", 2))
    _, pages, nxt = describe_partitions(broker, limit=2, cursor=nxt)
    assert (pages, nxt) == ([("b", E.NONE, [2]), ("c", E.NONE, [0])], None)
    _, pages, nxt = describe_partitions(broker, ["c", "a", "b"], limit=3)
    assert (pages, nxt) == ([("a", E.NONE, [0, 1]), ("b", E.NONE, [0])], ("b", 1))
    _, pages, nxt = describe_partitions(broker, ["c", "a", "b"], limit=3, cursor=("b", 1))
    assert (pages, nxt) == ([("b", E.NONE, [1, 2]), ("c", E.NONE, [0])], None)
    _, pages, nxt = describe_partitions(broker, limit=0)             # at least one partition per page
    assert (pages, nxt) == ([("a", E.NONE, [0])], ("a", 1))
    limited = Cluster({"max.request.partition.size.limit": 2}, clock=clock)
    limited.metadata.create_topic("a", 3, 1)
    _, pages, nxt = describe_partitions(limited, limit=100)
    assert (pages, nxt) == ([("a", E.NONE, [0, 1])], ("a", 2))


def test_describe_topic_partitions_errors(broker):
    _, pages, nxt = describe_partitions(broker, ["zz", "t", "bad name", "t"])
    assert pages == [("bad name", E.INVALID_TOPIC_EXCEPTION, []), ("t", E.NONE, [0, 1]),
                     ("zz", E.UNKNOWN_TOPIC_OR_PARTITION, [])]
    response, pages, nxt = describe_partitions(broker, ["t", "u"], cursor=("a", 0))
    assert pages == [("t", E.INVALID_REQUEST, []), ("u", E.INVALID_REQUEST, [])] and nxt is None
    _, pages, _ = describe_partitions(broker, ["t"], cursor=("t", -1))
    assert pages == [("t", E.INVALID_REQUEST, [])]
    _, pages, _ = describe_partitions(broker, ["t"], cursor=("t", 5))   # past the end: an empty page
    assert pages == [("t", E.NONE, [])]
