"""KIP-848 consumer groups in the core, on a ManualClock: epochs, the server-side assignors, reconciliation that
revokes before it assigns, static members, sessions and revocation timeouts, regexes, describe, offsets, KIP-211
and replay. No sockets, no sleeping."""

from __future__ import annotations

import pytest
from support.broker_calls import call

from kafkamock.broker import Cluster
from kafkamock.broker.errors import ErrorCode as E
from kafkamock.storage import DiskStorage

MINUTE = 60_000


def beat(broker, member, epoch, *, group="g", topics=("t",), owned=None, regex=None, assignor=None,
         instance=None, version=1, rebalance=60_000):
    """One ConsumerGroupHeartbeat; ``owned`` None leaves TopicPartitions out (a light heartbeat)."""
    body = {"group_id": group, "member_id": member, "member_epoch": epoch, "instance_id": instance,
            "rebalance_timeout_ms": rebalance if epoch == 0 else -1,
            "subscribed_topic_names": list(topics) if epoch == 0 and regex is None else None,
            "server_assignor": assignor,
            "topic_partitions": None if owned is None else owned}
    if version >= 1:
        body["subscribed_topic_regex"] = regex
    return call(broker, "ConsumerGroupHeartbeat", version, body)


def owned_of(broker, answer):
    """The assignment of a heartbeat answer as {topic name: [partitions]}."""
    by_id = broker.metadata.topics_by_id
    return {by_id[t.topic_id].name: sorted(t.partitions) for t in answer.assignment.topic_partitions}


def as_owned(broker, partitions: dict[str, list[int]]):
    return [{"topic_id": broker.metadata.topics[t].topic_id, "partitions": ps} for t, ps in partitions.items()]


def describe(broker, group="g"):
    return call(broker, "ConsumerGroupDescribe", 1, {"group_ids": [group],
                                                     "include_authorized_operations": False}).groups[0]


@pytest.fixture
def kip848(clock):
    broker = Cluster({"group.consumer.session.timeout.ms": 45_000, "group.consumer.assignment.interval.ms": 0},
                    clock=clock)
    broker.metadata.create_topic("t", 4, 1)
    return broker


def test_join_assigns_everything_to_the_first_member(kip848):
    """A new group starts at epoch 1 with a target of epoch 1 (Kafka 4.3): the first member joins at 2."""
    answer = beat(kip848, "a", 0, owned=[])
    assert answer.error_code == E.NONE and answer.member_epoch == 2
    assert owned_of(kip848, answer) == {"t": [0, 1, 2, 3]}
    assert answer.heartbeat_interval_ms == kip848.config["group.consumer.heartbeat.interval.ms"]
    described = describe(kip848)
    assert (described.group_state, described.group_epoch, described.assignment_epoch) == ("Stable", 2, 2)
    assert described.assignor_name == "uniform" and described.members[0].member_type == 1
    assert described.members[0].subscribed_topic_regex == ""           # Kafka's default, not null
    light = beat(kip848, "a", 2)
    assert light.error_code == E.NONE and light.assignment is None       # nothing changed: no assignment sent


def test_a_second_member_gets_partitions_only_after_the_first_revokes_them(kip848):
    beat(kip848, "a", 0, owned=[])
    b = beat(kip848, "b", 0, owned=[])
    assert b.member_epoch == 3 and owned_of(kip848, b) == {}              # its target is still owned by a
    assert describe(kip848).group_state == "Reconciling"
    a = beat(kip848, "a", 2, owned=as_owned(kip848, {"t": [0, 1, 2, 3]}))
    assert a.member_epoch == 2                                            # a keeps its epoch while it revokes
    kept = owned_of(kip848, a)["t"]
    assert len(kept) == 2
    assert beat(kip848, "b", 3, owned=[]).assignment is None             # still nothing free
    a = beat(kip848, "a", 2, owned=as_owned(kip848, {"t": kept}))         # a no longer lists the revoked ones
    assert a.member_epoch == 3
    b = beat(kip848, "b", 3, owned=[])
    assert sorted(owned_of(kip848, b)["t"] + kept) == [0, 1, 2, 3]
    assert describe(kip848).group_state == "Stable"


