"""Transactions and producers, Kafka 4.3.1 against kafkamock: InitProducerId (idempotent, transactional, KIP-360's
rules, timeouts, v6's two-phase-commit fields), transaction version 2 (Produce v12's implicit add, EndTxn v5's epoch
bump, TxnOffsetCommit v5) and the version 1 paths, markers and read_committed reads, the admin APIs
(DescribeTransactions, ListTransactions, DescribeProducers), the coordinator's timeout sweep and zombie fencing.

Kafka answers EndTxn before its markers are written, so every scenario waits (``settled``) for the transaction to
leave Prepare* before it looks at anything the markers change.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

# retriable answers of a coordinator that is still starting (Kafka loads __transaction_state lazily)
LOADING = (14, 15, 16)
NONE, INVALID_PRODUCER_EPOCH, INVALID_REQUEST, UNKNOWN_TOPIC = 0, 47, 42, 3
CONCURRENT_TRANSACTIONS, PRODUCER_FENCED = 51, 90
TIMEOUT_CONFIG = {"transaction.abort.timed.out.transaction.cleanup.interval.ms": 300,
                  "transaction.max.timeout.ms": 5000}


# -- helpers ---------------------------------------------------------------------------------------------------------

def now_ms() -> int:
    """Record timestamps near the wall clock: a batch far in the past would roll Kafka's segment at the next
    (marker) append, and a fetch returns one segment at a time."""
    return int(time.time() * 1000)


def _retry(run, what, call):
    """``call()`` until its error code is not a coordinator-loading one; the last answer."""
    box = {}

    def probe():
        box["r"] = r = call()
        return r.error_code not in LOADING

    run.until(what, probe, timeout=30)
    return box["r"]


def create_topic(run, topic: str, partitions: int = 1) -> None:
    """CreateTopics, then until every partition answers ListOffsets: Kafka's metadata names a leader a moment before
    its replica manager has the partition (a produce then is NOT_LEADER_OR_FOLLOWER)."""
    run.create_topic(topic, partitions=partitions)
    for p in range(partitions):
        run.until(f"{topic}-{p} online", lambda p=p: list_offsets(run, topic, p, committed=False).error_code == 0)


def coordinator(run, key: str, key_type: int = 1) -> None:
    """Wait until the coordinator of ``key`` (1: a transactional id, 0: a group) is known and has loaded its
    partition (Kafka creates the internal topic at the first FindCoordinator, then loads it)."""
    def found():
        r = run.call("FindCoordinator", 4, {"key_type": key_type, "coordinator_keys": [key]}, see=False)
        return r.coordinators[0].error_code == 0

    def loaded():
        if key_type == 1:
            return describe(run, key, see=False).transaction_states[0].error_code not in LOADING
        r = run.call("OffsetFetch", 9, {"groups": [{"group_id": key, "member_id": None, "member_epoch": -1,
                                                    "topics": None}], "require_stable": False}, see=False)
        return r.groups[0].error_code not in LOADING

    run.until(f"coordinator of {key}", found, timeout=30)
    run.until(f"coordinator of {key} loaded", loaded, timeout=30)


def idempotent_ready(run) -> None:
    """Kafka hands out producer ids from blocks it asks its controller for: wait for the first block."""
    if "pid_ready" not in run.target.cache:
        _retry(run, "a producer id block", lambda: run.call(
            "InitProducerId", 5, {"transactional_id": None, "transaction_timeout_ms": -1}, see=False))
        run.target.cache["pid_ready"] = True


def init(run, tid, *, version=5, timeout=60000, pid=-1, epoch=-1, see=True, label=None, **extra):
    body = {"transactional_id": tid, "transaction_timeout_ms": timeout, "producer_id": pid, "producer_epoch": epoch,
            **extra}
    r = _retry(run, f"InitProducerId {tid}", lambda: run.call("InitProducerId", version, body, see=False))
    if see:
        run.see(label or f"InitProducerId v{version}", r)
    return r


def ready(run, tid, *, timeout=60000):
    """A transactional id with a producer: (producer id, epoch), unobserved."""
    coordinator(run, tid)
    r = init(run, tid, timeout=timeout, see=False)
    assert r.error_code == 0, r
    return r.producer_id, r.producer_epoch


def add_partitions(run, tid, pid, epoch, partitions, *, version=3, see=True, label=None):
    topics: dict[str, list[int]] = {}
    for t, p in partitions:
        topics.setdefault(t, []).append(p)
    body = {"v3_and_below_transactional_id": tid, "v3_and_below_producer_id": pid,
            "v3_and_below_producer_epoch": epoch,
            "v3_and_below_topics": [{"name": t, "partitions": ps} for t, ps in topics.items()]}
    return run.call("AddPartitionsToTxn", version, body, see=see, label=label)


def batched_add(run, transactions, *, version=4, see=True, label=None):
    """AddPartitionsToTxn v4+: ``transactions`` as (tid, pid, epoch, verify_only, [(topic, partition)])."""
    body = {"transactions": [{
        "transactional_id": tid, "producer_id": pid, "producer_epoch": epoch, "verify_only": verify,
        "topics": [{"name": t, "partitions": [p for tt, p in parts if tt == t]} for t in dict.fromkeys(
            t for t, _ in parts)]} for tid, pid, epoch, verify, parts in transactions]}
    return run.call("AddPartitionsToTxn", version, body, see=see, label=label)


def end(run, tid, pid, epoch, commit=True, *, version=5, see=True, label=None):
    return run.call("EndTxn", version, {"transactional_id": tid, "producer_id": pid, "producer_epoch": epoch,
                                        "committed": commit}, see=see, label=label)


def txn_produce(run, topic, partition, tid, pid, epoch, seq, values, *, version=12, see=True, label=None,
                transactional=True):
    records = [{"key": None, "value": v.encode(), "timestamp": now_ms()} for v in values]
    from kafkamock.records import encode_batch

    data = encode_batch(records, producer_id=pid, producer_epoch=epoch, base_sequence=seq,
                        transactional=transactional)
    r = run.call("Produce", version, {
        "transactional_id": tid, "acks": -1, "timeout_ms": 10000,
        "topic_data": [{"name": topic, "partition_data": [{"index": partition, "records": data}]}]},
        see=False)
    p = r.responses[0].partition_responses[0]
    out = {"error_code": p.error_code, "base_offset": p.base_offset, "log_start_offset": p.log_start_offset,
           "error_message": p.error_message}
    if see:
        run.see(label or f"Produce v{version}", out)
    return out


def describe(run, *tids, see=True, label=None):
    return run.call("DescribeTransactions", 0, {"transactional_ids": list(tids)}, see=see, label=label)


def settled(run, tid, *, see=True, label="DescribeTransactions settled"):
    """DescribeTransactions once the transaction has left Prepare* (Kafka writes markers after answering)."""
    box = {}

    def probe():
        box["r"] = r = describe(run, tid, see=False)
        return not r.transaction_states[0].transaction_state.startswith("Prepare")

    run.until(f"{tid} settled", probe, timeout=30)
    if see:
        run.see(label, box["r"])
    return box["r"]


def fetch(run, topic, partition=0, offset=0, *, committed=True, version=12):
    r = run.call("Fetch", version, {
        "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20, "isolation_level": int(committed),
        "session_id": 0, "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "",
        "topics": [{"topic": topic, "partitions": [{"partition": partition, "fetch_offset": offset,
                                                    "partition_max_bytes": 1 << 20}]}]}, see=False)
    return r.responses[0].partitions[0]


def fetch_view(p) -> dict[str, Any]:
    """A fetched partition as the scenario compares it: record timestamps (the wall clock's) as <time>."""
    from support.differential import plain

    out = plain(p)
    for batch in out.get("records") or []:
        if isinstance(batch, dict):
            for rec in batch["records"]:
                rec["timestamp"] = "<time>"
    return out


def see_fetch(run, label, topic, partition=0, offset=0, *, committed=True):
    run.see(label, fetch_view(fetch(run, topic, partition, offset, committed=committed)))


def list_offsets(run, topic, partition=0, *, committed=True, timestamp=-1, version=9):
    r = run.call("ListOffsets", version, {"replica_id": -1, "isolation_level": int(committed), "topics": [
        {"name": topic, "partitions": [{"partition_index": partition, "timestamp": timestamp,
                                        "current_leader_epoch": -1}]}]}, see=False)
    return r.topics[0].partitions[0]


def describe_producers(run, topic, partitions=(0,), *, see=True, label="DescribeProducers"):
    r = run.call("DescribeProducers", 0, {"topics": [{"name": topic, "partition_indexes": list(partitions)}]},
                 see=False)
    if see:
        # the producers of a partition in producer id order (kafkamock and Kafka keep them in different maps)
        view = [{**p, "active_producers": sorted(p.active_producers, key=lambda a: a.producer_id)}
                for p in r.topics[0].partitions]
        run.see(label, view)
    return r


def list_txns(run, *, states=(), pids=(), duration=-1, pattern=None, version=2, see=True, label=None):
    body: dict[str, Any] = {"state_filters": list(states), "producer_id_filters": list(pids)}
    if version >= 1:
        body["duration_filter"] = duration
    if version >= 2:
        body["transactional_id_pattern"] = pattern
    r = run.call("ListTransactions", version, body, see=False)
    # sorted: Kafka lists them as its per-partition maps iterate
    view = {"error_code": r.error_code, "unknown_state_filters": sorted(r.unknown_state_filters),
            "transaction_states": sorted(r.transaction_states, key=lambda t: t.transactional_id)}
    if see:
        run.see(label or f"ListTransactions v{version}", view)
    return r


def open_txn(run, topic, tid, *, partitions=(0,), values=("a",), timeout=60000):
    """A transactional id with an open transaction (TV2: Produce v12 adds the partitions): (pid, epoch)."""
    pid, epoch = ready(run, tid, timeout=timeout)
    for p in partitions:
        r = txn_produce(run, topic, p, tid, pid, epoch, 0, list(values), see=False)
        assert r["error_code"] == 0, r
    return pid, epoch


# -- InitProducerId ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", [0, 2, 4, 5])
def test_init_producer_id_idempotent(differ, request, version):
    """No transactional id: a new producer id at epoch 0, every time."""
    def scenario(run):
        idempotent_ready(run)
        body = {"transactional_id": None, "transaction_timeout_ms": 0}
        run.call("InitProducerId", version, body, label="first")
        run.call("InitProducerId", version, body, label="second")

    differ.check(request.node.name, scenario)


def test_init_producer_id_idempotent_bump_and_half_an_expected_producer(differ, request):
    """An idempotent producer asking for a bump with its id and epoch gets a new id; an id without an epoch (or the
    reverse) is INVALID_REQUEST."""
    def scenario(run):
        idempotent_ready(run)
        r = run.call("InitProducerId", 5, {"transactional_id": None, "transaction_timeout_ms": 0}, label="fresh")
        run.call("InitProducerId", 5, {"transactional_id": None, "transaction_timeout_ms": 0,
                                       "producer_id": r.producer_id, "producer_epoch": 0}, label="bump")
        run.call("InitProducerId", 5, {"transactional_id": None, "transaction_timeout_ms": 0,
                                       "producer_id": r.producer_id, "producer_epoch": -1}, label="id only")
        run.call("InitProducerId", 5, {"transactional_id": None, "transaction_timeout_ms": 0,
                                       "producer_id": -1, "producer_epoch": 3}, label="epoch only")

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("version", [0, 3, 4, 5])
def test_init_producer_id_transactional_new_then_again(differ, request, version):
    """A new transactional id gets epoch 0; a new instance (no expected producer) the next epoch, same id."""
    def scenario(run):
        tid = run.name("tx")
        coordinator(run, tid)
        init(run, tid, version=version, label="first")
        init(run, tid, version=version, label="second")
        settled(run, tid)

    differ.check(request.node.name, scenario)


def test_init_producer_id_kip360_bump_and_retry(differ, request):
    """KIP-360: the current (id, epoch) bumps the epoch; the epoch before that bump is a retry (the same answer);
    an older one is fenced."""
    def scenario(run):
        tid = run.name("tx")
        pid, epoch = ready(run, tid)
        init(run, tid, pid=pid, epoch=epoch, label="bump with current")
        init(run, tid, pid=pid, epoch=epoch, label="retry of that bump")
        init(run, tid, pid=pid, epoch=epoch + 1, label="bump again with the new epoch")
        init(run, tid, pid=pid, epoch=epoch, label="now stale")
        settled(run, tid)

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("version", [3, 4, 5])
def test_init_producer_id_kip360_fenced(differ, request, version):
    """A stale epoch, a future epoch and an unknown producer id: PRODUCER_FENCED, INVALID_PRODUCER_EPOCH before v4."""
    def scenario(run):
        tid = run.name("tx")
        pid, epoch = ready(run, tid)
        init(run, tid, pid=pid, epoch=epoch + 1, version=version, label="future epoch")
        init(run, tid, pid=pid, epoch=epoch, version=version, label="bump")
        init(run, tid, pid=pid, epoch=0 if epoch else 5, version=version, label="stale epoch")
        init(run, tid, pid=pid + 1000, epoch=0, version=version, label="unknown producer id")
        settled(run, tid)

    differ.check(request.node.name, scenario)


def test_init_producer_id_expected_producer_on_a_new_transactional_id(differ, request):
    """A producer recovering with an (id, epoch) on an id the coordinator does not know yet gets a fresh producer."""
    def scenario(run):
        tid = run.name("tx")
        coordinator(run, tid)
        init(run, tid, pid=123456, epoch=7, label="unknown id, any epoch")
        settled(run, tid)

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("timeout", [0, -1, 900000, 900001])
def test_init_producer_id_transaction_timeout_bounds(differ, request, timeout):
    """transaction.max.timeout.ms (900000 by default) bounds the timeout; 0 and below are refused too."""
    def scenario(run):
        tid = run.name("tx")
        coordinator(run, tid)
        init(run, tid, timeout=timeout)
        describe(run, tid)

    differ.check(request.node.name, scenario)


def test_init_producer_id_empty_transactional_id(differ, request):
    def scenario(run):
        idempotent_ready(run)
        run.call("InitProducerId", 5, {"transactional_id": "", "transaction_timeout_ms": 60000})

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("flags", [{}, {"enable2_pc": True}, {"keep_prepared_txn": True}],
                         ids=["plain", "enable2pc", "keep-prepared"])
@pytest.mark.parametrize("transactional", [True, False], ids=["transactional", "idempotent"])
def test_init_producer_id_v6_is_not_served(differ, request, flags, transactional):
    """v6 (KIP-939's two-phase commit fields) is an unstable version in Kafka 4.3.1: ApiVersions lists 0-5 and a v6
    request closes the connection, whatever its flags."""
    def scenario(run):
        tid = run.name("tx") if transactional else None
        if tid:
            coordinator(run, tid)
        conn = run.new_conn()
        conn.send("InitProducerId", 6, {"transactional_id": tid, "transaction_timeout_ms": 60000, **flags})
        run.see("connection", conn.closed())
        if tid:
            describe(run, tid)

    differ.check(request.node.name, scenario)


def test_init_producer_id_on_an_open_transaction_fences_and_aborts(differ, request):
    """A new instance on an open transaction: CONCURRENT_TRANSACTIONS while the old one is fenced and aborted; the
    retry gets a further epoch. The zombie's writes and EndTxn are refused; readers see the abort."""
    def scenario(run):
        topic, tid = run.name("t"), run.name("tx")
        create_topic(run, topic)
        pid, epoch = open_txn(run, topic, tid, values=("zombie",))
        run.call("InitProducerId", 5, {"transactional_id": tid, "transaction_timeout_ms": 60000,
                                       "producer_id": -1, "producer_epoch": -1}, label="new instance")
        settled(run, tid, label="after the fence")
        init(run, tid, label="new instance retries")
        txn_produce(run, topic, 0, tid, pid, epoch, 1, ["late"], label="zombie produce")
        end(run, tid, pid, epoch, True, label="zombie commit v5")
        end(run, tid, pid, epoch, True, version=4, label="zombie commit v4")
        end(run, tid, pid, epoch, True, version=1, label="zombie commit v1")
        see_fetch(run, "read_committed", topic)
        see_fetch(run, "read_uncommitted", topic, committed=False)

    differ.check(request.node.name, scenario)


def test_init_producer_id_fence_with_the_zombies_expected_producer(differ, request):
    """KIP-360's recovery of the fenced instance itself: its old (id, epoch) after the fence is stale."""
    def scenario(run):
        topic, tid = run.name("t"), run.name("tx")
        create_topic(run, topic)
        pid, epoch = open_txn(run, topic, tid)
        init(run, tid, pid=pid, epoch=epoch, label="bump with an open transaction")
        settled(run, tid)
        init(run, tid, pid=pid, epoch=epoch, label="again")
        settled(run, tid, label="after")

    differ.check(request.node.name, scenario)


# -- transaction version 2 -----------------------------------------------------------------------------------------

def test_tv2_produce_adds_partitions_and_end_txn_bumps_the_epoch(differ, request):
    """Produce v12 adds the partition itself; EndTxn v5 commits with a new epoch, which the answer carries; markers
    carry the new epoch too."""
    def scenario(run):
        topic, tid = run.name("t"), run.name("tx")
        create_topic(run, topic, 2)
        pid, epoch = ready(run, tid)
        txn_produce(run, topic, 0, tid, pid, epoch, 0, ["a", "b"], label="p0")
        txn_produce(run, topic, 1, tid, pid, epoch, 0, ["c"], label="p1")
        txn_produce(run, topic, 0, tid, pid, epoch, 2, ["d"], label="p0 again")
        describe(run, tid, label="ongoing")
        end(run, tid, pid, epoch, True, label="commit")
        settled(run, tid)
        see_fetch(run, "p0 read_committed", topic, 0)
        see_fetch(run, "p1 read_uncommitted", topic, 1, committed=False)

    differ.check(request.node.name, scenario)


def test_tv2_second_transaction_with_the_bumped_epoch(differ, request):
    """The epoch from EndTxn v5 starts the next transaction (sequence 0 again); the old epoch is fenced."""
    def scenario(run):
        topic, tid = run.name("t"), run.name("tx")
        create_topic(run, topic)
        pid, epoch = open_txn(run, topic, tid, values=("one",))
        r = end(run, tid, pid, epoch, True, label="commit 1")
        settled(run, tid, label="after 1")
        txn_produce(run, topic, 0, tid, pid, epoch, 1, ["old epoch"], label="old epoch produce")
        txn_produce(run, topic, 0, tid, r.producer_id, r.producer_epoch, 0, ["two"], label="new epoch produce")
        end(run, tid, r.producer_id, r.producer_epoch, False, label="abort 2")
        settled(run, tid, label="after 2")
        see_fetch(run, "read_committed", topic)
        see_fetch(run, "read_uncommitted", topic, committed=False)

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("commit", [True, False], ids=["commit", "abort"])
def test_tv2_end_txn_on_an_empty_transaction(differ, request, commit):
    """EndTxn v5 with nothing open: commit is INVALID_TXN_STATE, abort bumps the epoch."""
    def scenario(run):
        tid = run.name("tx")
        pid, epoch = ready(run, tid)
        end(run, tid, pid, epoch, commit, label="end")
        settled(run, tid)
        end(run, tid, pid, epoch, commit, label="again, same epoch")
        settled(run, tid, label="after again")

    differ.check(request.node.name, scenario)


def test_tv2_end_txn_wrong_epoch_and_producer_id(differ, request):
    """EndTxn v5 with an epoch off by one either way, another producer id, an unknown transactional id."""
    def scenario(run):
        topic, tid = run.name("t"), run.name("tx")
        create_topic(run, topic)
        pid, epoch = open_txn(run, topic, tid)
        end(run, tid, pid, epoch + 1, True, label="epoch + 1")
        end(run, tid, pid, epoch - 1 if epoch else epoch + 5, True, label="older epoch")
        end(run, tid, pid + 1000, epoch, True, label="other producer id")
        end(run, run.name("unknown"), pid, epoch, True, label="unknown transactional id")
        end(run, "", pid, epoch, True, label="empty transactional id")
        describe(run, tid, label="still ongoing")

    differ.check(request.node.name, scenario)


def test_tv2_commit_after_abort_and_double_commit(differ, request):
    """The TV2 retry table: a retried end (the epoch before its bump) succeeds for the same result, INVALID_TXN_STATE
    for the other; the current epoch on a completed transaction: commit is INVALID_TXN_STATE, abort bumps."""
    def scenario(run):
        topic, tid = run.name("t"), run.name("tx")
        create_topic(run, topic)
        pid, epoch = open_txn(run, topic, tid)
        r = end(run, tid, pid, epoch, True, label="commit")
        settled(run, tid)
        end(run, tid, pid, epoch, True, label="commit retried")
        end(run, tid, pid, epoch, False, label="abort with the old epoch")
        end(run, tid, r.producer_id, r.producer_epoch, True, label="commit with the new epoch")
        a = end(run, tid, r.producer_id, r.producer_epoch, False, label="abort with the new epoch")
        settled(run, tid, label="after abort")
        end(run, tid, r.producer_id, r.producer_epoch, False, label="abort retried")
        end(run, tid, r.producer_id, r.producer_epoch, True, label="commit after abort, old epoch")
        end(run, tid, a.producer_id, a.producer_epoch, True, label="commit after abort, new epoch")

    differ.check(request.node.name, scenario)


def test_tv2_produce_v11_needs_add_partitions(differ, request):
    """A transactional Produce before v12 does not add its partition: verification refuses it."""
    def scenario(run):
        topic, tid = run.name("t"), run.name("tx")
        create_topic(run, topic)
        pid, epoch = ready(run, tid)
        txn_produce(run, topic, 0, tid, pid, epoch, 0, ["x"], version=11, label="v11 unadded")
        describe(run, tid, label="state")
        add_partitions(run, tid, pid, epoch, [(topic, 0)], label="AddPartitionsToTxn v3")
        txn_produce(run, topic, 0, tid, pid, epoch, 0, ["x"], version=11, label="v11 added")
        end(run, tid, pid, epoch, True, version=4, label="commit v4")
        settled(run, tid)
        see_fetch(run, "read_committed", topic)

    differ.check(request.node.name, scenario)


def test_tv2_transactional_produce_edge_cases(differ, request):
    """A transactional batch without a transactional id, one from an unknown transactional id, and a plain batch
    from a producer whose transaction is open on the partition."""
    def scenario(run):
        topic, tid = run.name("t"), run.name("tx")
        create_topic(run, topic)
        pid, epoch = open_txn(run, topic, tid)
        txn_produce(run, topic, 0, None, pid, epoch, 1, ["no tid"], label="no transactional id")
        txn_produce(run, topic, 0, run.name("other"), pid, epoch, 1, ["other tid"], label="unknown tid")
        txn_produce(run, topic, 0, None, pid, epoch, 1, ["plain"], transactional=False, label="plain batch")
        txn_produce(run, topic, 0, tid, pid, epoch, 1, ["in order"], label="next in order")
        txn_produce(run, topic, 0, tid, pid, epoch, 1, ["in order"], label="duplicate")
        txn_produce(run, topic, 0, tid, pid, epoch, 5, ["gap"], label="out of order")
        end(run, tid, pid, epoch, True)
        settled(run, tid)
        see_fetch(run, "read_committed", topic)

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("version", [4, 5])
def test_tv2_txn_offset_commit_adds_the_offsets_partition(differ, request, version):
    """TxnOffsetCommit v5 adds the group's offsets partition itself (no AddOffsetsToTxn); v4 does not."""
    def scenario(run):
        topic, tid, group = run.name("t"), run.name("tx"), run.name("g")
        create_topic(run, topic)
        coordinator(run, group, 0)
        pid, epoch = open_txn(run, topic, tid)
        run.call("TxnOffsetCommit", version, {
            "transactional_id": tid, "group_id": group, "producer_id": pid, "producer_epoch": epoch,
            "generation_id": -1, "member_id": "", "group_instance_id": None,
            "topics": [{"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 1,
                                                       "committed_leader_epoch": -1, "committed_metadata": "m"}]}]},
            label="TxnOffsetCommit")
        r = describe(run, tid, see=False)
        run.see("partitions in the transaction", sorted(t.topic for t in r.transaction_states[0].topics))
        offset_fetch(run, group, topic, stable=True, label="stable, open")
        offset_fetch(run, group, topic, stable=False, label="unstable, open")
        end(run, tid, pid, epoch, True)
        settled(run, tid)
        run.until("offsets visible", lambda: offset_fetch(run, group, topic, stable=True, see=False)
                  .groups[0].error_code == 0)
        offset_fetch(run, group, topic, stable=True, label="after commit")

    differ.check(request.node.name, scenario)


