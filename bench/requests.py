"""Per-request cost: the round trip of single requests, one at a time on one connection, on kafkamock and its
peers in the same run, with each broker process's CPU time per request; and the floor of any Python server on
this machine, for scale.

Why this exists: the commit, transaction and share rows of the other bench scripts are bounded by what one request
costs the broker, not by bandwidth. This script shows that cost per API, side by side, and how much of it any
Python server pays before doing anything (the floors below).

Method: each broker of ``bench/peers.py`` in turn, fresh, with a one-partition topic. One TCP connection (TCP_NODELAY)
sends each request kind 200 times untimed, then N times timed, one at a time: the same encoded frame each time
(the first answer of each kind is decoded and must carry no error, or the row says FAILED). The request versions are
the highest each broker lists in ApiVersions, up to those named in KINDS, so every broker answers the same kind of
request. The client is plain Python sockets; its own cost is the same for every broker. Broker CPU is the broker
process's time on a CPU over the timed requests (Linux schedstat), so the mock cluster, which lives in this process,
has none. The floors are two minimal servers that answer every frame with a fixed 20-byte frame and do nothing else:
one on trio with non-blocking system calls as kafkamock's connections make them (``trio floor``), one on a bare
``select.epoll`` loop (``epoll floor``).

    .venv/bin/python bench/requests.py                        # 5,000 of each, kafkamock, kfake, Kafka, mock, floors
    .venv/bin/python bench/requests.py --count 1000 --brokers kafkamock,mock
"""

from __future__ import annotations

import argparse
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peers  # noqa: E402
from peers import LABELS, BenchError, is_kafkamock, pick, versions  # noqa: E402

from kafkamock.codec import codec_for, default_registry, encode_request  # noqa: E402
from kafkamock.records import encode_batch  # noqa: E402

TOPIC, GROUP = "requests-bench", "requests-bench"
SIZE = struct.Struct(">i")
DEFAULT_BROKERS = ["kafkamock", "kfake", "kafka", "mock"]
FLOORS = ("trio floor", "epoll floor")
# label, API, highest version asked, body
KINDS = [
    ("ApiVersions", "ApiVersions", 3, {"client_software_name": "bench", "client_software_version": "1"}),
    ("Metadata (1 topic)", "Metadata", 12, {"topics": [{"name": TOPIC}], "allow_auto_topic_creation": False}),
    ("ListOffsets (latest)", "ListOffsets", 7, {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": TOPIC, "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}]}),
    ("Produce (1 x 100 B, acks=1)", "Produce", 9, {"transactional_id": None, "acks": 1, "timeout_ms": 5000,
                                                 "topic_data": [{"name": TOPIC, "partition_data": [
                                                     {"index": 0, "records": encode_batch([{"value": b"x" * 100}])}]}]}),
    ("Fetch (1 record)", "Fetch", 12, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20,
                                       "isolation_level": 0, "session_id": 0, "session_epoch": -1, "topics": [
                                           {"topic": TOPIC, "partitions": [
                                               {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0,
                                                "last_fetched_epoch": -1, "log_start_offset": -1,
                                                "partition_max_bytes": 200}]}],
                                       "forgotten_topics_data": [], "rack_id": ""}),
    ("OffsetCommit (1 partition)", "OffsetCommit", 8, {"group_id": GROUP, "generation_id_or_member_epoch": -1,
                                                       "member_id": "", "group_instance_id": None, "topics": [
                                                           {"name": TOPIC, "partitions": [
                                                               {"partition_index": 0, "committed_offset": 0,
                                                                "committed_leader_epoch": -1,
                                                                "committed_metadata": ""}]}]}),
    ("OffsetFetch (1 partition)", "OffsetFetch", 7, {"group_id": GROUP, "require_stable": False, "topics": [
        {"name": TOPIC, "partition_indexes": [0]}]}),
]


class Connection:
    def __init__(self, bootstrap: str) -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _read(self, n: int) -> bytes:
        chunks, got = [], 0
        while got < n:
            chunk = self.sock.recv(n - got)
            if not chunk:
                raise BenchError("the broker closed the connection")
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def round_trip(self, frame: bytes) -> bytes:
        self.sock.sendall(frame)
        (size,) = SIZE.unpack(self._read(4))
        return self._read(size)

    def close(self) -> None:
        self.sock.close()


