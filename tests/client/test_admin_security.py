"""kafkamock's Admin client's ACL, client-quota and SCRAM-credential calls against a real broker over sockets: every
change checked through the matching describe, by another client (confluent-kafka's AdminClient lists the ACLs our
Admin created and the other way round; a librdkafka producer is refused and let through by them; librdkafka
authenticates with SCRAM credentials our Admin upserted, and no longer once they are deleted), and the errors
Kafka answers with, per binding, filter, entity or user as Java's Admin reports them.
"""

from __future__ import annotations

import time

import confluent_kafka
import confluent_kafka.admin as cka
import pytest
import trio

from kafkamock.client import KafkaError
from kafkamock.client.admin import (
    AccessControlEntry,
    AccessControlEntryFilter,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AclResourceType,
    Admin,
    ClientQuotaAlteration,
    ClientQuotaEntity,
    ClientQuotaFilter,
    ClientQuotaFilterComponent,
    ConfigResource,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)
from kafkamock.client.blocking import Admin as BlockingAdmin
from kafkamock.errors import ErrorCode as E

AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
WITH_AUTHORIZER = {"authorizer.class.name": AUTHORIZER, "super.users": "User:ANONYMOUS"}
# a resource without ACLs is open, so an ACL for someone else closes it to the anonymous clients
OPEN_UNLESS_GUARDED = {"authorizer.class.name": AUTHORIZER, "allow.everyone.if.no.acl.found": "true"}
SCRAM_LISTENERS = {"listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
                   "sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512"}
DEADLINE_S = 15.0
SHA256, SHA512 = ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512
USER, CLIENT_ID = ClientQuotaEntity.USER, ClientQuotaEntity.CLIENT_ID


def admin_for(broker, bootstrap: str | None = None) -> Admin:
    return Admin({"bootstrap.servers": bootstrap or broker.bootstrap_servers, "default.api.timeout.ms": 10_000})


async def in_thread(fn, *args, **kwargs):
    """Broker-handle and confluent calls block: run them off the trio thread."""
    return await trio.to_thread.run_sync(lambda: fn(*args, **kwargs))


def acl(rtype: AclResourceType, name: str, principal: str, op: AclOperation,
        permission: AclPermissionType = AclPermissionType.ALLOW, pattern: PatternType = PatternType.LITERAL,
        host: str = "*") -> AclBinding:
    return AclBinding(ResourcePattern(rtype, name, pattern), AccessControlEntry(principal, host, op, permission))


def deleted(results) -> list[AclBinding]:
    assert all(r.error is None for r in results), results
    return [r.binding for r in results]


# -- ACLs -------------------------------------------------------------------------------------------------------------

ALICE_READS = acl(AclResourceType.TOPIC, "orders", "User:alice", AclOperation.READ)
BOB_DENIED = acl(AclResourceType.TOPIC, "orders-", "User:bob", AclOperation.WRITE, AclPermissionType.DENY,
                 PatternType.PREFIXED)
ANYONE_DESCRIBES = acl(AclResourceType.TOPIC, "*", "User:*", AclOperation.DESCRIBE)
GROUP_READ = acl(AclResourceType.GROUP, "g1", "User:alice", AclOperation.READ)
OPS_ALTER = acl(AclResourceType.CLUSTER, "kafka-cluster", "User:ops", AclOperation.ALTER, host="10.0.0.1")
CREATED = [ALICE_READS, BOB_DENIED, ANYONE_DESCRIBES, GROUP_READ, OPS_ALTER]


