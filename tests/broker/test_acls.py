"""ACLs in the broker core, without sockets: CreateAcls/DescribeAcls/DeleteAcls with Kafka's answers, and each
API family allowed vs denied with Kafka's codes, per principal (the request's ConnectionInfo says who asks).

Every request goes through the codec at a real version and every response is encoded at the same version.
"""

from __future__ import annotations

import re
import uuid

import pytest
from support.broker_calls import call

from kafkamock import records
from kafkamock.broker import Close, Cluster
from kafkamock.broker.errors import ErrorCode as E
from kafkamock.storage import DiskStorage

AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
ADMIN, ALICE, BOB = "User:admin", "User:alice", "User:bob"
# Kafka's codes: resource types, pattern types, operations, permissions.
ANY, TOPIC, GROUP, CLUSTER, TXN_ID = 1, 2, 3, 4, 5
MATCH, LITERAL, PREFIXED = 2, 3, 4
ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, \
    IDEMPOTENT_WRITE = 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12
DENY, ALLOW = 2, 3
NOT_ASKED = -2147483648


@pytest.fixture
def broker(clock):
    b = Cluster({"authorizer.class.name": AUTHORIZER, "super.users": ADMIN}, clock=clock)
    b.metadata.create_topic("t", 2, 1)
    b.metadata.create_topic("secret", 1, 1)
    return b


def creation(rtype, name, op, perm=ALLOW, principal=ALICE, pattern=LITERAL, host="*") -> dict:
    return {"resource_type": rtype, "resource_name": name, "resource_pattern_type": pattern, "principal": principal,
            "host": host, "operation": op, "permission_type": perm}


def grant(broker, *creations, as_=ADMIN):
    results = call(broker, "CreateAcls", 3, {"creations": list(creations)}, principal=as_).results
    return [(r.error_code, r.error_message) for r in results]


def any_filter(**kw) -> dict:
    f = {"resource_type_filter": ANY, "resource_name_filter": None, "pattern_type_filter": ANY,
         "principal_filter": None, "host_filter": None, "operation": ANY, "permission_type": ANY}
    f.update(kw)
    return f


def described(broker, as_=ADMIN, version=3, **kw):
    response = call(broker, "DescribeAcls", version, any_filter(**kw), principal=as_)
    return response.error_code, sorted((r.resource_type, r.resource_name, r.pattern_type, a.principal, a.host,
                                        a.operation, a.permission_type) for r in response.resources for a in r.acls)


# -- CreateAcls / DescribeAcls / DeleteAcls --------------------------------------------------------------------

def test_create_describe_delete_round_trip(broker):
    assert grant(broker, creation(TOPIC, "t", READ), creation(GROUP, "g", READ, principal="User:*"),
                 creation(TOPIC, "pre", WRITE, DENY, pattern=PREFIXED, host="10.0.0.1")) == [(E.NONE, None)] * 3
    assert grant(broker, creation(TOPIC, "t", READ)) == [(E.NONE, None)]         # again: a success, no copy
    code, acls = described(broker)
    assert code == E.NONE and len(acls) == 3
    assert described(broker, resource_type_filter=TOPIC, resource_name_filter="prefix-x", pattern_type_filter=MATCH
                     )[1] == [(TOPIC, "pre", PREFIXED, ALICE, "10.0.0.1", WRITE, DENY)]
    assert described(broker, principal_filter="User:*")[1] == [(GROUP, "g", LITERAL, "User:*", "*", READ, ALLOW)]
    deleted = call(broker, "DeleteAcls", 3, {"filters": [any_filter(resource_type_filter=TOPIC),
                                                         any_filter(operation=READ)]}, principal=ADMIN)
    matched = [sorted((m.resource_name, m.operation) for m in r.matching_acls) for r in deleted.filter_results]
    # both filters are judged before anything goes: the TOPIC/READ binding is listed under each
    assert matched == [[("pre", WRITE), ("t", READ)], [("g", READ), ("t", READ)]]
    assert described(broker) == (E.NONE, [])


def test_match_filter_finds_literal_wildcard_and_prefixes(broker):
    grant(broker, creation(TOPIC, "orders", READ), creation(TOPIC, "*", READ), creation(TOPIC, "ord", READ,
          pattern=PREFIXED), creation(TOPIC, "other", READ), creation(TOPIC, "orders", READ, pattern=PREFIXED))
    names = {(a[1], a[2]) for a in described(broker, resource_name_filter="orders", pattern_type_filter=MATCH)[1]}
    assert names == {("orders", LITERAL), ("*", LITERAL), ("ord", PREFIXED), ("orders", PREFIXED)}
    # ANY with a name: exact names only, of every pattern type; LITERAL: exact name and type
    assert {(a[1], a[2]) for a in described(broker, resource_name_filter="orders")[1]} == {
        ("orders", LITERAL), ("orders", PREFIXED)}
    assert {(a[1], a[2]) for a in described(broker, resource_name_filter="*", pattern_type_filter=LITERAL)[1]} == {
        ("*", LITERAL)}


