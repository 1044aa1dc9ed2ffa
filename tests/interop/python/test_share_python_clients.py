"""Share groups (KIP-932) with librdkafka's share consumer (confluent-kafka's ShareConsumer, protocol v1) against a live
kafkamock: implicit mode with two consumers sharing the records, explicit accept/release with redelivery, and the
plain consumers' view of a topic holding share-state control batches (they skip them and still reach the end).

Waits are deadlines on what the clients see (``wait_until`` polling), never sleeps standing in for an event.
"""

from __future__ import annotations

import pytest
from client_support import wait_until
from confluent_kafka import AcknowledgeType, Consumer, KafkaError, Producer, ShareConsumer, TopicPartition

pytestmark = pytest.mark.kafkamock(config={"group.initial.rebalance.delay.ms": 0})


def share_consumer(bootstrap: str, group: str, topic: str, mode: str = "implicit") -> ShareConsumer:
    consumer = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group,
                              "share.acknowledgement.mode": mode})
    consumer.subscribe([topic])
    return consumer


def started(kafka_broker, group: str, consumers: list[ShareConsumer], partitions: int) -> None:
    """Poll until the group's share-partitions exist (its first ShareFetch sets their start: "latest")."""
    def ready():
        return kafka_broker.call(lambda b=kafka_broker.cluster: sum(1 for k in b.share.partitions if k[0] == group)) == partitions

    wait_until(ready, 30, f"share group {group} to start its share-partitions",
               step=lambda: [c.poll(0.2) for c in consumers])


def produce(bootstrap: str, topic: str, count: int, partitions: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for n in range(count):
        producer.produce(topic, key=b"k%d" % n, value=b"v%d" % n, partition=n % partitions)
    assert producer.flush(15) == 0


def test_implicit_mode_two_consumers_share_every_record_once(kafka_broker):
    bootstrap, topic, group = kafka_broker.bootstrap_servers, "share-py", "sg-py"
    kafka_broker.create_topic(topic, 2)
    consumers = [share_consumer(bootstrap, group, topic) for _ in range(2)]
    try:
        started(kafka_broker, group, consumers, 2)
        produce(bootstrap, topic, 200, 2)
        got: dict[int, list[bytes]] = {0: [], 1: []}

        def step():
            for k, c in enumerate(consumers):
                for m in c.poll(0.2):
                    assert m.error() is None, m.error()
                    got[k].append(m.value())
        wait_until(lambda: len(got[0]) + len(got[1]) >= 200, 30, "200 records across the share consumers",
                   step=step)
        for c in consumers:
            c.commit_sync()
        values = got[0] + got[1]
        assert sorted(values) == sorted(b"v%d" % n for n in range(200))      # each record once
    finally:
        for c in consumers:
            c.close()
    share = kafka_broker.call(lambda b=kafka_broker.cluster: {k[2]: (s.start_offset, s.end_offset) for k, s in b.share.partitions.items()
                                         if k[0] == group})
    assert all(start == end for start, end in share.values()), share          # everything acknowledged


def test_explicit_mode_release_is_redelivered_and_accept_is_not(kafka_broker):
    bootstrap, topic, group = kafka_broker.bootstrap_servers, "share-py-explicit", "sg-py-explicit"
    kafka_broker.create_topic(topic, 1)
    first = share_consumer(bootstrap, group, topic, "explicit")
    try:
        started(kafka_broker, group, [first], 1)
        produce(bootstrap, topic, 3, 1)
        polled = []
        wait_until(lambda: len(polled) >= 3, 30, "3 records", step=lambda: polled.extend(first.poll(0.2)))
        for m in polled:
            first.acknowledge(m, AcknowledgeType.RELEASE if m.value() == b"v1" else AcknowledgeType.ACCEPT)
        results = first.commit_sync()
        assert all(error is None for error in results.values()), results
        again = []
        wait_until(lambda: again, 30, "the released record again", step=lambda: again.extend(first.poll(0.2)))
        assert [m.value() for m in again] == [b"v1"]
        first.acknowledge(again[0], AcknowledgeType.ACCEPT)
        first.commit_sync()
    finally:
        first.close()


def test_plain_consumers_skip_share_state_batches_and_reach_the_end(kafka_broker):
    bootstrap, topic, group = kafka_broker.bootstrap_servers, "share-py-plain", "sg-py-plain"
    kafka_broker.create_topic(topic, 1)
    sharer = share_consumer(bootstrap, group, topic)
    try:
        started(kafka_broker, group, [sharer], 1)
        produce(bootstrap, topic, 5, 1)
        seen = []
        wait_until(lambda: len(seen) >= 5, 30, "5 records", step=lambda: seen.extend(sharer.poll(0.2)))
        sharer.commit_sync()                               # the acknowledgements are written down: a control
    finally:                                               # batch is now the last batch of the log
        sharer.close()
    kinds = kafka_broker.call(lambda b=kafka_broker.cluster: _control_kinds(b, topic))
    assert kinds[0] == "SHARE_CHECKPOINT" and set(kinds) <= {"SHARE_CHECKPOINT", "SHARE_DELTA"}
    end = kafka_broker.call(lambda b=kafka_broker.cluster: b.metadata.topics[topic].partitions[0].log.high_watermark)
    assert end > 5
    reader = Consumer({"bootstrap.servers": bootstrap, "group.id": "plain-reader", "enable.partition.eof": True,
                       "auto.offset.reset": "earliest"})
    reader.assign([TopicPartition(topic, 0, 0)])
    values, at_end = [], []

    def step():
        m = reader.poll(0.2)
        if m is None:
            return
        if m.error() is None:
            values.append(m.value())
        elif m.error().code() == KafkaError._PARTITION_EOF:
            at_end.append(m.offset())
    try:
        wait_until(lambda: at_end, 30, "the plain reader to reach the end of the partition", step=step)
    finally:
        reader.close()
    assert values == [b"v%d" % n for n in range(5)]       # the control batches never reach the application
    assert at_end[-1] == end


def _control_kinds(broker, topic: str) -> list[str]:
    from kafkamock.records import decode_batches, decode_control

    kinds = []
    for stored in broker.metadata.topics[topic].partitions[0].log.batches(0):
        for batch in decode_batches(bytes(stored.data)):
            if batch.is_control:
                kinds.extend(decode_control(r.key, r.value)[0] for r in batch.records)
    return kinds
