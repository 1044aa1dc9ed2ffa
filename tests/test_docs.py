"""The README and docs/ stay true: every code block of the README runs (or names the test that runs it), every
link points at a file that exists, and the generated tables match what they are generated from.

The README's blocks run against real brokers: a ``kafkamock serve`` line starts one (on free ports: ``--port 0``
and ``--control-port 0`` stand in for the ports printed) and the block's later lines talk to it, with
``127.0.0.1:9092`` and ``http://127.0.0.1:9099`` replaced by its addresses; a Python block with tests runs under
pytest with kafkamock's plugin; another Python block runs as a script."""

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
DOCS = sorted((ROOT / "docs").glob("*.md"))
BIN = Path(sys.executable).parent
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)

# Blocks another test runs, by a line they contain: the test named must exist.
RUN_ELSEWHERE = {
    "pip install .": "tests/test_packaging.py::test_the_wheel_and_sdist_build_and_the_wheel_runs_a_broker_on_its_own",
    "make run": "tests/spark/test_example.py::test_make_run_serves_runs_the_pipeline_and_stops_cleanly_on_ctrl_c",
    "def test_the_pipeline_upper_cases_orders": "tests/spark/test_pytest_plugin.py::test_the_readme_pipeline_test_passes_under_pytest",
}


def blocks(path: Path) -> list[tuple[str, str]]:
    return [(lang, body) for lang, body in FENCE.findall(path.read_text())]


def readme_blocks() -> list[tuple[str, str]]:
    return blocks(README)


def _ids() -> list[str]:
    return [f"{i}-{lang or 'text'}-{body.splitlines()[0][:30]}" for i, (lang, body) in enumerate(readme_blocks())]


def _elsewhere(body: str) -> str | None:
    return next((test for line, test in RUN_ELSEWHERE.items() if line in body), None)


class Served:
    """A ``kafkamock serve`` line of a block, on free ports, until the block ends."""

    def __init__(self, line: str, cwd: Path):
        args = shlex.split(line)[2:]
        for option in ("--port", "--control-port"):
            if option in args:
                args[args.index(option) + 1] = "0"
        if "--port" not in args:
            args += ["--port", "0"]
        self.process = subprocess.Popen([str(BIN / "kafkamock"), "serve", *args], cwd=cwd, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True)
        ready = self.process.stdout.readline()
        assert ready.startswith("kafkamock broker ready: "), f"{line}: {ready!r}"
        self.bootstrap = re.search(r"bootstrap.servers=(\S+)", ready).group(1)
        found = re.search(r" control=(\S+)", ready)
        self.control = found.group(1) if found else None

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        assert self.process.wait(timeout=30) == 0


@pytest.mark.parametrize("index", range(len(readme_blocks())), ids=_ids())
def test_every_readme_block_runs(index, tmp_path):
    lang, body = readme_blocks()[index]
    elsewhere = _elsewhere(body)
    if elsewhere is not None:
        path, name = elsewhere.split("::")
        assert f"def {name}(" in (ROOT / path).read_text(), f"{elsewhere} runs this block: it must exist"
        return
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    if lang == "python" and "def test_" in body:
        (tmp_path / "test_readme_block.py").write_text(body)
        out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                              str(tmp_path / "test_readme_block.py")], capture_output=True, text=True, timeout=300,
                             cwd=tmp_path, env=env)
        assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
        return
    if lang == "python":
        out = subprocess.run([sys.executable, "-c", body], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                             env=env)
        assert out.returncode == 0, out.stderr[-3000:]
        return
    assert lang == "sh", f"a README block without a language: {body[:80]!r}"
    served: Served | None = None
    try:
        from kafkamock.testing import start_broker

        with start_broker() as default:
            for line in [x.split("  #")[0].strip() for x in body.splitlines()]:
                if not line:
                    continue
                if line.startswith("kafkamock serve"):
                    if served is not None:
                        served.stop()
                    served = Served(line, tmp_path)
                    continue
                bootstrap = served.bootstrap if served is not None else default.bootstrap_servers
                command = line.replace("127.0.0.1:9092", bootstrap)
                if served is not None and served.control:
                    command = command.replace("http://127.0.0.1:9099", served.control)
                out = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=120,
                                     cwd=tmp_path, env={**env, "KAFKAMOCK_BOOTSTRAP": bootstrap})
                assert out.returncode == 0, f"{line}: {out.stdout[-1000:]} {out.stderr[-2000:]}"
    finally:
        if served is not None:
            served.stop()


def test_the_readme_is_a_front_door():
    assert len(README.read_text().splitlines()) <= 300


@pytest.mark.parametrize("page", [README, *DOCS], ids=lambda p: p.name)
def test_links_point_at_files_that_exist(page):
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text()):
        assert (page.parent / target).exists(), f"{page.name} links {target}, which does not exist"


def test_the_api_table_matches_the_schemas():
    spec = importlib.util.spec_from_file_location("docs_api_table", ROOT / "tools" / "docs_api_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    page = (ROOT / "docs" / "codec.md").read_text()
    assert module.render(page) == page, "run: python tools/docs_api_table.py"
