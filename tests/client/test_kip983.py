"""KIP-983 in kafkamock's consumer, against a real broker over sockets: a revoke requested in one poll completes
in the next one, ``delay_revoke`` pushes it one poll further (and is refused once the partition is lost), no record
of a revoked partition is returned after its revoke, and a delayed partition's last offsets are committed before it
moves, so the member that takes it over never processes a record twice.
"""

from __future__ import annotations

import confluent_kafka
import confluent_kafka.admin
import pytest
import trio

from kafkamock.client import Consumer, TopicPartition

pytestmark = [pytest.mark.trio, pytest.mark.kafkamock(config={
    "group.initial.rebalance.delay.ms": 0, "group.min.session.timeout.ms": 1000,
    "group.consumer.heartbeat.interval.ms": 500, "group.consumer.min.heartbeat.interval.ms": 100})]

PARTITIONS = 4


async def produce(bootstrap: str, topic: str, start: int, count: int) -> None:
    await trio.to_thread.run_sync(_produce, bootstrap, topic, start, count)


async def in_thread(fn, *args, **kwargs):
    """Broker-handle and confluent calls block: run them off the trio thread."""
    return await trio.to_thread.run_sync(lambda: fn(*args, **kwargs))


def _produce(bootstrap: str, topic: str, start: int, count: int) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    for i in range(start, start + count):
        producer.produce(topic, value=str(i).encode(), partition=i % PARTITIONS)
    assert producer.flush(10) == 0


