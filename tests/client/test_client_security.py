"""The clients' security settings and SASL exchanges, without sockets: JAAS parsed as Java parses it, each
mechanism's tokens, and SCRAM run against scramp's server side (the real-socket tests are in tests/security)."""

from __future__ import annotations

import base64
import json

import pytest
from scramp import ScramException, ScramMechanism

from kafkamock.client.security import OAuthBearerExchange, ScramExchange, security_from

PLAIN = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="a\\"b;c";'


def test_jaas_is_read_as_java_reads_it():
    """The client reads sasl.jaas.config with the broker's parser: quoted values keep escaped quotes and ';'."""
    settings = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": PLAIN}
    security = security_from(settings)
    assert (security.username, security.password) == ("alice", 'a"b;c')
    scram = security_from({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512",
                           "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required\n"
                                               "  username=bob /* a comment */ password=\"s e c\";"})
    assert (scram.username, scram.password) == ("bob", "s e c")


@pytest.mark.parametrize(("settings", "message"), [
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI"}, "GSSAPI.*not supported"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"}, "needs sasl.jaas.config"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": 'username="alice"'},
     "LoginModule"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": PLAIN[:-1]},
     "do not end with ';'"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": PLAIN + PLAIN},
     "2 login modules"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": PLAIN},
     "needs org.apache.kafka.common.security.scram.ScramLoginModule"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
      "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;"},
     "unsecuredLoginStringClaim_sub"),
])
def test_bad_security_settings_are_refused_up_front(settings, message):
    with pytest.raises(ValueError, match=message):
        security_from(settings)


def test_plain_sends_one_token():
    security = security_from({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                              "sasl.jaas.config": PLAIN})
    exchange = security.exchange()
    assert exchange.first() == b'\0alice\0a"b;c' and exchange.answer(b"") is None
    assert security.sasl and not security.tls


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_round_trip_against_a_scram_server(mechanism):
    server_mechanism = ScramMechanism(mechanism)
    salt, stored_key, server_key, iterations = server_mechanism.make_auth_info("s3cret", iteration_count=4096)
    server = server_mechanism.make_server(lambda user: (salt, stored_key, server_key, iterations))
    client = ScramExchange(mechanism, "bob", "s3cret")
    server.set_client_first(client.first().decode())
    final = client.answer(server.get_server_first().encode())
    server.set_client_final(final.decode())
    assert client.answer(server.get_server_final().encode()) is None
    wrong = ScramExchange(mechanism, "bob", "guess")
    server = server_mechanism.make_server(lambda user: (salt, stored_key, server_key, iterations))
    server.set_client_first(wrong.first().decode())
    final = wrong.answer(server.get_server_first().encode())
    with pytest.raises(ScramException, match="(?i)invalid|proof"):
        server.set_client_final(final.decode())


def test_oauthbearer_sends_an_unsecured_token_as_kafka_makes_them():
    token = OAuthBearerExchange({"sub": "carol", "lifetime": 60, "extensions": {"traceId": "x1"}}).first()
    gs2, auth, extension, end, last = token.split(b"\x01")
    assert gs2 == b"n,," and extension == b"traceId=x1" and end == last == b""
    header, body, signature = auth.removeprefix(b"auth=Bearer ").split(b".")

    def decode(part: bytes) -> dict:
        return json.loads(base64.urlsafe_b64decode(part + b"=" * (-len(part) % 4)))

    assert decode(header) == {"alg": "none"} and signature == b""
    claims = decode(body)
    assert claims["sub"] == "carol" and claims["exp"] - claims["iat"] == 60
