"""Classic groups in the core, on a ManualClock: the JoinGroup/SyncGroup round, heartbeats and session timeouts,
static members, the errors Kafka answers, committed offsets, KIP-211 expiry (every row of its table) and replay
from ``__consumer_offsets``. No sockets, no sleeping: time moves when the test says."""

from __future__ import annotations

import struct

import pytest
from support.broker_calls import call, decode_response

from kafkamock import codec
from kafkamock.broker import Cluster, Respond
from kafkamock.broker.errors import ErrorCode as E
from kafkamock.storage import DiskStorage

MINUTE = 60_000


def subscription(*topics: str) -> bytes:
    return struct.pack(">h", 1) + codec.encode("ConsumerProtocolSubscription", 1, {"topics": list(topics)})


def join(broker, group="g", member="", *, protocols=None, protocol_type="consumer", session=10_000,
         rebalance=30_000, instance=None, version=9, topics=("t",)):
    protocols = protocols if protocols is not None else [("range", subscription(*topics))]
    return call(broker, "JoinGroup", version, {
        "group_id": group, "session_timeout_ms": session, "rebalance_timeout_ms": rebalance, "member_id": member,
        "group_instance_id": instance, "protocol_type": protocol_type,
        "protocols": [{"name": n, "metadata": m} for n, m in protocols]})


def answered(waiter, api="JoinGroup", version=9):
    """The decoded answer of a parked request, or None while it waits."""
    if not hasattr(waiter, "result"):
        return waiter
    if waiter.result is None:
        return None
    assert isinstance(waiter.result, Respond)
    return decode_response(api, version, waiter.result.body)


def new_member(broker, group="g", **kw):
    """KIP-394's two steps: MEMBER_ID_REQUIRED hands an id out, the join with it parks."""
    first = join(broker, group, **kw)
    assert first.error_code == E.MEMBER_ID_REQUIRED and first.member_id
    return first.member_id, join(broker, group, first.member_id, **kw)


def sync(broker, group, generation, member, assignments=(), version=5, protocol_type="consumer",
         protocol_name="range"):
    return call(broker, "SyncGroup", version, {
        "group_id": group, "generation_id": generation, "member_id": member, "protocol_type": protocol_type,
        "protocol_name": protocol_name, "assignments": [{"member_id": m, "assignment": a} for m, a in assignments]})


def heartbeat(broker, group, generation, member, instance=None):
    return call(broker, "Heartbeat", 4, {"group_id": group, "generation_id": generation, "member_id": member,
                                         "group_instance_id": instance}).error_code


def commit(broker, group, offsets, *, generation=-1, member="", version=9, retention=-1, metadata=""):
    body = {"group_id": group, "generation_id_or_member_epoch": generation, "member_id": member,
            "retention_time_ms": retention,
            "topics": [{"name": t, "partitions": [{"partition_index": p, "committed_offset": o,
                                                   "committed_metadata": metadata}]} for t, p, o in offsets]}
    answer = call(broker, "OffsetCommit", version, body)
    return [p.error_code for t in answer.topics for p in t.partitions]


def committed(broker, group, topic="t", partitions=(0, 1)):
    answer = call(broker, "OffsetFetch", 9, {"groups": [
        {"group_id": group, "topics": [{"name": topic, "partition_indexes": list(partitions)}]}]})
    return [p.committed_offset for t in answer.groups[0].topics for p in t.partitions]


def describe(broker, group):
    return call(broker, "DescribeGroups", 6, {"groups": [group]}).groups[0]


def listed(broker):
    return {g.group_id: g.group_state for g in call(broker, "ListGroups", 5, {}).groups}


def advance(broker, clock, ms):
    clock.advance(ms)
    broker.tick()


def stable_group(broker, clock, group="g", n=2, **kw):
    """n members through one round (the initial delay included): (generation, [member ids], leader)."""
    members, waiters = [], []
    for _ in range(n):
        member, waiter = new_member(broker, group, **kw)
        members.append(member)
        waiters.append(waiter)
    # every member after the first extends the initial delay once more (Kafka's InitialDelayedJoin)
    for _ in range(2 if n > 1 else 1):
        advance(broker, clock, broker.config["group.initial.rebalance.delay.ms"])
    answers = [answered(w) for w in waiters]
    assert all(a is not None and a.error_code == E.NONE for a in answers), answers
    leader = answers[0].leader
    generation = answers[0].generation_id
    assert {a.member_id for a in answers} == set(members)
    syncs = {}
    for member in members:
        if member != leader:
            syncs[member] = sync(broker, group, generation, member)
    syncs[leader] = sync(broker, group, generation, leader, [(m, m.encode()) for m in members])
    assert answered(syncs[leader], "SyncGroup", 5).assignment == leader.encode()
    for member in members:
        assert answered(syncs[member], "SyncGroup", 5).assignment == member.encode()
    return generation, members, leader