@pytest.mark.parametrize(("bad", "message"), [
    (creation(CLUSTER, "my-cluster", ALTER), "The only valid name for the CLUSTER resource is kafka-cluster"),
    (creation(TOPIC, "", READ), "Invalid empty resource name"),
    (creation(ANY, "x", READ), "Invalid resourceType ANY"),
    (creation(TOPIC, "x", READ, pattern=MATCH), "Invalid patternType MATCH"),
    (creation(TOPIC, "x", 1), "Invalid operation ANY"),
    (creation(TOPIC, "x", READ, perm=1), "Invalid permissionType ANY"),
    (creation(TOPIC, "x", READ, principal="alice"), "Could not parse principal from `alice` (no colon is present "
                                                    "separating the principal type from the principal name)"),
])
def test_invalid_bindings_are_invalid_request_one_by_one(broker, bad, message):
    assert grant(broker, bad, creation(CLUSTER, "kafka-cluster", ALTER)) == [(E.INVALID_REQUEST, message),
                                                                            (E.NONE, None)]
    assert len(described(broker)[1]) == 1


def test_unknown_codes_close_the_connection_as_kafkas_parser_refuses_them(broker):
    assert isinstance(call(broker, "CreateAcls", 3, {"creations": [creation(99, "x", READ)]}, principal=ADMIN),
                      Close)
    assert isinstance(call(broker, "DescribeAcls", 3, any_filter(operation=0), principal=ADMIN), Close)
    assert isinstance(call(broker, "DeleteAcls", 3, {"filters": [any_filter(pattern_type_filter=9)]},
                           principal=ADMIN), Close)


def test_acl_apis_need_cluster_alter_or_describe(broker):
    # Kafka's AuthHelper.authorizeClusterOperation: the refusal names the request, its session and listener
    not_authorized = (r"^Request Request\(processor=0, connectionId=\S+-127\.0\.0\.1:50000-0-1, "
                      r"session=Session\(User:alice,/127\.0\.0\.1\), listenerName=ListenerName\(PLAINTEXT\), "
                      r"securityProtocol=PLAINTEXT, buffer=null, envelope=None\) is not authorized\.$")
    [(code, message)] = grant(broker, creation(TOPIC, "t", READ), as_=ALICE)
    assert code == E.CLUSTER_AUTHORIZATION_FAILED and re.match(not_authorized, message)
    refused = call(broker, "DescribeAcls", 3, any_filter(), principal=ALICE)
    assert refused.error_code == E.CLUSTER_AUTHORIZATION_FAILED and re.match(not_authorized, refused.error_message)
    assert not refused.resources
    grant(broker, creation(CLUSTER, "kafka-cluster", DESCRIBE))
    assert described(broker, as_=ALICE)[0] == E.NONE
    [(code, message)] = grant(broker, creation(TOPIC, "t", READ), as_=ALICE)
    assert code == E.CLUSTER_AUTHORIZATION_FAILED and re.match(not_authorized, message)
    deleted = call(broker, "DeleteAcls", 3, {"filters": [any_filter()]}, principal=ALICE)
    assert [r.error_code for r in deleted.filter_results] == [E.CLUSTER_AUTHORIZATION_FAILED]
    assert re.match(not_authorized, deleted.filter_results[0].error_message)
    grant(broker, creation(CLUSTER, "kafka-cluster", ALTER))
    assert grant(broker, creation(TOPIC, "t", READ, principal=BOB), as_=ALICE) == [(E.NONE, None)]


def test_without_an_authorizer_the_acl_apis_are_security_disabled(clock):
    broker = Cluster(clock=clock)
    assert grant(broker, creation(TOPIC, "t", READ)) == [(E.SECURITY_DISABLED, "No Authorizer is configured.")]
    response = call(broker, "DescribeAcls", 1, any_filter())
    assert (response.error_code, response.error_message) == (E.SECURITY_DISABLED,
                                                             "No Authorizer is configured on the broker")
    deleted = call(broker, "DeleteAcls", 2, {"filters": [any_filter()]})
    assert [(r.error_code, r.error_message) for r in deleted.filter_results] == [
        (E.SECURITY_DISABLED, "No Authorizer is configured.")]


def test_the_acl_apis_are_advertised_at_kafkas_versions(broker):
    versions = {k.api_key: (k.min_version, k.max_version) for k in call(broker, "ApiVersions", 3, {
        "client_software_name": "t", "client_software_version": "1"}).api_keys}
    assert versions[29] == versions[30] == versions[31] == (1, 3)


