"""Real clients side by side: what librdkafka (confluent-kafka), kafka-python and aiokafka see from Kafka 4.3.1 and
from kafkamock for the same steps (the Java client and kafkajs have their own suites: tests/interop/java,
tests/interop/js, which also run against Kafka 4.3.1)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow

TS = 1_700_000_000_000


def _producer(run, **extra):
    from confluent_kafka import Producer

    return Producer({"bootstrap.servers": run.target.bootstrap_servers, "linger.ms": 50,
                     "batch.num.messages": 1000, "enable.idempotence": False, "acks": "all", **extra})


def _consume(run, topic: str, count: int, *, timeout: float = 20.0) -> list:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": run.target.bootstrap_servers, "group.id": run.name("g"),
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        got: list = []
        run.until(f"{count} records", lambda: got.extend(consumer.consume(count - len(got), 0.5)) or
                  len(got) >= count, timeout=timeout)
        return [(m.offset(), m.key(), m.value(), m.error()) for m in got]
    finally:
        consumer.close()


def test_librdkafka_produces_and_consumes_records_with_null_or_empty_keys_and_values(differ, request):
    def scenario(run):
        topic = run.name()
        run.create_topic(topic)
        producer = _producer(run)
        reports: list = []
        for key, value in [(None, None), (b"", b""), (None, b""), (b"", None), (b"k", b"v")]:
            producer.produce(topic, key=key, value=value, partition=0, timestamp=TS,
                             on_delivery=lambda err, msg: reports.append((str(err) if err else None, msg.offset())))
        assert producer.flush(20) == 0
        run.see("delivery reports", sorted(reports, key=lambda r: (r[1] is None, r[1])))
        run.see("consumed", _consume(run, topic, 5))

    differ.check(request.node.name, scenario)


def test_librdkafka_fails_only_the_keyless_records_on_a_compacted_topic(differ, request):
    """KIP-467: 100 records in one batch, 10 without a key, to a compacted topic."""
    def scenario(run):
        topic = run.name()
        run.create_topic(topic, config={"cleanup.policy": "compact"})
        producer = _producer(run, **{"linger.ms": 1000})
        reports: dict[int, str | None] = {}

        def report(i):
            return lambda err, msg: reports.__setitem__(i, err.name() if err else None)
        for i in range(100):
            producer.produce(topic, key=None if i % 10 == 3 else f"k{i}".encode(), value=f"v{i}".encode(),
                             partition=0, timestamp=TS + i, on_delivery=report(i))
        producer.flush(30)
        run.see("failed records", sorted(i for i, err in reports.items() if err))
        run.see("errors", sorted({err for err in reports.values() if err}))
        delivered = [i for i, err in reports.items() if err is None]
        run.see("delivered", len(delivered))
        if delivered:
            run.see("consumed keys", sorted(m[1].decode() for m in _consume(run, topic, len(delivered))))

    differ.check(request.node.name, scenario)


def test_kafka_python_admin_creates_topics_and_describes_configs(differ, request):
    from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewTopic

    def scenario(run):
        admin = KafkaAdminClient(bootstrap_servers=run.target.bootstrap_servers, client_id="differential")
        try:
            topic = run.name()
            created = admin.create_topics([NewTopic(topic, 2, 1, topic_configs={"retention.ms": "1000"})])
            run.see("created", created)
            run.wait_for_leaders(topic, 2)
            for label, bad in (("existing", [NewTopic(topic, 1, 1)]),
                               ("replication factor 5", [NewTopic(run.name("bad"), 1, 5)]),
                               ("bad config value", [NewTopic(run.name("cfg"), 1, 1,
                                                              topic_configs={"retention.ms": "soon"})])):
                try:
                    run.see(label, admin.create_topics(bad))
                except Exception as exc:       # kafka-python raises the first topic error
                    run.see(label, f"{type(exc).__name__}: {exc}")
            run.see("described", admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)]))
        finally:
            admin.close()

    differ.check(request.node.name, scenario)


@pytest.fixture(scope="module")
def kafkajs():
    """kafkajs 2.2.4 (tests/support/js_clients.py), installed into .cache/node on first use."""
    from support.js_clients import JsClients, install, missing_tools
    from support.targets import missing_tool

    missing = missing_tools()
    if missing:
        missing_tool(f"kafkajs needs {' and '.join(missing)} (make js installs them)")
    return JsClients(install())


def test_kafkajs_produces_gzip_with_headers_and_a_group_consumes_it(differ, request, kafkajs):
    def scenario(run):
        topic, group = run.name(), run.name("g")
        run.create_topic(topic, 2)
        bootstrap = run.target.bootstrap_servers
        run.see("gzip send", kafkajs.produce(bootstrap, topic, [
            {"key": f"k{i}", "value": f"line {i} " * 20, "partition": 0, "headers": {"trace": f"t{i}"}}
            for i in range(4)], compression="gzip"))
        run.see("plain send", kafkajs.produce(bootstrap, topic, [
            {"key": None, "value": "no key", "partition": 1}, {"key": "tombstone", "value": None, "partition": 1}]))
        got = kafkajs.consume(bootstrap, [topic], group_id=group, count=6)
        run.see("records", sorted([r["partition"], r["offset"], r["key"], r["value"], r["headers"]]
                                   for r in got["records"]))
        run.see("assignment", got["joins"][0]["assignment"])
        run.see("committed", kafkajs.admin(bootstrap, [{"op": "fetchOffsets", "groupId": group,
                                                         "topics": [topic]}])[0])

    differ.check(request.node.name, scenario)


def test_kafkajs_transactions_commit_abort_and_offsets(differ, request, kafkajs):
    def scenario(run):
        source, sink, tid, group = run.name("in"), run.name("out"), run.name("tx"), run.name("etl")
        run.create_topic(source)
        run.create_topic(sink)
        bootstrap = run.target.bootstrap_servers
        steps = kafkajs.txn(bootstrap, tid, [
            {"op": "begin"}, {"op": "send", "topic": sink, "messages": [{"value": "c1"}, {"value": "c2"}]},
            {"op": "sendOffsets", "consumerGroupId": group,
             "topics": [{"topic": source, "partitions": [{"partition": 0, "offset": 5}]}]}, {"op": "commit"},
            {"op": "begin"}, {"op": "send", "topic": sink, "messages": [{"value": "aborted"}]}, {"op": "abort"},
            {"op": "begin"}, {"op": "send", "topic": sink, "messages": [{"value": "c3"}]}, {"op": "commit"}])
        run.see("steps", [[s["op"], s["ok"], s.get("result")] for s in steps])
        committed = kafkajs.consume(bootstrap, [sink], group_id=run.name("rc"), count=3)["records"]
        run.see("read committed", [[r["offset"], r["value"]] for r in committed])
        run.see("offsets", kafkajs.admin(bootstrap, [{"op": "fetchOffsets", "groupId": group,
                                                       "topics": [source]}])[0])

    differ.check(request.node.name, scenario)
