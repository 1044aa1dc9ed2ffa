"""The cluster-operations APIs in the broker core, without sockets: DescribeLogDirs, AlterReplicaLogDirs,
ElectLeaders, Alter/ListPartitionReassignments, DescribeQuorum, UpdateFeatures, UnregisterBroker,
ListConfigResources and Add/RemoveRaftVoter. Requests and responses go through the codec at real versions; the
expectations are Kafka 4.3.1's answers (tests/differential/test_cluster_apis.py compares them side by side)."""

from __future__ import annotations

import uuid

import pytest
from support.broker_calls import call

from kafkamock import records
from kafkamock.broker import Cluster
from kafkamock.broker.errors import ErrorCode as E
from kafkamock.storage import DiskStorage

ZERO = uuid.UUID(int=0)
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
PREFERRED, UNCLEAN = 0, 1
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3
NOT_NEEDED = "Leader election not needed for topic partition."


@pytest.fixture
def three(clock):
    """Three nodes (ids 1-3); topic "r" with partitions led by 1, 2 and 3."""
    b = Cluster(clock=clock, brokers=3)
    b.metadata.create_topic("r", -1, -1, assignments=[[1, 2], [2, 3], [3, 1]])
    return b


def produce(broker, topic, partition, *values, node_id=None):
    data = records.encode_batch([{"key": None, "value": v} for v in values])
    r = call(broker, "Produce", 11, {"acks": -1, "timeout_ms": 1000, "topic_data": [
        {"name": topic, "partition_data": [{"index": partition, "records": data}]}]}, node_id=node_id)
    assert r.responses[0].partition_responses[0].error_code == E.NONE


def state(broker, topic="r"):
    return [(p.leader_id, p.leader_epoch, list(p.replicas), list(p.isr)) for p in broker.metadata.topics[topic].partitions]


def metadata(broker, topic="r"):
    md = call(broker, "Metadata", 12, {"topics": [{"name": topic, "topic_id": ZERO}], "allow_auto_topic_creation": False,
                                       "include_topic_authorized_operations": False})
    return [(p.leader_id, p.leader_epoch, list(p.replica_nodes), list(p.isr_nodes)) for p in md.topics[0].partitions]


# -- DescribeLogDirs --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", [1, 2, 3, 4, 5])
def test_describe_log_dirs_reports_the_nodes_replicas_with_their_sizes(three, version):
    produce(three, "r", 0, b"a" * 10, b"b", node_id=1)
    answer = call(three, "DescribeLogDirs", version, {"topics": None}, node_id=1)
    assert answer.error_code == E.NONE
    (result,) = answer.results
    assert (result.error_code, result.log_dir) == (E.NONE, "/tmp/kafka-logs")
    partitions = {(t.name, p.partition_index): (p.partition_size, p.offset_lag, p.is_future_key)
                  for t in result.topics for p in t.partitions}
    size = three.metadata.topics["r"].partitions[0].log.size_bytes
    assert size > 0
    # node 1 holds r-0 (leader) and r-2 (follower)
    assert partitions == {("r", 0): (size, 0, False), ("r", 2): (0, 0, False)}
    if version >= 4:       # the volume /tmp/kafka-logs would be on (the logs themselves are in memory)
        assert result.total_bytes > 0 and 0 <= result.usable_bytes <= result.total_bytes
    else:
        assert (result.total_bytes, result.usable_bytes) == (-1, -1)


def test_describe_log_dirs_named_partitions_and_unknown_ones(three):
    answer = call(three, "DescribeLogDirs", 4, {"topics": [{"topic": "r", "partitions": [1, 9]},
                                                          {"topic": "nope", "partitions": [0]}]}, node_id=2)
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in answer.results[0].topics] == [("r", [1])]
    answer = call(three, "DescribeLogDirs", 4, {"topics": [{"topic": "r", "partitions": [2]}]}, node_id=2)
    assert answer.results[0].topics == []


