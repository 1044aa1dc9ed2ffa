"""The README and docs/ stay true: every code block runs (or names the test that runs it), every link points at a
file that exists, and the generated tables match what they are generated from.

How a block runs: a ``python`` block with tests under pytest with kafkamock's plugin, another ``python`` block as a
script; a ``sh`` block line by line (heredocs and ``\\`` continuations whole) in a scratch directory. Each block gets
a fresh broker with a topic ``orders`` (3 partitions, a few records) unless the block creates it; a ``kafkamock
serve`` line starts the broker the block's later lines use, on free ports (``--port 0``, ``--control-port 0``).
``127.0.0.1:9092`` (or ``:9093``) and ``http://127.0.0.1:9099`` stand for those brokers' addresses, ``$CA`` for the
CA file a ``--tls`` broker names, and ``0.0.0.0`` for 127.0.0.1 (tests listen on the loopback only). ``text``
blocks are output or layouts; ``java`` and ``js`` blocks, and the lines that set up a machine (``make``, ``pip``),
name the test that runs them."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
BIN = Path(sys.executable).parent
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)

# What another test runs, by a line it contains: for a python/java/js block the whole block, for a sh block the line.
RUN_ELSEWHERE = {
    "pip install": "tests/test_packaging.py::test_the_wheel_and_sdist_build_and_the_wheel_runs_a_broker_on_its_own",
    "make run": "tests/spark/test_example.py::test_make_run_serves_runs_the_pipeline_and_stops_cleanly_on_ctrl_c",
    "make test": "tests/test_docs.py::test_every_block_runs",
    "def test_the_pipeline_upper_cases_orders":
        "tests/spark/test_pytest_plugin.py::test_the_readme_pipeline_test_passes_under_pytest",
    "KafkaShareConsumer": "tests/interop/java/test_java_share.py::test_renew_keeps_a_slow_record_from_other_consumers",
    "require('kafkajs')": "tests/interop/js/test_kafkajs.py::test_sasl_ssl_scram_sha_512_and_a_wrong_password",
    'format("kafkamock")': "tests/spark/test_spark_options.py::test_starting_and_ending_timestamps",
}
CREATES_ORDERS = ("topic create orders", 'create_topic("orders"', 'NewTopic("orders"', "--topic orders")


def all_blocks() -> list[tuple[Path, int, str, str]]:
    out = []
    for page in PAGES:
        for i, (lang, body) in enumerate(FENCE.findall(page.read_text())):
            out.append((page, i, lang, body))
    return out


BLOCKS = all_blocks()


def _id(block: tuple[Path, int, str, str]) -> str:
    page, i, lang, _ = block
    return f"{page.name}#{i}-{lang or 'none'}"


def _elsewhere(text: str) -> str | None:
    return next((test for line, test in RUN_ELSEWHERE.items() if line in text), None)


def _check_exists(test: str) -> None:
    path, name = test.split("::")
    assert f"def {name}(" in (ROOT / path).read_text(), f"{test} runs this: it must exist"


class Served:
    """A ``kafkamock serve`` line, on free ports, until the block ends."""

    def __init__(self, line: str, cwd: Path, env: dict):
        args = shlex.split(line)[2:]
        for option in ("--port", "--control-port"):
            if option in args:
                args[args.index(option) + 1] = "0"
        if "--port" not in args:
            args += ["--port", "0"]
        args = ["127.0.0.1" if a == "0.0.0.0" else a for a in args]
        self.process = subprocess.Popen([str(BIN / "kafkamock"), "serve", *args], cwd=cwd, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True, env=env)
        ready = self.process.stdout.readline()
        assert ready.startswith("kafkamock broker ready: "), f"{line}: {ready!r}"
        self.bootstrap = re.search(r"bootstrap.servers=(\S+)", ready).group(1)
        found = re.search(r" control=(\S+)", ready)
        self.control = found.group(1) if found else None
        found = re.search(r" ssl.ca.location=(\S+)", ready)
        self.ca = found.group(1) if found else None

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        assert self.process.wait(timeout=30) == 0


def commands(body: str) -> list[str]:
    """A sh block's commands: comments dropped, ``\\`` continuations joined, a heredoc with its command."""
    out: list[str] = []
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        marker = re.search(r"<<'(\w+)'", line)
        if marker:
            end = lines.index(marker.group(1), i + 1)
            out.append("\n".join(lines[i:end + 1]))
            i = end + 1
            continue
        line = re.sub(r"\s+#.*$", "", line).strip() if not line.lstrip().startswith("#") else ""
        while line.endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line[:-1].rstrip() + " " + re.sub(r"\s+#.*$", "", lines[i]).strip()
        if line:
            out.append(line)
        i += 1
    return out


