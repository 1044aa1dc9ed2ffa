"""Topics and the cluster: Metadata (every version), DescribeCluster, DescribeTopicPartitions, and the validation
of CreateTopics, DeleteTopics and CreatePartitions."""

from __future__ import annotations

import uuid

import pytest
from support.group_steps import share_state_ready

NO_ID = uuid.UUID(int=0)
INTERNAL_TOPICS = ("__consumer_offsets", "__transaction_state", "__share_group_state")


def _metadata_view(md, wanted: set[str] | None = None) -> dict:
    """A Metadata answer without the topics other scenarios made (the brokers are shared)."""
    topics = [t for t in md.topics if wanted is None or t.name in wanted]
    return {"brokers": md.brokers,
            "controller_id": md.get("controller_id"), "cluster_authorized_operations": md.get(
                "cluster_authorized_operations"),
            "topics": topics}


@pytest.mark.parametrize("version", range(0, 14))
def test_metadata_each_version(differ, request, version):
    def scenario(run):
        topic = run.name()
        run.create_topic(topic, 2)
        body = {"topics": [{"name": topic, "topic_id": NO_ID}]}
        if version >= 4:
            body["allow_auto_topic_creation"] = False
        if version >= 8:
            body["include_topic_authorized_operations"] = True
        if 8 <= version <= 10:
            body["include_cluster_authorized_operations"] = True
        md = run.call("Metadata", version, body, see=False)
        run.see("metadata", _metadata_view(md))
        if version >= 1:
            md = run.call("Metadata", version, {**body, "topics": []}, see=False)
            run.see("no topics", _metadata_view(md, set()))

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("case", ["unknown topic", "auto create", "auto create off by request", "invalid name",
                                  "by topic id", "unknown topic id", "all topics", "internal topic",
                                  "too long name", "name and id"])
def test_metadata_topics(differ, request, case):
    def scenario(run):
        topic = run.name()
        run.create_topic(topic)

        def md(topics, auto=False, version=12):
            return run.call("Metadata", version, {"topics": topics, "allow_auto_topic_creation": auto,
                                                  "include_topic_authorized_operations": False}, see=False)
        if case == "unknown topic":
            run.see("answer", md([{"name": run.name("missing"), "topic_id": NO_ID}]).topics)
        elif case == "auto create":
            name = run.name("auto")
            run.see("first", md([{"name": name, "topic_id": NO_ID}], auto=True).topics)
            run.see("then", run.until("the auto-created topic", lambda: [
                t for t in md([{"name": name, "topic_id": NO_ID}]).topics if t.error_code == 0 and all(
                    p.leader_id >= 0 for p in t.partitions) and t.partitions]))
        elif case == "auto create off by request":
            run.see("answer", md([{"name": run.name("noauto"), "topic_id": NO_ID}], auto=False).topics)
        elif case == "invalid name":
            run.see("answer", md([{"name": "bad/name", "topic_id": NO_ID}], auto=True).topics)
        elif case == "too long name":
            run.see("answer", md([{"name": "x" * 250, "topic_id": NO_ID}], auto=True).topics)
        elif case == "by topic id":
            tid = md([{"name": topic, "topic_id": NO_ID}]).topics[0].topic_id
            run.see("answer", md([{"name": None, "topic_id": tid}], version=12).topics)
        elif case == "unknown topic id":
            run.see("answer", md([{"name": None, "topic_id": uuid.uuid4()}], version=12).topics)
        elif case == "name and id":
            tid = md([{"name": topic, "topic_id": NO_ID}]).topics[0].topic_id
            run.see("answer", md([{"name": topic, "topic_id": tid}], version=12).topics)
        elif case == "all topics":
            share_state_ready(run)      # so that Kafka's listing has __share_group_state whatever ran before
            names = {t.name for t in md(None).topics}
            run.see("has the scenario's topic", topic in names)
            run.see("internal topics listed", sorted(n for n in names if n.startswith("__") and n != "__share_group_state"))
            run.see("__share_group_state listed", "__share_group_state" in names)
        elif case == "internal topic":
            # __consumer_offsets exists once a group used the coordinator.
            run.call("FindCoordinator", 4, {"key_type": 0, "coordinator_keys": [run.name("g")]}, see=False)
            run.until("__consumer_offsets", lambda: all(
                t.error_code == 0 for t in md([{"name": "__consumer_offsets", "topic_id": NO_ID}]).topics))
            t = md([{"name": "__consumer_offsets", "topic_id": NO_ID}]).topics[0]
            run.see("internal", [t.error_code, t.is_internal, len(t.partitions)])

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("version", [0, 1, 2])
def test_describe_cluster(differ, request, version):
    def scenario(run):
        body = {"include_cluster_authorized_operations": True}
        if version >= 1:
            body["endpoint_type"] = 1
        if version >= 2:
            body["include_fenced_brokers"] = True
        r = run.call("DescribeCluster", version, body, see=False)
        run.see("answer", {k: v for k, v in r.items()})

    differ.check(request.node.name, scenario)


