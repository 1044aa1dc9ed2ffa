"""Fixtures for the Java-client tests: the compiled ClientScenarios (once per session).

A failed test's report gets a "kafkamock wire" section from each WireTap it used (the ``wire`` fixture and the
report hook are in tests/conftest.py): every request the broker handled and its response.

``kafka_target`` (tests/conftest.py) runs a test against a fresh kafkamock and against Apache Kafka 4.3.1. Tests
using it create their topics through it and name topics and groups with ``kafka_target.unique(prefix)``, since the
Kafka cluster is shared by the session.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def java_clients(request):
    """kafka-clients 4.3.1 scenarios (tests/java/ClientScenarios.java), compiled on first use.

    Skips only when no JDK is installed; a download or compile failure is an error, not a skip.
    """
    from support.java_clients import JavaClients, build
    from support.oracle import find_java
    from support.session_figures import figure

    if find_java() is None:
        from support.targets import missing_tool

        missing_tool("the Java client tests need a JDK 17 (java and javac on PATH or in $JAVA_HOME/bin); none found")
    clients = JavaClients(build())
    clients.runs = figure(request.config, "java clients").runs
    return clients

