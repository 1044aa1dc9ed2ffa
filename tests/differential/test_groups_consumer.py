"""KIP-848 consumer groups, differential: ConsumerGroupHeartbeat v0/v1 (joining, epochs, the uniform and range
server assignors, revocation before assignment, fencing, static members, regular expressions, leaving, invalid
requests, the session timeout) and ConsumerGroupDescribe, on Apache Kafka 4.3.1 and on kafkamock.

Assignments are shown by topic name (topic ids differ between the brokers); members are named by the scenario
(v1: the client makes the member id), so member lists can be put in the scenario's order.
"""

from __future__ import annotations

import time
import uuid

import pytest
from support.group_steps import (
    cgh_body,
    codec_dict,
    coordinator_ready,
    coordinator_sees,
    describe_group,
    join_body,
    list_groups,
    named_assignment,
    owned_of,
    topic_id,
)

# Targets computed at every epoch (no group.consumer.assignment.interval.ms wait, so a scenario's steps do not depend
# on how fast it runs) and sessions short enough to watch one run out (Kafka's bounds must allow them).
FAST = {"group.consumer.assignment.interval.ms": 0, "group.consumer.min.session.timeout.ms": 1000,
        "group.consumer.session.timeout.ms": 4000, "group.consumer.min.heartbeat.interval.ms": 500,
        "group.consumer.heartbeat.interval.ms": 500}


def setup(run, partitions: int = 4, topics: int = 1):
    names = [run.name("t") + (f"-{k}" if k else "") for k in range(topics)]
    for name in names:
        run.create_topic(name, partitions=partitions)
    group = run.name("g")
    coordinator_ready(run, group)
    ids = {topic_id(run, n): n for n in names}
    coordinator_sees(run, group + "-probe", names)
    return names, group, ids


class Member:
    """One KIP-848 member driven with raw heartbeats; ``owned`` follows what the coordinator assigned."""

    def __init__(self, run, group, ids, member_id, *, version=1, instance=None, conn=None):
        self.run, self.group, self.ids, self.version = run, group, ids, version
        self.member_id = member_id if version >= 1 else ""
        self.instance = instance
        self.epoch = 0
        self.owned: list = []
        self.conn = conn or run.new_conn()

    def heartbeat(self, label=None, *, see=True, epoch=None, owned="mine", **fields):
        body = cgh_body(self.group, self.member_id, self.epoch if epoch is None else epoch,
                        instance=self.instance, owned=self.owned if owned == "mine" else owned, **fields)
        r = self.conn.call("ConsumerGroupHeartbeat", self.version, body)
        if r.error_code == 0:
            self.member_id = r.member_id
            self.epoch = r.member_epoch
            if r.assignment is not None:
                self.owned = owned_of(r.assignment)
        if see:
            self.run.see(label or "heartbeat", view(r, self.ids))
        return r

    def join(self, topics=None, label="join", **fields):
        fields.setdefault("rebalance", 30_000)
        return self.heartbeat(label, epoch=0, owned=[], topics=topics, **fields)


def view(r, ids):
    out = codec_dict(r)
    out["assignment"] = named_assignment(r.assignment, ids)
    return out


def describe(run, group, ids, order=(), version=1):
    r = run.call("ConsumerGroupDescribe", version, {"group_ids": [group], "include_authorized_operations": False},
                 see=False)
    g = codec_dict(r.groups[0])
    rank = {m: i for i, m in enumerate(order)}
    members = sorted(g.get("members", []), key=lambda m: rank.get(m["member_id"], len(rank)))
    for m in members:
        for key in ("assignment", "target_assignment"):
            m[key] = {ids.get(tp["topic_id"], "?"): sorted(tp["partitions"]) for tp in m[key]["topic_partitions"]}
        m["subscribed_topic_names"] = sorted(m["subscribed_topic_names"])
    g["members"] = members
    return g


# -- joining and the first assignment ------------------------------------------------------------------------------

