"""Share groups (KIP-932, KIP-1206, KIP-1222, KIP-1240): ShareGroupHeartbeat and ShareGroupDescribe, ShareFetch and
ShareAcknowledge with their share sessions, acquisition locks, delivery counts and acknowledgement types, the share
group configs, the share-group offsets admin APIs, DeleteGroups, and what a share consumer's close does to the records
of its last poll; on Apache Kafka 4.3.1 and kafkamock alike.

Member ids are chosen by the client (KIP-932), so a scenario uses the same ids on both brokers (``member``) and
error messages naming them compare as they are.
"""

from __future__ import annotations

import time
import uuid

import pytest
from support.group_steps import coordinator_ready, share_state_ready

HB, DESCRIBE, FETCH, ACK = "ShareGroupHeartbeat", "ShareGroupDescribe", "ShareFetch", "ShareAcknowledge"
GROUP_RESOURCE = 32
ACCEPT, RELEASE, REJECT, RENEW = 1, 2, 3, 4
BATCH_OPTIMIZED, RECORD_LIMIT = 0, 1
# A pair with short acquisition locks (and the bounds that allow them), for lock expiry and RENEW.
SHORT_LOCKS = {"group.share.record.lock.duration.ms": 2000, "group.share.min.record.lock.duration.ms": 1000}


# -- helpers -----------------------------------------------------------------------------------------------------

def member(run, n: int = 1) -> str:
    """A member id of the scenario, the same on both brokers."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{run.token}/{n}"))


def topic_id(run, topic: str) -> uuid.UUID:
    md = run.call("Metadata", 12, {"topics": [{"name": topic, "topic_id": uuid.UUID(int=0)}],
                                   "allow_auto_topic_creation": False,
                                   "include_topic_authorized_operations": False}, see=False)
    return md.topics[0].topic_id


def coordinator(run, group):
    """Until the group's coordinator answers (Kafka creates and loads __consumer_offsets on first use)."""
    share_state_ready(run)
    if group in run.target.cache.setdefault("coordinators", set()):
        return

    def probe():
        r = run.call("FindCoordinator", 6, {"key_type": 0, "coordinator_keys": [group]}, see=False)
        if r.coordinators[0].error_code:
            return False
        d = run.call(DESCRIBE, 1, {"group_ids": [group], "include_authorized_operations": False}, see=False)
        return d.groups[0].error_code not in (14, 15, 16)
    run.until("group coordinator", probe, timeout=30, interval=0.1)
    run.target.cache["coordinators"].add(group)


def heartbeat(run, group, member_id, epoch, topics=None, *, rack=None, see=True, label=None, conn=None):
    if group:
        coordinator(run, group)
    return run.call(HB, 1, {"group_id": group, "member_id": member_id, "member_epoch": epoch, "rack_id": rack,
                            "subscribed_topic_names": topics}, see=see, label=label, conn=conn)


def assigned(response) -> dict | None:
    if response.assignment is None:
        return None
    return {str(t.topic_id): sorted(t.partitions) for t in response.assignment.topic_partitions}


def join_assigned(run, group, member_id, topics, partitions: int, *, see=True, conn=None):
    """Join (epoch 0) and heartbeat until the member holds ``partitions`` partitions (Kafka assigns a share group's
    partitions once their share state is initialized, which follows the first heartbeat). Observes the first answer
    and the one that brought the assignment. Returns the member's epoch."""
    first = heartbeat(run, group, member_id, 0, topics, see=see, label="join", conn=conn)
    epoch = first.member_epoch
    got = assigned(first) or {}
    if sum(len(p) for p in got.values()) >= partitions:
        if see:
            run.see("assigned", {"epoch": epoch, "partitions": sum(len(p) for p in got.values())})
        return epoch
    state = {"epoch": epoch}

    def probe():
        r = heartbeat(run, group, member_id, state["epoch"], see=False, conn=conn)
        if r.error_code:
            raise AssertionError(f"heartbeat error {r.error_code} {r.error_message}")
        state["epoch"] = r.member_epoch
        a = assigned(r)
        if a is not None and sum(len(p) for p in a.values()) >= partitions:
            return r
        return None

    run.until("assignment", probe, timeout=20, interval=0.1)
    if see:
        run.see("assigned", {"epoch": state["epoch"], "partitions": partitions})
    return state["epoch"]


def fetch_body(group, member_id, epoch, partitions, *, max_wait=0, min_bytes=1, max_bytes=1 << 20, max_records=500,
               batch_size=500, mode=BATCH_OPTIMIZED, renew=False, forgotten=()):
    """``partitions``: [(topic_id, index, [ack batches])] (ack batches optional)."""
    topics: dict = {}
    for entry in partitions:
        tid, index, acks = (*entry, [])[:3]
        topics.setdefault(tid, []).append({"partition_index": index, "acknowledgement_batches": list(acks)})
    return {"group_id": group, "member_id": member_id, "share_session_epoch": epoch, "max_wait_ms": max_wait,
            "min_bytes": min_bytes, "max_bytes": max_bytes, "max_records": max_records, "batch_size": batch_size,
            "share_acquire_mode": mode, "is_renew_ack": renew,
            "topics": [{"topic_id": t, "partitions": ps} for t, ps in topics.items()],
            "forgotten_topics_data": [{"topic_id": t, "partitions": list(ps)} for t, ps in forgotten]}


def in_partition_order(response):
    """A ShareFetch/ShareAcknowledge answer with each topic's partitions by index: Kafka lists them in the order of a
    hash map keyed by (random) topic ids, which no two clusters share."""
    from support.differential import plain
    view = plain(response)
    for topic in view.get("responses", []):
        topic["partitions"].sort(key=lambda p: p["partition_index"])
    return view


def fetch(run, group, member_id, epoch, partitions, *, version=2, see=True, label=None, conn=None, **kw):
    body = fetch_body(group, member_id, epoch, partitions, **kw)
    if version < 2:
        del body["share_acquire_mode"], body["is_renew_ack"]
    r = run.call(FETCH, version, body, see=False, conn=conn)
    if see:
        run.see(label or f"{FETCH} v{version}", in_partition_order(r))
    return r


def ack(run, group, member_id, epoch, partitions, *, renew=False, version=2, see=True, label=None, conn=None):
    topics: dict = {}
    for tid, index, batches in partitions:
        topics.setdefault(tid, []).append({"partition_index": index, "acknowledgement_batches": list(batches)})
    body = {"group_id": group, "member_id": member_id, "share_session_epoch": epoch,
            "topics": [{"topic_id": t, "partitions": ps} for t, ps in topics.items()]}
    if version >= 2:
        body["is_renew_ack"] = renew
    r = run.call(ACK, version, body, see=False, conn=conn)
    if see:
        run.see(label or f"{ACK} v{version}", in_partition_order(r))
    return r


def batch(first, last, *types):
    return {"first_offset": first, "last_offset": last, "acknowledge_types": list(types)}


def produce(run, topic, count, *, partition=0, first=0, see=False):
    return run.produce(topic, partition, [{"key": b"k%d" % i, "value": b"v%d" % i, "timestamp": 1000 + i}
                                          for i in range(first, first + count)], see=see)


def acquired(response, index=0) -> list:
    """[(first, last, delivery count)] of one partition's AcquiredRecords (the first topic)."""
    for t in response.responses:
        for p in t.partitions:
            if p.partition_index == index:
                return [(a.first_offset, a.last_offset, a.delivery_count) for a in p.acquired_records]
    return []


