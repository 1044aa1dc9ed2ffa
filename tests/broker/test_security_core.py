"""Security in the broker core, without sockets: listener configs and what they refuse, JAAS parsing, the SASL
session table (what may pass before authentication, KIP-368 expiry and re-authentication), each mechanism's
exchange and failure messages, SCRAM credential APIs, and the principal of a certificate."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import pytest
from support.broker_calls import decode_response

from kafkamock import codec, jaas
from kafkamock.broker import Close, Cluster, ManualClock, Request, Respond
from kafkamock.broker.config import BrokerConfig, ConfigError
from kafkamock.broker.errors import ErrorCode as E
from kafkamock.broker.security.listeners import listeners
from kafkamock.broker.security.mechanisms import AuthenticationFailed, OAuthBearerServer
from kafkamock.broker.security.principal import ssl_principal
from kafkamock.broker.security.scram import ScramCredential

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
              'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";')
SASL = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,OAUTHBEARER",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS, "connections.max.reauth.ms": "10000"}


def send(broker: Cluster, connection, api: str, version: int, body: dict):
    """One request on ``connection`` through the codec; the decoded response (and the close reason, if any), or
    the Close outcome."""
    name = f"{api}Request"
    decoded = codec.decode(name, version, codec.encode(name, version, body))
    outcome = broker.handle(Request(codec.default_registry().api_key(api), version, 1, "t", decoded, connection))
    if isinstance(outcome, Close):
        return outcome
    assert isinstance(outcome, Respond), outcome
    return decode_response(api, version, outcome.body), outcome.close


@pytest.fixture
def clock():
    return ManualClock()


@pytest.fixture
def broker(clock):
    return Cluster(SASL, clock)


def plain(broker, connection, user="alice", password="alice-secret", version=2):
    handshake, _ = send(broker, connection, "SaslHandshake", 1, {"mechanism": "PLAIN"})
    assert handshake.error_code == E.NONE
    return send(broker, connection, "SaslAuthenticate", version, {"auth_bytes": f"\0{user}\0{password}".encode()})


# -- configuration ---------------------------------------------------------------------------------------------

def test_default_listener_and_listener_list():
    assert [(x.name, x.security_protocol, x.port) for x in listeners(BrokerConfig(), "h", 9)] == \
        [("PLAINTEXT", "PLAINTEXT", 9)]
    config = BrokerConfig({"listeners": "PLAINTEXT://:9092,EXTERNAL://0.0.0.0:9093",
                           "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,EXTERNAL:SSL"})
    assert [(x.name, x.security_protocol, x.host, x.port) for x in listeners(config)] == [
        ("PLAINTEXT", "PLAINTEXT", "", 9092), ("EXTERNAL", "SSL", "0.0.0.0", 9093)]


@pytest.mark.parametrize(("config", "message"), [
    ({"listeners": "FOO://:1"}, "No security protocol defined for listener FOO"),
    ({"listeners": "PLAINTEXT://:1,PLAINTEXT://:2"}, "different name"),
    ({"listeners": "PLAINTEXT://:1,SSL://:1"}, "different port"),
    ({"listeners": "SASL_PLAINTEXT://:1"}, "GSSAPI cannot be served"),          # Kafka's default mechanism
    ({"listeners": "SASL_PLAINTEXT://:1", "sasl.enabled.mechanisms": "PLAIN"}, "PLAIN needs its users"),
    ({"listeners": "SASL_SSL://:1", "sasl.enabled.mechanisms": "PLAIN",
      "listener.name.sasl_ssl.plain.sasl.jaas.config": "x.Y required;"}, "expected org.apache.kafka"),
])
def test_listener_setups_kafkamock_cannot_serve_are_refused(config, message):
    with pytest.raises(ConfigError, match=message):
        Cluster(config)


def test_unknown_listener_prefixed_configs_are_refused():
    with pytest.raises(ConfigError, match="Unknown broker config"):
        BrokerConfig({"listener.name.ssl.not.a.config": "1"})
    with pytest.raises(ConfigError, match="Invalid value"):
        BrokerConfig({"listener.name.ssl.ssl.client.auth": "sometimes"})


def test_jks_stores_are_refused_with_a_message(tmp_path):
    from kafkamock.server.tls import server_context

    config = BrokerConfig({"listeners": "SSL://:0", "ssl.keystore.location": str(tmp_path / "k.jks")})
    with pytest.raises(ConfigError, match="JKS keystores are Java-only"):
        server_context(config, "SSL", "SSL")


def test_jaas_is_parsed_as_java_does():
    module = jaas.login_module('com.example.Module required  // a comment\n a="x\\"y" b=plain.word c="semi;colon";')
    assert (module.name, module.flag) == ("com.example.Module", "required")
    assert module.options == {"a": 'x"y', "b": "plain.word", "c": "semi;colon"}
    with pytest.raises(jaas.JaasConfigError, match="should be 1 module"):
        jaas.login_module("a.B required; c.D optional;")
    with pytest.raises(jaas.JaasConfigError, match="do not end with ';'"):
        jaas.login_module('a.B required x="1"')


# -- the session table -----------------------------------------------------------------------------------------

def test_only_api_versions_and_handshake_before_authentication(broker):
    conn = broker.new_connection(1, "127.0.0.1:1", "SASL_PLAINTEXT")
    outcome = send(broker, conn, "Metadata", 12, {"topics": None, "allow_auto_topic_creation": False,
                                                  "include_topic_authorized_operations": False})
    assert isinstance(outcome, Close) and "Unexpected Kafka request of type Metadata during SASL handshake" in \
        outcome.reason
    conn = broker.new_connection(2, "127.0.0.1:2", "SASL_PLAINTEXT")
    send(broker, conn, "ApiVersions", 3, {"client_software_name": "x", "client_software_version": "1"})
    assert isinstance(send(broker, conn, "ApiVersions", 3, {"client_software_name": "x",
                                                             "client_software_version": "1"}), Close)


def test_plain_success_sets_the_principal_and_session_lifetime(broker):
    conn = broker.new_connection(1, "127.0.0.1:1", "SASL_PLAINTEXT")
    response, close = plain(broker, conn)
    assert (response.error_code, response.session_lifetime_ms, close) == (E.NONE, 10000, None)
    assert conn.principal == "User:alice"
    again, _ = send(broker, conn, "SaslAuthenticate", 2, {"auth_bytes": b"\0alice\0alice-secret"})
    assert again.error_code == E.ILLEGAL_SASL_STATE
    assert again.error_message == "SaslAuthenticate request received after successful authentication"


@pytest.mark.parametrize(("token", "message"), [
    (b"\0alice\0nope", "Authentication failed: Invalid username or password"),
    (b"\0\0x", "Authentication failed: username not specified"),
    (b"bob\0alice\0alice-secret", "Authentication failed: Client requested an authorization id that is different "
                                  "from username"),
    (b"just-one-token", "Authentication failed during authentication due to invalid credentials with SASL "
                        "mechanism PLAIN"),
])
def test_plain_failures_carry_kafkas_messages_and_close(broker, token, message):
    conn = broker.new_connection(1, "127.0.0.1:1", "SASL_PLAINTEXT")
    send(broker, conn, "SaslHandshake", 1, {"mechanism": "PLAIN"})
    response, close = send(broker, conn, "SaslAuthenticate", 1, {"auth_bytes": token})
    assert (response.error_code, response.error_message) == (E.SASL_AUTHENTICATION_FAILED, message)
    assert close is not None and conn.principal == "User:ANONYMOUS"


def test_expiry_and_reauthentication_keep_mechanism_and_principal(broker, clock):
    conn = broker.new_connection(1, "127.0.0.1:1", "SASL_PLAINTEXT")
    plain(broker, conn)
    clock.advance(10_001)
    outcome = send(broker, conn, "ListGroups", 4, {"states_filter": [], "types_filter": []})
    assert isinstance(outcome, Close) and "expired" in outcome.reason
    conn = broker.new_connection(2, "127.0.0.1:2", "SASL_PLAINTEXT")
    plain(broker, conn)
    clock.advance(5_000)
    response, close = plain(broker, conn, user="admin", password="admin-secret")    # another principal
    assert response.error_code == E.SASL_AUTHENTICATION_FAILED and close
    assert response.error_message == "Cannot change principals during re-authentication from User.alice: User.admin"
    conn = broker.new_connection(3, "127.0.0.1:3", "SASL_PLAINTEXT")
    plain(broker, conn)
    clock.advance(2_000)
    handshake, _ = send(broker, conn, "SaslHandshake", 1, {"mechanism": "SCRAM-SHA-256"})
    assert handshake.error_code == E.NONE
    outcome = send(broker, conn, "SaslAuthenticate", 2, {"auth_bytes": b"n,,n=alice,r=abc"})
    assert isinstance(outcome, Close) and "not supported for re-authentication of mechanism 'PLAIN'" in \
        outcome.reason


def test_no_reauthentication_without_a_session_lifetime(clock):
    broker = Cluster({**SASL, "connections.max.reauth.ms": "0"}, clock)
    conn = broker.new_connection(1, "127.0.0.1:1", "SASL_PLAINTEXT")
    response, _ = plain(broker, conn)
    assert response.session_lifetime_ms == 0
    clock.advance(10**9)
    handshake, _ = send(broker, conn, "SaslHandshake", 1, {"mechanism": "PLAIN"})
    assert handshake.error_code == E.ILLEGAL_SASL_STATE and list(handshake.mechanisms) == []


def test_sasl_apis_on_a_plaintext_listener_are_illegal_state():
    broker = Cluster()
    conn = broker.new_connection(1, "127.0.0.1:1")
    handshake, _ = send(broker, conn, "SaslHandshake", 1, {"mechanism": "PLAIN"})
    assert handshake.error_code == E.ILLEGAL_SASL_STATE
    assert {17, 36, 50, 51} <= set(broker.advertised_versions())


# -- mechanisms ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("salt", [None, b"salt"], ids=["random-salt", "4-byte-salt"])
def test_scram_sha_256_exchange_by_rfc_7677(broker, salt):
    """RFC 7677's client side computed here by hand against kafkamock's server side. Kafka keeps whatever salt
    AlterUserScramCredentials sent, however short, and authenticates with it."""
    if salt is None:
        broker.scram_credentials.set_password("user", "pencil", mechanisms=("SCRAM-SHA-256",))
    else:
        salted = hashlib.pbkdf2_hmac("sha256", b"pencil", salt, 4096)
        broker.scram_credentials.put("user", "SCRAM-SHA-256",
                                     ScramCredential.from_salted_password("SCRAM-SHA-256", salt, salted, 4096))
    conn = broker.new_connection(1, "127.0.0.1:1", "SASL_PLAINTEXT")
    final, close, salted, auth_message = _scram_sha_256(broker, conn, "pencil")
    server_key = hmac.new(salted, b"Server Key", "sha256").digest()
    expected = base64.b64encode(hmac.new(server_key, auth_message, "sha256").digest()).decode()
    assert (final.error_code, final.auth_bytes.decode(), close) == (E.NONE, f"v={expected}", None)
    assert conn.principal == "User:user"


CLIENT_NONCE = "rOprNGfwEbeRWgbNEkqO"


def _scram_sha_256(broker, conn, password: str, final_nonce=lambda server_nonce: server_nonce):
    """RFC 7677's client side by hand, as user "user": SaslHandshake, client-first, then a client-final whose r= is
    ``final_nonce(the server's nonce)``, its proof computed over that message. The final answer, the close reason,
    the salted password and the AuthMessage."""
    send(broker, conn, "SaslHandshake", 1, {"mechanism": "SCRAM-SHA-256"})
    first_bare = f"n=user,r={CLIENT_NONCE}"
    server_first, _ = send(broker, conn, "SaslAuthenticate", 2, {"auth_bytes": f"n,,{first_bare}".encode()})
    attrs = dict(p.split("=", 1) for p in server_first.auth_bytes.decode().split(","))
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), base64.b64decode(attrs["s"]), int(attrs["i"]))
    client_key = hmac.new(salted, b"Client Key", "sha256").digest()
    without_proof = f"c=biws,r={final_nonce(attrs['r'])}"
    auth_message = f"{first_bare},{server_first.auth_bytes.decode()},{without_proof}".encode()
    signature = hmac.new(hashlib.sha256(client_key).digest(), auth_message, "sha256").digest()
    proof = base64.b64encode(bytes(a ^ b for a, b in zip(client_key, signature, strict=True))).decode()
    final, close = send(broker, conn, "SaslAuthenticate", 2, {"auth_bytes": f"{without_proof},p={proof}".encode()})
    return final, close, salted, auth_message


def test_scram_client_final_with_the_client_nonce_twice_is_refused(broker):
    """librdkafka before 2.6.1 sent r=<client nonce><server nonce> with the client nonce once more in front (its
    proof computed over that message). Kafka 4 compares the nonce strictly (RFC 5802 5.1) and refuses it."""
    broker.scram_credentials.set_password("user", "pencil", mechanisms=("SCRAM-SHA-256",))
    conn = broker.new_connection(1, "127.0.0.1:1", "SASL_PLAINTEXT")
    final, close, _, _ = _scram_sha_256(broker, conn, "pencil", final_nonce=lambda nonce: CLIENT_NONCE + nonce)
    assert (final.error_code, final.error_message) == (E.SASL_AUTHENTICATION_FAILED, "Authentication failed during "
                                                       "authentication due to invalid credentials with SASL mechanism "
                                                       "SCRAM-SHA-256")
    assert close
    assert conn.principal != "User:user"


def _jws(claims: dict) -> str:
    enc = lambda d: base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()   # noqa: E731
    return f"{enc({'alg': 'none'})}.{enc(claims)}."


def test_oauthbearer_unsecured_validator():
    now = 1_700_000_000_000
    server = OAuthBearerServer("OAUTHBEARER")
    token = _jws({"sub": "alice", "iat": now / 1000, "exp": now / 1000 + 60})
    assert server.evaluate(f"n,,\x01auth=Bearer {token}\x01\x01".encode(), now) == b""
    assert (server.authorization_id, server.credential_expiry_ms) == ("alice", now + 60_000)
    expired = OAuthBearerServer("OAUTHBEARER")
    old = _jws({"sub": "alice", "exp": now / 1000 - 1})
    assert expired.evaluate(f"n,,\x01auth=Bearer {old}\x01\x01".encode(), now) == b'{"status":"invalid_token"}'
    with pytest.raises(AuthenticationFailed, match="invalid_token"):
        expired.evaluate(b"\x01", now)
    scoped = OAuthBearerServer("OAUTHBEARER", options={"unsecuredValidatorRequiredScope": "write"})
    assert scoped.evaluate(f"n,,\x01auth=Bearer {token}\x01\x01".encode(), now) == b'{"status":"invalid_token"}'


def test_oauthbearer_session_is_capped_by_the_token(broker, clock):
    conn = broker.new_connection(1, "127.0.0.1:1", "SASL_PLAINTEXT")
    send(broker, conn, "SaslHandshake", 1, {"mechanism": "OAUTHBEARER"})
    token = _jws({"sub": "carol", "exp": (clock.now_ms() + 4_000) / 1000})
    response, _ = send(broker, conn, "SaslAuthenticate", 1, {"auth_bytes": f"n,,\x01auth=Bearer {token}\x01\x01"
                                                              .encode()})
    assert (response.error_code, response.session_lifetime_ms, conn.principal) == (E.NONE, 4000, "User:carol")


# -- SCRAM credential APIs -------------------------------------------------------------------------------------

def upsertion(name, mechanism=2, iterations=4096, password=b"pw"):
    salt = b"salt"
    salted = hashlib.pbkdf2_hmac("sha512" if mechanism == 2 else "sha256", password, salt, iterations)
    return {"name": name, "mechanism": mechanism, "iterations": iterations, "salt": salt, "salted_password": salted}


def test_alter_and_describe_user_scram_credentials(clock):
    broker = Cluster({}, clock)
    conn = broker.new_connection(1, "127.0.0.1:1")
    response, _ = send(broker, conn, "AlterUserScramCredentials", 0, {"deletions": [
        {"name": "ghost", "mechanism": 1}, {"name": "twice", "mechanism": 1}], "upsertions": [
        upsertion("bob"), upsertion("few", iterations=4095), upsertion("many", iterations=16385),
        upsertion("", mechanism=1), upsertion("odd", mechanism=3), upsertion("twice")]})
    results = {r.user: (r.error_code, r.error_message) for r in response.results}
    assert results == {
        "bob": (E.NONE, None), "ghost": (E.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"),
        "twice": (E.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"),
        "few": (E.UNACCEPTABLE_CREDENTIAL, "Too few iterations"), "many": (E.UNACCEPTABLE_CREDENTIAL,
                                                                            "Too many iterations"),
        "": (E.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"),
        "odd": (E.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism")}
    stored = broker.scram_credentials.get("bob", "SCRAM-SHA-512")
    assert stored == ScramCredential.from_salted_password("SCRAM-SHA-512", b"salt", upsertion("bob")["salted_password"],
                                                          4096)
    described, _ = send(broker, conn, "DescribeUserScramCredentials", 0, {"users": [{"name": "bob"},
                                                                                    {"name": "nobody"}]})
    assert [(r.user, r.error_code, [(c.mechanism, c.iterations) for c in r.credential_infos])
            for r in described.results] == [("bob", E.NONE, [(2, 4096)]), ("nobody", E.RESOURCE_NOT_FOUND, [])]
    response, _ = send(broker, conn, "AlterUserScramCredentials", 0, {
        "deletions": [{"name": "bob", "mechanism": 2}], "upsertions": [upsertion("bob")]})
    assert [(r.user, r.error_code) for r in response.results] == [("bob", E.DUPLICATE_RESOURCE)]
    response, _ = send(broker, conn, "AlterUserScramCredentials", 0, {
        "deletions": [{"name": "bob", "mechanism": 2}], "upsertions": []})
    assert [(r.user, r.error_code) for r in response.results] == [("bob", E.NONE)]
    described, _ = send(broker, conn, "DescribeUserScramCredentials", 0, {"users": None})
    assert list(described.results) == []


def test_scram_credentials_are_kept_with_the_metadata(tmp_path, clock):
    config = {"log.dirs": str(tmp_path)}
    broker = Cluster(config, clock)
    broker.scram_credentials.set_password("dave", "pw", iterations=5000)
    broker.close()
    again = Cluster(config, clock)
    assert again.scram_credentials.get("dave", "SCRAM-SHA-256") == broker.scram_credentials.get("dave",
                                                                                                 "SCRAM-SHA-256")
    assert again.scram_credentials.get("dave", "SCRAM-SHA-512").iterations == 5000


# -- principals ------------------------------------------------------------------------------------------------

def test_certificate_principal_is_the_rfc_2253_subject(tmp_path):
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    from kafkamock.server.tls import ThrowawayCA

    files = ThrowawayCA(tmp_path).client("a,b", organization_unit="eng+ops")
    der = x509.load_pem_x509_certificate(files.certificate.read_bytes()).public_bytes(serialization.Encoding.DER)
    assert ssl_principal(der) == "User:CN=a\\,b,OU=eng\\+ops,O=kafkamock"
    assert ssl_principal(None) == "User:ANONYMOUS"


def test_a_broker_start_imports_no_sasl_or_tls_library():
    """scramp and cryptography (about 45 ms of every start) are imported by the first SCRAM exchange and the first
    client certificate read, not by importing the broker, its server and its CLI."""
    import subprocess
    import sys

    code = ("import sys, kafkamock.broker, kafkamock.server, kafkamock.cli, kafkamock.broker.security.mechanisms, "
            "kafkamock.broker.security.principal; print(sorted(m for m in ('scramp', 'cryptography') "
            "if m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True
                          ).stdout.strip() == "[]"