def test_describe_log_dirs_on_disk_reports_the_directory_and_its_volume(tmp_path, clock):
    broker = Cluster({"log.dirs": str(tmp_path)}, clock=clock, storage=DiskStorage(tmp_path))
    broker.metadata.create_topic("t", 1, 1)
    (result,) = call(broker, "DescribeLogDirs", 4, {"topics": None}).results
    assert result.log_dir == str(tmp_path)
    assert result.total_bytes > 0 and 0 <= result.usable_bytes <= result.total_bytes
    assert call(broker, "AlterReplicaLogDirs", 2, {"dirs": [{"path": str(tmp_path), "topics": [
        {"name": "t", "partitions": [0]}]}]}).results[0].partitions[0].error_code == E.NONE


def test_describe_log_dirs_needs_describe_on_the_cluster(clock):
    broker = Cluster({"authorizer.class.name": AUTHORIZER}, clock=clock)
    answer = call(broker, "DescribeLogDirs", 4, {"topics": None}, principal="User:alice")
    assert (answer.error_code, answer.results) == (E.CLUSTER_AUTHORIZATION_FAILED, [])


# -- AlterReplicaLogDirs ----------------------------------------------------------------------------------------

def test_alter_replica_log_dirs_checks_each_partition(three):
    answer = call(three, "AlterReplicaLogDirs", 2, {"dirs": [
        {"path": "/tmp/kafka-logs", "topics": [{"name": "r", "partitions": [0, 1, 7]}, {"name": "nope", "partitions": [0]},
                                               {"name": "x" * 230, "partitions": [0]}]},
        {"path": "/elsewhere", "topics": [{"name": "r", "partitions": [2]}]},
        {"path": "relative", "topics": [{"name": "r", "partitions": [3]}]}]}, node_id=1)
    got = {(t.topic_name, p.partition_index): p.error_code for t in answer.results for p in t.partitions}
    assert got == {("r", 0): E.NONE, ("r", 1): E.REPLICA_NOT_AVAILABLE, ("r", 7): E.UNKNOWN_TOPIC_OR_PARTITION,
                   ("nope", 0): E.UNKNOWN_TOPIC_OR_PARTITION, ("x" * 230, 0): E.INVALID_TOPIC_EXCEPTION,
                   ("r", 2): E.LOG_DIR_NOT_FOUND, ("r", 3): E.LOG_DIR_NOT_FOUND}
    assert state(three)[0] == (1, 0, [1, 2], [1, 2])      # nothing moved


def test_alter_replica_log_dirs_orders_like_kafka_and_last_dir_wins(three):
    # Kafka 4.3.1's own answer to this request (topics by a Scala immutable HashMap, partitions by a Java HashMap)
    three.metadata.create_topic("ld1", 8, 1)
    three.metadata.create_topic("ld2", 1, 1)
    answer = call(three, "AlterReplicaLogDirs", 2, {"dirs": [
        {"path": "/tmp/kafka-logs", "topics": [{"name": "ld1", "partitions": [0, 1, 7]}, {"name": "ld2", "partitions": [0]},
                                               {"name": "nope", "partitions": [0]}, {"name": "x" * 230, "partitions": [0]}]},
        {"path": "/nope", "topics": [{"name": "ld1", "partitions": [3]}]},
        {"path": "rel/dir", "topics": [{"name": "ld1", "partitions": [4]}]}]})
    assert [(t.topic_name[:4], [p.partition_index for p in t.partitions]) for t in answer.results] == [
        ("ld2", [0]), ("ld1", [7, 3, 4, 1, 0]), ("nope", [0]), ("xxxx", [0])]


def test_alter_replica_log_dirs_needs_alter_on_the_cluster(clock):
    broker = Cluster({"authorizer.class.name": AUTHORIZER}, clock=clock)
    answer = call(broker, "AlterReplicaLogDirs", 1, {"dirs": [{"path": "/tmp/kafka-logs", "topics": [
        {"name": "t", "partitions": [0, 1]}]}]}, principal="User:alice")
    assert [(p.partition_index, p.error_code) for p in answer.results[0].partitions] == [
        (0, E.CLUSTER_AUTHORIZATION_FAILED), (1, E.CLUSTER_AUTHORIZATION_FAILED)]


# -- ElectLeaders -----------------------------------------------------------------------------------------------

def elect(broker, version, topics, election_type=PREFERRED, node_id=None):
    body = {"topic_partitions": topics, "timeout_ms": 1000}
    if version >= 1:
        body["election_type"] = election_type
    return call(broker, "ElectLeaders", version, body, node_id=node_id)


