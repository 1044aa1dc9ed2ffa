"""pytest fixtures (registered through the ``pytest11`` entry point): a real broker per test, or per session.

    def test_orders(kafka_broker):
        kafka_broker.create_topic("orders", partitions=3)
        producer = Producer({"bootstrap.servers": kafka_broker.bootstrap_servers})
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kafkamock.testing import BrokerHandle, start_broker


@pytest.fixture
def kafka_broker() -> Iterator[BrokerHandle]:
    """A fresh broker on a free port of 127.0.0.1, stopped after the test."""
    with start_broker() as broker:
        yield broker


@pytest.fixture(scope="session")
def kafka_broker_session() -> Iterator[BrokerHandle]:
    """One broker shared by the whole test session (use distinct topic names per test)."""
    with start_broker() as broker:
        yield broker
