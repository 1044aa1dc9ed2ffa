"""Transactions in the core, on a ManualClock: every KIP-360 InitProducerId rule with raw requests, the transaction
state table, markers, the last stable offset and read_committed fetches, TxnOffsetCommit, timeouts, expiry, the
admin APIs and a restart on a data dir. No sockets, no sleeping."""

from __future__ import annotations

import shutil

import pytest
from support.broker_calls import call

from kafkamock.broker import Cluster
from kafkamock.broker.errors import ErrorCode as E
from kafkamock.broker.transactions import TxnState
from kafkamock.broker.transactions.state import TRANSITIONS, Event, transition
from kafkamock.records import decode_batches, decode_control, encode_batch
from kafkamock.state_machine import IllegalTransition
from kafkamock.storage import DiskStorage

TXN = "tx"
MAX_EPOCH = 32767


@pytest.fixture
def broker(clock):
    b = Cluster({"transaction.state.log.num.partitions": 3, "offsets.topic.num.partitions": 3}, clock=clock)
    b.metadata.create_topic("t", 2, 1)
    return b


def init(broker, tid=TXN, pid=-1, epoch=-1, version=5, timeout=60_000):
    body = {"transactional_id": tid, "transaction_timeout_ms": timeout}
    if version >= 3:
        body.update(producer_id=pid, producer_epoch=epoch)
    return call(broker, "InitProducerId", version, body)


def add(broker, pid, epoch, partitions=(("t", 0),), tid=TXN, version=3):
    topics: dict[str, list[int]] = {}
    for t, p in partitions:
        topics.setdefault(t, []).append(p)
    answer = call(broker, "AddPartitionsToTxn", version, {
        "v3_and_below_transactional_id": tid, "v3_and_below_producer_id": pid, "v3_and_below_producer_epoch": epoch,
        "v3_and_below_topics": [{"name": t, "partitions": ps} for t, ps in topics.items()]})
    return {(t.name, r.partition_index): r.partition_error_code for t in answer.results_by_topic_v3_and_below
            for r in t.results_by_partition}


def end(broker, pid, epoch, commit=True, tid=TXN, version=4):
    return call(broker, "EndTxn", version, {"transactional_id": tid, "producer_id": pid, "producer_epoch": epoch,
                                            "committed": commit})


def produce(broker, pid, epoch, seq, values, partition=0, tid=TXN, transactional=True):
    batch = encode_batch([{"value": v, "timestamp": broker.now_ms()} for v in values], producer_id=pid,
                         producer_epoch=epoch, base_sequence=seq, transactional=transactional)
    answer = call(broker, "Produce", 9, {"transactional_id": tid if transactional else None, "acks": -1,
                                         "timeout_ms": 1000, "topic_data": [{"name": "t", "partition_data": [
                                             {"index": partition, "records": batch}]}]})
    result = answer.responses[0].partition_responses[0]
    return result.error_code, result.base_offset


def fetch(broker, offset=0, partition=0, committed=True):
    answer = call(broker, "Fetch", 12, {
        "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20, "isolation_level": int(committed),
        "session_id": 0, "session_epoch": -1, "rack_id": "", "forgotten_topics_data": [],
        "topics": [{"topic": "t", "partitions": [{"partition": partition, "fetch_offset": offset,
                                                  "partition_max_bytes": 1 << 20, "current_leader_epoch": -1,
                                                  "log_start_offset": -1, "last_fetched_epoch": -1}]}]})
    return answer.responses[0].partitions[0]


def values_of(data):
    """(data values, control markers) of a fetch answer."""
    out, markers = [], []
    for batch in decode_batches(b"".join(bytes(r) for r in data.records) if isinstance(data.records, list)
                                else bytes(data.records or b"")):
        for rec in batch.records:
            if batch.is_control:
                markers.append(decode_control(rec.key, rec.value)[0])
            else:
                out.append(rec.value)
    return out, markers


def ready(broker, tid=TXN):
    answer = init(broker, tid)
    assert answer.error_code == E.NONE
    return answer.producer_id, answer.producer_epoch


# -- the state table ------------------------------------------------------------------------------------------------

def test_the_state_table_refuses_what_kafka_refuses():
    assert transition(TxnState.ONGOING, Event.COMMIT) is TxnState.PREPARE_COMMIT
    assert transition(TxnState.PREPARE_EPOCH_FENCE, Event.ABORT) is TxnState.PREPARE_ABORT
    with pytest.raises(IllegalTransition):
        transition(TxnState.EMPTY, Event.COMMIT)
    with pytest.raises(IllegalTransition):
        transition(TxnState.PREPARE_COMMIT, Event.ADD)
    assert all(target is not TxnState.ONGOING or event is Event.ADD for (_, event), target in TRANSITIONS.items())
    assert TxnState.PREPARE_EPOCH_FENCE.wire_name == "PrepareEpochFence"


# -- KIP-360's InitProducerId rules ---------------------------------------------------------------------------------

def test_first_call_gives_a_new_producer_id_at_epoch_zero(broker):
    first = init(broker)
    assert (first.error_code, first.producer_epoch) == (E.NONE, 0) and first.producer_id >= 0
    other = init(broker, tid="other")
    assert other.producer_id != first.producer_id


def test_a_new_instance_bumps_the_epoch_and_forgets_the_last_epoch(broker):
    pid, epoch = ready(broker)
    again = init(broker)
    assert (again.producer_id, again.producer_epoch) == (pid, epoch + 1)
    assert broker.transactions.txns[TXN].last_epoch == -1