def offset_fetch(run, group, topic, *, stable, see=True, label=None):
    r = run.call("OffsetFetch", 9, {"groups": [{"group_id": group, "member_id": None, "member_epoch": -1,
                                                "topics": [{"name": topic, "partition_indexes": [0]}]}],
                                    "require_stable": stable}, see=False)
    if see:
        run.see(label or "OffsetFetch", r)
    return r


def test_tv1_add_offsets_and_txn_offset_commit_abort(differ, request):
    """The TV1 path: AddOffsetsToTxn then TxnOffsetCommit v3; an abort drops the offsets."""
    def scenario(run):
        topic, tid, group = run.name("t"), run.name("tx"), run.name("g")
        create_topic(run, topic)
        coordinator(run, group, 0)
        pid, epoch = ready(run, tid)
        add_partitions(run, tid, pid, epoch, [(topic, 0)], label="AddPartitionsToTxn")
        run.call("AddOffsetsToTxn", 3, {"transactional_id": tid, "producer_id": pid, "producer_epoch": epoch,
                                        "group_id": group})
        run.call("TxnOffsetCommit", 3, {
            "transactional_id": tid, "group_id": group, "producer_id": pid, "producer_epoch": epoch,
            "generation_id": -1, "member_id": "", "group_instance_id": None,
            "topics": [{"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 7,
                                                       "committed_leader_epoch": -1, "committed_metadata": None}]}]})
        describe(run, tid, label="ongoing")
        offset_fetch(run, group, topic, stable=True, label="stable, open")
        end(run, tid, pid, epoch, False, version=4, label="abort v4")
        settled(run, tid)
        offset_fetch(run, group, topic, stable=True, label="after abort")

    differ.check(request.node.name, scenario)


