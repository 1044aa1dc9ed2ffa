"""Apache Kafka's own Java clients (kafka-clients 4.3.1) against a kafkamock broker, over real sockets.

Each scenario is one JVM running tests/java/ClientScenarios.java (see support/java_clients.py). A fresh broker
per test (the ``kafka_broker`` fixture); the ``wire`` fixture records what the broker was asked and answered and
prints it when a test fails. About 20 JVM starts in all, so the whole module takes well under a minute.
"""

from __future__ import annotations

import time

import pytest

from kafkamock.broker.cluster import kafka_uuid_string
from kafkamock.records import decode_batches

pytestmark = pytest.mark.java

BASE_TS = 1_700_000_000_000
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


def stored_batches(kafka_broker, topic: str, partition: int = 0):
    """The batches the broker holds for a partition, decoded (read on the broker's thread)."""
    found = kafka_broker.control.stored_batches(topic, partition, limit=1 << 30)
    return [b for entry in found for b in decode_batches(entry["data"])]


def sample_groups() -> list[list[dict]]:
    """Three flush groups (1, 7 and 24 records): null keys and values, unicode, repeated and null headers, explicit
    and producer-assigned timestamps, and one 300 KB compressible value (several 64 KB lz4 blocks)."""
    groups: list[list[dict]] = []
    i = 0
    for size in (1, 7, 24):
        group = []
        for _ in range(size):
            group.append({
                "key": None if i % 11 == 5 else f"key-{i}",
                "value": None if i % 13 == 7 else f"value {i} ü€😀 " * (1 + i % 5),
                "headers": [] if i % 3 == 0 else [("trace", f"t-{i}"), ("nullable", None), ("trace", "dup")],
                "timestamp": None if i % 4 == 3 else BASE_TS + i * 10,
            })
            i += 1
        groups.append(group)
    groups[-1][-1]["value"] = "".join(f"line {n:06d} of a large, compressible value\n" for n in range(7000))
    return groups


def expected_view(records: list[dict], metadata: list[dict]) -> list[dict]:
    """What the consumer must return for what was produced (timestamps as acknowledged by the producer)."""
    return [{"offset": m["offset"], "key": r["key"], "value": r["value"],
             "headers": [list(h) for h in r["headers"]], "timestamp": m["timestamp"]}
            for r, m in zip(records, metadata, strict=True)]


def consumed_view(records: list[dict]) -> list[dict]:
    return [{k: r[k] for k in ("offset", "key", "value", "headers", "timestamp")} for r in records]


@pytest.mark.slow
@pytest.mark.parametrize("codec", CODECS)
def test_idempotent_produce_then_consume_reads_back_exactly(kafka_broker, wire, java_clients, codec):
    kafka_broker.create_topic("orders", 1)
    groups = sample_groups()
    records = [r for g in groups for r in g]
    before = int(time.time() * 1000)
    produced = java_clients.produce(kafka_broker.bootstrap_servers, "orders", batches=groups,
                                    compression=None if codec == "none" else codec)
    after = int(time.time() * 1000)

    metadata = produced["metadata"]
    assert [m["offset"] for m in metadata] == list(range(len(records)))
    assert {m["partition"] for m in metadata} == {0}
    for r, m in zip(records, metadata, strict=True):
        if r["timestamp"] is None:
            assert before - 1000 <= m["timestamp"] <= after + 1000, m
        else:
            assert m["timestamp"] == r["timestamp"], m

    # What reached the broker: one idempotent batch per flush group, compressed with the codec asked for.
    batches = stored_batches(kafka_broker, "orders")
    assert [(b.base_offset, len(b.records)) for b in batches] == [(0, 1), (1, 7), (8, 24)]
    assert {b.compression for b in batches} == {codec}
    assert all(b.producer_id >= 0 and b.producer_epoch == 0 for b in batches)
    assert [b.base_sequence for b in batches] == [0, 1, 8]
    assert "InitProducerId" in {api for api, _ in wire.apis()}
    assert all(e["request"].acks == -1 for e in wire.find("Produce"))

    consumed = java_clients.consume(kafka_broker.bootstrap_servers, "orders", count=len(records))
    assert not consumed["timed_out"], f"got {len(consumed['records'])} of {len(records)} records"
    assert consumed_view(consumed["records"]) == expected_view(records, metadata)
    assert {r["timestamp_type"] for r in consumed["records"]} == {"CreateTime"}
    assert {r["leader_epoch"] for r in consumed["records"]} == {0}
    assert consumed["positions"] == {"0": len(records)}


