"""pytest fixtures (registered through the ``pytest11`` entry point): a real cluster per test, or per session.

    def test_orders(kafka_broker):
        kafka_broker.create_topic("orders", partitions=3)
        producer = Producer({"bootstrap.servers": kafka_broker.bootstrap_servers})

    @pytest.mark.kafkamock(brokers=3, config={"auto.create.topics.enable": "false"})
    def test_failover(kafka_broker):
        kafka_broker.control.stop_node(2)

    def test_two_clusters(kafka_broker_factory):
        a, b = kafka_broker_factory(), kafka_broker_factory(brokers=3, control_port=0)

    def test_pipeline(kafka_broker, kafka_spark):      # Spark's own connector, pointed at the broker
        df = kafka_spark.read.format("kafka").option("kafka.bootstrap.servers", kafka_broker.bootstrap_servers)

The ``kafkamock`` marker takes ``start_broker``'s keyword arguments (``brokers``, ``config``, ``data_dir``,
``control_port``...); ``kafka_broker_factory`` starts clusters with any of them and stops them after the test.
Each broker starts with ``kafkamock.testing.TEST_CONFIG`` under the given config: ``group.initial.rebalance.delay.ms``
is 0, so a classic group's first rebalance does not wait Kafka's 3 s.

Internal errors are loud: a test during which a broker of these fixtures caught an exception to keep serving (a
handler or a timer task raised: a bug, hidden from the client as a closed connection or a retry) fails at teardown
with the first one's traceback. A test that provokes them on purpose (a fuzzer) is marked
``@pytest.mark.kafkamock_expect_internal_errors`` or calls ``broker.expect_internal_errors()``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from kafkamock.testing import BrokerHandle, fail_for_internal_errors, start_broker

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

EXPECT_INTERNAL_ERRORS = "kafkamock_expect_internal_errors"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "kafkamock(**options): start_broker() options for the kafka_broker fixture")
    config.addinivalue_line("markers", f"{EXPECT_INTERNAL_ERRORS}: the test provokes kafkamock broker internal "
                                       "errors on purpose; its fixtures' brokers do not fail it for them")


def _expects_internal_errors(request: pytest.FixtureRequest) -> bool:
    return request.node.get_closest_marker(EXPECT_INTERNAL_ERRORS) is not None


@pytest.fixture
def kafka_broker(request: pytest.FixtureRequest) -> Iterator[BrokerHandle]:
    """A fresh cluster on free ports of 127.0.0.1 (one node unless the ``kafkamock`` marker says), stopped after
    the test, which fails then for the broker's internal errors."""
    marker = request.node.get_closest_marker("kafkamock")
    options = dict(marker.kwargs) if marker else {}
    broker = start_broker(**options)
    try:
        yield broker
    finally:
        broker.stop()
    if _expects_internal_errors(request):
        broker.expect_internal_errors()
    broker.fail_on_internal_errors()


@pytest.fixture
def kafka_broker_factory(request: pytest.FixtureRequest) -> Iterator[Callable[..., BrokerHandle]]:
    """``factory(**start_broker options)``: as many clusters as a test needs, all stopped after it (which fails
    then for their internal errors)."""
    started: list[BrokerHandle] = []

    def factory(**options: Any) -> BrokerHandle:
        handle = start_broker(**options)
        started.append(handle)
        return handle

    yield factory
    for handle in reversed(started):
        handle.stop()
    for handle in started:
        if _expects_internal_errors(request):
            handle.expect_internal_errors()
    fail_for_internal_errors([error for handle in started for error in handle.unexpected_internal_errors()])


@pytest.fixture(scope="session")
def kafka_broker_session() -> Iterator[BrokerHandle]:
    """One broker shared by the whole test session (use distinct topic names per test); each test that uses it
    fails for the internal errors recorded while it ran."""
    broker = start_broker()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(autouse=True)
def _kafkamock_session_internal_errors(request: pytest.FixtureRequest) -> Iterator[None]:
    """After a test that used ``kafka_broker_session``: fail it for the internal errors recorded meanwhile."""
    yield
    if "kafka_broker_session" in request.fixturenames:
        broker: BrokerHandle = request.getfixturevalue("kafka_broker_session")
        if _expects_internal_errors(request):
            broker.expect_internal_errors()
        broker.fail_on_internal_errors()


@pytest.fixture(scope="session")
def kafka_spark() -> Iterator[SparkSession]:
    """A local SparkSession for the whole session with Spark's own Kafka connector (``format("kafka")``) and
    kafkamock's (``format("kafkamock")``): point readers and writers at ``kafka_broker.bootstrap_servers``. The
    connector comes from ``KAFKAMOCK_SPARK_JARS`` or Spark's package resolution (``kafkamock.spark.session``)."""
    from kafkamock.spark.session import spark_session

    session = spark_session(app_name="kafkamock-pytest")
    yield session
    session.stop()
