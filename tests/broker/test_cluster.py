"""Several nodes in one cluster, without sockets: leaders and ISR through stops, starts and moves, the one partition
lookup every handler shares (NOT_LEADER_OR_FOLLOWER with KIP-951's leader hints, leader-epoch fencing),
FindCoordinator's routing, min.insync.replicas, and what survives a restart."""

from __future__ import annotations

import pytest
from support.broker_calls import call

from kafkamock import records
from kafkamock.broker import Cluster, ManualClock
from kafkamock.broker.cluster import partition_for_key
from kafkamock.broker.errors import ErrorCode as E
from kafkamock.broker.java_hash_order import java_string_hash
from kafkamock.storage import DiskStorage


@pytest.fixture
def cluster(clock) -> Cluster:
    broker = Cluster(clock=clock, brokers=3)
    for k, node in enumerate(broker.nodes):
        broker.set_address(node.node_id, "127.0.0.1", 9092 + k)
    broker.metadata.create_topic("r3", 3, 3)          # leaders 1, 2, 3; replicas rotate
    return broker


def batch(*vals, **kw):
    return records.encode_batch([{"value": v, "timestamp": 1_000} for v in vals], **kw)


def produce(broker, node_id, partition=0, topic="r3", version=11, acks=-1):
    return call(broker, "Produce", version, {"acks": acks, "timeout_ms": 1000, "topic_data": [
        {"name": topic, "partition_data": [{"index": partition, "records": batch(b"x")}]}]}, node_id=node_id)


def fetch(broker, node_id, partition=0, topic="r3", version=16, epoch=-1):
    topic_id = broker.metadata.topics[topic].topic_id
    return call(broker, "Fetch", version, {
        "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 10**6, "session_epoch": -1,
        "topics": [{"topic": topic, "topic_id": topic_id, "partitions": [
            {"partition": partition, "fetch_offset": 0, "partition_max_bytes": 10**6,
             "current_leader_epoch": epoch}]}]}, node_id=node_id)


def leaders(broker, topic="r3"):
    return [(p.leader_id, p.leader_epoch, list(p.isr)) for p in broker.metadata.topics[topic].partitions]


def test_node_ids_ports_and_round_robin_placement(cluster):
    assert [(n.node_id, n.port) for n in cluster.nodes] == [(1, 9092), (2, 9093), (3, 9094)]
    assert [p.replicas for p in cluster.metadata.topics["r3"].partitions] == [[1, 2, 3], [2, 3, 1], [3, 1, 2]]
    assert leaders(cluster) == [(1, 0, [1, 2, 3]), (2, 0, [2, 3, 1]), (3, 0, [3, 1, 2])]
    first = Cluster({"node.id": 5}, brokers=2)
    assert [n.node_id for n in first.nodes] == [5, 6]


def test_only_the_leader_serves_and_says_who_leads(cluster):
    assert produce(cluster, 1).responses[0].partition_responses[0].error_code == E.NONE
    wrong = produce(cluster, 2)
    result = wrong.responses[0].partition_responses[0]
    assert result.error_code == E.NOT_LEADER_OR_FOLLOWER
    assert (result.current_leader.leader_id, result.current_leader.leader_epoch) == (1, 0)          # KIP-951
    assert [(n.node_id, n.port) for n in wrong.node_endpoints] == [(1, 9092)]
    old = produce(cluster, 2, version=9).responses[0].partition_responses[0]                         # before v10
    assert old.error_code == E.NOT_LEADER_OR_FOLLOWER and old.current_leader.leader_id == -1
    fetched = fetch(cluster, 3)
    p = fetched.responses[0].partitions[0]
    assert p.error_code == E.NOT_LEADER_OR_FOLLOWER and p.current_leader.leader_id == 1
    assert [(n.node_id, n.port) for n in fetched.node_endpoints] == [(1, 9092)]
    assert fetch(cluster, 1).responses[0].partitions[0].error_code == E.NONE


def test_leader_epoch_fencing_comes_before_the_leader_check(cluster):
    partition = cluster.metadata.partition("r3", 0)
    cluster.metadata.set_leader(partition, 1)                                    # epoch 1
    assert fetch(cluster, 1, epoch=0).responses[0].partitions[0].error_code == E.FENCED_LEADER_EPOCH
    assert fetch(cluster, 1, epoch=2).responses[0].partitions[0].error_code == E.UNKNOWN_LEADER_EPOCH
    assert fetch(cluster, 1, epoch=1).responses[0].partitions[0].error_code == E.NONE
    # A follower asked with an old epoch is fenced too (Kafka checks the epoch on any replica first).
    assert fetch(cluster, 2, epoch=0).responses[0].partitions[0].error_code == E.FENCED_LEADER_EPOCH
    assert fetch(cluster, 2, epoch=1).responses[0].partitions[0].error_code == E.NOT_LEADER_OR_FOLLOWER


