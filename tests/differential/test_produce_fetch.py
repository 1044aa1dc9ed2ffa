"""Produce, Fetch, ListOffsets, DeleteRecords and OffsetForLeaderEpoch: edge cases side by side.

Records carry fixed timestamps, so what comes back is comparable byte for byte once decoded; topic ids are
looked up by name and compared as placeholders.
"""

from __future__ import annotations

import time
import uuid

import pytest

from kafkamock.records import encode_batch

TS = 1_700_000_000_000
NOW_TS = int(time.time() * 1000)      # a record timestamp of today, the same on both brokers
NO_ID = uuid.UUID(int=0)


def records(n: int, *, start: int = 0, keys: bool = True, size: int = 8) -> list[dict]:
    return [{"key": f"k{start + i}".encode() if keys else None, "value": f"v{start + i}".encode().ljust(size, b"."),
             "timestamp": TS + start + i, "headers": [("h", b"x")] if i % 3 == 0 else []} for i in range(n)]


def topic_id(run, topic: str) -> uuid.UUID:
    md = run.call("Metadata", 12, {"topics": [{"name": topic, "topic_id": NO_ID}], "allow_auto_topic_creation": False,
                                   "include_topic_authorized_operations": False}, see=False)
    return md.topics[0].topic_id


def produce(run, topic: str, partition: int, recs: list[dict], *, version: int = 11, acks: int = -1,
            label: str = "produce", tid: uuid.UUID | None = None, **batch):
    data = encode_batch(recs, **batch)
    topic_entry = {"name": topic, "partition_data": [{"index": partition, "records": data}]}
    if version >= 13:
        topic_entry = {"name": "", "topic_id": tid or topic_id(run, topic),
                       "partition_data": [{"index": partition, "records": data}]}
    r = run.call("Produce", version, {"transactional_id": None, "acks": acks, "timeout_ms": 10000,
                                      "topic_data": [topic_entry]}, label=label, see=acks != 0)
    return r


def fetch(run, topic: str, partition: int = 0, offset: int = 0, *, version: int = 17, max_bytes: int = 1 << 20,
          partition_max_bytes: int = 1 << 20, isolation: int = 0, current_leader_epoch: int = -1,
          last_fetched_epoch: int = -1, session_id: int = 0, session_epoch: int = -1, label: str = "fetch",
          max_wait_ms: int = 0, min_bytes: int = 1, see: bool = True, forgotten: list | None = None,
          topics: list | None = None):
    part = {"partition": partition, "current_leader_epoch": current_leader_epoch, "fetch_offset": offset,
            "last_fetched_epoch": last_fetched_epoch, "log_start_offset": -1, "partition_max_bytes": partition_max_bytes}
    entry = {"topic": topic, "topic_id": topic_id(run, topic) if version >= 13 else NO_ID, "partitions": [part]}
    return run.call("Fetch", version, {
        "cluster_id": None, "replica_id": -1, "replica_state": {"replica_id": -1, "replica_epoch": -1},
        "max_wait_ms": max_wait_ms, "min_bytes": min_bytes, "max_bytes": max_bytes, "isolation_level": isolation,
        "session_id": session_id, "session_epoch": session_epoch,
        "topics": [entry] if topics is None else topics, "forgotten_topics_data": forgotten or [], "rack_id": ""},
        label=label, see=see)


def list_offsets(run, topic: str, timestamp: int, *, version: int = 10, partition: int = 0, isolation: int = 0,
                 label: str | None = None, current_leader_epoch: int = -1):
    return run.call("ListOffsets", version, {
        "replica_id": -1, "isolation_level": isolation, "timeout_ms": 5000,
        "topics": [{"name": topic, "partitions": [{"partition_index": partition, "timestamp": timestamp,
                                                   "current_leader_epoch": current_leader_epoch}]}]},
        label=label or f"ListOffsets {timestamp}")