def test_add_offsets_to_txn_errors(differ, request):
    """AddOffsetsToTxn with a wrong epoch (v1: INVALID_PRODUCER_EPOCH), another producer id, an empty group."""
    def scenario(run):
        tid, group = run.name("tx"), run.name("g")
        pid, epoch = ready(run, tid)
        for version, p, e, g, label in [(3, pid, epoch + 1, group, "wrong epoch v3"),
                                        (1, pid, epoch + 1, group, "wrong epoch v1"),
                                        (3, pid + 1000, epoch, group, "other producer"),
                                        (3, pid, epoch, "", "empty group"),
                                        (4, pid, epoch, group, "v4 ok")]:
            run.call("AddOffsetsToTxn", version, {"transactional_id": tid, "producer_id": p, "producer_epoch": e,
                                                  "group_id": g}, label=label)
        describe(run, tid)

    differ.check(request.node.name, scenario)


def test_tv1_end_txn_paths(differ, request):
    """EndTxn v4 (TV1): commit, a retried commit succeeds with no epoch bump, abort after commit is INVALID_TXN_STATE,
    EndTxn on an empty transaction INVALID_TXN_STATE; no producer id/epoch in the answer."""
    def scenario(run):
        topic, tid = run.name("t"), run.name("tx")
        create_topic(run, topic)
        pid, epoch = ready(run, tid)
        end(run, tid, pid, epoch, True, version=4, label="commit on empty")
        end(run, tid, pid, epoch, False, version=4, label="abort on empty")
        add_partitions(run, tid, pid, epoch, [(topic, 0)], label="add")
        txn_produce(run, topic, 0, tid, pid, epoch, 0, ["v"], version=11, label="produce")
        end(run, tid, pid, epoch, True, version=4, label="commit")
        settled(run, tid)
        end(run, tid, pid, epoch, True, version=4, label="commit again")
        end(run, tid, pid, epoch, False, version=4, label="abort after commit")
        end(run, tid, pid, epoch + 1, True, version=4, label="commit wrong epoch")
        end(run, tid, pid, epoch + 1, True, version=1, label="commit wrong epoch v1")
        see_fetch(run, "read_uncommitted", topic, committed=False)

    differ.check(request.node.name, scenario)


