"""Compression codecs as Kafka frames them, with a ceiling on decompressed size.

- gzip: the standard library's zlib (gzip container), as Kafka's GZIPOutputStream writes it.
- snappy: cramjam's raw snappy inside xerial's framing (what Kafka's Java client writes, via snappy-java's
  SnappyOutputStream); on read both xerial-framed and raw snappy are accepted, as Kafka does.
- lz4: the LZ4 frame format (python-lz4), independent 64 KB blocks, as Kafka's KafkaLZ4BlockOutputStream writes.
- zstd: zstandard frames.

Every decompressor stops at ``limit`` bytes of output and raises CorruptRecordError beyond it, so a small
"decompression bomb" cannot exhaust memory: the sizes declared in snappy and zstd headers are checked before
anything is allocated, and gzip and lz4 are decompressed with an output bound.
"""

from __future__ import annotations

import struct
import zlib

import cramjam
import lz4.frame
import xxhash
import zstandard

from kafkamock.records.errors import CorruptRecordError

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
"""Compression names by their attribute id (bits 0-2 of a batch's attributes)."""
CODEC_IDS = {name: i for i, name in enumerate(CODECS)}

DEFAULT_MAX_DECOMPRESSED = 128 * 1024 * 1024
"""Default ceiling on one batch's decompressed records (configurable per call)."""

XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = XERIAL_MAGIC + struct.pack(">ii", 1, 1)
_XERIAL_BLOCK = 32 * 1024
_INT32 = struct.Struct(">i")


def codec_id(name: str) -> int:
    try:
        return CODEC_IDS[name]
    except KeyError:
        raise ValueError(f"unknown compression {name!r} (one of {', '.join(CODECS)})") from None


def compress(codec: str, data: bytes | memoryview, level: int | None = None, *, legacy_lz4: bool = False) -> bytes:
    """Compress a batch's records region the way Kafka's producer does.

    ``legacy_lz4`` writes the LZ4 frame-descriptor checksum the way Kafka computed it for magic 0 (KAFKA-3160:
    over the magic number too), which is what magic 0 readers of that era expect.
    """
    if codec == "gzip":
        c = zlib.compressobj(6 if level is None else level, zlib.DEFLATED, 31)
        return c.compress(data) + c.flush()
    if codec == "snappy":
        out = bytearray(_XERIAL_HEADER)
        for start in range(0, len(data), _XERIAL_BLOCK):
            block = bytes(cramjam.snappy.compress_raw(data[start:start + _XERIAL_BLOCK]))
            out += _INT32.pack(len(block))
            out += block
        return bytes(out)
    if codec == "lz4":
        frame = lz4.frame.compress(data, compression_level=0 if level is None else level,
                                   block_size=lz4.frame.BLOCKSIZE_MAX64KB, block_linked=False,
                                   content_checksum=False, store_size=False)
        return _with_lz4_checksum(frame, broken=True) if legacy_lz4 else frame
    if codec == "zstd":
        return zstandard.ZstdCompressor(level=3 if level is None else level).compress(data)
    if codec == "none":
        return bytes(data)
    raise ValueError(f"unknown compression {codec!r}")


def decompress(codec: str, data: bytes | memoryview, limit: int = DEFAULT_MAX_DECOMPRESSED, *,
               legacy_lz4: bool = False) -> bytes:
    """Decompress, refusing anything corrupt, truncated, or larger than ``limit`` bytes.

    ``legacy_lz4``: like Kafka for magic 0, ignore the LZ4 frame-descriptor checksum (old writers got it wrong).
    """
    try:
        if codec == "gzip":
            return _gunzip(data, limit)
        if codec == "snappy":
            return _unsnappy(bytes(data), limit)
        if codec == "lz4":
            return _unlz4(_with_lz4_checksum(bytes(data), broken=False) if legacy_lz4 else data, limit)
        if codec == "zstd":
            return _unzstd(data, limit)
    except CorruptRecordError:
        raise
    except (zlib.error, RuntimeError, ValueError, TypeError, zstandard.ZstdError, struct.error,
            cramjam.DecompressionError) as exc:
        raise CorruptRecordError(f"{codec} data does not decompress: {exc}") from None
    if codec == "none":
        return bytes(data)
    raise CorruptRecordError(f"unknown compression {codec!r}")


