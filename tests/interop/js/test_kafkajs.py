"""kafkajs 2.2.4, the Node.js client, against a kafkamock broker over real sockets.

Each call is one ``node`` process running tests/js/scenarios.js (see support/js_clients.py): admin, produce and
consume, a consumer group of two members, transactions and the last stable offset, TLS and SASL, and a cluster of
three nodes. A fresh broker per test (the ``kafka_broker`` fixture, so the ``kafkamock`` marker applies).
"""

from __future__ import annotations

import pytest

from kafkamock.records import decode_batches
from kafkamock.server.tls import ThrowawayCA
from kafkamock.testing import start_broker

pytestmark = pytest.mark.js

# Groups form at once (Kafka waits 3 s for more members of a new group).
FAST_GROUPS = {"group.initial.rebalance.delay.ms": 0}
PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
              'password="admin-secret" user_alice="alice-secret";')
DEFAULT, STATIC, TOPIC_CONFIG = 5, 4, 1     # DescribeConfigs config sources


def stored_batches(handle, topic: str, partition: int = 0):
    found = handle.control.stored_batches(topic, partition, limit=1 << 30)
    return [b for entry in found for b in decode_batches(entry["data"])]


def tap_produce(handle) -> list[tuple[int, list[tuple[str, int]]]]:
    """``(node id, [(topic, partition)...])`` of every Produce request the cluster handles, in order."""
    seen: list[tuple[int, list[tuple[str, int]]]] = []
    broker = handle.cluster
    original = broker.handle

    def traced(request):
        if request.api_key == 0:
            seen.append((request.node.node_id, sorted((t.name, p.index) for t in request.body.topic_data
                                                      for p in t.partition_data)))
        return original(request)
    broker.handle = traced
    return seen


# -- admin ---------------------------------------------------------------------------------------------------------

@pytest.mark.kafkamock(config={"auto.create.topics.enable": "false"})
def test_admin_topics_metadata_offsets_and_configs(kafka_broker, wire, kafkajs):
    bootstrap = kafka_broker.bootstrap_servers
    results = kafkajs.admin(bootstrap, [
        {"op": "createTopics", "topics": [
            {"topic": "ledger", "numPartitions": 3, "replicationFactor": 1,
             "configEntries": [{"name": "retention.ms", "value": "3600000"},
                               {"name": "cleanup.policy", "value": "compact"}]},
            {"topic": "audit", "numPartitions": 1}]},
        {"op": "createTopics", "topics": [{"topic": "ledger", "numPartitions": 1}]},   # exists already: false
        {"op": "createTopics", "validateOnly": True, "topics": [{"topic": "dry-run", "numPartitions": 2}]},
        {"op": "listTopics"},
        {"op": "fetchTopicMetadata", "topics": ["ledger"]},
        {"op": "describeCluster"},
        {"op": "fetchTopicOffsets", "topic": "ledger"},
        {"op": "describeConfigs", "includeSynonyms": True, "resources": [
            {"type": "TOPIC", "name": "ledger", "configNames": ["retention.ms", "cleanup.policy", "segment.ms",
                                                                "retention.bytes"]},
            {"type": "BROKER", "name": str(kafka_broker.node_id),
             "configNames": ["node.id", "num.partitions", "log.retention.ms", "log.retention.hours"]}]},
        {"op": "deleteTopics", "topics": ["audit"]},
        {"op": "listTopics"},
    ])
    created, again, dry_run, listed, metadata, cluster, offsets, configs, _, after = results
    assert (created, again, dry_run) == (True, False, True)
    assert listed == ["audit", "ledger"] and after == ["ledger"]
    assert "dry-run" not in kafka_broker.cluster.metadata.topics
    (ledger,) = metadata
    assert [(p["partition"], p["leader"], p["replicas"], p["errorCode"]) for p in ledger["partitions"]] == [
        (0, 1, [1], 0), (1, 1, [1], 0), (2, 1, [1], 0)]
    port = int(bootstrap.rsplit(":", 1)[1])
    assert cluster["brokers"] == [{"nodeId": 1, "host": "127.0.0.1", "port": port}]
    assert cluster["controller"] == 1 and cluster["clusterId"] == kafka_broker.cluster.metadata.cluster_id
    assert offsets == [{"partition": p, "offset": 0, "high": 0, "low": 0} for p in range(3)]

    topic, node = configs
    assert topic["errorCode"] == 0 and node["errorCode"] == 0
    retention = topic["configs"]["retention.ms"]
    assert (retention["value"], retention["source"], retention["isDefault"]) == ("3600000", TOPIC_CONFIG, False)
    assert retention["synonyms"] == [{"name": "retention.ms", "value": "3600000", "source": TOPIC_CONFIG}]
    assert topic["configs"]["cleanup.policy"]["value"] == "compact"
    # No default for log.roll.ms in Kafka: segment.ms takes log.roll.hours' 168 h and lists no synonym
    segment = topic["configs"]["segment.ms"]
    assert (segment["value"], segment["source"], segment["synonyms"]) == ("604800000", DEFAULT, [])
    assert topic["configs"]["retention.bytes"]["synonyms"] == [
        {"name": "log.retention.bytes", "value": "-1", "source": DEFAULT}]
    broker = node["configs"]
    assert (broker["node.id"]["value"], broker["node.id"]["readOnly"]) == ("1", True)
    assert broker["num.partitions"]["value"] == "1"
    assert (broker["log.retention.ms"]["value"], broker["log.retention.ms"]["synonyms"]) == (None, [])
    assert (broker["log.retention.hours"]["value"], broker["log.retention.hours"]["readOnly"]) == ("168", True)
    assert ("DescribeConfigs", 2) in wire.apis()    # kafkajs' newest DescribeConfigs


