"""The broker core without sockets: requests go through the codec both ways, time is a ManualClock."""

from __future__ import annotations

import gc
import tracemalloc
import uuid

from support.broker_calls import call

from kafkamock import codec, records
from kafkamock.broker import Cluster, Waiter
from kafkamock.broker.errors import ErrorCode as E


def complete(waiter, final=False):
    body = waiter.check(final)
    return None if body is None else codec.decode("FetchResponse", 12, codec.encode("FetchResponse", 12, body))


def stored_bytes(broker, topic="t", partition=0) -> bytes:
    return b"".join(bytes(b) for b in broker.metadata.partition(topic, partition).log.read(0, 10**9))


def produce(broker, batch: bytes, topic="t", partition=0, acks=-1, version=9):
    response = call(broker, "Produce", version, {"acks": acks, "timeout_ms": 1000, "topic_data": [
        {"name": topic, "partition_data": [{"index": partition, "records": batch}]}]})
    return None if response is None else response.responses[0].partition_responses[0]


def fetch(broker, offset, topic="t", partition=0, *, max_wait=0, min_bytes=1, max_bytes=10_000_000,
          partition_max=1_000_000, session_id=0, epoch=-1, version=12, forgotten=()):
    return call(broker, "Fetch", version, {
        "replica_id": -1, "max_wait_ms": max_wait, "min_bytes": min_bytes, "max_bytes": max_bytes,
        "session_id": session_id, "session_epoch": epoch,
        "topics": [{"topic": topic, "partitions": [
            {"partition": partition, "fetch_offset": offset, "partition_max_bytes": partition_max}]}] if offset is not None
        else [],
        "forgotten_topics_data": [{"topic": topic, "partitions": list(forgotten)}] if forgotten else [],
    })


def values(fetch_response):
    return [(r.offset, r.value) for t in fetch_response.responses for p in t.partitions
            for b in records.decode_batches(p.records) for r in b.records]


def batch(*vals, **kw):
    return records.encode_batch([{"value": v, "timestamp": 1_000 + i} for i, v in enumerate(vals)], **kw)


def test_api_versions_advertises_only_what_is_implemented(broker):
    keys = {k.api_key for k in call(broker, "ApiVersions", 3, {"client_software_name": "t",
                                                                  "client_software_version": "1"}).api_keys}
    assert {0, 1, 2, 3, 10, 18, 19, 22} <= keys
    assert {8, 9, 11, 12, 13, 14, 15, 16, 42, 47, 68, 69} <= keys       # the group APIs
    assert {24, 25, 26, 27, 28, 61, 65, 66} <= keys                     # the transaction APIs
    assert {76, 77, 78, 79} <= keys                                     # share groups (KIP-932)
    assert call(broker, "ApiVersions", 3, {"client_software_name": "bad name!",
                                           "client_software_version": "1"}).error_code == E.INVALID_REQUEST


def test_api_versions_answers_each_cluster_with_what_it_lists_as_it_changes():
    """The handler answers again with the answer it last made while the cluster's lists are the very same objects
    (handlers/api_versions.py): clusters of one process that list differently, asked in turn, each get their own;
    a feature level changed by UpdateFeatures or by a restore shows at once."""
    def asked(cluster):
        answer = call(cluster, "ApiVersions", 3, {"client_software_name": "t", "client_software_version": "1"})
        return ({k.api_key for k in answer.api_keys}, answer.finalized_features_epoch,
                {f.name: f.max_version_level for f in answer.finalized_features})

    both, classic = Cluster(), Cluster({"group.coordinator.rebalance.protocols": "classic"})
    for _ in range(2):
        assert 68 in asked(both)[0] and 69 in asked(both)[0]
        assert 68 not in asked(classic)[0] and 69 not in asked(classic)[0]
    level = asked(both)[2]["transaction.version"]
    both.features.restore({"levels": {"transaction.version": level - 1}, "epoch": 1})
    assert asked(both)[2]["transaction.version"] == level - 1
    assert asked(classic)[2]["transaction.version"] == level
    call(both, "UpdateFeatures", 1, {"timeout_ms": 1000, "feature_updates": [
        {"feature": "transaction.version", "max_version_level": level, "upgrade_type": 1}], "validate_only": False})
    assert asked(both)[1:] == (2, {**asked(classic)[2], "transaction.version": level})