# -- Produce -------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("key,value", [(None, None), (b"", b""), (None, b""), (b"", None), (b"k", None)])
def test_produce_and_fetch_a_record_with_empty_or_null_key_and_value(differ, request, key, value):
    """A record whose key and value are null or empty is six bytes long; Kafka stores it."""
    def scenario(run):
        topic = run.name()
        run.create_topic(topic)
        produce(run, topic, 0, [{"key": key, "value": value, "timestamp": TS}])
        fetch(run, topic)

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("version", range(3, 14))
def test_produce_each_version(differ, request, version):
    def scenario(run):
        topic = run.name()
        run.create_topic(topic, 2)
        produce(run, topic, 1, records(3), version=version)
        produce(run, topic, 1, records(2, start=3), version=version, compression="gzip")
        fetch(run, topic, 1)

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("keyless", [[3], [0, 4, 9], list(range(10))])
def test_produce_record_errors_on_a_compacted_topic(differ, request, keyless):
    """KIP-467: keyless records on a compacted topic are named one by one in record_errors."""
    def scenario(run):
        topic = run.name()
        run.create_topic(topic, config={"cleanup.policy": "compact"})
        recs = records(10)
        for i in keyless:
            recs[i]["key"] = None
        produce(run, topic, 0, recs)
        produce(run, topic, 0, records(2), label="then a good batch")

    differ.check(request.node.name, scenario)


def test_produce_record_errors_for_timestamps_and_keys(differ, request):
    def scenario(run):
        topic = run.name()
        run.create_topic(topic, config={"cleanup.policy": "compact", "message.timestamp.before.max.ms": "60000"})
        recs = records(6)
        recs[1]["key"] = None
        recs[2]["timestamp"] = 1000
        produce(run, topic, 0, recs, label="old timestamp and a keyless record")
        topic2 = run.name("t2")
        run.create_topic(topic2, config={"message.timestamp.before.max.ms": "60000"})
        produce(run, topic2, 0, records(3), label="every timestamp too old")

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("case", ["unknown topic", "partition out of range", "negative partition", "acks 2",
                                  "bad crc", "count mismatch", "too large", "transactional without id",
                                  "control batch", "idempotent bad sequence", "acks 0 then fetch", "empty batch"])
def test_produce_errors(differ, request, case):
    def scenario(run):
        topic = run.name()
        run.create_topic(topic, config={"max.message.bytes": "200"} if case == "too large" else None)
        if case == "unknown topic":
            produce(run, run.name("missing"), 0, records(1))
        elif case == "partition out of range":
            produce(run, topic, 3, records(1))
        elif case == "negative partition":
            produce(run, topic, -1, records(1))
        elif case == "acks 2":
            produce(run, topic, 0, records(1), acks=2)
        elif case == "bad crc":
            data = bytearray(encode_batch(records(2)))
            data[-1] ^= 0xFF
            run.call("Produce", 11, {"transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": [
                {"name": topic, "partition_data": [{"index": 0, "records": bytes(data)}]}]}, label="produce")
        elif case == "count mismatch":
            import crc32c

            data = bytearray(encode_batch(records(2)))
            data[57:61] = (5).to_bytes(4, "big")          # the v2 header's record count, then its CRC again
            data[17:21] = crc32c.crc32c(bytes(data[21:])).to_bytes(4, "big")
            run.call("Produce", 11, {"transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": [
                {"name": topic, "partition_data": [{"index": 0, "records": bytes(data)}]}]}, label="produce")
        elif case == "too large":
            produce(run, topic, 0, records(5, size=100))
        elif case == "transactional without id":
            produce(run, topic, 0, records(1), producer_id=5, producer_epoch=0, base_sequence=0, transactional=True)
        elif case == "control batch":
            produce(run, topic, 0, [{"key": b"\x00\x00\x00\x00", "value": b"\x00\x00\x00\x00\x00\x00",
                                     "timestamp": TS}], control=True)
        elif case == "idempotent bad sequence":
            init = run.until("a producer id", lambda: (lambda r: r if r.error_code == 0 else None)(
                run.call("InitProducerId", 5, {"transactional_id": None, "transaction_timeout_ms": -1,
                                               "producer_id": -1, "producer_epoch": -1}, see=False)))
            pid, epoch = init.producer_id, init.producer_epoch
            produce(run, topic, 0, records(2), producer_id=pid, producer_epoch=epoch, base_sequence=0,
                    label="first")
            produce(run, topic, 0, records(2), producer_id=pid, producer_epoch=epoch, base_sequence=0,
                    label="duplicate")
            produce(run, topic, 0, records(2), producer_id=pid, producer_epoch=epoch, base_sequence=5,
                    label="gap")
            produce(run, topic, 0, records(1), producer_id=pid, producer_epoch=epoch + 1, base_sequence=7,
                    label="new epoch, not from zero")
        elif case == "acks 0 then fetch":           # no answer comes: send, then wait for the records
            run.conn().send("Produce", 11, {"transactional_id": None, "acks": 0, "timeout_ms": 10000, "topic_data": [
                {"name": topic, "partition_data": [{"index": 0, "records": encode_batch(records(2))}]}]})
            run.until("the acks=0 records", lambda: run.call("ListOffsets", 10, {
                "replica_id": -1, "isolation_level": 0, "timeout_ms": 5000, "topics": [{"name": topic, "partitions": [
                    {"partition_index": 0, "timestamp": -1, "current_leader_epoch": -1}]}]},
                see=False).topics[0].partitions[0].offset == 2)
        elif case == "empty batch":
            run.call("Produce", 11, {"transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": [
                {"name": topic, "partition_data": [{"index": 0, "records": b""}]}]}, label="produce")
        fetch(run, topic)

    differ.check(request.node.name, scenario)


