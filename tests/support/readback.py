"""Reading a topic back with librdkafka and checking it against what a producer was told: exactly once, in order."""

from __future__ import annotations

import time

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

TOPIC = "storm"
PARTITIONS = 3


def create_topic(bootstrap: str, name: str = TOPIC, partitions: int = PARTITIONS, config: dict | None = None,
                 replication_factor: int = 1) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})   # kept alive until the results are in
    futures = admin.create_topics([NewTopic(name, partitions, replication_factor, config=config or {})], operation_timeout=10)
    for future in futures.values():
        future.result(timeout=15)


def read_all(bootstrap: str, topic: str = TOPIC, partitions: int = PARTITIONS) -> dict[int, list[tuple[int, bytes]]]:
    """Every record of every partition, from the log start to the high watermark: {partition: [(offset, value)]}."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "verify", "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", "enable.partition.eof": True})
    out: dict[int, list[tuple[int, bytes]]] = {}
    try:
        for p in range(partitions):
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
            consumer.assign([TopicPartition(topic, p, low)])
            got: list[tuple[int, bytes]] = []
            deadline = time.monotonic() + 30
            while (not got or got[-1][0] < high - 1) and high > low:
                assert time.monotonic() < deadline, f"partition {p}: read {len(got)} of {high - low}"
                for m in consumer.consume(1000, timeout=1):
                    if m.error() is None:
                        got.append((m.offset(), m.value()))
            out[p] = got
    finally:
        consumer.close()
    return out


def check_exactly_once(stored: dict[int, list[tuple[int, bytes]]], acked: dict[int, tuple[int, int]],
                       sent: int) -> None:
    """Every acknowledged record once, at its acknowledged offset; nothing twice; per partition in send order."""
    seen: dict[int, tuple[int, int]] = {}
    for partition, entries in stored.items():
        sequence = [int(value.split(b":")[0].lstrip(b"v")) for _, value in entries]   # "<i>:..." or "v<i>:..."
        assert sequence == sorted(sequence), f"partition {partition} out of order"
        for (offset, _), seq in zip(entries, sequence, strict=True):
            assert seq not in seen, f"record {seq} stored twice: {seen[seq]} and {(partition, offset)}"
            seen[seq] = (partition, offset)
    missing = sorted(set(acked) - set(seen))
    assert not missing, f"{len(missing)} acknowledged record(s) lost, first {missing[:5]}"
    moved = {seq: (acked[seq], seen[seq]) for seq in acked if acked[seq] != seen[seq]}
    assert not moved, f"acknowledged offsets differ from stored ones: {list(moved.items())[:5]}"
    assert set(seen) <= set(range(sent))
