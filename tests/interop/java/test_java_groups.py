"""Consumer groups with Apache Kafka's own clients (kafka-clients 4.3.1's KafkaConsumer and Admin) and librdkafka.

Each group member is one JVM running ClientScenarios' ``group`` scenario (see tests/java/ClientScenarios.java):
members run side by side (``JavaClients.start_group``) until the test stops them, printing a PROGRESS line on
every assignment callback, generation (member epoch) change and poll that returned records, so the tests follow
the group as it moves. Both rebalance protocols: ``classic`` (JoinGroup/SyncGroup/Heartbeat/LeaveGroup) and
``consumer`` (KIP-848 ConsumerGroupHeartbeat, with the broker's assignor).

These tests are proven against a real Kafka: with ``KAFKAMOCK_EXTERNAL_BOOTSTRAP=127.0.0.1:PORT`` the
``kafka_target`` fixture (conftest.py) hands them that broker instead of a fresh kafkamock. The reference broker
(Kafka 3.8.0, KRaft; ../shared/reference-kafka) must be started with KIP-848 enabled:

    ../shared/reference-kafka/run.sh DATA_DIR PORT group.coordinator.rebalance.protocols=classic,consumer \\
        group.initial.rebalance.delay.ms=0 &

Where 3.8 and 4.3 brokers differ (describing a group that does not exist), the tests accept both answers.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

import pytest
from confluent_kafka import Consumer, KafkaException
from support.java_clients import RunningScenario, ScenarioError

pytestmark = [pytest.mark.java, pytest.mark.kafkamock(config={"group.initial.rebalance.delay.ms": 0})]

PARTITIONS = 4
JOIN_S = 30       # the members' first (shared) assignment; a broker without groups fails the tests here
SETTLE_S = 40     # a rebalance after a member leaves or records arrive (KIP-848 heartbeats come every 5 s)


# -- helpers ---------------------------------------------------------------------------------------------------------

def tps(topic: str, partitions) -> set[str]:
    return {f"{topic}:{p}" for p in partitions}


def assigned(run: RunningScenario) -> set[str]:
    """The member's assignment after its latest event ("topic:partition" strings)."""
    return {tp for tp in run.last.get("assigned", "").split(",") if tp}


def consumed(run: RunningScenario) -> int:
    return int(run.last.get("records", 0))


def generation(run: RunningScenario) -> int:
    return int(run.last.get("generation", -1))


def events(run_or_result, since: int = 0) -> list[dict]:
    """Events from a running member's PROGRESS lines or a finished member's result, without the records ticks."""
    if isinstance(run_or_result, RunningScenario):
        raw = list(run_or_result.progress)[since:]      # a copy: the reader thread appends to it
        return [{"event": e["event"], "partitions": set(filter(None, e.get("partitions", "").split(","))),
                 "assigned": set(filter(None, e.get("assigned", "").split(","))), "generation": int(e["generation"])}
                for e in raw if e["event"] != "records"]
    return [{"event": e["event"], "partitions": set(e.get("partitions", ())), "assigned": set(e["assigned"]),
             "generation": e["generation"]} for e in run_or_result["events"][since:] if e["event"] != "records"]


def describe_members(members: Mapping[str, RunningScenario]) -> str:
    return "; ".join(f"{name}: assigned={sorted(assigned(run))} generation={generation(run)} "
                     f"records={consumed(run)} alive={run.proc.poll() is None}" for name, run in members.items())


def wait_members(members: Mapping[str, RunningScenario], condition: Callable[[], bool], timeout: float, what: str,
                 step: Callable[[], None] | None = None) -> None:
    """Until ``condition()`` holds; fails at the deadline, or at once (with its error) when a member's JVM ends."""
    deadline = time.monotonic() + timeout
    while not condition():
        for name, run in members.items():
            if run.proc.poll() is not None:
                try:
                    run.result(timeout=10)
                    why = "it finished"
                except ScenarioError as exc:
                    why = str(exc)
                raise AssertionError(f"while waiting for {what}, group member {name} ended: {why}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}; {describe_members(members)}\n"
                                 + "\n".join(f"--- {name} stderr tail:\n{run.stderr_tail(15)}"
                                             for name, run in members.items()))
        if step is not None:
            step()
        else:
            time.sleep(0.02)   # the polling interval of a deadline loop, not a stand-in for an event


