"""The ``kafkamock`` data source: Spark's Kafka connector (options, schema, semantics) as a Python Data Source.

Batch and streaming reads plan offset ranges on the driver (``planning``) and read them in the workers as Arrow
batches (``tasks``); batch and streaming writes produce each task's rows with an idempotent producer.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    DataSourceStreamArrowWriter,
    DataSourceStreamReader,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    ReadMinRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import ArrayType, BinaryType, IntegerType, StringType, StructType

from kafkamock.client import KafkaClient
from kafkamock.spark import planning, transactional
from kafkamock.spark.options import KafkaOptionError, ReadOptions, WriteOptions, read_options, write_options
from kafkamock.spark.planning import (
    OffsetRange,
    TopicPartition,
    held_back,
    rate_limit,
    resolve,
    split,
    subscribed_offsets,
    topic_partitions,
)
from kafkamock.spark.rows import HEADERS_DDL, READ_SCHEMA
from kafkamock.spark.tasks import data_loss, read_arrow, write_arrow

NAME = "kafkamock"
log = logging.getLogger(__name__)


class RangePartition(InputPartition):
    """One Spark task: one offset range of one Kafka partition."""

    def __init__(self, rng: OffsetRange):
        super().__init__(rng)
        self.range = rng


@dataclass
class WriteResult(WriterCommitMessage):
    records: int


class KafkaDataSource(DataSource):
    """``spark.read.format("kafkamock")``: the options and schema of Spark's ``kafka`` format."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> str:
        include = str(self.options.get("includeHeaders", "false")).strip().lower() == "true"
        return READ_SCHEMA + (HEADERS_DDL if include else "")

    def reader(self, schema: StructType) -> DataSourceReader:
        return KafkaBatchReader(self.options)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return KafkaStreamReader(self.options)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceArrowWriter:
        return KafkaBatchWriter(self.options, schema)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamArrowWriter:
        return KafkaStreamWriter(self.options, schema)


# -- reading ---------------------------------------------------------------------------------------------------

class _Reading:
    opts: ReadOptions

    def _read(self, partition: RangePartition) -> Iterator[pa.RecordBatch]:
        opts = self.opts
        yield from read_arrow(opts.client, partition.range, opts.include_headers, opts.fail_on_data_loss,
                              opts.poll_timeout_ms / 1000)