def test_produce_assigns_offsets_by_rewriting_the_header_only(broker):
    first, second = batch(b"a", b"b"), batch(b"c", compression="zstd")
    assert produce(broker, first).base_offset == 0
    assert produce(broker, second).base_offset == 2
    stored = stored_bytes(broker)
    assert stored[12:16] == b"\x00\x00\x00\x00"            # partition leader epoch 0 written in
    assert stored[16:len(first)] == first[16:]              # the rest of the bytes untouched
    assert values(fetch(broker, 0)) == [(0, b"a"), (1, b"b"), (2, b"c")]


def test_produce_errors(broker):
    corrupt = bytearray(batch(b"x"))
    corrupt[-1] ^= 1
    assert produce(broker, bytes(corrupt)).error_code == E.CORRUPT_MESSAGE
    # cut short: no whole batch to Kafka 4.3.1's iterator, INVALID_RECORD (as the differential suite shows)
    assert produce(broker, batch(b"x")[:-3]).error_code == E.INVALID_RECORD
    assert produce(broker, batch(b"x", magic=1)).error_code == E.INVALID_RECORD
    assert produce(broker, batch(b"x") + batch(b"y")).error_code == E.INVALID_RECORD
    assert produce(broker, batch(b"x"), topic="nope").error_code == E.UNKNOWN_TOPIC_OR_PARTITION
    assert produce(broker, batch(b"x"), partition=7).error_code == E.UNKNOWN_TOPIC_OR_PARTITION
    assert produce(broker, batch(b"x"), acks=2).error_code == E.INVALID_REQUIRED_ACKS
    broker.metadata.create_topic("small", 1, 1, {"max.message.bytes": 100})
    assert produce(broker, batch(b"x" * 200), topic="small").error_code == E.MESSAGE_TOO_LARGE
    assert broker.metadata.partition("t", 0).log.log_end_offset == 0  # nothing was written


def test_a_config_altered_after_a_produce_applies_to_the_next_one(broker):
    """What a produce checks is read once per topic and kept until a config changes: a topic's and a broker's
    dynamic change both apply to the very next batch."""
    def alter(resource_type, name, config, value):
        answer = call(broker, "IncrementalAlterConfigs", 1, {"resources": [
            {"resource_type": resource_type, "resource_name": name, "configs": [
                {"name": config, "config_operation": 0 if value is not None else 1, "value": value}]}],
            "validate_only": False})
        assert [r.error_code for r in answer.responses] == [E.NONE]

    assert produce(broker, batch(b"x" * 200)).error_code == E.NONE
    alter(2, "t", "max.message.bytes", "100")
    assert produce(broker, batch(b"x" * 200)).error_code == E.MESSAGE_TOO_LARGE
    alter(2, "t", "max.message.bytes", None)                 # back to the broker's message.max.bytes
    assert produce(broker, batch(b"x" * 200)).error_code == E.NONE
    alter(4, "1", "message.max.bytes", "100")                # a broker's default, dynamically
    assert produce(broker, batch(b"x" * 200)).error_code == E.MESSAGE_TOO_LARGE
    alter(2, "t", "message.timestamp.type", "LogAppendTime")
    alter(4, "1", "message.max.bytes", None)
    assert produce(broker, batch(b"y")).log_append_time_ms == broker.now_ms()


def test_acks_zero_gets_no_response_but_appends(broker):
    assert produce(broker, batch(b"x"), acks=0) is None
    assert values(fetch(broker, 0)) == [(0, b"x")]


def test_idempotent_sequences(broker):
    def idem(seq, epoch=0, *vals):
        return produce(broker, batch(*(vals or (b"v",)), producer_id=1000, producer_epoch=epoch, base_sequence=seq))

    assert idem(0, 0, b"a", b"b").base_offset == 0
    assert idem(2, 0, b"c").base_offset == 2
    retry = idem(0, 0, b"a", b"b")                              # a retry of the first batch
    assert retry.error_code == E.NONE and retry.base_offset == 0
    assert broker.metadata.partition("t", 0).log.log_end_offset == 3  # written once
    assert idem(5).error_code == E.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert idem(3, 1).error_code == E.OUT_OF_ORDER_SEQUENCE_NUMBER   # a new epoch starts at 0
    assert idem(0, 1).base_offset == 3
    assert idem(1, 0).error_code == E.INVALID_PRODUCER_EPOCH          # the old epoch is fenced
    # A producer the partition has no state for (its batches gone with retention, say) may start anywhere, as in
    # Kafka's ProducerAppendInfo.checkSequence; from then on it is checked.
    unknown = produce(broker, batch(b"v", producer_id=2000, producer_epoch=0, base_sequence=4))
    assert unknown.error_code == E.NONE
    assert produce(broker, batch(b"v", producer_id=2000, producer_epoch=0, base_sequence=7)).error_code == \
        E.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_fetch_from_mid_batch_and_out_of_range(broker):
    produce(broker, batch(b"a", b"b", b"c"))
    produce(broker, batch(b"d"))
    assert values(fetch(broker, 1))[0] == (0, b"a")              # the containing batch, whole
    assert values(fetch(broker, 3)) == [(3, b"d")]
    empty = fetch(broker, 4).responses[0].partitions[0]          # at the log end: nothing, no error
    assert empty.error_code == E.NONE and empty.records == b"" and empty.high_watermark == 4
    assert fetch(broker, 5).responses[0].partitions[0].error_code == E.OFFSET_OUT_OF_RANGE
    assert fetch(broker, 0, topic="missing").responses[0].partitions[0].error_code == E.UNKNOWN_TOPIC_OR_PARTITION


