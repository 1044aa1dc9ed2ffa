"""Committed offsets, differential: OffsetCommit v2-v10 and OffsetFetch v1-v10 (v8+: several groups, v10: topic
ids), who may commit (generations, members, KIP-848 epochs with KIP-1251's per-partition epochs), unknown topics
and partitions, metadata over offset.metadata.max.bytes, RequireStable with a pending transactional commit, and
KIP-211 expiry of offsets committed with their own retention, on Apache Kafka 4.3.1 and on kafkamock.

Answers are shown with topics and partitions sorted (Kafka answers unknown topics before the others).
"""

from __future__ import annotations

import uuid

import pytest
from support.group_steps import (
    assignment,
    cgh_body,
    coordinator_sees,
    describe_group,
    join_body,
    join_new,
    park,
    sync_body,
    topic_and_group,
    topic_id,
)

MADE_UP_ID = uuid.UUID("5f3c2a9e-0000-4000-8000-000000000001")
# Offsets committed with their own retention (v2-v4) expire at the next cleanup after it: run it often.
FAST_CLEANUP = {"offsets.retention.check.interval.ms": 500}


def setup(run, partitions: int = 3):
    return topic_and_group(run, partitions)


def commit_body(group, topics, *, version, generation=-1, member="", instance=None, retention=-1, ids=None):
    """``topics``: {name: {partition: (offset, metadata)}}; v10 names topics by id (``ids``: name -> id, unknown
    names get a made-up id)."""
    out = []
    for name, parts in topics.items():
        entry = {"partitions": [{"partition_index": p, "committed_offset": o, "committed_leader_epoch": 7,
                                 "committed_metadata": m} for p, (o, m) in parts.items()]}
        if version >= 10:
            entry["topic_id"] = (ids or {}).get(name, MADE_UP_ID)
        else:
            entry["name"] = name
        out.append(entry)
    return {"group_id": group, "generation_id_or_member_epoch": generation, "member_id": member,
            "group_instance_id": instance, "retention_time_ms": retention, "topics": out}


def commit_view(r, names=None):
    """An OffsetCommit answer as sorted (topic, partition, error) triples (v10 ids shown as names)."""
    names = names or {}
    rows = []
    for t in r.topics:
        key = t.name if "name" in t else names.get(str(t.topic_id), "id?")
        rows.extend((key, p.partition_index, p.error_code) for p in t.partitions)
    return sorted(rows)


def fetch_view(topics, names=None):
    names = names or {}
    rows = []
    for t in topics:
        key = t.name if "name" in t and t.name else names.get(str(t.get("topic_id")), "id?")
        for p in t.partitions:
            rows.append((key, p.partition_index, p.committed_offset, p.get("committed_leader_epoch"),
                         p.metadata, p.error_code))
    return sorted(rows, key=str)


def fetch(run, version, group, topics, *, require_stable=False, member_id=None, member_epoch=-1, ids=None):
    """OffsetFetch of one group at ``version``: ``topics`` {name: [partitions]} or None (all)."""
    if version >= 8:
        asked = None if topics is None else [
            ({"topic_id": (ids or {}).get(n, MADE_UP_ID)} if version >= 10
             else {"name": n}) | {"partition_indexes": ps} for n, ps in topics.items()]
        body = {"groups": [{"group_id": group, "member_id": member_id, "member_epoch": member_epoch,
                            "topics": asked}], "require_stable": require_stable}
        r = run.call("OffsetFetch", version, body, see=False)
        g = r.groups[0]
        return {"error_code": g.error_code, "offsets": fetch_view(g.topics, {str(v): k for k, v in
                                                                             (ids or {}).items()})}
    body = {"group_id": group, "topics": None if topics is None else [
        {"name": n, "partition_indexes": ps} for n, ps in topics.items()], "require_stable": require_stable}
    r = run.call("OffsetFetch", version, body, see=False)
    return {"error_code": r.get("error_code"), "offsets": fetch_view(r.topics)}