def test_tv1_abort_then_tv2_abort_on_the_same_producer(differ, request):
    """A producer mixing versions: a TV1 abort leaves the epoch, a TV2 abort on the completed transaction bumps it."""
    def scenario(run):
        topic, tid = run.name("t"), run.name("tx")
        create_topic(run, topic)
        pid, epoch = ready(run, tid)
        add_partitions(run, tid, pid, epoch, [(topic, 0)], label="add")
        end(run, tid, pid, epoch, False, version=4, label="abort v4")
        settled(run, tid, label="after v4")
        end(run, tid, pid, epoch, False, version=4, label="abort v4 again")
        end(run, tid, pid, epoch, False, version=5, label="abort v5")
        settled(run, tid, label="after v5")

    differ.check(request.node.name, scenario)


# -- AddPartitionsToTxn ----------------------------------------------------------------------------------------------

def test_add_partitions_v3_errors(differ, request):
    """Unknown topic or partition fails the whole request (OPERATION_NOT_ATTEMPTED for the rest); a wrong epoch is
    PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before v2); another producer id INVALID_PRODUCER_ID_MAPPING."""
    def scenario(run):
        topic, tid = run.name("t"), run.name("tx")
        create_topic(run, topic)
        pid, epoch = ready(run, tid)
        add_partitions(run, tid, pid, epoch, [(topic, 0), (topic, 3)], label="unknown partition")
        add_partitions(run, tid, pid, epoch, [(topic, 0), (run.name("nope"), 0)], label="unknown topic")
        add_partitions(run, tid, pid, epoch + 1, [(topic, 0)], label="wrong epoch v3")
        add_partitions(run, tid, pid, epoch + 1, [(topic, 0)], version=1, label="wrong epoch v1")
        add_partitions(run, tid, pid + 1000, epoch, [(topic, 0)], label="other producer id")
        add_partitions(run, run.name("unknown"), pid, epoch, [(topic, 0)], label="unknown transactional id")
        add_partitions(run, "", pid, epoch, [(topic, 0)], label="empty transactional id")
        describe(run, tid, label="nothing added")
        add_partitions(run, tid, pid, epoch, [(topic, 0)], label="ok")
        add_partitions(run, tid, pid, epoch, [(topic, 0)], label="ok again")
        describe(run, tid, label="ongoing")

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("version", [4, 5])
def test_add_partitions_batched_verify_only_and_add(differ, request, version):
    """AddPartitionsToTxn v4/v5 (broker to coordinator): verify-only answers per partition whether it is in the
    transaction; a plain add in the batched form starts the transaction."""
    def scenario(run):
        topic, tid, tid2 = run.name("t"), run.name("tx"), run.name("tx2")
        create_topic(run, topic, 2)
        pid, epoch = open_txn(run, topic, tid)
        pid2, epoch2 = ready(run, tid2)
        batched_add(run, [(tid, pid, epoch, True, [(topic, 0), (topic, 1)]),
                          (tid2, pid2, epoch2, True, [(topic, 0)])], version=version, label="verify")
        batched_add(run, [(tid, pid, epoch + 1, True, [(topic, 0)])], version=version, label="verify wrong epoch")
        batched_add(run, [(tid, pid2, epoch, True, [(topic, 0)])], version=version, label="verify other pid")
        batched_add(run, [(run.name("unknown"), pid, epoch, True, [(topic, 0)])], version=version,
                    label="verify unknown tid")
        batched_add(run, [(tid, pid, epoch, True, [(run.name("nope"), 0)])], version=version,
                    label="verify unknown topic")
        batched_add(run, [(tid2, pid2, epoch2, False, [(topic, 1)])], version=version, label="add")
        describe(run, tid2, label="added")
        end(run, tid2, pid2, epoch2, True, version=5, label="commit the batched add")
        settled(run, tid2)

    differ.check(request.node.name, scenario)


# -- markers and reads ---------------------------------------------------------------------------------------------