@pytest.mark.trio
@pytest.mark.kafkamock(config=WITH_AUTHORIZER)
async def test_acls_create_describe_by_filter_and_delete(kafka_broker):
    no_colon = acl(AclResourceType.TOPIC, "t", "alice", AclOperation.READ)
    wrong_cluster = acl(AclResourceType.CLUSTER, "my-cluster", "User:ops", AclOperation.ALTER)
    unknown_op = acl(AclResourceType.TOPIC, "t", "User:alice", AclOperation.UNKNOWN)
    async with admin_for(kafka_broker) as admin:
        results = await admin.create_acls([*CREATED, no_colon, wrong_cluster, unknown_op, ALICE_READS])
        assert list(results) == [*CREATED, no_colon, wrong_cluster, unknown_op]     # one result per binding
        assert all(results[b] is None for b in CREATED)
        assert results[no_colon].code == E.INVALID_REQUEST and "Could not parse principal" in str(results[no_colon])
        assert results[wrong_cluster].code == E.INVALID_REQUEST and "kafka-cluster" in str(results[wrong_cluster])
        # refused before sending, as Java refuses it (the broker would close the connection on an UNKNOWN code)
        assert results[unknown_op].code == E.INVALID_REQUEST
        assert "Invalid ACL creation: Operation is UNKNOWN" in str(results[unknown_op])
        with pytest.raises(KafkaError) as first:
            results.all()
        assert first.value.code == E.INVALID_REQUEST

        assert set(await admin.describe_acls()) == set(CREATED)
        assert set(await admin.describe_acls(AclBindingFilter.ANY)) == set(CREATED)

        async def described(**pattern_or_entry) -> set[AclBinding]:
            pattern = {k: v for k, v in pattern_or_entry.items() if k in ("resource_type", "name", "pattern_type")}
            entry = {k: v for k, v in pattern_or_entry.items() if k not in pattern}
            return set(await admin.describe_acls(AclBindingFilter(ResourcePatternFilter(**pattern),
                                                                  AccessControlEntryFilter(**entry))))

        assert await described(resource_type=AclResourceType.GROUP) == {GROUP_READ}
        assert await described(resource_type=AclResourceType.CLUSTER) == {OPS_ALTER}
        assert await described(name="orders") == {ALICE_READS}
        assert await described(pattern_type=PatternType.PREFIXED) == {BOB_DENIED}
        # MATCH: the patterns that apply to topic orders-eu: the prefix orders- and the literal wildcard
        assert await described(resource_type=AclResourceType.TOPIC, name="orders-eu",
                               pattern_type=PatternType.MATCH) == {BOB_DENIED, ANYONE_DESCRIBES}
        assert await described(resource_type=AclResourceType.TOPIC, name="orders",
                               pattern_type=PatternType.MATCH) == {ALICE_READS, ANYONE_DESCRIBES}
        assert await described(principal="User:alice") == {ALICE_READS, GROUP_READ}
        assert await described(host="10.0.0.1") == {OPS_ALTER}
        assert await described(operation=AclOperation.WRITE) == {BOB_DENIED}
        assert await described(permission_type=AclPermissionType.DENY) == {BOB_DENIED}
        assert await described(name="nothing-here") == set()
        with pytest.raises(KafkaError) as unknown:
            await described(pattern_type=PatternType.UNKNOWN)
        assert unknown.value.code == E.INVALID_REQUEST

        topics = AclBindingFilter(ResourcePatternFilter(AclResourceType.TOPIC))
        alice = AclBindingFilter(entry_filter=AccessControlEntryFilter(principal="User:alice"))
        nothing = AclBindingFilter(ResourcePatternFilter(name="nothing-here"))
        gone = await admin.delete_acls([topics, alice, nothing])
        assert set(deleted(gone[topics])) == {ALICE_READS, BOB_DENIED, ANYONE_DESCRIBES}
        # judged against the set before the request: ALICE_READS is listed under both filters
        assert set(deleted(gone[alice])) == {ALICE_READS, GROUP_READ}
        assert gone[nothing] == []
        assert await admin.describe_acls() == [OPS_ALTER]

        unknown_filter = AclBindingFilter(entry_filter=AccessControlEntryFilter(operation=AclOperation.UNKNOWN))
        refused = await admin.delete_acls([unknown_filter, AclBindingFilter.ANY])
        assert {f: e.code for f, e in refused.items()} == {unknown_filter: E.INVALID_REQUEST,
                                                           AclBindingFilter.ANY: E.INVALID_REQUEST}
        assert await admin.describe_acls() == [OPS_ALTER]                   # nothing was sent


