"""User regular expressions as Kafka evaluates them: RE2's syntax, matched in linear time.

Kafka compiles the patterns a client sends — a consumer group's SubscribedTopicRegex (KIP-848) and ListTransactions'
transactional id pattern (KIP-1152) — with RE2/J, so no pattern can make the broker backtrack for ever. kafkamock
uses Google's RE2 (the engine RE2/J was ported from): the same syntax, the same refusals (backreferences,
look-around, atomic groups, possessive quantifiers, ``\\Z``, repeat counts over 1000), linear-time matching. Where
RE2/J parts from RE2 — it refuses a literal ``{`` under a repetition operator (``b{*``) — ``compile_re2`` follows
RE2/J, and its refusals carry RE2/J's description of the mistake, which Kafka puts in its error messages.
"""

from __future__ import annotations

import re
from typing import Protocol

import re2

__all__ = ["CompiledPattern", "Re2SyntaxError", "compile_re2"]

# RE2's error code text -> RE2/J's description of the same mistake (com.google.re2j.PatternSyntaxException)
RE2J_DESCRIPTIONS = {
    "missing )": "missing closing )",
    "missing ]": "missing closing ]",
    "unexpected )": "unexpected )",
    "trailing \\": "trailing backslash at end of expression",
    "no argument for repetition operator": "missing argument to repetition operator",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid repetition size": "invalid repeat count",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid named capture group": "invalid named capture",
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class": "invalid character class",
    "invalid character class range": "invalid character class range",
    "invalid UTF-8": "invalid UTF-8",
}
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False       # a client's bad pattern is its answer, not a line in the broker's log
_REPEAT = re.compile(r"\{\d+(?:,\d*)?\}")


class CompiledPattern(Protocol):
    def fullmatch(self, text: str) -> object: ...


class Re2SyntaxError(ValueError):
    """The pattern is not valid RE2/J; ``description`` is RE2/J's wording of why."""

    def __init__(self, description: str):
        super().__init__(description)
        self.description = description


def compile_re2(pattern: str) -> CompiledPattern:
    """The compiled pattern (``fullmatch`` is RE2/J's ``matches()``), or Re2SyntaxError."""
    try:
        compiled: CompiledPattern = re2.compile(pattern, _OPTIONS)
    except re2.error as exc:
        message = exc.args[0].decode(errors="replace") if isinstance(exc.args[0], bytes) else str(exc.args[0])
        code = message.split(": ", 1)[0]
        raise Re2SyntaxError(RE2J_DESCRIPTIONS.get(code, code)) from None
    if _literal_brace_repeated(pattern):
        raise Re2SyntaxError("invalid nested repetition operator")
    return compiled


def _literal_brace_repeated(pattern: str) -> bool:
    """RE2/J's quirk: a ``{`` that starts no repeat count is a literal, yet a repetition operator right after it is
    refused as nested. Escapes, ``\\Q...\\E`` and character classes are skipped (RE2 has already parsed them)."""
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            if pattern.startswith("Q", i + 1):
                end = pattern.find("\\E", i + 2)
                i = n if end < 0 else end + 2
                continue
            if i + 2 < n and pattern[i + 1] in "pPx" and pattern[i + 2] == "{":
                i = pattern.find("}", i + 2) + 1
                continue
            i += 2
        elif c == "[":
            i = _class_end(pattern, i)
        elif c == "{" and not _REPEAT.match(pattern, i):
            nxt = pattern[i + 1:i + 2]
            if nxt and (nxt in "*+?" or _REPEAT.match(pattern, i + 1)):
                return True
            i += 1
        else:
            i += 1
    return False


def _class_end(pattern: str, i: int) -> int:
    """The index after the character class opening at ``i`` (its first ``]``, or one after ``^``, is literal)."""
    j = i + 1
    if pattern.startswith("^", j):
        j += 1
    if pattern.startswith("]", j):
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        if pattern[j] == "\\":
            j += 2
        elif pattern.startswith("[:", j):
            end = pattern.find(":]", j + 2)
            j = j + 1 if end < 0 else end + 2
        else:
            j += 1
    return j + 1
