"""kafkamock's ShareConsumer (KIP-932, KIP-1222 RENEW) against a kafkamock broker over real sockets.

Records are produced with confluent_kafka; the share group reads from the start (the group config
``share.auto.offset.reset=earliest``, as the Java tests set it). Waits are deadlines on events; the only pauses are
``trio.sleep`` standing for slow record processing, which is what RENEW exists for, set against a lock of 2 s (the
broker's lower bound is lowered to 1 s for these tests).
"""

from __future__ import annotations

import pytest
import trio
from confluent_kafka import Producer
from support.java_clients import WireTap

from kafkamock.client.blocking import ShareConsumer as BlockingShareConsumer
from kafkamock.client.errors import KafkaError
from kafkamock.client.share_consumer import AcknowledgeType, IllegalStateError, ShareConsumer, acknowledgement_batches
from kafkamock.client.types import TopicPartition
from kafkamock.errors import ErrorCode

LOCK_MS = 2000
pytestmark = pytest.mark.kafkamock(config={"group.share.min.record.lock.duration.ms": 1000,
                                           "group.share.delivery.count.limit": 5})
trio_test = pytest.mark.trio


def produce(broker, topic: str, count: int, partitions: int = 1, first: int = 0) -> None:
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 0})
    for i in range(first, first + count):
        producer.produce(topic, key=f"k{i}", value=f"v{i}", partition=i % partitions)
        producer.flush()                       # one batch per record: the share group can split them
    assert producer.flush(10) == 0


def group_configs(broker, group: str, **configs) -> None:
    merged = {"share.auto.offset.reset": "earliest", **configs}
    broker.call(lambda: broker.cluster.groups.configs.set(group, merged))


async def in_thread(fn, *args, **kwargs):
    """The broker handle's calls block (they run on the broker's thread): off the test's trio loop."""
    return await trio.to_thread.run_sync(lambda: fn(*args, **kwargs))


def consumer(broker, group: str, **settings) -> ShareConsumer:
    return ShareConsumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": group,
                          "retry.backoff.ms": 50, **settings})


async def poll_until(c: ShareConsumer, count: int, timeout_s: float = 15.0, ack: AcknowledgeType | None = None):
    """Poll until ``count`` records came (acknowledging each with ``ack``) or the deadline passes."""
    got = []
    with trio.move_on_after(timeout_s):
        while len(got) < count:
            records = await c.poll(0.5)
            for r in records:
                if ack is not None:
                    c.acknowledge(r, ack)
            got += records
    return got


def keys(records) -> list[tuple[str, int]]:
    return [(r.key.decode(), r.delivery_count) for r in records]


def test_acknowledgement_batches_are_runs_of_one_type_with_gaps_typed_zero():
    acks = {5: 1, 6: 1, 7: 2, 9: 0, 10: 0, 11: 1, 3: 4}
    assert acknowledgement_batches(acks) == [
        {"first_offset": 3, "last_offset": 3, "acknowledge_types": [4]},
        {"first_offset": 5, "last_offset": 6, "acknowledge_types": [1]},
        {"first_offset": 7, "last_offset": 7, "acknowledge_types": [2]},
        {"first_offset": 9, "last_offset": 10, "acknowledge_types": [0]},
        {"first_offset": 11, "last_offset": 11, "acknowledge_types": [1]}]


@trio_test
async def test_implicit_mode_several_consumers_share_the_records_and_none_comes_twice(kafka_broker):
    await in_thread(kafka_broker.create_topic, "implicit", 2)
    await in_thread(group_configs, kafka_broker, "sg-implicit")
    await in_thread(produce, kafka_broker, "implicit", 60, partitions=2)
    got: dict[int, list] = {0: [], 1: [], 2: []}
    done = trio.Event()

    async def run(index: int) -> None:
        async with consumer(kafka_broker, "sg-implicit", **{"max.poll.records": 5}) as c:
            c.subscribe(["implicit"])
            with trio.move_on_after(30):
                while not done.is_set():
                    got[index].extend(await c.poll(0.2))        # the next poll accepts them
                    if sum(len(v) for v in got.values()) >= 60:
                        done.set()
            await c.commit_sync()

    async with trio.open_nursery() as nursery:
        for i in got:
            nursery.start_soon(run, i)
    delivered = [(r.partition, r.offset) for records in got.values() for r in records]
    assert len(delivered) == 60 and len(set(delivered)) == 60, sorted(delivered)
    assert all(r.delivery_count == 1 for records in got.values() for r in records)
    assert sum(1 for records in got.values() if records) >= 2, {i: len(v) for i, v in got.items()}
    with pytest.raises(IllegalStateError, match="explicit"):
        async with consumer(kafka_broker, "sg-implicit") as c:
            c.subscribe(["implicit"])
            c.acknowledge(got[0][0] if got[0] else got[1][0], AcknowledgeType.ACCEPT)


