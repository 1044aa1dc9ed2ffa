"""kafkamock's Producer against a real broker over sockets: batching by batch.size and linger.ms, Java's murmur2
partitioning, acks, compression, retries without duplicates, KIP-360 epoch bumps after UNKNOWN_PRODUCER_ID (pushed,
and for real after DeleteRecords and producer-state expiry) and OUT_OF_ORDER_SEQUENCE_NUMBER, the blocking face,
and Tansu as a second broker."""

from __future__ import annotations

import time

import confluent_kafka
import pytest
import trio
from producer_support import read_values, watch_requests

from kafkamock.broker.clock import ManualClock
from kafkamock.client import KafkaClient
from kafkamock.client.producer import Producer, RecordMetadata
from kafkamock.client.transactions import IllegalStateError
from kafkamock.testing import start_broker


async def off(fn, *args, **kwargs):
    """Broker-handle calls block until the broker's thread ran them: make them from a worker thread."""
    return await trio.to_thread.run_sync(lambda: fn(*args, **kwargs))


def conf(broker, **extra):
    return {"bootstrap.servers": broker.bootstrap_servers, **{k.replace("_", "."): v for k, v in extra.items()}}


def no_duplicates_no_gaps(values: list[bytes], n: int, prefix: bytes = b"r") -> None:
    assert values == [prefix + b"%04d" % i for i in range(n)]


@pytest.mark.trio
async def test_many_sends_make_one_batch(kafka_broker):
    await off(kafka_broker.create_topic, "batched", 1)
    async with Producer(conf(kafka_broker, linger_ms=2_000)) as producer:
        await producer.flush()                                   # nothing buffered: returns at once
        await off(kafka_broker.control.clear_requests)
        handles = [await producer.send("batched", b"r%04d" % i, partition=0) for i in range(50)]
        assert not any(h.done() for h in handles)                # lingering: nothing sent yet
        await producer.flush()
        metadata = [await h for h in handles]
    assert [m.offset for m in metadata] == list(range(50))
    assert all(isinstance(m, RecordMetadata) and m.topic == "batched" and m.partition == 0 for m in metadata)
    batches = await off(kafka_broker.control.stored_batches, "batched", 0)
    assert [(b["base_offset"], b["record_count"]) for b in batches] == [(0, 50)]
    assert len(await off(kafka_broker.control.requests, "Produce")) == 1


@pytest.mark.trio
async def test_linger_sends_without_flush_and_batch_size_splits(kafka_broker):
    await off(kafka_broker.create_topic, "split", 1)
    async with Producer(conf(kafka_broker, linger_ms=20, batch_size=1_000)) as producer:
        handles = [await producer.send("split", b"x" * 100, partition=0) for i in range(30)]
        with trio.fail_after(10):                              # linger.ms alone gets them out
            results = [await h for h in handles]
    assert [r.offset for r in results] == list(range(30))
    batches = await off(kafka_broker.control.stored_batches, "split", 0)
    assert len(batches) >= 4 and sum(b["record_count"] for b in batches) == 30
    assert all(b["size"] <= 1_000 + 200 for b in batches)     # batch.size bounds a batch (one record may overflow)


@pytest.mark.trio
async def test_keys_land_where_java_puts_them(kafka_broker):
    """librdkafka's murmur2_random is Java's default partitioner for keyed records: same key, same partition."""
    await off(kafka_broker.create_topic, "ours", 7)
    await off(kafka_broker.create_topic, "theirs", 7)
    keys = [b"key-%d" % i for i in range(60)] + [b"", b"a", b"\xff\x00\x10"]
    async with Producer(conf(kafka_broker)) as producer:
        handles = [await producer.send("ours", b"v", key=k) for k in keys]
        await producer.flush()
        ours = [h.result().partition for h in handles]
    theirs: list[int] = []

    def produce_with_librdkafka():
        p = confluent_kafka.Producer({"bootstrap.servers": kafka_broker.bootstrap_servers,
                                      "partitioner": "murmur2_random"})
        out: dict[bytes, int] = {}
        for k in keys:
            p.produce("theirs", b"v", key=k, on_delivery=lambda err, msg: out.__setitem__(msg.key(), msg.partition()))
        assert p.flush(30) == 0
        theirs.extend(out[k] for k in keys)

    await trio.to_thread.run_sync(produce_with_librdkafka)
    assert ours == theirs
    assert len(set(ours)) > 3


