"""Fixtures for the broker-core tests: a ManualClock and a broker with topic "t" (2 partitions)."""

from __future__ import annotations

import pytest

from kafkamock.broker import Broker, ManualClock


@pytest.fixture
def clock():
    return ManualClock()


@pytest.fixture
def broker(clock):
    b = Broker(clock=clock)
    b.cluster.create_topic("t", 2, 1)
    return b