def test_read_committed_and_the_last_stable_offset(differ, request):
    """An open transaction holds the LSO at its first offset: read_committed fetches and ListOffsets stop there,
    read_uncommitted ones do not; the commit moves it past the marker."""
    def scenario(run):
        topic, tid = run.name("t"), run.name("tx")
        create_topic(run, topic)
        idempotent_ready(run)
        run.produce(topic, 0, [{"value": b"plain", "timestamp": now_ms()}], label="plain")
        pid, epoch = open_txn(run, topic, tid, values=("t1", "t2"))
        run.produce(topic, 0, [{"value": b"after", "timestamp": now_ms()}], label="plain after")
        see_fetch(run, "read_committed open", topic)
        see_fetch(run, "read_uncommitted open", topic, committed=False)
        run.see("ListOffsets committed open", list_offsets(run, topic))
        run.see("ListOffsets uncommitted open", list_offsets(run, topic, committed=False))
        run.see("ListOffsets v1 open", list_offsets(run, topic, committed=False, version=1))
        end(run, tid, pid, epoch, True)
        settled(run, tid)
        see_fetch(run, "read_committed done", topic)
        run.see("ListOffsets committed done", list_offsets(run, topic))
        run.see("ListOffsets earliest", list_offsets(run, topic, timestamp=-2))
        m = list_offsets(run, topic, timestamp=-3)
        run.see("ListOffsets max timestamp", {**m, "timestamp": "<time>" if m.timestamp > 0 else m.timestamp})

    differ.check(request.node.name, scenario)


def test_aborted_transactions_in_fetch(differ, request):
    """Aborted transactions are listed to read_committed fetchers (not to read_uncommitted ones); the ABORT control
    batch's contents."""
    def scenario(run):
        topic, tid, tid2 = run.name("t"), run.name("tx"), run.name("tx2")
        create_topic(run, topic)
        pid, epoch = open_txn(run, topic, tid, values=("x1", "x2"))
        pid2, epoch2 = open_txn(run, topic, tid2, values=("y1",))
        txn_produce(run, topic, 0, tid, pid, epoch, 2, ["x3"], label="interleaved")
        end(run, tid, pid, epoch, False, label="abort tx")
        settled(run, tid)
        see_fetch(run, "read_committed, tx2 open", topic)
        end(run, tid2, pid2, epoch2, True, label="commit tx2")
        settled(run, tid2)
        see_fetch(run, "read_committed", topic)
        see_fetch(run, "read_committed from 3", topic, offset=3)
        see_fetch(run, "read_uncommitted", topic, committed=False)
        run.see("ListOffsets committed", list_offsets(run, topic))

    differ.check(request.node.name, scenario)


def test_concurrent_transactions_on_one_partition(differ, request):
    """Two transactional ids on one partition: the LSO is the earlier open transaction's first offset."""
    def scenario(run):
        topic, a, b = run.name("t"), run.name("txa"), run.name("txb")
        create_topic(run, topic)
        pa, ea = open_txn(run, topic, a, values=("a1",))
        pb, eb = open_txn(run, topic, b, values=("b1",))
        run.see("ListOffsets both open", list_offsets(run, topic))
        end(run, b, pb, eb, True, label="commit b")
        settled(run, b)
        run.see("ListOffsets a open", list_offsets(run, topic))
        see_fetch(run, "read_committed a open", topic)
        end(run, a, pa, ea, True, label="commit a")
        settled(run, a)
        run.see("ListOffsets none open", list_offsets(run, topic))
        describe(run, a, b, label="both")

    differ.check(request.node.name, scenario)


# -- DescribeTransactions / ListTransactions / DescribeProducers -------------------------------------------------

def test_describe_transactions_states(differ, request):
    """Empty, Ongoing (partitions listed), CompleteCommit, CompleteAbort, an unknown id and an empty id."""
    def scenario(run):
        topic, e, o, c, a = run.name("t"), run.name("empty"), run.name("ongoing"), run.name("commit"), \
            run.name("abort")
        create_topic(run, topic, 3)
        ready(run, e)
        open_txn(run, topic, o, partitions=(2, 0))
        pc, ec = open_txn(run, topic, c, partitions=(1,))
        end(run, c, pc, ec, True, see=False)
        pa, ea = open_txn(run, topic, a, partitions=(1,))
        end(run, a, pa, ea, False, see=False)
        settled(run, c, see=False)
        settled(run, a, see=False)
        describe(run, e, o, c, a, run.name("unknown"), label="each")
        describe(run, "", label="empty id")

    differ.check(request.node.name, scenario)


def test_list_transactions_filters(differ, request):
    """State filters (with an unknown state name), producer id filters, both together."""
    def scenario(run):
        topic, o, c = run.name("t"), run.name("ongoing"), run.name("commit")
        create_topic(run, topic)
        po, _ = open_txn(run, topic, o)
        pc, ec = open_txn(run, topic, c)
        end(run, c, pc, ec, True, see=False)
        settled(run, c, see=False)
        for version in (0, 1, 2):
            list_txns(run, pids=[po, pc], version=version, label=f"by producer v{version}")
        list_txns(run, pids=[po, pc], states=["Ongoing"], label="Ongoing")
        list_txns(run, pids=[po, pc], states=["CompleteCommit", "Empty"], label="CompleteCommit or Empty")
        list_txns(run, pids=[po, pc], states=["Bogus", "Ongoing"], label="an unknown state")
        list_txns(run, pids=[po + 99999], label="unknown producer")

    differ.check(request.node.name, scenario)


def test_list_transactions_duration_filter(differ, request):
    """v1's duration filter keeps transactions whose last one started longer ago than the filter."""
    def scenario(run):
        topic, o, e = run.name("t"), run.name("ongoing"), run.name("empty")
        create_topic(run, topic)
        po, _ = open_txn(run, topic, o)
        pe, _ = ready(run, e)
        # Kafka keeps a transaction when now - start > duration: let the clock pass the start's millisecond, or
        # "duration 0" would depend on whether the request came within it.
        started = time.time()
        run.until("the clock past the start", lambda: time.time() - started > 0.005, interval=0.002)
        list_txns(run, pids=[po, pe], duration=0, version=1, label="duration 0")
        list_txns(run, pids=[po, pe], duration=3_600_000, version=1, label="an hour")
        list_txns(run, pids=[po, pe], duration=-5, version=1, label="negative")
        list_txns(run, pids=[po, pe], duration=3_600_000, version=0, label="v0 ignores it")

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("pattern", [
    "{token}.*", "^{token}-a.*$", "{token}", "a", ".*{token}-b.*", "", "[", None, "(?<head>{token})-[[:lower:]]",
    "{token}-\\p{{Lower}}", "\\Q{token}-a\\E", ".*-[a-z&&[^a]]", "{token}-a*+", "(?i){TOKEN}-B", "(.)\\1.*",
    "(?=x).*", "{token}-a\\z", "{token}-\\pL"],
    ids=["prefix", "anchored", "partial", "one-letter", "contains", "empty", "broken", "null", "named-group-posix",
         "java-posix", "quote", "intersection", "possessive", "case-insensitive", "backreference", "lookahead",
         "end-of-text", "unicode-letter"])
def test_list_transactions_pattern(differ, request, pattern):
    """v2's transactional id pattern (KIP-1152) as Kafka matches it, in RE2's syntax (RE2/J), which is not
    Java's nor Python's (with producer id filters to stay in scope)."""
    def scenario(run):
        topic = run.name("t")
        create_topic(run, topic)
        token = run.name("x")
        pa, _ = ready(run, f"{token}-a")
        pb, _ = ready(run, f"{token}-b")
        got = pattern.format(token=token, TOKEN=token.upper()) if pattern else pattern
        list_txns(run, pids=[pa, pb], pattern=got, label="matched")

    differ.check(request.node.name, scenario)