def results(answer):
    return [(r.topic, p.partition_id, p.error_code, p.error_message)
            for r in answer.replica_election_results for p in r.partition_result]


@pytest.mark.parametrize("version", [0, 1, 2])
def test_elect_preferred_leader_not_needed_and_unknown(three, version):
    answer = elect(three, version, [{"topic": "r", "partitions": [0, 5]}, {"topic": "nope", "partitions": [0]}])
    assert results(answer) == [("r", 0, E.ELECTION_NOT_NEEDED, NOT_NEEDED),
                               ("r", 5, E.UNKNOWN_TOPIC_OR_PARTITION, "No such partition as r-5"),
                               ("nope", 0, E.UNKNOWN_TOPIC_OR_PARTITION, "No such topic as nope")]


def test_elect_preferred_leader_moves_leadership_back(three):
    three.move_leader("r", 0, 2)
    assert state(three)[0] == (2, 1, [1, 2], [1, 2])
    answer = elect(three, 2, [{"topic": "r", "partitions": [0]}])
    assert results(answer) == [("r", 0, E.NONE, None)]
    assert state(three)[0] == (1, 2, [1, 2], [1, 2])
    assert metadata(three)[0] == (1, 2, [1, 2], [1, 2])


def test_elect_a_partition_twice_elects_it_twice_as_kafka_does(three):
    three.move_leader("r", 0, 2)
    answer = elect(three, 2, [{"topic": "r", "partitions": [0, 0]}])
    assert results(answer) == [("r", 0, E.NONE, None), ("r", 0, E.NONE, None)]
    assert state(three)[0][:2] == (1, 3)


def test_elect_preferred_replica_down_is_not_available(three):
    three.move_leader("r", 0, 2)
    three.stop_node(1)
    answer = elect(three, 2, [{"topic": "r", "partitions": [0]}], node_id=2)
    assert results(answer) == [("r", 0, E.PREFERRED_LEADER_NOT_AVAILABLE, "The preferred leader was not available.")]


def test_elect_all_partitions_lists_only_those_elected(three):
    three.metadata.create_topic("s", 1, 1)
    three.move_leader("r", 1, 3)
    answer = elect(three, 2, None)
    assert [(r.topic, [(p.partition_id, p.error_code) for p in r.partition_result])
            for r in answer.replica_election_results] == [("r", [(1, E.NONE)]), ("s", [])]
    assert state(three)[1][0] == 2


def test_elect_unclean(three):
    answer = elect(three, 2, [{"topic": "r", "partitions": [0]}], UNCLEAN)
    assert results(answer) == [("r", 0, E.ELECTION_NOT_NEEDED, NOT_NEEDED)]
    three.stop_node(1)
    three.stop_node(2)                      # r-0 (replicas 1, 2) has no leader left
    assert state(three)[0][0] == -1
    answer = elect(three, 2, [{"topic": "r", "partitions": [0]}], UNCLEAN, node_id=3)
    assert results(answer) == [("r", 0, E.ELIGIBLE_LEADERS_NOT_AVAILABLE,
                                "Eligible topic partition leaders are not available.")]


def test_elect_unknown_election_type_and_empty_list(three):
    answer = elect(three, 2, [{"topic": "r", "partitions": [0]}], 2)
    assert answer.error_code == E.INVALID_REQUEST
    assert results(answer) == [("r", 0, E.INVALID_REQUEST, "Unknown election type 2")]
    answer = elect(three, 2, [], 2)
    assert (answer.error_code, answer.replica_election_results) == (E.NONE, [])


def test_elect_needs_alter_on_the_cluster(clock):
    broker = Cluster({"authorizer.class.name": AUTHORIZER}, clock=clock)
    answer = call(broker, "ElectLeaders", 2, {"election_type": 0, "topic_partitions": [
        {"topic": "t", "partitions": [0]}], "timeout_ms": 1000}, principal="User:alice")
    assert answer.error_code == E.CLUSTER_AUTHORIZATION_FAILED
    assert results(answer)[0][2] == E.CLUSTER_AUTHORIZATION_FAILED


