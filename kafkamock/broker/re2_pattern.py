"""Regular expressions in RE2's syntax (Kafka's RE2/J, ``com.google.re2j.Pattern``) on Python's ``re``.

Kafka matches user patterns with RE2/J where a broker must not be open to catastrophic backtracking: ListTransactions'
transactional id pattern (KIP-1152) and a consumer group's SubscribedTopicRegex (KIP-848). ``compile_re2`` rejects
what RE2 rejects (backreferences, lookaround, atomic groups, possessive quantifiers, conditionals, ``\\Z``, repeat
counts over 1000) with ``Re2SyntaxError`` and translates what RE2 means differently: ``\\Q...\\E`` quoting, ``\\z``,
``(?<name>...)`` groups, POSIX classes (``[[:alpha:]]``), ``\\x{...}``, ``$`` (end of text unless ``(?m)``), flag
groups in the middle of a pattern (scoped to the rest of their group), ASCII-only ``\\d \\w \\s \\b``, and the
Unicode classes of letters and digits (``\\pL``, ``\\p{N}``) outside brackets. Other Unicode classes
(``\\p{Greek}``), negated POSIX classes among other items, the ungreedy flag ``U``, and a repetition after flags
that follow an anchor or other flags are not translated: they are Re2SyntaxError here, though RE2 accepts them.
(Checked against RE2/J 1.8 on a corpus and on random patterns.)
"""

from __future__ import annotations

import re

__all__ = ["Re2SyntaxError", "compile_re2", "translate"]

MAX_REPEAT = 1000
POSIX_CLASSES = {
    "alnum": "0-9A-Za-z", "alpha": "A-Za-z", "ascii": "\\x00-\\x7f", "blank": "\\t ", "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9", "graph": "!-~", "lower": "a-z", "print": " -~", "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\v\\f\\r ", "upper": "A-Z", "word": "0-9A-Za-z_", "xdigit": "0-9A-Fa-f",
}
PERL_CLASSES = set("dDsSwW")
SIMPLE_ESCAPES = {"a": "\\a", "f": "\\f", "t": "\\t", "n": "\\n", "r": "\\r", "v": "\\v"}
REPEAT = re.compile(r"\{(\d+)(,(\d*))?\}")


class Re2SyntaxError(ValueError):
    """The pattern is not valid RE2 (or uses a part of RE2 not translated here)."""


def compile_re2(pattern: str) -> re.Pattern:
    """The Python pattern that matches what RE2 would (``fullmatch`` for RE2/J's ``matches()``)."""
    try:
        return re.compile(translate(pattern), re.ASCII)
    except re.error as exc:
        raise Re2SyntaxError(str(exc)) from None


def translate(pattern: str) -> str:
    return _Translator(pattern).run()


def _hex_escape(code: int) -> str:
    if code > 0x10FFFF:
        raise Re2SyntaxError("invalid escape sequence")
    return f"\\U{code:08x}"