def test_the_current_epoch_bumps_and_a_retry_of_that_bump_returns_the_same(broker):
    pid, epoch = ready(broker)
    bumped = init(broker, pid=pid, epoch=epoch)
    assert (bumped.error_code, bumped.producer_id, bumped.producer_epoch) == (E.NONE, pid, epoch + 1)
    assert broker.transactions.txns[TXN].last_epoch == epoch
    retry = init(broker, pid=pid, epoch=epoch)             # the response was lost: same answer, no second bump
    assert (retry.error_code, retry.producer_id, retry.producer_epoch) == (E.NONE, pid, epoch + 1)
    next_bump = init(broker, pid=pid, epoch=epoch + 1)
    assert next_bump.producer_epoch == epoch + 2


def test_any_other_epoch_or_producer_id_is_fenced(broker):
    pid, epoch = ready(broker)
    init(broker, pid=pid, epoch=epoch)                      # now epoch 1, last epoch 0
    init(broker)                                            # a new instance: epoch 2, last epoch -1
    stale = init(broker, pid=pid, epoch=1)
    assert stale.error_code == E.PRODUCER_FENCED and stale.producer_id == -1
    assert init(broker, pid=pid, epoch=0).error_code == E.PRODUCER_FENCED
    assert init(broker, pid=pid + 999, epoch=2).error_code == E.PRODUCER_FENCED
    old_client = init(broker, pid=pid, epoch=0, version=3)  # before v4: INVALID_PRODUCER_EPOCH
    assert old_client.error_code == E.INVALID_PRODUCER_EPOCH


def test_an_exhausted_epoch_moves_to_a_new_producer_id_and_the_retry_is_recognised(broker):
    pid, _ = ready(broker)
    meta = broker.transactions.txns[TXN]
    meta.epoch = MAX_EPOCH - 1
    rotated = init(broker, pid=pid, epoch=MAX_EPOCH - 1)
    assert rotated.error_code == E.NONE and rotated.producer_id != pid and rotated.producer_epoch == 0
    assert meta.prev_producer_id == pid and meta.last_epoch == MAX_EPOCH - 1
    retry = init(broker, pid=pid, epoch=MAX_EPOCH - 1)       # the old id and exhausted epoch: the same answer
    assert (retry.error_code, retry.producer_id, retry.producer_epoch) == (E.NONE, rotated.producer_id, 0)


def test_half_an_expected_producer_is_invalid_and_idempotent_producers_get_fresh_ids(broker):
    assert init(broker, pid=5, epoch=-1).error_code == E.INVALID_REQUEST
    first = init(broker, tid=None)
    bump = init(broker, tid=None, pid=first.producer_id, epoch=first.producer_epoch)
    assert bump.error_code == E.NONE and bump.producer_id != first.producer_id and bump.producer_epoch == 0
    assert init(broker, timeout=broker.config["transaction.max.timeout.ms"] + 1).error_code == \
        E.INVALID_TRANSACTION_TIMEOUT
    assert init(broker, tid="").error_code == E.INVALID_REQUEST


def test_init_on_an_open_transaction_aborts_it_with_a_fenced_epoch(broker):
    pid, epoch = ready(broker)
    assert add(broker, pid, epoch) == {("t", 0): E.NONE}
    assert produce(broker, pid, epoch, 0, [b"zombie"])[0] == E.NONE
    answer = init(broker)
    assert answer.error_code == E.CONCURRENT_TRANSACTIONS
    meta = broker.transactions.txns[TXN]
    assert meta.state is TxnState.COMPLETE_ABORT and meta.epoch == epoch + 1
    again = init(broker)
    assert (again.error_code, again.producer_epoch) == (E.NONE, epoch + 2)
    # the zombie is fenced everywhere
    assert produce(broker, pid, epoch, 1, [b"late"])[0] == E.INVALID_PRODUCER_EPOCH
    assert end(broker, pid, epoch).error_code == E.PRODUCER_FENCED
    data = fetch(broker)
    assert values_of(data) == ([b"zombie"], ["ABORT"]) and [a.producer_id for a in data.aborted_transactions] == [pid]


# -- a transaction's life ------------------------------------------------------------------------------------------

