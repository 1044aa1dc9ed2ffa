"""Share-group membership in the core (ShareGroupHeartbeat v1 / ShareGroupDescribe v1 bodies, through the codec), on a
ManualClock, as Kafka 4.3.1 runs it (checked by tests/differential/test_share_groups.py): a new group at epoch 1, the
first heartbeat at epoch 2 with nothing assigned until the group's share state is initialized, the assignment at
most once per ``share.assignment.interval.ms``, the previous epoch accepted, Kafka's fencing words, leaving and
session timeouts bumping the group epoch, the size limit, ListGroups' view, and share sessions."""

from __future__ import annotations

import uuid

import pytest

from kafkamock import codec
from kafkamock.broker import Cluster
from kafkamock.broker.errors import ErrorCode as E
from kafkamock.broker.errors import KafkaError
from kafkamock.broker.share.sessions import ShareSessions


@pytest.fixture
def broker(clock):
    b = Cluster({"group.share.max.size": 3}, clock=clock)
    b.metadata.create_topic("t", 2, 1)
    return b


def beat(broker, member, epoch, topics=("t",), group="sg"):
    body = {"group_id": group, "member_id": member, "member_epoch": epoch, "rack_id": None,
            "subscribed_topic_names": list(topics) if topics is not None else None}
    decoded = codec.decode("ShareGroupHeartbeatRequest", 1, codec.encode("ShareGroupHeartbeatRequest", 1, body))
    answer = broker.groups.share.heartbeat(decoded, "client", "/127.0.0.1")
    return codec.decode("ShareGroupHeartbeatResponse", 1, codec.encode("ShareGroupHeartbeatResponse", 1, answer))


def owned(broker, answer) -> list[int] | None:
    if answer.assignment is None:
        return None
    topic_id = broker.metadata.topics["t"].topic_id
    return sorted(p for tp in answer.assignment.topic_partitions if tp.topic_id == topic_id for p in tp.partitions)


def error(broker, *args, **kwargs) -> tuple[E, str | None]:
    try:
        beat(broker, *args, **kwargs)
    except KafkaError as exc:
        return exc.code, exc.message
    return E.NONE, None


def test_partitions_are_assigned_once_initialized_and_the_interval_allows(broker, clock):
    a = beat(broker, "a", 0)
    assert (a.member_epoch, owned(broker, a)) == (2, [])        # group epoch 1 -> 2; nothing initialized yet
    again = beat(broker, "a", 2, topics=None)                   # initialized now: epoch 3, but the interval
    assert (again.member_epoch, again.assignment) == (2, None)  # (1000 ms) has not passed since the last target
    assert broker.groups.share.describe("sg")["group_epoch"] == 3
    clock.advance(1000)
    assigned = beat(broker, "a", 2, topics=None)
    assert (assigned.member_epoch, owned(broker, assigned)) == (3, [0, 1])
    assert beat(broker, "a", 3, topics=None).assignment is None   # nothing changed: no assignment sent
    assert beat(broker, "a", 2, topics=None).member_epoch == 3    # the previous epoch is still accepted


def test_members_share_partitions_as_the_simple_assignor_does(broker, clock):
    broker.groups.configs.set("sg", {"share.assignment.interval.ms": 0})
    beat(broker, "a", 0)
    a = beat(broker, "a", 2, topics=None)
    assert (a.member_epoch, owned(broker, a)) == (3, [0, 1])
    b = beat(broker, "b", 0)
    assert b.member_epoch == 4 and len(owned(broker, b)) == 1
    a = beat(broker, "a", 3, topics=None)                       # a learns of b at its next heartbeat
    assert a.member_epoch == 4 and sorted(owned(broker, a) + owned(broker, b)) == [0, 1]
    beat(broker, "c", 0)               # three members, two partitions: each partition to two, 4 assignments
    beat(broker, "a", 4, topics=None)
    beat(broker, "b", 4, topics=None)
    described = broker.groups.share.describe("sg")
    held = [[p for tp in m["assignment"]["topic_partitions"] for p in tp["partitions"]] for m in described["members"]]
    assert sorted(len(h) for h in held) == [1, 1, 2] and sorted(p for h in held for p in h) == [0, 0, 1, 1]
    assert (described["group_state"], described["group_epoch"], described["assignor_name"]) == ("Stable", 5, "simple")
    listed = broker.groups.list_groups(set(), {"share"})
    assert [(g.group_id, g.state_name) for g in listed] == [("sg", "Stable")]


