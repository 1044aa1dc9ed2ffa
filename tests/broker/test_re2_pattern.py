"""compile_re2 against what RE2/J 1.8 (Kafka 4.3.1's) answered for each pattern and sample (RE2/J's matches():
the whole string)."""

from __future__ import annotations

import pytest

from kafkamock.broker.re2_pattern import Re2SyntaxError, compile_re2

SAMPLES = ['tx-a', 'tx-b', 'TX-A', 'a.b', 'abc', 'abc\n', 'a{,3}', 'aa', 'A', 'a&b', ']', '-z9', 'é1', '_x', '\x00']
EXPECTED = [  # RE2/J 1.8: None when it refuses the pattern, else the samples it matches
    ('tx-.*', ['tx-a', 'tx-b']),
    ('^tx-a$', ['tx-a']),
    ('(?i)TX-A', ['tx-a', 'TX-A']),
    ('tx-(?i)B', ['tx-b']),
    ('\\Qa.b\\E', ['a.b']),
    ('\\Qa.b', ['a.b']),
    ('a\\z', []),
    ('a\\Z', None),
    ('abc$', ['abc']),
    ('(?m)abc$', ['abc']),
    ('(a)\\1', None),
    ('(?=a)a', None),
    ('(?<=a)b', None),
    ('(?>a)', None),
    ('a*+', None),
    ('a{,3}', ['a{,3}']),
    ('a{1001}', None),
    ('a{2,1}', None),
    ('(?<n>t)x-a', ['tx-a']),
    ('(?P=n)', None),
    ('[[:alpha:]]+', ['abc', 'aa', 'A']),
    ('[[:^alpha:]]', [']', '\x00']),
    ('[^[:digit:]]+', ['tx-a', 'tx-b', 'TX-A', 'a.b', 'abc', 'abc\n', 'aa', 'A', 'a&b', ']', '_x', '\x00']),
    ('\\pL+', ['abc', 'aa', 'A']),
    ('\\p{N}+', []),
    ('[a-z&&[^a]]', []),
    ('[]a]', [']']),
    ('\\x{41}', ['A']),
    ('\\101', ['A']),
    ('\\0', ['\x00']),
    ('\\8', None),
    ('[\\d-z]+', ['-z9']),
    ('(?)a', []),
    ('(?#c)a', None),
    ('*a', None),
    ('a?*', None),
    ('[a', None),
    (')', None),
]


@pytest.mark.parametrize(("pattern", "matched"), EXPECTED, ids=[p for p, _ in EXPECTED])
def test_as_re2j_answers(pattern, matched):
    if matched is None:
        with pytest.raises(Re2SyntaxError):
            compile_re2(pattern)
        return
    regex = compile_re2(pattern)
    assert [s for s in SAMPLES if regex.fullmatch(s)] == matched


QUIRKS = [  # RE2/J 1.8 again: repeated anchors, flags that outlive an alternation, a literal '{' under a repetition
    (r"^*a", ["a"]), (r"a\z?", ["a"]), (r"a(?i)|B", ["a", "B", "b"]), (r"a(?i)+b", ["aab"]), (r"b{*", None),
    (r"{2}a", None), (r"x{{2}", None), (r"(?i)a|b", ["a", "B", "b", "A"]),
]
QUIRK_SAMPLES = ["a", "B", "b", "aab", "aAb", "{2}a", "A", "x{{"]


@pytest.mark.parametrize(("pattern", "matched"), QUIRKS, ids=[p for p, _ in QUIRKS])
def test_re2j_quirks(pattern, matched):
    if matched is None:
        with pytest.raises(Re2SyntaxError):
            compile_re2(pattern)
        return
    regex = compile_re2(pattern)
    assert [s for s in QUIRK_SAMPLES if regex.fullmatch(s)] == matched


@pytest.mark.parametrize("pattern", [r"\p{Greek}", r"[[:^digit:]x]", r"(?U)a+"])
def test_what_is_not_translated_is_refused(pattern):
    """RE2 accepts these; they are not translated, so kafkamock refuses them rather than match otherwise."""
    with pytest.raises(Re2SyntaxError):
        compile_re2(pattern)
