"""Transactions over raw frames (kafkamock's codec on a plain socket): every KIP-360 InitProducerId rule, the error
codes of bad transaction requests, markers, the LSO and the aborted-transaction index, as a client sees them.

Each test runs against a fresh kafkamock, or with ``KAFKAMOCK_EXTERNAL_BOOTSTRAP=127.0.0.1:PORT`` against a real
Kafka (every test here passed against the reference Kafka 3.8.0, started with
``transaction.state.log.replication.factor=1 offsets.topic.replication.factor=1``), so the expectations are Kafka's.
"""

from __future__ import annotations

import pytest
from client_support import RawClient, wait_until
from support.targets import TARGETS
from test_groups import cluster_for

from kafkamock.errors import ErrorCode as E
from kafkamock.records import decode_batches, decode_control, encode_batch


@pytest.fixture(params=TARGETS)
def cluster(request):
    yield from cluster_for(request)


class Txn:
    """A raw transactional client: the coordinator's connection and the partition leader's (one node here)."""

    def __init__(self, bootstrap: str, tid: str):
        self.tid = tid
        self.raw = RawClient(bootstrap, timeout=15)
        self.coordinator()

    def call(self, api: str, version: int, body: dict):
        return self.raw.request(api, version, body)[1]

    def coordinator(self) -> None:
        """FindCoordinator until the transaction coordinator is ready (a real Kafka creates its topic first)."""
        def ready() -> bool:
            found = self.call("FindCoordinator", 4, {"key_type": 1, "coordinator_keys": [self.tid]})
            return found.coordinators[0].error_code == E.NONE
        wait_until(ready, 30, f"a coordinator for {self.tid}")

    def init(self, pid: int = -1, epoch: int = -1, version: int = 4, tid: str | None = "") -> tuple[int, int, int]:
        body = {"transactional_id": self.tid if tid == "" else tid, "transaction_timeout_ms": 60_000}
        if version >= 3:
            body.update(producer_id=pid, producer_epoch=epoch)

        return self.retried("InitProducerId", version, body, lambda a: (a.error_code, a.producer_id,
                                                                         a.producer_epoch))

    def retried(self, api: str, version: int, body: dict, result):
        """The answer once it is not a retriable coordinator error: a real Kafka loads its coordinator after
        FindCoordinator already names it, and writes markers in the background (CONCURRENT_TRANSACTIONS)."""
        retriable = (E.CONCURRENT_TRANSACTIONS, E.NOT_COORDINATOR, E.COORDINATOR_LOAD_IN_PROGRESS)
        got: list = []

        def settled() -> bool:
            got[:] = [self.call(api, version, body)]
            codes = result(got[0])
            codes = codes.values() if isinstance(codes, dict) else [codes[0] if isinstance(codes, tuple) else codes]
            return not any(c in retriable for c in codes)
        wait_until(settled, 30, f"{api} without a retriable error")
        return result(got[0])

    def add(self, pid: int, epoch: int, partitions: list[tuple[str, int]], version: int = 3) -> dict:
        topics: dict[str, list[int]] = {}
        for t, p in partitions:
            topics.setdefault(t, []).append(p)
        body = {"v3_and_below_transactional_id": self.tid, "v3_and_below_producer_id": pid,
                "v3_and_below_producer_epoch": epoch,
                "v3_and_below_topics": [{"name": t, "partitions": ps} for t, ps in topics.items()]}
        return self.retried("AddPartitionsToTxn", version, body, lambda answer: {
            (t.name, r.partition_index): r.partition_error_code for t in answer.results_by_topic_v3_and_below
            for r in t.results_by_partition})

    def end(self, pid: int, epoch: int, commit: bool = True, version: int = 3) -> int:
        body = {"transactional_id": self.tid, "producer_id": pid, "producer_epoch": epoch, "committed": commit}
        return self.retried("EndTxn", version, body, lambda answer: answer.error_code)

    def produce(self, topic: str, pid: int, epoch: int, seq: int, values: list[bytes], transactional: bool = True,
                ) -> tuple[int, int]:
        batch = encode_batch([{"value": v, "timestamp": 1} for v in values], producer_id=pid, producer_epoch=epoch,
                             base_sequence=seq, transactional=transactional)
        answer = self.call("Produce", 9, {"transactional_id": self.tid if transactional else None, "acks": -1,
                                          "timeout_ms": 10_000, "topic_data": [
                                              {"name": topic, "partition_data": [{"index": 0, "records": batch}]}]})
        result = answer.responses[0].partition_responses[0]
        return result.error_code, result.base_offset

    def settled_fetch(self, topic: str, end: int, offset: int = 0):
        """A read_committed fetch once the markers are in (a real Kafka writes them after answering EndTxn)."""
        wait_until(lambda: self.fetch(topic, offset).last_stable_offset >= end, 30, f"{topic}'s LSO to reach {end}")
        return self.fetch(topic, offset)

    def fetch(self, topic: str, offset: int = 0, committed: bool = True):
        answer = self.call("Fetch", 12, {
            "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20,
            "isolation_level": int(committed), "session_id": 0, "session_epoch": -1, "rack_id": "",
            "forgotten_topics_data": [], "topics": [{"topic": topic, "partitions": [{
                "partition": 0, "fetch_offset": offset, "partition_max_bytes": 1 << 20, "current_leader_epoch": -1,
                "log_start_offset": -1, "last_fetched_epoch": -1}]}]})
        return answer.responses[0].partitions[0]