def test_commit_writes_markers_and_read_committed_waits_for_them(broker):
    pid, epoch = ready(broker)
    assert add(broker, pid, epoch, [("t", 0), ("t", 1)]) == {("t", 0): E.NONE, ("t", 1): E.NONE}
    assert produce(broker, pid, epoch, 0, [b"a", b"b"]) == (E.NONE, 0)
    assert produce(broker, pid, epoch, 0, [b"c"], partition=1)[0] == E.NONE
    pending = fetch(broker)
    assert pending.high_watermark == 2 and pending.last_stable_offset == 0
    assert values_of(pending) == ([], [])
    assert values_of(fetch(broker, committed=False))[0] == [b"a", b"b"]
    listed = call(broker, "ListOffsets", 5, {"replica_id": -1, "isolation_level": 1, "topics": [
        {"name": "t", "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}]})
    assert listed.topics[0].partitions[0].offset == 0
    assert end(broker, pid, epoch).error_code == E.NONE
    done = fetch(broker)
    assert done.last_stable_offset == done.high_watermark == 3
    assert values_of(done) == ([b"a", b"b"], ["COMMIT"]) and done.aborted_transactions == []
    assert values_of(fetch(broker, partition=1)) == ([b"c"], ["COMMIT"])
    assert broker.transactions.txns[TXN].state is TxnState.COMPLETE_COMMIT
    assert end(broker, pid, epoch).error_code == E.NONE                  # a retried commit
    assert end(broker, pid, epoch, commit=False).error_code == E.INVALID_TXN_STATE


def test_abort_is_reported_to_read_committed_readers(broker):
    pid, epoch = ready(broker)
    add(broker, pid, epoch)
    produce(broker, pid, epoch, 0, [b"x"])
    idem = init(broker, tid=None)
    assert produce(broker, idem.producer_id, 0, 0, [b"plain"], transactional=False)[0] == E.NONE
    assert end(broker, pid, epoch, commit=False).error_code == E.NONE
    data = fetch(broker)
    assert [(a.producer_id, a.first_offset) for a in data.aborted_transactions] == [(pid, 0)]
    assert values_of(data) == ([b"x", b"plain"], ["ABORT"])     # the client drops what the index names
    later = fetch(broker, offset=3)
    assert later.aborted_transactions == []


def test_bad_transaction_requests_get_kafkas_codes(broker):
    pid, epoch = ready(broker)
    assert end(broker, pid, epoch).error_code == E.INVALID_TXN_STATE          # nothing open
    assert end(broker, pid, epoch + 3).error_code == E.PRODUCER_FENCED
    assert end(broker, pid, epoch + 3, version=1).error_code == E.INVALID_PRODUCER_EPOCH
    assert end(broker, pid + 1, epoch).error_code == E.INVALID_PRODUCER_ID_MAPPING
    assert end(broker, pid, epoch, tid="nobody").error_code == E.INVALID_PRODUCER_ID_MAPPING
    assert add(broker, pid, epoch, [("nope", 0), ("t", 0)]) == {
        ("nope", 0): E.UNKNOWN_TOPIC_OR_PARTITION, ("t", 0): E.OPERATION_NOT_ATTEMPTED}
    assert add(broker, pid, epoch + 1) == {("t", 0): E.PRODUCER_FENCED}
    assert add(broker, pid, epoch + 1, version=1) == {("t", 0): E.INVALID_PRODUCER_EPOCH}
    # a transactional batch for a partition not in the transaction
    assert produce(broker, pid, epoch, 0, [b"x"])[0] == E.INVALID_TXN_STATE
    add(broker, pid, epoch)
    assert produce(broker, pid, epoch, 0, [b"x"], partition=1)[0] == E.INVALID_TXN_STATE
    assert produce(broker, pid, epoch, 0, [b"x"])[0] == E.NONE
    # a non-transactional write from a producer with an open transaction
    assert produce(broker, pid, epoch, 1, [b"y"], transactional=False)[0] == E.INVALID_TXN_STATE


def test_not_the_coordinator(clock):
    broker = Cluster({"transaction.state.log.num.partitions": 4}, clock=clock, brokers=3)
    broker.metadata.create_topic("t", 1, 1)
    coordinator = broker.transactions._partition(TXN).leader_id
    other = next(n for n in broker.metadata.nodes if n != coordinator)
    answer = call(broker, "InitProducerId", 4, {"transactional_id": TXN, "transaction_timeout_ms": 1000,
                                                "producer_id": -1, "producer_epoch": -1}, node_id=other)
    assert answer.error_code == E.NOT_COORDINATOR
    found = call(broker, "FindCoordinator", 4, {"key_type": 1, "coordinator_keys": [TXN]}, node_id=other)
    assert found.coordinators[0].node_id == coordinator


def test_kip890_v5_ends_with_a_new_epoch_and_a_retry_succeeds(broker):
    pid, epoch = ready(broker)
    add(broker, pid, epoch)
    produce(broker, pid, epoch, 0, [b"a"])
    answer = end(broker, pid, epoch, version=5)
    assert (answer.error_code, answer.producer_id, answer.producer_epoch) == (E.NONE, pid, epoch + 1)
    assert values_of(fetch(broker)) == ([b"a"], ["COMMIT"])
    retry = end(broker, pid, epoch, version=5)
    assert (retry.error_code, retry.producer_epoch) == (E.NONE, epoch + 1)
    # an abort with nothing open still moves the epoch on (KIP-890 part 2)
    assert end(broker, pid, epoch + 1, commit=False, version=5).producer_epoch == epoch + 2


def test_timed_out_transaction_is_aborted_and_its_producer_fenced(broker, clock):
    """On transaction version 2 (the cluster's level decides, whatever the client's) the abort's own bump is the
    fence: one new epoch, LastEpoch the fenced one, so the fenced instance recovers with KIP-360's retry rule and
    finds the transaction Empty at the new epoch (Kafka 4.3.1)."""
    pid, epoch = ready(broker)
    init(broker, pid=pid, epoch=epoch)
    epoch += 1
    broker.transactions.txns[TXN].timeout_ms = 5_000
    add(broker, pid, epoch)
    produce(broker, pid, epoch, 0, [b"slow"])
    clock.advance(broker.config["transaction.abort.timed.out.transaction.cleanup.interval.ms"])
    broker.tick()
    meta = broker.transactions.txns[TXN]
    assert meta.state is TxnState.COMPLETE_ABORT and meta.epoch == epoch + 1 and meta.last_epoch == epoch
    assert fetch(broker).last_stable_offset == 2
    assert end(broker, pid, epoch).error_code == E.PRODUCER_FENCED
    assert end(broker, pid, epoch, commit=False, version=5).error_code == E.NONE     # a retry of that abort
    assert end(broker, pid, epoch, commit=True, version=5).error_code == E.INVALID_TXN_STATE
    recovered = init(broker, pid=pid, epoch=epoch)
    assert (recovered.error_code, recovered.producer_epoch) == (E.NONE, epoch + 1)
    assert meta.state is TxnState.EMPTY and meta.start_ms == -1


def test_timed_out_transaction_on_transaction_version_1_forgets_the_last_epoch(clock):
    """At transaction version 1 the fence moves the epoch once and forgets LastEpoch: no KIP-360 recovery."""
    broker = Cluster({"transaction.state.log.num.partitions": 3, "offsets.topic.num.partitions": 3,
                     "kafkamock.transaction.version": 1}, clock=clock)
    broker.metadata.create_topic("t", 2, 1)
    pid, epoch = ready(broker)
    broker.transactions.txns[TXN].timeout_ms = 5_000
    add(broker, pid, epoch)
    produce(broker, pid, epoch, 0, [b"slow"])
    clock.advance(broker.config["transaction.abort.timed.out.transaction.cleanup.interval.ms"])
    broker.tick()
    meta = broker.transactions.txns[TXN]
    assert meta.state is TxnState.COMPLETE_ABORT and meta.epoch == epoch + 1 and meta.last_epoch == -1
    assert init(broker, pid=pid, epoch=epoch).error_code == E.PRODUCER_FENCED


def test_transactional_ids_expire_and_come_back_with_a_new_producer_id(broker, clock):
    pid, _ = ready(broker)
    clock.advance(broker.config["transactional.id.expiration.ms"])
    clock.advance(broker.config["transaction.remove.expired.transaction.cleanup.interval.ms"])
    broker.tick()
    assert TXN not in broker.transactions.txns
    again = init(broker, pid=pid, epoch=0)     # KIP-360: the id is unknown now; a new producer id, not fenced
    assert again.error_code == E.NONE and again.producer_id != pid and again.producer_epoch == 0


# -- offsets in a transaction ---------------------------------------------------------------------------------------

def txn_commit(broker, pid, epoch, offset, group="g", version=3, generation=-1, member=""):
    answer = call(broker, "TxnOffsetCommit", version, {
        "transactional_id": TXN, "group_id": group, "producer_id": pid, "producer_epoch": epoch,
        "generation_id": generation, "member_id": member, "group_instance_id": None,
        "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": offset,
                                                 "committed_leader_epoch": -1, "committed_metadata": "m"}]}]})
    return answer.topics[0].partitions[0].error_code


