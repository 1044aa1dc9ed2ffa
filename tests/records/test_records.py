"""kafkamock.records: round trips, the construct reference layout, corruption, partial batches and the zero-copy view."""

from __future__ import annotations

import io
import struct
import zlib

import pytest
from construct import GreedyRange
from crc32c import crc32c
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkamock import records
from kafkamock.records import BatchView, CorruptRecordError, Record, find_batch, layout, split_batches

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]

headers = st.lists(st.tuples(st.text(max_size=6), st.one_of(st.none(), st.binary(max_size=8))), max_size=3)
record_values = st.fixed_dictionaries({
    "key": st.one_of(st.none(), st.binary(max_size=40)),
    "value": st.one_of(st.none(), st.binary(max_size=300)),
    "timestamp": st.integers(0, 2**41),
    "headers": headers,
})


def hx(text: str) -> bytes:
    return bytes.fromhex(" ".join(line.split("#")[0] for line in text.splitlines()))


@settings(max_examples=200)
@given(st.lists(record_values, min_size=1, max_size=8), st.sampled_from(CODECS), st.integers(0, 2**40),
       st.integers(0, 5), st.booleans())
def test_v2_round_trip(values, codec, base_offset, gap, transactional):
    with_offsets = [dict(v, offset=base_offset + i * (gap + 1)) for i, v in enumerate(values)]
    data = records.encode_batch(with_offsets, base_offset=base_offset, compression=codec, producer_id=42,
                                producer_epoch=3, base_sequence=7, transactional=transactional,
                                partition_leader_epoch=9)
    (batch,) = records.decode_batches(data)
    assert batch.compression == codec and batch.magic == 2 and batch.is_transactional is transactional
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (42, 3, 7)
    assert batch.partition_leader_epoch == 9 and batch.size == len(data)
    assert batch.last_offset == with_offsets[-1]["offset"]
    assert batch.max_timestamp == max(v["timestamp"] for v in values)
    assert [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in batch.records] == \
        [(v["offset"], v["timestamp"], v["key"], v["value"], v["headers"]) for v in with_offsets]


@settings(max_examples=100)
@given(st.lists(record_values.map(lambda v: dict(v, headers=[])), min_size=1, max_size=5),
       st.sampled_from(["none", "gzip", "snappy", "lz4"]), st.sampled_from([0, 1]))
def test_legacy_round_trip(values, codec, magic):
    data = records.encode_batch(values, magic=magic, compression=codec, base_offset=100)
    decoded = [r for b in records.decode_batches(data) for r in b.records]
    assert [r.offset for r in decoded] == list(range(100, 100 + len(values)))
    assert [(r.key, r.value) for r in decoded] == [(v["key"], v["value"]) for v in values]
    expected_ts = [v["timestamp"] for v in values] if magic == 1 else [-1] * len(values)
    assert [r.timestamp for r in decoded] == expected_ts


@settings(max_examples=100)
@given(st.lists(record_values, min_size=1, max_size=6))
def test_fast_record_decoder_agrees_with_the_construct_layout(values):
    data = records.encode_batch(values, base_offset=3)
    parsed = GreedyRange(layout.Record).parse(data[layout.HEADER_SIZE:])
    (batch,) = records.decode_batches(data)
    header = layout.BatchHeader.parse(data)
    assert header.records_count == len(parsed) == len(batch.records)
    for p, r in zip(parsed, batch.records, strict=True):
        assert (p.key, p.value) == (r.key, r.value)
        assert [(h.key, h.value) for h in p.headers] == r.headers
        assert header.base_offset + p.offset_delta == r.offset
        assert header.base_timestamp + p.timestamp_delta == r.timestamp
    # And the construct layout rebuilds the very same bytes.
    rebuilt = b"".join(layout.Record.build(p) for p in parsed)
    assert rebuilt == data[layout.HEADER_SIZE:]


SMALL_BATCH = hx("""
    0000000000000005     # base offset 5
    0000003a             # batch length 58: 49 header bytes after this field + 9 record bytes
    ffffffff             # partition leader epoch -1
    02                   # magic 2
    {crc}                # CRC32C of attributes .. end
    0000                 # attributes: no compression, CreateTime
    00000000             # last offset delta 0
    0000000000000064     # base timestamp 100
    0000000000000064     # max timestamp 100
    ffffffffffffffff     # producer id -1
    ffff                 # producer epoch -1
    ffffffff             # base sequence -1
    00000001             # one record
    10                   # record length 8 (zig-zag)
    00                   # record attributes
    00                   # timestamp delta 0
    00                   # offset delta 0
    02 6b                # key "k"
    02 76                # value "v"
    00                   # no headers
""".replace("{crc}", "00000000"))


