"""Share-group state across a crash, end to end: a ``kafkamock serve --data-dir`` process and the share consumer that
was using it are both killed (SIGKILL) mid-stream; after the restart the group receives exactly the records that were
not acknowledged, with the delivery counts the KIP-932 page's rule gives (a released record counts its delivery; an
acquired one is persisted as Available with its count less one). The SHARE_CHECKPOINT / SHARE_DELTA control batches
are in the partition's own segment files (located by its share snapshot file), and plain consumers (librdkafka, kcat)
never show them and still reach the end of the partition. And the share group itself (Kafka's ShareGroup* records in
``__consumer_offsets``): after a restart its epochs and members are as they were, and members that do not come back
are fenced when their sessions run out.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest
from client_support import RawClient, wait_until
from confluent_kafka import AcknowledgeType, Consumer, KafkaError, Producer, ShareConsumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from support.serve_process import ServeProcess

from kafkamock.records import decode_batches, decode_control

pytestmark = pytest.mark.slow
TOPIC, GROUP = "jobs", "workers"

FIRST_LIFE = textwrap.dedent('''
    import sys, time
    from confluent_kafka import AcknowledgeType, ShareConsumer
    c = ShareConsumer({"bootstrap.servers": sys.argv[1], "group.id": "workers",
                       "share.acknowledgement.mode": "explicit"})
    c.subscribe(["jobs"])
    got = []
    deadline = time.monotonic() + 30
    while len(got) < 10 and time.monotonic() < deadline:
        got.extend(c.poll(0.2))
    plan = {b"v0": "ACCEPT", b"v1": "ACCEPT", b"v2": "ACCEPT", b"v3": "ACCEPT", b"v4": "REJECT", b"v5": "REJECT",
            b"v6": "RELEASE", b"v7": "RELEASE"}                      # v8, v9: still held when it all dies
    for m in got:
        if m.value() in plan:
            c.acknowledge(m, getattr(AcknowledgeType, plan[m.value()]))
    results = c.commit_sync()
    assert all(e is None for e in results.values()), results
    print("ACKED", len(got), flush=True)
    time.sleep(600)
''')


def share_offsets(bootstrap: str) -> dict[int, int]:
    with RawClient(bootstrap, timeout=10) as raw:
        _, answer = raw.request("DescribeShareGroupOffsets", 1, {"groups": [{"group_id": GROUP, "topics": None}]})
    group = answer.groups[0]
    return {p.partition_index: p.start_offset for t in group.topics for p in t.partitions} if not group.error_code \
        else {}


def control_kinds(data_dir) -> list[str]:
    """The kinds of the control records in the partition's segment files."""
    kinds = []
    for segment in sorted((data_dir / f"{TOPIC}-0").glob("*.log")):
        for batch in decode_batches(segment.read_bytes()):
            if batch.is_control:
                kinds.extend(decode_control(r.key, r.value)[0] for r in batch.records)
    return kinds


def earliest(bootstrap: str) -> None:
    """share.auto.offset.reset=earliest for the group, so records produced before its first fetch count."""
    with RawClient(bootstrap, timeout=10) as raw:
        _, answer = raw.request("IncrementalAlterConfigs", 1, {"resources": [{
            "resource_type": 32, "resource_name": GROUP, "configs": [{
                "name": "share.auto.offset.reset", "config_operation": 0, "value": "earliest"}]}],
            "validate_only": False})
    assert answer.responses[0].error_code == 0, answer


def test_a_crash_gives_back_exactly_the_unacknowledged_records(tmp_path):
    with ServeProcess(["--data-dir", str(tmp_path)]) as broker:
        bootstrap = broker.bootstrap
        admin = AdminClient({"bootstrap.servers": bootstrap})          # kept alive until the result is in
        admin.create_topics([NewTopic(TOPIC, 1, 1)])[TOPIC].result(30)
        earliest(bootstrap)
        first = subprocess.Popen([sys.executable, "-c", FIRST_LIFE, bootstrap], stdout=subprocess.PIPE, text=True)
        try:
            producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
            for n in range(10):
                producer.produce(TOPIC, value=b"v%d" % n, partition=0)
            assert producer.flush(15) == 0
            assert first.stdout.readline().split() == ["ACKED", "10"]
            broker.kill()                                   # the broker and the consumer die together
        finally:
            first.kill()
            first.wait(10)
        broker.start()

        second = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": GROUP,
                                "share.acknowledgement.mode": "explicit"})
        second.subscribe([TOPIC])
        again = []
        try:
            wait_until(lambda: len(again) >= 4, 30, "the unacknowledged records", step=lambda: again.extend(
                second.poll(0.2)))
            assert sorted((m.value(), m.delivery_count()) for m in again) == [
                (b"v6", 2), (b"v7", 2), (b"v8", 1), (b"v9", 1)], [(m.value(), m.delivery_count()) for m in again]
            for m in again:
                second.acknowledge(m, AcknowledgeType.ACCEPT)
            second.commit_sync()
            assert list(second.poll(1.0)) == []             # nothing else comes
        finally:
            second.close()

        kinds = control_kinds(tmp_path)
        assert kinds[0] == "SHARE_CHECKPOINT" and "SHARE_DELTA" in kinds     # in the partition's segment files
        assert list((tmp_path / f"{TOPIC}-0").glob("*.sharestate"))           # and the snapshot locating them
        assert share_offsets(bootstrap) == {0: 6}             # as last written: v0-v5 done, v6 on
        assert read_plain(bootstrap) == [b"v%d" % n for n in range(10)]     # past the control batches to the end
        kcat = subprocess.run(["kcat", "-b", bootstrap, "-C", "-t", TOPIC, "-e", "-q", "-f", "%s\\n"],
                              capture_output=True, text=True, timeout=60)
        assert kcat.returncode == 0, kcat.stderr
        assert kcat.stdout.split() == [f"v{n}" for n in range(10)]           # kcat -e reaches the end too


