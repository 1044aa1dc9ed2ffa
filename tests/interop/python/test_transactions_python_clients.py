"""Transactions with the Python clients against a live kafkamock: librdkafka (confluent-kafka) consume-transform-produce
with ``send_offsets_to_transaction`` and an abort in the middle, giving exactly-once output; zombie fencing; and the
transactional producers of kafka-python 3 and aiokafka, each checked by a read_committed reader.

Every test passes against a real Kafka too (``KAFKAMOCK_EXTERNAL_BOOTSTRAP``, see test_groups.py); waits are
deadlines on what the clients see, never sleeps standing in for an event.
"""

from __future__ import annotations

import asyncio

import pytest
from client_support import wait_until
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from support.targets import TARGETS
from test_groups import cluster_for

pytestmark = pytest.mark.kafkamock(config={"group.initial.rebalance.delay.ms": 0})


@pytest.fixture(params=TARGETS)
def cluster(request):
    yield from cluster_for(request)


def read_all(bootstrap: str, topic: str, partitions: int, isolation: str) -> list[bytes]:
    """Every record a reader of ``isolation`` gets from every partition, up to what it may see (EOF)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{topic}-{isolation}",
                        "enable.auto.commit": False, "isolation.level": isolation,
                        "enable.partition.eof": True, "auto.offset.reset": "earliest"})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    values: list[bytes] = []
    at_end: set[int] = set()

    def step():
        message = consumer.poll(0.2)
        if message is None:
            return
        if message.error() is None:
            values.append(message.value())
            at_end.discard(message.partition())
        elif message.error().code() == KafkaError._PARTITION_EOF:
            at_end.add(message.partition())
    try:
        wait_until(lambda: len(at_end) == partitions, 30, f"a {isolation} reader to reach the end of {topic}",
                   step=step)
    finally:
        consumer.close()
    return values


def committed(bootstrap: str, group: str, topic: str, partitions: int) -> dict[int, int]:
    reader = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        got = reader.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=15)
        return {tp.partition: max(tp.offset, 0) for tp in got}       # OFFSET_INVALID (-1001): nothing committed
    finally:
        reader.close()


def produce_inputs(bootstrap: str, topic: str, count: int, partitions: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for n in range(count):
        producer.produce(topic, value=f"in-{n}".encode(), partition=n % partitions)
    assert producer.flush(30) == 0


# -- librdkafka: consume-transform-produce -------------------------------------------------------------------------

def test_confluent_consume_transform_produce_is_exactly_once_with_an_abort_in_the_middle(cluster):
    source, sink, group = cluster.name("in"), cluster.name("out"), cluster.name("g")
    cluster.create_topic(source, 2)
    cluster.create_topic(sink, 2)
    bootstrap = cluster.bootstrap_servers
    produce_inputs(bootstrap, source, 20, 2)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", "isolation.level": "read_committed"})
    consumer.subscribe([source])
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": cluster.name("ctp"), "linger.ms": 0})
    producer.init_transactions(30)
    processed: list[bytes] = []

    def one_transaction(batch_size: int, commit: bool) -> int:
        """Read up to ``batch_size`` inputs, write their transforms and the offsets in one transaction."""
        got: list = []

        def step():
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                got.append(message)
        wait_until(lambda: len(got) >= batch_size, 30, f"{batch_size} inputs", step=step)
        producer.begin_transaction()
        for message in got:
            producer.produce(sink, value=message.value().replace(b"in-", b"out-"), partition=message.partition())
        producer.send_offsets_to_transaction(consumer.position(consumer.assignment()),
                                             consumer.consumer_group_metadata(), 30)
        if commit:
            producer.commit_transaction(30)
            processed.extend(m.value() for m in got)
        else:
            assert producer.flush(30) == 0                   # written to the log first, so the abort has work to do
            producer.abort_transaction(30)
            # the abort keeps the group where it was: rewind to the committed offsets and read them again
            for tp in consumer.committed(consumer.assignment(), timeout=15):
                consumer.seek(TopicPartition(tp.topic, tp.partition, max(tp.offset, 0)))
        return len(got)

    one_transaction(6, commit=True)
    assert sum(committed(bootstrap, group, source, 2).values()) == 6
    one_transaction(6, commit=False)                        # written, then aborted: nothing of it counts
    assert sum(committed(bootstrap, group, source, 2).values()) == 6
    while len(processed) < 20:
        one_transaction(min(7, 20 - len(processed)), commit=True)
    consumer.close()

    outputs = read_all(bootstrap, sink, 2, "read_committed")
    assert sorted(outputs) == sorted(v.replace(b"in-", b"out-") for v in processed)
    assert len(outputs) == len(set(outputs)) == 20          # each input exactly once
    everything = read_all(bootstrap, sink, 2, "read_uncommitted")
    assert len(everything) == 26                             # the aborted six are in the log all the same
    assert committed(bootstrap, group, source, 2) == {0: 10, 1: 10}


def test_confluent_zombie_is_fenced_by_a_new_instance(cluster):
    topic, tid = cluster.name("t"), cluster.name("zombie")
    cluster.create_topic(topic, 1)
    bootstrap = cluster.bootstrap_servers
    zombie = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid, "linger.ms": 0})
    zombie.init_transactions(30)
    zombie.begin_transaction()
    zombie.produce(topic, value=b"zombie", partition=0)
    assert zombie.flush(30) == 0
    successor = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid, "linger.ms": 0})
    successor.init_transactions(30)                          # aborts the zombie's transaction, fences its epoch
    with pytest.raises(KafkaException) as failure:
        zombie.commit_transaction(30)
    error = failure.value.args[0]
    assert error.fatal() and error.code() in (KafkaError._FENCED, KafkaError.PRODUCER_FENCED,
                                              KafkaError.INVALID_PRODUCER_EPOCH), error
    successor.begin_transaction()
    successor.produce(topic, value=b"successor", partition=0)
    successor.commit_transaction(30)
    assert read_all(bootstrap, topic, 1, "read_committed") == [b"successor"]
    assert read_all(bootstrap, topic, 1, "read_uncommitted") == [b"zombie", b"successor"]


# -- kafka-python 3 ---------------------------------------------------------------------------------------------------

def test_kafka_python_transactional_producer(cluster):
    kafka = pytest.importorskip("kafka")
    topic, tid = cluster.name("t"), cluster.name("kp")
    cluster.create_topic(topic, 1)
    bootstrap = cluster.bootstrap_servers
    producer = kafka.KafkaProducer(bootstrap_servers=bootstrap, transactional_id=tid, request_timeout_ms=10_000)
    try:
        producer.init_transactions()
        producer.begin_transaction()
        for n in range(3):
            producer.send(topic, value=f"kept-{n}".encode(), partition=0)
        producer.commit_transaction()
        producer.begin_transaction()
        producer.send(topic, value=b"dropped", partition=0).get(timeout=10)
        producer.abort_transaction()
        producer.begin_transaction()
        producer.send(topic, value=b"kept-3", partition=0)
        producer.commit_transaction()
    finally:
        producer.close(timeout=10)
    assert read_all(bootstrap, topic, 1, "read_committed") == [b"kept-0", b"kept-1", b"kept-2", b"kept-3"]
    assert b"dropped" in read_all(bootstrap, topic, 1, "read_uncommitted")
    reader = kafka.KafkaConsumer(bootstrap_servers=bootstrap, isolation_level="read_committed",
                                 auto_offset_reset="earliest", consumer_timeout_ms=5_000)
    try:
        reader.assign([kafka.TopicPartition(topic, 0)])
        seen: list[bytes] = []
        wait_until(lambda: len(seen) >= 4, 30, "kafka-python's read_committed reader",
                   step=lambda: seen.extend(r.value for rs in reader.poll(200).values() for r in rs))
        assert seen == [b"kept-0", b"kept-1", b"kept-2", b"kept-3"]
    finally:
        reader.close()


# -- aiokafka -----------------------------------------------------------------------------------------------------------

def test_aiokafka_transactional_producer_with_offsets(cluster):
    aiokafka = pytest.importorskip("aiokafka")
    source, sink, group, tid = cluster.name("in"), cluster.name("out"), cluster.name("g"), cluster.name("aio")
    cluster.create_topic(source, 1)
    cluster.create_topic(sink, 1)
    bootstrap = cluster.bootstrap_servers
    produce_inputs(bootstrap, source, 4, 1)

    async def run() -> list[bytes]:
        producer = aiokafka.AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=tid)
        await producer.start()
        try:
            async with producer.transaction():
                for n in range(2):
                    await producer.send(sink, value=f"out-{n}".encode(), partition=0)
                await producer.send_offsets_to_transaction({aiokafka.TopicPartition(source, 0): 2}, group)
            with pytest.raises(RuntimeError):
                async with producer.transaction():
                    await producer.send_and_wait(sink, value=b"aborted", partition=0)
                    await producer.send_offsets_to_transaction({aiokafka.TopicPartition(source, 0): 4}, group)
                    raise RuntimeError("abort this one")
        finally:
            await producer.stop()
        reader = aiokafka.AIOKafkaConsumer(bootstrap_servers=bootstrap, isolation_level="read_committed",
                                           auto_offset_reset="earliest", enable_auto_commit=False)
        await reader.start()
        try:
            reader.assign([aiokafka.TopicPartition(sink, 0)])
            seen: list[bytes] = []
            deadline = asyncio.get_running_loop().time() + 30
            while len(seen) < 2 and asyncio.get_running_loop().time() < deadline:
                for records in (await reader.getmany(timeout_ms=200)).values():
                    seen.extend(r.value for r in records)
            return seen
        finally:
            await reader.stop()

    assert asyncio.run(run()) == [b"out-0", b"out-1"]
    assert read_all(bootstrap, sink, 1, "read_committed") == [b"out-0", b"out-1"]
    assert read_all(bootstrap, sink, 1, "read_uncommitted") == [b"out-0", b"out-1", b"aborted"]
    assert committed(bootstrap, group, source, 1) == {0: 2}      # the aborted transaction's offsets never applied
