"""Kafka's own Java clients (kafka-clients 4.3.1) against secured kafkamock listeners: SCRAM credentials managed
through the Admin API (KIP-554) then used over SASL_SSL, PLAIN over SASL_PLAINTEXT (and a wrong password),
mutual TLS with a PEM keystore, OAUTHBEARER's unsecured tokens, and a two-listener broker whose Metadata
advertises the listener the client came in on. Truststores and keystores are PEM files from a throwaway CA."""

from __future__ import annotations

import pytest
from support.java_clients import ScenarioError

from kafkamock.server.tls import ThrowawayCA
from kafkamock.testing import start_broker

pytestmark = pytest.mark.java

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
              'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";')
PRODUCE = 0


def scram_jaas(user: str, password: str) -> str:
    return f'org.apache.kafka.common.security.scram.ScramLoginModule required username="{user}" password="{password}";'


def principals(broker, api_key: int = PRODUCE) -> set[str]:
    return {r["principal"] for r in broker.control.requests(api_key=api_key)}


def test_scram_credentials_through_admin_then_sasl_ssl(java_clients, tmp_path):
    ca = ThrowawayCA(tmp_path / "tls")
    server = ca.server()
    config = {"listeners": "PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0", "sasl.enabled.mechanisms": "SCRAM-SHA-512",
              **server.broker_config()}
    with start_broker(config, brokers=2) as broker:
        plaintext, secured = (broker.server.bootstrap_by_listener[n] for n in ("PLAINTEXT", "SASL_SSL"))
        results = java_clients.admin(plaintext, [
            {"op": "alterUserScramCredentials", "upsert": [
                {"user": "bob", "mechanism": "SCRAM-SHA-512", "iterations": 8192, "password": "bob-secret"},
                {"user": "weak", "mechanism": "SCRAM-SHA-256", "iterations": 100, "password": "x"}],
             "delete": [{"user": "ghost", "mechanism": "SCRAM-SHA-256"}]},
            {"op": "describeUserScramCredentials"},
            {"op": "describeUserScramCredentials", "users": ["bob", "nobody"]},
        ], check=False)
        altered = results[0]["result"]
        assert altered["bob"] == "ok"
        assert altered["weak"]["class"].endswith("UnacceptableCredentialException")
        assert "Too few iterations" in altered["weak"]["message"]
        assert altered["ghost"]["class"].endswith("ResourceNotFoundException")
        assert results[1]["result"] == {"bob": [{"mechanism": "SCRAM-SHA-512", "iterations": 8192}]}
        assert results[2]["result"]["bob"] == [{"mechanism": "SCRAM-SHA-512", "iterations": 8192}]
        assert results[2]["result"]["nobody"]["class"].endswith("ResourceNotFoundException")

        security = {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
                    "sasl.jaas.config": scram_jaas("bob", "bob-secret"), "ssl.truststore.type": "PEM",
                    "ssl.truststore.location": str(server.ca)}
        broker.create_topic("scram-java", replication_factor=2)
        produced = java_clients.produce(secured, "scram-java", [{"key": "k", "value": "v"}], config=security)
        assert produced["metadata"][0]["offset"] == 0
        consumed = java_clients.consume(secured, "scram-java", count=1, config=security)
        assert [r["value"] for r in consumed["records"]] == ["v"]
        assert principals(broker) == {"User:bob"}
        # Metadata and DescribeCluster on the SASL_SSL listener advertise the SASL_SSL ports.
        cluster = java_clients.admin(secured, [{"op": "describeCluster"}], config=security)[0]["result"]
        assert sorted(f"{n['host']}:{n['port']}" for n in cluster["nodes"]) == sorted(secured.split(","))
        cluster = java_clients.admin(plaintext, [{"op": "describeCluster"}])[0]["result"]
        assert sorted(f"{n['host']}:{n['port']}" for n in cluster["nodes"]) == sorted(plaintext.split(","))


