"""kcat's balanced consumer (-G, librdkafka's KafkaConsumer): committed offsets carry over from one run of a group
to the next, and two kcat processes in one group split the partitions.

kcat 1.7.1 (Debian 12, on its own librdkafka 2.0.2) in -G mode, as observed against Kafka 3.8.0:
- ``-e`` works: the process exits once every partition assigned to it has reached its end;
- ``-c N`` exits after N messages; the offsets of what it printed are committed on exit (auto commit plus the
  final commit of rd_kafka_consumer_close), also on SIGTERM;
- ``-o beginning`` is *not* the reset policy there: each run starts every assigned partition at the beginning,
  whatever the group committed. These tests use ``-X auto.offset.reset=earliest`` (``-o stored`` resumes too).
Nothing here differs between Kafka 3.8 and 4.3 (librdkafka 2.0.2 speaks the classic protocol only).
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from support.targets import TARGETS
from test_groups import cluster_for, group_api_gap, wait_for

KCAT = shutil.which("kcat")
pytestmark = [pytest.mark.skipif(KCAT is None, reason="kcat is not installed (make test installs it)"),
              pytest.mark.slow]
KCAT_TIMEOUT_S = 30.0
FORMAT = "%p %o %k %s\n"

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import OFFSET_INVALID, Consumer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient  # noqa: E402


@pytest.fixture(params=TARGETS)
def group_cluster(request):
    yield from cluster_for(request)


def kcat(cluster, *args: str, stdin: bytes | None = None) -> str:
    """Run kcat to completion (at most KCAT_TIMEOUT_S); its stdout. A timeout names what it printed so far."""
    try:
        result = subprocess.run([KCAT, "-b", cluster.bootstrap_servers, *args], input=stdin, capture_output=True,
                                timeout=KCAT_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode(errors="replace")
        err = (exc.stderr or b"").decode(errors="replace")
        gap = group_api_gap(cluster.bootstrap_servers)
        raise AssertionError(f"kcat {' '.join(args)} did not finish within {KCAT_TIMEOUT_S}s; printed "
                             f"{len(out.splitlines())} lines; stderr {err[-800:]!r}" + (f"; {gap}" if gap else "")) from None
    assert result.returncode == 0, (args, result.returncode, result.stderr.decode(errors="replace")[-2000:])
    return result.stdout.decode()


def produce(cluster, topic: str, start: int, count: int) -> None:
    lines = "".join(f"key-{i % 11}:value-{i:05d}\n" for i in range(start, start + count))
    kcat(cluster, "-P", "-t", topic, "-K", ":", stdin=lines.encode())


def rows(output: str) -> list[tuple[int, int, str, str]]:
    """(partition, offset, key, value) of each line kcat printed with FORMAT. A running kcat may be mid-line: only
    complete lines count."""
    out = []
    for line in output[:output.rfind("\n") + 1].splitlines():
        p, o, k, v = line.split(" ")
        out.append((int(p), int(o), k, v))
    return out


def committed(cluster, group: str, topic: str, partitions: int) -> dict[int, int]:
    c = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": group})
    try:
        return {tp.partition: tp.offset for tp in
                c.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=10)}
    finally:
        c.close()


def log_ends(cluster, topic: str, partitions: int) -> dict[int, int]:
    c = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": "watermarks"})
    try:
        return {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(partitions)}
    finally:
        c.close()


def next_offsets(read: list[tuple[int, int, str, str]], partitions: int) -> dict[int, int]:
    """What a group that read ``read`` (each partition from offset 0, in order) has committed."""
    return {p: max((o + 1 for q, o, _, _ in read if q == p), default=OFFSET_INVALID) for p in range(partitions)}


def test_balanced_consumer_commits_and_the_next_run_resumes(group_cluster):
    cluster = group_cluster
    topic, group = cluster.name("topic"), cluster.name("group")
    cluster.create_topic(topic, 3)
    produce(cluster, topic, 0, 60)
    ends = log_ends(cluster, topic, 3)
    assert sum(ends.values()) == 60 and all(ends.values())

    first = rows(kcat(cluster, "-G", group, "-X", "auto.offset.reset=earliest", "-c", "25", "-q", "-f", FORMAT,
                      topic))
    assert len(first) == 25
    for p in range(3):                                   # each partition read from 0, in order
        offsets = [o for q, o, _, _ in first if q == p]
        assert offsets == list(range(len(offsets)))
    assert committed(cluster, group, topic, 3) == next_offsets(first, 3)

    second = rows(kcat(cluster, "-G", group, "-X", "auto.offset.reset=earliest", "-e", "-q", "-f", FORMAT, topic))
    assert len(second) == 35
    assert sorted(first + second) == sorted(set(first + second)), "a record was read by both runs"
    assert sorted(v for *_, v in first + second) == [f"value-{i:05d}" for i in range(60)]
    assert committed(cluster, group, topic, 3) == ends

    produce(cluster, topic, 60, 15)
    third = rows(kcat(cluster, "-G", group, "-X", "auto.offset.reset=earliest", "-e", "-q", "-f", FORMAT, topic))
    assert sorted(v for *_, v in third) == [f"value-{i:05d}" for i in range(60, 75)]
    assert all(o >= ends[p] for p, o, _, _ in third)
    assert committed(cluster, group, topic, 3) == log_ends(cluster, topic, 3)


def test_two_kcat_processes_split_the_partitions(group_cluster, tmp_path: Path):
    cluster = group_cluster
    topic, group = cluster.name("topic"), cluster.name("group")
    cluster.create_topic(topic, 4)
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    outputs = [tmp_path / "a.out", tmp_path / "b.out"]
    processes = []
    try:
        for out in outputs:
            with out.open("wb") as sink, out.with_suffix(".err").open("wb") as errors:
                processes.append(subprocess.Popen(
                    [KCAT, "-b", cluster.bootstrap_servers, "-G", group, "-X", "auto.offset.reset=earliest",
                     "-X", "client.id=" + out.stem, "-X", "heartbeat.interval.ms=500", "-q", "-u", "-f", FORMAT,
                     topic], stdout=sink, stderr=errors))

        def stderr(i: int) -> str:
            return outputs[i].with_suffix(".err").read_text(errors="replace")[-1000:]

        def split() -> dict[str, set[int]] | None:
            description = admin.describe_consumer_groups([group], request_timeout=10)[group].result(timeout=15)
            owned = {m.client_id: {tp.partition for tp in m.assignment.topic_partitions}
                     for m in description.members}
            if set(owned) == {"a", "b"} and not owned["a"] & owned["b"] and owned["a"] | owned["b"] == {0, 1, 2, 3} \
                    and len(owned["a"]) == len(owned["b"]) == 2:
                return owned
            return None

        def alive() -> str:
            return ", ".join(f"kcat {i}: exit {p.poll()}, stderr {stderr(i)!r}" for i, p in enumerate(processes))
        owners = wait_for(cluster, split, "two kcat members to own two partitions each", detail=alive)

        produce(cluster, topic, 0, 80)

        def read() -> list[list[tuple[int, int, str, str]]]:
            return [rows(out.read_text()) for out in outputs]
        wait_for(cluster, lambda: sum(map(len, read())) >= 80, "the two kcat processes to print 80 records",
                 detail=lambda: f"{[len(r) for r in read()]} printed; {alive()}")
        for process in processes:                            # kcat exits cleanly on SIGTERM, committing
            process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 15
        for i, process in enumerate(processes):
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
            assert process.returncode == 0, stderr(i)
        a, b = read()
        assert len(a) + len(b) == 80
        assert sorted(v for *_, v in a + b) == [f"value-{i:05d}" for i in range(80)]
        assert {p for p, *_ in a} <= owners["a"] and {p for p, *_ in b} <= owners["b"]
        assert committed(cluster, group, topic, 4) == log_ends(cluster, topic, 4)
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait(5)
