"""Transactions with Apache Kafka's own Java clients (kafka-clients 4.3.1's transactional KafkaProducer, KafkaConsumer
and Admin): commit and abort as read_committed and read_uncommitted readers see them, sendOffsetsToTransaction,
zombie fencing (a second producer, Admin.fenceProducers), the transaction timeout, and KIP-664's admin APIs.

Each test is one JVM running ClientScenarios' ``txn`` scenario (tests/java/ClientScenarios.java): named producers and
consumers run a list of steps, and every step reports success or the exception it met (ProducerFencedException...),
so a test can assert what a zombie is told. Waits are deadlines on events (``await_txn``, ``await_offsets``, a consumer
polling until it has its records), never sleeps.

These tests are proven against a real Kafka: with ``KAFKAMOCK_EXTERNAL_BOOTSTRAP=127.0.0.1:PORT`` the
``kafka_target`` fixture hands them that broker. Start the reference broker (Kafka 3.8.0, ../shared/reference-kafka)
with the timed-out-transaction sweep as frequent as the marker below makes kafkamock's:

    ../shared/reference-kafka/run.sh DATA_DIR PORT transaction.abort.timed.out.transaction.cleanup.interval.ms=100 \\
        group.initial.rebalance.delay.ms=0 &

A real broker answers EndTxn before it writes the markers, so what a commit or abort makes visible (records for
read_committed, group offsets) is awaited (``await_txn`` until Complete*), not assumed at once.

kafkamock finalizes ``transaction.version`` 2 by default, as a new Kafka 4.x cluster does, so the Java client uses
KIP-890 part 2 (no AddPartitionsToTxn, EndTxn v5 with an epoch bump per transaction); test_java_transactions_tv1.py
runs every test here again at level 1 (AddPartitionsToTxn, EndTxn v4), the protocol Kafka 3.x brokers speak. Where
the two differ in what a client is told, the test asks the broker which level it finalized.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pytest

pytestmark = [pytest.mark.java, pytest.mark.kafkamock(config={
    "group.initial.rebalance.delay.ms": 0,
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": 100,
})]

FENCED = "org.apache.kafka.common.errors.ProducerFencedException"
OLD_EPOCH = "org.apache.kafka.common.errors.InvalidProducerEpochException"
COMMIT_FAILED = "org.apache.kafka.clients.consumer.CommitFailedException"
TIMEOUT = "org.apache.kafka.common.errors.TimeoutException"
NOT_FOUND = "org.apache.kafka.common.errors.TransactionalIdNotFoundException"
INVALID_TXN_STATE = "org.apache.kafka.common.errors.InvalidTxnStateException"


# -- helpers ---------------------------------------------------------------------------------------------------------

def transaction_version(target) -> int:
    """The ``transaction.version`` feature level the broker finalized (ApiVersions v3+; 0 when it lists none)."""
    import socket
    import struct

    from kafkamock import codec

    host, port = target.bootstrap_servers.split(",")[0].rsplit(":", 1)
    body = {"client_software_name": "txn-tests", "client_software_version": "1"}
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(codec.encode_request("ApiVersions", 3, 1, "txn-tests", body))
        prefix = _read(sock, 4)
        _, answer = codec.decode_response("ApiVersions", 3, prefix + _read(sock, struct.unpack(">i", prefix)[0]))
    return next((f.max_version_level for f in answer.finalized_features if f.name == "transaction.version"), 0)


def _read(sock, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("the broker closed the connection")
        data += chunk
    return data


def send(producer: str, topic: str, records: Iterable[tuple[str, str, int]], label: str | None = None) -> dict:
    """A ``send`` step: (key, value, partition) records, flushed and acknowledged."""
    step: dict[str, Any] = {"op": "send", "producer": producer, "topic": topic,
                            "records": [{"key": k, "value": v, "partition": p} for k, v, p in records]}
    if label:
        step["label"] = label
    return step


def run_txn(java_clients, target, transactional_id: str, steps: list[dict], *, failing: Iterable[str] = (),
            **extra: Any) -> dict[str, dict]:
    """Run the steps in one JVM; every step must succeed but those labelled in ``failing``, which must fail.
    Returns the labelled steps' reports by label."""
    failing = set(failing)
    reports = java_clients.txn(target.bootstrap_servers, transactional_id, steps, **extra)
    assert len(reports) == len(steps), reports
    by_label: dict[str, dict] = {}
    for step, report in zip(steps, reports, strict=True):
        label = step.get("label")
        if label:
            by_label[label] = report
        what = f"step {report['index']} {report['op']} ({label or 'no label'})"
        if label in failing:
            assert not report["ok"], f"{what} should have failed; it gave {report.get('result')}"
        else:
            assert report["ok"], f"{what} failed: {report.get('error')}"
    return by_label