def fetch_until(run, group, member_id, epoch, partitions, count, *, what="records", **kw):
    """ShareFetch (with MaxWaitMs) until ``count`` records were acquired in all, from ``epoch`` (0: opening the
    session with ``partitions``); returns (answers, next epoch)."""
    got, answers = 0, []
    state = {"epoch": epoch}

    def probe():
        nonlocal got
        r = fetch(run, group, member_id, state["epoch"], partitions if state["epoch"] in (0, epoch) else [],
                  max_wait=kw.pop("max_wait", 3000), see=False, **kw)
        state["epoch"] += 1
        if r.error_code:
            raise AssertionError(f"ShareFetch error {r.error_code} {r.error_message}")
        answers.append(r)
        got += sum(last - first + 1 for t in r.responses for p in t.partitions
                   for first, last in ((a.first_offset, a.last_offset) for a in p.acquired_records))
        return got >= count

    run.until(what, probe, timeout=20, interval=0)
    return answers, state["epoch"]


def wait_group_configs(run, group, expected: dict) -> None:
    """Until DescribeConfigs shows the group's configs as ``expected`` (None: not set on the group). Kafka's brokers
    learn group configs from the controller's metadata asynchronously; kafkamock's at once."""
    def probe():
        r = run.call("DescribeConfigs", 4, {"resources": [{"resource_type": GROUP_RESOURCE, "resource_name": group,
                                                           "configuration_keys": list(expected)}],
                                            "include_synonyms": False, "include_documentation": False}, see=False)
        found = {c.name: c for c in r.results[0].configs}
        return all((found[n].config_source != 8) if v is None else
                   (found[n].config_source == 8 and found[n].value.lower() == str(v).strip().lower())
                   for n, v in expected.items() if n in found)
    run.until("the group configs to take effect", probe, timeout=20, interval=0.05)


def set_group_configs(run, group, configs: dict, *, see=True, label="IncrementalAlterConfigs", op=0):
    r = run.call("IncrementalAlterConfigs", 1, {"resources": [{
        "resource_type": GROUP_RESOURCE, "resource_name": group,
        "configs": [{"name": k, "config_operation": op, "value": None if v is None else str(v)}
                    for k, v in configs.items()]}], "validate_only": False}, see=see, label=label)
    if r.responses[0].error_code == 0:
        wait_group_configs(run, group, {k: None if op == 1 else v for k, v in configs.items()})
    return r


def quick(run, group):
    """The group is assigned its partitions as soon as they are initialized (``share.assignment.interval.ms`` 0)."""
    set_group_configs(run, group, {"share.assignment.interval.ms": 0}, see=False)


def earliest(run, group):
    """The group reads from the start, and is assigned its partitions as soon as they are initialized
    (``share.assignment.interval.ms`` 0: the assignment timing has scenarios of its own)."""
    set_group_configs(run, group, {"share.auto.offset.reset": "earliest", "share.assignment.interval.ms": 0},
                      see=False)


def ready(run, group, topic, partitions=1, *, n=1, conn=None):
    """A member of ``group`` holding every partition of a new ``topic`` (share.auto.offset.reset=earliest) and its
    open share session (epoch 1 next). Returns (member id, topic id)."""
    run.create_topic(topic, partitions)
    earliest(run, group)
    m = member(run, n)
    join_assigned(run, group, m, [topic], partitions, see=False, conn=conn)
    tid = topic_id(run, topic)
    fetch(run, group, m, 0, [(tid, i) for i in range(partitions)], see=False, conn=conn)
    return m, tid


# -- ShareGroupHeartbeat ---------------------------------------------------------------------------------------

def test_heartbeat_join_and_assignment(differ, request):
    def scenario(run):
        topic, group = run.name("t"), run.name("g")
        run.create_topic(topic, 3)
        m = member(run)
        epoch = join_assigned(run, group, m, [topic], 3)
        r = heartbeat(run, group, m, epoch, label="steady heartbeat")
        run.see("steady assignment", assigned(r))
        run.call(DESCRIBE, 1, {"group_ids": [group], "include_authorized_operations": False})

    differ.check(request.node.name, scenario)


def test_heartbeat_unknown_topic_subscription(differ, request):
    def scenario(run):
        group = run.name("g")
        m = member(run)
        heartbeat(run, group, m, 0, [run.name("missing")])
        heartbeat(run, group, m, 1)
        run.call(DESCRIBE, 1, {"group_ids": [group], "include_authorized_operations": True})

    differ.check(request.node.name, scenario)


def test_heartbeat_two_members_share_partitions(differ, request):
    def scenario(run):
        topic, group = run.name("t"), run.name("g")
        run.create_topic(topic, 2)
        quick(run, group)
        m1, m2 = member(run, 1), member(run, 2)
        e1 = join_assigned(run, group, m1, [topic], 2)
        e2 = join_assigned(run, group, m2, [topic], 1, see=False)     # which partition: see below
        state = {"e1": e1}

        def settled():
            r = heartbeat(run, group, m1, state["e1"], see=False)
            state["e1"] = r.member_epoch
            d = run.call(DESCRIBE, 1, {"group_ids": [group], "include_authorized_operations": False}, see=False)
            return all(m.member_epoch == d.groups[0].assignment_epoch for m in d.groups[0].members) and d
        d = run.until("members reconciled", settled, timeout=20, interval=0.1)
        g = d.groups[0]
        # Which member gets which partition follows Kafka's hash-map order over random topic ids: how many each
        # member gets, and that every partition is covered, is what compares.
        held = [sorted(p for t in m.assignment.topic_partitions for p in t.partitions) for m in g.members]
        run.see("group", {"epoch": g.group_epoch, "assignment_epoch": g.assignment_epoch, "state": g.group_state,
                          "assignor": g.assignor_name, "epochs": sorted(m.member_epoch for m in g.members),
                          "counts": sorted(len(h) for h in held), "covered": sorted({p for h in held for p in h})})
        run.see("e2", e2)

    differ.check(request.node.name, scenario)


def test_heartbeat_leave(differ, request):
    def scenario(run):
        topic, group = run.name("t"), run.name("g")
        run.create_topic(topic, 1)
        quick(run, group)
        m = member(run)
        epoch = join_assigned(run, group, m, [topic], 1)
        heartbeat(run, group, m, -1, label="leave")
        heartbeat(run, group, m, -1, label="leave again")
        heartbeat(run, group, m, epoch, label="heartbeat after leaving")
        run.call(DESCRIBE, 1, {"group_ids": [group], "include_authorized_operations": False})

    differ.check(request.node.name, scenario)


def test_heartbeat_fenced_and_unknown(differ, request):
    def scenario(run):
        topic, group = run.name("t"), run.name("g")
        run.create_topic(topic, 1)
        quick(run, group)
        m = member(run)
        epoch = join_assigned(run, group, m, [topic], 1, see=False)
        heartbeat(run, group, m, epoch + 5, label="epoch ahead")
        heartbeat(run, group, m, epoch - 1, label="epoch behind") if epoch > 1 else None
        heartbeat(run, group, member(run, 9), 3, label="unknown member")
        heartbeat(run, group, m, 0, [topic], label="rejoin with epoch 0")
        heartbeat(run, run.name("other"), m, 4, label="no such group")

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("case", ["empty-group", "empty-member", "no-subscription", "empty-subscription",
                                  "epoch-minus-2", "empty-rack"])
def test_heartbeat_invalid_request(differ, request, case):
    def scenario(run):
        group, m = run.name("g"), member(run)
        body = {"empty-group": ("", m, 0, ["t"], None), "empty-member": (group, "", 0, ["t"], None),
                "no-subscription": (group, m, 0, None, None), "empty-subscription": (group, m, 0, [], None),
                "epoch-minus-2": (group, m, -2, None, None), "empty-rack": (group, m, 0, ["t"], "")}[case]
        heartbeat(run, body[0], body[1], body[2], body[3], rack=body[4])

    differ.check(request.node.name, scenario)