# -- Fetch ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", range(4, 19))
def test_fetch_each_version(differ, request, version):
    def scenario(run):
        topic = run.name()
        run.create_topic(topic)
        produce(run, topic, 0, records(4))
        produce(run, topic, 0, records(3, start=4), compression="lz4")
        fetch(run, topic, 0, 0, version=version)
        fetch(run, topic, 0, 5, version=version, label="from inside the second batch")

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("case", ["offset past the end", "offset at the end", "negative offset",
                                  "below log start", "unknown partition", "unknown topic", "unknown topic id",
                                  "partition max bytes smaller than a batch", "max bytes across partitions",
                                  "stale leader epoch", "future leader epoch", "diverging epoch",
                                  "min bytes waits then answers", "read committed without transactions"])
def test_fetch_edges(differ, request, case):
    def scenario(run):
        topic = run.name()
        run.create_topic(topic, 2)
        produce(run, topic, 0, records(5, size=200))
        produce(run, topic, 0, records(5, start=5, size=200))
        if case == "offset past the end":
            fetch(run, topic, 0, 50)
        elif case == "offset at the end":
            fetch(run, topic, 0, 10)
        elif case == "negative offset":
            fetch(run, topic, 0, -3)
        elif case == "below log start":
            run.call("DeleteRecords", 2, {"topics": [{"name": topic, "partitions": [
                {"partition_index": 0, "offset": 5}]}], "timeout_ms": 5000})
            fetch(run, topic, 0, 2)
        elif case == "unknown partition":
            fetch(run, topic, 7, 0, version=12)
        elif case == "unknown topic":
            fetch(run, run.name("missing"), 0, 0, version=12)
        elif case == "unknown topic id":
            fetch(run, topic, 0, 0, version=17, topics=[{"topic": "", "topic_id": uuid.uuid4(), "partitions": [
                {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0, "last_fetched_epoch": -1,
                 "log_start_offset": -1, "partition_max_bytes": 1000}]}])
        elif case == "partition max bytes smaller than a batch":
            fetch(run, topic, 0, 0, partition_max_bytes=10)
        elif case == "max bytes across partitions":
            produce(run, topic, 1, records(5, size=200))
            md_id = topic_id(run, topic)
            fetch(run, topic, version=17, max_bytes=1500, topics=[{"topic": topic, "topic_id": md_id, "partitions": [
                {"partition": p, "current_leader_epoch": -1, "fetch_offset": 0, "last_fetched_epoch": -1,
                 "log_start_offset": -1, "partition_max_bytes": 1 << 20} for p in (0, 1)]}])
        elif case == "stale leader epoch":
            fetch(run, topic, 0, 0, current_leader_epoch=-5 + 4)       # epoch -1 means "none"; 0 is the leader's
            fetch(run, topic, 0, 0, current_leader_epoch=0, label="current epoch")
        elif case == "future leader epoch":
            fetch(run, topic, 0, 0, current_leader_epoch=7)
        elif case == "diverging epoch":
            fetch(run, topic, 0, 10, last_fetched_epoch=3)
            fetch(run, topic, 0, 4, last_fetched_epoch=0, label="same epoch")
        elif case == "min bytes waits then answers":
            fetch(run, topic, 0, 10, max_wait_ms=300, min_bytes=1)
        elif case == "read committed without transactions":
            fetch(run, topic, 0, 0, isolation=1)

    differ.check(request.node.name, scenario)


