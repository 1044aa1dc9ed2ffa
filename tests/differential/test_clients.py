"""Real clients side by side: what librdkafka (confluent-kafka), kafka-python and aiokafka see from Kafka 4.3.1 and
from kafkamock for the same steps (the Java client and kafkajs have their own suites: tests/clients_java,
tests/clients_js, which also run against Kafka 4.3.1)."""

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