@trio_test
async def test_explicit_accept_release_reject_with_commit_results_and_the_callback(kafka_broker):
    await in_thread(kafka_broker.create_topic, "explicit", 1)
    await in_thread(group_configs, kafka_broker, "sg-explicit")
    await in_thread(produce, kafka_broker, "explicit", 3)
    completed = []
    async with consumer(kafka_broker, "sg-explicit", **{"share.acknowledgement.mode": "explicit"}) as a:
        a.set_acknowledgement_commit_callback(lambda offsets, error: completed.append((offsets, error)))
        a.subscribe(["explicit"])
        first = await poll_until(a, 3)
        assert keys(first) == [("k0", 1), ("k1", 1), ("k2", 1)]
        with pytest.raises(IllegalStateError, match="must be acknowledged"):
            await a.poll(0)
        for record, kind in zip(first, (AcknowledgeType.ACCEPT, AcknowledgeType.RELEASE, AcknowledgeType.REJECT),
                                strict=True):
            a.acknowledge(record, kind)
        tp = TopicPartition("explicit", 0)
        assert await a.commit_sync() == {tp: None}
        assert completed == [({tp: {0, 1, 2}}, None)]
        with pytest.raises(IllegalStateError, match="cannot be acknowledged"):
            a.acknowledge(first[0], AcknowledgeType.ACCEPT)       # already sent
        again = await poll_until(a, 1, ack=AcknowledgeType.ACCEPT)
        assert keys(again) == [("k1", 2)]                         # only the released one, its second delivery
        assert await a.poll(1.0) == []                            # the accepted k1 went with this fetch
        assert completed[-1] == ({tp: {1}}, None)
        assert await a.poll(1.0) == []                            # the rejected k2 never comes again


@trio_test
async def test_failed_acknowledgements_are_reported_by_commit_sync_and_the_callback(kafka_broker):
    await in_thread(kafka_broker.create_topic, "ackfail", 1)
    await in_thread(group_configs, kafka_broker, "sg-ackfail")
    await in_thread(produce, kafka_broker, "ackfail", 2)
    completed = []
    async with consumer(kafka_broker, "sg-ackfail", **{"share.acknowledgement.mode": "explicit"}) as a:
        a.set_acknowledgement_commit_callback(lambda offsets, error: completed.append((offsets, error)))
        a.subscribe(["ackfail"])
        records = await poll_until(a, 2, ack=AcknowledgeType.ACCEPT)
        assert len(records) == 2
        await in_thread(kafka_broker.control.push_fault, "ShareAcknowledge", "INVALID_RECORD_STATE", count=1)
        result = await a.commit_sync()
        tp = TopicPartition("ackfail", 0)
        assert set(result) == {tp} and isinstance(result[tp], KafkaError)
        assert result[tp].code == ErrorCode.INVALID_RECORD_STATE
        assert completed == [({tp: {0, 1}}, result[tp])]
        # the fault answered for the whole request and the session starts again; nothing was acknowledged, so
        # the records come back once their locks run out (30 s) — not checked here; the next poll still works
        assert await a.poll(0.2) == []