def served_versions(conn: Connection) -> dict[int, int]:
    """{api key: highest version} from an ApiVersions v0 answer (every broker answers v0)."""
    answer = conn.round_trip(encode_request("ApiVersions", 0, 1, "bench", {}))
    body, _ = codec_for("ApiVersionsResponse", 0).decode_from(answer, 4)
    return {k.api_key: k.max_version for k in body.api_keys}


def first_error(api: str, version: int, answer: bytes) -> int:
    """The first non-zero error code of an answer (0: none); trailing bytes after the body are ignored."""
    registry = default_registry()
    exchange = registry.exchange(registry.api_key(api), version)
    _, pos = exchange.response_header.decode_from(answer, 0)
    body, _ = exchange.response.decode_from(answer, pos)
    codes: list[int] = []

    def walk(value: object) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "error_code" and item:
                    codes.append(item)
                else:
                    walk(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                walk(item)
    walk(body)
    return codes[0] if codes else 0


def wait_for_coordinator(conn: Connection, served: dict[int, int]) -> None:
    """FindCoordinator until the group's coordinator is known (Kafka makes __consumer_offsets on the first ask, and
    answers a commit NOT_COORDINATOR until it is up): the commit rows then time commits, not that start-up."""
    version = min(3, served.get(default_registry().api_key("FindCoordinator"), 0))
    deadline = time.monotonic() + 60
    while True:
        answer = conn.round_trip(encode_request("FindCoordinator", version, 3, "bench", {"key": GROUP, "key_type": 0}))
        if not first_error("FindCoordinator", version, answer):
            return
        if time.monotonic() > deadline:
            raise BenchError("the group coordinator did not come up in 60 s")
        time.sleep(0.2)


def measure(bootstrap: str, count: int, cpu) -> dict[str, tuple[float, float | None] | str]:
    conn = Connection(bootstrap)
    out: dict[str, tuple[float, float | None] | str] = {}
    try:
        served = served_versions(conn)
        wait_for_coordinator(conn, served)
        for label, api, highest, body in KINDS:
            key = default_registry().api_key(api)
            if key not in served:
                out[label] = "not served"
                continue
            version = min(highest, served[key])
            frame = encode_request(api, version, 7, "bench", body)
            error = first_error(api, version, conn.round_trip(frame))
            if error:
                out[label] = f"FAILED: error code {error}"
                continue
            for _ in range(200):
                conn.round_trip(frame)
            before, started = cpu(), time.perf_counter()
            for _ in range(count):
                conn.round_trip(frame)
            elapsed, after = time.perf_counter() - started, cpu()
            used = (after[0] - before[0]) / count * 1e6 if before and after else None
            out[label] = (elapsed / count * 1e6, used)
    finally:
        conn.close()
    return out


def measure_floor(name: str, count: int) -> dict[str, tuple[float, float | None] | str]:
    """A floor server in a process of its own, timed on ApiVersions-sized frames."""
    port = peers.free_port()
    proc = subprocess.Popen([sys.executable, "-c", FLOOR_SERVER, "trio" if name == "trio floor" else "epoll",
                             str(port)])
    try:
        if not peers.wait_accepting(port, 10):
            raise BenchError(f"the {name} server did not start")
        conn = Connection(f"127.0.0.1:{port}")
        frame = SIZE.pack(30) + b"y" * 30
        for _ in range(200):
            conn.round_trip(frame)
        before, started = peers.cpu_seconds(proc.pid), time.perf_counter()
        for _ in range(count):
            conn.round_trip(frame)
        elapsed, after = time.perf_counter() - started, peers.cpu_seconds(proc.pid)
        conn.close()
        used = (after[0] - before[0]) / count * 1e6 if before and after else None
        return {"any request": (elapsed / count * 1e6, used)}
    finally:
        peers.terminate(proc)


FLOOR_SERVER = r'''
import os, select, socket, struct, sys
import trio
MODE, PORT = sys.argv[1], int(sys.argv[2])
RESP = struct.pack(">i", 16) + b"x" * 16
SIZE = struct.Struct(">i")

def frames(buf):
    n = 0
    while len(buf) >= 4 and len(buf) >= 4 + SIZE.unpack_from(buf)[0]:
        buf = buf[4 + SIZE.unpack_from(buf)[0]:]
        n += 1
    return buf, n

async def serve(stream):
    fd, buf = stream.socket.fileno(), b""
    while True:
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            await trio.lowlevel.wait_readable(fd)
            continue
        if not data:
            return
        buf, n = frames(buf + data)
        for _ in range(n):
            os.write(fd, RESP)

if MODE == "trio":
    trio.run(lambda: trio.serve_tcp(serve, PORT, host="127.0.0.1"))
else:
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", PORT)); ls.listen(); ls.setblocking(False)
    ep = select.epoll(); ep.register(ls.fileno(), select.EPOLLIN); conns = {}
    while True:
        for fd, _ in ep.poll():
            if fd == ls.fileno():
                c, _ = ls.accept(); c.setblocking(False)
                c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                conns[c.fileno()] = [c, b""]; ep.register(c.fileno(), select.EPOLLIN)
                continue
            c, buf = conns[fd]
            try:
                data = os.read(fd, 65536)
            except BlockingIOError:
                continue
            if not data:
                ep.unregister(fd); c.close(); del conns[fd]; continue
            buf, n = frames(buf + data)
            for _ in range(n):
                os.write(fd, RESP)
            conns[fd][1] = buf
'''


def render(names: list[str], results: dict[str, dict], which: int, unit: str) -> str:
    """Round trips (``which`` 0) or broker CPU (1) per request, a column per broker, and kafkamock against the
    fastest peer of the row (above 1: kafkamock is cheaper)."""
    brokers = [n for n in names if n not in FLOORS]
    ours = next((n for n in brokers if is_kafkamock(n)), None)
    rivals = [n for n in brokers if not is_kafkamock(n)]
    heads = [LABELS.get(n, n) for n in names]
    lines = [f"| request | {' | '.join(heads)} |" + (" kafkamock/best peer |" if ours and rivals else ""),
             "|---|" + "---:|" * (len(heads) + (1 if ours and rivals else 0))]
    for label in [k[0] for k in KINDS] + ["any request"]:
        cells, values = [], {}
        for n in names:
            cell = results[n].get(label, "-" if n not in FLOORS else "")
            if isinstance(cell, tuple):
                value = cell[which]
                cells.append("-" if value is None else f"{value:,.1f}")
                if value is not None:
                    values[n] = value
            else:
                cells.append(cell)
        if not any(cells):
            continue
        if ours and rivals:
            best = min((n for n in rivals if n in values), key=values.__getitem__, default=None)
            cells.append(f"{values[best] / values[ours]:.2f} ({LABELS[best]})" if best and ours in values else "n/a")
        lines.append(f"| {label} ({unit}) | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=5000, help="timed requests of each kind")
    parser.add_argument("--brokers", "--only", dest="brokers", metavar="NAMES",
                        help=f"comma-separated, of: {', '.join(peers.PEERS)} (default: {','.join(DEFAULT_BROKERS)})")
    parser.add_argument("--no-floors", action="store_true", help="leave out the two floor servers")
    args = parser.parse_args()
    names = pick(args.brokers or ",".join(DEFAULT_BROKERS), list(peers.PEERS), parser)
    results: dict[str, dict] = {}
    failed = False
    for name in names:
        print(f"{name} ...", file=sys.stderr, flush=True)
        broker = None
        try:
            broker = peers.PEERS[name]()
            broker.create_topic(TOPIC)
            results[name] = measure(broker.bootstrap, args.count, broker.cpu_seconds)
        except BenchError as exc:
            results[name] = {k[0]: peers.failed(exc) for k in KINDS}
        finally:
            if broker is not None:
                try:
                    broker.stop()
                except BenchError as exc:
                    results[name] = {k[0]: peers.failed(exc) for k in KINDS}
        failed = failed or any(isinstance(v, str) and v.startswith("FAILED") for v in results[name].values())
    columns = list(names)
    if not args.no_floors:
        for floor in FLOORS:
            print(f"{floor} ...", file=sys.stderr, flush=True)
            results[floor] = measure_floor(floor, args.count)
            columns.append(floor)
    print(f"\n{args.count:,} requests of each kind, one at a time on one connection; {versions(names)}\n")
    print(render(columns, results, 0, "µs a round trip"))
    print()
    print(render(columns, results, 1, "µs of broker CPU"))
    print("\nkafkamock/best peer: the fastest peer's figure over kafkamock's (above 1: kafkamock is faster). The "
          "floors answer any frame with a fixed one and do nothing else.")
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
