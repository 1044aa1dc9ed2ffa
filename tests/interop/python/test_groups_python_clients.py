"""kafka-python and aiokafka consumers in ONE classic group: both speak the ``consumer`` protocol type, and the
one assignor they share is ``roundrobin`` (kafka-python offers range and roundrobin by default, aiokafka
roundrobin only). Whichever member the coordinator makes leader assigns for both. Then kafka-python's admin
client: describe, list offsets, OffsetDelete (which confluent-kafka does not expose) and DeleteGroups.

Every test here passed against Kafka 3.8.0 first (``group_cluster``: see test_groups.py). Kafka 3.8 and 4.3 do
not differ here for the versions these clients send (JoinGroup v5+ and OffsetCommit v2+ from kafka-python 3
and aiokafka 0.12+: Kafka 4.0 dropped only JoinGroup v0-1 and OffsetCommit v0-1).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import Counter

import pytest
from support.targets import TARGETS
from test_groups import GROUP_DEADLINE_S, cluster_for, wait_for

kafka = pytest.importorskip("kafka")
aiokafka = pytest.importorskip("aiokafka")
from aiokafka import AIOKafkaConsumer  # noqa: E402
from aiokafka.coordinator.assignors.roundrobin import (  # noqa: E402
    RoundRobinPartitionAssignor as AioRoundRobin,
)
from confluent_kafka import Producer  # noqa: E402
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition  # noqa: E402
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor  # noqa: E402
from kafka.structs import OffsetAndMetadata  # noqa: E402

PARTITIONS = 4


@pytest.fixture(params=TARGETS)
def group_cluster(request):
    yield from cluster_for(request)


@pytest.fixture(autouse=True)
def _quiet_clients(caplog):
    # kafka-python and aiokafka log rebalances and reconnects at WARNING/ERROR; the tests assert on outcomes.
    caplog.set_level(logging.CRITICAL, logger="kafka")
    caplog.set_level(logging.CRITICAL, logger="aiokafka")


def produce(cluster, topic: str, start: int, count: int) -> dict[tuple[int, int], bytes]:
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all", "linger.ms": 5,
                         "partitioner": "murmur2_random", "message.timeout.ms": 15000})
    reports: dict[tuple[int, int], bytes] = {}
    errors: list = []
    for i in range(start, start + count):
        producer.produce(topic, key=b"k%d" % (i % 29), value=b"py-%06d" % i,
                         on_delivery=lambda err, msg: errors.append(err) if err else
                         reports.__setitem__((msg.partition(), msg.offset()), msg.value()))
        producer.poll(0)
    assert producer.flush(20) == 0 and not errors, errors[:5]
    return reports


class Seen:
    """Records read by either member: (partition, offset, value, who), kept under a lock (two threads)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.records: list[tuple[int, int, bytes, str]] = []

    def add(self, records, who: str) -> None:
        with self.lock:
            self.records.extend((r.partition, r.offset, r.value, who) for r in records)

    def snapshot(self) -> list[tuple[int, int, bytes, str]]:
        with self.lock:
            return list(self.records)


class AioMember(threading.Thread):
    """An aiokafka member on its own thread and event loop: reads, commits what it read, publishes its
    assignment; stops (leaving the group) when told."""

    def __init__(self, cluster, group: str, topic: str, seen: Seen):
        super().__init__(name="aiokafka-member", daemon=True)
        self.metadata, self.group, self.topic, self.seen = cluster, group, topic, seen
        self.assigned: set[int] = set()
        self.error: BaseException | None = None
        self.commit_errors: list[str] = []
        self.stop_requested = threading.Event()
        self.stopped = threading.Event()

    def run(self) -> None:
        try:
            asyncio.run(self.main())
        except BaseException as exc:  # reported by the test thread
            self.error = exc
        finally:
            self.stopped.set()

    async def main(self) -> None:
        consumer = AIOKafkaConsumer(
            self.topic, bootstrap_servers=self.metadata.bootstrap_servers, group_id=self.group,
            client_id="aiokafka-member", enable_auto_commit=False, auto_offset_reset="earliest",
            partition_assignment_strategy=(AioRoundRobin,), session_timeout_ms=10000, heartbeat_interval_ms=500,
            fetch_max_wait_ms=100, request_timeout_ms=15000)
        await asyncio.wait_for(consumer.start(), GROUP_DEADLINE_S)
        try:
            while not self.stop_requested.is_set():
                batches = await consumer.getmany(timeout_ms=100)
                for tp, records in batches.items():
                    self.seen.add(records, "aiokafka")
                    try:                           # commit after processing
                        await consumer.commit({tp: records[-1].offset + 1})
                    except Exception as exc:  # noqa: BLE001 - shown if the test fails
                        self.commit_errors.append(repr(exc))
                self.assigned = {tp.partition for tp in consumer.assignment() if tp.topic == self.topic}
        finally:
            await asyncio.wait_for(consumer.stop(), 15)          # LeaveGroup

    def close(self) -> None:
        self.stop_requested.set()
        self.stopped.wait(30)
        assert self.stopped.is_set(), "the aiokafka member did not stop within 30 s"


