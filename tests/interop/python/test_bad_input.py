"""Bad input against a live broker: random bytes, truncated and oversize frames, corrupt record batches, unknown
APIs and versions. After each, the broker must keep serving its other connections (a confluent-kafka producer
that stays connected throughout, then a fresh consumer) and nothing already written may be lost.
"""

from __future__ import annotations

import logging
import random
import socket
import struct
import time

import crc32c
import pytest
from client_support import API_VERSIONS, RawClient, log_end_offset

from kafkamock import codec, records
from kafkamock.broker.config import BROKER_CONFIGS

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition  # noqa: E402

MAX_REQUEST = BROKER_CONFIGS["socket.request.max.bytes"].default     # 100 MiB, Kafka's default
BASE_TS = 1_700_000_000_000
CRC_OFFSET, CRC_START, RECORDS_START = 17, 21, 61                     # RecordBatch v2 layout


class Live:
    """A confluent-kafka producer connected for the whole test, and what it wrote (the data that must survive)."""

    def __init__(self, broker):
        self.cluster = broker
        broker.create_topic("steady", 1)
        self.producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "enable.idempotence": True,
                                  "acks": "all", "linger.ms": 0, "message.timeout.ms": 15000})
        self.sent: list[tuple[bytes, bytes]] = []

    def produce(self, n: int = 2) -> None:
        """Produce through the long-lived connection; every message must be acknowledged at the next offset."""
        reports: list = []
        batch = [(b"key-%d" % len(self.sent + [None] * i), b"value-%d" % (len(self.sent) + i)) for i in range(n)]
        for key, value in batch:
            self.producer.produce("steady", key=key, value=value, timestamp=BASE_TS,
                                  on_delivery=lambda err, msg: reports.append((err, msg)))
        assert self.producer.flush(15) == 0
        assert [err for err, _ in reports] == [None] * n
        assert sorted(msg.offset() for _, msg in reports) == list(range(len(self.sent), len(self.sent) + n))
        self.sent.extend(batch)

    def verify(self) -> None:
        """A fresh consumer on a new connection reads back exactly what was written, in order."""
        assert log_end_offset(self.cluster, "steady") == len(self.sent)
        c = Consumer({"bootstrap.servers": self.cluster.bootstrap_servers, "group.id": "verify",
                      "enable.auto.commit": False, "auto.offset.reset": "error", "fetch.wait.max.ms": 100})
        c.assign([TopicPartition("steady", 0, OFFSET_BEGINNING)])
        got: list = []
        deadline = time.monotonic() + 15
        while len(got) < len(self.sent):
            assert time.monotonic() < deadline, f"read {len(got)} of {len(self.sent)}"
            msg = c.poll(0.2)
            if msg is not None:
                assert not msg.error(), msg.error()
                got.append((msg.offset(), msg.key(), msg.value()))
        c.close()
        assert got == [(i, k, v) for i, (k, v) in enumerate(self.sent)]


@pytest.fixture
def live(kafka_broker):
    live = Live(kafka_broker)
    live.produce()
    yield live
    live.producer.flush(5)


def send_and_half_close(bootstrap: str, data: bytes) -> bytes:
    """Send ``data``, close our sending side, and return everything the broker sent before it closed."""
    with RawClient(bootstrap) as raw:
        raw.send_frame(data)
        raw.sock.shutdown(socket.SHUT_WR)
        received = bytearray()
        deadline = time.monotonic() + 10
        while True:
            assert time.monotonic() < deadline, "the broker kept the connection open"
            try:
                chunk = raw.sock.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            received += chunk
        return bytes(received)


def frame(api_key: int, version: int, correlation_id: int, rest: bytes = b"", client_id: bytes = b"bad",
          flexible_header: bool = False) -> bytes:
    """A request frame built by hand (for API keys and versions the codec refuses to write)."""
    header = struct.pack(">hhih", api_key, version, correlation_id, len(client_id)) + client_id
    if flexible_header:
        header += b"\x00"                                  # header v2: empty tagged fields
    payload = header + rest
    return struct.pack(">i", len(payload)) + payload


def api_versions_frame(correlation_id: int = 1, version: int = 3) -> bytes:
    return codec.encode_request("ApiVersions", version, correlation_id, "bad",
                                {"client_software_name": "bad", "client_software_version": "1"})


def produce_body(topic: str, data: bytes | None) -> dict:
    return {"transactional_id": None, "acks": -1, "timeout_ms": 5000,
            "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": data}]}]}


