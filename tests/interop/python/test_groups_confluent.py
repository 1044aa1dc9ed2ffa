"""Consumer groups with confluent-kafka (librdkafka): subscribe() with the classic protocol (range and
cooperative-sticky), the KIP-848 ``consumer`` protocol, manual commits, standalone (assign-only) commits, and the
AdminClient's group operations. The ``group_cluster`` fixture (test_groups.py) is kafkamock or, with
KAFKAMOCK_EXTERNAL_BOOTSTRAP set, a real Kafka; every test here passed against Kafka 3.8.0 first.
"""

from __future__ import annotations

from collections import Counter

import pytest
from support.targets import TARGETS
from test_groups import NON_EMPTY_GROUP, cluster_for, served_versions, wait_for

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import (  # noqa: E402
    OFFSET_INVALID,
    Consumer,
    ConsumerGroupState,
    ConsumerGroupTopicPartitions,
    ConsumerGroupType,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient  # noqa: E402

PARTITIONS = 6


@pytest.fixture(params=TARGETS)
def group_cluster(request):
    yield from cluster_for(request)


def produce(cluster, topic: str, start: int, count: int) -> dict[tuple[int, int], bytes]:
    """Produce keyed records ``start .. start+count-1``; {(partition, offset): value} from the delivery reports."""
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all", "linger.ms": 5,
                         "partitioner": "murmur2_random", "message.timeout.ms": 15000})
    reports: dict[tuple[int, int], bytes] = {}
    errors: list = []

    def on_delivery(err, msg):
        if err:
            errors.append(err)
        else:
            reports[(msg.partition(), msg.offset())] = msg.value()

    for i in range(start, start + count):
        producer.produce(topic, key=b"key-%d" % (i % 37), value=b"value-%06d" % i, on_delivery=on_delivery)
        producer.poll(0)
    assert producer.flush(20) == 0, "records still in flight after 20 s"
    assert not errors, errors[:5]
    assert len(reports) == count
    return reports


def member(cluster, group: str, **conf) -> Consumer:
    config = {"bootstrap.servers": cluster.bootstrap_servers, "group.id": group, "enable.auto.commit": False,
              "auto.offset.reset": "earliest", "fetch.wait.max.ms": 100, "session.timeout.ms": 10000,
              "heartbeat.interval.ms": 500, "socket.timeout.ms": 10000}
    config.update(conf)
    return Consumer({k: v for k, v in config.items() if v is not None})