def test_acls_survive_a_restart_with_log_dirs(tmp_path, clock):
    config = {"authorizer.class.name": AUTHORIZER, "log.dirs": str(tmp_path)}
    broker = Cluster(config, clock=clock, storage=DiskStorage(tmp_path))
    broker.config.set("super.users", ADMIN, static=True)
    grant(broker, creation(TOPIC, "t", READ), creation(GROUP, "g", DESCRIBE, DENY, pattern=PREFIXED))
    broker.close()
    again = Cluster({**config, "super.users": ADMIN}, clock=clock, storage=DiskStorage(tmp_path))
    assert described(again) == described(broker)
    assert len(described(again)[1]) == 2


def test_acls_are_cluster_wide(clock):
    broker = Cluster({"authorizer.class.name": AUTHORIZER, "super.users": ADMIN}, clock=clock, brokers=3)
    broker.metadata.create_topic("t", 3, 1)
    grant(broker, creation(TOPIC, "t", READ))
    for node_id in broker.metadata.nodes:
        response = call(broker, "DescribeAcls", 3, any_filter(), principal=ADMIN, node_id=node_id)
        assert len(response.resources) == 1
        assert meta_codes(broker, ["t"], ALICE, node_id=node_id) == {"t": E.NONE}


def test_alias_and_bad_settings():
    Cluster({"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer"})
    with pytest.raises(ValueError, match="authorizer.class.name"):
        Cluster({"authorizer.class.name": "com.example.MyAuthorizer"})
    with pytest.raises(ValueError, match="super.users"):
        Cluster({"super.users": "admin"})


# -- the data path ----------------------------------------------------------------------------------------------

def produce(broker, principal, topic="t", transactional_id=None, batch=None, version=9):
    data = batch or records.encode_batch([{"value": b"v", "timestamp": broker.now_ms()}])
    response = call(broker, "Produce", version, {"transactional_id": transactional_id, "acks": -1, "timeout_ms": 1000,
                                                 "topic_data": [{"name": topic, "partition_data": [
                                                     {"index": 0, "records": data}]}]}, principal=principal)
    return response.responses[0].partition_responses[0].error_code


def fetch(broker, principal, topic="t"):
    response = call(broker, "Fetch", 12, {
        "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1_000_000, "session_epoch": -1,
        "topics": [{"topic": topic, "partitions": [
            {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1_000_000}]}]}, principal=principal)
    return response.responses[0].partitions[0].error_code


def list_offsets(broker, principal, topic="t"):
    response = call(broker, "ListOffsets", 7, {"replica_id": -1, "topics": [
        {"name": topic, "partitions": [{"partition_index": 0, "timestamp": -1}]}]}, principal=principal)
    return response.topics[0].partitions[0].error_code


def test_produce_fetch_list_offsets_need_write_read_describe(broker):
    assert (produce(broker, ALICE), fetch(broker, ALICE), list_offsets(broker, ALICE)) == (
        E.TOPIC_AUTHORIZATION_FAILED,) * 3
    assert produce(broker, ALICE, topic="nope") == E.TOPIC_AUTHORIZATION_FAILED   # existence is not disclosed
    grant(broker, creation(TOPIC, "t", WRITE))
    assert produce(broker, ALICE) == E.NONE
    assert list_offsets(broker, ALICE) == E.NONE               # WRITE implies DESCRIBE
    assert fetch(broker, ALICE) == E.TOPIC_AUTHORIZATION_FAILED
    grant(broker, creation(TOPIC, "t", READ))
    assert fetch(broker, ALICE) == E.NONE
    assert (produce(broker, BOB), fetch(broker, BOB)) == (E.TOPIC_AUTHORIZATION_FAILED,) * 2
    assert (produce(broker, ADMIN), fetch(broker, ADMIN)) == (E.NONE, E.NONE)   # super user


def test_deny_wins_over_allow_and_hosts_match(broker):
    grant(broker, creation(TOPIC, "*", ALL, principal="User:*"), creation(TOPIC, "sec", WRITE, DENY,
                                                                         pattern=PREFIXED, host="10.9.9.9"))
    assert produce(broker, BOB) == produce(broker, ALICE) == E.NONE
    assert call(broker, "Produce", 9, {"acks": -1, "timeout_ms": 1, "topic_data": [{"name": "secret",
                "partition_data": [{"index": 0, "records": records.encode_batch([{"value": b"v"}])}]}]},
                principal=ALICE, host="10.9.9.9").responses[0].partition_responses[0].error_code == \
        E.TOPIC_AUTHORIZATION_FAILED
    assert produce(broker, ALICE, topic="secret") == E.NONE      # another host
    grant(broker, creation(TOPIC, "secret", READ, DENY))
    assert fetch(broker, ALICE, topic="secret") == E.TOPIC_AUTHORIZATION_FAILED
    assert list_offsets(broker, ALICE, topic="secret") == E.NONE   # a DENY of READ does not deny DESCRIBE


