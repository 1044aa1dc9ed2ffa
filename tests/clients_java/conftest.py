"""Fixtures for the Java-client tests: the compiled ClientScenarios (once per session) and a wire tap per test.

On a failure, the report gets a "kafkamock wire" section: every request the broker handled and its response.
"""

from __future__ import annotations

import pytest

RUNS = pytest.StashKey[list]()


@pytest.fixture(scope="session")
def java_clients(request):
    """kafka-clients 4.3.0 scenarios (tests/java/ClientScenarios.java), compiled on first use.

    Skips only when no JDK is installed; a download or compile failure is an error, not a skip.
    """
    from support.java_clients import JavaClients, build
    from support.oracle import find_java

    if find_java() is None:
        pytest.skip("the Java client tests need a JDK 17 (java and javac on PATH or in $JAVA_HOME/bin); none found")
    clients = JavaClients(build())
    request.config.stash[RUNS] = clients.runs
    return clients


@pytest.fixture
def wire(kafka_broker):
    """A WireTap on this test's broker (support.java_clients.WireTap)."""
    from support.java_clients import WireTap

    return WireTap(kafka_broker.broker)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Attach the wire log of every WireTap the test used (a fixture value, or a fixture's ``.wire``)."""
    from support.java_clients import WireTap

    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.failed:
        return
    for name, value in getattr(item, "funcargs", {}).items():
        tap = value if isinstance(value, WireTap) else getattr(value, "wire", None)
        if isinstance(tap, WireTap):
            report.sections.append((f"kafkamock wire ({name})", tap.format() or "(no request reached the core)"))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """One line on the JVMs the Java-client tests started (each costs about a second)."""
    runs = config.stash.get(RUNS, None)
    if runs:
        by_scenario: dict[str, list[float]] = {}
        for scenario, seconds in runs:
            by_scenario.setdefault(scenario, []).append(seconds)
        detail = ", ".join(f"{name} {len(t)}x avg {sum(t) / len(t):.2f}s" for name, t in sorted(by_scenario.items()))
        terminalreporter.write_line(f"java clients: {len(runs)} JVM runs, {sum(s for _, s in runs):.1f}s ({detail})")
