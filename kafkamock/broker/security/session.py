"""One connection's SASL state, as Kafka's SaslServerAuthenticator keeps it, as a table.

A connection to a SASL listener starts in HANDSHAKE_OR_VERSIONS. Until it is COMPLETE only the APIs ``ALLOWED``
in its state reach the broker; anything else closes the connection ("Unexpected Kafka request of type X during
SASL handshake"). SaslHandshake v0 selects Kafka's raw-token mode (AUTHENTICATE_RAW: size-prefixed tokens
without Kafka headers, moved by the edge). KIP-368: a session may have an expiry; once it has passed, any
request but a SaslHandshake that starts re-authentication closes the connection; re-authentication goes
COMPLETE -> HANDSHAKE -> AUTHENTICATE -> COMPLETE on the same connection and must keep mechanism and principal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from kafkamock import jaas
from kafkamock.broker.config import BrokerConfig, ConfigError, listener_config
from kafkamock.broker.security.mechanisms import OAuthBearerServer, PlainServer, SaslServer, ScramServer
from kafkamock.broker.security.scram import ScramCredentials
from kafkamock.state_machine import move

API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE = 18, 17, 36
MIN_REAUTH_INTERVAL_MS = 1000          # KafkaChannel: at most one re-authentication a second


class State(Enum):
    HANDSHAKE_OR_VERSIONS = "HANDSHAKE_OR_VERSIONS"
    HANDSHAKE = "HANDSHAKE"
    AUTHENTICATE = "AUTHENTICATE"
    AUTHENTICATE_RAW = "AUTHENTICATE_RAW"
    COMPLETE = "COMPLETE"
    FAILED = "FAILED"


S = State
TRANSITIONS: dict[tuple[State, str], State] = {
    (S.HANDSHAKE_OR_VERSIONS, "api_versions"): S.HANDSHAKE,
    (S.HANDSHAKE_OR_VERSIONS, "handshake"): S.AUTHENTICATE,
    (S.HANDSHAKE_OR_VERSIONS, "raw_handshake"): S.AUTHENTICATE_RAW,
    (S.HANDSHAKE, "handshake"): S.AUTHENTICATE,
    (S.HANDSHAKE, "raw_handshake"): S.AUTHENTICATE_RAW,
    (S.AUTHENTICATE, "challenge"): S.AUTHENTICATE,
    (S.AUTHENTICATE, "complete"): S.COMPLETE,
    (S.AUTHENTICATE_RAW, "challenge"): S.AUTHENTICATE_RAW,
    (S.AUTHENTICATE_RAW, "complete"): S.COMPLETE,
    (S.COMPLETE, "reauthenticate"): S.HANDSHAKE,
    **{(state, "fail"): S.FAILED for state in State},
}
ALLOWED: dict[State, frozenset[int]] = {
    S.HANDSHAKE_OR_VERSIONS: frozenset({API_VERSIONS, SASL_HANDSHAKE}),
    S.HANDSHAKE: frozenset({SASL_HANDSHAKE}),
    S.AUTHENTICATE: frozenset({SASL_AUTHENTICATE}),
    S.AUTHENTICATE_RAW: frozenset(),
    S.FAILED: frozenset(),
}


@dataclass
class SaslSession:
    listener: str
    mechanisms: list[str]
    state: State = S.HANDSHAKE_OR_VERSIONS
    mechanism: str | None = None
    server: SaslServer | None = None
    client_supports_reauth: bool = False        # it sent a SaslAuthenticate v1+
    expiry_ms: int | None = None                # KIP-368 session expiry, on the broker's clock
    reauth_of: tuple[str, str] | None = None    # (mechanism, principal) being re-authenticated
    bad_mechanism: str | None = None            # re-authentication asked for another mechanism
    last_reauth_ms: int | None = None
    principal: str | None = field(default=None)

    def step(self, event: str) -> None:
        self.state = move(TRANSITIONS, self.state, event, "SASL session")

    @property
    def complete(self) -> bool:
        return self.state is S.COMPLETE

    def allows(self, api_key: int) -> bool:
        return self.complete or api_key in ALLOWED[self.state]

    def expired(self, now_ms: int) -> bool:
        return self.complete and self.expiry_ms is not None and now_ms > self.expiry_ms

    def begin_reauthentication(self, now_ms: int) -> bool:
        """KafkaChannel.maybeBeginServerReauthentication: only a session with an expiry re-authenticates, at most
        once a second; otherwise the SaslHandshake is answered as after authentication (ILLEGAL_SASL_STATE)."""
        if not self.complete or self.expiry_ms is None:
            return False
        if self.last_reauth_ms is not None and now_ms - self.last_reauth_ms < MIN_REAUTH_INTERVAL_MS:
            return False
        self.last_reauth_ms = now_ms
        self.reauth_of = (self.mechanism or "", self.principal or "")
        self.step("reauthenticate")
        return True

    def session_lifetime_ms(self, now_ms: int, max_reauth_ms: int) -> int:
        """SaslServerAuthenticator's calcCompletionTimesAndReturnSessionLifetimeMs: the smaller of
        ``connections.max.reauth.ms`` (when > 0) and the credential's remaining life; sets the expiry."""
        expiry = self.server.credential_expiry_ms if self.server else None
        if expiry is None and max_reauth_ms <= 0:
            self.expiry_ms = None
            return 0
        if expiry is None:
            lifetime = max_reauth_ms
        elif max_reauth_ms <= 0:
            lifetime = max(0, expiry - now_ms)
        else:
            lifetime = max(0, min(expiry - now_ms, max_reauth_ms))
        self.expiry_ms = now_ms + lifetime
        return lifetime