def stop_all(*runs: RunningScenario) -> None:
    for run in runs:
        run.kill()


def produce(java_clients, bootstrap: str, topic: str, per_partition: int, start: int = 0,
            partitions: int = PARTITIONS) -> set[tuple[int, int, str]]:
    """``per_partition`` records into each partition, record i of partition p keyed "k<p>-<i>"; on a fresh topic
    record i lands at offset i. Returns {(partition, offset, key)}."""
    records = [{"key": f"k{p}-{i}", "value": f"v{p}-{i}", "partition": p}
               for i in range(start, start + per_partition) for p in range(partitions)]
    metadata = java_clients.produce(bootstrap, topic, records)["metadata"]
    got = {(m["partition"], m["offset"], r["key"]) for r, m in zip(records, metadata, strict=True)}
    assert got == {(p, i, f"k{p}-{i}") for i in range(start, start + per_partition) for p in range(partitions)}, got
    return got


def records_of(*results: dict) -> list[tuple[int, int, str]]:
    out = []
    for result in results:
        for r in result["records"]:
            assert r["value"] == "v" + r["key"][1:], r
            out.append((r["partition"], r["offset"], r["key"]))
    return out


def admin_results(java_clients, bootstrap: str, ops: list[dict]) -> list[dict]:
    """Run the ops in one Admin; each op's result (an op that failed as a whole fails the test)."""
    results = java_clients.admin(bootstrap, ops, check=False)
    failed = [r for r in results if "error" in r]
    assert not failed, f"admin ops failed: {failed}"
    return [r["result"] for r in results]


def error_of(value) -> dict:
    assert isinstance(value, dict) and "error" in value, f"expected an error, got {value!r}"
    return value["error"]


def offsets(listed: Mapping[str, Mapping[str, dict | None]], topic: str) -> dict[int, int | None]:
    return {int(p): (o or {}).get("offset") for p, o in listed.get(topic, {}).items()}


# -- two Java members, then one, then a fresh one -------------------------------------------------------------------