# -- produce and consume -------------------------------------------------------------------------------------------

@pytest.mark.kafkamock(config=FAST_GROUPS)
def test_produce_gzip_and_plain_batches_with_keys_and_headers_then_consume(kafka_broker, kafkajs):
    bootstrap = kafka_broker.bootstrap_servers
    kafka_broker.create_topic("events", 2)
    zipped = [{"key": f"k{i}", "value": f"line {i} " * 40, "partition": 0,
               "headers": {"trace": f"t{i}", "tags": ["a", "b"]}} for i in range(5)]
    plain = [{"key": None, "value": "no key", "partition": 1, "headers": {"ü": "€"}},
             {"key": "tombstone", "value": None, "partition": 1}]
    gzip_sends = kafkajs.produce(bootstrap, "events", zipped, compression="gzip")
    plain_sends = kafkajs.produce(bootstrap, "events", plain)
    assert gzip_sends == [[{"topic": "events", "partition": 0, "errorCode": 0, "baseOffset": 0}]]
    assert plain_sends == [[{"topic": "events", "partition": 1, "errorCode": 0, "baseOffset": 0}]]
    (zipped_batch,) = stored_batches(kafka_broker, "events", 0)
    assert zipped_batch.compression == "gzip" and len(zipped_batch.records) == 5
    assert zipped_batch.producer_id >= 0             # kafkajs' idempotent producer
    assert [b.compression for b in stored_batches(kafka_broker, "events", 1)] == ["none"]

    got = kafkajs.consume(bootstrap, ["events"], group_id="readers", count=7)
    by_partition = sorted(got["records"], key=lambda r: (r["partition"], r["offset"]))
    assert [(r["partition"], r["offset"], r["key"], r["value"], r["headers"]) for r in by_partition] == [
        *[(0, i, f"k{i}", f"line {i} " * 40, [["trace", f"t{i}"], ["tags", "a"], ["tags", "b"]]) for i in range(5)],
        (1, 0, None, "no key", [["ü", "€"]]), (1, 1, "tombstone", None, [])]
    assert got["joins"][0]["assignment"] == {"events": [0, 1]}
    committed = kafkajs.admin(bootstrap, [{"op": "fetchOffsets", "groupId": "readers", "topics": ["events"]}])[0]
    assert committed == [{"topic": "events", "partitions": [{"partition": 0, "offset": 5},
                                                             {"partition": 1, "offset": 2}]}]


