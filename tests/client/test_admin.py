"""kafkamock's Admin client against a real broker over sockets: every call's effect checked through another call
(create then describe, delete records then list offsets, alter configs then describe), groups made by real
librdkafka consumers (classic and KIP-848), a transaction left open by a librdkafka transactional producer, a share
group joined with raw ShareGroupHeartbeat requests, and the error codes Kafka answers with.
"""

from __future__ import annotations

import base64
import threading
import uuid

import confluent_kafka
import pytest
import trio

from kafkamock.client import KafkaClient, KafkaError, OffsetAndMetadata, TopicPartition
from kafkamock.client.admin import (
    EARLIEST,
    LATEST,
    Admin,
    AlterConfigOp,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
    OpType,
    ResourceType,
)
from kafkamock.client.cluster import GROUP
from kafkamock.errors import ErrorCode as E

GROUP_CONFIG = {
    "group.initial.rebalance.delay.ms": 0, "group.min.session.timeout.ms": 1000,
    "group.consumer.heartbeat.interval.ms": 500, "group.consumer.min.heartbeat.interval.ms": 100,
    "group.share.heartbeat.interval.ms": 500, "group.share.min.heartbeat.interval.ms": 100}
pytestmark = [pytest.mark.kafkamock(config=GROUP_CONFIG)]


async def in_thread(fn, *args, **kwargs):
    """Broker-handle and confluent calls block: run them off the trio thread."""
    return await trio.to_thread.run_sync(lambda: fn(*args, **kwargs))


def admin_for(broker, **extra) -> Admin:
    return Admin({"bootstrap.servers": broker.bootstrap_servers, "default.api.timeout.ms": 15_000, **extra})


async def eventually(check, what: str, timeout: float = 20.0):
    """Call the async ``check`` until it returns something true (or its KafkaError stops repeating)."""
    last = None
    with trio.move_on_after(timeout):
        while True:
            last = await check()
            if last:
                return last
            await trio.sleep(0.1)
    raise AssertionError(f"{what}: not reached within {timeout} s (last: {last!r})")


def produce(bootstrap: str, topic: str, values: list[bytes], *, partition: int = 0,
            timestamps: list[int] | None = None) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    for i, value in enumerate(values):
        producer.produce(topic, value=value, partition=partition, timestamp=timestamps[i] if timestamps else 0)
    assert producer.flush(10) == 0


