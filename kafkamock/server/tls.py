"""TLS at the edge: a server ``ssl.SSLContext`` per listener from Kafka's ``ssl.*`` configs (each also as
``listener.name.<listener>.ssl.*``), and throwaway certificates for ``kafkamock serve --tls`` and tests.

Keystores: PEM (``ssl.keystore.certificate.chain`` + ``ssl.keystore.key`` inline, or ``ssl.keystore.location``
naming a PEM file with the private key and the chain; ``ssl.key.password`` for an encrypted key) and PKCS12
(``ssl.keystore.password``). Truststores (to verify client certificates): PEM (location or
``ssl.truststore.certificates``) and PKCS12. JKS, Kafka's default type, is Java's own format: refused with a
message. ``ssl.client.auth`` none/requested/required maps to CERT_NONE/CERT_OPTIONAL/CERT_REQUIRED; on a
SASL_SSL listener only the listener-prefixed setting counts, as in Kafka (KIP-684).
"""

from __future__ import annotations

import os
import re
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafkamock.broker.config import BrokerConfig, ConfigError, listener_config

if TYPE_CHECKING:
    import trustme

CLIENT_AUTH = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}


def _get(config: BrokerConfig, listener: str, name: str) -> Any:
    """A config's value as ``listener`` sees it (its type is the config's: text, a list, None)."""
    return listener_config(config, listener, name)


def _pkcs12_pem(path: str, password: str) -> tuple[bytes | None, list[bytes]]:
    """(private key PEM or None, certificate PEMs) of a PKCS12 file."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12

    try:
        key, cert, extra = pkcs12.load_key_and_certificates(Path(path).read_bytes(),
                                                            password.encode() if password else None)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read PKCS12 store {path}: {exc}") from None
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()) if key is not None else None
    certs = [c.public_bytes(serialization.Encoding.PEM) for c in ([cert] if cert else []) + list(extra or [])]
    return key_pem, certs


def _load_keystore(ctx: ssl.SSLContext, config: BrokerConfig, listener: str) -> None:
    kind = _get(config, listener, "ssl.keystore.type")
    location = _get(config, listener, "ssl.keystore.location")
    chain, key = _get(config, listener, "ssl.keystore.certificate.chain"), _get(config, listener, "ssl.keystore.key")
    key_password = _get(config, listener, "ssl.key.password") or None
    prefix = f"listener.name.{listener.lower()}."
    if kind == "JKS":
        raise ConfigError(f"TLS listener {listener}: JKS keystores are Java-only; set {prefix}ssl.keystore.type (or "
                          "ssl.keystore.type) to PEM or PKCS12")
    with tempfile.TemporaryDirectory(prefix="kafkamock-tls-") as tmp:
        if kind == "PEM" and chain and key:
            cert_file, key_file = Path(tmp, "chain.pem"), Path(tmp, "key.pem")
            cert_file.write_text(chain)
            key_file.write_text(key)
            files: tuple[str, str | None] = (str(cert_file), str(key_file))
        elif kind == "PEM" and location:
            files = (location, None)
        elif kind == "PKCS12" and location:
            key_pem, certs = _pkcs12_pem(location, _get(config, listener, "ssl.keystore.password"))
            if key_pem is None or not certs:
                raise ConfigError(f"TLS listener {listener}: PKCS12 keystore {location} has no key and certificate")
            combined = Path(tmp, "keystore.pem")
            combined.write_bytes(key_pem + b"".join(certs))
            files, key_password = (str(combined), None), None
        else:
            raise ConfigError(f"TLS listener {listener} needs a keystore: ssl.keystore.type=PEM with "
                              "ssl.keystore.location (key and chain in one PEM file) or ssl.keystore.certificate.chain "
                              "and ssl.keystore.key, or ssl.keystore.type=PKCS12 with ssl.keystore.location")
        try:
            ctx.load_cert_chain(files[0], files[1], password=key_password)
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError(f"TLS listener {listener}: cannot load the keystore: {exc}") from None


def _load_truststore(ctx: ssl.SSLContext, config: BrokerConfig, listener: str) -> bool:
    kind = _get(config, listener, "ssl.truststore.type")
    location = _get(config, listener, "ssl.truststore.location")
    inline = _get(config, listener, "ssl.truststore.certificates")
    try:
        if kind == "PEM" and inline:
            ctx.load_verify_locations(cadata=inline)
        elif kind == "PEM" and location:
            ctx.load_verify_locations(cafile=location)
        elif kind == "PKCS12" and location:
            _, certs = _pkcs12_pem(location, _get(config, listener, "ssl.truststore.password"))
            ctx.load_verify_locations(cadata=b"".join(certs).decode())
        elif location:
            raise ConfigError(f"TLS listener {listener}: JKS truststores are Java-only; set ssl.truststore.type to "
                              "PEM or PKCS12")
        else:
            return False
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"TLS listener {listener}: cannot load the truststore: {exc}") from None
    return True


def client_auth(config: BrokerConfig, listener: str, security_protocol: str) -> str:
    mode: str
    if security_protocol == "SASL_SSL":
        mode = config.values.get(f"listener.name.{listener.lower()}.ssl.client.auth", "none")
    else:
        mode = _get(config, listener, "ssl.client.auth")
    return mode


def server_context(config: BrokerConfig, listener: str, security_protocol: str) -> ssl.SSLContext:
    """The SSLContext of one TLS listener; raises ConfigError with what to set."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    protocols = _get(config, listener, "ssl.enabled.protocols").split(",")
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2 if "TLSv1.2" in protocols else ssl.TLSVersion.TLSv1_3
    ctx.maximum_version = ssl.TLSVersion.TLSv1_3 if "TLSv1.3" in protocols else ssl.TLSVersion.TLSv1_2
    _load_keystore(ctx, config, listener)
    trusted = _load_truststore(ctx, config, listener)
    mode = client_auth(config, listener, security_protocol)
    if mode != "none" and not trusted:
        ctx.load_default_certs(ssl.Purpose.CLIENT_AUTH)     # as the JVM falls back to its default truststore
    ctx.verify_mode = CLIENT_AUTH[mode]
    return ctx


