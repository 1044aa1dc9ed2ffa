"""Fixtures for the kafkajs tests: the installed kafkajs (once per session) and a wire tap per test.

Outside CI these tests skip when node or npm is missing; under CI (``CI`` set, as .ci/run runs) that is a failure,
since .ci/run installs them. On a failure, the report gets a "kafkamock wire" section (what the broker was asked and
answered), as for the Java clients.
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


@pytest.fixture
def wire(kafka_broker):
    """A WireTap on this test's broker (support.java_clients.WireTap)."""
    from support.java_clients import WireTap

    return WireTap(kafka_broker.broker)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Attach the wire log of the test's WireTap when it failed."""
    from support.java_clients import WireTap

    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.failed:
        return
    tap = getattr(item, "funcargs", {}).get("wire")
    if isinstance(tap, WireTap):
        report.sections.append(("kafkamock wire", tap.format() or "(no request reached the core)"))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """One line on the node processes the kafkajs tests started."""
    runs = config.stash.get(RUNS, None)
    if runs:
        by_scenario: dict[str, list[float]] = {}
        for scenario, seconds in runs:
            by_scenario.setdefault(scenario, []).append(seconds)
        detail = ", ".join(f"{name} {len(t)}x avg {sum(t) / len(t):.2f}s" for name, t in sorted(by_scenario.items()))
        terminalreporter.write_line(f"kafkajs: {len(runs)} node runs, {sum(s for _, s in runs):.1f}s ({detail})")
