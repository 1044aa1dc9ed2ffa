"""Both connectors' security settings against kafkamock's secured listeners: a batch write and read and a streaming
read+write over SASL_SSL with SCRAM-SHA-512 (the broker's CA given as a PEM trust store), and mutual TLS (with
kafkamock's exactly-once write), through Spark's own connector (``format("kafka")``, the Java client) and
kafkamock's (``format("kafkamock")``) alike."""

from __future__ import annotations

import pytest

from kafkamock.server.tls import ThrowawayCA
from kafkamock.testing import start_broker

pytestmark = pytest.mark.slow
SCRAM = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="spark" password="spark-secret";'


def _options(reader_or_writer, options: dict):
    for k, v in options.items():
        reader_or_writer = reader_or_writer.option(k, v)
    return reader_or_writer


@pytest.mark.parametrize("fmt", ["kafka", "kafkamock"])
def test_sasl_ssl_scram_batch_and_streaming(spark, tmp_path, fmt):
    server = ThrowawayCA(tmp_path / "tls").server()
    config = {"listeners": "SASL_SSL://127.0.0.1:0", "sasl.enabled.mechanisms": "SCRAM-SHA-512",
              **server.broker_config()}
    with start_broker(config) as broker:
        broker.control.scram_user("spark", "spark-secret", mechanisms=["SCRAM-SHA-512"])
        broker.create_topic("secure-in", 2)
        security = {"kafka.bootstrap.servers": broker.bootstrap_servers, "kafka.security.protocol": "SASL_SSL",
                    "kafka.ssl.truststore.location": str(server.ca), "kafka.ssl.truststore.type": "PEM",
                    "kafka.sasl.mechanism": "SCRAM-SHA-512", "kafka.sasl.jaas.config": SCRAM}
        rows = [(f"k{i}", f"v{i}") for i in range(40)]
        _options(spark.createDataFrame(rows, "key string, value string").write.mode("append").format(fmt),
                 {**security, "topic": "secure-in"}).save()
        read = _options(spark.read.format(fmt), {**security, "subscribe": "secure-in"}).load()
        assert sorted((r.key.decode(), r.value.decode()) for r in read.collect()) == sorted(rows)
        query = (_options(spark.readStream.format(fmt), {**security, "subscribe": "secure-in",
                                                                 "startingOffsets": "earliest"}).load()
                 .select("key", "value").writeStream.format(fmt))
        query = _options(query, {**security, "topic": "secure-out",
                                 "checkpointLocation": str(tmp_path / "checkpoint")}).trigger(availableNow=True).start()
        assert query.awaitTermination(180) and query.exception() is None
        out = _options(spark.read.format(fmt), {**security, "subscribe": "secure-out"}).load()
        assert out.count() == 40
        assert {r["principal"] for r in broker.control.requests(api_key="Fetch")} == {"User:spark"}
        # A wrong password fails the query on the driver, with Kafka's error.
        wrong = {**security, "kafka.sasl.jaas.config": SCRAM.replace("spark-secret", "guess")}
        with pytest.raises(Exception, match="SASL_AUTHENTICATION_FAILED|SaslAuthenticationException"):
            _options(spark.read.format(fmt), {**wrong, "subscribe": "secure-in"}).load().collect()


@pytest.mark.parametrize("fmt", ["kafka", "kafkamock"])
def test_mutual_tls(spark, tmp_path, fmt):
    ca = ThrowawayCA(tmp_path / "tls")
    server, client = ca.server(), ca.client("spark-job")
    config = {"listeners": "SSL://127.0.0.1:0", "ssl.client.auth": "required", **server.broker_config()}
    with start_broker(config) as broker:
        broker.create_topic("mtls", 1)
        security = {"kafka.bootstrap.servers": broker.bootstrap_servers, "kafka.security.protocol": "SSL",
                    "kafka.ssl.truststore.location": str(server.ca), "kafka.ssl.truststore.type": "PEM",
                    "kafka.ssl.keystore.location": str(client.keystore), "kafka.ssl.keystore.type": "PEM"}
        _options(spark.createDataFrame([("a",), ("b",)], "value string").write.mode("append").format(fmt),
                 {**security, "topic": "mtls"}).save()
        read = _options(spark.read.format(fmt), {**security, "subscribe": "mtls"}).load()
        assert sorted(r.value for r in read.collect()) == [b"a", b"b"]
        assert {r["principal"] for r in broker.control.requests(api_key="Produce")} == {
            "User:CN=spark-job,OU=clients,O=kafkamock"}
        if fmt == "kafka":
            return              # kafka.transactional.id is kafkamock's connector's (Spark's has no exactly-once sink)
        # exactly-once: the transactional producer and the admin client that looks for the task's marker both
        # connect with the query's security settings
        _options(spark.createDataFrame([("c",), ("d",)], "value string").coalesce(1).write.mode("append")
                 .format("kafkamock"), {**security, "topic": "mtls", "kafka.transactional.id": "mtls-eos"}).save()
        committed = _options(spark.read.format("kafkamock"), {**security, "subscribe": "mtls",
                                                             "kafka.isolation.level": "read_committed"}).load()
        assert sorted(r.value for r in committed.collect()) == [b"a", b"b", b"c", b"d"]
        assert {r["principal"] for r in broker.control.requests(api_key="OffsetFetch")} == {
            "User:CN=spark-job,OU=clients,O=kafkamock"}