def test_heartbeat_on_a_consumer_group(differ, request):
    def scenario(run):
        topic, group = run.name("t"), run.name("g")
        run.create_topic(topic, 1)
        run.call("ConsumerGroupHeartbeat", 0, {
            "group_id": group, "member_id": member(run, 5), "member_epoch": 0, "instance_id": None, "rack_id": None,
            "rebalance_timeout_ms": 30000, "subscribed_topic_names": [topic], "server_assignor": None,
            "topic_partitions": []}, see=False)
        heartbeat(run, group, member(run), 0, [topic], label="share join on a consumer group")
        run.call(DESCRIBE, 1, {"group_ids": [group], "include_authorized_operations": False})

    differ.check(request.node.name, scenario)


def test_heartbeat_subscription_change(differ, request):
    def scenario(run):
        t1, t2, group = run.name("a"), run.name("b"), run.name("g")
        run.create_topic(t1, 1)
        quick(run, group)
        run.create_topic(t2, 2)
        m = member(run)
        epoch = join_assigned(run, group, m, [t1], 1)
        r = heartbeat(run, group, m, epoch, [t1, t2], label="subscribe to both")
        state = {"epoch": r.member_epoch}

        def probe():
            h = heartbeat(run, group, m, state["epoch"], see=False)
            state["epoch"] = h.member_epoch
            a = assigned(h)
            return a is not None and sum(len(p) for p in a.values()) == 3 and h
        h = run.until("three partitions", probe, timeout=20, interval=0.1)
        run.see("final", {"epoch": h.member_epoch, "assignment": sorted(len(p) for p in assigned(h).values())})
        d = run.call(DESCRIBE, 1, {"group_ids": [group], "include_authorized_operations": False}, see=False)
        run.see("subscribed", sorted(d.groups[0].members[0].subscribed_topic_names))

    differ.check(request.node.name, scenario)


def test_describe_groups(differ, request):
    def scenario(run):
        topic, group = run.name("t"), run.name("g")
        run.create_topic(topic, 1)
        quick(run, group)
        join_assigned(run, group, member(run), [topic], 1, see=False)
        run.call(DESCRIBE, 1, {"group_ids": [group, run.name("none"), ""], "include_authorized_operations": True})
        run.call("ListGroups", 5, {"states_filter": [], "types_filter": ["share"]}, see=False)
        listed = run.call("ListGroups", 5, {"states_filter": [], "types_filter": ["share"]}, see=False)
        run.see("listed", [[g.group_id, g.group_state, g.group_type, g.protocol_type]
                           for g in listed.groups if g.group_id == group])
        run.call("DescribeGroups", 6, {"groups": [group], "include_authorized_operations": False})

    differ.check(request.node.name, scenario)


# -- group configs (KIP-932, KIP-1240) ----------------------------------------------------------------------------

def describe_group_configs(run, group, names=None, *, label="DescribeConfigs", synonyms=True):
    r = run.call("DescribeConfigs", 4, {"resources": [{"resource_type": GROUP_RESOURCE, "resource_name": group,
                                                       "configuration_keys": names}],
                                        "include_synonyms": synonyms, "include_documentation": False}, see=False)
    res = r.results[0]
    run.see(label, {"error": [res.error_code, res.error_message],
                    "configs": {c.name: [c.value, c.read_only, c.config_source, c.is_sensitive, c.config_type,
                                         [[s.name, s.value, s.source] for s in c.synonyms]]
                                for c in res.configs if c.name.startswith("share.")}})
    return res


SHARE_GROUP_CONFIGS = {
    "share.delivery.count.limit": [2, 7, 10], "share.partition.max.record.locks": [100, 2500, 4000],
    "share.renew.acknowledge.enable": ["false", "true", "TRUE"], "share.record.lock.duration.ms": [15000, 45000],
    "share.session.timeout.ms": [45000, 60000], "share.heartbeat.interval.ms": [5000, 6000],
    "share.auto.offset.reset": ["earliest", "by_duration:PT1H"], "share.isolation.level": ["read_committed"],
    "share.assignment.interval.ms": [0, 500],
}


@pytest.mark.parametrize("name", sorted(SHARE_GROUP_CONFIGS))
def test_group_config_accepted(differ, request, name):
    """Each share group config takes good values; DescribeConfigs shows the group's value and its synonyms."""
    def scenario(run):
        group = run.name("g")
        for value in SHARE_GROUP_CONFIGS[name]:
            set_group_configs(run, group, {name: value}, label=f"set {value}")
            describe_group_configs(run, group, [name], label=f"describe after {value}")
        set_group_configs(run, group, {name: None}, op=1, label="delete")
        describe_group_configs(run, group, [name], label="describe after delete")

    differ.check(request.node.name, scenario)


BAD_GROUP_CONFIGS = [
    ("share.delivery.count.limit", 1), ("share.delivery.count.limit", 11), ("share.delivery.count.limit", "x"),
    ("share.partition.max.record.locks", 99), ("share.partition.max.record.locks", 4001),
    ("share.renew.acknowledge.enable", "maybe"), ("share.renew.acknowledge.enable", ""),
    ("share.record.lock.duration.ms", 999), ("share.record.lock.duration.ms", 14999),
    ("share.record.lock.duration.ms", 60001), ("share.session.timeout.ms", 44999),
    ("share.session.timeout.ms", 60001), ("share.heartbeat.interval.ms", 4999), ("share.heartbeat.interval.ms", 15001),
    ("share.auto.offset.reset", "none"), ("share.auto.offset.reset", "by_duration:-PT1H"),
    ("share.auto.offset.reset", "by_duration:xyz"), ("share.isolation.level", "READ_COMMITTED"),
    ("share.assignment.interval.ms", 15001), ("share.assignment.interval.ms", -1),
    ("share.delivery.count.limit", None), ("share.unknown.config", 1),
]


@pytest.mark.parametrize("name,value", BAD_GROUP_CONFIGS, ids=[f"{n}={v}" for n, v in BAD_GROUP_CONFIGS])
def test_group_config_refused(differ, request, name, value):
    def scenario(run):
        group = run.name("g")
        set_group_configs(run, group, {name: value})
        describe_group_configs(run, group, [name] if name.startswith("share.") else None)

    differ.check(request.node.name, scenario)


def test_group_config_session_must_exceed_heartbeat(differ, request):
    def scenario(run):
        group = run.name("g")
        set_group_configs(run, group, {"share.heartbeat.interval.ms": 15000}, label="heartbeat 15000")
        set_group_configs(run, group, {"share.session.timeout.ms": 45000, "share.heartbeat.interval.ms": 15000},
                          label="both")
        set_group_configs(run, group, {"share.delivery.count.limit": 3, "share.partition.max.record.locks": 5},
                          label="one good one bad")
        describe_group_configs(run, group)
        run.call("AlterConfigs", 2, {"resources": [{"resource_type": GROUP_RESOURCE, "resource_name": group,
                                                    "configs": [{"name": "share.delivery.count.limit",
                                                                 "value": "4"}]}],
                                     "validate_only": False}, label="AlterConfigs")
        wait_group_configs(run, group, {"share.delivery.count.limit": 4, "share.session.timeout.ms": None,
                                        "share.heartbeat.interval.ms": None})
        describe_group_configs(run, group, label="after AlterConfigs")
        set_group_configs(run, group, {"share.delivery.count.limit": 6}, label="validate only")
        run.call("IncrementalAlterConfigs", 1, {"resources": [{
            "resource_type": GROUP_RESOURCE, "resource_name": group,
            "configs": [{"name": "share.delivery.count.limit", "config_operation": 0, "value": "8"}]}],
            "validate_only": True}, label="validate_only")
        describe_group_configs(run, group, ["share.delivery.count.limit"], label="after validate_only")

    differ.check(request.node.name, scenario)