def test_transactional_produce_needs_write_on_the_transactional_id(broker):
    batch = records.encode_batch([{"value": b"v", "timestamp": broker.now_ms()}], producer_id=5, producer_epoch=0,
                                 base_sequence=0, transactional=True)
    grant(broker, creation(TOPIC, "t", WRITE))
    response = call(broker, "Produce", 9, {"transactional_id": "tx", "acks": -1, "timeout_ms": 1000, "topic_data": [
        {"name": "t", "partition_data": [{"index": 0, "records": batch}, {"index": 1, "records": batch}]}]},
        principal=ALICE)
    assert [p.error_code for p in response.responses[0].partition_responses] == [
        E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED] * 2
    grant(broker, creation(TXN_ID, "tx", WRITE))
    assert produce(broker, ALICE, transactional_id="tx", batch=batch) != E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


def meta_codes(broker, names, principal, *, version=12, node_id=None, auto_create=False):
    topics = None if names is None else [{"name": n} for n in names]
    response = call(broker, "Metadata", version, {"topics": topics, "allow_auto_topic_creation": auto_create,
                                                  "include_topic_authorized_operations": False},
                    principal=principal, node_id=node_id)
    return {t.name: t.error_code for t in response.topics}


def test_metadata_omits_or_denies_undescribable_topics(broker):
    grant(broker, creation(TOPIC, "t", DESCRIBE))
    listed = meta_codes(broker, None, ALICE)
    assert listed == {"t": E.NONE}                                 # "secret" and the internal topics left out
    assert meta_codes(broker, ["t", "secret", "nope"], ALICE) == {
        "t": E.NONE, "secret": E.TOPIC_AUTHORIZATION_FAILED, "nope": E.TOPIC_AUTHORIZATION_FAILED}
    secret_id = broker.metadata.topics["secret"].topic_id
    by_id = call(broker, "Metadata", 12, {"topics": [{"topic_id": secret_id, "name": None}],
                                          "allow_auto_topic_creation": False,
                                          "include_topic_authorized_operations": False}, principal=ALICE).topics
    assert [(t.name, t.topic_id, t.error_code) for t in by_id] == [(None, secret_id, E.TOPIC_AUTHORIZATION_FAILED)]


def test_metadata_null_name_without_id_under_prefixed_acls(broker):
    """A v12 topic with a null name and no id is authorized as the empty name: a PREFIXED ACL matches no null
    name (the authorizer once called None.startswith, and the request cost its connection)."""
    grant(broker, creation(TOPIC, "t", DESCRIBE, pattern=PREFIXED), creation(TOPIC, "t", CREATE, pattern=PREFIXED))
    for auto_create in (False, True):
        assert meta_codes(broker, [None], ALICE, auto_create=auto_create) == {None: E.TOPIC_AUTHORIZATION_FAILED}
    assert meta_codes(broker, [None], ADMIN) == {None: E.INVALID_TOPIC_EXCEPTION}     # as it always was


def test_metadata_auto_creation_needs_create(broker):
    grant(broker, creation(TOPIC, "auto-", DESCRIBE, pattern=PREFIXED))
    assert meta_codes(broker, ["auto-1"], ALICE, auto_create=True) == {"auto-1": E.TOPIC_AUTHORIZATION_FAILED}
    assert "auto-1" not in broker.metadata.topics
    grant(broker, creation(TOPIC, "auto-", CREATE, pattern=PREFIXED))
    # As Kafka 4: the request that creates the topic is answered UNKNOWN_TOPIC_OR_PARTITION, the next sees it.
    assert meta_codes(broker, ["auto-1"], ALICE, auto_create=True) == {"auto-1": E.UNKNOWN_TOPIC_OR_PARTITION}
    assert meta_codes(broker, ["auto-1"], ALICE, auto_create=True) == {"auto-1": E.NONE}
    grant(broker, creation(CLUSTER, "kafka-cluster", CREATE, principal=BOB), creation(TOPIC, "*", DESCRIBE, principal=BOB))
    assert meta_codes(broker, ["bobs"], BOB, auto_create=True) == {"bobs": E.UNKNOWN_TOPIC_OR_PARTITION}
    assert "bobs" in broker.metadata.topics


