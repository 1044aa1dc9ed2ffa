"""A ``kafkamock serve --data-dir`` process killed with SIGKILL in the middle of real clients' work, and started
again on the same directory: nothing acknowledged is lost, nothing is written twice, and a torn or corrupt tail
is cut off with a log line."""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.request
from pathlib import Path

import pytest
import trio
from client_support import wait_until
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, ConfigResource
from support.readback import check_exactly_once, create_topic, read_all
from support.serve_process import ServeProcess

from kafkamock import records
from kafkamock.client.connection import KafkaConnection

pytestmark = pytest.mark.slow
TOPIC = "storm"
PARTITIONS = 3


def test_librdkafka_idempotent_storm_survives_sigkill_and_restart(tmp_path):
    sent = 6000
    with ServeProcess(["--data-dir", str(tmp_path)]) as broker:
        create_topic(broker.bootstrap)
        acked: dict[int, tuple[int, int]] = {}
        errors: list[str] = []
        lock = threading.Lock()

        def delivered(err, msg):
            with lock:
                if err is not None:
                    errors.append(str(err))
                else:
                    acked[int(msg.value().split(b":")[0])] = (msg.partition(), msg.offset())

        producer = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True, "acks": "all",
                             "linger.ms": 2, "batch.num.messages": 50, "message.timeout.ms": 60000,
                             "retry.backoff.ms": 20, "reconnect.backoff.ms": 20, "reconnect.backoff.max.ms": 200,
                             "client.id": "storm"})
        stop = threading.Event()

        def storm():
            for i in range(sent):
                while True:
                    try:
                        producer.produce(TOPIC, value=b"%d:%s" % (i, b"x" * 40), partition=i % PARTITIONS,
                                         on_delivery=delivered)
                        break
                    except BufferError:
                        producer.poll(0.05)
                producer.poll(0)
                if i % 200 == 0:
                    time.sleep(0.005)   # pacing, so the storm is still blowing when the broker dies
            while not stop.is_set() and len(producer) > 0:
                producer.poll(0.1)
        thread = threading.Thread(target=storm)
        thread.start()
        try:
            wait_until(lambda: len(acked) >= sent // 3, timeout=60, what="a third of the storm acknowledged",
                       step=lambda: time.sleep(0.01))
            at_kill = len(acked)
            broker.kill()                                   # SIGKILL: no flush, no clean-shutdown marker
            broker.start()                                  # same port, same data directory
            thread.join(timeout=90)
            assert producer.flush(60) == 0
        finally:
            stop.set()
            thread.join(timeout=10)
        assert not errors, errors[:3]
        assert at_kill < sent and len(acked) == sent
        check_exactly_once(read_all(broker.bootstrap), acked, sent)
        assert "recovery" not in broker.log() or "dropped" in broker.log()


def test_a_retried_batch_after_a_restart_gets_its_first_offset(tmp_path):
    """The producer's state is rebuilt from the stored batch headers: the same batch sent again after a SIGKILL is
    recognised as a duplicate (its original offset comes back) and not written again."""
    with ServeProcess(["--data-dir", str(tmp_path)]) as broker:
        create_topic(broker.bootstrap, "dedup", 1)
        host, _, port = broker.bootstrap.rpartition(":")

        def send(batch: bytes) -> tuple[int, int]:
            async def main():
                async with trio.open_nursery() as nursery:
                    conn = await KafkaConnection.connect(nursery, host, int(port))
                    response = await conn.request("Produce", {"acks": -1, "timeout_ms": 5000, "topic_data": [
                        {"name": "dedup", "partition_data": [{"index": 0, "records": batch}]}]}, version=9)
                    nursery.cancel_scope.cancel()
                    result = response.responses[0].partition_responses[0]
                    return result.error_code, result.base_offset
            return trio.run(main)

        now = int(time.time() * 1000)
        first = records.encode_batch([{"value": b"%d:a" % i, "timestamp": now} for i in range(3)],
                                     producer_id=4242, producer_epoch=0, base_sequence=0)
        second = records.encode_batch([{"value": b"3:b", "timestamp": now}], producer_id=4242, producer_epoch=0,
                                      base_sequence=3)
        assert send(first) == (0, 0)
        assert send(second) == (0, 3)
        broker.kill()
        broker.start()
        assert send(first) == (0, 0)                        # a duplicate, across the restart
        assert send(second) == (0, 3)
        gap = records.encode_batch([{"value": b"9:c", "timestamp": now}], producer_id=4242, producer_epoch=0,
                                   base_sequence=9)
        assert send(gap)[0] == 45                           # OUT_OF_ORDER_SEQUENCE_NUMBER: the state is known
        assert [v for _, v in read_all(broker.bootstrap, "dedup", 1)[0]] == [b"0:a", b"1:a", b"2:a", b"3:b"]