def error_class(report: dict) -> str:
    assert not report["ok"] and "error" in report, report
    return report["error"]["class"]


def admin_result(report: dict, index: int = 0) -> Any:
    entry = report["result"][index]
    assert "error" not in entry, entry
    return entry["result"]


def consumed(report: dict) -> list[tuple[int, int, str]]:
    """(partition, offset, key) of a ``consume`` step's records, sorted."""
    return sorted((r["partition"], r["offset"], r["key"]) for r in report["result"]["records"])


def read(topic: str, isolation: str, count: int, label: str, partitions: Iterable[int] = (0, 1)) -> dict:
    """A fresh assign-and-seek consumer reads ``count`` records, then polls 300 ms more for any that must not be
    there."""
    return {"op": "consume", "label": label, "topic": topic, "partitions": list(partitions), "count": count,
            "timeout_ms": 15_000, "extra_poll_ms": 300, "isolation_level": isolation}


def latest_offsets(topic: str, label: str, partitions: Iterable[int] = (0, 1)) -> dict:
    """listOffsets(latest) read_committed (the last stable offset), then read_uncommitted (the high watermark)."""
    return {"op": "admin", "label": label, "ops": [
        {"op": "listOffsets", "topic": topic, "partitions": list(partitions), "specs": ["latest"],
         "isolation_level": level} for level in ("read_committed", "read_uncommitted")]}


def offsets_of(listing: Mapping[str, Mapping[str, Mapping[str, Any]]], topic: str) -> dict[int, int]:
    return {int(p): o["offset"] for p, o in listing.get(topic, {}).items()}


def ours(listing: dict, *ids: str) -> dict[str, tuple[int, str]]:
    """listTransactions' answer restricted to these ids (an external broker has other tests' ids too)."""
    return {t["transactional_id"]: (t["producer_id"], t["state"]) for t in listing["transactions"]
            if t["transactional_id"] in ids}


# -- commit and abort, as readers see them ---------------------------------------------------------------------------

