"""The connection edge's own work between a frame and the core: reading the frame, decoding the request, encoding
the answer."""

from __future__ import annotations

import gc
import struct
import tracemalloc

import pytest
import trio
import trio.testing

from kafkamock.broker import Cluster, Request
from kafkamock.broker.features import SAFE_DOWNGRADE, FeatureUpdate
from kafkamock.client.connection import KafkaConnection
from kafkamock.codec import encode_request
from kafkamock.codec.framing import encode_response_parts
from kafkamock.records import encode_batch
from kafkamock.server import run_broker
from kafkamock.server.connection import encode_answer, read_request

API_VERSIONS = 18


def _api_versions(cluster: Cluster, version: int, correlation_id: int) -> tuple[bytes, bytes]:
    """(the edge's frame, the codec's own encoding of the same answer) for one ApiVersions request."""
    frame = bytearray(encode_request("ApiVersions", version, correlation_id, "c",
                                     {"client_software_name": "t", "client_software_version": "1"}))
    header, body = read_request(frame)
    request = Request(API_VERSIONS, version, correlation_id, header.client_id, body,
                      cluster.new_connection(1, "127.0.0.1:1"), cluster.first_node())
    answer = cluster.handle(request).body
    sent = b"".join(bytes(p) for p in encode_answer(API_VERSIONS, version, correlation_id, answer))
    return sent, b"".join(bytes(p) for p in encode_response_parts(API_VERSIONS, version, correlation_id, answer))


def test_an_api_versions_answer_keeps_its_encoding_until_what_it_lists_changes():
    cluster = Cluster()
    first, expected = _api_versions(cluster, 3, 7)
    assert first == expected
    again, _ = _api_versions(cluster, 3, 8)              # the kept encoding, under this request's correlation id
    assert again[8:] == first[8:] and struct.unpack_from(">i", again, 4) == (8,)
    for version in (0, 1, 2, 4):                         # every version its own encoding of the same answer
        sent, expected = _api_versions(cluster, version, 9)
        assert sent == expected
    cluster.features.update([FeatureUpdate("transaction.version", 1, SAFE_DOWNGRADE)], False, 1)
    changed, expected = _api_versions(cluster, 3, 8)
    assert changed == expected and changed != again      # a new epoch and level: a new answer, encoded anew


@pytest.mark.trio
async def test_a_large_frame_is_announced_before_its_buffer_is_made():
    """``Server.before_large_frame`` hears the size of each frame read into a buffer of its own (what
    ``kafkamock serve`` in memory warms the heap ahead of), and not of the small frames read from a chunk."""
    cluster = Cluster()
    cluster.metadata.create_topic("t", 1, 1)
    announced: list[int] = []
    async with run_broker(cluster) as server, trio.open_nursery() as nursery:
        server.before_large_frame = announced.append
        host, _, port = server.bootstrap_servers.rpartition(":")
        conn = await KafkaConnection.connect(nursery, host, int(port))
        batch = encode_batch([{"value": bytes(900_000)}])
        answer = await conn.request("Produce", {"transactional_id": None, "acks": 1, "timeout_ms": 5000, "topic_data": [
            {"name": "t", "partition_data": [{"index": 0, "records": batch}]}]}, version=9)
        assert answer.responses[0].partition_responses[0].error_code == 0
        assert len(announced) == 1 and len(batch) < announced[0] < len(batch) + 200
        await conn.request("Metadata", {"topics": None}, version=12)
        assert len(announced) == 1
        await conn.aclose()
        nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_an_open_idle_connection_holds_little_of_the_heap():
    """What the broker holds for each open connection that has been answered and waits for its next request: its
    task and the coroutine frames of the wait, its cancel scope, its reader and the core's count of it, with no
    timer of its own (``connections.max.idle.ms`` is one timer for all, broker/connections.py). Measured with
    tracemalloc on 300 connections: 6,610 bytes each with a timer and a closure a connection, 5,880 after."""
    cluster = Cluster()
    count = 300
    request = encode_request("ApiVersions", 3, 1, "c", {"client_software_name": "t", "client_software_version": "1"})
    async with run_broker(cluster) as server:
        host, _, port = server.bootstrap_servers.rpartition(":")
        sockets = [trio.socket.socket() for _ in range(count)]       # the client's objects, made before measuring
        warm = trio.socket.socket()
        await warm.connect((host, int(port)))
        await warm.send(request)
        await warm.recv(65536)
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for sock in sockets:
                await sock.connect((host, int(port)))
                await sock.send(request)
                (size,) = struct.unpack(">i", await sock.recv(4))
                while size:
                    size -= len(await sock.recv(size))
            await trio.testing.wait_all_tasks_blocked()
            gc.collect()
            per_connection = (tracemalloc.get_traced_memory()[0] - before) / count
        finally:
            tracemalloc.stop()
            for sock in [warm, *sockets]:
                sock.close()
    assert per_connection < 6_300, per_connection


@pytest.mark.trio
async def test_an_answer_whose_mapped_records_were_truncated_closes_the_connection(tmp_path):
    """Large disk reads are views of the mapped segment file (storage/disk.py); if the file is truncated before
    such an answer is fully sent, the write fails (EFAULT) and the connection closes with that reason, as Kafka's
    FileRecords.writeTo fails on a truncated file. Nothing is sent from a page past the file's end."""
    import mmap
    import os
    import socket

    from kafkamock.server.connection import ConnectionClosed, PlainSocket

    path = tmp_path / "segment.log"
    path.write_bytes(b"r" * 200_000)
    with open(path, "r+b") as f:
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        view = memoryview(mapped)[100_000:200_000]
        os.truncate(path, 50_000)
    a, b = socket.socketpair()
    try:
        plain = PlainSocket(trio.socket.from_stdlib_socket(a))
        with pytest.raises(ConnectionClosed, match="cut from their segment file"):
            await plain.send([memoryview(b"head"), view])
    finally:
        view.release()
        a.close()
        b.close()