# -- every version ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", range(2, 11))
def test_standalone_commit_and_fetch_each_version(differ, request, version):
    """A standalone commit (no generation, no member) at OffsetCommit vN: stored offsets, leader epochs (v6+),
    metadata, an unknown topic and a partition the topic lacks; fetched back at OffsetFetch vN (all partitions
    and named ones, a never-committed partition, an unknown topic); the group it makes."""
    def scenario(run):
        topic, group = setup(run)
        ids = {topic: topic_id(run, topic)}
        missing = run.name("nope")
        body = commit_body(group, {topic: {0: (10, "m0"), 1: (11, None), 9: (1, "")}, missing: {0: (5, "x")}},
                           version=version, ids=ids)
        run.see("commit", commit_view(run.call("OffsetCommit", version, body, see=False),
                                      {str(v): k for k, v in ids.items()}))
        run.see("fetch all", fetch(run, version, group, None, ids=ids))
        run.see("fetch named", fetch(run, version, group, {topic: [0, 1, 2], missing: [0]}, ids=ids))
        run.see("describe", describe_group(run, group))

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("version", [1, 2, 5, 7])
def test_fetch_old_versions_of_an_unknown_group(differ, request, version):
    """OffsetFetch v1-v7 of a group that does not exist: -1 for each partition asked, no error."""
    def scenario(run):
        topic, group = setup(run)
        run.see("named", fetch(run, version, group, {topic: [0, 1]}))
        if version >= 2:
            run.see("all", fetch(run, version, group, None))

    differ.check(request.node.name, scenario)


def test_commit_only_unknown_topics_makes_no_group(differ, request):
    """Kafka answers unknown topics before it looks at the group: a commit naming only those neither creates a
    group nor checks the generation."""
    def scenario(run):
        _, group = setup(run)
        missing = run.name("nope")
        for version, generation in ((9, 3), (8, 3), (9, -1)):
            r = run.call("OffsetCommit", version, commit_body(group, {missing: {0: (1, "")}}, version=version,
                                                              generation=generation, member="m"), see=False)
            run.see(f"v{version} generation {generation}", commit_view(r))
        run.see("describe", describe_group(run, group))

    differ.check(request.node.name, scenario)


def test_metadata_size_limit(differ, request):
    """offset.metadata.max.bytes (4096): one byte over is OFFSET_METADATA_TOO_LARGE for that partition only."""
    def scenario(run):
        topic, group = setup(run)
        body = commit_body(group, {topic: {0: (1, "m" * 4096), 1: (2, "m" * 4097), 2: (3, "")}}, version=9)
        run.see("commit", commit_view(run.call("OffsetCommit", 9, body, see=False)))
        got = fetch(run, 9, group, None)
        run.see("fetch", [(t, p, o, e, len(m), err) for t, p, o, e, m, err in got["offsets"]])

    differ.check(request.node.name, scenario)


# -- who may commit: classic groups ---------------------------------------------------------------------------------

def stable_member(run, topic, group, **kw):
    conn = run.new_conn()
    joined = join_new(run, conn, group, see=False, topics=(topic,), **kw)
    conn.call("SyncGroup", 5, sync_body(group, joined.generation_id, joined.member_id,
                                        {joined.member_id: assignment({topic: [0, 1, 2]})},
                                        instance=kw.get("instance")))
    return joined.member_id, joined.generation_id, conn


def test_classic_member_checks(differ, request):
    """A classic group's member commits at its generation; a wrong generation, an unknown member, no member at all
    (into a group with members), an unknown or another instance, a group that does not exist with a generation
    (v8: ILLEGAL_GENERATION, v9: GROUP_ID_NOT_FOUND) are refused for every partition, unknown topics included."""
    def scenario(run):
        topic, group = setup(run)
        member, generation, conn = stable_member(run, topic, group, instance="i-1")
        good = {topic: {0: (5, "ok")}}
        with_unknown = {topic: {0: (6, "")}, run.name("nope"): {0: (1, "")}}
        cases = [
            ("member", good, generation, member, "i-1", 9),
            ("wrong generation", with_unknown, generation + 1, member, "i-1", 9),
            ("unknown member", good, generation, "nobody", None, 9),
            ("no member", good, -1, "", None, 9),
            ("no member, a generation", good, generation, "", None, 9),
            ("unknown instance", good, generation, member, "i-2", 9),
            ("other member, instance", good, generation, "nobody", "i-1", 9),
            ("v2", good, generation, member, None, 2),
            ("v6 old generation", good, generation - 1, member, None, 6),
            ("no group v8", {topic: {0: (1, "")}}, 3, "m", None, 8),
        ]
        for label, topics, gen, who, instance, version in cases:
            target = group if not label.startswith("no group") else group + "-none"
            body = commit_body(target, topics, version=version, generation=gen, member=who, instance=instance)
            run.see(label, commit_view(run.call("OffsetCommit", version, body, see=False)))
        body = commit_body(group + "-none", {topic: {0: (1, "")}}, version=9, generation=3, member="m")
        run.see("no group v9", commit_view(run.call("OffsetCommit", 9, body, see=False)))
        body = commit_body("", {topic: {0: (1, "")}}, version=9)
        run.see("empty group id", commit_view(run.call("OffsetCommit", 9, body, see=False)))
        run.see("empty group id fetched", fetch(run, 9, "", None))
        run.see("fetch", fetch(run, 9, group, None))

    differ.check(request.node.name, scenario)


