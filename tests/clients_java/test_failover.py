"""The Java clients (kafka-clients 4.3.0) on a 3-node cluster while the control API moves leaders, stops and starts
nodes and pushes errors: the idempotent producer follows the leaders (KIP-951 hints and metadata), the consumer
reads everything, nothing is lost or written twice."""

from __future__ import annotations

import pytest
from support.readback import check_exactly_once, read_all

from kafkamock.testing import start_broker

pytestmark = [pytest.mark.java, pytest.mark.slow]
STREAM_CONFIG = {"reconnect.backoff.ms": "20", "reconnect.backoff.max.ms": "200", "retry.backoff.ms": "20",
                 "metadata.max.age.ms": "1000"}


def test_java_producer_and_consumer_through_leader_moves_and_node_restarts(java_clients):
    sent = 4000
    with start_broker(brokers=3) as cluster:
        cluster.create_topic("jfail", 4, replication_factor=3)
        run = java_clients.start("stream", cluster.bootstrap_servers, {
            "topic": "jfail", "count": sent, "partitions": 4, "value_size": 30, "pace_ms": 1, "progress_every": 100,
            "delivery_timeout_ms": 60000, "config": STREAM_CONFIG})
        try:
            run.wait_progress(800)
            cluster.control.move_leader("jfail", 0, 3)
            cluster.control.push_fault("Produce", "NOT_LEADER_OR_FOLLOWER", count=3)
            run.wait_progress(1600)
            cluster.control.stop_node(2)
            run.wait_progress(2400)
            cluster.control.push_fault("Produce", "REQUEST_TIMED_OUT", count=2, topic="jfail", partition=3)
            cluster.control.start_node(2)
            run.wait_progress(3200)
            cluster.control.stop_node(1)
            result = run.result()
        finally:
            run.kill()
        assert result["failed"] == [] and cluster.control.faults() == []
        acked = {i: (partition, offset) for i, partition, offset in result["acked"]}
        assert len(acked) == sent
        partitions = cluster.control.topic("jfail")["partitions"]
        assert all(p["leader"] in (2, 3) for p in partitions)                    # node 1 is down
        check_exactly_once(read_all(cluster.bootstrap_servers, "jfail", 4), acked, sent)
        consumed = java_clients.consume(cluster.bootstrap_servers, "jfail", partitions=[0, 1, 2, 3], count=sent,
                                        timeout_ms=30000, config=STREAM_CONFIG)
        assert not consumed["timed_out"]
        by_partition: dict[int, list[tuple[int, bytes]]] = {p: [] for p in range(4)}
        for r in consumed["records"]:
            by_partition[r["partition"]].append((r["offset"], r["value"].encode()))
        check_exactly_once(by_partition, acked, sent)
        assert consumed["positions"] == {str(p["partition"]): p["log_end_offset"] for p in partitions}
