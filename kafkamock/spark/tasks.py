"""What runs in Spark's Python workers: read one offset range as Arrow batches, write Arrow batches to Kafka.

A Python worker runs many tasks one after the other. Their Kafka I/O runs on one trio loop per worker process, on
a daemon thread (``_io``), where connected clients and producers are kept between tasks (``_Pool``), so a task
does not pay for connecting, negotiating versions, authenticating or getting a producer id. Nothing makes a Python object per record (``columnar``). A read pipelines its fetches: the next Fetch
is on the wire while a decoding thread turns the last one into an Arrow batch, ahead of Spark taking it. A write
encodes on a thread of its own while Spark's thread takes the next batch, and the loop sends what was encoded.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import queue
import random
import threading
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import AbstractAsyncContextManager
from typing import Any, Generic, Protocol, TypeVar, TypeVarTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import trio

from kafkamock.client import EARLIEST, LATEST, KafkaClient, Producer, list_offsets
from kafkamock.client.errors import KafkaResponseError
from kafkamock.client.reader import RawFetch, fetch_range
from kafkamock.spark.columnar import (
    HEADER_TYPE,
    as_binary,
    chunk_bounds,
    decode_fetch,
    encode_regions,
    header_blobs,
    murmur2_partitions,
    record_sizes,
)
from kafkamock.spark.options import ClientSettings
from kafkamock.spark.planning import OffsetRange
from kafkamock.spark.rows import arrow_schema, columns_to_arrow

OFFSET_OUT_OF_RANGE = 1
PREFETCH = 2                    # fetches decoded ahead of the task, at most (each up to max.partition.fetch.bytes)
IDLE_CLIENTS = 4                # connected clients kept per settings between tasks
R = TypeVar("R")
Ts = TypeVarTuple("Ts")
C = TypeVar("C", bound=AbstractAsyncContextManager[Any])     # a client the pool keeps open
HANDED_OVER = 4                 # encoded batches a write task may have queued for its producer, at most
ARROW_AHEAD = 2                 # Spark's Arrow batches a write task may hold before they are encoded, at most
_DONE = object()


class DataLossError(RuntimeError):
    """Offsets a query needs are gone from Kafka (retention, DeleteRecords, or a deleted topic)."""


def data_loss(message: str) -> DataLossError:
    return DataLossError(
        f"{message}. Some data may have been lost because they are not available in Kafka any more; either the "
        "data was aged out by Kafka or the topic may have been deleted before all the data in the topic was "
        "processed. If you don't want your query to fail on such cases, set the source option "
        "'failOnDataLoss' to 'false'.")


# -- the worker's trio loop --------------------------------------------------------------------------------------

class _IoLoop:
    """A trio loop on a daemon thread, for the life of the process."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.token: Any = None
        self.nursery: trio.Nursery | None = None
        self.clients = _Pool(ClientSettings.kafka_client, _every_setting)
        self.producers = _Pool(lambda settings: Producer(settings.producer), _producer_settings)
        started = threading.Event()
        self.thread = threading.Thread(target=trio.run, args=(self._main, started), name="kafkamock-io",
                                       daemon=True)
        self.thread.start()
        started.wait()

    async def _main(self, started: threading.Event) -> None:
        async with trio.open_nursery() as nursery:
            self.nursery = nursery
            self.token = trio.lowlevel.current_trio_token()
            started.set()
            await trio.sleep_forever()

    def alive(self) -> bool:
        return self.pid == os.getpid() and self.thread.is_alive()

    def call(self, afn: Callable[[*Ts], Awaitable[R]], *args: *Ts) -> R:
        """Run ``afn(*args)`` on the loop and wait for its result (from any other thread)."""
        return trio.from_thread.run(afn, *args, trio_token=self.token)

    def spawn(self, afn: Callable[[*Ts], Awaitable[object]], *args: *Ts) -> None:
        """Start ``afn(*args)`` on the loop; it must not raise (the loop would end)."""
        assert self.nursery is not None
        trio.from_thread.run_sync(self.nursery.start_soon, afn, *args, trio_token=self.token)


_loop: _IoLoop | None = None
_loop_lock = threading.Lock()


