"""The broker a test talks to, when a test runs against both brokers: a fresh kafkamock, or Apache Kafka 4.3.1.

Tests that prove their expectations are Kafka's take the ``kafka_target`` fixture (tests/conftest.py), which runs
each of them twice, ``[kafkamock]`` and ``[kafka]``. The Kafka cluster is shared by every test asking for the same
settings (support.kafka_cluster.ReferenceClusters), so names come from ``unique``/``name``; a test step only
kafkamock can take (its control API, a node stopped) asks ``target.kafkamock(why)``, which skips the Kafka run.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from typing import Any

import pytest

# The two brokers a test runs against; the Kafka run is marked ``kafka`` (``make test-fast`` leaves it out).
TARGETS = ("kafkamock", pytest.param("kafka", marks=pytest.mark.kafka))


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() not in ("", "0", "false")


def missing_tool(what: str) -> None:
    """Skip for a missing tool, except under CI (``CI`` set, as .ci/run does), where a skip would hide a test."""
    if in_ci():
        pytest.fail(f"{what} (CI must not skip)")
    pytest.skip(what)


class BrokerTarget:
    """``bootstrap_servers``, ``create_topic``, ``unique``/``name``; ``kind`` is ``kafkamock`` or ``kafka``.
    ``handle`` (also ``broker``) is kafkamock's BrokerHandle and ``wire`` its WireTap, None on Kafka."""

    def __init__(self, kind: str, bootstrap_servers: str, handle: Any = None, wire: Any = None,
                 test_name: str = "test"):
        self.kind = kind
        self.bootstrap_servers = bootstrap_servers
        self.handle = self.cluster = handle
        self.wire = wire
        self.test_name = test_name
        self._token = uuid.uuid4().hex[:8]

    @property
    def external(self) -> bool:
        """True on Kafka: a broker the test cannot look inside or drive."""
        return self.kind != "kafkamock"

    def kafkamock(self, why: str):
        """kafkamock's handle; on Kafka the test skips here (``why``: what only kafkamock can do)."""
        if self.handle is None:
            pytest.skip(f"needs kafkamock ({why})")
        return self.handle

    def unique(self, prefix: str) -> str:
        """A topic or group name no other test of the session uses (the same for the same prefix)."""
        return f"{prefix}-{self._token}"

    def name(self, kind: str) -> str:
        """A fresh name at each call, no other test of the session uses, that says which test made it."""
        stem = "".join(ch if ch.isalnum() else "-" for ch in self.test_name)[:60].strip("-")
        return f"{kind}-{stem}-{uuid.uuid4().hex[:8]}"

    def create_topic(self, name: str, partitions: int = 1, config: Mapping[str, object] | None = None) -> None:
        """Create the topic and return once every partition has a leader that answers for it."""
        if self.handle is not None:
            self.handle.create_topic(name, partitions, config)
            return
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": self.bootstrap_servers})
        futures = admin.create_topics([NewTopic(name, partitions, 1, config={k: str(v) for k, v in
                                                                             (config or {}).items()})],
                                      operation_timeout=15, request_timeout=15)
        futures[name].result(timeout=30)
        from support.kafka_cluster import wait_for_partitions

        wait_for_partitions(self.bootstrap_servers, name, partitions)


def target_for(request: pytest.FixtureRequest, kind: str) -> BrokerTarget:
    """The ``kafka_target`` fixture's body: kafkamock started with the test's ``kafkamock`` marker options (no
    initial rebalance delay, as the reference cluster), or the session's Kafka 4.3.1 cluster for those options."""
    marker = request.node.get_closest_marker("kafkamock")
    options = dict(marker.kwargs) if marker else {}
    options["config"] = {"group.initial.rebalance.delay.ms": 0, **(options.get("config") or {})}
    if kind == "kafka":
        from support.oracle import find_java

        if find_java() is None:
            missing_tool("Kafka 4.3.1 needs a JDK 17 (java and javac on PATH or in $JAVA_HOME/bin)")
        cluster = request.getfixturevalue("reference_kafka").for_kafkamock_options(options)
        return BrokerTarget("kafka", cluster.bootstrap_servers, test_name=request.node.name)
    from support.java_clients import WireTap

    factory = request.getfixturevalue("kafka_broker_factory")
    handle = factory(**options)
    return BrokerTarget("kafkamock", handle.bootstrap_servers, handle, WireTap(handle.cluster),
                        test_name=request.node.name)


__all__ = ["TARGETS", "BrokerTarget", "in_ci", "missing_tool", "target_for"]
