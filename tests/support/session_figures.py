"""End-of-session figures (the differential figure, the Java and kafkajs process times) that add up across
pytest-xdist workers.

A fixture gets its figure with ``figure(config, name)`` and adds to it. At the end, a worker hands every figure to
the controller as a dict (``pytest_sessionfinish`` in tests/conftest.py), the controller merges them
(``pytest_testnodedown``) and prints each once (``pytest_terminal_summary``). Without xdist the same process
adds and prints.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

import pytest


class Figure(Protocol):
    def to_dict(self) -> dict: ...

    def merge(self, part: Mapping[str, Any]) -> None: ...

    def report(self, write_line: Callable[[str], None]) -> None: ...


FIGURES = pytest.StashKey[dict[str, Figure]]()


def _factories() -> dict[str, Callable[[], Figure]]:
    from support.differential import DifferentialFigure
    from support.scenario_runs import ScenarioRuns

    return {
        "differential": DifferentialFigure,
        "java clients": lambda: ScenarioRuns("java clients", "JVM"),
        "kafkajs": lambda: ScenarioRuns("kafkajs", "node"),
    }


def figure(config: pytest.Config, name: str) -> Any:
    """The session's figure called ``name``, made on first use."""
    figures = config.stash.setdefault(FIGURES, {})
    if name not in figures:
        factories = _factories()
        if name not in factories:
            raise KeyError(f"no session figure called {name!r}; known: {', '.join(sorted(factories))}")
        figures[name] = factories[name]()
    return figures[name]


def is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workeroutput")


def hand_over(config: pytest.Config) -> None:
    """On an xdist worker: put every figure into the output the controller receives."""
    if is_worker(config):
        config.workeroutput["figures"] = {name: f.to_dict() for name, f in config.stash.get(FIGURES, {}).items()}


def take_over(config: pytest.Config, workeroutput: Mapping[str, Any]) -> None:
    """On the controller: add a finished worker's figures to the session's."""
    for name, part in workeroutput.get("figures", {}).items():
        figure(config, name).merge(part)


def report(config: pytest.Config, write_line: Callable[[str], None]) -> None:
    if not is_worker(config):
        for f in config.stash.get(FIGURES, {}).values():
            f.report(write_line)
