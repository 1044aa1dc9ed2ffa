"""Groups end to end against a ``kafkamock serve`` process: KIP-211's expiration table with
``offsets.retention.minutes=1`` on the real clock, and groups and offsets surviving a restart on ``--data-dir``.

The expiry test sets every row up at once and waits once (about a minute, the retention's unit), checking each
row against the seed's table; the waits are conditions with deadlines, never sleeps standing in for an event.
"""

from __future__ import annotations

import threading
import time

import pytest
from client_support import RawClient, wait_until
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from support.serve_process import ServeProcess

from kafkamock.errors import ErrorCode as E

pytestmark = pytest.mark.slow


def create_topics(bootstrap: str, *specs: tuple[str, int]) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(name, partitions, 1) for name, partitions in specs])
    for future in futures.values():
        future.result(timeout=30)


def produce(bootstrap: str, topic: str, count: int, partitions: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for n in range(count):
        producer.produce(topic, value=str(n).encode(), partition=n % partitions)
    assert producer.flush(30) == 0


def consumer(bootstrap: str, group: str, **extra) -> Consumer:
    return Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                     "enable.auto.commit": False, **extra})


def consume(c: Consumer, count: int, timeout: float = 30) -> list:
    got: list = []

    def step():
        message = c.poll(0.2)
        if message is not None and message.error() is None:
            got.append(message)
    wait_until(lambda: len(got) >= count, timeout, f"{count} records", step=step)
    return got


