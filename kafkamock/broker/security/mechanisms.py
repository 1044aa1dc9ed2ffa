"""The server side of each SASL mechanism kafkamock serves, as Kafka's SaslServer implementations answer:
``evaluate(token)`` returns the next challenge (or b"" at the end) and sets ``complete``.

Two kinds of failure, as in Kafka: ``AuthenticationFailed`` (a SaslAuthenticationException, whose message the
client sees) and ``InvalidCredentials`` (a SaslException: the client sees only Kafka's generic "Authentication
failed during authentication due to invalid credentials with SASL mechanism X", so nothing leaks about which
users exist).
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
from dataclasses import dataclass, field
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING

from kafkamock.broker.security.scram import MIN_ITERATIONS, ScramCredentials

if TYPE_CHECKING:
    import scramp.core


@cache
def _scramp() -> ModuleType:
    """scramp, imported by the first SCRAM exchange rather than by every broker start (it takes about 20 ms).

    Kafka stores whatever salt AlterUserScramCredentials sends (Java's Admin makes about 26 bytes; a client may send
    4) and authenticates with it; scramp's server refuses a stored salt under 12 bytes, which would leave such a
    credential unusable here alone."""
    import scramp.core

    core: ModuleType = scramp.core
    core.Salt.MIN_LENGTH = 0
    return core


class AuthenticationFailed(Exception):
    """Failed authentication whose message goes to the client as is."""


class InvalidCredentials(Exception):
    """Failed authentication that the client only learns as Kafka's generic message (the reason is logged)."""


@dataclass
class SaslServer:
    mechanism: str
    complete: bool = False
    authorization_id: str = ""
    credential_expiry_ms: int | None = None       # OAUTHBEARER: the token's exp (KIP-368 caps the session at it)

    def evaluate(self, token: bytes, now_ms: int) -> bytes:
        raise NotImplementedError


@dataclass
class PlainServer(SaslServer):
    """RFC 4616 (PlainSaslServer): ``authzid NUL username NUL password``; users are the JAAS ``user_<name>``
    options of the listener's PlainLoginModule (PlainServerCallbackHandler)."""

    users: dict[str, str] = field(default_factory=dict)

    def evaluate(self, token: bytes, now_ms: int) -> bytes:
        parts = token.decode("utf-8", "replace").split("\x00")
        if len(parts) != 3:
            raise InvalidCredentials(f"Invalid SASL/PLAIN response: expected 3 tokens, got {len(parts)}")
        authzid, username, password = parts
        if not username:
            raise AuthenticationFailed("Authentication failed: username not specified")
        if not password:
            raise AuthenticationFailed("Authentication failed: password not specified")
        expected = self.users.get(username)
        if expected is None or not hmac.compare_digest(expected.encode(), password.encode()):
            raise AuthenticationFailed("Authentication failed: Invalid username or password")
        if authzid and authzid != username:
            raise AuthenticationFailed(
                "Authentication failed: Client requested an authorization id that is different from username")
        self.authorization_id, self.complete = username, True
        return b""


@dataclass
class ScramServer(SaslServer):
    """RFC 5802 / 7677 through ``scramp`` (ScramSaslServer): client-first, server-first, client-final,
    server-final; the credential is looked up by the client-first's user name."""

    credentials: ScramCredentials | None = None
    _server: scramp.core.ScramServer | None = None
    _user: str = ""

    def evaluate(self, token: bytes, now_ms: int) -> bytes:
        text = token.decode("utf-8", "replace")
        scramp = _scramp()
        try:
            if self._server is None:
                return self._first(text)
            server = self._server
            server.set_client_final(text)
            final: str = server.get_server_final()
        except scramp.ScramException as exc:
            raise InvalidCredentials(str(exc)) from None
        self.authorization_id, self.complete = self._user, True
        return final.encode()

    def _first(self, text: str) -> bytes:
        gs2 = text.split(",", 2)
        authzid = gs2[1][2:] if len(gs2) == 3 and gs2[1].startswith("a=") else ""

        def lookup(username: str) -> tuple[bytes, bytes, bytes, int]:
            self._user = str(username)
            credential = self.credentials.get(self._user, self.mechanism) if self.credentials else None
            if credential is None:
                raise InvalidCredentials("Authentication failed: Invalid user credentials")
            if credential.iterations < MIN_ITERATIONS:
                raise InvalidCredentials(f"Iterations {credential.iterations} is less than the minimum "
                                         f"{MIN_ITERATIONS} for {self.mechanism}")
            return credential.salt, credential.stored_key, credential.server_key, credential.iterations

        self._server = _scramp().ScramMechanism(self.mechanism).make_server(lookup)
        self._server.set_client_first(text)
        if authzid and authzid != self._user:
            raise AuthenticationFailed(
                "Authentication failed: Client requested an authorization id that is different from username")
        first: str = self._server.get_server_first()
        return first.encode()


