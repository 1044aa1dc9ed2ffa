"""SaslAuthenticate (36): one SASL token of the exchange the handshake chose (SaslServerAuthenticator
.handleSaslToken); the exchange itself is in ``security/mechanisms.py``, the state in ``security/session.py``.

Failures answer SASL_AUTHENTICATION_FAILED with Kafka's message, then close the connection. On success the
principal becomes ``User:<authorization id>`` and v1+ answers KIP-368's session lifetime. After authentication
(or on a listener without SASL) Kafka's request handler answers ILLEGAL_SASL_STATE.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kafkamock.broker.config import listener_config
from kafkamock.broker.errors import ErrorCode
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.broker.outcome import Close, Respond
from kafkamock.broker.security.mechanisms import (
    AuthenticationFailed,
    InvalidCredentials,
)
from kafkamock.broker.security.principal import sasl_principal
from kafkamock.broker.security.session import State
from kafkamock.codec.messages import SaslAuthenticateRequest, SaslAuthenticateResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request
    from kafkamock.broker.node import Node
    from kafkamock.broker.request import ConnectionInfo

API_KEY = 36
log = logging.getLogger("kafkamock.security")


def handle(cluster: Cluster, request: Request[SaslAuthenticateRequest]
           ) -> SaslAuthenticateResponse | Respond | Close:
    session = request.connection.sasl
    if session is None or session.state is not State.AUTHENTICATE:
        return SaslAuthenticateResponse(
            error_code=ErrorCode.ILLEGAL_SASL_STATE, auth_bytes=b"", session_lifetime_ms=0,
            error_message="SaslAuthenticate request received after successful authentication")
    if request.version > 0:
        session.client_supports_reauth = True
    if session.bad_mechanism is not None:
        session.step("fail")
        return Close(session.bad_mechanism)
    outcome = evaluate(cluster, request.connection, request.node or cluster.first_node(), bytes(request.body.auth_bytes))
    if isinstance(outcome, Failure):
        return Respond(SaslAuthenticateResponse(error_code=ErrorCode.SASL_AUTHENTICATION_FAILED,
                                                error_message=outcome.message, auth_bytes=b"",
                                                session_lifetime_ms=0), close=outcome.reason)
    token, lifetime = outcome
    return SaslAuthenticateResponse(error_code=ErrorCode.NONE, error_message=None, auth_bytes=token,
                                    session_lifetime_ms=lifetime)


@dataclass(frozen=True)
class Failure:
    message: str           # what the client is told (Kafka's wording)
    reason: str            # what the broker's log says when it closes the connection


def evaluate(cluster: Cluster, connection: ConnectionInfo, node: Node, token: bytes) -> tuple[bytes, int] | Failure:
    """Feed one token to the session's SaslServer: (challenge, session lifetime ms) or the failure.
    Shared with the raw-token mode of SaslHandshake v0 (``Cluster.sasl_raw_token``)."""
    session = connection.sasl
    server = session.server if session is not None else None
    # Both callers take a token only in an AUTHENTICATE state, which the SaslHandshake that chose the server set.
    assert session is not None and server is not None
    reauth_of = session.reauth_of
    what = "re-authentication" if reauth_of is not None else "authentication"
    try:
        challenge = server.evaluate(token, cluster.now_ms())
        if server.complete and reauth_of is not None and sasl_principal(server.authorization_id) != reauth_of[1]:
            old, new = reauth_of[1].split(":", 1), ["User", server.authorization_id]
            raise AuthenticationFailed(f"Cannot change principals during re-authentication from {old[0]}.{old[1]}: "
                                       f"{new[0]}.{new[1]}")
    except AuthenticationFailed as exc:
        session.step("fail")
        return Failure(str(exc), f"SASL/{session.mechanism} {what} failed: {exc}")
    except InvalidCredentials as exc:
        session.step("fail")
        return Failure(f"Authentication failed during {what} due to invalid credentials with SASL mechanism "
                       f"{session.mechanism}", f"SASL/{session.mechanism} {what} failed: {exc}")
    if not server.complete:
        session.step("challenge")
        return challenge, 0
    session.step("complete")
    max_reauth = listener_config(node.config, session.listener, "connections.max.reauth.ms", session.mechanism)
    lifetime = session.session_lifetime_ms(cluster.now_ms(), max_reauth)
    session.principal = connection.principal = sasl_principal(server.authorization_id)
    session.reauth_of = None
    log.debug("connection %d from %s: %s as %s (%s), session lifetime %d ms", connection.id, connection.peer,
              what, connection.principal, session.mechanism, lifetime)
    return challenge, lifetime


HANDLER = ApiHandler(API_KEY, handle)
