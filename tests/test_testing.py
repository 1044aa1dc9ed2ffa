"""``kafkamock.testing``: seeding and reading a topic without a client (BrokerHandle.produce / records), waiting for
a group, and the same through the control API's HTTP and ``kafkamock ctl``. Real clients read what was seeded."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from kafkamock.records.partitioner import murmur2, partition_for_key
from kafkamock.testing import start_broker


def test_murmur2_is_kafkas():
    """Vectors of Kafka's UtilsTest.testMurmur2."""
    for text, expected in [("21", -973932308), ("foobar", -790332482), ("a-little-bit-long-string", -985981536),
                           ("a-little-bit-longer-string", -1486304829),
                           ("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971), ("abc", 479470107)]:
        assert murmur2(text.encode()) == expected
    assert partition_for_key(b"foobar", 10) == (-790332482 & 0x7FFFFFFF) % 10


def test_seeded_records_are_read_by_a_real_consumer_and_by_records():
    confluent_kafka = pytest.importorskip("confluent_kafka")
    with start_broker() as broker:
        broker.create_topic("orders", partitions=3)
        placed = broker.produce("orders", ["plain", {"key": "k1", "value": b"\x00\xff", "headers": {"h": "v"},
                                                     "timestamp": 1_700_000_000_000}])
        assert placed[0] == {"partition": 0, "offset": 0}
        assert placed[1] == {"partition": partition_for_key(b"k1", 3), "offset": 0 if placed[1]["partition"] else 1}
        seen = broker.records("orders")
        assert [(r["key"], r["value"], r["headers"]) for r in seen] == sorted(
            [(None, b"plain", []), (b"k1", b"\x00\xff", [("h", b"v")])], key=lambda r: (r[0] is not None,))
        consumer = confluent_kafka.Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "g",
                                             "auto.offset.reset": "earliest"})
        consumer.subscribe(["orders"])
        got = []
        while len(got) < 2:
            message = consumer.poll(10)
            assert message is not None and message.error() is None
            got.append((message.partition(), message.offset(), message.key(), message.value()))
        assert sorted(got) == sorted((p["partition"], p["offset"], k, v)
                                     for p, (k, v) in zip(placed, [(None, b"plain"), (b"k1", b"\x00\xff")], strict=True))
        group = broker.wait_for_group("g", state="Stable", members=1)
        assert group["type"] == "classic"
        consumer.commit(asynchronous=False)
        assert {(o["topic"], o["partition"]) for o in broker.control.group("g")["offsets"]} == {
            ("orders", p["partition"]) for p in placed}
        consumer.close()
        assert broker.wait_for_group("g", state="Empty", members=0)["state"] == "Empty"
        with pytest.raises(TimeoutError, match="group 'nope' not state Stable after 0.1 s: no such group"):
            broker.wait_for_group("nope", state="Stable", timeout=0.1)


def test_records_keep_to_the_high_watermark_and_skip_markers():
    with start_broker() as broker:
        broker.create_topic("t")
        broker.produce("t", [str(n) for n in range(5)])
        assert [r["offset"] for r in broker.records("t", from_offset=2, limit=2)] == [2, 3]
        with pytest.raises(ValueError, match="no topic 'missing'"):
            broker.produce("missing", ["x"])
        with pytest.raises(ValueError, match="a record has key, value, headers and timestamp; not vaule"):
            broker.produce("t", [{"vaule": "x"}])


def test_produce_and_records_on_a_named_partition():
    """``partition`` puts every record there, keyed or not, and reads only that partition; one the topic does not
    have is refused (404) before anything is appended."""
    from kafkamock.broker.control import ControlError

    with start_broker() as broker:
        broker.create_topic("p", partitions=3)
        placed = broker.produce("p", ["a", {"key": "k", "value": "b"}], partition=2)
        assert placed == [{"partition": 2, "offset": 0}, {"partition": 2, "offset": 1}]
        broker.produce("p", ["elsewhere"], partition=0)
        assert [(r["partition"], r["offset"], r["value"]) for r in broker.records("p", partition=2)] == [
            (2, 0, b"a"), (2, 1, b"b")]
        assert [r["value"] for r in broker.records("p")] == [b"elsewhere", b"a", b"b"]
        for call in (lambda: broker.produce("p", ["x"], partition=3), lambda: broker.records("p", partition=-1)):
            with pytest.raises(ControlError, match="no partition p-") as refused:
                call()
            assert refused.value.status == 404
        assert len(broker.records("p")) == 3


def test_the_same_over_http_and_kafkamock_ctl():
    with start_broker(control_port=0) as broker:
        url = broker.control_url

        def http(method: str, path: str, body: dict | None = None):
            data = json.dumps(body).encode() if body is not None else None
            request = urllib.request.Request(url + path, data=data, method=method,
                                             headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=10) as answer:
                return json.loads(answer.read())

        def ctl(*args: str):
            out = subprocess.run([sys.executable, "-m", "kafkamock", "ctl", "--control", url, *args],
                                 capture_output=True, text=True, timeout=60)
            assert out.returncode == 0, out.stderr
            return json.loads(out.stdout)

        assert http("POST", "/v1/topics", {"name": "web", "partitions": 2})["partitions"][1]["partition"] == 1
        assert http("POST", "/v1/topics/web/records", {"records": [{"value_base64": "AP8=", "key": "a"}],
                                                        "partition": 1}) == [{"partition": 1, "offset": 0}]
        assert ctl("create-topic", "cli", "--partitions", "1", "--config", "retention.ms=1000")["configs"] == {
            "retention.ms": 1000}
        assert ctl("produce", "cli", "one", "two", "--key", "k") == [{"partition": 0, "offset": 0},
                                                                   {"partition": 0, "offset": 1}]
        records = ctl("records", "cli", "--from", "1")
        assert [(r["offset"], r["key"], r["value"]) for r in records] == [(1, "k", "two")]
        assert http("GET", "/v1/topics/web/records")[0]["value_base64"] == "AP8="
        with pytest.raises(urllib.error.HTTPError) as refused:       # bad input: a 400 with the reason
            http("POST", "/v1/topics/web/records", {"records": [{"value_base64": "not base64!"}]})
        assert refused.value.code == 400
        assert json.loads(refused.value.read()) == {"error": "value_base64 is not base64"}
        assert ctl("cluster")["nodes"][0]["node_id"] == 1 and ctl("faults") == [] and ctl("groups") == []
        assert [t["name"] for t in ctl("topics")] == ["cli", "web"]
        bad = subprocess.run([sys.executable, "-m", "kafkamock", "ctl", "--control", url, "groups", "nope"],
                             capture_output=True, text=True, timeout=60)
        assert bad.returncode == 1 and "no group 'nope'" in bad.stderr


def test_python_m_kafkamock_and_serve_topics():
    out = subprocess.run([sys.executable, "-m", "kafkamock", "--version"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0 and out.stdout.startswith("python -m kafkamock, version ")
    process = subprocess.Popen([sys.executable, "-m", "kafkamock", "serve", "--port", "0", "--control-port", "0",
                                "--topic", "orders:3", "--topic", "audit"], stdout=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        url = line.split("control=")[1].split()[0]
        with urllib.request.urlopen(f"{url}/v1/topics", timeout=10) as answer:
            topics = {t["name"]: len(t["partitions"]) for t in json.loads(answer.read())}
        assert topics == {"orders": 3, "audit": 1}
    finally:
        process.terminate()
        process.wait(timeout=30)