@pytest.mark.parametrize("block", BLOCKS, ids=[_id(b) for b in BLOCKS])
def test_every_block_runs(block, tmp_path):
    from kafkamock.testing import start_broker

    page, _, lang, body = block
    assert lang, f"{page.name}: a block without a language ({body[:60]!r}): say text, sh, python..."
    if lang == "text":
        return
    elsewhere = _elsewhere(body) if lang != "sh" else None
    if elsewhere is not None:
        _check_exists(elsewhere)
        return
    assert lang in ("python", "sh"), f"{page.name}: a {lang} block needs a RUN_ELSEWHERE entry"
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    with start_broker() as default:
        if not any(c in body for c in CREATES_ORDERS):
            default.create_topic("orders", partitions=3)
            default.produce("orders", [{"key": f"k{n}", "value": f"order {n}"} for n in range(3)])
        if lang == "python":
            _run_python(body.replace("127.0.0.1:9092", default.bootstrap_servers), tmp_path, env)
            return
        _run_sh(body, default.bootstrap_servers, tmp_path, env)


def _run_python(body: str, tmp_path: Path, env: dict) -> None:
    if "def test_" in body:
        (tmp_path / "test_block.py").write_text(body)
        out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                              str(tmp_path / "test_block.py")], capture_output=True, text=True, timeout=300,
                             cwd=tmp_path, env=env)
        assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
        return
    out = subprocess.run([sys.executable, "-c", body], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                         env=env)
    assert out.returncode == 0, out.stderr[-3000:]


def _run_sh(body: str, default_bootstrap: str, tmp_path: Path, env: dict) -> None:
    served: Served | None = None
    try:
        for command in commands(body):
            elsewhere = _elsewhere(command)
            if elsewhere is not None:
                _check_exists(elsewhere)
                continue
            if command.startswith("kafkamock serve"):
                if served is not None:
                    served.stop()
                served = Served(command, tmp_path, env)
                continue
            bootstrap = served.bootstrap if served is not None else default_bootstrap
            run = command.replace("127.0.0.1:9092", bootstrap).replace("127.0.0.1:9093", bootstrap)
            extra = {"KAFKAMOCK_BOOTSTRAP": bootstrap}
            if served is not None and served.control:
                run = run.replace("http://127.0.0.1:9099", served.control)
            if served is not None and served.ca:
                extra["CA"] = served.ca
            out = subprocess.run(["bash", "-c", run], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                                 env={**env, **extra})
            assert out.returncode == 0, f"{command}: {out.stdout[-1000:]} {out.stderr[-2000:]}"
    finally:
        if served is not None:
            served.stop()


def test_the_readme_is_a_front_door():
    assert len(README.read_text().splitlines()) <= 300


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_links_point_at_files_that_exist(page):
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text()):
        assert (page.parent / target).exists(), f"{page.name} links {target}, which does not exist"


def test_the_api_table_matches_the_schemas():
    spec = importlib.util.spec_from_file_location("docs_api_table", ROOT / "tools" / "docs_api_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    page = (ROOT / "docs" / "codec.md").read_text()
    assert module.render(page) == page, "run: python tools/docs_api_table.py"