# -- AlterPartitionReassignments / ListPartitionReassignments ------------------------------------------------------

def reassign(broker, parts, topic="r", version=0, allow=True, node_id=None):
    body = {"timeout_ms": 1000, "topics": [{"name": topic, "partitions": [
        {"partition_index": i, "replicas": r} for i, r in parts]}]}
    if version >= 1:
        body["allow_replication_factor_change"] = allow
    answer = call(broker, "AlterPartitionReassignments", version, body, node_id=node_id)
    return [(p.partition_index, p.error_code, p.error_message) for t in answer.responses for p in t.partitions]


def ongoing(broker, topics=None, node_id=None):
    answer = call(broker, "ListPartitionReassignments", 0, {"timeout_ms": 1000, "topics": topics}, node_id=node_id)
    return [(t.name, p.partition_index, list(p.replicas), list(p.adding_replicas), list(p.removing_replicas))
            for t in answer.topics for p in t.partitions]


def test_reassignments_complete_at_once_as_kafka_ends_them(three):
    # reorder (leader stays, no epoch bump); shrink away the leader (new leader, bump); grow; replace
    three.metadata.create_topic("g", -1, -1, assignments=[[3], [2]])
    assert reassign(three, [(0, [2, 1]), (1, [3])]) == [(0, E.NONE, None), (1, E.NONE, None)]
    assert reassign(three, [(0, [3, 2, 1]), (1, [1, 3])], topic="g") == [(0, E.NONE, None), (1, E.NONE, None)]
    assert state(three)[:2] == [(1, 0, [2, 1], [1, 2]), (3, 1, [3], [3])]
    assert state(three, "g") == [(3, 0, [3, 2, 1], [1, 2, 3]), (1, 1, [1, 3], [1, 3])]
    assert metadata(three, "g") == state(three, "g")
    assert ongoing(three) == []


def test_reassignment_to_a_stopped_node_stays_in_progress_until_it_starts(three):
    three.stop_node(3)
    assert reassign(three, [(0, [3, 1])]) == [(0, E.NONE, None)]
    assert state(three)[0] == (1, 0, [3, 1, 2], [1, 2])
    assert ongoing(three) == [("r", 0, [3, 1, 2], [3], [2])]
    assert ongoing(three, [{"name": "r", "partition_indexes": [1, 0, 9]}, {"name": "nope", "partition_indexes": [0]}]) \
        == [("r", 0, [3, 1, 2], [3], [2])]
    assert reassign(three, [(0, [1, 2, 3])], version=1, allow=False) == [
        (0, E.INVALID_REPLICATION_FACTOR, "The replication factor is changed from 2 to 3")]
    three.start_node(3)
    assert ongoing(three) == []
    assert state(three)[0] == (1, 1, [3, 1], [1, 3])


def test_cancelling_a_reassignment_reverts_it(three):
    assert reassign(three, [(0, None)]) == [(0, E.NO_REASSIGNMENT_IN_PROGRESS, None)]
    three.stop_node(3)
    reassign(three, [(0, [3, 1])])
    assert reassign(three, [(0, None)]) == [(0, E.NONE, None)]
    assert state(three)[0] == (1, 1, [1, 2], [1, 2])
    assert ongoing(three) == []


