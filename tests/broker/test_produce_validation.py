"""What Produce checks and changes in a batch, as Kafka's LogValidator does, and what it keeps in memory. Each test
fails if its rule goes."""

from __future__ import annotations

import pytest
from support.broker_calls import call

from kafkamock import codec, records
from kafkamock.broker import Close, Cluster, Request, Respond
from kafkamock.broker.errors import ErrorCode as E
from kafkamock.server.connection import read_request


def produce(broker, data, topic="t", acks=-1, version=9):
    response = call(broker, "Produce", version, {"acks": acks, "timeout_ms": 1000, "topic_data": [
        {"name": topic, "partition_data": [{"index": 0, "records": data}]}]})
    return response if response is None or isinstance(response, Close) else response.responses[0].partition_responses[0]


def stored(broker, topic="t"):
    return [records.decode_batches(entry["data"])[0] for entry in broker.control.stored_batches(topic, 0)]


def test_a_batch_whose_record_count_disagrees_with_its_offset_range_is_refused(broker, caplog):
    # Two records at offset deltas 0 and 2: lastOffsetDelta 2 claims three offsets for a count of two.
    gap = records.encode_batch([{"value": b"a", "timestamp": 1, "offset": 0}, {"value": b"b", "timestamp": 1,
                                                                              "offset": 2}])
    result = produce(broker, gap)
    # As Kafka, no message on the wire (only KIP-467 record errors carry one) and the log start offset; the
    # reason goes to the broker's log.
    assert (result.error_code, result.error_message, result.log_start_offset) == (E.INVALID_RECORD, None, 0)
    assert "Inconsistent batch offset range [0, 2] and count of records 2" in caplog.text
    assert broker.metadata.partition("t", 0).log.log_end_offset == 0


@pytest.mark.parametrize("compression", ["none", "gzip", "zstd"])
def test_compacted_topics_refuse_records_without_a_key(broker, compression):
    broker.metadata.create_topic("c", 1, 1, {"cleanup.policy": "compact"})
    keyless = records.encode_batch([{"key": b"k", "value": b"1", "timestamp": 1},
                                    {"key": None, "value": b"2", "timestamp": 1}], compression=compression)
    result = produce(broker, keyless, topic="c")
    assert result.error_code == E.INVALID_RECORD and "without key" in result.error_message
    # KIP-467: the keyless record is named by its index in the batch.
    assert [(e.batch_index, e.batch_index_error_message) for e in result.record_errors] == [
        (1, "Compacted topic cannot accept message without key in topic partition c-0")]
    keyed = records.encode_batch([{"key": b"k", "value": b"1", "timestamp": 1}], compression=compression)
    assert produce(broker, keyed, topic="c").error_code == E.NONE
    assert produce(broker, records.encode_batch([{"key": None, "value": b"x", "timestamp": 1}])).error_code == E.NONE


@pytest.mark.parametrize(("topic_codec", "sent", "kept"), [
    ("gzip", "none", "gzip"), ("uncompressed", "zstd", "none"), ("lz4", "snappy", "lz4"),
    ("zstd", "gzip", "zstd"), ("producer", "snappy", "snappy"), ("gzip", "gzip", "gzip"),
])
def test_the_topic_compression_type_is_applied(clock, topic_codec, sent, kept):
    broker = Cluster(clock=clock)
    broker.metadata.create_topic("t", 1, 1, {"compression.type": topic_codec})
    data = records.encode_batch([{"key": b"k%d" % i, "value": b"value %d" % i * 20, "timestamp": 1_000 + i,
                                  "headers": [("h", b"%d" % i)]} for i in range(5)], compression=sent,
                                producer_id=7, producer_epoch=3, base_sequence=0)
    assert produce(broker, data).error_code == E.NONE
    (batch,) = stored(broker)
    assert batch.compression == kept
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (7, 3, 0)
    assert [(r.offset, r.key, r.value, r.timestamp, r.headers) for r in batch.records] == [
        (i, b"k%d" % i, b"value %d" % i * 20, 1_000 + i, [("h", b"%d" % i)]) for i in range(5)]
    # The sequence numbers still line up: a retry of the same (uncompressed-as-sent) batch is a duplicate.
    retry = produce(broker, data)
    assert (retry.error_code, retry.base_offset) == (E.NONE, 0)
    assert broker.metadata.partition("t", 0).log.log_end_offset == 5


def test_a_failed_acks_zero_produce_closes_the_connection(broker):
    ok = produce(broker, records.encode_batch([{"value": b"a", "timestamp": 1}]), acks=0)
    assert ok is None                                                  # acks=0: no response
    closed = produce(broker, records.encode_batch([{"value": b"a", "timestamp": 1}]), topic="missing", acks=0)
    assert isinstance(closed, Close) and "UNKNOWN_TOPIC_OR_PARTITION" in closed.reason


def _frame(partitions: dict[int, bytes]) -> bytearray:
    body = {"acks": -1, "timeout_ms": 1000, "topic_data": [{"name": "t", "partition_data": [
        {"index": p, "records": data} for p, data in partitions.items()]}]}
    return bytearray(codec.encode_request("Produce", 9, 1, "test", body))


def test_a_stored_batch_keeps_its_frame_alive_only_when_it_is_large_and_most_of_it(clock):
    broker = Cluster(clock=clock)
    broker.metadata.create_topic("t", 2, 1)
    big = records.encode_batch([{"value": bytes(50_000), "timestamp": 1}])
    # One partition: the batch is the frame (less a small header): kept as a view, no copy.
    frame = _frame({0: big})
    header, body = read_request(frame)
    assert isinstance(broker.handle(Request(0, 9, 1, "test", body)), Respond)
    kept = broker.metadata.partition("t", 0).log.segments[0].batches[0]
    assert isinstance(kept, memoryview) and kept.obj is frame
    # Two big partitions in one frame: each batch gets its own buffer, so retention can free them one by one.
    frame = _frame({0: big, 1: big})
    header, body = read_request(frame)
    assert isinstance(broker.handle(Request(0, 9, 1, "test", body)), Respond)
    for p, i in ((0, 1), (1, 0)):
        kept = broker.metadata.partition("t", p).log.segments[0].batches[i]
        assert not (isinstance(kept, memoryview) and kept.obj is frame)
        assert len(kept) == len(big)
    # A small batch alone in its frame: copied, as a view of it would take more memory than the copy.
    small = records.encode_batch([{"value": b"v", "timestamp": 1}])
    frame = _frame({0: small})
    header, body = read_request(frame)
    assert isinstance(broker.handle(Request(0, 9, 1, "test", body)), Respond)
    kept = broker.metadata.partition("t", 0).log.segments[0].batches[-1]
    assert isinstance(kept, bytearray) and bytes(kept[16:]) == bytes(small[16:])   # its offset and epoch set, the rest kept
