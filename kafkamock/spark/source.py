"""The ``kafkamock`` data source: Spark's Kafka connector (options, schema, semantics) as a Python Data Source.

Batch and streaming reads plan offset ranges on the driver (``planning``) and read them in the workers as Arrow
batches (``tasks``); batch and streaming writes produce each task's rows with an idempotent producer.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    DataSourceStreamArrowWriter,
    DataSourceStreamReader,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows, SupportsTriggerAvailableNow
from pyspark.sql.types import ArrayType, BinaryType, IntegerType, StringType, StructType

from kafkamock.client.offsets import EARLIEST
from kafkamock.spark import planning
from kafkamock.spark.options import KafkaOptionError, read_options, write_options
from kafkamock.spark.planning import OffsetRange, rate_limit, resolve, split, subscribed_offsets
from kafkamock.spark.rows import HEADERS_DDL, READ_SCHEMA
from kafkamock.spark.tasks import data_loss, read_arrow, write_arrow

NAME = "kafkamock"


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
    def _read(self, partition: RangePartition) -> Iterator:
        opts = self.opts  # type: ignore[attr-defined]
        yield from read_arrow(opts.client, partition.range, opts.include_headers, opts.fail_on_data_loss,
                              opts.poll_timeout_ms / 1000)


class KafkaBatchReader(_Reading, DataSourceReader):
    def __init__(self, options):
        self.opts = read_options(options, streaming=False)

    def partitions(self) -> Sequence[InputPartition]:
        opts = self.opts

        async def plan(client):
            parts, starts = await subscribed_offsets(client, opts, opts.starting, "startingOffsets")
            ends = await resolve(client, parts, opts.ending, "endingOffsets", opts.client.isolation_level)
            return parts, starts, ends

        parts, starts, ends = planning.run(opts.client, plan)
        ranges = []
        for tp in parts:
            start, end = starts[tp], ends[tp]
            if end < start:
                raise KafkaOptionError(f"ending offset {end} of {tp[0]}-{tp[1]} is before its starting offset "
                                       f"{start} ('startingOffsets' / 'endingOffsets')")
            ranges.append(OffsetRange(tp[0], tp[1], start, end))
        return [RangePartition(r) for r in split(ranges, opts.min_partitions)]

    def read(self, partition: InputPartition) -> Iterator:
        assert isinstance(partition, RangePartition)
        return self._read(partition)


def _to_json(offsets: dict[tuple[str, int], int]) -> dict:
    out: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        out.setdefault(topic, {})[str(partition)] = offset
    return out


def _from_json(offsets: dict) -> dict[tuple[str, int], int]:
    return {(topic, int(p)): int(o) for topic, parts in offsets.items() for p, o in parts.items()}


class KafkaStreamReader(_Reading, DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Offsets are Spark's Kafka offsets JSON, ``{"topic": {"0": 42}}``: what the query has read up to."""

    def __init__(self, options):
        self.opts = read_options(options, streaming=True)
        self._target: dict[tuple[str, int], int] | None = None

    def _latest(self) -> dict[tuple[str, int], int]:
        opts = self.opts

        async def latest(client):
            return (await subscribed_offsets(client, opts, "latest", "latest"))[1]

        return planning.run(opts.client, latest)

    def initialOffset(self) -> dict:
        opts = self.opts

        async def initial(client):
            return (await subscribed_offsets(client, opts, opts.starting, "startingOffsets"))[1]

        return _to_json(planning.run(opts.client, initial))

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.opts.max_offsets_per_trigger:
            return ReadMaxRows(self.opts.max_offsets_per_trigger)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        self._target = self._latest()

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        begin = _from_json(start)
        latest = self._latest()
        if self._target is not None:  # Trigger.AvailableNow: nothing past what existed when the query started
            latest = {tp: min(o, self._target[tp]) for tp, o in latest.items() if tp in self._target}
        # Partitions that appeared since the last batch start at their earliest offset (Spark does the same).
        begin = {**{tp: EARLIEST for tp in latest if tp not in begin}, **begin}
        if any(o == EARLIEST for o in begin.values()):
            begin = self._earliest_for(begin)
        end = rate_limit(begin, latest, limit.max_rows) if isinstance(limit, ReadMaxRows) else latest
        return _to_json(end)

    def _earliest_for(self, offsets: dict[tuple[str, int], int]) -> dict[tuple[str, int], int]:
        wanted = [tp for tp, o in offsets.items() if o == EARLIEST]
        opts = self.opts

        async def earliest(client):
            return await resolve(client, wanted, "earliest", "earliest", opts.client.isolation_level)

        found = planning.run(opts.client, earliest)
        return {tp: found.get(tp, o) for tp, o in offsets.items()}

    def reportLatestOffset(self) -> dict | None:
        return _to_json(self._latest())

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        begin, stop = _from_json(start), _from_json(end)
        missing = {tp: EARLIEST for tp in stop if tp not in begin}
        if missing:
            begin.update(self._earliest_for(missing))
        ranges = []
        for tp, last in sorted(stop.items()):
            first = begin[tp]
            if last < first:
                message = (f"{tp[0]}-{tp[1]} went back from offset {first} to {last} (the topic may have been "
                           f"deleted and re-created)")
                if self.opts.fail_on_data_loss:
                    raise data_loss(message)
                continue
            ranges.append(OffsetRange(tp[0], tp[1], first, last))
        return [RangePartition(r) for r in split(ranges, self.opts.min_partitions)]

    def read(self, partition: InputPartition) -> Iterator:
        assert isinstance(partition, RangePartition)
        return self._read(partition)

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


class KafkaBatchWriter(DataSourceArrowWriter):
    def __init__(self, options, schema: StructType):
        self.opts = write_options(options)
        _check_write_schema(schema, self.opts.topic)

    def write(self, iterator) -> WriteResult:
        return WriteResult(write_arrow(self.opts.client, iterator, self.opts.topic))

    def commit(self, messages) -> None:
        """Every task's records were acknowledged (acks=all) before its write returned."""

    def abort(self, messages) -> None:
        """Records already acknowledged stay in Kafka, as with Spark's own Kafka sink (no transactions)."""


class KafkaStreamWriter(DataSourceStreamArrowWriter):
    def __init__(self, options, schema: StructType):
        self.opts = write_options(options)
        _check_write_schema(schema, self.opts.topic)

    def write(self, iterator) -> WriteResult:
        return WriteResult(write_arrow(self.opts.client, iterator, self.opts.topic))

    def commit(self, messages, batchId: int) -> None:
        """Nothing to do: the micro-batch's records are acknowledged; Spark records the batch as done."""

    def abort(self, messages, batchId: int) -> None:
        """Acknowledged records stay (at-least-once, like Spark's Kafka sink)."""


__all__ = ["NAME", "KafkaDataSource"]
