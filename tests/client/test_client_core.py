"""kafkamock.client's core against a live broker in the same trio loop: routing, pipelining, long-poll wake-up."""

from __future__ import annotations

import pytest
import trio

from kafkamock import records
from kafkamock.client import KafkaClient, KafkaConnectionError
from kafkamock.server import run_broker


def produce_body(client: KafkaClient, topic: str, value: bytes, acks: int = -1) -> dict:
    """Names for Produce v3-v12, topic ids for v13+ (the negotiated version picks which the broker reads)."""
    batch = records.encode_batch([{"value": value, "timestamp": 1}])
    return {"acks": acks, "timeout_ms": 5000, "topic_data": [
        {"name": topic, "topic_id": client.topic_ids[topic], "partition_data": [{"index": 0, "records": batch}]}]}


def fetch_body(client: KafkaClient, topic: str, offset: int, max_wait_ms: int = 0) -> dict:
    return {"replica_id": -1, "max_wait_ms": max_wait_ms, "min_bytes": 1, "max_bytes": 1 << 20,
            "session_id": 0, "session_epoch": -1,
            "topics": [{"topic": topic, "topic_id": client.topic_ids[topic], "partitions": [
                {"partition": 0, "fetch_offset": offset, "partition_max_bytes": 1 << 20}]}]}


def fetched(response) -> list[bytes]:
    return [r.value for t in response.responses for p in t.partitions
            for b in records.decode_batches(p.records) for r in b.records]


@pytest.mark.trio
async def test_metadata_routing_and_pipelined_requests():
    async with run_broker() as server, KafkaClient(server.bootstrap_servers) as client:
        metadata = await client.metadata(["orders"], auto_create=True)
        assert metadata.topics[0].error_code == 0 and client.leaders[("orders", 0)] == 1
        leader = await client.leader("orders", 0)
        assert leader.versions[0][1] >= 9 and leader.version_for("Fetch") >= 12

        results: dict[int, int] = {}

        async def send(i: int) -> None:
            response = await leader.request("Produce", produce_body(client, "orders", b"%d" % i))
            results[i] = response.responses[0].partition_responses[0].base_offset

        async with trio.open_nursery() as nursery:    # 50 requests in flight on one connection
            for i in range(50):
                nursery.start_soon(send, i)
        assert sorted(results.values()) == list(range(50))
        values = fetched(await leader.request("Fetch", fetch_body(client, "orders", 0)))
        assert sorted(values, key=int) == [b"%d" % i for i in range(50)]
        # Offsets follow the order in which the broker received the requests, and values match offsets.
        assert all(values[offset] == b"%d" % i for i, offset in results.items())


@pytest.mark.trio
async def test_long_poll_fetch_is_woken_by_a_produce():
    async with run_broker() as server, KafkaClient(server.bootstrap_servers) as client:
        await client.metadata(["events"], auto_create=True)
        consumer = await client.leader("events", 0)
        producer_client = KafkaClient(server.bootstrap_servers)
        async with producer_client:
            producer = await producer_client.leader("events", 0)
            got: list = []

            async def poll() -> None:
                got.append(await consumer.request("Fetch", fetch_body(client, "events", 0, max_wait_ms=60_000)))

            with trio.fail_after(20):    # far below the 60 s long-poll: only the produce can end it early
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(poll)
                    await trio.testing.wait_all_tasks_blocked()
                    await producer.request("Produce", produce_body(client, "events", b"wake up"))
            assert fetched(got[0]) == [b"wake up"]


@pytest.mark.trio
async def test_acks_zero_and_unreachable_bootstrap():
    async with run_broker() as server, KafkaClient(server.bootstrap_servers) as client:
        await client.metadata(["fire"], auto_create=True)
        leader = await client.leader("fire", 0)
        await leader.request("Produce", produce_body(client, "fire", b"and forget", acks=0), expect_response=False)
        response = await leader.request("Fetch", fetch_body(client, "fire", 0, max_wait_ms=5000))
        assert fetched(response) == [b"and forget"]
    async with KafkaClient("127.0.0.1:1") as client:
        with pytest.raises(KafkaConnectionError, match="no broker reachable"):
            await client.metadata()


@pytest.mark.trio
async def test_responses_ending_in_a_large_record_batch_arrive_whole():
    """A non-flexible Fetch response ends with its records; sent as scatter-gather parts, the last (empty) part
    once made the server spin on that connection. Fetch v11 at a mid-batch offset, then the connection is reused."""
    async with run_broker() as server, KafkaClient(server.bootstrap_servers) as client:
        await client.metadata(["big"], auto_create=True)
        leader = await client.leader("big", 0)
        batch = records.encode_batch([{"value": b"%05d" % i * 200, "timestamp": 1} for i in range(8)])
        await leader.request("Produce", {"acks": -1, "timeout_ms": 1000, "topic_data": [
            {"name": "big", "partition_data": [{"index": 0, "records": batch}]}]}, version=9)
        body = {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
                "session_id": 0, "session_epoch": -1, "topics": [{"topic": "big", "partitions": [
                    {"partition": 0, "fetch_offset": 5, "partition_max_bytes": 1 << 20}]}]}
        with trio.fail_after(10):
            for _ in range(3):
                response = await leader.request("Fetch", body, version=11)
                assert response.responses[0].partitions[0].records == batch[:12] + b"\x00\x00\x00\x00" + batch[16:]