def offset_fetch(broker, group="g", stable=True):
    answer = call(broker, "OffsetFetch", 7, {"group_id": group, "require_stable": stable,
                                             "topics": [{"name": "t", "partition_indexes": [0]}]})
    p = answer.topics[0].partitions[0]
    return p.error_code, p.committed_offset


def test_txn_offsets_are_pending_until_the_commit_marker(broker):
    pid, epoch = ready(broker)
    assert txn_commit(broker, pid, epoch, 7) == E.INVALID_TXN_STATE           # AddOffsetsToTxn first
    assert call(broker, "AddOffsetsToTxn", 3, {"transactional_id": TXN, "producer_id": pid, "producer_epoch": epoch,
                                               "group_id": "g"}).error_code == E.NONE
    assert txn_commit(broker, pid, epoch, 7) == E.NONE
    assert offset_fetch(broker) == (E.UNSTABLE_OFFSET_COMMIT, -1)
    assert offset_fetch(broker, stable=False) == (E.NONE, -1)
    end(broker, pid, epoch)
    assert offset_fetch(broker) == (E.NONE, 7)
    # an aborted transaction's offsets vanish
    call(broker, "AddOffsetsToTxn", 3, {"transactional_id": TXN, "producer_id": pid, "producer_epoch": epoch,
                                        "group_id": "g"})
    txn_commit(broker, pid, epoch, 9)
    end(broker, pid, epoch, commit=False)
    assert offset_fetch(broker) == (E.NONE, 7)
    # a member check for a group that does not know the member
    call(broker, "AddOffsetsToTxn", 3, {"transactional_id": TXN, "producer_id": pid, "producer_epoch": epoch,
                                        "group_id": "g"})
    assert txn_commit(broker, pid, epoch, 9, generation=3, member="ghost") == E.UNKNOWN_MEMBER_ID


# -- admin ------------------------------------------------------------------------------------------------------------

def test_describe_and_list_transactions_and_describe_producers(broker, clock):
    pid, epoch = ready(broker)
    add(broker, pid, epoch)
    produce(broker, pid, epoch, 0, [b"a"])
    ready(broker, "idle-one")
    described = call(broker, "DescribeTransactions", 0, {"transactional_ids": [TXN, "missing"]}).transaction_states
    assert (described[0].transaction_state, described[0].producer_id, described[0].producer_epoch) == (
        "Ongoing", pid, epoch)
    assert [(t.topic, list(t.partitions)) for t in described[0].topics] == [("t", [0])]
    assert described[1].error_code == E.TRANSACTIONAL_ID_NOT_FOUND

    def listed(**filters):
        body = {"state_filters": [], "producer_id_filters": [], "duration_filter": -1,
                "transactional_id_pattern": None, **filters}
        answer = call(broker, "ListTransactions", 2, body)
        return answer.error_code, sorted(t.transactional_id for t in answer.transaction_states), \
            list(answer.unknown_state_filters)

    assert listed() == (E.NONE, ["idle-one", TXN], [])
    assert listed(state_filters=["Ongoing", "Bogus"]) == (E.NONE, [TXN], ["Bogus"])
    assert listed(producer_id_filters=[pid]) == (E.NONE, [TXN], [])
    clock.advance(1_000)
    # Kafka's duration filter: started more than that long ago, in any state; "idle-one" never started one (-1).
    assert listed(duration_filter=5_000)[1] == ["idle-one"]
    assert listed(duration_filter=1_000)[1] == ["idle-one"]
    assert listed(duration_filter=999)[1] == ["idle-one", TXN]
    assert listed(transactional_id_pattern="idle-.*")[1] == ["idle-one"]
    assert listed(transactional_id_pattern="(")[0] == E.INVALID_REGULAR_EXPRESSION
    producers = call(broker, "DescribeProducers", 0, {"topics": [{"name": "t", "partition_indexes": [0, 9]}]})
    p0, p9 = producers.topics[0].partitions
    assert [(a.producer_id, a.producer_epoch, a.last_sequence, a.current_txn_start_offset)
            for a in p0.active_producers] == [(pid, epoch, 0, 0)]
    assert p9.error_code == E.UNKNOWN_TOPIC_OR_PARTITION


