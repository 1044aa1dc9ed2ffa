"""Classic consumer groups, differential: JoinGroup/SyncGroup/Heartbeat/LeaveGroup in every state and version,
protocol selection, static membership (KIP-345), rebalance and session timeouts, DescribeGroups, ListGroups,
DeleteGroups and OffsetDelete, each scenario run on Apache Kafka 4.3.1 and on kafkamock with raw requests.

Member ids differ between the brokers; the harness turns them into placeholders numbered by first appearance, and
member lists (kept in hash maps by Kafka) are shown in the order the scenario met the members.
"""

from __future__ import annotations

import time

import pytest
from support.group_steps import (
    assignment,
    coordinator_ready,
    describe_group,
    describe_view,
    heartbeat_body,
    join_body,
    join_new,
    join_view,
    list_groups,
    member_id_for,
    park,
    read_assignment,
    state_trace,
    subscription,
    sync_body,
    topic_and_group,
)

MEMBER_ID_REQUIRED = 79
REBALANCE_IN_PROGRESS = 27
# A pair whose group.min.session.timeout.ms lets a scenario see sessions expire in a second or two.
SHORT_SESSIONS = {"group.min.session.timeout.ms": 1000}


def setup(run, partitions: int = 2):
    return topic_and_group(run, partitions)


def sync_view(answer):
    view = dict(answer)
    view["assignment"] = read_assignment(answer.assignment)
    return view


def one_member_group(run, topic, group, *, conn=None, instance=None, version=9, **kw):
    """A group with one member, Stable at generation 1 (not observed): (member id, conn)."""
    conn = conn or run.new_conn()
    kw.setdefault("topics", (topic,))
    joined = join_new(run, conn, group, version=version, instance=instance, see=False, **kw)
    assert joined.error_code == 0, joined
    synced = conn.call("SyncGroup", min(version, 5), sync_body(
        group, joined.generation_id, joined.member_id, {joined.member_id: assignment({topic: [0, 1]})},
        instance=instance, protocol_name=joined.protocol_name))
    assert synced.error_code == 0, synced
    return joined.member_id, conn


# -- JoinGroup ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", range(10))
def test_join_sync_heartbeat_leave_each_version(differ, request, version):
    """One member through a whole life at JoinGroup vN (SyncGroup, Heartbeat, LeaveGroup at their nearest
    versions): MEMBER_ID_REQUIRED from v4, the leader's member list, the assignment, the group left Empty."""
    sync_v, hb_v, leave_v = min(version, 5), min(version, 4), min(version, 5)

    def scenario(run):
        topic, group = setup(run)
        conn = run.new_conn()
        joined = join_new(run, conn, group, version=version, topics=(topic,), rebalance=20_000)
        member = joined.member_id
        synced = conn.call("SyncGroup", sync_v, sync_body(group, joined.generation_id, member,
                                                          {member: assignment({topic: [0, 1]})}))
        run.see("sync", sync_view(synced))
        run.see("heartbeat", conn.call("Heartbeat", hb_v, heartbeat_body(group, joined.generation_id, member)))
        run.see("describe stable", describe_view(describe_group(run, group), [member]))
        if leave_v >= 3:
            body = {"group_id": group, "members": [{"member_id": member, "group_instance_id": None,
                                                     "reason": "done"}]}
        else:
            body = {"group_id": group, "member_id": member}
        run.see("leave", conn.call("LeaveGroup", leave_v, body))
        run.see("describe after leave", describe_view(describe_group(run, group), [member]))

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("session", [5999, 1_800_001, 0])
def test_join_invalid_session_timeout(differ, request, session):
    """A session timeout outside group.min/max.session.timeout.ms: INVALID_SESSION_TIMEOUT, no group made."""
    def scenario(run):
        _, group = setup(run)
        run.call("JoinGroup", 9, join_body(group, session=session))
        run.call("JoinGroup", 3, join_body(group, session=session))
        run.see("describe", describe_group(run, group))

    differ.check(request.node.name, scenario)


def test_join_empty_group_id(differ, request):
    def scenario(run):
        coordinator_ready(run, run.name("g"))
        run.call("JoinGroup", 9, join_body(""))
        run.call("JoinGroup", 5, join_body("", instance="i"))

    differ.check(request.node.name, scenario)


def test_join_unknown_member(differ, request):
    """A member id the group never gave: UNKNOWN_MEMBER_ID, for a group that does not exist and for one that
    does; a static member with an unknown id whose instance is not known either."""
    def scenario(run):
        topic, group = setup(run)
        run.call("JoinGroup", 9, join_body(group, "nobody", topics=(topic,)), label="no group")
        run.see("describe after", describe_group(run, group))
        member, _ = one_member_group(run, topic, group)
        run.call("JoinGroup", 9, join_body(group, "nobody", topics=(topic,)), label="group exists")
        run.call("JoinGroup", 9, join_body(group, "nobody", instance="i-1", topics=(topic,)), label="static")
        run.see("describe", describe_view(describe_group(run, group), [member]))

    differ.check(request.node.name, scenario)


def test_join_inconsistent_protocols(differ, request):
    """Protocol type or protocols the group cannot take: INCONSISTENT_GROUP_PROTOCOL (a new member, a known
    member changing its type, a first member with no protocol); what each leaves behind."""
    def scenario(run):
        topic, group = setup(run)
        lone = run.name("g") + "-lone"
        run.call("JoinGroup", 3, join_body(lone, protocols=[]), label="no protocols")
        run.call("JoinGroup", 3, join_body(lone + "-2", protocol_type=""), label="no protocol type")
        run.see("describe lone", describe_group(run, lone))
        run.see("describe lone 2", describe_group(run, lone + "-2"))
        member, conn = one_member_group(run, topic, group)
        run.call("JoinGroup", 9, join_body(group, protocol_type="connect", topics=(topic,)), label="other type")
        run.call("JoinGroup", 9, join_body(group, protocols=[("roundrobin", subscription(topic))]),
                 label="no common protocol")
        run.call("JoinGroup", 9, join_body(group, member, protocol_type="connect", topics=(topic,)),
                 label="member changes type")
        run.see("describe", describe_view(describe_group(run, group), [member]))

    differ.check(request.node.name, scenario)