def test_range_assignor_and_unknown_assignor(kip848):
    assert beat(kip848, "a", 0, owned=[], assignor="sticky").error_code == E.UNSUPPORTED_ASSIGNOR
    beat(kip848, "a", 0, owned=[], assignor="range")
    beat(kip848, "b", 0, owned=[], assignor="range")
    revoking = beat(kip848, "a", 2, owned=as_owned(kip848, {"t": [0, 1, 2, 3]}))
    assert owned_of(kip848, revoking) == {"t": [0, 1]}                    # range: a contiguous half each
    a = beat(kip848, "a", 2, owned=as_owned(kip848, {"t": [0, 1]}))
    assert a.member_epoch == 3
    b = beat(kip848, "b", 3, owned=[])
    assert owned_of(kip848, b) == {"t": [2, 3]} and describe(kip848).assignor_name == "range"


def test_epoch_errors_and_invalid_requests(kip848):
    beat(kip848, "a", 0, owned=[])
    ahead = beat(kip848, "a", 5)
    assert ahead.error_code == E.FENCED_MEMBER_EPOCH and ahead.member_id is None and ahead.member_epoch == 0
    assert ahead.error_message.endswith("The member must abandon all its partitions and rejoin.")
    assert beat(kip848, "ghost", 1).error_code == E.UNKNOWN_MEMBER_ID
    assert beat(kip848, "", 0, owned=[]).error_message == "MemberId can't be empty."   # v1 needs a member id
    v0 = beat(kip848, "", 0, owned=[], version=0)
    assert v0.error_code == E.NONE and v0.member_id                              # v0: the coordinator names it
    assert beat(kip848, "", -1, version=0).error_message == "MemberId can't be empty."
    assert beat(kip848, "c", 0).error_message == "TopicPartitions must be empty when (re-)joining."
    bad = beat(kip848, "c", 0, owned=[], regex="t-([")
    assert (bad.error_code, bad.error_message) == (E.INVALID_REGULAR_EXPRESSION, "SubscribedTopicRegex `t-([` "
                                                   "is not a valid regular expression: missing closing ].")
    assert beat(kip848, "c", 0, owned=[], regex="(?=t)").error_code == E.INVALID_REGULAR_EXPRESSION   # not RE2
    assert beat(kip848, "c", -3).error_message == "MemberEpoch is invalid."
    assert beat(kip848, "a", 4).error_code == E.FENCED_MEMBER_EPOCH
    assert beat(kip848, "a", 2).error_code == E.NONE                             # still serving


def test_leave_bumps_the_epoch_and_empties_the_group(kip848):
    beat(kip848, "a", 0, owned=[])
    left = beat(kip848, "a", -1)
    assert left.error_code == E.NONE and left.member_epoch == -1
    described = describe(kip848)
    assert described.group_state == "Empty" and described.group_epoch == 3 and described.members == []
    listed = call(kip848, "ListGroups", 5, {"types_filter": ["consumer"]}).groups
    assert [(g.group_id, g.group_state, g.group_type) for g in listed] == [("g", "Empty", "consumer")]
    assert call(kip848, "ListGroups", 5, {"types_filter": ["classic"]}).groups == []
    assert call(kip848, "DeleteGroups", 2, {"groups_names": ["g"]}).results[0].error_code == E.NONE
    assert describe(kip848).error_code == E.GROUP_ID_NOT_FOUND


def test_session_timeout_fences_a_silent_member(kip848, clock):
    beat(kip848, "a", 0, owned=[])
    beat(kip848, "b", 0, owned=[])
    owned = {"t": [0, 1, 2, 3]}
    epoch = 2
    for _ in range(3):
        clock.advance(20_000)
        kip848.tick()
        answer = beat(kip848, "a", epoch, owned=as_owned(kip848, owned))
        epoch = answer.member_epoch
        if answer.assignment is not None:
            owned = owned_of(kip848, answer)
    assert [m.member_id for m in describe(kip848).members] == ["a"]      # b said nothing for 60 s


