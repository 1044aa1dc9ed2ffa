"""Faults on demand and the request log, through the control model (the same one the Python handle, the HTTP API and
the CLI reach), without sockets and with a ManualClock."""

from __future__ import annotations

import pytest
from support.broker_calls import call

from kafkamock import records
from kafkamock.broker import Close, Cluster, ControlError, Waiter
from kafkamock.broker.errors import ErrorCode as E


@pytest.fixture
def cluster(clock) -> Cluster:
    broker = Cluster(clock=clock, brokers=2)
    broker.metadata.create_topic("t", 2, 2)              # leaders 1 and 2
    return broker


def produce(broker, partitions=(0,), node_id=1, acks=-1):
    body = {"acks": acks, "timeout_ms": 1000, "topic_data": [{"name": "t", "partition_data": [
        {"index": p, "records": records.encode_batch([{"value": b"v", "timestamp": 1}])} for p in partitions]}]}
    return call(broker, "Produce", 9, body, node_id=node_id)


def codes(response):
    return [r.error_code for t in response.responses for r in t.partition_responses]


def test_a_pushed_error_answers_the_next_count_requests(cluster):
    fault = cluster.control.push_fault("Produce", "NOT_LEADER_OR_FOLLOWER", count=2, node_id=1)
    assert (fault["api_key"], fault["error_code"], fault["count"]) == (0, E.NOT_LEADER_OR_FOLLOWER, 2)
    for _ in range(2):
        assert codes(produce(cluster)) == [E.NOT_LEADER_OR_FOLLOWER]
    assert codes(produce(cluster)) == [E.NONE]
    assert cluster.metadata.partition("t", 0).log.log_end_offset == 1       # the faulted requests wrote nothing
    assert cluster.control.faults() == []


def test_a_fault_for_one_partition_leaves_the_others_alone(cluster):
    cluster.control.push_fault(0, 7, count=1, topic="t", partition=1)    # REQUEST_TIMED_OUT on t-1 only
    both = produce(cluster, partitions=(0, 1), node_id=1)
    assert codes(both) == [E.NONE, E.REQUEST_TIMED_OUT]
    assert cluster.metadata.partition("t", 0).log.log_end_offset == 1
    assert cluster.metadata.partition("t", 1).log.log_end_offset == 0
    assert codes(produce(cluster, partitions=(1,), node_id=2)) == [E.NONE]  # spent


def test_a_fault_for_another_node_or_topic_is_not_spent(cluster):
    cluster.control.push_fault("Produce", "NOT_LEADER_OR_FOLLOWER", node_id=2)
    cluster.control.push_fault("Produce", "NOT_LEADER_OR_FOLLOWER", topic="other")
    assert codes(produce(cluster, node_id=1)) == [E.NONE]
    assert len(cluster.control.faults()) == 2


def test_whole_request_errors_use_the_response_shape(cluster):
    cluster.control.push_fault("Metadata", "LEADER_NOT_AVAILABLE")
    metadata = call(cluster, "Metadata", 12, {"topics": [{"name": "t"}, {"name": "nope"}]})
    assert [(t.name, t.error_code) for t in metadata.topics] == [("t", E.LEADER_NOT_AVAILABLE),
                                                                   ("nope", E.LEADER_NOT_AVAILABLE)]
    assert "nope" not in cluster.metadata.topics                           # the faulted request created nothing
    cluster.control.push_fault("InitProducerId", "COORDINATOR_LOAD_IN_PROGRESS")
    init = call(cluster, "InitProducerId", 4, {"transactional_id": None, "transaction_timeout_ms": 1})
    assert (init.error_code, init.producer_id) == (E.COORDINATOR_LOAD_IN_PROGRESS, -1)
    cluster.control.push_fault("FindCoordinator", "COORDINATOR_NOT_AVAILABLE")
    found = call(cluster, "FindCoordinator", 4, {"key_type": 0, "coordinator_keys": ["a", "b"]})
    assert [(c.key, c.error_code) for c in found.coordinators] == [("a", E.COORDINATOR_NOT_AVAILABLE),
                                                                   ("b", E.COORDINATOR_NOT_AVAILABLE)]
    cluster.control.push_fault("CreateTopics", "POLICY_VIOLATION")
    created = call(cluster, "CreateTopics", 7, {"topics": [{"name": "x", "num_partitions": 1,
                                                            "replication_factor": 1}], "timeout_ms": 1})
    assert created.topics[0].error_code == E.POLICY_VIOLATION and "x" not in cluster.metadata.topics
    cluster.control.push_fault("Fetch", "UNKNOWN_LEADER_EPOCH", node_id=2)   # a partition API: every partition
    fetched = call(cluster, "Fetch", 12, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 10**6,
                                          "session_epoch": -1, "topics": [{"topic": "t", "partitions": [
                                              {"partition": 1, "fetch_offset": 0, "partition_max_bytes": 100}]}]},
                   node_id=2)
    assert fetched.responses[0].partitions[0].error_code == E.UNKNOWN_LEADER_EPOCH


