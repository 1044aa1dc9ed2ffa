"""kafkamock's own clients over kafkamock's secured listeners: SASL_SSL with SCRAM-SHA-512, SASL_PLAINTEXT with
PLAIN, mutual TLS, OAUTHBEARER, a wrong password, KIP-368 re-authentication, and ACLs deciding per SASL user."""

from __future__ import annotations

import time
import uuid

import confluent_kafka.admin as cka
import pytest

from kafkamock.client.admin import NewTopic
from kafkamock.client.blocking import Admin, Consumer, Producer
from kafkamock.client.errors import KafkaError
from kafkamock.server.tls import ThrowawayCA
from kafkamock.testing import start_broker

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
              'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret";')


def jaas(mechanism: str, user: str, password: str) -> str:
    module = "plain.PlainLoginModule" if mechanism == "PLAIN" else "scram.ScramLoginModule"
    return f'org.apache.kafka.common.security.{module} required username="{user}" password="{password}";'


def round_trip(settings: dict, topic: str, values: list[bytes]) -> list[bytes]:
    with Producer(settings) as producer:
        for value in values:
            producer.send(topic, value=value)
        producer.flush()
    with Consumer({**settings, "group.id": f"g-{uuid.uuid4().hex[:6]}", "auto.offset.reset": "earliest"}) as consumer:
        consumer.subscribe([topic])
        got: list[bytes] = []
        deadline = time.monotonic() + 30
        while len(got) < len(values) and time.monotonic() < deadline:
            got += [r.value for r in consumer.poll(500)]
    return got


@pytest.fixture
def ca(tmp_path) -> ThrowawayCA:
    return ThrowawayCA(tmp_path / "tls")


def test_sasl_ssl_scram_sha_512(ca):
    server = ca.server()
    config = {"listeners": "SASL_SSL://127.0.0.1:0", "sasl.enabled.mechanisms": "SCRAM-SHA-512",
              **server.broker_config()}
    with start_broker(config) as broker:
        broker.control.scram_user("bob", "bob-secret", mechanisms=["SCRAM-SHA-512"])
        settings = {"bootstrap.servers": broker.bootstrap_servers, "security.protocol": "SASL_SSL",
                    "ssl.truststore.location": str(server.ca), "sasl.mechanism": "SCRAM-SHA-512",
                    "sasl.jaas.config": jaas("SCRAM", "bob", "bob-secret")}
        assert round_trip(settings, "scram", [b"a", b"b"]) == [b"a", b"b"]
        assert {r["principal"] for r in broker.control.requests(api_key="Fetch")} == {"User:bob"}
        with pytest.raises(KafkaError) as failed, Admin({**settings, "sasl.jaas.config": jaas("SCRAM", "bob", "no")}) \
                as admin:
            admin.describe_cluster()
        assert failed.value.name == "SASL_AUTHENTICATION_FAILED"
        assert "invalid credentials with SASL mechanism SCRAM-SHA-512" in str(failed.value)
        # The broker's certificate is checked: a client that does not trust the CA does not connect.
        untrusting = {**settings, "ssl.truststore.location": None, "default.api.timeout.ms": 5000}
        with pytest.raises(Exception, match="(?i)certificate verify failed"), Admin(untrusting) as admin:
            admin.describe_cluster()