class Group:
    """Consumers of one group polled round-robin on the test thread; every record each one processes is kept
    with who read it, and its offset committed synchronously right after (``enable.auto.commit=false``)."""

    def __init__(self, cluster, topic: str, consumers: list[Consumer]):
        self.metadata, self.topic = cluster, topic
        self.consumers = list(consumers)
        self.seen: list[tuple[int, int, bytes, int]] = []       # (partition, offset, value, consumer index)
        self.errors: list[str] = []
        self.index = {id(c): i for i, c in enumerate(self.consumers)}

    def add(self, consumer: Consumer) -> None:
        self.index[id(consumer)] = len(self.index)
        self.consumers.append(consumer)

    def remove(self, consumer: Consumer) -> None:
        self.consumers.remove(consumer)

    def poll_once(self) -> None:
        for c in self.consumers:
            messages = c.consume(num_messages=200, timeout=0.05)
            last: dict[int, int] = {}
            for m in messages:
                if m.error():
                    if m.error().code() != KafkaError._PARTITION_EOF:
                        self.errors.append(str(m.error()))
                    continue
                self.seen.append((m.partition(), m.offset(), m.value(), self.index[id(c)]))
                last[m.partition()] = m.offset()
            if last:                                   # "processed": commit the next offsets, synchronously
                c.commit(offsets=[TopicPartition(self.topic, p, o + 1) for p, o in last.items()],
                         asynchronous=False)

    def assignments(self) -> list[set[int]]:
        return [{tp.partition for tp in c.assignment() if tp.topic == self.topic} for c in self.consumers]

    def describe(self) -> str:
        return f"assignments {self.assignments()}, {len(self.seen)} records seen, errors {self.errors[-5:]}"

    def wait_balanced(self, what: str, sizes: list[int] | None = None) -> list[set[int]]:
        """Poll until the assignments are disjoint, cover every partition, and (by default) are even."""
        def balanced():
            current = self.assignments()
            union = set().union(*current)
            want = sizes or [PARTITIONS // len(current)] * len(current)
            if sum(map(len, current)) == PARTITIONS and union == set(range(PARTITIONS)) and \
                    sorted(map(len, current)) == sorted(want):
                return current
            return None
        return wait_for(self.metadata, balanced, what, step=self.poll_once, detail=self.describe)

    def wait_seen(self, count: int, what: str) -> None:
        wait_for(self.metadata, lambda: len(self.seen) >= count, what, step=self.poll_once, detail=self.describe)

    def close(self) -> None:
        for c in self.consumers:
            c.close()
        self.consumers = []


def check_once_each(seen: list[tuple[int, int, bytes, int]], produced: dict[tuple[int, int], bytes],
                    owners: list[set[int]]) -> None:
    counts = Counter((p, o) for p, o, _, _ in seen)
    duplicates = {k: n for k, n in counts.items() if n > 1}
    assert not duplicates, f"records read more than once: {sorted(duplicates)[:10]}"
    assert {(p, o): v for p, o, v, _ in seen} == produced
    for partition, _, _, who in seen:                 # each record read by the member that owns its partition
        assert partition in owners[who], (partition, who, owners)


@pytest.mark.parametrize("strategy", ["cooperative-sticky", "range"])
def test_three_members_share_six_partitions_through_leave_and_join(group_cluster, strategy):
    """Classic protocol, three members: disjoint assignments covering the topic, every record read once with
    commits after processing; one member leaves and a new one joins: covered again, new records read once;
    committed offsets are the consumed positions, and a fresh member of the group resumes from them.

    Kafka 3.8 and 4.3 behave alike here (classic protocol, new group coordinator). Observed on 3.8 with
    group.initial.rebalance.delay.ms=0: the group is balanced about 1-3 s after the three subscribe (librdkafka's
    joins, then a rebalance per member joining); a leave or a join rebalances within about a second with
    heartbeat.interval.ms=500.
    """
    cluster = group_cluster
    topic, group_id = cluster.name("topic"), cluster.name("group")
    cluster.create_topic(topic, PARTITIONS)
    conf = {"partition.assignment.strategy": strategy}
    group = Group(cluster, topic, [member(cluster, group_id, **conf, **{"client.id": f"m{i}"}) for i in range(3)])
    try:
        for c in group.consumers:
            c.subscribe([topic])
        owners = group.wait_balanced("three members to share six partitions, two each")

        first = produce(cluster, topic, 0, 600)
        assert {p for p, _ in first} == set(range(PARTITIONS))       # the 37 keys reach every partition
        group.wait_seen(len(first), "the group to read 600 records")
        check_once_each(group.seen, first, owners)
        assert group.assignments() == owners, "no member changed, so neither did the assignment"
        assert {who for _, _, _, who in group.seen} == {0, 1, 2}

        # One member leaves (close() sends LeaveGroup), the other two take its partitions; then a new one joins.
        leaving = group.consumers[0]
        leaving_partitions = owners[0]
        leaving.close()
        group.remove(leaving)
        after_leave = group.wait_balanced("two members to take over the leaver's partitions")
        if strategy == "cooperative-sticky":           # sticky: nobody gives up what it had
            assert after_leave[0] >= owners[1] and after_leave[1] >= owners[2], (owners, after_leave)
            assert (after_leave[0] - owners[1]) | (after_leave[1] - owners[2]) == leaving_partitions
        group.add(member(cluster, group_id, **conf, **{"client.id": "m3"}))
        group.consumers[-1].subscribe([topic])
        owners_now = group.wait_balanced("the new member to get its share")
        assert owners_now[2], "the new member owns partitions"

        before = len(group.seen)
        second = produce(cluster, topic, 600, 300)
        group.wait_seen(before + len(second), "the group to read 300 more records after the rebalance")
        newer = group.seen[before:]
        everyone = [set() for _ in range(4)]
        for index, c in enumerate(group.consumers):
            everyone[group.index[id(c)]] = owners_now[index]
        check_once_each(newer, second, everyone)

        # Committed offsets are the consumed positions, per member and seen by a consumer outside the group.
        end = {p: max((o for (q, o) in {**first, **second} if q == p), default=-1) + 1 for p in range(PARTITIONS)}
        for c, mine in zip(group.consumers, owners_now, strict=True):
            committed = c.committed([TopicPartition(topic, p) for p in mine], timeout=10)
            positions = c.position([TopicPartition(topic, p) for p in mine])
            assert {tp.partition: tp.offset for tp in committed} == {tp.partition: tp.offset for tp in positions}
            assert {tp.partition: tp.offset for tp in committed} == {p: end[p] for p in mine}
        outsider = member(cluster, group_id)                 # same group id, never subscribes: OffsetFetch only
        try:
            committed = outsider.committed([TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=10)
            assert {tp.partition: tp.offset for tp in committed} == end
            low_high = [outsider.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
                        for p in range(PARTITIONS)]
            assert {p: high for p, (_, high) in enumerate(low_high)} == end
        finally:
            outsider.close()
        group.close()

        # A fresh member of the group starts at the committed offsets: it reads only the records produced now.
        third = produce(cluster, topic, 900, 120)
        fresh = Group(cluster, topic, [member(cluster, group_id, **conf)])
        try:
            fresh.consumers[0].subscribe([topic])
            fresh.wait_seen(len(third), "a fresh member to read the 120 newest records")
            assert {(p, o): v for p, o, v, _ in fresh.seen} == third
            firsts = {p: min(o for q, o, _, _ in fresh.seen if q == p) for p, _ in third}
            assert all(firsts[p] == end[p] for p in firsts), (firsts, end)
        finally:
            fresh.close()
    finally:
        group.close()


def consumer_protocol_or_skip(cluster) -> None:
    """librdkafka 2.12+ speaks KIP-848 with ConsumerGroupHeartbeat v1 (KIP-1082, client-made member ids) only:
    against a broker that serves v0 alone (Kafka 3.8's early access) it marks the coordinator dead with "Required
    feature not supported by broker" and never joins. kafkamock (as Kafka 4.x) must serve v1, so this never skips
    there."""
    if cluster.external:
        versions = served_versions(cluster.bootstrap_servers).get(68)
        if versions is None or versions[1] < 1:
            pytest.skip(f"the external broker serves ConsumerGroupHeartbeat {versions} and librdkafka "
                        f"{confluent_kafka.libversion()[0]} needs v1 (Kafka 4.0+); test_groups.py's "
                        f"test_consumer_protocol_heartbeats_share_partitions covers KIP-848 on Kafka 3.8")


def test_consumer_group_protocol_members_share_partitions(group_cluster):
    """KIP-848 (group.protocol=consumer, server-side assignment): three members cover the topic disjointly,
    records are read once, a leaver's partitions move, and the AdminClient describes the group as type consumer.
    Kafka 3.8 cannot run this with librdkafka 2.16 (see consumer_protocol_or_skip); 4.x can."""
    cluster = group_cluster
    consumer_protocol_or_skip(cluster)
    topic, group_id = cluster.name("topic"), cluster.name("group")
    cluster.create_topic(topic, PARTITIONS)
    # The consumer protocol refuses session.timeout.ms, heartbeat.interval.ms and partition.assignment.strategy.
    conf = {"group.protocol": "consumer", "session.timeout.ms": None, "heartbeat.interval.ms": None}
    group = Group(cluster, topic, [member(cluster, group_id, **conf) for _ in range(3)])
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    try:
        for c in group.consumers:
            c.subscribe([topic])
        owners = group.wait_balanced("three KIP-848 members to share six partitions")
        produced = produce(cluster, topic, 0, 300)
        group.wait_seen(len(produced), "the group to read 300 records")
        check_once_each(group.seen, produced, owners)

        description = admin.describe_consumer_groups([group_id], request_timeout=10)[group_id].result(timeout=15)
        assert description.type == ConsumerGroupType.CONSUMER
        assert description.state == ConsumerGroupState.STABLE
        described = sorted(sorted(tp.partition for tp in m.assignment.topic_partitions)
                           for m in description.members)
        assert described == sorted(sorted(o) for o in owners)

        leaving = group.consumers.pop(0)
        leaving.close()
        group.wait_balanced("two members to take over", sizes=[3, 3])
        listed = admin.list_consumer_groups(types={ConsumerGroupType.CONSUMER}, request_timeout=10).result(15)
        assert group_id in {g.group_id for g in listed.valid}
    finally:
        group.close()


def test_admin_client_lists_describes_alters_and_deletes_groups(group_cluster):
    """AdminClient: list (state filter), describe (members, assignments, coordinator), list/alter offsets,
    delete refused with NON_EMPTY_GROUP while members are active and accepted once the group is empty."""
    cluster = group_cluster
    topic, group_id = cluster.name("topic"), cluster.name("group")
    cluster.create_topic(topic, PARTITIONS)
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    group = Group(cluster, topic, [member(cluster, group_id, **{"partition.assignment.strategy": "roundrobin",
                                                                 "client.id": f"admin-m{i}"}) for i in range(2)])
    try:
        for c in group.consumers:
            c.subscribe([topic])
        owners = group.wait_balanced("two members to share six partitions")
        produced = produce(cluster, topic, 0, 60)
        group.wait_seen(len(produced), "the group to read 60 records")
        end = {p: 1 + max(o for q, o in produced if q == p) for p in {p for p, _ in produced}}

        stable = admin.list_consumer_groups(states={ConsumerGroupState.STABLE}, request_timeout=10).result(15)
        assert group_id in {g.group_id for g in stable.valid}
        (listing,) = [g for g in stable.valid if g.group_id == group_id]
        assert listing.state == ConsumerGroupState.STABLE and not listing.is_simple_consumer_group
        empty = admin.list_consumer_groups(states={ConsumerGroupState.EMPTY}, request_timeout=10).result(15)
        assert group_id not in {g.group_id for g in empty.valid}

        description = admin.describe_consumer_groups([group_id], request_timeout=10)[group_id].result(timeout=15)
        assert description.group_id == group_id and description.state == ConsumerGroupState.STABLE
        assert description.partition_assignor == "roundrobin" and not description.is_simple_consumer_group
        assert description.type == ConsumerGroupType.CLASSIC
        brokers = admin.list_topics(timeout=10).brokers
        assert description.coordinator.id in brokers
        assert (description.coordinator.host, description.coordinator.port) == \
            (brokers[description.coordinator.id].host, brokers[description.coordinator.id].port)
        assert sorted(m.client_id for m in description.members) == ["admin-m0", "admin-m1"]
        described = sorted(sorted(tp.partition for tp in m.assignment.topic_partitions if tp.topic == topic)
                           for m in description.members)
        assert described == sorted(sorted(o) for o in owners)
        assert all(m.member_id and m.host for m in description.members)

        offsets = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group_id)], request_timeout=10)
        listed = offsets[group_id].result(timeout=15)
        assert {tp.partition: tp.offset for tp in listed.topic_partitions if tp.topic == topic} == end

        # Active members: deleting is refused; so is altering offsets (an admin commit carries no generation and
        # no member id: Kafka answers UNKNOWN_MEMBER_ID for the partition, which librdkafka reports per partition
        # while the request as a whole succeeds).
        with pytest.raises(KafkaException) as refused:
            admin.delete_consumer_groups([group_id], request_timeout=10)[group_id].result(timeout=15)
        assert refused.value.args[0].code() == KafkaError.NON_EMPTY_GROUP == NON_EMPTY_GROUP
        altered = admin.alter_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group_id, [TopicPartition(topic, 0, 0)])], request_timeout=10)
        (refused_tp,) = altered[group_id].result(timeout=15).topic_partitions
        assert refused_tp.error is not None and refused_tp.error.code() == KafkaError.UNKNOWN_MEMBER_ID
        listed = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group_id)],
                                                   request_timeout=10)[group_id].result(timeout=15)
        assert {tp.partition: tp.offset for tp in listed.topic_partitions} == end       # unchanged

        group.close()
        wait_for(cluster, lambda: admin.describe_consumer_groups([group_id], request_timeout=10)[group_id]
                 .result(timeout=15).state == ConsumerGroupState.EMPTY, "the group to be empty after both left")
        empty = admin.list_consumer_groups(states={ConsumerGroupState.EMPTY}, request_timeout=10).result(15)
        assert group_id in {g.group_id for g in empty.valid}

        # Empty: offsets can be altered (reset partition 0 to 1, partition 1 to its start)...
        target = [TopicPartition(topic, 0, 1), TopicPartition(topic, 1, 0)]
        altered = admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(group_id, target)],
                                                     request_timeout=10)[group_id].result(timeout=15)
        assert sorted((tp.partition, tp.offset, tp.error) for tp in altered.topic_partitions) == \
            [(0, 1, None), (1, 0, None)]
        listed = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group_id)],
                                                   request_timeout=10)[group_id].result(timeout=15)
        assert {tp.partition: tp.offset for tp in listed.topic_partitions} == {**end, 0: 1, 1: 0}
        # ... and the group deleted, offsets and all.
        deleted = admin.delete_consumer_groups([group_id], request_timeout=10)[group_id].result(timeout=15)
        assert deleted is None
        listed = admin.list_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group_id, [TopicPartition(topic, p) for p in range(PARTITIONS)])],
            request_timeout=10)[group_id].result(timeout=15)
        assert {tp.offset for tp in listed.topic_partitions} == {OFFSET_INVALID}
        every = admin.list_consumer_groups(request_timeout=10).result(15)
        assert group_id not in {g.group_id for g in every.valid}
        with pytest.raises(KafkaException) as refused:
            admin.delete_consumer_groups([group_id], request_timeout=10)[group_id].result(timeout=15)
        assert refused.value.args[0].code() == KafkaError.GROUP_ID_NOT_FOUND
    finally:
        group.close()