def _io() -> _IoLoop:
    global _loop
    with _loop_lock:
        if _loop is None or not _loop.alive():        # first use, or a forked child
            _loop = _IoLoop()
        return _loop


class _Pool(Generic[C]):
    """Open clients by settings, kept between tasks: KafkaClients (a task has one to itself while it runs: a
    broker answers one connection's requests in order, so a long-polling fetch would hold up another task's), and
    Producers, as Spark's own Kafka sink keeps its producers (CachedKafkaProducer). A task takes one and gives it
    back unless its work failed. ``key`` names everything the client was made with, so it is only ever reused
    under those settings."""

    def __init__(self, make: Callable[[ClientSettings], C], key: Callable[[ClientSettings], str]):
        self.make, self.key = make, key
        self.idle: dict[str, list[tuple[C, trio.Event]]] = {}

    async def take(self, settings: ClientSettings) -> tuple[C, trio.Event]:
        idle = self.idle.get(self.key(settings))
        if idle:
            return idle.pop()
        client, closing = self.make(settings), trio.Event()
        assert _loop is not None and _loop.nursery is not None
        await _loop.nursery.start(self.hold, client, closing)
        return client, closing

    @staticmethod
    async def hold(client: AbstractAsyncContextManager[object], closing: trio.Event,
                   task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Keep ``client`` open on the loop until ``closing`` is set."""
        started = False
        try:
            async with client:
                task_status.started()
                started = True
                await closing.wait()
        except Exception:           # closing failed (a producer sending what was left): the task that left it
            if not started:         # has failed already, and the client is dropped
                raise

    def give_back(self, settings: ClientSettings, entry: tuple[C, trio.Event], healthy: bool) -> None:
        idle = self.idle.setdefault(self.key(settings), [])
        if healthy and len(idle) < IDLE_CLIENTS:
            idle.append(entry)
        else:
            entry[1].set()


def _every_setting(settings: ClientSettings) -> str:
    return json.dumps(dataclasses.asdict(settings), sort_keys=True, default=str)


def _producer_settings(settings: ClientSettings) -> str:
    return json.dumps(settings.producer, sort_keys=True, default=str)


# -- reading -----------------------------------------------------------------------------------------------------

def read_arrow(settings: ClientSettings, rng: OffsetRange, include_headers: bool,
               fail_on_data_loss: bool, poll_timeout_s: float = 120.0) -> Iterator[pa.RecordBatch]:
    """The records of ``rng`` as Arrow batches, one per fetch. The fetches run on the worker's I/O loop and are
    decoded on a thread of their own, at most ``PREFETCH`` fetches ahead of Spark, so a large range is never held
    in memory at once and Spark takes batches as fast as it sends them on. Offsets still missing after
    ``poll_timeout_s`` fail the task (Spark's kafkaConsumer.pollTimeoutMs)."""
    if rng.start >= rng.end:
        return
    loop = _io()
    fetched: queue.Queue = queue.Queue()
    decoded: queue.Queue = queue.Queue()
    stop = threading.Event()
    job = _ReadJob(settings, rng, poll_timeout_s, fail_on_data_loss, fetched)
    decoder = threading.Thread(target=_decode, args=(job, fetched, decoded, stop, include_headers),
                               name=f"kafkamock-decode-{rng.topic}-{rng.partition}", daemon=True)
    loop.spawn(job.run)
    decoder.start()
    try:
        while True:
            item = decoded.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            loop.token.run_sync_soon(job.took)     # room for another fetch once this one is Spark's
            if item is not None:
                yield item
    finally:
        stop.set()
        if job.running:
            try:
                loop.call(job.stop)
            except RuntimeError:          # the loop is gone (the process is ending)
                pass
        fetched.put(_DONE)
        decoder.join(timeout=30)


def _decode(job: _ReadJob, fetched: queue.Queue, decoded: queue.Queue, stop: threading.Event,
            include_headers: bool) -> None:
    """The decoding thread of a read: fetches to Arrow batches, the end or the error passed on."""
    rng, settings = job.rng, job.settings
    schema = arrow_schema(include_headers)
    try:
        while not stop.is_set():
            item = fetched.get()
            if item is _DONE or isinstance(item, BaseException):
                decoded.put(item)
                return
            raw: RawFetch = item
            cols = decode_fetch(raw.records, raw.aborted_transactions, settings.isolation_level == 1,
                                raw.fetch_offset, rng.end, include_headers=include_headers)
            if len(cols):
                first = int(cols.offsets[0])
                if first > raw.fetch_offset and raw.log_start_offset > raw.fetch_offset:
                    _lost(rng, raw.fetch_offset, raw.log_start_offset, job.fail)
                decoded.put(columns_to_arrow(rng.topic, rng.partition, cols, schema, include_headers))
            else:
                decoded.put(None)                  # nothing to deliver: still one fetch's room to give back
    except BaseException as exc:          # raised in the Spark task
        decoded.put(exc)


class _ReadJob:
    """One range's fetches, on the I/O loop: each Fetch's data goes to ``out`` undecoded, then ``_DONE`` or the
    error that ended the read."""

    def __init__(self, settings: ClientSettings, rng: OffsetRange, poll_timeout_s: float, fail_on_data_loss: bool,
                 out: queue.Queue):
        self.settings, self.rng, self.poll_timeout_s, self.fail = settings, rng, poll_timeout_s, fail_on_data_loss
        self.out = out
        self.room: trio.Semaphore | None = None
        self.scope: trio.CancelScope | None = None
        self.running = True

    def took(self) -> None:
        """The task took one fetch off the queue: room for another (run on the loop, not waited for)."""
        if self.room is not None:
            self.room.release()

    async def stop(self) -> None:
        if self.scope is not None:
            self.scope.cancel()

    async def run(self) -> None:
        pool = _io().clients
        self.room = trio.Semaphore(PREFETCH)
        entry = None
        healthy = False
        try:
            with trio.CancelScope() as self.scope:      # cancelled when the task stops reading early
                entry = await pool.take(self.settings)
                try:
                    await self._read(entry[0])
                except (KafkaResponseError, DataLossError, TimeoutError):
                    healthy = True                      # the connections are fine: only the read failed
                    raise
                healthy = True
            self.out.put(_DONE)
        except BaseException as exc:      # handed to the task's thread, which raises it in the Spark task
            self.out.put(exc)
        finally:
            self.running = False
            if entry is not None:
                cancelled = self.scope is not None and self.scope.cancelled_caught
                pool.give_back(self.settings, entry, healthy and not cancelled)

    async def _read(self, client: KafkaClient) -> None:
        s, rng = self.settings, self.rng
        assert self.room is not None
        await client.metadata([rng.topic])          # fresh leaders and topic ids for every task
        start = rng.start
        while start < rng.end:
            try:
                async for raw in fetch_range(client, rng.topic, rng.partition, start, rng.end,
                                             wait_timeout_s=self.poll_timeout_s, isolation_level=s.isolation_level,
                                             partition_max_bytes=s.max_partition_fetch_bytes,
                                             max_bytes=s.fetch_max_bytes, min_bytes=s.fetch_min_bytes,
                                             max_wait_ms=s.fetch_max_wait_ms, rack_id=s.client_rack):
                    await self.room.acquire()
                    self.out.put(raw)
                    start = min(raw.next_offset, rng.end)
            except KafkaResponseError as exc:
                if exc.code != OFFSET_OUT_OF_RANGE:
                    raise
                tp = (rng.topic, rng.partition)
                earliest = (await list_offsets(client, {tp: EARLIEST}))[tp]
                if earliest <= start:
                    latest = (await list_offsets(client, {tp: LATEST}))[tp]
                    _lost(rng, start, latest, self.fail, beyond=True)
                    return
                _lost(rng, start, earliest, self.fail)
                start = min(earliest, rng.end)


def _lost(rng: OffsetRange, wanted: int, available: int, fail: bool, beyond: bool = False) -> None:
    where = f"{rng.topic}-{rng.partition}"
    if beyond:
        message = f"Offset {wanted} of {where} is beyond the end of the log ({available}): the topic may have " \
                  "been deleted and re-created"
    else:
        message = f"Offsets [{wanted}, {min(available, rng.end)}) of {where} are no longer in Kafka (the log now " \
                  f"starts at {available})"
    if fail:
        raise data_loss(message)


# -- writing -----------------------------------------------------------------------------------------------------

class Transaction(Protocol):
    """What a transactional write adds around the rows (``transactional.TaskTransaction``): its producer's
    transactional id, then on the I/O loop ``begin`` (False: these rows were committed before, write nothing),
    ``commit`` after every record was sent, ``abort`` when the write fails."""

    transactional_id: str

    async def begin(self, producer: Producer) -> bool: ...
    async def commit(self, producer: Producer) -> None: ...
    async def abort(self, producer: Producer) -> None: ...


def write_arrow(settings: ClientSettings, batches: Iterable[pa.RecordBatch], topic_option: str | None,
                transaction: Transaction | None = None) -> int:
    """Produce every row of ``batches``; returns how many records were written (all acknowledged).

    The task's thread only takes Spark's Arrow batches; a thread of the write partitions and encodes their rows
    into records regions (``columnar``: no Python object per row), and the worker's I/O loop sends them with a
    ``Producer(settings.producer)`` (so linger.ms, batch.size, compression, acks... apply) kept open between the
    worker's tasks. With a ``transaction`` the producer is the task's own transactional one, and the rows go in
    one transaction."""
    loop = _io()
    job = _WriteJob(settings, loop, transaction)
    loop.call(job.open)
    ok = False
    encoder: _Encoder | None = None
    try:
        if transaction is not None and not loop.call(transaction.begin, job.producer):
            for _ in batches:                       # Spark expects the task to consume its input
                pass
            ok = True
            return 0
        encoder = _Encoder(job, loop, topic_option, queue.Queue(maxsize=ARROW_AHEAD))
        encoder.start()
        for batch in batches:
            if batch.num_rows:
                encoder.put(batch)
        encoder.put(_DONE)
        encoder.join()
        if encoder.error is not None:
            raise encoder.error
        written = loop.call(job.finish)
        if transaction is not None:
            loop.call(transaction.commit, job.producer)
        ok = True
        return written
    finally:
        if encoder is not None:
            encoder.stop.set()
        try:
            if not ok and transaction is not None:
                loop.call(transaction.abort, job.producer)
        finally:
            loop.call(job.close, ok)


class _Encoder(threading.Thread):
    """A write's encoding thread: Arrow batches from the task's thread to records regions for the producer."""

    def __init__(self, job: _WriteJob, loop: _IoLoop, topic_option: str | None, arrived: queue.Queue):
        super().__init__(name="kafkamock-encode", daemon=True)
        self.rows = _Rows(job, loop, topic_option)
        self.arrived = arrived
        self.error: BaseException | None = None
        self.stop = threading.Event()

    def put(self, item: Any) -> None:
        """From the task's thread; raises the encoding's error as soon as there is one."""
        while True:
            if self.error is not None:
                raise self.error
            if not self.is_alive():
                raise RuntimeError("the write's encoding thread ended")
            try:
                self.arrived.put(item, timeout=0.5)
                return
            except queue.Full:
                continue

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                try:
                    batch = self.arrived.get(timeout=0.5)
                except queue.Empty:
                    continue
                if batch is _DONE:
                    self.rows.flush()
                    return
                self.rows.add(batch)
        except BaseException as exc:      # raised in the Spark task
            self.error = exc


class _WriteJob:
    """One task's write: a pooled producer on the I/O loop (a transactional write's own, not pooled: its id is the
    task's), fed regions by the task's thread without waiting for the loop (at most ``HANDED_OVER`` regions
    between the two), the handles of what was sent."""

    def __init__(self, settings: ClientSettings, loop: _IoLoop, transaction: Transaction | None = None):
        self.settings, self.loop, self.transaction = settings, loop, transaction
        self.entry: tuple[Producer, trio.Event] | None = None
        self.handles: list[Any] = []
        self.written = 0
        self.error: BaseException | None = None
        self.slots = threading.Semaphore(HANDED_OVER)
        self.sending: trio.MemorySendChannel | None = None
        self.drained = trio.Event()
        self.stopped = False                         # the draining task ended (read from the task's thread)

    @property
    def producer(self) -> Producer:
        assert self.entry is not None
        return self.entry[0]

    async def open(self) -> None:
        if self.transaction is None:
            self.entry = await self.loop.producers.take(self.settings)
        else:
            producer = Producer({**self.settings.producer, "transactional.id": self.transaction.transactional_id})
            closing = trio.Event()
            assert self.loop.nursery is not None
            await self.loop.nursery.start(_Pool.hold, producer, closing)
            self.entry = (producer, closing)
        self.sending, receiving = trio.open_memory_channel[Any](math.inf)
        assert self.loop.nursery is not None
        self.loop.nursery.start_soon(self._drain, receiving)

    async def limits(self, topic: str) -> tuple[int, int]:
        """(partitions of ``topic``, the most bytes a batch may have)."""
        p = self.producer
        return await p.partitions_for(topic), min(max(p.batch_size, 1), p.max_request_size)

    def hand_over(self, regions: list[tuple[str, int, Any, int]]) -> None:
        """From the task's thread: queue regions for the producer, waiting only while too many are queued."""
        assert self.sending is not None
        for region in regions:
            while not self.slots.acquire(timeout=1.0):
                if self.stopped:
                    raise RuntimeError("the producer's feeding task ended")
            if self.error is not None:
                raise self.error
            self.loop.token.run_sync_soon(self._enqueue, region)

    def _enqueue(self, region: tuple[str, int, Any, int]) -> None:
        """On the loop (an exception here would end it): the region, unless the write was closed meanwhile."""
        assert self.sending is not None
        try:
            self.sending.send_nowait(region)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            self.slots.release()

    async def _drain(self, receiving: trio.MemoryReceiveChannel) -> None:
        try:
            async with receiving:
                async for topic, partition, region, count in receiving:
                    try:
                        if self.error is None:
                            self.handles.append(await self.producer.send_encoded(topic, partition, region, count))
                            self.written += count
                    except Exception as exc:       # raised in the task's thread by hand_over or finish
                        self.error = exc
                    finally:
                        self.slots.release()
        finally:
            self.stopped = True
            self.drained.set()

    async def finish(self) -> int:
        assert self.sending is not None
        await self.sending.aclose()
        await self.drained.wait()
        if self.error is not None:
            raise self.error
        await self.producer.flush()
        for handle in self.handles:
            if handle._batch.error is not None:
                raise handle._batch.error
        return self.written

    async def close(self, ok: bool) -> None:
        if self.sending is not None:
            await self.sending.aclose()
        if self.entry is not None:
            if self.transaction is None:
                self.loop.producers.give_back(self.settings, self.entry, ok)
            else:
                self.entry[1].set()
            self.entry = None


class _Pending:
    """Rows for one topic and partition (or the topic's keyless rows, ``partition`` None) not sent yet."""

    __slots__ = ("keys", "values", "headers", "size")

    def __init__(self) -> None:
        self.keys: list[pa.Array] = []
        self.values: list[pa.Array] = []
        self.headers: list[pa.Array | None] = []
        self.size = 0


class _Rows:
    """Arrow rows to records regions: by topic (the ``topic`` option or column), then partition (the ``partition``
    column, else murmur2 of the key as Java's producer, else keyless rows stick to one partition per full batch,
    as Java's sticky partitioner does). Rows wait until a partition has a full batch, so batches are full
    whatever the size of Spark's Arrow batches; ``flush`` sends the rest."""

    def __init__(self, job: _WriteJob, loop: _IoLoop, topic_option: str | None):
        self.job, self.loop, self.topic_option = job, loop, topic_option
        self.pending: dict[tuple[str, int | None], _Pending] = {}
        self.limits: dict[str, tuple[int, int]] = {}
        self.sticky: dict[str, int] = {}

    def add(self, batch: pa.RecordBatch) -> None:
        names = batch.schema.names
        n = batch.num_rows
        keys = as_binary(batch.column("key")) if "key" in names else pa.nulls(n, pa.binary())
        values = as_binary(batch.column("value"))
        headers = batch.column("headers") if "headers" in names else None
        if self.topic_option:
            self._add_topic(self.topic_option, keys, values, headers, batch.column("partition")
                            if "partition" in names else None)
            return
        topics = batch.column("topic")
        if topics.null_count:
            raise ValueError("null topic: a row's 'topic' column is null and no 'topic' option is set")
        encoded = pc.dictionary_encode(topics)
        indices = np.asarray(encoded.indices)
        for i, topic in enumerate(encoded.dictionary.to_pylist()):
            if len(encoded.dictionary) == 1:
                self._add_topic(topic, keys, values, headers, batch.column("partition")
                                if "partition" in names else None)
                continue
            rows = pa.array(np.flatnonzero(indices == i))
            self._add_topic(topic, keys.take(rows), values.take(rows), None if headers is None else headers.take(rows),
                            batch.column("partition").take(rows) if "partition" in names else None)

    def _add_topic(self, topic: str, keys: pa.Array, values: pa.Array, headers: pa.Array | None,
                   partition_column: pa.Array | None) -> None:
        if topic not in self.limits:
            self.limits[topic] = self.loop.call(self.job.limits, topic)
        partitions, _ = self.limits[topic]
        parts = murmur2_partitions(keys, partitions)        # -1: keyless
        if partition_column is not None:
            given = np.asarray(partition_column.fill_null(-1), np.int64)
            bad = (given >= partitions) & (given != -1) | (given < -1)
            if bad.any():
                from kafkamock.client.errors import KafkaError
                from kafkamock.errors import ErrorCode
                raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"the topic has {partitions} partition(s)",
                                 what=f"send to {topic}-{int(given[bad][0])}")
            parts = np.where(given >= 0, given, parts)
        if (parts == parts[0]).all():
            groups = [(int(parts[0]), None)]
        else:
            order = np.argsort(parts, kind="stable")
            cut = np.flatnonzero(np.diff(parts[order])) + 1
            groups = [(int(parts[g[0]]), pa.array(g)) for g in np.split(order, cut)]
        for partition, rows in groups:
            pending = self.pending.setdefault((topic, None if partition < 0 else partition), _Pending())
            take = (lambda c: c) if rows is None else (lambda c, rows=rows: c.take(rows))
            pending.keys.append(take(keys))
            pending.values.append(take(values))
            pending.headers.append(None if headers is None else take(headers))
            pending.size += pending.values[-1].nbytes + pending.keys[-1].nbytes + 8 * len(pending.values[-1])
            if pending.size >= self.limits[topic][1]:
                self._send(topic, None if partition < 0 else partition, final=False)

    def flush(self) -> None:
        for topic, partition in list(self.pending):
            self._send(topic, partition, final=True)

    def _send(self, topic: str, partition: int | None, final: bool) -> None:
        pending = self.pending.pop((topic, partition))
        partitions, limit = self.limits[topic]
        keys = pa.concat_arrays(pending.keys) if len(pending.keys) > 1 else pending.keys[0]
        values = pa.concat_arrays(pending.values) if len(pending.values) > 1 else pending.values[0]
        headers = None
        if any(h is not None for h in pending.headers):
            headers = pa.concat_arrays([h if h is not None else pa.nulls(len(v), HEADER_TYPE)
                                        for h, v in zip(pending.headers, pending.values, strict=True)])
        blobs = header_blobs(headers, len(values))
        bounds = chunk_bounds(record_sizes(keys, values, blobs, limit), limit)
        if not final and len(bounds) > 1:             # the last, partial batch waits for more rows
            a, _ = bounds.pop()
            rest = _Pending()
            rest.keys, rest.values = [keys.slice(a)], [values.slice(a)]
            rest.headers = [None if headers is None else headers.slice(a)]
            rest.size = rest.values[0].nbytes + rest.keys[0].nbytes + 8 * len(rest.values[0])
            self.pending[(topic, partition)] = rest
            keys, values = keys.slice(0, a), values.slice(0, a)
            blobs = None if blobs is None else blobs.slice(0, a)
        out = []
        for region, count in encode_regions(keys, values, blobs, bounds):
            if partition is not None:
                out.append((topic, partition, region, count))
                continue
            sticky = self.sticky.get(topic)       # keyless: one partition per batch, then another
            if sticky is None:
                sticky = random.randrange(partitions)
            out.append((topic, sticky, region, count))
            self.sticky[topic] = random.randrange(partitions)
        self.job.hand_over(out)