@trio_test
async def test_renew_keeps_a_record_past_its_lock_from_another_consumer_then_accept(kafka_broker):
    await in_thread(kafka_broker.create_topic, "renew", 1)
    await in_thread(group_configs, kafka_broker, "sg-renew", **{"share.record.lock.duration.ms": LOCK_MS})
    await in_thread(produce, kafka_broker, "renew", 1)
    wire = WireTap(kafka_broker.cluster)
    explicit = {"share.acknowledgement.mode": "explicit"}
    async with consumer(kafka_broker, "sg-renew", **explicit) as slow, \
            consumer(kafka_broker, "sg-renew", **explicit) as other:
        slow.subscribe(["renew"])
        other.subscribe(["renew"])
        (record,) = await poll_until(slow, 1)
        assert keys([record]) == [("k0", 1)] and slow.acquisition_lock_timeout_ms() == LOCK_MS
        # 4 x 0.8 s of processing: well past the 2 s lock, renewed each time, by commit_sync (ShareAcknowledge)
        # or by poll (ShareFetch with IsRenewAck); the renewed record comes back at the next poll
        for k in range(4):
            await trio.sleep(0.8)                                    # slow processing
            slow.acknowledge(record, AcknowledgeType.RENEW)
            if k % 2 == 0:
                assert await slow.commit_sync() == {TopicPartition("renew", 0): None}
            kept = await slow.poll(3.0)
            assert keys(kept) == [("k0", 1)]                         # still its first delivery
            record = kept[0]
            assert await poll_until(other, 1, timeout_s=0.3, ack=AcknowledgeType.RELEASE) == []
        slow.acknowledge(record, AcknowledgeType.ACCEPT)
        assert await slow.commit_sync() == {TopicPartition("renew", 0): None}
        assert await poll_until(other, 1, timeout_s=LOCK_MS / 1000 + 0.5, ack=AcknowledgeType.ACCEPT) == []
    renewing = {(e["api"], e["version"]) for e in wire.entries
                if e["api"] in ("ShareFetch", "ShareAcknowledge") and e["request"].is_renew_ack}
    assert renewing == {("ShareFetch", 2), ("ShareAcknowledge", 2)}, renewing
    for e in wire.entries:
        if e["api"] == "ShareFetch" and e["request"].is_renew_ack:
            body = e["request"]
            assert (body.max_wait_ms, body.min_bytes, body.max_bytes, body.max_records) == (0, 0, 0, 0)
            assert not e["response"]["error_code"]


@trio_test
async def test_without_renew_an_expired_lock_redelivers_with_delivery_count_two(kafka_broker):
    await in_thread(kafka_broker.create_topic, "expiry", 1)
    await in_thread(group_configs, kafka_broker, "sg-expiry", **{"share.record.lock.duration.ms": LOCK_MS})
    await in_thread(produce, kafka_broker, "expiry", 1)
    explicit = {"share.acknowledgement.mode": "explicit"}
    async with consumer(kafka_broker, "sg-expiry", **explicit) as slow, \
            consumer(kafka_broker, "sg-expiry", **explicit) as other:
        slow.subscribe(["expiry"])
        other.subscribe(["expiry"])
        assert keys(await poll_until(slow, 1)) == [("k0", 1)]
        again = await poll_until(other, 1, timeout_s=LOCK_MS / 1000 + 8, ack=AcknowledgeType.ACCEPT)
        assert keys(again) == [("k0", 2)]
        assert await other.commit_sync() == {TopicPartition("expiry", 0): None}


@trio_test
async def test_close_releases_what_the_consumer_holds(kafka_broker):
    await in_thread(kafka_broker.create_topic, "closing", 1)
    await in_thread(group_configs, kafka_broker, "sg-close")                  # the default 30 s lock: only the close frees it
    await in_thread(produce, kafka_broker, "closing", 2)
    wire = WireTap(kafka_broker.cluster)
    explicit = {"share.acknowledgement.mode": "explicit"}
    async with consumer(kafka_broker, "sg-close", **explicit) as b:
        b.subscribe(["closing"])
        async with consumer(kafka_broker, "sg-close", **explicit) as a:
            a.subscribe(["closing"])
            held = await poll_until(a, 2)
            assert keys(held) == [("k0", 1), ("k1", 1)]
            a.acknowledge(held[0], AcknowledgeType.ACCEPT)       # k1 stays unacknowledged: released by close
            member = a.member_id
        after = await poll_until(b, 1, timeout_s=10, ack=AcknowledgeType.ACCEPT)
        assert keys(after) == [("k1", 2)]
    mine = [e for e in wire.entries if getattr(e["request"], "member_id", None) == member]
    closing = [e for e in mine if e["api"] == "ShareAcknowledge" and e["request"].share_session_epoch == -1]
    assert len(closing) == 1 and not closing[0]["response"]["error_code"]
    acked = [(b.first_offset, b.last_offset, list(b.acknowledge_types))
             for t in closing[0]["request"].topics for p in t.partitions for b in p.acknowledgement_batches]
    assert acked == [(0, 0, [1])]
    leaving = [e for e in mine if e["api"] == "ShareGroupHeartbeat" and e["request"].member_epoch == -1]
    assert len(leaving) == 1 and not leaving[0]["response"]["error_code"]
    assert mine.index(closing[0]) < mine.index(leaving[0])


