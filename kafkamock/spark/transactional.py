"""Exactly-once writes for the sink option ``kafka.transactional.id`` (a prefix, as Flink's Kafka sink takes one).

Each Spark task writes its rows in one Kafka transaction, under the transactional id ``<prefix>-<task partition>``:
a retried or restarted task fences the attempt before it (whose open transaction the coordinator aborts). In the
same transaction the task commits a marker, an offset of the consumer group ``<prefix>-<task partition>`` on
partition 0 of the topic it writes, whose metadata names the write (the streaming query's id, which its checkpoint
keeps, or a batch write's id) and the micro-batch. A task that finds its marker already committed for this batch
writes nothing: Spark replays a micro-batch whose commit it did not record, and the rows of the tasks that had
committed are not written twice. Readers see the rows with ``isolation.level=read_committed``.

The guarantee is per task and micro-batch: a micro-batch replayed with the same offset ranges is split into the
same tasks (Spark's Kafka and file sources do so). A batch (non-streaming) write is atomic per task, not per job.
"""

from __future__ import annotations

import itertools
import json
import uuid
from collections.abc import Iterable
from dataclasses import dataclass

import pyarrow as pa
import trio

from kafkamock.client import Producer
from kafkamock.client.admin import Admin
from kafkamock.client.types import OffsetAndMetadata, TopicPartition
from kafkamock.spark.options import ClientSettings
from kafkamock.spark.tasks import write_arrow

MARKER_PARTITION = 0


@dataclass(frozen=True)
class TaskWrite:
    """Who is writing: the write (query id or batch write id), its micro-batch, and the Spark task's partition."""

    write_id: str
    batch_id: int
    partition_id: int


def new_write_id() -> str:
    """A batch write's id, made once on the driver."""
    return f"batch-{uuid.uuid4()}"


def this_task(batch_write_id: str | None) -> TaskWrite:
    """The running Spark task: a streaming write is named by the query id and micro-batch Spark gives the task."""
    from pyspark import TaskContext

    context = TaskContext.get()
    if context is None:
        raise RuntimeError("a transactional Kafka write must run in a Spark task")
    query, batch = context.getLocalProperty("sql.streaming.queryId"), context.getLocalProperty(
        "streaming.sql.batchId")
    if batch_write_id is not None:
        return TaskWrite(batch_write_id, 0, context.partitionId())
    if query is None or batch is None:
        raise RuntimeError("Spark gave the streaming write no query id or batch id")
    return TaskWrite(query, int(batch), context.partitionId())


def _marker(task: TaskWrite) -> str:
    return json.dumps({"write": task.write_id, "batch": task.batch_id}, sort_keys=True)


def _already_written(found: OffsetAndMetadata | None, task: TaskWrite) -> bool:
    if found is None or not found.metadata:
        return False
    try:
        marker = json.loads(found.metadata)
    except ValueError:
        return False
    return isinstance(marker, dict) and marker.get("write") == task.write_id and \
        isinstance(marker.get("batch"), int) and marker["batch"] >= task.batch_id


@dataclass
class TaskTransaction:
    """The transaction of one task's write (``tasks.write_arrow`` runs it on the worker's I/O loop): fence the
    earlier attempt, skip rows committed before, and commit the rows with the task's marker."""

    settings: ClientSettings
    task: TaskWrite
    transactional_id: str
    marker_topic: str

    async def begin(self, producer: Producer) -> bool:
        await producer.init_transactions()     # fences an earlier attempt of this task, aborting its transaction
        async with Admin({**self.settings.security, "bootstrap.servers": self.settings.bootstrap_servers,
                          "client.id": self.settings.client_id}) as admin:
            done = await admin.list_consumer_group_offsets(self.transactional_id,
                                                           [TopicPartition(self.marker_topic, MARKER_PARTITION)],
                                                           require_stable=True)
        if _already_written(next(iter(done.values()), None), self.task):
            return False
        producer.begin_transaction()           # synchronous, as Java's beginTransaction()
        return True

    async def commit(self, producer: Producer) -> None:
        await producer.send_offsets_to_transaction(
            {(self.marker_topic, MARKER_PARTITION): OffsetAndMetadata(self.task.batch_id + 1, _marker(self.task))},
            self.transactional_id)
        await producer.commit_transaction()

    async def abort(self, producer: Producer) -> None:
        with trio.CancelScope(shield=True):
            try:
                await producer.abort_transaction()
            except Exception:       # the original error matters more (and there may be no transaction yet); the
                pass                # coordinator aborts an open one when the next attempt fences this producer


def write_transactional(settings: ClientSettings, batches: Iterable[pa.RecordBatch], topic_option: str | None,
                        prefix: str, task: TaskWrite) -> int:
    """Write every row of ``batches`` in one transaction with this task's marker, through the same columnar path
    as a plain write; returns the rows written (0 when this task's rows of this micro-batch were committed
    before)."""
    rows = iter(batches)
    first = next((b for b in rows if b.num_rows), None)
    if first is None:
        return 0
    marker_topic = topic_option or first.column("topic")[0].as_py()
    transaction = TaskTransaction(settings, task, f"{prefix}-{task.partition_id}", marker_topic)
    return write_arrow(settings, itertools.chain([first], rows), topic_option, transaction)