def test_join_v3_no_member_id_round(differ, request):
    """Below v4 a new member joins at once with an id the coordinator makes (no MEMBER_ID_REQUIRED)."""
    def scenario(run):
        topic, group = setup(run)
        conn = run.new_conn()
        first = run.call("JoinGroup", 3, join_body(group, topics=(topic,)), conn=conn)
        run.see("leader members", join_view(first, [first.member_id])["members"])
        run.see("describe", describe_view(describe_group(run, group), [first.member_id]))

    differ.check(request.node.name, scenario)


def test_member_id_required_then_expires(differ, request):
    """KIP-394: the id handed out is pending until the member joins with it; a pending id that never joins
    leaves an Empty group; joining with it later is UNKNOWN_MEMBER_ID."""
    def scenario(run):
        topic, group = setup(run)
        member = member_id_for(run, run.conn(), group, topics=(topic,), session=6000)
        # Kafka describes the group only once the record creating it is committed (until then: Dead, a few ms).
        run.until("the new group is written", lambda: describe_group(run, group).group_state != "Dead", timeout=5)
        run.see("describe pending", describe_group(run, group))
        run.see("list", list_groups(run, [group]))
        run.see("leave pending", run.call("LeaveGroup", 5, {"group_id": group, "members": [
            {"member_id": member, "group_instance_id": None}]}))
        run.call("JoinGroup", 9, join_body(group, member, topics=(topic,)), label="join after leave")
        run.see("describe after", describe_group(run, group))

    differ.check(request.node.name, scenario)


def test_protocol_selection_by_votes(differ, request):
    """Three members in one round: the protocol every member supports with the most first choices wins; a
    member whose protocols share nothing with the group's is refused."""
    def scenario(run):
        topic, group = setup(run, 3)
        sub = subscription(topic)
        a_conn, b_conn, c_conn = run.new_conn(), run.new_conn(), run.new_conn()
        a, _ = one_member_group(run, topic, group, conn=a_conn,
                                protocols=[("range", sub), ("roundrobin", sub), ("sticky", sub)])
        b = member_id_for(run, b_conn, group, protocols=[("roundrobin", sub), ("range", sub)])
        park(run, b_conn, group, "JoinGroup", 9, join_body(group, b, protocols=[("roundrobin", sub), ("range", sub)]))
        c = member_id_for(run, c_conn, group, protocols=[("roundrobin", sub), ("sticky", sub), ("range", sub)])
        park(run, c_conn, group, "JoinGroup", 9, join_body(group, c, protocols=[
            ("roundrobin", sub), ("sticky", sub), ("range", sub)]), members=3)
        run.call("JoinGroup", 9, join_body(group, protocols=[("sticky", sub)]), label="no common protocol")
        run.see("heartbeat a", a_conn.call("Heartbeat", 4, heartbeat_body(group, 1, a)))
        ra = a_conn.call("JoinGroup", 9, join_body(group, a, protocols=[("range", sub), ("roundrobin", sub),
                                                                         ("sticky", sub)]))
        order = [a, b, c]
        run.see("join a", join_view(ra, order))
        run.see("join b", join_view(b_conn.receive("JoinGroup", 9), order))
        run.see("join c", join_view(c_conn.receive("JoinGroup", 9), order))
        run.see("describe", describe_view(describe_group(run, group), order))

    differ.check(request.node.name, scenario)


# -- a second member: the eager round ------------------------------------------------------------------------------

def two_member_round(run, topic, group, *, protocol="range", owned_version=0):
    """Member a alone, then b joins: a's heartbeat says rebalance, both rejoin, a (the leader) assigns. All of
    it observed. Returns (a, b, a_conn, b_conn, generation)."""
    a_conn, b_conn = run.new_conn(), run.new_conn()
    sub = subscription(topic, version=owned_version)
    a, _ = one_member_group(run, topic, group, conn=a_conn, protocols=[(protocol, sub)])
    b = member_id_for(run, b_conn, group, protocols=[(protocol, sub)])
    park(run, b_conn, group, "JoinGroup", 9, join_body(group, b, protocols=[(protocol, sub)]))
    run.see("a heartbeat in rebalance", a_conn.call("Heartbeat", 4, heartbeat_body(group, 1, a)))
    run.see("describe preparing", describe_view(describe_group(run, group), [a, b]))
    a_sub = subscription(topic, version=owned_version, owned={topic: [0, 1]} if owned_version else None)
    ra = a_conn.call("JoinGroup", 9, join_body(group, a, protocols=[(protocol, a_sub)]))
    rb = b_conn.receive("JoinGroup", 9)
    run.see("a rejoined", join_view(ra, [a, b]))
    run.see("b joined", join_view(rb, [a, b]))
    generation = ra.generation_id
    run.see("describe completing", describe_view(describe_group(run, group), [a, b]))
    run.see("b heartbeat completing", b_conn.call("Heartbeat", 4, heartbeat_body(group, generation, b)))
    b_conn.send("SyncGroup", 5, sync_body(group, generation, b, protocol_name=protocol))
    sa = a_conn.call("SyncGroup", 5, sync_body(group, generation, a, {
        a: assignment({topic: [0]}), b: assignment({topic: [1]})}, protocol_name=protocol))
    run.see("a synced", sync_view(sa))
    run.see("b synced", sync_view(b_conn.receive("SyncGroup", 5)))
    run.see("describe stable", describe_view(describe_group(run, group), [a, b]))
    return a, b, a_conn, b_conn, generation


def test_eager_rebalance_two_members(differ, request):
    def scenario(run):
        topic, group = setup(run)
        two_member_round(run, topic, group)

    differ.check(request.node.name, scenario)


