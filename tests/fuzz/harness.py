"""A live broker under hostile input, and the oracles the fuzzer checks after every case.

``FuzzTarget`` runs one kafkamock broker (on a ManualClock, so that a case that legitimately waits, a long poll
with MaxWaitMs 2^31 or a half-sent frame, can be pushed past every deadline instead of slept on) with a control
topic of acknowledged records. ``run_case`` sends one case on a fresh connection, followed by an ApiVersions
request, and requires each case to end within a real-time deadline: with answers, or with the broker closing the
connection. The oracles:

- every case ends (an answer or a close) within ``CASE_DEADLINE_S`` once the clock has passed every timeout;
- no case makes the process's peak memory jump by more than ``CASE_MEMORY_MB`` (the broker runs in the fuzzer's
  process: a request that makes it allocate by a field's value, not by the bytes it sent, is a finding);
- the listener keeps accepting: a fresh connection's ApiVersions is answered after each case;
- the broker thread is alive, and no kafkamock logger reported an unexpected error (a handler that raised
  something other than a Kafka error, a response the codec refused: the bugs the fuzzer is for);
- at the end, the control records acknowledged before the run read back byte for byte.
"""

from __future__ import annotations

import gzip
import logging
import resource
import socket
import struct
import time
import zlib
from dataclasses import dataclass, field

import crc32c

from kafkamock import codec, records
from kafkamock.broker import ManualClock
from kafkamock.testing import start_broker

CASE_DEADLINE_S = 10.0
CASE_MEMORY_MB = 512
CONTROL_TOPIC = "fuzz-control-0f7a4c"
DAY_MS = 86_400_000
CRC_OFFSET, CRC_START, ATTRIBUTES, RECORD_COUNT, RECORDS_START = 17, 21, 21, 57, 61
COMPRESSION_IDS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