# -- the round ----------------------------------------------------------------------------------------------------

def test_members_join_after_the_initial_delay_and_the_leader_assigns(broker, clock):
    first, waiter = new_member(broker)
    assert answered(waiter) is None                                   # group.initial.rebalance.delay.ms runs
    assert describe(broker, "g").group_state == "PreparingRebalance"
    second, waiter2 = new_member(broker)
    advance(broker, clock, 2_999)
    assert answered(waiter) is None
    advance(broker, clock, 1)                                          # a new member extended the delay once more
    assert answered(waiter) is None
    advance(broker, clock, 3_000)
    a, b = answered(waiter), answered(waiter2)
    assert a.generation_id == b.generation_id == 1 and a.protocol_name == "range" and a.protocol_type == "consumer"
    assert a.leader == first and sorted(m.member_id for m in a.members) == sorted([first, second])
    assert b.members == []                                             # only the leader sees the members
    assert describe(broker, "g").group_state == "CompletingRebalance"
    follower = sync(broker, "g", 1, second)
    assert answered(follower, "SyncGroup", 5) is None                  # waits for the leader's assignment
    leader = sync(broker, "g", 1, first, [(first, b"A"), (second, b"B")])
    assert answered(leader, "SyncGroup", 5).assignment == b"A"
    assert answered(follower, "SyncGroup", 5).assignment == b"B"
    described = describe(broker, "g")
    assert described.group_state == "Stable" and described.protocol_data == "range"
    assert {m.member_id: m.member_assignment for m in described.members} == {first: b"A", second: b"B"}
    assert heartbeat(broker, "g", 1, first) == E.NONE


def test_session_timeout_removes_a_silent_member_and_the_rest_rebalance(broker, clock):
    generation, (a, b), leader = stable_group(broker, clock)
    for _ in range(2):
        advance(broker, clock, 4_000)
        assert heartbeat(broker, "g", generation, a) == E.NONE         # a keeps its session; b stays silent
    advance(broker, clock, 4_000)                                      # b's 10 s session ran out 2 s ago
    assert heartbeat(broker, "g", generation, a) == E.REBALANCE_IN_PROGRESS
    assert heartbeat(broker, "g", generation, b) == E.UNKNOWN_MEMBER_ID
    rejoin = join(broker, "g", a)
    answer = answered(rejoin)                                          # the only member left: the round ends
    assert answer.generation_id == generation + 1 and [m.member_id for m in answer.members] == [a]


def test_leave_group_rebalances_and_the_last_leave_empties_the_group(broker, clock):
    generation, (a, b), _ = stable_group(broker, clock)
    left = call(broker, "LeaveGroup", 5, {"group_id": "g", "members": [
        {"member_id": b, "group_instance_id": None, "reason": "bye"}, {"member_id": "nobody"}]})
    assert [m.error_code for m in left.members] == [E.NONE, E.UNKNOWN_MEMBER_ID]
    assert describe(broker, "g").group_state == "PreparingRebalance"
    answered(join(broker, "g", a))
    call(broker, "LeaveGroup", 5, {"group_id": "g", "members": [{"member_id": a}]})
    assert describe(broker, "g").group_state == "Empty"
    assert listed(broker) == {"g": "Empty"}