def contents(data) -> list[tuple[str, bytes | None]]:
    """("data", value) and ("COMMIT"/"ABORT", None) in log order."""
    return _decoded(data)[0]


def _decoded(data) -> tuple[list[tuple[str, bytes | None]], int]:
    out, next_offset = [], -1
    raw = b"".join(bytes(r) for r in data.records) if isinstance(data.records, list) else bytes(data.records or b"")
    for batch in decode_batches(raw):
        for rec in batch.records:
            out.append((decode_control(rec.key, rec.value)[0], None) if batch.is_control else ("data", rec.value))
        next_offset = batch.next_offset
    return out, next_offset


def read_to(txn: Txn, topic: str, end: int, offset: int = 0) -> tuple[list, list[tuple[int, int]]]:
    """Everything a read_committed reader gets from ``offset`` to ``end`` over as many fetches as the broker needs
    (a real Kafka may answer one batch at a time), and the aborted transactions it was told of."""
    txn.settled_fetch(topic, end, offset)
    records, aborted = [], set()
    while offset < end:
        data = txn.fetch(topic, offset)
        got, next_offset = _decoded(data)
        assert next_offset > offset, f"no progress at offset {offset}"
        records += got
        aborted |= {(a.producer_id, a.first_offset) for a in data.aborted_transactions or []}
        offset = next_offset
    return records, sorted(aborted)


@pytest.fixture
def txn(cluster):
    client = Txn(cluster.bootstrap_servers, cluster.name("tx"))
    yield client
    client.raw.close()


def test_kip360_init_producer_id_rules(txn):
    code, pid, epoch = txn.init()                                        # first call: a new id, epoch 0
    assert (code, epoch) == (E.NONE, 0) and pid >= 0
    assert txn.init(pid, epoch) == (E.NONE, pid, 1)                      # the current epoch: bump
    assert txn.init(pid, epoch) == (E.NONE, pid, 1)                      # the last epoch: a retry, same answer
    assert txn.init(pid, 1) == (E.NONE, pid, 2)
    assert txn.init() == (E.NONE, pid, 3)                                # a new instance: bump, last epoch -1
    assert txn.init(pid, 2)[0] == E.PRODUCER_FENCED                      # the last epoch is gone now
    assert txn.init(pid, 0)[0] == E.PRODUCER_FENCED
    assert txn.init(pid + 100_000, 3)[0] == E.PRODUCER_FENCED            # another producer id
    assert txn.init(pid, 0, version=3)[0] == E.INVALID_PRODUCER_EPOCH    # before v4, PRODUCER_FENCED's old name
    assert txn.init(pid, -1)[0] == E.INVALID_REQUEST                     # an id without an epoch
    idempotent = txn.init(tid=None)
    assert idempotent[0] == E.NONE and idempotent[2] == 0
    bumped = txn.init(idempotent[1], idempotent[2], tid=None)            # an idempotent bump: a fresh id
    assert bumped[0] == E.NONE and bumped[1] != idempotent[1]