def test_authorized_operations_bit_fields(broker):
    grant(broker, creation(TOPIC, "t", READ), creation(TOPIC, "t", ALTER_CONFIGS), creation(CLUSTER, "kafka-cluster",
                                                                                          DESCRIBE))
    response = call(broker, "Metadata", 10, {"topics": [{"name": "t"}], "allow_auto_topic_creation": False,
                                             "include_cluster_authorized_operations": True,
                                             "include_topic_authorized_operations": True}, principal=ALICE)
    # READ (3) implies DESCRIBE (8), ALTER_CONFIGS (11) implies DESCRIBE_CONFIGS (10)
    assert response.topics[0].topic_authorized_operations == (1 << 3) | (1 << 8) | (1 << 10) | (1 << 11)
    assert response.cluster_authorized_operations == 1 << 8
    cluster = call(broker, "DescribeCluster", 1, {"include_cluster_authorized_operations": True}, principal=BOB)
    assert cluster.cluster_authorized_operations == 0                      # no DESCRIBE on the cluster
    cluster = call(broker, "DescribeCluster", 1, {"include_cluster_authorized_operations": True}, principal=ADMIN)
    assert cluster.cluster_authorized_operations == sum(1 << op for op in (5, 7, 8, 9, 10, 11, 12))
    cluster = call(broker, "DescribeCluster", 1, {"include_cluster_authorized_operations": False}, principal=ADMIN)
    assert cluster.cluster_authorized_operations == NOT_ASKED
    topics = call(broker, "DescribeTopicPartitions", 0, {"topics": [{"name": "t"}, {"name": "secret"}],
                                                         "response_partition_limit": 100}, principal=ALICE).topics
    assert {t.name: (t.error_code, t.topic_authorized_operations) for t in topics} == {
        "t": (E.NONE, (1 << 3) | (1 << 8) | (1 << 10) | (1 << 11)),
        "secret": (E.TOPIC_AUTHORIZATION_FAILED, NOT_ASKED)}


# -- groups -------------------------------------------------------------------------------------------------

def test_group_apis_need_group_and_topic_rights(broker):
    def commit(principal):
        return call(broker, "OffsetCommit", 8, {"group_id": "g", "generation_id_or_member_epoch": -1,
                                                "member_id": "", "group_instance_id": None, "topics": [
                                                    {"name": "t", "partitions": [{"partition_index": 0,
                                                                                  "committed_offset": 1}]}]},
                    principal=principal).topics[0].partitions[0].error_code

    def offsets(principal, topics):
        group = call(broker, "OffsetFetch", 8, {"groups": [{"group_id": "g", "topics": topics}],
                                                "require_stable": False}, principal=principal).groups[0]
        return group.error_code, {(t.name, p.error_code) for t in group.topics for p in t.partitions}

    def find(principal, key_type, key):
        return call(broker, "FindCoordinator", 4, {"key_type": key_type, "coordinator_keys": [key]},
                    principal=principal).coordinators[0].error_code

    assert commit(ALICE) == E.GROUP_AUTHORIZATION_FAILED
    assert find(ALICE, 0, "g") == E.GROUP_AUTHORIZATION_FAILED
    assert find(ALICE, 1, "tx") == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    assert offsets(ALICE, None) == (E.GROUP_AUTHORIZATION_FAILED, set())
    grant(broker, creation(GROUP, "g", READ))
    assert find(ALICE, 0, "g") == E.NONE                            # READ implies DESCRIBE
    assert commit(ALICE) == E.TOPIC_AUTHORIZATION_FAILED
    grant(broker, creation(TOPIC, "t", READ))
    assert commit(ALICE) == E.NONE
    call(broker, "OffsetCommit", 8, {"group_id": "g", "generation_id_or_member_epoch": -1, "member_id": "",
                                     "group_instance_id": None, "topics": [{"name": "secret", "partitions": [
                                         {"partition_index": 0, "committed_offset": 1}]}]}, principal=ADMIN)
    assert offsets(ALICE, None) == (E.NONE, {("t", E.NONE)})       # "secret" left out of "all"
    assert offsets(ALICE, [{"name": "secret", "partition_indexes": [0]}]) == (
        E.NONE, {("secret", E.TOPIC_AUTHORIZATION_FAILED)})
    heartbeat = call(broker, "Heartbeat", 4, {"group_id": "other", "generation_id": 1, "member_id": "m",
                                              "group_instance_id": None}, principal=ALICE)
    assert heartbeat.error_code == E.GROUP_AUTHORIZATION_FAILED
    join = call(broker, "JoinGroup", 9, {"group_id": "other", "session_timeout_ms": 10000,
                                         "rebalance_timeout_ms": 10000, "member_id": "", "group_instance_id": None,
                                         "protocol_type": "consumer", "protocols": [], "reason": None},
                principal=ALICE)
    assert join.error_code == E.GROUP_AUTHORIZATION_FAILED
    deleted = call(broker, "DeleteGroups", 2, {"groups_names": ["g"]}, principal=ALICE).results
    assert deleted[0].error_code == E.GROUP_AUTHORIZATION_FAILED      # READ does not give DELETE
    described_groups = call(broker, "DescribeGroups", 5, {"groups": ["g", "other"],
                                                          "include_authorized_operations": True}, principal=ALICE)
    assert [(g.group_id, g.error_code, g.authorized_operations) for g in described_groups.groups] == [
        ("g", E.NONE, (1 << 3) | (1 << 8)), ("other", E.GROUP_AUTHORIZATION_FAILED, NOT_ASKED)]


