"""Record-batch speed: kafkamock's full decode and encode per compression, its zero-copy header path, and the
record readers of kio and kafka-python on the same bytes.

Why this exists: clients decode every record, while kafkamock's broker only splits batches, checks their CRC
and rewrites the base offset in place. This script puts numbers on both paths for one realistic 1 MB batch and
holds kafkamock's record decoder against the two other Python record readers, instead of taking it on trust.
It is a measurement, not a test: it fails only when a peer disagrees with kafkamock about the records.

Method: 1,000 records (1,024-byte values mixing random bytes with repeated text, so lz4 and zstd have
something realistic to do; 8-16 byte keys; 0-1 headers) are encoded by kafkamock into one batch per
compression. Every peer decodes those same bytes (CRC checked, every record materialised) and must agree with
kafkamock on the record count, the total value size and a few records. MB/s is always the *uncompressed
records region* (the batch minus its 61-byte header, before compression) per second, MB = 10^6 bytes, so the
compressions compare the same work. Timing uses ``timeit`` (GC off while timing): loops auto-scaled so one run
takes 0.2-0.5 s; the cells of one compression take turns run by run (a slow spell of a shared machine then hits
every library alike), and each keeps its best run. "n/a" means the peer cannot read that batch; "-" means not measured.

    PYTHONPATH=. python bench/records.py
    python bench/records.py --quick               # one run per case: a smoke run
    python bench/records.py --json results.json   # also write the raw numbers
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import platform
import random
import sys
import timeit
from collections.abc import Callable
from functools import partial
from typing import Any

from kafkamock import records
from kafkamock.records.layout import HEADER_SIZE

COMPRESSIONS = ("none", "lz4", "zstd")
PEERS = ("kio", "kafka-python")
SAMPLES = (0, 1, 500, 998, 999)
WORDS = b"order shipped pending region eu-west-1 customer amount currency EUR status ok retry sku warehouse".split()


def build_records(n: int = 1000, value_size: int = 1024) -> list[dict[str, Any]]:
    """Deterministic records: each value is 256 random bytes followed by random words up to ``value_size``."""
    rng = random.Random(7)
    out = []
    for i in range(n):
        text = bytearray(rng.randbytes(256))
        while len(text) < value_size:
            text += rng.choice(WORDS) + b" "
        key = f"u{i:07d}-{rng.randbytes(4).hex()}"[:rng.randint(8, 16)].encode()
        headers = [("trace-id", rng.randbytes(8).hex().encode())] if rng.random() < 0.5 else []
        out.append({"key": key, "value": bytes(text[:value_size]), "headers": headers,
                    "timestamp": 1_700_000_000_123 + 7 * i})
    return out


# --- decoders: each returns one list of records per batch; ``facts`` normalises them for the agreement check ---

class NotSupported(Exception):
    pass


def kio_decoder(data: bytes, compression: str) -> Callable[[], Any]:
    from kio.records.readers import read_batch
    if compression != "none":
        raise NotSupported("kio.records.readers.read_batch has no decompression (it ignores attribute bits 0-2)")

    def decode():
        batches, pos = [], 0
        while pos < len(data):
            batch, size = read_batch(data, pos)
            batches.append(batch.records)
            pos += size
        return batches
    return decode


def kafka_python_decoder(data: bytes, compression: str) -> Callable[[], Any]:
    from kafka.record import MemoryRecords

    def decode():  # as kafka-python's Fetcher reads a fetch, with check_crcs=True (its default)
        batches, memory = [], MemoryRecords(data)
        while (batch := memory.next_batch()) is not None:
            if not batch.validate_crc():
                raise AssertionError("kafka-python: CRC mismatch")
            batches.append(list(batch))
        return batches
    return decode


DECODERS = {"kio": kio_decoder, "kafka-python": kafka_python_decoder}


def facts(batches: list, lib: str) -> tuple:
    recs = [r for batch in batches for r in batch]

    def one(r) -> tuple:
        if lib == "kio":  # kio: datetime timestamps, RecordHeader objects with bytes keys
            return (r.offset, int(r.timestamp.timestamp() * 1000), r.key, r.value,
                    tuple((h.key.decode(), h.value) for h in r.headers))
        return r.offset, r.timestamp, r.key, r.value, tuple(r.headers)
    return len(recs), sum(len(r.value) for r in recs), tuple(one(recs[i]) for i in SAMPLES)


def check(lib: str, got: tuple, expected: tuple) -> str | None:
    """Raise if ``lib`` disagrees with kafkamock; return a note for a known, tolerated difference."""
    if lib == "kio" and got != expected:
        # kio.records.readers.read_record builds a datetime with .replace(microsecond=0): milliseconds are lost
        floored = (*expected[:2], tuple((o, t // 1000 * 1000, *rest) for o, t, *rest in expected[2]))
        if got == floored:
            return "kio truncates record timestamps to whole seconds (read_record: .replace(microsecond=0))"
    if got != expected:
        raise AssertionError(f"{lib} decodes the batch differently:\n  {got}\nvs kafkamock\n  {expected}")
    return None


def header_path(buffer: bytearray) -> None:
    """What the broker does to a produced batch: split, check CRC and header, assign offsets in place."""
    views, _ = records.split_batches(buffer)
    for view in views:
        view.validate()
        view.set_base_offset(1_000_000)


# --- timing ---------------------------------------------------------------------------------------------------------

def time_per_op(fns: dict[Any, Callable[[], Any]], repeats: int) -> dict[Any, tuple[float, int]]:
    """Best seconds per call and loop count, per callable: loops auto-scaled so one run takes 0.2-0.5 s, then the
    callables take turns run by run, so a slow spell of the machine hits them all alike; best of the runs."""
    timers = {key: timeit.Timer(fn) for key, fn in fns.items()}
    sized = {key: timer.autorange() for key, timer in timers.items()}  # 1, 2, 5, 10, ... loops until >= 0.2 s
    best = {key: first for key, (_, first) in sized.items()}
    for _ in range(repeats - 1):
        for key, timer in timers.items():
            best[key] = min(best[key], timer.timeit(sized[key][0]))
    return {key: (best[key] / sized[key][0], sized[key][0]) for key in timers}


def measure(repeats: int) -> tuple[list[dict[str, Any]], list[str], dict[str, int]]:
    recs = build_records()
    region = len(records.encode_batch(recs)) - HEADER_SIZE
    results, notes, sizes = [], [], {"records_region": region}
    for compression in COMPRESSIONS:
        print(f"timing {compression} ...", file=sys.stderr, flush=True)
        data = records.encode_batch(recs, compression=compression)
        sizes[compression] = len(data)
        expected = facts([b.records for b in records.decode_batches(data)], "kafkamock")
        cells = {("decode", "kafkamock"): partial(records.decode_batches, data),
                 ("encode", "kafkamock"): partial(records.encode_batch, recs, compression=compression)}
        if compression == "none":  # the copy is made once, outside the timing
            cells["header path", "kafkamock"] = partial(header_path, bytearray(data))
        for lib in PEERS:
            try:
                decode = DECODERS[lib](data, compression)
            except (NotSupported, ImportError) as exc:
                results.append({"compression": compression, "op": "decode", "library": lib, "us_per_op": None,
                                "reason": str(exc)})
                notes.append(f"n/a: {lib}: {exc}")
                continue
            if note := check(lib, facts(decode(), lib), expected):
                notes.append(note)
            cells["decode", lib] = decode
        for (op, lib), (seconds, loops) in time_per_op(cells, repeats).items():
            results.append({"compression": compression, "op": op, "library": lib, "us_per_op": seconds * 1e6,
                            "mb_per_s": region / seconds / 1e6, "loops": loops, "runs": repeats})
    return results, list(dict.fromkeys(notes)), sizes


# --- report ---------------------------------------------------------------------------------------------------------

def _us(us: float | None) -> str:
    return "n/a" if us is None else f"{us:,.0f}" if us >= 100 else f"{us:.1f}" if us >= 10 else f"{us:.2f}"


def _ratio(peer: float | None, ours: float | None) -> str:
    return "n/a" if peer is None or ours is None else f"{peer / ours:.2f}"


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def render(results: list[dict[str, Any]], notes: list[str], sizes: dict[str, int], meta: dict[str, Any]) -> str:
    cell = {(r["compression"], r["op"], r["library"]): r for r in results}
    lines = [f"{meta['python']} on {meta['platform']}; best of {meta['repeats']} run(s) per cell",
             f"kio {meta['kio']} (records: pure-Python read_batch over native primitives); "
             f"kafka-python {meta['kafka-python']}",
             f"1,000 records x 1,024 B values; uncompressed records region {sizes['records_region']:,} B "
             "(the MB in MB/s, 10^6 B)", "",
             "| compression | batch bytes | op | kafkamock µs/op | kafkamock MB/s | kio µs/op | kafka-python µs/op "
             "| kio/kafkamock | kafka-python/kafkamock |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    for compression in COMPRESSIONS:
        for op in ("decode", "encode", "header path"):
            ours = cell.get((compression, op, "kafkamock"))
            if ours is None:
                continue
            ours_us = ours["us_per_op"]
            if op == "decode":
                peer_us = [cell[compression, op, lib]["us_per_op"] for lib in PEERS]
                peer_cols = [*map(_us, peer_us), *(_ratio(us, ours_us) for us in peer_us)]
            else:
                peer_cols = ["-"] * 4
            label = "split + validate + set_base_offset" if op == "header path" else op
            lines.append(f"| {compression} | {sizes[compression]:,} | {label} | {_us(ours_us)} | "
                         f"{ours['mb_per_s']:,.0f} | " + " | ".join(peer_cols) + " |")
    full, header = cell["none", "decode", "kafkamock"], cell["none", "header path", "kafkamock"]
    lines += ["", f"Header path vs full decode of the same uncompressed batch: "
              f"{full['us_per_op'] / header['us_per_op']:,.0f}x faster.",
              "Ratios > 1 mean kafkamock is faster; peers are timed on decode only.", *notes]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="PATH", help="also write the raw numbers to PATH")
    parser.add_argument("--quick", action="store_true", help="one run per cell instead of fifteen (smoke run)")
    args = parser.parse_args(argv)
    repeats = 1 if args.quick else 15
    meta = {"python": f"{platform.python_implementation()} {platform.python_version()}", "platform": platform.platform(),
            "kafkamock": _version("kafkamock"), "kio": _version("kio"), "kafka-python": _version("kafka-python"),
            "repeats": repeats, "quick": args.quick}
    results, notes, sizes = measure(repeats)
    print(render(results, notes, sizes, meta))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"meta": meta, "sizes": sizes, "notes": notes, "results": results}, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
