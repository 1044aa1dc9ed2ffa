"""The group coordinator's one state path, on a ManualClock: operations only build records; ``_append_and_replay``
appends them and applies each through ``replay_record``, the function that loads ``__consumer_offsets`` at a restart.
Classic, KIP-848 and share groups alike.

So a fresh coordinator that loads the log the serving one wrote holds the same offsets, pending transactional
offsets and groups (what their records describe), whatever ran; with ``replay_record`` replaced by a recorder,
operations change nothing themselves; and an append that fails leaves the state as it was. No sockets."""

from __future__ import annotations

import dataclasses
import struct
from typing import Any

import pytest
from support.broker_calls import call

from kafkamock import codec
from kafkamock.broker import Cluster, Respond
from kafkamock.broker.cluster import GROUP_METADATA_TOPIC
from kafkamock.broker.errors import ErrorCode as E
from kafkamock.broker.groups import GroupCoordinator, records
from kafkamock.broker.groups.records import LoggedRecord
from kafkamock.broker.timers import Timers
from kafkamock.records import decode_batches

MINUTE = 60_000
TXN = "tx"


class OwnServices:
    """The broker's services for a second coordinator over the same log, with its own timers (its members'
    sessions must not replace the serving coordinator's), and an append that can be made to fail."""

    def __init__(self, broker: Cluster) -> None:
        self.cluster = broker
        self.timers = Timers()
        self.fail = False

    @property
    def config(self):
        return self.cluster.config

    @property
    def metadata(self):
        return self.cluster.metadata

    def now_ms(self) -> int:
        return self.cluster.now_ms()

    def first_node(self):
        return self.cluster.first_node()

    def internal_topic(self, name: str):
        return self.cluster.internal_topic(name)

    def append_internal(self, partition, data, *, notify: bool = True) -> tuple[int, int]:
        if self.fail:
            raise OSError("no space left on device")
        return self.cluster.append_internal(partition, data, notify=notify)

    def appended(self, partition) -> None:
        self.cluster.appended(partition)

    def notify(self, key) -> None:
        self.timers.notify(key)


# -- what the records describe, compared structurally ------------------------------------------------------------

def _offsets(offsets) -> dict:
    return {(topic, partition): committed for topic, partition, committed in offsets.items()}


def _group(group) -> tuple:
    if group.kind == "classic":
        # A simple group (no protocol type) has no record of its own: the time it was made is not durable.
        return ("classic", group.state_name, group.generation, group.protocol_type, group.protocol, group.leader_id,
                group.state_timestamp_ms if group.protocol_type else None, group.subscribed_topics,
                {m.member_id: (m.group_instance_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
                               m.session_timeout_ms, m.metadata(group.protocol), m.assignment)
                 for m in group.members.values()})
    if group.kind == "share":
        return ("share", group.state_name, group.group_epoch, group.assignment_epoch, group.assignment_timestamp,
                group.metadata_hash, {m: t for m, t in group.target.items() if t}, dict(group.initialized),
                {t: i.partitions for t, i in group.initializing.items()}, group.deleting,
                {m.member_id: (m.member_epoch, m.previous_member_epoch, m.client_id, m.client_host, m.rack_id,
                               tuple(m.subscribed_topic_names), dict(m.assigned)) for m in group.members.values()})
    assert group.kind == "consumer"
    return ("consumer", group.state_name, group.group_epoch, group.assignment_epoch, group.assignment_timestamp_ms,
            group.metadata_hash, group.creation_time_ms, group.regex_refresh_ms, dict(group.regexes),
            dict(group.target),
            {m.member_id: tuple(getattr(m, f.name) for f in dataclasses.fields(m)) for m in group.members.values()})


def state(coordinator: GroupCoordinator) -> dict[str, Any]:
    return {"offsets": {g: _offsets(o) for g, o in coordinator.offsets.items()},
            "pending": {pid: {g: _offsets(o) for g, o in groups.items()}
                        for pid, groups in coordinator.pending_txn.items()},
            "groups": {g: _group(group) for g, group in coordinator.groups.items()}}


