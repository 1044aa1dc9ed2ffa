"""The clients' side of Kafka security: TLS and SASL, configured with the Java client's settings.

``security.protocol`` (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL), ``sasl.mechanism`` (PLAIN, SCRAM-SHA-256,
SCRAM-SHA-512, OAUTHBEARER) with the credentials in ``sasl.jaas.config`` as Java writes them
(``org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";``), and the TLS
trust and identity as PEM (``ssl.truststore.location`` / ``ssl.truststore.certificates``, ``ssl.keystore.*``).

Each SASL mechanism is a small sans-IO exchange: ``first()`` gives the client's first token, ``answer(token)``
takes a server token and gives the next one (None when done), and ``finish(token)`` checks the server's last.
A connection runs it over SaslHandshake v1 and SaslAuthenticate, as Java's client does.
"""

from __future__ import annotations

import base64
import json
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kafkamock import jaas

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")


@dataclass(frozen=True)
class Security:
    """How a client connects: TLS or not, SASL or not, with what."""

    protocol: str = "PLAINTEXT"
    mechanism: str = "GSSAPI"
    username: str | None = None
    password: str | None = None
    token_claims: dict[str, Any] = field(default_factory=dict)     # OAUTHBEARER's unsecured token
    ssl_context: ssl.SSLContext | None = None
    check_hostname: bool = True

    @property
    def tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def sasl(self) -> bool:
        return self.protocol in ("SASL_PLAINTEXT", "SASL_SSL")

    def exchange(self) -> SaslExchange:
        if self.mechanism == "PLAIN":
            return PlainExchange(self.username or "", self.password or "")
        if self.mechanism.startswith("SCRAM-"):
            return ScramExchange(self.mechanism, self.username or "", self.password or "")
        return OAuthBearerExchange(self.token_claims)


def security_from(settings: Mapping[str, Any]) -> Security:
    """A client's Security from its checked settings (``kafkamock.client.config``)."""
    protocol = settings.get("security.protocol") or "PLAINTEXT"
    if protocol == "PLAINTEXT":
        return Security()
    mechanism = settings.get("sasl.mechanism") or "GSSAPI"
    username = password = None
    claims: dict[str, Any] = {}
    if protocol.startswith("SASL"):
        if mechanism not in MECHANISMS:
            raise ValueError(f"sasl.mechanism {mechanism!r} is not supported (supported: {', '.join(MECHANISMS)})")
        jaas_config = settings.get("sasl.jaas.config")
        if not jaas_config:
            raise ValueError(f"security.protocol {protocol} with sasl.mechanism {mechanism} needs sasl.jaas.config "
                             f"({jaas.LOGIN_MODULES[mechanism]} required ...;)")
        module = jaas.login_module(jaas_config)
        options = module.options
        if module.name != jaas.LOGIN_MODULES[mechanism]:
            raise ValueError(f"sasl.jaas.config names {module.name}; sasl.mechanism {mechanism} needs "
                             f"{jaas.LOGIN_MODULES[mechanism]}")
        if mechanism == "OAUTHBEARER":
            claims = _unsecured_claims(options)
        else:
            username, password = options.get("username"), options.get("password")
            if username is None or password is None:
                raise ValueError("sasl.jaas.config needs username=\"...\" and password=\"...\"")
    context = _ssl_context(settings) if protocol in ("SSL", "SASL_SSL") else None
    return Security(protocol, mechanism, username, password, claims, context,
                    check_hostname=(settings.get("ssl.endpoint.identification.algorithm") or "") == "https")


def _unsecured_claims(options: Mapping[str, str]) -> dict[str, Any]:
    """The claims of Java's unsecured login callback handler: ``unsecuredLoginStringClaim_sub="alice"``,
    ``unsecuredLoginLifetimeSeconds``, ``unsecuredLoginExtension_<name>`` (as SASL extensions)."""
    sub = options.get("unsecuredLoginStringClaim_sub")
    if not sub:
        raise ValueError('OAUTHBEARER without a token endpoint needs unsecuredLoginStringClaim_sub="<principal>" '
                         "in sasl.jaas.config (Kafka's unsecured tokens)")
    claims: dict[str, Any] = {k[len("unsecuredLoginStringClaim_"):]: v for k, v in options.items()
                              if k.startswith("unsecuredLoginStringClaim_")}
    claims["lifetime"] = int(options.get("unsecuredLoginLifetimeSeconds", "3600"))
    claims["extensions"] = {k[len("unsecuredLoginExtension_"):]: v for k, v in options.items()
                            if k.startswith("unsecuredLoginExtension_")}
    return claims