# -- throwaway certificates ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TlsFiles:
    """A throwaway CA and a server certificate it signed, as files: ``ca`` (PEM, what clients trust),
    ``keystore`` (PEM: private key then chain, for ``ssl.keystore.location``), ``certificate`` and ``key``."""

    directory: Path
    ca: Path
    keystore: Path
    certificate: Path
    key: Path

    def broker_config(self, listener: str | None = None) -> dict[str, str]:
        """The broker configs that serve this certificate (on ``listener`` only, when named)."""
        prefix = f"listener.name.{listener.lower()}." if listener else ""
        return {f"{prefix}ssl.keystore.type": "PEM", f"{prefix}ssl.keystore.location": str(self.keystore),
                f"{prefix}ssl.truststore.type": "PEM", f"{prefix}ssl.truststore.location": str(self.ca)}


class ThrowawayCA:
    """A certificate authority for one test or one ``kafkamock serve --tls`` (``trustme``): it signs the
    broker's certificate and, for mutual TLS, clients' certificates with a chosen subject."""

    def __init__(self, directory: str | os.PathLike[str]):
        import trustme

        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._ca = trustme.CA(organization_name="kafkamock", organization_unit_name="throwaway CA")
        self.ca_file = self.directory / "ca.pem"
        self._ca.cert_pem.write_to_path(str(self.ca_file))

    def server(self, *hosts: str) -> TlsFiles:
        hosts = hosts or ("127.0.0.1", "localhost", "::1")
        leaf = self._ca.issue_cert(*hosts, common_name=hosts[0])
        return self._write("server", leaf)

    def client(self, common_name: str, organization_unit: str = "clients", organization: str = "kafkamock"
               ) -> TlsFiles:
        """A client certificate whose subject is ``CN=<common_name>,OU=<unit>,O=<organization>`` (Kafka's
        principal ``User:CN=...,OU=...,O=...``)."""
        host = re.sub(r"[^a-z0-9-]+", "-", common_name.lower()).strip("-") or "client"
        leaf = self._ca.issue_cert(f"{host}.client.invalid", common_name=common_name,
                                   organization_name=organization, organization_unit_name=organization_unit)
        return self._write(f"client-{common_name}", leaf)

    def _write(self, name: str, leaf: trustme.LeafCert) -> TlsFiles:
        """The key goes out as PKCS#8, the only PEM key form Java's Kafka clients read (PemStore)."""
        from cryptography.hazmat.primitives import serialization

        keystore, cert, key = (self.directory / f"{name}{suffix}" for suffix in (".keystore.pem", ".pem", ".key"))
        private = serialization.load_pem_private_key(leaf.private_key_pem.bytes(), None)
        key_pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                        serialization.NoEncryption())
        chain = b"".join(blob.bytes() for blob in leaf.cert_chain_pems)
        keystore.write_bytes(key_pem + chain)
        cert.write_bytes(chain)
        key.write_bytes(key_pem)
        return TlsFiles(self.directory, self.ca_file, keystore, cert, key)


def throwaway(directory: str | os.PathLike[str], *hosts: str) -> TlsFiles:
    """A fresh CA and a server certificate for ``hosts`` (default 127.0.0.1, localhost, ::1) in ``directory``."""
    return ThrowawayCA(directory).server(*hosts)
