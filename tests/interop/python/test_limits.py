"""Resource limits against hostile clients, over real sockets: CreateTopics/CreatePartitions record limits
(2^31 - 1 partitions answered at once, nothing allocated), max.connections, max.connections.per.ip (+ overrides),
connections.max.idle.ms on a manual clock (an idle connection, a half-sent frame, a client that never reads, a TLS
handshake cut short), hostile bytes on a TLS listener, and a producer throttled by a producer_byte_rate quota (librdkafka reports the broker's throttle time)."""

from __future__ import annotations

import logging
import resource
import socket
import struct
import time

import pytest
from client_support import RawClient

from kafkamock.broker import ManualClock
from kafkamock.broker.errors import ErrorCode as E
from kafkamock.testing import start_broker

INT32_MAX = 2**31 - 1
DEADLINE_S = 10.0


def until(predicate, what: str, timeout: float = DEADLINE_S):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


def create_topics(raw, topics, version=7):
    _, body = raw.request("CreateTopics", version, {"topics": topics, "timeout_ms": 5000})
    return [(t.name, t.error_code, t.error_message) for t in body.topics]


def topic(name, partitions, rf=1, configs=()):
    return {"name": name, "num_partitions": partitions, "replication_factor": rf, "assignments": [],
            "configs": [{"name": k, "value": v} for k, v in configs]}


def test_create_topics_with_2_to_the_31_partitions_is_a_fast_policy_violation(kafka_broker):
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    with RawClient(kafka_broker.bootstrap_servers) as raw:
        assert create_topics(raw, [topic("huge", INT32_MAX)]) == [
            ("huge", E.POLICY_VIOLATION, "Excessively large number of partitions per request.")]
        # the bound is on the whole request, and nothing of it is created
        assert create_topics(raw, [topic("a", 6000), topic("b", 6000)]) == [
            ("a", E.POLICY_VIOLATION, "Excessively large number of partitions per request."),
            ("b", E.POLICY_VIOLATION, "Excessively large number of partitions per request.")]
        # 10,000 partitions + 1 topic record + 1 config record pass the partition bound but not the record bound
        assert create_topics(raw, [topic("c", 9999, configs=[("retention.ms", "1000")])]) == [
            ("c", E.POLICY_VIOLATION, "Unable to perform excessively large batch operation.")]
        assert [e for _, e, _ in create_topics(raw, [topic("ok", 3), topic("bad", -7), topic("rf", 1, rf=-3)])] == [
            E.NONE, E.INVALID_PARTITIONS, E.INVALID_REPLICATION_FACTOR]
        # CreatePartitions to 2^31 - 1 and then past the per-request budget across topics
        _, body = raw.request("CreatePartitions", 3, {"topics": [
            {"name": "ok", "count": INT32_MAX, "assignments": None}], "timeout_ms": 5000, "validate_only": False})
        # (Kafka 4.3.1's controller: its bounded record list overflows, an UNKNOWN_SERVER_ERROR without a message)
        assert [(r.error_code, r.error_message) for r in body.results] == [(E.UNKNOWN_SERVER_ERROR, None)]
    assert time.monotonic() - started < 5
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before < 200_000   # KiB: no blow-up
    assert {t["name"]: len(t["partitions"]) for t in kafka_broker.control.topics()} == {"ok": 3}


def api_versions_works(bootstrap: str) -> bool:
    """A fresh connection's ApiVersions is answered (False if the broker closed it: still at a limit)."""
    try:
        with RawClient(bootstrap) as raw:
            _, body = raw.request("ApiVersions", 3, {"client_software_name": "t", "client_software_version": "1"})
            return body.error_code == 0
    except ConnectionError:
        return False


@pytest.mark.kafkamock(config={"max.connections.per.ip": "2"})
def test_max_connections_per_ip_closes_the_extra_connection_at_accept(kafka_broker, caplog):
    caplog.set_level(logging.INFO, logger="kafkamock.server")
    first, second = RawClient(kafka_broker.bootstrap_servers), RawClient(kafka_broker.bootstrap_servers)
    try:
        for raw in (first, second):
            raw.request("ApiVersions", 3, {"client_software_name": "t", "client_software_version": "1"})
        with RawClient(kafka_broker.bootstrap_servers) as third:
            assert third.closed_by_peer()
        assert "Rejected connection from 127.0.0.1, address already has the configured maximum of 2 connections." \
            in caplog.text
    finally:
        first.close()
        second.close()
    until(lambda: api_versions_works(kafka_broker.bootstrap_servers), "a connection once the others closed")


