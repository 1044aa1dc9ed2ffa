"""The Java oracle's record-batch ops work: Kafka 4.3.1's MemoryRecordsBuilder and MemoryRecords agree with each other
and with hand-annotated bytes, for every magic, compression, idempotent/transactional and control batch.

These tests check the test tooling (tests/java/KafkaOracle.java ``records_build``/``records_read`` and
tests/support/records_oracle.py), not kafkamock: kafkamock's records code is compared against them elsewhere.
"""

from __future__ import annotations

import gzip
import struct
import zlib

import crc32c
import pytest
from support.oracle import OracleError
from support.records_oracle import (
    BATCH_KEYS,
    RecordsOracleError,
    java_build,
    java_build_many,
    java_read,
    java_read_many,
    records_of,
)

pytestmark = pytest.mark.java

COMPRESSIONS = ["none", "gzip", "snappy", "lz4", "zstd"]
LEGACY_COMPRESSIONS = ["none", "gzip", "snappy", "lz4"]  # Kafka refuses zstd below magic 2

T0 = 1_600_000_000_000  # 0x00000174876e8000 ms

RECORDS = [
    {"offset": 10, "timestamp": T0, "key": b"key-0", "value": b"value-0" * 20, "headers": [("h1", b"x"), ("h2", None)]},
    {"offset": 11, "timestamp": T0 - 5, "key": None, "value": b"", "headers": []},
    {"offset": 12, "timestamp": T0 + 7, "key": b"", "value": None, "headers": [("", b"")]},
    {"offset": 15, "timestamp": T0 + 3, "key": bytes(range(256)), "value": bytes(range(255, -1, -1)) * 4, "headers": []},
]
LEGACY_RECORDS = [{**r, "headers": []} for r in RECORDS]


def hx(text: str) -> bytes:
    """Hex with spaces and ``#`` comments, so vectors can be annotated line by line."""
    return bytes.fromhex(" ".join(line.split("#")[0] for line in text.splitlines()))


def v2_header(data: bytes) -> dict:
    """The 61-byte v2 batch header, field by field (big-endian)."""
    (base_offset, length, ple, magic, crc, attributes, last_offset_delta, base_ts, max_ts, pid, epoch, base_seq,
     count) = struct.unpack(">qiibIhiqqqhii", data[:61])
    return {"base_offset": base_offset, "length": length, "partition_leader_epoch": ple, "magic": magic, "crc": crc,
            "attributes": attributes, "last_offset_delta": last_offset_delta, "base_timestamp": base_ts,
            "max_timestamp": max_ts, "producer_id": pid, "producer_epoch": epoch, "base_sequence": base_seq,
            "count": count}


# ---- magic 2 ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_v2_round_trip_each_compression(kafka_oracle, compression):
    data = java_build(kafka_oracle, magic=2, compression=compression, base_offset=10, partition_leader_epoch=3,
                      records=RECORDS)
    [batch] = java_read(kafka_oracle, data)
    assert set(batch) == BATCH_KEYS
    assert batch["records"] == RECORDS
    assert batch == {
        "base_offset": 10, "last_offset": 15, "magic": 2, "compression": compression, "timestamp_type": "CreateTime",
        "max_timestamp": T0 + 7, "producer_id": -1, "producer_epoch": -1, "base_sequence": -1,
        "transactional": False, "control": False, "partition_leader_epoch": 3, "crc_valid": True,
        "crc": crc32c.crc32c(data[21:]), "count": 4, "size_in_bytes": len(data), "records": RECORDS,
    }
    header = v2_header(data)
    assert header["attributes"] == COMPRESSIONS.index(compression)  # bits 0-2: codec id; nothing else set
    assert header["base_timestamp"] == T0  # the first record's, not the minimum (T0 - 5)
    assert header["length"] == len(data) - 12


