"""The per-KIP table (``kafkamock/kips.py``, rendered as ``docs/kips.md``) stays true: every KIP the code names has an
entry, every module and test an entry names exists, the document is what ``render()`` gives, and the entries keep
their order and their notes."""

from __future__ import annotations

import ast
import importlib.util
import re
from functools import cache
from pathlib import Path

import pytest

from kafkamock import kips
from kafkamock.kips import KIPS, SEED, Kip, Status

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "kafkamock"
KIP_NAME = re.compile(r"KIP-(\d+)")
IDS = [f"KIP-{k.number}" for k in KIPS]


def named_in_code() -> dict[int, list[str]]:
    """{KIP number: the files of kafkamock that name it}, kips.py itself left out."""
    found: dict[int, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "kips.py":
            continue
        for number in sorted({int(n) for n in KIP_NAME.findall(path.read_text(encoding="utf-8"))}):
            found.setdefault(number, []).append(path.relative_to(ROOT).as_posix())
    return found


@cache
def defined_tests(path: str) -> frozenset[str]:
    """Top-level functions of a test file, and methods as ``Class::name`` and plain ``name``."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"), filename=path)
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    names = {node.name for node in tree.body if isinstance(node, functions)}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, functions):
                    names |= {item.name, f"{node.name}::{item.name}"}
    return frozenset(names)


def missing_test(node_id: str) -> str | None:
    """Why ``node_id`` names no test, or None."""
    path, sep, name = node_id.partition("::")
    if not sep or not name:
        return "not of the form tests/path/test_file.py::test_name"
    if "[" in name:
        return "a parametrized test goes by its base name, without [...]"
    if not (path.startswith("tests/") and path.endswith(".py")) or not (ROOT / path).is_file():
        return f"{path} is not a test file"
    if name not in defined_tests(path):
        return f"{path} has no test {name}"
    return None


def module_exists(name: str) -> bool:
    if not (name == "kafkamock" or name.startswith("kafkamock.")):
        return False
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def test_every_kip_the_code_names_has_an_entry():
    listed = {k.number for k in KIPS}
    missing = {f"KIP-{n}": files for n, files in named_in_code().items() if n not in listed}
    assert not missing, f"add an entry to kafkamock/kips.py for each of {missing}"


def test_each_kip_has_one_entry():
    numbers = [k.number for k in KIPS]
    twice = sorted({n for n in numbers if numbers.count(n) > 1})
    assert not twice, f"entries for the same KIP: {twice}"


def test_the_seed_kips_come_first_then_the_rest_by_number():
    numbers = [k.number for k in KIPS]
    assert tuple(numbers[:len(SEED)]) == SEED == (1222, 360, 932, 983, 211)
    rest = numbers[len(SEED):]
    assert rest == sorted(rest), "after the seed KIPs, entries go in KIP-number order"


@pytest.mark.parametrize("kip", KIPS[:len(SEED)], ids=IDS[:len(SEED)])
def test_a_seed_kip_lists_its_behaviours_each_with_its_tests(kip: Kip):
    assert kip.behaviours, f"KIP-{kip.number} is a seed KIP: list its behaviours"
    for behaviour in kip.behaviours:
        assert behaviour.what.strip(), f"KIP-{kip.number}: a behaviour says what it is"
        assert behaviour.tests, f"KIP-{kip.number}: no test for {behaviour.what!r}"


@pytest.mark.parametrize("kip", KIPS, ids=IDS)
def test_an_entry_is_complete(kip: Kip):
    assert kip.title.strip() and kip.changes.strip() and kip.modules, f"KIP-{kip.number}"
    if kip.status is not Status.FULL:
        assert kip.note.strip(), f"KIP-{kip.number} is {kip.status.value}: its note says what (or why)"
    if kip.status is not Status.NOT_SERVED:
        assert kip.tests, f"KIP-{kip.number} is {kip.status.value}: name the tests that prove it"


@pytest.mark.parametrize("kip", KIPS, ids=IDS)
def test_an_entrys_modules_exist(kip: Kip):
    missing = [m for m in kip.modules if not module_exists(m)]
    assert not missing, f"KIP-{kip.number} names modules that do not exist: {missing}"


@pytest.mark.parametrize("kip", KIPS, ids=IDS)
def test_an_entrys_tests_exist(kip: Kip):
    problems = {node_id: why for node_id in kip.all_tests() if (why := missing_test(node_id))}
    assert not problems, f"KIP-{kip.number}: {problems}"


def test_docs_kips_md_is_what_render_gives():
    doc = ROOT / "docs" / "kips.md"
    assert doc.is_file() and doc.read_text(encoding="utf-8") == kips.render(), \
        "docs/kips.md is out of date: run `python -m kafkamock.kips > docs/kips.md`"


def test_the_document_links_only_to_kip_pages():
    links = re.findall(r"https?://[^\s)>\]]+", kips.render())
    assert links and all(re.fullmatch(r"https://cwiki\.apache\.org/confluence/display/KAFKA/KIP-\d+", u)
                         for u in links), links