def test_errors_kafka_answers(broker, clock):
    generation, (a, b), leader = stable_group(broker, clock)
    assert heartbeat(broker, "g", generation + 5, a) == E.ILLEGAL_GENERATION
    assert heartbeat(broker, "g", generation, "ghost") == E.UNKNOWN_MEMBER_ID
    assert heartbeat(broker, "nope", 1, "ghost") == E.UNKNOWN_MEMBER_ID
    other = join(broker, "g", protocol_type="connect")
    assert other.error_code == E.INCONSISTENT_GROUP_PROTOCOL
    other = join(broker, "g", protocols=[("roundrobin", b"")])
    assert other.error_code == E.INCONSISTENT_GROUP_PROTOCOL
    assert join(broker, "g", session=1).error_code == E.INVALID_SESSION_TIMEOUT
    assert join(broker, "", protocols=[("range", b"")]).error_code == E.INVALID_GROUP_ID
    assert join(broker, "fresh", "made-up").error_code == E.UNKNOWN_MEMBER_ID
    assert sync(broker, "g", generation, a, protocol_name="roundrobin").error_code == E.INCONSISTENT_GROUP_PROTOCOL
    assert sync(broker, "g", generation + 1, a).error_code == E.ILLEGAL_GENERATION
    assert commit(broker, "g", [("t", 0, 5)], generation=generation + 1, member=a) == [E.ILLEGAL_GENERATION]
    assert commit(broker, "g", [("t", 0, 5)], generation=generation, member="ghost") == [E.UNKNOWN_MEMBER_ID]
    assert commit(broker, "g", [("t", 0, 5)]) == [E.UNKNOWN_MEMBER_ID]       # an admin commit into an active group
    assert commit(broker, "g", [("t", 0, 5), ("missing", 0, 1)], generation=generation, member=a) == \
        [E.UNKNOWN_TOPIC_OR_PARTITION, E.NONE]           # Kafka answers the unknown topics first
    assert commit(broker, "g", [("t", 1, 5)], generation=generation, member=a, metadata="x" * 4097) == \
        [E.OFFSET_METADATA_TOO_LARGE]
    assert commit(broker, "new", [("t", 0, 1)], generation=3, member="m") == [E.GROUP_ID_NOT_FOUND]
    assert commit(broker, "new", [("t", 0, 1)], generation=3, member="m", version=8) == [E.ILLEGAL_GENERATION]
    deleted = call(broker, "DeleteGroups", 2, {"groups_names": ["g", "nope"]}).results
    assert [r.error_code for r in deleted] == [E.NON_EMPTY_GROUP, E.GROUP_ID_NOT_FOUND]
    assert describe(broker, "nope").error_code == E.GROUP_ID_NOT_FOUND
    assert heartbeat(broker, "g", generation, a) == E.NONE                    # still serving


def test_static_member_rejoins_with_a_new_id_and_the_old_one_is_fenced(broker, clock):
    members = []
    waiters = [join(broker, "s", instance=f"i{k}", topics=("t",)) for k in range(2)]
    advance(broker, clock, 3_000)
    advance(broker, clock, 3_000)                                      # the second member extended the delay
    answers = [answered(w) for w in waiters]
    members = [a.member_id for a in answers]
    leader = answers[0].leader
    generation = answers[0].generation_id
    follower = next(m for m in members if m != leader)
    follower_instance = f"i{members.index(follower)}"
    sync(broker, "s", generation, follower)
    sync(broker, "s", generation, leader, [(m, b"x") for m in members])
    again = join(broker, "s", instance=follower_instance)             # a restart: no member id, same instance
    assert again.error_code == E.NONE and again.generation_id == generation   # no rebalance for a static follower
    assert again.member_id != follower
    assert heartbeat(broker, "s", generation, follower, follower_instance) == E.FENCED_INSTANCE_ID
    assert heartbeat(broker, "s", generation, again.member_id, follower_instance) == E.NONE
    left = call(broker, "LeaveGroup", 5, {"group_id": "s", "members": [
        {"member_id": follower, "group_instance_id": follower_instance}]})
    assert left.members[0].error_code == E.FENCED_INSTANCE_ID


def test_requests_to_another_node_are_not_coordinator(clock):
    broker = Cluster(clock=clock, brokers=3)
    broker.metadata.create_topic("t", 2, 1)
    coordinator = broker.groups.coordinator_id("g")
    other = next(n.node_id for n in broker.nodes if n.node_id != coordinator)
    answer = call(broker, "JoinGroup", 9, {"group_id": "g", "session_timeout_ms": 10_000, "member_id": "",
                                           "protocol_type": "consumer", "protocols": [{"name": "range",
                                                                                       "metadata": b""}]},
                  node_id=other)
    assert answer.error_code == E.NOT_COORDINATOR
    found = call(broker, "FindCoordinator", 4, {"key_type": 0, "coordinator_keys": ["g"]})
    assert found.coordinators[0].node_id == coordinator


# -- offsets ------------------------------------------------------------------------------------------------------