def two_members_then_one(java_clients, target, protocol: str) -> dict:
    """Members A and B share a 4-partition topic, A leaves and B takes everything, then a fresh member C resumes
    from the group's committed offsets. Checks what both protocols share; returns what it saw for the rest."""
    bootstrap = target.bootstrap_servers
    topic, group = target.unique("orders"), target.unique(f"{protocol}-group")
    target.create_topic(topic, PARTITIONS)
    produced = produce(java_clients, bootstrap, topic, 10)                       # offsets 0..9
    everything = tps(topic, range(PARTITIONS))

    a = java_clients.start_group(bootstrap, group, [topic], protocol=protocol, client_id="member-a",
                                 progress_every=1)
    b = java_clients.start_group(bootstrap, group, [topic], protocol=protocol, client_id="member-b",
                                 progress_every=1)
    members = {"member-a": a, "member-b": b}
    seen: dict = {"topic": topic, "group": group}
    try:
        # Both in: every partition with exactly one of them, all 40 records read between them.
        def shared() -> bool:
            sa, sb = assigned(a), assigned(b)
            same_round = protocol != "classic" or generation(a) == generation(b)
            return bool(sa and sb and not sa & sb and sa | sb == everything and same_round
                        and consumed(a) + consumed(b) >= 40)
        wait_members(members, shared, JOIN_S, "both members to share the partitions and read the 40 records")
        seen["split"] = {"member-a": assigned(a), "member-b": assigned(b)}
        seen["both_generation"] = {"member-a": generation(a), "member-b": generation(b)}
        seen["member_ids"] = {a.last["member"], b.last["member"]}
        assert len(seen["member_ids"]) == 2, seen["member_ids"]

        # Commits equal positions: each member committed after every poll; the broker has 10 for every partition.
        described, listed = admin_results(java_clients, bootstrap, [
            {"op": "describeConsumerGroups", "groups": [group], "until_state": "Stable", "timeout_ms": 20_000},
            {"op": "listConsumerGroupOffsets", "group": group}])
        failed_commits = [f"{name}: {e.get('detail')}" for name, run in members.items() for e in list(run.progress)
                          if e["event"] == "commit_failed"]
        assert offsets(listed, topic) == {p: 10 for p in range(PARTITIONS)}, \
            f"committed offsets {listed}; the members' failed commits: {failed_commits[:4]}"
        stable = described[group]
        seen["described"] = stable
        assert stable["state"] == "Stable" and not stable["simple"], stable
        assert {m["member_id"] for m in stable["members"]} == seen["member_ids"], stable
        by_client = {m["client_id"]: set(m["assignment"]) for m in stable["members"]}
        assert by_client == seen["split"], (by_client, seen["split"])
        assert stable["coordinator"].get("id") is not None and stable["coordinator"]["port"] > 0, stable

        # A leaves: B takes every partition.
        mark = len(b.progress)
        a.stop()
        result_a = a.result(timeout=60)
        seen["a"] = result_a
        assert result_a["stopped_by"] == "stop" and not result_a["commit_errors"], result_a
        assert set(result_a["assignment"]) == seen["split"]["member-a"], result_a["assignment"]
        for tp in result_a["assignment"]:
            t, p = tp.split(":")
            assert result_a["committed"][t][p] == result_a["positions"][t][p] == 10, (tp, result_a)
        wait_members({"member-b": b}, lambda: assigned(b) == everything, SETTLE_S,
                     "member-b to take every partition after member-a left")
        seen["b_handover"] = events(b, mark)

        # New records go to B alone.
        produced |= produce(java_clients, bootstrap, topic, 5, start=10)       # offsets 10..14
        read_by_a = len(result_a["records"])
        wait_members({"member-b": b}, lambda: read_by_a + consumed(b) >= 60, SETTLE_S,
                     f"member-b to read the 20 new records ({read_by_a} read by member-a)")
        b.stop()
        result_b = b.result(timeout=60)
        seen["b"] = result_b
    finally:
        stop_all(a, b)

    assert result_b["stopped_by"] == "stop" and not result_b["commit_errors"], result_b
    consumed_records = records_of(result_a, result_b)
    assert len(consumed_records) == len(set(consumed_records)), "a record was read twice"
    assert set(consumed_records) == produced
    assert set(result_b["assignment"]) == everything
    assert result_b["committed"] == result_b["positions"] == {topic: {str(p): 15 for p in range(PARTITIONS)}}

    # A fresh member resumes from the committed offsets: it reads only the records produced after B left.
    produce(java_clients, bootstrap, topic, 2, start=15)                        # offsets 15, 16
    result_c = java_clients.group(bootstrap, group, [topic], protocol=protocol, count=8, client_id="member-c",
                                  timeout_ms=JOIN_S * 1000)
    seen["c"] = result_c
    assert not result_c["timed_out"], f"member-c read {len(result_c['records'])} of 8 records: {result_c}"
    assert sorted(records_of(result_c)) == sorted((p, i, f"k{p}-{i}") for i in (15, 16) for p in range(PARTITIONS))
    assert result_c["committed"] == {topic: {str(p): 17 for p in range(PARTITIONS)}}, result_c["committed"]
    assert [set(e["assigned"]) for e in result_c["events"] if e["event"] == "assigned"][:1] == [everything]

    # Everyone left: the group is empty, its offsets kept.
    described, listed = admin_results(java_clients, bootstrap, [
        {"op": "describeConsumerGroups", "groups": [group], "until_state": "Empty", "timeout_ms": 20_000},
        {"op": "listConsumerGroupOffsets", "group": group}])
    seen["empty"] = described[group]
    assert described[group]["members"] == [], described
    assert offsets(listed, topic) == {p: 17 for p in range(PARTITIONS)}, listed
    return seen