@trio_test
async def test_fenced_member_rejoins_with_epoch_zero_and_keeps_consuming(kafka_broker):
    await in_thread(kafka_broker.create_topic, "fenced", 1)
    await in_thread(group_configs, kafka_broker, "sg-fenced", **{"share.heartbeat.interval.ms": 5000})
    await in_thread(produce, kafka_broker, "fenced", 2)
    wire = WireTap(kafka_broker.cluster)
    async with consumer(kafka_broker, "sg-fenced") as c:
        c.subscribe(["fenced"])
        assert len(await poll_until(c, 1)) >= 1
        await in_thread(kafka_broker.control.push_fault, "ShareGroupHeartbeat", "FENCED_MEMBER_EPOCH", count=1)
        c.subscribe(["fenced"])                               # a heartbeat now (same subscription)
        c._wake_membership()
        with trio.fail_after(10):
            while True:
                beats = [e["request"].member_epoch for e in wire.entries if e["api"] == "ShareGroupHeartbeat"]
                if beats.count(0) >= 2 and c.member_epoch > 0:
                    break
                await trio.sleep(0.05)
        await in_thread(produce, kafka_broker, "fenced", 1, first=2)
        got = await poll_until(c, 1, timeout_s=10)
        assert any(r.key == b"k2" for r in got)


@trio_test
async def test_renew_against_a_broker_with_share_v1_only_is_unsupported_version(kafka_broker):
    await in_thread(kafka_broker.create_topic, "oldbroker", 1)
    await in_thread(group_configs, kafka_broker, "sg-v1")
    await in_thread(kafka_broker.call, lambda: kafka_broker.cluster.supported_versions().update({78: (1, 1), 79: (1, 1)}))
    await in_thread(produce, kafka_broker, "oldbroker", 1)
    async with consumer(kafka_broker, "sg-v1", **{"share.acknowledgement.mode": "explicit"}) as c:
        c.subscribe(["oldbroker"])
        (record,) = await poll_until(c, 1)
        with pytest.raises(KafkaError) as raised:
            c.acknowledge(record, AcknowledgeType.RENEW)
        assert raised.value.code == ErrorCode.UNSUPPORTED_VERSION and "v2" in str(raised.value)
        c.acknowledge(record, AcknowledgeType.ACCEPT)
        assert await c.commit_sync() == {TopicPartition("oldbroker", 0): None}


@trio_test
@pytest.mark.kafkamock(brokers=2, config={"group.share.min.record.lock.duration.ms": 1000})
async def test_a_leader_move_takes_the_partition_to_the_new_leaders_session(kafka_broker):
    await in_thread(kafka_broker.create_topic, "moving", 1, replication_factor=2)
    await in_thread(group_configs, kafka_broker, "sg-moving")
    await in_thread(produce, kafka_broker, "moving", 2)
    wire = WireTap(kafka_broker.cluster)
    async with consumer(kafka_broker, "sg-moving") as c:
        c.subscribe(["moving"])
        first = await poll_until(c, 2)
        assert keys(first) == [("k0", 1), ("k1", 1)]
        old = c.client.leaders[("moving", 0)]
        new = next(n["node_id"] for n in await in_thread(kafka_broker.control.nodes) if n["node_id"] != old)
        await in_thread(kafka_broker.control.move_leader, "moving", 0, new)
        await in_thread(produce, kafka_broker, "moving", 2, first=2)
        rest = await poll_until(c, 2, timeout_s=15)
        assert sorted(keys(rest)) == [("k2", 1), ("k3", 1)]
        assert c.client.leaders[("moving", 0)] == new
    moved = [p for e in wire.entries if e["api"] == "ShareFetch" and e["response"]
             for t in e["response"]["responses"] for p in t["partitions"]
             if p["error_code"] == ErrorCode.NOT_LEADER_OR_FOLLOWER]
    assert moved and moved[0]["current_leader"]["leader_id"] == new


def test_the_blocking_share_consumer(kafka_broker):
    kafka_broker.create_topic("blocking", 1)
    group_configs(kafka_broker, "sg-blocking")
    produce(kafka_broker, "blocking", 3)
    with BlockingShareConsumer({"bootstrap.servers": kafka_broker.bootstrap_servers, "group.id": "sg-blocking",
                                "share.acknowledgement.mode": "explicit"}) as c:
        c.subscribe(["blocking"])
        got = []
        for _ in range(30):
            for record in c.poll(0.5):
                c.acknowledge(record, AcknowledgeType.ACCEPT)
                got.append(record)
            if len(got) >= 3:
                break
        assert keys(got) == [("k0", 1), ("k1", 1), ("k2", 1)]
        assert c.commit_sync() == {TopicPartition("blocking", 0): None}
        assert c.acquisition_lock_timeout_ms() == 30_000
        assert c.subscription() == {"blocking"}
