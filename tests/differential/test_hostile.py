"""Hostile but well-formed requests side by side: values a real client never sends (negative partition indexes,
writes to internal topics, 32,767-character names echoed into messages, a share-group call on a classic group,
deleting ``__consumer_offsets``). Kafka 4.3.1 answers each with an error code or carries on; so must kafkamock."""

from __future__ import annotations

import uuid

import pytest
from support.group_steps import coordinator_ready, join_body, topic_and_group

LONG = "x" * 32767
TS = 1_700_000_000_000
NO_ID = uuid.UUID(int=0)


def commit(run, group: str, topic: str, offset: int) -> None:
    """A standalone OffsetCommit (no generation, no member) of partition 0."""
    run.call("OffsetCommit", 9, {"group_id": group, "generation_id_or_member_epoch": -1, "member_id": "",
                                 "group_instance_id": None, "topics": [
                                     {"name": topic, "partitions": [{"partition_index": 0, "committed_offset": offset,
                                                                     "committed_leader_epoch": -1,
                                                                     "committed_metadata": ""}]}]}, see=False)


def _fetch_body(topic: str, partition: int, topic_id: uuid.UUID = NO_ID) -> dict:
    return {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "",
            "topics": [{"topic": topic, "topic_id": topic_id, "partitions": [{"partition": partition, "current_leader_epoch": -1,
                                                        "fetch_offset": 0, "last_fetched_epoch": -1,
                                                        "log_start_offset": -1, "partition_max_bytes": 1 << 20}]}]}


@pytest.mark.parametrize("partition", [-1, -2, -(2 ** 31), 1, 2 ** 31 - 1])
@pytest.mark.parametrize("version", [12, 17])
def test_fetch_a_partition_the_topic_lacks(differ, request, partition, version):
    """Partition -1 is not the last partition, nor -2 a crash: an error for each (by name and by topic id)."""
    def scenario(run):
        topic = run.name()
        run.create_topic(topic, 1)
        run.produce(topic, 0, [{"key": b"k", "value": b"v", "timestamp": TS}], see=False)
        topic_id = run.call("Metadata", 12, {"topics": [{"name": topic, "topic_id": NO_ID}],
                                             "allow_auto_topic_creation": False,
                                             "include_topic_authorized_operations": False},
                            see=False).topics[0].topic_id
        fetched = run.call("Fetch", version, _fetch_body(topic if version < 13 else "", partition,
                                                         topic_id if version >= 13 else NO_ID), see=False)
        p = fetched.responses[0].partitions[0]
        run.see("fetch", (p.partition_index, p.error_code, p.high_watermark, p.records))
        listed = run.call("ListOffsets", 7, {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": topic, "partitions": [{"partition_index": partition, "current_leader_epoch": -1,
                                            "timestamp": -1}]}]}, see=False)
        run.see("list offsets", listed.topics[0].partitions[0].error_code)
        produced = run.produce(topic, partition, [{"value": b"v", "timestamp": TS}], see=False)
        run.see("produce", produced.responses[0].partition_responses[0].error_code)

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("internal", ["__consumer_offsets", "__transaction_state"])
def test_produce_to_an_internal_topic_is_refused(differ, request, internal):
    def scenario(run):
        if internal == "__consumer_offsets":
            coordinator_ready(run, run.name("g"))
        else:
            run.call("FindCoordinator", 4, {"key_type": 1, "coordinator_keys": [run.name("tx")]}, see=False)
            run.until("__transaction_state", lambda: run.call("Metadata", 12, {
                "topics": [{"name": internal, "topic_id": NO_ID}], "allow_auto_topic_creation": False,
                "include_topic_authorized_operations": False}, see=False).topics[0].error_code == 0)
        run.produce(internal, 0, [{"key": b"junk", "value": b"junk", "timestamp": TS}], label="produce")

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("api", ["AlterShareGroupOffsets", "DeleteShareGroupOffsets", "DescribeShareGroupOffsets"])
def test_share_group_offset_apis_on_a_classic_group(differ, request, api):
    def scenario(run):
        topic, group = topic_and_group(run, 1)
        commit(run, group, topic, 3)
        if api == "AlterShareGroupOffsets":
            run.call(api, 0, {"group_id": group, "topics": [
                {"topic_name": topic, "partitions": [{"partition_index": 0, "start_offset": 0}]}]})
        elif api == "DeleteShareGroupOffsets":
            run.call(api, 0, {"group_id": group, "topics": [{"topic_name": topic}]})
        else:
            run.call(api, 1, {"groups": [{"group_id": group, "topics": None}]})
        run.see("classic group still there", run.call("DescribeGroups", 5, {
            "groups": [group], "include_authorized_operations": False}, see=False).groups[0].error_code)

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("case", ["create topic config name", "create topic name", "describe groups",
                                  "join group protocol type", "consumer heartbeat assignor", "share group member id",
                                  "describe configs broker name"])