def test_cooperative_rebalance_two_rounds(differ, request):
    """cooperative-sticky: the same two rounds with owned partitions in the subscription (v1); the broker does
    not look inside, so the rounds are the eager ones."""
    def scenario(run):
        topic, group = setup(run)
        a, b, a_conn, b_conn, generation = two_member_round(run, topic, group, protocol="cooperative-sticky",
                                                            owned_version=1)
        # The leader rejoins (a cooperative follow-up round): its join waits for b, which learns of the round
        # from its heartbeat and rejoins with the partition it keeps.
        sub_a = subscription(topic, version=1, owned={topic: [0]})
        park(run, a_conn, group, "JoinGroup", 9, join_body(group, a, protocols=[("cooperative-sticky", sub_a)]))
        run.see("b heartbeat", b_conn.call("Heartbeat", 4, heartbeat_body(group, generation, b)))
        sub_b = subscription(topic, version=1, owned={topic: [1]})
        rb = b_conn.call("JoinGroup", 9, join_body(group, b, protocols=[("cooperative-sticky", sub_b)]))
        run.see("a's second round", join_view(a_conn.receive("JoinGroup", 9), [a, b]))
        run.see("b's second round", join_view(rb, [a, b]))

    differ.check(request.node.name, scenario)


def test_sync_errors(differ, request):
    """SyncGroup: wrong generation, unknown member, wrong protocol type or name (v5), missing type/name at v5,
    no group, a group in PreparingRebalance, a repeated sync in Stable."""
    def scenario(run):
        topic, group = setup(run)
        run.call("SyncGroup", 5, sync_body(group, 1, "nobody"), label="no group")
        member, conn = one_member_group(run, topic, group)
        run.call("SyncGroup", 5, sync_body(group, 2, member), label="wrong generation")
        run.call("SyncGroup", 5, sync_body(group, 1, "nobody"), label="unknown member")
        run.call("SyncGroup", 5, sync_body(group, 1, member, protocol_type="connect"), label="wrong type")
        run.call("SyncGroup", 5, sync_body(group, 1, member, protocol_name="roundrobin"), label="wrong name")
        run.call("SyncGroup", 5, sync_body(group, 1, member, protocol_type=None, protocol_name=None),
                 label="no type or name")
        run.call("SyncGroup", 4, sync_body(group, 1, member, protocol_type="connect"), label="v4 ignores type")
        again = conn.call("SyncGroup", 5, sync_body(group, 1, member))
        run.see("repeated sync", sync_view(again))
        run.call("SyncGroup", 5, sync_body(group, 1, member, instance="i-1"), label="unknown instance")
        other = run.new_conn()
        b = member_id_for(run, other, group, topics=(topic,))
        park(run, other, group, "JoinGroup", 9, join_body(group, b, topics=(topic,)))
        run.call("SyncGroup", 5, sync_body(group, 1, member), label="preparing rebalance", conn=conn)

    differ.check(request.node.name, scenario)


def test_heartbeat_in_every_state(differ, request):
    """Heartbeat: no group, Stable, wrong generation, unknown member, PreparingRebalance, CompletingRebalance,
    Empty; static instance checks."""
    def scenario(run):
        topic, group = setup(run)
        run.call("Heartbeat", 4, heartbeat_body(group, 1, "nobody"), label="no group")
        a, b, a_conn, b_conn, generation = two_member_round(run, topic, group)
        run.call("Heartbeat", 4, heartbeat_body(group, generation, a), label="stable")
        run.call("Heartbeat", 4, heartbeat_body(group, generation + 1, a), label="future generation")
        run.call("Heartbeat", 4, heartbeat_body(group, generation - 1, a), label="old generation")
        run.call("Heartbeat", 4, heartbeat_body(group, generation, "nobody"), label="unknown member")
        run.call("Heartbeat", 4, heartbeat_body(group, generation, a, instance="i-1"), label="unknown instance")
        run.call("Heartbeat", 0, heartbeat_body(group, generation, a), label="v0")
        for conn, m in ((a_conn, a), (b_conn, b)):
            run.see("leave", conn.call("LeaveGroup", 5, {"group_id": group, "members": [
                {"member_id": m, "group_instance_id": None}]}))
        run.call("Heartbeat", 4, heartbeat_body(group, generation, a), label="empty, old member")
        run.call("Heartbeat", 4, heartbeat_body(group, generation + 1, a), label="empty, current generation")
        run.see("describe", describe_group(run, group))

    differ.check(request.node.name, scenario)


def test_leave_in_every_state(differ, request):
    """LeaveGroup: no group, unknown member, a follower in Stable (the group rebalances), the leader while the
    other member's join waits, v3+ batches with one unknown member, v0."""
    def scenario(run):
        topic, group = setup(run)
        run.call("LeaveGroup", 5, {"group_id": group, "members": [{"member_id": "x", "group_instance_id": None}]},
                 label="no group")
        run.call("LeaveGroup", 0, {"group_id": group, "member_id": "x"}, label="no group v0")
        a, b, a_conn, b_conn, generation = two_member_round(run, topic, group)
        run.call("LeaveGroup", 2, {"group_id": group, "member_id": "nobody"}, label="unknown v2")
        run.call("LeaveGroup", 5, {"group_id": group, "members": [
            {"member_id": b, "group_instance_id": None, "reason": "bye"},
            {"member_id": "nobody", "group_instance_id": None}]}, label="batch", conn=b_conn)
        run.see("describe after b left", describe_view(describe_group(run, group), [a, b]))
        run.see("a heartbeat", a_conn.call("Heartbeat", 4, heartbeat_body(group, generation, a)))
        ra = a_conn.call("JoinGroup", 9, join_body(group, a, topics=(topic,)))
        run.see("a rejoins alone", join_view(ra, [a, b]))
        run.see("describe completing", describe_view(describe_group(run, group), [a, b]))
        run.call("LeaveGroup", 1, {"group_id": group, "member_id": a}, label="leader leaves v1", conn=a_conn)
        run.see("describe empty", describe_view(describe_group(run, group), [a, b]))
        run.call("LeaveGroup", 5, {"group_id": group, "members": [{"member_id": a, "group_instance_id": None}]},
                 label="leave twice")

    differ.check(request.node.name, scenario)


