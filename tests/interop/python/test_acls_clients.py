"""ACLs seen by real clients over real sockets: confluent-kafka's AdminClient creates, describes and deletes them;
librdkafka and kafka-python producers and consumers are refused with TOPIC_AUTHORIZATION_FAILED and let through
once an ACL allows them.

Over PLAINTEXT every client is ``User:ANONYMOUS``. With ``allow.everyone.if.no.acl.found`` a resource with no ACL is
open, so an ACL for someone else (``User:bob``) closes a topic to the anonymous clients, and one for
``User:ANONYMOUS`` opens it again.
"""

from __future__ import annotations

import time

import pytest
from client_support import wait_until
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)
from kafka import KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KPTopicPartition
from kafka.errors import TopicAuthorizationFailedError

AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
OPEN_UNLESS_GUARDED = {"authorizer.class.name": AUTHORIZER, "allow.everyone.if.no.acl.found": "true"}


def admin(broker) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.bootstrap_servers})


def binding(name, op, principal="User:ANONYMOUS", permission=AclPermissionType.ALLOW,
            pattern=ResourcePatternType.LITERAL, rtype=ResourceType.TOPIC) -> AclBinding:
    return AclBinding(rtype, name, pattern, principal, "*", op, permission)


def create_acls(client: AdminClient, *bindings: AclBinding) -> None:
    for future in client.create_acls(list(bindings), request_timeout=10).values():
        future.result()


def create_topic(client: AdminClient, name: str, partitions: int = 1) -> None:
    client.create_topics([NewTopic(name, partitions, 1)])[name].result(10)


def everything() -> AclBindingFilter:
    return AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY,
                            AclPermissionType.ANY)


def as_tuples(bindings) -> set[tuple]:
    return {(b.restype, b.name, b.resource_pattern_type, b.principal, b.host, b.operation, b.permission_type)
            for b in bindings}


@pytest.mark.kafkamock(config={"authorizer.class.name": AUTHORIZER, "super.users": "User:ANONYMOUS"})
def test_confluent_admin_acl_round_trip(kafka_broker):
    client = admin(kafka_broker)
    wanted = [binding("orders", AclOperation.READ, "User:alice"),
              binding("orders-", AclOperation.WRITE, "User:bob", AclPermissionType.DENY, ResourcePatternType.PREFIXED),
              binding("g1", AclOperation.READ, "User:*", rtype=ResourceType.GROUP),
              binding("kafka-cluster", AclOperation.ALTER, "User:ops", rtype=ResourceType.BROKER)]
    create_acls(client, *wanted)
    assert as_tuples(client.describe_acls(everything(), request_timeout=10).result()) == as_tuples(wanted)
    match = AclBindingFilter(ResourceType.TOPIC, "orders-eu", ResourcePatternType.MATCH, None, None,
                             AclOperation.ANY, AclPermissionType.ANY)
    assert as_tuples(client.describe_acls(match, request_timeout=10).result()) == as_tuples([wanted[1]])

    bad = binding("not-the-cluster", AclOperation.ALTER, rtype=ResourceType.BROKER)
    with pytest.raises(KafkaException) as refused:
        create_acls(client, bad)
    assert refused.value.args[0].code() == KafkaError.INVALID_REQUEST
    assert "kafka-cluster" in refused.value.args[0].str()

    topic_filter = AclBindingFilter(ResourceType.TOPIC, None, ResourcePatternType.ANY, None, None,
                                    AclOperation.ANY, AclPermissionType.ANY)
    (deleted,) = client.delete_acls([topic_filter], request_timeout=10).values()
    assert as_tuples(deleted.result()) == as_tuples(wanted[:2])
    assert as_tuples(client.describe_acls(everything(), request_timeout=10).result()) == as_tuples(wanted[2:])


def test_confluent_admin_without_an_authorizer_is_security_disabled(kafka_broker):
    """librdkafka reports CreateAcls' and DeleteAcls' SECURITY_DISABLED (its DescribeAcls result drops the
    response's top-level error and yields an empty list; tests/broker/test_acls.py checks that answer)."""
    client = admin(kafka_broker)
    with pytest.raises(KafkaException) as refused:
        create_acls(client, binding("t", AclOperation.READ))
    assert (refused.value.args[0].code(), refused.value.args[0].str()) == (KafkaError.SECURITY_DISABLED,
                                                                          "No Authorizer is configured.")
    (deleted,) = client.delete_acls([everything()], request_timeout=10).values()
    with pytest.raises(KafkaException) as refused:
        deleted.result()
    assert refused.value.args[0].code() == KafkaError.SECURITY_DISABLED