@pytest.mark.slow
def test_seek_to_a_mid_batch_offset_skips_the_head_of_the_batch(kafka_broker, wire, java_clients):
    kafka_broker.create_topic("events", 1)
    groups = [[{"key": f"k{i}", "value": f"v{i}", "timestamp": BASE_TS + i} for i in range(g * 6, g * 6 + 6)]
              for g in range(2)]
    produced = java_clients.produce(kafka_broker.bootstrap_servers, "events", batches=groups, compression="lz4")
    assert produced["offsets"] == list(range(12))
    assert [(b.base_offset, len(b.records)) for b in stored_batches(kafka_broker, "events")] == [(0, 6), (6, 6)]

    consumed = java_clients.consume(kafka_broker.bootstrap_servers, "events", seek=8, count=4)
    assert not consumed["timed_out"], consumed
    assert [(r["offset"], r["key"], r["value"]) for r in consumed["records"]] == [
        (o, f"k{o}", f"v{o}") for o in range(8, 12)]
    assert consumed["positions"] == {"0": 12}
    # The broker answered the fetch at 8 with the whole batch from 6: the client dropped 6 and 7 itself.
    fetches = [e for e in wire.find("Fetch") if e["response"] is not None]
    assert any(p.fetch_offset == 8 for e in fetches for t in e["request"].topics for p in t.partitions)


def test_log_append_time_topic(kafka_broker, java_clients):
    kafka_broker.create_topic("stamped", 1, {"message.timestamp.type": "LogAppendTime"})
    before = int(time.time() * 1000)
    produced = java_clients.produce(kafka_broker.bootstrap_servers, "stamped",
                                    [{"key": "a", "value": "1", "timestamp": BASE_TS},
                                     {"key": "b", "value": "2", "timestamp": BASE_TS + 1}])
    after = int(time.time() * 1000)
    stamps = {m["timestamp"] for m in produced["metadata"]}
    assert len(stamps) == 1 and before <= stamps.pop() <= after, produced  # the broker's clock, not the records'

    consumed = java_clients.consume(kafka_broker.bootstrap_servers, "stamped", count=2)
    assert [(r["offset"], r["timestamp"], r["timestamp_type"]) for r in consumed["records"]] == [
        (m["offset"], m["timestamp"], "LogAppendTime") for m in produced["metadata"]]


# -- Admin: one JVM runs the metadata operations against a broker shared by the tests below ----------------------

ADMIN_OPS = [
    ("cluster", {"op": "describeCluster"}),
    ("create", {"op": "createTopics", "topics": [
        {"name": "ledger", "partitions": 2, "replication_factor": 1,
         "configs": {"retention.ms": "3600000", "cleanup.policy": "delete"}}]}),
    ("create_again", {"op": "createTopics", "topics": [{"name": "ledger", "partitions": 1}]}),
    ("create_dry_run", {"op": "createTopics", "validate_only": True, "topics": [{"name": "dry-run", "partitions": 3}]}),
    ("describe", {"op": "describeTopics", "names": ["ledger", "no-such-topic"]}),
    ("configs", {"op": "describeConfigs", "resources": [{"type": "topic", "name": "ledger"},
                                                        {"type": "broker", "name": "1"}]}),
    ("list", {"op": "listTopics"}),
]