def test_acl_values_refuse_what_java_refuses():
    with pytest.raises(ValueError, match="resource_type must not be ANY"):
        ResourcePattern(AclResourceType.ANY, "t")
    with pytest.raises(ValueError, match="pattern_type must not be MATCH"):
        ResourcePattern(AclResourceType.TOPIC, "t", PatternType.MATCH)
    with pytest.raises(ValueError, match="operation must not be ANY"):
        AccessControlEntry("User:a", "*", AclOperation.ANY, AclPermissionType.ALLOW)
    with pytest.raises(ValueError, match="permission_type must not be ANY"):
        AccessControlEntry("User:a", "*", AclOperation.READ, AclPermissionType.ANY)
    # configs' ResourceType (ConfigResource.Type) is another code set: GROUP is 32 there, 3 here
    with pytest.raises(TypeError, match="ResourceType"):
        ResourcePattern(ResourceType.GROUP, "g")
    assert ResourcePattern("topic", "t", "prefixed") == ResourcePattern(AclResourceType.TOPIC, "t",
                                                                         PatternType.PREFIXED)
    assert [int(c) for c in (AclResourceType.USER, PatternType.PREFIXED, AclOperation.TWO_PHASE_COMMIT,
                             AclPermissionType.ALLOW)] == [7, 4, 15, 3]


@pytest.mark.trio
async def test_acls_without_an_authorizer_are_security_disabled(kafka_broker):
    async with admin_for(kafka_broker) as admin:
        created = await admin.create_acls([ALICE_READS, GROUP_READ])
        assert {b: e.code for b, e in created.items()} == {ALICE_READS: E.SECURITY_DISABLED,
                                                           GROUP_READ: E.SECURITY_DISABLED}
        with pytest.raises(KafkaError) as refused:
            created.all()
        assert refused.value.code == E.SECURITY_DISABLED and "No Authorizer is configured" in str(refused.value)
        with pytest.raises(KafkaError) as refused:
            await admin.describe_acls()
        assert refused.value.code == E.SECURITY_DISABLED
        gone = await admin.delete_acls([AclBindingFilter.ANY])
        assert isinstance(gone[AclBindingFilter.ANY], KafkaError)
        assert gone[AclBindingFilter.ANY].code == E.SECURITY_DISABLED
        # and the other way round: a config call refuses the ACL resource type (CLUSTER's 4 is BROKER's code there)
        with pytest.raises(TypeError, match="AclResourceType"):
            await admin.describe_configs([ConfigResource(AclResourceType.CLUSTER, "1")])


def confluent_binding(b: AclBinding) -> tuple:
    return (b.pattern.resource_type.name, b.pattern.name, b.pattern.pattern_type.name, b.entry.principal,
            b.entry.host, b.entry.operation.name, b.entry.permission_type.name)


def as_tuples(confluent_bindings) -> set[tuple]:
    return {(b.restype.name, b.name, b.resource_pattern_type.name, b.principal, b.host, b.operation.name,
             b.permission_type.name) for b in confluent_bindings}


def produce_one(bootstrap: str, topic: str) -> object:
    """What a librdkafka producer (User:ANONYMOUS) gets for one record: its offset or its error code."""
    outcome: list = []
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "message.timeout.ms": 10_000})
    producer.produce(topic, b"v", on_delivery=lambda err, msg: outcome.append(err.code() if err else msg.offset()))
    producer.flush(DEADLINE_S)
    assert len(outcome) == 1, "no delivery report"
    return outcome[0]