def test_fetch_byte_limits_return_at_least_one_batch(broker):
    for _i in range(5):
        produce(broker, batch(bytes(100)))
    one = len(batch(bytes(100)))
    assert len(values(fetch(broker, 0, partition_max=1))) == 1     # KIP-74: the first batch even if too big
    assert len(values(fetch(broker, 0, partition_max=one * 3))) == 3
    assert len(values(fetch(broker, 0, max_bytes=one * 2))) == 2


def test_long_poll_waits_for_data_and_answers_at_the_deadline(broker, clock):
    pending = fetch(broker, 0, max_wait=500)
    assert isinstance(pending, Waiter) and pending.deadline_ms == clock.now_ms() + 500
    assert broker.next_deadline() == clock.now_ms() + 500
    answered = []
    pending.on_done = answered.append
    produce(broker, batch(b"late"))                                # the append completes the waiter
    assert len(answered) == 1 and pending.done
    assert values(codec.decode("FetchResponse", 12, codec.encode("FetchResponse", 12, answered[0].body))) == \
        [(0, b"late")]
    idle = fetch(broker, 1, max_wait=500)
    idle.on_done = answered.append
    clock.advance(499)
    broker.tick()
    assert len(answered) == 1                                      # not yet
    clock.advance(1)
    broker.tick()                                                  # the deadline: an empty answer
    assert len(answered) == 2 and values(codec.decode("FetchResponse", 12, codec.encode(
        "FetchResponse", 12, answered[1].body))) == []


def test_min_bytes_zero_or_max_wait_zero_answer_at_once(broker):
    for args in ({"max_wait": 500, "min_bytes": 0}, {"max_wait": 0, "min_bytes": 1}):
        response = fetch(broker, 0, **args)
        assert not isinstance(response, Waiter) and values(response) == []


def test_min_bytes_holds_the_answer_until_enough_arrives(broker):
    pending = fetch(broker, 0, max_wait=1000, min_bytes=300)
    produce(broker, batch(bytes(10)))
    assert complete(pending) is None
    produce(broker, batch(bytes(400)))
    assert len(values(complete(pending))) == 2


def test_incremental_fetch_sessions(broker):
    produce(broker, batch(b"a"))
    full = fetch(broker, 0, epoch=0)
    session = full.session_id
    assert session > 0 and values(full) == [(0, b"a")]
    quiet = fetch(broker, 1, session_id=session, epoch=1)          # moved on, nothing new: no partitions listed
    assert quiet.error_code == E.NONE and quiet.responses == []
    produce(broker, batch(b"b"))
    moved = fetch(broker, None, session_id=session, epoch=2)       # the session remembers offset 1
    assert values(moved) == [(1, b"b")]
    assert fetch(broker, None, session_id=session, epoch=2).error_code == E.INVALID_FETCH_SESSION_EPOCH
    assert fetch(broker, None, session_id=999, epoch=1).error_code == E.FETCH_SESSION_ID_NOT_FOUND
    produce(broker, batch(b"c"))
    forgot = fetch(broker, None, session_id=session, epoch=3, forgotten=[0])
    assert forgot.responses == []                                  # the partition left the session
    closed = fetch(broker, 0, session_id=session, epoch=-1)        # epoch -1 closes it: a full fetch
    assert closed.session_id == 0 and len(values(closed)) == 3
    assert fetch(broker, None, session_id=session, epoch=4).error_code == E.FETCH_SESSION_ID_NOT_FOUND