def test_standalone_commits_and_fetch_every_version(broker):
    assert commit(broker, "solo", [("t", 0, 7), ("t", 1, 9)], metadata="m") == [E.NONE, E.NONE]
    assert committed(broker, "solo") == [7, 9]
    assert committed(broker, "nobody") == [-1, -1]
    v1 = call(broker, "OffsetFetch", 1, {"group_id": "solo", "topics": [{"name": "t", "partition_indexes": [0]}]})
    assert v1.topics[0].partitions[0].committed_offset == 7 and v1.topics[0].partitions[0].metadata == "m"
    every = call(broker, "OffsetFetch", 7, {"group_id": "solo", "topics": None})
    assert sorted((p.partition_index, p.committed_offset) for p in every.topics[0].partitions) == [(0, 7), (1, 9)]
    topic_id = broker.metadata.topics["t"].topic_id
    v10 = call(broker, "OffsetFetch", 10, {"groups": [{"group_id": "solo", "topics": [
        {"topic_id": topic_id, "partition_indexes": [1]}]}]})
    assert v10.groups[0].topics[0].topic_id == topic_id and v10.groups[0].topics[0].partitions[0].committed_offset == 9
    assert describe(broker, "solo").group_state == "Empty" and describe(broker, "solo").protocol_type == ""
    deleted = call(broker, "OffsetDelete", 0, {"group_id": "solo", "topics": [
        {"name": "t", "partitions": [{"partition_index": 0}]}]})
    assert deleted.topics[0].partitions[0].error_code == E.NONE
    assert committed(broker, "solo") == [-1, 9]


def test_offset_delete_refuses_subscribed_topics(broker, clock):
    broker.metadata.create_topic("u", 1, 1)
    generation, (a, b), _ = stable_group(broker, clock)
    commit(broker, "g", [("t", 0, 1), ("u", 0, 2)], generation=generation, member=a)
    deleted = call(broker, "OffsetDelete", 0, {"group_id": "g", "topics": [
        {"name": "t", "partitions": [{"partition_index": 0}]}, {"name": "u", "partitions": [{"partition_index": 0}]}]})
    assert [(t.name, t.partitions[0].error_code) for t in deleted.topics] == \
        [("t", E.GROUP_SUBSCRIBED_TO_TOPIC), ("u", E.NONE)]


# -- KIP-211: every row of the seed's table -----------------------------------------------------------------------

@pytest.fixture
def expiring(clock):
    broker = Cluster({"offsets.retention.minutes": 1, "offsets.retention.check.interval.ms": 1_000}, clock=clock)
    broker.metadata.create_topic("t", 2, 1)
    broker.metadata.create_topic("gone", 1, 1)
    return broker


def test_stable_group_keeps_offsets_past_the_retention(expiring, clock):
    generation, (a, b), _ = stable_group(expiring, clock, session=30_000)
    commit(expiring, "g", [("t", 0, 5)], generation=generation, member=a)
    for _ in range(30):                                   # ten minutes, heartbeating
        advance(expiring, clock, 20_000)
        assert heartbeat(expiring, "g", generation, a) == E.NONE
        assert heartbeat(expiring, "g", generation, b) == E.NONE
    assert committed(expiring, "g") == [5, -1]


def test_empty_group_loses_offsets_retention_after_it_became_empty(expiring, clock):
    generation, (a, b), _ = stable_group(expiring, clock, session=30_000)
    commit(expiring, "g", [("t", 0, 5)], generation=generation, member=a)
    for _ in range(15):                                          # committed long ago, but the group was Stable
        advance(expiring, clock, 20_000)
        assert heartbeat(expiring, "g", generation, a) == E.NONE
        assert heartbeat(expiring, "g", generation, b) == E.NONE
    call(expiring, "LeaveGroup", 5, {"group_id": "g", "members": [{"member_id": a}, {"member_id": b}]})
    advance(expiring, clock, 100)
    assert describe(expiring, "g").group_state == "Empty" and committed(expiring, "g") == [5, -1]
    advance(expiring, clock, MINUTE - 1_000)
    assert committed(expiring, "g") == [5, -1]                  # not yet a minute since it became Empty
    advance(expiring, clock, 1_000)
    assert committed(expiring, "g") == [-1, -1]
    assert describe(expiring, "g").error_code == E.GROUP_ID_NOT_FOUND     # the expired Empty group is gone
    assert "g" not in listed(expiring)