def test_reassignment_validation(three):
    assert reassign(three, [(0, []), (0, [1, 1]), (0, [1, 9]), (5, [1]), (-1, [1])]) == [
        (0, E.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes an empty replica list."),
        (0, E.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes the broker 1 more than once."),
        (0, E.INVALID_REPLICA_ASSIGNMENT,
         "The manual partition assignment includes broker 9, but no such broker is registered."),
        (5, E.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition r:5."),
        (-1, E.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition r:-1.")]
    assert reassign(three, [(0, [1])], topic="nope") == [
        (0, E.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find a topic named nope.")]
    assert reassign(three, [(0, [1])], version=1, allow=False) == [
        (0, E.INVALID_REPLICATION_FACTOR, "The replication factor is changed from 2 to 1")]
    assert reassign(three, [(0, [2, 1])], version=1, allow=False) == [(0, E.NONE, None)]


def test_reassignment_empty_request(three):
    answer = call(three, "AlterPartitionReassignments", 1, {"timeout_ms": 1000, "topics": [],
                                                             "allow_replication_factor_change": False})
    assert (answer.error_code, answer.error_message, answer.allow_replication_factor_change, answer.responses) == (
        E.NONE, "", True, [])


def test_reassignment_state_survives_a_restart(tmp_path, clock):
    broker = Cluster({"log.dirs": str(tmp_path)}, clock=clock, brokers=3, storage=DiskStorage(tmp_path))
    broker.metadata.create_topic("r", -1, -1, assignments=[[1, 2]])
    broker.stop_node(3)
    reassign(broker, [(0, [3, 1])])
    broker.close()
    again = Cluster({"log.dirs": str(tmp_path)}, clock=clock, brokers=3, storage=DiskStorage(tmp_path))
    p = again.metadata.topics["r"].partitions[0]
    assert (p.replicas, p.adding, p.removing) == ([3, 1, 2], [3], [2])


# -- DescribeQuorum ---------------------------------------------------------------------------------------------

METADATA = [{"topic_name": "__cluster_metadata", "partitions": [{"partition_index": 0}]}]


@pytest.mark.parametrize("version", [0, 1, 2])
def test_describe_quorum_every_node_a_voter(three, clock, version):
    answer = call(three, "DescribeQuorum", version, {"topics": METADATA}, node_id=2)
    (p,) = answer.topics[0].partitions
    assert (answer.error_code, p.error_code, p.leader_id, p.leader_epoch) == (E.NONE, E.NONE, 1, 1)
    assert [v.replica_id for v in p.current_voters] == [1, 2, 3] and p.observers == []
    assert all(v.log_end_offset == p.high_watermark > 0 for v in p.current_voters)
    if version >= 1:
        assert {v.last_fetch_timestamp for v in p.current_voters} == {clock.now_ms()}
    if version >= 2:
        assert [(n.node_id, n.listeners) for n in answer.nodes] == [(1, []), (2, []), (3, []) ]


def test_describe_quorum_follows_the_controller(three):
    before = call(three, "DescribeQuorum", 2, {"topics": METADATA}).topics[0].partitions[0]
    three.stop_node(1)
    p = call(three, "DescribeQuorum", 2, {"topics": METADATA}, node_id=2).topics[0].partitions[0]
    assert (p.leader_id, p.leader_epoch) == (2, 2)
    stopped = {v.replica_id: v.log_end_offset for v in p.current_voters}
    assert stopped[1] <= p.high_watermark and stopped[1] >= before.high_watermark


def test_describe_quorum_other_partitions_are_unknown(three):
    answer = call(three, "DescribeQuorum", 2, {"topics": [
        {"topic_name": "__cluster_metadata", "partitions": [{"partition_index": 1}, {"partition_index": 0}]}]})
    assert [(p.partition_index, p.error_code, p.error_message) for p in answer.topics[0].partitions] == [
        (1, E.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition."),
        (0, E.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition.")]
    assert call(three, "DescribeQuorum", 2, {"topics": []}).topics == []


# -- UpdateFeatures ---------------------------------------------------------------------------------------------

def update(broker, version, *updates, validate_only=False):
    body = {"timeout_ms": 1000, "feature_updates": [
        {"feature": f, "max_version_level": level, **({"upgrade_type": t} if version >= 1 else {})}
        for f, level, t in updates]}
    if version >= 1:
        body["validate_only"] = validate_only
    return call(broker, "UpdateFeatures", version, body)


def finalized(broker):
    r = call(broker, "ApiVersions", 4, {"client_software_name": "t", "client_software_version": "1"})
    return {f.name: f.max_version_level for f in r.finalized_features}, r.finalized_features_epoch


FAILED = "The update failed for all features since the following feature had an error: "


@pytest.mark.parametrize(("updates", "message"), [
    ([("foo.version", 1, UPGRADE)], "Invalid update version 1 for feature foo.version. Local controller 1 does not "
                                    "support this feature."),
    ([("foo.version", 0, UPGRADE)], "Invalid update version 0 for feature foo.version. Feature foo.version not found."),
    ([("transaction.version", 3, UPGRADE)], "Invalid update version 3 for feature transaction.version. Local "
                                             "controller 1 only supports versions 0-2"),
    ([("transaction.version", 1, UPGRADE)], "Invalid update version 1 for feature transaction.version. Can't "
                                             "downgrade the version of this feature without setting the upgrade type "
                                             "to either safe or unsafe downgrade."),
    ([("transaction.version", -1, SAFE_DOWNGRADE)], "Invalid update version -1 for feature transaction.version. A "
                                                     "feature version cannot be less than 0."),
    ([("transaction.version", 1, 5)], "Invalid update version 1 for feature transaction.version. The controller does "
                                      "not support the given upgrade type."),
    ([("metadata.version", 29, SAFE_DOWNGRADE)], "Unsupported metadata.version downgrade from 30 to 29. Refusing to "
                                                 "perform the requested downgrade because it might delete metadata "
                                                 "information."),
    ([("metadata.version", 29, UNSAFE_DOWNGRADE)], "Unsupported metadata.version downgrade from 30 to 29. Unsafe "
                                                   "metadata downgrade is not supported in this version."),
    ([("kraft.version", 1, UPGRADE)], "Invalid upgrade of kraft.version to KRAFT_VERSION_1 because not all of the "
                                      "voters support it"),
    ([("transaction.version", 2, UPGRADE), ("group.version", 5, UPGRADE)],
     "Invalid update version 5 for feature group.version. Local controller 1 only supports versions 0-1"),
])
def test_update_features_refusals(broker, updates, message):
    before = finalized(broker)
    answer = update(broker, 1, *updates, validate_only=True)
    assert (answer.error_code, answer.error_message, answer.results) == (E.INVALID_UPDATE_VERSION, FAILED + message, [])
    assert finalized(broker) == before


def test_update_features_takes_effect(broker):
    levels, epoch = finalized(broker)
    assert levels["transaction.version"] == 2 and epoch == 1
    answer = update(broker, 1, ("transaction.version", 1, SAFE_DOWNGRADE), ("group.version", 1, UPGRADE),
                    validate_only=True)
    assert [(r.feature, r.error_code, r.error_message) for r in answer.results] == [
        ("transaction.version", E.NONE, "NONE"), ("group.version", E.NONE, "NONE")]
    assert finalized(broker) == (levels, epoch)
    answer = update(broker, 2, ("transaction.version", 1, SAFE_DOWNGRADE), ("share.version", 0, SAFE_DOWNGRADE))
    assert (answer.error_code, answer.error_message, answer.results) == (E.NONE, None, [])
    now, new_epoch = finalized(broker)
    assert now["transaction.version"] == 1 and "share.version" not in now and new_epoch > epoch
    assert broker.features.level("transaction.version") == 1
    # share groups are off at share.version 0 (Kafka answers UNSUPPORTED_VERSION)
    hb = call(broker, "ShareGroupHeartbeat", 1, {"group_id": "g", "member_id": uuid.uuid4().hex, "member_epoch": 0,
                                                 "rack_id": None, "subscribed_topic_names": ["t"]})
    assert hb.error_code == E.UNSUPPORTED_VERSION
    update(broker, 2, ("share.version", 1, UPGRADE), ("group.version", 0, SAFE_DOWNGRADE))
    cg = call(broker, "ConsumerGroupHeartbeat", 0, {
        "group_id": "g", "member_id": "", "member_epoch": 0, "instance_id": None, "rack_id": None,
        "rebalance_timeout_ms": 1000, "subscribed_topic_names": ["t"], "server_assignor": None,
        "topic_partitions": []})
    assert cg.error_code == E.UNSUPPORTED_VERSION


def test_update_features_v0_downgrade_is_refused_as_an_upgrade(broker):
    body = {"timeout_ms": 1000, "feature_updates": [
        {"feature": "transaction.version", "max_version_level": 1, "allow_downgrade": True}]}
    answer = call(broker, "UpdateFeatures", 0, body)
    assert answer.error_code == E.INVALID_UPDATE_VERSION
    assert "without setting the upgrade type" in answer.error_message


def test_update_features_kraft_version_unchanged_is_fine(broker):
    assert update(broker, 2, ("kraft.version", 0, UPGRADE)).error_code == E.NONE
    assert update(broker, 2, ("kraft.version", 0, SAFE_DOWNGRADE)).error_code == E.NONE


def test_updated_features_survive_a_restart(tmp_path, clock):
    broker = Cluster({"log.dirs": str(tmp_path)}, clock=clock, storage=DiskStorage(tmp_path))
    update(broker, 2, ("transaction.version", 1, SAFE_DOWNGRADE))
    broker.close()
    again = Cluster({"log.dirs": str(tmp_path)}, clock=clock, storage=DiskStorage(tmp_path))
    assert finalized(again)[0]["transaction.version"] == 1


# -- UnregisterBroker -------------------------------------------------------------------------------------------

def test_unregister_broker(three):
    answer = call(three, "UnregisterBroker", 0, {"broker_id": 7})
    assert (answer.error_code, answer.error_message) == (E.BROKER_ID_NOT_REGISTERED,
                                                         "Broker ID 7 is not currently registered")
    three.stop_node(3)
    assert call(three, "UnregisterBroker", 0, {"broker_id": 3}).error_code == E.NONE
    assert call(three, "UnregisterBroker", 0, {"broker_id": 3}).error_code == E.BROKER_ID_NOT_REGISTERED
    described = call(three, "DescribeCluster", 2, {"include_cluster_authorized_operations": False, "endpoint_type": 1,
                                                    "include_fenced_brokers": True})
    assert [b.broker_id for b in described.brokers] == [1, 2]
    assert reassign(three, [(0, [3])]) == [
        (0, E.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes broker 3, but no such broker is "
                                          "registered.")]
    three.start_node(3)                       # a restart registers it again
    assert call(three, "UnregisterBroker", 0, {"broker_id": 3}).error_code == E.NONE


def test_unregistering_a_running_node_drops_its_leaderships(three):
    assert call(three, "UnregisterBroker", 0, {"broker_id": 1}).error_code == E.NONE
    assert state(three)[0] == (2, 1, [1, 2], [2])
    md = call(three, "Metadata", 12, {"topics": [], "allow_auto_topic_creation": False,
                                      "include_topic_authorized_operations": False})
    assert [b.node_id for b in md.brokers] == [2, 3]
    three.control.start_node(1)
    assert [n["up"] for n in three.control.nodes()] == [True, True, True]
    assert call(three, "UnregisterBroker", 0, {"broker_id": 1}).error_code == E.NONE


# -- ListConfigResources ----------------------------------------------------------------------------------------

def test_list_config_resources(three):
    call(three, "IncrementalAlterConfigs", 1, {"resources": [{"resource_type": 32, "resource_name": "g", "configs": [
        {"name": "consumer.session.timeout.ms", "config_operation": 0, "value": "50000"}]}], "validate_only": False})
    listed = call(three, "ListConfigResources", 1, {"resource_types": []}).config_resources
    assert [(r.resource_name, r.resource_type) for r in listed] == [
        ("g", 32), ("1", 8), ("2", 8), ("3", 8), ("1", 4), ("2", 4), ("3", 4), ("r", 2)]
    listed = call(three, "ListConfigResources", 1, {"resource_types": [2, 2]}).config_resources
    assert [(r.resource_name, r.resource_type) for r in listed] == [("r", 2)]
    assert call(three, "ListConfigResources", 0, {}).config_resources == []
    answer = call(three, "ListConfigResources", 1, {"resource_types": [1]})
    assert (answer.error_code, answer.config_resources) == (E.UNSUPPORTED_VERSION, [])


# -- AddRaftVoter / RemoveRaftVoter -----------------------------------------------------------------------------

def add_voter(broker, voter_id=5, directory_id=None, listeners=(("CONTROLLER", "127.0.0.1", 9999),), cluster_id=None):
    return call(broker, "AddRaftVoter", 1, {
        "cluster_id": cluster_id, "timeout_ms": 1000, "voter_id": voter_id,
        "voter_directory_id": directory_id or uuid.uuid4(), "ack_when_committed": True,
        "listeners": [{"name": n, "host": h, "port": p} for n, h, p in listeners]})


def test_raft_voters_cannot_change_in_a_static_quorum(broker):
    answer = add_voter(broker)
    assert (answer.error_code, answer.error_message) == (
        E.UNSUPPORTED_VERSION, "Cluster doesn't support adding voter because the kraft.version feature is 0")
    assert add_voter(broker, voter_id=-1).error_message == "Add voter request didn't include a valid voter"
    assert add_voter(broker, directory_id=ZERO).error_code == E.INVALID_REQUEST
    answer = add_voter(broker, cluster_id="bogus")
    assert (answer.error_code, answer.error_message) == (
        E.INCONSISTENT_CLUSTER_ID, f'The given id "bogus" doesn\'t match the cluster id "{broker.metadata.cluster_id}"')
    assert add_voter(broker, listeners=(("foo", "localhost", 9999),)).error_message == (
        "Add voter request didn't include the endpoint (Endpoints(endpoints={ListenerName(FOO)=localhost/<unresolved>:"
        "9999})) for the default listener ListenerName(CONTROLLER)")
    assert add_voter(broker, listeners=(("foo", "localhost", 9999), ("BAR", "10.0.0.1", 1), ("baz", "h", 2))
                     ).error_message == (
        "Add voter request didn't include the endpoint (Endpoints(endpoints={ListenerName(FOO)=localhost/<unresolved>:"
        "9999, ListenerName(BAR)=10.0.0.1/<unresolved>:1, ListenerName(BAZ)=h/<unresolved>:2})) for the default "
        "listener ListenerName(CONTROLLER)")
    assert add_voter(broker, listeners=(("controller", "h", 1),)).error_code == E.UNSUPPORTED_VERSION
    remove = call(broker, "RemoveRaftVoter", 0, {"cluster_id": None, "voter_id": 1, "voter_directory_id": uuid.uuid4()})
    assert (remove.error_code, remove.error_message) == (
        E.UNSUPPORTED_VERSION, "Cluster doesn't support removing voter because the kraft.version feature is 0")
    remove = call(broker, "RemoveRaftVoter", 0, {"cluster_id": None, "voter_id": 1, "voter_directory_id": ZERO})
    assert (remove.error_code, remove.error_message) == (E.INVALID_REQUEST,
                                                         "Remove voter request didn't include a valid voter")


def test_cluster_apis_need_cluster_permissions(clock):
    broker = Cluster({"authorizer.class.name": AUTHORIZER}, clock=clock)
    alice = "User:alice"
    assert call(broker, "UnregisterBroker", 0, {"broker_id": 1}, principal=alice).error_code == \
        E.CLUSTER_AUTHORIZATION_FAILED
    answer = call(broker, "DescribeQuorum", 2, {"topics": METADATA}, principal=alice)
    assert (answer.error_code, answer.error_message) == (E.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.")
    assert call(broker, "RemoveRaftVoter", 0, {"cluster_id": None, "voter_id": 1, "voter_directory_id": ZERO},
                principal=alice).error_code == E.CLUSTER_AUTHORIZATION_FAILED
    assert call(broker, "ListConfigResources", 1, {"resource_types": []}, principal=alice).error_code == \
        E.CLUSTER_AUTHORIZATION_FAILED
    assert call(broker, "ListPartitionReassignments", 0, {"timeout_ms": 1, "topics": None}, principal=alice
                ).error_code == E.CLUSTER_AUTHORIZATION_FAILED
    answer = call(broker, "UpdateFeatures", 1, {"timeout_ms": 1, "feature_updates": [], "validate_only": True},
                  principal=alice)
    assert answer.error_code == E.CLUSTER_AUTHORIZATION_FAILED


def test_a_leaderless_partition_is_reassigned_once_it_has_a_leader_again(three):
    three.metadata.create_topic("lonely", -1, -1, assignments=[[1]])
    three.stop_node(1)
    assert reassign(three, [(0, [2])], topic="lonely", node_id=2) == [(0, E.NONE, None)]
    assert ongoing(three, [{"name": "lonely", "partition_indexes": [0]}], node_id=2) == [
        ("lonely", 0, [2, 1], [2], [1])]
    three.start_node(1)             # node 1 leads again; node 2 copies its log, and the reassignment ends
    assert ongoing(three) == []
    assert state(three, "lonely") == [(2, 3, [2], [2])]
