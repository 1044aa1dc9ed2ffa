"""Fixtures for the Java-client tests: the compiled ClientScenarios (once per session) and ``kafka_target``.

A failed test's report gets a "kafkamock wire" section from each WireTap it used (the ``wire`` fixture and the
report hook are in tests/conftest.py): every request the broker handled and its response.

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
    """kafka-clients 4.3.1 scenarios (tests/java/ClientScenarios.java), compiled on first use.

    Skips only when no JDK is installed; a download or compile failure is an error, not a skip.
    """
    from support.java_clients import JavaClients, build
    from support.oracle import find_java

    if find_java() is None:
        pytest.skip("the Java client tests need a JDK 17 (java and javac on PATH or in $JAVA_HOME/bin); none found")
    clients = JavaClients(build())
    request.config.stash[RUNS] = clients.runs
    return clients


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """One line on the JVMs the Java-client tests started (each costs about a second)."""
    from support.scenario_runs import summary_line

    line = summary_line(config.stash.get(RUNS, None), "java clients", "JVM")
    if line:
        terminalreporter.write_line(line)
