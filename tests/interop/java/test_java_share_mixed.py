"""One share group, two clients: kafkamock's ShareConsumer and kafka-clients 4.3.1's KafkaShareConsumer (Java),
both renewing (KIP-1222) a record they keep past its 3 s lock while the other one keeps fetching.

The JVM runs ClientScenarios' ``share`` scenario in the background; the Python consumer follows its progress (the
PROGRESS line of each step) so the two overlap as intended:

- phase A: Java's first poll takes two records and renews them three times (1.2 s of "processing" each, by
  commitSync and by poll) while the Python consumer fetches and accepts everything else;
- phase B: once Java accepted its records and starts draining, ten more records are produced; the Python consumer
  keeps the first ones it gets, renewing them three times, while Java drains and accepts the rest.

Together they see every record once, with delivery count 1; neither ever receives the other's renewed records.
"""

from __future__ import annotations

import pytest
import trio
from confluent_kafka import Producer

from kafkamock.client.share_consumer import AcknowledgeType, ShareConsumer
from kafkamock.client.types import TopicPartition

LOCK_MS = 3000
PROCESS_S = 1.2                      # three of these outlast the lock: without RENEW the other side would get them
FIRST, SECOND = 20, 10
pytestmark = [pytest.mark.java, pytest.mark.kafkamock(config={"group.share.min.record.lock.duration.ms": 1000})]
CONSUMER_CONFIG = {"max.poll.records": 2, "share.acquire.mode": "record_limit"}