def logged(broker: Cluster) -> list[tuple[int, int, LoggedRecord]]:
    """Every record of ``__consumer_offsets``: (partition, offset, record)."""
    out = []
    for partition in broker.metadata.topics[GROUP_METADATA_TOPIC].partitions:
        for stored in partition.log.batches():
            for batch in decode_batches(stored.data):
                if not batch.is_control:
                    out.extend((partition.index, r.offset, records.decode(r.key, r.value)) for r in batch.records)
    return out


# -- requests ----------------------------------------------------------------------------------------------------

def subscription(*topics: str) -> bytes:
    return struct.pack(">h", 1) + codec.encode("ConsumerProtocolSubscription", 1, {"topics": list(topics)})


def commit(broker, group, offsets, *, generation=-1, member="", version=9, retention=-1) -> list[E]:
    answer = call(broker, "OffsetCommit", version, {
        "group_id": group, "generation_id_or_member_epoch": generation, "member_id": member,
        "retention_time_ms": retention,
        "topics": [{"name": t, "partitions": [{"partition_index": p, "committed_offset": o, "committed_metadata": "m"}]}
                   for t, p, o in offsets]})
    return [p.error_code for t in answer.topics for p in t.partitions]


def join(broker, group, member="", topics=("t",)):
    return call(broker, "JoinGroup", 9, {
        "group_id": group, "session_timeout_ms": 30_000, "rebalance_timeout_ms": 30_000, "member_id": member,
        "group_instance_id": None, "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": subscription(*topics)}]})


def answered(waiter, api="JoinGroup", version=9):
    if not hasattr(waiter, "result"):
        return waiter
    assert isinstance(waiter.result, Respond)
    return codec.decode(f"{api}Response", version, codec.encode(f"{api}Response", version, waiter.result.body))


def sync(broker, group, generation, member, assignments=()):
    return call(broker, "SyncGroup", 5, {
        "group_id": group, "generation_id": generation, "member_id": member, "protocol_type": "consumer",
        "protocol_name": "range", "assignments": [{"member_id": m, "assignment": a} for m, a in assignments]})


def classic_group(broker, clock, group="c") -> tuple[int, str, str]:
    """Two members through two rounds, Stable: (generation, leader, follower)."""
    first = join(broker, group)
    assert first.error_code == E.MEMBER_ID_REQUIRED
    a = first.member_id
    waiting = join(broker, group, a)
    clock.advance(broker.config["group.initial.rebalance.delay.ms"])
    broker.tick()
    assert answered(waiting).generation_id == 1
    sync(broker, group, 1, a, [(a, b"A")])
    second = join(broker, group)
    b = second.member_id
    b_waiting = join(broker, group, b, topics=("t", "u"))
    a_rejoin = join(broker, group, a)                     # everyone has joined: the round ends at once
    generation = answered(a_rejoin).generation_id
    assert generation == 2 and answered(b_waiting).generation_id == 2
    leader = answered(a_rejoin).leader
    follower = b if leader == a else a
    sync(broker, group, generation, follower)
    sync(broker, group, generation, leader, [(a, b"A2"), (b, b"B2")])
    return generation, leader, follower


def beat(broker, group, member, epoch, *, topics=("t",), owned=None, regex=None, instance=None):
    return call(broker, "ConsumerGroupHeartbeat", 1, {
        "group_id": group, "member_id": member, "member_epoch": epoch, "instance_id": instance,
        "rebalance_timeout_ms": 60_000 if epoch == 0 else -1,
        "subscribed_topic_names": list(topics) if epoch == 0 and regex is None else None,
        "subscribed_topic_regex": regex, "server_assignor": None,
        "topic_partitions": None if owned is None else owned})