@pytest.mark.parametrize("version", [0, 1])
def test_join_alone_gets_everything(differ, request, version):
    """One member joins (v0: the coordinator names it; v1: the client does), gets every partition at epoch 1;
    a heartbeat with nothing new carries no assignment; ConsumerGroupDescribe v0/v1 shows it."""
    def scenario(run):
        (topic,), group, ids = setup(run)
        m = Member(run, group, ids, str(uuid.uuid4()), version=version)
        m.join([topic])
        m.heartbeat("steady")
        m.heartbeat("full again", rebalance=30_000, topics=[topic])
        for v in (0, 1):
            run.see(f"describe v{v}", describe(run, group, ids, [m.member_id], version=v))

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("case", ["no-group-id", "no-member-id-v1", "no-rebalance-timeout", "owned-on-join",
                                  "null-owned-on-join", "no-subscription", "static-leave-no-instance",
                                  "epoch-minus-3", "empty-instance", "empty-rack", "unknown-assignor",
                                  "epoch-1-no-member-v0", "leave-no-member-v0", "bad-regex"])
def test_invalid_heartbeat(differ, request, case):
    """ConsumerGroupHeartbeat that Kafka refuses before it looks at the group: INVALID_REQUEST with its
    message, UNSUPPORTED_ASSIGNOR, INVALID_REGULAR_EXPRESSION."""
    def scenario(run):
        (topic,), group, ids = setup(run)
        base = {"version": 1, "group": group, "member": "m-1", "epoch": 0,
                "fields": {"rebalance": 30_000, "topics": [topic], "owned": []}}
        f = base["fields"]
        if case == "no-group-id":
            base["group"] = ""
        elif case == "no-member-id-v1":
            base["member"] = ""
        elif case == "no-rebalance-timeout":
            f["rebalance"] = -1
        elif case == "owned-on-join":
            f["owned"] = [(next(iter(ids)), [0])]
        elif case == "null-owned-on-join":
            f["owned"] = None
        elif case == "no-subscription":
            f["topics"] = None
        elif case == "static-leave-no-instance":
            base["epoch"] = -2
        elif case == "epoch-minus-3":
            base["epoch"] = -3
        elif case == "empty-instance":
            f["instance"] = ""
        elif case == "empty-rack":
            f["rack"] = ""
        elif case == "unknown-assignor":
            f["assignor"] = "sticky"
        elif case == "epoch-1-no-member-v0":
            base.update(version=0, member="", epoch=1)
        elif case == "leave-no-member-v0":
            base.update(version=0, member="", epoch=-1)
        elif case == "bad-regex":
            f["topics"], f["regex"] = None, "t-(["
        r = run.call("ConsumerGroupHeartbeat", base["version"],
                     cgh_body(base["group"], base["member"], base["epoch"], **f), see=False)
        run.see("answer", view(r, ids))

    differ.check(request.node.name, scenario)


def test_the_target_waits_for_the_assignment_interval(differ, request):
    """group.consumer.assignment.interval.ms (1 s by default): b joins right after a, so the new target waits: b
    is at the previous epoch with nothing and the group is Assigning; a heartbeat after the interval computes it,
    and the members reconcile (a revokes, then b is assigned)."""
    def scenario(run):
        (topic,), group, ids = setup(run)
        a = Member(run, group, ids, "a-" + run.token)
        b = Member(run, group, ids, "b-" + run.token)
        a.heartbeat(see=False, epoch=0, owned=[], topics=[topic], rebalance=30_000)
        b.join([topic], label="b joins at once")
        d = describe(run, group, ids, [a.member_id, b.member_id])
        run.see("describe", {k: d[k] for k in ("group_state", "group_epoch", "assignment_epoch")})

        def reconciled():
            a.heartbeat(see=False)
            b.heartbeat(see=False)
            return describe(run, group, ids)["group_state"] == "Stable"
        run.until("the group reconciles", reconciled, timeout=15, interval=0.2)
        run.see("final", describe(run, group, ids, [a.member_id, b.member_id]))

    differ.check(request.node.name, scenario)