def test_write_txn_markers_aborts_a_hanging_transaction(broker):
    pid, epoch = ready(broker)
    epoch = init(broker, pid=pid, epoch=epoch).producer_epoch      # 1: an older epoch exists (a negative one is
    add(broker, pid, epoch)                                          # UNKNOWN_SERVER_ERROR, as in Kafka 4.3.1)
    produce(broker, pid, epoch, 0, [b"a"])
    answer = call(broker, "WriteTxnMarkers", 1, {"markers": [{
        "producer_id": pid, "producer_epoch": epoch, "transaction_result": False, "coordinator_epoch": 0,
        "topics": [{"name": "t", "partition_indexes": [0]}]}]})
    assert answer.markers[0].topics[0].partitions[0].error_code == E.NONE
    assert fetch(broker).last_stable_offset == 2
    stale = call(broker, "WriteTxnMarkers", 1, {"markers": [{
        "producer_id": pid, "producer_epoch": epoch - 1, "transaction_result": True, "coordinator_epoch": 0,
        "topics": [{"name": "t", "partition_indexes": [0]}]}]})
    assert stale.markers[0].topics[0].partitions[0].error_code == E.INVALID_PRODUCER_EPOCH


# -- restart ------------------------------------------------------------------------------------------------------------

def test_restart_keeps_open_and_finished_transactions(tmp_path, clock):
    config = {"transaction.state.log.num.partitions": 3, "offsets.topic.num.partitions": 3}
    broker = Cluster(config, clock=clock, storage=DiskStorage(tmp_path))
    broker.metadata.create_topic("t", 1, 1)
    pid, epoch = ready(broker, "done")
    add(broker, pid, epoch, tid="done")
    produce(broker, pid, epoch, 0, [b"committed"], tid="done")
    end(broker, pid, epoch, tid="done")
    open_pid, open_epoch = ready(broker, "open")
    add(broker, open_pid, open_epoch, tid="open")
    produce(broker, open_pid, open_epoch, 0, [b"pending"], tid="open")
    call(broker, "AddOffsetsToTxn", 3, {"transactional_id": "open", "producer_id": open_pid,
                                        "producer_epoch": open_epoch, "group_id": "g"})
    call(broker, "TxnOffsetCommit", 3, {
        "transactional_id": "open", "group_id": "g", "producer_id": open_pid, "producer_epoch": open_epoch,
        "generation_id": -1, "member_id": "", "group_instance_id": None,
        "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 3,
                                                 "committed_leader_epoch": -1, "committed_metadata": ""}]}]})
    broker.close()

    again = Cluster(config, clock=clock, storage=DiskStorage(tmp_path))
    assert again.transactions.txns["done"].state is TxnState.COMPLETE_COMMIT
    meta = again.transactions.txns["open"]
    assert meta.state is TxnState.ONGOING
    assert set(meta.partitions) == {("t", 0), ("__consumer_offsets", meta_index(again))}
    assert fetch(again).last_stable_offset == 2                       # the open transaction's first offset
    assert offset_fetch(again) == (E.UNSTABLE_OFFSET_COMMIT, -1)
    retry = init(again, "done", pid=pid, epoch=epoch)                  # KIP-360's state survived the restart
    assert (retry.error_code, retry.producer_epoch) == (E.NONE, epoch + 1)
    assert end(again, open_pid, open_epoch, tid="open").error_code == E.NONE
    assert fetch(again).last_stable_offset == 4
    assert values_of(fetch(again))[0] == [b"committed", b"pending"]
    assert offset_fetch(again) == (E.NONE, 3)
    again.close()

    third = Cluster(config, clock=clock, storage=DiskStorage(tmp_path))
    assert third.transactions.txns["open"].state is TxnState.COMPLETE_COMMIT
    assert third.metadata.topics["t"].partitions[0].producers.ongoing == {}
    assert offset_fetch(third) == (E.NONE, 3)


def meta_index(broker) -> int:
    return broker.transactions.offsets_partition("g")[1]


def test_producer_state_outlives_its_batches_across_a_restart(tmp_path, clock):
    """KIP-360: after DeleteRecords removed every batch of a producer, its epoch and sequence are still known,
    also after a restart (a producer snapshot file in Kafka's format), until producer.id.expiration.ms."""
    from kafkamock.storage import producer_snapshot

    config = {"transaction.state.log.num.partitions": 1, "offsets.topic.num.partitions": 1}
    broker = Cluster(config, clock=clock, storage=DiskStorage(tmp_path))
    broker.metadata.create_topic("t", 1, 1)
    idem = init(broker, tid=None)
    pid = idem.producer_id
    assert produce(broker, pid, 0, 0, [b"a", b"b"], transactional=False)[0] == E.NONE
    call(broker, "DeleteRecords", 2, {"topics": [{"name": "t", "partitions": [{"partition_index": 0, "offset": 2}]}],
                                      "timeout_ms": 1000})
    assert broker.metadata.topics["t"].partitions[0].log.log_start_offset == 2
    broker.close()
    snapshots = producer_snapshot.offsets(tmp_path / "t-0")
    assert snapshots == [2]
    entries = producer_snapshot.decode((tmp_path / "t-0" / producer_snapshot.file_name(2)).read_bytes())
    assert [(e.producer_id, e.epoch, e.last_sequence, e.last_offset) for e in entries] == [(pid, 0, 1, 1)]
    # without the snapshot the log alone (it starts at offset 2 now) knows nothing of the producer
    bare_dir = tmp_path.parent / (tmp_path.name + "-bare")
    shutil.copytree(tmp_path, bare_dir)
    (bare_dir / "t-0" / producer_snapshot.file_name(2)).unlink()
    bare = Cluster(config, clock=clock, storage=DiskStorage(bare_dir))
    assert pid not in bare.metadata.topics["t"].partitions[0].producers.entries

    again = Cluster(config, clock=clock, storage=DiskStorage(tmp_path))
    entry = again.metadata.topics["t"].partitions[0].producers.entries[pid]
    assert (entry.epoch, entry.last_seq) == (0, 1)
    assert produce(again, pid, 0, 5, [b"gap"], transactional=False)[0] == E.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert produce(again, pid, 0, 0, [b"a", b"b"], transactional=False)[1] == 0   # a duplicate of the first batch
    assert produce(again, pid, 0, 2, [b"c"], transactional=False) == (E.NONE, 2)
    clock.advance(again.config["producer.id.expiration.ms"] + again.config["producer.id.expiration.check.interval.ms"])
    again.tick()
    assert pid not in again.metadata.topics["t"].partitions[0].producers.entries