def test_v2_layout_is_pinned_byte_by_byte():
    expected = bytearray(SMALL_BATCH)
    expected[17:21] = crc32c(bytes(expected[21:])).to_bytes(4, "big")
    data = records.encode_batch([{"key": b"k", "value": b"v", "timestamp": 100}], base_offset=5)
    assert data == bytes(expected)


def test_log_append_time_overrides_record_timestamps():
    data = records.encode_batch([{"value": b"a", "timestamp": 1}, {"value": b"b", "timestamp": 2}],
                                timestamp_type="LogAppendTime", log_append_time=777)
    (batch,) = records.decode_batches(data)
    assert batch.timestamp_type == "LogAppendTime" and batch.max_timestamp == 777
    assert [r.timestamp for r in batch.records] == [777, 777]


def test_control_batches():
    (commit,) = records.decode_batches(records.end_txn_marker_batch(
        True, producer_id=7, producer_epoch=2, coordinator_epoch=5, timestamp=10, base_offset=40))
    assert commit.is_control and commit.is_transactional and commit.producer_id == 7
    assert commit.records[0].control_type == "COMMIT" and commit.records[0].control_value.coordinator_epoch == 5
    assert commit.records[0].key == hx("0000 0001") and commit.records[0].value == hx("0000 00000005")
    (abort,) = records.decode_batches(records.end_txn_marker_batch(
        False, producer_id=7, producer_epoch=2, coordinator_epoch=5, timestamp=10))
    assert abort.records[0].control_type == "ABORT"

    runs = [{"base_offset": 110, "last_offset": 110, "state": 0, "delivery_count": 1},
            {"base_offset": 119, "last_offset": 119, "state": 2, "delivery_count": 1}]
    (checkpoint,) = records.decode_batches(records.share_checkpoint_batch("G1", 1, 110, 121, runs, timestamp=5))
    rec = checkpoint.records[0]
    assert checkpoint.is_control and not checkpoint.is_transactional
    assert rec.control_type == "SHARE_CHECKPOINT" and rec.key == hx("0000 0005")
    assert rec.control_value == {"group_id": "G1", "checkpoint_epoch": 1, "start_offset": 110, "end_offset": 121,
                                 "states": runs, "summary_start_offset": -1, "delivery_complete_count": -1}
    (delta,) = records.decode_batches(records.share_delta_batch("G1", 1, 2, 111, runs[1:], timestamp=6,
                                                                summary_start_offset=110, delivery_complete_count=1))
    assert delta.records[0].control_type == "SHARE_DELTA"
    assert delta.records[0].control_value.delta_index == 2 and delta.records[0].control_value.states == runs[1:]
    summary = delta.records[0].control_value
    assert (summary.summary_start_offset, summary.delivery_complete_count) == (110, 1)
    # The summary is tagged: a record that leaves it unset is byte for byte the page's layout.
    assert len(delta.records[0].value) > len(records.decode_batches(records.share_delta_batch(
        "G1", 1, 2, 111, runs[1:], timestamp=6))[0].records[0].value)


def test_many_batches_and_a_partial_trailing_batch():
    a = records.encode_batch([{"value": b"a"}, {"value": b"b"}], base_offset=0)
    b = records.encode_batch([{"value": b"c"}], base_offset=2, compression="zstd")
    c = records.encode_batch([{"value": b"d" * 50}], base_offset=3)
    data = a + b + c[:30]
    decoded = records.decode_batches(data)
    assert [r.value for batch in decoded for r in batch.records] == [b"a", b"b", b"c"]
    views, partial = split_batches(data)
    assert [v.base_offset for v in views] == [0, 2] and partial == 30
    assert records.decode_batches(data[:11]) == [] and split_batches(data[:11]) == ([], 11)