def test_classic_group_two_java_members_share_then_hand_over(kafka_target, java_clients):
    seen = two_members_then_one(java_clients, kafka_target, "classic")

    stable = seen["described"]
    assert stable["type"] == "Classic", stable
    # Both members use the client's default strategies [range, cooperative-sticky]: the group picks range (both
    # members' first choice), an eager protocol.
    assert stable["assignor"] == "range", stable
    assert all(m["member_epoch"] is None for m in stable["members"]), stable
    assert seen["split"] == {"member-a": tps(seen["topic"], (0, 1)), "member-b": tps(seen["topic"], (2, 3))} or \
        seen["split"] == {"member-a": tps(seen["topic"], (2, 3)), "member-b": tps(seen["topic"], (0, 1))}, seen["split"]

    # A left with the generation both were in; B's rebalance (eager): all its partitions revoked, then all four
    # assigned, one generation later.
    both = seen["both_generation"]["member-a"]
    assert seen["a"]["group_metadata"]["generation_id"] == both
    handover = [e for e in seen["b_handover"] if e["event"] in ("revoked", "assigned", "lost")]
    everything = tps(seen["topic"], range(PARTITIONS))
    assert [(e["event"], e["partitions"]) for e in handover] == [
        ("revoked", seen["split"]["member-b"]), ("assigned", everything)], seen["b_handover"]
    assert handover[-1]["generation"] == both + 1, handover
    assert seen["b"]["group_metadata"]["generation_id"] == both + 1
    assert seen["c"]["group_metadata"]["generation_id"] > both + 1, seen["c"]["group_metadata"]
    assert seen["empty"]["state"] == "Empty" and seen["empty"]["type"] == "Classic", seen["empty"]


def test_consumer_group_kip848_two_java_members_share_then_hand_over(kafka_target, java_clients):
    seen = two_members_then_one(java_clients, kafka_target, "consumer")

    stable = seen["described"]
    assert stable["type"] == "Consumer", stable
    assert stable["assignor"] == "uniform", stable    # the broker's default assignor (group.consumer.assignors)
    epoch = stable["group_epoch"]
    assert isinstance(epoch, int) and epoch >= 2 and stable["target_assignment_epoch"] == epoch, stable
    for m in stable["members"]:
        assert m["member_epoch"] == epoch and set(m["target_assignment"]) == set(m["assignment"]), stable
    assert all(len(parts) == 2 for parts in seen["split"].values()), seen["split"]

    # Member epochs only move forward while a member is in the group.
    for name in ("a", "b"):
        epochs = []
        for e in events(seen[name]):
            if e["event"] == "stopping":
                break
            if e["generation"] >= 0:
                epochs.append(e["generation"])
        assert epochs and epochs == sorted(epochs), (name, epochs)

    # KIP-848 is incremental: B keeps its partitions and gets A's on top, no revocation, a higher epoch.
    handover = seen["b_handover"]
    assert not [e for e in handover if e["event"] in ("revoked", "lost")], handover
    added = [e for e in handover if e["event"] == "assigned" and e["partitions"]]
    everything = tps(seen["topic"], range(PARTITIONS))
    assert added and added[-1]["partitions"] == seen["split"]["member-a"] and added[-1]["assigned"] == everything, \
        handover
    after = max(e["generation"] for e in handover)
    assert after > seen["both_generation"]["member-b"], (handover, seen["both_generation"])
    assert seen["b"]["group_metadata"]["generation_id"] >= after
    assert seen["c"]["group_metadata"]["generation_id"] > after, seen["c"]["group_metadata"]
    assert seen["empty"]["state"] == "Empty" and seen["empty"]["type"] == "Consumer", seen["empty"]