def test_read_committed_sees_only_committed_transactions_and_read_uncommitted_sees_all(java_clients, kafka_target):
    topic = kafka_target.unique("txn-orders")
    kafka_target.create_topic(topic, 2)
    tid = kafka_target.unique("txn-commit-abort")
    steps = [
        {"op": "init", "config": {"compression.type": "lz4"}},
        {"op": "begin"}, send("p", topic, [("k1", "v1", 0), ("k2", "v2", 1)], "send-1"), {"op": "commit"},
        {"op": "await_txn", "states": ["CompleteCommit"]},
        {"op": "begin"}, send("p", topic, [("k3", "v3", 0), ("k4", "v4", 1)], "send-2"), {"op": "abort"},
        {"op": "await_txn", "states": ["CompleteAbort"], "label": "aborted"},
        {"op": "begin"}, send("p", topic, [("k5", "v5", 0)], "send-3"),
        # transaction 3 is open: read_committed stops at its first record (the last stable offset)
        {"op": "await_txn", "states": ["Ongoing"], "label": "open"},
        latest_offsets(topic, "offsets-open"),
        read(topic, "read_committed", 2, "committed-open"),
        {"op": "commit"},
        {"op": "await_txn", "states": ["CompleteCommit"], "label": "committed"},
        latest_offsets(topic, "offsets-committed"),
        read(topic, "read_committed", 3, "committed-end"),
        read(topic, "read_uncommitted", 5, "uncommitted-end"),
    ]
    got = run_txn(java_clients, kafka_target, tid, steps)

    # Every COMMIT or ABORT marker takes an offset: k1 0, marker 1, k3 2, marker 3, k5 4, marker 5 (k2, k4 alike).
    sent = [(m["partition"], m["offset"]) for label in ("send-1", "send-2", "send-3") for m in got[label]["result"]]
    assert sent == [(0, 0), (1, 0), (0, 2), (1, 2), (0, 4)], sent
    assert got["open"]["result"]["partitions"] == [f"{topic}:0"]
    assert got["aborted"]["result"]["producer_id"] == got["committed"]["result"]["producer_id"]

    stable, high = (admin_result(got["offsets-open"], i)["latest"] for i in (0, 1))
    assert {p: o["offset"] for p, o in stable.items()} == {"0": 4, "1": 4}, stable   # p0: k5's offset, still open
    assert {p: o["offset"] for p, o in high.items()} == {"0": 5, "1": 4}, high
    stable, high = (admin_result(got["offsets-committed"], i)["latest"] for i in (0, 1))
    assert {p: o["offset"] for p, o in stable.items()} == {"0": 6, "1": 4} == {p: o["offset"] for p, o in
                                                                               high.items()}

    assert consumed(got["committed-open"]) == [(0, 0, "k1"), (1, 0, "k2")]
    assert got["committed-open"]["result"]["positions"] == {"0": 4, "1": 4}
    assert consumed(got["committed-end"]) == [(0, 0, "k1"), (0, 4, "k5"), (1, 0, "k2")]
    assert got["committed-end"]["result"]["positions"] == {"0": 6, "1": 4}
    records = got["uncommitted-end"]["result"]["records"]
    assert consumed(got["uncommitted-end"]) == [(0, 0, "k1"), (0, 2, "k3"), (0, 4, "k5"), (1, 0, "k2"),
                                                (1, 2, "k4")]
    assert all(r["value"] == "v" + r["key"][1:] for r in records), records   # markers never reach the application


# -- sendOffsetsToTransaction ----------------------------------------------------------------------------------------

