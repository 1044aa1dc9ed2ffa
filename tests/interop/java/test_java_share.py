"""Share groups (KIP-932) and RENEW (KIP-1222) with Apache Kafka's own Java client: kafka-clients 4.3.1's
KafkaShareConsumer in implicit and explicit mode, and its Admin's share-group calls.

Each test is one JVM running ClientScenarios' ``share`` scenario (tests/java/ClientScenarios.java): named share
consumers of one group, a producer and an Admin run a list of steps, each reporting its result or the exception it
met. Waits are deadlines on events (a poll until its records came); the one pause, ``process_ms``, is the slow
processing that RENEW exists for, set against a lock of a few seconds.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

LOCK_MS = 4000
pytestmark = [pytest.mark.java, pytest.mark.kafkamock(config={
    "group.share.min.record.lock.duration.ms": 1000,
    "group.share.delivery.count.limit": 3,
})]


def run_share(java_clients, target, group: str, topic: str, steps: list[dict], *, failing=()) -> dict[str, dict]:
    """Run the steps; each must succeed (but those labelled in ``failing``); the labelled reports by label."""
    reports = java_clients.share(target.bootstrap_servers, group, topic, steps)
    assert len(reports) == len(steps), reports
    by_label: dict[str, dict] = {}
    for step, report in zip(steps, reports, strict=True):
        if step.get("label"):
            by_label[step["label"]] = report
        if step.get("label") in failing:
            assert not report["ok"], report
        else:
            assert report["ok"], f"step {report['index']} {report['op']} failed: {report.get('error')}"
    return by_label


def earliest(group: str, **more: Any) -> dict:
    """The Java tests' way to read from the start: the group config share.auto.offset.reset=earliest."""
    return {"op": "admin", "ops": [{"op": "alterGroupConfigs", "group": group,
                                    "set": {"share.auto.offset.reset": "earliest", **more}}]}


def records(report: dict) -> list[tuple[str, int]]:
    return [(r["key"], r["delivery_count"]) for r in report["result"]["records"]]


def test_implicit_mode_several_consumers_share_the_records_and_none_comes_twice(java_clients, kafka_target):
    topic, group = kafka_target.unique("share-implicit"), kafka_target.unique("sg-implicit")
    kafka_target.create_topic(topic, 2)
    names = ["c1", "c2", "c3"]
    # The members join at their first poll, in the drain. A member whose heartbeat comes within
    # share.assignment.interval.ms (1 s by default) of the last target learns its partitions only at its next
    # heartbeat, 5 s on: one member could then take all 300 records first (seen once, c3 alone, on a loaded
    # machine). With no interval, a heartbeat that finds the group epoch ahead computes the target at once.
    steps = [earliest(group, **{"share.assignment.interval.ms": "0"}), {"op": "produce", "count": 300, "batch": 10},
             *({"op": "consumer", "consumer": n, "config": {"max.poll.records": 40}} for n in names),
             {"op": "drain", "consumers": names, "count": 300, "label": "drain"}]
    got = run_share(java_clients, kafka_target, group, topic, steps)["drain"]["result"]
    delivered = [(r["partition"], r["offset"]) for n in names for r in got.get(n, [])]
    assert len(delivered) == 300 and len(set(delivered)) == 300      # every record once
    assert all(r["delivery_count"] == 1 for n in names for r in got.get(n, []))
    assert sum(1 for n in names if got.get(n)) >= 2, {n: len(got.get(n, [])) for n in names}