def read_plain(bootstrap: str) -> list[bytes]:
    reader = Consumer({"bootstrap.servers": bootstrap, "group.id": "plain", "enable.partition.eof": True,
                       "auto.offset.reset": "earliest"})
    reader.assign([TopicPartition(TOPIC, 0, 0)])
    values, done = [], []

    def step():
        m = reader.poll(0.2)
        if m is None:
            return
        if m.error() is None:
            values.append(m.value())
        elif m.error().code() == KafkaError._PARTITION_EOF:
            done.append(True)
    try:
        wait_until(lambda: done, 30, "the end of the partition", step=step)
    finally:
        reader.close()
    return values


MEMBERS_GROUP = "members"
SHORT_SESSIONS = ["--config", "group.share.min.heartbeat.interval.ms=100", "--config",
                  "group.share.heartbeat.interval.ms=200", "--config", "group.share.min.session.timeout.ms=1000",
                  "--config", "group.share.session.timeout.ms=3000", "--config",
                  "group.share.assignment.interval.ms=0"]


def describe(bootstrap: str, group: str):
    with RawClient(bootstrap, timeout=10) as raw:
        _, answer = raw.request("ShareGroupDescribe", 1, {"group_ids": [group], "include_authorized_operations":
                                                          False})
    return answer.groups[0]


def beat(raw: RawClient, member: str, epoch: int, topics=None):
    _, answer = raw.request("ShareGroupHeartbeat", 1, {"group_id": MEMBERS_GROUP, "member_id": member,
                                                       "member_epoch": epoch, "rack_id": None,
                                                       "subscribed_topic_names": topics})
    assert answer.error_code == 0, answer
    return answer


def test_share_group_membership_survives_a_restart_and_members_not_back_are_fenced(tmp_path):
    """Share groups are in ``__consumer_offsets`` (Kafka's ShareGroup* records): after a restart the group is there
    with its epochs and its members, their epochs and assignments; a member that heartbeats goes on at its epoch, one
    that does not is fenced when its session, started again at the load, runs out."""
    with ServeProcess(["--data-dir", str(tmp_path), *SHORT_SESSIONS]) as broker:
        bootstrap = broker.bootstrap
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic(TOPIC, 2, 1)])[TOPIC].result(30)
        with RawClient(bootstrap, timeout=10) as raw:
            a = beat(raw, "a", 0, [TOPIC])
            b = beat(raw, "b", 0, [TOPIC])
            a = beat(raw, "a", a.member_epoch)
            b = beat(raw, "b", b.member_epoch)
            assert a.member_epoch == b.member_epoch
        before = describe(bootstrap, MEMBERS_GROUP)
        members = {m.member_id: (m.member_epoch, sorted(p for t in m.assignment.topic_partitions
                                                        for p in t.partitions)) for m in before.members}
        assert sorted(p for _, ps in members.values() for p in ps) == [0, 1]      # the partitions are shared out

        broker.stop()
        broker.start()

        after = describe(bootstrap, MEMBERS_GROUP)
        assert (after.error_code, after.group_state, after.group_epoch, after.assignment_epoch) == (
            0, "Stable", before.group_epoch, before.assignment_epoch)
        assert {m.member_id: (m.member_epoch, sorted(p for t in m.assignment.topic_partitions for p in t.partitions))
                for m in after.members} == members
        epoch = [members["a"][0]]                                    # a heartbeats at the epoch it had

        def only_a_left() -> bool:
            with RawClient(bootstrap, timeout=10) as raw:
                epoch[0] = beat(raw, "a", epoch[0]).member_epoch
            return [m.member_id for m in describe(bootstrap, MEMBERS_GROUP).members] == ["a"]
        wait_until(only_a_left, 30, "b's session to run out after the restart", step=lambda: time.sleep(0.3))
        final = describe(bootstrap, MEMBERS_GROUP)
        assert final.group_epoch > before.group_epoch                 # fencing b moved the epoch on