def test_stop_moves_leadership_to_the_next_in_sync_replica_and_start_takes_it_back(cluster):
    cluster.stop_node(1)
    assert leaders(cluster) == [(2, 1, [2, 3]), (2, 0, [2, 3]), (3, 0, [3, 2])]
    metadata = call(cluster, "Metadata", 12, {"topics": None}, node_id=2)
    assert [b.node_id for b in metadata.brokers] == [2, 3] and metadata.controller_id == 2
    p0 = metadata.topics[0].partitions[0]
    assert (p0.leader_id, p0.leader_epoch, p0.isr_nodes, p0.offline_replicas) == (2, 1, [2, 3], [1])
    assert produce(cluster, 2).responses[0].partition_responses[0].error_code == E.NONE
    log = cluster.metadata.partition("r3", 0).log
    assert log.leader_epochs[-1] == (1, 0)                                       # epoch 1 starts at offset 0
    cluster.start_node(1)                                                       # preferred leader election
    assert leaders(cluster) == [(1, 2, [1, 2, 3]), (2, 0, [2, 3, 1]), (3, 0, [3, 1, 2])]
    assert log.leader_epochs[-1] == (2, 1)


def test_start_without_rebalance_leaves_leaders_where_they_are(clock):
    broker = Cluster({"auto.leader.rebalance.enable": "false"}, clock=clock, brokers=2)
    broker.metadata.create_topic("t", 1, 2)
    broker.stop_node(1)
    broker.start_node(1)
    assert leaders(broker, "t") == [(2, 1, [1, 2])]


def test_a_partition_whose_replicas_are_all_down_has_no_leader(cluster):
    cluster.metadata.create_topic("solo", 1, 1)                                  # on node 1 (round robin)
    (solo,) = cluster.metadata.topics["solo"].partitions
    cluster.stop_node(solo.leader_id)
    other = 2 if solo.replicas[0] != 2 else 3
    p = call(cluster, "Metadata", 12, {"topics": [{"name": "solo"}]}, node_id=other).topics[0].partitions[0]
    assert (p.error_code, p.leader_id) == (E.LEADER_NOT_AVAILABLE, -1)
    cluster.start_node(solo.replicas[0])
    assert solo.leader_id == solo.replicas[0]


def test_move_leader_bumps_the_epoch_and_reassigns_when_needed(cluster):
    cluster.metadata.create_topic("one", 1, 1)
    (p,) = cluster.metadata.topics["one"].partitions
    target = 3 if p.leader_id != 3 else 2
    cluster.move_leader("one", 0, target)
    assert (p.leader_id, p.replicas, p.isr, p.leader_epoch) == (target, [target], [target], 1)
    with pytest.raises(ValueError):
        cluster.stop_node(2)
        cluster.move_leader("r3", 0, 2)                                         # a stopped node cannot lead


def test_a_stopped_node_refuses_requests(cluster):
    cluster.stop_node(3)
    closed = call(cluster, "Metadata", 12, {"topics": None}, node_id=3)
    assert "stopped" in closed.reason


def test_min_insync_replicas_refuses_acks_all_when_the_isr_is_too_small(cluster):
    assert call(cluster, "IncrementalAlterConfigs", 1, {"resources": [{"resource_type": 2, "resource_name": "r3",
                "configs": [{"name": "min.insync.replicas", "config_operation": 0, "value": "2"}]}]},
                node_id=1).responses[0].error_code == E.NONE
    cluster.stop_node(2)
    assert produce(cluster, 1).responses[0].partition_responses[0].error_code == E.NONE   # ISR [1, 3]
    cluster.stop_node(3)
    assert produce(cluster, 1).responses[0].partition_responses[0].error_code == E.NOT_ENOUGH_REPLICAS
    assert produce(cluster, 1, acks=1).responses[0].partition_responses[0].error_code == E.NONE