def test_commit_while_rebalancing(differ, request):
    """A member's commit while the group completes a rebalance is REBALANCE_IN_PROGRESS; during the join phase
    (PreparingRebalance) it is accepted at the current generation."""
    def scenario(run):
        topic, group = setup(run)
        a, generation, a_conn = stable_member(run, topic, group)
        b_conn = run.new_conn()
        first = b_conn.call("JoinGroup", 9, join_body(group, topics=(topic,)))
        park(run, b_conn, group, "JoinGroup", 9, join_body(group, first.member_id, topics=(topic,)))
        body = commit_body(group, {topic: {0: (3, "")}}, version=9, generation=generation, member=a)
        run.see("preparing", commit_view(run.call("OffsetCommit", 9, body, see=False)))
        ra = a_conn.call("JoinGroup", 9, join_body(group, a, topics=(topic,)))
        b_conn.receive("JoinGroup", 9)
        body = commit_body(group, {topic: {0: (4, "")}}, version=9, generation=ra.generation_id, member=a)
        run.see("completing", commit_view(run.call("OffsetCommit", 9, body, see=False)))
        body = commit_body(group, {topic: {0: (4, "")}}, version=9, generation=generation, member=a)
        run.see("completing, old generation", commit_view(run.call("OffsetCommit", 9, body, see=False)))
        run.see("fetch", fetch(run, 9, group, None))

    differ.check(request.node.name, scenario)


# -- who may commit: KIP-848 members --------------------------------------------------------------------------------

