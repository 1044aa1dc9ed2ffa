"""A local SparkSession with Spark's own Kafka connector on its classpath, to point pipelines at kafkamock.

    from kafkamock.spark.session import spark_session
    from kafkamock.testing import start_broker

    with start_broker() as broker:
        spark = spark_session()
        df = (spark.read.format("kafka").option("kafka.bootstrap.servers", broker.bootstrap_servers)
              .option("subscribe", "orders").load())

The connector (``org.apache.spark:spark-sql-kafka-0-10_2.13``) must match pyspark's version. It comes from, in this
order: the ``jars`` argument, the ``KAFKAMOCK_SPARK_JARS`` environment variable (jar paths separated by
``os.pathsep``: what ``make spark`` resolves into ``.cache/spark/jars``, for offline runs), or Spark's own package
resolution (``spark.jars.packages``, cached under ``~/.cache/kafkamock/ivy``). kafkamock's ``format("kafkamock")``
is registered on the same session, for machines without the JVM jar.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["CONNECTOR", "connector_package", "spark_session"]
CONNECTOR = "org.apache.spark:spark-sql-kafka-0-10_2.13"
JARS_ENV = "KAFKAMOCK_SPARK_JARS"


def connector_package(pyspark_version: str | None = None) -> str:
    """The Maven coordinates of Spark's Kafka connector for this pyspark (``group:artifact:version``)."""
    if pyspark_version is None:
        import pyspark

        pyspark_version = pyspark.__version__
    return f"{CONNECTOR}:{pyspark_version}"


def spark_session(*, master: str = "local[2]", app_name: str = "kafkamock", jars: Sequence[str] | None = None,
                  conf: Mapping[str, Any] | None = None) -> Any:
    """A SparkSession (the JVM's one: ``getOrCreate``) whose classpath has Spark's Kafka connector, bound to
    127.0.0.1, UTC, quiet, with ``format("kafkamock")`` registered. ``conf`` adds or overrides Spark settings.

    A session already running in this process keeps the classpath it started with: call this before anything
    else creates one."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    from kafkamock.spark import register

    builder = (SparkSession.builder.master(master).appName(app_name)
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
               .config("spark.sql.session.timeZone", "UTC"))
    for key, value in _classpath(jars).items():
        builder = builder.config(key, value)
    for key, value in (conf or {}).items():
        builder = builder.config(key, str(value))
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    return session


def _classpath(jars: Sequence[str] | None) -> dict[str, str]:
    """The Spark settings that put the connector on the classpath."""
    if jars is None and os.environ.get(JARS_ENV):
        jars = [p for p in os.environ[JARS_ENV].split(os.pathsep) if p]
    if jars is not None:
        missing = [j for j in jars if not Path(j).is_file()]
        if missing:
            raise FileNotFoundError(f"Spark's Kafka connector jars not found: {', '.join(missing)}")
        return {"spark.jars": ",".join(str(Path(j).resolve()) for j in jars)}
    ivy = Path.home() / ".cache" / "kafkamock" / "ivy"
    return {"spark.jars.packages": connector_package(), "spark.jars.ivy": str(ivy)}
