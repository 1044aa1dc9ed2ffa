"""The Java clients (kafka-clients 4.3.1) on a three-node cluster, side by side with librdkafka: while the control API
moves leaders, stops and starts nodes and pushes errors, the idempotent producers follow the leaders (KIP-951 hints,
metadata refreshes) and the consumers read everything; nothing is lost, written twice or reordered.

Java's ``stream`` scenario sends ``v<i>:...`` values, the librdkafka producer here ``r<i>:...``, into the same
partitions, so ``check_streams`` can hold the log against what each producer was told.
"""

from __future__ import annotations

import pytest
from support.live_clients import PARTITIONS, LiveConsumer, PacedProducer, check_streams, read_all

pytestmark = [pytest.mark.java, pytest.mark.slow]
JAVA_CONFIG = {"reconnect.backoff.ms": "20", "reconnect.backoff.max.ms": "200", "retry.backoff.ms": "20",
               "retry.backoff.max.ms": "200"}


def java_records(result: dict, partitions: int) -> dict[int, list[tuple[int, bytes]]]:
    """The Java ``consume`` scenario's records as {partition: [(offset, value)]}."""
    out: dict[int, list[tuple[int, bytes]]] = {p: [] for p in range(partitions)}
    for r in result["records"]:
        out[r["partition"]].append((r["offset"], r["value"].encode()))
    return out


def java_acked(result: dict, sent: int) -> dict[int, tuple[int, int]]:
    assert result["failed"] == [], result["failed"][:3]
    acked = {i: (partition, offset) for i, partition, offset in result["acked"]}
    assert len(acked) == len(result["acked"]) == sent
    return acked


@pytest.mark.kafkamock(brokers=3)
def test_java_and_librdkafka_clients_follow_leaders_through_moves_stops_and_starts(kafka_broker, java_clients):
    cluster, control, bootstrap = kafka_broker, kafka_broker.control, kafka_broker.bootstrap_servers
    cluster.create_topic("mixed", PARTITIONS, replication_factor=3)
    initial = {p["partition"]: p for p in control.topic("mixed")["partitions"]}
    sent = 4000                                      # from each producer, into the same six partitions
    # Two consumers read while it all happens: the Java one (a scenario JVM in the background) and librdkafka's.
    java_reader = java_clients.start("consume", bootstrap, {
        "topic": "mixed", "partitions": list(range(PARTITIONS)), "seek": "beginning", "count": 2 * sent,
        "timeout_ms": 40000, "config": JAVA_CONFIG})
    live = LiveConsumer(bootstrap, "mixed").start()
    java = java_clients.start("stream", bootstrap, {
        "topic": "mixed", "count": sent, "partitions": PARTITIONS, "value_size": 24, "pace_ms": 1,
        "progress_every": 100, "delivery_timeout_ms": 45000, "config": JAVA_CONFIG})
    # librdkafka stays within 400 records of the JVM, so neither finishes before the last event however busy the
    # machine is.
    rd = PacedProducer(bootstrap, "mixed", sent, rate=900, leash=lambda: java.acked + 400)

    def reach(fraction: float) -> None:
        """Both producers have had ``fraction`` of their records acknowledged."""
        java.wait_progress(int(sent * fraction), timeout=30)
        rd.wait_acked(int(sent * fraction))

    try:
        java.wait_progress(100, timeout=30)          # the JVM is up and sending
        rd.start()
        reach(1 / 6)
        assert control.move_leader("mixed", 0, initial[0]["replicas"][1])["leader_epoch"] == 1
        assert control.move_leader("mixed", 3, initial[3]["replicas"][2])["leader_epoch"] == 1
        reach(2 / 6)
        control.stop_node(2)
        assert all(p["leader"] != 2 and 2 not in p["isr"] for p in control.topic("mixed")["partitions"])
        reach(3 / 6)
        control.start_node(2)
        control.clear_requests()
        reach(4 / 6)
        # Node 2 took back the partitions it prefers, and both producers went back to it.
        assert {r["client_id"] for r in control.requests(api_key="Produce", node_id=2)} == {
            "scenario-stream", "rd-producer"}
        control.stop_node(1)                         # the controller
        reach(5 / 6)
        assert java.acked < sent and len(rd.acked) < sent, "a producer finished before the last event"
        control.start_node(1)
        acked = {b"v": java_acked(java.result(), sent), b"r": rd.finish()}
        reader = java_reader.result()
        live.wait_for(2 * sent)
    finally:
        java.kill()
        java_reader.kill()
        rd.close()
        live.close()
    final = control.topic("mixed")["partitions"]
    assert all(p["leader"] == p["replicas"][0] and sorted(p["isr"]) == [1, 2, 3] for p in final)
    assert sum(p["log_end_offset"] for p in final) == 2 * sent
    producers = set()
    for p in final:                     # each batch carries the leader epoch it was appended in, in order
        batches = control.stored_batches("mixed", p["partition"], limit=1 << 30)
        epochs = [b["partition_leader_epoch"] for b in batches]
        assert epochs == sorted(epochs) and epochs[-1] <= p["leader_epoch"], (p["partition"], epochs[-1])
        producers |= {(b["producer_id"], b["producer_epoch"]) for b in batches}
    assert len(producers) == 2, producers   # each producer kept its id and epoch through every move (no reset)
    assert not reader["timed_out"]
    check_streams(java_records(reader, PARTITIONS), acked)                       # Java, read during the moves
    check_streams(live.records, acked)                                           # librdkafka, the same
    assert not [e for e in live.errors if e.fatal()], live.errors
    # Afterwards, from a fresh start, with both clients again.
    check_streams(read_all(bootstrap, "mixed", PARTITIONS), acked)
    again = java_clients.consume(bootstrap, "mixed", partitions=range(PARTITIONS), count=2 * sent,
                                 timeout_ms=20000, config=JAVA_CONFIG)
    assert not again["timed_out"]
    check_streams(java_records(again, PARTITIONS), acked)
    assert again["positions"] == {str(p["partition"]): p["log_end_offset"] for p in final}


