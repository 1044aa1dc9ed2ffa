"""kafkamock's transactional Producer against the broker: commits visible to read_committed readers (ours and
librdkafka), aborts invisible, offsets committed with the transaction, zombie fencing, the state machine's illegal
calls, both transaction protocols (KIP-890 part 2 and AddPartitionsToTxn), and KIP-360: after an abortable error
the producer aborts, bumps its epoch with InitProducerId carrying the old id and epoch, and goes on."""

from __future__ import annotations

import confluent_kafka
import pytest
import trio
from producer_support import read_values, watch_requests

from kafkamock.client import KafkaClient
from kafkamock.client.errors import KafkaError
from kafkamock.client.producer import Producer
from kafkamock.client.transactions import ConsumerGroupMetadata, IllegalStateError, State

pytestmark = pytest.mark.trio


async def off(fn, *args, **kwargs):
    return await trio.to_thread.run_sync(lambda: fn(*args, **kwargs))


def txn_conf(broker, tid: str, **extra):
    return {"bootstrap.servers": broker.bootstrap_servers, "transactional.id": tid, "linger.ms": 0, **extra}


async def test_commit_is_visible_and_abort_is_not(kafka_broker):
    await off(kafka_broker.create_topic, "txn", 2)
    async with Producer(txn_conf(kafka_broker, "t1")) as producer:
        await producer.init_transactions()
        assert producer.state is State.READY and producer.transaction_v2      # kafkamock finalizes level 2
        producer.begin_transaction()
        for i in range(5):
            await producer.send("txn", b"c%d" % i, partition=i % 2)
        await producer.commit_transaction()
        producer.begin_transaction()
        for i in range(5):
            await producer.send("txn", b"a%d" % i, partition=i % 2)
        await producer.flush()
        await producer.abort_transaction()
        producer.begin_transaction()
        await producer.send("txn", b"c5", partition=0)
        await producer.commit_transaction()
    committed = [await read_values(kafka_broker.bootstrap_servers, "txn", p, isolation_level=1) for p in (0, 1)]
    assert committed == [[b"c0", b"c2", b"c4", b"c5"], [b"c1", b"c3"]]
    uncommitted = await read_values(kafka_broker.bootstrap_servers, "txn", 0)
    assert uncommitted == [b"c0", b"c2", b"c4", b"a0", b"a2", b"a4", b"c5"]

    def librdkafka_read_committed() -> list[bytes]:
        consumer = confluent_kafka.Consumer({"bootstrap.servers": kafka_broker.bootstrap_servers, "group.id": "rc",
                                             "isolation.level": "read_committed", "enable.auto.commit": False})
        consumer.assign([confluent_kafka.TopicPartition("txn", 0, 0)])
        got: list[bytes] = []
        for _ in range(20):
            got += [m.value() for m in consumer.consume(10, 0.5) if not m.error()]
            if len(got) >= 4:
                break
        consumer.close()
        return got

    assert await off(librdkafka_read_committed) == [b"c0", b"c2", b"c4", b"c5"]


@pytest.mark.kafkamock(config={"kafkamock.transaction.version": 1})
async def test_transaction_version_1_adds_partitions_explicitly(kafka_broker):
    """Without the finalized feature transaction.version 2, Java 4.3 sends AddPartitionsToTxn before the first batch
    to a partition and caps Produce at v11 and EndTxn at v4."""
    await off(kafka_broker.create_topic, "tv1", 1)
    async with Producer(txn_conf(kafka_broker, "t-v1")) as producer:
        await producer.init_transactions()
        assert not producer.transaction_v2
        producer.begin_transaction()
        for i in range(3):
            await producer.send("tv1", b"c%d" % i, partition=0)
        await producer.commit_transaction()
        assert producer.producer_epoch == 0                    # EndTxn v4 does not move the epoch
    assert len(await off(kafka_broker.control.requests, "AddPartitionsToTxn")) == 1
    assert {r["api_version"] for r in await off(kafka_broker.control.requests, "Produce")} == {11}
    assert {r["api_version"] for r in await off(kafka_broker.control.requests, "EndTxn")} == {4}
    assert await read_values(kafka_broker.bootstrap_servers, "tv1", isolation_level=1) == [b"c0", b"c1", b"c2"]