def test_describe_producers_through_a_transaction(differ, request):
    """DescribeProducers: an idempotent producer, a transactional one with its transaction open (its start offset),
    after the commit (the coordinator epoch), after an abort; an unknown partition."""
    def scenario(run):
        topic, tid = run.name("t"), run.name("tx")
        create_topic(run, topic)
        idempotent_ready(run)
        i = run.call("InitProducerId", 5, {"transactional_id": None, "transaction_timeout_ms": 0}, see=False)
        run.produce(topic, 0, [{"value": b"i1", "timestamp": now_ms()}, {"value": b"i2", "timestamp": now_ms()}],
                    producer_id=i.producer_id, producer_epoch=0, base_sequence=0, label="idempotent")
        describe_producers(run, topic, label="idempotent only")
        pid, epoch = open_txn(run, topic, tid, values=("t1", "t2", "t3"))
        describe_producers(run, topic, label="open")
        r = end(run, tid, pid, epoch, True, label="commit")
        settled(run, tid)
        describe_producers(run, topic, label="committed")
        txn_produce(run, topic, 0, tid, r.producer_id, r.producer_epoch, 0, ["t4"], label="second")
        end(run, tid, r.producer_id, r.producer_epoch, False, label="abort")
        settled(run, tid, label="after abort")
        describe_producers(run, topic, label="aborted")
        describe_producers(run, topic, partitions=(0, 4), label="with an unknown partition")
        r = run.call("DescribeProducers", 0, {"topics": [{"name": run.name("nope"), "partition_indexes": [0]}]},
                     label="unknown topic")

    differ.check(request.node.name, scenario)


# -- idempotent producers ------------------------------------------------------------------------------------------

def test_idempotent_sequences(differ, request):
    """An idempotent producer's sequences: in order, a duplicate (its first offset again), a gap, an old epoch, a
    new epoch from sequence 0 and not."""
    def scenario(run):
        topic = run.name("t")
        create_topic(run, topic)
        idempotent_ready(run)
        i = run.call("InitProducerId", 5, {"transactional_id": None, "transaction_timeout_ms": 0}, see=False)
        pid = i.producer_id

        def send(seq, epoch=0, n=1, label=None):
            r = run.produce(topic, 0, [{"value": f"v{seq + k}".encode(), "timestamp": now_ms()} for k in range(n)],
                            producer_id=pid, producer_epoch=epoch, base_sequence=seq, see=False)
            p = r.responses[0].partition_responses[0]
            run.see(label or f"seq {seq}", {"error_code": p.error_code, "base_offset": p.base_offset,
                                            "log_start_offset": p.log_start_offset,
                                            "error_message": p.error_message})

        send(0, n=2, label="first")
        send(2, label="next")
        send(0, n=2, label="duplicate of the first")
        send(2, label="duplicate of the last")
        send(7, label="gap")
        send(3, epoch=1, label="new epoch, not from 0")
        send(0, epoch=1, label="new epoch from 0")
        send(1, epoch=0, label="old epoch")
        see_fetch(run, "log", topic, committed=False)

    differ.check(request.node.name, scenario)


# -- the coordinator's timeout sweep --------------------------------------------------------------------------------

def test_timed_out_transaction_is_aborted_with_a_bumped_epoch(differ, request):
    """A transaction open longer than its timeout is aborted by the coordinator, which fences its producer: what
    DescribeTransactions, the producer's next requests and readers see."""
    def scenario(run):
        topic, tid = run.name("t"), run.name("tx")
        create_topic(run, topic)
        pid, epoch = open_txn(run, topic, tid, timeout=1000, values=("doomed",))

        def aborted():
            return describe(run, tid, see=False).transaction_states[0].transaction_state == "CompleteAbort"

        run.until("the timed-out transaction aborted", aborted, timeout=30)
        describe(run, tid, label="aborted")
        txn_produce(run, topic, 0, tid, pid, epoch, 1, ["late"], label="produce with the old epoch")
        end(run, tid, pid, epoch, True, label="commit v5 with the old epoch")
        end(run, tid, pid, epoch, True, version=4, label="commit v4 with the old epoch")
        end(run, tid, pid, epoch, False, label="abort v5 with the old epoch")
        init(run, tid, pid=pid, epoch=epoch, timeout=1000, label="KIP-360 recovery with the old epoch")
        settled(run, tid, label="after recovery")
        see_fetch(run, "read_committed", topic)
        see_fetch(run, "read_uncommitted", topic, committed=False)

    differ.check(request.node.name, scenario, config=TIMEOUT_CONFIG)


def test_timed_out_tv1_transaction(differ, request):
    """A TV1 transaction (AddPartitionsToTxn v3) that times out: the fence bumps the epoch once."""
    def scenario(run):
        topic, tid = run.name("t"), run.name("tx")
        create_topic(run, topic)
        pid, epoch = ready(run, tid, timeout=1000)
        add_partitions(run, tid, pid, epoch, [(topic, 0)], label="add")
        txn_produce(run, topic, 0, tid, pid, epoch, 0, ["v"], version=11, label="produce")

        def aborted():
            return describe(run, tid, see=False).transaction_states[0].transaction_state == "CompleteAbort"

        run.until("the timed-out transaction aborted", aborted, timeout=30)
        describe(run, tid, label="aborted")
        end(run, tid, pid, epoch, False, version=4, label="abort v4 with the old epoch")
        init(run, tid, pid=pid, epoch=epoch, timeout=1000, label="recovery")
        see_fetch(run, "read_uncommitted", topic, committed=False)

    differ.check(request.node.name, scenario, config=TIMEOUT_CONFIG)


@pytest.mark.parametrize("timeout", [5000, 5001])
def test_transaction_max_timeout_configured(differ, request, timeout):
    """transaction.max.timeout.ms set to 5000: the bound is inclusive."""
    def scenario(run):
        tid = run.name("tx")
        coordinator(run, tid)
        init(run, tid, timeout=timeout)

    differ.check(request.node.name, scenario, config=TIMEOUT_CONFIG)


# -- more: TxnOffsetCommit, ordering, markers by hand, first sequences ------------------------------------------

def txn_offset_commit(run, tid, group, pid, epoch, topics, *, version=5, label=None, **member):
    body = {"transactional_id": tid, "group_id": group, "producer_id": pid, "producer_epoch": epoch,
            "generation_id": -1, "member_id": "", "group_instance_id": None, **member,
            "topics": [{"name": t, "partitions": [{"partition_index": p, "committed_offset": 5,
                                                   "committed_leader_epoch": -1, "committed_metadata": ""}
                                                  for p in parts]} for t, parts in topics]}
    return run.call("TxnOffsetCommit", version, body, label=label)


@pytest.mark.parametrize("version", [2, 3, 4, 5])
def test_txn_offset_commit_errors(differ, request, version):
    """TxnOffsetCommit with a wrong epoch, another producer id, an unknown transactional id, an empty group, and a
    request mixing unknown topics and partitions with good ones."""
    def scenario(run):
        topic, tid, group = run.name("t"), run.name("tx"), run.name("g")
        create_topic(run, topic, 2)
        coordinator(run, group, 0)
        pid, epoch = open_txn(run, topic, tid)
        if version < 5:
            run.call("AddOffsetsToTxn", 3, {"transactional_id": tid, "producer_id": pid, "producer_epoch": epoch,
                                            "group_id": group}, see=False)
        txn_offset_commit(run, tid, group, pid, epoch + 1, [(topic, [0])], version=version, label="epoch + 1")
        txn_offset_commit(run, tid, group, pid + 1000, epoch, [(topic, [0])], version=version, label="other pid")
        txn_offset_commit(run, run.name("unknown"), group, pid, epoch, [(topic, [0])], version=version,
                          label="unknown tid")
        txn_offset_commit(run, tid, "", pid, epoch, [(topic, [0])], version=version, label="empty group")
        txn_offset_commit(run, tid, group, pid, epoch, [(run.name("nope"), [0]), (topic, [0, 7, 1])],
                          version=version, label="mixed")
        txn_offset_commit(run, tid, group, pid, epoch, [(run.name("nope"), [0])], version=version,
                          label="only unknown")
        txn_offset_commit(run, tid, group, pid, epoch, [(topic, [0])], version=version, generation_id=3,
                          member_id="someone", label="unknown member") if version >= 3 else None
        describe(run, tid, label="partitions")
        end(run, tid, pid, epoch, True)
        settled(run, tid)

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("version", [3, 5])
def test_txn_offset_commit_after_the_transaction_ended(differ, request, version):
    """A TxnOffsetCommit with the epoch of a transaction that has ended: v5 with the old epoch is fenced, v3
    (AddOffsetsToTxn path) finds the partition no longer in the transaction."""
    def scenario(run):
        topic, tid, group = run.name("t"), run.name("tx"), run.name("g")
        create_topic(run, topic)
        coordinator(run, group, 0)
        pid, epoch = open_txn(run, topic, tid)
        txn_offset_commit(run, tid, group, pid, epoch, [(topic, [0])], label="in the transaction")
        r = end(run, tid, pid, epoch, True, version=5 if version == 5 else 4)
        settled(run, tid)
        txn_offset_commit(run, tid, group, pid, epoch, [(topic, [0])], version=version, label="old epoch")
        if version == 5:
            txn_offset_commit(run, tid, group, pid, r.producer_epoch, [(topic, [0])], version=version,
                              label="new epoch")
        describe(run, tid, label="after")

    differ.check(request.node.name, scenario)