def test_join_with_empty_subscription_and_unknown_topics(differ, request):
    """A member may join subscribed to nothing, or to a topic that does not exist (yet): it is in the group at
    an epoch with an empty assignment; the topic created later is assigned on a following heartbeat."""
    def scenario(run):
        (topic,), group, ids = setup(run)
        later = run.name("t") + "-later"
        a = Member(run, group, ids, "a-" + run.token)
        a.join([])
        b = Member(run, group, ids, "b-" + run.token)
        b.join([later])
        run.see("describe", describe(run, group, ids, [a.member_id, b.member_id]))
        run.create_topic(later, partitions=2)
        ids[topic_id(run, later)] = later
        run.until("the new topic is assigned", lambda: b.heartbeat(see=False).assignment is not None
                  or b.owned, timeout=20, interval=0.3)
        run.see("b owns", named_assignment_of(b))
        run.see("describe after", describe(run, group, ids, [a.member_id, b.member_id]))

    differ.check(request.node.name, scenario)


def named_assignment_of(member):
    return {member.ids.get(t, "?"): sorted(ps) for t, ps in member.owned}


# -- two members: revocation before assignment ---------------------------------------------------------------------

@pytest.mark.parametrize("assignor", ["uniform", "range"])
def test_second_member_revocation_then_assignment(differ, request, assignor):
    """a owns all four partitions; b joins: b's first answer is at the new epoch with nothing (a still owns
    them), a is asked to give two up (same epoch, smaller assignment), acknowledges by heartbeat, and only then
    b receives them. Each step and the described group are observed."""
    def scenario(run):
        (topic,), group, ids = setup(run)
        a = Member(run, group, ids, "a-" + run.token)
        b = Member(run, group, ids, "b-" + run.token)
        order = [a.member_id, b.member_id]
        a.join([topic], assignor=assignor)
        b.join([topic], assignor=assignor)
        run.see("describe after b joined", describe(run, group, ids, order))
        a.heartbeat("a told to revoke")
        run.see("describe while revoking", describe(run, group, ids, order))
        b.heartbeat("b before a revoked")
        a.heartbeat("a acknowledges")
        b.heartbeat("b gets the rest")
        a.heartbeat("a steady")
        b.heartbeat("b steady")
        run.see("describe stable", describe(run, group, ids, order))

    differ.check(request.node.name, scenario, config=FAST)


def test_member_leaves_and_partitions_move(differ, request):
    """b leaves (epoch -1): the answer echoes -1, the group epoch moves, a gets b's partitions on its next
    heartbeat; a leave of an unknown member is UNKNOWN_MEMBER_ID; the last leave empties the group."""
    def scenario(run):
        (topic,), group, ids = setup(run)
        a, b = settle_two(run, group, ids, topic)
        b.heartbeat("b leaves", epoch=-1, owned=None)
        run.see("describe", describe(run, group, ids, [a.member_id, b.member_id]))
        a.heartbeat("a takes over")
        b.heartbeat("b leaves again", epoch=-1, owned=None)
        run.call("ConsumerGroupHeartbeat", 1, cgh_body(group, "nobody", -1), label="unknown leaves")
        a.heartbeat("a leaves", epoch=-1, owned=None)
        run.see("describe empty", describe(run, group, ids, [a.member_id]))
        run.see("list", list_groups(run, [group], types=["consumer"]))

    differ.check(request.node.name, scenario, config=FAST)


def settle_two(run, group, ids, topic, *, instances=(None, None)):
    """a and b, reconciled (not observed)."""
    a = Member(run, group, ids, "a-" + run.token, instance=instances[0])
    b = Member(run, group, ids, "b-" + run.token, instance=instances[1])
    a.heartbeat(see=False, epoch=0, owned=[], topics=[topic], rebalance=30_000)
    b.heartbeat(see=False, epoch=0, owned=[], topics=[topic], rebalance=30_000)
    for _ in range(4):
        a.heartbeat(see=False)
        b.heartbeat(see=False)
    return a, b