@pytest.mark.kafkamock(config=OPEN_UNLESS_GUARDED)
def test_librdkafka_producer_and_consumer_denied_then_allowed(kafka_broker):
    client = admin(kafka_broker)
    create_topic(client, "guarded")
    create_acls(client, binding("guarded", AclOperation.ALL, "User:bob"))   # the topic now has ACLs: not ours

    errors: list = []
    producer = Producer({"bootstrap.servers": kafka_broker.bootstrap_servers, "message.timeout.ms": 10000})
    producer.produce("guarded", b"no", on_delivery=lambda err, msg: errors.append(err))
    producer.flush(15)
    assert [e.code() for e in errors] == [KafkaError.TOPIC_AUTHORIZATION_FAILED]

    # librdkafka reports an unauthorized topic to a subscribing consumer (an assign()ed partition just waits)
    consumer = Consumer({"bootstrap.servers": kafka_broker.bootstrap_servers, "group.id": "acl-test",
                         "enable.auto.commit": False, "fetch.wait.max.ms": 100, "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe(["guarded"])
        deadline = time.monotonic() + 15
        seen = None
        while seen is None and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error():
                seen = msg.error().code()
        assert seen == KafkaError.TOPIC_AUTHORIZATION_FAILED
    finally:
        consumer.close()

    create_acls(client, binding("guarded", AclOperation.WRITE), binding("guarded", AclOperation.READ),
                binding("acl-test", AclOperation.READ, rtype=ResourceType.GROUP))
    delivered: list = []
    producer = Producer({"bootstrap.servers": kafka_broker.bootstrap_servers, "message.timeout.ms": 10000})
    producer.produce("guarded", b"yes", on_delivery=lambda err, msg: delivered.append(err or msg.offset()))
    producer.flush(15)
    assert delivered == [0]
    consumer = Consumer({"bootstrap.servers": kafka_broker.bootstrap_servers, "group.id": "acl-test",
                         "enable.auto.commit": False, "fetch.wait.max.ms": 100})
    try:
        consumer.assign([TopicPartition("guarded", 0, 0)])
        got: list = []
        wait_until(lambda: (m := consumer.poll(0.5)) is not None and not m.error() and got.append(m.value()) is None,
                   timeout=15, what="the allowed consumer's record")
        assert got == [b"yes"]
    finally:
        consumer.close()


@pytest.mark.kafkamock(config=OPEN_UNLESS_GUARDED)
def test_kafka_python_producer_and_consumer_denied_then_allowed(kafka_broker):
    client = admin(kafka_broker)
    create_topic(client, "kp-guarded")
    # DESCRIBE only: metadata answers, and Produce and Fetch are refused with TOPIC_AUTHORIZATION_FAILED (with
    # no DESCRIBE either, kafka-python's consumer only logs the metadata error and waits)
    create_acls(client, binding("kp-guarded", AclOperation.ALL, "User:bob"), binding("kp-guarded", AclOperation.DESCRIBE))
    producer = KafkaProducer(bootstrap_servers=kafka_broker.bootstrap_servers, max_block_ms=10000, retries=0)
    try:
        with pytest.raises(TopicAuthorizationFailedError):
            producer.send("kp-guarded", b"no").get(timeout=15)
    finally:
        producer.close(timeout=5)
    consumer = KafkaConsumer(bootstrap_servers=kafka_broker.bootstrap_servers, enable_auto_commit=False,
                             auto_offset_reset="earliest", fetch_max_wait_ms=100)
    try:
        consumer.assign([KPTopicPartition("kp-guarded", 0)])
        with pytest.raises(TopicAuthorizationFailedError):
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                consumer.poll(timeout_ms=500)
    finally:
        consumer.close()

    create_acls(client, binding("kp-guarded", AclOperation.WRITE), binding("kp-guarded", AclOperation.READ))
    producer = KafkaProducer(bootstrap_servers=kafka_broker.bootstrap_servers, max_block_ms=10000)
    try:
        assert producer.send("kp-guarded", b"yes").get(timeout=15).offset == 0
    finally:
        producer.close(timeout=5)
    consumer = KafkaConsumer(bootstrap_servers=kafka_broker.bootstrap_servers, enable_auto_commit=False,
                             auto_offset_reset="earliest", fetch_max_wait_ms=100)
    try:
        consumer.assign([KPTopicPartition("kp-guarded", 0)])
        got: list = []
        deadline = time.monotonic() + 15
        while not got and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=500).values():
                got.extend(r.value for r in batch)
        assert got == [b"yes"]
    finally:
        consumer.close()


@pytest.mark.kafkamock(config={**OPEN_UNLESS_GUARDED, "group.consumer.heartbeat.interval.ms": 500,
                               "group.consumer.min.heartbeat.interval.ms": 100,
                               "group.consumer.regex.refresh.interval.ms": 10_000})
def test_librdkafka_regex_subscription_gets_only_describable_topics(kafka_broker):
    """KIP-848: librdkafka sends its "^rx-.*" subscription to the broker as a regular expression; the group
    resolves it to the topics the member may DESCRIBE (Kafka's TopicRegexResolver), and a later ACL adds one at
    the group's next regex refresh (Kafka's internal group.consumer.regex.refresh.interval.ms, at its 10 s minimum
    here)."""
    client = admin(kafka_broker)
    create_topic(client, "rx-open")
    create_topic(client, "rx-guarded")
    create_acls(client, binding("rx-guarded", AclOperation.ALL, "User:bob"))
    consumer = Consumer({"bootstrap.servers": kafka_broker.bootstrap_servers, "group.id": "rx-group",
                         "group.protocol": "consumer", "enable.auto.commit": False, "fetch.wait.max.ms": 100})

    def assigned() -> set[str]:
        return {tp.topic for tp in consumer.assignment()}
    try:
        consumer.subscribe(["^rx-.*"])
        assert wait_until(assigned, timeout=20, what="an assignment", step=lambda: consumer.poll(0.2)) == \
            {"rx-open"}
        described = client.describe_consumer_groups(["rx-group"], request_timeout=10)["rx-group"].result(15)
        assert [{tp.topic for tp in m.assignment.topic_partitions} for m in described.members] == [{"rx-open"}]

        create_acls(client, binding("rx-guarded", AclOperation.DESCRIBE), binding("rx-guarded", AclOperation.READ))
        wait_until(lambda: assigned() == {"rx-open", "rx-guarded"}, timeout=40,
                   what="the newly describable topic in the assignment", step=lambda: consumer.poll(0.2))
    finally:
        consumer.close()