def test_describe_cluster_controller_endpoint_type(differ, request):
    def scenario(run):
        r = run.call("DescribeCluster", 1, {"include_cluster_authorized_operations": False, "endpoint_type": 2},
                     see=False)
        run.see("error", [r.error_code, r.error_message])
        run.see("endpoint_type", r.endpoint_type)

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("case", ["one topic", "unknown topic", "cursor", "partition limit", "several topics",
                                  "invalid name"])
def test_describe_topic_partitions(differ, request, case):
    def scenario(run):
        a, b = run.name("a"), run.name("b")
        run.create_topic(a, 3)
        run.create_topic(b, 2)
        body = {"topics": [{"name": a}], "response_partition_limit": 2000, "cursor": None}
        if case == "unknown topic":
            body["topics"] = [{"name": run.name("missing")}]
        elif case == "invalid name":
            body["topics"] = [{"name": "bad/name"}]
        elif case == "cursor":
            body["cursor"] = {"topic_name": a, "partition_index": 1}
        elif case == "partition limit":
            body["topics"] = [{"name": a}, {"name": b}]
            body["response_partition_limit"] = 2
        elif case == "several topics":
            body["topics"] = [{"name": b}, {"name": a}]
        run.call("DescribeTopicPartitions", 0, body)

    differ.check(request.node.name, scenario)