def test_leave_while_join_parked(differ, request):
    """A member whose JoinGroup waits for the round leaves from another connection: its join is answered
    UNKNOWN_MEMBER_ID, and the round completes without it."""
    def scenario(run):
        topic, group = setup(run)
        a_conn, b_conn = run.new_conn(), run.new_conn()
        a, _ = one_member_group(run, topic, group, conn=a_conn)
        b = member_id_for(run, b_conn, group, topics=(topic,))
        park(run, b_conn, group, "JoinGroup", 9, join_body(group, b, topics=(topic,)))
        run.see("b leaves", run.call("LeaveGroup", 5, {"group_id": group, "members": [
            {"member_id": b, "group_instance_id": None}]}))
        run.see("b's join", b_conn.receive("JoinGroup", 9))
        run.see("a heartbeat", a_conn.call("Heartbeat", 4, heartbeat_body(group, 1, a)))
        ra = a_conn.call("JoinGroup", 9, join_body(group, a, topics=(topic,)))
        run.see("a rejoins", join_view(ra, [a, b]))

    differ.check(request.node.name, scenario)


def test_rejoin_in_completing_rebalance(differ, request):
    """A follower that rejoins with the same protocols while the leader has not synced gets the same generation
    back; with other protocols the group rebalances again, and the leader's sync is REBALANCE_IN_PROGRESS."""
    def scenario(run):
        topic, group = setup(run)
        a_conn, b_conn = run.new_conn(), run.new_conn()
        a, _ = one_member_group(run, topic, group, conn=a_conn)
        b = member_id_for(run, b_conn, group, topics=(topic,))
        park(run, b_conn, group, "JoinGroup", 9, join_body(group, b, topics=(topic,)))
        a_conn.call("Heartbeat", 4, heartbeat_body(group, 1, a))
        ra = a_conn.call("JoinGroup", 9, join_body(group, a, topics=(topic,)))
        b_conn.receive("JoinGroup", 9)
        rb = b_conn.call("JoinGroup", 9, join_body(group, b, topics=(topic,)))
        run.see("b rejoins same", join_view(rb, [a, b]))
        park(run, b_conn, group, "JoinGroup", 9, join_body(group, b, topics=(topic, "other")))
        sa = a_conn.call("SyncGroup", 5, sync_body(group, ra.generation_id, a, {a: assignment({topic: [0]})}))
        run.see("a sync after b changed", sync_view(sa))
        run.see("describe", describe_view(describe_group(run, group), [a, b]))
        ra2 = a_conn.call("JoinGroup", 9, join_body(group, a, topics=(topic,)))
        run.see("a rejoins", join_view(ra2, [a, b]))
        run.see("b's join", join_view(b_conn.receive("JoinGroup", 9), [a, b]))

    differ.check(request.node.name, scenario)


# -- static membership (KIP-345) ---------------------------------------------------------------------------------

def test_static_member_join_and_replace(differ, request):
    """A static member joins without MEMBER_ID_REQUIRED; the same instance joining with no member id replaces
    it (the old id is fenced everywhere); a known member id with another member's instance is fenced."""
    def scenario(run):
        topic, group = setup(run)
        conn = run.new_conn()
        first = run.call("JoinGroup", 9, join_body(group, instance="i-1", topics=(topic,)), conn=conn)
        old = first.member_id
        conn.call("SyncGroup", 5, sync_body(group, 1, old, {old: assignment({topic: [0, 1]})}, instance="i-1"))
        again = run.call("JoinGroup", 9, join_body(group, instance="i-1", topics=(topic,)), label="replace")
        new = again.member_id
        run.see("join view", join_view(again, [old, new]))
        run.call("Heartbeat", 4, heartbeat_body(group, 1, old, "i-1"), label="old heartbeat")
        run.call("Heartbeat", 4, heartbeat_body(group, 1, new, "i-1"), label="new heartbeat")
        run.call("Heartbeat", 4, heartbeat_body(group, 1, new), label="new heartbeat without instance")
        synced = run.call("SyncGroup", 5, sync_body(group, 1, new, instance="i-1"), see=False)
        run.see("new sync", sync_view(synced))
        run.call("SyncGroup", 5, sync_body(group, 1, old, instance="i-1"), label="old sync")
        run.call("JoinGroup", 9, join_body(group, old, instance="i-1", topics=(topic,)), label="old rejoins")
        run.call("OffsetCommit", 9, {"group_id": group, "generation_id_or_member_epoch": 1, "member_id": old,
                                     "group_instance_id": "i-1", "topics": [{"name": topic, "partitions": [
                                         {"partition_index": 0, "committed_offset": 1}]}]}, label="old commits")
        run.see("describe", describe_view(describe_group(run, group), [old, new]))

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("version", [5, 8, 9])
def test_static_leader_rejoins_without_rebalance(differ, request, version):
    """The known librdkafka case: the static leader restarts and rejoins (no member id) while the group is
    Stable with the same protocols. Kafka keeps the generation and the assignment (no rebalance); below v9 the
    answer names the old leader id so the member syncs as a follower; v9 says skip_assignment."""
    def scenario(run):
        topic, group = setup(run)
        a_conn, b_conn = run.new_conn(), run.new_conn()
        sub = subscription(topic)
        ra = a_conn.call("JoinGroup", version, join_body(group, instance="a", topics=(topic,)))
        a = ra.member_id
        a_conn.call("SyncGroup", 5, sync_body(group, 1, a, {a: assignment({topic: [0, 1]})}, instance="a"))
        park(run, b_conn, group, "JoinGroup", version, join_body(group, instance="b", topics=(topic,)))
        a_conn.call("Heartbeat", 4, heartbeat_body(group, 1, a, "a"))
        ra = a_conn.call("JoinGroup", version, join_body(group, a, instance="a", protocols=[("range", sub)]))
        rb = b_conn.receive("JoinGroup", version)
        b = rb.member_id
        generation = ra.generation_id
        b_conn.send("SyncGroup", 5, sync_body(group, generation, b, instance="b"))
        a_conn.call("SyncGroup", 5, sync_body(group, generation, a, {
            a: assignment({topic: [0]}), b: assignment({topic: [1]})}, instance="a"))
        b_conn.receive("SyncGroup", 5)
        a_conn.close()
        restarted = run.new_conn()
        rejoin = restarted.call("JoinGroup", version, join_body(group, instance="a", topics=(topic,)))
        run.see("rejoin", join_view(rejoin, [a, b, rejoin.member_id]))
        run.see("rejoin is the old leader's id", rejoin.leader == a)
        run.see("b heartbeat", b_conn.call("Heartbeat", 4, heartbeat_body(group, generation, b, "b")))
        synced = restarted.call("SyncGroup", 5, sync_body(group, rejoin.generation_id, rejoin.member_id,
                                                          instance="a"))
        run.see("restarted sync", sync_view(synced))
        run.see("describe", describe_view(describe_group(run, group), [a, b, rejoin.member_id]))

    differ.check(request.node.name, scenario)