def test_latency_delays_the_request_on_the_core_clock(cluster, clock):
    cluster.control.push_fault("Produce", latency_ms=250)
    waiter = produce(cluster)
    assert isinstance(waiter, Waiter) and cluster.next_deadline() == clock.now_ms() + 250
    answered = []
    waiter.on_done = answered.append
    assert cluster.metadata.partition("t", 0).log.log_end_offset == 0      # not handled yet
    clock.advance(249)
    cluster.tick()
    assert not answered
    clock.advance(1)
    cluster.tick()
    assert len(answered) == 1 and cluster.metadata.partition("t", 0).log.log_end_offset == 1


def test_latency_then_error(cluster, clock):
    cluster.control.push_fault("Produce", "REQUEST_TIMED_OUT", latency_ms=100)
    waiter = produce(cluster)
    answered = []
    waiter.on_done = answered.append
    clock.advance(100)
    cluster.tick()
    (outcome,) = answered
    assert [r["error_code"] for t in outcome.body["responses"] for r in t["partition_responses"]] == \
        [E.REQUEST_TIMED_OUT]


def test_close_connection(cluster):
    cluster.control.push_fault("ApiVersions", close_connection=True)
    closed = call(cluster, "ApiVersions", 3, {"client_software_name": "a", "client_software_version": "1"})
    assert isinstance(closed, Close) and "control API" in closed.reason


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"api_key": "NoSuchApi"}, "unknown API"),
    ({"api_key": 0, "error_code": "NOT_AN_ERROR"}, "unknown error code"),
    ({"api_key": 0}, "needs an error_code"),
    ({"api_key": 0, "error_code": 6, "count": 0}, "at least 1"),
    ({"api_key": 0, "error_code": 6, "node_id": 9}, "no node 9"),
    ({"api_key": 0, "error_code": 6, "partition": 1}, "needs a topic"),
    ({"api_key": 0, "latency_ms": 5, "topic": "t"}, "whole requests"),
])
def test_bad_faults_are_refused_with_a_reason(cluster, kwargs, words):
    with pytest.raises(ControlError, match=words):
        cluster.control.push_fault(**kwargs)


def test_request_log(cluster, clock):
    produce(cluster, node_id=1)
    clock.advance(5)
    call(cluster, "Metadata", 12, {"topics": None}, node_id=2)
    log = cluster.control.requests()
    assert [(e["node_id"], e["api_name"], e["api_version"], e["client_id"]) for e in log] == [
        (1, "Produce", 9, "test"), (2, "Metadata", 12, "test")]
    assert log[1]["time_ms"] - log[0]["time_ms"] == 5
    assert [e["api_key"] for e in cluster.control.requests(api_key="metadata")] == [3]
    assert [e["node_id"] for e in cluster.control.requests(node_id=1)] == [1]
    assert cluster.control.clear_requests() == {"cleared": 2} and cluster.control.requests() == []
    quiet = Cluster({"kafkamock.request.log.max.entries": 0}, clock=clock)
    call(quiet, "Metadata", 12, {"topics": None})
    assert quiet.control.requests() == []


def test_control_reads_topics_nodes_and_batches(cluster):
    produce(cluster)
    topic = cluster.control.topic("t")
    assert [(p["leader"], p["replicas"], p["isr"], p["log_end_offset"]) for p in topic["partitions"]] == [
        (1, [1, 2], [1, 2], 1), (2, [2, 1], [2, 1], 0)]
    (stored,) = cluster.control.stored_batches("t", 0)
    assert (stored["base_offset"], stored["record_count"], stored["compression"]) == (0, 1, "none")
    assert records.decode_batches(stored["data"])[0].records[0].value == b"v"
    assert [n["up"] for n in cluster.control.stop_node(2) and cluster.control.nodes()] == [True, False]
    with pytest.raises(ControlError, match="no topic") as info:
        cluster.control.topic("missing")
    assert info.value.status == 404
    with pytest.raises(ControlError, match="stopped"):
        cluster.control.move_leader("t", 0, 2)