def test_send_offsets_to_transaction_commits_the_groups_offsets_with_the_transaction(java_clients, kafka_target):
    topic = kafka_target.unique("txn-input")
    kafka_target.create_topic(topic, 2)
    group = kafka_target.unique("txn-group")
    tid = kafka_target.unique("txn-offsets")
    committed = {"op": "committed", "consumer": "c", "partitions": {topic: [0, 1]}}
    steps = [
        {"op": "join", "consumer": "c", "group": group, "topics": [topic], "label": "join"},
        {"op": "init"},
        {"op": "begin"}, send("p", topic, [("out", "1", 0)]),
        {"op": "offsets", "consumer": "c", "offsets": {topic: {"0": 5, "1": 7}}, "label": "offsets"},
        # pending: not committed for the admin, and unstable for a read_committed consumer (RequireStable)
        {"op": "admin", "label": "listed-pending", "ops": [{"op": "listConsumerGroupOffsets", "group": group}]},
        {**committed, "timeout_ms": 1000, "label": "committed-pending"},
        {"op": "commit"},
        {"op": "await_offsets", "group": group, "offsets": {topic: {"0": 5, "1": 7}}, "label": "listed-committed"},
        {**committed, "label": "committed"},
        # an aborted transaction's offsets never apply
        {"op": "begin"}, {"op": "offsets", "consumer": "c", "offsets": {topic: {"0": 9, "1": 9}}}, {"op": "abort"},
        {"op": "await_txn", "states": ["CompleteAbort"]},
        {**committed, "label": "committed-after-abort"},
        # KIP-447: offsets from a member of another generation, or one that left, are refused (the transaction can
        # still abort); the group id alone (generation -1) is accepted
        {"op": "begin"},
        {"op": "offsets", "consumer": "c", "group_metadata": {"generation_id": 99}, "offsets": {topic: {"0": 11}},
         "label": "stale-generation"},
        {"op": "abort"},
        {"op": "leave", "consumer": "c"},
        {"op": "begin"},
        {"op": "offsets", "consumer": "c", "offsets": {topic: {"0": 11}}, "label": "left-member"},
        {"op": "abort"},
        {"op": "begin"}, {"op": "offsets", "group": group, "offsets": {topic: {"0": 12}}}, {"op": "commit"},
        {"op": "await_offsets", "group": group, "offsets": {topic: {"0": 12, "1": 7}}, "label": "listed-end"},
    ]
    if not kafka_target.external:
        # The consumer's first OffsetFetch (where its positions start) answered after the join's poll returns: the
        # window in which a join that did not settle its positions left that fetch pending, and committed-pending
        # took its stale, pre-transaction answer (no offsets) instead of timing out. Held here every time.
        kafka_target.cluster.control.push_fault("OffsetFetch", latency_ms=200)
    got = run_txn(java_clients, kafka_target, tid, steps,
                  failing={"committed-pending", "stale-generation", "left-member"})

    member = got["join"]["result"]["group_metadata"]
    assert member["generation_id"] >= 1 and member["member_id"], member
    assert got["offsets"]["result"] == member                   # the consumer's real group metadata was sent
    assert admin_result(got["listed-pending"]) == {}
    assert error_class(got["committed-pending"]) == TIMEOUT, got["committed-pending"]
    assert offsets_of(got["listed-committed"]["result"], topic) == {0: 5, 1: 7}
    assert got["committed"]["result"] == {topic: {"0": 5, "1": 7}}
    assert got["committed-after-abort"]["result"] == {topic: {"0": 5, "1": 7}}
    assert error_class(got["stale-generation"]) == COMMIT_FAILED, got["stale-generation"]
    assert "generation" in got["stale-generation"]["error"]["message"]
    assert error_class(got["left-member"]) == COMMIT_FAILED, got["left-member"]
    assert offsets_of(got["listed-end"]["result"], topic) == {0: 12, 1: 7}


# -- zombies ---------------------------------------------------------------------------------------------------------

def test_a_new_producer_with_the_same_transactional_id_fences_the_zombie(java_clients, kafka_target):
    topic = kafka_target.unique("txn-zombie")
    kafka_target.create_topic(topic, 2)
    tid = kafka_target.unique("txn-zombie")
    steps = [
        {"op": "init", "producer": "a"},
        {"op": "begin", "producer": "a"}, send("a", topic, [("a1", "v", 0)]),
        {"op": "await_txn", "states": ["Ongoing"], "label": "a-open"},
        # b's initTransactions aborts a's open transaction with a bumped epoch, then gets an epoch of its own
        {"op": "init", "producer": "b"},
        {"op": "await_txn", "states": ["Empty"], "label": "b-ready"},
        send("a", topic, [("a2", "v", 0)], "a-send"),
        {"op": "commit", "producer": "a", "label": "a-commit"},
        {"op": "abort", "producer": "a", "label": "a-abort"},
        {"op": "begin", "producer": "b"}, send("b", topic, [("b1", "v", 0), ("b2", "v", 1)]),
        {"op": "commit", "producer": "b"},
        {"op": "await_txn", "states": ["CompleteCommit"]},
        # c fences b while b is between transactions: b's next transaction fails at its first send
        {"op": "init", "producer": "c"},
        {"op": "begin", "producer": "b"}, send("b", topic, [("b3", "v", 1)], "b-send"),
        {"op": "commit", "producer": "b", "label": "b-commit"},
        read(topic, "read_committed", 2, "committed"),
        read(topic, "read_uncommitted", 3, "uncommitted"),
    ]
    got = run_txn(java_clients, kafka_target, tid, steps,
                  failing={"a-send", "a-commit", "a-abort", "b-send", "b-commit"})

    first, second = got["a-open"]["result"], got["b-ready"]["result"]
    assert second["producer_id"] == first["producer_id"]
    assert second["producer_epoch"] >= first["producer_epoch"] + 2, (first, second)   # the fence, then b's own
    # a's partition already saw the fence's abort marker: its batch has an old epoch; its transaction is fenced
    assert error_class(got["a-send"]) == OLD_EPOCH, got["a-send"]
    assert error_class(got["a-commit"]) in (OLD_EPOCH, FENCED), got["a-commit"]
    assert error_class(got["a-abort"]) == FENCED, got["a-abort"]
    # b learns of c at its first send: with KIP-890 part 2 that is the Produce itself, whose implicit add the
    # coordinator fences (a Produce answers INVALID_PRODUCER_EPOCH for it); before, it is AddPartitionsToTxn
    told = OLD_EPOCH if transaction_version(kafka_target) >= 2 else FENCED
    assert error_class(got["b-send"]) == told, got["b-send"]
    assert error_class(got["b-commit"]) == told, got["b-commit"]       # the producer repeats the send's error
    assert consumed(got["committed"]) == [(0, 2, "b1"), (1, 0, "b2")]
    assert consumed(got["uncommitted"]) == [(0, 0, "a1"), (0, 2, "b1"), (1, 0, "b2")]