def test_standalone_consumer_commits_with_assign(group_cluster):
    """A consumer with a group id that assign()s partitions (never subscribes, never joins) commits offsets; a
    fresh consumer with that group id reads them with committed() and, assigned there, reads on from them. Kafka
    keeps such "simple" commits (generation -1, no member id) in an Empty group of no protocol type."""
    cluster = group_cluster
    topic, group_id = cluster.name("topic"), cluster.name("group")
    cluster.create_topic(topic, 2)
    produced = produce(cluster, topic, 0, 40)
    counts = Counter(p for p, _ in produced)
    assert set(counts) == {0, 1}
    c = member(cluster, group_id)
    try:
        c.assign([TopicPartition(topic, p, 0) for p in range(2)])
        got: list = []

        def step():
            for m in c.consume(num_messages=100, timeout=0.1):
                assert not m.error() or m.error().code() == KafkaError._PARTITION_EOF, m.error()
                if not m.error():
                    got.append((m.partition(), m.offset()))
        wait_for(cluster, lambda: len(got) >= 40, "the 40 records read", step=step)
        assert sorted(got) == sorted(produced)
        # "Processed" half of each partition: commit there, with metadata.
        half = {p: n // 2 for p, n in counts.items()}
        c.commit(offsets=[TopicPartition(topic, p, o, metadata=f"standalone-{p}") for p, o in half.items()],
                 asynchronous=False)
        committed = c.committed([TopicPartition(topic, p) for p in range(2)], timeout=10)
        assert {tp.partition: (tp.offset, tp.metadata) for tp in committed} == \
            {p: (o, f"standalone-{p}") for p, o in half.items()}
        assert c.assignment() and all(tp.partition in (0, 1) for tp in c.assignment())
    finally:
        c.close()
    fresh = member(cluster, group_id)
    try:
        committed = fresh.committed([TopicPartition(topic, p) for p in range(2)], timeout=10)
        assert {tp.partition: tp.offset for tp in committed} == half
        fresh.assign(committed)                          # start at the committed offsets
        rest: list = []

        def step_fresh():
            rest.extend((m.partition(), m.offset()) for m in fresh.consume(num_messages=100, timeout=0.1)
                        if not m.error())
        left = sum(counts.values()) - sum(half.values())
        wait_for(cluster, lambda: len(rest) >= left, f"the {left} records after the committed offsets",
                 step=step_fresh)
        assert sorted(rest) == sorted((p, o) for p in range(2) for o in range(half[p], counts[p]))
    finally:
        fresh.close()
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    description = admin.describe_consumer_groups([group_id], request_timeout=10)[group_id].result(timeout=15)
    assert description.state == ConsumerGroupState.EMPTY and description.members == []
    assert description.is_simple_consumer_group