# -- consumer groups -----------------------------------------------------------------------------------------------

@pytest.mark.kafkamock(config=FAST_GROUPS)
def test_group_of_two_members_rebalances_commits_and_a_new_member_resumes(kafka_broker, wire, kafkajs):
    bootstrap = kafka_broker.bootstrap_servers
    kafka_broker.create_topic("work", 4)
    initial = [f"i{n}" for n in range(8)]
    kafkajs.produce(bootstrap, "work", [{"key": v, "value": v} for v in initial])
    shared, after = [f"s{n}" for n in range(12)], [f"a{n}" for n in range(6)]
    out = kafkajs.group(bootstrap, "work", "workers", initial=len(initial), produceWhileShared=shared,
                        produceAfter=after)
    a, b, c = (out["members"][m] for m in "ABC")
    assert out["aloneAssignment"] == [0, 1, 2, 3]
    split = out["sharedAssignment"]
    assert sorted(split["A"] + split["B"]) == [0, 1, 2, 3] and split["A"] and split["B"]
    assert len(a["joins"]) >= 2 and b["joins"]                       # A rejoined: a rebalance
    read_by_ab = [r["value"] for r in a["records"] + b["records"]]
    assert set(read_by_ab) == set(initial + shared)
    # after the rebalance, each shared record was read by the member owning its partition
    for member, name in ((a, "A"), (b, "B")):
        assert {r["partition"] for r in member["records"] if r["value"] in shared} <= set(split[name])
    # A and B committed everything they read; C, a new member, starts there: only what came after
    ends = kafkajs.admin(bootstrap, [{"op": "fetchTopicOffsets", "topic": "work"}])[0]
    assert sum(p["high"] for p in ends) == len(initial + shared + after)
    assert sorted(r["value"] for r in c["records"]) == sorted(after)
    committed_before_c = {p["partition"]: p["offset"] for p in out["committed"]}
    assert sum(committed_before_c.values()) == len(initial + shared)
    assert all(r["offset"] >= committed_before_c[r["partition"]] for r in c["records"])
    (group,) = out["groups"]
    assert (group["state"], group["protocolType"], group["members"]) == ("Empty", "consumer", [])
    apis = {api for api, _ in wire.apis()}
    assert {"JoinGroup", "SyncGroup", "Heartbeat", "OffsetCommit", "OffsetFetch", "LeaveGroup"} <= apis


# -- transactions --------------------------------------------------------------------------------------------------

@pytest.mark.kafkamock(config=FAST_GROUPS)
def test_transactions_commit_is_visible_abort_is_not_and_offsets_go_with_the_commit(kafka_broker, wire, kafkajs):
    bootstrap = kafka_broker.bootstrap_servers
    kafka_broker.create_topic("in", 1)
    kafka_broker.create_topic("out", 1)
    offsets = [{"topic": "in", "partitions": [{"partition": 0, "offset": 5}]}]
    steps = kafkajs.txn(bootstrap, "tx-1", [
        {"op": "begin"}, {"op": "send", "topic": "out", "messages": [{"value": "c1"}, {"value": "c2"}]},
        {"op": "sendOffsets", "consumerGroupId": "etl", "topics": offsets}, {"op": "commit"},
        {"op": "begin"}, {"op": "send", "topic": "out", "messages": [{"value": "aborted"}]},
        {"op": "sendOffsets", "consumerGroupId": "etl",
         "topics": [{"topic": "in", "partitions": [{"partition": 0, "offset": 9}]}]}, {"op": "abort"},
        {"op": "begin"}, {"op": "send", "topic": "out", "messages": [{"value": "c3"}]}, {"op": "commit"},
    ])
    assert all(s["ok"] for s in steps), steps
    # c1 c2 COMMIT aborted ABORT c3 COMMIT: offsets 0 1 (2) 3 (4) 5 (6)
    assert [s["result"][0]["baseOffset"] for s in steps if s["op"] == "send"] == [0, 3, 5]
    committed = kafkajs.consume(bootstrap, ["out"], group_id="rc", count=3)["records"]
    assert [(r["offset"], r["value"]) for r in committed] == [(0, "c1"), (1, "c2"), (5, "c3")]
    everything = kafkajs.consume(bootstrap, ["out"], group_id="ru", count=4, read_uncommitted=True)["records"]
    assert [(r["offset"], r["value"]) for r in everything] == [(0, "c1"), (1, "c2"), (3, "aborted"), (5, "c3")]
    assert kafkajs.admin(bootstrap, [{"op": "fetchOffsets", "groupId": "etl", "topics": ["in"]}])[0] == [
        {"topic": "in", "partitions": [{"partition": 0, "offset": 5}]}]      # the aborted 9 never landed
    apis = {api for api, _ in wire.apis()}
    assert {"InitProducerId", "AddPartitionsToTxn", "AddOffsetsToTxn", "TxnOffsetCommit", "EndTxn"} <= apis