def test_kip890_part2_implicit_adds_and_the_feature_level(clock):
    """transaction.version 2 (the default, as a new Kafka 4.x cluster): ApiVersions finalizes it; a Produce v12+ and
    a TxnOffsetCommit v5 add their partition themselves, and EndTxn v5 moves the epoch on. At level 1, the same
    Produce v12 is only verified (TRANSACTION_ABORTABLE without AddPartitionsToTxn, as Kafka tells v11+ producers)."""
    def versions(b):
        answer = call(b, "ApiVersions", 3, {"client_software_name": "t", "client_software_version": "1"})
        return ([(f.name, f.max_version_level) for f in answer.finalized_features if f.name == "transaction.version"],
                answer.finalized_features_epoch)

    broker = Cluster({"transaction.state.log.num.partitions": 1, "offsets.topic.num.partitions": 1}, clock=clock)
    broker.metadata.create_topic("t", 1, 1)
    assert versions(broker) == ([("transaction.version", 2)], 1)
    pid, epoch = ready(broker)

    def produce_v12(seq, value, b=broker, e=epoch):
        batch = encode_batch([{"value": value, "timestamp": 1}], producer_id=pid, producer_epoch=e,
                             base_sequence=seq, transactional=True)
        topic_id = b.metadata.topics["t"].topic_id
        answer = call(b, "Produce", 12, {"transactional_id": TXN, "acks": -1, "timeout_ms": 1000, "topic_data": [
            {"name": "t", "topic_id": topic_id, "partition_data": [{"index": 0, "records": batch}]}]})
        return answer.responses[0].partition_responses[0].error_code

    assert produce_v12(0, b"implicit") == E.NONE
    meta = broker.transactions.txns[TXN]
    assert meta.state is TxnState.ONGOING and set(meta.partitions) == {("t", 0)} and meta.client_version == 2
    assert txn_commit(broker, pid, epoch, 1, version=5) == E.NONE
    assert meta_index(broker) in {p for t, p in meta.partitions if t == "__consumer_offsets"}
    answer = end(broker, pid, epoch, version=5)
    assert (answer.error_code, answer.producer_epoch) == (E.NONE, epoch + 1)
    assert offset_fetch(broker) == (E.NONE, 1)
    assert produce_v12(0, b"next", e=epoch + 1) == E.NONE          # the new epoch starts its sequences at 0
    assert produce_v12(1, b"stale", e=epoch) == E.INVALID_PRODUCER_EPOCH

    older = Cluster({"transaction.state.log.num.partitions": 1, "kafkamock.transaction.version": 1}, clock=clock)
    older.metadata.create_topic("t", 1, 1)
    assert versions(older) == ([("transaction.version", 1)], 1)
    pid, epoch = ready(older)
    assert produce_v12(0, b"x", b=older, e=epoch) == E.TRANSACTION_ABORTABLE   # Produce v11+ is told so (KIP-1050)


def test_kip890_v5_end_at_an_exhausted_epoch_writes_markers_with_the_old_id_then_rotates(broker):
    pid, _ = ready(broker)
    meta = broker.transactions.txns[TXN]
    meta.epoch = MAX_EPOCH - 1
    assert produce(broker, pid, MAX_EPOCH - 1, 0, [b"a"])[0] == E.INVALID_TXN_STATE      # not added yet
    add(broker, pid, MAX_EPOCH - 1)
    assert produce(broker, pid, MAX_EPOCH - 1, 0, [b"a"])[0] == E.NONE
    answer = end(broker, pid, MAX_EPOCH - 1, version=5)
    assert answer.error_code == E.NONE and answer.producer_id != pid and answer.producer_epoch == 0
    assert meta.prev_producer_id == pid
    data = fetch(broker)
    assert values_of(data) == ([b"a"], ["COMMIT"]) and data.last_stable_offset == 2   # the old id's marker closed it
    retry = end(broker, pid, MAX_EPOCH - 1, version=5)                               # a retry across the rotation
    assert (retry.error_code, retry.producer_id, retry.producer_epoch) == (E.NONE, answer.producer_id, 0)


def test_a_plain_commit_after_a_pending_transactional_one_wins(broker):
    """Kafka's OffsetMetadataManager at the marker: the transaction's offset applies only if its record is later in
    __consumer_offsets than the offset already committed."""
    pid, epoch = ready(broker)
    call(broker, "AddOffsetsToTxn", 3, {"transactional_id": TXN, "producer_id": pid, "producer_epoch": epoch,
                                        "group_id": "g"})
    assert txn_commit(broker, pid, epoch, 5) == E.NONE
    plain = call(broker, "OffsetCommit", 8, {
        "group_id": "g", "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
        "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 9,
                                                 "committed_leader_epoch": -1, "committed_metadata": ""}]}]})
    assert plain.topics[0].partitions[0].error_code == E.NONE
    end(broker, pid, epoch)
    assert offset_fetch(broker) == (E.NONE, 9)
    call(broker, "AddOffsetsToTxn", 3, {"transactional_id": TXN, "producer_id": pid, "producer_epoch": epoch,
                                        "group_id": "g"})
    txn_commit(broker, pid, epoch, 12)                   # written after the plain commit: it wins at the marker
    end(broker, pid, epoch)
    assert offset_fetch(broker) == (E.NONE, 12)


