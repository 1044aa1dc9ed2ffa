"""A cluster of three nodes with real clients over real sockets: librdkafka producing and consuming while the control
API moves leaders, stops and starts nodes and pushes errors; the same failover driven over HTTP with curl and
through ``kafkamock ctl``; the HTTP contract (shapes and 4xx answers); ``advertised.listeners``.

Records are ``<prefix><i>:...`` values; ``check_streams`` holds the stored log against what each producer was told:
every acknowledged record once, at its acknowledged partition and offset, each producer's records in send order.
The Java clients run the same scenario in ``tests/interop/java/test_failover.py``.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys

import pytest
from client_support import wait_until
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from support.live_clients import PARTITIONS, QUICK_RETRIES, LiveConsumer, PacedProducer, check_streams, read_all
from support.readback import create_topic
from support.serve_process import ServeProcess, free_port

NODE_FIELDS = {"node_id", "host", "port", "up", "rack"}
PARTITION_FIELDS = {"topic", "partition", "leader", "leader_epoch", "replicas", "isr", "log_start_offset",
                    "log_end_offset", "high_watermark", "size_bytes", "segments"}
FAULT_FIELDS = {"id", "api_key", "error_code", "count", "node_id", "topic", "partition", "latency_ms",
                "close_connection", "hits"}
REQUEST_FIELDS = {"time_ms", "node_id", "api_key", "api_name", "api_version", "correlation_id", "client_id",
                  "connection_id", "peer", "listener", "principal"}


# -- clients --------------------------------------------------------------------------------------------------------

def leaders(cluster, topic: str) -> dict[int, tuple[int, int, list[int]]]:
    """{partition: (leader, leader_epoch, isr)} from the Python control API."""
    return {p["partition"]: (p["leader"], p["leader_epoch"], p["isr"]) for p in cluster.control.topic(topic)["partitions"]}


# -- 1. leaders move, nodes stop and start, under a producer and a consumer ----------------------------------------

@pytest.mark.slow
@pytest.mark.kafkamock(brokers=3)
def test_librdkafka_producer_and_live_consumer_follow_leaders_through_moves_stops_and_starts(kafka_broker):
    cluster, control = kafka_broker, kafka_broker.control
    cluster.create_topic("fail", PARTITIONS, replication_factor=3)
    initial = {p["partition"]: p for p in control.topic("fail")["partitions"]}
    assert [p["leader"] for p in initial.values()] == [1, 2, 3, 1, 2, 3]          # round-robin
    assert all(p["replicas"][0] == p["leader"] and sorted(p["isr"]) == [1, 2, 3] for p in initial.values())
    sent = 5000
    live = LiveConsumer(cluster.bootstrap_servers, "fail").start()
    producer = PacedProducer(cluster.bootstrap_servers, "fail", sent, rate=1000, lead=sent // 12).start()
    try:
        producer.wait_acked(sent * 1 // 6)
        before = leaders(cluster, "fail")
        moved0 = control.move_leader("fail", 0, initial[0]["replicas"][1])
        moved1 = control.move_leader("fail", 1, initial[1]["replicas"][2])
        assert (moved0["leader"], moved0["leader_epoch"]) == (initial[0]["replicas"][1], before[0][1] + 1)
        assert (moved1["leader"], moved1["leader_epoch"]) == (initial[1]["replicas"][2], before[1][1] + 1)

        producer.wait_acked(sent * 2 // 6)
        before = leaders(cluster, "fail")
        control.stop_node(2)
        after = leaders(cluster, "fail")
        for p, (leader, epoch, isr) in after.items():
            assert leader != 2 and 2 not in isr
            assert epoch == before[p][1] + (before[p][0] == 2), (p, before[p], after[p])   # a bump where 2 led
        probe = Producer({"bootstrap.servers": cluster.bootstrap_servers, "log_level": 2})
        metadata = probe.list_topics("fail", timeout=10)
        probe.close()
        assert sorted(metadata.brokers) == [1, 3]                                 # the clients' view: 2 is gone
        assert all(2 not in pm.isrs and pm.leader != 2 for pm in metadata.topics["fail"].partitions.values())

        producer.wait_acked(sent * 3 // 6)
        control.start_node(2)
        control.clear_requests()
        after = leaders(cluster, "fail")
        assert all(sorted(isr) == [1, 2, 3] for _, _, isr in after.values())
        assert {p for p, (leader, _, _) in after.items() if leader == 2} == \
               {p for p, info in initial.items() if info["replicas"][0] == 2}     # it took back what it prefers

        producer.wait_acked(sent * 4 // 6)
        produces_at_2 = control.requests(api_key="Produce", node_id=2)
        assert {r["client_id"] for r in produces_at_2} == {"rd-producer"}         # the producer followed back
        control.stop_node(1)                                                      # the controller, too
        assert control.cluster()["controller_id"] == 2

        producer.wait_acked(sent * 5 // 6)
        assert len(producer.acked) < sent, "the producer finished before the last event: slow it down"
        control.start_node(1)
        producer.finish()
        live.wait_for(sent)
    finally:
        producer.close()
        live.close()
    final = control.topic("fail")["partitions"]
    assert all(p["leader"] == p["replicas"][0] and sorted(p["isr"]) == [1, 2, 3] for p in final)   # preferred again
    assert sum(p["leader_epoch"] for p in final) >= 2 + 2 + 2 + 2 + 2           # every event moved leaders
    assert sum(p["log_end_offset"] for p in final) == sent
    check_streams(live.records, {b"r": producer.acked})                           # read while leadership moved
    check_streams(read_all(cluster.bootstrap_servers, "fail", PARTITIONS), {b"r": producer.acked})
    assert not [e for e in live.errors if e.fatal()], live.errors
    for p in final:                     # each batch carries the leader epoch it was appended in, in order
        epochs = [b["partition_leader_epoch"] for b in control.stored_batches("fail", p["partition"], limit=1 << 30)]
        assert epochs == sorted(epochs) and epochs[-1] <= p["leader_epoch"], (p["partition"], epochs[-1])


# -- 2. pushed errors the clients must retry ------------------------------------------------------------------------

def _produce_one_at_a_time(producer: Producer, control, topic: str, first: int, count: int,
                           partitions: int) -> list[dict]:
    """Send records one at a time (each its own Produce request to its partition's leader); the Produce requests
    the cluster logged for them."""
    control.clear_requests()
    reports: list = []
    for i in range(first, first + count):
        producer.produce(topic, value=b"r%d:" % i, partition=i % partitions,
                         on_delivery=lambda err, msg: reports.append(err))
        assert producer.flush(15) == 0
    assert reports == [None] * count
    return control.requests(api_key="Produce")


def _per_node(entries: list[dict]) -> dict[int, int]:
    return {n: sum(1 for e in entries if e["node_id"] == n) for n in (1, 2, 3)}


@pytest.mark.kafkamock(brokers=3)
def test_pushed_produce_errors_are_retried_by_librdkafka(kafka_broker):
    cluster, control = kafka_broker, kafka_broker.control
    cluster.create_topic("faulty", 3, replication_factor=3)
    leader_of = {p: info[0] for p, info in leaders(cluster, "faulty").items()}
    assert sorted(leader_of.values()) == [1, 2, 3]                                # one partition per node
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "client.id": "retrier",
                         "enable.idempotence": True, "acks": "all", "linger.ms": 0, **QUICK_RETRIES})
    try:
        n, sent = 30, 0
        baseline = _produce_one_at_a_time(producer, control, "faulty", sent, n, 3)
        sent += n
        assert len(baseline) == n and _per_node(baseline) == {1: 10, 2: 10, 3: 10}
        assert {(e["api_name"], e["client_id"]) for e in baseline} == {("Produce", "retrier")}

        cases = [
            # (faults, the node whose request count grows or None for "the first requests anywhere")
            ([{"error_code": "NOT_LEADER_OR_FOLLOWER", "count": 3}], None),
            ([{"error_code": "REQUEST_TIMED_OUT", "count": 3}], None),
            ([{"error_code": "NOT_LEADER_OR_FOLLOWER", "count": 2, "node_id": leader_of[1]}], leader_of[1]),
            ([{"error_code": "REQUEST_TIMED_OUT", "count": 2, "topic": "faulty", "partition": 2}], leader_of[2]),
            ([{"error_code": 6, "count": 1, "topic": "faulty", "partition": 0},           # numbers work too
              {"error_code": "REQUEST_TIMED_OUT", "count": 2, "node_id": leader_of[0]}], leader_of[0]),
        ]
        for faults, node in cases:
            for fault in faults:
                pushed = control.push_fault("Produce", **fault)
                assert pushed["api_key"] == 0 and pushed["hits"] == 0 and pushed["count"] == fault["count"]
            extra = sum(f["count"] for f in faults)
            produces = _produce_one_at_a_time(producer, control, "faulty", sent, n, 3)
            sent += n
            assert control.faults() == [], faults                                 # every fault was hit
            assert len(produces) == n + extra, (faults, _per_node(produces))       # each faulted request retried
            if node is not None:
                assert _per_node(produces) == {k: 10 + (extra if k == node else 0) for k in (1, 2, 3)}, faults
            if faults[0]["error_code"] in ("NOT_LEADER_OR_FOLLOWER", 6):
                assert control.requests(api_key="Metadata"), "NOT_LEADER_OR_FOLLOWER made no metadata refresh"

        # The same under a concurrent stream: several partitions per request, one of them faulted.
        cluster.create_topic("faulty6", PARTITIONS, replication_factor=3)
        control.push_fault("Produce", "NOT_LEADER_OR_FOLLOWER", count=3, node_id=2)
        control.push_fault("Produce", "REQUEST_TIMED_OUT", count=3, topic="faulty6", partition=4)
        control.push_fault("Produce", "REQUEST_TIMED_OUT", count=2)
        control.push_fault("Produce", close_connection=True, count=1, node_id=3)   # requests in flight are lost
        control.push_fault("Produce", latency_ms=300, count=2, node_id=1)
        control.clear_requests()
        storm = PacedProducer(cluster.bootstrap_servers, "faulty6", 1500, rate=3000, client_id="storm").start()
        try:
            storm.finish()
        finally:
            storm.close()
        assert control.faults() == []
        assert {r["client_id"] for r in control.requests(api_key="Produce")} == {"storm"}
        check_streams(read_all(cluster.bootstrap_servers, "faulty6", PARTITIONS), {b"r": storm.acked})
    finally:
        producer.close()
    stored = read_all(cluster.bootstrap_servers, "faulty", 3)
    assert sorted(int(v.split(b":")[0][1:]) for entries in stored.values() for _, v in entries) == list(range(sent))


def _read_with_consumer(cluster, topic: str, partitions: int, count: int, client_id: str):
    """Read ``count`` records with a fresh librdkafka consumer assigned to every partition from offset 0:
    ({partition: [(offset, value)]}, the errors it reported, the request log since it started)."""
    cluster.control.clear_requests()
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "client.id": client_id, "group.id": client_id,
                         "enable.auto.commit": False, "fetch.wait.max.ms": 100, "fetch.error.backoff.ms": 20,
                         **QUICK_RETRIES})
    records: dict[int, list[tuple[int, bytes]]] = {p: [] for p in range(partitions)}
    errors: list[KafkaError] = []
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])

        def poll() -> None:
            for m in consumer.consume(500, timeout=0.2):
                if m.error() is None:
                    records[m.partition()].append((m.offset(), m.value()))
                else:
                    errors.append(m.error())
        wait_until(lambda: sum(len(v) for v in records.values()) >= count, timeout=20,
                   what=f"{client_id} to read {count} records", step=poll)
    finally:
        consumer.close()
    return records, errors, cluster.control.requests()


@pytest.mark.kafkamock(brokers=3)
def test_pushed_fetch_errors_are_retried_by_the_librdkafka_consumer(kafka_broker):
    cluster, control = kafka_broker, kafka_broker.control
    cluster.create_topic("fetchy", 3, replication_factor=3)
    leader_of = {p: info[0] for p, info in leaders(cluster, "fetchy").items()}
    producer = PacedProducer(cluster.bootstrap_servers, "fetchy", 600, 3, rate=100000).start()
    producer.finish()
    producer.close()
    acked = {b"r": producer.acked}

    records, errors, log = _read_with_consumer(cluster, "fetchy", 3, 600, "reader-0")
    check_streams(records, acked)
    assert errors == []
    assert {(e["api_name"], e["client_id"]) for e in log if e["api_name"] == "Fetch"} == {("Fetch", "reader-0")}

    # NOT_LEADER_OR_FOLLOWER on the first three Fetch requests, wherever they go: each is answered with the error
    # for its partitions, the consumer refreshes its metadata and fetches again; nothing reaches the application.
    control.push_fault("Fetch", "NOT_LEADER_OR_FOLLOWER", count=3)
    records, errors, log = _read_with_consumer(cluster, "fetchy", 3, 600, "reader-1")
    check_streams(records, acked)
    assert errors == [] and control.faults() == []
    fetches = [i for i, e in enumerate(log) if e["api_name"] == "Fetch"]
    assert len(fetches) >= 3 + 3                        # the three faulted ones, then one with data from each node
    assert any(e["api_name"] == "Metadata" for e in log[fetches[0]:]), "no metadata refresh after the error"
    assert {log[i]["node_id"] for i in fetches[3:]} == {1, 2, 3}                   # fetched again from every leader

    # Only on one node, and only one partition: the others are served meanwhile.
    control.push_fault("Fetch", "NOT_LEADER_OR_FOLLOWER", count=2, node_id=leader_of[0])
    control.push_fault("Fetch", "UNKNOWN_LEADER_EPOCH", count=2, topic="fetchy", partition=1)
    records, errors, log = _read_with_consumer(cluster, "fetchy", 3, 600, "reader-2")
    check_streams(records, acked)
    assert errors == [] and control.faults() == []
    by_node = _per_node([e for e in log if e["api_name"] == "Fetch"])
    assert by_node[leader_of[0]] >= 2 + 1 and by_node[leader_of[1]] >= 2 + 1, by_node

    # REQUEST_TIMED_OUT in a Fetch partition is not an error librdkafka handles quietly: it hands each one to the
    # application as a consumer error (not fatal), backs off and fetches again, so the data is still complete.
    control.push_fault("Fetch", "REQUEST_TIMED_OUT", count=2, topic="fetchy", partition=2)
    records, errors, log = _read_with_consumer(cluster, "fetchy", 3, 600, "reader-3")
    check_streams(records, acked)
    assert control.faults() == []
    assert [e.code() for e in errors] == [KafkaError.REQUEST_TIMED_OUT] * 2 and not any(e.fatal() for e in errors)
    assert _per_node([e for e in log if e["api_name"] == "Fetch"])[leader_of[2]] >= 2 + 1


# -- 3. the same failover driven from outside: curl, then kafkamock ctl ---------------------------------------------

def _curl(url: str, method: str = "GET", body: object | str | None = None) -> tuple[int, object]:
    """curl, as a test in another language would call the control API: (HTTP status, parsed JSON body)."""
    args = ["curl", "-sS", "-X", method, "-w", "\n%{http_code}", url]
    if body is not None:
        args += ["-H", "Content-Type: application/json", "-d", body if isinstance(body, str) else json.dumps(body)]
    out = subprocess.run(args, capture_output=True, text=True, timeout=30, check=True).stdout
    text, _, status = out.rpartition("\n")
    return int(status), json.loads(text) if text else None


def _ok(url: str, method: str = "GET", body: object | None = None, status: int = 200) -> object:
    got, answer = _curl(url, method, body)
    assert got == status, (method, url, got, answer)
    return answer


def _ctl(url: str | None, *args: str, env: dict | None = None) -> object:
    """``kafkamock ctl --control URL ARGS``: its JSON output."""
    command = [sys.executable, "-m", "kafkamock.cli", "ctl", *(["--control", url] if url else []), *args]
    out = subprocess.run(command, capture_output=True, text=True, timeout=60, env={**os.environ, **(env or {})})
    assert out.returncode == 0, (args, out.stderr)
    return json.loads(out.stdout)


def _by_partition(topic: dict) -> dict[int, tuple[int, int, list[int]]]:
    return {p["partition"]: (p["leader"], p["leader_epoch"], p["isr"]) for p in topic["partitions"]}


@pytest.mark.slow
def test_failover_driven_over_http_with_curl():
    with ServeProcess(["--control-port", "0"], brokers=3) as broker:   # the control URL from the ready line
        url = broker.control_url
        assert url and url.startswith("http://127.0.0.1:") and not url.endswith(":0")
        nodes = _ok(f"{url}/v1/nodes")
        assert [(n["node_id"], n["port"], n["up"]) for n in nodes] == [
            (1, broker.port, True), (2, broker.port + 1, True), (3, broker.port + 2, True)]
        create_topic(broker.bootstrap, "ops", 3, replication_factor=3)
        assert _by_partition(_ok(f"{url}/v1/topics/ops")) == {
            0: (1, 0, [1, 2, 3]), 1: (2, 0, [2, 3, 1]), 2: (3, 0, [3, 1, 2])}
        sent = 4000
        producer = PacedProducer(broker.bootstrap, "ops", sent, 3, rate=1000, lead=350).start()
        try:
            producer.wait_acked(700)
            assert _ok(f"{url}/v1/nodes/2/stop", "POST") == {"node_id": 2, "host": "127.0.0.1",
                                                              "port": broker.port + 1, "up": False, "rack": None}
            assert _by_partition(_ok(f"{url}/v1/topics/ops")) == {
                0: (1, 0, [1, 3]), 1: (3, 1, [3, 1]), 2: (3, 0, [3, 1])}           # 2's partition moved to 3
            assert [n["up"] for n in _ok(f"{url}/v1/nodes")] == [True, False, True]

            producer.wait_acked(1400)
            moved = _ok(f"{url}/v1/partitions/ops/0/leader", "POST", {"node_id": 3})
            assert (moved["leader"], moved["leader_epoch"]) == (3, 1)
            fault = _ok(f"{url}/v1/faults", "POST", {"api_key": "Produce", "error_code": "NOT_LEADER_OR_FOLLOWER",
                                                     "count": 2, "node_id": 3}, status=201)
            assert (fault["api_key"], fault["error_code"], fault["count"], fault["node_id"]) == (0, 6, 2, 3)

            producer.wait_acked(2100)
            assert _ok(f"{url}/v1/nodes/2/start", "POST")["up"] is True
            assert _by_partition(_ok(f"{url}/v1/topics/ops")) == {
                0: (3, 1, [1, 2, 3]), 1: (2, 2, [2, 3, 1]), 2: (3, 0, [3, 1, 2])}  # 2 took back partition 1
            _ok(f"{url}/v1/requests", "DELETE")

            producer.wait_acked(2800)
            assert _ok(f"{url}/v1/nodes/3/drop-connections", "POST") == {"dropped": 3}
            assert len(producer.acked) < sent, "the producer finished before the last event: slow it down"
            producer.finish()
        finally:
            producer.close()
        assert _ok(f"{url}/v1/faults") == []                                       # spent on node 3
        topic = _ok(f"{url}/v1/topics/ops")
        assert sum(p["log_end_offset"] for p in topic["partitions"]) == sent
        assert all(p["high_watermark"] == p["log_end_offset"] for p in topic["partitions"])
        check_streams(read_all(broker.bootstrap, "ops", 3), {b"r": producer.acked})
        produce_log = _ok(f"{url}/v1/requests?api_key=Produce")
        assert {(e["node_id"], e["api_name"], e["client_id"]) for e in produce_log} == {
            (2, "Produce", "rd-producer"), (3, "Produce", "rd-producer")}         # node 1 leads nothing now


@pytest.mark.slow
def test_failover_driven_through_the_cli():
    with ServeProcess(["--control-port", "0"], brokers=3) as broker:
        url = broker.control_url
        assert [n["up"] for n in _ctl(url, "nodes")] == [True, True, True]
        create_topic(broker.bootstrap, "cli", 3, replication_factor=3)
        sent = 3000
        producer = PacedProducer(broker.bootstrap, "cli", sent, 3, rate=1000, prefix=b"c", lead=250).start()
        try:
            producer.wait_acked(500)
            assert _ctl(url, "stop-node", "1")["up"] is False
            topic = _ctl(url, "topics", "cli")
            assert _by_partition(topic)[0] == (2, 1, [2, 3])                      # the next in-sync replica
            assert all(1 not in p["isr"] for p in topic["partitions"])

            producer.wait_acked(1000)
            moved = _ctl(url, "move-leader", "cli", "2", "2")
            assert (moved["partition"], moved["leader"], moved["leader_epoch"]) == (2, 2, 1)
            faults = [_ctl(url, "fault", "Produce", "--error", "NOT_LEADER_OR_FOLLOWER", "--count", "2", "--node", "2"),
                      _ctl(url, "fault", "0", "--error", "7", "--count", "2", "--topic", "cli", "--partition", "1")]
            assert [(f["node_id"], f["topic"], f["partition"], f["error_code"]) for f in faults] == [
                (2, None, None, 6), (None, "cli", 1, 7)]

            producer.wait_acked(1500)
            assert _ctl(None, "start-node", "1", env={"KAFKAMOCK_CONTROL": url})["up"] is True   # $KAFKAMOCK_CONTROL
            assert _by_partition(_ctl(url, "topics", "cli")) == {
                0: (1, 2, [1, 2, 3]), 1: (2, 0, [2, 3, 1]), 2: (2, 1, [3, 1, 2])}

            producer.wait_acked(2000)
            assert _ctl(url, "drop-connections", "2") == {"dropped": 2}
            assert len(producer.acked) < sent, "the producer finished before the last event: slow it down"
            producer.finish()
        finally:
            producer.close()
        assert _ctl(url, "clear-faults") == {"cleared": 0}                        # both were spent
        (listed,) = [t for t in _ctl(url, "topics") if t["name"] == "cli"]
        assert sum(p["log_end_offset"] for p in listed["partitions"]) == sent
        check_streams(read_all(broker.bootstrap, "cli", 3), {b"c": producer.acked})
        at_2 = _ctl(url, "requests", "--api", "Produce", "--node", "2")
        assert at_2 and {(e["node_id"], e["api_key"], e["client_id"]) for e in at_2} == {(2, 0, "rd-producer")}
        out = subprocess.run([sys.executable, "-m", "kafkamock.cli", "ctl", "--control", url, "stop-node", "7"],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode != 0 and "404" in out.stderr and "no node 7" in out.stderr


# -- 4. the HTTP contract -------------------------------------------------------------------------------------------

@pytest.mark.kafkamock(brokers=3, control_port=0)
def test_each_http_endpoint_answers_with_its_documented_shape(kafka_broker):
    url = kafka_broker.control_url
    assert url and url.startswith("http://127.0.0.1:")
    bootstrap = kafka_broker.bootstrap_servers
    create_topic(bootstrap, "shape", 2, replication_factor=3)
    producer = Producer({"bootstrap.servers": bootstrap, "client.id": "shape-client", "enable.idempotence": True,
                         "linger.ms": 100})
    for i in range(4):
        producer.produce("shape", value=b"r%d:" % i, partition=i % 2)
    assert producer.flush(10) == 0

    nodes = _ok(f"{url}/v1/nodes")
    assert all(set(n) == NODE_FIELDS for n in nodes) and [n["node_id"] for n in nodes] == [1, 2, 3]
    cluster = _ok(f"{url}/v1/cluster")
    assert set(cluster) == {"cluster_id", "controller_id", "nodes", "storage"}
    assert (cluster["controller_id"], cluster["nodes"], cluster["storage"]) == (1, nodes, "memory")

    topics = _ok(f"{url}/v1/topics")
    assert [t["name"] for t in topics] == ["shape"]
    topic = _ok(f"{url}/v1/topics/shape")
    assert topics == [topic] and set(topic) == {"name", "topic_id", "internal", "configs", "partitions"}
    assert topic["internal"] is False and len(topic["topic_id"]) == 22
    assert all(set(p) == PARTITION_FIELDS for p in topic["partitions"])
    assert [(p["partition"], p["log_start_offset"], p["log_end_offset"]) for p in topic["partitions"]] == [
        (0, 0, 2), (1, 0, 2)]

    batches = _ok(f"{url}/v1/partitions/shape/1/batches")
    assert [(b["base_offset"], b["last_offset"], b["magic"]) for b in batches] == [(0, 1, 2)]
    data = base64.b64decode(batches[0]["data"])
    assert len(data) == batches[0]["size"] and data[16] == 2 and b"r1:" in data and b"r3:" in data
    assert batches[0]["producer_id"] >= 0 and batches[0]["base_sequence"] == 0 and batches[0]["record_count"] == 2
    assert _ok(f"{url}/v1/partitions/shape/1/batches?from=1&limit=0") == []

    log = _ok(f"{url}/v1/requests")
    assert log and all(set(e) == REQUEST_FIELDS for e in log)
    produces = _ok(f"{url}/v1/requests?api_key=Produce")
    assert produces == _ok(f"{url}/v1/requests?api_key=0") == _ok(f"{url}/v1/requests?api_key=produce")
    leaders_ = {p["leader"] for p in topic["partitions"]}
    assert {(e["node_id"], e["api_name"], e["client_id"]) for e in produces} == {
        (n, "Produce", "shape-client") for n in leaders_}
    assert all(e["peer"].startswith("127.0.0.1:") and e["api_version"] >= 3 for e in produces)
    first = sorted(leaders_)[0]
    assert _ok(f"{url}/v1/requests?api_key=Produce&node_id={first}") == [e for e in produces if e["node_id"] == first]
    apis = {e["api_name"] for e in log if e["client_id"] == "shape-client"}
    assert {"ApiVersions", "Metadata", "InitProducerId", "Produce"} <= apis, apis

    fault = _ok(f"{url}/v1/faults", "POST", {"api_key": "Fetch", "latency_ms": 50}, status=201)
    assert set(fault) == FAULT_FIELDS and (fault["api_key"], fault["error_code"], fault["count"]) == (1, 0, 1)
    assert _ok(f"{url}/v1/faults") == [fault]
    assert _ok(f"{url}/v1/faults", "DELETE") == {"cleared": 1} and _ok(f"{url}/v1/faults") == []

    moved = _ok(f"{url}/v1/partitions/shape/0/leader", "POST", {"node_id": 3})
    assert set(moved) == PARTITION_FIELDS and (moved["leader"], moved["leader_epoch"]) == (3, 1)
    assert _ok(f"{url}/v1/nodes/2/stop", "POST") == {**nodes[1], "up": False}
    assert _ok(f"{url}/v1/nodes/2/stop", "POST")["up"] is False                   # stopping twice is fine
    assert _ok(f"{url}/v1/nodes/2/start", "POST") == nodes[1]
    assert _ok(f"{url}/v1/nodes/1/drop-connections", "POST") == {"dropped": 1}
    cleared = _ok(f"{url}/v1/requests", "DELETE")
    assert set(cleared) == {"cleared"} and cleared["cleared"] >= len(log)
    assert _ok(f"{url}/v1/requests") == []
    producer.close()


@pytest.mark.kafkamock(brokers=2, control_port=0)
def test_the_http_contract_answers_bad_requests_with_4xx_json(kafka_broker):
    url = kafka_broker.control_url
    kafka_broker.create_topic("c", 1, replication_factor=2)
    fault = f"{url}/v1/faults"
    for method, path, body, status, words in [
        ("POST", "/v1/nodes/9/stop", None, 404, "no node 9"),
        ("POST", "/v1/nodes/9/start", None, 404, "no node 9"),
        ("POST", "/v1/nodes/9/drop-connections", None, 404, "no node 9"),
        ("POST", "/v1/nodes/x/stop", None, 400, "node_id must be an integer"),
        ("GET", "/v1/topics/nope", None, 404, "no topic 'nope'"),
        ("GET", "/v1/partitions/nope/0/batches", None, 404, "no partition nope-0"),
        ("GET", "/v1/partitions/c/1/batches", None, 404, "no partition c-1"),
        ("GET", "/v1/partitions/c/0/batches?limit=many", None, 400, "limit must be an integer"),
        ("POST", "/v1/partitions/c/5/leader", {"node_id": 1}, 404, "no partition c-5"),
        ("POST", "/v1/partitions/nope/0/leader", {"node_id": 1}, 404, "no partition nope-0"),
        ("POST", "/v1/partitions/c/0/leader", {"node_id": 9}, 404, "no node 9"),
        ("POST", "/v1/partitions/c/0/leader", {}, 400, "node_id"),
        ("POST", "/v1/partitions/c/0/leader", "{not json", 400, "not JSON"),
        ("POST", "/v1/faults", "{not json", 400, "not JSON"),
        ("POST", "/v1/faults", "[1, 2]", 400, "must be a JSON object"),
        ("POST", "/v1/faults", {}, 400, "needs api_key"),
        ("POST", "/v1/faults", {"api_key": 0, "error_code": 6, "colour": "red"}, 400, "unknown field(s) ['colour']"),
        ("POST", "/v1/faults", {"api_key": 0}, 400, "needs an error_code, a latency_ms or close_connection"),
        ("POST", "/v1/faults", {"api_key": 0, "error_code": "NONE"}, 400, "needs an error_code"),
        ("POST", "/v1/faults", {"api_key": "Nope", "error_code": 6}, 400, "unknown API 'Nope'"),
        ("POST", "/v1/faults", {"api_key": 0, "error_code": "NOPE"}, 400, "unknown error code 'NOPE'"),
        ("POST", "/v1/faults", {"api_key": 0, "error_code": 6, "count": 0}, 400, "count must be at least 1"),
        ("POST", "/v1/faults", {"api_key": 0, "error_code": 6, "node_id": 9}, 404, "no node 9"),
        ("POST", "/v1/faults", {"api_key": 0, "error_code": 6, "partition": 0}, 400, "a partition needs a topic"),
        ("POST", "/v1/faults", {"api_key": 0, "latency_ms": 5, "topic": "c"}, 400, "whole requests"),
        ("POST", "/v1/faults", {"api_key": 0, "error_code": 6, "close_connection": "yes"}, 400, "true or false"),
        ("GET", "/v1/requests?api_key=Nope", None, 400, "unknown API 'Nope'"),
        ("GET", "/v1/requests?node_id=x", None, 400, "node_id must be an integer"),
        ("GET", "/v1/no/such/route", None, 404, "Not Found"),
        ("DELETE", "/v1/nodes", None, 405, "Method Not Allowed"),
    ]:
        got, answer = _curl(url + path, method, body)
        assert got == status and isinstance(answer, dict) and set(answer) == {"error"}, (path, body, got, answer)
        assert words in answer["error"], (path, body, answer)
    assert _ok(fault) == []                                                       # nothing bad was kept
    _ok(f"{url}/v1/nodes/2/stop", "POST")
    got, answer = _curl(f"{url}/v1/partitions/c/0/leader", "POST", {"node_id": 2})
    assert got == 409 and "node 2 is stopped" in answer["error"]
    assert kafka_broker.control.topic("c")["partitions"][0]["leader"] == 1        # nothing moved


# -- 5. advertised.listeners ----------------------------------------------------------------------------------------

def test_advertised_listeners_name_the_host_clients_must_use():
    port = free_port(2)
    with ServeProcess(["--host", "0.0.0.0", "--config", f"advertised.listeners=PLAINTEXT://localhost:{port}"],
                      brokers=2, port=port) as broker:
        assert broker.bootstrap == f"localhost:{port},localhost:{port + 1}"
        bootstrap = f"127.0.0.1:{port}"                                          # not the advertised name
        producer = Producer({"bootstrap.servers": bootstrap, "client.id": "adv", "enable.idempotence": True})
        metadata = producer.list_topics(timeout=10)
        assert sorted((b.id, b.host, b.port) for b in metadata.brokers.values()) == [
            (1, "localhost", port), (2, "localhost", port + 1)]
        create_topic(bootstrap, "adv", 2, replication_factor=2)
        for i in range(10):
            producer.produce("adv", value=b"r%d:" % i, partition=i % 2)
        assert producer.flush(10) == 0
        producer.close()
        stored = read_all(f"127.0.0.1:{port + 1}", "adv", 2)
        assert sorted(int(v[1:].split(b":")[0]) for values in stored.values() for _, v in values) == list(range(10))
