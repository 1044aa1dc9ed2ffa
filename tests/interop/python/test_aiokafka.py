"""aiokafka (asyncio) against a live kafkamock broker. The broker runs trio on its own thread (the fixture), so
each test simply runs its client code with ``asyncio.run`` on the test thread."""

from __future__ import annotations

import asyncio
import time

import pytest
from client_support import FETCH, INIT_PRODUCER_ID, PRODUCE, stored_views

aiokafka = pytest.importorskip("aiokafka")
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition  # noqa: E402

BASE_TS = 1_700_000_000_000
CREATE_TIME, LOG_APPEND_TIME = 0, 1        # ConsumerRecord/RecordMetadata.timestamp_type


def sample(n: int) -> list[dict]:
    return [{"key": None if i % 8 == 7 else b"key-%d" % (i % 5),
             "value": None if i % 20 == 10 else (b"aio-%04d," % i) * (1 + i % 11),
             "headers": [("i", str(i).encode()), ("n", b"")],
             "timestamp_ms": BASE_TS + i} for i in range(n)]


async def consume(c: AIOKafkaConsumer, count: int, timeout: float = 15.0) -> list:
    got: list = []
    deadline = time.monotonic() + timeout
    while len(got) < count:
        assert time.monotonic() < deadline, f"got {len(got)} of {count} records before the deadline"
        for records in (await c.getmany(timeout_ms=200)).values():
            got.extend(records)
    return got


def assert_same(records: list, sent: list[dict], first_offset: int = 0) -> None:
    assert [r.offset for r in records] == list(range(first_offset, first_offset + len(sent)))
    for r, want in zip(records, sent, strict=True):
        assert (r.key, r.value, r.timestamp) == (want["key"], want["value"], want["timestamp_ms"])
        assert r.timestamp_type == CREATE_TIME
        assert list(r.headers) == want["headers"]


@pytest.mark.parametrize("compression", [None, "gzip", "snappy", "lz4", "zstd"])
def test_produce_and_consume_with_assign(kafka_broker, wire_log, compression):
    kafka_broker.create_topic("aio", 2)
    sent = sample(120)

    async def main():
        producer = AIOKafkaProducer(bootstrap_servers=kafka_broker.bootstrap_servers, enable_idempotence=True,
                                    acks="all", compression_type=compression, linger_ms=20, max_batch_size=4096)
        await producer.start()
        try:
            futures = [await producer.send("aio", partition=0, **m) for m in sent]
            metadata = await asyncio.gather(*futures)
            assert [m.offset for m in metadata] == list(range(len(sent)))
            tail = await producer.send_and_wait("aio", b"on-partition-1", partition=1, timestamp_ms=BASE_TS)
            assert (tail.partition, tail.offset) == (1, 0)
        finally:
            await producer.stop()

        consumer = AIOKafkaConsumer(bootstrap_servers=kafka_broker.bootstrap_servers, group_id=None,
                                    enable_auto_commit=False, fetch_max_wait_ms=100)
        await consumer.start()
        try:
            tp0, tp1 = TopicPartition("aio", 0), TopicPartition("aio", 1)
            consumer.assign([tp0, tp1])
            await consumer.seek_to_beginning(tp0, tp1)
            got = await consume(consumer, len(sent) + 1)
            assert_same([r for r in got if r.partition == 0], sent)
            (other,) = [r for r in got if r.partition == 1]
            assert (other.offset, other.value) == (0, b"on-partition-1")
            consumer.seek(tp0, 55)
            assert_same(await consume(consumer, len(sent) - 55), sent[55:], first_offset=55)
            assert await consumer.end_offsets([tp0, tp1]) == {tp0: len(sent), tp1: 1}
        finally:
            await consumer.stop()

    asyncio.run(main())
    views = stored_views(kafka_broker, "aio", 0)
    assert {v.compression for v in views} == {compression or "none"}
    assert wire_log.requests_of(INIT_PRODUCER_ID) and all(v.producer_id >= 0 for v in views)
    assert min(wire_log.versions(PRODUCE)) >= 3 and min(wire_log.versions(FETCH)) >= 4


def test_log_append_time(kafka_broker):
    kafka_broker.create_topic("aio-lat", 1, config={"message.timestamp.type": "LogAppendTime"})

    async def main():
        before = int(time.time() * 1000)
        producer = AIOKafkaProducer(bootstrap_servers=kafka_broker.bootstrap_servers)
        await producer.start()
        try:
            meta = await producer.send_and_wait("aio-lat", b"v", key=b"k", timestamp_ms=1_000)
        finally:
            await producer.stop()
        after = int(time.time() * 1000)
        assert meta.timestamp_type == LOG_APPEND_TIME and before <= meta.timestamp <= after
        consumer = AIOKafkaConsumer(bootstrap_servers=kafka_broker.bootstrap_servers, group_id=None,
                                    enable_auto_commit=False)
        await consumer.start()
        try:
            tp = TopicPartition("aio-lat", 0)
            consumer.assign([tp])
            await consumer.seek_to_beginning(tp)
            (record,) = await consume(consumer, 1)
            assert record.timestamp_type == LOG_APPEND_TIME
            assert record.timestamp == meta.timestamp
        finally:
            await consumer.stop()

    asyncio.run(main())