@pytest.mark.kafkamock(config={"max.connections.per.ip.overrides": "127.0.0.1:1"})
def test_max_connections_per_ip_overrides(kafka_broker):
    with RawClient(kafka_broker.bootstrap_servers) as first:
        first.request("ApiVersions", 3, {"client_software_name": "t", "client_software_version": "1"})
        with RawClient(kafka_broker.bootstrap_servers) as second:
            assert second.closed_by_peer()


@pytest.mark.kafkamock(config={"max.connections": "1"})
def test_max_connections_holds_a_new_connection_until_a_slot_frees(kafka_broker):
    first = RawClient(kafka_broker.bootstrap_servers)
    first.request("ApiVersions", 3, {"client_software_name": "t", "client_software_version": "1"})
    from kafkamock import codec

    with RawClient(kafka_broker.bootstrap_servers) as second:
        second.send_frame(codec.encode_request("ApiVersions", 3, 1, "second",
                                               {"client_software_name": "t", "client_software_version": "1"}))
        second.sock.settimeout(0.3)
        with pytest.raises(TimeoutError):
            second.sock.recv(1)      # not served while the node is at max.connections
        first.close()
        second.sock.settimeout(DEADLINE_S)
        header, body = codec.decode_response("ApiVersions", 3, second.recv_frame())
        assert header.correlation_id == 1 and body.error_code == 0


def open_connections(handle) -> int:
    return handle.call(lambda: len(handle.cluster.connections.open))


def test_idle_half_sent_and_never_reading_connections_close_on_the_injected_clock(caplog):
    caplog.set_level(logging.INFO, logger="kafkamock.server")
    clock = ManualClock()
    with start_broker({"connections.max.idle.ms": "60000", "log.retention.ms": "-1"}, clock=clock) as broker:
        broker.create_topic("big", 1)
        idle = RawClient(broker.bootstrap_servers)
        idle.request("ApiVersions", 3, {"client_software_name": "t", "client_software_version": "1"})
        half = RawClient(broker.bootstrap_servers)
        half.send_frame(struct.pack(">i", 1000) + b"\x00\x12")          # 6 of 1004 bytes, then nothing
        # a client that asks for a lot and never reads: the broker's send blocks on a full socket buffer
        reader = RawClient(broker.bootstrap_servers)
        reader.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        from kafkamock import codec, records

        value = b"v" * 900_000
        with RawClient(broker.bootstrap_servers) as producer:
            for _ in range(8):
                _, body = producer.request("Produce", 9, {"acks": -1, "timeout_ms": 1000, "topic_data": [
                    {"name": "big", "partition_data": [{"index": 0, "records": records.encode_batch(
                        [{"key": None, "value": value, "timestamp": clock.now_ms()}])}]}]})
                assert body.responses[0].partition_responses[0].error_code == 0
        fetch = {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 50_000_000, "session_epoch": -1,
                 "topics": [{"topic": "big", "partitions": [{"partition": 0, "fetch_offset": 0,
                                                             "partition_max_bytes": 50_000_000}]}]}
        for correlation in range(4):
            reader.send_frame(codec.encode_request("Fetch", 12, correlation, "never-reads", fetch))
        until(lambda: open_connections(broker) == 3, "the producer's connection to go")
        clock.advance(59_000)
        assert open_connections(broker) == 3
        clock.advance(1_001)
        until(lambda: open_connections(broker) == 0, "the idle connections to be closed")
        assert idle.closed_by_peer() and half.closed_by_peer()
        assert caplog.text.count("connections.max.idle.ms=60000") == 3
        for raw in (idle, half, reader):
            raw.close()
        assert api_versions_works(broker.bootstrap_servers)