def test_fencing(differ, request):
    """Epochs the coordinator does not know: ahead (FENCED_MEMBER_EPOCH), behind without a matching owned set
    (FENCED_MEMBER_EPOCH), an unknown member (UNKNOWN_MEMBER_ID), a heartbeat to a group that does not exist
    (GROUP_ID_NOT_FOUND), a classic group's id (GROUP_ID_NOT_FOUND)."""
    def scenario(run):
        (topic,), group, ids = setup(run)
        a, b = settle_two(run, group, ids, topic)
        a.heartbeat("ahead", epoch=a.epoch + 1)
        a.heartbeat("behind", epoch=a.epoch - 1, owned=[])
        a.heartbeat("behind, no owned", epoch=a.epoch - 1, owned=None)
        r = run.call("ConsumerGroupHeartbeat", 1, cgh_body(group, "nobody", 1), see=False)
        run.see("unknown member", view(r, ids))
        r = run.call("ConsumerGroupHeartbeat", 1, cgh_body(group + "-none", "m", 1), see=False)
        run.see("no group", view(r, ids))
        classic = group + "-classic"
        conn = run.new_conn()
        joined = conn.call("JoinGroup", 3, join_body(classic, topics=(topic,)))
        run.see("classic join", joined.error_code)
        r = run.call("ConsumerGroupHeartbeat", 1, cgh_body(classic, "m", 0, rebalance=30_000, topics=[topic],
                                                           owned=[]), see=False)
        # Kafka upgrades the classic group (online migration); which half of the partitions the new member gets
        # depends on where the classic member's random id falls in a Java HashMap, so only the count is shown.
        got = view(r, ids)
        got["assignment"] = {t: len(ps) for t, ps in (got["assignment"] or {}).items()}
        run.see("classic group", got)
        run.see("classic group described", {k: v for k, v in describe(run, classic, ids).items()
                                            if k in ("group_state", "group_epoch", "assignment_epoch")})
        a.heartbeat("still fine")

    differ.check(request.node.name, scenario, config=FAST)


def test_stale_epoch_with_owned_subset_is_accepted(differ, request):
    """A member that missed the answer bumping its epoch may heartbeat with its previous epoch if it owns only
    partitions of its assignment (Kafka accepts it and answers with the current epoch)."""
    def scenario(run):
        (topic,), group, ids = setup(run)
        a = Member(run, group, ids, "a-" + run.token)
        a.join([topic])
        first = a.epoch
        b = Member(run, group, ids, "b-" + run.token)
        b.join([topic])
        a.heartbeat("a revokes")
        a.heartbeat("a acknowledges")
        b.heartbeat("b assigned")
        a.heartbeat("with the previous epoch", epoch=first)
        run.see("describe", describe(run, group, ids, [a.member_id, b.member_id]))

    differ.check(request.node.name, scenario, config=FAST)


# -- static members ------------------------------------------------------------------------------------------------

def test_static_member_leaves_and_rejoins_with_a_new_id(differ, request):
    """A static member leaves with epoch -2 (it keeps its place); a new member id with the same instance takes
    over its assignment; a second join of the instance while it is held is UNRELEASED_INSTANCE_ID; the old id
    is then UNKNOWN_MEMBER_ID (or FENCED_INSTANCE_ID with the instance)."""
    def scenario(run):
        (topic,), group, ids = setup(run)
        a, b = settle_two(run, group, ids, topic, instances=("ia", None))
        order = [a.member_id, b.member_id]
        a.heartbeat("a leaves for now", epoch=-2, owned=None)
        run.see("describe after -2", describe(run, group, ids, order))
        again = Member(run, group, ids, "a2-" + run.token, instance="ia")
        order.append(again.member_id)
        again.join([topic], label="rejoin")
        run.see("describe after rejoin", describe(run, group, ids, order))
        dup = Member(run, group, ids, "a3-" + run.token, instance="ia")
        dup.join([topic], label="duplicate")
        a.heartbeat("old id", epoch=a.epoch if a.epoch > 0 else 1)
        run.call("ConsumerGroupHeartbeat", 1, cgh_body(group, a.member_id, 1, instance="ia"), see=False)
        r = run.call("ConsumerGroupHeartbeat", 1, cgh_body(group, a.member_id, 1, instance="ia"), see=False)
        run.see("old id with instance", view(r, ids))
        b.heartbeat("b unaffected")

    differ.check(request.node.name, scenario, config=FAST)