def test_v2_compressed_payload_framing(kafka_oracle):
    """After the 61-byte header: gzip member, xerial snappy stream, LZ4 frame, zstd frame, each holding exactly the
    record bytes Kafka writes uncompressed."""
    datas = java_build_many(kafka_oracle, [{"compression": c, "records": RECORDS} for c in COMPRESSIONS])
    plain = datas[0][61:]
    payload = {c: d[61:] for c, d in zip(COMPRESSIONS, datas, strict=True)}

    gz = payload["gzip"]
    # Java's GZIPOutputStream: FLG 0, MTIME 0, XFL 0, OS 0xff (JDK 16+; older JDKs wrote 0); default level (6).
    assert gz[:10] == hx("1f8b 08 00 00000000 00 ff")
    assert gzip.decompress(gz) == plain
    deflate = zlib.compressobj(6, zlib.DEFLATED, -15)
    assert deflate.compress(plain) + deflate.flush() == gz[10:-8]  # same zlib, same level: same deflate stream
    assert gz[-8:] == struct.pack("<II", zlib.crc32(plain), len(plain))

    sn = payload["snappy"]
    # snappy-java's SnappyOutputStream: magic "\x82SNAPPY\0", version 1, compatible version 1, then chunks of
    # int32 big-endian length + raw snappy block (same framing for every magic).
    assert sn[:16] == hx("82 534e4150505900 00000001 00000001")
    (n,) = struct.unpack(">i", sn[16:20])
    assert len(sn) == 20 + n
    cramjam = pytest.importorskip("cramjam")
    assert bytes(cramjam.snappy.decompress_raw(sn[20:])) == plain

    lz = payload["lz4"]
    # LZ4 frame: magic, FLG 0x60 (v01, independent blocks, no checksums, no content size), BD 0x40 (64 KB blocks),
    # HC 0x82 = (xxh32(FLG BD) >> 8) & 0xff; one block; end mark 0.
    assert lz[:7] == hx("04224d18 60 40 82")
    assert lz[-4:] == bytes(4)
    lz4_frame = pytest.importorskip("lz4.frame")
    assert lz4_frame.decompress(lz) == plain

    zs = payload["zstd"]
    # zstd frame: magic, FHD 0 (no content size, no checksum, not single-segment), window descriptor; zstd-jni's
    # stream ends with an empty last raw block (01 00 00) rather than flagging the data block as last.
    assert zs[:4] == hx("28b52ffd") and zs[4] == 0
    assert zs[-3:] == hx("010000")
    zstandard = pytest.importorskip("zstandard")
    assert zstandard.ZstdDecompressor().decompressobj().decompress(zs) == plain


def test_v2_idempotent_and_transactional(kafka_oracle):
    common = {"base_offset": 0, "producer_id": 123456789012, "producer_epoch": 7, "base_sequence": 41,
              "records": [{"timestamp": T0, "value": b"a"}, {"timestamp": T0 + 1, "value": b"b"}]}
    idempotent, transactional = java_build_many(kafka_oracle, [common, {**common, "transactional": True}])
    [a], [b] = java_read_many(kafka_oracle, [idempotent, transactional])
    for batch in (a, b):
        assert (batch["producer_id"], batch["producer_epoch"], batch["base_sequence"]) == (123456789012, 7, 41)
        assert batch["control"] is False and batch["crc_valid"]
        assert [r["offset"] for r in batch["records"]] == [0, 1]
    assert a["transactional"] is False and b["transactional"] is True
    assert v2_header(idempotent)["attributes"] == 0
    assert v2_header(transactional)["attributes"] == 0x10  # bit 4: transactional
    assert idempotent[43:57] == hx("0000001cbe991a14 0007 00000029")  # producer id, epoch, base sequence
    assert isinstance(java_build_many(kafka_oracle, [{**common, "producer_id": -1, "transactional": True}])[0],
                      RecordsOracleError)  # Kafka: "Cannot write transactional messages without a valid producer ID"


def test_v2_log_append_time(kafka_oracle):
    records = [{"timestamp": T0, "value": b"a"}, {"timestamp": T0 + 2000, "value": b"b"}]
    data = java_build(kafka_oracle, timestamp_type="LogAppendTime", log_append_time=T0 + 99, records=records)
    [batch] = java_read(kafka_oracle, data)
    assert batch["timestamp_type"] == "LogAppendTime" and batch["max_timestamp"] == T0 + 99
    # Readers see the log append time on every record...
    assert [r["timestamp"] for r in batch["records"]] == [T0 + 99, T0 + 99]
    # ...but the wire keeps the create times: base timestamp = first record's, deltas untouched; only the max
    # timestamp field carries the log append time.
    header = v2_header(data)
    assert header["attributes"] == 0x08  # bit 3: LogAppendTime
    assert (header["base_timestamp"], header["max_timestamp"]) == (T0, T0 + 99)
    assert data[61:63] == hx("0e 00") and data[63] == 0  # record 0: length 7, attributes, timestamp delta 0
    assert data[69:73] == hx("10 00 a01f")  # record 1: length 8, attributes, timestamp delta 2000 (zigzag varint)