@pytest.mark.parametrize("tv", [1, 2])
async def test_send_offsets_to_transaction(kafka_broker_factory, tv):
    broker = await off(kafka_broker_factory, config={"kafkamock.transaction.version": tv})
    await off(broker.create_topic, "in", 1)
    await off(broker.create_topic, "out", 1)
    async with Producer(txn_conf(broker, "t-off")) as producer:
        await producer.init_transactions()
        producer.begin_transaction()
        await producer.send("out", b"x", partition=0)
        await producer.send_offsets_to_transaction({("in", 0): 42}, "consume-transform")
        await producer.commit_transaction()
        producer.begin_transaction()
        await producer.send_offsets_to_transaction({("in", 0): 99}, ConsumerGroupMetadata("consume-transform"))
        await producer.abort_transaction()
    assert len(await off(broker.control.requests, "AddOffsetsToTxn")) == (2 if tv == 1 else 0)
    async with KafkaClient(broker.bootstrap_servers) as client:
        conn = await client.coordinator("consume-transform")
        response = await conn.request("OffsetFetch", {"groups": [{"group_id": "consume-transform", "topics": [
            {"name": "in", "partition_indexes": [0]}]}], "require_stable": True}, version=9)
        (group,) = response.groups
        assert group.topics[0].partitions[0].committed_offset == 42


async def test_a_second_instance_fences_the_first(kafka_broker):
    await off(kafka_broker.create_topic, "zombie", 1)
    async with Producer(txn_conf(kafka_broker, "same-id")) as zombie, \
            Producer(txn_conf(kafka_broker, "same-id")) as successor:
        await zombie.init_transactions()
        zombie.begin_transaction()
        await (await zombie.send("zombie", b"z0", partition=0))
        await successor.init_transactions()              # aborts the zombie's open transaction, bumps the epoch
        assert successor.producer_id == zombie.producer_id and successor.producer_epoch > zombie.producer_epoch
        handle = await zombie.send("zombie", b"z1", partition=0)
        with pytest.raises(KafkaError) as caught:
            await handle
        assert caught.value.name == "PRODUCER_FENCED" and caught.value.fatal
        assert zombie.state is State.FATAL_ERROR
        for call in (zombie.commit_transaction, zombie.abort_transaction):
            with pytest.raises(KafkaError, match="PRODUCER_FENCED"):
                await call()
        with pytest.raises(KafkaError, match="PRODUCER_FENCED"):
            zombie.begin_transaction()
        successor.begin_transaction()
        await successor.send("zombie", b"s0", partition=0)
        await successor.commit_transaction()
    assert await read_values(kafka_broker.bootstrap_servers, "zombie", isolation_level=1) == [b"s0"]


async def test_illegal_transitions(kafka_broker):
    await off(kafka_broker.create_topic, "ill", 1)
    async with Producer(txn_conf(kafka_broker, "t-ill")) as producer:
        with pytest.raises(IllegalStateError, match="init_transactions"):
            await producer.send("ill", b"x")
        with pytest.raises(IllegalStateError):
            producer.begin_transaction()                 # UNINITIALIZED -> IN_TRANSACTION
        await producer.init_transactions()
        with pytest.raises(IllegalStateError):
            await producer.init_transactions()           # READY -> INITIALIZING
        with pytest.raises(IllegalStateError, match="IN_TRANSACTION"):
            await producer.commit_transaction()
        with pytest.raises(IllegalStateError):
            await producer.abort_transaction()
        with pytest.raises(IllegalStateError, match="IN_TRANSACTION"):
            await producer.send("ill", b"x")
        with pytest.raises(IllegalStateError, match="IN_TRANSACTION"):
            await producer.send_offsets_to_transaction({("ill", 0): 1}, "g")
        producer.begin_transaction()
        with pytest.raises(IllegalStateError):
            producer.begin_transaction()                 # IN_TRANSACTION -> IN_TRANSACTION
        await producer.commit_transaction()               # an empty transaction: nothing to send
        assert producer.state is State.READY