def test_group_config_describe_all(differ, request):
    def scenario(run):
        group = run.name("g")
        describe_group_configs(run, group, label="unset")
        set_group_configs(run, group, {"share.delivery.count.limit": 3, "share.renew.acknowledge.enable": "false",
                                       "share.partition.max.record.locks": 200})
        describe_group_configs(run, group, label="set")
        describe_group_configs(run, group, label="set, no synonyms", synonyms=False)

    differ.check(request.node.name, scenario)


# -- ShareFetch and ShareAcknowledge ------------------------------------------------------------------------------

def seen_fetch(run, label, answers):
    """What a run of ShareFetch answers acquired, merged: [(first, last, delivery count)] and the values."""
    runs, values = [], []
    for r in answers:
        for t in r.responses:
            for p in t.partitions:
                runs += [[p.partition_index, a.first_offset, a.last_offset, a.delivery_count]
                         for a in p.acquired_records]
                from kafkamock.records import decode_batches
                values += [[p.partition_index, rec.offset, rec.value.decode() if rec.value else None]
                           for b in (decode_batches(bytes(p.records)) if p.records else []) for rec in b.records]
    run.see(label, {"acquired": sorted(runs), "records": sorted(values)})


def test_fetch_open_session_and_empty_fetches(differ, request):
    def scenario(run):
        group, topic = run.name("g"), run.name("t")
        run.create_topic(topic, 2)
        earliest(run, group)
        m = member(run)
        join_assigned(run, group, m, [topic], 2, see=False)
        tid = topic_id(run, topic)
        # An opening fetch loads the share-partitions; one that does not wait may find them still loading on Kafka.
        fetch(run, group, m, 0, [(tid, 0), (tid, 1)], max_wait=300, label="open")
        fetch(run, group, m, 1, [], label="incremental, nothing new")
        fetch(run, group, m, 2, [], max_wait=200, label="incremental, waits")
        fetch(run, group, m, 3, [], label="incremental again")

    differ.check(request.node.name, scenario)


def test_fetch_records_then_accept(differ, request):
    def scenario(run):
        group, topic = run.name("g"), run.name("t")
        m, tid = ready(run, group, topic)
        produce(run, topic, 5)
        answers, epoch = fetch_until(run, group, m, 1, [], 5)
        seen_fetch(run, "fetched", answers)
        run.see("lock timeout", answers[-1].acquisition_lock_timeout_ms)
        ack(run, group, m, epoch, [(tid, 0, [batch(0, 4, ACCEPT)])], label="accept all")
        fetch(run, group, m, epoch + 1, [], label="nothing left")
        run.call("DescribeShareGroupOffsets", 1, {"groups": [{"group_id": group, "topics": None}]})

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("mode", [BATCH_OPTIMIZED, RECORD_LIMIT])
def test_fetch_max_records(differ, request, mode):
    """MaxRecords 3 over batches of 4: batch-optimized completes the batch it started, record-limit stops at 3."""
    def scenario(run):
        group, topic = run.name("g"), run.name("t")
        m, tid = ready(run, group, topic)
        for first in (0, 4, 8):
            produce(run, topic, 4, first=first)
        r = fetch(run, group, m, 1, [], max_wait=5000, max_records=3, mode=mode, see=False)
        seen_fetch(run, "first fetch", [r])
        r = fetch(run, group, m, 2, [], max_wait=5000, max_records=3, mode=mode, see=False)
        seen_fetch(run, "second fetch", [r])

    differ.check(request.node.name, scenario)


def test_fetch_batch_size(differ, request):
    def scenario(run):
        group, topic = run.name("g"), run.name("t")
        m, tid = ready(run, group, topic)
        produce(run, topic, 5)
        produce(run, topic, 5, first=5)
        answers, _ = fetch_until(run, group, m, 1, [], 10, batch_size=3)
        seen_fetch(run, "fetched", answers)

    differ.check(request.node.name, scenario)


def test_release_redelivers_and_reject_archives(differ, request):
    def scenario(run):
        group, topic = run.name("g"), run.name("t")
        m, tid = ready(run, group, topic)
        produce(run, topic, 4)
        answers, epoch = fetch_until(run, group, m, 1, [], 4)
        seen_fetch(run, "first", answers)
        ack(run, group, m, epoch, [(tid, 0, [batch(0, 3, RELEASE, REJECT, RELEASE, ACCEPT)])], label="per offset")
        answers, epoch = fetch_until(run, group, m, epoch + 1, [], 2)
        seen_fetch(run, "redelivered", answers)
        run.call("DescribeShareGroupOffsets", 1, {"groups": [{"group_id": group, "topics": None}]})

    differ.check(request.node.name, scenario)


def test_delivery_count_limit_archives(differ, request):
    def scenario(run):
        group, topic = run.name("g"), run.name("t")
        m, tid = ready(run, group, topic)
        set_group_configs(run, group, {"share.delivery.count.limit": 2})
        produce(run, topic, 2)
        epoch = 1
        for attempt in range(2):
            answers, epoch = fetch_until(run, group, m, epoch, [], 2)
            seen_fetch(run, f"delivery {attempt + 1}", answers)
            ack(run, group, m, epoch, [(tid, 0, [batch(0, 1, RELEASE)])], label=f"release {attempt + 1}")
            epoch += 1
        fetch(run, group, m, epoch, [], max_wait=300, label="archived: nothing")
        run.call("DescribeShareGroupOffsets", 1, {"groups": [{"group_id": group, "topics": None}]})

    differ.check(request.node.name, scenario)


def test_acknowledge_piggybacked_on_fetch(differ, request):
    def scenario(run):
        group, topic = run.name("g"), run.name("t")
        m, tid = ready(run, group, topic)
        produce(run, topic, 3)
        answers, epoch = fetch_until(run, group, m, 1, [], 3)
        fetch(run, group, m, epoch, [(tid, 0, [batch(0, 0, ACCEPT), batch(1, 2, RELEASE)])], max_wait=3000,
              label="ack and fetch")
        fetch(run, group, m, epoch + 1, [(tid, 0, [batch(7, 7, ACCEPT)])], label="ack of what is not acquired")

    differ.check(request.node.name, scenario)


ACK_ERRORS = {
    "not-acquired": [batch(5, 5, ACCEPT)],
    "first-after-last": [batch(1, 0, ACCEPT)],
    "overlap": [batch(0, 1, ACCEPT), batch(1, 2, ACCEPT)],
    "out-of-order": [batch(2, 2, ACCEPT), batch(0, 0, ACCEPT)],
    "types-count": [batch(0, 2, ACCEPT, ACCEPT)],
    "no-types": [batch(0, 0)],
    "unknown-type": [batch(0, 0, 5)],
    "gap-type": [batch(0, 0, 0)],
    "renew-without-flag": [batch(0, 0, RENEW)],
    "partly-acquired": [batch(0, 6, ACCEPT)],
}


@pytest.mark.parametrize("case", sorted(ACK_ERRORS))
def test_acknowledge_errors(differ, request, case):
    def scenario(run):
        group, topic = run.name("g"), run.name("t")
        m, tid = ready(run, group, topic)
        produce(run, topic, 3)
        answers, epoch = fetch_until(run, group, m, 1, [], 3)
        ack(run, group, m, epoch, [(tid, 0, ACK_ERRORS[case])], label="ShareAcknowledge")
        fetch(run, group, m, epoch + 1, [(tid, 0, ACK_ERRORS[case])], label="ShareFetch")
        ack(run, group, m, epoch + 2, [(tid, 0, [batch(0, 2, ACCEPT)])], label="then accept all")

    differ.check(request.node.name, scenario)