# -- Kafka 4.3.1's answers, as the differential suite (tests/differential/test_transactions.py) found them ----------

def produce_v(broker, version, pid, epoch, seq, values=(b"v",), partition=0, tid=TXN, transactional=True):
    """One batch by Produce ``version``: the partition's whole answer."""
    batch = encode_batch([{"value": v, "timestamp": broker.now_ms()} for v in values], producer_id=pid,
                         producer_epoch=epoch, base_sequence=seq, transactional=transactional)
    body = {"transactional_id": tid, "acks": -1, "timeout_ms": 1000, "topic_data": [
        {"name": "t", "topic_id": broker.metadata.topics["t"].topic_id,
         "partition_data": [{"index": partition, "records": batch}]}]}
    return call(broker, "Produce", version, body).responses[0].partition_responses[0]


def states_written(broker) -> list[int]:
    """The TransactionStatus of every record in __transaction_state, in order."""
    from kafkamock.broker.transactions import records

    out = []
    for partition in broker.metadata.topics["__transaction_state"].partitions:
        for stored in partition.log.batches():
            for batch in decode_batches(stored.data):
                for rec in batch.records:
                    _, value = records.decode(rec.key, rec.value)
                    if value is not None:
                        out.append(value.transaction_status)
    return out


def test_the_fence_on_transaction_version_2_moves_the_epoch_once_and_the_fenced_instance_may_recover(broker):
    pid, epoch = ready(broker)
    assert produce_v(broker, 12, pid, epoch, 0).error_code == E.NONE           # an implicit add: Ongoing
    assert init(broker).error_code == E.CONCURRENT_TRANSACTIONS
    meta = broker.transactions.txns[TXN]
    assert (meta.state, meta.epoch, meta.last_epoch) == (TxnState.COMPLETE_ABORT, epoch + 1, epoch)
    assert int(TxnState.PREPARE_EPOCH_FENCE) not in states_written(broker)     # a pending state Kafka never writes
    data = fetch(broker)
    assert values_of(data)[1] == ["ABORT"] and [a.producer_id for a in data.aborted_transactions] == [pid]
    assert data.records and decode_batches(bytes(data.records))[-1].producer_epoch == epoch + 1   # the marker's
    recovered = init(broker, pid=pid, epoch=epoch)                             # KIP-360's retry rule
    assert (recovered.error_code, recovered.producer_epoch) == (E.NONE, epoch + 1)
    assert meta.state is TxnState.EMPTY and meta.start_ms == -1


def test_a_retried_bump_leaves_the_transaction_empty(broker):
    pid, epoch = ready(broker)
    bumped = init(broker, pid=pid, epoch=epoch)
    add(broker, pid, bumped.producer_epoch)
    end(broker, pid, bumped.producer_epoch)
    meta = broker.transactions.txns[TXN]
    assert meta.state is TxnState.COMPLETE_COMMIT
    retried = init(broker, pid=pid, epoch=epoch)
    assert (retried.error_code, retried.producer_epoch) == (E.NONE, bumped.producer_epoch)
    assert (meta.state, meta.start_ms, meta.last_epoch) == (TxnState.EMPTY, -1, epoch)


def test_end_txn_follows_kafkas_two_tables(broker, clock):
    pid, _ = ready(broker)
    pid, epoch = ready(broker)                                  # Empty at epoch 1
    for commit in (True, False):
        assert end(broker, pid, epoch - 1, commit, version=5).error_code == E.PRODUCER_FENCED   # a "retry" on Empty
    assert end(broker, pid, epoch, True, version=5).error_code == E.INVALID_TXN_STATE
    clock.advance(5)
    aborted = end(broker, pid, epoch, False, version=5)         # an abort with nothing added: a bump, dated now
    meta = broker.transactions.txns[TXN]
    assert (aborted.error_code, aborted.producer_epoch) == (E.NONE, epoch + 1) and meta.start_ms == clock.now_ms()
    retried = end(broker, pid, epoch, False, version=5)
    assert (retried.error_code, retried.producer_id, retried.producer_epoch) == (E.NONE, pid, epoch + 1)
    assert end(broker, pid, epoch, True, version=5).error_code == E.INVALID_TXN_STATE       # the other end, retried
    assert end(broker, pid, epoch + 1, True, version=5).error_code == E.INVALID_TXN_STATE
    assert end(broker, pid, epoch + 1, False, version=5).producer_epoch == epoch + 2
    # transaction version 1: no epoch in the answer, a retry of the same end is NONE, the other INVALID_TXN_STATE
    epoch += 2
    add(broker, pid, epoch)
    assert (end(broker, pid, epoch).error_code, end(broker, pid, epoch).error_code) == (E.NONE, E.NONE)
    assert end(broker, pid, epoch, False).error_code == E.INVALID_TXN_STATE
    assert broker.transactions.end_txn(TXN, pid, epoch, True, 4) == (E.NONE, -1, -1)
    assert end(broker, pid, epoch, tid="").error_code == E.INVALID_REQUEST