# -- Admin -------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_admin_lists_describes_and_edits_groups(kafka_target, java_clients, protocol):
    bootstrap = kafka_target.bootstrap_servers
    topic = kafka_target.unique("ledger")
    idle, active, simple = (kafka_target.unique(f"{protocol}-{name}") for name in ("idle", "active", "simple"))
    ours = {idle, active, simple}
    kafka_target.create_topic(topic, 2)
    java_clients.produce(bootstrap, topic, [{"key": f"k{i}", "value": f"v{i}", "partition": 0 if i < 3 else 1}
                                            for i in range(5)])
    kind, other = ("Classic", "consumer") if protocol == "classic" else ("Consumer", "classic")

    # An idle group: a member read everything, committed and left.
    result_idle = java_clients.group(bootstrap, idle, [topic], protocol=protocol, count=5, client_id="idle-member",
                                     timeout_ms=JOIN_S * 1000)
    assert result_idle["joined"], f"the idle group's member never joined its group: {result_idle}"
    assert not result_idle["timed_out"] and result_idle["committed"] == {topic: {"0": 3, "1": 2}}, result_idle

    member = java_clients.start_group(bootstrap, active, [topic], protocol=protocol, client_id="active-member",
                                      progress_every=1)
    try:
        wait_members({"active-member": member}, lambda: assigned(member) == tps(topic, (0, 1))
                     and consumed(member) >= 5, JOIN_S, "the active member's assignment and 5 records")
        (described_active, described_idle, empty, stable, everything, same_type, other_type, idle_offsets,
         active_offsets, alter_idle, alter_active, idle_after_alter, delete_active_offset, delete_idle_offset,
         idle_after_delete, delete_active, delete_idle, after_delete, deleted_offsets) = admin_results(
            java_clients, bootstrap, [
                {"op": "describeConsumerGroups", "groups": [active], "until_state": "Stable", "timeout_ms": 20_000},
                {"op": "describeConsumerGroups", "groups": [idle]},
                {"op": "listConsumerGroups", "states": ["Empty"]},
                {"op": "listConsumerGroups", "states": ["Stable"]},
                {"op": "listConsumerGroups"},
                {"op": "listConsumerGroups", "types": [protocol]},
                {"op": "listConsumerGroups", "types": [other]},
                {"op": "listConsumerGroupOffsets", "group": idle},
                {"op": "listConsumerGroupOffsets", "group": active},
                {"op": "alterConsumerGroupOffsets", "group": idle, "offsets": {topic: {"0": 1}}},
                {"op": "alterConsumerGroupOffsets", "group": active, "offsets": {topic: {"0": 0}}},
                {"op": "listConsumerGroupOffsets", "group": idle},
                {"op": "deleteConsumerGroupOffsets", "group": active, "partitions": {topic: [0]}},
                {"op": "deleteConsumerGroupOffsets", "group": idle, "partitions": {topic: [1]}},
                {"op": "listConsumerGroupOffsets", "group": idle},
                {"op": "deleteConsumerGroups", "groups": [active]},
                {"op": "deleteConsumerGroups", "groups": [idle]},
                {"op": "listConsumerGroups"},
                {"op": "listConsumerGroupOffsets", "group": idle},
            ])
        member.stop()
        result_active = member.result(timeout=60)
    finally:
        member.kill()

    def listed(result: dict) -> dict[str, tuple[str, str]]:
        return {g["group_id"]: (g["state"], g["type"]) for g in result["groups"] if g["group_id"] in ours}

    # describe: the active group Stable with its one member, the idle one Empty with none.
    d = described_active[active]
    assert (d["state"], d["type"], d["simple"]) == ("Stable", kind, False), d
    assert d["assignor"] == ("range" if protocol == "classic" else "uniform"), d
    assert [(m["client_id"], m["assignment"], m["member_id"]) for m in d["members"]] == [
        ("active-member", sorted(tps(topic, (0, 1))), member.last["member"])], d
    assert d["members"][0]["host"], d
    d = described_idle[idle]
    assert (d["state"], d["type"], d["simple"], d["members"]) == ("Empty", kind, False, []), d
    if protocol == "classic":
        assert d["assignor"] == "", d    # an empty classic group has no protocol chosen

    # list, with state and type filters.
    assert listed(empty) == {idle: ("Empty", kind)}, empty
    assert listed(stable) == {active: ("Stable", kind)}, stable
    assert listed(everything) == {idle: ("Empty", kind), active: ("Stable", kind)}, everything
    assert listed(same_type) == {idle: ("Empty", kind), active: ("Stable", kind)}, same_type
    assert listed(other_type) == {}, other_type

    # offsets: listed; altered only while the group is empty (an active group answers UNKNOWN_MEMBER_ID).
    assert offsets(idle_offsets, topic) == {0: 3, 1: 2} and offsets(active_offsets, topic) == {0: 3, 1: 2}
    assert alter_idle == {"partitions": {topic: {"0": "ok"}}, "all": "ok"}, alter_idle
    for error in (error_of(alter_active["partitions"][topic]["0"]), error_of(alter_active["all"])):
        assert error["kafka_error"] == "UNKNOWN_MEMBER_ID", alter_active
        assert error["class"] == "org.apache.kafka.common.errors.UnknownMemberIdException", alter_active
    assert offsets(idle_after_alter, topic) == {0: 1, 1: 2}, idle_after_alter

    # offset delete: refused while a member subscribes to the topic, done on the idle group.
    for error in (error_of(delete_active_offset["partitions"][topic]["0"]), error_of(delete_active_offset["all"])):
        assert error["kafka_error"] == "GROUP_SUBSCRIBED_TO_TOPIC", delete_active_offset
        assert error["class"] == "org.apache.kafka.common.errors.GroupSubscribedToTopicException"
    assert delete_idle_offset == {"partitions": {topic: {"1": "ok"}}, "all": "ok"}, delete_idle_offset
    assert offsets(idle_after_delete, topic) == {0: 1}, idle_after_delete

    # group delete: refused while the group has a member, done on the empty one, which then is gone.
    error = error_of(delete_active[active])
    assert error["kafka_error"] == "NON_EMPTY_GROUP", delete_active
    assert error["class"] == "org.apache.kafka.common.errors.GroupNotEmptyException", delete_active
    assert delete_idle == {idle: "ok"}, delete_idle
    assert listed(after_delete) == {active: ("Stable", kind)}, after_delete
    assert deleted_offsets == {}, deleted_offsets
    assert result_active["stopped_by"] == "stop" and not result_active["commit_errors"], result_active

    # Once its member left, the active group can go too. Offsets committed by Admin alone make a "simple" group.
    (emptied, delete_emptied, gone, alter_simple, listed_simple, described_simple) = admin_results(
        java_clients, bootstrap, [
            {"op": "describeConsumerGroups", "groups": [active], "until_state": "Empty", "timeout_ms": 20_000},
            {"op": "deleteConsumerGroups", "groups": [active]},
            {"op": "describeConsumerGroups", "groups": [active, idle]},
            {"op": "alterConsumerGroupOffsets", "group": simple, "offsets": {topic: {"0": 2, "1": 1}}},
            {"op": "listConsumerGroups"},
            {"op": "describeConsumerGroups", "groups": [simple]},
        ])
    assert emptied[active]["state"] == "Empty" and emptied[active]["members"] == [], emptied
    assert delete_emptied == {active: "ok"}, delete_emptied
    for name in (active, idle):   # Kafka 3.8 describes a missing group as Dead, 4.x answers GROUP_ID_NOT_FOUND
        answer = gone[name]
        if "error" in answer:
            assert answer["error"]["kafka_error"] == "GROUP_ID_NOT_FOUND", gone
        else:
            assert answer["state"] == "Dead" and answer["members"] == [], gone
    assert alter_simple == {"partitions": {topic: {"0": "ok", "1": "ok"}}, "all": "ok"}, alter_simple
    assert listed(listed_simple) == {simple: ("Empty", "Classic")}, listed_simple
    d = described_simple[simple]
    assert (d["state"], d["type"], d["simple"], d["members"]) == ("Empty", "Classic", True, []), d