def test_plain_and_a_wrong_password(java_clients):
    config = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "PLAIN",
              "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS}
    with start_broker(config) as broker:
        good = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                "sasl.jaas.config": PLAIN_JAAS.replace('username="admin" password="admin-secret"',
                                                       'username="alice" password="alice-secret"')}
        java_clients.produce(broker.bootstrap_servers, "plain-java", [{"key": "a", "value": "1"}], config=good)
        assert principals(broker) == {"User:alice"}
        bad = {**good, "sasl.jaas.config": good["sasl.jaas.config"].replace("alice-secret", "wrong")}
        with pytest.raises(ScenarioError) as failure:
            java_clients.produce(broker.bootstrap_servers, "plain-java", [{"key": "a", "value": "2"}], config=bad)
        message = failure.value.result["error"]["message"]
        assert ("org.apache.kafka.common.errors.SaslAuthenticationException: "
                "Authentication failed: Invalid username or password") in message


def test_mutual_tls_pem_keystore_principal(java_clients, tmp_path):
    ca = ThrowawayCA(tmp_path / "tls")
    server, alice = ca.server(), ca.client("alice", organization_unit="eng")
    config = {"listeners": "SSL://127.0.0.1:0", "ssl.client.auth": "required", **server.broker_config()}
    with start_broker(config) as broker:
        tls = {"security.protocol": "SSL", "ssl.truststore.type": "PEM", "ssl.truststore.location": str(server.ca),
               "ssl.keystore.type": "PEM", "ssl.keystore.location": str(alice.keystore)}
        java_clients.produce(broker.bootstrap_servers, "mtls-java", [{"key": "k", "value": "v"}], config=tls)
        assert principals(broker) == {"User:CN=alice,OU=eng,O=kafkamock"}


def test_oauthbearer_unsecured_tokens(java_clients):
    config = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "OAUTHBEARER"}
    with start_broker(config) as broker:
        oauth = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
                 "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
                                     'unsecuredLoginStringClaim_sub="dora";'}
        java_clients.produce(broker.bootstrap_servers, "oauth-java", [{"key": "k", "value": "v"}], config=oauth)
        assert principals(broker) == {"User:dora"}


def test_the_java_producer_reauthenticates_on_its_connections(java_clients):
    """KIP-368: with ``connections.max.reauth.ms`` the broker gives each SASL session a lifetime (SaslAuthenticate
    v1+); the Java client re-authenticates on the same connection before it ends (SaslHandshake again, between
    requests) instead of being disconnected, and a stream of idempotent sends goes on without an error."""
    config = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "SCRAM-SHA-512",
              "connections.max.reauth.ms": "1500"}
    with start_broker(config) as broker:
        broker.control.scram_user("bob", "bob-secret", mechanisms=["SCRAM-SHA-512"])
        broker.create_topic("reauth-java", 2)
        security = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512",
                    "sasl.jaas.config": scram_jaas("bob", "bob-secret")}

        def handshakes_per_connection() -> dict[int, int]:
            counts: dict[int, int] = {}
            for r in broker.control.requests(api_key=17):                   # SaslHandshake
                counts[r["connection_id"]] = counts.get(r["connection_id"], 0) + 1
            return counts

        run = java_clients.start("stream", broker.bootstrap_servers, {
            "topic": "reauth-java", "count": 5000, "partitions": 2, "pace_ms": 1, "progress_every": 100,
            "config": security})
        try:
            run.wait_for(lambda: max(handshakes_per_connection().values(), default=0) >= 2, 60,
                         "a connection that re-authenticated")
            result = run.result()
        finally:
            run.kill()
        assert result["failed"] == []
        assert len(result["acked"]) == 5000
        again = {c for c, n in handshakes_per_connection().items() if n >= 2}
        produced_on = {r["connection_id"] for r in broker.control.requests(api_key=PRODUCE)}
        assert again & produced_on, "no connection carried produce requests across a re-authentication"
        assert principals(broker) == {"User:bob"}