def test_verification_tells_each_client_what_it_knows(broker):
    pid, epoch = ready(broker)
    answer = produce_v(broker, 9, pid, epoch, 0)
    assert (answer.error_code, answer.error_message) == (E.INVALID_TXN_STATE,
                                                         "Partition was not added to the transaction")
    answer = produce_v(broker, 11, pid, epoch, 0)
    assert (answer.error_code, answer.error_message, answer.log_start_offset) == (E.TRANSACTION_ABORTABLE, None, -1)
    verify = call(broker, "AddPartitionsToTxn", 4, {"transactions": [{
        "transactional_id": TXN, "producer_id": pid, "producer_epoch": epoch, "verify_only": True,
        "topics": [{"name": "t", "partitions": [0]}]}]})
    assert verify.results_by_transaction[0].topic_results[0].results_by_partition[0].partition_error_code == \
        E.TRANSACTION_ABORTABLE
    assert txn_commit(broker, pid, epoch, 1, version=3) == E.INVALID_TXN_STATE
    assert txn_commit(broker, pid, epoch, 1, version=4) == E.TRANSACTION_ABORTABLE
    assert txn_commit(broker, pid, epoch + 1, 1, version=5) == E.INVALID_PRODUCER_EPOCH   # fenced, as producers know it
    assert produce_v(broker, 12, pid, epoch + 1, 0).error_code == E.INVALID_PRODUCER_EPOCH


def test_produce_refusals_as_kafka_answers_them(broker):
    pid, epoch = ready(broker)
    nameless = produce_v(broker, 12, pid, epoch, 0, tid=None)
    assert nameless.error_code == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED    # no authorizer needed for that
    first = produce_v(broker, 12, pid, epoch, 5)                 # added by the Produce, no state here: from 0
    assert (first.error_code, first.log_start_offset, first.error_message) == (E.OUT_OF_ORDER_SEQUENCE_NUMBER, 0, None)
    assert produce_v(broker, 12, pid, epoch, 0, (b"a", b"b")).error_code == E.NONE
    gap = produce_v(broker, 12, pid, epoch, 7)
    assert (gap.error_code, gap.log_start_offset, gap.error_message) == (E.OUT_OF_ORDER_SEQUENCE_NUMBER, 0, None)
    plain = produce_v(broker, 12, pid, epoch, 2, tid=None, transactional=False)
    assert (plain.error_code, plain.log_start_offset) == (E.INVALID_TXN_STATE, 0)
    duplicate = produce_v(broker, 12, pid, epoch, 0, (b"a", b"b"), tid=None, transactional=False)
    assert (duplicate.error_code, duplicate.base_offset) == (E.NONE, 0)       # a duplicate is recognised first


def test_write_txn_markers_of_transaction_version_2_need_a_newer_epoch(broker):
    pid, epoch = ready(broker)
    add(broker, pid, epoch)
    produce(broker, pid, epoch, 0, [b"open"])

    def marker(e, tv, version=2):
        answer = call(broker, "WriteTxnMarkers", version, {"markers": [{
            "producer_id": pid, "producer_epoch": e, "transaction_result": False, "coordinator_epoch": 0,
            "transaction_version": tv, "topics": [{"name": "t", "partition_indexes": [0]}]}]})
        return answer.markers[0].topics[0].partitions[0].error_code

    assert marker(-1, 0, version=1) == E.UNKNOWN_SERVER_ERROR
    assert marker(epoch, 2) == E.INVALID_PRODUCER_EPOCH
    assert marker(epoch, 1) == E.NONE
    assert marker(epoch, 2) == E.NONE                            # the transaction is closed: a retry
    assert marker(epoch + 1, 2) == E.NONE


def test_describe_transactions_errors_carry_zeros_and_partitions_come_in_hash_order(broker):
    broker.metadata.create_topic("orders", 5, 1)
    pid, epoch = ready(broker)
    add(broker, pid, epoch, [("orders", p) for p in range(5)] + [("t", 1), ("t", 0)])
    answer = call(broker, "DescribeTransactions", 0, {"transactional_ids": [TXN, "", "nope"]})
    ours, empty, unknown = answer.transaction_states
    # Kafka's HashSet<TopicPartition> order (checked against a JVM): t-1, t-0, then orders 0-4
    assert [(t.topic, t.partitions) for t in ours.topics] == [("t", [1, 0]), ("orders", [0, 1, 2, 3, 4])]
    assert empty.error_code == E.INVALID_REQUEST and unknown.error_code == E.TRANSACTIONAL_ID_NOT_FOUND
    for entry in (empty, unknown):
        assert (entry.producer_id, entry.producer_epoch, entry.transaction_start_time_ms) == (0, 0, 0)


def test_add_offsets_takes_any_group_id_and_txn_offset_commit_answers_unknown_topics_alone(broker):
    pid, epoch = ready(broker)
    assert call(broker, "AddOffsetsToTxn", 3, {"transactional_id": TXN, "producer_id": pid, "producer_epoch": epoch,
                                               "group_id": ""}).error_code == E.NONE
    answer = call(broker, "TxnOffsetCommit", 3, {
        "transactional_id": TXN, "group_id": "g", "producer_id": pid, "producer_epoch": epoch + 1,
        "generation_id": -1, "member_id": "", "group_instance_id": None,
        "topics": [{"name": "t", "partitions": [{"partition_index": p, "committed_offset": 1,
                                                 "committed_leader_epoch": -1, "committed_metadata": None}
                                                for p in (0, 9)]}]})
    # the unknown partition first and with its own error; the coordinator's (a fenced producer) for the rest
    assert [(p.partition_index, p.error_code) for p in answer.topics[0].partitions] == [
        (9, E.UNKNOWN_TOPIC_OR_PARTITION), (0, E.INVALID_PRODUCER_EPOCH)]


def test_describe_producers_topic_errors_carry_kafkas_messages(broker):
    answer = call(broker, "DescribeProducers", 0, {"topics": [{"name": "nope", "partition_indexes": [0]},
                                                              {"name": "t", "partition_indexes": [7]}]})
    unknown, out_of_range = answer.topics[0].partitions[0], answer.topics[1].partitions[0]
    assert (unknown.error_code, unknown.error_message) == (E.UNKNOWN_TOPIC_OR_PARTITION,
                                                           "This server does not host this topic-partition.")
    assert (out_of_range.error_code, out_of_range.error_message) == (E.UNKNOWN_TOPIC_OR_PARTITION, None)