def test_static_member_fenced_and_unknown_instance(differ, request):
    def scenario(run):
        (topic,), group, ids = setup(run)
        a = Member(run, group, ids, "a-" + run.token, instance="ia")
        a.join([topic])
        r = run.call("ConsumerGroupHeartbeat", 1, cgh_body(group, "other", a.epoch, instance="ia"), see=False)
        run.see("other member id", view(r, ids))
        r = run.call("ConsumerGroupHeartbeat", 1, cgh_body(group, a.member_id, a.epoch, instance="ib"), see=False)
        run.see("unknown instance", view(r, ids))
        r = run.call("ConsumerGroupHeartbeat", 1, cgh_body(group, "other", -2, instance="ia"), see=False)
        run.see("leave by another id", view(r, ids))
        a.heartbeat("leave", epoch=-1, owned=None)
        run.see("describe", describe(run, group, ids, [a.member_id]))

    differ.check(request.node.name, scenario, config=FAST)


# -- subscriptions -------------------------------------------------------------------------------------------------

def test_subscription_change_moves_the_epoch(differ, request):
    """A member changes its topic names: a new group epoch, a target with the new topic, and the old topic's
    partitions revoked first."""
    def scenario(run):
        (t1, t2), group, ids = setup(run, partitions=2, topics=2)
        a = Member(run, group, ids, "a-" + run.token)
        a.join([t1])
        a.heartbeat("a subscribes to both", topics=[t1, t2])
        a.heartbeat("a moves to the second", topics=[t2])
        a.heartbeat("a acknowledges")
        a.heartbeat("a steady")
        run.see("describe", describe(run, group, ids, [a.member_id]))

    differ.check(request.node.name, scenario, config=FAST)


def test_regex_subscription(differ, request):
    """SubscribedTopicRegex (v1): resolved by the coordinator (asynchronously in Kafka); the member ends up with
    the matching topics' partitions, never an internal topic's; the group describes the regex."""
    def scenario(run):
        (t1, t2), group, ids = setup(run, partitions=2, topics=2)
        a = Member(run, group, ids, "a-" + run.token)
        a.join(None, regex=run.name("t") + ".*")

        def assigned():
            a.heartbeat(see=False)
            return sum(len(ps) for _, ps in a.owned) == 4
        run.until("the regex is resolved", assigned, timeout=20, interval=0.2)
        run.see("owned", named_assignment_of(a))
        run.see("describe", describe(run, group, ids, [a.member_id]))
        a.heartbeat("steady")

    differ.check(request.node.name, scenario)


def test_regex_matching_nothing_then_names(differ, request):
    def scenario(run):
        (topic,), group, ids = setup(run)
        a = Member(run, group, ids, "a-" + run.token)
        a.join(None, regex="nothing-matches-" + run.token)
        run.see("describe", describe(run, group, ids, [a.member_id]))
        a.heartbeat("to names", topics=[topic], regex="")

        def assigned():
            a.heartbeat(see=False)
            return bool(a.owned)
        run.until("the topic is assigned", assigned, timeout=20, interval=0.2)
        run.see("owned", named_assignment_of(a))
        run.see("describe after", describe(run, group, ids, [a.member_id]))

    differ.check(request.node.name, scenario)


# -- describe, list, delete ----------------------------------------------------------------------------------------

def test_consumer_group_describe_errors(differ, request):
    """ConsumerGroupDescribe of an unknown group, a classic group, an empty id; DescribeGroups of a consumer
    group; ListGroups with the consumer type; DeleteGroups of a non-empty and then empty consumer group."""
    def scenario(run):
        (topic,), group, ids = setup(run)
        classic = group + "-classic"
        run.new_conn().call("JoinGroup", 3, join_body(classic, topics=(topic,)))
        a = Member(run, group, ids, "a-" + run.token)
        a.heartbeat(see=False, epoch=0, owned=[], topics=[topic], rebalance=30_000)
        for v in (0, 1):
            r = run.call("ConsumerGroupDescribe", v, {"group_ids": [group + "-unknown", classic, ""],
                                                     "include_authorized_operations": True}, see=False)
            run.see(f"errors v{v}", sorted((codec_dict(g) for g in r.groups), key=lambda g: g["group_id"]))
        run.see("describe groups", codec_dict(describe_group(run, group)))
        run.see("describe groups v6", codec_dict(describe_group(run, group, version=6)))
        run.see("list consumer", list_groups(run, [group, classic], types=["consumer"]))
        run.see("list all", list_groups(run, [group, classic]))
        run.call("DeleteGroups", 2, {"groups_names": [group]}, label="delete non-empty")
        a.heartbeat("leave", epoch=-1, owned=None, see=False)
        run.call("DeleteGroups", 2, {"groups_names": [group]}, label="delete empty")
        run.see("describe deleted", describe(run, group, ids))

    differ.check(request.node.name, scenario)