@pytest.mark.parametrize(("kind", "type_id"), [("COMMIT", 1), ("ABORT", 0)])
def test_v2_end_transaction_marker(kafka_oracle, kind, type_id):
    data = java_build(kafka_oracle, base_offset=100, producer_id=77, producer_epoch=3, partition_leader_epoch=9,
                      control={"type": kind, "coordinator_epoch": 5, "timestamp": T0})
    [batch] = java_read(kafka_oracle, data)
    assert batch == {
        "base_offset": 100, "last_offset": 100, "magic": 2, "compression": "none", "timestamp_type": "CreateTime",
        "max_timestamp": T0, "producer_id": 77, "producer_epoch": 3, "base_sequence": -1, "transactional": True,
        "control": True, "partition_leader_epoch": 9, "crc_valid": True, "crc": crc32c.crc32c(data[21:]), "count": 1,
        "size_in_bytes": 78,
        "records": [{"offset": 100, "timestamp": T0, "key": struct.pack(">hh", 0, type_id),
                     "value": struct.pack(">hi", 0, 5), "headers": [], "control_type": type_id,
                     "coordinator_epoch": 5}],
    }
    assert data == hx(f"""
        0000000000000064     # base offset 100
        00000042             # batch length 66 (= 78 - 12)
        00000009             # partition leader epoch 9
        02                   # magic 2
        {data[17:21].hex()}  # CRC32C (checked below)
        0030                 # attributes: transactional (0x10) | control (0x20); no compression, CreateTime
        00000000             # last offset delta 0
        00000174876e8000     # base timestamp = the marker's timestamp
        00000174876e8000     # max timestamp = the same
        000000000000004d     # producer id 77
        0003                 # producer epoch 3
        ffffffff             # base sequence -1 (markers carry none)
        00000001             # 1 record
        20                   # record length 16 (zigzag varint)
        00 00 00             # attributes, timestamp delta 0, offset delta 0
        08 0000 000{type_id}       # key: 4 bytes, version 0, ControlRecordType id
        0c 0000 00000005     # value: 6 bytes, EndTxnMarker version 0, coordinator epoch 5
        00                   # no headers
    """)
    assert struct.unpack(">I", data[17:21])[0] == crc32c.crc32c(data[21:])


def test_v2_end_transaction_marker_refusals(kafka_oracle):
    control = {"type": "COMMIT", "coordinator_epoch": 0, "timestamp": 0}
    results = java_build_many(kafka_oracle, [
        {"control": control},  # no producer id: Kafka refuses
        {"control": control, "producer_id": 1, "compression": "gzip"},  # markers are never compressed
        {"control": control, "producer_id": 1, "records": [{"timestamp": 0, "value": b"x"}]},
        {"control": {**control, "type": "LEADER_CHANGE"}, "producer_id": 1},
        {"control": control, "producer_id": 1, "producer_epoch": 0},
    ])
    assert [isinstance(r, RecordsOracleError) for r in results] == [True, True, True, True, False]
    assert "valid producerId" in results[0].message
    assert isinstance(results[0], OracleError)  # one except clause catches both oracles' refusals


