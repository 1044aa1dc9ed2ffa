"""The Java Admin's cluster operations (kafka-clients 4.3.1), each run against kafkamock and against Apache Kafka
4.3.1 (``kafka_target``), with the same expectations: describeLogDirs / alterReplicaLogDirs, alterPartitionReassignments
/ listPartitionReassignments and electLeaders on three nodes, describeMetadataQuorum, describeFeatures /
updateFeatures, unregisterBroker, listConfigResources, addRaftVoter / removeRaftVoter.

The Kafka cluster is shared by the session, so what changes cluster-wide is only validated (feature updates) or
refused (an unknown broker, a static quorum's voters)."""

from __future__ import annotations

import pytest
from support.polling import wait_until

pytestmark = pytest.mark.java


def op(java_clients, bootstrap: str, *ops: dict) -> list:
    """Run admin ops; each one's result (or its error)."""
    return [r.get("result", r.get("error")) for r in java_clients.admin(bootstrap, list(ops), check=False)]


def layout(java_clients, bootstrap: str, topic: str) -> list[list]:
    """[leader, replicas, isr] per partition, as describeTopics shows them."""
    (described,) = op(java_clients, bootstrap, {"op": "describeTopics", "names": [topic], "by_id": False})
    return [[p["leader"], p["replicas"], sorted(p["isr"])]
            for p in described["by_name"][topic]["partitions"]]


def kafka_error(result) -> str:
    return result["kafka_error"] if isinstance(result, dict) and "kafka_error" in result else result


@pytest.mark.kafkamock(brokers=3)
def test_java_admin_reassigns_partitions_and_elects_leaders(kafka_target, java_clients):
    bootstrap = kafka_target.bootstrap_servers
    topic = kafka_target.unique("reassign")
    kafka_target.create_topic(topic, 2)
    # Kafka places a new topic's replicas where it likes: partition 0 to broker 1 and partition 1 to broker 2 alone
    # first, so that their leaders are 1 and 2 whatever the placement was (a leader in the new replicas stays)
    (alone,) = op(java_clients, bootstrap, {"op": "alterPartitionReassignments", "reassignments": {
        f"{topic}:0": [1], f"{topic}:1": [2]}})
    assert alone == {f"{topic}:0": "ok", f"{topic}:1": "ok"}
    wait_until(lambda: [p[:2] for p in layout(java_clients, bootstrap, topic)] == [[1, [1]], [2, [2]]], 30,
               "partition 0 on broker 1, 1 on 2", interval=0.2)
    (moved,) = op(java_clients, bootstrap, {"op": "alterPartitionReassignments", "reassignments": {
        f"{topic}:0": [1, 2], f"{topic}:1": [2, 3]}})
    assert moved == {f"{topic}:0": "ok", f"{topic}:1": "ok"}

    def settled(expected):
        def probe():
            (ongoing,) = op(java_clients, bootstrap, {"op": "listPartitionReassignments"})
            if any(tp.startswith(topic + ":") for tp in ongoing):
                return None
            now = layout(java_clients, bootstrap, topic)
            return now if [[p[1], p[2]] for p in now] == expected else None
        return wait_until(probe, 30, "the reassignment", interval=0.2)

    settled([[[1, 2], [1, 2]], [[2, 3], [2, 3]]])
    # reorder partition 0: its leader stays until a preferred election hands it to the new first replica
    (reorder,) = op(java_clients, bootstrap, {"op": "alterPartitionReassignments", "reassignments": {
        f"{topic}:0": [2, 1]}})
    assert reorder == {f"{topic}:0": "ok"}
    assert settled([[[2, 1], [1, 2]], [[2, 3], [2, 3]]])[0][0] == 1
    elected, refused = op(java_clients, bootstrap, {
        "op": "electLeaders", "type": "PREFERRED", "partitions": [f"{topic}:0", f"{topic}:1"]}, {
        "op": "alterPartitionReassignments", "reassignments": {
            f"{topic}:0": [1, 9], f"{topic}:1": None, f"{topic}:7": [1]}})
    assert elected[f"{topic}:0"] == "ok"
    assert kafka_error(elected[f"{topic}:1"]) == "ELECTION_NOT_NEEDED"
    assert kafka_error(refused[f"{topic}:0"]) == "INVALID_REPLICA_ASSIGNMENT"
    assert refused[f"{topic}:0"]["message"] == \
        "The manual partition assignment includes broker 9, but no such broker is registered."
    assert kafka_error(refused[f"{topic}:1"]) == "NO_REASSIGNMENT_IN_PROGRESS"
    assert kafka_error(refused[f"{topic}:7"]) == "UNKNOWN_TOPIC_OR_PARTITION"
    wait_until(lambda: layout(java_clients, bootstrap, topic)[0][0] == 2, 30, "the preferred leader", interval=0.2)


