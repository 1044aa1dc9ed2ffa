"""Fixtures for the broker-core tests: a ManualClock and a broker with topic "t" (2 partitions)."""

from __future__ import annotations

import pytest

from kafkamock.broker import Cluster, ManualClock


@pytest.fixture
def clock():
    return ManualClock()


@pytest.fixture
def broker(clock):
    b = Cluster(clock=clock)
    b.metadata.create_topic("t", 2, 1)
    return b