@pytest.mark.parametrize("tv", [1, 2])
async def test_kip360_abortable_error_then_abort_bumps_the_epoch(kafka_broker_factory, monkeypatch, tv):
    """A batch of the transaction fails with OUT_OF_ORDER_SEQUENCE_NUMBER although it is the partition's next one
    (so the broker lost state): ABORTABLE_ERROR, sends refused; abort_transaction ends the transaction and bumps
    the epoch with InitProducerId carrying the current id and epoch (after EndTxn v5 already moved it on, with
    transaction.version 2); the next transaction commits with the new epoch, its sequences from 0."""
    error = "OUT_OF_ORDER_SEQUENCE_NUMBER"
    broker = await off(kafka_broker_factory, config={"kafkamock.transaction.version": tv})
    await off(broker.create_topic, "kip360", 1)
    inits = watch_requests(monkeypatch, "InitProducerId")
    async with Producer(txn_conf(broker, "t-360", **{"retry.backoff.ms": 10})) as producer:
        await producer.init_transactions()
        producer.begin_transaction()
        await (await producer.send("kip360", b"lost0", partition=0))
        await off(broker.control.push_fault, "Produce", error, count=1, topic="kip360")
        failed = await producer.send("kip360", b"lost1", partition=0)
        with pytest.raises(KafkaError, match=error):
            await failed
        assert producer.state is State.ABORTABLE_ERROR
        with pytest.raises(KafkaError, match="error state"):
            await producer.send("kip360", b"refused", partition=0)
        with pytest.raises(KafkaError, match="error state"):
            await producer.commit_transaction()
        before = producer.producer_id, producer.producer_epoch
        await producer.abort_transaction()
        assert producer.state is State.READY
        assert (inits[-1]["producer_id"], inits[-1]["producer_epoch"]) == (before[0], before[1] + (tv == 2))
        assert (producer.producer_id, producer.producer_epoch) != before
        producer.begin_transaction()
        for i in range(3):
            await producer.send("kip360", b"ok%d" % i, partition=0)
        await producer.commit_transaction()
    assert len(inits) == 2
    assert await read_values(broker.bootstrap_servers, "kip360", isolation_level=1) == [b"ok0", b"ok1", b"ok2"]
    batches = [b for b in await off(broker.control.stored_batches, "kip360", 0) if not b["control"]]
    latest = [b for b in batches if (b["producer_id"], b["producer_epoch"]) == (batches[-1]["producer_id"],
                                                                               batches[-1]["producer_epoch"])]
    # the sequences started again with the new epoch (the three sends may have gone in one batch or more)
    assert [b["base_sequence"] for b in latest] == [sum(x["record_count"] for x in latest[:i]) for i in range(len(latest))]
    assert latest[0]["base_sequence"] == 0 and sum(b["record_count"] for b in latest) == 3


async def test_close_aborts_an_open_transaction(kafka_broker):
    await off(kafka_broker.create_topic, "closing", 1)
    async with Producer(txn_conf(kafka_broker, "t-close")) as producer:
        await producer.init_transactions()
        producer.begin_transaction()
        await (await producer.send("closing", b"never", partition=0))
    assert producer.state is State.READY
    async with Producer(txn_conf(kafka_broker, "t-close-2")) as other:   # the partition is stable again
        await other.init_transactions()
        other.begin_transaction()
        await other.send("closing", b"after", partition=0)
        await other.commit_transaction()
    assert await read_values(kafka_broker.bootstrap_servers, "closing", isolation_level=1) == [b"after"]


async def test_unknown_producer_id_without_log_start_is_retried_in_a_transaction(kafka_broker):
    """Java's TransactionManager.canRetry: UNKNOWN_PRODUCER_ID with no log start offset in the answer is retried
    as it is; the transaction goes on and its records are written once."""
    await off(kafka_broker.create_topic, "retried", 1)
    async with Producer(txn_conf(kafka_broker, "t-upid", **{"retry.backoff.ms": 10})) as producer:
        await producer.init_transactions()
        producer.begin_transaction()
        await (await producer.send("retried", b"r0", partition=0))
        await off(kafka_broker.control.push_fault, "Produce", "UNKNOWN_PRODUCER_ID", count=2, topic="retried")
        assert (await (await producer.send("retried", b"r1", partition=0))).offset == 1
        await producer.commit_transaction()
    assert not await off(kafka_broker.control.faults)
    assert await read_values(kafka_broker.bootstrap_servers, "retried", isolation_level=1) == [b"r0", b"r1"]
