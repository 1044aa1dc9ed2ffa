"""The PySpark connector: Spark's Kafka source and sink as a Python Data Source named ``kafkamock``.

    from kafkamock.spark import register
    register(spark)
    df = spark.read.format("kafkamock").option("kafka.bootstrap.servers", "127.0.0.1:9092") \\
        .option("subscribe", "orders").load()

Options, schema and semantics are those of Spark's ``kafka`` format (which Spark reserves, so this one is named
``kafkamock``); moving a pipeline to Spark's own connector is a one-word change. It works against kafkamock and
against any Kafka cluster.
"""

from __future__ import annotations

from typing import Any

from kafkamock.spark.options import KafkaOptionError

__all__ = ["NAME", "KafkaOptionError", "register"]
NAME = "kafkamock"


def register(spark: Any) -> None:
    """Register the ``kafkamock`` data source with a SparkSession."""
    from kafkamock.spark.source import KafkaDataSource

    spark.dataSource.register(KafkaDataSource)
