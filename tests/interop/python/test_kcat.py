"""kcat (the Debian package, built on its own librdkafka) as a producer and consumer against a live broker.

``make test`` installs kcat when it is missing; without it these tests are skipped.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from client_support import METADATA, log_end_offset, stored_views

KCAT = shutil.which("kcat")
pytestmark = [pytest.mark.skipif(KCAT is None, reason="kcat is not installed (make test installs it)"),
              pytest.mark.slow]                          # one kcat process per step, about a second a test



# Kafka 4.x lists Produce from v0 in ApiVersions although it serves v3+ only (KAFKA-18659): librdkafka before
# 2.11.1 checks compression support against a Produce range starting at 0 and, without it, logs "Broker does not
# support compression type gzip: not compressing batch" and sends plain batches. Debian 12's kcat is built on
# librdkafka 2.0.2, so these tests catch a broker that lists Produce v3+ only.

LINES = ["first line", "second: with a colon", "ünïcødé and\ttab", "x" * 5000, "{\"json\": [1, 2, 3]}",
         "  leading and trailing spaces  ", "last"]


def kcat(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    result = subprocess.run([KCAT, *args], input=stdin, capture_output=True, timeout=60)
    assert result.returncode == 0, (args, result.returncode, result.stderr.decode(errors="replace"))
    return result


@pytest.mark.parametrize("compression", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_produce_lines_from_file_and_consume_them_back(kafka_broker, tmp_path, compression):
    kafka_broker.create_topic("lines", 1)
    source = tmp_path / "lines.txt"
    source.write_text("".join(line + "\n" for line in LINES), encoding="utf-8")
    # One batch whatever the machine's speed: librdkafka sends a batch that its codec would not shrink (a short
    # line alone, in snappy) uncompressed.
    kcat("-P", "-b", kafka_broker.bootstrap_servers, "-t", "lines", "-z", compression, "-X", "linger.ms=500",
         "-l", str(source))
    assert log_end_offset(kafka_broker, "lines") == len(LINES)
    assert {v.compression for v in stored_views(kafka_broker, "lines")} == {compression}

    out = kcat("-C", "-b", kafka_broker.bootstrap_servers, "-t", "lines", "-e", "-q")
    assert out.stdout.decode("utf-8") == source.read_text(encoding="utf-8")

    # Offsets, null keys and timestamps through kcat's format string.
    out = kcat("-C", "-b", kafka_broker.bootstrap_servers, "-t", "lines", "-e", "-q", "-f", "%o|%K|%S\n")
    assert out.stdout.decode().splitlines() == [f"{i}|-1|{len(line.encode())}" for i, line in enumerate(LINES)]


def test_keys_with_K_delimiter(kafka_broker, tmp_path):
    kafka_broker.create_topic("keyed", 1)
    pairs = [("user-1", "login"), ("user-2", "view: home"), ("user-1", "logout"), ("", "empty key")]
    source = tmp_path / "keyed.txt"
    source.write_text("".join(f"{k}={v}\n" for k, v in pairs), encoding="utf-8")
    kcat("-P", "-b", kafka_broker.bootstrap_servers, "-t", "keyed", "-K", "=", "-l", str(source))
    out = kcat("-C", "-b", kafka_broker.bootstrap_servers, "-t", "keyed", "-e", "-q", "-K", "=")
    assert out.stdout.decode() == source.read_text(encoding="utf-8")
    out = kcat("-C", "-b", kafka_broker.bootstrap_servers, "-t", "keyed", "-e", "-q", "-f", "%o:%k:%s\n")
    assert out.stdout.decode().splitlines() == [f"{i}:{k}:{v}" for i, (k, v) in enumerate(pairs)]


def test_keyed_lines_on_several_partitions(kafka_broker, tmp_path):
    kafka_broker.create_topic("spread", 3)
    pairs = [(f"k{i % 5}", f"value-{i}") for i in range(60)]
    source = tmp_path / "spread.txt"
    source.write_text("".join(f"{k}\t{v}\n" for k, v in pairs), encoding="utf-8")
    kcat("-P", "-b", kafka_broker.bootstrap_servers, "-t", "spread", "-K", "\t", "-l", str(source))
    out = kcat("-C", "-b", kafka_broker.bootstrap_servers, "-t", "spread", "-e", "-q", "-f", "%p %k %s\n")
    rows = [line.split(" ") for line in out.stdout.decode().splitlines()]
    assert sorted((k, v) for _, k, v in rows) == sorted(pairs)
    partition_of = {}
    for p, k, _ in rows:                                    # one key, one partition
        assert partition_of.setdefault(k, p) == p
    for key in {k for k, _ in pairs}:                       # per key, the file's order
        assert [v for _, k, v in rows if k == key] == [v for k, v in pairs if k == key]


def test_stdin_producer_and_metadata_listing(kafka_broker, wire_log):
    kafka_broker.create_topic("listed", 2)
    kcat("-P", "-b", kafka_broker.bootstrap_servers, "-t", "listed", "-p", "1", stdin=b"one\ntwo\n")
    listing = json.loads(kcat("-L", "-J", "-b", kafka_broker.bootstrap_servers).stdout)
    (topic,) = [t for t in listing["topics"] if t["topic"] == "listed"]
    assert sorted(p["partition"] for p in topic["partitions"]) == [0, 1]
    assert [b["id"] for b in listing["brokers"]] == [1]
    out = kcat("-C", "-b", kafka_broker.bootstrap_servers, "-t", "listed", "-p", "1", "-o", "beginning", "-e", "-q")
    assert out.stdout == b"one\ntwo\n"
    out = kcat("-C", "-b", kafka_broker.bootstrap_servers, "-t", "listed", "-p", "1", "-o", "1", "-e", "-q")
    assert out.stdout == b"two\n"
    out = kcat("-C", "-b", kafka_broker.bootstrap_servers, "-t", "listed", "-p", "1", "-o", "-1", "-e", "-q")
    assert out.stdout == b"two\n"                         # relative to the end
    assert wire_log.versions(METADATA)