def test_acknowledge_unknown_partitions(differ, request):
    def scenario(run):
        group, topic = run.name("g"), run.name("t")
        m, tid = ready(run, group, topic)
        other = run.name("o")
        run.create_topic(other, 1)
        ack(run, group, m, 1, [(uuid.UUID(int=7), 0, [batch(0, 0, ACCEPT)])], label="unknown topic id")
        ack(run, group, m, 2, [(tid, 5, [batch(0, 0, ACCEPT)])], label="unknown partition")
        ack(run, group, m, 3, [(topic_id(run, other), 0, [batch(0, 0, ACCEPT)])], label="never fetched")
        ack(run, group, m, 4, [(tid, 0, [])], label="no batches")
        fetch(run, group, m, 5, [(uuid.UUID(int=7), 0, [batch(0, 0, ACCEPT)])], label="fetch: unknown topic id")

    differ.check(request.node.name, scenario)


def test_share_session_errors(differ, request):
    def scenario(run):
        group, topic = run.name("g"), run.name("t")
        run.create_topic(topic, 1)
        m = member(run)
        join_assigned(run, group, m, [topic], 1, see=False)
        tid = topic_id(run, topic)
        fetch(run, group, m, 3, [(tid, 0)], label="no session yet")
        ack(run, group, m, 3, [(tid, 0, [batch(0, 0, ACCEPT)])], label="ack, no session yet")
        fetch(run, group, m, -1, [(tid, 0)], label="close, no session yet")
        fetch(run, group, m, 0, [(tid, 0, [batch(0, 0, ACCEPT)])], label="open with acks")
        # The first fetch that gets past the checks starts loading the share-partition: Kafka answers it without the
        # partition while the load is under way, and with it once loaded, so it waits for the load to be seen.
        fetch(run, group, m, 0, [(tid, 0)], max_wait=300, label="open")
        fetch(run, group, m, 5, [], label="wrong epoch")
        ack(run, group, m, 5, [], label="ack, wrong epoch")
        ack(run, group, m, 0, [], label="ack, epoch 0")
        fetch(run, group, m, 1, [], label="right epoch")
        ack(run, group, m, 2, [], label="ack, right epoch")
        fetch(run, group, m, 0, [(tid, 0)], label="reopen")
        fetch(run, group, m, 1, [], label="after reopen")
        fetch(run, group, m, -1, [], label="close")
        fetch(run, group, m, 2, [], label="after close")
        ack(run, group, m, -1, [], label="ack close after close")
        fetch(run, group, "", 0, [(tid, 0)], label="empty member id")
        fetch(run, group, m, 0, [(tid, 0)], label="open again")
        ack(run, group, m, -1, [], label="ack close")
        fetch(run, group, m, 1, [], label="after ack close")

    differ.check(request.node.name, scenario)


def test_share_session_add_and_forget_partitions(differ, request):
    def scenario(run):
        group, topic = run.name("g"), run.name("t")
        run.create_topic(topic, 3)
        earliest(run, group)
        m = member(run)
        join_assigned(run, group, m, [topic], 3, see=False)
        tid = topic_id(run, topic)
        fetch(run, group, m, 0, [(tid, 0)], max_wait=300, label="open with 0")
        produce(run, topic, 1, partition=0)
        produce(run, topic, 1, partition=1)
        produce(run, topic, 1, partition=2)
        answers, epoch = fetch_until(run, group, m, 1, [(tid, 1)], 2, what="partitions 0 and 1")
        seen_fetch(run, "0 and 1", answers)
        r = fetch(run, group, m, epoch, [(tid, 2)], forgotten=[(tid, [0, 1])], max_wait=3000, see=False)
        seen_fetch(run, "2 only", [r])
        run.see("partitions answered", sorted(p.partition_index for t in r.responses for p in t.partitions))

    differ.check(request.node.name, scenario)


def test_share_fetch_serves_every_partition_of_the_session(differ, request):
    """One partition with records enough for MaxRecords does not starve the session's others: Kafka rotates the
    partitions a request starts at (PartitionRotateStrategy, by session epoch) and reads first the partitions whose
    fetch position it knows. Which partition answers which request follows Kafka's internals, so what compares is
    that every partition is served within two rounds and each hands out its batches in order."""
    def scenario(run):
        for n, shift in ((2, 0), (3, 0), (4, 1), (4, 2)):
            group, topic = run.name(f"g{n}{shift}"), run.name(f"t{n}{shift}")
            run.create_topic(topic, n)
            earliest(run, group)
            m = member(run, n * 10 + shift)
            join_assigned(run, group, m, [topic], n, see=False)
            tid = topic_id(run, topic)
            fetch(run, group, m, 0, [(tid, p) for p in range(n)], max_wait=300, see=False)
            for epoch in range(1, 1 + shift):                   # the rotation's start moves with the epoch
                fetch(run, group, m, epoch, [], max_records=5, see=False)
            for p in range(n):
                for b in range(3):
                    produce(run, topic, 5, partition=p, first=5 * b)
            served = []
            for epoch in range(1 + shift, 1 + shift + 3 * n):
                r = fetch(run, group, m, epoch, [], max_records=5, see=False)
                served += [(p.partition_index, (a.first_offset, a.last_offset))
                           for t in r.responses for p in t.partitions for a in p.acquired_records]
            run.see(f"{n} partitions, epoch {1 + shift} on: one partition per answer",
                    len(served) == 3 * n and len({p for p, _ in served[:2 * n]}) == n)
            run.see(f"{n} partitions: each partition's batches", sorted(
                (p, [r for q, r in served if q == p]) for p in range(n)))

    differ.check(request.node.name, scenario)


def test_renew_by_share_acknowledge(differ, request):
    def scenario(run):
        group, topic = run.name("g"), run.name("t")
        m, tid = ready(run, group, topic)
        produce(run, topic, 2)
        answers, epoch = fetch_until(run, group, m, 1, [], 2)
        ack(run, group, m, epoch, [(tid, 0, [batch(0, 1, RENEW)])], renew=True, label="renew")
        ack(run, group, m, epoch + 1, [(tid, 0, [batch(0, 1, RENEW)])], renew=False, label="renew without flag")
        ack(run, group, m, epoch + 2, [(tid, 0, [batch(0, 0, RENEW)])], renew=True, version=1, label="renew at v1")
        ack(run, group, m, epoch + 3, [(tid, 0, [batch(0, 0, ACCEPT), batch(1, 1, RENEW)])], renew=True,
            label="accept and renew")
        ack(run, group, m, epoch + 4, [(tid, 0, [batch(1, 1, ACCEPT)])], label="accept the renewed")

    differ.check(request.node.name, scenario)


def test_renew_by_share_fetch(differ, request):
    def scenario(run):
        group, topic = run.name("g"), run.name("t")
        m, tid = ready(run, group, topic)
        produce(run, topic, 2)
        answers, epoch = fetch_until(run, group, m, 1, [], 2)
        fetch(run, group, m, epoch, [(tid, 0, [batch(0, 1, RENEW)])], renew=True, max_wait=5000, label="limits set")
        fetch(run, group, m, epoch, [(tid, 0, [batch(0, 1, RENEW)])], renew=True, max_wait=0, min_bytes=0,
              max_bytes=0, max_records=0, label="renew")
        fetch(run, group, m, epoch + 1, [(tid, 0, [batch(0, 1, RENEW)])], renew=False, label="renew without flag")
        fetch(run, group, m, epoch + 2, [(tid, 0, [batch(0, 1, ACCEPT)])], renew=True, max_wait=0, min_bytes=0,
              max_bytes=0, max_records=0, label="accept with the flag")
        fetch(run, group, m, epoch + 3, [(tid, 0, [batch(0, 1, RENEW)])], renew=True, version=1, label="v1")

    differ.check(request.node.name, scenario)