class AdminRun:
    """The broker, its wire log and the result of each ADMIN_OPS entry by label."""

    def __init__(self, handle, wire, results: list[dict]):
        self.handle, self.cluster, self.wire = handle, handle.cluster, wire
        self.results = {label: entry for (label, _), entry in zip(ADMIN_OPS, results, strict=True)}

    def __getitem__(self, label: str) -> dict:
        entry = self.results[label]
        assert "error" not in entry, f"Admin {entry['op']} failed: {entry['error']}"
        return entry["result"]


@pytest.fixture(scope="module")
def admin_run(java_clients):
    from support.java_clients import WireTap

    from kafkamock.testing import start_broker

    with start_broker() as handle:
        wire = WireTap(handle.cluster)
        results = java_clients.admin(handle.bootstrap_servers, [op for _, op in ADMIN_OPS], check=False)
        yield AdminRun(handle, wire, results)


def test_admin_describe_cluster(admin_run):
    cluster = admin_run["cluster"]
    host, port = admin_run.handle.bootstrap_servers.rsplit(":", 1)
    assert cluster["cluster_id"] == admin_run.cluster.metadata.cluster_id
    assert cluster["nodes"] == [{"id": admin_run.cluster.node_id, "host": host, "port": int(port), "rack": None}]
    assert cluster["controller"] in ({}, cluster["nodes"][0])


def test_admin_create_topics(admin_run):
    topic = admin_run.handle.call(lambda: admin_run.cluster.metadata.topic("ledger"))
    created = admin_run["create"]["ledger"]
    assert "error" not in created, created
    assert created["topic_id"] == kafka_uuid_string(topic.topic_id)
    assert (created["partitions"], created["replication_factor"]) == (2, 1)
    assert created["configs"]["retention.ms"] == "3600000"
    assert created["configs"]["cleanup.policy"] == "delete"
    assert len(topic.partitions) == 2
    assert admin_run["create_again"]["ledger"]["error"]["class"] == \
        "org.apache.kafka.common.errors.TopicExistsException"
    assert "error" not in admin_run["create_dry_run"]["dry-run"], admin_run["create_dry_run"]
    assert admin_run["create_dry_run"]["dry-run"]["partitions"] == 3
    assert "dry-run" not in admin_run.handle.call(lambda: list(admin_run.cluster.metadata.topics))


def test_admin_list_topics(admin_run):
    assert admin_run["list"]["names"] == ["ledger"]


def _ledger_description(admin_run) -> dict:
    node = admin_run.cluster.node_id
    topic = admin_run.handle.call(lambda: admin_run.cluster.metadata.topic("ledger"))
    return {"name": "ledger", "topic_id": kafka_uuid_string(topic.topic_id), "internal": False,
            "partitions": [{"partition": p, "leader": node, "replicas": [node], "isr": [node]} for p in (0, 1)]}


def test_admin_describe_topics_by_name(admin_run):
    by_name = admin_run["describe"]["by_name"]
    assert by_name["ledger"] == _ledger_description(admin_run)
    assert by_name["no-such-topic"]["error"]["class"] == \
        "org.apache.kafka.common.errors.UnknownTopicOrPartitionException"


def test_admin_describe_topics_by_id(admin_run):
    expected = _ledger_description(admin_run)
    assert admin_run["describe"]["by_id"] == {expected["topic_id"]: expected}


def test_admin_describe_configs_of_a_topic(admin_run):
    configs = admin_run["configs"]["topic:ledger"]
    assert "error" not in configs, configs
    assert configs["retention.ms"]["value"] == "3600000"
    assert configs["retention.ms"]["source"] == "DYNAMIC_TOPIC_CONFIG"
    assert not configs["retention.ms"]["default"]
    assert configs["cleanup.policy"]["value"] == "delete"
    assert configs["max.message.bytes"]["value"] == str(admin_run.cluster.config["message.max.bytes"])
    assert configs["max.message.bytes"]["source"] in ("DEFAULT_CONFIG", "STATIC_BROKER_CONFIG")
    assert configs["retention.ms"]["type"] == "LONG"


