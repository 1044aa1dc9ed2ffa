"""kafkamock's Consumer against a real broker over sockets: every public method, both group protocols, the
assignors, auto-commit, read_committed, and the blocking face."""

from __future__ import annotations

import re

import confluent_kafka
import confluent_kafka.admin
import pytest
import trio

from kafkamock.client import CommitFailedError, Consumer, KafkaError, OffsetAndMetadata, TopicPartition, blocking

pytestmark = pytest.mark.kafkamock(config={"group.initial.rebalance.delay.ms": 0,
                                           "group.consumer.heartbeat.interval.ms": 500,
                                           "group.consumer.min.heartbeat.interval.ms": 100})
trio_test = pytest.mark.trio


async def in_thread(fn, *args, **kwargs):
    return await trio.to_thread.run_sync(lambda: fn(*args, **kwargs))


def _produce(bootstrap: str, topic: str, count: int, partitions: int, start: int = 0, **record) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i in range(start, start + count):
        producer.produce(topic, key=f"k{i}".encode(), value=f"v{i}".encode(), partition=i % partitions, **record)
    assert producer.flush(10) == 0


async def setup_topic(broker, topic: str, partitions: int, count: int) -> None:
    await in_thread(broker.create_topic, topic, partitions)
    await in_thread(_produce, broker.bootstrap_servers, topic, count, partitions)


async def drain(consumer: Consumer, count: int, timeout: float = 20.0) -> list:
    got: list = []
    with trio.fail_after(timeout):
        while len(got) < count:
            got.extend(await consumer.poll(0.5))
    return got


def conf(broker, **extra) -> dict:
    return {"bootstrap.servers": broker.bootstrap_servers, "auto.offset.reset": "earliest", **extra}


@trio_test
@pytest.mark.parametrize("protocol", ["classic", "consumer"])
async def test_subscribe_poll_commit_and_resume_from_the_committed_offsets(kafka_broker, protocol):
    await setup_topic(kafka_broker, "orders", 3, 30)
    settings = conf(kafka_broker, **{"group.id": "g1", "group.protocol": protocol, "enable.auto.commit": False})
    async with Consumer(settings) as c:
        c.subscribe(["orders"])
        got = await drain(c, 30)
        assert sorted(r.value for r in got) == sorted(f"v{i}".encode() for i in range(30))
        assert c.assignment() == {TopicPartition("orders", p) for p in range(3)}
        assert all(r.key == f"k{int(r.value[1:])}".encode() and r.timestamp_type == 0 for r in got)
        await c.commit({TopicPartition("orders", 0): OffsetAndMetadata(4, "half")})
        committed = await c.committed([TopicPartition("orders", 0), TopicPartition("orders", 1)])
        assert committed == {TopicPartition("orders", 0): OffsetAndMetadata(4, "half", -1),
                             TopicPartition("orders", 1): None}
        assert await c.position(TopicPartition("orders", 0)) == 10
    async with Consumer(settings) as c:
        c.subscribe(["orders"])
        again = await drain(c, 6 + 20)
        from_p0 = sorted(r.offset for r in again if r.partition == 0)
        assert from_p0 == list(range(4, 10)), "resumes at the committed offset, earliest elsewhere"


@trio_test
async def test_assign_seek_position_pause_resume_and_max_poll_records(kafka_broker):
    await setup_topic(kafka_broker, "events", 2, 40)
    tp0, tp1 = TopicPartition("events", 0), TopicPartition("events", 1)
    async with Consumer(conf(kafka_broker, **{"max.poll.records": 7})) as c:
        c.assign([tp0, tp1])
        first = await c.poll(5)
        assert 0 < len(first) <= 7
        c.seek(tp0, 15)
        c.pause([tp1])
        assert c.paused() == {tp1}
        got = await drain(c, 5)
        assert {r.partition for r in got} == {0} and sorted(r.offset for r in got) == list(range(15, 20))
        assert await c.position(tp0) == 20
        c.resume([tp1])
        rest = await drain(c, 20 - len([r for r in first if r.partition == 1]))
        assert {r.partition for r in rest} == {1}
        c.seek_to_beginning([tp0])
        assert await c.position(tp0) == 0
        c.seek_to_end([tp0])
        assert await c.position(tp0) == 20
        with pytest.raises(ValueError):
            c.seek(TopicPartition("events", 5), 0)
        with pytest.raises(ValueError):
            c.subscribe(["events"])


