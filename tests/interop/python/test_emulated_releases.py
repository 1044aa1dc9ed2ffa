"""Real clients against a broker presenting itself as an older Apache Kafka release (``kafkamock serve
--kafka-version`` / ``start_broker(kafka_version=...)``): they recognise the release from its ApiVersions, settle on
its versions, and work."""

from __future__ import annotations

import socket

import pytest
from confluent_kafka import Consumer, Producer
from kafka import KafkaAdminClient

from kafkamock.codec import decode_response, encode_request
from kafkamock.testing import start_broker

RELEASES = ["2.8", "3.9", "4.0", "4.1", "4.2", "4.3"]


@pytest.mark.parametrize("release", RELEASES)
def test_kafka_python_recognises_the_release_from_its_api_versions(release):
    """kafka-python infers a broker's version from the ranges it advertises (its BrokerVersionData); it first sends
    ApiVersions at its newest version, above what 2.8 and 3.9 serve, and gets the v0 answer to fall back from."""
    with start_broker(kafka_version=release) as broker:
        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
        try:
            assert str(admin.get_broker_version_data(1)) == f"<BrokerVersionData {release}>"
        finally:
            admin.close()


@pytest.mark.parametrize("release", ["2.8", "3.9"])
def test_librdkafka_produces_and_consumes_against_a_pre_4_0_release(release):
    with start_broker(kafka_version=release) as broker:
        broker.create_topic("old", partitions=1)
        producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "compression.type": "lz4"})
        for i in range(50):
            producer.produce("old", value=b"v%d" % i)
        assert producer.flush(10) == 0
        consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "g",
                             "auto.offset.reset": "earliest"})
        consumer.subscribe(["old"])
        seen = []
        try:
            while len(seen) < 50:
                msg = consumer.poll(10)
                assert msg is not None and msg.error() is None, msg and msg.error()
                seen.append(msg.value())
        finally:
            consumer.close()
        assert seen == [b"v%d" % i for i in range(50)]


def test_api_versions_above_the_release_gets_the_v0_answer_with_its_ranges():
    """Kafka 2.8 served ApiVersions up to v3: a v4 request is answered as Kafka answers a version it does not know,
    UNSUPPORTED_VERSION in a v0 body that lists the ranges (KIP-511), on a connection that stays open."""
    with start_broker(kafka_version="2.8") as broker:
        host, port = broker.bootstrap_servers.split(":")
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            for correlation_id, version in ((1, 4), (2, 3)):
                sock.sendall(encode_request("ApiVersions", version, correlation_id, "t",
                                            {"client_software_name": "t", "client_software_version": "1"}))
                size = int.from_bytes(sock.recv(4, socket.MSG_WAITALL), "big")
                frame = size.to_bytes(4, "big") + sock.recv(size, socket.MSG_WAITALL)
                header, body = decode_response("ApiVersions", 0 if version == 4 else version, frame)
                ranges = {k.api_key: (k.min_version, k.max_version) for k in body.api_keys}
                assert header.correlation_id == correlation_id
                assert body.error_code == (35 if version == 4 else 0)      # UNSUPPORTED_VERSION, then none
                assert ranges[18] == (0, 3) and ranges[0] == (0, 9)