def test_classic_join_to_empty_consumer_group_converts_it(differ, request):
    """An Empty consumer group (its members left, offsets kept) becomes a classic group on JoinGroup; a
    KIP-848 heartbeat into an Empty classic group converts it back."""
    def scenario(run):
        (topic,), group, ids = setup(run)
        a = Member(run, group, ids, "a-" + run.token)
        a.heartbeat(see=False, epoch=0, owned=[], topics=[topic], rebalance=30_000)
        run.call("OffsetCommit", 9, {"group_id": group, "generation_id_or_member_epoch": a.epoch,
                                     "member_id": a.member_id, "topics": [{"name": topic, "partitions": [
                                         {"partition_index": 0, "committed_offset": 3}]}]}, label="commit")
        a.heartbeat("leave", epoch=-1, owned=None)
        conn = run.new_conn()
        joined = conn.call("JoinGroup", 3, join_body(group, topics=(topic,)))
        run.see("classic join", {"error": joined.error_code, "generation": joined.generation_id})
        run.see("describe classic", codec_dict(describe_group(run, group)).get("group_state"))
        run.call("LeaveGroup", 3, {"group_id": group, "members": [{"member_id": joined.member_id}]},
                 label="classic leave", conn=conn)
        b = Member(run, group, ids, "b-" + run.token)
        b.join([topic])
        run.see("describe", describe(run, group, ids, [b.member_id]))
        run.call("OffsetFetch", 8, {"groups": [{"group_id": group, "topics": None}], "require_stable": False},
                 label="offsets kept")

    differ.check(request.node.name, scenario)


# -- timeouts (short sessions) -------------------------------------------------------------------------------------

def test_session_timeout_fences_a_silent_member(differ, request):
    """b stops heartbeating: after group.consumer.session.timeout.ms it is fenced, the group epoch moves and a
    gets b's partitions; b's next heartbeat is UNKNOWN_MEMBER_ID."""
    def scenario(run):
        (topic,), group, ids = setup(run)
        a, b = settle_two(run, group, ids, topic)
        order = [a.member_id, b.member_id]

        def b_gone():
            a.heartbeat(see=False)
            return len(describe(run, group, ids, order)["members"]) == 1
        run.until("b's session runs out", b_gone, timeout=15, interval=0.3)
        for _ in range(3):
            a.heartbeat(see=False)
        run.see("a owns", named_assignment_of(a))
        run.see("describe", describe(run, group, ids, order))
        b.heartbeat("b comes back")

    differ.check(request.node.name, scenario, config=FAST)


def test_rebalance_timeout_fences_a_member_that_keeps_partitions(differ, request):
    """a is asked to revoke partitions but keeps reporting them: after its rebalance timeout it is fenced
    (FENCED_MEMBER_EPOCH on its next heartbeat), and b gets everything."""
    def scenario(run):
        (topic,), group, ids = setup(run)
        a = Member(run, group, ids, "a-" + run.token)
        a.heartbeat("a joins", epoch=0, owned=[], topics=[topic], rebalance=1500)
        b = Member(run, group, ids, "b-" + run.token)
        b.heartbeat("b joins", epoch=0, owned=[], topics=[topic], rebalance=1500)
        kept = list(a.owned)
        a.heartbeat("a told to revoke")
        a.owned = kept

        def a_fenced():
            r = a.heartbeat(see=False, owned=kept)           # a never gives anything up
            b.heartbeat(see=False)
            return r.error_code != 0
        started = time.monotonic()
        run.until("a is fenced", a_fenced, timeout=15, interval=0.3)
        run.see("fenced within bounds", time.monotonic() - started < 10)
        for _ in range(3):
            b.heartbeat(see=False)
        run.see("b owns", named_assignment_of(b))
        run.see("describe", describe(run, group, ids, [a.member_id, b.member_id]))

    differ.check(request.node.name, scenario, config=FAST)


