"""Fixtures for the kafkajs tests: the installed kafkajs (once per session).

Outside CI these tests skip when node or npm is missing; under CI (``CI`` set, as .ci/run runs) that is a failure,
since .ci/run installs them. On a failure, the report gets a "kafkamock wire" section (what the broker was asked and
answered) from the ``wire`` fixture, as for the Java clients (both in tests/conftest.py).
"""

from __future__ import annotations

import os

import pytest

RUNS = pytest.StashKey[list]()


@pytest.fixture(scope="session")
def kafkajs(request):
    """``support.js_clients.JsClients`` with kafkajs 2.2.4 (``npm ci`` into .cache/node on first use)."""
    from support.js_clients import JsClients, install, missing_tools

    missing = missing_tools()
    if missing:
        why = f"the kafkajs tests need {' and '.join(missing)} (make js or .ci/run installs them)"
        if os.environ.get("CI", "").lower() not in ("", "0", "false"):
            pytest.fail(f"{why}; under CI that is a failure, not a skip", pytrace=False)
        pytest.skip(why)
    clients = JsClients(install())
    request.config.stash[RUNS] = clients.runs
    return clients


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """One line on the node processes the kafkajs tests started."""
    from support.scenario_runs import summary_line

    line = summary_line(config.stash.get(RUNS, None), "kafkajs", "node")
    if line:
        terminalreporter.write_line(line)