def test_fetch_sessions(differ, request):
    """Incremental fetch sessions: create, add nothing new, new data, bad epochs, unknown ids, forget, close."""
    def scenario(run):
        topic = run.name()
        run.create_topic(topic, 2)
        produce(run, topic, 0, records(2))
        tid = topic_id(run, topic)

        def parts(*pairs):
            return [{"topic": topic, "topic_id": tid, "partitions": [
                {"partition": p, "current_leader_epoch": -1, "fetch_offset": off, "last_fetched_epoch": -1,
                 "log_start_offset": -1, "partition_max_bytes": 1 << 20} for p, off in pairs]}]

        full = fetch(run, topic, session_id=0, session_epoch=0, topics=parts((0, 0), (1, 0)), label="new session")
        sid = full.session_id
        fetch(run, topic, session_id=sid, session_epoch=1, topics=[], label="incremental, nothing new")
        produce(run, topic, 1, records(1))
        fetch(run, topic, session_id=sid, session_epoch=2, topics=[], label="incremental, new data")
        fetch(run, topic, session_id=sid, session_epoch=9, topics=[], label="wrong epoch")
        fetch(run, topic, session_id=sid + 12345, session_epoch=1, topics=[], label="unknown session")
        fetch(run, topic, session_id=sid, session_epoch=3, topics=parts((0, 2)),
              forgotten=[{"topic": topic, "topic_id": tid, "partitions": [1]}], label="forget partition 1")
        fetch(run, topic, session_id=sid, session_epoch=-1, topics=parts((0, 2)), label="close the session")
        fetch(run, topic, session_id=sid, session_epoch=4, topics=[], label="after close")
        fetch(run, topic, session_id=0, session_epoch=-1, topics=parts((0, 0)), label="sessionless")

    differ.check(request.node.name, scenario)


# -- ListOffsets, DeleteRecords, OffsetForLeaderEpoch --------------------------------------------------------------

SPECIAL = {-1: "latest", -2: "earliest", -3: "max timestamp", -4: "earliest local", -5: "latest tiered",
           -6: "earliest pending upload"}


@pytest.mark.parametrize("timestamp", list(SPECIAL) + [TS - 5, TS, TS + 2, TS + 6, TS + 100])
def test_list_offsets_timestamps(differ, request, timestamp):
    def scenario(run):
        topic = run.name()
        run.create_topic(topic)
        list_offsets(run, topic, timestamp, label="empty log")
        produce(run, topic, 0, [{"key": b"a", "value": b"1", "timestamp": TS},
                                {"key": b"b", "value": b"2", "timestamp": TS + 5},
                                {"key": b"c", "value": b"3", "timestamp": TS + 2}])
        produce(run, topic, 0, records(2, start=3))
        list_offsets(run, topic, timestamp, label="three batches")

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("version", range(1, 12))
def test_list_offsets_each_version(differ, request, version):
    def scenario(run):
        topic = run.name()
        run.create_topic(topic)
        produce(run, topic, 0, records(3))
        for ts in (-1, -2, -3, TS + 1):
            try:
                list_offsets(run, topic, ts, version=version)
            except Exception as exc:            # a timestamp this version cannot carry
                run.see(f"ListOffsets {ts}", f"refused: {type(exc).__name__}")

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("case", ["unknown topic", "unknown partition", "stale epoch", "future epoch",
                                  "read committed"])
