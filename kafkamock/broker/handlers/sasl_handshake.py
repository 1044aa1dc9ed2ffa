"""SaslHandshake (17): the client names its SASL mechanism (SaslServerAuthenticator.handleHandshakeRequest).

v1 moves the exchange into SaslAuthenticate requests; v0 into raw size-prefixed tokens (the edge's raw mode). An
unknown or disabled mechanism is answered UNSUPPORTED_SASL_MECHANISM with the enabled list, then the connection
closes. After authentication (or on a listener without SASL) Kafka's request handler answers ILLEGAL_SASL_STATE;
a re-authentication (KIP-368) was let in by ``Cluster.handle`` and arrives here in the HANDSHAKE state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.errors import ErrorCode
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.broker.outcome import Respond
from kafkamock.broker.security.session import State, new_server
from kafkamock.codec.messages import SaslHandshakeRequest, SaslHandshakeResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 17


def handle(cluster: Cluster, request: Request[SaslHandshakeRequest]) -> SaslHandshakeResponse | Respond:
    session = request.connection.sasl
    if session is None or session.state not in (State.HANDSHAKE_OR_VERSIONS, State.HANDSHAKE):
        return SaslHandshakeResponse(error_code=ErrorCode.ILLEGAL_SASL_STATE, mechanisms=[])
    mechanism = request.body.mechanism
    if mechanism not in session.mechanisms:
        session.step("fail")
        return Respond(SaslHandshakeResponse(error_code=ErrorCode.UNSUPPORTED_SASL_MECHANISM,
                                             mechanisms=list(session.mechanisms)),
                       close=f"unsupported SASL mechanism {mechanism}")
    if session.reauth_of is not None and mechanism != session.reauth_of[0]:
        session.bad_mechanism = (f"SASL mechanism '{mechanism}' requested by client is not supported for "
                                 f"re-authentication of mechanism '{session.reauth_of[0]}'")
    session.mechanism = mechanism
    session.server = new_server(cluster.node_config(request), session.listener, mechanism, cluster.scram_credentials)
    session.step("handshake" if request.version >= 1 else "raw_handshake")
    return SaslHandshakeResponse(error_code=ErrorCode.NONE, mechanisms=list(session.mechanisms))


HANDLER = ApiHandler(API_KEY, handle)