def recrc(batch: bytearray) -> bytearray:
    struct.pack_into(">I", batch, CRC_OFFSET, crc32c.crc32c(bytes(batch[CRC_START:])))
    return batch


# -- framing -----------------------------------------------------------------------------------------------------

def test_random_bytes(live):
    rng = random.Random(20240611)
    bootstrap = live.cluster.bootstrap_servers
    payloads = [bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 300))) for _ in range(25)]
    # Plausible size prefixes followed by random bodies reach the request decoder instead of the size check.
    for _ in range(25):
        body = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 200)))
        payloads.append(struct.pack(">i", len(body)) + body)
    # Random bodies behind a real API key and version (Produce v9, Fetch v12, Metadata v12, ApiVersions v3).
    for key, version in [(0, 9), (1, 12), (3, 12), (18, 3)] * 5:
        body = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 120)))
        payloads.append(frame(key, version, 7, body, flexible_header=True))
    answered = 0
    for i, data in enumerate(payloads):
        answered += bool(send_and_half_close(bootstrap, data))
        if i % 20 == 0:
            live.produce(1)
    # Nearly every payload is refused outright; a random body can still happen to be a valid request
    # (ApiVersions v3 ignores trailing bytes, as Kafka does), which is answered normally.
    assert answered <= 5
    live.produce()
    live.verify()