class Member:
    """A librdkafka consumer polling on its own thread (so it stays in its group), committing every record."""

    def __init__(self, bootstrap: str, group: str, topic: str, *, protocol: str = "classic",
                 instance_id: str | None = None):
        config = {"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                  "enable.auto.commit": False, "client.id": f"member-{protocol}"}
        if protocol == "consumer":
            config["group.protocol"] = "consumer"
        else:
            config.update({"session.timeout.ms": 6000, "heartbeat.interval.ms": 300,
                           "partition.assignment.strategy": "range"})
        if instance_id:
            config["group.instance.id"] = instance_id
        self.consumer = confluent_kafka.Consumer(config)
        self.consumer.subscribe([topic])
        self.consumed = 0
        self.errors: list = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            msg = self.consumer.poll(0.1)
            if msg is None:
                continue
            if msg.error():
                self.errors.append(msg.error())
                continue
            self.consumer.commit(message=msg, asynchronous=False)
            self.consumed += 1
        self.consumer.close()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(20)


# -- cluster ----------------------------------------------------------------------------------------------------------

@pytest.mark.kafkamock(brokers=3)
@pytest.mark.trio
async def test_describe_cluster_and_features(kafka_broker):
    async with admin_for(kafka_broker) as admin:
        cluster = await admin.describe_cluster()
        features = await admin.describe_features()
    assert len({n.id for n in cluster.nodes}) == 3
    ports = sorted(int(s.rpartition(":")[2]) for s in kafka_broker.bootstrap_servers.split(","))
    assert sorted(n.port for n in cluster.nodes) == ports
    assert cluster.controller in cluster.nodes
    assert cluster.cluster_id
    assert "transaction.version" in features.finalized and "share.version" in features.supported


# -- topics -----------------------------------------------------------------------------------------------------------

@pytest.mark.kafkamock(brokers=3)
@pytest.mark.trio
async def test_create_describe_list_and_delete_topics(kafka_broker):
    async with admin_for(kafka_broker) as admin:
        created = await admin.create_topics([NewTopic("orders", 3, 2, {"retention.ms": "12345"}),
                                             NewTopic("events", 1, 1)])
        orders = created.all()["orders"]
        assert (orders.num_partitions, orders.replication_factor) == (3, 2)
        assert orders.configs["retention.ms"] == "12345"

        dry = await admin.create_topics([NewTopic("dry", 2, 1)], validate_only=True)
        assert dry["dry"].num_partitions == 2
        assert "dry" not in await admin.list_topics()

        again = await admin.create_topics([NewTopic("orders", 3, 1), NewTopic("bad", 0, 1),
                                           NewTopic("toomany", 1, 4)])
        assert again["orders"].code == E.TOPIC_ALREADY_EXISTS
        assert again["bad"].code == E.INVALID_PARTITIONS
        assert again["toomany"].code == E.INVALID_REPLICATION_FACTOR
        with pytest.raises(KafkaError) as failed:
            again.all()
        assert failed.value.code == E.TOPIC_ALREADY_EXISTS

        described = await admin.describe_topics(["orders", "events", "nope"])
        topic = described["orders"]
        assert topic.topic_id == orders.topic_id and not topic.internal
        assert [p.partition for p in topic.partitions] == [0, 1, 2]
        for p in topic.partitions:
            assert len(p.replicas) == 2 and p.leader in p.replicas and p.leader.port > 0
            assert {n.id for n in p.isr} == {n.id for n in p.replicas}
        assert described["nope"].code == E.UNKNOWN_TOPIC_OR_PARTITION

        listed = await admin.list_topics()
        assert {"orders", "events"} <= set(listed)
        assert listed["orders"].topic_id == orders.topic_id
        assert all(not t.internal for t in listed.values())

        deleted = await admin.delete_topics(["events", "nope"])
        assert deleted["events"] is None and deleted["nope"].code == E.UNKNOWN_TOPIC_OR_PARTITION
        by_id = await admin.delete_topics([orders.topic_id])
        assert by_id[orders.topic_id] is None
        gone = await admin.describe_topics(["events", "orders"])
        assert gone["events"].code == E.UNKNOWN_TOPIC_OR_PARTITION
        assert gone["orders"].code == E.UNKNOWN_TOPIC_OR_PARTITION
        assert not {"orders", "events"} & set(await admin.list_topics())


@pytest.mark.trio
async def test_create_partitions(kafka_broker):
    async with admin_for(kafka_broker) as admin:
        (await admin.create_topics([NewTopic("grow", 2, 1)])).all()
        grown = await admin.create_partitions({"grow": 4, "nope": 3})
        assert grown["grow"] is None and grown["nope"].code == E.UNKNOWN_TOPIC_OR_PARTITION
        assert len((await admin.describe_topics(["grow"]))["grow"].partitions) == 4
        shrink = await admin.create_partitions({"grow": NewPartitions(3)})
        assert shrink["grow"].code == E.INVALID_PARTITIONS
        same = await admin.create_partitions({"grow": 4})
        assert same["grow"].code == E.INVALID_PARTITIONS
        dry = await admin.create_partitions({"grow": 6}, validate_only=True)
        assert dry["grow"] is None
        assert len((await admin.describe_topics(["grow"]))["grow"].partitions) == 4


# -- configs ----------------------------------------------------------------------------------------------------------

@pytest.mark.trio
async def test_describe_and_alter_configs_of_topics_brokers_and_groups(kafka_broker):
    topic = ConfigResource(ResourceType.TOPIC, "conf")
    broker = ConfigResource(ResourceType.BROKER, "1")
    group = ConfigResource(ResourceType.GROUP, "g-conf")
    async with admin_for(kafka_broker) as admin:
        (await admin.create_topics([NewTopic("conf", 1, 1)])).all()
        before = (await admin.describe_configs([topic, broker]))
        retention = before[topic]["retention.ms"]
        assert retention.value == "604800000" and retention.source == ConfigSource.DEFAULT_CONFIG
        assert before[topic]["cleanup.policy"].value == "delete"
        # No default for log.retention.ms in Kafka: null, the retention coming from log.retention.hours
        assert before[broker]["log.retention.ms"].value is None
        assert before[broker]["log.retention.hours"].value == "168"

        changed = await admin.incremental_alter_configs({topic: [
            AlterConfigOp("retention.ms", "1000", OpType.SET),
            AlterConfigOp("cleanup.policy", "compact", OpType.APPEND)]})
        assert changed[topic] is None
        after = (await admin.describe_configs([topic], include_synonyms=True))[topic]
        assert after["retention.ms"].value == "1000"
        assert after["retention.ms"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG
        assert after["retention.ms"].synonyms[0][:2] == ("retention.ms", "1000")
        assert after["cleanup.policy"].value == "delete,compact"

        await admin.incremental_alter_configs({topic: [AlterConfigOp("cleanup.policy", "delete", OpType.SUBTRACT),
                                                       AlterConfigOp("retention.ms", None, OpType.DELETE)]})
        after = (await admin.describe_configs([topic]))[topic]
        assert after["cleanup.policy"].value == "compact"
        assert after["retention.ms"].value == "604800000"

        bad = await admin.incremental_alter_configs({
            topic: [AlterConfigOp("retention.ms", "not-a-number")],
            ConfigResource(ResourceType.TOPIC, "nope"): [AlterConfigOp("retention.ms", "1")]})
        assert bad[topic].code == E.INVALID_CONFIG
        assert bad[ConfigResource(ResourceType.TOPIC, "nope")].code == E.UNKNOWN_TOPIC_OR_PARTITION

        # AlterConfigs replaces the whole dynamic set: cleanup.policy goes back to its default
        assert (await admin.alter_configs({topic: {"segment.ms": "600000"}}))[topic] is None
        after = (await admin.describe_configs([topic]))[topic]
        assert after["segment.ms"].value == "600000" and after["cleanup.policy"].value == "delete"

        set_group = await admin.incremental_alter_configs({group: [
            AlterConfigOp("consumer.session.timeout.ms", "50000")]})
        assert set_group[group] is None
        group_config = (await admin.describe_configs([group]))[group]
        assert group_config["consumer.session.timeout.ms"].value == "50000"
        assert group_config["consumer.session.timeout.ms"].source == ConfigSource.DYNAMIC_GROUP_CONFIG

        unknown = await admin.describe_configs([ConfigResource(ResourceType.TOPIC, "nope")])
        assert unknown[ConfigResource(ResourceType.TOPIC, "nope")].code == E.UNKNOWN_TOPIC_OR_PARTITION


# -- records ----------------------------------------------------------------------------------------------------------

@pytest.mark.trio
@pytest.mark.kafkamock(brokers=3, config=GROUP_CONFIG)   # leaders and coordinators spread
async def test_delete_records_then_list_offsets(kafka_broker):
    bootstrap = kafka_broker.bootstrap_servers
    await in_thread(kafka_broker.create_topic, "recs", 2)
    timestamps = [1_000 + 10 * i for i in range(10)]
    timestamps[6] = 9_000                                   # the record with the highest timestamp: offset 6
    await in_thread(produce, bootstrap, "recs", [b"v%d" % i for i in range(10)], timestamps=timestamps)
    tp0, tp1 = TopicPartition("recs", 0), TopicPartition("recs", 1)
    async with admin_for(kafka_broker) as admin:
        offsets = (await admin.list_offsets({tp0: "earliest", tp1: "latest"})).all()
        assert (offsets[tp0].offset, offsets[tp1].offset) == (0, 0)

        deleted = await admin.delete_records({tp0: 4, tp1: 5, TopicPartition("nope", 0): 1})
        assert deleted[tp0].low_watermark == 4
        assert deleted[tp1].code == E.OFFSET_OUT_OF_RANGE              # partition 1 is empty
        assert deleted[TopicPartition("nope", 0)].code == E.UNKNOWN_TOPIC_OR_PARTITION

        assert (await admin.list_offsets({tp0: EARLIEST}))[tp0].offset == 4
        assert (await admin.list_offsets({tp0: LATEST}))[tp0].offset == 10
        top = (await admin.list_offsets({tp0: "max_timestamp"}))[tp0]
        assert (top.offset, top.timestamp) == (6, 9_000)
        assert (await admin.list_offsets({tp0: 1_075}))[tp0].offset == 6      # 1080 is offset 8, but 6 is 9000
        assert (await admin.list_offsets({tp0: 1_045}))[tp0].offset == 5
        assert (await admin.list_offsets({tp0: 99_999}))[tp0].offset == -1
        missing = await admin.list_offsets({TopicPartition("recs", 7): "latest", TopicPartition("nope", 0): 0})
        assert missing[TopicPartition("recs", 7)].code == E.UNKNOWN_TOPIC_OR_PARTITION
        assert missing[TopicPartition("nope", 0)].code == E.UNKNOWN_TOPIC_OR_PARTITION

        everything = await admin.delete_records({tp0: -1})              # -1: up to the high watermark
        assert everything[tp0].low_watermark == 10
        assert (await admin.list_offsets({tp0: "earliest"}))[tp0].offset == 10


# -- consumer groups --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("protocol", ["classic", "consumer"])
@pytest.mark.trio
async def test_consumer_group_calls_on_a_librdkafka_group(kafka_broker, protocol):
    bootstrap, group, topic = kafka_broker.bootstrap_servers, f"g-{protocol}", f"t-{protocol}"
    await in_thread(kafka_broker.create_topic, topic, 2)
    await in_thread(produce, bootstrap, topic, [b"a", b"b", b"c"], partition=0)
    await in_thread(produce, bootstrap, topic, [b"d"], partition=1)
    tp0, tp1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    member = Member(bootstrap, group, topic, protocol=protocol)
    try:
        async with admin_for(kafka_broker) as admin:
            async def stable():
                d = (await admin.describe_consumer_groups([group]))[group]
                return (not isinstance(d, KafkaError) and d.state == "Stable" and d.members
                        and d.members[0].assignment == {tp0, tp1} and member.consumed == 4 and d)
            described = await eventually(stable, "the member owns both partitions and read everything")
            assert described.type == protocol and not described.is_simple
            assert described.members[0].client_id == f"member-{protocol}"
            assert described.coordinator is not None and described.coordinator.id in (1, 2, 3)
            if protocol == "consumer":
                assert described.group_epoch >= 1 and described.members[0].target_assignment == {tp0, tp1}
                assert described.partition_assignor in ("uniform", "range")
            else:
                assert described.partition_assignor == "range"

            listed = {g.group_id: g for g in await admin.list_groups()}
            assert (listed[group].type, listed[group].protocol, listed[group].state) == (protocol, "consumer",
                                                                                          "Stable")
            assert [g.group_id for g in await admin.list_consumer_groups(states=["Stable"])] == [group]
            assert await admin.list_consumer_groups(states=["Empty"]) == []
            assert [g.group_id for g in await admin.list_groups(types=[protocol])] == [group]

            committed = await admin.list_consumer_group_offsets(group)
            assert committed == {tp0: OffsetAndMetadata(3, "", committed[tp0].leader_epoch),
                                 tp1: OffsetAndMetadata(1, "", committed[tp1].leader_epoch)}
            assert await admin.list_consumer_group_offsets(group, [TopicPartition(topic, 0),
                                                                   TopicPartition("other", 0)]) == {
                tp0: committed[tp0], TopicPartition("other", 0): None}

            busy = await admin.delete_consumer_groups([group, "no-such-group"])
            assert busy[group].code == E.NON_EMPTY_GROUP
            assert busy["no-such-group"].code == E.GROUP_ID_NOT_FOUND
            active = await admin.alter_consumer_group_offsets(group, {tp0: 1})
            assert isinstance(active[tp0], KafkaError)
            in_use = await admin.delete_consumer_group_offsets(group, [tp0])
            assert in_use[tp0].code == E.GROUP_SUBSCRIBED_TO_TOPIC

            await in_thread(member.stop)

            async def empty():
                d = (await admin.describe_consumer_groups([group]))[group]
                return d.state == "Empty" and not d.members
            await eventually(empty, "the group is empty once the member left")

            altered = await admin.alter_consumer_group_offsets(group, {tp0: OffsetAndMetadata(1, "moved"), tp1: 0})
            assert altered.all() == {tp0: None, tp1: None}
            after = await admin.list_consumer_group_offsets(group)
            assert (after[tp0].offset, after[tp0].metadata, after[tp1].offset) == (1, "moved", 0)

            dropped = await admin.delete_consumer_group_offsets(group, [tp1])
            assert dropped[tp1] is None
            assert set(await admin.list_consumer_group_offsets(group)) == {tp0}
            no_group = await admin.delete_consumer_group_offsets("no-such-group", [tp1])
            assert no_group[tp1].code == E.GROUP_ID_NOT_FOUND

            assert (await admin.delete_consumer_groups([group]))[group] is None
            assert (await admin.describe_consumer_groups([group]))[group].code == E.GROUP_ID_NOT_FOUND
            assert group not in {g.group_id for g in await admin.list_groups()}
    finally:
        await in_thread(member.stop)
    assert not member.errors


@pytest.mark.trio
async def test_remove_a_static_member_from_a_classic_group(kafka_broker):
    bootstrap = kafka_broker.bootstrap_servers
    await in_thread(kafka_broker.create_topic, "static", 1)
    member = Member(bootstrap, "g-static", "static", instance_id="static-1")
    try:
        async with admin_for(kafka_broker) as admin:
            async def joined():
                d = (await admin.describe_consumer_groups(["g-static"]))["g-static"]
                return not isinstance(d, KafkaError) and d.state == "Stable" and d
            described = await eventually(joined, "the static member joined")
            assert described.members[0].instance_id == "static-1"
            removed = await admin.remove_members_from_consumer_group("g-static", ["static-1", "nobody"])
            assert removed["static-1"] is None and removed["nobody"].code == E.UNKNOWN_MEMBER_ID

            async def left():
                d = (await admin.describe_consumer_groups(["g-static"]))["g-static"]
                return all(m.instance_id != "static-1" or m.member_id != described.members[0].member_id
                           for m in d.members)
            await eventually(left, "the removed member is gone")
    finally:
        await in_thread(member.stop)


@pytest.mark.trio
async def test_coordinator_errors_are_retried_after_looking_the_coordinator_up_again(kafka_broker):
    await in_thread(kafka_broker.create_topic, "retry", 1)
    async with admin_for(kafka_broker, **{"retry.backoff.ms": 10}) as admin:
        (await admin.alter_consumer_group_offsets("g-retry", {TopicPartition("retry", 0): 5})).all()
        for error in ("NOT_COORDINATOR", "COORDINATOR_LOAD_IN_PROGRESS", "COORDINATOR_NOT_AVAILABLE"):
            await in_thread(kafka_broker.control.push_fault, "OffsetFetch", error, count=2)
            offsets = await admin.list_consumer_group_offsets("g-retry")
            assert offsets[TopicPartition("retry", 0)].offset == 5
            assert await in_thread(kafka_broker.control.faults) == []
        await in_thread(kafka_broker.control.push_fault, "FindCoordinator", "COORDINATOR_NOT_AVAILABLE", count=1)
        admin.client.forget_coordinator("g-retry", GROUP)
        described = (await admin.describe_consumer_groups(["g-retry"]))["g-retry"]
        assert described.state == "Empty"
        await in_thread(kafka_broker.control.push_fault, "CreateTopics", "NOT_CONTROLLER", count=1)
        assert (await admin.create_topics([NewTopic("after-retry", 1, 1)]))["after-retry"].num_partitions == 1
        assert await in_thread(kafka_broker.control.faults) == []


@pytest.mark.trio
async def test_a_retriable_error_that_never_stops_gives_up_after_the_api_timeout(kafka_broker):
    await in_thread(kafka_broker.create_topic, "stuck", 1)
    async with Admin({"bootstrap.servers": kafka_broker.bootstrap_servers, "default.api.timeout.ms": 1500,
                      "retry.backoff.ms": 50}) as admin:
        await in_thread(kafka_broker.control.push_fault, "ListOffsets", "NOT_LEADER_OR_FOLLOWER", count=1000)
        started = trio.current_time()
        result = await admin.list_offsets({TopicPartition("stuck", 0): "latest"})
        assert result[TopicPartition("stuck", 0)].code == E.NOT_LEADER_OR_FOLLOWER
        assert 1.0 <= trio.current_time() - started < 10


# -- share groups -----------------------------------------------------------------------------------------------------

async def share_heartbeat(client: KafkaClient, group: str, member_id: str, epoch: int, topics: list[str] | None):
    conn = await client.coordinator(group, GROUP)
    response = await conn.request("ShareGroupHeartbeat", {"group_id": group, "member_id": member_id,
                                                          "member_epoch": epoch, "rack_id": None,
                                                          "subscribed_topic_names": topics})
    assert response.error_code == 0, response
    return response


@pytest.mark.trio
@pytest.mark.kafkamock(brokers=3, config=GROUP_CONFIG)   # leaders and coordinators spread
async def test_share_group_calls(kafka_broker):
    bootstrap, group, topic = kafka_broker.bootstrap_servers, "sg", "shared"
    await in_thread(kafka_broker.create_topic, topic, 2)
    await in_thread(produce, bootstrap, topic, [b"x%d" % i for i in range(10)], partition=0)
    tp0, tp1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    member_id = str(uuid.uuid4())
    async with KafkaClient(bootstrap) as client, admin_for(kafka_broker) as admin:
        answer = await share_heartbeat(client, group, member_id, 0, [topic])
        epoch = answer.member_epoch

        async def assigned():
            nonlocal epoch
            epoch = (await share_heartbeat(client, group, member_id, epoch, None)).member_epoch
            d = (await admin.describe_share_groups([group]))[group]
            return d.members and d.members[0].assignment == {tp0, tp1} and d
        described = await eventually(assigned, "the share member owns both partitions")
        assert described.state == "Stable" and described.members[0].member_id == member_id
        assert described.coordinator.id in (1, 2, 3) and described.group_epoch >= 1
        assert [g.group_id for g in await admin.list_groups(types=["share"])] == [group]
        assert (await admin.describe_share_groups(["no-such"]))["no-such"].code == E.GROUP_ID_NOT_FOUND

        busy = await admin.alter_share_group_offsets(group, {tp0: 3})
        assert busy[tp0].code == E.NON_EMPTY_GROUP
        assert (await admin.delete_share_groups([group]))[group].code == E.NON_EMPTY_GROUP

        await share_heartbeat(client, group, member_id, -1, None)            # leave
        assert (await admin.describe_share_groups([group]))[group].state == "Empty"

        assert (await admin.alter_share_group_offsets(group, {tp0: 3, tp1: 0})).all() == {tp0: None, tp1: None}
        offsets = await admin.list_share_group_offsets(group)
        assert offsets[tp0].start_offset == 3 and offsets[tp1].start_offset == 0
        assert offsets[tp0].lag == 7
        assert (await admin.list_share_group_offsets(group, [tp0]))[tp0].start_offset == 3

        assert (await admin.delete_share_group_offsets(group, [topic]))[topic] is None
        assert await admin.list_share_group_offsets(group) == {}

        assert (await admin.delete_share_groups([group]))[group] is None
        assert (await admin.describe_share_groups([group]))[group].code == E.GROUP_ID_NOT_FOUND
        assert (await admin.delete_share_groups([group]))[group].code == E.GROUP_ID_NOT_FOUND


# -- transactions -----------------------------------------------------------------------------------------------------

@pytest.mark.trio
@pytest.mark.kafkamock(brokers=3, config=GROUP_CONFIG)   # leaders and coordinators spread
async def test_an_open_transaction_described_listed_and_aborted(kafka_broker):
    bootstrap = kafka_broker.bootstrap_servers
    await in_thread(kafka_broker.create_topic, "txn", 1)
    await in_thread(produce, bootstrap, "txn", [b"before"])

    def open_transaction():
        producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "transactional.id": "tx-open"})
        producer.init_transactions(10)
        producer.begin_transaction()
        producer.produce("txn", value=b"in-flight", partition=0)
        assert producer.flush(10) == 0
        return producer
    producer = await in_thread(open_transaction)
    tp = TopicPartition("txn", 0)
    async with admin_for(kafka_broker) as admin:
        described = await admin.describe_transactions(["tx-open", "tx-none"])
        txn = described["tx-open"]
        assert txn.state == "Ongoing" and txn.topic_partitions == {tp}
        assert txn.producer_id >= 0 and txn.transaction_start_time_ms is not None and txn.coordinator_id >= 0
        assert described["tx-none"].code == E.TRANSACTIONAL_ID_NOT_FOUND
        assert (await admin.describe_transaction_state(["tx-open"]))["tx-open"] == txn

        listed = await admin.list_transactions()
        assert [(t.transactional_id, t.producer_id, t.state) for t in listed] == [("tx-open", txn.producer_id,
                                                                                    "Ongoing")]
        assert await admin.list_transactions(states=["CompleteCommit"]) == []
        assert [t.transactional_id for t in await admin.list_transactions(producer_ids=[txn.producer_id])] == [
            "tx-open"]
        assert await admin.list_transactions(producer_ids=[txn.producer_id + 1]) == []
        assert await admin.list_transactions(duration_filter_ms=3_600_000) == []

        producers = (await admin.describe_producers([tp]))[tp]
        (state,) = [p for p in producers if p.producer_id == txn.producer_id]
        assert state.current_transaction_start_offset == 1 and state.producer_epoch == txn.producer_epoch

        committed = await admin.list_offsets({tp: "latest"}, isolation_level="read_committed")
        uncommitted = await admin.list_offsets({tp: "latest"})
        assert (committed[tp].offset, uncommitted[tp].offset) == (1, 2)

        await admin.abort_transaction(tp, state.producer_id, state.producer_epoch, state.coordinator_epoch or 0)
        lso = await admin.list_offsets({tp: "latest"}, isolation_level="read_committed")
        assert lso[tp].offset == 3                        # past the ABORT marker: nothing is open any more
        assert (await admin.describe_producers([tp]))[tp][0].current_transaction_start_offset is None
    del producer