def test_static_rejoin_changing_protocol_rebalances(differ, request):
    """A static member replaced with protocols that change the group's choice: the group rebalances."""
    def scenario(run):
        topic, group = setup(run)
        conn = run.new_conn()
        sub = subscription(topic)
        ra = conn.call("JoinGroup", 9, join_body(group, instance="a", protocols=[("range", sub),
                                                                                 ("roundrobin", sub)]))
        a = ra.member_id
        conn.call("SyncGroup", 5, sync_body(group, 1, a, {a: assignment({topic: [0, 1]})}, instance="a"))
        other = run.new_conn()
        rejoin = other.call("JoinGroup", 9, join_body(group, instance="a", protocols=[("roundrobin", sub)]))
        run.see("rejoin", join_view(rejoin, [a, rejoin.member_id]))
        run.see("describe", describe_view(describe_group(run, group), [a, rejoin.member_id]))

    differ.check(request.node.name, scenario)


def test_static_member_leave_by_instance(differ, request):
    """LeaveGroup v3+ by group.instance.id: with no member id, with the right one, with a wrong one (fenced),
    an unknown instance; a static member that leaves is gone (the group rebalances)."""
    def scenario(run):
        topic, group = setup(run)
        conn = run.new_conn()
        first = conn.call("JoinGroup", 9, join_body(group, instance="a", topics=(topic,)))
        a = first.member_id
        conn.call("SyncGroup", 5, sync_body(group, 1, a, {a: assignment({topic: [0, 1]})}, instance="a"))
        run.call("LeaveGroup", 5, {"group_id": group, "members": [
            {"member_id": "wrong", "group_instance_id": "a"},
            {"member_id": "", "group_instance_id": "unknown"}]}, label="fenced and unknown")
        run.see("describe", describe_view(describe_group(run, group), [a]))
        run.call("LeaveGroup", 3, {"group_id": group, "members": [{"member_id": "", "group_instance_id": "a"}]},
                 label="by instance")
        run.see("describe after", describe_view(describe_group(run, group), [a]))

    differ.check(request.node.name, scenario)


def test_static_members_not_removed_by_rebalance_timeout(differ, request):
    """A static member that does not rejoin within the rebalance timeout stays in the group (its session
    decides), while a dynamic one is removed when the round ends."""
    def scenario(run):
        topic, group = setup(run)
        s_conn, d_conn, n_conn = run.new_conn(), run.new_conn(), run.new_conn()
        rs = s_conn.call("JoinGroup", 9, join_body(group, instance="s", topics=(topic,), rebalance=1000))
        s = rs.member_id
        s_conn.call("SyncGroup", 5, sync_body(group, 1, s, {s: assignment({topic: [0, 1]})}, instance="s"))
        d = member_id_for(run, d_conn, group, topics=(topic,), rebalance=1000)
        park(run, d_conn, group, "JoinGroup", 9, join_body(group, d, topics=(topic,), rebalance=1000))
        s_conn.call("Heartbeat", 4, heartbeat_body(group, 1, s, "s"))
        rs = s_conn.call("JoinGroup", 9, join_body(group, s, instance="s", topics=(topic,), rebalance=1000))
        d_conn.receive("JoinGroup", 9)
        generation = rs.generation_id
        s_conn.send("SyncGroup", 5, sync_body(group, generation, s, {s: assignment({topic: [0]}),
                                                                     d: assignment({topic: [1]})}, instance="s"))
        d_conn.call("SyncGroup", 5, sync_body(group, generation, d))
        s_conn.receive("SyncGroup", 5)
        # a third member starts a round that neither s nor d joins
        n = member_id_for(run, n_conn, group, topics=(topic,), rebalance=1000)
        n_conn.send("JoinGroup", 9, join_body(group, n, topics=(topic,), rebalance=1000))
        rn = n_conn.receive("JoinGroup", 9)
        run.see("n's join after the rebalance timeout", join_view(rn, [s, d, n]))
        run.see("describe", describe_view(describe_group(run, group), [s, d, n]))
        run.call("Heartbeat", 4, heartbeat_body(group, generation, d), label="d removed", conn=d_conn)
        run.call("Heartbeat", 4, heartbeat_body(group, generation, s, "s"), label="s stays", conn=s_conn)

    differ.check(request.node.name, scenario)


# -- timeouts ------------------------------------------------------------------------------------------------------