class _Translator:
    def __init__(self, pattern: str):
        self.p = pattern
        self.i = 0
        self.out: list[str] = []
        self.multiline = "m" in "".join(re.findall(r"\(\?([imsU-]*)[:)]", pattern))
        # per open group: the flags of the scopes opened inside it by (?flags), closed with it (and around '|')
        self.open_scopes: list[list[str]] = [[]]

    def run(self) -> str:
        while self.i < len(self.p):
            self._atom()
        if len(self.open_scopes) != 1:
            raise Re2SyntaxError("missing closing )")
        self.out.append(")" * len(self.open_scopes[0]))
        return "".join(self.out)

    # -- pieces --------------------------------------------------------------------------------------------------

    def _atom(self) -> None:
        c = self.p[self.i]
        if c == "\\" and self.i + 1 < len(self.p) and self.p[self.i + 1] in "AbBz":
            self._anchor(self._escape(in_class=False))
            return
        if c in "^$":
            self.i += 1
            self._anchor("$" if c == "$" and self.multiline else "\\Z" if c == "$" else "^")
            return
        if c == "|":
            scopes = self.open_scopes[-1]
            self.out.append(")" * len(scopes) + "|" + "".join(f"(?{flags}:" for flags in scopes))
            self.i += 1
            return
        if c == "\\":
            self.out.append(self._escape(in_class=False))
        elif c == "[":
            self.out.append(self._char_class())
        elif c == "(":
            self._group()
        elif c == ")":
            if len(self.open_scopes) == 1:
                raise Re2SyntaxError("unexpected )")
            self.out.append(")" * len(self.open_scopes.pop()) + ")")
            self.i += 1
            self._repeat()
        elif c in "*+?":
            raise Re2SyntaxError(f"missing argument to repetition operator: {c}")
        elif c == "{" and REPEAT.match(self.p, self.i):
            raise Re2SyntaxError("missing argument to repetition operator")
        else:
            self.out.append("\\{" if c == "{" else "\\}" if c == "}" else c)
            self.i += 1
            if c == "{" and self.i < len(self.p) and (self.p[self.i] in "*+?" or REPEAT.match(self.p, self.i)):
                raise Re2SyntaxError("invalid nested repetition operator")   # RE2/J's view of a literal '{'
            self._repeat()
            return
        if c in "\\[":
            self._repeat()

    def _anchor(self, text: str) -> None:
        """RE2 lets an anchor be repeated (``^*``), Python does not: a repeated anchor goes in a group."""
        at = len(self.out)
        self.out.append(text)
        self._repeat()
        if len(self.out) > at + 1:
            self.out[at] = f"(?:{text})"

    def _repeat(self) -> None:
        """At most one repetition operator (and its ``?`` for laziness) after an atom."""
        if self.i >= len(self.p):
            return
        c = self.p[self.i]
        m = REPEAT.match(self.p, self.i) if c == "{" else None
        if c in "*+?":
            self.out.append(c)
            self.i += 1
        elif m:
            low, high = int(m.group(1)), m.group(3)
            if low > MAX_REPEAT or (high and int(high) > MAX_REPEAT) or (high and int(high) < low):
                raise Re2SyntaxError(f"invalid repeat count: {m.group(0)}")
            self.out.append(m.group(0))
            self.i = m.end()
        else:
            return
        if self.i < len(self.p) and self.p[self.i] == "?":
            self.out.append("?")
            self.i += 1
        if self.i < len(self.p) and (self.p[self.i] in "*+?" or REPEAT.match(self.p, self.i)):
            raise Re2SyntaxError("invalid nested repetition operator")

    def _group(self) -> None:
        p, i = self.p, self.i
        if p.startswith("(?P<", i) or p.startswith("(?<", i):
            start = i + (4 if p[i + 2] == "P" else 3)
            end = p.find(">", start)
            name = p[start:end] if end > 0 else ""
            if end < 0 or not re.fullmatch(r"[A-Za-z0-9_]+", name) or p.startswith("(?<=", i) or \
                    p.startswith("(?<!", i):
                raise Re2SyntaxError(f"invalid named capture: {p[i:end + 1]}")
            self.out.append(f"(?P<{name}>")
            self.i = end + 1
            self.open_scopes.append([])
            return
        if p.startswith("(?", i):
            m = re.compile(r"\(\?([A-Za-z-]*)([:)])").match(p, i)
            flags = m.group(1) if m else ""
            if m is None or not re.fullmatch(r"[imsU]*(-[imsU]*)?", flags) or flags == "-" or flags.endswith("-"):
                raise Re2SyntaxError(f"invalid or unsupported Perl syntax: {p[i:i + 3]}")
            assert m is not None
            if flags == "" and m.group(2) == ")":           # (?) sets nothing
                self.i = m.end()
                return
            if "U" in flags:
                raise Re2SyntaxError("the ungreedy flag is not translated")
            self.i = m.end()
            if m.group(2) == ":":
                self.out.append(f"(?{flags}:")
                self.open_scopes.append([])
            else:
                # RE2: the flags hold to the end of the enclosing group; Python wants them scoped. A repetition
                # right after them repeats the atom before them.
                if self.i < len(p) and (p[self.i] in "*+?" or REPEAT.match(p, self.i)):
                    last = self.out[-1] if self.out else "|"
                    if last == "|" or last.startswith("(") and last.endswith((":", "(", ">")):
                        raise Re2SyntaxError("missing argument to repetition operator")
                    self._repeat()
                self.out.append(f"(?{flags}:")
                self.open_scopes[-1].append(flags)
            return
        self.out.append("(")
        self.i += 1
        self.open_scopes.append([])

    def _escape(self, in_class: bool) -> str:
        p, i = self.p, self.i
        if i + 1 >= len(p):
            raise Re2SyntaxError("trailing backslash at end of expression")
        c = p[i + 1]
        self.i = i + 2
        if c == "Q":
            end = p.find("\\E", self.i)
            text = p[self.i:] if end < 0 else p[self.i:end]
            self.i = len(p) if end < 0 else end + 2
            return re.escape(text) if not in_class else "".join("\\" + ch if not ch.isalnum() else ch for ch in text)
        if c in PERL_CLASSES:
            return "\\" + c
        if c in "pP" and not in_class:
            return self._unicode_class(c == "P")
        if c in SIMPLE_ESCAPES:
            return SIMPLE_ESCAPES[c]
        if not in_class and c in "AbB":
            return "\\" + c
        if not in_class and c == "z":
            return "\\Z"
        if c == "x":
            if p.startswith("{", self.i):
                end = p.find("}", self.i)
                digits = p[self.i + 1:end] if end > 0 else ""
                if not re.fullmatch(r"[0-9A-Fa-f]+", digits):
                    raise Re2SyntaxError("invalid escape sequence: \\x{")
                self.i = end + 1
                return _hex_escape(int(digits, 16))
            digits = p[self.i:self.i + 2]
            if not re.fullmatch(r"[0-9A-Fa-f]{2}", digits):
                raise Re2SyntaxError("invalid escape sequence: \\x")
            self.i += 2
            return _hex_escape(int(digits, 16))
        if c in "01234567":
            # RE2: octal \0, \00, \000 or any \1-\7 escape of up to three digits that is not a backreference
            m = re.compile(r"[0-7]{1,3}").match(p, i + 1)
            assert m is not None
            if c != "0" and len(m.group(0)) < 2:
                raise Re2SyntaxError(f"invalid escape sequence: \\{c}")
            self.i = m.end()
            return _hex_escape(int(m.group(0), 8))
        if not c.isalnum() and c.isascii():
            return "\\" + c
        raise Re2SyntaxError(f"invalid escape sequence: \\{c}")

    def _unicode_class(self, negated: bool) -> str:
        """``\\pL``/``\\p{L}`` (letters) and ``\\pN``/``\\p{N}``/``\\p{Nd}`` (digits) outside brackets; other
        classes are not translated."""
        p = self.p
        if p.startswith("{", self.i):
            end = p.find("}", self.i)
            name = p[self.i + 1:end] if end > 0 else ""
            self.i = end + 1 if end > 0 else len(p)
        else:
            name = p[self.i:self.i + 1]
            self.i += 1
        if name.startswith("^"):
            negated, name = not negated, name[1:]
        classes = {"L": "[^\\W\\d_]", "N": "\\d", "Nd": "\\d"}
        if name not in classes:
            raise Re2SyntaxError(f"the Unicode class \\p{{{name}}} is not translated")
        inner = classes[name]
        if negated:
            inner = "[\\W\\d_]" if name == "L" else "\\D"
        return f"(?u:{inner})"

    def _char_class(self) -> str:
        p = self.p
        self.i += 1
        out = ["["]
        if p.startswith("^", self.i):
            out.append("^")
            self.i += 1
        if re.compile(r"\[:\^([a-z]+):\]\]").match(p, self.i) and out == ["["]:
            # [[:^alpha:]] alone: the negated class
            name = p[self.i + 3:p.find(":]", self.i)]
            if name not in POSIX_CLASSES:
                raise Re2SyntaxError(f"invalid character class range: [:^{name}:]")
            self.i = p.find(":]", self.i) + 3
            return f"[^{POSIX_CLASSES[name]}]"
        first = True
        after_class = False        # RE2: a '-' after a class (\\d, [:digit:]) is a literal
        while True:
            if self.i >= len(p):
                raise Re2SyntaxError("missing closing ]")
            c = p[self.i]
            if c == "]" and not first:
                self.i += 1
                break
            first = False
            was_class, after_class = after_class, False
            if c == "-" and was_class:
                out.append("\\-")
                self.i += 1
            elif p.startswith("[:", self.i):
                end = p.find(":]", self.i + 2)
                name = p[self.i + 2:end] if end > 0 else ""
                if name not in POSIX_CLASSES:
                    raise Re2SyntaxError(f"invalid character class range: [:{name}:]")
                out.append(POSIX_CLASSES[name])
                self.i = end + 2
                after_class = True
            elif c == "\\":
                after_class = self.i + 1 < len(p) and p[self.i + 1] in PERL_CLASSES
                out.append(self._escape(in_class=True))
            elif c in "[]^-&~|":
                # a '-' after a '-' is the end of a range ([+--]): escaped, the same range without Python's warning
                out.append("\\" + c if c != "-" or out[-1] == "-" else "-")
                self.i += 1
            else:
                out.append(c)
                self.i += 1
        out.append("]")
        return "".join(out)
