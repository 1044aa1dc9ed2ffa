"""Producer.send_encoded: records handed over already encoded (a v2 batch's records region) go out as batches of
their own, in order with records sent one by one, with the producer's compression, producer id, epoch and
sequences, resent after an epoch bump, and inside transactions."""

from __future__ import annotations

import pytest
import trio
from producer_support import read_values, watch_requests

from kafkamock.client.producer import Producer
from kafkamock.records.v2 import HEADER_SIZE, encode_v2


async def off(fn, *args, **kwargs):
    return await trio.to_thread.run_sync(lambda: fn(*args, **kwargs))


def region(values: list[bytes]) -> bytes:
    """The records region encode_v2 lays out for ``values`` (timestamp deltas 0)."""
    return encode_v2([{"value": v, "timestamp": 7} for v in values])[HEADER_SIZE:]


@pytest.mark.parametrize("compression", ["none", "zstd"])
@pytest.mark.trio
async def test_encoded_batches_keep_their_place_and_sequences(kafka_broker, compression):
    await off(kafka_broker.create_topic, "enc", 1)
    async with Producer({"bootstrap.servers": kafka_broker.bootstrap_servers, "linger.ms": 0,
                         "compression.type": compression}) as producer:
        first = await producer.send("enc", b"one", partition=0)
        handle = await producer.send_encoded("enc", 0, region([b"r%d" % i for i in range(5)]), 5, timestamp=7)
        last = await producer.send("enc", b"two", partition=0)
        await producer.flush()
        assert (first.result().offset, handle.result().offset, last.result().offset) == (0, 1, 6)
        assert handle.result().timestamp == 7
    assert await read_values(kafka_broker.bootstrap_servers, "enc") == [b"one", *(b"r%d" % i for i in range(5)),
                                                                         b"two"]
    batches = await off(kafka_broker.control.stored_batches, "enc", 0)
    assert [(b["base_sequence"], b["compression"]) for b in batches] == [(0, compression), (1, compression),
                                                                         (6, compression)]


@pytest.mark.trio
async def test_encoded_batch_is_resent_after_an_epoch_bump(kafka_broker, monkeypatch):
    await off(kafka_broker.create_topic, "enc-bump", 1)
    inits = watch_requests(monkeypatch, "InitProducerId")
    async with Producer({"bootstrap.servers": kafka_broker.bootstrap_servers, "linger.ms": 0,
                         "retry.backoff.ms": 10}) as producer:
        await producer.send_encoded("enc-bump", 0, region([b"a", b"b"]), 2)
        await producer.flush()
        await off(kafka_broker.control.push_fault, "Produce", "UNKNOWN_PRODUCER_ID", count=1, topic="enc-bump")
        handle = await producer.send_encoded("enc-bump", 0, region([b"c", b"d", b"e"]), 3)
        await producer.flush()
        assert handle.result().offset == 2
    assert len(inits) == 2
    assert await read_values(kafka_broker.bootstrap_servers, "enc-bump") == [b"a", b"b", b"c", b"d", b"e"]


@pytest.mark.trio
async def test_encoded_batches_in_transactions(kafka_broker):
    await off(kafka_broker.create_topic, "enc-txn", 1)
    async with Producer({"bootstrap.servers": kafka_broker.bootstrap_servers, "transactional.id": "enc",
                         "linger.ms": 0}) as producer:
        await producer.init_transactions()
        producer.begin_transaction()
        await producer.send_encoded("enc-txn", 0, region([b"c0", b"c1"]), 2)
        await producer.commit_transaction()
        producer.begin_transaction()
        await producer.send_encoded("enc-txn", 0, region([b"a0"]), 1)
        await producer.flush()
        await producer.abort_transaction()
    assert await read_values(kafka_broker.bootstrap_servers, "enc-txn", isolation_level=1) == [b"c0", b"c1"]


@pytest.mark.trio
async def test_encoded_batch_checks(kafka_broker):
    await off(kafka_broker.create_topic, "enc-checks", 1)
    async with Producer({"bootstrap.servers": kafka_broker.bootstrap_servers, "max.request.size": 1000}) as producer:
        with pytest.raises(Exception, match="UNKNOWN_TOPIC_OR_PARTITION|partition"):
            await producer.send_encoded("enc-checks", 3, region([b"x"]), 1)
        with pytest.raises(Exception, match="max.request.size"):
            await producer.send_encoded("enc-checks", 0, region([b"x" * 2000]), 1)
        with pytest.raises(ValueError):
            await producer.send_encoded("enc-checks", 0, b"", 0)