def test_renew_disabled_by_group_config(differ, request):
    def scenario(run):
        group, topic = run.name("g"), run.name("t")
        m, tid = ready(run, group, topic)
        set_group_configs(run, group, {"share.renew.acknowledge.enable": "false"})
        produce(run, topic, 2)
        answers, epoch = fetch_until(run, group, m, 1, [], 2)
        ack(run, group, m, epoch, [(tid, 0, [batch(0, 1, RENEW)])], renew=True, label="renew by ShareAcknowledge")
        fetch(run, group, m, epoch + 1, [(tid, 0, [batch(0, 0, RENEW)])], renew=True, max_wait=0, min_bytes=0,
              max_bytes=0, max_records=0, label="renew by ShareFetch")
        ack(run, group, m, epoch + 2, [(tid, 0, [batch(0, 1, ACCEPT)])], label="accept still works")

    differ.check(request.node.name, scenario)


# -- acquisition locks (a pair with short locks) ------------------------------------------------------------------

def test_lock_expiry_redelivers(differ, request):
    def scenario(run):
        group, topic = run.name("g"), run.name("t")
        m, tid = ready(run, group, topic)
        produce(run, topic, 2)
        answers, epoch = fetch_until(run, group, m, 1, [], 2)
        seen_fetch(run, "first delivery", answers)
        run.see("lock", answers[-1].acquisition_lock_timeout_ms)
        answers, epoch = fetch_until(run, group, m, epoch, [], 2, what="the lock to run out")
        seen_fetch(run, "after the lock ran out", answers)
        ack(run, group, m, epoch, [(tid, 0, [batch(0, 1, ACCEPT)])], label="accept the redelivery")

    differ.check(request.node.name, scenario, config=SHORT_LOCKS)


def test_renew_keeps_records_past_the_lock(differ, request):
    """RENEW every half lock for longer than a lock lasts: the records stay with the member, who then accepts them."""
    def scenario(run):
        group, topic = run.name("g"), run.name("t")
        m, tid = ready(run, group, topic)
        produce(run, topic, 2)
        answers, epoch = fetch_until(run, group, m, 1, [], 2)
        state = {"epoch": epoch, "start": time.monotonic(), "codes": set()}

        def renewed_long_enough():
            r = ack(run, group, m, state["epoch"], [(tid, 0, [batch(0, 1, RENEW)])], renew=True, see=False)
            state["epoch"] += 1
            state["codes"].add(r.responses[0].partitions[0].error_code)
            return time.monotonic() - state["start"] > 2.5
        run.until("renewing for longer than a lock", renewed_long_enough, timeout=20, interval=0.6)
        run.see("renew outcomes", sorted(state["codes"]))
        ack(run, group, m, state["epoch"], [(tid, 0, [batch(0, 1, ACCEPT)])], label="accept after renewing")

    differ.check(request.node.name, scenario, config=SHORT_LOCKS)


# -- closing: what happens to a member's acquired records ----------------------------------------------------------

@pytest.mark.parametrize("api", [ACK, FETCH])
def test_close_with_acknowledgements(differ, request, api):
    """A last request (epoch -1) carrying acknowledgements: they are applied, then what the member still holds is
    released for the next member, and the session is gone."""
    def scenario(run):
        group, topic = run.name("g"), run.name("t")
        m, tid = ready(run, group, topic)
        produce(run, topic, 3)
        answers, epoch = fetch_until(run, group, m, 1, [], 3)
        acks = [(tid, 0, [batch(0, 1, ACCEPT)])]
        if api == ACK:
            ack(run, group, m, -1, acks, label="close with acks")
        else:
            fetch(run, group, m, -1, acks, label="close with acks")
        fetch(run, group, m, epoch, [], label="after close")
        ack(run, group, m, -1, [], label="close again")
        m2 = member(run, 2)
        conn = run.new_conn()
        join_assigned(run, group, m2, [topic], 1, see=False, conn=conn)
        answers, _ = fetch_until(run, group, m2, 0, [(tid, 0)], 1, conn=conn)     # opening, then later fetches
        seen_fetch(run, "the next member gets", answers)

    differ.check(request.node.name, scenario)


def test_disconnect_releases_and_leave_keeps_the_session(differ, request):
    """Leaving the group does not end the member's share session; closing its connection does, releasing what it
    held."""
    def scenario(run):
        group, topic = run.name("g"), run.name("t")
        run.create_topic(topic, 1)
        earliest(run, group)
        conn = run.new_conn()
        m = member(run)
        epoch = join_assigned(run, group, m, [topic], 1, see=False, conn=conn)
        tid = topic_id(run, topic)
        fetch(run, group, m, 0, [(tid, 0)], see=False, conn=conn)
        produce(run, topic, 4)
        answers, sepoch = fetch_until(run, group, m, 1, [], 4, conn=conn)
        heartbeat(run, group, m, epoch, label="still a member")
        heartbeat(run, group, m, -1, label="leave", conn=conn)
        ack(run, group, m, sepoch, [(tid, 0, [batch(0, 0, ACCEPT)])], label="ack after leaving", conn=conn)
        conn.close()
        m2 = member(run, 2)
        join_assigned(run, group, m2, [topic], 1, see=False)
        answers, _ = fetch_until(run, group, m2, 0, [(tid, 0)], 3, what="the records released by the disconnect")
        seen_fetch(run, "the next member gets", answers)

    differ.check(request.node.name, scenario)


def test_share_consumer_close_and_its_last_poll(differ, request):
    """confluent-kafka's share consumers (librdkafka) closing after a poll, one per group and mode, side by side.
    Implicit mode acknowledges a poll's records at the next poll or commit, so closing right after one releases them
    (the next member gets them again, delivery count 2); acknowledgements made in explicit mode and not yet sent go
    with the consumer's last request (the next member gets nothing). Nothing is produced after the first consumers:
    kafkamock writes share state into the partition (KIP-932's control records), which takes the next offsets."""
    from confluent_kafka import AcknowledgeType, ShareConsumer

    def scenario(run):
        topic = run.name("t")
        run.create_topic(topic, 1)
        produce(run, topic, 3)
        modes = {"implicit": run.name("gi"), "explicit": run.name("ge")}
        consumers, got = {}, {mode: [] for mode in modes}
        for mode, group in modes.items():
            earliest(run, group)
            consumers[mode] = ShareConsumer({"bootstrap.servers": run.target.bootstrap_servers, "group.id": group,
                                             "share.acknowledgement.mode": mode})
            consumers[mode].subscribe([topic])
        try:
            def polled():
                for mode, consumer in consumers.items():
                    if len(got[mode]) < 3:
                        for m in consumer.poll(0.25):
                            if m.error() is None:
                                got[mode].append(m.value())
                                if mode == "explicit":
                                    consumer.acknowledge(m, AcknowledgeType.ACCEPT)
                return all(len(v) >= 3 for v in got.values())
            run.until("the first consumers' records", polled, timeout=30, interval=0)
        finally:
            for consumer in consumers.values():
                consumer.close()
        tid = topic_id(run, topic)
        for mode, group in modes.items():
            run.see(f"{mode}: first consumer", sorted(got[mode]))
            m2 = member(run, 2)
            join_assigned(run, group, m2, [topic], 1, see=False)
            if mode == "implicit":
                answers, _ = fetch_until(run, group, m2, 0, [(tid, 0)], 3)
            else:                                   # the opening fetch loads the share-partition; the next one waits
                answers = [fetch(run, group, m2, 0, [(tid, 0)], max_wait=500, see=False),
                           fetch(run, group, m2, 1, [], max_wait=1000, see=False)]
            seen_fetch(run, f"{mode}: the next member gets", answers)
            run.call("DescribeShareGroupOffsets", 1, {"groups": [{"group_id": group, "topics": None}]},
                     label=f"{mode}: offsets")

    differ.check(request.node.name, scenario)