def test_regex_picks_up_a_topic_created_later(differ, request):
    """A regex subscription and a matching topic created afterwards: the coordinator resolves regexes again
    when new topics exist, no sooner than ten seconds after the last resolution; the member then gets the new
    topic's partitions at a new epoch."""
    def scenario(run):
        (topic,), group, ids = setup(run, partitions=2)
        later = run.name("t") + "-later"
        a = Member(run, group, ids, "a-" + run.token)
        a.join(None, regex=run.name("t") + ".*")
        run.until("the regex is resolved", lambda: a.heartbeat(see=False) and len(a.owned) == 1, timeout=20,
                  interval=0.2)
        run.see("first", named_assignment_of(a))
        run.create_topic(later, partitions=2)
        ids[topic_id(run, later)] = later
        run.until("the new topic is assigned", lambda: a.heartbeat(see=False) and len(a.owned) == 2, timeout=30,
                  interval=0.3)
        run.see("then", named_assignment_of(a))
        run.see("describe", describe(run, group, ids, [a.member_id]))

    differ.check(request.node.name, scenario)


def test_librdkafka_consumer_protocol(differ, request):
    """librdkafka with group.protocol=consumer: it joins, gets every partition, the group describes it as a
    consumer member; close leaves (epoch -1) and the group is Empty."""
    confluent_kafka = pytest.importorskip("confluent_kafka")

    def scenario(run):
        (topic,), group, ids = setup(run, partitions=3)
        c = confluent_kafka.Consumer({"bootstrap.servers": run.target.bootstrap_servers, "group.id": group,
                                      "group.protocol": "consumer", "enable.auto.commit": False, "log_level": 0})
        c.subscribe([topic])
        run.until("assigned", lambda: c.poll(0.05) is None and len(c.assignment()) == 3, timeout=30, interval=0)
        run.see("assignment", sorted(p.partition for p in c.assignment()))
        d = describe(run, group, ids)
        run.see("describe", {k: d[k] for k in ("group_state", "group_epoch", "assignment_epoch", "assignor_name")}
                | {"members": [{k: m[k] for k in ("member_epoch", "subscribed_topic_names", "assignment",
                                                  "member_type", "subscribed_topic_regex")} for m in d["members"]]})
        c.close()
        run.until("the group is empty", lambda: describe(run, group, ids)["group_state"] == "Empty", timeout=15)
        run.see("after close", describe(run, group, ids)["group_epoch"])

    differ.check(request.node.name, scenario)


def test_classic_member_joins_a_consumer_group(differ, request):
    """Online migration: a classic consumer (JoinGroup/SyncGroup/Heartbeat) joins a group run by the KIP-848
    protocol: MEMBER_ID_REQUIRED first, then a generation equal to its member epoch with no leader and no member
    list; SyncGroup hands it its assignment; the group describes it as a classic member; it leaves with
    LeaveGroup."""
    from support.group_steps import heartbeat_body, read_assignment, subscription, sync_body

    def scenario(run):
        (topic,), group, ids = setup(run)
        a = Member(run, group, ids, "a-" + run.token)
        a.join([topic])
        conn = run.new_conn()
        protocols = [("range", subscription(topic, version=1))]
        first = conn.call("JoinGroup", 9, join_body(group, protocols=protocols))
        run.see("join (no id)", codec_dict(first))
        joined = conn.call("JoinGroup", 9, join_body(group, first.member_id, protocols=protocols))
        run.see("join", codec_dict(joined))
        synced = conn.call("SyncGroup", 5, sync_body(group, joined.generation_id, joined.member_id))
        run.see("sync", {**codec_dict(synced), "assignment": read_assignment(synced.assignment)})
        run.see("heartbeat", conn.call("Heartbeat", 4, heartbeat_body(group, joined.generation_id,
                                                                      joined.member_id)).error_code)
        a.heartbeat("a after the classic member joined")
        run.see("describe", describe(run, group, ids, [a.member_id, joined.member_id]))
        left = conn.call("LeaveGroup", 5, {"group_id": group, "members": [{"member_id": joined.member_id,
                                                                           "group_instance_id": None}]})
        run.see("leave", codec_dict(left))
        run.see("describe after", describe(run, group, ids, [a.member_id]))

    differ.check(request.node.name, scenario, config=FAST)