def test_a_throttled_librdkafka_producer_reports_the_brokers_throttle_time(kafka_broker):
    import confluent_kafka

    with RawClient(kafka_broker.bootstrap_servers) as raw:    # the Java Admin does this in tests/interop/java
        _, body = raw.request("AlterClientQuotas", 1, {"entries": [{
            "entity": [{"entity_type": "client-id", "entity_name": "slow-producer"}],
            "ops": [{"key": "producer_byte_rate", "value": 10_000.0, "remove": False}]}]})
        assert body.entries[0].error_code == 0
    kafka_broker.create_topic("throttled", 1)
    throttles: list = []
    producer = confluent_kafka.Producer({"bootstrap.servers": kafka_broker.bootstrap_servers,
                                         "client.id": "slow-producer", "linger.ms": 0,
                                         "throttle_cb": lambda event: throttles.append(event.throttle_time)})
    for _ in range(20):
        producer.produce("throttled", b"x" * 20_000)
        producer.poll(0)
    assert producer.flush(30) == 0
    until(lambda: producer.poll(0.05) is not None or throttles, "a throttle report")
    assert max(throttles) > 0
    # every produced record is stored all the same
    assert kafka_broker.control.topic("throttled")["partitions"][0]["log_end_offset"] == 20


def test_hostile_bytes_on_a_tls_listener_close_the_connection_and_a_stalled_handshake_idles_out(tmp_path, caplog):
    """An SSL listener given a plaintext Kafka request, random bytes, a ClientHello cut short then silence, or a
    client that hangs up mid-handshake: each connection is closed with a log line (the stalled one when
    connections.max.idle.ms passes on the broker's clock, as Kafka's selector would), nothing is logged as an
    error, and a real TLS client is served throughout."""
    import random
    import ssl

    from kafkamock import codec
    from kafkamock.server.tls import ThrowawayCA

    caplog.set_level(logging.INFO, logger="kafkamock")
    server = ThrowawayCA(tmp_path / "tls").server()
    clock = ManualClock()
    config = {"listeners": "SSL://127.0.0.1:0", "connections.max.idle.ms": "60000", **server.broker_config()}
    with start_broker(config, clock=clock) as broker:
        host, port = broker.bootstrap_servers.split(",")[0].rsplit(":", 1)
        context = ssl.create_default_context(cafile=str(server.ca))

        def tls_api_versions() -> int:
            with socket.create_connection((host, int(port)), timeout=DEADLINE_S) as raw, \
                    context.wrap_socket(raw, server_hostname=host) as tls:
                tls.sendall(codec.encode_request("ApiVersions", 3, 1, "t", {"client_software_name": "t",
                                                                             "client_software_version": "1"}))
                head = tls.recv(4)
                size = struct.unpack(">i", head)[0]
                body = b""
                while len(body) < size:
                    body += tls.recv(size - len(body))
                return codec.decode_response("ApiVersions", 3, head + body)[1].error_code

        def wait_closed(sock: socket.socket) -> None:
            """Until the broker closes ``sock`` (TimeoutError, failing the test, if it never does)."""
            sock.settimeout(DEADLINE_S)
            try:
                while sock.recv(65536):          # a TLS alert may come first
                    pass
            except (ConnectionResetError, BrokenPipeError):
                pass

        assert tls_api_versions() == 0
        kafka_request = codec.encode_request("ApiVersions", 3, 1, "plain", {"client_software_name": "t",
                                                                             "client_software_version": "1"})
        garbage = random.Random(7).randbytes(4096)
        for hostile in (kafka_request, garbage, b"\x16\x03\x01\x01\x00" + garbage[:100]):  # 100 of a 256-byte record
            until(lambda: open_connections(broker) == 0, "the last TLS client's connection to go")
            with socket.create_connection((host, int(port)), timeout=DEADLINE_S) as sock:
                sock.sendall(hostile)
                if hostile[0] != 0x16:
                    wait_closed(sock)
                else:                                   # a ClientHello cut short: the broker waits for the rest
                    until(lambda: open_connections(broker) == 1, "the stalled handshake's connection")
                    clock.advance(59_000)
                    assert open_connections(broker) == 1
                    clock.advance(1_001)
                    wait_closed(sock)
            assert tls_api_versions() == 0
        with socket.create_connection((host, int(port)), timeout=DEADLINE_S) as sock:
            sock.sendall(b"\x16\x03\x01\x00\x10")   # a record header, then the client hangs up
        until(lambda: open_connections(broker) == 0, "the hung-up connection to go")
        assert tls_api_versions() == 0
    assert caplog.text.count("TLS handshake failed") >= 2
    assert "connections.max.idle.ms=60000" in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR and r.name.startswith("kafkamock")]