def test_java_admin_describes_and_alters_log_dirs(kafka_target, java_clients):
    bootstrap = kafka_target.bootstrap_servers
    topic = kafka_target.unique("logdirs")
    kafka_target.create_topic(topic, 2)
    java_clients.produce(bootstrap, topic, [{"key": "k", "value": "v" * 50, "partition": 0}])
    (dirs,) = op(java_clients, bootstrap, {"op": "describeLogDirs", "brokers": [1]})
    (only,) = dirs["1"]
    assert only["error"] is None and only["total_known"] and only["usable_known"] and not only["cordoned"]
    mine = {tp: info for tp, info in only["replicas"].items() if tp.startswith(topic + ":")}
    assert set(mine) == {f"{topic}:0", f"{topic}:1"}
    assert mine[f"{topic}:0"]["size"] > 0 and mine[f"{topic}:1"]["size"] == 0
    assert all(info["offset_lag"] == 0 and not info["future"] for info in mine.values())
    (altered,) = op(java_clients, bootstrap, {"op": "alterReplicaLogDirs", "replicas": [
        {"tp": f"{topic}:0", "broker": 1}, {"tp": f"{topic}:1", "broker": 1, "dir": "/no/such/dir"}]})
    assert altered[f"{topic}:0@1"] == "ok"
    assert kafka_error(altered[f"{topic}:1@1"]) == "LOG_DIR_NOT_FOUND"


def test_java_admin_metadata_quorum_features_and_voters(kafka_target, java_clients):
    bootstrap = kafka_target.bootstrap_servers
    quorum, features, checked, refused, unregistered, added, removed = op(
        java_clients, bootstrap, {"op": "describeMetadataQuorum"}, {"op": "describeFeatures"},
        {"op": "updateFeatures", "validate_only": True, "updates": {
            "transaction.version": {"level": 1, "type": "SAFE_DOWNGRADE"}, "group.version": {"level": 1}}},
        {"op": "updateFeatures", "validate_only": True, "updates": {
            "metadata.version": {"level": 29, "type": "SAFE_DOWNGRADE"}}},
        {"op": "unregisterBroker", "broker": 7},
        {"op": "addRaftVoter", "voter": 5, "endpoints": [{"listener": "CONTROLLER", "host": "localhost",
                                                            "port": 9999}]},
        {"op": "removeRaftVoter", "voter": 1})
    assert quorum["leader_id"] == 1 and quorum["leader_epoch"] >= 1 and quorum["high_watermark"] > 0
    assert [v["id"] for v in quorum["voters"]] == [1] and quorum["observers"] == []
    assert quorum["voters"][0]["directory_id"] == "AAAAAAAAAAAAAAAAAAAAAA"     # a static quorum keeps none
    assert features["epoch_known"]
    finalized = {k: v for k, v in features["finalized"].items() if k != "streams.version"}
    assert finalized == {"eligible.leader.replicas.version": [1, 1], "group.version": [1, 1],
                         "metadata.version": [30, 30], "share.version": [1, 1], "transaction.version": [2, 2]}
    assert features["supported"]["transaction.version"] == [0, 2]
    assert checked == {"group.version": "ok", "transaction.version": "ok", "all": "ok"}
    assert kafka_error(refused["metadata.version"]) == "INVALID_UPDATE_VERSION"
    assert refused["metadata.version"]["message"] == (
        "The update failed for all features since the following feature had an error: Unsupported metadata.version "
        "downgrade from 30 to 29. Refusing to perform the requested downgrade because it might delete metadata "
        "information.")
    assert kafka_error(unregistered) == "BROKER_ID_NOT_REGISTERED"
    assert unregistered["message"] == "Broker ID 7 is not currently registered"
    assert kafka_error(added) == kafka_error(removed) == "UNSUPPORTED_VERSION"
    assert added["message"] == "Cluster doesn't support adding voter because the kraft.version feature is 0"
    assert removed["message"] == "Cluster doesn't support removing voter because the kraft.version feature is 0"


def test_java_admin_lists_config_resources(kafka_target, java_clients):
    bootstrap = kafka_target.bootstrap_servers
    topic = kafka_target.unique("configs")
    kafka_target.create_topic(topic, 1)
    every, topics, brokers = op(java_clients, bootstrap, {"op": "listConfigResources"},
                                {"op": "listConfigResources", "types": ["TOPIC"]},
                                {"op": "listConfigResources", "types": ["BROKER", "BROKER_LOGGER"]})
    assert [topic, "TOPIC"] in every["resources"] and ["1", "BROKER"] in every["resources"]
    assert [topic, "TOPIC"] in topics["resources"]
    assert {kind for _, kind in topics["resources"]} == {"TOPIC"}
    assert brokers["resources"] == [["1", "BROKER"], ["1", "BROKER_LOGGER"]]
