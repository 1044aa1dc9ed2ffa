"""Fixtures for the kafkajs tests: the installed kafkajs (once per session).

Outside CI these tests skip when node or npm is missing; under CI (``CI`` set, as .ci/run runs) that is a failure,
since .ci/run installs them. On a failure, the report gets a "kafkamock wire" section (what the broker was asked and
answered) from the ``wire`` fixture, as for the Java clients (both in tests/conftest.py).
"""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session")
def kafkajs(request):
    """``support.js_clients.JsClients`` with kafkajs 2.2.4 (``npm ci`` into .cache/node on first use)."""
    from support.js_clients import JsClients, install, missing_tools
    from support.session_figures import figure

    missing = missing_tools()
    if missing:
        why = f"the kafkajs tests need {' and '.join(missing)} (make js or .ci/run installs them)"
        if os.environ.get("CI", "").lower() not in ("", "0", "false"):
            pytest.fail(f"{why}; under CI that is a failure, not a skip", pytrace=False)
        pytest.skip(why)
    clients = JsClients(install())
    clients.runs = figure(request.config, "kafkajs").runs
    return clients