def settings(bootstrap: str, group: str, protocol: str = "classic", **extra) -> dict:
    base = {"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
            "enable.auto.commit": False}
    if protocol == "consumer":        # KIP-848: the broker assigns and times the heartbeats
        return {**base, "group.protocol": "consumer", **extra}
    return {**base, "partition.assignment.strategy": "cooperative-sticky", "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 200, **extra}


async def poll_until(consumer: Consumer, condition, what: str, sink: list, timeout: float = 20.0) -> None:
    with trio.fail_after(timeout):
        while not condition():
            sink.extend(await consumer.poll(0.2))
    assert condition(), what


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
async def test_delayed_revoke_in_a_cooperative_rebalance_moves_the_partition_one_poll_later(kafka_broker, protocol):
    bootstrap = kafka_broker.bootstrap_servers
    await in_thread(kafka_broker.create_topic, "jobs", PARTITIONS)
    await produce(bootstrap, "jobs", 0, 200)
    processed_a: list = []
    processed_b: list = []
    async with Consumer(settings(bootstrap, "workers", protocol)) as a, \
            Consumer(settings(bootstrap, "workers", protocol)) as b:
        a.subscribe(["jobs"])
        await poll_until(a, lambda: len(processed_a) >= 100 and len(a.assignment()) == PARTITIONS,
                         "A owns every partition", processed_a)
        # A has records of every partition "in processing": nothing committed yet.
        b.subscribe(["jobs"])
        async with trio.open_nursery() as nursery:
            b_done = trio.Event()

            async def run_b():
                while not b_done.is_set():
                    processed_b.extend(await b.poll(0.2))
                    if processed_b:
                        await b.commit()
            nursery.start_soon(run_b)

            # The cooperative rebalance asks A to give partitions up: revoke requested, not done.
            await poll_until(a, lambda: bool(a.to_be_revoked_partitions()), "a revoke request", processed_a)
            pending = a.to_be_revoked_partitions()
            assert pending <= a.assignment() and len(pending) == PARTITIONS // 2
            # Still processing them: delay; they stay A's through the next poll and the one after.
            assert a.delay_revoke(pending) is True
            processed_a.extend(await a.poll(0.2))
            assert pending <= a.assignment(), "a delayed revoke must not complete in the next poll"
            assert a.to_be_revoked_partitions() == pending, "delayed once: due at the following poll"
            await produce(bootstrap, "jobs", 200, 40)   # the partitions keep flowing meanwhile
            assert a.delay_revoke(pending) is True
            for round_ in range(3):
                processed_a.extend(await a.poll(0.2))
                assert pending <= a.assignment()
                assert a.to_be_revoked_partitions() == pending
                if round_ < 2:
                    assert a.delay_revoke(pending)
            # Processing is done: commit what A consumed of them, and let the revoke complete.
            last = {tp: await a.position(tp) for tp in pending}
            await a.commit(last)
            processed_a.extend(await a.poll(0.2))     # revoke-next was 'pending': A gives them up at this poll's start
            assert a.assignment().isdisjoint(pending)
            assert not a.to_be_revoked_partitions()
            seen_after_revoke = len(processed_a)
            # B gets them once A reports them free, and starts at A's committed offsets.
            await poll_until(a, lambda: b.assignment() == pending, "B takes the revoked partitions", processed_a)
            await produce(bootstrap, "jobs", 240, 40)
            await poll_until(a, lambda: len({(r.partition, r.offset) for r in processed_a + processed_b}) >= 280,
                             "every record processed by A or B", processed_a, timeout=30)
            b_done.set()
        assert not [r for r in processed_a[seen_after_revoke:] if TopicPartition(r.topic, r.partition) in pending], \
            "records of a revoked partition after its revoke"
        assert {(r.partition, r.offset) for r in processed_b} >= {(tp.partition, last[tp]) for tp in pending}, \
            "B starts where A committed"
        keys = [(r.partition, r.offset) for r in processed_a + processed_b]
        assert len(keys) == len(set(keys)) == 280, "a record processed twice (or missed)"


async def test_a_partition_lost_to_a_session_timeout_cannot_be_delayed(kafka_broker):
    bootstrap = kafka_broker.bootstrap_servers
    await in_thread(kafka_broker.create_topic, "lossy", PARTITIONS)
    await produce(bootstrap, "lossy", 0, 40)
    got: list = []
    async with Consumer(settings(bootstrap, "lossy-g", **{"session.timeout.ms": 2000})) as a, \
            Consumer(settings(bootstrap, "lossy-g")) as b:
        a.subscribe(["lossy"])
        await poll_until(a, lambda: len(a.assignment()) == PARTITIONS, "A owns every partition", got)
        b.subscribe(["lossy"])
        async with trio.open_nursery() as nursery:
            stop = trio.Event()

            async def run_b():
                while not stop.is_set():
                    await b.poll(0.2)
            nursery.start_soon(run_b)
            await poll_until(a, lambda: bool(a.to_be_revoked_partitions()), "a revoke request", got)
            pending = a.to_be_revoked_partitions()
            assert a.delay_revoke(pending)
            # A's heartbeats stop reaching the coordinator: its session (2 s) runs out.
            await in_thread(kafka_broker.control.push_fault, "Heartbeat", "COORDINATOR_LOAD_IN_PROGRESS", count=100_000)
            admin = confluent_kafka.admin.AdminClient({"bootstrap.servers": bootstrap})

            def a_member_gone() -> bool:
                (future,) = admin.describe_consumer_groups(["lossy-g"]).values()
                return a.membership.member_id not in {m.member_id for m in future.result(10).members}
            with trio.fail_after(20):
                while not await trio.to_thread.run_sync(a_member_gone):
                    await a.poll(0.1)
                    assert a.delay_revoke(a.to_be_revoked_partitions() or pending)
            await in_thread(kafka_broker.control.clear_faults)
            # The next heartbeat learns it: the partitions are lost during a poll, and delaying is refused.
            with trio.fail_after(20):
                while not a.lost_partitions():
                    assert a.delay_revoke(a.to_be_revoked_partitions() or pending)   # still processing them
                    await a.poll(0.2)
            assert pending <= a.lost_partitions()
            assert a.delay_revoke(pending) is False
            assert not a.to_be_revoked_partitions()
            assert a.assignment().isdisjoint(a.lost_partitions())
            stop.set()