# -- the blocking face --------------------------------------------------------------------------------------------------

def test_the_blocking_admin(kafka_broker):
    from kafkamock.client.blocking import Admin as BlockingAdmin

    with BlockingAdmin({"bootstrap.servers": kafka_broker.bootstrap_servers}) as admin:
        assert admin.create_topics([NewTopic("plain", 2, 1)])["plain"].num_partitions == 2
        assert [p.partition for p in admin.describe_topics(["plain"])["plain"].partitions] == [0, 1]
        assert len(admin.describe_cluster().nodes) == 1
        assert admin.delete_topics(["plain"])["plain"] is None
        assert "plain" not in admin.list_topics()


# -- the same answers as Java's Admin -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def java_clients():
    """kafka-clients 4.3.1 scenarios (as tests/interop/java/conftest.py gives them), compiled on first use."""
    from support.java_clients import JavaClients, build
    from support.oracle import find_java

    if find_java() is None:
        pytest.skip("the Java client tests need a JDK 17; none found")
    return JavaClients(build())


@pytest.mark.java
@pytest.mark.trio
@pytest.mark.kafkamock(brokers=3, config={"group.initial.rebalance.delay.ms": 0,
                                          "group.consumer.heartbeat.interval.ms": 500,
                                          "group.consumer.min.heartbeat.interval.ms": 500})