# -- the share-group offsets admin APIs and DeleteGroups -----------------------------------------------------------

def describe_offsets(run, group, topics=None, *, version=1, label=None):
    return run.call("DescribeShareGroupOffsets", version, {"groups": [{"group_id": group, "topics": None if topics is None
                                                                       else [{"topic_name": t, "partitions": ps}
                                                                             for t, ps in topics.items()]}]},
                    label=label)


def test_describe_share_group_offsets(differ, request):
    def scenario(run):
        group, topic = run.name("g"), run.name("t")
        describe_offsets(run, group, label="unknown group")
        run.create_topic(topic, 2)
        earliest(run, group)
        m = member(run)
        join_assigned(run, group, m, [topic], 2, see=False)
        describe_offsets(run, group, label="initialized, never fetched")
        tid = topic_id(run, topic)
        fetch(run, group, m, 0, [(tid, 0), (tid, 1)], see=False)
        produce(run, topic, 3)
        answers, epoch = fetch_until(run, group, m, 1, [], 3)
        describe_offsets(run, group, label="records acquired")
        ack(run, group, m, epoch, [(tid, 0, [batch(0, 0, ACCEPT), batch(1, 1, RELEASE)])], see=False)
        describe_offsets(run, group, label="after acknowledging")
        describe_offsets(run, group, {topic: [1, 0]}, label="named partitions")
        describe_offsets(run, group, {run.name("missing"): [0]}, label="a topic that does not exist")
        describe_offsets(run, group, {topic: [0]}, version=0, label="v0")
        describe_offsets(run, "", label="empty group id")

    differ.check(request.node.name, scenario)


def alter_offsets(run, group, offsets, *, label=None):
    return run.call("AlterShareGroupOffsets", 0, {"group_id": group, "topics": [
        {"topic_name": t, "partitions": [{"partition_index": p, "start_offset": o} for p, o in ps.items()]}
        for t, ps in offsets.items()]}, label=label)


@pytest.mark.parametrize("start", [-(2 ** 63), -2, -1, 2 ** 63 - 1, 99])
def test_alter_share_group_offsets_out_of_range(differ, request, start):
    """A start offset no log has (negative, far past the end): what Kafka stores, describes and fetches from."""
    def scenario(run):
        group, topic = run.name("g"), run.name("t")
        run.create_topic(topic, 1)
        coordinator_ready(run, group)
        quick(run, group)
        produce(run, topic, 5)
        alter_offsets(run, group, {topic: {0: start}}, label="alter")
        describe_offsets(run, group, label="describe")

    differ.check(request.node.name, scenario)


def delete_offsets(run, group, topics, *, label=None):
    return run.call("DeleteShareGroupOffsets", 0, {"group_id": group, "topics": [{"topic_name": t} for t in topics]},
                    label=label)


def test_alter_and_delete_share_group_offsets(differ, request):
    def scenario(run):
        group, topic = run.name("g"), run.name("t")
        alter_offsets(run, group, {topic: {0: 1}}, label="alter, no such topic or group")
        delete_offsets(run, group, [topic], label="delete, no such group")
        run.create_topic(topic, 1)
        quick(run, group)
        produce(run, topic, 5)
        m, tid = member(run), topic_id(run, topic)
        epoch = join_assigned(run, group, m, [topic], 1, see=False)
        alter_offsets(run, group, {topic: {0: 2}}, label="alter, group has a member")
        delete_offsets(run, group, [topic], label="delete, group has a member")
        heartbeat(run, group, m, -1, see=False)
        alter_offsets(run, group, {topic: {0: 2, 3: 1}, run.name("missing"): {0: 0}}, label="alter, empty group")
        describe_offsets(run, group, label="after alter")
        m2 = member(run, 2)
        join_assigned(run, group, m2, [topic], 1, see=False)
        answers, _ = fetch_until(run, group, m2, 0, [(tid, 0)], 3)
        seen_fetch(run, "fetched from the altered offset", answers)
        heartbeat(run, group, m2, epoch, see=False)
        run.call("DeleteGroups", 2, {"groups_names": [group]}, label="delete group with a member")

    differ.check(request.node.name, scenario)


def test_delete_share_group_offsets_and_group(differ, request):
    def scenario(run):
        group, topic = run.name("g"), run.name("t")
        run.create_topic(topic, 1)
        earliest(run, group)
        m, tid = member(run), topic_id(run, topic)
        join_assigned(run, group, m, [topic], 1, see=False)
        fetch(run, group, m, 0, [(tid, 0)], see=False)
        produce(run, topic, 2)
        answers, epoch = fetch_until(run, group, m, 1, [], 2)
        ack(run, group, m, epoch, [(tid, 0, [batch(0, 1, ACCEPT)])], see=False)
        fetch(run, group, m, -1, [], see=False)
        heartbeat(run, group, m, -1, see=False)
        describe_offsets(run, group, label="before delete")
        delete_offsets(run, group, [topic, run.name("missing")], label="delete offsets")
        describe_offsets(run, group, label="after delete")
        run.call("DeleteGroups", 2, {"groups_names": [group, run.name("nope")]}, label="delete groups")
        run.call(DESCRIBE, 1, {"group_ids": [group], "include_authorized_operations": False}, label="described")
        describe_offsets(run, group, label="offsets of the deleted group")

    differ.check(request.node.name, scenario)


# -- transactions: what a share group acquires around markers and aborted records ----------------------------------

def test_transactional_records(differ, request):
    """An aborted transaction, a committed one and an open one, read by a read_committed and a read_uncommitted
    group: read_committed reads up to the LSO and archives the aborted records; the markers' offsets are acquired
    with the records around them."""
    from confluent_kafka import Producer

    def scenario(run):
        topic = run.name("t")
        run.create_topic(topic, 1)
        producer = Producer({"bootstrap.servers": run.target.bootstrap_servers, "transactional.id": run.name("tx"),
                             "linger.ms": 0})
        producer.init_transactions(20)
        for values, commit in (([b"aborted-1", b"aborted-2"], False), ([b"kept"], True), ([b"open"], None)):
            producer.begin_transaction()
            for v in values:
                producer.produce(topic, value=v, partition=0)
            producer.flush(20)
            if commit is True:
                producer.commit_transaction(20)
            elif commit is False:
                producer.abort_transaction(20)
        tid = topic_id(run, topic)
        for n, isolation in enumerate(("read_committed", "read_uncommitted")):
            group = run.name(f"g{n}")
            set_group_configs(run, group, {"share.auto.offset.reset": "earliest", "share.assignment.interval.ms": 0,
                                           "share.isolation.level": isolation}, see=False)
            m = member(run, n)
            join_assigned(run, group, m, [topic], 1, see=False)
            answers, epoch = fetch_until(run, group, m, 0, [(tid, 0)], 1)
            seen_fetch(run, f"{isolation}: acquired", answers)
            r = fetch(run, group, m, epoch, [], max_wait=300, see=False)
            seen_fetch(run, f"{isolation}: then", [r])
            run.call("DescribeShareGroupOffsets", 1, {"groups": [{"group_id": group, "topics": None}]},
                     label=f"{isolation}: offsets")
        producer.abort_transaction(20)

    differ.check(request.node.name, scenario)


# -- group ids in Kafka's order ---------------------------------------------------------------------------------------