def test_create_topics_with_manual_assignments_and_replication_checks(cluster):
    def create(topic):
        return call(cluster, "CreateTopics", 7, {"topics": [topic], "timeout_ms": 1000}).topics[0]

    ok = create({"name": "manual", "num_partitions": -1, "replication_factor": -1, "assignments": [
        {"partition_index": 0, "broker_ids": [3, 1]}, {"partition_index": 1, "broker_ids": [2, 3]}]})
    assert (ok.error_code, ok.num_partitions, ok.replication_factor) == (E.NONE, 2, 2)
    assert leaders(cluster, "manual") == [(3, 0, [3, 1]), (2, 0, [2, 3])]
    for topic, code, words in [
        ({"name": "a", "num_partitions": 2, "replication_factor": -1,
          "assignments": [{"partition_index": 0, "broker_ids": [1]}]}, E.INVALID_REQUEST, "numPartitions"),
        ({"name": "b", "num_partitions": -1, "replication_factor": -1,
          "assignments": [{"partition_index": 1, "broker_ids": [1]}]}, E.INVALID_REPLICA_ASSIGNMENT, "consecutive"),
        ({"name": "c", "num_partitions": -1, "replication_factor": -1, "assignments": [
            {"partition_index": 0, "broker_ids": [1]}, {"partition_index": 0, "broker_ids": [2]}]},
         E.INVALID_REPLICA_ASSIGNMENT, "multiple"),
        ({"name": "d", "num_partitions": 1, "replication_factor": 4}, E.INVALID_REPLICATION_FACTOR, "only 3"),
        ({"name": "e", "num_partitions": 1, "replication_factor": 0}, E.INVALID_REPLICATION_FACTOR, "larger than 0"),
    ]:
        bad = create(topic)
        assert bad.error_code == code and words in bad.error_message, bad


def test_java_string_hash_and_coordinator_partitions():
    # Java's String.hashCode, whose int32 arithmetic Kafka's coordinator routing depends on.
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("Aa") == java_string_hash("BB") == 2112
    assert java_string_hash("polygenelubricants") == -(1 << 31)      # Utils.abs(MIN_VALUE) is 0
    assert partition_for_key("polygenelubricants", 50) == 0
    assert java_string_hash("€ü😀 group") == _java_hash_reference("€ü😀 group")      # surrogate pairs count twice
    assert partition_for_key("hello", 50) == 99162322 % 50