@pytest.mark.parametrize("acks", ["0", "1", "all"])
@pytest.mark.trio
async def test_acks(kafka_broker, acks):
    await off(kafka_broker.create_topic, "acks", 1)
    async with Producer(conf(kafka_broker, acks=acks)) as producer:
        assert producer.idempotent == (acks == "all")           # idempotence only where acks allow it
        handles = [await producer.send("acks", b"r%04d" % i, partition=0) for i in range(20)]
        await producer.flush()
        offsets = [h.result().offset for h in handles]
    assert offsets == ([-1] * 20 if acks == "0" else list(range(20)))
    with trio.fail_after(10):
        while len(values := await read_values(kafka_broker.bootstrap_servers, "acks")) < 20:
            await trio.sleep(0.05)
    no_duplicates_no_gaps(values, 20)


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
@pytest.mark.trio
async def test_compression(kafka_broker, codec):
    await off(kafka_broker.create_topic, "codec", 1)
    async with Producer(conf(kafka_broker, compression_type=codec, linger_ms=1_000)) as producer:
        for i in range(40):
            await producer.send("codec", b"r%04d" % i, partition=0)
        await producer.flush()
    (batch,) = await off(kafka_broker.control.stored_batches, "codec", 0)
    assert batch["compression"] == codec and batch["record_count"] == 40
    no_duplicates_no_gaps(await read_values(kafka_broker.bootstrap_servers, "codec"), 40)


@pytest.mark.trio
async def test_settings_are_checked_up_front(kafka_broker):
    with pytest.raises(ValueError, match="unknown or unsupported"):
        Producer(conf(kafka_broker, **{"buffer_size": 5}))
    with pytest.raises(ValueError, match="acks to all"):
        Producer(conf(kafka_broker, acks="1", enable_idempotence=True))
    with pytest.raises(ValueError, match="retries"):
        Producer(conf(kafka_broker, retries=0, enable_idempotence=True))
    with pytest.raises(ValueError, match="enable.idempotence"):
        Producer({**conf(kafka_broker), "transactional.id": "t", "enable.idempotence": False})
    async with Producer(conf(kafka_broker)) as producer:
        with pytest.raises(IllegalStateError, match="non-transactional"):
            await producer.init_transactions()
    with pytest.raises(IllegalStateError, match="closed"):
        await producer.send("x", b"v")


@pytest.mark.trio
async def test_serializers_headers_and_timestamps(kafka_broker):
    await off(kafka_broker.create_topic, "ser", 1)
    settings = {**conf(kafka_broker), "key.serializer": str.encode, "value.serializer": lambda v: repr(v).encode()}
    async with Producer(settings) as producer:
        handle = await producer.send("ser", {"a": 1}, key="k", headers=[("h", b"1")], timestamp=1_700_000_000_123)
        meta = await handle
    assert meta.timestamp == 1_700_000_000_123
    async with KafkaClient(kafka_broker.bootstrap_servers) as client:
        from kafkamock.client import read_range
        async for chunk in read_range(client, "ser", 0, 0, 1):
            (record,) = chunk.records
    assert (record.key, record.value, list(record.headers)) == (b"k", b"{'a': 1}", [("h", b"1")])


@pytest.mark.trio
async def test_idempotent_retries_not_leader_and_dropped_connections_without_duplicates(kafka_broker):
    await off(kafka_broker.create_topic, "flaky", 2)
    control = kafka_broker.control
    async with Producer(conf(kafka_broker, linger_ms=5, retry_backoff_ms=10)) as producer:
        handles = []
        for i in range(200):
            if i == 50:
                await off(control.push_fault, "Produce", "NOT_LEADER_OR_FOLLOWER", count=3, topic="flaky")
            if i == 120:
                await off(control.push_fault, "Produce", close_connection=True, count=2)
            handles.append(await producer.send("flaky", b"r%04d" % i, partition=i % 2))
            if i % 25 == 0:
                await producer.flush()
        await producer.flush()
        assert all(h.result().offset >= 0 for h in handles)
    assert not await off(control.faults)
    for partition in (0, 1):
        values = await read_values(kafka_broker.bootstrap_servers, "flaky", partition)
        assert values == [b"r%04d" % i for i in range(partition, 200, 2)]


