"""librdkafka clients that run in a thread while a test moves leaders, stops nodes and pushes faults: a paced
idempotent producer, a live consumer, and the checks that the log holds exactly what the producers were told."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition

from support.polling import wait_until

PARTITIONS = 6
QUICK_RETRIES = {"retry.backoff.ms": 20, "retry.backoff.max.ms": 200, "reconnect.backoff.ms": 20,
                 "reconnect.backoff.max.ms": 200}


class PacedProducer:
    """An idempotent librdkafka producer (acks=all) sending ``count`` records ``<prefix><i>:...`` round-robin over
    the partitions from a thread, at ``rate`` records a second (so the run lasts a while and the test can act at
    known points), recording what each delivery report said.

    With ``lead``, the producer never runs more than ``lead`` records past the last count the test waited for
    (``wait_acked``) until ``finish``: the test's events land while it is still sending however slow the machine.
    With ``leash`` (() -> the highest index it may send yet), it stays level with another producer."""

    def __init__(self, bootstrap: str, topic: str, count: int, partitions: int = PARTITIONS, *, rate: float = 1000,
                 prefix: bytes = b"r", client_id: str = "rd-producer", lead: int | None = None,
                 leash: Callable[[], int] | None = None):
        self.topic, self.count, self.partitions, self.rate, self.prefix = topic, count, partitions, rate, prefix
        self.lead, self.leash = lead, leash
        self.allowed = count if lead is None else lead      # the records it may send yet
        self.gate = threading.Condition()
        self.acked: dict[int, tuple[int, int]] = {}
        self.errors: list[str] = []
        self.lock = threading.Lock()
        self.producer = Producer({"bootstrap.servers": bootstrap, "client.id": client_id, "enable.idempotence": True,
                                  "acks": "all", "linger.ms": 5, "message.timeout.ms": 45000, **QUICK_RETRIES,
                                  "log_level": 2})     # a stopped node refuses connections: that is the point
        self.thread = threading.Thread(target=self._run, name=f"producer-{client_id}", daemon=True)

    def _delivered(self, err, msg) -> None:
        with self.lock:
            if err is not None:
                self.errors.append(str(err))
            else:
                self.acked[int(msg.value().split(b":")[0][len(self.prefix):])] = (msg.partition(), msg.offset())

    def _run(self) -> None:
        started = time.monotonic()
        for i in range(self.count):
            ahead = started + i / self.rate - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)       # pacing: the send schedule, not a wait for an event
            with self.gate:
                if i >= self.allowed:
                    while i >= self.allowed:
                        self.gate.wait(0.05)
                        self.producer.poll(0)   # delivery reports keep coming while it waits
                    started = time.monotonic() - i / self.rate      # then the same pace again, not a burst
            while self.leash is not None and i > self.leash():
                time.sleep(0.01)        # waits for the other producer's progress (a slow JVM on a busy machine)
            while True:
                try:
                    self.producer.produce(self.topic, value=b"%s%d:%s" % (self.prefix, i, b"x" * 24),
                                          partition=i % self.partitions, on_delivery=self._delivered)
                    break
                except BufferError:
                    self.producer.poll(0.05)
            self.producer.poll(0)
        self.producer.flush(60)

    def start(self) -> PacedProducer:
        self.thread.start()
        return self

    def _allow(self, n: int) -> None:
        with self.gate:
            self.allowed = max(self.allowed, min(n, self.count))
            self.gate.notify_all()

    def wait_acked(self, n: int) -> None:
        if self.lead is not None:
            self._allow(n + self.lead)
        wait_until(lambda: len(self.acked) >= n or self.errors, timeout=30, what=f"{n} acknowledgements")
        assert not self.errors, self.errors[:3]

    def finish(self) -> dict[int, tuple[int, int]]:
        self._allow(self.count)
        self.thread.join(timeout=60)
        assert not self.thread.is_alive(), f"the producer did not finish ({len(self.acked)} acknowledged)"
        assert not self.errors, self.errors[:3]
        assert len(self.acked) == self.count
        return self.acked

    def close(self) -> None:
        self._allow(self.count)
        self.thread.join(timeout=60)
        self.producer.close()


class LiveConsumer:
    """A librdkafka consumer assigned to every partition from offset 0, polling from a thread while the test moves
    leaders: ``records`` is {partition: [(offset, value)]} in the order received."""

    def __init__(self, bootstrap: str, topic: str, partitions: int = PARTITIONS, client_id: str = "rd-live"):
        self.records: dict[int, list[tuple[int, bytes]]] = {p: [] for p in range(partitions)}
        self.errors: list[KafkaError] = []
        self.done = threading.Event()
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "client.id": client_id, "group.id": client_id,
                                  "enable.auto.commit": False, "fetch.wait.max.ms": 100, **QUICK_RETRIES,
                                  "log_level": 2})
        self.consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        self.thread = threading.Thread(target=self._run, name=f"consumer-{client_id}", daemon=True)

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

    def total(self) -> int:
        return sum(len(v) for v in self.records.values())

    def wait_for(self, n: int) -> None:
        wait_until(lambda: self.total() >= n, timeout=30, what=f"the live consumer to read {n} records")

    def close(self) -> None:
        self.done.set()
        self.thread.join(timeout=10)
        self.consumer.close()


def check_streams(stored: dict[int, list[tuple[int, bytes]]], acked: dict[bytes, dict[int, tuple[int, int]]]) -> None:
    """``stored`` ({partition: [(offset, value)]}, as a consumer read it) holds exactly what each producer
    (``acked``: {value prefix: {i: (partition, offset)}}) was told: every record once, at its acknowledged partition
    and offset, each producer's records in send order within a partition, the offsets dense."""
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


def read_all(bootstrap: str, topic: str, partitions: int) -> dict[int, list[tuple[int, bytes]]]:
    """Every record of every partition, log start to high watermark, with one librdkafka consumer assigned to all
    of them: {partition: [(offset, value)]}. (``support.readback.read_all`` waits a full second per partition.)"""
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
                               for p, (low, high) in marks.items()),
                   timeout=20, what=f"reading {topic} back", step=poll)
    finally:
        consumer.close()
    return records