def committed(bootstrap: str, group: str, partitions: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
    """The committed offsets of ``group`` (-1001 when none), read by a consumer that does not join."""
    reader = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        got = reader.committed([TopicPartition(t, p) for t, p in partitions], timeout=10)
        return {(tp.topic, tp.partition): tp.offset for tp in got}
    finally:
        reader.close()


def groups(bootstrap: str) -> set[str]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    return {g.group_id for g in admin.list_consumer_groups().result(timeout=10).valid}


def raw_commit(bootstrap: str, group: str, topic: str, partition: int, offset: int, retention_ms: int) -> int:
    """An OffsetCommit v2 with RetentionTimeMs, as an old client sends it (no group membership)."""
    with RawClient(bootstrap, timeout=10) as raw:
        _, answer = raw.request("OffsetCommit", 2, {
            "group_id": group, "generation_id_or_member_epoch": -1, "member_id": "",
            "retention_time_ms": retention_ms,
            "topics": [{"name": topic, "partitions": [{"partition_index": partition, "committed_offset": offset,
                                                       "committed_metadata": ""}]}]})
    return answer.topics[0].partitions[0].error_code


def test_kip211_every_row_of_the_expiration_table_end_to_end():
    config = ["--config", "offsets.retention.minutes=1", "--config", "offsets.retention.check.interval.ms=500",
              "--config", "group.initial.rebalance.delay.ms=0"]
    with ServeProcess(config) as broker:
        bootstrap = broker.bootstrap
        create_topics(bootstrap, ("read", 1), ("dropped", 1))
        produce(bootstrap, "read", 5, 1)

        # Row "not Empty": a Stable group keeps the offsets of what it subscribes to, whatever their age, and
        # loses those of a topic no member subscribes to ("dropped") by commit time.
        stable = consumer(bootstrap, "stable", **{"session.timeout.ms": 10000})
        stable.subscribe(["read"])
        consume(stable, 5)
        stable.commit(offsets=[TopicPartition("read", 0, 5), TopicPartition("dropped", 0, 2)], asynchronous=False)
        stop = threading.Event()

        def keep_polling():                      # the member heartbeats from its poll loop
            while not stop.is_set():
                stable.poll(0.2)
        poller = threading.Thread(target=keep_polling, daemon=True)
        poller.start()

        # Row "Empty, with a protocol type": a group whose only member left expires a minute after it emptied.
        empty = consumer(bootstrap, "emptied")
        empty.subscribe(["read"])
        consume(empty, 5)
        empty.commit(offsets=[TopicPartition("read", 0, 4)], asynchronous=False)
        empty.close()

        # Row "Empty, no protocol type": standalone commits (assign, no subscribe) expire by commit time.
        solo = consumer(bootstrap, "standalone")
        solo.assign([TopicPartition("read", 0)])
        solo.commit(offsets=[TopicPartition("read", 0, 3)], asynchronous=False)
        solo.close()

        # Row "v2-v4 with RetentionTimeMs": per-offset expiry from the commit time (10 s), next to a -1 commit
        # of the same standalone group that waits for the broker's minute.
        assert raw_commit(bootstrap, "old-client", "read", 0, 1, 10_000) == E.NONE
        assert raw_commit(bootstrap, "old-client", "dropped", 0, 1, -1) == E.NONE
        started = time.monotonic()
        try:
            wait_until(lambda: committed(bootstrap, "old-client", [("read", 0)])[("read", 0)] < 0, 30,
                       "the 10 s retention of the v2 commit")
            assert time.monotonic() - started < 50                       # well before the broker's minute
            assert committed(bootstrap, "old-client", [("dropped", 0)])[("dropped", 0)] == 1
            assert committed(bootstrap, "emptied", [("read", 0)])[("read", 0)] == 4
            wait_until(lambda: "emptied" not in groups(bootstrap) and "standalone" not in groups(bootstrap), 90,
                       "the emptied and standalone groups to expire")
            assert committed(bootstrap, "emptied", [("read", 0)])[("read", 0)] < 0
            assert committed(bootstrap, "standalone", [("read", 0)])[("read", 0)] < 0
            wait_until(lambda: committed(bootstrap, "stable", [("dropped", 0)])[("dropped", 0)] < 0, 30,
                       "the unsubscribed topic's offset to expire")
            assert committed(bootstrap, "stable", [("read", 0)])[("read", 0)] == 5   # still Stable: kept
            assert "stable" in groups(bootstrap)
        finally:
            stop.set()
            poller.join(10)
            stable.close()


def test_groups_and_offsets_survive_a_restart_and_deleted_groups_stay_gone(tmp_path):
    with ServeProcess(["--data-dir", str(tmp_path), "--config", "group.initial.rebalance.delay.ms=0"]) as broker:
        bootstrap = broker.bootstrap
        create_topics(bootstrap, ("orders", 4))
        produce(bootstrap, "orders", 40, 4)
        for group, protocol in (("classic-group", "classic"), ("kip848-group", "consumer")):
            c = consumer(bootstrap, group, **{"group.protocol": protocol})
            c.subscribe(["orders"])
            consume(c, 40)
            c.commit(asynchronous=False)
            c.close()
        gone = consumer(bootstrap, "deleted-group")
        gone.assign([TopicPartition("orders", 0)])
        gone.commit(offsets=[TopicPartition("orders", 0, 3)], asynchronous=False)
        gone.close()
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.delete_consumer_groups(["deleted-group"])["deleted-group"].result(timeout=10)
        partitions = [("orders", p) for p in range(4)]
        before = {g: committed(bootstrap, g, partitions) for g in ("classic-group", "kip848-group")}
        assert all(offset == 10 for offsets in before.values() for offset in offsets.values())

        broker.stop()
        broker.start()

        assert {"classic-group", "kip848-group"} <= groups(bootstrap)
        assert "deleted-group" not in groups(bootstrap)
        assert {g: committed(bootstrap, g, partitions) for g in before} == before
        assert committed(bootstrap, "deleted-group", [("orders", 0)])[("orders", 0)] < 0
        admin = AdminClient({"bootstrap.servers": bootstrap})
        described = admin.describe_consumer_groups(["kip848-group"])["kip848-group"].result(timeout=10)
        assert described.group_id == "kip848-group"
        produce(bootstrap, "orders", 8, 4)
        for group, protocol in (("classic-group", "classic"), ("kip848-group", "consumer")):
            resumed = consumer(bootstrap, group, **{"group.protocol": protocol})
            resumed.subscribe(["orders"])
            got = consume(resumed, 8)
            assert sorted(int(m.value()) for m in got) == list(range(8))   # only the new records
            assert all(m.offset() >= 10 for m in got)
            resumed.close()
