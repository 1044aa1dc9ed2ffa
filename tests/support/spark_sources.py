"""The PySpark tests' view of "a Kafka source": which connector (Spark's own ``format("kafka")`` or kafkamock's
``format("kafkamock")``) reads from which broker (kafkamock, or Apache Kafka 4.3.1).

Every option test runs each combination its steps allow and expects the same rows from each: Spark's connector on
kafkamock and on Kafka 4.3.1 (a difference is a kafkamock bug), and kafkamock's connector on kafkamock (a
difference is a bug of that connector). Steps that look inside the broker (its request log, its stored batches,
pushed faults) take ``control``, which only kafkamock has: such tests run the kafkamock-broker combinations.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SPARK_JARS = REPO / ".cache" / "spark"

# (connector, broker) pairs; the Kafka runs are marked ``kafka`` (``make test-fast`` leaves them out).
ALL = [pytest.param(("kafka", "kafkamock"), id="kafka-on-kafkamock"),
       pytest.param(("kafka", "kafka"), id="kafka-on-kafka", marks=pytest.mark.kafka),
       pytest.param(("kafkamock", "kafkamock"), id="kafkamock-on-kafkamock")]
ON_KAFKAMOCK = [ALL[0], ALL[2]]
SPARKS_OWN = [ALL[0], ALL[1]]
# Both brokers check retention every half second (a data-loss test waits for it); the tests' topics keep records
# for ever unless a test says otherwise (their timestamps are from 2023).
BROKER_CONFIG = {"log.retention.check.interval.ms": "500"}


def connector_jars() -> list[str]:
    """Spark's Kafka connector and what pyspark lacks of its dependencies (``make spark``; resolved here with Maven
    on first use when missing)."""
    import sys

    sys.path.insert(0, str(REPO / "tests" / "java"))
    try:
        import fetch_jars
    finally:
        sys.path.pop(0)
    return [str(p) for p in fetch_jars.main(["spark", str(SPARK_JARS)])]


@dataclass
class Source:
    """One combination: ``fmt`` reads and writes through ``bootstrap_servers``; ``handle`` is kafkamock's
    BrokerHandle (None on Kafka)."""

    fmt: str
    broker: str
    bootstrap_servers: str
    spark: Any
    handle: Any = None
    token: str = field(default_factory=lambda: uuid.uuid4().hex[:8])

    @property
    def control(self) -> Any:
        assert self.handle is not None, "the control API is kafkamock's: run this test on ON_KAFKAMOCK"
        return self.handle.control

    def name(self, prefix: str) -> str:
        """A topic or group name unique to this run (the Kafka cluster is shared by the whole session)."""
        return f"{prefix}-{self.token}"

    def create_topic(self, name: str, partitions: int = 1, config: Mapping[str, object] | None = None) -> str:
        """Create the topic (records kept for ever: the tests' timestamps are from 2023) and wait for its leaders."""
        from support.targets import BrokerTarget

        config = {"retention.ms": "-1", **{k: str(v) for k, v in (config or {}).items()}}
        BrokerTarget(self.broker, self.bootstrap_servers, self.handle).create_topic(name, partitions, config)
        return name

    def read(self, *, stream: bool = False, **options: str) -> Any:
        r = (self.spark.readStream if stream else self.spark.read).format(self.fmt).option(
            "kafka.bootstrap.servers", self.bootstrap_servers)
        for k, v in options.items():
            r = r.option(k, v)
        return r.load()

    def write(self, df: Any, **options: str) -> None:
        w = df.write.mode("append").format(self.fmt).option("kafka.bootstrap.servers", self.bootstrap_servers)
        for k, v in options.items():
            w = w.option(k, v)
        w.save()

    def write_stream(self, df: Any, **options: str) -> Any:
        w = df.writeStream.format(self.fmt).option("kafka.bootstrap.servers", self.bootstrap_servers)
        for k, v in options.items():
            w = w.option(k, v)
        return w


def source_for(request: pytest.FixtureRequest, spark: Any) -> Source:
    """The ``source`` fixtures' body: kafkamock from the session's broker, Kafka from the session's cluster."""
    fmt, broker = request.param
    if broker == "kafka":
        from support.oracle import find_java
        from support.targets import missing_tool

        if find_java() is None:
            missing_tool("Kafka 4.3.1 needs a JDK 17 (java and javac on PATH or in $JAVA_HOME/bin)")
        cluster = request.getfixturevalue("reference_kafka").get(config=BROKER_CONFIG)
        return Source(fmt, broker, cluster.bootstrap_servers, spark)
    handle = request.getfixturevalue("kafka_broker_session")
    return Source(fmt, broker, handle.bootstrap_servers, spark, handle)


__all__ = ["ALL", "BROKER_CONFIG", "ON_KAFKAMOCK", "SPARKS_OWN", "Source", "connector_jars", "source_for"]
