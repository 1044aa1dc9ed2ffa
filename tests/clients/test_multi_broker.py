"""Several brokers and the control API with real clients: librdkafka producing and consuming through leader moves,
node stops and starts and pushed errors; the same driven over HTTP with curl and through ``kafkamock ctl``; the
HTTP contract; ``advertised.listeners``."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import pytest
from client_support import wait_until
from confluent_kafka import Consumer, Producer, TopicPartition
from support.readback import check_exactly_once, create_topic, read_all
from support.serve_process import ServeProcess

from kafkamock.testing import start_broker

pytestmark = pytest.mark.slow
PARTITIONS = 6


class Storm:
    """An idempotent librdkafka producer sending ``count`` records ("<i>:...", round-robin over partitions) from a
    thread, recording what each delivery report said."""

    def __init__(self, bootstrap: str, topic: str, count: int, partitions: int = PARTITIONS, pace_every: int = 100):
        self.topic, self.count, self.partitions, self.pace_every = topic, count, partitions, pace_every
        self.acked: dict[int, tuple[int, int]] = {}
        self.errors: list[str] = []
        self.lock = threading.Lock()
        self.producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all",
                                  "linger.ms": 2, "message.timeout.ms": 60000, "retry.backoff.ms": 20,
                                  "retry.backoff.max.ms": 200, "reconnect.backoff.ms": 20,
                                  "reconnect.backoff.max.ms": 200, "topic.metadata.refresh.interval.ms": 1000,
                                  "client.id": "storm",
                                  "log_level": 2})      # stopped nodes refuse connections: that is the point
        self.thread = threading.Thread(target=self._run)

    def _delivered(self, err, msg) -> None:
        with self.lock:
            if err is not None:
                self.errors.append(str(err))
            else:
                self.acked[int(msg.value().split(b":")[0])] = (msg.partition(), msg.offset())

    def _run(self) -> None:
        for i in range(self.count):
            while True:
                try:
                    self.producer.produce(self.topic, value=b"%d:%s" % (i, b"x" * 30), partition=i % self.partitions,
                                          on_delivery=self._delivered)
                    break
                except BufferError:
                    self.producer.poll(0.05)
            self.producer.poll(0)
            if i % self.pace_every == 0:
                time.sleep(0.01)
        self.producer.flush(60)

    def start(self) -> Storm:
        self.thread.start()
        return self

    def wait_acked(self, n: int) -> None:
        wait_until(lambda: len(self.acked) >= n, timeout=60, what=f"{n} acknowledgements",
                   step=lambda: time.sleep(0.01))

    def finish(self) -> None:
        self.thread.join(timeout=90)
        assert not self.thread.is_alive(), "the producer did not finish"
        assert not self.errors, self.errors[:3]
        assert len(self.acked) == self.count


def test_librdkafka_follows_leaders_through_moves_stops_and_starts():
    with start_broker(brokers=3) as cluster:
        cluster.create_topic("fail", PARTITIONS, replication_factor=3)
        consumed: dict[int, list[tuple[int, bytes]]] = {p: [] for p in range(PARTITIONS)}
        done = threading.Event()
        consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": "live",
                             "enable.auto.commit": False, "fetch.wait.max.ms": 100,
                             "topic.metadata.refresh.interval.ms": 1000, "reconnect.backoff.ms": 20,
                             "reconnect.backoff.max.ms": 200})
        consumer.assign([TopicPartition("fail", p, 0) for p in range(PARTITIONS)])

        def consume():
            while not done.is_set():
                for m in consumer.consume(500, timeout=0.1):
                    if m.error() is None:
                        consumed[m.partition()].append((m.offset(), m.value()))
        reader = threading.Thread(target=consume)
        reader.start()
        storm = Storm(cluster.bootstrap_servers, "fail", 6000).start()
        try:
            storm.wait_acked(1000)
            cluster.control.move_leader("fail", 0, 2)
            cluster.control.move_leader("fail", 1, 3)
            storm.wait_acked(2000)
            cluster.control.stop_node(2)
            storm.wait_acked(3000)
            cluster.control.start_node(2)
            storm.wait_acked(4000)
            cluster.control.stop_node(1)                         # the controller, too
            storm.wait_acked(5000)
            cluster.control.start_node(1)
            storm.finish()
            total = lambda: sum(len(v) for v in consumed.values())  # noqa: E731
            wait_until(lambda: total() >= storm.count, timeout=60, what="the live consumer caught up",
                       step=lambda: time.sleep(0.05))
        finally:
            done.set()
            reader.join(timeout=10)
            consumer.close()
        partitions = cluster.control.topic("fail")["partitions"]
        assert [p["leader_epoch"] > 0 for p in partitions].count(True) >= 4      # leadership really moved
        assert all(sorted(p["isr"]) == [1, 2, 3] for p in partitions)
        check_exactly_once(consumed, storm.acked, storm.count)                    # the consumer that ran throughout
        check_exactly_once(read_all(cluster.bootstrap_servers, "fail", PARTITIONS), storm.acked, storm.count)


def test_pushed_errors_are_retried_by_librdkafka():
    with start_broker(brokers=3) as cluster:
        cluster.create_topic("faulty", 3, replication_factor=3)
        leader0 = cluster.control.topic("faulty")["partitions"][0]["leader"]
        cluster.control.push_fault("Produce", "NOT_LEADER_OR_FOLLOWER", count=3, node_id=leader0)
        cluster.control.push_fault("Produce", "REQUEST_TIMED_OUT", count=3, topic="faulty", partition=1)
        cluster.control.clear_requests()
        storm = Storm(cluster.bootstrap_servers, "faulty", 1500, partitions=3).start()
        storm.finish()
        assert cluster.control.faults() == []                                      # every fault was spent
        produces = cluster.control.requests(api_key="Produce")
        assert len(produces) >= 6 + 3 and {r["client_id"] for r in produces} == {"storm"}
        check_exactly_once(read_all(cluster.bootstrap_servers, "faulty", 3), storm.acked, storm.count)
        # Fetch: the consumer retries through errors too.
        cluster.control.push_fault("Fetch", "NOT_LEADER_OR_FOLLOWER", count=2)
        cluster.control.push_fault("Fetch", "UNKNOWN_LEADER_EPOCH", count=2, topic="faulty", partition=2)
        check_exactly_once(read_all(cluster.bootstrap_servers, "faulty", 3), storm.acked, storm.count)
        assert cluster.control.faults() == []


def _curl(*args: str) -> tuple[int, object]:
    """curl as a non-Python client would call the control API: (HTTP status, parsed JSON body)."""
    out = subprocess.run(["curl", "-sS", "-w", "\n%{http_code}", *args], capture_output=True, text=True, timeout=30,
                         check=True).stdout
    body, _, status = out.rpartition("\n")
    return int(status), json.loads(body) if body else None


def _ctl(url: str, *args: str) -> object:
    out = subprocess.run([sys.executable, "-m", "kafkamock.cli", "ctl", "--control", url, *args],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_failover_driven_over_http_with_curl_and_through_the_cli():
    with ServeProcess([], brokers=3, control=True) as broker:
        url = broker.control_url
        assert url and url.startswith("http://127.0.0.1:")
        create_topic(broker.bootstrap, "ops", 3, replication_factor=3)
        status, fault = _curl("-X", "POST", f"{url}/v1/faults", "-H", "Content-Type: application/json",
                              "-d", '{"api_key": 0, "error_code": 6, "count": 2, "node_id": 1}')
        assert status == 201 and (fault["api_key"], fault["error_code"], fault["count"]) == (0, 6, 2)
        status, nodes = _curl(f"{url}/v1/nodes")
        assert status == 200 and [(n["node_id"], n["up"]) for n in nodes] == [(1, True), (2, True), (3, True)]
        storm = Storm(broker.bootstrap, "ops", 4000, partitions=3).start()
        storm.wait_acked(1000)
        status, node = _curl("-X", "POST", f"{url}/v1/nodes/2/stop")                      # curl
        assert status == 200 and node == {"node_id": 2, "host": "127.0.0.1", "port": broker.port + 1,
                                          "up": False, "rack": None}
        storm.wait_acked(2000)
        moved = _ctl(url, "move-leader", "ops", "2", "1")                                # the CLI
        assert moved["leader"] == 1 and moved["partition"] == 2
        assert _ctl(url, "start-node", "2")["up"] is True
        storm.finish()
        status, topic = _curl(f"{url}/v1/topics/ops")
        assert status == 200
        leaders = [(p["partition"], p["leader"], sorted(p["isr"])) for p in topic["partitions"]]
        assert leaders == [(0, 1, [1, 2, 3]), (1, 2, [1, 2, 3]), (2, 1, [1, 2, 3])]
        assert all(p["leader_epoch"] >= 1 for p in topic["partitions"][1:])
        assert sum(p["log_end_offset"] for p in topic["partitions"]) == storm.count
        check_exactly_once(read_all(broker.bootstrap, "ops", 3), storm.acked, storm.count)
        status, log = _curl(f"{url}/v1/requests?api_key=Produce&node_id=1")
        assert status == 200 and log and {(e["node_id"], e["api_name"], e["client_id"]) for e in log} == {
            (1, "Produce", "storm")}
        assert _curl(f"{url}/v1/faults") == (200, [])                                 # spent on node 1
        assert _ctl(url, "clear-faults") == {"cleared": 0}


def test_the_http_contract_answers_bad_requests_with_4xx_json():
    with ServeProcess([], brokers=2, control=True) as broker:
        url = broker.control_url
        create_topic(broker.bootstrap, "c", 1)
        for args, status, words in [
            ((f"{url}/v1/nodes/9/stop", "-X", "POST"), 404, "no node 9"),
            ((f"{url}/v1/topics/nope",), 404, "no topic"),
            ((f"{url}/v1/partitions/c/5/leader", "-X", "POST", "-d", '{"node_id": 1}'), 404, "no partition c-5"),
            ((f"{url}/v1/partitions/c/0/leader", "-X", "POST", "-d", "{}"), 400, "node_id"),
            ((f"{url}/v1/faults", "-X", "POST", "-d", "{not json"), 400, "not JSON"),
            ((f"{url}/v1/faults", "-X", "POST", "-d", '{"api_key": 0, "error_code": 6, "colour": "red"}'), 400,
             "unknown field"),
            ((f"{url}/v1/faults", "-X", "POST", "-d", '{"api_key": 0}'), 400, "needs an error_code"),
            ((f"{url}/v1/faults", "-X", "POST", "-d", '{"api_key": "Nope", "error_code": 6}'), 400, "unknown API"),
            ((f"{url}/v1/no/such/route",), 404, "Not Found"),
        ]:
            got, body = _curl(*args)
            assert got == status and words in body["error"], (args, got, body)
        got, faults = _curl(f"{url}/v1/faults")
        assert (got, faults) == (200, [])
        got, cluster = _curl(f"{url}/v1/cluster")
        assert got == 200 and cluster["controller_id"] == 1 and cluster["storage"] == "memory"
        got, batches = _curl(f"{url}/v1/partitions/c/0/batches")
        assert (got, batches) == (200, [])
        out = subprocess.run([sys.executable, "-m", "kafkamock.cli", "ctl", "--control", url, "stop-node", "7"],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode != 0 and "404" in out.stderr and "no node 7" in out.stderr


def test_advertised_listeners_name_the_host_clients_must_use():
    from support.serve_process import free_port

    port = free_port(2)
    with ServeProcess(["--config", f"advertised.listeners=PLAINTEXT://localhost:{port}"], brokers=2, port=port) \
            as broker:
        assert broker.bootstrap == f"localhost:{port},localhost:{port + 1}"
        producer = Producer({"bootstrap.servers": f"127.0.0.1:{port}"})
        metadata = producer.list_topics(timeout=10)
        assert sorted((b.id, b.host, b.port) for b in metadata.brokers.values()) == [
            (1, "localhost", port), (2, "localhost", port + 1)]
        create_topic(f"127.0.0.1:{port}", "adv", 2, replication_factor=2)
        for p in range(2):
            producer.produce("adv", value=b"%d:x" % p, partition=p)
        assert producer.flush(10) == 0
        stored = read_all(f"127.0.0.1:{port + 1}", "adv", 2)
        assert sorted(v for values in stored.values() for _, v in values) == [b"0:x", b"1:x"]
