"""kafkamock's Consumer against Tansu, a second Kafka broker implementation, so the client is not tuned to
kafkamock alone: reading assigned partitions, and a classic group of two members that split the partitions and
commit, after which a consumer of the same group resumes at the committed offsets.

Tansu 0.6 does not complete a rebalance for a member joining a group whose members have left (librdkafka's
consumer waits forever there too: SyncGroup answers REBALANCE_IN_PROGRESS), so the resuming consumer assigns the
partitions itself and takes its positions from the group's commits."""

from __future__ import annotations

import confluent_kafka
import confluent_kafka.admin
import pytest
import trio

from kafkamock.client import Consumer, TopicPartition

pytestmark = pytest.mark.trio

PARTITIONS = 4


def _setup(bootstrap: str, topic: str, count: int) -> None:
    admin = confluent_kafka.admin.AdminClient({"bootstrap.servers": bootstrap})
    (future,) = admin.create_topics([confluent_kafka.admin.NewTopic(topic, PARTITIONS, 1)]).values()
    future.result(30)
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    for i in range(count):
        producer.produce(topic, key=f"k{i}".encode(), value=f"v{i}".encode(), partition=i % PARTITIONS)
    assert producer.flush(30) == 0


async def test_assign_seek_and_read_every_record(tansu):
    await trio.to_thread.run_sync(_setup, tansu, "plain", 100)
    async with Consumer({"bootstrap.servers": tansu, "auto.offset.reset": "earliest"}) as c:
        c.assign([TopicPartition("plain", p) for p in range(PARTITIONS)])
        got: list = []
        with trio.fail_after(30):
            while len(got) < 100:
                got += await c.poll(0.5)
        assert sorted(int(r.value[1:]) for r in got) == list(range(100))
        assert all(r.key == b"k" + r.value[1:] for r in got)
        c.seek(TopicPartition("plain", 2), 20)
        with trio.fail_after(30):
            again = await c.poll(2)
            while not again:
                again = await c.poll(0.5)
        assert [r.offset for r in again] == list(range(20, 25))


async def test_a_classic_group_splits_commits_and_hands_over(tansu):
    await trio.to_thread.run_sync(_setup, tansu, "grouped", 40)
    settings = {"bootstrap.servers": tansu, "group.id": "tansu-g", "auto.offset.reset": "earliest",
                "enable.auto.commit": False, "heartbeat.interval.ms": 300, "session.timeout.ms": 10000}
    seen: list = []
    async with Consumer(settings) as a, Consumer(settings) as b:
        a.subscribe(["grouped"])
        b.subscribe(["grouped"])
        with trio.fail_after(60):
            while not (len(a.assignment()) == len(b.assignment()) == 2
                       and len({(r.partition, r.offset) for r in seen}) == 40):
                for c in (a, b):
                    got = await c.poll(0.1)
                    seen += got
                    if got:
                        await c.commit()
        assert a.assignment().isdisjoint(b.assignment())
        keys = [(r.partition, r.offset) for r in seen]
        assert len(keys) == len(set(keys)) == 40
    await trio.to_thread.run_sync(_produce_more, tansu)
    async with Consumer(settings) as c:
        c.assign([TopicPartition("grouped", p) for p in range(PARTITIONS)])
        later: list = []
        with trio.fail_after(60):
            while len(later) < 8:
                later += await c.poll(0.5)
        assert sorted((r.partition, r.offset) for r in later) == [(p, o) for p in range(PARTITIONS) for o in (10, 11)]


def _produce_more(bootstrap: str) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    for i in range(40, 48):
        producer.produce("grouped", value=f"v{i}".encode(), partition=i % PARTITIONS)
    assert producer.flush(30) == 0