def owned(broker, answer) -> list[dict]:
    return [{"topic_id": t.topic_id, "partitions": list(t.partitions)} for t in answer.assignment.topic_partitions]


def transaction(broker, group, offset, *, commit_it: bool, end: bool = True) -> None:
    pid_answer = call(broker, "InitProducerId", 5, {"transactional_id": TXN, "transaction_timeout_ms": 60_000,
                                                    "producer_id": -1, "producer_epoch": -1})
    pid, epoch = pid_answer.producer_id, pid_answer.producer_epoch
    assert call(broker, "AddOffsetsToTxn", 3, {"transactional_id": TXN, "producer_id": pid, "producer_epoch": epoch,
                                               "group_id": group}).error_code == E.NONE
    answer = call(broker, "TxnOffsetCommit", 3, {
        "transactional_id": TXN, "group_id": group, "producer_id": pid, "producer_epoch": epoch,
        "generation_id": -1, "member_id": "", "group_instance_id": None,
        "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": offset,
                                                 "committed_leader_epoch": -1, "committed_metadata": "x"}]}]})
    assert answer.topics[0].partitions[0].error_code == E.NONE
    if end:
        assert call(broker, "EndTxn", 4, {"transactional_id": TXN, "producer_id": pid, "producer_epoch": epoch,
                                          "committed": commit_it}).error_code == E.NONE


@pytest.fixture
def served(clock):
    broker = Cluster({"offsets.topic.num.partitions": 3, "transaction.state.log.num.partitions": 1,
                     "group.consumer.assignment.interval.ms": 0, "offsets.retention.minutes": 10}, clock=clock)
    for name, partitions in (("t", 2), ("u", 2), ("gone", 1)):
        broker.metadata.create_topic(name, partitions, 1)
    return broker


def test_a_coordinator_loading_the_log_holds_what_the_serving_one_holds(served, clock):
    broker = served
    # standalone commits, one with a v2 retention (its own expire timestamp), a deleted offset, a deleted topic
    assert commit(broker, "solo", [("t", 0, 5), ("t", 1, 6), ("gone", 0, 3)]) == [E.NONE] * 3
    assert commit(broker, "short", [("t", 0, 1)], version=2, retention=MINUTE) == [E.NONE]
    deleted = call(broker, "OffsetDelete", 0, {"group_id": "solo", "topics": [
        {"name": "t", "partitions": [{"partition_index": 1}, {"partition_index": 1}]}]})
    assert deleted.topics[0].partitions[0].error_code == E.NONE
    broker.delete_topic(broker.metadata.topics["gone"])
    # a deleted group
    commit(broker, "doomed", [("t", 0, 9)])
    assert call(broker, "DeleteGroups", 2, {"groups_names": ["doomed"]}).results[0].error_code == E.NONE
    # a classic group through two rounds, committing
    generation, leader, follower = classic_group(broker, clock)
    assert commit(broker, "c", [("t", 0, 10)], generation=generation, member=leader) == [E.NONE]
    # transactional offsets: committed, aborted, and one still open
    transaction(broker, "txg", 20, commit_it=True)
    transaction(broker, "txg", 21, commit_it=False)
    assert commit(broker, "txg", [("t", 1, 22)]) == [E.NONE]
    # a KIP-848 group: two members, a revocation, a member's commit, a member that leaves
    a = beat(broker, "k", "a", 0, owned=[])
    b = beat(broker, "k", "b", 0, owned=[])
    a = beat(broker, "k", "a", a.member_epoch, owned=owned(broker, a))
    a = beat(broker, "k", "a", a.member_epoch, owned=owned(broker, a))
    b = beat(broker, "k", "b", b.member_epoch, owned=[])
    assert a.member_epoch == b.member_epoch == 3
    assert commit(broker, "k", [("t", 0, 30)], generation=3, member="a") == [E.NONE]
    c = beat(broker, "k", "c", 0, owned=[])
    assert beat(broker, "k", "c", -1).error_code == E.NONE and c.error_code == E.NONE
    # a static member that left for now (epoch -2), and a group subscribed by regular expression
    s = beat(broker, "st", "s", 0, owned=[], instance="i")
    assert beat(broker, "st", "s", -2, instance="i").member_epoch == -2 and s.member_epoch == 2
    r = beat(broker, "rx", "r", 0, owned=[], regex="u|t")
    broker.tick()                                           # the regex resolves after the heartbeat
    r = beat(broker, "rx", "r", r.member_epoch, owned=[])
    assert broker.groups.groups["rx"].regexes["u|t"].topics == frozenset({"t", "u"})
    # KIP-211: "short" expires by its own timestamp, and its empty group goes with it
    broker.groups.expire_offsets(clock.now_ms() + 2 * MINUTE)
    transaction(broker, "open", 40, commit_it=True, end=False)

    served_state = state(broker.groups)
    assert set(served_state["groups"]) == {"solo", "c", "txg", "k", "st", "rx", "open"}
    assert served_state["offsets"]["solo"].keys() == {("t", 0)}
    assert served_state["offsets"]["txg"][("t", 0)].offset == 20 and len(served_state["pending"]) == 1
    assert served_state["groups"]["c"][1] == "Stable" and served_state["groups"]["k"][1] == "Assigning"

    fresh = GroupCoordinator(OwnServices(broker))
    fresh.replay()
    assert state(fresh) == served_state


