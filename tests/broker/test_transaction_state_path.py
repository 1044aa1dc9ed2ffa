"""The transaction coordinator's one state path, on a ManualClock with no sockets: every change of a transactional
id is a ``__transaction_state`` record, appended and then replayed by the function loading uses, so a fresh
coordinator loading the log holds exactly what the running one served, at every append and at the end, and an
operation whose record is not appended changes nothing."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from support.broker_calls import call

from kafkamock.broker import Cluster
from kafkamock.broker.cluster import TRANSACTION_STATE_TOPIC, Partition
from kafkamock.broker.errors import ErrorCode as E
from kafkamock.broker.errors import KafkaError
from kafkamock.broker.transactions import TransactionCoordinator, TxnMetadata, TxnState
from kafkamock.broker.transactions.records import TxnRecord, from_log, log_record
from kafkamock.broker.transactions.state import Event
from kafkamock.records import decode_batches, encode_batch

EXPIRATION_MS = 100_000
CONFIG = {"transaction.state.log.num.partitions": 3, "offsets.topic.num.partitions": 3,
          "transactional.id.expiration.ms": EXPIRATION_MS,
          "transaction.remove.expired.transaction.cleanup.interval.ms": 10_000,
          "transaction.abort.timed.out.transaction.cleanup.interval.ms": 1_000}


@pytest.fixture
def broker(clock):
    b = Cluster(CONFIG, clock=clock)
    b.metadata.create_topic("t", 2, 1)
    return b


def fresh(broker: Cluster) -> TransactionCoordinator:
    """A second coordinator over the same broker services, as a restart builds one."""
    def no_producer_id() -> int:
        raise AssertionError("loading the log must not hand out producer ids")

    return TransactionCoordinator(broker, next_producer_id=no_producer_id,
                                  transaction_version=lambda: 2, offsets_marker=lambda *_: None)


def snapshot(txns: dict[str, TxnMetadata]) -> dict[str, TxnMetadata]:
    return {tid: meta.copy() for tid, meta in txns.items()}


def loaded(broker: Cluster) -> dict[str, TxnMetadata]:
    coordinator = fresh(broker)
    coordinator.load()
    return coordinator.txns


def log_ends(broker: Cluster) -> dict[tuple[str, int], int]:
    return {(p.topic, p.index): p.log.log_end_offset for p in broker.metadata.partitions()}


@pytest.fixture
def watched(broker: Cluster, monkeypatch) -> Iterator[list[TxnRecord]]:
    """Every append to ``__transaction_state``, checked as it happens: the running coordinator's state must be what
    the log holds so far (no change ahead of its record, none left unapplied after one). Yields the records."""
    appended: list[TxnRecord] = []
    append = broker.append_internal

    def checking(partition: Partition, data: bytes | bytearray, *, notify: bool = True) -> tuple[int, int]:
        if partition.topic == TRANSACTION_STATE_TOPIC:
            assert broker.transactions.txns == loaded(broker), f"state apart from the log at record {len(appended)}"
            (batch,) = decode_batches(bytes(data))
            appended.extend(from_log(rec.key, rec.value) for rec in batch.records)
        return append(partition, data, notify=notify)

    monkeypatch.setattr(broker, "append_internal", checking)
    yield appended


def later(broker: Cluster) -> None:
    """A millisecond on between requests, so that a timestamp set too early shows."""
    broker.clock.advance(1)


def init(broker, tid, pid=-1, epoch=-1, timeout=60_000):
    later(broker)
    answer = call(broker, "InitProducerId", 5, {"transactional_id": tid, "transaction_timeout_ms": timeout,
                                                "producer_id": pid, "producer_epoch": epoch})
    return answer.error_code, answer.producer_id, answer.producer_epoch


def ready(broker, tid, **kwargs) -> tuple[int, int]:
    code, pid, epoch = init(broker, tid, **kwargs)
    assert code == E.NONE
    return pid, epoch


def add(broker, tid, pid, epoch, partitions=(0, 1)):
    later(broker)
    answer = call(broker, "AddPartitionsToTxn", 3, {
        "v3_and_below_transactional_id": tid, "v3_and_below_producer_id": pid, "v3_and_below_producer_epoch": epoch,
        "v3_and_below_topics": [{"name": "t", "partitions": list(partitions)}]})
    codes = {r.partition_error_code for t in answer.results_by_topic_v3_and_below for r in t.results_by_partition}
    assert codes == {E.NONE}


def produce(broker, tid, pid, epoch, seq=0, partition=0):
    later(broker)
    batch = encode_batch([{"value": b"v", "timestamp": broker.now_ms()}], producer_id=pid, producer_epoch=epoch,
                         base_sequence=seq, transactional=True)
    answer = call(broker, "Produce", 9, {"transactional_id": tid, "acks": -1, "timeout_ms": 1000, "topic_data": [
        {"name": "t", "partition_data": [{"index": partition, "records": batch}]}]})
    assert answer.responses[0].partition_responses[0].error_code == E.NONE


def end(broker, tid, pid, epoch, commit=True, version=5):
    later(broker)
    answer = call(broker, "EndTxn", version, {"transactional_id": tid, "producer_id": pid, "producer_epoch": epoch,
                                              "committed": commit})
    return answer.error_code, answer.producer_id, answer.producer_epoch


def wear_out(broker: Cluster, tid: str, pid: int, epoch: int) -> None:
    """An id whose epoch is one bump from exhausted, as an earlier life of the cluster left it in the log (no
    request gets there in a test's time): written to ``__transaction_state`` and loaded by the same replay."""
    coordinator = broker.transactions
    meta = TxnMetadata(tid, pid, 60_000, broker.now_ms(), epoch=epoch, state=TxnState.COMPLETE_COMMIT, start_ms=0)
    partition = coordinator._partition(tid)
    broker.append_internal(partition, encode_batch([log_record(TxnRecord(tid, meta), broker.now_ms())]))
    coordinator.load()


def test_a_fresh_coordinator_loading_the_log_holds_what_the_running_one_served(broker, clock, watched):
    tick = broker.tick
    # expiry: an id with nothing open goes with a tombstone once transactional.id.expiration.ms has passed
    pid, epoch = ready(broker, "old")
    add(broker, "old", pid, epoch)
    assert end(broker, "old", pid, epoch)[0] == E.NONE
    clock.advance(EXPIRATION_MS + 10_000)
    tick()
    assert "old" not in broker.transactions.txns and TxnRecord("old", None) in watched

    # init, add, commit by transaction version 1's EndTxn (v4), then a KIP-360 bump
    pid, epoch = ready(broker, "v1")
    add(broker, "v1", pid, epoch)
    produce(broker, "v1", pid, epoch)
    assert end(broker, "v1", pid, epoch, version=4) == (E.NONE, -1, -1)
    ready(broker, "v1", pid=pid, epoch=epoch)

    # transaction version 2: an abort with its bump, an empty abort (another bump), a retry of it
    pid, epoch = ready(broker, "v2")
    add(broker, "v2", pid, epoch)
    produce(broker, "v2", pid, epoch)
    assert end(broker, "v2", pid, epoch, commit=False) == (E.NONE, pid, epoch + 1)
    assert end(broker, "v2", pid, epoch + 1, commit=False) == (E.NONE, pid, epoch + 2)
    assert end(broker, "v2", pid, epoch + 1, commit=False) == (E.NONE, pid, epoch + 2)

    # fence: a new instance's InitProducerId aborts the open transaction, then gets its epoch
    pid, epoch = ready(broker, "fenced")
    add(broker, "fenced", pid, epoch)
    produce(broker, "fenced", pid, epoch)
    assert init(broker, "fenced")[0] == E.CONCURRENT_TRANSACTIONS
    assert broker.transactions.txns["fenced"].state is TxnState.COMPLETE_ABORT
    _, new_epoch = ready(broker, "fenced")
    assert new_epoch > epoch + 1

    # the timeout abort
    pid, epoch = ready(broker, "slow", timeout=5_000)
    add(broker, "slow", pid, epoch, partitions=(1,))
    produce(broker, "slow", pid, epoch, partition=1)
    clock.advance(6_000)
    tick()
    assert broker.transactions.txns["slow"].state is TxnState.COMPLETE_ABORT

    # an exhausted epoch: the commit's bump retires the producer id, which moves to a new one at epoch 0
    wear_out(broker, "worn", 7_777, 32_764)
    pid, epoch = ready(broker, "worn", pid=7_777, epoch=32_764)
    assert (pid, epoch) == (7_777, 32_765)
    add(broker, "worn", pid, epoch)
    produce(broker, "worn", pid, epoch)
    assert end(broker, "worn", pid, epoch) == (E.NONE, 7_777, 32_766)
    pid, epoch = 7_777, 32_766
    add(broker, "worn", pid, epoch)
    produce(broker, "worn", pid, epoch)
    code, new_pid, new_epoch = end(broker, "worn", pid, epoch)
    assert code == E.NONE and new_pid != pid and new_epoch == 0
    assert end(broker, "worn", pid, epoch) == (E.NONE, new_pid, 0)              # a retry across the overflow
    worn = broker.transactions.txns["worn"]
    assert (worn.producer_id, worn.prev_producer_id, worn.next_producer_id) == (new_pid, pid, -1)

    # each transaction ended with a Prepare* record and, once its markers were written, the Complete* one
    prepared = {TxnState.PREPARE_COMMIT: TxnState.COMPLETE_COMMIT, TxnState.PREPARE_ABORT: TxnState.COMPLETE_ABORT}
    ends = [(r.transactional_id, r.metadata.state) for r in watched
            if r.metadata is not None and r.metadata.state in prepared]
    assert [state for _, state in ends].count(TxnState.PREPARE_COMMIT) == 4
    assert [state for _, state in ends].count(TxnState.PREPARE_ABORT) == 4
    for n, record in enumerate(watched):
        if record.metadata is not None and record.metadata.state in prepared:
            following = watched[n + 1]
            assert following.transactional_id == record.transactional_id and following.metadata is not None
            assert following.metadata.state is prepared[record.metadata.state]

    served = broker.transactions.txns
    assert set(served) == {"v1", "v2", "fenced", "slow", "worn"}
    offsets = log_ends(broker)
    restarted = fresh(broker)
    restarted.replay()
    assert log_ends(broker) == offsets                     # nothing was left half done: the replay wrote nothing
    assert restarted.txns == served
    for tid, meta in served.items():
        assert restarted.txns[tid] is not meta


def test_an_operation_changes_nothing_until_its_record_is_appended(broker, clock, monkeypatch):
    pid, epoch = ready(broker, "tx", timeout=5_000)
    add(broker, "tx", pid, epoch, partitions=(0,))
    coordinator = broker.transactions
    before = snapshot(coordinator.txns)
    ends = log_ends(broker)
    append = broker.append_internal

    def failing(partition: Partition, data: bytes | bytearray, *, notify: bool = True) -> tuple[int, int]:
        if partition.topic == TRANSACTION_STATE_TOPIC:
            raise KafkaError(E.KAFKA_STORAGE_ERROR, "the log refuses the append")
        return append(partition, data, notify=notify)

    monkeypatch.setattr(broker, "append_internal", failing)
    operations: list[Callable[[], object]] = [
        lambda: coordinator.init_producer_id("new", 60_000, None),
        lambda: coordinator.init_producer_id("tx", 60_000, None),                   # fence and abort
        lambda: coordinator.add_partitions("tx", pid, epoch, [("t", 1)]),
        lambda: coordinator.end_txn("tx", pid, epoch, True, 5),
        lambda: coordinator.end_txn("tx", pid, epoch, False, 4),
        lambda: coordinator.abort_timed_out(clock.now_ms() + 10_000),
    ]
    for operation in operations:
        with pytest.raises(KafkaError):
            operation()
        assert coordinator.txns == before
        assert log_ends(broker) == ends                  # not a marker either: they follow the Prepare* record
    monkeypatch.setattr(broker, "append_internal", append)
    assert coordinator.end_txn("tx", pid, epoch, False, 4) == (E.NONE, -1, -1)
    completed = snapshot(coordinator.txns)
    clock.advance(EXPIRATION_MS)
    monkeypatch.setattr(broker, "append_internal", failing)
    with pytest.raises(KafkaError):
        coordinator.expire_transactional_ids(clock.now_ms())
    assert coordinator.txns == completed                 # no tombstone, no removal
    assert coordinator.txns["tx"].state is TxnState.COMPLETE_ABORT


def test_prepare_gives_a_detached_copy_and_complete_takes_it_over():
    """Kafka's prepareTransitionTo / completeTransitionTo: the live metadata changes only by ``complete``."""
    live = TxnMetadata("tx", 1000, 60_000, 5, epoch=3, state=TxnState.ONGOING, partitions={("t", 0): None},
                       start_ms=4)
    before = live.copy()
    transit = live.prepare(Event.COMMIT, last_update_ms=9, partitions={("t", 0): None, ("t", 1): None})
    assert live == before and transit.state is TxnState.PREPARE_COMMIT and transit.last_update_ms == 9
    with pytest.raises(TypeError, match="epok"):
        live.prepare(Event.ABORT, epok=4)
    live.complete(transit)
    assert live == transit and live.partitions is not transit.partitions