def test_consumer_member_commits_and_fetches(differ, request):
    """A KIP-848 member commits with OffsetCommit v9+ at its epoch; an older epoch is accepted only for partitions
    assigned at or before it (KIP-1251), else STALE_MEMBER_EPOCH for the whole request; a newer one is
    STALE_MEMBER_EPOCH; v8 is UNSUPPORTED_VERSION; OffsetFetch v9 checks the member and its epoch."""
    def scenario(run):
        topic, group = setup(run, partitions=4)
        coordinator_sees(run, group + "-probe", [topic])
        tid = topic_id(run, topic)
        ids = {topic: tid}

        def beat(member, epoch, owned, **kw):
            return run.call("ConsumerGroupHeartbeat", 1, cgh_body(group, member, epoch, owned=owned, **kw),
                            see=False)
        a = beat("a-" + run.token, 0, [], rebalance=30_000, topics=[topic])
        first_epoch = a.member_epoch
        owned_a = [(tid, sorted(tp.partitions)) for tp in a.assignment.topic_partitions]
        state = {"a": a, "owned_a": owned_a, "b": beat("b-" + run.token, 0, [], rebalance=30_000, topics=[topic]),
                 "owned_b": []}

        def settled():                                       # revoke, then assign (after the assignment interval)
            a = state["a"] = beat(state["a"].member_id, state["a"].member_epoch, state["owned_a"])
            if a.assignment is not None:
                state["owned_a"] = [(tid, sorted(tp.partitions)) for tp in a.assignment.topic_partitions]
            b = state["b"] = beat(state["b"].member_id, state["b"].member_epoch, state["owned_b"])
            if b.assignment is not None:
                state["owned_b"] = [(tid, sorted(tp.partitions)) for tp in b.assignment.topic_partitions]
            sizes = [sum(len(ps) for _, ps in state[k]) for k in ("owned_a", "owned_b")]
            return sizes == [2, 2] and a.member_epoch == b.member_epoch
        run.until("both members own two partitions", settled, timeout=15, interval=0.2)
        a, b, owned_a = state["a"], state["b"], state["owned_a"]
        run.see("epochs", (first_epoch, a.member_epoch, b.member_epoch))
        mine = owned_a[0][1][0] if owned_a else 0
        cases = [("current", a.member_epoch, 9), ("first epoch", first_epoch, 9), ("older", first_epoch - 1, 9),
                 ("newer", a.member_epoch + 1, 10), ("v8", a.member_epoch, 8)]
        for label, epoch, version in cases:
            body = commit_body(group, {topic: {mine: (7, "")}}, version=version, generation=epoch,
                               member=a.member_id, ids=ids)
            run.see(label, commit_view(run.call("OffsetCommit", version, body, see=False),
                                       {str(v): k for k, v in ids.items()}))
        other = [p for p in range(4) if p not in (owned_a[0][1] if owned_a else [])][0]
        body = commit_body(group, {topic: {other: (7, "")}}, version=9, generation=a.member_epoch - 1,
                           member=a.member_id)
        run.see("not its partition, older epoch", commit_view(run.call("OffsetCommit", 9, body, see=False)))
        body = commit_body(group, {topic: {other: (8, "")}}, version=9, generation=-1, member="")
        run.see("admin commit", commit_view(run.call("OffsetCommit", 9, body, see=False)))
        run.see("fetch as member", fetch(run, 9, group, None, member_id=a.member_id, member_epoch=a.member_epoch))
        run.see("fetch stale", fetch(run, 9, group, None, member_id=a.member_id, member_epoch=first_epoch))
        run.see("fetch unknown member", fetch(run, 9, group, None, member_id="nobody", member_epoch=1))
        run.see("fetch empty member id", fetch(run, 9, group, None, member_id="", member_epoch=-1))
        run.see("fetch admin", fetch(run, 10, group, {topic: [0, 1, 2, 3]}, ids=ids))

    differ.check(request.node.name, scenario)


# -- several groups, RequireStable ------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", [8, 9, 10])
def test_fetch_several_groups(differ, request, version):
    """OffsetFetch v8+: a group with offsets (all and named partitions), an unknown group, an empty group id, each
    answered on its own, in the order asked."""
    def scenario(run):
        topic, group = setup(run)
        ids = {topic: topic_id(run, topic)}
        run.call("OffsetCommit", 9, commit_body(group, {topic: {0: (3, "a"), 2: (4, "b")}}, version=9), see=False)
        asked = [{"name": topic} if version < 10 else {"topic_id": ids[topic]}]
        asked[0]["partition_indexes"] = [0, 1]
        body = {"groups": [{"group_id": group, "topics": None}, {"group_id": group, "topics": asked},
                           {"group_id": group + "-unknown", "topics": None},
                           {"group_id": group + "-unknown", "topics": asked}],
                "require_stable": version >= 9}
        r = run.call("OffsetFetch", version, body, see=False)
        names = {str(v): k for k, v in ids.items()}
        run.see("groups", [(g.group_id, g.error_code, fetch_view(g.topics, names)) for g in r.groups])

    differ.check(request.node.name, scenario)


