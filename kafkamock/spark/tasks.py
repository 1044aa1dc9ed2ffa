"""What runs in Spark's Python workers: read one offset range as Arrow batches, write Arrow batches to Kafka."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Iterator

import pyarrow as pa
import trio

from kafkamock.client import EARLIEST, LATEST, Producer, list_offsets, read_range
from kafkamock.client.errors import KafkaResponseError
from kafkamock.spark.options import ClientSettings
from kafkamock.spark.planning import OffsetRange
from kafkamock.spark.rows import arrow_schema, outgoing, to_arrow

OFFSET_OUT_OF_RANGE = 1
_DONE = object()


class DataLossError(RuntimeError):
    """Offsets a query needs are gone from Kafka (retention, DeleteRecords, or a deleted topic)."""


def data_loss(message: str) -> DataLossError:
    return DataLossError(
        f"{message}. Some data may have been lost because they are not available in Kafka any more; either the "
        "data was aged out by Kafka or the topic may have been deleted before all the data in the topic was "
        "processed. If you don't want your query to fail on such cases, set the source option "
        "'failOnDataLoss' to 'false'.")


def read_arrow(settings: ClientSettings, rng: OffsetRange, include_headers: bool,
               fail_on_data_loss: bool, poll_timeout_s: float = 120.0) -> Iterator[pa.RecordBatch]:
    """The records of ``rng`` as Arrow batches, one per fetch, streamed from a trio loop on a helper thread (so a
    large range is never held in memory at once). Offsets still missing after ``poll_timeout_s`` fail the task
    (Spark's kafkaConsumer.pollTimeoutMs)."""
    schema = arrow_schema(include_headers)
    out: queue.Queue = queue.Queue(maxsize=4)
    stop = threading.Event()

    async def produce_batches() -> None:
        async with settings.kafka_client() as client:
            start = rng.start
            while start < rng.end:
                try:
                    async for chunk in read_range(client, rng.topic, rng.partition, start, rng.end,
                                                  wait_timeout_s=poll_timeout_s,
                                                  isolation_level=settings.isolation_level,
                                                  partition_max_bytes=settings.max_partition_fetch_bytes,
                                                  max_bytes=settings.fetch_max_bytes,
                                                  min_bytes=settings.fetch_min_bytes,
                                                  max_wait_ms=settings.fetch_max_wait_ms,
                                                  rack_id=settings.client_rack):
                        if chunk.records and chunk.records[0].offset > start and chunk.log_start_offset > start:
                            _lost(rng, start, chunk.log_start_offset, fail_on_data_loss)
                        if chunk.records:
                            batch = to_arrow(rng.topic, rng.partition, chunk, schema, include_headers)
                            while not stop.is_set():  # this thread only feeds the queue: blocking here is fine
                                try:
                                    out.put(batch, timeout=0.1)
                                    break
                                except queue.Full:
                                    continue
                            if stop.is_set():
                                return
                        start = chunk.next_offset
                except KafkaResponseError as exc:
                    if exc.code != OFFSET_OUT_OF_RANGE:
                        raise
                    bounds = await list_offsets(client, {(rng.topic, rng.partition): EARLIEST})
                    earliest = bounds[(rng.topic, rng.partition)]
                    if earliest <= start:
                        latest = (await list_offsets(client, {(rng.topic, rng.partition): LATEST}))[
                            (rng.topic, rng.partition)]
                        _lost(rng, start, latest, fail_on_data_loss, beyond=True)
                        return
                    _lost(rng, start, earliest, fail_on_data_loss)
                    start = min(earliest, rng.end)

    def runner() -> None:
        try:
            trio.run(produce_batches)
            out.put(_DONE)
        except BaseException as exc:  # handed to the consuming thread, which raises it in the Spark task
            out.put(exc)

    thread = threading.Thread(target=runner, name=f"kafkamock-read-{rng.topic}-{rng.partition}", daemon=True)
    thread.start()
    try:
        while True:
            item = out.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        thread.join(timeout=30)


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


def write_arrow(settings: ClientSettings, batches: Iterable[pa.RecordBatch], topic_option: str | None) -> int:
    """Produce every row of ``batches``; returns how many records were written (all acknowledged)."""

    async def main() -> int:
        written = 0
        async with Producer(settings.producer) as producer:
            for batch in batches:
                if batch.num_rows:
                    await producer.send_all(outgoing(batch, topic_option))
                    written += batch.num_rows
        return written

    return trio.run(main)
