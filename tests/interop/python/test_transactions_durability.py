"""Transactions end to end against a ``kafkamock serve`` process restarted on ``--data-dir``: an open transaction is
still open after the restart (the LSO holds read_committed readers before it, committed data stays), the same
producer commits it afterwards; a transaction left open past its timeout is aborted after the restart; and a
killed (SIGKILL) broker comes back with the same answers.
"""

from __future__ import annotations

import pytest
from client_support import RawClient, wait_until
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from support.serve_process import ServeProcess

pytestmark = pytest.mark.slow


def create_topic(bootstrap: str, name: str, partitions: int = 1) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(timeout=30)


def txn_producer(bootstrap: str, tid: str, timeout_ms: int = 60_000) -> Producer:
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid, "linger.ms": 0,
                         "transaction.timeout.ms": timeout_ms})
    producer.init_transactions(30)
    return producer


def read_all(bootstrap: str, topic: str, isolation: str) -> list[bytes]:
    """Every record a reader with ``isolation`` gets from partition 0, up to what the broker says is readable."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{isolation}",
                         "enable.auto.commit": False, "isolation.level": isolation,
                         "enable.partition.eof": True, "auto.offset.reset": "earliest"})
    consumer.assign([TopicPartition(topic, 0, 0)])
    values: list[bytes] = []
    done = []

    def step():
        message = consumer.poll(0.2)
        if message is None:
            return
        if message.error() is None:
            values.append(message.value())
        elif message.error().code() == -191:        # _PARTITION_EOF: the end a reader of this isolation may see
            done.append(True)
    try:
        wait_until(lambda: done, 30, f"the end of {topic} for a {isolation} reader", step=step)
    finally:
        consumer.close()
    return values


def stable_offset(bootstrap: str, topic: str) -> tuple[int, int]:
    """(high watermark, last stable offset) of partition 0, from a raw read_committed Fetch."""
    with RawClient(bootstrap, timeout=10) as raw:
        _, answer = raw.request("Fetch", 12, {
            "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1024, "isolation_level": 1,
            "session_id": 0, "session_epoch": -1, "rack_id": "", "forgotten_topics_data": [],
            "topics": [{"topic": topic, "partitions": [{"partition": 0, "fetch_offset": 0,
                                                        "partition_max_bytes": 1024, "current_leader_epoch": -1,
                                                        "log_start_offset": -1, "last_fetched_epoch": -1}]}]})
    p = answer.responses[0].partitions[0]
    return p.high_watermark, p.last_stable_offset


def describe(bootstrap: str, tid: str):
    with RawClient(bootstrap, timeout=10) as raw:
        _, found = raw.request("FindCoordinator", 4, {"key_type": 1, "coordinator_keys": [tid]})
        assert found.coordinators[0].error_code == 0
        _, answer = raw.request("DescribeTransactions", 0, {"transactional_ids": [tid]})
    return answer.transaction_states[0]


@pytest.mark.parametrize("stop", ["clean", "kill"])
def test_an_open_transaction_survives_a_restart_and_commits_after_it(tmp_path, stop):
    with ServeProcess(["--data-dir", str(tmp_path)]) as broker:
        bootstrap = broker.bootstrap
        create_topic(bootstrap, "out")
        producer = txn_producer(bootstrap, "restart-tx")
        producer.begin_transaction()
        for n in range(3):
            producer.produce("out", value=f"committed-{n}".encode(), partition=0)
        producer.commit_transaction(30)
        producer.begin_transaction()
        for n in range(2):
            producer.produce("out", value=f"open-{n}".encode(), partition=0)
        assert producer.flush(30) == 0
        before = describe(bootstrap, "restart-tx")
        assert before.transaction_state == "Ongoing"
        assert stable_offset(bootstrap, "out") == (6, 4)        # 3 records + COMMIT marker, then the open ones

        broker.stop() if stop == "clean" else broker.kill()
        broker.start()

        after = describe(bootstrap, "restart-tx")
        assert (after.transaction_state, after.producer_id, after.producer_epoch) == (
            "Ongoing", before.producer_id, before.producer_epoch)
        assert [(t.topic, list(t.partitions)) for t in after.topics] == [("out", [0])]
        assert stable_offset(bootstrap, "out") == (6, 4)
        assert read_all(bootstrap, "out", "read_committed") == [b"committed-0", b"committed-1", b"committed-2"]
        producer.commit_transaction(30)                 # the same producer, reconnected, finishes it
        assert describe(bootstrap, "restart-tx").transaction_state == "CompleteCommit"
        assert read_all(bootstrap, "out", "read_committed") == [
            b"committed-0", b"committed-1", b"committed-2", b"open-0", b"open-1"]
        producer.flush(5)


def test_a_transaction_open_past_its_timeout_is_aborted_after_the_restart(tmp_path):
    config = ["--data-dir", str(tmp_path), "--config",
              "transaction.abort.timed.out.transaction.cleanup.interval.ms=200"]
    with ServeProcess(config) as broker:
        bootstrap = broker.bootstrap
        create_topic(bootstrap, "out")
        producer = txn_producer(bootstrap, "timeout-tx", timeout_ms=3_000)
        producer.begin_transaction()
        producer.produce("out", value=b"never", partition=0)
        assert producer.flush(30) == 0
        broker.kill()
        broker.start()
        wait_until(lambda: describe(bootstrap, "timeout-tx").transaction_state == "CompleteAbort", 30,
                   "the broker to abort the timed-out transaction")
        high, stable = stable_offset(bootstrap, "out")
        assert high == stable == 2                       # the record and the ABORT marker
        assert read_all(bootstrap, "out", "read_committed") == []
        assert read_all(bootstrap, "out", "read_uncommitted") == [b"never"]
