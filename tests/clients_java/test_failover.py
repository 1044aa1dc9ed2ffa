"""The Java clients (kafka-clients 4.3.1) on a three-node cluster, side by side with librdkafka: while the control API
moves leaders, stops and starts nodes and pushes errors, the idempotent producers follow the leaders (KIP-951 hints,
metadata refreshes) and the consumers read everything; nothing is lost, written twice or reordered.

Java's ``stream`` scenario sends ``v<i>:...`` values, the librdkafka producer here ``r<i>:...``, into the same
partitions, so ``check_streams`` can hold the log against what each producer was told.
"""

from __future__ import annotations

import threading
import time

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition

pytestmark = [pytest.mark.java, pytest.mark.slow]
PARTITIONS = 6
JAVA_CONFIG = {"reconnect.backoff.ms": "20", "reconnect.backoff.max.ms": "200", "retry.backoff.ms": "20",
               "retry.backoff.max.ms": "200"}
QUICK_RETRIES = {"retry.backoff.ms": 20, "retry.backoff.max.ms": 200, "reconnect.backoff.ms": 20,
                 "reconnect.backoff.max.ms": 200}


def wait_until(condition, timeout: float, what: str, step=None) -> None:
    """Poll ``condition`` (calling ``step`` between tries) until it holds; fail at the deadline."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {timeout} s waiting for {what}"
        if step is not None:
            step()
        else:
            time.sleep(0.01)   # the polling interval of a deadline loop, not a stand-in for an event


class PacedProducer:
    """An idempotent librdkafka producer (acks=all) sending ``count`` records ``r<i>:...`` round-robin over the
    partitions from a thread at ``rate`` records a second, recording each delivery report."""

    def __init__(self, bootstrap: str, topic: str, count: int, partitions: int = PARTITIONS, rate: float = 1000,
                 leash=None):
        self.topic, self.count, self.partitions, self.rate = topic, count, partitions, rate
        self.leash = leash          # () -> the highest index it may send yet: keeps it level with another producer
        self.acked: dict[int, tuple[int, int]] = {}
        self.errors: list[str] = []
        self.lock = threading.Lock()
        self.producer = Producer({"bootstrap.servers": bootstrap, "client.id": "rd-producer",
                                  "enable.idempotence": True, "acks": "all", "linger.ms": 5,
                                  "message.timeout.ms": 45000, **QUICK_RETRIES, "log_level": 2})
        self.thread = threading.Thread(target=self._run, name="rd-producer", daemon=True)

    def _delivered(self, err, msg) -> None:
        with self.lock:
            if err is not None:
                self.errors.append(str(err))
            else:
                self.acked[int(msg.value().split(b":")[0][1:])] = (msg.partition(), msg.offset())

    def _run(self) -> None:
        started = time.monotonic()
        for i in range(self.count):
            ahead = started + i / self.rate - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)       # pacing: the send schedule, not a wait for an event
            while self.leash is not None and i > self.leash():
                time.sleep(0.01)        # waits for the other producer's progress (a slow JVM on a busy machine)
            while True:
                try:
                    self.producer.produce(self.topic, value=b"r%d:%s" % (i, b"x" * 24), partition=i % self.partitions,
                                          on_delivery=self._delivered)
                    break
                except BufferError:
                    self.producer.poll(0.05)
            self.producer.poll(0)
        self.producer.flush(60)

    def start(self) -> PacedProducer:
        self.thread.start()
        return self

    def wait_acked(self, n: int) -> None:
        wait_until(lambda: len(self.acked) >= n or self.errors, 30, f"{n} librdkafka acknowledgements")
        assert not self.errors, self.errors[:3]

    def finish(self) -> dict[int, tuple[int, int]]:
        self.thread.join(timeout=60)
        assert not self.thread.is_alive(), f"the producer did not finish ({len(self.acked)} acknowledged)"
        assert not self.errors and len(self.acked) == self.count, self.errors[:3]
        return self.acked

    def close(self) -> None:
        self.thread.join(timeout=60)
        self.producer.close()


class LiveConsumer:
    """A librdkafka consumer assigned to every partition from offset 0, polling from a thread:
    ``records`` is {partition: [(offset, value)]} in the order received."""

    def __init__(self, bootstrap: str, topic: str, partitions: int = PARTITIONS):
        self.records: dict[int, list[tuple[int, bytes]]] = {p: [] for p in range(partitions)}
        self.errors: list[KafkaError] = []
        self.done = threading.Event()
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "client.id": "rd-live", "group.id": "rd-live",
                                  "enable.auto.commit": False, "fetch.wait.max.ms": 100, **QUICK_RETRIES,
                                  "log_level": 2})
        self.consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        self.thread = threading.Thread(target=self._run, name="rd-live", daemon=True)

    def _run(self) -> None:
        while not self.done.is_set():
            for m in self.consumer.consume(500, timeout=0.1):
                if m.error() is None:
                    self.records[m.partition()].append((m.offset(), m.value()))
                else:
                    self.errors.append(m.error())

    def start(self) -> LiveConsumer:
        self.thread.start()
        return self

    def wait_for(self, n: int) -> None:
        wait_until(lambda: sum(len(v) for v in self.records.values()) >= n, 30, f"the live consumer to read {n}")

    def close(self) -> None:
        self.done.set()
        self.thread.join(timeout=10)
        self.consumer.close()


def read_all(bootstrap: str, topic: str, partitions: int) -> dict[int, list[tuple[int, bytes]]]:
    """Every record of every partition, log start to high watermark, with one librdkafka consumer."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "client.id": "verify", "group.id": "verify",
                         "enable.auto.commit": False, "fetch.wait.max.ms": 50})
    records: dict[int, list[tuple[int, bytes]]] = {p: [] for p in range(partitions)}
    try:
        marks = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10) for p in range(partitions)}
        consumer.assign([TopicPartition(topic, p, low) for p, (low, _) in marks.items()])

        def poll() -> None:
            for m in consumer.consume(1000, timeout=0.1):
                assert m.error() is None, m.error()
                records[m.partition()].append((m.offset(), m.value()))
        wait_until(lambda: all(high <= low or (records[p] and records[p][-1][0] >= high - 1)
                               for p, (low, high) in marks.items()), 20, f"reading {topic} back", poll)
    finally:
        consumer.close()
    return records