def test_describe_transactions_partition_order(differ, request):
    """Many partitions of two topics, added over several requests: the order DescribeTransactions lists them in."""
    def scenario(run):
        a, b, tid = run.name("ta"), run.name("tb"), run.name("tx")
        create_topic(run, a, 8)
        create_topic(run, b, 5)
        pid, epoch = ready(run, tid)
        add_partitions(run, tid, pid, epoch, [(b, 3), (a, 5), (a, 0)], label="first add")
        add_partitions(run, tid, pid, epoch, [(a, p) for p in (7, 1, 6)] + [(b, p) for p in (0, 4, 1)],
                       label="second add")
        describe(run, tid, label="ongoing")
        add_partitions(run, tid, pid, epoch, [(a, 2), (a, 3), (a, 4), (b, 2)], label="third add")
        describe(run, tid, label="all")
        end(run, tid, pid, epoch, False, version=4)
        settled(run, tid)

    differ.check(request.node.name, scenario)


def test_add_partitions_error_order_many(differ, request):
    """Unknown partitions among many (Kafka builds the answer from a hash map)."""
    def scenario(run):
        a, b, tid = run.name("ta"), run.name("tb"), run.name("tx")
        create_topic(run, a, 6)
        create_topic(run, b, 2)
        pid, epoch = ready(run, tid)
        add_partitions(run, tid, pid, epoch, [(a, p) for p in range(9)] + [(b, p) for p in range(3)]
                       + [(run.name("nope"), 2), (run.name("nope"), 0)], label="mixed")
        batched_add(run, [(tid, pid, epoch, True, [(a, p) for p in range(6)] + [(b, 0), (b, 1)])], version=5,
                    label="verify many")

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("version", [11, 12])
def test_first_transactional_batch_sequences(differ, request, version):
    """A transaction's first batch on a fresh partition with a sequence other than 0, and a plain idempotent first
    batch that does not start at 0 (no state: accepted)."""
    def scenario(run):
        topic, tid = run.name("t"), run.name("tx")
        create_topic(run, topic, 2)
        pid, epoch = ready(run, tid)
        if version < 12:
            add_partitions(run, tid, pid, epoch, [(topic, 0)], see=False)
        txn_produce(run, topic, 0, tid, pid, epoch, 5, ["five"], version=version, label="seq 5 first")
        txn_produce(run, topic, 0, tid, pid, epoch, 0, ["zero"], version=version, label="then seq 0")
        idempotent_ready(run)
        i = run.call("InitProducerId", 5, {"transactional_id": None, "transaction_timeout_ms": 0}, see=False)
        r = run.produce(topic, 1, [{"value": b"i", "timestamp": now_ms()}], producer_id=i.producer_id,
                        producer_epoch=0, base_sequence=9, see=False)
        run.see("idempotent first at 9", r.responses[0].partition_responses[0])
        describe_producers(run, topic, (0, 1))
        describe(run, tid, label="state")

    differ.check(request.node.name, scenario)


def test_write_txn_markers_aborts_a_hanging_transaction(differ, request):
    """WriteTxnMarkers (what Admin.abortTransaction sends): a marker with a negative or older epoch is refused, a v2
    marker of transaction version 2 must be newer than the producer's epoch; the partition's transaction is closed,
    the LSO moves, the coordinator still thinks its transaction is open."""
    def scenario(run):
        topic, tid = run.name("t"), run.name("tx")
        create_topic(run, topic)
        pid, epoch = open_txn(run, topic, tid, values=("one",))
        r = end(run, tid, pid, epoch, True, see=False)
        settled(run, tid, see=False)
        epoch = r.producer_epoch
        txn_produce(run, topic, 0, tid, pid, epoch, 0, ["hanging"], label="second transaction")
        run.see("ListOffsets before", list_offsets(run, topic))
        for version, e, tv, label in [(1, -1, 0, "negative epoch"), (1, epoch - 1, 0, "older epoch"),
                                      (2, epoch, 2, "tv2, same epoch"), (2, epoch, 1, "tv1, same epoch"),
                                      (2, epoch, 2, "tv2, same epoch, closed"), (2, epoch + 1, 2, "tv2, next epoch")]:
            run.call("WriteTxnMarkers", version, {"markers": [{
                "producer_id": pid, "producer_epoch": e, "transaction_result": False, "coordinator_epoch": 0,
                "transaction_version": tv, "topics": [{"name": topic, "partition_indexes": [0]}]}]}, label=label)
            describe_producers(run, topic, label=f"{label}: producers")
        run.see("ListOffsets after", list_offsets(run, topic))
        describe(run, tid, label="coordinator")
        see_fetch(run, "read_committed", topic)

    differ.check(request.node.name, scenario)


def test_describe_producers_after_a_fence(differ, request):
    """The producer state a partition keeps after its transaction's producer was fenced by a new instance."""
    def scenario(run):
        topic, tid = run.name("t"), run.name("tx")
        create_topic(run, topic)
        pid, epoch = open_txn(run, topic, tid, values=("a", "b"))
        init(run, tid, see=False)
        settled(run, tid, see=False)
        r = init(run, tid, label="new instance")
        describe_producers(run, topic, label="fenced")
        txn_produce(run, topic, 0, tid, r.producer_id, r.producer_epoch, 0, ["c"], label="new instance writes")
        describe_producers(run, topic, label="new instance open")

    differ.check(request.node.name, scenario)


def test_end_txn_with_only_offsets(differ, request):
    """A transaction holding only a group's offsets (TxnOffsetCommit v5, no records): commit, then the offsets."""
    def scenario(run):
        topic, tid, group = run.name("t"), run.name("tx"), run.name("g")
        create_topic(run, topic)
        coordinator(run, group, 0)
        pid, epoch = ready(run, tid)
        txn_offset_commit(run, tid, group, pid, epoch, [(topic, [0])], label="offsets only")
        describe(run, tid, label="ongoing")
        end(run, tid, pid, epoch, True, label="commit")
        settled(run, tid)
        run.until("offsets visible", lambda: offset_fetch(run, group, topic, stable=True, see=False)
                  .groups[0].error_code == 0)
        offset_fetch(run, group, topic, stable=True, label="committed")

    differ.check(request.node.name, scenario)


# -- a real client -------------------------------------------------------------------------------------------------