@pytest.mark.parametrize("error", ["UNKNOWN_PRODUCER_ID", "OUT_OF_ORDER_SEQUENCE_NUMBER"])
@pytest.mark.trio
async def test_kip360_pushed_error_bumps_the_epoch(kafka_broker, monkeypatch, error):
    """The broker answers one batch with the error: the producer asks for a new epoch with its current id and
    epoch, restarts its sequences and resends the batch; the caller sees no error, the log no gap and no
    duplicate."""
    await off(kafka_broker.create_topic, "bump", 1)
    inits = watch_requests(monkeypatch, "InitProducerId")
    async with Producer(conf(kafka_broker, linger_ms=0, retry_backoff_ms=10)) as producer:
        for i in range(10):
            await producer.send("bump", b"r%04d" % i, partition=0)
        await producer.flush()
        old = producer.producer_id, producer.producer_epoch
        await off(kafka_broker.control.push_fault, "Produce", error, count=1, topic="bump")
        handles = [await producer.send("bump", b"r%04d" % i, partition=0) for i in range(10, 20)]
        await producer.flush()
        assert [h.result().offset for h in handles] == list(range(10, 20))
        new = producer.producer_id, producer.producer_epoch
    assert new != old
    assert len(inits) == 2 and (inits[1]["producer_id"], inits[1]["producer_epoch"]) == old
    assert [r["api_version"] >= 3 for r in await off(kafka_broker.control.requests, "InitProducerId")] == [True, True]
    no_duplicates_no_gaps(await read_values(kafka_broker.bootstrap_servers, "bump"), 20)
    batches = await off(kafka_broker.control.stored_batches, "bump", 0)
    after = [b for b in batches if (b["producer_id"], b["producer_epoch"]) == new]
    assert after and after[0]["base_sequence"] == 0                  # the sequences started again


@pytest.mark.trio
async def test_kip360_producer_state_really_lost(monkeypatch):
    """For real: DeleteRecords empties the log and producer.id.expiration.ms passes on the broker's clock, so the
    broker forgets the producer. Like Kafka 4.3's ProducerAppendInfo it then takes any sequence from the unknown
    producer (UNKNOWN_PRODUCER_ID is no longer answered for real; the pushed-error tests cover the bump), so the
    producer goes on with its sequences: no error, no gap, no duplicate, and no new InitProducerId."""
    clock = ManualClock(int(time.time() * 1000))
    config = {"producer.id.expiration.ms": 1_000, "producer.id.expiration.check.interval.ms": 100}
    inits = watch_requests(monkeypatch, "InitProducerId")
    broker = await off(start_broker, config, clock=clock)
    try:
        await off(broker.create_topic, "lost", 1)
        async with Producer(conf(broker, linger_ms=0, retry_backoff_ms=10)) as producer:
            for i in range(10):
                await producer.send("lost", b"r%04d" % i, partition=0)
            await producer.flush()
            old = producer.producer_id, producer.producer_epoch
            async with KafkaClient(broker.bootstrap_servers) as client:
                response = await (await client.leader("lost", 0)).request("DeleteRecords", {
                    "topics": [{"name": "lost", "partitions": [{"partition_index": 0, "offset": 10}]}],
                    "timeout_ms": 5_000})
                assert response.topics[0].partitions[0].error_code == 0
            await off(broker.call, lambda: clock.advance(2_000))
            partition = broker.cluster.metadata.topics["lost"].partitions[0]
            with trio.fail_after(10):
                while old[0] in await off(broker.call, lambda: dict(partition.producers.entries)):
                    await trio.sleep(0.02)
            handles = [await producer.send("lost", b"r%04d" % i, partition=0) for i in range(10, 20)]
            await producer.flush()
            assert [h.result().offset for h in handles] == list(range(10, 20))
            assert (producer.producer_id, producer.producer_epoch) == old
        assert len(inits) == 1
        batches = await off(broker.control.stored_batches, "lost", 0)
        assert [b["base_offset"] for b in batches] == [b["base_sequence"] for b in batches]   # sequences go on
        assert batches[0]["base_offset"] == 10 and sum(b["record_count"] for b in batches) == 10
        async with KafkaClient(broker.bootstrap_servers) as client:
            from kafkamock.client import read_range
            values = [r.value async for chunk in read_range(client, "lost", 0, 10, 20) for r in chunk.records]
        assert values == [b"r%04d" % i for i in range(10, 20)]
    finally:
        await off(broker.stop)


