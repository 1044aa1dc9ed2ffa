"""ACLs deciding per SASL user with a real client (librdkafka): alice is allowed and bob denied on produce, consume,
a consumer group and a transactional id, each with Kafka's error code."""

from __future__ import annotations

import time
import uuid

import confluent_kafka
import pytest
from client_support import DEADLINE_S
from confluent_kafka import admin as cka

from kafkamock.testing import start_broker

JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" '
        'user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret";')
ALLOW = cka.AclPermissionType.ALLOW


@pytest.fixture
def broker():
    config = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "PLAIN",
              "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
              "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
              "super.users": "User:admin"}
    with start_broker(config) as b:
        yield b


def as_user(broker, user: str) -> dict:
    return {"bootstrap.servers": broker.bootstrap_servers, "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN", "sasl.username": user, "sasl.password": f"{user}-secret"}


def acl(rtype, name, op, user: str = "alice") -> cka.AclBinding:
    return cka.AclBinding(rtype, name, cka.ResourcePatternType.LITERAL, f"User:{user}", "*", op, ALLOW)


def first_event(consumer) -> confluent_kafka.Message:
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        message = consumer.poll(0.2)
        if message is not None:
            return message
    raise AssertionError("no record and no error")


def test_alice_allowed_bob_denied(broker):
    admin = cka.AdminClient(as_user(broker, "admin"))
    for future in admin.create_topics([cka.NewTopic("orders", 1, 1)]).values():
        future.result(DEADLINE_S)
    T, G, X = cka.ResourceType.TOPIC, cka.ResourceType.GROUP, cka.ResourceType.TRANSACTIONAL_ID
    W, R = cka.AclOperation.WRITE, cka.AclOperation.READ
    # bob may read the topic (so his consumer is refused for the group alone), not write it.
    for future in admin.create_acls([acl(T, "orders", W), acl(T, "orders", R), acl(G, "billing", R),
                                     acl(X, "tx-alice", W), acl(T, "orders", R, "bob")]).values():
        future.result(DEADLINE_S)

    # alice: a transaction commits, and her group reads it.
    producer = confluent_kafka.Producer({**as_user(broker, "alice"), "transactional.id": "tx-alice"})
    producer.init_transactions(DEADLINE_S)
    producer.begin_transaction()
    producer.produce("orders", b"paid")
    producer.commit_transaction(DEADLINE_S)
    consumer = confluent_kafka.Consumer({**as_user(broker, "alice"), "group.id": "billing",
                                         "auto.offset.reset": "earliest", "isolation.level": "read_committed"})
    consumer.subscribe(["orders"])
    message = first_event(consumer)
    consumer.close()
    assert message.error() is None and message.value() == b"paid"

    # bob: the same transactional id, the topic and the group are all refused.
    thief = confluent_kafka.Producer({**as_user(broker, "bob"), "transactional.id": "tx-alice"})
    with pytest.raises(confluent_kafka.KafkaException) as refused:
        thief.init_transactions(DEADLINE_S)
    assert refused.value.args[0].code() == confluent_kafka.KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    errors: list = []
    plain = confluent_kafka.Producer({**as_user(broker, "bob"), "message.timeout.ms": 5000})
    plain.produce("orders", b"forged", on_delivery=lambda err, msg: errors.append(err))
    plain.flush(DEADLINE_S)
    assert [e.code() for e in errors] == [confluent_kafka.KafkaError.TOPIC_AUTHORIZATION_FAILED]
    snoop = confluent_kafka.Consumer({**as_user(broker, "bob"), "group.id": "billing",
                                      "auto.offset.reset": "earliest"})
    snoop.subscribe(["orders"])
    message = first_event(snoop)
    snoop.close()
    assert message.error() is not None and message.error().code() == confluent_kafka.KafkaError.GROUP_AUTHORIZATION_FAILED
    # bob may not even see the topic's data: nothing of his reached the log.
    watermarks = confluent_kafka.Consumer({**as_user(broker, "alice"), "group.id": f"w-{uuid.uuid4().hex[:6]}"})
    low, high = watermarks.get_watermark_offsets(confluent_kafka.TopicPartition("orders", 0), timeout=DEADLINE_S)
    watermarks.close()
    assert high == 2                                 # alice's record and its commit marker