def test_a_32767_character_string_echoed_back(differ, request, case):
    """A string at Kafka's 32767-byte limit that the broker quotes in an error message: the response cannot be
    serialized, and Kafka answers with the request's error response, UNKNOWN_SERVER_ERROR. (DescribeClientQuotas
    with such an entity type gets no answer at all from Kafka 4.3.1; kafkamock answers it the same way as the rest:
    tests/interop/python/test_hostile_requests.py.)"""
    def scenario(run):
        name = run.name()
        if case == "create topic config name":
            run.call("CreateTopics", 7, {"topics": [{"name": name, "num_partitions": 1, "replication_factor": 1,
                                                     "assignments": [], "configs": [{"name": LONG, "value": "1"}]}],
                                         "timeout_ms": 10000, "validate_only": False})
        elif case == "create topic name":
            run.call("CreateTopics", 7, {"topics": [{"name": LONG, "num_partitions": 1, "replication_factor": 1,
                                                     "assignments": [], "configs": []}],
                                         "timeout_ms": 10000, "validate_only": False})
        elif case == "describe groups":
            coordinator_ready(run, LONG)
            run.call("DescribeGroups", 5, {"groups": [LONG], "include_authorized_operations": False})
        elif case == "join group protocol type":
            group = run.name("g")
            coordinator_ready(run, group)
            run.call("JoinGroup", 9, join_body(group, "", protocol_type=LONG))
        elif case == "consumer heartbeat assignor":
            group = run.name("g")
            coordinator_ready(run, group)
            run.call("ConsumerGroupHeartbeat", 1, {
                "group_id": group, "member_id": "m" * 22, "member_epoch": 0, "instance_id": None, "rack_id": None,
                "rebalance_timeout_ms": 30000, "subscribed_topic_names": [name], "subscribed_topic_regex": None,
                "server_assignor": LONG, "topic_partitions": []})
        elif case == "share group member id":
            group = run.name("g")
            coordinator_ready(run, group)
            run.call("ShareGroupHeartbeat", 1, {"group_id": group, "member_id": LONG, "member_epoch": 5,
                                                "rack_id": None, "subscribed_topic_names": None})
        elif case == "describe configs broker name":
            run.call("DescribeConfigs", 4, {"resources": [{"resource_type": 4, "resource_name": LONG,
                                                           "configuration_keys": None}],
                                            "include_synonyms": False, "include_documentation": False})

    differ.check(request.node.name, scenario)


def test_deleting_consumer_offsets_takes_the_groups_offsets_with_it(differ, request):
    """DeleteTopics on ``__consumer_offsets`` (Kafka allows it): the committed offsets go with the log, in memory
    as on disk; the next FindCoordinator creates the topic again and the group starts with nothing."""
    def scenario(run):
        topic, group = topic_and_group(run, 1)
        commit(run, group, topic, 7)
        fetch = {"group_id": group, "topics": None, "require_stable": False}
        run.see("before", run.call("OffsetFetch", 7, fetch, see=False).topics[0].partitions[0].committed_offset)
        run.call("DeleteTopics", 6, {"topics": [{"name": "__consumer_offsets", "topic_id": NO_ID}],
                                     "timeout_ms": 10000})
        coordinator_ready(run, group)
        run.see("after", run.call("OffsetFetch", 7, fetch, see=False))

    differ.check(request.node.name, scenario, own="internal-topics")


def test_deleting_a_topic_deletes_its_committed_offsets(differ, request):
    """A topic deleted and created again under its name: the group's offsets for it are gone (Kafka's
    onPartitionsDeleted), not read back against the new topic."""
    def scenario(run):
        topic, group = topic_and_group(run, 1)
        commit(run, group, topic, 7)
        run.call("DeleteTopics", 6, {"topics": [{"name": topic, "topic_id": NO_ID}], "timeout_ms": 10000}, see=False)
        fetch = {"group_id": group, "topics": [{"name": topic, "partition_indexes": [0]}], "require_stable": False}
        run.until("the offsets gone", lambda: run.call("OffsetFetch", 7, fetch, see=False)
                  .topics[0].partitions[0].committed_offset == -1)
        run.create_topic(topic, 1)
        run.see("after", run.call("OffsetFetch", 7, fetch, see=False))

    differ.check(request.node.name, scenario)