def new_server(config: BrokerConfig, listener: str, mechanism: str, credentials: ScramCredentials | None
               ) -> SaslServer:
    """The SaslServer for ``mechanism`` on ``listener``, with what its JAAS config says (PLAIN's users,
    OAUTHBEARER's validator options); SCRAM reads the broker's credential store."""
    module = login_module(config, listener, mechanism)
    options = module.options if module else {}
    if mechanism == "PLAIN":
        return PlainServer(mechanism, users={k[5:]: v for k, v in options.items() if k.startswith("user_")})
    if mechanism.startswith("SCRAM-"):
        return ScramServer(mechanism, credentials=credentials)
    return OAuthBearerServer(mechanism, options=options)


def login_module(config: BrokerConfig, listener: str, mechanism: str) -> jaas.LoginModule | None:
    """The JAAS login module for a listener's mechanism (``listener.name.<l>.<mech>.sasl.jaas.config``, then the
    unprefixed ``sasl.jaas.config``); it must be the mechanism's own module. PLAIN needs one (its users live
    there); SCRAM and OAUTHBEARER work without (Kafka would want a JAAS entry for them too)."""
    text = listener_config(config, listener, "sasl.jaas.config", mechanism)
    if not text:
        if mechanism == "PLAIN":
            raise ConfigError(f"SASL listener {listener}: PLAIN needs its users in listener.name.{listener.lower()}"
                              f".plain.sasl.jaas.config ({jaas.LOGIN_MODULES['PLAIN']} required user_<name>=\"...\";)")
        return None
    try:
        module = jaas.login_module(text)
    except jaas.JaasConfigError as exc:
        raise ConfigError(f"SASL listener {listener}, {mechanism}: {exc}") from exc
    if module.name != jaas.LOGIN_MODULES[mechanism]:
        # An unprefixed sasl.jaas.config serves one mechanism only; other mechanisms of the listener ignore it.
        prefixed = f"listener.name.{listener.lower()}.{mechanism.lower()}.sasl.jaas.config"
        if prefixed in config.values or mechanism == "PLAIN":
            raise ConfigError(f"SASL listener {listener}: the JAAS config for {mechanism} names {module.name}, "
                              f"expected {jaas.LOGIN_MODULES[mechanism]}")
        return None
    return module