def _per_node(entries: list[dict]) -> dict[int, int]:
    return {n: sum(1 for e in entries if e["node_id"] == n) for n in (1, 2, 3)}


@pytest.mark.kafkamock(brokers=3)
def test_java_clients_retry_pushed_produce_and_fetch_errors(kafka_broker, java_clients):
    cluster, control, bootstrap = kafka_broker, kafka_broker.control, kafka_broker.bootstrap_servers
    cluster.create_topic("jfaults", 3, replication_factor=3)
    leader_of = {p["partition"]: p["leader"] for p in control.topic("jfaults")["partitions"]}
    n = 12

    def produce_one_at_a_time(first: int, config: dict | None = None) -> list[dict]:
        """Records ``v<first>``.. sent one flush each (one Produce request each); the Produce requests logged."""
        control.clear_requests()
        result = java_clients.produce(bootstrap, "jfaults", batches=[
            [{"key": None, "value": f"v{i}:", "partition": i % 3}] for i in range(first, first + n)],
            config={**JAVA_CONFIG, **(config or {})})
        assert [m["offset"] for m in result["metadata"]] == [first // 3 + k // 3 for k in range(n)]
        return control.requests(api_key="Produce")

    baseline = produce_one_at_a_time(0)
    assert len(baseline) == n and _per_node(baseline) == {1: 4, 2: 4, 3: 4}
    assert {e["client_id"] for e in baseline} == {"scenario-producer"}
    sent = n
    for faults, node in [
        ([{"error_code": "NOT_LEADER_OR_FOLLOWER", "count": 3}], None),
        ([{"error_code": "REQUEST_TIMED_OUT", "count": 2, "node_id": leader_of[1]}], leader_of[1]),
        ([{"error_code": "NOT_LEADER_OR_FOLLOWER", "count": 2, "topic": "jfaults", "partition": 2}], leader_of[2]),
    ]:
        for fault in faults:
            control.push_fault("Produce", **fault)
        produces = produce_one_at_a_time(sent)
        sent += n
        extra = sum(f["count"] for f in faults)
        assert control.faults() == [] and len(produces) == n + extra, (faults, _per_node(produces))
        if node is not None:
            assert _per_node(produces) == {k: 4 + (extra if k == node else 0) for k in (1, 2, 3)}, faults

    # The consumer: NOT_LEADER_OR_FOLLOWER and UNKNOWN_LEADER_EPOCH on Fetch make it refresh metadata and fetch again.
    def consume(config: dict | None = None) -> tuple[dict, list[dict]]:
        control.clear_requests()
        result = java_clients.consume(bootstrap, "jfaults", partitions=[0, 1, 2], count=sent, timeout_ms=20000,
                                      config={**JAVA_CONFIG, **(config or {})})
        assert not result["timed_out"]
        check_streams(java_records(result, 3), {b"v": {i: (i % 3, i // 3) for i in range(sent)}})
        return result, control.requests(api_key="Fetch")

    _, quiet = consume()
    control.push_fault("Fetch", "NOT_LEADER_OR_FOLLOWER", count=3)
    control.push_fault("Fetch", "UNKNOWN_LEADER_EPOCH", count=2, topic="jfaults", partition=1)
    _, faulted = consume()
    assert control.faults() == []
    assert len(faulted) >= 3 + 3, (len(quiet), len(faulted))        # the faulted ones, then one from each leader
    assert {e["client_id"] for e in faulted} == {"scenario-consumer"}
    assert _per_node(faulted)[leader_of[1]] >= 2 + 1

    # REQUEST_TIMED_OUT in a Fetch partition is not retried by the Java consumer: no broker sends it there, and
    # FetchCollector throws IllegalStateException("Unexpected error code 7 ...") for any code it does not know.
    from support.java_clients import ScenarioError

    control.push_fault("Fetch", "REQUEST_TIMED_OUT", count=1, topic="jfaults", partition=0)
    with pytest.raises(ScenarioError, match="Unexpected error code 7"):
        java_clients.consume(bootstrap, "jfaults", partitions=[0, 1, 2], count=sent, timeout_ms=10000,
                             config=JAVA_CONFIG)
    assert read_all(bootstrap, "jfaults", 3) == {p: [(o, b"v%d:" % (3 * o + p)) for o in range(sent // 3)]
                                                  for p in range(3)}
