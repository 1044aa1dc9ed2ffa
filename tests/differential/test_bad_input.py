"""Bad input side by side: what Kafka 4.3.1 and kafkamock do with frames and values a client should not send (the
bad input of tests/interop/python/test_bad_input.py and the fuzz regressions): an answer with the same error code and
message, or the connection closed."""

from __future__ import annotations

import struct
import uuid

import crc32c
import pytest

from kafkamock import codec
from kafkamock.records import encode_batch

TS = 1_700_000_000_000


def _header(api_key: int, version: int, correlation_id: int = 7, client_id: bytes | None = b"bad") -> bytes:
    """A request header v1 (int16 key, int16 version, int32 correlation id, nullable string client id)."""
    cid = struct.pack(">h", -1) if client_id is None else struct.pack(">h", len(client_id)) + client_id
    return struct.pack(">hhi", api_key, version, correlation_id) + cid


def _frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def _outcome(conn) -> str:
    """``closed`` or ``answered`` (the broker wrote something back) or ``open`` (neither, within 10 s)."""
    return conn.closed(timeout=10)


@pytest.mark.parametrize("case", [
    "random bytes", "unknown api key", "api key 67 (no longer served)", "produce v2 (removed in 4.0)",
    "fetch v3 (removed in 4.0)", "metadata v14 (too new)", "negative size", "size beyond the request limit",
    "truncated header", "header then truncated body", "trailing bytes after the body", "null client id",
    "empty frame",
])
def test_bad_frames(differ, request, case):
    def scenario(run):
        conn = run.new_conn()
        frames = {
            "random bytes": bytes(range(7, 60)),
            "unknown api key": _frame(_header(999, 0)),
            "api key 67 (no longer served)": _frame(_header(67, 0)),
            "produce v2 (removed in 4.0)": _frame(_header(0, 2) + b"\x00" * 10),
            "fetch v3 (removed in 4.0)": _frame(_header(1, 3) + b"\x00" * 10),
            "metadata v14 (too new)": _frame(_header(3, 14) + b"\x00" * 10),
            "negative size": struct.pack(">i", -5) + b"\x00" * 8,
            "size beyond the request limit": struct.pack(">i", 200 * 1024 * 1024) + b"\x00" * 8,
            "truncated header": _frame(b"\x00\x03\x00"),
            "header then truncated body": _frame(_header(3, 12) + b"\x00\x00\x00\x05"),
            "trailing bytes after the body": codec.encode_request("ApiVersions", 3, 7, "bad", {
                "client_software_name": "x", "client_software_version": "1"})[4:],
            "null client id": codec.encode_request("ApiVersions", 2, 7, None, {})[4:],
            "empty frame": b"",
        }
        data = frames[case]
        if case == "trailing bytes after the body":
            data = _frame(data + b"\x00\x00\x00")
        elif case in ("null client id",):
            data = _frame(data)
        elif case == "empty frame":
            data = _frame(b"")
        conn.send_frame(data)
        if case == "null client id":
            run.see("answer", conn.receive("ApiVersions", 2).error_code)
        else:
            run.see("outcome", _outcome(conn))

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4, 5, 127])
def test_api_versions_of_an_unknown_version_is_answered_at_v0(differ, request, version):
    """ApiVersions newer than the broker knows: UNSUPPORTED_VERSION at v0 with the ApiVersions range, so the client
    can retry with a version both know."""
    def scenario(run):
        conn = run.new_conn()
        conn.send_frame(_frame(_header(18, version) + b"\x00" * (0 if version < 3 else 4)))
        try:
            r = conn.receive("ApiVersions", 0)
        except Exception as exc:                # a newer ApiVersions frames its answer as that version
            run.see("answer", f"not a v0 answer: {type(exc).__name__}")
            return
        run.see("answer", [r.error_code, [(k.api_key, k.min_version, k.max_version) for k in r.api_keys
                                          if k.api_key == 18]])

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("name,value", [("", "1"), ("x", ""), ("bad name!", "1"), ("x", "1.0-"), ("-x", "1"),
                                        ("kafka-python", "2.0.2"), ("a" * 300, "1")])
def test_api_versions_client_software(differ, request, name, value):
    """v3+ names the client software; Kafka refuses names and versions outside its pattern with INVALID_REQUEST."""
    def scenario(run):
        r = run.call("ApiVersions", 3, {"client_software_name": name, "client_software_version": value},
                     conn=run.new_conn(), see=False)
        run.see("error", r.error_code)
        run.see("lists the APIs", bool(r.api_keys))

    differ.check(request.node.name, scenario)