def test_a_member_that_never_revokes_is_fenced_after_its_rebalance_timeout(kip848, clock):
    beat(kip848, "a", 0, owned=[], rebalance=10_000)
    beat(kip848, "b", 0, owned=[])
    beat(kip848, "a", 2, owned=as_owned(kip848, {"t": [0, 1, 2, 3]}))     # asked to revoke two
    clock.advance(5_000)
    kip848.tick()
    beat(kip848, "a", 2, owned=as_owned(kip848, {"t": [0, 1, 2, 3]}))     # still holding them: no new timer
    beat(kip848, "b", 3, owned=[])
    clock.advance(5_000)
    kip848.tick()
    assert [m.member_id for m in describe(kip848).members] == ["b"]
    assert beat(kip848, "a", 2).error_code == E.UNKNOWN_MEMBER_ID
    b = beat(kip848, "b", 3, owned=[])
    assert b.member_epoch == 4 and owned_of(kip848, b) == {"t": [0, 1, 2, 3]}


def test_static_member_leaves_for_now_and_a_new_instance_takes_over(kip848):
    first = beat(kip848, "a1", 0, owned=[], instance="i")
    assert beat(kip848, "other", 0, owned=[], instance="i").error_code == E.UNRELEASED_INSTANCE_ID
    left = beat(kip848, "a1", -2, instance="i")
    assert left.member_epoch == -2
    again = beat(kip848, "a2", 0, owned=[], instance="i")
    assert again.error_code == E.NONE and again.member_epoch == first.member_epoch   # no rebalance
    assert owned_of(kip848, again) == {"t": [0, 1, 2, 3]}
    assert describe(kip848).group_epoch == 2
    fenced = beat(kip848, "a1", 2, instance="i")
    assert (fenced.error_code, fenced.error_message) == (E.FENCED_INSTANCE_ID, "Static member a1 with instance id i "
                                                         "was fenced by member a2.")
    assert beat(kip848, "a2", 0, owned=[], instance="i").error_code == E.UNRELEASED_INSTANCE_ID


def test_regex_subscriptions_and_new_partitions_bump_the_epoch(kip848, clock):
    """A new regex is resolved after the heartbeat that brought it (Kafka resolves in the background): the
    join answers at the old epoch with nothing; the resolution bumps the epoch for the next heartbeat. New
    matching topics are seen at the next refresh, no sooner than ten seconds after the last."""
    kip848.metadata.create_topic("orders-eu", 1, 1)
    a = beat(kip848, "a", 0, owned=[], regex="orders-.*")
    assert a.member_epoch == 1 and owned_of(kip848, a) == {}
    kip848.tick()                                                          # the resolution runs
    a = beat(kip848, "a", 1, owned=[])
    assert a.member_epoch == 2 and owned_of(kip848, a) == {"orders-eu": [0]}
    kip848.metadata.create_topic("orders-us", 1, 1)
    kip848.metadata.create_topic("xorders-us", 1, 1)                       # the whole name must match
    assert beat(kip848, "a", 2, owned=as_owned(kip848, {"orders-eu": [0]})).assignment is None  # within 10 s
    clock.advance(10_001)
    beat(kip848, "a", 2, owned=as_owned(kip848, {"orders-eu": [0]}))
    kip848.tick()
    a = beat(kip848, "a", 2, owned=as_owned(kip848, {"orders-eu": [0]}))
    assert a.member_epoch == 3 and owned_of(kip848, a) == {"orders-eu": [0], "orders-us": [0]}
    kip848.metadata.add_partitions(kip848.metadata.topics["orders-us"], 2)
    a = beat(kip848, "a", 3)
    assert a.member_epoch == 4 and owned_of(kip848, a)["orders-us"] == [0, 1]