def _too_big(codec: str, limit: int) -> CorruptRecordError:
    return CorruptRecordError(f"{codec} data decompresses to more than the {limit}-byte limit")


def _gunzip(data: bytes | memoryview, limit: int) -> bytes:
    d = zlib.decompressobj(47)  # gzip or zlib header, auto-detected
    out = d.decompress(data, limit + 1)
    if len(out) > limit:
        raise _too_big("gzip", limit)
    if not d.eof:
        raise CorruptRecordError("gzip data is truncated")
    return out


def _unsnappy(data: bytes, limit: int) -> bytes:
    if not data.startswith(XERIAL_MAGIC):
        return _snappy_block(data, limit)
    if len(data) < 16:
        raise CorruptRecordError("snappy (xerial) header is truncated")
    parts: list[bytes] = []
    total, pos = 0, 16
    while pos < len(data):
        if pos + 4 > len(data):
            raise CorruptRecordError("snappy (xerial) block length is truncated")
        (size,) = _INT32.unpack_from(data, pos)
        pos += 4
        if size < 0 or pos + size > len(data):
            raise CorruptRecordError("snappy (xerial) block runs past the end")
        block = _snappy_block(data[pos:pos + size], limit - total)
        total += len(block)
        parts.append(block)
        pos += size
    return b"".join(parts)


def _snappy_block(block: bytes, limit: int) -> bytes:
    declared = cramjam.snappy.decompress_raw_len(block)
    if declared > limit:
        raise _too_big("snappy", limit)
    return bytes(cramjam.snappy.decompress_raw(block))


_LZ4_MAGIC = b"\x04\x22\x4d\x18"


def _with_lz4_checksum(frame: bytes, *, broken: bool) -> bytes:
    """The frame with its descriptor checksum recomputed: correctly, or Kafka's magic 0 way (over the magic)."""
    if len(frame) < 7 or not frame.startswith(_LZ4_MAGIC):
        return frame
    descriptor_end = 6 + (8 if frame[4] & 0x08 else 0) + (4 if frame[4] & 0x01 else 0)
    if len(frame) <= descriptor_end:
        return frame
    start = 0 if broken else 4
    checksum = (xxhash.xxh32_intdigest(frame[start:descriptor_end]) >> 8) & 0xFF
    return frame[:descriptor_end] + bytes([checksum]) + frame[descriptor_end + 1:]


def _unlz4(data: bytes | memoryview, limit: int) -> bytes:
    # The output bound grows as output arrives: a large max_length up front costs its allocation every time.
    d = lz4.frame.LZ4FrameDecompressor()
    step = max(4 * len(data), 1 << 16)
    out = d.decompress(data, max_length=min(step, limit + 1))
    chunks, total = [out], len(out)
    while not d.eof and total <= limit:
        if d.needs_input:
            raise CorruptRecordError("lz4 frame is truncated")
        step *= 2
        out = d.decompress(b"", max_length=min(step, limit + 1 - total))
        chunks.append(out)
        total += len(out)
    if total > limit:
        raise _too_big("lz4", limit)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _unzstd(data: bytes | memoryview, limit: int) -> bytes:
    declared = zstandard.frame_content_size(data)
    if declared > limit:
        raise _too_big("zstd", limit)
    # With an unknown content size (zstd-jni streams its frames), max_output_size bounds the output; a frame
    # that does not fit, or does not end, is an error either way.
    try:
        return zstandard.ZstdDecompressor().decompress(data, max_output_size=limit, allow_extra_data=False)
    except zstandard.ZstdError as exc:
        if declared < 0 and "did not decompress full frame" in str(exc) and _decompresses_past(data, limit):
            raise _too_big("zstd", limit) from None
        raise


def _decompresses_past(data: bytes | memoryview, limit: int) -> bool:
    """Tell an oversized frame from a truncated one, reading at most ``limit + 1`` bytes of output."""
    reader = zstandard.ZstdDecompressor().stream_reader(data)
    total = 0
    while total <= limit:
        chunk = reader.read(min(limit + 1 - total, 1 << 20))
        if not chunk:
            return False
        total += len(chunk)
    return True