def test_operations_change_state_only_by_replaying_what_they_appended(served, clock):
    broker = served
    coordinator = broker.groups
    commit(broker, "g", [("t", 0, 1), ("t", 1, 2)])          # the group exists (a commit's validation makes it)
    commit(broker, "gone-soon", [("u", 0, 1)])
    before = state(coordinator)
    written_before = {(partition, offset) for partition, offset, _ in logged(broker)}
    seen: list[tuple[LoggedRecord, int, int]] = []
    coordinator.replay_record = lambda record, offset, producer_id=-1: seen.append((record, offset, producer_id))
    assert commit(broker, "g", [("t", 0, 7)]) == [E.NONE]
    call(broker, "OffsetDelete", 0, {"group_id": "g", "topics": [{"name": "t", "partitions": [{"partition_index": 1}]}]})
    assert call(broker, "DeleteGroups", 2, {"groups_names": ["gone-soon"]}).results[0].error_code == E.NONE
    coordinator.expire_offsets(clock.now_ms() + 60 * MINUTE)
    assert state(coordinator) == before                       # nothing changed but through replay_record
    appended = sorted((p, o, r.kind, r.key, r.value) for p, o, r in logged(broker) if (p, o) not in written_before)
    replayed = sorted((coordinator._partition(r.key.group).index, o, r.kind, r.key, r.value) for r, o, _ in seen)
    # the commit, OffsetDelete's tombstone, DeleteGroups' two, and the expiry's three (it saw the state unchanged:
    # g's two offsets, and gone-soon's, which DeleteGroups had not removed)
    assert appended == replayed and len(replayed) == 7
    assert [r.kind for r, _, _ in seen][:3] == [records.OFFSET_COMMIT] * 3 and seen[0][0].value.offset == 7
    del coordinator.replay_record
    for record, offset, producer_id in seen:                 # what was appended, applied: the operations' effect
        coordinator.replay_record(record, offset, producer_id)
    assert coordinator.offsets == {} and set(coordinator.groups) == {"g"}
    fresh = GroupCoordinator(OwnServices(broker))
    fresh.replay()
    assert state(fresh) == state(coordinator)