def java_records(result: dict, partitions: int) -> dict[int, list[tuple[int, bytes]]]:
    """The Java ``consume`` scenario's records as {partition: [(offset, value)]}."""
    out: dict[int, list[tuple[int, bytes]]] = {p: [] for p in range(partitions)}
    for r in result["records"]:
        out[r["partition"]].append((r["offset"], r["value"].encode()))
    return out


def check_streams(stored: dict[int, list[tuple[int, bytes]]], acked: dict[bytes, dict[int, tuple[int, int]]]) -> None:
    """``stored`` holds exactly what each producer (``acked``: {value prefix: {i: (partition, offset)}}) was told:
    every record once, at its acknowledged partition and offset, each producer's records in send order within a
    partition, the offsets dense."""
    seen: dict[bytes, dict[int, tuple[int, int]]] = {prefix: {} for prefix in acked}
    for partition, entries in stored.items():
        offsets = [offset for offset, _ in entries]
        if offsets:
            assert offsets == list(range(offsets[0], offsets[0] + len(offsets))), \
                f"partition {partition}: offsets not dense (a gap, or a record read twice)"
        last: dict[bytes, int] = {}
        for offset, value in entries:
            head = bytes(value).split(b":", 1)[0]
            prefix, i = head[:1], int(head[1:])
            assert prefix in seen, f"partition {partition} offset {offset}: a record nobody sent: {bytes(value)!r}"
            assert i not in seen[prefix], f"{head!r} stored twice: {seen[prefix][i]} and {(partition, offset)}"
            assert i > last.get(prefix, -1), f"partition {partition}: {head!r} after {prefix!r}{last[prefix]}"
            seen[prefix][i], last[prefix] = (partition, offset), i
    for prefix, expected in acked.items():
        lost = sorted(set(expected) - set(seen[prefix]))
        assert not lost, f"{len(lost)} acknowledged record(s) {prefix!r} lost, first {lost[:5]}"
        unacknowledged = sorted(set(seen[prefix]) - set(expected))
        assert not unacknowledged, f"stored but never acknowledged: {prefix!r} {unacknowledged[:5]}"
        moved = [(i, expected[i], seen[prefix][i]) for i in expected if expected[i] != seen[prefix][i]]
        assert not moved, f"acknowledged (partition, offset) differ from the stored ones: {moved[:5]}"


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