def test_fetch_by_topic_id(broker):
    produce(broker, batch(b"a"))
    topic_id = broker.metadata.topics["t"].topic_id
    response = call(broker, "Fetch", 13, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 10**6,
                                          "session_id": 0, "session_epoch": -1, "topics": [
                                              {"topic_id": topic_id, "partitions": [
                                                  {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 10**6}]}]})
    assert values(response) == [(0, b"a")] and response.responses[0].topic_id == topic_id


def test_log_append_time_topics(broker, clock):
    broker.metadata.create_topic("lat", 1, 1, {"message.timestamp.type": "LogAppendTime"})
    result = produce(broker, batch(b"a", b"b"), topic="lat")
    assert result.log_append_time_ms == clock.now_ms()
    (stored,) = records.decode_batches(stored_bytes(broker, "lat"))
    assert stored.timestamp_type == "LogAppendTime" and {r.timestamp for r in stored.records} == {clock.now_ms()}


def test_list_offsets(broker):
    produce(broker, records.encode_batch([{"value": b"a", "timestamp": 100}, {"value": b"b", "timestamp": 300},
                                          {"value": b"c", "timestamp": 200}]))

    def lookup(ts, version=8):
        p = call(broker, "ListOffsets", version, {"replica_id": -1, "topics": [
            {"name": "t", "partitions": [{"partition_index": 0, "timestamp": ts}]}]}).topics[0].partitions[0]
        return p.error_code, p.offset, p.timestamp

    assert lookup(-2) == (E.NONE, 0, -1)
    assert lookup(-1) == (E.NONE, 3, -1)
    assert lookup(-3) == (E.NONE, 1, 300)
    assert lookup(150) == (E.NONE, 1, 300)
    assert lookup(250) == (E.NONE, 1, 300)
    assert lookup(301) == (E.NONE, -1, -1)
    assert lookup(-3, version=6)[0] == E.UNSUPPORTED_VERSION


def test_retention_deletes_whole_segments(clock):
    # One batch per segment (segment.bytes is smaller than two batches): retention.ms goes segment by segment,
    # by each one's largest timestamp, first after log.initial.task.delay.ms, then every check interval.
    broker = Cluster({"log.retention.ms": 60_000, "log.initial.task.delay.ms": 1000,
                     "log.retention.check.interval.ms": 1000}, clock=clock)
    broker.metadata.create_topic("r", 1, 1, {"segment.bytes": 100})
    for _i in range(3):
        produce(broker, records.encode_batch([{"value": b"x" * 10, "timestamp": clock.now_ms()}]), topic="r")
        clock.advance(30_000)
    plog = broker.metadata.partition("r", 0).log
    assert len(plog.segments) == 3
    broker.tick()                    # segment 0 is 90 s old, segment 1 is 60 s old: only segment 0 goes
    assert plog.log_start_offset == 1 and len(plog.segments) == 2
    clock.advance(10**9)
    broker.tick()                    # everything expired: the log rolls, so nothing appended later is lost
    assert plog.log_start_offset == plog.log_end_offset == 3
    assert fetch(broker, 0, topic="r").responses[0].partitions[0].error_code == E.OFFSET_OUT_OF_RANGE
    assert produce(broker, records.encode_batch([{"value": b"y", "timestamp": clock.now_ms()}]), topic="r") \
        .base_offset == 3


def test_metadata_auto_creation(clock):
    broker = Cluster(clock=clock)
    response = call(broker, "Metadata", 12, {"topics": [{"name": "auto"}], "allow_auto_topic_creation": True})
    # As Kafka 4: created, and the request that created it answered UNKNOWN_TOPIC_OR_PARTITION; the next sees it.
    assert response.topics[0].error_code == E.UNKNOWN_TOPIC_OR_PARTITION and "auto" in broker.metadata.topics
    response = call(broker, "Metadata", 12, {"topics": [{"name": "auto"}], "allow_auto_topic_creation": True})
    assert response.topics[0].error_code == E.NONE
    assert call(broker, "Metadata", 12, {"topics": [{"name": "no"}], "allow_auto_topic_creation": False}) \
        .topics[0].error_code == E.UNKNOWN_TOPIC_OR_PARTITION
    assert call(broker, "Metadata", 12, {"topics": [{"name": "bad/name"}], "allow_auto_topic_creation": True}) \
        .topics[0].error_code == E.INVALID_TOPIC_EXCEPTION
    off = Cluster({"auto.create.topics.enable": "false"}, clock=clock)
    assert call(off, "Metadata", 12, {"topics": [{"name": "x"}], "allow_auto_topic_creation": True}) \
        .topics[0].error_code == E.UNKNOWN_TOPIC_OR_PARTITION
    topic_id = broker.metadata.topics["auto"].topic_id
    by_id = call(broker, "Metadata", 12, {"topics": [{"name": "", "topic_id": topic_id}]}).topics[0]
    assert (by_id.error_code, by_id.name, by_id.topic_id) == (E.NONE, "auto", topic_id)   # the name is ignored
    missing = call(broker, "Metadata", 12, {"topics": [{"name": "", "topic_id": uuid.uuid4()}]}).topics[0]
    assert missing.error_code == E.UNKNOWN_TOPIC_ID and missing.name is None
    everything = call(broker, "Metadata", 12, {"topics": None})
    assert [t.name for t in everything.topics] == ["auto"] and everything.cluster_id == broker.metadata.cluster_id
    assert call(broker, "Metadata", 0, {"topics": []}).topics[0].name == "auto"   # v0: empty means all