def test_the_target_waits_for_the_assignment_interval(clock):
    """group.consumer.assignment.interval.ms (default 1 s): a second member joining within it stays at the
    previous target (Assigning) until a heartbeat after the interval."""
    broker = Cluster({"group.consumer.session.timeout.ms": 45_000}, clock=clock)
    broker.metadata.create_topic("t", 4, 1)
    beat(broker, "a", 0, owned=[])
    b = beat(broker, "b", 0, owned=[])
    assert (b.member_epoch, owned_of(broker, b)) == (2, {})
    described = describe(broker)
    assert (described.group_state, described.group_epoch, described.assignment_epoch) == ("Assigning", 3, 2)
    clock.advance(999)
    assert beat(broker, "b", 2).member_epoch == 2
    clock.advance(1)
    assert beat(broker, "b", 2).member_epoch == 3 and describe(broker).assignment_epoch == 3


def test_group_max_size_and_protocol_exclusivity(clock):
    broker = Cluster({"group.consumer.max.size": 1}, clock=clock)
    broker.metadata.create_topic("t", 1, 1)
    beat(broker, "a", 0, owned=[])
    assert beat(broker, "b", 0, owned=[]).error_code == E.GROUP_MAX_SIZE_REACHED
    join = call(broker, "JoinGroup", 9, {"group_id": "g", "session_timeout_ms": 10_000, "member_id": "",
                                         "protocol_type": "connect", "protocols": [{"name": "x", "metadata": b""}]})
    assert join.error_code == E.INCONSISTENT_GROUP_PROTOCOL
    assert call(broker, "DescribeGroups", 6, {"groups": ["g"]}).groups[0].error_code == E.GROUP_ID_NOT_FOUND


def commit(broker, epoch, member, partition=0, version=9, group="g", offset=5):
    answer = call(broker, "OffsetCommit", version, {
        "group_id": group, "generation_id_or_member_epoch": epoch, "member_id": member,
        "topics": [{"name": "t", "partitions": [{"partition_index": partition, "committed_offset": offset}]}]})
    return answer.topics[0].partitions[0].error_code


def test_offset_commit_and_fetch_check_the_member_epoch(kip848):
    beat(kip848, "a", 0, owned=[])
    assert commit(kip848, 2, "a") == E.NONE
    assert commit(kip848, 1, "a") == E.STALE_MEMBER_EPOCH                 # KIP-1251: assigned at epoch 2
    assert commit(kip848, 7, "a") == E.STALE_MEMBER_EPOCH                 # newer than the member's
    assert commit(kip848, 2, "ghost") == E.UNKNOWN_MEMBER_ID
    assert commit(kip848, -1, "") == E.UNKNOWN_MEMBER_ID                  # an admin commit while members exist
    assert commit(kip848, 2, "a", version=8) == E.UNSUPPORTED_VERSION
    fetched = call(kip848, "OffsetFetch", 9, {"groups": [{"group_id": "g", "member_id": "a", "member_epoch": 1,
                                                          "topics": None}]})
    assert fetched.groups[0].error_code == E.STALE_MEMBER_EPOCH
    fetched = call(kip848, "OffsetFetch", 9, {"groups": [{"group_id": "g", "member_id": "a", "member_epoch": 2,
                                                          "topics": None}]})
    assert fetched.groups[0].topics[0].partitions[0].committed_offset == 5
    deleted = call(kip848, "OffsetDelete", 0, {"group_id": "g", "topics": [
        {"name": "t", "partitions": [{"partition_index": 0}]}]})
    assert deleted.topics[0].partitions[0].error_code == E.GROUP_SUBSCRIBED_TO_TOPIC
    assert call(kip848, "DeleteGroups", 2, {"groups_names": ["g"]}).results[0].error_code == E.NON_EMPTY_GROUP