@pytest.mark.trio
async def test_send_all_for_bulk_writers(kafka_broker):
    from kafkamock.client import OutgoingRecord
    await off(kafka_broker.create_topic, "bulk", 3)
    async with Producer(conf(kafka_broker)) as producer:
        result = await producer.send_all(OutgoingRecord("bulk", None, b"r%04d" % i, partition=i % 3)
                                          for i in range(300))
    assert sorted(result) == [("bulk", 0), ("bulk", 1), ("bulk", 2)]
    for p in range(3):
        assert await read_values(kafka_broker.bootstrap_servers, "bulk", p) == [b"r%04d" % i
                                                                                for i in range(p, 300, 3)]


def test_blocking_face(kafka_broker):
    """``kafkamock.client.blocking.Producer`` from plain code: send returns the handle, flush waits."""
    from kafkamock.client.blocking import Producer as BlockingProducer

    kafka_broker.create_topic("plain", 1)
    with BlockingProducer({"bootstrap.servers": kafka_broker.bootstrap_servers, "linger.ms": 100}) as producer:
        handles = [producer.send("plain", b"r%04d" % i, partition=0) for i in range(5)]
        producer.flush()
        assert [h.result().offset for h in handles] == list(range(5))
        assert producer.idempotent
    (batch,) = kafka_broker.control.stored_batches("plain", 0)
    assert batch["record_count"] == 5


@pytest.mark.trio
async def test_tansu_idempotent_produce(tansu):
    """Against Tansu, a broker that is not kafkamock: 1000 records, idempotent, read back with read_range and
    with librdkafka."""
    async with KafkaClient(tansu) as client:
        response = await (await client.any_broker()).request("CreateTopics", {"topics": [
            {"name": "tansu-topic", "num_partitions": 1, "replication_factor": 1}], "timeout_ms": 10_000})
        assert response.topics[0].error_code == 0
    async with Producer({"bootstrap.servers": tansu, "enable.idempotence": True}) as producer:
        handles = [await producer.send("tansu-topic", b"r%04d" % i, partition=0) for i in range(1000)]
        await producer.flush()
        assert [h.result().offset for h in handles] == list(range(1000))
    async with KafkaClient(tansu) as client:      # up to offset 1000: Tansu 0.6's ListOffsets(latest) lags behind
        from kafkamock.client import read_range
        values = [r.value async for chunk in read_range(client, "tansu-topic", 0, 0, 1000, wait_timeout_s=10)
                  for r in chunk.records]
    no_duplicates_no_gaps(values, 1000)

    def consume() -> list[bytes]:
        consumer = confluent_kafka.Consumer({"bootstrap.servers": tansu, "group.id": "g", "enable.auto.commit": False,
                                             "auto.offset.reset": "earliest"})
        consumer.assign([confluent_kafka.TopicPartition("tansu-topic", 0, 0)])
        got: list[bytes] = []
        deadline = time.monotonic() + 30
        while len(got) < 1000 and time.monotonic() < deadline:
            for message in consumer.consume(1000, 1.0):
                assert not message.error(), message.error()
                got.append(message.value())
        consumer.close()
        return got

    no_duplicates_no_gaps(await trio.to_thread.run_sync(consume), 1000)
