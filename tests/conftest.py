"""Shared test set-up: a deterministic hypothesis profile and the session-wide Java oracle.

``tests/`` is not a package: pytest puts this directory on ``sys.path``, so test modules import the helpers as
``from support.oracle import ...``, ``from support.kafka_json import ...`` and ``from strategies import values``.

The tree mirrors the package: ``tests/<name>`` tests ``kafkamock/<name>`` (codec, schema, records, broker, server,
storage, client, spark), top-level files test top-level modules and the project as a whole (cli, testing, kips,
docs, packaging), and ``tests/interop/{python,java,js,kgo}`` runs third-party clients against the broker. Beside
them: ``tests/differential`` (kafkamock beside Apache Kafka 4.3.1), ``tests/fuzz``, and the non-Python sources the
tests build (``tests/java``, ``tests/js``, ``tests/kgo``). Test directories other than ``support`` and
``differential`` are not packages: pytest imports each test module by its basename and puts its directory on
``sys.path`` (where ``client_support`` and ``producer_support`` are found), so a test file's name must be unique
across the tree.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

TESTS = Path(__file__).resolve().parent
for path in (TESTS, TESTS.parent):  # helpers first; the repo root too, for runs without an installed kafkamock
    if str(path) not in sys.path:
        sys.path.insert(0 if path == TESTS else len(sys.path), str(path))

# Deterministic by default (CI must not flake on a lucky seed); HYPOTHESIS_PROFILE=... picks another profile.
settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def kafka_oracle():
    """One JVM running Kafka 4.3.1's own serializers for the whole session (see tests/support/oracle.py).

    Builds what it needs on first use (jars into ``.cache/java`` via tests/java/fetch_jars.py, then javac).
    Skips only when no JDK is installed; any other failure (download, compile) is an error, not a skip.
    """
    from support.oracle import KafkaOracle, build, find_java

    if find_java() is None:
        pytest.skip("Java oracle needs a JDK 17 (java and javac on PATH or in $JAVA_HOME/bin); none found")
    oracle = KafkaOracle(build())
    oracle.start()
    try:
        info = oracle.ping()
        assert info["kafka"] == "4.3.1", info
        yield oracle
    finally:
        oracle.close()


@pytest.fixture(scope="session")
def reference_kafka():
    """Apache Kafka 4.3.1 beside kafkamock: the session's clusters, one per set of settings, started on first use
    (tests/support/kafka_cluster.py; jars from ``make kafka``, resolved on first use when missing)."""
    from support.kafka_cluster import ReferenceClusters
    from support.oracle import find_java
    from support.targets import missing_tool

    if find_java() is None:
        missing_tool("Kafka 4.3.1 needs a JDK 17 (java and javac on PATH or in $JAVA_HOME/bin)")
    clusters = ReferenceClusters()
    try:
        yield clusters
    finally:
        clusters.close()


@pytest.fixture(params=["kafkamock", pytest.param("kafka", marks=pytest.mark.kafka)])
def kafka_target(request):
    """The broker a test talks to, once kafkamock (fresh, started with the test's ``kafkamock`` marker options,
    with a WireTap) and once Apache Kafka 4.3.1 (shared by the session): tests taking it prove that their
    expectations are Kafka's. See tests/support/targets.py."""
    from support.targets import target_for

    return target_for(request, request.param)


@pytest.fixture
def wire(kafka_broker):
    """A WireTap on this test's broker (support.java_clients.WireTap): its log joins the report of a failed test."""
    from support.java_clients import WireTap

    return WireTap(kafka_broker.cluster)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Attach the wire log of every WireTap the test used (a fixture value, or a fixture's ``.wire``)."""
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.failed:
        return
    from support.java_clients import WireTap

    for name, value in getattr(item, "funcargs", {}).items():
        tap = value if isinstance(value, WireTap) else getattr(value, "wire", None)
        if isinstance(tap, WireTap):
            report.sections.append((f"kafkamock wire ({name})", tap.format() or "(no request reached the core)"))


def pytest_sessionfinish(session, exitstatus):
    """An xdist worker hands its figures (support/session_figures.py) to the controller."""
    from support.session_figures import hand_over

    hand_over(session.config)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """The controller adds up a finished worker's figures (an xdist hook: called only under xdist)."""
    from support.session_figures import take_over

    take_over(node.config, getattr(node, "workeroutput", {}))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """The session's figures, once: the differential figure and the Java and kafkajs process times."""
    from support.session_figures import report

    report(config, terminalreporter.write_line)