class KafkaBatchReader(_Reading, DataSourceReader):
    def __init__(self, options: Mapping[str, str]):
        self.opts = read_options(options, streaming=False)

    def partitions(self) -> Sequence[InputPartition]:
        opts = self.opts

        async def bounds(client: KafkaClient) -> tuple[list[TopicPartition], dict[TopicPartition, int],
                                                       dict[TopicPartition, int]]:
            parts, starts = await subscribed_offsets(client, opts, opts.starting, "starting offsets")
            ends = await resolve(client, parts, opts.ending, "ending offsets", opts.client.isolation_level,
                                 starting=False)
            return parts, starts, ends

        parts, starts, ends = planning.plan(opts, bounds)
        ranges = []
        for tp in parts:
            start, end = starts[tp], ends[tp]
            if end < start:
                raise KafkaOptionError(f"ending offset {end} of {tp[0]}-{tp[1]} is before its starting offset "
                                       f"{start} (the query's starting and ending options)")
            ranges.append(OffsetRange(tp[0], tp[1], start, end))
        return [RangePartition(r) for r in split(ranges, opts.min_partitions, opts.max_records_per_partition)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return _read_range(self, partition)


def _read_range(reader: _Reading, partition: InputPartition) -> Iterator[pa.RecordBatch]:
    """A planned range's rows. With nothing to read (an empty topic, a pattern matching none) the plan has no
    ranges and Spark still asks once, with a partition of its own: no rows, as Spark's connector gives."""
    if not isinstance(partition, RangePartition):
        return iter(())
    return reader._read(partition)


def _to_json(offsets: dict[tuple[str, int], int]) -> dict:
    out: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        out.setdefault(topic, {})[str(partition)] = offset
    return out


def _from_json(offsets: dict) -> dict[tuple[str, int], int]:
    return {(topic, int(p)): int(o) for topic, parts in offsets.items() for p, o in parts.items()}


class KafkaStreamReader(_Reading, DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Offsets are Spark's Kafka offsets JSON, ``{"topic": {"0": 42}}``: what the query has read up to."""

    def __init__(self, options: Mapping[str, str]):
        self.opts = read_options(options, streaming=True)
        self._target: dict[tuple[str, int], int] | None = None
        self._last_trigger_ms = 0            # as Spark's source: the first batch never waits for minOffsetsPerTrigger
        self._clock = time.time

    def _latest(self) -> dict[tuple[str, int], int]:
        opts = self.opts

        async def latest(client: KafkaClient) -> dict[TopicPartition, int]:
            return (await subscribed_offsets(client, opts, "latest", "latest"))[1]

        return planning.plan(opts, latest)

    def initialOffset(self) -> dict:
        opts = self.opts

        async def initial(client: KafkaClient) -> dict[TopicPartition, int]:
            return (await subscribed_offsets(client, opts, opts.starting, "starting offsets"))[1]

        return _to_json(planning.plan(opts, initial))

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.opts.max_offsets_per_trigger:
            return ReadMaxRows(self.opts.max_offsets_per_trigger)
        if self.opts.min_offsets_per_trigger:
            return ReadMinRows(self.opts.min_offsets_per_trigger)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        self._target = self._latest()

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        begin = _from_json(start)
        latest = self._latest()
        if self._target is not None:  # Trigger.AvailableNow: nothing past what existed when the query started
            latest = {tp: min(o, self._target[tp]) for tp, o in latest.items() if tp in self._target}
        if isinstance(limit, ReadAllAvailable):
            return _to_json(latest)
        # Partitions that appeared since the last batch start at their earliest offset (Spark does the same).
        new = [tp for tp in latest if tp not in begin]
        if new:
            begin.update(self._earliest_for(new))
        min_rows = limit.min_rows if isinstance(limit, ReadMinRows) else self.opts.min_offsets_per_trigger
        if min_rows and self._target is None:     # AvailableNow never waits: no more data is coming for it
            now_ms = int(self._clock() * 1000)
            if held_back(begin, latest, min_rows, now_ms, self._last_trigger_ms, self.opts.max_trigger_delay_ms):
                return start
            self._last_trigger_ms = now_ms
        if isinstance(limit, ReadMaxRows):
            return _to_json(rate_limit(begin, latest, limit.max_rows))
        return _to_json(latest)

    def _earliest_for(self, wanted: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """The earliest offsets of ``wanted``; a partition gone meanwhile (topic deleted) is left out."""
        opts = self.opts

        async def earliest(client: KafkaClient) -> dict[TopicPartition, int]:
            parts = set(await topic_partitions(client, opts.subscription, opts.client))
            present = [tp for tp in wanted if tp in parts]
            return await resolve(client, present, "earliest", "earliest", opts.client.isolation_level)

        return planning.plan(opts, earliest)

    def reportLatestOffset(self) -> dict | None:
        return _to_json(self._latest())

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        """Spark's checks between two micro-batches: a partition that vanished (its topic deleted), a partition
        added whose log no longer starts at 0, or offsets that went back are data loss (``failOnDataLoss``)."""
        begin, stop = _from_json(start), _from_json(end)
        new = [tp for tp in stop if tp not in begin]
        if new:
            found = self._earliest_for(new)
            for tp in new:
                if tp not in found:
                    self._data_loss(f"Cannot find earliest offsets of {tp[0]}-{tp[1]}. Some data may have been "
                                    "missed")
                elif found[tp] != 0:
                    self._data_loss(f"Added partition {tp[0]}-{tp[1]} starts from {found[tp]} instead of 0. Some "
                                    "data may have been missed")
            begin.update(found)
        gone = sorted(tp for tp in begin if tp not in stop)
        if gone:
            self._data_loss(f"{', '.join(f'{t}-{p}' for t, p in gone)} are gone (deleted topic or partitions). "
                            "Some data may have been missed")
        ranges = []
        for tp, last in sorted(stop.items()):
            if tp not in begin:
                continue
            first = begin[tp]
            if last < first:
                self._data_loss(f"Partition {tp[0]}-{tp[1]}'s offset was changed from {first} to {last} (the topic "
                                "may have been deleted and re-created), some data may have been missed")
                continue
            ranges.append(OffsetRange(tp[0], tp[1], first, last))
        return [RangePartition(r) for r in split(ranges, self.opts.min_partitions,
                                                 self.opts.max_records_per_partition)]

    def _data_loss(self, message: str) -> None:
        if self.opts.fail_on_data_loss:
            raise data_loss(message)
        log.warning("%s. failOnDataLoss is false, so the query goes on.", message)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return _read_range(self, partition)

    def commit(self, end: dict) -> None:
        """Nothing to do: Spark's checkpoint holds the offsets (the connector commits nothing to Kafka)."""


# -- writing ---------------------------------------------------------------------------------------------------

def _check_write_schema(schema: StructType, topic_option: str | None) -> None:
    """Spark's KafkaWriter.validateQuery: the columns a Kafka sink can write, with their types."""
    fields = {f.name.lower(): f for f in schema.fields}
    value = fields.get("value")
    if value is None:
        raise KafkaOptionError("Required attribute 'value' not found")
    for name in ("key", "value"):
        f = fields.get(name)
        if f is not None and not isinstance(f.dataType, StringType | BinaryType):
            raise KafkaOptionError(f"{name} attribute type must be a string or binary, not {f.dataType.simpleString()}")
    topic = fields.get("topic")
    if topic_option is None and topic is None:
        raise KafkaOptionError("topic option required when no 'topic' attribute is present. Use the topic option "
                               "for setting a topic.")
    if topic is not None and not isinstance(topic.dataType, StringType):
        raise KafkaOptionError(f"topic attribute type must be a string, not {topic.dataType.simpleString()}")
    partition = fields.get("partition")
    if partition is not None and not isinstance(partition.dataType, IntegerType):
        raise KafkaOptionError(f"partition attribute type must be an int, not {partition.dataType.simpleString()}")
    headers = fields.get("headers")
    if headers is not None:
        ok = isinstance(headers.dataType, ArrayType) and isinstance(headers.dataType.elementType, StructType) and [
            (f.name, type(f.dataType)) for f in headers.dataType.elementType.fields] == [
            ("key", StringType), ("value", BinaryType)]
        if not ok:
            raise KafkaOptionError("headers attribute type must be array<struct<key:string,value:binary>>, not "
                                   f"{headers.dataType.simpleString()}")


class _Writing:
    """A write task: plain (every record acknowledged, at-least-once like Spark's Kafka sink), or with
    ``kafka.transactional.id`` one transaction per task and micro-batch (see ``transactional``)."""

    opts: WriteOptions
    batch_write_id: str | None = None

    def _write(self, iterator: Iterator[pa.RecordBatch]) -> WriteResult:
        prefix = self.opts.client.producer.get("transactional.id")
        if prefix is None:
            return WriteResult(write_arrow(self.opts.client, iterator, self.opts.topic))
        task = transactional.this_task(self.batch_write_id)
        return WriteResult(transactional.write_transactional(self.opts.client, iterator, self.opts.topic, prefix,
                                                             task))


class KafkaBatchWriter(_Writing, DataSourceArrowWriter):
    def __init__(self, options: Mapping[str, str], schema: StructType):
        self.opts = write_options(options)
        _check_write_schema(schema, self.opts.topic)
        self.batch_write_id = transactional.new_write_id()

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriteResult:
        return self._write(iterator)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        """Every task's records were acknowledged (acks=all), or its transaction committed, before it returned."""

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        """Records already acknowledged stay in Kafka, as with Spark's own Kafka sink; a transactional task's rows
        are all there or none (per task, not per job)."""


class KafkaStreamWriter(_Writing, DataSourceStreamArrowWriter):
    def __init__(self, options: Mapping[str, str], schema: StructType):
        self.opts = write_options(options)
        _check_write_schema(schema, self.opts.topic)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriteResult:
        return self._write(iterator)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Nothing to do: the micro-batch's records are acknowledged (or committed); Spark records the batch."""

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Acknowledged records stay (at-least-once, like Spark's Kafka sink). With ``kafka.transactional.id`` the
        tasks that committed are skipped when Spark runs the micro-batch again: exactly once per micro-batch."""


__all__ = ["NAME", "KafkaDataSource"]