def test_admin_describe_configs_of_the_broker(admin_run):
    configs = admin_run["configs"][f"broker:{admin_run.cluster.node_id}"]
    assert "error" not in configs, configs
    for name in ("num.partitions", "message.max.bytes", "log.retention.hours"):
        assert configs[name]["value"] == str(admin_run.cluster.config[name]), configs[name]
    # log.retention.ms has no default in Kafka (the retention comes from log.retention.hours): null, DEFAULT_CONFIG
    assert configs["log.retention.ms"]["value"] is None, configs["log.retention.ms"]
    assert configs["log.retention.ms"]["source"] == "DEFAULT_CONFIG"


# -- Admin offsets: listOffsets, deleteRecords, then consumers from the new log start -------------------------------

@pytest.mark.slow
def test_admin_list_offsets_delete_records_then_consume_from_the_new_start(kafka_broker, wire, java_clients):
    bootstrap = kafka_broker.bootstrap_servers
    kafka_broker.create_topic("ledger", 2)
    # Ten records in two batches [0..4] [5..9]; offset 6 holds the largest timestamp.
    stamps = [BASE_TS + i * 1000 for i in range(10)]
    stamps[6] = BASE_TS + 100_000
    records = [{"key": f"k{i}", "value": f"v{i}", "timestamp": ts, "partition": 0} for i, ts in enumerate(stamps)]
    produced = java_clients.produce(bootstrap, "ledger", batches=[records[:5], records[5:]], compression="zstd")
    assert produced["offsets"] == list(range(10))

    ops = java_clients.admin(bootstrap, [
        {"op": "listOffsets", "topic": "ledger", "partitions": [0, 1],
         "specs": ["earliest", "latest", "max_timestamp", BASE_TS + 3500]},
        {"op": "deleteRecords", "topic": "ledger", "offsets": {"0": 3, "1": 5}},
        {"op": "listOffsets", "topic": "ledger", "partitions": [0], "specs": ["earliest", "latest"]},
    ], check=False)
    failed = {e["op"]: e["error"] for e in ops if "error" in e}
    assert not failed, failed
    offsets, deleted, after = (e["result"] for e in ops)

    def offset(result, spec, partition="0"):
        entry = result[str(spec)][partition]
        assert "error" not in entry, entry
        return entry["offset"]

    assert offset(offsets, "earliest") == 0 and offset(offsets, "latest") == 10
    assert offset(offsets, "earliest", "1") == 0 and offset(offsets, "latest", "1") == 0
    assert offsets["max_timestamp"]["0"] == {"offset": 6, "timestamp": BASE_TS + 100_000, "leader_epoch": 0}
    assert offsets[str(BASE_TS + 3500)]["0"] == {"offset": 4, "timestamp": BASE_TS + 4000, "leader_epoch": 0}
    assert deleted["0"] == {"low_watermark": 3}
    # Past the high watermark (0 on the empty partition 1): Kafka answers OFFSET_OUT_OF_RANGE.
    assert deleted["1"]["error"]["class"] == "org.apache.kafka.common.errors.OffsetOutOfRangeException"
    assert offset(after, "earliest") == 3 and offset(after, "latest") == 10

    # From the new log start (the middle of the first batch), and from an offset that is now below it
    # (OFFSET_OUT_OF_RANGE, then auto.offset.reset=earliest).
    from_start = java_clients.consume(bootstrap, "ledger", count=7)
    assert [(r["offset"], r["key"], r["timestamp"]) for r in from_start["records"]] == [
        (o, f"k{o}", stamps[o]) for o in range(3, 10)]
    reset = java_clients.consume(bootstrap, "ledger", count=7, seek=1, config={"auto.offset.reset": "earliest"})
    assert [r["offset"] for r in reset["records"]] == list(range(3, 10))