def test_confluent_kafka_transactions(differ, request):
    """librdkafka's transactional producer (confluent-kafka): a committed transaction with the group's offsets, an
    aborted one, a zombie fenced by a second instance; a read_committed consumer sees only the committed records,
    and the group's offsets are the committed transaction's."""
    from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

    def scenario(run):
        topic, tid, group = run.name("t"), run.name("tx"), run.name("g")
        create_topic(run, topic, 2)
        coordinator(run, tid)
        coordinator(run, group, 0)
        conf = {"bootstrap.servers": run.target.bootstrap_servers, "transactional.id": tid,
                "enable.idempotence": True, "linger.ms": 0}
        delivered = []

        def report(err, msg):
            delivered.append({"error": err.name() if err else None, "partition": msg.partition(),
                              "offset": msg.offset(), "value": msg.value().decode()})

        producer = Producer(conf)
        producer.init_transactions(30)
        producer.begin_transaction()
        for i in range(3):
            producer.produce(topic, value=f"c{i}".encode(), partition=i % 2, on_delivery=report)
        producer.flush(30)
        meta = Consumer({"bootstrap.servers": run.target.bootstrap_servers,
                         "group.id": group}).consumer_group_metadata()
        producer.send_offsets_to_transaction([TopicPartition(topic, 0, 2), TopicPartition(topic, 1, 1)], meta, 30)
        producer.commit_transaction(30)
        producer.begin_transaction()
        producer.produce(topic, value=b"aborted", partition=0, on_delivery=report)
        producer.flush(30)
        producer.abort_transaction(30)
        producer.begin_transaction()
        producer.produce(topic, value=b"zombie", partition=1, on_delivery=report)
        producer.flush(30)
        successor = Producer(conf)
        successor.init_transactions(30)
        try:
            producer.commit_transaction(30)
            run.see("zombie commit", "committed")
        except KafkaException as exc:
            err = exc.args[0]
            run.see("zombie commit", {"code": err.name(), "fatal": err.fatal(), "abortable": err.txn_requires_abort()})
        run.see("deliveries", sorted(delivered, key=lambda d: (d["partition"], d["offset"])))
        settled(run, tid, label="after")
        for p in (0, 1):
            see_fetch(run, f"read_committed p{p}", topic, p)
        r = offset_fetch(run, group, topic, stable=True, see=False)
        run.see("group offsets", [(p.partition_index, p.committed_offset, p.error_code)
                                  for t in r.groups[0].topics for p in t.partitions])

    differ.check(request.node.name, scenario)


# -- transactional id expiration -----------------------------------------------------------------------------------

EXPIRY_CONFIG = {"transactional.id.expiration.ms": 1500,
                 "transaction.remove.expired.transaction.cleanup.interval.ms": 200}


@pytest.mark.parametrize("ended", ["empty", "committed"])
def test_transactional_id_expires(differ, request, ended):
    """transactional.id.expiration.ms after its last update an id with no open transaction is removed: it is
    unknown to DescribeTransactions, EndTxn and ListTransactions, and InitProducerId (even with the old producer,
    KIP-360) gives it a new producer id."""
    def scenario(run):
        topic, tid = run.name("t"), run.name("tx")
        create_topic(run, topic)
        if ended == "committed":
            pid, epoch = open_txn(run, topic, tid)
            r = end(run, tid, pid, epoch, True, see=False)
            epoch = r.producer_epoch
            settled(run, tid, see=False)
        else:
            pid, epoch = ready(run, tid)

        def gone():
            return describe(run, tid, see=False).transaction_states[0].error_code == 105

        run.until("the transactional id expired", gone, timeout=30)
        describe(run, tid, label="expired")
        list_txns(run, pids=[pid], label="listed")
        end(run, tid, pid, epoch, False, label="abort with the old producer")
        r = init(run, tid, pid=pid, epoch=epoch, label="KIP-360 with the old producer")
        run.see("a new producer id", r.producer_id != pid)
        settled(run, tid, label="again")

    differ.check(request.node.name, scenario, config=EXPIRY_CONFIG)


# -- three nodes ---------------------------------------------------------------------------------------------------

def node_index(run, port: int) -> int:
    return run.target.ports.index(port)


def coordinator_node(run, key: str) -> int:
    """The index of the node coordinating transactional id ``key``, once it has loaded the id's partition."""
    box = {}

    def found():
        r = run.call("FindCoordinator", 4, {"key_type": 1, "coordinator_keys": [key]}, see=False)
        box["node"] = node_index(run, r.coordinators[0].port) if r.coordinators[0].error_code == 0 else None
        return box["node"] is not None

    run.until(f"coordinator of {key}", found, timeout=30)
    run.until(f"coordinator of {key} loaded", lambda: run.call(
        "DescribeTransactions", 0, {"transactional_ids": [key]}, node=box["node"],
        see=False).transaction_states[0].error_code not in LOADING, timeout=30)
    return box["node"]


def leader_node(run, topic: str, partition: int) -> int:
    md = run.call("Metadata", 12, {"topics": [{"name": topic, "topic_id": uuid.UUID(int=0)}],
                                   "allow_auto_topic_creation": False,
                                   "include_topic_authorized_operations": False}, see=False)
    leader = next(p.leader_id for p in md.topics[0].partitions if p.partition_index == partition)
    port = next(b.port for b in md.brokers if b.node_id == leader)
    return node_index(run, port)


def test_three_nodes_coordinator_and_leaders(differ, request):
    """Three nodes: transaction requests away from the id's coordinator are NOT_COORDINATOR; only the coordinator
    lists the transaction; a transaction over partitions led by different nodes ends with a marker on each, seen by
    read_committed fetches from each leader."""
    def scenario(run):
        topic, tid = run.name("t"), run.name("tx")
        run.create_topic(topic, partitions=3)
        home = coordinator_node(run, tid)
        other = (home + 1) % 3
        conn = run.conn(home)
        idempotent_ready(run)
        run.see("InitProducerId elsewhere", run.call("InitProducerId", 5, {
            "transactional_id": tid, "transaction_timeout_ms": 60000}, node=other, see=False).error_code)
        r = _retry(run, "init", lambda: run.call(
            "InitProducerId", 5, {"transactional_id": tid, "transaction_timeout_ms": 60000}, node=home, see=False))
        pid, epoch = r.producer_id, r.producer_epoch
        run.see("InitProducerId at the coordinator", r)
        for p in range(3):
            leader = leader_node(run, topic, p)
            run.until(f"{topic}-{p} online", lambda p=p, leader=leader: list_offsets_at(run, topic, p, leader) == 0)
            data = txn_batch(pid, epoch, 0, [f"v{p}"])
            answer = run.call("Produce", 12, {"transactional_id": tid, "acks": -1, "timeout_ms": 10000, "topic_data": [
                {"name": topic, "partition_data": [{"index": p, "records": data}]}]}, node=leader, see=False)
            run.see(f"produce p{p}", answer.responses[0].partition_responses[0].error_code)
        body = {"transactional_ids": [tid]}
        run.see("DescribeTransactions elsewhere",
                run.call("DescribeTransactions", 0, body, node=other, see=False).transaction_states[0].error_code)
        run.call("DescribeTransactions", 0, body, conn=conn, label="DescribeTransactions at the coordinator")
        listed = {}
        for node in range(3):
            r = run.call("ListTransactions", 1, {"state_filters": [], "producer_id_filters": [pid],
                                                 "duration_filter": -1}, node=node, see=False)
            listed["coordinator" if node == home else "other"] = sorted(t.transaction_state
                                                                        for t in r.transaction_states)
        run.see("ListTransactions per node", listed)
        run.see("EndTxn elsewhere", run.call("EndTxn", 5, {"transactional_id": tid, "producer_id": pid,
                                                           "producer_epoch": epoch, "committed": True},
                                             node=other, see=False).error_code)
        run.call("EndTxn", 5, {"transactional_id": tid, "producer_id": pid, "producer_epoch": epoch,
                               "committed": True}, conn=conn, label="EndTxn at the coordinator")

        def settled_at_home():
            r = run.call("DescribeTransactions", 0, body, conn=conn, see=False)
            return r.transaction_states[0].transaction_state == "CompleteCommit"

        run.until("committed", settled_at_home)
        for p in range(3):
            leader = leader_node(run, topic, p)
            r = run.call("Fetch", 12, {
                "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20, "isolation_level": 1,
                "session_id": 0, "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "",
                "topics": [{"topic": topic, "partitions": [{"partition": p, "fetch_offset": 0,
                                                            "partition_max_bytes": 1 << 20}]}]},
                node=leader, see=False)
            run.see(f"read_committed p{p}", fetch_view(r.responses[0].partitions[0]))

    differ.check(request.node.name, scenario, nodes=3)


def list_offsets_at(run, topic, partition, node):
    r = run.call("ListOffsets", 9, {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": topic, "partitions": [{"partition_index": partition, "timestamp": -1,
                                        "current_leader_epoch": -1}]}]}, node=node, see=False)
    return r.topics[0].partitions[0].error_code


def txn_batch(pid, epoch, seq, values):
    from kafkamock.records import encode_batch

    return encode_batch([{"key": None, "value": v.encode(), "timestamp": now_ms()} for v in values],
                        producer_id=pid, producer_epoch=epoch, base_sequence=seq, transactional=True)