@pytest.mark.kafkamock(config=OPEN_UNLESS_GUARDED)
def test_acls_cross_checked_with_confluent_and_their_effect_blocking_api(kafka_broker):
    """The blocking Admin creates ACLs that confluent-kafka's AdminClient lists (and lists what it created); a
    librdkafka producer is refused once the topic has an ACL for someone else, let through by one for it, and
    refused again once our Admin deleted that one."""
    kafka_broker.create_topic("guarded")
    bootstrap = kafka_broker.bootstrap_servers
    theirs = cka.AdminClient({"bootstrap.servers": bootstrap})
    any_filter = cka.AclBindingFilter(cka.ResourceType.ANY, None, cka.ResourcePatternType.ANY, None, None,
                                      cka.AclOperation.ANY, cka.AclPermissionType.ANY)
    bob_all = acl(AclResourceType.TOPIC, "guarded", "User:bob", AclOperation.ALL)
    anonymous_writes = acl(AclResourceType.TOPIC, "guarded", "User:ANONYMOUS", AclOperation.WRITE)
    with BlockingAdmin({"bootstrap.servers": bootstrap}) as admin:
        assert produce_one(bootstrap, "guarded") == 0                       # no ACL yet: open
        admin.create_acls([bob_all, BOB_DENIED]).all()
        assert as_tuples(theirs.describe_acls(any_filter, request_timeout=10).result()) == {
            confluent_binding(bob_all), confluent_binding(BOB_DENIED)}
        assert produce_one(bootstrap, "guarded") == confluent_kafka.KafkaError.TOPIC_AUTHORIZATION_FAILED

        for future in theirs.create_acls([cka.AclBinding(
                cka.ResourceType.TOPIC, "guarded", cka.ResourcePatternType.LITERAL, "User:ANONYMOUS", "*",
                cka.AclOperation.WRITE, cka.AclPermissionType.ALLOW)], request_timeout=10).values():
            future.result()
        assert set(admin.describe_acls()) == {bob_all, BOB_DENIED, anonymous_writes}
        assert produce_one(bootstrap, "guarded") == 1

        gone = admin.delete_acls([anonymous_writes.to_filter()])
        assert deleted(gone[anonymous_writes.to_filter()]) == [anonymous_writes]
        assert as_tuples(theirs.describe_acls(any_filter, request_timeout=10).result()) == {
            confluent_binding(bob_all), confluent_binding(BOB_DENIED)}
        assert produce_one(bootstrap, "guarded") == confluent_kafka.KafkaError.TOPIC_AUTHORIZATION_FAILED


# -- client quotas ----------------------------------------------------------------------------------------------------

DEFAULT_USER = ClientQuotaEntity({USER: None})
ALICE_APP = ClientQuotaEntity({USER: "alice", CLIENT_ID: "app"})
DEFAULT_CLIENT = ClientQuotaEntity({CLIENT_ID: None})