def test_rebalance_timeout_removes_member(differ, request):
    """Two dynamic members; a third joins; only the leader rejoins; the round ends at the rebalance timeout
    without the silent member, which then gets UNKNOWN_MEMBER_ID."""
    def scenario(run):
        topic, group = setup(run)
        a_conn, b_conn, c_conn = run.new_conn(), run.new_conn(), run.new_conn()
        a, _ = one_member_group(run, topic, group, conn=a_conn, rebalance=1500)
        b = member_id_for(run, b_conn, group, topics=(topic,), rebalance=1500)
        park(run, b_conn, group, "JoinGroup", 9, join_body(group, b, topics=(topic,), rebalance=1500))
        a_conn.call("Heartbeat", 4, heartbeat_body(group, 1, a))
        ra = a_conn.call("JoinGroup", 9, join_body(group, a, topics=(topic,), rebalance=1500))
        b_conn.receive("JoinGroup", 9)
        generation = ra.generation_id
        b_conn.send("SyncGroup", 5, sync_body(group, generation, b))
        a_conn.call("SyncGroup", 5, sync_body(group, generation, a, {a: assignment({topic: [0]}),
                                                                     b: assignment({topic: [1]})}))
        b_conn.receive("SyncGroup", 5)
        c = member_id_for(run, c_conn, group, topics=(topic,), rebalance=1500)
        park(run, c_conn, group, "JoinGroup", 9, join_body(group, c, topics=(topic,), rebalance=1500))
        run.see("a heartbeat", a_conn.call("Heartbeat", 4, heartbeat_body(group, generation, a)))
        ra = a_conn.call("JoinGroup", 9, join_body(group, a, topics=(topic,), rebalance=1500))
        rc = c_conn.receive("JoinGroup", 9)
        run.see("a rejoined", join_view(ra, [a, b, c]))
        run.see("c joined", join_view(rc, [a, b, c]))
        run.see("b heartbeat", b_conn.call("Heartbeat", 4, heartbeat_body(group, generation, b)))

    differ.check(request.node.name, scenario)


def test_pending_sync_timeout_removes_member(differ, request):
    """A follower that never sends SyncGroup is removed after the rebalance timeout, and the group rebalances."""
    def scenario(run):
        topic, group = setup(run)
        a_conn, b_conn = run.new_conn(), run.new_conn()
        a, _ = one_member_group(run, topic, group, conn=a_conn, rebalance=1500)
        b = member_id_for(run, b_conn, group, topics=(topic,), rebalance=1500)
        park(run, b_conn, group, "JoinGroup", 9, join_body(group, b, topics=(topic,), rebalance=1500))
        a_conn.call("Heartbeat", 4, heartbeat_body(group, 1, a))
        ra = a_conn.call("JoinGroup", 9, join_body(group, a, topics=(topic,), rebalance=1500))
        b_conn.receive("JoinGroup", 9)
        a_conn.call("SyncGroup", 5, sync_body(group, ra.generation_id, a, {a: assignment({topic: [0]})}))
        run.until("the group rebalances without b", lambda: describe_group(run, group).group_state
                  == "PreparingRebalance" or len(describe_group(run, group).members) == 1, timeout=15)
        run.see("describe", describe_view(describe_group(run, group), [a, b]))
        run.see("a heartbeat", a_conn.call("Heartbeat", 4, heartbeat_body(group, ra.generation_id, a)))

    differ.check(request.node.name, scenario)


def test_session_expiry_without_requests(differ, request):
    """Two members with a 1.5 s session stop heartbeating (their connections closed, no LeaveGroup). Nothing is
    sent to the broker for 2.5 s; then the group is Empty and DeleteGroups deletes it (the librdkafka report:
    kafkamock only expired them when the next request arrived)."""
    def scenario(run):
        topic, group = setup(run)
        a, b, a_conn, b_conn, generation = two_member_round_short(run, topic, group)
        a_conn.close()
        b_conn.close()
        time.sleep(2.5)        # the event under test is time passing with no request at all
        run.see("describe", describe_view(describe_group(run, group), [a, b]))
        run.call("DeleteGroups", 2, {"groups_names": [group]})

    differ.check(request.node.name, scenario, config=SHORT_SESSIONS)


def test_session_expiry_of_members_closed_mid_round(differ, request):
    """A Stable member and a new member whose JoinGroup waits for the round both go away (no LeaveGroup): the
    old member's session ends the round without it, the new one gets a generation nobody syncs, and its session
    (counted from the round's end) empties the group. The states are polled with DescribeGroups only."""
    def scenario(run):
        topic, group = setup(run)
        a_conn, b_conn = run.new_conn(), run.new_conn()
        a, _ = one_member_group(run, topic, group, conn=a_conn, session=1500, rebalance=20_000)
        b = member_id_for(run, b_conn, group, topics=(topic,), session=1500, rebalance=20_000)
        park(run, b_conn, group, "JoinGroup", 9, join_body(group, b, topics=(topic,), session=1500,
                                                          rebalance=20_000))
        a_conn.close()
        b_conn.close()
        run.see("states", state_trace(run, group, timeout=30))

    differ.check(request.node.name, scenario, config=SHORT_SESSIONS)


def test_static_members_no_rejoin_keeps_preparing(differ, request):
    """Static members that do not rejoin a round: Kafka does not start a generation nobody joined; the round
    waits while their sessions run out, and the group goes Empty from PreparingRebalance."""
    def scenario(run):
        topic, group = setup(run)
        s_conn, d_conn = run.new_conn(), run.new_conn()
        rs = s_conn.call("JoinGroup", 9, join_body(group, instance="s", topics=(topic,), session=2500,
                                                   rebalance=1000))
        s = rs.member_id
        s_conn.call("SyncGroup", 5, sync_body(group, 1, s, {s: assignment({topic: [0, 1]})}, instance="s"))
        d = member_id_for(run, d_conn, group, topics=(topic,), session=2500, rebalance=1000)
        park(run, d_conn, group, "JoinGroup", 9, join_body(group, d, topics=(topic,), session=2500, rebalance=1000))
        s_conn.call("Heartbeat", 4, heartbeat_body(group, 1, s, "s"))
        rs = s_conn.call("JoinGroup", 9, join_body(group, s, instance="s", topics=(topic,), session=2500,
                                                   rebalance=1000))
        d_conn.receive("JoinGroup", 9)
        generation = rs.generation_id
        s_conn.send("SyncGroup", 5, sync_body(group, generation, s, {s: assignment({topic: [0]}),
                                                                     d: assignment({topic: [1]})}, instance="s"))
        d_conn.call("SyncGroup", 5, sync_body(group, generation, d))
        s_conn.receive("SyncGroup", 5)
        s_conn.close()
        run.see("d leaves", d_conn.call("LeaveGroup", 5, {"group_id": group, "members": [
            {"member_id": d, "group_instance_id": None}]}))
        run.see("states", state_trace(run, group, timeout=30))

    differ.check(request.node.name, scenario, config=SHORT_SESSIONS)


