"""One SparkSession for every Spark test (starting one costs about ten seconds), local[2], next to a broker; the
connector-and-broker combinations the option tests run on (support/spark_sources.py)."""

from __future__ import annotations

import pytest
from support.spark_sources import ALL, BROKER_CONFIG, ON_KAFKAMOCK, source_for

pyspark = pytest.importorskip("pyspark")


@pytest.fixture(scope="session")
def spark():
    """local[2] with Spark's own Kafka connector on the classpath (``make spark``) and ``format("kafkamock")``."""
    from support.spark_sources import connector_jars

    from kafkamock.spark.session import spark_session

    session = spark_session(app_name="kafkamock-tests", jars=connector_jars())
    yield session
    session.stop()


@pytest.fixture(params=ALL)
def source(request, spark):
    """Each connector on each broker it is tested against (support/spark_sources.py)."""
    return source_for(request, spark)


@pytest.fixture(params=ON_KAFKAMOCK)
def mock_source(request, spark):
    """Both connectors on kafkamock, for steps that look inside the broker (its control API)."""
    return source_for(request, spark)


@pytest.fixture(scope="session")
def kafka_broker_session():
    """The Spark tests' broker. Their records carry fixed 2023 timestamps, which a week's retention would delete at
    the first retention check (30 s after start), as Kafka's would: this broker keeps records forever."""
    from kafkamock.testing import start_broker

    with start_broker({"log.retention.ms": "-1", **BROKER_CONFIG}) as broker:
        yield broker


from support.tansu import tansu  # noqa: E402,F401  (a second broker implementation for the connector)