def test_require_stable_with_a_pending_transactional_commit(differ, request):
    """TxnOffsetCommit in an open transaction: OffsetFetch with RequireStable answers UNSTABLE_OFFSET_COMMIT for
    the pending partition (v7: at the top), without it the last committed offset; after EndTxn the offset is
    the transaction's."""
    def scenario(run):
        topic, group = setup(run)
        txn = run.name("tx")
        run.call("OffsetCommit", 9, commit_body(group, {topic: {0: (1, "")}}, version=9), see=False)

        def coordinator():
            r = run.call("FindCoordinator", 4, {"key_type": 1, "coordinator_keys": [txn]}, see=False)
            return r.coordinators[0].error_code == 0
        run.until("a transaction coordinator", coordinator)
        init = {}

        def initialised():
            r = run.call("InitProducerId", 4, {"transactional_id": txn, "transaction_timeout_ms": 60_000,
                                               "producer_id": -1, "producer_epoch": -1}, see=False)
            init["r"] = r
            return r.error_code == 0
        run.until("InitProducerId", initialised)
        pid, epoch = init["r"].producer_id, init["r"].producer_epoch
        added = run.call("AddOffsetsToTxn", 3, {"transactional_id": txn, "producer_id": pid,
                                                "producer_epoch": epoch, "group_id": group}, see=False)
        run.see("add offsets", added.error_code)
        committed = run.call("TxnOffsetCommit", 3, {
            "transactional_id": txn, "group_id": group, "producer_id": pid, "producer_epoch": epoch,
            "generation_id": -1, "member_id": "", "group_instance_id": None,
            "topics": [{"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 9,
                                                       "committed_leader_epoch": -1,
                                                       "committed_metadata": "txn"}]}]}, see=False)
        run.see("txn commit", [(p.partition_index, p.error_code) for t in committed.topics for p in t.partitions])
        run.see("stable v9", fetch(run, 9, group, {topic: [0, 1]}, require_stable=True))
        run.see("stable v7", fetch(run, 7, group, {topic: [0, 1]}, require_stable=True))
        run.see("unstable allowed", fetch(run, 9, group, {topic: [0, 1]}))
        run.see("stable, all", fetch(run, 9, group, None, require_stable=True))
        ended = run.call("EndTxn", 3, {"transactional_id": txn, "producer_id": pid, "producer_epoch": epoch,
                                        "committed": True}, see=False)
        run.see("end", ended.error_code)
        run.until("the marker lands", lambda: fetch(run, 9, group, {topic: [0]}, require_stable=True)
                  ["offsets"][0][5] == 0)
        run.see("after", fetch(run, 9, group, {topic: [0, 1]}, require_stable=True))

    differ.check(request.node.name, scenario)


# -- KIP-211 -------------------------------------------------------------------------------------------------------

def test_offsets_with_their_own_retention_expire(differ, request):
    """OffsetCommit v2-v4 with RetentionTimeMs: the offset carries its own expire timestamp and goes at the first
    cleanup after it, whatever the group; one committed without it stays (offsets.retention.minutes)."""
    def scenario(run):
        topic, group = setup(run)
        run.call("OffsetCommit", 4, commit_body(group, {topic: {0: (5, "short")}}, version=4, retention=1500),
                  see=False)
        run.call("OffsetCommit", 4, commit_body(group, {topic: {1: (6, "default")}}, version=4, retention=-1),
                 see=False)
        run.see("before", fetch(run, 4, group, None))
        run.until("the short one expires", lambda: len(fetch(run, 4, group, None)["offsets"]) == 1, timeout=15,
                  interval=0.2)
        run.see("after", fetch(run, 4, group, None))
        run.see("describe", describe_group(run, group))

    differ.check(request.node.name, scenario, config=FAST_CLEANUP)


def test_a_retention_past_the_end_of_time_wraps_as_a_java_long(differ, request):
    """RetentionTimeMs 2^63 - 1: Kafka adds it to the clock in a Java long, so the expire timestamp wraps into the
    past and the offset goes at the next cleanup (found by the semantic fuzzer: the sum did not fit the record)."""
    def scenario(run):
        topic, group = setup(run)
        run.call("OffsetCommit", 4, commit_body(group, {topic: {0: (5, "forever?")}}, version=4,
                                                retention=2**63 - 1), label="commit")
        run.until("the offset expires", lambda: not fetch(run, 4, group, None)["offsets"], timeout=15,
                  interval=0.2)
        run.see("after", fetch(run, 4, group, None))

    differ.check(request.node.name, scenario, config=FAST_CLEANUP)


def test_empty_group_with_only_expired_offsets_goes(differ, request):
    """A standalone group whose every offset expired is deleted by the cleanup (Dead for DescribeGroups)."""
    def scenario(run):
        topic, group = setup(run)
        run.call("OffsetCommit", 3, commit_body(group, {topic: {0: (5, "")}}, version=3, retention=1000),
                 see=False)
        run.until("the group goes", lambda: describe_group(run, group).group_state == "Dead", timeout=15,
                  interval=0.2)
        run.see("describe", describe_group(run, group))
        run.see("fetch", fetch(run, 9, group, None))

    differ.check(request.node.name, scenario, config=FAST_CLEANUP)