def test_explicit_mode_accept_release_reject(java_clients, kafka_target):
    topic, group = kafka_target.unique("share-explicit"), kafka_target.unique("sg-explicit")
    kafka_target.create_topic(topic, 1)
    steps = [earliest(group), {"op": "produce", "count": 3},
             {"op": "consumer", "consumer": "a", "mode": "explicit"},
             {"op": "poll", "consumer": "a", "count": 3, "label": "first"},
             {"op": "ack", "consumer": "a", "type": "accept", "offsets": [0]},
             {"op": "ack", "consumer": "a", "type": "release", "offsets": [1]},
             {"op": "ack", "consumer": "a", "type": "reject", "offsets": [2]},
             {"op": "commit", "consumer": "a", "label": "commit"},
             {"op": "consumer", "consumer": "b", "mode": "explicit"},
             {"op": "poll", "consumer": "b", "count": 2, "timeout_ms": 3000, "ack": "accept", "label": "again"},
             {"op": "poll", "consumer": "a", "count": 1, "timeout_ms": 3000, "ack": "accept", "label": "a again"},
             {"op": "commit", "consumer": "b"}, {"op": "commit", "consumer": "a"}]
    got = run_share(java_clients, kafka_target, group, topic, steps)
    assert records(got["first"]) == [("k0", 1), ("k1", 1), ("k2", 1)]
    assert set(got["commit"]["result"].values()) == {"ok"}
    # Only the released one comes again, on its second delivery. Consumer a, still open, fetches ahead: when its
    # ShareFetch is waiting at the broker, the release wakes it and a gets k1 back (Kafka 4.3.1 does so), else b
    # gets it.
    assert records(got["again"]) + records(got["a again"]) == [("k1", 2)]
    # A plain KafkaConsumer reads the three records and nothing else, and its position passes the share group's
    # control batches (on kafkamock: the checkpoint and deltas in the partition) to the end of the partition.
    plain = java_clients.consume(kafka_target.bootstrap_servers, topic, count=3, extra_poll_ms=500)
    assert [r["key"] for r in plain["records"]] == ["k0", "k1", "k2"]
    end = java_clients.admin(kafka_target.bootstrap_servers, [
        {"op": "listOffsets", "topic": topic, "partitions": [0], "specs": ["latest"]}])[0]["result"]["latest"]["0"]
    assert plain["positions"] == {"0": end["offset"]}


def test_without_renew_an_expired_lock_redelivers_with_delivery_count_two(java_clients, kafka_target):
    topic, group = kafka_target.unique("share-expiry"), kafka_target.unique("sg-expiry")
    kafka_target.create_topic(topic, 1)
    steps = [earliest(group, **{"share.record.lock.duration.ms": LOCK_MS}), {"op": "produce", "count": 1},
             {"op": "consumer", "consumer": "slow", "mode": "explicit"},
             # One poll() until the record comes: a second poll() called as the first ran out, with the record
             # already in the client, would set it fetching again in the background, and that fetch would take
             # the record back when its lock runs out (with delivery count 2, before "other" is assigned). The
             # record comes with the assignment, on a 5 s heartbeat: a multiple of the default 500 ms slice.
             {"op": "poll", "consumer": "slow", "count": 1, "slice_ms": 20_000, "label": "slow"},
             {"op": "consumer", "consumer": "other", "mode": "explicit"},
             # A member joining within share.assignment.interval.ms (1 s) of the last assignment waits for its
             # next heartbeat (5 s) to be assigned, as in Kafka 4.3.1.
             {"op": "poll", "consumer": "other", "count": 1, "timeout_ms": 20_000, "ack": "accept", "label": "other"},
             {"op": "commit", "consumer": "other"}]
    got = run_share(java_clients, kafka_target, group, topic, steps)
    assert records(got["slow"]) == [("k0", 1)] and got["slow"]["result"]["lock_timeout_ms"] == LOCK_MS
    assert records(got["other"]) == [("k0", 2)]