# ---- legacy magic 0 and 1 ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("compression", LEGACY_COMPRESSIONS)
@pytest.mark.parametrize("magic", [0, 1])
def test_legacy_round_trip(kafka_oracle, magic, compression):
    data = java_build(kafka_oracle, magic=magic, compression=compression, records=LEGACY_RECORDS)
    batches = java_read(kafka_oracle, data)
    expected = [{**r, "timestamp": r["timestamp"] if magic == 1 else -1} for r in LEGACY_RECORDS]
    assert records_of(batches) == expected
    # Uncompressed legacy sets are one "batch" (a bare message) per record; compressed ones one wrapper message.
    assert len(batches) == (len(LEGACY_RECORDS) if compression == "none" else 1)
    start = 0
    for b in batches:
        assert b["magic"] == magic and b["compression"] == compression and b["crc_valid"]
        assert b["timestamp_type"] == ("CreateTime" if magic == 1 else "NoTimestampType")
        assert (b["producer_id"], b["producer_epoch"], b["base_sequence"], b["partition_leader_epoch"]) == (-1,) * 4
        assert b["count"] is None and not b["transactional"] and not b["control"]
        end = start + b["size_in_bytes"]
        assert b["crc"] == zlib.crc32(data[start + 16:end])  # CRC32 (not C) over magic..end of the message
        start = end
    assert start == len(data)
    if compression != "none":
        assert batches[0]["base_offset"] == 10 and batches[0]["last_offset"] == 15
        assert struct.unpack(">q", data[:8])[0] == 15  # the wrapper's offset is the last inner offset
        assert batches[0]["max_timestamp"] == (T0 + 7 if magic == 1 else -1)


@pytest.mark.parametrize("magic", [0, 1])
def test_legacy_gzip_wrapper_layout(kafka_oracle, magic):
    """The wrapper message's value is a gzip of inner messages: v0 inner offsets are absolute, v1 relative."""
    data = java_build(kafka_oracle, magic=magic, compression="gzip", base_offset=10, records=LEGACY_RECORDS[:2])
    offset, size, _crc, m, attributes = struct.unpack(">qiIbb", data[:18])
    assert (offset, size, m, attributes) == (11, len(data) - 12, magic, 1)  # attributes bits 0-2: gzip
    pos = 18
    if magic == 1:
        assert struct.unpack(">q", data[18:26])[0] == T0  # wrapper timestamp = max inner timestamp
        pos = 26
    assert struct.unpack(">i", data[pos:pos + 4])[0] == -1  # no key
    (value_size,) = struct.unpack(">i", data[pos + 4:pos + 8])
    inner = gzip.decompress(data[pos + 8:])
    assert pos + 8 + value_size == len(data)
    first, inner_size = struct.unpack(">qi", inner[:12])
    (second,) = struct.unpack(">q", inner[12 + inner_size:20 + inner_size])
    assert (first, second) == ((0, 1) if magic == 1 else (10, 11))


def test_legacy_lz4_frame_checksum(kafka_oracle):
    """Kafka reproduces the old broken LZ4 header checksum (hash over the magic too) for magic 0 only."""
    v0, v1, v2 = java_build_many(kafka_oracle, [{"magic": m, "compression": "lz4", "records": LEGACY_RECORDS}
                                                for m in (0, 1, 2)])
    assert v0[26:33] == hx("04224d18 60 40 1a")  # v0 message header is 26 bytes before the value
    assert v1[34:41] == hx("04224d18 60 40 82")  # v1 adds the 8-byte timestamp
    assert v2[61:68] == hx("04224d18 60 40 82")


def test_legacy_log_append_time(kafka_oracle):
    records = [{"timestamp": T0, "value": b"a"}, {"timestamp": T0 + 5, "value": b"b"}]
    plain, wrapped = java_build_many(kafka_oracle, [
        {"magic": 1, "timestamp_type": "LogAppendTime", "log_append_time": T0 + 99, "records": records},
        {"magic": 1, "compression": "gzip", "timestamp_type": "LogAppendTime", "log_append_time": T0 + 99,
         "records": records},
    ])
    for batches in java_read_many(kafka_oracle, [plain, wrapped]):
        assert {b["timestamp_type"] for b in batches} == {"LogAppendTime"}
        assert [r["timestamp"] for r in records_of(batches)] == [T0 + 99, T0 + 99]
    assert plain[17] == 0x08 and plain[18:26] == struct.pack(">q", T0 + 99)  # written into each bare message
    assert wrapped[17] == 0x09 and wrapped[18:26] == struct.pack(">q", T0 + 99)  # and into the wrapper