def test_consumer_group_heartbeat_needs_describe_on_subscribed_topics(broker):
    def heartbeat(topics):
        return call(broker, "ConsumerGroupHeartbeat", 0, {
            "group_id": "cg", "member_id": str(uuid.uuid4()), "member_epoch": 0, "instance_id": None,
            "rack_id": None, "rebalance_timeout_ms": 30000, "subscribed_topic_names": topics, "server_assignor": None,
            "topic_partitions": []}, principal=ALICE).error_code
    assert heartbeat(["t"]) == E.GROUP_AUTHORIZATION_FAILED
    grant(broker, creation(GROUP, "cg", READ))
    assert heartbeat(["t", "secret"]) == E.TOPIC_AUTHORIZATION_FAILED
    grant(broker, creation(TOPIC, "t", DESCRIBE))
    assert heartbeat(["t"]) == E.NONE



def test_regex_subscriptions_resolve_to_describable_topics_only(broker, clock):
    """Kafka's TopicRegexResolver: a regular expression matches only the topics the heartbeating member may
    DESCRIBE. The resolution runs after the heartbeat that asks for it (Kafka resolves in the background); an ACL
    granted later is taken in at the next refresh (group.consumer.regex.refresh.interval.ms, ten minutes), as a
    grant alone does not start one."""
    broker.metadata.create_topic("t-extra", 1, 1)
    grant(broker, creation(GROUP, "rx", READ), creation(TOPIC, "t", DESCRIBE))
    member_id, epoch = str(uuid.uuid4()), 0

    def heartbeat():
        nonlocal epoch
        answer = call(broker, "ConsumerGroupHeartbeat", 1, {
            "group_id": "rx", "member_id": member_id, "member_epoch": epoch, "instance_id": None, "rack_id": None,
            "rebalance_timeout_ms": 30000, "subscribed_topic_names": [], "subscribed_topic_regex": "t.*|secret",
            "server_assignor": None, "topic_partitions": [] if epoch == 0 else None}, principal=ALICE)
        assert answer.error_code == E.NONE, answer
        epoch = answer.member_epoch
        names = {t.topic_id: n for n, t in broker.metadata.topics.items()}
        return {(names[tp.topic_id], p) for tp in answer.assignment.topic_partitions for p in tp.partitions} \
            if answer.assignment is not None else None

    assert heartbeat() == set()                        # joined; the regex is not resolved yet
    broker.tick()
    assert heartbeat() == {("t", 0), ("t", 1)}
    grant(broker, creation(TOPIC, "secret", DESCRIBE), creation(TOPIC, "t-extra", DESCRIBE))
    for _ in range(20):                                # ten minutes, heartbeating: nothing new yet
        clock.advance(30_000)
        broker.tick()
        assert heartbeat() is None
    clock.advance(1)
    assert heartbeat() is None                         # past the refresh interval: this one starts it
    broker.tick()
    assert heartbeat() == {("t", 0), ("t", 1), ("secret", 0), ("t-extra", 0)}
    group = broker.groups.groups["rx"]
    assert group.regexes["t.*|secret"].topics == {"t", "t-extra", "secret"}


# -- transactions ---------------------------------------------------------------------------------------------

def test_init_producer_id_rules(broker):
    def init(principal, transactional_id=None):
        return call(broker, "InitProducerId", 4, {"transactional_id": transactional_id, "transaction_timeout_ms": 60000,
                                                  "producer_id": -1, "producer_epoch": -1},
                    principal=principal).error_code
    assert init(ALICE) == E.CLUSTER_AUTHORIZATION_FAILED
    assert init(ALICE, "tx") == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    grant(broker, creation(TOPIC, "any-", WRITE, pattern=PREFIXED))           # WRITE on some topic is enough
    assert init(ALICE) == E.NONE
    grant(broker, creation(TOPIC, "any", WRITE, DENY, pattern=PREFIXED))      # ... unless a DENY dominates it
    assert init(ALICE) == E.CLUSTER_AUTHORIZATION_FAILED
    grant(broker, creation(CLUSTER, "kafka-cluster", IDEMPOTENT_WRITE))
    assert init(ALICE) == E.NONE
    grant(broker, creation(TXN_ID, "tx", WRITE))
    assert init(ALICE, "tx") == E.NONE


