"""``sasl.jaas.config`` values, parsed as Kafka's JaasConfig does (a java.io.StreamTokenizer): a login module
class, a control flag, ``key=value`` options (a value is a word or a double-quoted string with backslash
escapes), and a closing semicolon; ``//`` and ``/* */`` comments are skipped. A value names exactly one login
module. The broker (its listeners' users) and the clients (their credentials) read the same text the same way."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

FLAGS = ("required", "requisite", "sufficient", "optional")
LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "OAUTHBEARER": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule",
}
"""The login module each SASL mechanism's ``sasl.jaas.config`` must name."""


class JaasConfigError(ValueError):
    """A ``sasl.jaas.config`` Java's JaasConfig would refuse (the broker answers INVALID_CONFIG for it)."""
_TOKEN = re.compile(r"""
    (?P<space>\s+|//[^\n]*|/\*.*?\*/)
  | "(?P<quoted>(?:[^"\\]|\\.)*)"
  | (?P<word>[A-Za-z0-9_.$\-]+)
  | (?P<punct>[=;])
""", re.VERBOSE | re.DOTALL)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}


@dataclass(frozen=True)
class LoginModule:
    name: str
    flag: str
    options: dict[str, str] = field(default_factory=dict)


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise JaasConfigError(f"Invalid JAAS config: unexpected {text[pos]!r} at position {pos}")
        pos = m.end()
        if m.group("space") is not None:
            continue
        if m.group("quoted") is not None:
            out.append(("value", re.sub(r"\\(.)", lambda e: _ESCAPES.get(e.group(1), e.group(1)), m.group("quoted"))))
        elif m.group("word") is not None:
            out.append(("word", m.group("word")))
        else:
            out.append((m.group("punct"), m.group("punct")))
    return out


def parse(text: str) -> list[LoginModule]:
    tokens = _tokens(text)
    modules: list[LoginModule] = []
    i = 0
    while i < len(tokens):
        if tokens[i][0] != "word" or i + 1 >= len(tokens) or tokens[i + 1][1].lower() not in FLAGS:
            raise JaasConfigError("Invalid JAAS config: expected '<LoginModule class> <flag> key=value ... ;'")
        name, flag = tokens[i][1], tokens[i + 1][1].lower()
        i += 2
        options: dict[str, str] = {}
        while i < len(tokens) and tokens[i][0] != ";":
            if i + 2 >= len(tokens) or tokens[i][0] != "word" or tokens[i + 1][0] != "=" or \
                    tokens[i + 2][0] not in ("word", "value"):
                raise JaasConfigError(f"Invalid JAAS config: expected key=value in the options of {name}")
            options[tokens[i][1]] = tokens[i + 2][1]
            i += 3
        if i >= len(tokens):
            raise JaasConfigError(f"Invalid JAAS config: the options of {name} do not end with ';'")
        i += 1
        modules.append(LoginModule(name, flag, options))
    return modules


def login_module(text: str) -> LoginModule:
    """The one login module of a ``sasl.jaas.config`` (Kafka refuses zero or several)."""
    modules = parse(text)
    if len(modules) != 1:
        raise JaasConfigError(f"JAAS config property contains {len(modules)} login modules, should be 1 module")
    return modules[0]