def produce(bootstrap: str, topic: str, first: int, count: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for i in range(first, first + count):
        producer.produce(topic, key=f"k{i}", value=f"v{i}", partition=0)
        producer.flush()                        # one batch per record
    assert producer.flush(10) == 0


def java_steps(group: str) -> tuple[list[dict], dict[str, int]]:
    steps: list[dict] = [
        {"op": "admin", "ops": [{"op": "alterGroupConfigs", "group": group, "set": {
            "share.auto.offset.reset": "earliest", "share.record.lock.duration.ms": LOCK_MS}}]},
        {"op": "consumer", "consumer": "j", "mode": "explicit", "config": CONSUMER_CONFIG},
        {"op": "poll", "consumer": "j", "count": 1, "timeout_ms": 20_000, "label": "first"}]
    for k in range(3):
        steps += [{"op": "process_ms", "ms": int(PROCESS_S * 1000)}, {"op": "ack", "consumer": "j", "type": "renew"}]
        if k % 2 == 0:
            steps += [{"op": "commit", "consumer": "j", "label": f"renew-{k}"}]
        steps += [{"op": "poll", "consumer": "j", "count": 1, "timeout_ms": 3000, "label": f"kept-{k}"}]
    steps += [{"op": "ack", "consumer": "j", "type": "accept"},
              {"op": "commit", "consumer": "j", "label": "accepted"},
              {"op": "poll", "consumer": "j", "count": FIRST + SECOND, "timeout_ms": 9000, "ack": "accept",
               "label": "drain"},
              {"op": "commit", "consumer": "j", "label": "drained"}]
    return steps, {s["label"]: i for i, s in enumerate(steps) if "label" in s}


def step_done(running, index: int) -> bool:
    return any(p.get("step") == str(index) for p in list(running.progress))


async def wait_step(running, index: int, timeout_s: float = 60) -> None:
    """Until the JVM reported step ``index`` (its PROGRESS line), failing at the deadline or if the JVM ended."""
    with trio.fail_after(timeout_s):
        while not step_done(running, index):
            assert running.proc.poll() is None or step_done(running, index), running.stderr_tail()
            await trio.sleep(0.05)


def java_records(report: dict) -> list[tuple[str, int]]:
    return [(r["key"], r["delivery_count"]) for r in report["result"]["records"]]


@pytest.mark.trio
async def test_kafkamock_and_java_share_consumers_renew_in_one_group(java_clients, kafka_target):
    topic, group = kafka_target.unique("share-mixed"), kafka_target.unique("sg-mixed")
    bootstrap = kafka_target.bootstrap_servers
    await trio.to_thread.run_sync(kafka_target.create_topic, topic, 1)
    await trio.to_thread.run_sync(produce, bootstrap, topic, 0, FIRST)
    steps, at = java_steps(group)
    running = java_clients.start("share", bootstrap, {"group": group, "topic": topic, "steps": steps, "config": {}})
    python: list = []                                   # every record the Python consumer received
    held: list = []                                     # the ones it renewed
    try:
        async with ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group, "client.id": "py-share",
                                  "share.acknowledgement.mode": "explicit", **CONSUMER_CONFIG}) as c:
            c.subscribe([topic])
            await wait_step(running, at["first"])       # Java holds its first records before Python fetches
            # phase A: Java renews; Python fetches and accepts the rest meanwhile. The second lot is produced
            # while Java still holds its renewed records (it fetches nothing new then), so Python gets the first new
            # one, and keeps it (renewing it on every poll) for phase B.
            produced_second = False
            while not step_done(running, at["accepted"]) or not held:
                assert running.proc.poll() is None, running.stderr_tail()
                if not produced_second and step_done(running, at["kept-0"]):
                    await trio.to_thread.run_sync(produce, bootstrap, topic, FIRST, SECOND)
                    produced_second = True
                for record in await c.poll(0.3):
                    if held and record.offset == held[0].offset:
                        c.acknowledge(record, AcknowledgeType.RENEW)
                        held = [record]
                        continue
                    python.append(record)
                    if not held and int(record.key[1:]) >= FIRST:
                        held = [record]
                        c.acknowledge(record, AcknowledgeType.RENEW)
                    else:
                        c.acknowledge(record, AcknowledgeType.ACCEPT)
            assert await c.commit_sync() in ({}, {TopicPartition(topic, 0): None})
            # phase B: Python keeps its record past the lock while Java drains the rest
            kept_offset, held = held[0].offset, []
            with trio.fail_after(15):                    # the renewal went out with commit_sync: it comes back
                while not held:
                    held = await c.poll(0.5)
            assert [(r.offset, r.delivery_count) for r in held] == [(kept_offset, 1)]
            assert c.acquisition_lock_timeout_ms() == LOCK_MS
            for k in range(3):
                await trio.sleep(PROCESS_S)              # slow processing
                for record in held:
                    c.acknowledge(record, AcknowledgeType.RENEW)
                if k % 2 == 0:
                    assert await c.commit_sync() == {TopicPartition(topic, 0): None}
                kept = await c.poll(3.0)
                assert [(r.offset, r.delivery_count) for r in kept] == [(r.offset, 1) for r in held]
                held = kept
            for record in held:
                c.acknowledge(record, AcknowledgeType.ACCEPT)
            assert await c.commit_sync() == {TopicPartition(topic, 0): None}
            # until the JVM is done, whatever is left is Python's too
            while running.proc.poll() is None:
                for record in await c.poll(0.3):
                    c.acknowledge(record, AcknowledgeType.ACCEPT)
                    python.append(record)
            assert await c.commit_sync() in ({}, {TopicPartition(topic, 0): None})
    finally:
        result = await trio.to_thread.run_sync(running.result)
    reports = result["steps"]
    failed = [r for r in reports if not r["ok"]]
    assert not failed, failed
    got = {r["label"]: r for r in reports if r.get("label")}
    java_first = java_records(got["first"])
    assert java_first and all(count == 1 for _, count in java_first)
    for k in range(3):
        assert java_records(got[f"kept-{k}"]) == java_first          # the same records, still first delivery
        if k % 2 == 0:
            assert set(got[f"renew-{k}"]["result"].values()) == {"ok"}
    java_accepted = [key for key, _ in java_first] + [key for key, _ in java_records(got["drain"])]
    python_keys = [r.key.decode() for r in python]
    everything = [f"k{i}" for i in range(FIRST + SECOND)]
    assert sorted(java_accepted + python_keys, key=lambda k: int(k[1:])) == everything   # each once, together all
    assert all(r.delivery_count == 1 for r in python)
    assert all(count == 1 for _, count in java_records(got["drain"]))
    held_keys = {r.key.decode() for r in held}
    assert held_keys and not held_keys & set(java_accepted)                # Python's renewed records stayed
    assert not {key for key, _ in java_first} & set(python_keys)           # Java's renewed records stayed
    assert java_records(got["drain"]), "Java drained nothing in phase B: the phases did not overlap"
    if kafka_target.wire is not None:                   # both clients renewed both ways over the wire
        renewing = {(e["client_id"].startswith("py-"), e["api"], e["version"]) for e in kafka_target.wire.entries
                    if e["api"] in ("ShareFetch", "ShareAcknowledge") and e["request"].is_renew_ack}
        assert renewing == {(side, api, 2) for side in (True, False) for api in ("ShareFetch", "ShareAcknowledge")}
