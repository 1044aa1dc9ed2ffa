"""One SparkSession for every Spark test (starting one costs about ten seconds), local[2], next to a broker."""

from __future__ import annotations

import os
import sys

import pytest

pyspark = pytest.importorskip("pyspark")


@pytest.fixture(scope="session")
def spark():
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    from kafkamock.spark import register

    session = (SparkSession.builder.master("local[2]").appName("kafkamock-tests")
               .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
               .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
               .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def kafka_broker_session():
    """The Spark tests' broker. Their records carry fixed 2023 timestamps, which a week's retention would delete at
    the first retention check (30 s after start), as Kafka's would: this broker keeps records forever."""
    from kafkamock.testing import start_broker

    with start_broker({"log.retention.ms": "-1"}) as broker:
        yield broker


from support.tansu import tansu  # noqa: E402,F401  (a second broker implementation for the connector)