def test_an_append_that_fails_leaves_the_state_as_it_was(clock):
    broker = Cluster({"group.consumer.assignment.interval.ms": 0}, clock=clock)
    broker.metadata.create_topic("t", 2, 1)
    services = OwnServices(broker)
    coordinator = GroupCoordinator(services)
    coordinator.validate_commit("g", -1, "", None, 9)
    coordinator.commit("g", [("t", 0, 5, -1, "")], None)

    def heartbeat(member: str, epoch: int):
        body = codec.decode("ConsumerGroupHeartbeatRequest", 1, codec.encode("ConsumerGroupHeartbeatRequest", 1, {
            "group_id": "k", "member_id": member, "member_epoch": epoch, "rebalance_timeout_ms": 60_000,
            "subscribed_topic_names": ["t"], "topic_partitions": []}))
        return coordinator.consumer.heartbeat(body, 1, "client", "/127.0.0.1", lambda topics: set(topics))

    def new_classic_group():
        body = codec.decode("JoinGroupRequest", 9, codec.encode("JoinGroupRequest", 9, {
            "group_id": "new", "session_timeout_ms": 30_000, "rebalance_timeout_ms": 30_000, "member_id": "",
            "protocol_type": "consumer", "protocols": [{"name": "range", "metadata": subscription("t")}]}))
        return coordinator.join(body, 9, "client", "/127.0.0.1")

    assert heartbeat("a", 0)["member_epoch"] == 2
    before, log_end = state(coordinator), len(logged(broker))
    services.fail = True
    for operation in (lambda: coordinator.commit("g", [("t", 0, 6, -1, "")], None),
                      lambda: coordinator.txn_commit("g", 7, 0, [("t", 1, 6, -1, "")]),
                      lambda: coordinator.delete_offsets("g", [("t", [0])]),
                      lambda: coordinator.delete_group("g"),
                      lambda: coordinator.expire_offsets(clock.now_ms() + 8 * 24 * 60 * MINUTE),
                      lambda: coordinator.topic_deleted("t"),
                      lambda: heartbeat("b", 0),
                      lambda: heartbeat("a", -1),
                      new_classic_group):
        with pytest.raises(OSError):
            operation()
        assert state(coordinator) == before
    assert len(logged(broker)) == log_end and "new" not in coordinator.groups
    services.fail = False
    assert heartbeat("b", 0)["member_epoch"] == 3              # the same operation, appended this time
    assert state(coordinator)["groups"]["k"] != before["groups"]["k"]


def test_a_v0_group_metadata_record_loads_its_members_with_the_session_timeout_as_rebalance_timeout(clock):
    """GroupMetadataValue v0 (Kafka 0.9's) has no rebalance timeout: it reads -1, and Kafka's
    ClassicGroup.fromRecord takes the member's session timeout instead."""
    broker = Cluster(clock=clock)
    member = {"member_id": "m", "client_id": "c", "client_host": "/h", "session_timeout": 7_000,
              "subscription": b"", "assignment": b""}
    written = [records.GroupRecord(records.GROUP_METADATA, {"group": "old"}, {
        "protocol_type": "consumer", "generation": 3, "protocol": "range", "leader": "m", "members": [member]},
        version=0)]
    broker.groups._append("old", written)
    fresh = GroupCoordinator(OwnServices(broker))
    fresh.replay()
    loaded = fresh.groups["old"].members["m"]
    assert (loaded.session_timeout_ms, loaded.rebalance_timeout_ms) == (7_000, 7_000)


# -- share groups ------------------------------------------------------------------------------------------------

SESSION = 45_000                                            # group.share.session.timeout.ms


def share_beat(broker, group, member, epoch, topics=("t",)):
    answer = call(broker, "ShareGroupHeartbeat", 1, {
        "group_id": group, "member_id": member, "member_epoch": epoch, "rack_id": None,
        "subscribed_topic_names": list(topics) if topics is not None else None})
    assert answer.error_code == E.NONE, answer
    return answer


def share_records(broker) -> list[LoggedRecord]:
    return [r for _, _, r in logged(broker) if r.kind in records.SHARE_GROUP_RECORD_TYPES]


