"""Share-group membership in the core (ShareGroupHeartbeat v1 / ShareGroupDescribe v1 bodies, through the codec), on a
ManualClock: joining, the simple assignor sharing partitions, epochs and fencing, leaving, session timeouts, the size
limit, and ListGroups' view. The share-group APIs are not advertised yet; these drive the coordinator directly."""

from __future__ import annotations

import pytest

from kafkamock import codec
from kafkamock.broker import Broker
from kafkamock.broker.errors import ErrorCode as E
from kafkamock.broker.errors import KafkaError


@pytest.fixture
def broker(clock):
    b = Broker({"group.share.max.size": 3}, clock=clock)
    b.cluster.create_topic("t", 2, 1)
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
    topic_id = broker.cluster.topics["t"].topic_id
    return sorted(p for tp in answer.assignment.topic_partitions if tp.topic_id == topic_id for p in tp.partitions)


def code(broker, *args, **kwargs) -> E:
    try:
        beat(broker, *args, **kwargs)
    except KafkaError as exc:
        return exc.code
    return E.NONE


def test_members_share_partitions_and_follow_the_group_epoch(broker):
    a = beat(broker, "a", 0)
    assert (a.member_epoch, owned(broker, a)) == (1, [0, 1])
    b = beat(broker, "b", 0)
    assert (b.member_epoch, len(owned(broker, b))) == (2, 1)
    a2 = beat(broker, "a", 1, topics=None)                   # a learns of b at its next heartbeat
    assert a2.member_epoch == 2 and sorted(owned(broker, a2) + owned(broker, b)) == [0, 1]
    assert beat(broker, "a", 2, topics=None).assignment is None   # nothing changed: no assignment sent
    c = beat(broker, "c", 0)                                  # three members, two partitions: one is shared
    assert len(owned(broker, c)) == 1
    described = broker.groups.share.describe("sg")
    assert (described["group_state"], described["group_epoch"], described["assignor_name"]) == ("Stable", 3, "simple")
    listed = broker.groups.list_groups(set(), {"share"})
    assert [(g.group_id, g.state_name) for g in listed] == [("sg", "Stable")]


def test_bad_heartbeats_get_kafkas_codes(broker):
    beat(broker, "a", 0)
    assert code(broker, "a", 7, topics=None) == E.FENCED_MEMBER_EPOCH
    assert code(broker, "ghost", 1, topics=None) == E.UNKNOWN_MEMBER_ID
    assert code(broker, "", 0) == E.INVALID_REQUEST
    assert code(broker, "b", 0, topics=()) == E.INVALID_REQUEST
    assert code(broker, "b", -2) == E.INVALID_REQUEST
    assert code(broker, "x", 0, group="") == E.INVALID_REQUEST
    beat(broker, "b", 0)
    beat(broker, "c", 0)
    assert code(broker, "d", 0) == E.GROUP_MAX_SIZE_REACHED
    broker.groups.validate_commit("classic", -1, "", None, 8)            # a standalone (classic) group
    assert code(broker, "z", 0, group="classic") == E.GROUP_ID_NOT_FOUND   # not a share group


def test_leave_and_session_timeout_reassign(broker, clock):
    beat(broker, "a", 0)
    b = beat(broker, "b", 0)
    left = beat(broker, "b", -1, topics=None)
    assert left.member_epoch == -1
    assert owned(broker, beat(broker, "a", 1, topics=None)) == [0, 1]      # a gets everything back
    beat(broker, "c", 0)
    clock.advance(broker.config["group.share.session.timeout.ms"])
    broker.tick()                                                          # neither a nor c heartbeated since
    assert broker.groups.share.describe("sg")["group_state"] == "Empty"
    assert b.member_epoch == 2


def test_share_sessions_open_advance_and_close():
    import uuid as _uuid

    from kafkamock.broker.share.sessions import ShareSessions

    t = _uuid.UUID(int=7)
    sessions = ShareSessions(lambda: 2)
    opened = sessions.begin("g", "a", 0, add=[(t, 0)])
    assert opened.epoch == 1 and opened.partitions == {(t, 0)}
    with pytest.raises(KafkaError) as wrong:
        sessions.begin("g", "a", 5)
    assert wrong.value.code == E.INVALID_SHARE_SESSION_EPOCH
    advanced = sessions.begin("g", "a", 1, add=[(t, 1)], forget=[(t, 0)])
    assert advanced.epoch == 2 and advanced.partitions == {(t, 1)}
    with pytest.raises(KafkaError) as missing:
        sessions.begin("g", "b", 1)
    assert missing.value.code == E.SHARE_SESSION_NOT_FOUND
    sessions.begin("g", "b", 0)
    with pytest.raises(KafkaError) as full:
        sessions.begin("g", "c", 0)
    assert full.value.code == E.SHARE_SESSION_LIMIT_REACHED
    assert sessions.begin("g", "a", 0).epoch == 1                # a member may open its session again
    sessions.begin("g", "a", -1)                                  # closed
    with pytest.raises(KafkaError):
        sessions.begin("g", "a", 1)
    assert sessions.begin("g", "c", 0).member_id == "c"           # room again