def test_transaction_apis_need_the_transactional_id(broker):
    def end(principal):
        return call(broker, "EndTxn", 4, {"transactional_id": "tx", "producer_id": 1, "producer_epoch": 0,
                                          "committed": True}, principal=principal).error_code

    def add_partitions(principal):
        r = call(broker, "AddPartitionsToTxn", 3, {"v3_and_below_transactional_id": "tx",
                                                   "v3_and_below_producer_id": 1, "v3_and_below_producer_epoch": 0,
                                                   "v3_and_below_topics": [{"name": "t", "partitions": [0]},
                                                                           {"name": "secret", "partitions": [0]}]},
                 principal=principal)
        return {(t.name, p.partition_error_code) for t in r.results_by_topic_v3_and_below for p in t.results_by_partition}

    def add_offsets(principal):
        return call(broker, "AddOffsetsToTxn", 3, {"transactional_id": "tx", "producer_id": 1, "producer_epoch": 0,
                                                   "group_id": "g"}, principal=principal).error_code

    assert end(ALICE) == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    assert add_offsets(ALICE) == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    assert add_partitions(ALICE) == {("t", E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
                                     ("secret", E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)}
    grant(broker, creation(TXN_ID, "tx", WRITE), creation(TOPIC, "t", WRITE))
    assert end(ALICE) != E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    assert add_offsets(ALICE) == E.GROUP_AUTHORIZATION_FAILED
    assert add_partitions(ALICE) == {("t", E.OPERATION_NOT_ATTEMPTED), ("secret", E.TOPIC_AUTHORIZATION_FAILED)}
    markers = call(broker, "WriteTxnMarkers", 1, {"markers": [{"producer_id": 1, "producer_epoch": 0,
                                                               "transaction_result": True, "topics": [
                                                                   {"name": "t", "partition_indexes": [0]}],
                                                               "coordinator_epoch": 0}]}, principal=ALICE)
    assert markers.markers[0].topics[0].partitions[0].error_code == E.CLUSTER_AUTHORIZATION_FAILED
    described_txns = call(broker, "DescribeTransactions", 0, {"transactional_ids": ["tx", "other"]},
                          principal=ALICE).transaction_states
    assert [s.error_code for s in described_txns][1] == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


# -- admin ------------------------------------------------------------------------------------------------------

def test_topic_admin_apis(broker):
    created = call(broker, "CreateTopics", 7, {"topics": [
        {"name": "new", "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}],
        "timeout_ms": 1000, "validate_only": False}, principal=ALICE).topics[0]
    assert (created.error_code, created.error_message) == (E.TOPIC_AUTHORIZATION_FAILED, "Authorization failed.")
    grant(broker, creation(TOPIC, "new", CREATE))
    created = call(broker, "CreateTopics", 7, {"topics": [
        {"name": "new", "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}],
        "timeout_ms": 1000, "validate_only": False}, principal=ALICE).topics[0]
    assert (created.error_code, created.topic_config_error_code, created.configs) == (
        E.NONE, E.TOPIC_AUTHORIZATION_FAILED, None)              # configs need DESCRIBE_CONFIGS
    grown = call(broker, "CreatePartitions", 3, {"topics": [{"name": "new", "count": 2, "assignments": None}],
                                                 "timeout_ms": 1000, "validate_only": False}, principal=ALICE)
    assert grown.results[0].error_code == E.TOPIC_AUTHORIZATION_FAILED
    deleted = call(broker, "DeleteTopics", 6, {"topics": [{"name": "new", "topic_id": uuid.UUID(int=0)},
                                                         {"name": "ghost", "topic_id": uuid.UUID(int=0)}],
                                               "timeout_ms": 1000}, principal=ALICE).responses
    assert {(r.name, r.error_code) for r in deleted} == {("new", E.TOPIC_AUTHORIZATION_FAILED),
                                                         ("ghost", E.TOPIC_AUTHORIZATION_FAILED)}
    grant(broker, creation(TOPIC, "new", DELETE))
    deleted = call(broker, "DeleteTopics", 6, {"topics": [{"name": "new", "topic_id": uuid.UUID(int=0)}],
                                               "timeout_ms": 1000}, principal=ALICE).responses
    assert deleted[0].error_code == E.NONE
    records_deleted = call(broker, "DeleteRecords", 2, {"topics": [{"name": "t", "partitions": [
        {"partition_index": 0, "offset": 0}]}], "timeout_ms": 1000}, principal=ALICE)
    assert records_deleted.topics[0].partitions[0].error_code == E.TOPIC_AUTHORIZATION_FAILED


def test_config_apis(broker):
    grant(broker, creation(TOPIC, "t", ALTER_CONFIGS))
    results = call(broker, "DescribeConfigs", 4, {"resources": [
        {"resource_type": 2, "resource_name": "t", "configuration_keys": None},
        {"resource_type": 2, "resource_name": "secret", "configuration_keys": None},
        {"resource_type": 4, "resource_name": "1", "configuration_keys": None}],
        "include_synonyms": False, "include_documentation": False}, principal=ALICE).results
    assert [(r.error_code, r.error_message) for r in results] == [
        (E.NONE, ""), (E.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed."),
        (E.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.")]
    altered = call(broker, "IncrementalAlterConfigs", 1, {"resources": [
        {"resource_type": 2, "resource_name": "t", "configs": [
            {"name": "retention.ms", "config_operation": 0, "value": "1000"}]},
        {"resource_type": 32, "resource_name": "g", "configs": [
            {"name": "consumer.session.timeout.ms", "config_operation": 0, "value": "50000"}]}],
        "validate_only": False}, principal=ALICE).responses
    assert [r.error_code for r in altered] == [E.NONE, E.GROUP_AUTHORIZATION_FAILED]
    assert broker.metadata.topics["t"].configs["retention.ms"] == 1000


def test_client_quota_apis_need_cluster_describe_or_alter_configs(broker):
    quota = {"entries": [{"entity": [{"entity_type": "user", "entity_name": "alice"}],
                          "ops": [{"key": "producer_byte_rate", "value": 1024.0, "remove": False}]}],
             "validate_only": False}
    describe = {"components": [{"entity_type": "user", "match_type": 0, "match": "alice"}], "strict": False}
    denied = call(broker, "AlterClientQuotas", 1, quota, principal=ALICE)
    assert [e.error_code for e in denied.entries] == [E.CLUSTER_AUTHORIZATION_FAILED]
    assert call(broker, "DescribeClientQuotas", 1, describe, principal=ALICE).error_code == \
        E.CLUSTER_AUTHORIZATION_FAILED
    assert grant(broker, creation(CLUSTER, "kafka-cluster", ALTER_CONFIGS)) == [(E.NONE, None)]
    assert [e.error_code for e in call(broker, "AlterClientQuotas", 1, quota, principal=ALICE).entries] == [E.NONE]
    # ALTER_CONFIGS implies DESCRIBE_CONFIGS, as in Kafka.
    answer = call(broker, "DescribeClientQuotas", 1, describe, principal=ALICE)
    assert answer.error_code == E.NONE and [v.key for e in answer.entries for v in e["values"]] == ["producer_byte_rate"]


def test_scram_credential_apis_need_cluster_alter_or_describe(broker):
    upsert = {"deletions": [], "upsertions": [{"name": "carol", "mechanism": 2, "iterations": 4096,
                                               "salt": b"s" * 16, "salted_password": b"p" * 64}]}
    denied = call(broker, "AlterUserScramCredentials", 0, upsert, principal=ALICE)
    assert [(r.user, r.error_code) for r in denied.results] == [("carol", E.CLUSTER_AUTHORIZATION_FAILED)]
    assert call(broker, "DescribeUserScramCredentials", 0, {"users": None}, principal=ALICE).error_code == \
        E.CLUSTER_AUTHORIZATION_FAILED
    assert [r.error_code for r in call(broker, "AlterUserScramCredentials", 0, upsert, principal=ADMIN).results] == [
        E.NONE]
    assert grant(broker, creation(CLUSTER, "kafka-cluster", DESCRIBE)) == [(E.NONE, None)]
    described = call(broker, "DescribeUserScramCredentials", 0, {"users": None}, principal=ALICE)
    assert described.error_code == E.NONE and [r.user for r in described.results] == ["carol"]


def test_share_group_describe_hides_members_assigned_topics_the_principal_may_not_describe(broker, clock):
    """ShareGroupDescribe as Kafka's handler filters it: with DESCRIBE on the group only, a group whose member is
    assigned a topic the principal may not describe is TOPIC_AUTHORIZATION_FAILED with no members; with DESCRIBE
    on the topic too it is described, its authorized operations filled in when asked."""
    def beat(epoch):
        answer = call(broker, "ShareGroupHeartbeat", 1, {"group_id": "sg", "member_id": "m", "member_epoch": epoch,
                                                         "rack_id": None, "subscribed_topic_names": ["secret"]},
                      principal=ADMIN)
        assert answer.error_code == E.NONE
        return answer

    def describe(operations=False):
        return call(broker, "ShareGroupDescribe", 1, {"group_ids": ["sg"], "include_authorized_operations": operations},
                    principal=ALICE).groups[0]

    epoch = beat(0).member_epoch
    epoch = beat(epoch).member_epoch                   # the share state is initialized now
    clock.advance(1000)                                # past share.assignment.interval.ms: the partition is assigned
    assert beat(epoch).assignment is not None
    assert describe().error_code == E.GROUP_AUTHORIZATION_FAILED
    grant(broker, creation(GROUP, "sg", DESCRIBE))
    refused = describe(operations=True)
    assert (refused.error_code, refused.error_message, refused.members) == (
        E.TOPIC_AUTHORIZATION_FAILED,
        "The group has described topic(s) that the client is not authorized to describe.", [])
    assert refused.authorized_operations == 1 << DESCRIBE
    grant(broker, creation(TOPIC, "secret", DESCRIBE))
    described = describe()
    assert (described.error_code, [m.member_id for m in described.members]) == (E.NONE, ["m"])
    assert [tp.topic_name for tp in described.members[0].assignment.topic_partitions] == ["secret"]
    assert described.authorized_operations == NOT_ASKED
    assert describe(operations=True).authorized_operations == 1 << DESCRIBE