def _batch(corrupt: str | None) -> bytes:
    data = bytearray(encode_batch([{"key": b"k%d" % i, "value": b"payload" * 20, "timestamp": TS}
                                   for i in range(5)]))
    if corrupt == "records":
        data[70] ^= 0x5A
    elif corrupt == "crc field":
        data[18] ^= 0x5A
    elif corrupt == "batch length longer":
        data[8:12] = struct.pack(">i", len(data) - 12 + 40)
    elif corrupt == "batch length shorter":
        data[8:12] = struct.pack(">i", len(data) - 12 - 20)
    elif corrupt == "magic 3":
        data[16] = 3
    elif corrupt == "record framing, valid crc":
        data[61] = 0x7F                    # the first record's length varint, then the CRC made right again
        data[17:21] = crc32c.crc32c(bytes(data[21:])).to_bytes(4, "big")
    elif corrupt == "unknown compression, valid crc":
        data[22] = (data[22] & ~0x07) | 0x07
        data[17:21] = crc32c.crc32c(bytes(data[21:])).to_bytes(4, "big")
    return bytes(data)


@pytest.mark.parametrize("corrupt", ["records", "crc field", "batch length longer", "batch length shorter",
                                     "magic 3", "record framing, valid crc", "unknown compression, valid crc"])
@pytest.mark.parametrize("version", [3, 9, 11])
def test_corrupt_batches(differ, request, corrupt, version):
    def scenario(run):
        topic = run.name()
        run.create_topic(topic)
        conn = run.new_conn()
        conn.send("Produce", version, {"transactional_id": None, "acks": -1, "timeout_ms": 5000, "topic_data": [
            {"name": topic, "partition_data": [{"index": 0, "records": _batch(corrupt)}]}]})
        try:
            r = conn.receive("Produce", version)
            run.see("answer", r.responses[0].partition_responses[0])
        except (ConnectionError, OSError) as exc:
            run.see("answer", f"closed: {type(exc).__name__}")
        r = run.call("Produce", version, {"transactional_id": None, "acks": -1, "timeout_ms": 5000, "topic_data": [
            {"name": topic, "partition_data": [{"index": 0, "records": _batch(None)}]}]}, label="then a good batch")

    differ.check(request.node.name, scenario)


def test_metadata_v10_v11_with_topic_ids_or_null_names(differ, request):
    def scenario(run):
        topic = run.name()
        run.create_topic(topic)
        for version in (10, 11):
            run.call("Metadata", version, {"topics": [{"name": None, "topic_id": uuid.UUID(int=0)}],
                                           "allow_auto_topic_creation": False,
                                           "include_topic_authorized_operations": False}, label=f"v{version} null")
            run.call("Metadata", version, {"topics": [{"name": topic, "topic_id": uuid.uuid4()}],
                                           "allow_auto_topic_creation": False,
                                           "include_topic_authorized_operations": False}, label=f"v{version} id")

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("case", ["sasl handshake on plaintext", "sasl authenticate first", "find coordinator bad type",
                                  "offset commit unknown group shape", "init producer id huge timeout"])
def test_requests_out_of_place(differ, request, case):
    def scenario(run):
        conn = run.new_conn()
        if case == "sasl handshake on plaintext":
            run.call("SaslHandshake", 1, {"mechanism": "PLAIN"}, conn=conn)
        elif case == "sasl authenticate first":
            conn.send("SaslAuthenticate", 2, {"auth_bytes": b"\x00u\x00p"})
            run.see("outcome", _outcome(conn))
        elif case == "find coordinator bad type":
            run.call("FindCoordinator", 4, {"key_type": 9, "coordinator_keys": ["g"]}, conn=conn)
        elif case == "offset commit unknown group shape":
            run.call("OffsetCommit", 9, {"group_id": run.name("g"), "generation_id_or_member_epoch": 5,
                                         "member_id": "nobody", "group_instance_id": None,
                                         "topics": [{"name": run.name("t"), "partitions": [
                                             {"partition_index": 0, "committed_offset": 1,
                                              "committed_leader_epoch": -1, "committed_metadata": None}]}]},
                     conn=conn)
        elif case == "init producer id huge timeout":
            run.call("InitProducerId", 5, {"transactional_id": run.name("tx"), "transaction_timeout_ms": 2 ** 31 - 1,
                                           "producer_id": -1, "producer_epoch": -1}, conn=conn)

    differ.check(request.node.name, scenario)
