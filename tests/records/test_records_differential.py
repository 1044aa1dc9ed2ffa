"""kafkamock.records against Kafka 4.3.1's own MemoryRecords (via the Java oracle).

- Uncompressed batches kafkamock writes (v2, idempotent, transactional, LogAppendTime, control markers, legacy
  v0/v1) are byte-identical to Kafka's.
- Batches Kafka writes, with every codec, decode in kafkamock to the records Kafka was given.
- Compressed batches kafkamock writes decode in Kafka to the same records.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.records_oracle import java_build, java_build_many, java_read_many, records_of

from kafkamock import records

pytestmark = pytest.mark.java

headers = st.lists(st.tuples(st.text(max_size=5), st.one_of(st.none(), st.binary(max_size=6))), max_size=2)
record = st.fixed_dictionaries({
    "key": st.one_of(st.none(), st.binary(max_size=12)),
    "value": st.one_of(st.none(), st.binary(max_size=80)),
    "timestamp": st.integers(0, 2**42),
    "headers": headers,
})
record_lists = st.lists(record, min_size=1, max_size=5)

batch_params = st.fixed_dictionaries({
    "base_offset": st.integers(0, 2**40),
    "partition_leader_epoch": st.integers(-1, 2**31 - 1),
    "producer": st.sampled_from(["plain", "idempotent", "transactional"]),
    "log_append_time": st.one_of(st.none(), st.integers(0, 2**42)),
})


def _kwargs(params: dict, recs: list[dict]) -> dict:
    producer = params["producer"]
    kw = {
        "base_offset": params["base_offset"], "partition_leader_epoch": params["partition_leader_epoch"],
        "records": [dict(r, offset=params["base_offset"] + 2 * i) for i, r in enumerate(recs)],
    }
    if producer != "plain":
        kw.update(producer_id=12345, producer_epoch=3, base_sequence=17)
    if producer == "transactional":
        kw["transactional"] = True
    if params["log_append_time"] is not None:
        kw.update(timestamp_type="LogAppendTime", log_append_time=params["log_append_time"])
    return kw


def _ours(kw: dict, **extra) -> bytes:
    kw = dict(kw, **extra)
    return records.encode_batch(kw.pop("records"), **kw)


def _plain(rs) -> list[tuple]:
    return [(r["offset"], r["timestamp"], r["key"], r["value"], list(r["headers"])) for r in rs]


def _decoded(data: bytes) -> list[tuple]:
    return [(r.offset, r.timestamp, r.key, r.value, r.headers) for b in records.decode_batches(data) for r in b.records]


@settings(max_examples=60)
@given(st.lists(st.tuples(batch_params, record_lists), min_size=1, max_size=8))
def test_uncompressed_v2_batches_are_byte_identical(kafka_oracle, cases):
    items = [_kwargs(params, recs) for params, recs in cases]
    java = java_build_many(kafka_oracle, items)
    for kw, expected in zip(items, java, strict=True):
        assert not isinstance(expected, Exception), expected
        assert _ours(kw) == expected


@settings(max_examples=40)
@given(st.lists(st.tuples(batch_params, record_lists, st.sampled_from(["none", "gzip", "snappy", "lz4", "zstd"])),
                min_size=1, max_size=6))
def test_kafka_batches_decode_in_kafkamock_and_ours_decode_in_kafka(kafka_oracle, cases):
    items = [dict(_kwargs(params, recs), compression=codec) for params, recs, codec in cases]
    java = java_build_many(kafka_oracle, items)
    ours = [_ours(kw) for kw in items]
    read_back = java_read_many(kafka_oracle, ours)
    for kw, theirs, seen in zip(items, java, read_back, strict=True):
        expected = _plain(kw["records"])
        if kw.get("log_append_time") is not None:
            expected = [(o, kw["log_append_time"], k, v, h) for o, _, k, v, h in expected]
        assert _decoded(theirs) == expected                      # Kafka's bytes, our decoder
        assert _plain(records_of(seen)) == expected              # our bytes, Kafka's decoder
        (batch,) = records.decode_batches(theirs)
        assert batch.compression == kw["compression"]
        assert batch.is_transactional == bool(kw.get("transactional"))
        assert (batch.producer_id, batch.base_sequence) == (kw.get("producer_id", -1), kw.get("base_sequence", -1))
        assert seen[0]["crc_valid"] and seen[0]["compression"] == kw["compression"]


@settings(max_examples=40)
@given(st.lists(st.tuples(record_lists, st.sampled_from([0, 1]), st.sampled_from(["none", "gzip", "snappy", "lz4"]),
                          st.integers(0, 2**40), st.booleans()), min_size=1, max_size=6))
def test_legacy_message_sets(kafka_oracle, cases):
    items = []
    for recs, magic, codec, base, log_append in cases:
        kw = {"magic": magic, "compression": codec, "base_offset": base,
              "records": [dict(r, headers=[], offset=base + i) for i, r in enumerate(recs)]}
        if magic == 1 and log_append:
            kw.update(timestamp_type="LogAppendTime", log_append_time=1_700_000_000_000)
        items.append(kw)
    java = java_build_many(kafka_oracle, items)
    ours = [_ours(kw) for kw in items]
    read_back = java_read_many(kafka_oracle, ours)
    for kw, theirs, mine, seen in zip(items, java, ours, read_back, strict=True):
        if kw["compression"] == "none":
            assert mine == theirs                                # uncompressed legacy: byte-identical
        expected = _plain(kw["records"])
        if kw["magic"] == 0:
            expected = [(o, -1, k, v, h) for o, _, k, v, h in expected]
        elif kw.get("log_append_time") is not None:
            expected = [(o, kw["log_append_time"], k, v, h) for o, _, k, v, h in expected]
        assert _decoded(theirs) == expected
        assert _plain(records_of(seen)) == expected
        assert all(b["crc_valid"] for b in seen)


@pytest.mark.parametrize("commit", [True, False])
def test_transaction_markers_are_byte_identical(kafka_oracle, commit):
    theirs = java_build(kafka_oracle, base_offset=99, producer_id=77, producer_epoch=4, partition_leader_epoch=6,
                        control={"type": "COMMIT" if commit else "ABORT", "coordinator_epoch": 12,
                                 "timestamp": 1_700_000_000_123})
    ours = records.end_txn_marker_batch(commit, producer_id=77, producer_epoch=4, coordinator_epoch=12,
                                        timestamp=1_700_000_000_123, base_offset=99, partition_leader_epoch=6)
    assert ours == theirs
    (batch,) = records.decode_batches(theirs)
    assert batch.is_control and batch.is_transactional
    assert batch.records[0].control_type == ("COMMIT" if commit else "ABORT")
    assert batch.records[0].control_value.coordinator_epoch == 12
