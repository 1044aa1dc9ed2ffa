"""The differential suite's fixtures: Apache Kafka 4.3.1 and kafkamock side by side, and the suite's figure.

``differ`` hands a test the harness (tests/support/differential.py). The brokers are started on first use and kept
for the session, one pair per (node count, broker configs) a scenario asks for: a one-node pair with the
launcher's test settings serves most scenarios. The terminal summary prints the figure:
``differential: N scenarios, M fields compared, K equal (P%); ...``; ``.cache/differential.json`` keeps it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from support.differential import Differ, Target
from support.kafka_cluster import ReferenceClusters, test_defaults
from support.oracle import REPO


def pytest_collection_modifyitems(config, items):
    """Every differential scenario runs Kafka 4.3.1: marked ``kafka`` (``make test-fast`` leaves them out)."""
    here = str(REPO / "tests" / "differential")
    for item in items:
        if str(item.path).startswith(here):
            item.add_marker(pytest.mark.kafka)


class Pairs:
    """Broker pairs by (nodes, configs), started lazily: Kafka from the session's reference clusters (shared with
    ``kafka_target``), kafkamock started here with the same settings and stopped at the end of the session."""

    def __init__(self, reference: ReferenceClusters) -> None:
        self.reference = reference
        self.pairs: dict[tuple, tuple[Target, Target]] = {}
        self.stops: list[Any] = []

    def __call__(self, nodes: int, config: Mapping[str, Any], own: str | None = None) -> tuple[Target, Target]:
        key = (nodes, tuple(sorted((k, str(v)) for k, v in config.items())), own)
        if key not in self.pairs:
            from kafkamock.testing import start_broker

            settings = {"group.initial.rebalance.delay.ms": "0", **{k: str(v) for k, v in config.items()}}
            kafka = self.reference.get(nodes, settings, own=own)
            mock = start_broker(config={**test_defaults(nodes), **settings}, brokers=nodes)
            self.stops.append(mock.stop)
            self.pairs[key] = (Target("kafka", kafka.bootstrap_servers.split(","), kafka),
                               Target("kafkamock", mock.bootstrap_servers.split(","), mock))
        return self.pairs[key]

    def close(self) -> None:
        for stop in reversed(self.stops):
            stop()


@pytest.fixture(scope="session")
def broker_pairs(reference_kafka) -> Iterator[Pairs]:
    pairs = Pairs(reference_kafka)
    try:
        yield pairs
    finally:
        pairs.close()


@pytest.fixture
def differ(request, broker_pairs) -> Differ:
    from support.session_figures import figure

    totals = figure(request.config, "differential")
    return Differ(broker_pairs, totals.known, totals.stats)
