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
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from kafkamock.testing import BrokerHandle, start_broker


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "kafkamock(**options): start_broker() options for the kafka_broker fixture")


@pytest.fixture
def kafka_broker(request: pytest.FixtureRequest) -> Iterator[BrokerHandle]:
    """A fresh cluster on free ports of 127.0.0.1 (one node unless the ``kafkamock`` marker says), stopped after
    the test."""
    marker = request.node.get_closest_marker("kafkamock")
    options = dict(marker.kwargs) if marker else {}
    with start_broker(**options) as broker:
        yield broker


@pytest.fixture
def kafka_broker_factory() -> Iterator[Callable[..., BrokerHandle]]:
    """``factory(**start_broker options)``: as many clusters as a test needs, all stopped after it."""
    started: list[BrokerHandle] = []

    def factory(**options) -> BrokerHandle:
        handle = start_broker(**options)
        started.append(handle)
        return handle

    yield factory
    for handle in reversed(started):
        handle.stop()


@pytest.fixture(scope="session")
def kafka_broker_session() -> Iterator[BrokerHandle]:
    """One broker shared by the whole test session (use distinct topic names per test)."""
    with start_broker() as broker:
        yield broker


@pytest.fixture(scope="session")
def kafka_spark():
    """A local SparkSession for the whole session with Spark's own Kafka connector (``format("kafka")``) and
    kafkamock's (``format("kafkamock")``): point readers and writers at ``kafka_broker.bootstrap_servers``. The
    connector comes from ``KAFKAMOCK_SPARK_JARS`` or Spark's package resolution (``kafkamock.spark.session``)."""
    from kafkamock.spark.session import spark_session

    session = spark_session(app_name="kafkamock-pytest")
    yield session
    session.stop()