def test_standalone_offsets_expire_by_commit_time(expiring, clock):
    commit(expiring, "solo", [("t", 0, 1)])
    advance(expiring, clock, 30_000)
    commit(expiring, "solo", [("t", 1, 2)])
    advance(expiring, clock, 30_000)
    assert committed(expiring, "solo") == [-1, 2]               # the first is a minute old, the second is not
    advance(expiring, clock, 30_000)
    assert committed(expiring, "solo") == [-1, -1]
    assert "solo" not in listed(expiring)


def test_unsubscribed_topics_of_a_stable_group_expire_by_commit_time(expiring, clock):
    generation, (a, b), _ = stable_group(expiring, clock, session=30_000)     # both subscribe to "t" only
    commit(expiring, "g", [("t", 0, 5), ("gone", 0, 8)], generation=generation, member=a)
    for _ in range(4):
        advance(expiring, clock, 20_000)
        heartbeat(expiring, "g", generation, a)
        heartbeat(expiring, "g", generation, b)
    assert committed(expiring, "g") == [5, -1]
    assert committed(expiring, "g", "gone", (0,)) == [-1]


def test_v2_to_v4_commits_with_a_retention_expire_per_offset(expiring, clock):
    assert commit(expiring, "old", [("t", 0, 3)], version=4, retention=10_000) == [E.NONE]
    assert commit(expiring, "old", [("t", 1, 4)], version=4, retention=-1) == [E.NONE]   # the broker's retention
    advance(expiring, clock, 10_000)
    assert committed(expiring, "old") == [-1, 4]
    advance(expiring, clock, MINUTE)
    assert committed(expiring, "old") == [-1, -1]


def test_v2_to_v4_retention_records_carry_the_expire_timestamp(expiring, clock):
    commit(expiring, "old", [("t", 0, 3)], version=2, retention=10_000)
    from kafkamock.broker.groups import records as group_records
    from kafkamock.records import decode_batches

    stored = [r for p in expiring.metadata.topics["__consumer_offsets"].partitions for b in p.log.batches()
              for batch in decode_batches(b.data) for r in batch.records]
    kind, key, value = group_records.decode(stored[-1].key, stored[-1].value)
    assert kind == group_records.OFFSET_COMMIT and struct.unpack(">h", stored[-1].value[:2])[0] == 1
    assert value.expire_timestamp == value.commit_timestamp + 10_000


# -- durability ---------------------------------------------------------------------------------------------------

def test_groups_and_offsets_survive_a_restart_and_expired_groups_stay_gone(tmp_path, clock):
    config = {"offsets.retention.minutes": 1, "offsets.retention.check.interval.ms": 1_000}
    broker = Cluster(config, clock=clock, storage=DiskStorage(tmp_path))
    broker.metadata.create_topic("t", 2, 1)
    generation, members, leader = stable_group(broker, clock, session=300_000)
    commit(broker, "g", [("t", 0, 11), ("t", 1, 12)], generation=generation, member=leader)
    commit(broker, "solo", [("t", 0, 1)])
    advance(broker, clock, 2 * MINUTE)                        # solo expires; g is Stable (its 5 min sessions run)
    for member in members:
        heartbeat(broker, "g", generation, member)
    assert "solo" not in listed(broker)
    broker.close()

    again = Cluster(config, clock=clock, storage=DiskStorage(tmp_path))
    described = describe(again, "g")
    assert described.group_state == "Stable" and sorted(m.member_id for m in described.members) == sorted(members)
    assert committed(again, "g") == [11, 12]
    assert "solo" not in listed(again) and committed(again, "solo") == [-1, -1]
    assert heartbeat(again, "g", generation, leader) == E.NONE


# -- what the differential suite found (tests/differential/test_groups_classic.py) --------------------------------

def _static_pair(broker, clock, version):
    """Static members a (the leader) and b, Stable: (generation, a, b)."""
    first = join(broker, "s", instance="a", version=version)
    advance(broker, clock, 3_000)
    a = answered(first).member_id
    sync(broker, "s", 1, a, [(a, b"A")])
    waiting = join(broker, "s", instance="b", version=version)
    assert heartbeat(broker, "s", 1, a, "a") == E.REBALANCE_IN_PROGRESS
    rejoin = join(broker, "s", a, instance="a", version=version)
    b = answered(waiting, version=version).member_id
    generation = answered(rejoin, version=version).generation_id
    sync(broker, "s", generation, b)
    sync(broker, "s", generation, a, [(a, b"A"), (b, b"B")])
    return generation, a, b