def test_renew_keeps_a_slow_record_from_other_consumers(java_clients, kafka_target):
    topic, group = kafka_target.unique("share-renew"), kafka_target.unique("sg-renew")
    kafka_target.create_topic(topic, 1)
    steps = [earliest(group, **{"share.record.lock.duration.ms": LOCK_MS}), {"op": "produce", "count": 1},
             {"op": "consumer", "consumer": "slow", "mode": "explicit"},
             {"op": "consumer", "consumer": "other", "mode": "explicit"},
             {"op": "poll", "consumer": "slow", "count": 1, "label": "slow"}]
    # 4 x 1.5 s of processing: well past the 4 s lock, renewed each time (with half a lock to spare for a loaded
    # machine), by commitSync (a ShareAcknowledge) or by poll (a ShareFetch with IsRenewAck). The client keeps a
    # renewed record and hands it out again at the next poll.
    for k in range(4):
        steps += [{"op": "process_ms", "ms": 1500},
                  {"op": "ack", "consumer": "slow", "type": "renew"}]
        if k % 2 == 0:
            steps += [{"op": "commit", "consumer": "slow", "label": f"renew-{k}"}]
        steps += [{"op": "poll", "consumer": "slow", "count": 1, "timeout_ms": 3000, "label": f"kept-{k}"},
                  {"op": "poll", "consumer": "other", "count": 1, "timeout_ms": 300, "ack": "release",
                   "label": f"other-{k}"}]
    steps += [{"op": "ack", "consumer": "slow", "type": "accept"}, {"op": "commit", "consumer": "slow",
                                                                     "label": "accept"},
              {"op": "poll", "consumer": "other", "count": 1, "timeout_ms": 2500, "ack": "accept", "label": "after"}]
    got = run_share(java_clients, kafka_target, group, topic, steps)
    assert records(got["slow"]) == [("k0", 1)] and got["slow"]["result"]["lock_timeout_ms"] == LOCK_MS
    for k in range(4):
        if k % 2 == 0:
            assert set(got[f"renew-{k}"]["result"].values()) == {"ok"}, got[f"renew-{k}"]
        assert records(got[f"kept-{k}"]) == [("k0", 1)]       # still the first delivery
        assert records(got[f"other-{k}"]) == []
    assert set(got["accept"]["result"].values()) == {"ok"}
    assert records(got["after"]) == []                    # accepted: never delivered again
    if kafka_target.wire is not None:                     # both ways of renewing went over the wire
        renewing = {(e["api"], e["version"]) for e in kafka_target.wire.entries
                    if e["api"] in ("ShareFetch", "ShareAcknowledge") and e["request"].is_renew_ack}
        assert renewing == {("ShareFetch", 2), ("ShareAcknowledge", 2)}, renewing


def test_the_delivery_limit_archives_a_record(java_clients, kafka_target):
    topic, group = kafka_target.unique("share-limit"), kafka_target.unique("sg-limit")
    kafka_target.create_topic(topic, 1)
    steps = [earliest(group), {"op": "produce", "count": 2}, {"op": "consumer", "consumer": "a", "mode": "explicit"}]
    for k in range(3):
        # The first poll waits for the assignment: Kafka 4.3.1 assigns a share group's partitions a heartbeat
        # (5 s) after the join, once their share state is initialized.
        steps += [{"op": "poll", "consumer": "a", "count": 1, "timeout_ms": 15000 if k == 0 else 3000,
                   "label": f"poll-{k}"},
                  {"op": "ack", "consumer": "a", "type": "release", "offsets": [0]},
                  {"op": "ack", "consumer": "a", "type": "accept", "offsets": [1]},
                  {"op": "commit", "consumer": "a"}]
    steps += [{"op": "poll", "consumer": "a", "count": 1, "timeout_ms": 1000, "label": "last"}]
    got = run_share(java_clients, kafka_target, group, topic, steps)
    counts = Counter()
    for k in range(3):
        for key, delivery in records(got[f"poll-{k}"]):
            counts[key] += 1
            assert key != "k0" or delivery == counts[key]
    assert counts["k0"] == 3                              # group.share.delivery.count.limit = 3
    assert records(got["last"]) == []                     # then archived