def test_sasl_plaintext_plain_and_acls_per_user():
    config = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "PLAIN",
              "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
              "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
              "super.users": "User:admin"}
    with start_broker(config) as broker:
        base = {"bootstrap.servers": broker.bootstrap_servers, "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "PLAIN"}
        with Admin({**base, "sasl.jaas.config": jaas("PLAIN", "admin", "admin-secret")}) as admin:
            admin.create_topics([NewTopic("orders", 1, 1)]).all()
        acl = cka.AclBinding(cka.ResourceType.TOPIC, "orders", cka.ResourcePatternType.LITERAL, "User:alice", "*",
                             cka.AclOperation.WRITE, cka.AclPermissionType.ALLOW)
        acls = cka.AdminClient({"bootstrap.servers": broker.bootstrap_servers, "security.protocol": "SASL_PLAINTEXT",
                                "sasl.mechanism": "PLAIN", "sasl.username": "admin", "sasl.password": "admin-secret"})
        for future in acls.create_acls([acl]).values():
            future.result(10)
        alice = {**base, "sasl.jaas.config": jaas("PLAIN", "alice", "alice-secret")}
        with Producer(alice) as producer:
            assert producer.send("orders", value=b"from alice").get(10).offset == 0
        bob = {**base, "sasl.jaas.config": jaas("PLAIN", "bob", "bob-secret")}
        with Producer(bob) as producer, pytest.raises(KafkaError) as denied:
            producer.send("orders", value=b"from bob").get(10)
        assert denied.value.name == "TOPIC_AUTHORIZATION_FAILED"


def test_mutual_tls_principal(ca):
    server, alice = ca.server(), ca.client("alice")
    config = {"listeners": "SSL://127.0.0.1:0", "ssl.client.auth": "required", **server.broker_config()}
    with start_broker(config) as broker:
        settings = {"bootstrap.servers": broker.bootstrap_servers, "security.protocol": "SSL",
                    "ssl.truststore.location": str(server.ca), "ssl.keystore.location": str(alice.keystore)}
        with Admin(settings) as admin:
            assert admin.describe_cluster() is not None
        principals = {r["principal"] for r in broker.control.requests()}
        assert principals == {"User:CN=alice,OU=clients,O=kafkamock"}


def test_oauthbearer_unsecured_token():
    config = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "OAUTHBEARER"}
    with start_broker(config) as broker:
        settings = {"bootstrap.servers": broker.bootstrap_servers, "security.protocol": "SASL_PLAINTEXT",
                    "sasl.mechanism": "OAUTHBEARER",
                    "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule "
                                        'required unsecuredLoginStringClaim_sub="carol";'}
        assert round_trip(settings, "oauth", [b"x"]) == [b"x"]
        assert {r["principal"] for r in broker.control.requests(api_key="Produce")} == {"User:carol"}


def test_the_client_re_authenticates_before_its_session_ends():
    """KIP-368: the broker gives each SASL session 1.5 s; the client authenticates again on the same connection
    and its requests go on. Without re-authentication the broker would close the connection after 1.5 s."""
    config = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "SCRAM-SHA-256",
              "connections.max.reauth.ms": 1500}
    with start_broker(config) as broker:
        broker.control.scram_user("dave", "dave-secret", mechanisms=["SCRAM-SHA-256"])
        settings = {"bootstrap.servers": broker.bootstrap_servers, "security.protocol": "SASL_PLAINTEXT",
                    "sasl.mechanism": "SCRAM-SHA-256", "sasl.jaas.config": jaas("SCRAM", "dave", "dave-secret")}
        def handshakes() -> dict[int, int]:
            counts: dict[int, int] = {}
            for r in broker.control.requests(api_key="SaslHandshake"):
                counts[r["connection_id"]] = counts.get(r["connection_id"], 0) + 1
            return counts

        with Admin(settings) as admin:
            deadline = time.monotonic() + 60
            # Requests go on until one connection has authenticated three times (the first exchange and two
            # more): every call succeeds, so the broker never closed it for an expired session.
            while max(handshakes().values(), default=0) < 3:
                assert time.monotonic() < deadline, handshakes()
                admin.describe_cluster()
        renewed = max(handshakes(), key=handshakes().get)
        calls = [r["connection_id"] for r in broker.control.requests(api_key="DescribeCluster")]
        assert calls.count(renewed) >= 3                 # it served requests across its sessions
        assert len(set(calls)) <= 2                      # bootstrap, then the node: no reconnection