def _ssl_context(settings: Mapping[str, Any]) -> ssl.SSLContext:
    """TLS as the Java client configures it, PEM only: the trust store (a file, or certificates inline) and,
    for mutual TLS, the key store (certificate chain and key, a file or inline)."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    for kind in ("truststore", "keystore"):
        kind_type = settings.get(f"ssl.{kind}.type") or "PEM"
        if kind_type != "PEM" and (settings.get(f"ssl.{kind}.location")):
            raise ValueError(f"ssl.{kind}.type {kind_type} is not supported: give PEM files (ssl.{kind}.type=PEM)")
    if settings.get("ssl.truststore.location"):
        context.load_verify_locations(cafile=settings["ssl.truststore.location"])
    if settings.get("ssl.truststore.certificates"):
        context.load_verify_locations(cadata=settings["ssl.truststore.certificates"])
    location, chain, key = (settings.get("ssl.keystore.location"), settings.get("ssl.keystore.certificate.chain"),
                            settings.get("ssl.keystore.key"))
    password = settings.get("ssl.key.password") or None
    if location:
        context.load_cert_chain(location, password=password)
    elif chain and key:
        import os
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:          # ssl loads a chain from files only
            path = os.path.join(tmp, "identity.pem")
            with open(path, "w") as out:
                out.write(chain.strip() + "\n" + key.strip() + "\n")
            context.load_cert_chain(path, password=password)
    context.check_hostname = (settings.get("ssl.endpoint.identification.algorithm") or "") == "https"
    return context


class SaslExchange:
    """A client's SASL exchange, sans-IO."""

    mechanism = ""

    def first(self) -> bytes:
        raise NotImplementedError

    def answer(self, token: bytes) -> bytes | None:
        """The next client token for a server token, or None when the exchange is complete."""
        return None


class PlainExchange(SaslExchange):
    """RFC 4616: one message, ``authzid NUL authcid NUL password``."""

    mechanism = "PLAIN"

    def __init__(self, username: str, password: str):
        self.username, self.password = username, password

    def first(self) -> bytes:
        return b"\0" + self.username.encode() + b"\0" + self.password.encode()


class ScramExchange(SaslExchange):
    """RFC 5802 / 7677 through ``scramp``: client-first, client-final, then the server's signature is checked."""

    def __init__(self, mechanism: str, username: str, password: str):
        from scramp import ScramClient

        self.mechanism = mechanism
        self.client = ScramClient([mechanism], username, password)
        self.stage = 0

    def first(self) -> bytes:
        message: str = self.client.get_client_first()      # scramp is untyped
        return message.encode()

    def answer(self, token: bytes) -> bytes | None:
        self.stage += 1
        if self.stage == 1:
            self.client.set_server_first(token.decode())
            final: str = self.client.get_client_final()
            return final.encode()
        self.client.set_server_final(token.decode())           # raises if the server's signature is wrong
        return None


class OAuthBearerExchange(SaslExchange):
    """RFC 7628 with an unsecured JWS (``alg: none``), as Kafka's default unsecured login handler makes."""

    mechanism = "OAUTHBEARER"

    def __init__(self, claims: Mapping[str, Any]):
        self.claims = dict(claims)

    def first(self) -> bytes:
        import time

        extensions = self.claims.pop("extensions", {})
        lifetime = self.claims.pop("lifetime", 3600)
        now = time.time()
        body = {**self.claims, "iat": now, "exp": now + lifetime}

        def part(value: Mapping[str, Any]) -> str:
            return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

        token = f"{part({'alg': 'none'})}.{part(body)}."
        extra = "".join(f"{k}={v}\x01" for k, v in extensions.items())
        return f"n,,\x01auth=Bearer {token}\x01{extra}\x01".encode()

    def answer(self, token: bytes) -> bytes | None:
        if token:       # an error report (RFC 7628 3.2.2): acknowledge it, the broker then fails the exchange
            return b"\x01"
        return None