@trio_test
async def test_pattern_subscription_picks_up_a_new_topic(kafka_broker):
    await setup_topic(kafka_broker, "metrics.cpu", 1, 3)
    settings = conf(kafka_broker, **{"group.id": "pattern", "metadata.max.age.ms": 200})
    async with Consumer(settings) as c:
        c.subscribe(re.compile(r"metrics\..*"))
        got = await drain(c, 3)
        assert {r.topic for r in got} == {"metrics.cpu"}
        await setup_topic(kafka_broker, "metrics.mem", 1, 2)
        more = await drain(c, 2)
        assert {r.topic for r in more} == {"metrics.mem"}
        assert c.subscription() == {"metrics.cpu", "metrics.mem"}


@trio_test
@pytest.mark.parametrize("strategy", ["range", "roundrobin", "cooperative-sticky"])
async def test_two_members_split_the_partitions_with_each_assignor(kafka_broker, strategy):
    await setup_topic(kafka_broker, "work", 4, 40)
    settings = conf(kafka_broker, **{"group.id": f"split-{strategy}", "partition.assignment.strategy": strategy,
                                     "heartbeat.interval.ms": 200})
    async with Consumer(settings) as a, Consumer(settings) as b:
        a.subscribe(["work"])
        b.subscribe(["work"])
        seen: list = []
        with trio.fail_after(30):
            while not (len(a.assignment()) == 2 and len(b.assignment()) == 2):
                seen.extend(await a.poll(0.1))
                seen.extend(await b.poll(0.1))
        assert a.assignment().isdisjoint(b.assignment())
        with trio.fail_after(20):
            while len({(r.partition, r.offset) for r in seen}) < 40:
                seen.extend(await a.poll(0.1))
                seen.extend(await b.poll(0.1))


@trio_test
async def test_auto_commit_and_the_rebalance_listener(kafka_broker):
    await setup_topic(kafka_broker, "auto", 2, 10)
    calls: list = []

    class Listener:
        def on_partitions_assigned(self, partitions):
            calls.append(("assigned", sorted(partitions)))

        async def on_partitions_revoked(self, partitions):
            calls.append(("revoked", sorted(partitions)))
    settings = conf(kafka_broker, **{"group.id": "auto-g", "auto.commit.interval.ms": 100})
    async with Consumer(settings) as c:
        c.subscribe(["auto"], listener=Listener())
        await drain(c, 10)
        with trio.fail_after(10):
            while (await c.committed([TopicPartition("auto", 0)]))[TopicPartition("auto", 0)] is None:
                await c.poll(0.2)
        assert (await c.committed([TopicPartition("auto", 0)]))[TopicPartition("auto", 0)].offset == 5
    everything = [TopicPartition("auto", 0), TopicPartition("auto", 1)]
    assert calls == [("assigned", everything), ("revoked", everything)]


@trio_test
async def test_commit_async_callback_and_a_commit_from_a_stale_member(kafka_broker):
    await setup_topic(kafka_broker, "acks", 1, 5)
    done = trio.Event()
    results: list = []

    def callback(offsets, error):
        results.append((offsets, error))
        done.set()
    async with Consumer(conf(kafka_broker, **{"group.id": "async-g", "enable.auto.commit": False})) as c:
        c.subscribe(["acks"])
        await drain(c, 5)
        c.commit_async(callback=callback)
        with trio.fail_after(10):
            await done.wait()
        assert results == [({TopicPartition("acks", 0): OffsetAndMetadata(5, "", 0)}, None)]
        # A commit carrying a generation the group never had is refused as Kafka refuses it.
        c.membership.generation += 7
        with pytest.raises(CommitFailedError) as failed:
            await c.commit()
        assert failed.value.name == "ILLEGAL_GENERATION"