async def test_the_same_descriptions_as_javas_admin(kafka_broker, java_clients):
    bootstrap = kafka_broker.bootstrap_servers
    async with admin_for(kafka_broker) as admin:
        (await admin.create_topics([NewTopic("compared", 3, 2)])).all()
    await in_thread(produce, bootstrap, "compared", [b"x"])
    members = [Member(bootstrap, "g-classic", "compared"), Member(bootstrap, "g-848", "compared", protocol="consumer")]
    try:
        async with admin_for(kafka_broker) as admin:
            async def both_stable():
                got = await admin.describe_consumer_groups(["g-classic", "g-848"])
                return all(not isinstance(d, KafkaError) and d.state == "Stable" and d.members
                           and len(d.members[0].assignment) == 3 for d in got.values()) and got
            ours_groups = await eventually(both_stable, "both groups stable with every partition assigned")
            ours_cluster = await admin.describe_cluster()
            ours_topic = (await admin.describe_topics(["compared"]))["compared"]
            java = await in_thread(java_clients.admin, bootstrap, [
                {"op": "describeCluster"}, {"op": "describeTopics", "names": ["compared"], "by_id": False},
                {"op": "describeConsumerGroups", "groups": ["g-classic", "g-848"]}])
            ours_after = await admin.describe_consumer_groups(["g-classic", "g-848"])
    finally:
        for member in members:
            await in_thread(member.stop)
    java_cluster, java_topics, java_groups = (r["result"] for r in java)

    assert java_cluster["cluster_id"] == ours_cluster.cluster_id
    assert java_cluster["controller"]["id"] == ours_cluster.controller.id
    assert [(n["id"], n["host"], n["port"]) for n in java_cluster["nodes"]] == sorted(
        (n.id, n.host, n.port) for n in ours_cluster.nodes)

    java_topic = java_topics["by_name"]["compared"]
    java_id = base64.urlsafe_b64encode(ours_topic.topic_id.bytes).rstrip(b"=").decode()    # Java's Uuid.toString
    assert java_topic["topic_id"] == java_id and java_topic["internal"] == ours_topic.internal
    assert java_topic["partitions"] == [{"partition": p.partition, "leader": p.leader.id,
                                         "replicas": [n.id for n in p.replicas], "isr": [n.id for n in p.isr]}
                                        for p in ours_topic.partitions]

    for group in ("g-classic", "g-848"):
        theirs, ours = java_groups[group], ours_after[group]
        assert ours == ours_groups[group], "the groups changed while Java described them"
        assert (theirs["state"], theirs["type"], theirs["simple"], theirs["assignor"]) == (
            ours.state, ours.type.capitalize(), ours.is_simple,
            ours.partition_assignor)
        assert theirs["coordinator"]["id"] == ours.coordinator.id
        assert theirs["group_epoch"] == ours.group_epoch
        assert theirs["target_assignment_epoch"] == ours.target_assignment_epoch
        (member,) = theirs["members"]
        (our_member,) = ours.members
        assert (member["member_id"], member["client_id"], member["host"]) == (
            our_member.member_id, our_member.client_id, our_member.host)
        assert member["assignment"] == sorted(f"{tp.topic}:{tp.partition}" for tp in our_member.assignment)
        assert member["member_epoch"] == our_member.member_epoch
        assert member["target_assignment"] == (None if our_member.target_assignment is None
                                               else sorted(f"{tp.topic}:{tp.partition}" for tp in our_member.target_assignment))