def test_admin_fence_producers_fences_the_running_producer(java_clients, kafka_target):
    topic = kafka_target.unique("txn-fence")
    kafka_target.create_topic(topic, 1)
    tid = kafka_target.unique("txn-fence")
    fresh = kafka_target.unique("txn-never-used")
    steps = [
        {"op": "init"}, {"op": "begin"}, send("p", topic, [("k1", "v", 0)]),
        {"op": "await_txn", "states": ["Ongoing"], "label": "open"},
        {"op": "admin", "label": "fence", "ops": [{"op": "fenceProducers", "ids": [tid, fresh]},
                                                  {"op": "describeTransactions", "ids": [tid]}]},
        {"op": "commit", "label": "commit"},
        # a new instance carries on; readers see its transaction, not the fenced one
        {"op": "init", "producer": "next"}, {"op": "begin", "producer": "next"}, send("next", topic, [("k2", "v", 0)]),
        {"op": "commit", "producer": "next"},
        read(topic, "read_committed", 1, "committed", partitions=[0]),
        read(topic, "read_uncommitted", 2, "uncommitted", partitions=[0]),
    ]
    got = run_txn(java_clients, kafka_target, tid, steps, failing={"commit"})

    before = got["open"]["result"]
    fenced = admin_result(got["fence"], 0)
    assert fenced[tid]["producer_id"] == before["producer_id"]
    assert fenced[tid]["producer_epoch"] > before["producer_epoch"], (before, fenced)
    assert fenced[fresh]["producer_epoch"] == 0, fenced                 # an unknown id is created, at epoch 0
    after = admin_result(got["fence"], 1)[tid]
    assert (after["state"], after["producer_id"], after["producer_epoch"], after["partitions"]) == (
        "Empty", before["producer_id"], fenced[tid]["producer_epoch"], [])
    assert error_class(got["commit"]) == FENCED, got["commit"]
    # k1 0, the fence's ABORT marker 1, k2 2, its COMMIT marker 3
    assert consumed(got["committed"]) == [(0, 2, "k2")]
    assert consumed(got["uncommitted"]) == [(0, 0, "k1"), (0, 2, "k2")]


# -- the transaction timeout -----------------------------------------------------------------------------------------

