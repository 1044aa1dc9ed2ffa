"""kafkamock's own clients against librdkafka's (confluent-kafka), on the same kafkamock broker in the same run.

What is measured, each client on its own, one after the other, against one ``kafkamock serve`` process:
- **produce**: N records of S bytes (defaults 200,000 x 100 B) to a 4-partition topic, idempotent, acks=all,
  ``linger.ms`` 5, until every record is acknowledged (kafkamock: ``Producer.send`` then ``flush``;
  confluent-kafka: ``produce`` then ``flush``), as records per second;
- **consume**: the same N records read back from the earliest offset of every partition (``assign``, so no group
  join is timed), from the assign until the last record (kafkamock: ``Consumer.poll``; confluent-kafka:
  ``consume(500)``), as records per second;
- **commit**: synchronous commits of one partition's offset for a fixed time (default 3 s), as commits per second.

The ratio is kafkamock / librdkafka: below 1 kafkamock's client is slower. librdkafka is C with its own threads;
kafkamock's clients are Python on trio, so the ratio says what a Python client costs, not the broker.

    .venv/bin/python bench/clients.py
    .venv/bin/python bench/clients.py --records 50000 --size 1000
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import confluent_kafka
import trio
from confluent_kafka.admin import AdminClient, NewTopic

from kafkamock.client import Consumer, OffsetAndMetadata, Producer, TopicPartition

REPO = Path(__file__).resolve().parent.parent
READY = re.compile(r"kafkamock broker ready: bootstrap\.servers=(\S+)")
PARTITIONS = 4


def start_broker() -> tuple[subprocess.Popen, str]:
    log = tempfile.NamedTemporaryFile(prefix="kafkamock-bench-", suffix=".log", delete=False)
    proc = subprocess.Popen([sys.executable, "-m", "kafkamock.cli", "serve", "--host", "127.0.0.1", "--port", "0",
                             "--config", "group.initial.rebalance.delay.ms=0"], stdout=log, stderr=log, cwd=REPO)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = READY.search(Path(log.name).read_text(errors="replace"))
        if found:
            return proc, found.group(1)
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"kafkamock did not start: {Path(log.name).read_text(errors='replace')[-2000:]}")


def create_topic(bootstrap: str, name: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})      # kept alive until the topic exists
    (future,) = admin.create_topics([NewTopic(name, PARTITIONS, 1)]).values()
    future.result(30)


def rd_produce(bootstrap: str, topic: str, n: int, payload: bytes) -> float:
    p = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5})
    start = time.perf_counter()
    for i in range(n):
        while True:
            try:
                p.produce(topic, payload, key=str(i).encode())
                break
            except BufferError:
                p.poll(0.01)
    assert p.flush(60) == 0
    return n / (time.perf_counter() - start)


async def km_produce(bootstrap: str, topic: str, n: int, payload: bytes) -> float:
    async with Producer({"bootstrap.servers": bootstrap, "linger.ms": 5}) as p:
        start = time.perf_counter()
        for i in range(n):
            await p.send(topic, payload, key=str(i).encode())
        await p.flush()
        return n / (time.perf_counter() - start)


def rd_consume(bootstrap: str, topic: str, n: int) -> float:
    c = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": f"rd-{topic}",
                                  "enable.auto.commit": False})
    start = time.perf_counter()
    c.assign([confluent_kafka.TopicPartition(topic, p, confluent_kafka.OFFSET_BEGINNING) for p in range(PARTITIONS)])
    got = 0
    while got < n:
        got += sum(1 for m in c.consume(500, 1.0) if not m.error())
    rate = n / (time.perf_counter() - start)
    c.close()
    return rate


async def km_consume(bootstrap: str, topic: str, n: int) -> float:
    async with Consumer({"bootstrap.servers": bootstrap, "auto.offset.reset": "earliest"}) as c:
        start = time.perf_counter()
        c.assign([TopicPartition(topic, p) for p in range(PARTITIONS)])
        got = 0
        while got < n:
            got += len(await c.poll(1.0))
        return n / (time.perf_counter() - start)


def rd_commits(bootstrap: str, topic: str, seconds: float) -> float:
    c = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": f"rdc-{topic}",
                                  "enable.auto.commit": False})
    count, end = 0, time.perf_counter() + seconds
    while time.perf_counter() < end:
        c.commit(offsets=[confluent_kafka.TopicPartition(topic, 0, count + 1)], asynchronous=False)
        count += 1
    c.close()
    return count / seconds


async def km_commits(bootstrap: str, topic: str, seconds: float) -> float:
    async with Consumer({"bootstrap.servers": bootstrap, "group.id": f"kmc-{topic}",
                         "enable.auto.commit": False}) as c:
        c.assign([TopicPartition(topic, 0)])
        count, end = 0, time.perf_counter() + seconds
        while time.perf_counter() < end:
            await c.commit({TopicPartition(topic, 0): OffsetAndMetadata(count + 1)})
            count += 1
        return count / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    payload = b"x" * args.size
    proc, bootstrap = start_broker()
    try:
        for name in ("rd", "km"):
            create_topic(bootstrap, f"bench-{name}")
        rows = [
            ("produce records/s", trio.run(km_produce, bootstrap, "bench-km", args.records, payload),
             rd_produce(bootstrap, "bench-rd", args.records, payload)),
            ("consume records/s", trio.run(km_consume, bootstrap, "bench-km", args.records),
             rd_consume(bootstrap, "bench-rd", args.records)),
            ("sync commits/s", trio.run(km_commits, bootstrap, "bench-km", args.seconds),
             rd_commits(bootstrap, "bench-rd", args.seconds)),
        ]
    finally:
        proc.terminate()
        proc.wait(10)
    print(f"{args.records:,} records of {args.size} B, {PARTITIONS} partitions, one kafkamock broker\n")
    print("| metric | kafkamock client | librdkafka (confluent-kafka) | ratio |")
    print("|---|---:|---:|---:|")
    for metric, km, rd in rows:
        print(f"| {metric} | {km:,.0f} | {rd:,.0f} | {km / rd:.2f} |")


if __name__ == "__main__":
    main()