def test_mid_batch_offset_lookup():
    data = b"".join(records.encode_batch([{"value": b"x"}] * n, base_offset=base)
                    for base, n in [(0, 3), (3, 5), (8, 1)])
    views, _ = split_batches(data)
    assert find_batch(views, 0) == 0 and find_batch(views, 2) == 0
    assert find_batch(views, 3) == 1 and find_batch(views, 6) == 1   # mid-batch: the containing batch
    assert find_batch(views, 8) == 2 and find_batch(views, 9) is None


@pytest.mark.parametrize("codec", CODECS)
def test_corrupted_crc_is_detected(codec):
    data = bytearray(records.encode_batch([{"key": b"k", "value": b"value" * 20}], compression=codec))
    data[-3] ^= 0x40
    with pytest.raises(CorruptRecordError, match="CRC32C"):
        records.decode_batches(bytes(data))
    with pytest.raises(CorruptRecordError, match="CRC32C"):
        split_batches(bytes(data))[0][0].validate()


def test_corrupted_legacy_crc_is_detected():
    data = bytearray(records.encode_batch([{"value": b"v"}], magic=1))
    data[-1] ^= 1
    with pytest.raises(CorruptRecordError, match="CRC32 mismatch"):
        records.decode_batches(bytes(data))
    with pytest.raises(CorruptRecordError, match="CRC32 mismatch"):
        split_batches(bytes(data))[0][0].validate()


def _with_crc(batch: bytearray) -> bytes:
    batch[17:21] = crc32c(bytes(batch[21:])).to_bytes(4, "big")
    return bytes(batch)