def test_kafka_python_and_aiokafka_share_one_group(group_cluster):
    cluster = group_cluster
    topic, group = cluster.name("topic"), cluster.name("group")
    cluster.create_topic(topic, PARTITIONS)
    seen = Seen()
    kp = KafkaConsumer(topic, bootstrap_servers=cluster.bootstrap_servers, group_id=group,
                       client_id="kafka-python-member", enable_auto_commit=False, auto_offset_reset="earliest",
                       partition_assignment_strategy=[RoundRobinPartitionAssignor], session_timeout_ms=10000,
                       heartbeat_interval_ms=500, fetch_max_wait_ms=100, request_timeout_ms=15000)
    aio = AioMember(cluster, group, topic, seen)
    aio.start()
    kp_errors: list[str] = []

    def kp_assigned() -> set[int]:
        return {tp.partition for tp in kp.assignment() if tp.topic == topic}

    def poll_kp() -> None:
        assert aio.error is None, f"aiokafka member failed: {aio.error!r}"
        for tp, records in kp.poll(timeout_ms=100).items():
            seen.add(records, "kafka-python")
            try:
                kp.commit({tp: OffsetAndMetadata(records[-1].offset + 1, "", -1)})
            except Exception as exc:  # noqa: BLE001 - shown if the test fails
                kp_errors.append(repr(exc))

    def detail() -> str:
        return (f"kafka-python owns {sorted(kp_assigned())}, aiokafka owns {sorted(aio.assigned)}, "
                f"{len(seen.snapshot())} records seen, aiokafka error {aio.error!r}, commit errors "
                f"{kp_errors[-3:]} {aio.commit_errors[-3:]}")

    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, request_timeout_ms=15000)
    try:
        def shared() -> bool:
            mine, theirs = kp_assigned(), set(aio.assigned)
            return mine | theirs == set(range(PARTITIONS)) and not mine & theirs and len(mine) == len(theirs) == 2
        wait_for(cluster, shared, "kafka-python and aiokafka to own two partitions each", step=poll_kp,
                 detail=detail)
        owners = {"kafka-python": kp_assigned(), "aiokafka": set(aio.assigned)}

        produced = produce(cluster, topic, 0, 400)
        assert {p for p, _ in produced} == set(range(PARTITIONS))
        wait_for(cluster, lambda: len(seen.snapshot()) >= len(produced), "the group to read 400 records",
                 step=poll_kp, detail=detail)
        records = seen.snapshot()
        counts = Counter((p, o) for p, o, _, _ in records)
        assert max(counts.values()) == 1, "a record was read twice"
        assert {(p, o): v for p, o, v, _ in records} == produced
        for partition, _, _, who in records:
            assert partition in owners[who], (partition, who, owners)
        assert {who for *_, who in records} == {"kafka-python", "aiokafka"}
        assert not kp_errors and not aio.commit_errors, (kp_errors, aio.commit_errors)

        end = {p: 1 + max(o for q, o in produced if q == p) for p in range(PARTITIONS)}
        # Commits land asynchronously from the test's point of view for aiokafka (its own thread): poll for them.
        def committed() -> dict[int, int]:
            offsets = admin.list_group_offsets({group: None})[group]
            return {tp.partition: meta.offset for tp, meta in offsets.items() if tp.topic == topic}
        wait_for(cluster, lambda: committed() == end, "both members' commits to be visible", step=poll_kp,
                 detail=lambda: f"committed {committed()}, end {end}")

        description = admin.describe_groups([group])[group]
        assert description["error"] is None and description["group_state"] == "Stable"
        assert (description["protocol_type"], description["protocol_data"]) == ("consumer", "roundrobin")
        members = {m["client_id"]: m for m in description["members"]}
        assert set(members) == {"aiokafka-member", "kafka-python-member"}
        for client_id, who in (("aiokafka-member", "aiokafka"), ("kafka-python-member", "kafka-python")):
            assert members[client_id]["member_metadata"]["topics"] == [topic]
            assigned = members[client_id]["member_assignment"]["assigned_partitions"]
            assert [(a["topic"], set(a["partitions"])) for a in assigned] == [(topic, owners[who])]

        # The aiokafka member leaves: kafka-python gets every partition and reads what comes next.
        aio.close()
        assert aio.error is None, repr(aio.error)
        wait_for(cluster, lambda: kp_assigned() == set(range(PARTITIONS)), "kafka-python to own every partition",
                 step=poll_kp, detail=detail)
        before = len(seen.snapshot())
        more = produce(cluster, topic, 400, 100)
        wait_for(cluster, lambda: len(seen.snapshot()) >= before + len(more), "kafka-python to read 100 more",
                 step=poll_kp, detail=detail)
        newer = seen.snapshot()[before:]
        assert {(p, o): v for p, o, v, _ in newer} == more and len(newer) == len(more)
        assert {who for *_, who in newer} == {"kafka-python"}
        end = {p: 1 + max(o for q, o in {**produced, **more} if q == p) for p in range(PARTITIONS)}
        wait_for(cluster, lambda: committed() == end, "kafka-python's commits to be visible", step=poll_kp,
                 detail=lambda: f"committed {committed()}, end {end}")
        kp.close(autocommit=False)                                  # LeaveGroup

        # Empty now: OffsetDelete one partition, then delete the group.
        wait_for(cluster, lambda: admin.describe_groups([group])[group]["group_state"] == "Empty", "the group to be empty")
        result = admin.delete_group_offsets(group, [TopicPartition(topic, 0)])
        assert result == {TopicPartition(topic, 0): kafka.errors.NoError}
        assert committed() == {p: o for p, o in end.items() if p != 0}
        assert admin.delete_groups([group]) == {group: "OK"}
        assert committed() == {}
    finally:
        aio.stop_requested.set()
        aio.stopped.wait(30)
        kp.close(autocommit=False)
        admin.close()
