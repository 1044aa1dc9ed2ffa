"""compile_re2 against what RE2/J 1.8 (Kafka 4.3.1's) answered for each pattern and sample (RE2/J's matches():
the whole string), and in linear time whatever the pattern."""

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


@pytest.mark.parametrize(("pattern", "sample"), [(r"[{]*", "{{"), (r"\{*", "{{"), (r"\p{L}{2}", "ab"),
                                                (r"\Q{\E*", "{{"), (r"[^{]{2}", "ab")])
def test_a_brace_escaped_or_in_a_class_may_repeat(pattern, sample):
    assert compile_re2(pattern).fullmatch(sample)


@pytest.mark.parametrize(("pattern", "sample"), [(r"\p{Greek}+", "αβ"), (r"[[:^digit:]x]+", "ab"), (r"(?U)a+", "aa")])
def test_the_rest_of_re2s_syntax_is_served(pattern, sample):
    assert compile_re2(pattern).fullmatch(sample)


@pytest.mark.parametrize(("pattern", "description"), [
    ("(abc", "missing closing )"), ("a)", "unexpected )"), ("[a", "missing closing ]"),
    ("*a", "missing argument to repetition operator"), ("a**", "invalid nested repetition operator"),
    ("(a)\\1", "invalid escape sequence"), ("(?=a)", "invalid or unsupported Perl syntax"),
    ("a{1001}", "invalid repeat count"), ("a\\", "trailing backslash at end of expression"),
    ("[z-a]", "invalid character class range"), ("b{*", "invalid nested repetition operator"),
])
def test_refusals_carry_re2js_description(pattern, description):
    with pytest.raises(Re2SyntaxError) as refused:
        compile_re2(pattern)
    assert refused.value.description == description


@pytest.mark.parametrize("pattern", ["(a+)+b", "(a|aa)+c", "(a*)*b", "(x+x+)+y"])
def test_catastrophic_patterns_are_answered(pattern):
    """Python's backtracking ``re`` takes hours over these (a CI run would time out); RE2 answers at once."""
    text = "a" * 249 if "x" not in pattern else "x" * 249
    assert compile_re2(pattern).fullmatch(text) is None