def _create(run, topics: list[dict], *, version: int = 7, validate_only: bool = False, label: str = "CreateTopics"):
    base = {"num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}
    return run.call("CreateTopics", version, {"topics": [{**base, **t} for t in topics], "timeout_ms": 10000,
                                              "validate_only": validate_only}, label=label)


@pytest.mark.parametrize("case", [
    "name .", "name ..", "name too long", "bad characters", "empty name", "partitions 0", "partitions -2",
    "default partitions", "replication 0", "replication -1", "replication too big", "existing topic",
    "same name twice", "unknown config", "bad config value", "config null value", "validate only",
    "manual assignment", "assignment with partitions", "assignment to unknown broker", "assignment uneven",
    "assignment duplicate replica", "colliding name", "internal name", "internal topic", "compact and retention",
    "segment bytes too small", "two topics one bad", "2^31-1 partitions", "10,000 partitions across topics",
    "9,999 partitions and a config",
])
def test_create_topics_validation(differ, request, case):
    def scenario(run):
        name = run.name()
        topic = {
            "name .": {"name": "."}, "name ..": {"name": ".."}, "name too long": {"name": "x" * 250},
            "bad characters": {"name": "a b"}, "empty name": {"name": ""},
            "partitions 0": {"name": name, "num_partitions": 0}, "partitions -2": {"name": name, "num_partitions": -2},
            "default partitions": {"name": name, "num_partitions": -1, "replication_factor": -1},
            "replication 0": {"name": name, "replication_factor": 0},
            "replication -1": {"name": name, "replication_factor": -1},
            "replication too big": {"name": name, "replication_factor": 4},
            "unknown config": {"name": name, "configs": [{"name": "retention.msx", "value": "1"}]},
            "bad config value": {"name": name, "configs": [{"name": "cleanup.policy", "value": "sometimes"}]},
            "config null value": {"name": name, "configs": [{"name": "retention.ms", "value": None}]},
            "validate only": {"name": name, "num_partitions": 3},
            "manual assignment": {"name": name, "num_partitions": -1, "replication_factor": -1,
                                  "assignments": [{"partition_index": 0, "broker_ids": [1]},
                                                  {"partition_index": 1, "broker_ids": [1]}]},
            "assignment with partitions": {"name": name, "num_partitions": 2,
                                           "assignments": [{"partition_index": 0, "broker_ids": [1]}]},
            "assignment to unknown broker": {"name": name, "num_partitions": -1, "replication_factor": -1,
                                             "assignments": [{"partition_index": 0, "broker_ids": [9]}]},
            "assignment uneven": {"name": name, "num_partitions": -1, "replication_factor": -1,
                                  "assignments": [{"partition_index": 0, "broker_ids": [1]},
                                                  {"partition_index": 2, "broker_ids": [1]}]},
            "assignment duplicate replica": {"name": name, "num_partitions": -1, "replication_factor": -1,
                                             "assignments": [{"partition_index": 0, "broker_ids": [1, 1]}]},
            "internal name": {"name": "__consumer_offsets"},
            "internal topic": {"name": "__transaction_state", "num_partitions": 3},
            "compact and retention": {"name": name, "configs": [{"name": "cleanup.policy", "value": "compact,delete"},
                                                                {"name": "retention.ms", "value": "1000"}]},
            "segment bytes too small": {"name": name, "configs": [{"name": "segment.bytes", "value": "1000"}]},
        }
        if case == "existing topic":
            run.create_topic(name)
            _create(run, [{"name": name}])
        elif case == "same name twice":
            _create(run, [{"name": name}, {"name": name}])
        elif case == "colliding name":
            run.create_topic(name.replace("-", "_") + "_x.y")
            _create(run, [{"name": name.replace("-", "_") + "_x_y"}])
        elif case == "two topics one bad":
            _create(run, [{"name": name}, {"name": name + "-b", "num_partitions": 0}])
        elif case == "2^31-1 partitions":
            _create(run, [{"name": name, "num_partitions": 2 ** 31 - 1}])
        elif case == "10,000 partitions across topics":
            _create(run, [{"name": name, "num_partitions": 6000}, {"name": name + "-b", "num_partitions": 6000}])
        elif case == "9,999 partitions and a config":
            _create(run, [{"name": name, "num_partitions": 9999, "configs": [{"name": "retention.ms",
                                                                              "value": "1000"}]}])
        else:
            _create(run, [topic[case]], validate_only=case == "validate only")
        if case in ("validate only",):
            run.see("exists after", run.call("Metadata", 12, {"topics": [{"name": name, "topic_id": NO_ID}],
                                                               "allow_auto_topic_creation": False,
                                                               "include_topic_authorized_operations": False},
                                              see=False).topics[0].error_code)

    # Creating an internal topic by hand would change the coordinators of every other scenario: a pair of its own.
    differ.check(request.node.name, scenario, own="internal-topics" if case.startswith("internal") else None)


@pytest.mark.parametrize("version", range(2, 8))
def test_create_topics_each_version(differ, request, version):
    def scenario(run):
        name = run.name()
        _create(run, [{"name": name, "num_partitions": 2, "configs": [{"name": "retention.ms", "value": "5000"}]}],
                version=version)
        _create(run, [{"name": name}], version=version, label="again")

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("case", ["unknown topic", "by name", "by id", "unknown id", "twice in one request",
                                  "internal topic", "invalid name", "name and id both", "then create again"])
def test_delete_topics(differ, request, case):
    def scenario(run):
        name = run.name()
        run.create_topic(name, 2)
        tid = run.call("Metadata", 12, {"topics": [{"name": name, "topic_id": NO_ID}],
                                        "allow_auto_topic_creation": False,
                                        "include_topic_authorized_operations": False}, see=False).topics[0].topic_id
        topics = {
            "unknown topic": [{"name": run.name("missing"), "topic_id": NO_ID}],
            "by name": [{"name": name, "topic_id": NO_ID}], "by id": [{"name": None, "topic_id": tid}],
            "unknown id": [{"name": None, "topic_id": uuid.uuid4()}],
            "twice in one request": [{"name": name, "topic_id": NO_ID}, {"name": name, "topic_id": NO_ID}],
            "internal topic": [{"name": "__consumer_offsets", "topic_id": NO_ID}],
            "invalid name": [{"name": "bad/name", "topic_id": NO_ID}],
            "name and id both": [{"name": name, "topic_id": tid}],
            "then create again": [{"name": name, "topic_id": NO_ID}],
        }[case]
        if case == "internal topic":
            run.call("FindCoordinator", 4, {"key_type": 0, "coordinator_keys": [run.name("g")]}, see=False)
        run.call("DeleteTopics", 6, {"topics": topics, "timeout_ms": 10000})
        if case == "then create again":
            run.until("the topic gone", lambda: run.call("Metadata", 12, {
                "topics": [{"name": name, "topic_id": NO_ID}], "allow_auto_topic_creation": False,
                "include_topic_authorized_operations": False}, see=False).topics[0].error_code != 0)
            run.create_topic(name, 1, see=True)

    differ.check(request.node.name, scenario, own="internal-topics" if case == "internal topic" else None)


@pytest.mark.parametrize("version", [1, 4, 5])
def test_delete_topics_by_names_old_versions(differ, request, version):
    def scenario(run):
        name = run.name()
        run.create_topic(name)
        r = run.call("DeleteTopics", version, {"topic_names": [name, run.name("missing")], "timeout_ms": 10000},
                     see=False)            # Kafka answers in its map's order: compare by name
        run.see("responses", sorted(r.responses, key=lambda x: x.name))

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("case", ["increase", "same count", "decrease", "unknown topic", "with assignment",
                                  "assignment wrong size", "assignment unknown broker", "validate only",
                                  "twice in one request", "internal topic", "too many partitions"])
def test_create_partitions(differ, request, case):
    def scenario(run):
        name = run.name()
        run.create_topic(name, 2)
        count, assignments, validate, topics = 4, None, False, None
        if case == "same count":
            count = 2
        elif case == "decrease":
            count = 1
        elif case == "unknown topic":
            name = run.name("missing")
        elif case == "with assignment":
            assignments = [{"broker_ids": [1]}, {"broker_ids": [1]}]
        elif case == "assignment wrong size":
            assignments = [{"broker_ids": [1]}]
        elif case == "assignment unknown broker":
            assignments = [{"broker_ids": [7]}, {"broker_ids": [1]}]
        elif case == "validate only":
            validate = True
        elif case == "twice in one request":
            topics = [{"name": name, "count": 3, "assignments": None}] * 2
        elif case == "internal topic":
            run.call("FindCoordinator", 4, {"key_type": 0, "coordinator_keys": [run.name("g")]}, see=False)
            name = "__consumer_offsets"
            count = 60
        elif case == "too many partitions":     # beyond the controller's 10,000 records per operation
            count = 20_000
        run.call("CreatePartitions", 3, {"topics": topics or [{"name": name, "count": count,
                                                                "assignments": assignments}],
                                         "timeout_ms": 10000, "validate_only": validate})
        if case in ("increase", "with assignment", "validate only") and name == run.name():
            run.until("the partitions", lambda: len(run.call("Metadata", 12, {
                "topics": [{"name": name, "topic_id": NO_ID}], "allow_auto_topic_creation": False,
                "include_topic_authorized_operations": False}, see=False).topics[0].partitions) == (
                    2 if validate else count))
            run.wait_for_leaders(name, 2 if validate else count)

    # Kafka 4.3.1 commits the partitions it made before its record list overflowed (thousands of them, which its
    # broker then creates for a long while), so that case runs on a pair of its own too.
    differ.check(request.node.name, scenario, own={"internal topic": "internal-topics",
                                                   "too many partitions": "overflow"}.get(case))