def test_legacy_refusals(kafka_oracle):
    one = [{"timestamp": 0, "value": b"x"}]
    results = java_build_many(kafka_oracle, [
        {"magic": 0, "compression": "zstd", "records": one},
        {"magic": 1, "compression": "zstd", "records": one},
        {"magic": 0, "records": [{"timestamp": 0, "value": b"x", "headers": [("h", None)]}]},
        {"magic": 1, "producer_id": 5, "producer_epoch": 0, "base_sequence": 0, "records": one},
        {"magic": 1, "timestamp_type": "NoTimestampType", "records": one},
        {"magic": 0, "timestamp_type": "NoTimestampType", "records": one},
    ])
    assert [r.message if isinstance(r, RecordsOracleError) else None for r in results] == [
        "java.lang.IllegalArgumentException: ZStandard compression is not supported for magic 0",
        "java.lang.IllegalArgumentException: ZStandard compression is not supported for magic 1",
        "java.lang.IllegalArgumentException: Magic v0 does not support record headers",
        "java.lang.IllegalArgumentException: Idempotent messages are not supported for magic 1",
        "java.lang.IllegalArgumentException: TimestampType must be set for magic >= 0",
        None,
    ]


# ---- the byte layout, by hand -----------------------------------------------------------------------------------


def test_v2_header_bytes_by_hand(kafka_oracle):
    data = java_build(kafka_oracle, base_offset=5, partition_leader_epoch=7, producer_id=1000, producer_epoch=2,
                      base_sequence=11, records=[
                          {"offset": 5, "timestamp": T0, "key": b"k", "value": b"v1", "headers": [("h", b"x")]},
                          {"offset": 7, "timestamp": T0 + 10, "key": None, "value": b"", "headers": [("n", None)]},
                      ])
    crc = crc32c.crc32c(data[21:])  # CRC32C from the attributes to the end
    assert data == hx(f"""
        0000000000000005   # base offset 5
        00000049           # batch length 73: everything after this field (85 - 12)
        00000007           # partition leader epoch 7
        02                 # magic 2
        {crc:08x}           # CRC32C over attributes..end
        0000               # attributes: no compression, CreateTime, not transactional, not control
        00000002           # last offset delta: 7 - 5
        00000174876e8000   # base timestamp (first record's)
        00000174876e800a   # max timestamp
        00000000000003e8   # producer id 1000
        0002               # producer epoch 2
        0000000b           # base sequence 11
        00000002           # record count 2
        # record 0 (all varints zigzag-encoded)
        1a                 # length 13
        00                 # attributes (unused)
        00                 # timestamp delta 0
        00                 # offset delta 0
        02 6b              # key: length 1, "k"
        04 7631            # value: length 2, "v1"
        02                 # 1 header
        02 68  02 78       # "h" = "x"
        # record 1
        12                 # length 9
        00                 # attributes
        14                 # timestamp delta 10
        04                 # offset delta 2 (offset 6 is a gap, as after compaction)
        01                 # key: null (-1)
        00                 # value: empty (length 0)
        02                 # 1 header
        02 6e  01          # "n" = null (-1)
    """)
    [batch] = java_read(kafka_oracle, data)
    assert batch["crc_valid"] and batch["crc"] == crc and batch["size_in_bytes"] == 85


def test_empty_and_concatenated(kafka_oracle):
    assert java_build(kafka_oracle, records=[]) == b""  # no records: no batch at all
    assert java_read(kafka_oracle, b"") == []
    parts = java_build_many(kafka_oracle, [
        {"base_offset": 0, "records": [{"timestamp": 1, "value": b"a"}]},
        {"base_offset": 1, "compression": "gzip", "records": [{"timestamp": 2, "value": b"b"}]},
        {"magic": 1, "base_offset": 2, "records": [{"timestamp": 3, "value": b"c"}]},
    ])
    batches = java_read(kafka_oracle, b"".join(parts))  # mixed magics in one set: Kafka reads them all
    assert [(b["magic"], b["compression"], b["base_offset"]) for b in batches] == [
        (2, "none", 0), (2, "gzip", 1), (1, "none", 2)]
    assert [r["value"] for r in records_of(batches)] == [b"a", b"b", b"c"]


# ---- corruption -------------------------------------------------------------------------------------------------


