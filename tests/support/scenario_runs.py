"""What the Java (``java_clients``) and kafkajs (``js_clients``) scenario runners share: a scenario is a child
process given its JSON spec on standard input that prints one JSON line last (its result, or ``error``), timed for
the end-of-session line."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable, Mapping
from typing import Any


class ScenarioError(AssertionError):
    """A scenario failed: its process exited non-zero, timed out, or printed no JSON line.

    ``result`` is the JSON the scenario printed (partial results and ``error``), or None.
    """

    def __init__(self, message: str, *, result: dict | None = None, stderr: str = "", returncode: int | None = None):
        super().__init__(message)
        self.result, self.stderr, self.returncode = result, stderr, returncode

    @property
    def error(self) -> dict:
        return (self.result or {}).get("error") or {}


def last_json(stdout: str) -> dict | None:
    """The scenario's result: its last non-blank line, parsed (None if there is none or it is not JSON)."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    if not lines:
        return None
    try:
        return json.loads(lines[-1])
    except ValueError:
        return None


def run_scenario(command: list[str], spec: Mapping[str, Any], *, scenario: str, program: str, timeout: float,
                 runs: list[tuple[str, float]], env: Mapping[str, str] | None = None,
                 ) -> tuple[subprocess.CompletedProcess, dict | None]:
    """Run one scenario process to its end (its time appended to ``runs``): the process and its JSON result.
    ScenarioError, with the stderr tail, when ``program`` does not finish within ``timeout`` seconds."""
    started = time.monotonic()
    try:
        proc = subprocess.run(command, input=json.dumps(spec), capture_output=True, text=True, encoding="utf-8",
                              errors="replace", env=env, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        stderr = exc.stderr.decode("utf-8", "replace") if isinstance(exc.stderr, bytes) else exc.stderr or ""
        raise ScenarioError(f"{scenario}: {program} did not finish in {exc.timeout} s; stderr tail:\n"
                            f"{stderr[-3000:]}", stderr=stderr) from None
    finally:
        runs.append((scenario, time.monotonic() - started))
    return proc, last_json(proc.stdout)


class ScenarioRuns:
    """The session's scenario processes and their times (a session figure, see support/session_figures.py):
    ``<label>: N <unit> runs, total s (<scenario> Nx avg s, ...)`` at the end."""

    def __init__(self, label: str, unit: str) -> None:
        self.label, self.unit = label, unit
        self.runs: list[tuple[str, float]] = []

    def to_dict(self) -> dict:
        return {"runs": [list(r) for r in self.runs]}

    def merge(self, part: Mapping[str, Any]) -> None:
        self.runs.extend((scenario, seconds) for scenario, seconds in part["runs"])

    def report(self, write_line: Callable[[str], None]) -> None:
        if not self.runs:
            return
        by_scenario: dict[str, list[float]] = {}
        for scenario, seconds in self.runs:
            by_scenario.setdefault(scenario, []).append(seconds)
        detail = ", ".join(f"{name} {len(t)}x avg {sum(t) / len(t):.2f}s" for name, t in sorted(by_scenario.items()))
        write_line(f"{self.label}: {len(self.runs)} {self.unit} runs, {sum(s for _, s in self.runs):.1f}s ({detail})")