def test_create_topics(clock):
    broker = Cluster(clock=clock)

    def create(topics, version=7, validate_only=False):
        return call(broker, "CreateTopics", version, {"topics": topics, "timeout_ms": 1000,
                                                      "validate_only": validate_only}).topics

    ok = create([{"name": "a", "num_partitions": 3, "replication_factor": 1,
                  "configs": [{"name": "retention.ms", "value": "1000"}]}])[0]
    assert ok.error_code == E.NONE and ok.num_partitions == 3 and ok.topic_id == broker.metadata.topics["a"].topic_id
    assert {c.name: c.value for c in ok.configs}["retention.ms"] == "1000"
    assert create([{"name": "a", "num_partitions": 1, "replication_factor": 1}])[0].error_code == E.TOPIC_ALREADY_EXISTS
    assert create([{"name": "b", "num_partitions": 1, "replication_factor": 3}])[0].error_code == \
        E.INVALID_REPLICATION_FACTOR
    assert create([{"name": "c", "num_partitions": 0, "replication_factor": 1}])[0].error_code == E.INVALID_PARTITIONS
    bad = create([{"name": "d", "num_partitions": 1, "replication_factor": 1,
                   "configs": [{"name": "retention.mss", "value": "1"}]}])[0]
    assert bad.error_code == E.INVALID_CONFIG and "retention.mss" in bad.error_message
    assert create([{"name": "e", "num_partitions": -1, "replication_factor": -1}], validate_only=True)[0] \
        .error_code == E.NONE
    assert "e" not in broker.metadata.topics
    dup = create([{"name": "f", "num_partitions": 1, "replication_factor": 1}] * 2)
    assert [(t.name, t.error_code, t.error_message) for t in dup] == [("f", E.INVALID_REQUEST, "Duplicate topic name.")]


def test_init_producer_id_and_find_coordinator(broker):
    first = call(broker, "InitProducerId", 4, {"transactional_id": None, "transaction_timeout_ms": 60000})
    second = call(broker, "InitProducerId", 4, {"transactional_id": None, "transaction_timeout_ms": 60000})
    assert first.error_code == E.NONE and second.producer_id == first.producer_id + 1 and first.producer_epoch == 0
    coordinator = call(broker, "FindCoordinator", 4, {"key_type": 0, "coordinator_keys": ["g"]}).coordinators[0]
    assert (coordinator.key, coordinator.node_id, coordinator.error_code) == ("g", broker.node_id, E.NONE)


def test_internal_appends_go_through_the_log_and_wake_fetches(broker, clock):
    produce(broker, batch(b"a"))
    waiting = fetch(broker, 1, max_wait=1000)
    answered = []
    waiting.on_done = answered.append
    partition = broker.metadata.partition("t", 0)
    marker = records.end_txn_marker_batch(True, producer_id=5, producer_epoch=0, coordinator_epoch=0,
                                          timestamp=clock.now_ms())
    assert broker.append_internal(partition, marker) == (1, 1)
    assert len(answered) == 1                              # the waiting fetch saw the marker at once
    (control,) = records.decode_batches(answered[0].body["responses"][0]["partitions"][0]["records"][0])
    assert control.is_control and control.base_offset == 1 and control.records[0].control_type == "COMMIT"