# -- Java and librdkafka in one classic group ------------------------------------------------------------------------

class RdMember:
    """A librdkafka (confluent-kafka) member of a classic group: polls on the test's thread (``step``), commits
    synchronously after every record, and keeps its assignment from the rebalance callbacks."""

    def __init__(self, bootstrap: str, group: str, topic: str):
        self.assignment: set[str] = set()
        self.records: list[tuple[int, int, str]] = []
        self.errors: list[str] = []
        self.consumer = Consumer({
            "bootstrap.servers": bootstrap, "group.id": group, "client.id": "rd-member",
            "partition.assignment.strategy": "range", "enable.auto.commit": False, "auto.offset.reset": "earliest",
            "heartbeat.interval.ms": 500, "session.timeout.ms": 10000, "fetch.wait.max.ms": 100,
            "log_level": 3})
        self.consumer.subscribe([topic], on_assign=self._assigned, on_revoke=self._revoked, on_lost=self._revoked)

    def _assigned(self, consumer, partitions) -> None:
        self.assignment = {f"{tp.topic}:{tp.partition}" for tp in partitions}

    def _revoked(self, consumer, partitions) -> None:
        self.assignment = set()

    def step(self) -> None:
        msg = self.consumer.poll(0.05)
        if msg is None:
            return
        if msg.error():
            self.errors.append(str(msg.error()))
            return
        self.records.append((msg.partition(), msg.offset(), msg.key().decode()))
        try:
            self.consumer.commit(message=msg, asynchronous=False)
        except KafkaException as exc:
            self.errors.append(f"commit: {exc}")

    def close(self) -> None:
        self.consumer.close()