@pytest.mark.parametrize("version", [5, 8])
def test_a_static_leader_rejoining_below_v9_keeps_the_generation_and_syncs_as_a_follower(broker, clock, version):
    """Kafka's updateStaticMemberThenRebalanceOrCompleteJoin: no rebalance while the selected protocol stays;
    the answer names the old leader id (so the restarted member does not assign), and SyncGroup gives it its
    assignment back. The other member never sees a rebalance (the librdkafka report)."""
    generation, a, b = _static_pair(broker, clock, version)
    again = join(broker, "s", instance="a", version=version)
    assert again.error_code == E.NONE and again.generation_id == generation
    assert again.member_id != a and again.leader == a and again.members == []
    assert heartbeat(broker, "s", generation, b, "b") == E.NONE
    assert describe(broker, "s").group_state == "Stable"
    assert sync(broker, "s", generation, again.member_id).assignment == b"A"
    assert heartbeat(broker, "s", generation, a, "a") == E.FENCED_INSTANCE_ID


def test_a_static_leader_rejoining_at_v9_is_told_to_skip_the_assignment(broker, clock):
    generation, a, b = _static_pair(broker, clock, 9)
    again = join(broker, "s", instance="a", version=9)
    assert again.generation_id == generation and again.leader == again.member_id and again.skip_assignment
    assert sorted(m.member_id for m in again.members) == sorted([again.member_id, b])
    assert heartbeat(broker, "s", generation, b, "b") == E.NONE


def test_a_static_rejoin_that_changes_the_selected_protocol_rebalances(broker, clock):
    both = [("range", subscription("t")), ("roundrobin", subscription("t"))]
    first = join(broker, "s", instance="a", protocols=both)
    advance(broker, clock, 3_000)
    a = answered(first).member_id
    sync(broker, "s", 1, a, [(a, b"A")])
    same_names = join(broker, "s", instance="a", protocols=[("range", subscription("t", "u")),
                                                           ("roundrobin", subscription("t"))])
    assert same_names.generation_id == 1                             # other metadata, same choice: no round
    changed = answered(join(broker, "s", instance="a", protocols=[("roundrobin", subscription("t"))]))
    assert changed.generation_id == 2 and changed.protocol_name == "roundrobin"


def test_a_round_no_member_rejoins_waits_while_static_sessions_run_out(broker, clock):
    """Kafka's completeClassicGroupJoin: with only absent static members left, no generation starts; the
    round waits another rebalance timeout and the sessions (not extended) empty the group."""
    first = join(broker, "s", instance="a", session=6_000, rebalance=1_000)
    advance(broker, clock, 3_000)
    a = answered(first).member_id
    sync(broker, "s", 1, a, [(a, b"A")])
    d, waiting = new_member(broker, "s", session=6_000, rebalance=1_000)
    heartbeat(broker, "s", 1, a, "a")                                # t=0 for a's session
    answered(join(broker, "s", a, instance="a", session=6_000, rebalance=1_000))
    assert answered(waiting).generation_id == 2
    call(broker, "LeaveGroup", 5, {"group_id": "s", "members": [{"member_id": d}]})
    for _ in range(5):                                               # a never rejoins
        advance(broker, clock, 1_000)
        assert describe(broker, "s").group_state == "PreparingRebalance"
    advance(broker, clock, 1_000)
    assert describe(broker, "s").group_state == "Empty" and describe(broker, "s").members == []


def test_a_new_member_whose_join_waits_expires_on_the_new_member_timeout_not_its_session(broker, clock):
    generation, (a, b), _ = stable_group(broker, clock, session=6_000, rebalance=600_000)
    c, waiting = new_member(broker, session=6_000, rebalance=600_000)
    for _ in range(59):                                              # a and b stay; c's join waits for them
        advance(broker, clock, 5_000)
        heartbeat(broker, "g", generation, a)
        heartbeat(broker, "g", generation, b)
    assert answered(waiting) is None and c in {m.member_id for m in describe(broker, "g").members}
    advance(broker, clock, 5_000)                                    # five minutes: Kafka's new-member timeout
    assert answered(waiting).error_code == E.UNKNOWN_MEMBER_ID and answered(waiting).member_id == ""
    assert c not in {m.member_id for m in describe(broker, "g").members}