def test_flush_ms_and_flush_messages_make_appends_durable_on_time(clock):
    broker = Cluster(clock=clock)
    broker.metadata.create_topic("f", 1, 1, {"flush.ms": 1000})
    broker.metadata.create_topic("n", 1, 1, {"flush.messages": 3})
    f, n = broker.metadata.partition("f", 0).log, broker.metadata.partition("n", 0).log
    produce(broker, batch(b"a"), topic="f")
    produce(broker, batch(b"a", b"b"), topic="n")
    assert (f.recovery_point, n.recovery_point) == (0, 0)
    produce(broker, batch(b"c"), topic="n")                       # the third message: flushed at once
    assert n.recovery_point == 3
    clock.advance(999)
    broker.tick()
    assert f.recovery_point == 0
    clock.advance(1)
    broker.tick()                                                 # flush.ms: the flusher runs that often
    assert f.recovery_point == 1


def test_one_request_saves_its_metadata_changes_once(clock, tmp_path):
    """A CreateTopics of many topics saves the metadata once, when it is done (each change used to save every
    topic, quadratic in the topics); the metadata log still counts one record per change, and a restart finds
    every topic."""
    from kafkamock.storage import DiskStorage

    storage = DiskStorage(tmp_path)
    saves = []
    save = storage.save_metadata
    storage.save_metadata = lambda snapshot: (saves.append(len(snapshot["topics"])), save(snapshot))[1]
    broker = Cluster(clock=clock, storage=storage)
    before, records_before = len(saves), broker.quorum.high_watermark

    call(broker, "CreateTopics", 4, {"timeout_ms": 5000, "topics": [
        {"name": "alone", "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}]})
    one_topic_records = broker.quorum.high_watermark - records_before
    answer = call(broker, "CreateTopics", 4, {"timeout_ms": 5000, "topics": [
        {"name": f"t{i}", "num_partitions": 3, "replication_factor": 1, "assignments": [], "configs": []}
        for i in range(20)]})

    assert [t.error_code for t in answer.topics] == [E.NONE] * 20
    assert saves[before:] == [1, 21]                  # one save per request, the second with all 21 topics
    assert broker.quorum.high_watermark - records_before == 21 * one_topic_records
    broker.close()
    again = Cluster(clock=clock, storage=DiskStorage(tmp_path))
    assert sorted(again.metadata.topics) == sorted(["alone", *(f"t{i}" for i in range(20))])


def test_a_memory_storage_handed_to_a_new_cluster_brings_back_its_metadata(clock):
    """A ``MemoryStorage`` given to a cluster keeps its metadata for the next cluster given it; the storage a cluster
    makes for itself (nothing else can hand it on) keeps none, so no metadata change pays for a snapshot."""
    from kafkamock.storage import MemoryStorage

    storage = MemoryStorage()
    broker = Cluster(clock=clock, storage=storage)
    call(broker, "CreateTopics", 4, {"timeout_ms": 5000, "topics": [
        {"name": "kept", "num_partitions": 3, "replication_factor": 1, "assignments": [], "configs": []}]})
    broker.close()
    again = Cluster(clock=clock, storage=storage)
    assert len(again.metadata.topics["kept"].partitions) == 3

    own = Cluster(clock=clock)
    own.metadata.create_topic("t", 3, 1)
    assert own.storage.metadata is None and Cluster(clock=clock).metadata.topics.get("t") is None


def test_a_partition_holding_one_record_costs_under_1200_bytes_of_heap():
    """Suites make thousands of partitions: a partition's log, segment and batch index, producer state, leader
    epochs and replica lists, with its one record, stay small (1,874 bytes before they were slimmed, 957 after)."""
    broker = Cluster()
    batch = records.encode_batch([{"value": b"v" * 20}])

    def make_and_produce(names: list[str]) -> None:
        call(broker, "CreateTopics", 7, {"topics": [{"name": n, "num_partitions": 100, "replication_factor": 1}
                                                    for n in names], "timeout_ms": 1000})
        call(broker, "Produce", 9, {"acks": -1, "timeout_ms": 1000, "topic_data": [
            {"name": n, "partition_data": [{"index": p, "records": batch} for p in range(100)]} for n in names]})

    make_and_produce(["warm-up"])
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        make_and_produce([f"t{i}" for i in range(10)])
        gc.collect()
        per_partition = (tracemalloc.get_traced_memory()[0] - before) / 1000
    finally:
        tracemalloc.stop()
    assert all(p.log.log_end_offset == 1 for i in range(10) for p in broker.metadata.topics[f"t{i}"].partitions)
    assert per_partition < 1200, per_partition