def test_java_and_librdkafka_members_share_a_classic_group(kafka_target, java_clients):
    bootstrap = kafka_target.bootstrap_servers
    topic, group = kafka_target.unique("mixed"), kafka_target.unique("mixed-group")
    kafka_target.create_topic(topic, PARTITIONS)
    produced = produce(java_clients, bootstrap, topic, 10)
    everything = tps(topic, range(PARTITIONS))

    java = java_clients.start_group(bootstrap, group, [topic], protocol="classic", assignor="range",
                                    client_id="java-member", progress_every=1)
    rd = RdMember(bootstrap, group, topic)
    closed = False
    try:
        def shared() -> bool:
            sj = assigned(java)
            return bool(sj and rd.assignment and not sj & rd.assignment and sj | rd.assignment == everything
                        and consumed(java) + len(rd.records) >= 40)
        wait_members({"java-member": java}, shared, JOIN_S,
                     f"the Java and librdkafka members to share the partitions (librdkafka: {rd.__dict__})",
                     step=rd.step)
        assert len(assigned(java)) == len(rd.assignment) == 2, (assigned(java), rd.assignment)
        assert not rd.errors, rd.errors
        split = {"java-member": assigned(java), "rd-member": set(rd.assignment)}

        (described,) = admin_results(java_clients, bootstrap, [
            {"op": "describeConsumerGroups", "groups": [group], "until_state": "Stable", "timeout_ms": 20_000}])
        d = described[group]
        assert (d["state"], d["type"], d["assignor"]) == ("Stable", "Classic", "range"), d
        assert {m["client_id"]: set(m["assignment"]) for m in d["members"]} == split, d

        rd.close()
        closed = True
        wait_members({"java-member": java}, lambda: assigned(java) == everything, SETTLE_S,
                     "the Java member to take every partition after the librdkafka member left")
        java.stop()
        result = java.result(timeout=60)
    finally:
        java.kill()
        if not closed:
            rd.close()

    consumed_records = records_of(result) + rd.records
    assert len(consumed_records) == len(set(consumed_records)), "a record was read twice"
    assert set(consumed_records) == produced
    assert result["committed"] == {topic: {str(p): 10 for p in range(PARTITIONS)}}, result["committed"]