def test_describe_and_delete_several_groups(differ, request):
    """Several group ids in one ShareGroupDescribe or DeleteGroups: answered in the order Kafka's coordinator walks
    its partitions."""
    def scenario(run):
        topic = run.name("t")
        run.create_topic(topic, 1)
        groups = [run.name(f"g{i}") for i in range(6)]
        for i, group in enumerate(groups[:3]):
            heartbeat(run, group, member(run, i), 0, [topic], see=False)
        ids = [*groups, groups[1]]
        d = run.call(DESCRIBE, 1, {"group_ids": ids, "include_authorized_operations": False}, see=False)
        run.see("described", [[g.group_id, g.error_code, g.group_state] for g in d.groups])
        for i, group in enumerate(groups[:2]):
            heartbeat(run, group, member(run, i), -1, see=False)
        run.call("DeleteGroups", 2, {"groups_names": ids}, label="deleted")
        listed = run.call("ListGroups", 5, {"states_filter": [], "types_filter": ["share"]}, see=False)
        run.see("still listed", sorted([g.group_id, g.group_state] for g in listed.groups if g.group_id in groups))

    differ.check(request.node.name, scenario)


def test_heartbeat_sees_a_topic_created_after_subscribing(differ, request):
    def scenario(run):
        group, topic = run.name("g"), run.name("t")
        m = member(run)
        r = heartbeat(run, group, m, 0, [topic], label="join before the topic exists")
        run.create_topic(topic, 2)
        state = {"epoch": r.member_epoch}

        def probe():
            h = heartbeat(run, group, m, state["epoch"], see=False)
            state["epoch"] = h.member_epoch
            a = assigned(h)
            return a is not None and sum(len(p) for p in a.values()) == 2 and h
        h = run.until("the new topic's partitions", probe, timeout=20, interval=0.2)
        run.see("assigned", {"epoch": h.member_epoch, "partitions": sorted(len(p) for p in assigned(h).values())})

    differ.check(request.node.name, scenario)


def test_group_record_locks_limit_what_is_in_flight(differ, request):
    def scenario(run):
        group, topic = run.name("g"), run.name("t")
        run.create_topic(topic, 1)
        set_group_configs(run, group, {"share.auto.offset.reset": "earliest", "share.assignment.interval.ms": 0,
                                       "share.partition.max.record.locks": 100})
        run.produce(topic, 0, [{"value": b"a%d" % i, "timestamp": 1} for i in range(60)], see=False)
        run.produce(topic, 0, [{"value": b"b%d" % i, "timestamp": 1} for i in range(60)], see=False)
        run.produce(topic, 0, [{"value": b"c%d" % i, "timestamp": 1} for i in range(60)], see=False)
        m = member(run)
        join_assigned(run, group, m, [topic], 1, see=False)
        tid = topic_id(run, topic)
        answers, epoch = fetch_until(run, group, m, 0, [(tid, 0)], 100)
        run.see("acquired", [[p.partition_index, a.first_offset, a.last_offset, a.delivery_count]
                             for r in answers for t in r.responses for p in t.partitions for a in p.acquired_records])
        r = fetch(run, group, m, epoch, [], max_wait=300, see=False)
        run.see("at the limit", [a.last_offset for t in r.responses for p in t.partitions for a in p.acquired_records])
        ack(run, group, m, epoch + 1, [(tid, 0, [batch(0, 59, ACCEPT)])], see=False)
        answers, _ = fetch_until(run, group, m, epoch + 2, [], 60)
        run.see("after accepting the first batch", [[a.first_offset, a.last_offset] for r in answers
                                                    for t in r.responses for p in t.partitions
                                                    for a in p.acquired_records])

    differ.check(request.node.name, scenario)


def test_share_requests_with_bad_ids(differ, request):
    """Group and member ids a share request may not carry: Kafka answers the code alone."""
    def scenario(run):
        group, topic = run.name("g"), run.name("t")
        run.create_topic(topic, 1)
        tid = topic_id(run, topic)
        long_id = "m" * 37
        fetch(run, group, long_id, 0, [(tid, 0)], label="ShareFetch, member id of 37 characters")
        fetch(run, group, "", 0, [(tid, 0)], label="ShareFetch, empty member id")
        # The group "" cannot be loaded; which error the partition gets depends on when Kafka's load fails
        # (UNKNOWN_SERVER_ERROR, or NOT_LEADER_OR_FOLLOWER once the failure fenced it): only that it fails compares.
        r = fetch(run, "", member(run), 0, [(tid, 0)], see=False)
        run.see("ShareFetch, empty group id", [r.error_code, [bool(p.error_code) for t in r.responses
                                                              for p in t.partitions]])
        ack(run, group, long_id, 1, [], label="ShareAcknowledge, member id of 37 characters")
        ack(run, group, "", 1, [], label="ShareAcknowledge, empty member id")
        heartbeat(run, group, long_id, 0, [topic], label="ShareGroupHeartbeat, member id of 37 characters")
        fetch(run, "", member(run), -1, [], label="ShareFetch, empty group id, closing")

    differ.check(request.node.name, scenario)


# -- where kafkamock keeps share state (KIP-932's control records, not __share_group_state) ------------------------

def test_find_coordinator_share_keys(differ, request):
    """FindCoordinator for share-partition keys (key type 2, v6+: what a broker asks to find a share-partition's
    state): well-formed keys are answered, whether or not the topic exists; malformed ones are INVALID_REQUEST."""
    from kafkamock.broker.cluster import kafka_uuid_string

    def scenario(run):
        share_state_ready(run)
        group, topic = run.name("g"), run.name("t")
        run.create_topic(topic, 2)
        tid = kafka_uuid_string(topic_id(run, topic))
        keys = [f"{group}:{tid}:1", f"{group}:AAAAAAAAAAAAAAAAAAAAAA:0", f"a:b:{group}:{tid}:0", f"{group}:{tid}",
                f"{group}:bad:0", f"{group}:{tid}:x", f" :{tid}:0", "nothing"]
        for version, asked in ((6, keys), (5, keys[:1])):        # (keys hold random topic ids: seen by position)
            r = run.call("FindCoordinator", version, {"key_type": 2, "coordinator_keys": asked}, see=False)
            run.see(f"v{version}", [[c.key == asked[i], c.error_code, c.error_message, c.node_id, c.port > 0]
                                    for i, c in enumerate(r.coordinators)])

    differ.check(request.node.name, scenario)


def test_records_produced_after_share_state_is_written(differ, request):
    """A group consuming as records keep coming: what it acquires and acknowledges is Kafka's, but kafkamock writes
    the share state into the partition (a SHARE_CHECKPOINT at the first acknowledgement, then SHARE_DELTAs), where
    each control batch takes an offset as a transaction marker does: the records produced after it, and the log end
    offset, are further on than on Kafka (listed in known.toml). The lag counts records only, as Kafka's."""
    def scenario(run):
        group, topic = run.name("g"), run.name("t")
        m, tid = ready(run, group, topic)
        produce(run, topic, 2)
        answers, epoch = fetch_until(run, group, m, 1, [], 2)
        seen_fetch(run, "first records", answers)
        ack(run, group, m, epoch, [(tid, 0, [batch(0, 0, ACCEPT), batch(1, 1, RELEASE)])], label="accept and release")
        produce(run, topic, 2, first=2)
        answers, epoch = fetch_until(run, group, m, epoch + 1, [], 3)
        seen_fetch(run, "the released one and the new ones", answers)
        describe_offsets(run, group, label="in flight")
        acquired_now = sorted({(a.first_offset, a.last_offset) for r in answers for t in r.responses
                               for p in t.partitions for a in p.acquired_records})
        ack(run, group, m, epoch, [(tid, 0, [batch(f, last, ACCEPT) for f, last in acquired_now])],
            label="accept them")
        describe_offsets(run, group, label="all done")
        run.call("ListOffsets", 7, {"replica_id": -1, "isolation_level": 0, "topics": [{"name": topic, "partitions": [
            {"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}]}, label="log end offset")

    differ.check(request.node.name, scenario)