def test_kip211_consumer_group_offsets_of_unsubscribed_topics_expire_by_commit_time(clock):
    broker = Cluster({"offsets.retention.minutes": 1, "offsets.retention.check.interval.ms": 1_000,
                     "group.consumer.session.timeout.ms": 45_000}, clock=clock)
    broker.metadata.create_topic("t", 1, 1)
    broker.metadata.create_topic("old", 1, 1)
    call(broker, "OffsetCommit", 9, {"group_id": "g", "generation_id_or_member_epoch": -1, "member_id": "",
                                     "topics": [{"name": "old", "partitions": [{"partition_index": 0,
                                                                                "committed_offset": 3}]}]})
    beat(broker, "a", 0, owned=[])
    assert commit(broker, 2, "a") == E.NONE
    for _ in range(6):                                                   # three minutes, heartbeating
        clock.advance(30_000)
        broker.tick()
        assert beat(broker, "a", 2).error_code == E.NONE
    fetched = call(broker, "OffsetFetch", 9, {"groups": [{"group_id": "g", "topics": None}]})
    assert {(t.name, p.committed_offset) for t in fetched.groups[0].topics for p in t.partitions} == {("t", 5)}


def test_groups_replay_after_a_restart(tmp_path, clock):
    broker = Cluster(clock=clock, storage=DiskStorage(tmp_path))
    broker.metadata.create_topic("t", 4, 1)
    broker.metadata.create_topic("orders-eu", 1, 1)
    beat(broker, "a", 0, owned=[], regex="orders-.*|t")
    broker.tick()                                                         # the regex is resolved
    beat(broker, "b", 0, owned=[])
    commit(broker, 3, "a")
    before = describe(broker)
    broker.close()
    again = Cluster(clock=clock, storage=DiskStorage(tmp_path))
    after = describe(again)
    assert (after.group_state, after.group_epoch, after.assignment_epoch) == \
        (before.group_state, before.group_epoch, before.assignment_epoch)
    assert {m.member_id: (m.member_epoch, m.assignment, m.target_assignment, m.subscribed_topic_regex)
            for m in after.members} == \
        {m.member_id: (m.member_epoch, m.assignment, m.target_assignment, m.subscribed_topic_regex)
         for m in before.members}
    assert again.groups.groups["g"].regexes["orders-.*|t"].topics == frozenset({"orders-eu", "t"})
    clock.advance(46_000)                                                 # sessions restarted on load
    again.tick()
    assert describe(again).members == []


def test_the_consumer_protocol_can_be_turned_off(clock):
    broker = Cluster({"group.coordinator.rebalance.protocols": "classic"}, clock=clock)
    keys = {k.api_key for k in call(broker, "ApiVersions", 3, {"client_software_name": "t",
                                                                  "client_software_version": "1"}).api_keys}
    assert 68 not in keys and 69 not in keys and 11 in keys


def test_a_classic_member_of_a_consumer_group_rejoins_only_when_the_target_passes_it(clock):
    """Kafka's classicGroupHeartbeatToConsumerGroup: REBALANCE_IN_PROGRESS when the target epoch (not the group
    epoch) is past the member's, when it must revoke, or when what it waits for was released."""
    import struct

    from kafkamock import codec

    broker = Cluster({"group.consumer.session.timeout.ms": 45_000}, clock=clock)    # a 1 s assignment interval
    broker.metadata.create_topic("t", 4, 1)
    beat(broker, "a", 0, owned=[])
    metadata = struct.pack(">h", 1) + codec.encode("ConsumerProtocolSubscription", 1, {"topics": ["t"]})

    def join(member=""):
        return call(broker, "JoinGroup", 9, {"group_id": "g", "session_timeout_ms": 10_000,
                                             "rebalance_timeout_ms": 30_000, "member_id": member,
                                             "protocol_type": "consumer",
                                             "protocols": [{"name": "range", "metadata": metadata}]})
    member = join().member_id
    joined = join(member)
    assert joined.generation_id == 2 and joined.leader == "" and joined.members == []
    assert describe(broker).group_epoch == 3                   # ahead of the target (the interval runs)

    def heartbeat(generation):
        return call(broker, "Heartbeat", 4, {"group_id": "g", "generation_id": generation, "member_id": member,
                                             "group_instance_id": None}).error_code
    assert heartbeat(2) == E.NONE
    clock.advance(1_000)
    beat(broker, "a", 2, owned=as_owned(broker, {"t": [0, 1, 2, 3]}))          # the target moves to epoch 3
    assert heartbeat(2) == E.REBALANCE_IN_PROGRESS