def test_a_transaction_open_past_its_timeout_is_aborted_and_its_producer_fenced(java_clients, kafka_target):
    topic = kafka_target.unique("txn-timeout")
    kafka_target.create_topic(topic, 1)
    tid = kafka_target.unique("txn-timeout")
    steps = [
        {"op": "init", "config": {"transaction.timeout.ms": 2000}},
        {"op": "await_txn", "states": ["Empty"]},             # the Admin is up before the clock starts
        {"op": "begin"}, send("p", topic, [("k1", "v", 0)]),
        {"op": "await_txn", "states": ["Ongoing"], "label": "open"},
        # the coordinator's sweep (every 100 ms here) aborts it once it is older than 2 s
        {"op": "await_txn", "states": ["CompleteAbort"], "timeout_ms": 20_000, "label": "aborted"},
        {"op": "commit", "label": "commit"},
        {"op": "init", "producer": "next"}, {"op": "begin", "producer": "next"}, send("next", topic, [("k2", "v", 0)]),
        {"op": "commit", "producer": "next"},
        read(topic, "read_committed", 1, "committed", partitions=[0]),
        read(topic, "read_uncommitted", 2, "uncommitted", partitions=[0]),
    ]
    got = run_txn(java_clients, kafka_target, tid, steps, failing={"commit"})

    opened, aborted = got["open"]["result"], got["aborted"]["result"]
    assert opened["timeout_ms"] == aborted["timeout_ms"] == 2000
    assert aborted["producer_id"] == opened["producer_id"]
    # fenced by the abort: one new epoch (with KIP-890 part 2 the abort's own bump is the fence, as Kafka 4.3.1 does)
    assert aborted["producer_epoch"] == opened["producer_epoch"] + 1, (opened, aborted)
    assert aborted["partitions"] == []
    # EndTxn v5 takes the zombie's epoch for a retry of the coordinator's abort, and a commit retrying an abort is
    # INVALID_TXN_STATE; EndTxn v4 (transaction version 1) finds the epoch fenced
    fenced = INVALID_TXN_STATE if transaction_version(kafka_target) >= 2 else FENCED
    assert error_class(got["commit"]) == fenced, got["commit"]
    assert consumed(got["committed"]) == [(0, 2, "k2")]
    assert consumed(got["uncommitted"]) == [(0, 0, "k1"), (0, 2, "k2")]


# -- KIP-664: describeTransactions, listTransactions, describeProducers ----------------------------------------------