def test_admin_share_group_calls(java_clients, kafka_target):
    topic, group = kafka_target.unique("share-admin"), kafka_target.unique("sg-admin")
    kafka_target.create_topic(topic, 2)
    steps = [earliest(group), {"op": "produce", "count": 10, "partition": 0},
             {"op": "consumer", "consumer": "a", "mode": "explicit"},
             {"op": "poll", "consumer": "a", "count": 10, "ack": "accept", "label": "poll"},
             {"op": "commit", "consumer": "a"},
             {"op": "admin", "label": "describe", "ops": [
                 {"op": "describeShareGroups", "groups": [group]},
                 {"op": "listShareGroupOffsets", "group": group},
                 {"op": "describeConfigs", "resources": [{"type": "group", "name": group}]}]},
             {"op": "admin", "label": "busy", "ops": [
                 {"op": "alterShareGroupOffsets", "group": group, "offsets": {topic: {"0": 3}}}]},
             {"op": "close", "consumer": "a"},
             {"op": "admin", "label": "alter", "ops": [
                 {"op": "alterShareGroupOffsets", "group": group, "offsets": {topic: {"0": 3}}},
                 {"op": "listShareGroupOffsets", "group": group}]},
             {"op": "consumer", "consumer": "b", "mode": "explicit"},
             {"op": "poll", "consumer": "b", "count": 7, "ack": "accept", "label": "again"},
             {"op": "commit", "consumer": "b"},
             {"op": "close", "consumer": "b"},
             {"op": "admin", "label": "delete", "ops": [
                 {"op": "deleteShareGroupOffsets", "group": group, "topics": [topic]},
                 {"op": "listShareGroupOffsets", "group": group},
                 {"op": "deleteShareGroups", "groups": [group]},
                 {"op": "describeShareGroups", "groups": [group]}]}]
    got = run_share(java_clients, kafka_target, group, topic, steps, failing={"busy"})
    assert len(records(got["poll"])) == 10
    described, offsets, configs = (got["describe"]["result"][i]["result"] for i in range(3))
    member = described[group]["members"][0]
    assert described[group]["state"] == "Stable" and member["assignment"] == [f"{topic}-0", f"{topic}-1"]
    # As Kafka 4.3.1 reports it: the start offset the last state write carried (from before the acknowledgements
    # moved it), and no lag (10 records, all delivered).
    assert offsets[f"{topic}-0"]["start_offset"] == 0 and offsets[f"{topic}-0"]["lag"] == 0
    group_configs = configs[f"group:{group}"]
    assert group_configs["share.auto.offset.reset"]["value"] == "earliest"
    assert group_configs["share.auto.offset.reset"]["source"] == "DYNAMIC_GROUP_CONFIG"
    assert "GroupNotEmptyException" in str(got["busy"]["error"]), got["busy"]["error"]
    assert got["alter"]["result"][1]["result"][f"{topic}-0"]["start_offset"] == 3
    assert sorted(k for k, _ in records(got["again"])) == sorted(f"k{n}" for n in range(3, 10))
    deleted = got["delete"]["result"]
    assert f"{topic}-0" not in deleted[1]["result"] or deleted[1]["result"][f"{topic}-0"].get("start_offset") in (
        None, -1), deleted[1]
    assert "error" in deleted[3]["result"][group] or deleted[3]["result"][group]["state"] == "Dead", deleted[3]


@pytest.mark.kafkamock(brokers=3, config={"group.share.min.record.lock.duration.ms": 1000,
                                          "group.share.delivery.count.limit": 3})
def test_share_consumers_on_three_brokers(java_clients, kafka_target):
    topic, group = kafka_target.unique("share-multi"), kafka_target.unique("sg-multi")
    kafka_target.create_topic(topic, 6)
    names = ["c1", "c2"]
    steps = [earliest(group), {"op": "produce", "count": 120, "batch": 10},
             *({"op": "consumer", "consumer": n, "config": {"max.poll.records": 30}} for n in names),
             {"op": "drain", "consumers": names, "count": 120, "label": "drain"}]
    got = run_share(java_clients, kafka_target, group, topic, steps)["drain"]["result"]
    delivered = [(r["partition"], r["offset"]) for n in names for r in got.get(n, [])]
    assert len(delivered) == 120 and len(set(delivered)) == 120
    assert {p for p, _ in delivered} == set(range(6))