def test_bad_transaction_requests(cluster, txn):
    topic = cluster.name("t")
    cluster.create_topic(topic, 1)
    _, pid, epoch = txn.init()
    assert txn.end(pid, epoch) == E.INVALID_TXN_STATE                    # nothing open
    assert txn.end(pid, epoch + 5) == E.PRODUCER_FENCED
    assert txn.end(pid, epoch + 5, version=1) == E.INVALID_PRODUCER_EPOCH
    assert txn.end(pid + 100_000, epoch) == E.INVALID_PRODUCER_ID_MAPPING
    missing = cluster.name("missing")
    assert txn.add(pid, epoch, [(missing, 0), (topic, 0)]) == {
        (missing, 0): E.UNKNOWN_TOPIC_OR_PARTITION, (topic, 0): E.OPERATION_NOT_ATTEMPTED}
    assert txn.add(pid, epoch + 1, [(topic, 0)]) == {(topic, 0): E.PRODUCER_FENCED}
    assert txn.add(pid, epoch + 1, [(topic, 0)], version=1) == {(topic, 0): E.INVALID_PRODUCER_EPOCH}
    assert txn.produce(topic, pid, epoch, 0, [b"x"])[0] == E.INVALID_TXN_STATE   # not added: KIP-890 verification
    assert txn.add(pid, epoch, [(topic, 0)]) == {(topic, 0): E.NONE}
    assert txn.produce(topic, pid, epoch, 0, [b"x"]) == (E.NONE, 0)
    assert txn.produce(topic, pid, epoch, 1, [b"y"], transactional=False)[0] == E.INVALID_TXN_STATE
    assert txn.end(pid, epoch, commit=False) == E.NONE
    assert txn.end(pid, epoch, commit=False) == E.NONE                   # a retried abort
    assert txn.end(pid, epoch, commit=True) == E.INVALID_TXN_STATE


def test_markers_lso_and_aborted_index(cluster, txn):
    topic = cluster.name("t")
    cluster.create_topic(topic, 1)
    _, pid, epoch = txn.init()
    txn.add(pid, epoch, [(topic, 0)])
    txn.produce(topic, pid, epoch, 0, [b"a1", b"a2"])
    open_fetch = txn.fetch(topic)
    assert (open_fetch.high_watermark, open_fetch.last_stable_offset) == (2, 0)
    assert contents(open_fetch) == []
    assert txn.end(pid, epoch, commit=False) == E.NONE
    txn.add(pid, epoch, [(topic, 0)])
    txn.produce(topic, pid, epoch, 2, [b"c1"])
    assert txn.end(pid, epoch) == E.NONE
    done = txn.settled_fetch(topic, 5)
    assert (done.high_watermark, done.last_stable_offset) == (5, 5)
    assert read_to(txn, topic, 5) == (
        [("data", b"a1"), ("data", b"a2"), ("ABORT", None), ("data", b"c1"), ("COMMIT", None)], [(pid, 0)])
    assert txn.fetch(topic, committed=False).aborted_transactions is None
    # a new instance fences an open transaction: it is aborted with a bumped epoch
    txn.add(pid, epoch, [(topic, 0)])
    txn.produce(topic, pid, epoch, 3, [b"zombie"])
    code, _, new_epoch = txn.init()
    assert code == E.NONE and new_epoch == epoch + 2
    assert read_to(txn, topic, 7, offset=5) == ([("data", b"zombie"), ("ABORT", None)], [(pid, 5)])
    assert txn.fetch(topic).last_stable_offset == 7
    assert txn.produce(topic, pid, epoch, 4, [b"late"])[0] == E.INVALID_PRODUCER_EPOCH
    described = txn.call("DescribeTransactions", 0, {"transactional_ids": [txn.tid]}).transaction_states[0]
    assert (described.transaction_state, described.producer_epoch) == ("Empty", epoch + 2)
    producers = txn.call("DescribeProducers", 0, {"topics": [{"name": topic, "partition_indexes": [0]}]})
    active = producers.topics[0].partitions[0].active_producers
    assert [(a.producer_id, a.producer_epoch, a.current_txn_start_offset) for a in active] == [(pid, epoch + 1, -1)]
