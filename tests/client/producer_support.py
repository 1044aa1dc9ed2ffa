"""Helpers of the producer tests: read a partition back, and watch the InitProducerId requests a producer sends."""

from __future__ import annotations

from kafkamock.client import LATEST, KafkaClient, list_offsets, read_range
from kafkamock.client.connection import KafkaConnection


async def read_values(bootstrap: str, topic: str, partition: int = 0, *, isolation_level: int = 0) -> list[bytes]:
    """Every value of the partition up to its end (the last stable offset under read_committed)."""
    async with KafkaClient(bootstrap) as client:
        end = (await list_offsets(client, {(topic, partition): LATEST}, isolation_level=isolation_level))[
            (topic, partition)]
        values: list[bytes] = []
        if end > 0:
            async for chunk in read_range(client, topic, partition, 0, end, isolation_level=isolation_level,
                                          wait_timeout_s=10):
                values.extend(r.value for r in chunk.records)
        return values


def watch_requests(monkeypatch, api: str) -> list[dict]:
    """The bodies of every ``api`` request any KafkaConnection sends from now on (they still go to the broker)."""
    seen: list[dict] = []
    original = KafkaConnection.request

    async def request(self, key, body, **kwargs):
        if key == api:
            seen.append(dict(body))
        return await original(self, key, body, **kwargs)

    monkeypatch.setattr(KafkaConnection, "request", request)
    return seen
