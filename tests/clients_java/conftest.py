"""Fixtures for the Java-client tests: the compiled ClientScenarios (once per session) and a wire tap per test.

On a failure, the report gets a "kafkamock wire" section: every request the broker handled and its response.

``kafka_target`` is the broker a test talks to: a fresh kafkamock (the ``kafka_broker`` fixture, so the
``kafkamock`` marker applies), or, when ``KAFKAMOCK_EXTERNAL_BOOTSTRAP=127.0.0.1:PORT`` is set, a broker the tests
do not own (a real Kafka, to prove the tests themselves right). Tests using it create their topics through it and
name topics and groups with ``kafka_target.unique(prefix)``, since an external broker keeps them between tests.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator, Mapping

import pytest

RUNS = pytest.StashKey[list]()
EXTERNAL_BOOTSTRAP = "KAFKAMOCK_EXTERNAL_BOOTSTRAP"


class KafkaTarget:
    """The broker under test: ``bootstrap_servers``, ``create_topic``, ``unique`` names; ``external`` tells which;
    ``broker`` is kafkamock's BrokerHandle and ``wire`` its WireTap (both None for an external broker)."""

    def __init__(self, bootstrap_servers: str, broker=None, wire=None):
        self.bootstrap_servers = bootstrap_servers
        self.broker, self.wire = broker, wire
        self.external = broker is None
        self._token = uuid.uuid4().hex[:8]

    def unique(self, prefix: str) -> str:
        """A topic or group name no other test (or earlier run against the same external broker) uses."""
        return f"{prefix}-{self._token}"

    def create_topic(self, name: str, partitions: int = 1, config: Mapping[str, object] | None = None) -> None:
        if self.broker is not None:
            self.broker.create_topic(name, partitions, config)
            return
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": self.bootstrap_servers})
        futures = admin.create_topics([NewTopic(name, partitions, 1, config={k: str(v) for k, v in
                                                                             (config or {}).items()})],
                                      operation_timeout=15, request_timeout=15)
        futures[name].result(timeout=30)


@pytest.fixture
def kafka_target(request) -> Iterator[KafkaTarget]:
    """The broker a test talks to: kafkamock (fresh, with a WireTap), or the one in $KAFKAMOCK_EXTERNAL_BOOTSTRAP."""
    external = os.environ.get(EXTERNAL_BOOTSTRAP, "").strip()
    if external:
        yield KafkaTarget(external)
        return
    from support.java_clients import WireTap

    handle = request.getfixturevalue("kafka_broker")
    yield KafkaTarget(handle.bootstrap_servers, handle, WireTap(handle.broker))


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