@pytest.mark.trio
async def test_client_quotas_alter_then_describe(kafka_broker):
    of_entity, of_default, of_type = (ClientQuotaFilterComponent.of_entity, ClientQuotaFilterComponent.of_default_entity,
                                      ClientQuotaFilterComponent.of_entity_type)
    async with admin_for(kafka_broker) as admin:
        assert await admin.describe_client_quotas(ClientQuotaFilter.all()) == {}
        altered = await admin.alter_client_quotas([
            ClientQuotaAlteration(DEFAULT_USER, {"producer_byte_rate": 1_048_576}),
            ClientQuotaAlteration({USER: "alice", CLIENT_ID: "app"}, [("consumer_byte_rate", 2048),
                                                                     ("producer_byte_rate", 4096)]),
            ClientQuotaAlteration(DEFAULT_CLIENT, {"consumer_byte_rate": 512})])
        assert altered.all() == {DEFAULT_USER: None, ALICE_APP: None, DEFAULT_CLIENT: None}

        everything = {DEFAULT_USER: {"producer_byte_rate": 1_048_576.0},
                      ALICE_APP: {"consumer_byte_rate": 2048.0, "producer_byte_rate": 4096.0},
                      DEFAULT_CLIENT: {"consumer_byte_rate": 512.0}}
        assert await admin.describe_client_quotas(ClientQuotaFilter.all()) == everything
        assert await admin.describe_client_quotas([]) == everything
        assert await admin.describe_client_quotas([of_default(USER)]) == {DEFAULT_USER: everything[DEFAULT_USER]}
        assert await admin.describe_client_quotas([of_entity(USER, "alice")]) == {ALICE_APP: everything[ALICE_APP]}
        assert await admin.describe_client_quotas([of_type(CLIENT_ID)]) == {
            ALICE_APP: everything[ALICE_APP], DEFAULT_CLIENT: everything[DEFAULT_CLIENT]}
        # strict: only entities that name no other entity type
        assert await admin.describe_client_quotas([of_entity(USER, "alice")], strict=True) == {}
        assert await admin.describe_client_quotas(ClientQuotaFilter.contains_only([of_type(CLIENT_ID)])) == {
            DEFAULT_CLIENT: everything[DEFAULT_CLIENT]}
        assert await admin.describe_client_quotas(ClientQuotaFilter.contains_only(
            [of_entity(USER, "alice"), of_entity(CLIENT_ID, "app")])) == {ALICE_APP: everything[ALICE_APP]}

        # validate_only checks (an unknown key is still refused) and changes nothing
        dry = await admin.alter_client_quotas([ClientQuotaAlteration(DEFAULT_USER, {"producer_byte_rate": 1}),
                                               ClientQuotaAlteration(DEFAULT_CLIENT, {"bogus_rate": 1})],
                                              validate_only=True)
        assert dry[DEFAULT_USER] is None and dry[DEFAULT_CLIENT].code == E.INVALID_REQUEST
        assert await admin.describe_client_quotas(ClientQuotaFilter.all()) == everything

        # an unknown key is refused with Kafka's message; the other entity of the same call is altered
        mixed = await admin.alter_client_quotas([
            ClientQuotaAlteration(ALICE_APP, {"producer_byte_rate": None, "bogus_rate": 5}),
            ClientQuotaAlteration(DEFAULT_USER, {"producer_byte_rate": None})])
        assert mixed[ALICE_APP].code == E.INVALID_REQUEST
        assert "Invalid configuration key bogus_rate" in str(mixed[ALICE_APP])
        assert mixed[DEFAULT_USER] is None
        with pytest.raises(KafkaError):
            mixed.all()
        # removal: the default user's last key went, and with it the entity; alice's refused change changed nothing
        assert await admin.describe_client_quotas(ClientQuotaFilter.all()) == {
            ALICE_APP: everything[ALICE_APP], DEFAULT_CLIENT: everything[DEFAULT_CLIENT]}
        (await admin.alter_client_quotas([ClientQuotaAlteration(ALICE_APP, {"producer_byte_rate": None})])).all()
        assert (await admin.describe_client_quotas([of_entity(USER, "alice")]))[ALICE_APP] == {
            "consumer_byte_rate": 2048.0}

        with pytest.raises(KafkaError) as bad_filter:         # ip cannot be combined with user or client-id
            await admin.describe_client_quotas([of_entity(USER, "alice"), of_type(ClientQuotaEntity.IP)])
        assert bad_filter.value.code == E.INVALID_REQUEST


# -- SCRAM credentials ------------------------------------------------------------------------------------------------

def scram_conf(broker, user: str, password: str, mechanism: ScramMechanism) -> dict:
    return {"bootstrap.servers": broker.server.bootstrap_by_listener["SASL_PLAINTEXT"],
            "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mechanism.mechanism_name,
            "sasl.username": user, "sasl.password": password}


def authenticates(conf: dict) -> bool:
    """Whether librdkafka gets a SCRAM session: its metadata request answers, or its error callback reports an
    authentication failure first."""
    errors: list = []
    client = cka.AdminClient({**conf, "error_cb": errors.append})
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        if errors:
            assert errors[0].code() == confluent_kafka.KafkaError._AUTHENTICATION, errors
            return False
        try:
            client.list_topics(timeout=0.5)
            return True
        except confluent_kafka.KafkaException:
            client.poll(0.1)
    raise AssertionError(f"neither authenticated nor refused: {errors}")


