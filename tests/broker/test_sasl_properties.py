"""Hostile SASL exchanges against the core (the socket fuzzer in tests/fuzz only speaks to a PLAINTEXT listener):
for every mechanism, a handshake then up to three SaslAuthenticate tokens drawn from garbage and from near-misses
of each mechanism's own messages (PLAIN's NUL-separated fields, SCRAM's client-first and client-final attributes,
OAUTHBEARER's GS2 header and JWS). Each step must end as Kafka ends it, with an answer or a closed connection,
never an exception or a logged error, and nobody may end up authenticated without the right credentials."""

from __future__ import annotations

import base64
import logging

from hypothesis import given, settings
from hypothesis import strategies as st
from test_security_core import PLAIN_JAAS, send

from kafkamock.broker import Close, Cluster, ManualClock, Respond
from kafkamock.broker.errors import ErrorCode as E

MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"]
CONFIG = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": ",".join(MECHANISMS),
          "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS, "connections.max.reauth.ms": "10000"}
ANSWERS = {E.NONE, E.SASL_AUTHENTICATION_FAILED, E.ILLEGAL_SASL_STATE, E.UNSUPPORTED_SASL_MECHANISM}

text = st.text(max_size=24)
b64 = st.binary(max_size=48).map(lambda b: base64.b64encode(b).decode())
plain_token = st.lists(text, min_size=0, max_size=5).map(lambda parts: "\0".join(parts).encode())
scram_first = st.builds(lambda gs2, user, nonce, extra: f"{gs2}n={user},r={nonce}{extra}".encode(),
                        st.sampled_from(["n,,", "y,,", "p=tls-server-end-point,,", "n,a=admin,", "", "n,"]),
                        text, text, st.sampled_from(["", ",m=ext", ",", ",x"]))
scram_final = st.builds(lambda binding, nonce, proof, extra: f"c={binding},r={nonce},p={proof}{extra}".encode(),
                        st.sampled_from(["biws", "eSws", "", "!!"]), text, b64 | text, st.sampled_from(["", ",x=1"]))
jws = st.builds(lambda h, c, s: f"{h}.{c}.{s}", b64, b64 | st.just("eyJzdWIiOiJ4In0"), st.just("") | b64)
oauth_token = st.builds(lambda gs2, token, kv: f"{gs2}\x01auth=Bearer {token}\x01{kv}\x01".encode(),
                        st.sampled_from(["n,,", "n,a=bob,", "y,,", ""]), jws | text, st.just("") | text)
token = st.one_of(st.binary(max_size=64), plain_token, scram_first, scram_final, oauth_token)


@settings(max_examples=400)
@given(mechanism=st.sampled_from(MECHANISMS + ["GSSAPI", "plain", ""]), tokens=st.lists(token, min_size=1, max_size=3),
       version=st.integers(-1, 2))
def test_hostile_sasl_exchanges_end_with_an_answer_or_a_close(mechanism, tokens, version):
    """``version`` -1: SaslHandshake v0 and raw tokens (no Kafka framing), else SaslAuthenticate v0-v2."""
    errors: list[logging.LogRecord] = []
    handler = logging.Handler(logging.ERROR)
    handler.emit = errors.append                                            # type: ignore[method-assign]
    logger = logging.getLogger("kafkamock")
    logger.addHandler(handler)
    try:
        broker = Cluster(CONFIG, ManualClock())
        broker.scram_credentials.set_password("bob", "bob-secret", mechanisms=("SCRAM-SHA-256", "SCRAM-SHA-512"))
        conn = broker.new_connection(1, "127.0.0.1:1", "SASL_PLAINTEXT")
        handshake, close = send(broker, conn, "SaslHandshake", 0 if version < 0 else 1, {"mechanism": mechanism})
        assert handshake.error_code in (E.NONE, E.UNSUPPORTED_SASL_MECHANISM)
        if handshake.error_code == E.UNSUPPORTED_SASL_MECHANISM:
            assert mechanism not in MECHANISMS
            return
        for auth_bytes in tokens:
            if version < 0:
                raw = broker.sasl_raw_token(conn, broker.first_node(), auth_bytes)
                assert isinstance(raw, Close | Respond), raw
                if isinstance(raw, Close):
                    break
                continue
            outcome = send(broker, conn, "SaslAuthenticate", version, {"auth_bytes": auth_bytes})
            if isinstance(outcome, Close):
                break
            response, close = outcome
            assert response.error_code in ANSWERS
            if response.error_code != E.NONE:
                assert close, "a failed authentication closes the connection, as in Kafka"
                break
        # Drawn tokens never carry bob's or alice's password, nor a valid SCRAM proof: only OAUTHBEARER's
        # unsecured tokens may authenticate, and then as the token's subject.
        if conn.principal not in (None, "User:ANONYMOUS"):
            assert mechanism == "OAUTHBEARER", conn.principal
    finally:
        logger.removeHandler(handler)
    assert not errors, [r.getMessage() for r in errors]