def test_corruption_is_detected_or_refused(kafka_oracle):
    plain = java_build(kafka_oracle, records=RECORDS[:2], base_offset=10)
    zipped = java_build(kafka_oracle, records=RECORDS[:2], base_offset=10, compression="gzip")
    legacy = java_build(kafka_oracle, magic=1, records=LEGACY_RECORDS[:1], base_offset=10)

    def flip(data: bytes, at: int) -> bytes:
        return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1:]

    value_byte = plain.index(b"value-0")
    cases = {
        "v2 value byte": flip(plain, value_byte),  # still parses: only the CRC notices
        "v2 attributes": flip(plain, 22),  # now claims gzip: decompression fails
        "v2 max timestamp": flip(plain, 42),
        "v2 gzip body": flip(zipped, 70),
        "v2 magic": plain[:16] + b"\x07" + plain[17:],
        "v1 value byte": flip(legacy, len(legacy) - 1),
    }
    results = dict(zip(cases, java_read_many(kafka_oracle, cases.values()), strict=True))
    for name, result in results.items():
        assert isinstance(result, RecordsOracleError) or not all(b["crc_valid"] for b in result), name
    [batch] = results["v2 value byte"]
    assert batch["crc_valid"] is False and batch["records"][0]["value"] != RECORDS[0]["value"]
    assert results["v2 max timestamp"][0]["crc_valid"] is False
    assert results["v1 value byte"][0]["crc_valid"] is False
    assert isinstance(results["v2 magic"], RecordsOracleError)
    assert isinstance(results["v2 attributes"], RecordsOracleError)
    # the JVM survives: the next request is served
    assert java_read(kafka_oracle, plain)[0]["crc_valid"] is True


def test_truncated_input_reads_as_fewer_batches(kafka_oracle):
    """MemoryRecords stops silently at an incomplete trailing batch (as on a fetch cut at max bytes)."""
    data = java_build(kafka_oracle, records=RECORDS)
    two = data + data
    assert len(java_read(kafka_oracle, two)) == 2
    assert len(java_read(kafka_oracle, two[:-1])) == 1
    assert java_read(kafka_oracle, data[:11]) == []  # not even a complete length field
    # A batch length pointing past the end is taken for truncation too: no batches, no error.
    assert java_read(kafka_oracle, data[:8] + b"\x7f" + data[9:]) == []
    # A record count larger than the records present is an error, though.
    with pytest.raises(RecordsOracleError, match="Incorrect declared batch size"):
        java_read(kafka_oracle, data[:60] + bytes([data[60] + 1]) + data[61:])


def test_item_errors_do_not_spoil_the_batch(kafka_oracle):
    results = java_build_many(kafka_oracle, [
        {"compression": "brotli", "records": []},
        {"records": [{"offset": 3, "timestamp": 0}, {"offset": 3, "timestamp": 0}]},
        {"compression": "gzip", "compression_level": 42, "records": []},
        {"records": [{"timestamp": 0, "value": b"ok"}]},
    ])
    assert [type(r) for r in results] == [RecordsOracleError, RecordsOracleError, RecordsOracleError, bytes]
    assert "Offsets must increase monotonically" in results[1].message
    assert records_of(java_read(kafka_oracle, results[3]))[0]["value"] == b"ok"
    with pytest.raises(TypeError, match="unknown records_build parameters"):
        java_build(kafka_oracle, compresion="gzip")
    bad_hex = kafka_oracle._batched("records_read", [{"hex": "zz"}, {}])
    assert all("error" in r for r in bad_hex)
    assert kafka_oracle.ping()["kafka"] == "4.3.1"


def test_compression_level(kafka_oracle):
    """Kafka's default levels are what the producer uses (gzip -1 = zlib's 6, lz4 9, zstd 3): same bytes."""
    records = [{"timestamp": 0, "value": b"abcdefgh" * 200}]
    for codec, default, other in [("gzip", 6, 1), ("lz4", 9, 17), ("zstd", 3, 19)]:
        implicit, explicit, different = java_build_many(kafka_oracle, [
            {"compression": codec, "records": records},
            {"compression": codec, "compression_level": default, "records": records},
            {"compression": codec, "compression_level": other, "records": records},
        ])
        assert implicit == explicit, codec
        assert records_of(java_read(kafka_oracle, different)) == records_of(java_read(kafka_oracle, implicit))