@pytest.mark.trio
@pytest.mark.kafkamock(config=SCRAM_LISTENERS)
async def test_scram_credentials_upserted_authenticate_and_deleted_do_not(kafka_broker):
    plaintext = kafka_broker.server.bootstrap_by_listener["PLAINTEXT"]
    async with admin_for(kafka_broker, plaintext) as admin:
        altered = await admin.alter_user_scram_credentials([
            UserScramCredentialUpsertion("alice", SHA256, 4096, "alice-secret"),
            UserScramCredentialUpsertion("bob", "SCRAM-SHA-512", 8192, "bob-secret", salt=b"bob-salt-16bytes"),
            UserScramCredentialUpsertion("carol", SHA256, 4096, ""),          # refused here: empty password
            UserScramCredentialUpsertion("dave", SHA512, 1000, "dave-secret"),   # refused by the broker
            UserScramCredentialDeletion("erin", SHA256),                          # nothing to delete
            UserScramCredentialUpsertion("frank", ScramMechanism.UNKNOWN, 4096, "x")])
        assert {u: None if e is None else (e.code, str(e).rsplit(": ", 1)[1]) for u, e in altered.items()} == {
            "alice": None, "bob": None,
            "carol": (E.UNACCEPTABLE_CREDENTIAL, "Password must not be empty"),
            "dave": (E.UNACCEPTABLE_CREDENTIAL, "Too few iterations"),
            "erin": (E.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"),
            "frank": (E.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism")}

        described = await admin.describe_user_scram_credentials()
        assert {u: d.credential_infos for u, d in described.all().items()} == {
            "alice": [ScramCredentialInfo(SHA256, 4096)], "bob": [ScramCredentialInfo(SHA512, 8192)]}
        some = await admin.describe_user_scram_credentials(["bob", "carol"])
        assert some["bob"].name == "bob" and some["carol"].code == E.RESOURCE_NOT_FOUND

        # librdkafka authenticates with the passwords (the broker only ever saw salts and salted passwords)
        alice = scram_conf(kafka_broker, "alice", "alice-secret", SHA256)
        assert await in_thread(authenticates, alice)
        assert await in_thread(authenticates, scram_conf(kafka_broker, "bob", "bob-secret", SHA512))
        assert not await in_thread(authenticates, scram_conf(kafka_broker, "alice", "wrong", SHA256))
        assert not await in_thread(authenticates, scram_conf(kafka_broker, "bob", "bob-secret", SHA256))
        metadata_principals = {r["principal"] for r in await in_thread(kafka_broker.control.requests, api_key=3)
                               if r["listener"] == "SASL_PLAINTEXT"}
        assert metadata_principals == {"User:alice", "User:bob"}

        # a new password replaces the old one; a deletion ends authentication
        (await admin.alter_user_scram_credentials([
            UserScramCredentialUpsertion("alice", SHA256, 4096, "new-secret")])).all()
        assert not await in_thread(authenticates, alice)
        assert await in_thread(authenticates, {**alice, "sasl.password": "new-secret"})
        (await admin.alter_user_scram_credentials([UserScramCredentialDeletion("alice", SHA256)])).all()
        assert not await in_thread(authenticates, {**alice, "sasl.password": "new-secret"})
        described = await admin.describe_user_scram_credentials(["alice", "bob"])
        assert described["alice"].code == E.RESOURCE_NOT_FOUND
        assert described["bob"].credential_infos == [ScramCredentialInfo(SHA512, 8192)]


@pytest.mark.trio
@pytest.mark.kafkamock(brokers=3)
async def test_scram_alterations_go_to_the_controller_describes_to_any_broker(kafka_broker):
    """Bootstrapped with node 3 only, a fresh Admin sends DescribeUserScramCredentials to the node it knows and
    AlterUserScramCredentials to the controller the Metadata response names (node 1), as Java's Admin does."""
    nodes = await in_thread(kafka_broker.control.nodes)
    node3 = next(f"{n['host']}:{n['port']}" for n in nodes if n["node_id"] == 3)
    controller = (await in_thread(kafka_broker.control.cluster))["controller_id"]
    assert controller == 1
    async with admin_for(kafka_broker, node3) as admin:
        assert (await admin.describe_user_scram_credentials(["u"]))["u"].code == E.RESOURCE_NOT_FOUND
    async with admin_for(kafka_broker, node3) as admin:
        (await admin.alter_user_scram_credentials([UserScramCredentialUpsertion("u", SHA512, 4096, "p")])).all()
        assert (await admin.describe_user_scram_credentials(["u"]))["u"].credential_infos == [
            ScramCredentialInfo(SHA512, 4096)]
    describe_key, alter_key = 50, 51
    assert [r["node_id"] for r in await in_thread(kafka_broker.control.requests, api_key=alter_key)] == [controller]
    assert [r["node_id"] for r in await in_thread(kafka_broker.control.requests, api_key=describe_key)][0] == 3