def test_structural_corruption_with_a_valid_crc():
    good = bytearray(records.encode_batch([{"key": b"k", "value": b"v"}]))
    longer = bytearray(good)
    longer[61] = 0x7e  # record length 63: past the end of the batch
    with pytest.raises(CorruptRecordError, match="record length"):
        records.decode_batches(_with_crc(longer))
    count = bytearray(good)
    count[57:61] = (2).to_bytes(4, "big")  # claims two records
    with pytest.raises(CorruptRecordError):
        records.decode_batches(_with_crc(count))
    codec = bytearray(good)
    codec[22] |= 0x07  # compression type 7
    with pytest.raises(CorruptRecordError, match="unknown compression"):
        records.decode_batches(_with_crc(codec))
    tiny = struct.pack(">qi", 0, 3) + b"\x00\x00\x00\x00\x02"
    with pytest.raises(CorruptRecordError, match="too small"):
        records.decode_batches(tiny)
    magic = bytearray(good)
    magic[16] = 7
    with pytest.raises(CorruptRecordError, match="unknown magic"):
        records.decode_batches(bytes(magic))


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_truncated_compressed_data_is_corrupt(codec):
    batch = records.encode_batch([{"value": bytes(range(256)) * 40}], compression=codec)
    region = batch[layout.HEADER_SIZE:]
    cut = bytearray(batch[:layout.HEADER_SIZE] + region[: len(region) // 2])
    cut[8:12] = (len(cut) - 12).to_bytes(4, "big")
    with pytest.raises(CorruptRecordError):
        records.decode_batches(_with_crc(cut))


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_decompression_bomb_is_refused(codec):
    bomb = records.encode_batch([{"value": bytes(4_000_000)}], compression=codec)
    assert len(bomb) < 250_000
    with pytest.raises(CorruptRecordError, match="limit"):
        records.decode_batches(bomb, max_decompressed_bytes=1_000_000)
    assert len(records.decode_batches(bomb)[0].records[0].value) == 4_000_000


def test_zstd_frames_without_a_content_size_are_bounded_too():
    import zstandard

    body = records.encode_batch([{"value": bytes(2_000_000)}])[layout.HEADER_SIZE:]
    stream = io.BytesIO()
    with zstandard.ZstdCompressor().stream_writer(stream, closefd=False) as w:
        w.write(body)
    assert zstandard.frame_content_size(stream.getvalue()) == -1
    batch = bytearray(records.encode_batch([{"value": bytes(2_000_000)}])[:layout.HEADER_SIZE] + stream.getvalue())
    batch[8:12] = (len(batch) - 12).to_bytes(4, "big")
    batch[22] = (batch[22] & ~0x07) | 4
    data = _with_crc(batch)
    assert len(records.decode_batches(data)[0].records[0].value) == 2_000_000
    with pytest.raises(CorruptRecordError, match="limit"):
        records.decode_batches(data, max_decompressed_bytes=100_000)


def test_raw_snappy_is_accepted_as_kafka_does():
    import cramjam

    good = records.encode_batch([{"value": b"hello" * 50}])
    raw = bytes(cramjam.snappy.compress_raw(good[layout.HEADER_SIZE:]))
    batch = bytearray(good[:layout.HEADER_SIZE] + raw)
    batch[8:12] = (len(batch) - 12).to_bytes(4, "big")
    batch[22] = (batch[22] & ~0x07) | 2
    assert records.decode_batches(_with_crc(batch))[0].records[0].value == b"hello" * 50


def test_zero_copy_view_reads_and_rewrites_in_place():
    data = bytearray(records.encode_batch([{"value": b"a", "timestamp": 3}, {"value": b"b", "timestamp": 9}],
                                          producer_id=11, producer_epoch=2, base_sequence=5, compression="lz4"))
    (view,), partial = split_batches(data)
    assert partial == 0 and view.magic == 2 and view.record_count == 2 and view.last_offset == 1
    assert (view.producer_id, view.producer_epoch, view.base_sequence, view.last_sequence) == (11, 2, 5, 6)
    assert view.compression == "lz4" and view.max_timestamp == 9 and not view.is_transactional
    view.validate()
    before = bytes(data[12:])
    view.set_base_offset(1000)
    view.set_partition_leader_epoch(4)
    view.validate()  # the CRC does not cover either field
    assert bytes(data[16:]) == before[4:] and view.base_offset == 1000 and view.last_offset == 1001
    (batch,) = records.decode_batches(data)
    assert [r.offset for r in batch.records] == [1000, 1001] and batch.partition_leader_epoch == 4


def test_view_validates_legacy_messages_and_reads_their_offsets():
    data = records.encode_batch([{"value": b"a"}, {"value": b"b"}], magic=0, base_offset=7)
    views, _ = split_batches(data)
    assert [v.magic for v in views] == [0, 0] and [v.base_offset for v in views] == [7, 8]
    assert [v.last_offset for v in views] == [7, 8]
    (wrapper,), _ = split_batches(records.encode_batch([{"value": b"a"}] * 3, magic=1, compression="gzip",
                                                       base_offset=20))
    assert wrapper.last_offset == 22 and find_batch([wrapper], 21) == 0
    for v in views:
        v.validate()
        assert zlib.crc32(v.bytes()[16:]) == struct.unpack(">I", v.bytes()[12:16])[0]


def test_random_bytes_never_raise_anything_but_corrupt_record_error():
    @settings(max_examples=1000)
    @given(st.binary(max_size=200), st.integers(0, 199), st.integers(0, 255), st.sampled_from(CODECS))
    def check(noise, index, byte, codec):
        good = bytearray(records.encode_batch([{"key": b"k", "value": noise or b"x"}], compression=codec))
        good[index % len(good)] = byte
        for data in (bytes(good), noise, bytes(good[: index % len(good)])):
            try:
                records.decode_batches(data)
            except CorruptRecordError:
                pass
    check()


def test_records_are_values():
    assert Record(1, 2, b"k", None) == Record(1, 2, b"k", None, ())
    assert Record(1, 2, b"k", None).headers == () and Record(1, 2, None, None).control_type is None
    with pytest.raises(AttributeError):
        Record(1, 2, None, None).offset = 3  # type: ignore[misc]
    assert BatchView(b"", 0, 0).size == 0


@pytest.mark.parametrize("codec", CODECS)
def test_validate_records_walks_the_record_framing(codec):
    good = bytearray(records.encode_batch([{"key": b"k", "value": b"v" * 30, "timestamp": 1}] * 4, compression=codec))
    (view,), _ = split_batches(good)
    view.validate_records()
    miscounted = bytearray(good)
    miscounted[57:61] = (5).to_bytes(4, "big")
    (view,), _ = split_batches(_with_crc(miscounted))
    with pytest.raises(CorruptRecordError):
        view.validate_records()
    if codec == "none":
        garbled = bytearray(good)
        garbled[61] = 0x7E      # the first record claims 63 bytes: the records no longer tile the batch
        (view,), _ = split_batches(_with_crc(garbled))
        with pytest.raises(CorruptRecordError, match="does not fit|end"):
            view.validate_records()