@trio_test
async def test_read_committed_skips_aborted_transactions_and_stops_at_the_open_one(kafka_broker):
    await in_thread(kafka_broker.create_topic, "txn", 1)
    bootstrap = kafka_broker.bootstrap_servers

    def transactions():
        p = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "transactional.id": "tx-c"})
        p.init_transactions()
        for value, commit in ((b"a", True), (b"b", False), (b"c", True)):
            p.begin_transaction()
            p.produce("txn", value=value, partition=0)
            p.flush()                   # librdkafka drops what is still queued when a transaction aborts
            p.commit_transaction() if commit else p.abort_transaction()
        p.begin_transaction()
        p.produce("txn", value=b"open", partition=0)
        p.flush()
        return p
    producer = await in_thread(transactions)
    async with Consumer(conf(kafka_broker, **{"isolation.level": "read_committed"})) as committed, \
            Consumer(conf(kafka_broker)) as uncommitted:
        for c in (committed, uncommitted):
            c.assign([TopicPartition("txn", 0)])
        assert [r.value for r in await drain(committed, 2)] == [b"a", b"c"]
        assert [r.value for r in await drain(uncommitted, 4)] == [b"a", b"b", b"c", b"open"]
        assert await committed.poll(0.5) == []
        await in_thread(producer.commit_transaction)
        assert [r.value for r in await drain(committed, 1)] == [b"open"]


@trio_test
async def test_offset_reset_policies_and_deserializers(kafka_broker):
    await setup_topic(kafka_broker, "reset", 1, 4)
    tp = TopicPartition("reset", 0)
    async with Consumer(conf(kafka_broker, **{"auto.offset.reset": "latest"})) as c:
        c.assign([tp])
        assert await c.position(tp) == 4
    async with Consumer(conf(kafka_broker, **{"auto.offset.reset": "by_duration:PT1H",
                                              "value.deserializer": lambda b: b.decode().upper()})) as c:
        c.assign([tp])
        assert [r.value for r in await drain(c, 4)] == ["V0", "V1", "V2", "V3"]
    async with Consumer(conf(kafka_broker, **{"auto.offset.reset": "none", "group.id": "none-g"})) as c:
        c.assign([tp])
        with pytest.raises(KafkaError) as no_offset:
            await c.poll(1)
        assert no_offset.value.name == "OFFSET_OUT_OF_RANGE"


def test_settings_are_checked_up_front():
    with pytest.raises(ValueError, match="unknown or unsupported setting 'fetch.speed'"):
        Consumer({"bootstrap.servers": "127.0.0.1:1", "fetch.speed": 3})
    with pytest.raises(ValueError, match="must be one of"):
        Consumer({"bootstrap.servers": "127.0.0.1:1", "isolation.level": "dirty"})
    with pytest.raises(ValueError, match="unknown assignor"):
        Consumer({"bootstrap.servers": "127.0.0.1:1", "partition.assignment.strategy": "sticky-ish"})
    with pytest.raises(ValueError, match="set by the broker"):
        Consumer({"bootstrap.servers": "127.0.0.1:1", "group.protocol": "consumer", "session.timeout.ms": 10000})
    with pytest.raises(ValueError, match="sasl.mechanism 'GSSAPI' is not supported"):   # Java's default mechanism
        Consumer({"bootstrap.servers": "127.0.0.1:1", "security.protocol": "SASL_SSL"})


def test_the_blocking_consumer_from_plain_code(kafka_broker):
    kafka_broker.create_topic("plain", 2)
    _produce(kafka_broker.bootstrap_servers, "plain", 10, 2)
    with blocking.Consumer(conf(kafka_broker, **{"group.id": "plain-g", "enable.auto.commit": "false"})) as c:
        c.subscribe(["plain"])
        got = []
        while len(got) < 10:
            got += c.poll(1.0)
        c.commit()
        assert c.committed([TopicPartition("plain", 1)])[TopicPartition("plain", 1)].offset == 5
        assert c.assignment() == {TopicPartition("plain", 0), TopicPartition("plain", 1)}
        assert c.to_be_revoked_partitions() == set()
    admin = confluent_kafka.admin.AdminClient({"bootstrap.servers": kafka_broker.bootstrap_servers})
    (future,) = admin.describe_consumer_groups(["plain-g"]).values()
    assert future.result(10).members == [], "close left the group"