@pytest.mark.kafkamock(config=FAST_GROUPS)
def test_read_committed_stops_at_the_last_stable_offset_of_an_open_transaction(kafka_broker, wire, kafkajs):
    bootstrap = kafka_broker.bootstrap_servers
    kafka_broker.create_topic("lso", 1)
    before, open_, after = ["b0", "b1"], ["t0", "t1", "t2"], ["p0", "p1"]
    out = kafkajs.lso(bootstrap, "lso", "tx-lso", groupPrefix="lso", before=before, open=open_, after=after,
                      fetchesAfter=3)
    assert out["whileOpen"] == before          # several fetches, nothing past the open transaction's first offset
    assert [r["value"] for r in out["uncommitted"]["records"]] == before + open_ + after
    assert [(r["offset"], r["value"]) for r in out["committed"]["records"]] == [
        (0, "b0"), (1, "b1"), (2, "t0"), (3, "t1"), (4, "t2"), (5, "p0"), (6, "p1")]
    # the broker's side: while open, read_committed fetches saw the high watermark at 7 and the LSO at 2
    seen = [(p["high_watermark"], p["last_stable_offset"])
            for e in wire.find("Fetch") if e["request"].isolation_level == 1 and e["response"] is not None
            for t in e["response"]["responses"] for p in t["partitions"]]
    assert (7, 2) in seen and (8, 8) in seen   # 8: after the commit marker


# -- security ------------------------------------------------------------------------------------------------------

def roundtrip(kafkajs, bootstrap: str, client: dict, topic: str, values: list[str], *, check: bool = True) -> dict:
    """Produce ``values`` to ``topic`` (which must exist), then read them back as a group member, in one process."""
    return kafkajs.roundtrip(bootstrap, {"topic": topic, "messages": [{"value": v} for v in values]},
                             {"topics": [topic], "groupId": f"g-{topic}", "count": len(values)},
                             client=client, check=check)


def test_sasl_ssl_scram_sha_512_and_a_wrong_password(tmp_path, kafkajs):
    server = ThrowawayCA(tmp_path / "tls").server()
    config = {"listeners": "SASL_SSL://127.0.0.1:0", "sasl.enabled.mechanisms": "SCRAM-SHA-512", **FAST_GROUPS,
              **server.broker_config()}
    with start_broker(config) as broker:
        broker.control.scram_user("bob", "bob-secret", mechanisms=["SCRAM-SHA-512"])
        broker.create_topic("secured")
        client = {"ssl": {"ca": str(server.ca)},
                  "sasl": {"mechanism": "scram-sha-512", "username": "bob", "password": "bob-secret"}}
        out = roundtrip(kafkajs, broker.bootstrap_servers, client, "secured", ["s1", "s2"])
        assert [r["value"] for r in out["consume"]["records"]] == ["s1", "s2"]
        produced = {(r["principal"], r["listener"]) for r in broker.control.requests(api_key=0)}
        assert produced == {("User:bob", "SASL_SSL")}
        bad = {**client, "sasl": {**client["sasl"], "password": "wrong"}, "retry": {"retries": 0}}
        failed = roundtrip(kafkajs, broker.bootstrap_servers, bad, "secured", ["never"], check=False)
        assert failed["error"]["name"] == "KafkaJSSASLAuthenticationError", failed["error"]
        assert "SASL SCRAM SHA512 authentication failed" in failed["error"]["message"]
        assert "invalid credentials with SASL mechanism SCRAM-SHA-512" in failed["error"]["message"]