def test_share_groups_a_coordinator_loading_the_log_holds_what_the_serving_one_holds(served, clock):
    broker = served
    broker.groups.configs.set("sg", {"share.assignment.interval.ms": 0})
    # three members; a changes its subscription, d stops heartbeating and is fenced by its session, c leaves
    a = share_beat(broker, "sg", "a", 0)
    b = share_beat(broker, "sg", "b", 0)
    d = share_beat(broker, "sg", "d", 0)
    a = share_beat(broker, "sg", "a", a.member_epoch, topics=None)         # t initialized: assigned now
    assert a.assignment is not None and a.assignment.topic_partitions
    a = share_beat(broker, "sg", "a", a.member_epoch, topics=("t", "u"))
    clock.advance(SESSION - 10_000)
    b = share_beat(broker, "sg", "b", b.member_epoch, topics=None)
    a = share_beat(broker, "sg", "a", a.member_epoch, topics=None)
    c = share_beat(broker, "sg", "c", 0)
    assert share_beat(broker, "sg", "c", -1, topics=None).member_epoch == -1
    clock.advance(10_000)
    broker.tick()                                           # d's session ran out; a's and b's did not
    described = broker.groups.share.describe("sg")
    assert sorted(m.member_id for m in described.members) == ["a", "b"] and d.member_epoch and c.member_epoch
    b = share_beat(broker, "sg", "b", b.member_epoch, topics=None)
    # a share group whose offsets were altered, then deleted for one topic (Admin's share offsets calls)
    assert call(broker, "AlterShareGroupOffsets", 0, {"group_id": "alt", "topics": [
        {"topic_name": "t", "partitions": [{"partition_index": 0, "start_offset": 0},
                                           {"partition_index": 1, "start_offset": 0}]},
        {"topic_name": "u", "partitions": [{"partition_index": 1, "start_offset": 0}]}]}).error_code == E.NONE
    assert call(broker, "DeleteShareGroupOffsets", 0, {"group_id": "alt", "topics": [
        {"topic_name": "u"}]}).responses[0].error_code == E.NONE
    # a share group that is deleted: its records are tombstoned
    x = share_beat(broker, "doomed", "x", 0)
    share_beat(broker, "doomed", "x", x.member_epoch, topics=None)
    share_beat(broker, "doomed", "x", -1, topics=None)
    assert call(broker, "DeleteGroups", 2, {"groups_names": ["doomed"]}).results[0].error_code == E.NONE

    served_state = state(broker.groups)
    assert set(served_state["groups"]) == {"sg", "alt"}
    sg, alt = served_state["groups"]["sg"], served_state["groups"]["alt"]
    assert sg[1] == "Stable" and sorted(sg[-1]) == ["a", "b"] and sg[2] == sg[3]
    t, u = (broker.metadata.topics[n].topic_id for n in ("t", "u"))
    assert sg[7] == {t: frozenset({0, 1}), u: frozenset({0, 1})} and sg[8] == {} and sg[9] == frozenset()
    assert alt[1] == "Empty" and alt[7] == {t: frozenset({0, 1})} and alt[9] == frozenset()
    assert (alt[2], alt[3]) == (1, 1)                       # made by its records: ModernGroup's epoch 1, target 1
    kinds = {r.kind for r in share_records(broker)}
    assert kinds == records.SHARE_GROUP_RECORD_TYPES        # every share record type was written

    fresh = GroupCoordinator(OwnServices(broker))
    fresh.replay()
    assert state(fresh) == served_state
    # and, as Kafka's onLoaded, every loaded member's session runs again from the load
    for member in ("a", "b"):
        assert fresh.services.timers.scheduled(("share-session", "sg", member)) == clock.now_ms() + SESSION