def _java_hash_reference(text: str) -> int:
    """The definition, spelled out: s[0]*31^(n-1) + ... over UTF-16 code units, as a signed int32."""
    units = text.encode("utf-16-be")
    value = sum(int.from_bytes(units[i:i + 2], "big") * 31 ** (len(units) // 2 - 1 - i // 2)
                for i in range(0, len(units), 2)) % (1 << 32)
    return value - (1 << 32) if value >= 1 << 31 else value


def test_find_coordinator_routes_to_the_leader_of_the_hashed_partition(cluster):
    response = call(cluster, "FindCoordinator", 4, {"key_type": 0, "coordinator_keys": ["orders-app", "hello"]})
    offsets = cluster.metadata.topics["__consumer_offsets"]
    assert offsets.internal and len(offsets.partitions) == 50 and len(offsets.partitions[0].replicas) == 3
    assert offsets.configs["cleanup.policy"] == "compact"
    for c in response.coordinators:
        expected = offsets.partitions[partition_for_key(c.key, 50)].leader_id
        assert (c.error_code, c.node_id) == (E.NONE, expected)
        assert c.port == 9092 + expected - 1
    txn = call(cluster, "FindCoordinator", 3, {"key_type": 1, "key": "tx-1"})
    state = cluster.metadata.topics["__transaction_state"]
    assert (txn.error_code, txn.node_id) == (E.NONE, state.partitions[partition_for_key("tx-1", 50)].leader_id)
    assert call(cluster, "FindCoordinator", 4, {"key_type": 7, "coordinator_keys": ["x"]}) \
        .coordinators[0].error_code == E.INVALID_REQUEST
    # A share-partition key (v6+ only) must be groupId:topicId:partition. Share state lives in the partition itself
    # here (KIP-932's control records), so its leader coordinates it; a key naming no partition is answered too, as
    # Kafka answers it (hashed onto the live nodes: there is no state anywhere). No __share_group_state is made.
    from kafkamock.broker.cluster import kafka_uuid_string
    key = f"g:{kafka_uuid_string(cluster.metadata.topics['r3'].topic_id)}:1"
    nowhere = "g:AAAAAAAAAAAAAAAAAAAAAA:0"
    share = call(cluster, "FindCoordinator", 6, {"key_type": 2, "coordinator_keys": [
        key, "g:bad:x", nowhere, ":AAAAAAAAAAAAAAAAAAAAAA:0"]}).coordinators
    assert (share[0].error_code, share[0].node_id) == (E.NONE, cluster.metadata.topics["r3"].partitions[1].leader_id)
    assert [c.error_code for c in share[1:]] == [E.INVALID_REQUEST, E.NONE, E.INVALID_REQUEST]
    assert share[2].node_id == sorted(cluster.metadata.nodes)[partition_for_key(nowhere, 3)]
    assert "__share_group_state" not in cluster.metadata.topics
    assert call(cluster, "FindCoordinator", 5, {"key_type": 2, "coordinator_keys": [key]}) \
        .coordinators[0].error_code == E.INVALID_REQUEST


def test_coordinator_not_available_when_its_partition_has_no_leader(clock):
    broker = Cluster({"offsets.topic.num.partitions": 1, "offsets.topic.replication.factor": 1}, clock=clock,
                    brokers=2)
    first = call(broker, "FindCoordinator", 3, {"key_type": 0, "key": "g"})
    assert first.error_code == E.NONE
    broker.stop_node(first.node_id)
    other = 1 if first.node_id == 2 else 2
    again = call(broker, "FindCoordinator", 3, {"key_type": 0, "key": "g"}, node_id=other)
    assert (again.error_code, again.node_id) == (E.COORDINATOR_NOT_AVAILABLE, -1)


def test_metadata_lists_internal_topics_like_kafka(cluster):
    call(cluster, "FindCoordinator", 3, {"key_type": 0, "key": "g"})
    everything = call(cluster, "Metadata", 12, {"topics": None})
    internal = {t.name: t.is_internal for t in everything.topics}
    assert internal == {"r3": False, "__consumer_offsets": True}


def test_topics_configs_leaders_and_producer_ids_survive_a_restart(tmp_path):
    clock = ManualClock()
    first = Cluster({"log.dirs": str(tmp_path)}, clock=clock, brokers=3)
    first.metadata.create_topic("kept", 2, 2, {"retention.ms": 1234})
    call(first, "IncrementalAlterConfigs", 1, {"resources": [{"resource_type": 4, "resource_name": "", "configs": [
        {"name": "log.retention.bytes", "config_operation": 0, "value": "999"}]}]})
    first.stop_node(2)
    pid = call(first, "InitProducerId", 4, {"transactional_id": None, "transaction_timeout_ms": 1}).producer_id
    p = first.metadata.topics["kept"].partitions[0]
    leader = p.leader_id
    response = call(first, "Produce", 9, {"acks": -1, "timeout_ms": 1, "topic_data": [{"name": "kept", "partition_data": [
        {"index": 0, "records": batch(b"a", producer_id=pid, producer_epoch=0, base_sequence=0)}]}]}, node_id=leader)
    assert response.responses[0].partition_responses[0].error_code == E.NONE
    cluster_id = first.metadata.cluster_id
    first.close()

    again = Cluster({"log.dirs": str(tmp_path)}, clock=clock, brokers=3)
    assert again.metadata.cluster_id == cluster_id
    topic = again.metadata.topics["kept"]
    assert topic.configs == {"retention.ms": 1234} and len(topic.partitions) == 2
    assert [(q.leader_id, q.leader_epoch, q.replicas) for q in topic.partitions] == \
        [(q.leader_id, q.leader_epoch, q.replicas) for q in first.metadata.topics["kept"].partitions]
    assert again.config.dynamic_default == {"log.retention.bytes": 999, "min.insync.replicas": 1}
    assert topic.partitions[0].log.log_end_offset == 1
    # The producer's state came back from the batch headers: a retry is a duplicate, the next batch follows.
    retry = call(again, "Produce", 9, {"acks": -1, "timeout_ms": 1, "topic_data": [{"name": "kept", "partition_data": [
        {"index": 0, "records": batch(b"a", producer_id=pid, producer_epoch=0, base_sequence=0)}]}]}, node_id=leader)
    assert (retry.responses[0].partition_responses[0].error_code,
            retry.responses[0].partition_responses[0].base_offset) == (E.NONE, 0)
    assert topic.partitions[0].log.log_end_offset == 1
    gap = call(again, "Produce", 9, {"acks": -1, "timeout_ms": 1, "topic_data": [{"name": "kept", "partition_data": [
        {"index": 0, "records": batch(b"b", producer_id=pid, producer_epoch=0, base_sequence=5)}]}]}, node_id=leader)
    assert gap.responses[0].partition_responses[0].error_code == E.OUT_OF_ORDER_SEQUENCE_NUMBER
    # Producer ids come in persisted blocks: none handed out before the restart comes again.
    fresh = call(again, "InitProducerId", 4, {"transactional_id": None, "transaction_timeout_ms": 1}).producer_id
    assert fresh > pid
    again.close()
    assert isinstance(again.storage, DiskStorage)


def test_coordinator_batches_follow_kafkas_hash_map_walk():
    """Kafka 4.3.1 answered ShareGroupDescribe / DeleteGroups for these ids in this order (a HashMap of
    __consumer_offsets partitions, filled in request order)."""
    from kafkamock.broker.cluster import coordinator_batches

    ids = [f"g{i}-0df3935c" for i in range(6)]
    assert [g for batch in coordinator_batches(ids, 50) for g in batch] == [
        "g3-0df3935c", "g2-0df3935c", "g4-0df3935c", "g1-0df3935c", "g5-0df3935c", "g0-0df3935c"]
    # ya16, yb0, yc34 and yd39 hash onto partitions 1, 17, 33 and 49: one bucket, which computeIfAbsent fills at its
    # head, so the last id in comes out first.
    assert [g for b in coordinator_batches(["yb0", "yd39", "ya16", "yc34"], 50) for g in b] == [
        "yc34", "ya16", "yd39", "yb0"]


def test_delete_groups_answers_a_batch_in_its_hash_set_order():
    """Kafka 4.3.1's GroupCoordinatorService makes a HashSet of a partition's group ids before deleting them: these two
    ids (one __consumer_offsets partition, neither a group) came back g5 first."""
    from kafkamock.broker.java_hash_order import java_hashset_order

    token = "test-describe-and-delete-several-groups-4c0b12"
    assert partition_for_key(f"g3-{token}", 50) == partition_for_key(f"g5-{token}", 50) == 0
    assert java_hashset_order([f"g3-{token}", f"g5-{token}"]) == [f"g5-{token}", f"g3-{token}"]


class _DiskThatFills(DiskStorage):
    """A data directory whose disk fills after ``room`` more partition logs."""

    room = 1 << 30

    def open_log(self, topic, topic_id, partition, config, now_ms):
        if self.room <= 0:
            raise OSError(28, "No space left on device")
        self.room -= 1
        return super().open_log(topic, topic_id, partition, config, now_ms)


def test_partitions_whose_logs_cannot_be_made_are_refused_whole(tmp_path, clock):
    """CreateTopics and CreatePartitions make every log or none: the directories made before the failure go, the
    answer is KAFKA_STORAGE_ERROR, and the metadata (and the next start) agree with the disk."""
    storage = _DiskThatFills(tmp_path)
    broker = Cluster(clock=clock, storage=storage)
    broker.metadata.create_topic("grown", 2, 1)
    storage.room = 3
    grown = call(broker, "CreatePartitions", 3, {"topics": [{"name": "grown", "count": 10, "assignments": None}],
                                                 "timeout_ms": 1000, "validate_only": False})
    assert grown.results[0].error_code == E.KAFKA_STORAGE_ERROR
    assert "No space left on device" in grown.results[0].error_message
    storage.room = 2
    created = call(broker, "CreateTopics", 7, {"topics": [{"name": "fresh", "num_partitions": 5,
                                                           "replication_factor": 1, "assignments": [],
                                                           "configs": []}],
                                               "timeout_ms": 1000, "validate_only": False})
    assert created.topics[0].error_code == E.KAFKA_STORAGE_ERROR
    assert len(broker.metadata.topics["grown"].partitions) == 2 and "fresh" not in broker.metadata.topics
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == ["grown-0", "grown-1"]
    broker.close()
    again = Cluster(clock=clock, storage=DiskStorage(tmp_path))
    assert [len(t.partitions) for t in again.metadata.topics.values() if t.name == "grown"] == [2]


def test_partitions_on_the_same_replicas_share_their_lists_and_a_change_to_one_leaves_the_others(clock):
    broker = Cluster(clock=clock, brokers=3)
    broker.metadata.create_topic("shared", 6, 3, assignments=[[1, 2, 3]] * 6)
    p0, p1 = broker.metadata.partition("shared", 0), broker.metadata.partition("shared", 1)
    assert p0.replicas is p1.replicas and p0.isr is p1.isr                     # one list, not two per partition
    broker.metadata.move_leader(p0, 3)
    broker.stop_node(2)
    assert (p0.leader_id, p0.isr) == (3, [1, 3]) and (p1.leader_id, p1.isr) == (1, [1, 3])
    broker.start_node(2)
    assert p0.isr == p1.isr == [1, 2, 3] and p1.replicas == [1, 2, 3]
    broker.metadata.move_leader(p1, 2)
    assert p1.leader_id == 2 and p0.leader_id != 2 and p0.replicas == [1, 2, 3]
