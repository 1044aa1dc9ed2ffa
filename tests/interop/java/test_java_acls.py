"""Kafka's Java Admin (kafka-clients 4.3.1) managing ACLs on kafkamock: createAcls, describeAcls, deleteAcls, with
Kafka's errors for a refused binding, a principal without the right, and a broker without an authorizer; a Java
producer denied on a topic, a transactional producer on its transactional id and a group consumer on its group,
each allowed once an ACL says so."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.java

AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


def binding(name, operation, principal="User:alice", permission="ALLOW", rtype="TOPIC", pattern="LITERAL") -> dict:
    return {"resource_type": rtype, "name": name, "pattern_type": pattern, "principal": principal, "host": "*",
            "operation": operation, "permission": permission}


def result(results, i=0):
    return results[i]["result"]


@pytest.mark.kafkamock(config={"authorizer.class.name": AUTHORIZER, "super.users": "User:ANONYMOUS"})
def test_java_admin_creates_describes_and_deletes_acls(kafka_broker, java_clients):
    wanted = [binding("orders", "READ"), binding("orders-", "WRITE", "User:bob", "DENY", pattern="PREFIXED"),
              binding("g1", "READ", "User:*", rtype="GROUP"),
              binding("kafka-cluster", "IDEMPOTENT_WRITE", rtype="CLUSTER"),
              binding("tx", "WRITE", rtype="TRANSACTIONAL_ID")]
    results = java_clients.admin(kafka_broker.bootstrap_servers, [
        {"op": "createAcls", "bindings": wanted},
        {"op": "describeAcls", "filter": {}},
        {"op": "describeAcls", "filter": {"resource_type": "TOPIC", "name": "orders-eu", "pattern_type": "MATCH"}},
        {"op": "createAcls", "bindings": [binding("my-cluster", "ALTER", rtype="CLUSTER")]},
        {"op": "deleteAcls", "filters": [{"resource_type": "TOPIC"}]},
        {"op": "describeAcls", "filter": {}},
    ], check=False)
    assert result(results, 0)["results"] == ["ok"] * 5
    assert sorted(result(results, 1)["bindings"], key=str) == sorted(wanted, key=str)
    assert result(results, 2)["bindings"] == [wanted[1]]
    (refused,) = result(results, 3)["results"]
    assert refused["error"]["kafka_error"] == "INVALID_REQUEST"
    assert refused["error"]["message"] == "The only valid name for the CLUSTER resource is kafka-cluster"
    assert sorted(result(results, 4)["results"][0]["deleted"], key=str) == sorted(wanted[:2], key=str)
    assert sorted(result(results, 5)["bindings"], key=str) == sorted(wanted[2:], key=str)


@pytest.mark.kafkamock(config={"authorizer.class.name": AUTHORIZER})
def test_java_admin_without_cluster_rights_is_refused(kafka_broker, java_clients):
    results = java_clients.admin(kafka_broker.bootstrap_servers, [
        {"op": "createAcls", "bindings": [binding("t", "READ")]},
        {"op": "describeAcls", "filter": {}},
    ], check=False)
    for error in (result(results, 0)["results"][0]["error"], result(results, 1)["error"]):
        assert error["kafka_error"] == "CLUSTER_AUTHORIZATION_FAILED"
        # the message of Kafka's AuthHelper.authorizeClusterOperation reaches Java's exception
        assert error["message"].startswith("Request Request(processor=0, connectionId=")
        assert error["message"].endswith("listenerName=ListenerName(PLAINTEXT), securityProtocol=PLAINTEXT, "
                                         "buffer=null, envelope=None) is not authorized.")


def test_java_admin_without_an_authorizer_is_security_disabled(kafka_broker, java_clients):
    results = java_clients.admin(kafka_broker.bootstrap_servers, [
        {"op": "describeAcls", "filter": {}},
        {"op": "createAcls", "bindings": [binding("t", "READ")]},
    ], check=False)
    assert result(results, 0)["error"]["kafka_error"] == "SECURITY_DISABLED"
    assert result(results, 1)["results"][0]["error"]["kafka_error"] == "SECURITY_DISABLED"


@pytest.mark.kafkamock(config={"authorizer.class.name": AUTHORIZER, "allow.everyone.if.no.acl.found": "true"})
def test_java_producer_denied_then_allowed(kafka_broker, java_clients):
    bootstrap = kafka_broker.bootstrap_servers
    java_clients.admin(bootstrap, [
        {"op": "createTopics", "topics": [{"name": "guarded"}]},
        {"op": "createAcls", "bindings": [binding("guarded", "ALL", "User:bob")]},   # closed to everyone else
    ])
    with pytest.raises(AssertionError) as denied:
        java_clients.produce(bootstrap, "guarded", [{"key": "k", "value": "no"}],
                             idempotent=False, config={"max.block.ms": "10000"})
    assert "TopicAuthorizationException" in str(denied.value) or "TOPIC_AUTHORIZATION_FAILED" in str(denied.value)
    java_clients.admin(bootstrap, [{"op": "createAcls", "bindings": [binding("guarded", "WRITE", "User:ANONYMOUS"),
                                                                     binding("guarded", "READ", "User:ANONYMOUS")]}])
    java_clients.produce(bootstrap, "guarded", [{"key": "k", "value": "yes"}])
    assert [r["value"] for r in java_clients.consume(bootstrap, "guarded", count=1)["records"]] == ["yes"]


@pytest.mark.kafkamock(config={"authorizer.class.name": AUTHORIZER, "allow.everyone.if.no.acl.found": "true"})
def test_java_transactional_producer_and_group_consumer_denied_then_allowed(kafka_broker, java_clients):
    """initTransactions needs WRITE on the transactional id (TransactionalIdAuthorizationException, fatal for that
    producer), a group consumer READ on its group (GroupAuthorizationException); ACLs for the anonymous principal
    let a new producer and consumer through."""
    bootstrap = kafka_broker.bootstrap_servers
    java_clients.admin(bootstrap, [
        {"op": "createTopics", "topics": [{"name": "txn-acl"}]},
        {"op": "createAcls", "bindings": [binding("tx-guarded", "ALL", "User:bob", rtype="TRANSACTIONAL_ID"),
                                          binding("g-guarded", "ALL", "User:bob", rtype="GROUP")]},
    ])
    denied = java_clients.txn(bootstrap, "tx-guarded", [{"op": "init", "producer": "p"}])
    assert not denied[0]["ok"] and denied[0]["error"]["kafka_error"] == "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"
    with pytest.raises(AssertionError) as refused:
        java_clients.group(bootstrap, "g-guarded", ["txn-acl"], count=1, timeout_ms=10_000)
    assert "GROUP_AUTHORIZATION_FAILED" in str(refused.value) or "GroupAuthorizationException" in str(refused.value)

    java_clients.admin(bootstrap, [{"op": "createAcls", "bindings": [
        binding("tx-guarded", "WRITE", "User:ANONYMOUS", rtype="TRANSACTIONAL_ID"),
        binding("g-guarded", "READ", "User:ANONYMOUS", rtype="GROUP")]}])
    allowed = java_clients.txn(bootstrap, "tx-guarded", [
        {"op": "init", "producer": "p"}, {"op": "begin", "producer": "p"},
        {"op": "send", "producer": "p", "topic": "txn-acl", "records": [{"key": "k", "value": "v", "partition": 0}]},
        {"op": "commit", "producer": "p"}])
    assert all(step["ok"] for step in allowed), allowed
    consumed = java_clients.group(bootstrap, "g-guarded", ["txn-acl"], count=1,
                                  config={"isolation.level": "read_committed"})
    assert [r["value"] for r in consumed["records"]] == ["v"]