def test_truncated_frames(live):
    bootstrap = live.cluster.bootstrap_servers
    whole = api_versions_frame()
    batch = records.encode_batch([{"key": b"k", "value": b"v" * 500, "timestamp": BASE_TS}])
    produce = codec.encode_request("Produce", 9, 2, "bad", produce_body("steady", batch))
    for data in (whole, produce):
        for cut in sorted({1, 3, 4, 5, 8, 12, len(data) // 2, len(data) - 1}):
            assert send_and_half_close(bootstrap, data[:cut]) == b"", cut       # EOF mid-frame: no answer
    # A size prefix that stops short of the body: the frame decodes as a truncated request and is refused.
    for short in (1, 5, 40):
        cut = bytearray(produce[:-short])
        struct.pack_into(">i", cut, 0, len(cut) - 4)
        assert send_and_half_close(bootstrap, bytes(cut)) == b""
    assert send_and_half_close(bootstrap, struct.pack(">i", 0)) == b""        # an empty frame
    # The whole frame, for contrast, is answered.
    assert send_and_half_close(bootstrap, whole) != b""
    live.produce()
    live.verify()
    assert log_end_offset(live.cluster, "steady") == len(live.sent)           # no truncated Produce landed


def test_oversize_and_negative_size_prefixes(live):
    """A size prefix over socket.request.max.bytes (or negative) closes the connection at once, before the body
    is read, as Kafka's NetworkReceive does (InvalidReceiveException)."""
    for size in (MAX_REQUEST + 1, 2**31 - 1, -1, -(2**31)):
        with RawClient(live.cluster.bootstrap_servers) as raw:
            raw.send_frame(struct.pack(">i", size) + b"\x00" * 16)
            assert raw.closed_by_peer(), size
        live.produce(1)
    live.verify()


def test_frame_at_the_request_size_limit_is_read():
    """The limit is inclusive (Kafka refuses only size > socket.request.max.bytes): a frame of exactly the limit is
    read whole and answered (an ApiVersions v3 padded with zeros, which Kafka ignores after the body); one byte
    more closes the connection."""
    from kafkamock.testing import start_broker

    limit = 4096
    with start_broker({"socket.request.max.bytes": limit}) as broker:
        head = frame(API_VERSIONS, 3, 1, b"\x04bad\x021\x00", flexible_header=True)
        padded = bytearray(head + b"\x00" * (limit + 4 - len(head)))
        struct.pack_into(">i", padded, 0, limit)
        with RawClient(broker.bootstrap_servers) as raw:
            raw.send_frame(bytes(padded))
            header, response = codec.decode_response("ApiVersions", 3, raw.recv_frame())
            assert header.correlation_id == 1 and response.error_code == 0
        with RawClient(broker.bootstrap_servers) as raw:
            raw.send_frame(struct.pack(">i", limit + 1) + b"\x00" * 8)
            assert raw.closed_by_peer()


# -- corrupt records -----------------------------------------------------------------------------------------------

def test_corrupt_record_batch_is_refused_with_corrupt_message(live):
    good = records.encode_batch([{"key": b"k%d" % i, "value": b"payload" * 20, "timestamp": BASE_TS}
                                 for i in range(5)])
    for where, position in [("records", RECORDS_START + 10), ("crc-field", CRC_OFFSET + 1),
                            ("attributes", CRC_START + 1)]:
        bad = bytearray(good)
        bad[position] ^= 0x5A
        for version in (3, 9, 11):
            with RawClient(live.cluster.bootstrap_servers) as raw:
                _, response = raw.request("Produce", version, produce_body("steady", bytes(bad)))
                result = response.responses[0].partition_responses[0]
                # CORRUPT_MESSAGE; flipping the attributes also sets the transactional bit, which Kafka's
                # KafkaApis checks first: a transactional batch without a transactional id
                expected = 53 if where == "attributes" else 2  # TRANSACTIONAL_ID_AUTHORIZATION_FAILED
                assert (result.error_code, result.base_offset) == (expected, -1), (where, version)
                assert result.error_message is None                       # as Kafka: the reason is logged only
                # The connection is still usable: the intact batch goes in at the next offset.
                _, response = raw.request("Produce", version, produce_body("steady", good))
                result = response.responses[0].partition_responses[0]
                assert (result.error_code, result.base_offset) == (0, len(live.sent)), (where, version)
            live.sent.extend((b"k%d" % i, b"payload" * 20) for i in range(5))
            live.produce(1)
    live.verify()


def test_batch_length_lies(live):
    good = records.encode_batch([{"key": b"k", "value": b"v" * 100, "timestamp": BASE_TS}])
    longer = bytearray(good)
    struct.pack_into(">i", longer, 8, len(good) - 12 + 50)      # claims 50 more bytes than follow
    shorter = bytearray(good)
    struct.pack_into(">i", shorter, 8, len(good) - 12 - 30)     # claims fewer: the CRC no longer matches
    two = good + good                                           # two batches in one partition's records
    with RawClient(live.cluster.bootstrap_servers) as raw:
        codes = [raw.request("Produce", 9, produce_body("steady", bytes(data)))[1]
                 .responses[0].partition_responses[0].error_code for data in (longer, shorter, two, b"")]
    # Kafka 4.3.1: a batch claiming more bytes than follow is no batch at all, INVALID_RECORD as more than one batch
    # (or none) is; a batch claiming fewer fails its CRC, CORRUPT_MESSAGE.
    assert codes == [87, 2, 87, 87]
    live.produce()
    live.verify()


def test_timestamps_out_of_range_are_refused(live):
    """Kafka 3.6+ (KIP-937) refuses CreateTime records more than message.timestamp.after.max.ms (default one
    hour) in the future with INVALID_TIMESTAMP; librdkafka surfaces it as a failed delivery."""
    far_future = int(time.time() * 1000) + 2 * 3600 * 1000
    reports: list = []
    live.producer.produce("steady", value=b"from the future", timestamp=far_future,
                          on_delivery=lambda err, msg: reports.append(err))
    live.producer.flush(15)
    assert [e.code() for e in reports] == [confluent_kafka.KafkaError.INVALID_TIMESTAMP]
    # The idempotent producer continues after the refused batch (its sequence was not consumed).
    live.produce()
    live.verify()


def test_malformed_records_with_a_valid_crc_are_refused(live):
    """Stored, such a batch would make librdkafka re-fetch that offset forever without error or progress; Kafka's
    LogValidator answers INVALID_RECORD (87), and so does kafkamock (its record-framing walk)."""
    bad = bytearray(records.encode_batch([{"key": b"k", "value": b"v" * 50, "timestamp": BASE_TS}]))
    bad[RECORDS_START:RECORDS_START + 6] = b"\xff" * 6      # the first record's length varint and attributes
    recrc(bad)
    with RawClient(live.cluster.bootstrap_servers) as raw:
        _, response = raw.request("Produce", 9, produce_body("steady", bytes(bad)))
        assert response.responses[0].partition_responses[0].error_code == 87
        short = bytearray(records.encode_batch([{"value": b"a", "timestamp": BASE_TS}] * 3))
        short[57:61] = (4).to_bytes(4, "big")      # the header counts 4 records; 3 are there
        recrc(short)
        _, response = raw.request("Produce", 9, produce_body("steady", bytes(short)))
        assert response.responses[0].partition_responses[0].error_code == 87


# -- unknown APIs and versions --------------------------------------------------------------------------------------

def test_unknown_or_unsupported_api_closes_the_connection(live, wire_log, caplog):
    """An API key the broker does not know or implement (999, -1, JoinGroup 11 while groups are not implemented),
    or a version outside its range (Produce v2, Fetch v3, Produce v99): Kafka closes the connection without an
    answer. Produce v2 decodes (the codec keeps the removed versions) and is refused by the broker's range."""
    caplog.set_level(logging.INFO, logger="kafkamock")
    for api_key, version in [(999, 0), (-1, 0), (32767, 3), (11, 5), (0, 2), (1, 3), (0, 99)]:
        with RawClient(live.cluster.bootstrap_servers) as raw:
            raw.send_frame(frame(api_key, version, 5, b"\x00" * 12))
            assert raw.closed_by_peer(), (api_key, version)
        live.produce(1)
    assert {(r.api_key, r.version) for r in wire_log.refused()} >= {(999, 0), (0, 99)}
    assert "Produce v2 is not supported by this broker (valid versions: 3-13)" in caplog.text
    live.verify()


def test_unsupported_api_versions_version_gets_a_v0_answer(live):
    """ApiVersions at a version the broker does not know is answered (not closed): a v0 response with
    UNSUPPORTED_VERSION (35) that lists the supported versions, so the client can retry lower (KIP-511)."""
    body = b"\x04bad\x021\x00"                         # compact strings "bad" and "1", empty tagged fields
    for version in (5, 99, 32767):
        with RawClient(live.cluster.bootstrap_servers) as raw:
            raw.send_frame(frame(API_VERSIONS, version, 42, body, flexible_header=True))
            header, response = codec.decode_response("ApiVersions", 0, raw.recv_frame())
            assert header.correlation_id == 42
            assert response.error_code == 35
            listed = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
            assert listed[API_VERSIONS] == (0, 4)
            assert listed[0][0] == 0 and listed[1][0] == 4          # Produce listed from v0 (KAFKA-18659), Fetch v4+
            # The same connection goes on: retry at a supported version.
            _, ok = raw.request("ApiVersions", 3, {"client_software_name": "bad", "client_software_version": "1"})
            assert ok.error_code == 0 and {k.api_key for k in ok.api_keys} == set(listed)
        live.produce(1)
    live.verify()


def test_pipelined_requests_then_garbage(live):
    """Valid requests pipelined on one connection are all answered in order before the garbage that follows
    closes it."""
    frames = b"".join(api_versions_frame(correlation_id=i) for i in range(1, 6))
    received = send_and_half_close(live.cluster.bootstrap_servers, frames + b"\x00\x00\x00\x10garbage-garbage!")
    ids = []
    while received:
        (size,) = struct.unpack_from(">i", received)
        header, _ = codec.decode_response("ApiVersions", 3, received[:4 + size])
        ids.append(header.correlation_id)
        received = received[4 + size:]
    assert ids == [1, 2, 3, 4, 5]
    live.produce()
    live.verify()


@pytest.mark.kafkamock_expect_internal_errors
def test_a_broker_bug_costs_one_connection_only(live, monkeypatch):
    """A handler that raises, or returns a body the codec cannot encode at the request's version (as ListOffsets
    v2 once did with a v4+ LeaderEpoch, which stopped the whole broker), closes that one connection only. Both
    are internal errors the broker records (provoked here on purpose)."""
    import dataclasses

    from kafkamock.broker import handlers
    from kafkamock.broker.handlers import list_offsets

    request = {"replica_id": -1, "topics": [{"name": "steady", "partitions": [{"partition_index": 0,
                                                                            "timestamp": -1}]}]}
    with RawClient(live.cluster.bootstrap_servers) as raw:
        _, response = raw.request("ListOffsets", 2, request)
        assert response.topics[0].partitions[0].offset == len(live.sent)

    def unencodable(broker, req):
        return {"throttle_time_ms": 0, "topics": [{"name": "steady", "partitions": [
            {"partition_index": 0, "error_code": 0, "timestamp": -1, "offset": 0, "leader_epoch": 7}]}]}

    def raising(broker, req):
        raise RuntimeError("simulated handler bug")

    for broken in (unencodable, raising):
        monkeypatch.setitem(handlers.BY_KEY, list_offsets.API_KEY,
                            dataclasses.replace(list_offsets.HANDLER, handle=broken))
        with RawClient(live.cluster.bootstrap_servers) as raw:
            raw.send_frame(codec.encode_request("ListOffsets", 2, 1, "bad", request))
            assert raw.closed_by_peer()
        live.produce(1)
    monkeypatch.undo()                                     # the verifying consumer needs ListOffsets
    live.verify()
    assert [type(e.error).__name__ for e in live.cluster.internal_errors] == ["EncodeError", "RuntimeError"]
    assert all(e.where.startswith("ListOffsets v2 on connection ") for e in live.cluster.internal_errors)