def test_list_offsets_errors(differ, request, case):
    def scenario(run):
        topic = run.name()
        run.create_topic(topic)
        produce(run, topic, 0, records(2))
        if case == "unknown topic":
            list_offsets(run, run.name("missing"), -1)
        elif case == "unknown partition":
            list_offsets(run, topic, -1, partition=4)
        elif case == "stale epoch":
            list_offsets(run, topic, -1, current_leader_epoch=0)
        elif case == "future epoch":
            list_offsets(run, topic, -1, current_leader_epoch=3)
        elif case == "read committed":
            list_offsets(run, topic, -1, isolation=1)

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("case", ["to an offset", "to the high watermark", "past the high watermark",
                                  "backwards", "unknown topic", "unknown partition", "negative offset",
                                  "two partitions"])
def test_delete_records(differ, request, case):
    def scenario(run):
        topic = run.name()
        run.create_topic(topic, 2)
        produce(run, topic, 0, records(3))
        produce(run, topic, 0, records(3, start=3))

        def delete(offset, partition=0, name=topic, label="DeleteRecords"):
            run.call("DeleteRecords", 2, {"topics": [{"name": name, "partitions": [
                {"partition_index": partition, "offset": offset}]}], "timeout_ms": 5000}, label=label)
        if case == "to an offset":
            delete(4)
        elif case == "to the high watermark":
            delete(-1)
        elif case == "past the high watermark":
            delete(7)
        elif case == "backwards":
            delete(4)
            delete(2, label="backwards")
        elif case == "unknown topic":
            delete(1, name=run.name("missing"))
        elif case == "unknown partition":
            delete(1, partition=5)
        elif case == "negative offset":
            delete(-5)
        elif case == "two partitions":        # Kafka answers partitions in its HashMap's order: compare sorted
            r = run.call("DeleteRecords", 2, {"topics": [{"name": topic, "partitions": [
                {"partition_index": 0, "offset": 2}, {"partition_index": 1, "offset": 0}]}], "timeout_ms": 5000},
                see=False)
            run.see("DeleteRecords", sorted([p.partition_index, p.low_watermark, p.error_code]
                                             for p in r.topics[0].partitions))
        list_offsets(run, topic, -2, label="earliest after")
        fetch(run, topic, 0, 0, label="fetch from 0 after")

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("version", [2, 3, 4])
def test_offset_for_leader_epoch(differ, request, version):
    def scenario(run):
        topic = run.name()
        run.create_topic(topic)
        produce(run, topic, 0, records(3))
        run.call("OffsetForLeaderEpoch", version, {"replica_id": -1, "topics": [{"topic": topic, "partitions": [
            {"partition": 0, "current_leader_epoch": -1, "leader_epoch": e} for e in (0, 1, 5)] + [
            {"partition": 9, "current_leader_epoch": -1, "leader_epoch": 0},
            {"partition": 0, "current_leader_epoch": 4, "leader_epoch": 0}]},
            {"topic": run.name("missing"), "partitions": [
                {"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0}]}]})

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("case", ["small segments", "old timestamps roll"])
def test_a_fetch_reads_one_segment(differ, request, case):
    """Kafka's LocalLog.read answers a fetch from the segment holding the fetch offset only."""
    def scenario(run):
        topic = run.name()
        if case == "small segments":     # internal.segment.bytes: Kafka's test-only override of segment.bytes
            run.create_topic(topic, config={"internal.segment.bytes": "1000"})
            for i in range(4):
                produce(run, topic, 0, records(2, start=2 * i, size=200), label=f"batch {i}")
        else:                            # a record older than segment.ms rolls the segment before it
            run.create_topic(topic)
            produce(run, topic, 0, records(2), label="old")
            produce(run, topic, 0, [{"key": b"n", "value": b"new", "timestamp": NOW_TS}],
                    label="new")
            produce(run, topic, 0, records(1, start=5), label="old again")
        fetch(run, topic, 0, 0, label="from 0")
        fetch(run, topic, 0, 2, label="from 2")
        fetch(run, topic, 0, 4, label="from 4")

    differ.check(request.node.name, scenario)
