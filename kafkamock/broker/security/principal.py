"""Kafka principals. SSL: DefaultKafkaPrincipalBuilder with the DEFAULT ``ssl.principal.mapping.rules`` gives
``User:`` + the client certificate's subject as Java's ``X500Principal.getName()`` writes it (RFC 2253: the
RDNs last to first, CN/C/L/ST/O/OU/STREET/DC/UID by keyword, any other attribute as ``OID=#<DER hex>``); no
client certificate gives ``User:ANONYMOUS``. SASL: ``User:`` + the authorization id."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:       # cryptography is imported by the first client certificate read, not by every broker start
    from cryptography import x509

ANONYMOUS = "User:ANONYMOUS"
_KEYWORDS = {"2.5.4.3": "CN", "2.5.4.6": "C", "2.5.4.7": "L", "2.5.4.8": "ST", "2.5.4.10": "O", "2.5.4.11": "OU",
             "2.5.4.9": "STREET", "0.9.2342.19200300.100.1.25": "DC", "0.9.2342.19200300.100.1.1": "UID"}
_SPECIAL = set(',+"\\<>;')


def _escape(value: str) -> str:
    out = "".join("\\" + c if c in _SPECIAL else c for c in value)
    if out.startswith((" ", "#")):
        out = "\\" + out
    if out.endswith(" ") and not out.endswith("\\ "):
        out = out[:-1] + "\\ "
    return out


def _der(attribute: x509.NameAttribute) -> str:
    raw = attribute.value.encode() if isinstance(attribute.value, str) else bytes(attribute.value)
    tag = getattr(getattr(attribute, "_type", None), "value", 12)      # UTF8String unless known
    length = bytes([len(raw)]) if len(raw) < 128 else bytes([0x81, len(raw)]) if len(raw) < 256 else \
        bytes([0x82]) + len(raw).to_bytes(2, "big")
    return (bytes([tag]) + length + raw).hex()


def rfc2253(name: x509.Name) -> str:
    rdns = []
    for rdn in reversed(name.rdns):
        parts = []
        for attribute in rdn:
            keyword = _KEYWORDS.get(attribute.oid.dotted_string)
            if keyword is None:
                parts.append(f"{attribute.oid.dotted_string}=#{_der(attribute)}")
            else:
                parts.append(f"{keyword}={_escape(str(attribute.value))}")
        rdns.append("+".join(parts))
    return ",".join(rdns)


def ssl_principal(der_certificate: bytes | None) -> str:
    if not der_certificate:
        return ANONYMOUS
    from cryptography import x509

    return "User:" + rfc2253(x509.load_der_x509_certificate(der_certificate).subject)


def sasl_principal(authorization_id: str) -> str:
    return "User:" + authorization_id