class ErrorLog(logging.Handler):
    """Every ERROR (or worse) a kafkamock logger emits: each one is a finding."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@dataclass
class FuzzTarget:
    clock: ManualClock = field(default_factory=ManualClock)
    control: list[tuple[bytes | None, bytes | None]] = field(default_factory=list)
    cases: int = 0

    def __enter__(self) -> FuzzTarget:
        self.errors = ErrorLog()
        logger = logging.getLogger("kafkamock")
        logger.addHandler(self.errors)
        # Only errors are findings. pytest keeps every record a test logs until the test ends (on non-propagating
        # loggers too), and the whole run is one test: an hour of WARNING records for refused bombs held 21 GB.
        self._level = logger.level
        logger.setLevel(logging.ERROR)
        self.handle = start_broker({"log.retention.ms": "-1", "auto.create.topics.enable": "true"},
                                   clock=self.clock).__enter__()
        self.handle.create_topic(CONTROL_TOPIC, 1, {"retention.ms": "-1", "cleanup.policy": "delete"})
        self.host, port = self.handle.bootstrap_servers.rsplit(":", 1)
        self.port = int(port)
        for n in range(3):
            batch = [(b"key-%d-%d" % (n, i), bytes(range(256)) * (i + 1)) for i in range(5)]
            data = records.encode_batch([{"key": k, "value": v, "timestamp": 1_700_000_000_000} for k, v in batch],
                                        compression=("none", "gzip", "zstd")[n])
            body = {"acks": -1, "timeout_ms": 5000, "topic_data": [
                {"name": CONTROL_TOPIC, "partition_data": [{"index": 0, "records": data}]}]}
            response = self.exchange(codec.encode_request("Produce", 9, 1, "control", body), "Produce", 9)
            assert response.responses[0].partition_responses[0].error_code == 0
            self.control.extend(batch)
        return self

    def __exit__(self, *exc) -> None:
        logger = logging.getLogger("kafkamock")
        logger.removeHandler(self.errors)
        logger.setLevel(self._level)
        self.handle.__exit__(*exc)

    # -- sockets -------------------------------------------------------------------------------------------------

    def connect(self) -> socket.socket:
        return socket.create_connection((self.host, self.port), timeout=CASE_DEADLINE_S)

    def exchange(self, frame: bytes, api: str, version: int):
        with self.connect() as sock:
            sock.sendall(frame)
            return codec.decode_response(api, version, read_frame(sock))[1]

    def api_versions_works(self) -> bool:
        body = self.exchange(codec.encode_request("ApiVersions", 3, 7, "probe",
                                                  {"client_software_name": "fuzz", "client_software_version": "1"}),
                             "ApiVersions", 3)
        return body.error_code == 0

    # -- one case ------------------------------------------------------------------------------------------------

    def run_case(self, frames: list[bytes]) -> str:
        """Send ``frames`` then an ApiVersions probe on one connection; how the case ended ("answered" when the
        probe was answered after it, "closed" when the broker hung up). Raises AssertionError on a finding."""
        self.cases += 1
        probe = codec.encode_request("ApiVersions", 3, 2**31 - 1, "probe",
                                     {"client_software_name": "fuzz", "client_software_version": "1"})
        peak = peak_mb()
        with self.connect() as sock:
            try:
                for frame in frames:
                    sock.sendall(frame)
                sock.sendall(probe)
            except (BrokenPipeError, ConnectionResetError):
                outcome = "closed"
            else:
                outcome = self._drain(sock)
        assert self.handle._thread.is_alive(), "the broker thread died"
        grown = peak_mb() - peak
        assert grown <= CASE_MEMORY_MB, f"the case raised the process's peak memory by {grown:.0f} MB"
        assert self.api_versions_works(), "a fresh connection's ApiVersions failed"
        self.check_errors()
        return outcome

    def _drain(self, sock: socket.socket) -> str:
        """Read answers until the probe's (correlation id 2^31-1) or a close; push the clock past every timeout
        (long polls, group rounds, connections.max.idle.ms) when the broker is legitimately waiting."""
        sock.settimeout(0.5)
        deadline = time.monotonic() + CASE_DEADLINE_S
        pushed = 0
        while time.monotonic() < deadline:
            try:
                frame = read_frame(sock)
            except TimeoutError:
                if pushed < 3:
                    pushed += 1
                    self.clock.advance(30 * DAY_MS)
                continue
            except (ConnectionError, EOFError):
                return "closed"
            if len(frame) >= 8 and struct.unpack_from(">i", frame, 4)[0] == 2**31 - 1:
                return "answered"
        raise AssertionError(f"the connection neither answered nor closed within {CASE_DEADLINE_S}s "
                             "(after the clock passed every timeout)")

    def check_errors(self) -> None:
        if self.errors.records:
            found = self.errors.records[:]
            self.errors.records.clear()
            details = "\n".join(f"{r.name}: {r.getMessage()}\n{logging.Formatter().formatException(r.exc_info)}"
                                if r.exc_info else f"{r.name}: {r.getMessage()}" for r in found)
            raise AssertionError(f"the broker logged {len(found)} error(s):\n{details}")

    # -- the end -------------------------------------------------------------------------------------------------

    def verify_control(self) -> None:
        """The acknowledged control records read back byte for byte, from offset 0, on a fresh connection."""
        body = {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 50_000_000, "session_epoch": -1,
                "topics": [{"topic": CONTROL_TOPIC, "partitions": [
                    {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 50_000_000}]}]}
        response = self.exchange(codec.encode_request("Fetch", 12, 3, "verify", body), "Fetch", 12)
        partition = response.responses[0].partitions[0]
        assert partition.error_code == 0, partition.error_code
        got = [(r.key, r.value) for b in records.decode_batches(bytes(partition.records)) if not b.is_control
               for r in b.records]
        assert got[:len(self.control)] == self.control, "acknowledged control records changed or went missing"


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024          # KiB on Linux


def read_frame(sock: socket.socket) -> bytes:
    head = _exactly(sock, 4)
    (size,) = struct.unpack(">i", head)
    return head + _exactly(sock, size)


def _exactly(sock: socket.socket, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(min(n - got, 1 << 20))
        if not chunk:
            raise EOFError(f"closed after {got} of {n} bytes")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


# -- hostile record batches ---------------------------------------------------------------------------------------

def batch_with_payload(compression: str, payload: bytes, record_count: int, *, fix_crc: bool = True) -> bytes:
    """A RecordBatch v2 header around ``payload`` (already "compressed" or garbage), with a right CRC so the
    broker gets as far as decompressing it."""
    header = bytearray(records.encode_batch([{"key": None, "value": b"", "timestamp": 0}])[:RECORDS_START])
    struct.pack_into(">i", header, 8, RECORDS_START - 12 + len(payload))
    attributes = struct.unpack_from(">h", header, ATTRIBUTES)[0] & ~0x07 | COMPRESSION_IDS[compression]
    struct.pack_into(">h", header, ATTRIBUTES, attributes)
    struct.pack_into(">i", header, RECORD_COUNT, record_count)
    data = bytes(header) + payload
    if fix_crc:
        data = data[:CRC_OFFSET] + struct.pack(">I", crc32c.crc32c(data[CRC_START:])) + data[CRC_START:]
    return data


def bombs() -> list[bytes]:
    """Small compressed payloads that expand enormously, or lie about their size, in every codec."""
    import cramjam
    import lz4.frame
    import zstandard

    zeros = b"\0" * (64 << 20)          # 64 MiB of zeros: ~64 KB gzipped, a few KB in lz4/zstd
    out = [
        batch_with_payload("gzip", gzip.compress(zeros, 9), 1),
        batch_with_payload("gzip", zlib.compress(zeros, 9), 3),
        batch_with_payload("lz4", lz4.frame.compress(zeros), 1),
        batch_with_payload("zstd", zstandard.ZstdCompressor().compress(zeros), 1),
        batch_with_payload("snappy", bytes(cramjam.snappy.compress_raw(zeros[: 8 << 20])), 1),
        # a zstd frame header that declares 2^60 bytes of content, and nothing after it
        batch_with_payload("zstd", b"\x28\xb5\x2f\xfd\xe4" + struct.pack("<Q", 1 << 60), 1),
        # xerial snappy framing with a block that claims 2 GiB
        batch_with_payload("snappy", b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1) + struct.pack(">i", 2**31 - 1)
                           + b"\xff\xff\xff\xff\x07", 1),
        batch_with_payload("gzip", b"\x1f\x8b\x08\x00" + b"\xff" * 64, 1),
        batch_with_payload("lz4", b"\x04\x22\x4d\x18" + b"\xff" * 32, 1),
    ]
    del zeros
    return out