def two_member_round_short(run, topic, group):
    a_conn, b_conn = run.new_conn(), run.new_conn()
    a, _ = one_member_group(run, topic, group, conn=a_conn, session=1500, rebalance=1500)
    b = member_id_for(run, b_conn, group, topics=(topic,), session=1500, rebalance=1500)
    park(run, b_conn, group, "JoinGroup", 9, join_body(group, b, topics=(topic,), session=1500, rebalance=1500))
    a_conn.call("Heartbeat", 4, heartbeat_body(group, 1, a))
    ra = a_conn.call("JoinGroup", 9, join_body(group, a, topics=(topic,), session=1500, rebalance=1500))
    b_conn.receive("JoinGroup", 9)
    generation = ra.generation_id
    b_conn.send("SyncGroup", 5, sync_body(group, generation, b))
    a_conn.call("SyncGroup", 5, sync_body(group, generation, a, {a: assignment({topic: [0]}),
                                                                 b: assignment({topic: [1]})}))
    b_conn.receive("SyncGroup", 5)
    return a, b, a_conn, b_conn, generation


def test_session_expiry_one_of_two(differ, request):
    """One member stops heartbeating: when its session runs out the other's heartbeat says rebalance, and the
    rejoin completes a generation without it."""
    def scenario(run):
        topic, group = setup(run)
        a, b, a_conn, b_conn, generation = two_member_round_short(run, topic, group)
        b_conn.close()

        def rebalancing():
            return a_conn.call("Heartbeat", 4, heartbeat_body(group, generation, a)).error_code == 27
        run.until("b's session expires", rebalancing, timeout=10, interval=0.3)
        run.see("describe", describe_view(describe_group(run, group), [a, b]))
        ra = a_conn.call("JoinGroup", 9, join_body(group, a, topics=(topic,), session=1500, rebalance=1500))
        run.see("a rejoins", join_view(ra, [a, b]))

    differ.check(request.node.name, scenario, config=SHORT_SESSIONS)


def test_static_member_session_expiry(differ, request):
    """A static member is removed when its session runs out (the rebalance timeout does not remove it)."""
    def scenario(run):
        topic, group = setup(run)
        conn = run.new_conn()
        first = conn.call("JoinGroup", 9, join_body(group, instance="s", topics=(topic,), session=1500))
        s = first.member_id
        conn.call("SyncGroup", 5, sync_body(group, 1, s, {s: assignment({topic: [0, 1]})}, instance="s"))
        run.until("s expires", lambda: describe_group(run, group).group_state == "Empty", timeout=10,
                  interval=0.3)
        run.see("describe", describe_view(describe_group(run, group), [s]))
        run.call("Heartbeat", 4, heartbeat_body(group, 1, s, "s"), label="s heartbeat")
        rejoin = conn.call("JoinGroup", 9, join_body(group, instance="s", topics=(topic,), session=1500))
        run.see("s rejoins", join_view(rejoin, [s, rejoin.member_id]))

    differ.check(request.node.name, scenario, config=SHORT_SESSIONS)


# -- DescribeGroups, ListGroups, DeleteGroups, OffsetDelete --------------------------------------------------------

@pytest.mark.parametrize("version", range(7))
def test_describe_groups_each_version(differ, request, version):
    """DescribeGroups vN of a Stable group, an unknown group and an empty group id."""
    def scenario(run):
        topic, group = setup(run)
        member, _ = one_member_group(run, topic, group)
        r = run.call("DescribeGroups", version, {"groups": [group, group + "-unknown", ""],
                                                 "include_authorized_operations": version >= 3}, see=False)
        by_id = {g.group_id: g for g in r.groups}
        run.see("stable", describe_view(by_id[group], [member]))
        run.see("unknown", by_id[group + "-unknown"])
        run.see("empty id", by_id[""])

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("version", range(6))
def test_list_groups_each_version(differ, request, version):
    """ListGroups vN: a Stable group, an Empty one (offsets only), a PreparingRebalance one; v4+ filtered by
    state, v5+ by type."""
    def scenario(run):
        topic, group = setup(run)
        empty, preparing = group + "-empty", group + "-prep"
        one_member_group(run, topic, group)
        run.call("OffsetCommit", 9, {"group_id": empty, "generation_id_or_member_epoch": -1, "member_id": "",
                                     "topics": [{"name": topic, "partitions": [
                                         {"partition_index": 0, "committed_offset": 5}]}]}, see=False)
        a, a_conn = one_member_group(run, topic, preparing)
        b_conn = run.new_conn()
        b = member_id_for(run, b_conn, preparing, topics=(topic,))
        park(run, b_conn, preparing, "JoinGroup", 9, join_body(preparing, b, topics=(topic,)))
        names = [group, empty, preparing]
        run.see("all", list_groups(run, names, version=version))
        if version >= 4:
            run.see("stable or empty", list_groups(run, names, version=version, states=["Stable", "Empty"]))
            run.see("preparing", list_groups(run, names, version=version, states=["PreparingRebalance"]))
            run.see("bad state", list_groups(run, names, version=version, states=["Nope"]))
        if version >= 5:
            run.see("classic", list_groups(run, names, version=version, types=["classic"]))
            run.see("Classic", list_groups(run, names, version=version, types=["Classic"]))
            run.see("consumer", list_groups(run, names, version=version, types=["consumer"]))
            run.see("bad type", list_groups(run, names, version=version, types=["nope"]))

    differ.check(request.node.name, scenario)