def test_sasl_plaintext_plain_and_a_wrong_password(kafkajs):
    config = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "PLAIN",
              "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS, **FAST_GROUPS}
    with start_broker(config) as broker:
        broker.create_topic("plain")
        client = {"sasl": {"mechanism": "plain", "username": "alice", "password": "alice-secret"}}
        out = roundtrip(kafkajs, broker.bootstrap_servers, client, "plain", ["p1"])
        assert [r["value"] for r in out["consume"]["records"]] == ["p1"]
        assert {r["principal"] for r in broker.control.requests(api_key=0)} == {"User:alice"}
        bad = {"sasl": {**client["sasl"], "password": "nope"}, "retry": {"retries": 0}}
        failed = roundtrip(kafkajs, broker.bootstrap_servers, bad, "plain", ["never"], check=False)
        assert failed["error"]["name"] == "KafkaJSSASLAuthenticationError", failed["error"]
        assert "SASL PLAIN authentication failed" in failed["error"]["message"]


def test_ssl_with_a_client_certificate_as_the_principal(tmp_path, kafkajs):
    ca = ThrowawayCA(tmp_path / "tls")
    server, carol = ca.server(), ca.client("carol")
    config = {"listeners": "SSL://127.0.0.1:0", "ssl.client.auth": "required", **FAST_GROUPS,
              **server.broker_config()}
    with start_broker(config) as broker:
        broker.create_topic("tls")
        client = {"ssl": {"ca": str(server.ca), "cert": str(carol.certificate), "key": str(carol.key)}}
        out = roundtrip(kafkajs, broker.bootstrap_servers, client, "tls", ["x", "y"])
        assert [r["value"] for r in out["consume"]["records"]] == ["x", "y"]
        produced = {(r["principal"], r["listener"]) for r in broker.control.requests(api_key=0)}
        assert produced == {("User:CN=carol,OU=clients,O=kafkamock", "SSL")}
        # without a certificate, the handshake fails
        failed = roundtrip(kafkajs, broker.bootstrap_servers, {"ssl": {"ca": str(server.ca)},
                                                               "retry": {"retries": 0}}, "tls", ["z"], check=False)
        assert "error" in failed


# -- a cluster of three nodes --------------------------------------------------------------------------------------

@pytest.mark.kafkamock(brokers=3, config=FAST_GROUPS)
def test_three_nodes_metadata_per_node_configs_and_produce_to_each_leader(kafka_broker, kafkajs):
    bootstrap = kafka_broker.bootstrap_servers
    produces = tap_produce(kafka_broker)
    created, metadata, cluster, configs = kafkajs.admin(bootstrap, [
        {"op": "createTopics", "topics": [{"topic": "spread", "numPartitions": 3, "replicationFactor": 3}]},
        {"op": "fetchTopicMetadata", "topics": ["spread"]},
        {"op": "describeCluster"},
        {"op": "describeConfigs", "resources": [{"type": "BROKER", "name": str(n), "configNames": ["node.id"]}
                                                for n in (1, 2, 3)]},
    ])
    assert created is True
    partitions = metadata[0]["partitions"]
    leader_of = {p["partition"]: p["leader"] for p in partitions}
    assert sorted(leader_of.values()) == [1, 2, 3]
    assert all(sorted(p["replicas"]) == [1, 2, 3] and sorted(p["isr"]) == [1, 2, 3] for p in partitions)
    ports = {n["node_id"]: n["port"] for n in kafka_broker.control.nodes()}
    assert sorted((b["nodeId"], b["port"]) for b in cluster["brokers"]) == sorted(ports.items())
    # kafkajs asks each node for its own configs: each reports its own node.id
    assert sorted((r["name"], r["configs"]["node.id"]["value"]) for r in configs) == [("1", "1"), ("2", "2"),
                                                                                      ("3", "3")]

    sends = kafkajs.produce(bootstrap, "spread", [{"key": f"k{p}", "value": f"v{p}", "partition": p}
                                                  for p in (0, 1, 2, 0, 1, 2)])
    assert sorted((m["partition"], m["baseOffset"]) for m in sends[0]) == [(0, 0), (1, 0), (2, 0)]
    # one Produce per leader, each carrying only the partition that node leads
    assert sorted(produces) == sorted((leader_of[p], [("spread", p)]) for p in range(3))
    got = kafkajs.consume(bootstrap, ["spread"], group_id="spread-readers", count=6)["records"]
    assert sorted((r["partition"], r["offset"], r["value"]) for r in got) == [
        (p, o, f"v{p}") for p in range(3) for o in range(2)]