@dataclass
class OAuthBearerServer(SaslServer):
    """RFC 7628 with Kafka's default unsecured validator (OAuthBearerUnsecuredValidatorCallbackHandler): the
    token is an unsecured JWS (``alg: none``, empty signature), the principal is its ``sub`` claim (or the JAAS
    ``unsecuredValidatorPrincipalClaimName``), ``exp`` must be present and not past (with
    ``unsecuredValidatorAllowableClockSkewMs``), and ``unsecuredValidatorRequiredScope`` must be in ``scope``.
    A bad token gets a JSON error challenge; the client's %x01 answer to it fails the exchange with that JSON."""

    options: dict[str, str] = field(default_factory=dict)
    _error: str | None = None

    def evaluate(self, token: bytes, now_ms: int) -> bytes:
        if token == b"\x01" and self._error is not None:
            raise AuthenticationFailed(self._error)
        self._error = None
        text = token.decode("utf-8", "replace")
        if not text.startswith("n,"):
            raise InvalidCredentials("Invalid OAUTHBEARER client first message")
        gs2, _, rest = text[2:].partition(",")
        authzid = gs2[2:] if gs2.startswith("a=") else ""
        pairs = dict(p.split("=", 1) for p in rest.split("\x01") if "=" in p)
        scheme, _, value = pairs.get("auth", "").partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise InvalidCredentials("Invalid OAUTHBEARER client first message")
        try:
            principal, expiry_ms = self._validate(value.strip(), now_ms)
        except ValueError:
            self._error = json.dumps({"status": "invalid_token"}, separators=(",", ":"))
            return self._error.encode()
        if authzid and authzid != principal:
            raise AuthenticationFailed(
                f"Authentication failed: Client requested an authorization id ({authzid}) that is different from "
                f"the token's principal name ({principal})")
        self.authorization_id, self.credential_expiry_ms, self.complete = principal, expiry_ms, True
        return b""

    def _validate(self, token: str, now_ms: int) -> tuple[str, int]:
        parts = token.split(".")
        if len(parts) != 3 or parts[2]:
            raise ValueError("an unsecured JWS has three parts and an empty signature")
        header, claims = (_b64json(p) for p in parts[:2])
        if header.get("alg") != "none":
            raise ValueError("unsecured JWS must have alg none")
        principal = claims.get(self.options.get("unsecuredValidatorPrincipalClaimName", "sub"))
        exp = claims.get("exp")
        if not isinstance(principal, str) or not principal.strip():
            raise ValueError("no principal claim")
        if not isinstance(exp, int | float) or isinstance(exp, bool):
            raise ValueError("no exp claim")
        skew = int(self.options.get("unsecuredValidatorAllowableClockSkewMs", "0") or 0)
        expiry_ms = int(exp * 1000)
        if now_ms > expiry_ms + skew:
            raise ValueError("token expired")
        iat = claims.get("iat")
        if isinstance(iat, int | float) and iat * 1000 > expiry_ms:
            raise ValueError("iat after exp")
        required = self.options.get("unsecuredValidatorRequiredScope", "").split()
        scope = claims.get(self.options.get("unsecuredValidatorScopeClaimName", "scope"), [])
        scopes = scope.split() if isinstance(scope, str) else list(scope or [])
        if any(r not in scopes for r in required):
            raise ValueError("insufficient scope")
        return principal, expiry_ms


def _b64json(part: str) -> dict:
    try:
        value = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError) as exc:
        raise ValueError(str(exc)) from None
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    return value