def test_a_restarted_share_group_fences_members_that_do_not_come_back(served, clock):
    """After a load, the members are there (epochs and assignments as they were) until their sessions, started again
    at the load, run out; one that heartbeats keeps its epoch and assignment."""
    broker = served
    broker.groups.configs.set("sg", {"share.assignment.interval.ms": 0})
    a = share_beat(broker, "sg", "a", 0)
    b = share_beat(broker, "sg", "b", 0)
    a = share_beat(broker, "sg", "a", a.member_epoch, topics=None)
    b = share_beat(broker, "sg", "b", b.member_epoch, topics=None)
    epoch = a.member_epoch
    assert b.member_epoch == epoch and broker.groups.groups["sg"].group_epoch == epoch
    held = {m.member_id: dict(m.assigned) for m in broker.groups.groups["sg"].members.values()}
    assert sorted(p for ps in held.values() for t in ps.values() for p in t) == [0, 1]
    fresh = GroupCoordinator(OwnServices(broker))           # the serving coordinator's log, loaded
    fresh.replay()
    assert {m.member_id: (m.member_epoch, dict(m.assigned)) for m in fresh.groups["sg"].members.values()} == {
        m: (epoch, ps) for m, ps in held.items()}
    body = codec.decode("ShareGroupHeartbeatRequest", 1, codec.encode("ShareGroupHeartbeatRequest", 1, {
        "group_id": "sg", "member_id": "a", "member_epoch": epoch, "rack_id": None, "subscribed_topic_names": None}))
    clock.advance(SESSION - 1)
    again = fresh.share.heartbeat(body, "test", "/127.0.0.1")
    assert again.member_epoch == epoch and again.assignment is None    # nothing changed for a: no bump
    clock.advance(1)
    fresh.services.timers.tick(clock.now_ms())              # b never came back: fenced, the epoch moves on
    group = fresh.groups["sg"]
    assert list(group.members) == ["a"] and group.group_epoch == epoch + 1


def test_a_share_heartbeat_that_changes_nothing_writes_nothing(served, clock):
    broker = served
    broker.groups.configs.set("sg", {"share.assignment.interval.ms": 0})
    a = share_beat(broker, "sg", "a", 0)
    a = share_beat(broker, "sg", "a", a.member_epoch, topics=None)
    written = len(logged(broker))
    for _ in range(3):
        clock.advance(1000)
        a = share_beat(broker, "sg", "a", a.member_epoch, topics=None)
        a = share_beat(broker, "sg", "a", a.member_epoch, topics=("t",))     # the same subscription, in full
    assert len(logged(broker)) == written
    share_beat(broker, "sg", "a", a.member_epoch, topics=("t", "u"))         # a change: records
    assert len(logged(broker)) > written


def test_share_operations_change_state_only_by_replaying_what_they_appended(served, clock):
    """With ``replay_record`` replaced by a recorder, a leave, the share offsets admin calls and DeleteGroups change
    nothing themselves. (A heartbeat reads its answer from the group its records left, so it is checked by the
    failing append below: it raises before anything is replayed, and nothing has changed.)"""
    broker = served
    coordinator = broker.groups
    share_beat(broker, "sg", "a", 0)
    alter = {"group_id": "alt", "topics": [{"topic_name": "t", "partitions": [{"partition_index": 0,
                                                                               "start_offset": 0}]}]}
    assert call(broker, "AlterShareGroupOffsets", 0, alter).error_code == E.NONE
    before = state(coordinator)
    seen: list[LoggedRecord] = []
    coordinator.replay_record = lambda record, offset, producer_id=-1: seen.append(record)
    assert share_beat(broker, "sg", "a", -1, topics=None).member_epoch == -1
    assert call(broker, "AlterShareGroupOffsets", 0, {**alter, "group_id": "alt2"}).error_code == E.NONE
    assert call(broker, "DeleteShareGroupOffsets", 0, {"group_id": "alt", "topics": [
        {"topic_name": "t"}]}).responses[0].error_code == E.NONE
    assert call(broker, "DeleteGroups", 2, {"groups_names": ["alt"]}).results[0].error_code == E.NONE
    assert state(coordinator) == before                       # nothing changed but through replay_record
    kinds = [r.kind for r in seen]
    assert kinds[:4] == [records.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT, records.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER,
                         records.SHARE_GROUP_MEMBER_METADATA, records.SHARE_GROUP_METADATA]      # the leave
    assert kinds[-1] == records.SHARE_GROUP_METADATA and seen[-1].value is None                  # the deletion
    del coordinator.replay_record
    for record in seen:                                       # what was appended, applied: the operations' effect
        coordinator.replay_record(record, 0)
    assert set(coordinator.groups) == {"sg", "alt2"} and not coordinator.groups["sg"].members
    fresh = GroupCoordinator(OwnServices(broker))
    fresh.replay()
    assert state(fresh) == state(coordinator)