def test_bad_heartbeats_get_kafkas_codes_and_words(broker):
    beat(broker, "a", 0)
    assert error(broker, "a", 7, topics=None) == (
        E.FENCED_MEMBER_EPOCH, "The share group member has a greater member epoch (7) than the one known by the group "
                               "coordinator (2). The member must abandon all its partitions and rejoin.")
    assert error(broker, "ghost", 1, topics=None) == (E.UNKNOWN_MEMBER_ID, "Member ghost is not a member of group sg.")
    assert error(broker, "", 0) == (E.INVALID_REQUEST, "MemberId can't be empty.")
    assert error(broker, "b", 0, topics=()) == (E.INVALID_REQUEST, "SubscribedTopicNames must be set in first request.")
    assert error(broker, "b", -2) == (E.INVALID_REQUEST, "MemberEpoch is invalid.")
    assert error(broker, "x", 0, group="") == (E.INVALID_REQUEST, "GroupId can't be empty.")
    assert error(broker, "x", 1, group="nope") == (E.GROUP_ID_NOT_FOUND, "Share group nope not found.")
    assert error(broker, "x", -1, group="nope") == (E.GROUP_ID_NOT_FOUND, "Group nope not found.")
    beat(broker, "b", 0)
    beat(broker, "c", 0)
    assert error(broker, "d", 0) == (E.GROUP_MAX_SIZE_REACHED,
                                     "The share group has reached its maximum capacity of 3 members.")
    broker.groups.validate_commit("classic", -1, "", None, 8)            # a standalone (classic) group
    assert error(broker, "z", 0, group="classic") == (E.GROUP_ID_NOT_FOUND, "Group classic is not a share group.")


def test_leave_and_session_timeout_bump_the_group_epoch(broker, clock):
    beat(broker, "a", 0)
    beat(broker, "b", 0)
    left = beat(broker, "b", -1, topics=None)
    assert (left.member_epoch, left.heartbeat_interval_ms) == (-1, 0)
    described = broker.groups.share.describe("sg")
    assert (described["group_epoch"], [m["member_id"] for m in described["members"]]) == (4, ["a"])
    assert error(broker, "b", -1, topics=None)[0] == E.UNKNOWN_MEMBER_ID
    clock.advance(broker.config["group.share.session.timeout.ms"])
    broker.tick()                                                          # a did not heartbeat since
    described = broker.groups.share.describe("sg")
    assert (described["group_state"], described["group_epoch"]) == ("Empty", 5)


def test_share_sessions_open_advance_release_and_follow_their_connection():
    t = uuid.UUID(int=7)
    sessions = ShareSessions(lambda: 2)
    opened = sessions.open("g", "a", [(t, 0)], conn_id=1)
    assert opened.epoch == 1 and list(opened.partitions) == [(t, 0)]
    with pytest.raises(KafkaError) as wrong:
        sessions.require("g", "a", 5)
    assert wrong.value.code == E.INVALID_SHARE_SESSION_EPOCH
    session = sessions.require("g", "a", 1)
    sessions.update(session, [(t, 1)], [(t, 0)])
    assert session.epoch == 2 and session.partitions == {(t, 1): True}    # added: answered once even if empty
    assert sessions.require("g", "a", -1) is session                        # the last request: any epoch
    with pytest.raises(KafkaError) as missing:
        sessions.require("g", "b", 1)
    assert missing.value.code == E.SHARE_SESSION_NOT_FOUND
    sessions.open("g", "b", [], conn_id=2)
    with pytest.raises(KafkaError) as full:
        sessions.open("g", "c", [], conn_id=3)
    assert full.value.code == E.SHARE_SESSION_LIMIT_REACHED
    reopened = sessions.open("g", "a", [], conn_id=4)            # a member may open its session again (elsewhere)
    assert sessions.disconnected(1) == (None, "g")                 # the old connection's mapping is stale
    assert sessions.disconnected(4) == (("g", "a"), "g")           # this one still holds a's session
    sessions.remove("g", "a")
    assert reopened.key == ("g", "a") and sessions.members("g") == 1