def test_delete_groups(differ, request):
    """DeleteGroups: NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND, an empty group with offsets (deleted with them), a
    repeated id, then the group is gone for DescribeGroups and OffsetFetch."""
    def scenario(run):
        topic, group = setup(run)
        empty = group + "-empty"
        member, conn = one_member_group(run, topic, group)
        run.call("OffsetCommit", 9, {"group_id": empty, "generation_id_or_member_epoch": -1, "member_id": "",
                                     "topics": [{"name": topic, "partitions": [
                                         {"partition_index": 0, "committed_offset": 5}]}]}, see=False)
        r = run.call("DeleteGroups", 2, {"groups_names": [group, empty, group + "-unknown", ""]}, see=False)
        run.see("delete", sorted((x.group_id, x.error_code) for x in r.results))
        run.call("DeleteGroups", 0, {"groups_names": [empty]}, label="again")
        run.call("OffsetFetch", 8, {"groups": [{"group_id": empty, "topics": None}], "require_stable": False},
                 label="offsets after")
        run.see("describe empty", describe_group(run, empty))
        conn.call("LeaveGroup", 5, {"group_id": group, "members": [{"member_id": member, "group_instance_id": None}]})
        run.call("DeleteGroups", 1, {"groups_names": [group]}, label="after leave")
        run.see("describe", describe_group(run, group))

    differ.check(request.node.name, scenario)


def test_offset_delete(differ, request):
    """OffsetDelete: no group, a Stable consumer group (subscribed topic refused per partition, others
    deleted), an unknown topic, a non-consumer group with members (NON_EMPTY_GROUP), an Empty group."""
    def scenario(run):
        topic, group = setup(run)
        other = run.name("o")
        run.create_topic(other, partitions=1)
        run.call("OffsetDelete", 0, {"group_id": group, "topics": [{"name": topic, "partitions": [
            {"partition_index": 0}]}]}, label="no group")
        member, conn = one_member_group(run, topic, group)
        commit = {"group_id": group, "generation_id_or_member_epoch": 1, "member_id": member, "topics": [
            {"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 3}]},
            {"name": other, "partitions": [{"partition_index": 0, "committed_offset": 4}]}]}
        run.call("OffsetCommit", 9, commit, label="commit", conn=conn)
        r = run.call("OffsetDelete", 0, {"group_id": group, "topics": [
            {"name": topic, "partitions": [{"partition_index": 0}]},
            {"name": other, "partitions": [{"partition_index": 0}, {"partition_index": 7}]},
            {"name": other + "-unknown", "partitions": [{"partition_index": 0}]}]}, see=False)
        run.see("stable", {"error_code": r.error_code, "topics": sorted(
            (t.name, sorted((p.partition_index, p.error_code) for p in t.partitions)) for t in r.topics)})
        run.call("OffsetFetch", 8, {"groups": [{"group_id": group, "topics": None}], "require_stable": False},
                 label="left")
        connect = group + "-connect"
        cc = run.new_conn()
        joined = cc.call("JoinGroup", 3, join_body(connect, protocol_type="connect",
                                                  protocols=[("default", b"\x00\x01")]))
        cc.call("SyncGroup", 3, sync_body(connect, joined.generation_id, joined.member_id,
                                          {joined.member_id: b"x"}, protocol_type=None, protocol_name=None))
        run.call("OffsetDelete", 0, {"group_id": connect, "topics": [{"name": topic, "partitions": [
            {"partition_index": 0}]}]}, label="connect group")
        conn.call("LeaveGroup", 5, {"group_id": group, "members": [{"member_id": member, "group_instance_id": None}]})
        run.call("OffsetDelete", 0, {"group_id": group, "topics": [{"name": topic, "partitions": [
            {"partition_index": 0}]}]}, label="empty")
        run.call("OffsetFetch", 8, {"groups": [{"group_id": group, "topics": None}], "require_stable": False},
                 label="left after")

    differ.check(request.node.name, scenario)


# -- a real client: librdkafka -------------------------------------------------------------------------------------

def test_librdkafka_static_leader_restart_keeps_the_assignment(differ, request):
    """The librdkafka report, with librdkafka itself: two static consumers share a topic; the leader's process
    restarts (close without LeaveGroup, a new consumer with the same group.instance.id). Kafka hands it its
    assignment back without a rebalance: the other consumer never sees its partitions revoked."""
    confluent_kafka = pytest.importorskip("confluent_kafka")

    def scenario(run):
        topic, group = setup(run, partitions=4)
        revoked: dict[str, int] = {"a": 0, "b": 0}

        def consumer(instance):
            c = confluent_kafka.Consumer({
                "bootstrap.servers": run.target.bootstrap_servers, "group.id": group,
                "group.instance.id": instance, "session.timeout.ms": 6000, "heartbeat.interval.ms": 500,
                "partition.assignment.strategy": "range", "enable.auto.commit": False, "log_level": 0})
            c.subscribe([topic], on_revoke=lambda _c, parts: revoked.__setitem__(instance, revoked[instance] +
                                                                                len(parts)))
            return c

        def owned(c):
            return sorted(p.partition for p in c.assignment())

        a = consumer("a")
        run.until("a owns everything", lambda: a.poll(0.05) is None and len(owned(a)) == 4, timeout=30, interval=0)
        b = consumer("b")
        run.until("a and b share", lambda: (a.poll(0.05), b.poll(0.05)) and len(owned(a)) == len(owned(b)) == 2,
                  timeout=30, interval=0)
        before = {"a": owned(a), "b": owned(b)}
        revoked.update(a=0, b=0)
        a.close()
        a = consumer("a")
        run.until("the restarted a owns its partitions again",
                  lambda: (a.poll(0.05), b.poll(0.05)) and owned(a) == before["a"], timeout=30, interval=0)
        for _ in range(10):                              # a few more heartbeats of b: still no rebalance
            b.poll(0.1)
        run.see("assignment kept", {"a": owned(a) == before["a"], "b": owned(b) == before["b"]})
        run.see("b's revocations", revoked["b"])
        described = describe_group(run, group)
        run.see("describe", {"state": described.group_state, "members": sorted(
            (m.group_instance_id, read_assignment(m.member_assignment)["partitions"].get(topic))
            for m in described.members)})
        for c in (a, b):
            c.close()

    differ.check(request.node.name, scenario)