def move_leader_on_first_produce(handle, topic: str, partition: int, old: int, new: int) -> list[dict]:
    """On the first Produce that reaches node ``old``, move ``partition``'s leader to ``new`` before the broker
    handles it (a leader move racing a send): that request is answered NOT_LEADER_OR_FOLLOWER for the partition.
    Returns the list the move's result goes in."""
    broker = handle.cluster
    original = broker.handle
    moved: list[dict] = []

    def racing(request):
        if request.api_key == 0 and request.node.node_id == old and not moved:
            moved.append(broker.control.move_leader(topic, partition, new))   # on the broker's thread already
        return original(request)
    broker.handle = racing
    return moved


@pytest.mark.kafkamock(brokers=3)
def test_a_leader_move_during_a_send_and_kafkajs_retry_bug(kafka_broker, kafkajs):
    """kafkajs resends a partition whose leader moved, after a metadata refresh, unless the new leader also got
    another partition of the same send: then kafkajs 2.2.4 resolves send() without the moved partition's records
    (its per-broker response map survives the retry; see docs/clients.md). The broker answers as Kafka does either way."""
    bootstrap = kafka_broker.bootstrap_servers
    kafka_broker.create_topic("moves", 3, replication_factor=3)
    leader_of = {p["partition"]: p["leader"] for p in kafka_broker.control.topic("moves")["partitions"]}
    assert leader_of == {0: 1, 1: 2, 2: 3}
    produces = tap_produce(kafka_broker)

    # Partitions 0 and 1 in one send; 0 moves from node 1 to node 3, which has nothing else of this send
    moved = move_leader_on_first_produce(kafka_broker, "moves", 0, old=1, new=3)
    (acks,) = kafkajs.produce(bootstrap, "moves", [{"value": f"a{p}", "partition": p} for p in (0, 1)])
    assert moved and moved[0]["leader"] == 3
    assert sorted((a["partition"], a["baseOffset"]) for a in acks) == [(0, 0), (1, 0)]
    assert sorted(produces) == [(1, [("moves", 0)]), (2, [("moves", 1)]), (3, [("moves", 0)])]   # resent to 3

    # Now partition 0 moves from node 3 to node 2 while node 2 also takes partition 1 of the same send
    produces.clear()
    moved = move_leader_on_first_produce(kafka_broker, "moves", 0, old=3, new=2)
    (acks,) = kafkajs.produce(bootstrap, "moves", [{"value": f"b{p}", "partition": p} for p in (0, 1)])
    assert moved and moved[0]["leader"] == 2
    assert sorted(produces) == [(2, [("moves", 1)]), (3, [("moves", 0)])]     # never resent: the kafkajs bug
    assert [(a["partition"], a["baseOffset"]) for a in acks] == [(1, 1)]       # no acknowledgement for partition 0
    log_ends = {p["partition"]: p["log_end_offset"] for p in kafka_broker.control.topic("moves")["partitions"]}
    assert log_ends == {0: 1, 1: 2, 2: 0}                                      # b0 was never written