def test_a_parked_join_of_a_member_that_leaves_is_answered_without_its_id(broker, clock):
    generation, (a, b), _ = stable_group(broker, clock)
    c, waiting = new_member(broker)
    call(broker, "LeaveGroup", 5, {"group_id": "g", "members": [{"member_id": c}]})
    assert answered(waiting).error_code == E.UNKNOWN_MEMBER_ID and answered(waiting).member_id == ""


def share_heartbeat(broker, group, member, epoch):
    return call(broker, "ShareGroupHeartbeat", 1, {"group_id": group, "member_id": member, "member_epoch": epoch,
                                                   "rack_id": None, "subscribed_topic_names": ["t"]})


@pytest.mark.parametrize("left", [False, True], ids=["with-members", "empty"])
def test_a_join_into_a_share_group_is_an_inconsistent_protocol_and_leaves_the_group_as_it_was(broker, left):
    """Kafka's classicGroupJoin: a share group, empty or not, takes no classic member (INCONSISTENT_GROUP_PROTOCOL,
    no member id handed out); the share group stays, members and all."""
    assert share_heartbeat(broker, "sg", "m1", 0).error_code == E.NONE
    if left:
        assert share_heartbeat(broker, "sg", "m1", -1).error_code == E.NONE
    for version in (4, 9):
        answer = join(broker, "sg", version=version)
        assert (answer.error_code, answer.member_id, answer.generation_id) == (E.INCONSISTENT_GROUP_PROTOCOL, "", -1)
    assert listed(broker) == {"sg": "Empty" if left else "Stable"}
    assert call(broker, "ListGroups", 5, {"types_filter": ["share"]}).groups[0].group_id == "sg"
    assert [m.member_id for m in call(broker, "ShareGroupDescribe", 1, {"group_ids": ["sg"]}).groups[0].members] \
        == ([] if left else ["m1"])


def test_a_failed_first_join_leaves_an_empty_group(broker):
    assert join(broker, "lone", protocols=[]).error_code == E.INCONSISTENT_GROUP_PROTOCOL
    assert describe(broker, "lone").group_state == "Empty"
    assert listed(broker) == {"lone": "Empty"}
    assert join(broker, "other").error_code == E.MEMBER_ID_REQUIRED        # a pending id: the group stays too
    assert listed(broker) == {"lone": "Empty", "other": "Empty"}


def test_describe_shows_assignments_outside_stable_and_a_rebalance_clears_them(broker, clock):
    generation, (a, b), _ = stable_group(broker, clock)
    _, waiting = new_member(broker)
    described = describe(broker, "g")
    assert described.group_state == "PreparingRebalance" and described.protocol_data == ""
    assert {m.member_id: (m.member_assignment, m.member_metadata) for m in described.members if m.member_id in
            (a, b)} == {a: (a.encode(), b""), b: (b.encode(), b"")}
    answered(join(broker, "g", a))
    answered(join(broker, "g", b))
    assert describe(broker, "g").group_state == "CompletingRebalance"
    answered(join(broker, "g", b, topics=("t", "u")))                  # b changes: the generation is void
    assert {m.member_assignment for m in describe(broker, "g").members} == {b""}


def test_leave_of_an_unknown_group_answers_each_member(broker):
    left = call(broker, "LeaveGroup", 5, {"group_id": "nope", "members": [{"member_id": "m"}, {"member_id": "n"}]})
    assert left.error_code == E.NONE and [(m.member_id, m.error_code) for m in left.members] == \
        [("m", E.UNKNOWN_MEMBER_ID), ("n", E.UNKNOWN_MEMBER_ID)]
    assert call(broker, "LeaveGroup", 2, {"group_id": "nope", "member_id": "m"}).error_code == E.UNKNOWN_MEMBER_ID
    assert call(broker, "LeaveGroup", 5, {"group_id": "", "members": []}).error_code == E.INVALID_GROUP_ID


def test_offset_delete_of_a_partition_the_topic_lacks(broker):
    commit(broker, "solo", [("t", 0, 7)])
    deleted = call(broker, "OffsetDelete", 0, {"group_id": "solo", "topics": [
        {"name": "t", "partitions": [{"partition_index": 0}, {"partition_index": 9}]}]})
    assert sorted((p.partition_index, p.error_code) for p in deleted.topics[0].partitions) == \
        [(0, E.NONE), (9, E.UNKNOWN_TOPIC_OR_PARTITION)]