def _segment(data_dir: Path, topic: str, partition: int) -> Path:
    (log,) = sorted((data_dir / f"{topic}-{partition}").glob("*.log"))[-1:]
    return log


def _produce_values(bootstrap: str, topic: str, values: list[bytes]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 0})
    for v in values:
        producer.produce(topic, value=v, partition=0)
        producer.flush(10)       # one batch each
    assert producer.flush(10) == 0


def test_a_torn_last_batch_is_cut_with_a_log_line_and_nothing_before_it_is_lost(tmp_path):
    with ServeProcess(["--data-dir", str(tmp_path)]) as broker:
        create_topic(broker.bootstrap, "torn", 1)
        _produce_values(broker.bootstrap, "torn", [b"%d:keep" % i for i in range(5)])
        broker.stop()                                        # clean: the framing is still checked at start
        segment = _segment(tmp_path, "torn", 0)
        intact = segment.stat().st_size
        whole = records.encode_batch([{"value": b"5:torn" * 20, "timestamp": 1}], base_offset=5)
        with open(segment, "ab") as fh:                      # a crash in the middle of writing a batch
            fh.write(whole[: len(whole) // 2])
        broker.start()
        line = re.search(r"WARNING .*recovery: (torn-0/\d{20}\.log): dropped (\d+) byte\(s\) from position (\d+): "
                         r"(.*)", broker.log())
        assert line, broker.log()
        assert (line.group(1), int(line.group(2)), int(line.group(3))) == \
            (f"torn-0/{segment.name}", len(whole) // 2, intact)
        assert "cut short" in line.group(4)
        assert segment.stat().st_size == intact
        assert [v for _, v in read_all(broker.bootstrap, "torn", 1)[0]] == [b"%d:keep" % i for i in range(5)]
        _produce_values(broker.bootstrap, "torn", [b"5:after"])
        assert read_all(broker.bootstrap, "torn", 1)[0][-1] == (5, b"5:after")


def test_a_corrupt_batch_after_a_crash_is_cut_by_its_crc(tmp_path):
    with ServeProcess(["--data-dir", str(tmp_path)]) as broker:
        create_topic(broker.bootstrap, "flip", 1)
        _produce_values(broker.bootstrap, "flip", [b"%d:v" % i for i in range(4)])
        broker.kill()                                        # unclean: every batch past the recovery point is checked
        segment = _segment(tmp_path, "flip", 0)
        data = bytearray(segment.read_bytes())
        views, _ = records.split_batches(bytes(data))
        data[views[2].end - 1] ^= 0xFF                       # the third batch's last byte (its value)
        segment.write_bytes(bytes(data))
        broker.start()
        assert re.search(r"recovery: flip-0/\d{20}\.log: dropped \d+ byte\(s\) from position "
                         rf"{views[2].start}: batch at offset 2 is corrupt: .*CRC32C mismatch", broker.log())
        assert [v for _, v in read_all(broker.bootstrap, "flip", 1)[0]] == [b"0:v", b"1:v"]


def test_topics_configs_and_producer_ids_survive_a_kill(tmp_path):
    with ServeProcess(["--data-dir", str(tmp_path)], control=True) as broker:
        create_topic(broker.bootstrap, "kept", 2, {"retention.ms": "3600000", "cleanup.policy": "compact,delete"})
        producer = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True})
        producer.produce("kept", key=b"k", value=b"0:before", partition=0)
        assert producer.flush(10) == 0
        broker.kill()
        broker.start()
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        (configs,) = admin.describe_configs([ConfigResource("topic", "kept")]).values()
        values = {k: v.value for k, v in configs.result(timeout=10).items()}
        assert values["retention.ms"] == "3600000" and values["cleanup.policy"] == "compact,delete"
        assert len(admin.list_topics(timeout=10).topics["kept"].partitions) == 2
        again = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True})
        again.produce("kept", key=b"k", value=b"1:after", partition=0)
        assert again.flush(10) == 0
        with urllib.request.urlopen(f"{broker.control_url}/v1/partitions/kept/0/batches") as response:
            batches = json.loads(response.read())
        ids = [b["producer_id"] for b in batches]
        assert len(ids) == 2 and ids[0] != ids[1]            # the new producer got an id never handed out before