def test_describe_and_list_transactions_and_describe_producers(java_clients, kafka_target):
    topic = kafka_target.unique("txn-admin")
    kafka_target.create_topic(topic, 2)
    open_id, done_id = kafka_target.unique("txn-admin-open"), kafka_target.unique("txn-admin-done")
    idle_id, missing = kafka_target.unique("txn-admin-idle"), kafka_target.unique("txn-admin-missing")
    both = [open_id, done_id]

    def listing(label: str, **filters: Any) -> dict:
        return {"op": "admin", "label": label, "ops": [{"op": "listTransactions", **filters}]}

    steps = [
        {"op": "init", "producer": "idle", "transactional_id": idle_id},    # never starts a transaction
        {"op": "init", "producer": "done", "transactional_id": done_id},
        {"op": "begin", "producer": "done"}, send("done", topic, [("d1", "v", 1)]),
        {"op": "commit", "producer": "done"},
        {"op": "await_txn", "transactional_id": done_id, "states": ["CompleteCommit"]},
        {"op": "init", "producer": "open", "transactional_id": open_id, "config": {"transaction.timeout.ms": 90_000}},
        {"op": "begin", "producer": "open"},
        send("open", topic, [("o1", "v", 0), ("o2", "v", 0), ("o3", "v", 1)], "open-send"),
        {"op": "admin", "label": "describe", "ops": [{"op": "describeTransactions",
                                                      "ids": [*both, idle_id, missing]}]},
        listing("all"),
        listing("ongoing", states=["Ongoing"]),
        listing("complete", states=["CompleteCommit", "CompleteAbort"]),
        listing("by-producer", producer_ids_of=[done_id]),
        listing("ongoing-by-producer", states=["Ongoing"], producer_ids_of=[done_id]),
        listing("started-an-hour-ago", duration_ms=3_600_000),
        {"op": "admin", "label": "producers", "ops": [{"op": "describeProducers", "topic": topic,
                                                         "partitions": [0, 1]}]},
        {"op": "commit", "producer": "open"},
        {"op": "await_txn", "transactional_id": open_id, "states": ["CompleteCommit"]},
        {"op": "admin", "label": "producers-after", "ops": [{"op": "describeProducers", "topic": topic,
                                                               "partitions": [0]}]},
    ]
    if not kafka_target.external:    # ListTransactions v2 (KIP-1152, Kafka 4.1): the reference 3.8 has no pattern
        steps.append(listing("pattern", pattern=open_id[:-4] + ".*"))
    got = run_txn(java_clients, kafka_target, open_id, steps)

    described = admin_result(got["describe"])
    opened, done = described[open_id], described[done_id]
    assert (opened["state"], opened["timeout_ms"], opened["partitions"]) == (
        "Ongoing", 90_000, [f"{topic}:0", f"{topic}:1"])
    assert opened["start_time_ms"] is not None and opened["start_time_ms"] > 0
    assert (done["state"], done["timeout_ms"], done["partitions"]) == ("CompleteCommit", 60_000, [])
    assert opened["producer_id"] != done["producer_id"]
    assert opened["coordinator"] >= 0 and done["coordinator"] >= 0
    assert described[missing]["error"]["class"] == NOT_FOUND, described[missing]

    idle = described[idle_id]
    assert (idle["state"], idle["start_time_ms"], idle["partitions"]) == ("Empty", None, [])

    open_pid, done_pid, idle_pid = opened["producer_id"], done["producer_id"], idle["producer_id"]
    listed = {label: ours(admin_result(got[label]), *both, idle_id) for label in
              ("all", "ongoing", "complete", "by-producer", "ongoing-by-producer", "started-an-hour-ago")}
    assert listed["all"] == {open_id: (open_pid, "Ongoing"), done_id: (done_pid, "CompleteCommit"),
                             idle_id: (idle_pid, "Empty")}
    assert listed["ongoing"] == {open_id: (open_pid, "Ongoing")}
    assert listed["complete"] == {done_id: (done_pid, "CompleteCommit")}
    assert listed["by-producer"] == {done_id: (done_pid, "CompleteCommit")}
    assert listed["ongoing-by-producer"] == {}
    # Kafka's duration filter: the last transaction started longer ago than that, in any state; an id that never
    # started one passes
    assert listed["started-an-hour-ago"] == {idle_id: (idle_pid, "Empty")}
    if "pattern" in got:
        assert [t["transactional_id"] for t in admin_result(got["pattern"])["transactions"]] == [open_id]

    assert [(m["partition"], m["offset"]) for m in got["open-send"]["result"]] == [(0, 0), (0, 1), (1, 2)]
    producers = admin_result(got["producers"])
    by_pid = {p: {x["producer_id"]: x for x in producers[p]["producers"]} for p in ("0", "1")}
    assert set(by_pid["0"]) == {open_pid} and set(by_pid["1"]) == {open_pid, done_pid}, producers
    p0 = by_pid["0"][open_pid]
    assert (p0["producer_epoch"], p0["last_sequence"], p0["txn_start_offset"]) == (opened["producer_epoch"], 1, 0)
    assert by_pid["1"][open_pid]["txn_start_offset"] == 2             # after d1 (0) and its COMMIT marker (1)
    assert by_pid["1"][done_pid]["txn_start_offset"] is None          # its transaction is over
    assert by_pid["1"][done_pid]["coordinator_epoch"] is not None     # set by its COMMIT marker
    after = {x["producer_id"]: x for x in admin_result(got["producers-after"])["0"]["producers"]}
    assert after[open_pid]["txn_start_offset"] is None
    assert after[open_pid]["coordinator_epoch"] is not None
