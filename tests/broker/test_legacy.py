"""The pre-4.0 protocol in the core (``kafkamock.legacy.protocol.enable``): Produce v0-2 up-converts magic 0/1
message sets to v2 batches, Fetch v0-3 down-converts to the reader's magic. Without the switch neither is served."""

from __future__ import annotations

import pytest
from support.broker_calls import call

from kafkamock import records
from kafkamock.broker import Cluster
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.legacy import down_convert, fetch_magic, up_convert

TS = 1_700_000_000_000


@pytest.fixture
def legacy(clock):
    b = Cluster({"kafkamock.legacy.protocol.enable": True}, clock=clock)
    b.metadata.create_topic("t", 1, 1)
    return b


def _recs(n: int, first: int = 0, ts: bool = True) -> list[dict]:
    return [{"key": b"k%d" % (first + i), "value": b"v%d" % (first + i), "timestamp": TS + first + i if ts else -1}
            for i in range(n)]


def _produce(broker, version: int, data: bytes, topic: str = "t"):
    response = call(broker, "Produce", version, {"acks": 1, "timeout_ms": 1000, "topic_data": [
        {"name": topic, "partition_data": [{"index": 0, "records": data}]}]})
    return response.responses[0].partition_responses[0]


def _fetch(broker, version: int, offset: int = 0):
    response = call(broker, "Fetch", version, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0,
                                               "topics": [{"topic": "t", "partitions": [
                                                   {"partition": 0, "fetch_offset": offset,
                                                    "partition_max_bytes": 1 << 20}]}]})
    return response.responses[0].partitions[0]


def test_the_switch_adds_produce_0_to_2_and_fetch_0_to_3(broker, legacy):
    assert broker.supported_versions()[0] == (3, 13) and broker.supported_versions()[1] == (4, 18)
    assert legacy.supported_versions()[0] == (0, 13) and legacy.supported_versions()[1] == (0, 18)
    # ApiVersions lists Produce from v0 either way (KAFKA-18659); Fetch only with the switch.
    assert broker.advertised_versions()[0] == (0, 13) and broker.advertised_versions()[1] == (4, 18)
    assert legacy.advertised_versions()[1] == (0, 18)


@pytest.mark.parametrize(("magic", "codec"), [(0, "none"), (0, "gzip"), (1, "none"), (1, "snappy"), (1, "lz4")])
def test_produce_v0_to_v2_stores_one_v2_batch(legacy, magic, codec):
    _produce(legacy, 2, records.encode_batch(_recs(1), magic=2))                       # offset 0, passes through
    message_set = records.encode_batch(_recs(3, 1, ts=magic == 1), magic=magic, compression=codec, base_offset=77)
    result = _produce(legacy, 0 if magic == 0 else 2, message_set)
    assert (result.error_code, result.base_offset) == (0, 1)
    stored = list(legacy.metadata.partition("t", 0).log.batches())
    assert len(stored) == 2
    (batch,) = records.decode_batches(stored[1].data)
    assert (batch.magic, batch.compression, batch.base_offset) == (2, codec, 1)
    assert [(r.offset, r.key, r.value, r.timestamp) for r in batch.records] == [
        (1 + i, r["key"], r["value"], r["timestamp"]) for i, r in enumerate(_recs(3, 1, ts=magic == 1))]


def test_uncompressed_messages_become_one_batch_and_topic_compression_applies(legacy):
    legacy.metadata.create_topic("gz", 1, 1, {"compression.type": "gzip"})
    message_set = records.encode_batch(_recs(4), magic=1)
    assert len(records.split_batches(message_set)[0]) == 4                           # four top-level messages
    assert _produce(legacy, 2, message_set, "gz").error_code == 0
    (stored,) = legacy.metadata.partition("gz", 0).log.batches()
    (batch,) = records.decode_batches(stored.data)
    assert (batch.compression, len(batch.records)) == ("gzip", 4)


def test_bad_legacy_message_sets_get_kafka_errors(legacy):
    good = bytearray(records.encode_batch(_recs(2), magic=1))
    corrupt = bytearray(good)
    corrupt[-1] ^= 0xFF                                                               # CRC no longer matches
    assert _produce(legacy, 2, bytes(corrupt)).error_code == ErrorCode.CORRUPT_MESSAGE
    assert _produce(legacy, 2, bytes(good[:-3])).error_code == ErrorCode.CORRUPT_MESSAGE   # partial message
    mixed = bytes(good) + records.encode_batch(_recs(1), magic=2)
    assert _produce(legacy, 2, mixed).error_code == ErrorCode.INVALID_RECORD
    assert _produce(legacy, 1, b"").error_code == ErrorCode.INVALID_RECORD
    assert legacy.metadata.partition("t", 0).log.log_end_offset == 0                  # nothing stored
    with pytest.raises(KafkaError):
        up_convert(None, "producer")


@pytest.mark.parametrize(("version", "magic"), [(0, 0), (1, 0), (2, 1), (3, 1)])
def test_fetch_v0_to_v3_reads_the_readers_magic(legacy, version, magic):
    assert fetch_magic(version) == magic
    _produce(legacy, 9, records.encode_batch([{**r, "headers": [("h", b"x")]} for r in _recs(2)], compression="gzip"))
    _produce(legacy, 9, records.encode_batch(_recs(1, 2)))
    partition = _fetch(legacy, version, offset=1)
    assert (partition.error_code, partition.high_watermark) == (0, 3)
    batches = records.decode_batches(bytes(partition.records))
    assert {b.magic for b in batches} == {magic}
    assert [b.compression for b in batches] == ["gzip", "none"]
    got = [(r.offset, r.key, r.timestamp, r.headers) for b in batches for r in b.records]
    assert got == [(i, b"k%d" % i, TS + i if magic else -1, []) for i in range(3)]       # headers dropped


def test_down_conversion_keeps_old_messages_and_drops_control_batches():
    old = records.encode_batch(_recs(2), magic=0, base_offset=0)
    marker = records.end_txn_marker_batch(True, producer_id=5, producer_epoch=0, coordinator_epoch=0,
                                          base_offset=2, timestamp=TS)
    new = records.encode_batch(_recs(1, 3), base_offset=3, timestamp_type="LogAppendTime", log_append_time=TS + 99)
    out = down_convert(old + marker + new, 1)
    assert out.startswith(old)                                                        # older than the reader: as is
    (converted,) = records.decode_batches(out[len(old):])
    assert (converted.magic, converted.timestamp_type, converted.records[0].timestamp) == (1, "LogAppendTime", TS + 99)
    assert converted.records[0].offset == 3


def test_fetch_v4_and_up_are_not_converted(legacy):
    _produce(legacy, 9, records.encode_batch(_recs(2)))
    assert {b.magic for b in records.decode_batches(bytes(_fetch(legacy, 4).records))} == {2}