def test_a_deleted_topic_leaves_the_share_groups_records(served, clock):
    broker = served
    broker.groups.configs.set("sg", {"share.assignment.interval.ms": 0})
    a = share_beat(broker, "sg", "a", 0, topics=("t", "gone"))
    share_beat(broker, "sg", "a", a.member_epoch, topics=None)
    gone = broker.metadata.topics["gone"].topic_id
    assert gone in broker.groups.groups["sg"].initialized
    broker.delete_topic(broker.metadata.topics["gone"])
    assert gone not in broker.groups.groups["sg"].initialized
    fresh = GroupCoordinator(OwnServices(broker))
    fresh.replay()
    assert state(fresh) == state(broker.groups)


def test_a_failed_share_append_leaves_the_state_as_it_was(clock):
    broker = Cluster({}, clock=clock)
    broker.metadata.create_topic("t", 2, 1)
    services = OwnServices(broker)
    coordinator = GroupCoordinator(services)

    def heartbeat(member: str, epoch: int, topics=("t",), group="sg"):
        body = codec.decode("ShareGroupHeartbeatRequest", 1, codec.encode("ShareGroupHeartbeatRequest", 1, {
            "group_id": group, "member_id": member, "member_epoch": epoch, "rack_id": None,
            "subscribed_topic_names": list(topics) if topics else None}))
        return coordinator.share.heartbeat(body, "client", "/127.0.0.1")

    assert heartbeat("a", 0).member_epoch == 2
    heartbeat("e", 0, group="empty")
    heartbeat("e", -1, None, group="empty")
    before, log_end = state(coordinator), len(logged(broker))
    services.fail = True
    for operation in (lambda: heartbeat("b", 0), lambda: heartbeat("a", -1, None),
                      lambda: heartbeat("a", 2, ("t", "u")), lambda: heartbeat("n", 0, group="new"),
                      lambda: coordinator.delete_group("empty")):
        with pytest.raises(OSError):
            operation()
        assert state(coordinator) == before
    assert len(logged(broker)) == log_end and "new" not in coordinator.groups


def test_a_member_assignment_record_carries_kafkas_member_state_byte(served):
    """ConsumerGroupCurrentMemberAssignmentValue.State holds Kafka's MemberState value (STABLE 0,
    UNREVOKED_PARTITIONS 1, UNRELEASED_PARTITIONS 2): a Kafka broker reading the log reads the same state."""
    a = beat(served, "k", "a", 0, owned=[])
    holds = owned(served, a)
    a = beat(served, "k", "a", a.member_epoch, owned=holds)
    beat(served, "k", "b", 0, owned=[])                                     # b joins: a must give a partition up
    beat(served, "k", "a", a.member_epoch, owned=holds)
    states = [(r.key.member_id, r.value.state) for _, _, r in logged(served)
              if r.kind == records.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT and r.value is not None]
    assert ("a", 0) in states            # STABLE, alone in the group
    assert ("a", 1) in states            # UNREVOKED_PARTITIONS: it must give a partition up first
    assert ("b", 2) in states            # UNRELEASED_PARTITIONS: it waits for that partition
