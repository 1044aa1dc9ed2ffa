"""The framing walk of a v2 batch's records: each record's length prefix, record after record, nothing decoded.

The broker walks every produced batch this way before storing it (``BatchView.validate_records``). The walk runs
in the compiled ``_framing`` module when it was built (``pip install`` compiles it where a C compiler is found),
else in ``walk_records_python``, its exact twin: same results, same errors, about 0.18 µs a record instead of a
few nanoseconds. ``COMPILED`` says which one runs.
"""

from __future__ import annotations

from kafkamock.records.errors import CorruptRecordError

try:
    from kafkamock.records import _framing  # type: ignore[attr-defined]
except ImportError:              # built without a C compiler: the Python walk
    _framing = None

COMPILED = _framing is not None
_TOO_LONG, _BAD_LENGTH, _PAST_END = 1, 2, 3


def walk_records(body: bytes | bytearray | memoryview, p: int, stop: int, count: int, batch_start: int) -> None:
    """Check that ``count`` records, each as long as its zigzag varint prefix, fill ``body[p:stop]`` exactly;
    raise CorruptRecordError (at ``batch_start``, the batch's offset, as the other batch errors) otherwise."""
    if _framing is None:
        walk_records_python(body, p, stop, count, batch_start)
        return
    status, value = _framing.walk(body, p, stop, count)
    _raise_for(status, value, stop, count, batch_start)


def _raise_for(status: int, value: int, stop: int, count: int, batch_start: int) -> None:
    if status == _TOO_LONG:
        raise CorruptRecordError("record length varint is too long", batch_start)
    if status == _BAD_LENGTH:
        raise CorruptRecordError(f"record length {value} does not fit the batch", batch_start)
    if status == _PAST_END:
        raise CorruptRecordError("records run past the end of the batch", batch_start)
    if value != stop:
        raise CorruptRecordError(f"{count} records end {stop - value} bytes before the batch does", batch_start)


def walk_records_python(body: bytes | bytearray | memoryview, p: int, stop: int, count: int, batch_start: int
                        ) -> None:
    """``walk_records`` in Python."""
    try:
        for _ in range(count):
            x = body[p]
            if x < 0x80:                      # one- and two-byte lengths inline: this runs once per record
                p += 1
                length = (x >> 1) ^ -(x & 1)
            elif body[p + 1] < 0x80:
                x = (x & 0x7F) | (body[p + 1] << 7)
                p += 2
                length = (x >> 1) ^ -(x & 1)
            else:
                value = shift = 0
                for _ in range(5):
                    x = body[p]
                    p += 1
                    value |= (x & 0x7F) << shift
                    if x < 0x80:
                        break
                    shift += 7
                else:
                    raise CorruptRecordError("record length varint is too long", batch_start)
                length = (value >> 1) ^ -(value & 1)
            if length < 6 or p + length > stop:  # attributes, 4 varints, header count: 6 bytes at the least
                raise CorruptRecordError(f"record length {length} does not fit the batch", batch_start)
            p += length
    except IndexError:
        raise CorruptRecordError("records run past the end of the batch", batch_start) from None
    if p != stop:
        raise CorruptRecordError(f"{count} records end {stop - p} bytes before the batch does", batch_start)
