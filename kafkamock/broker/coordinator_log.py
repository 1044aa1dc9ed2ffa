"""Reading a coordinator's log back at a restart: every readable batch of an internal topic, in log order.

The group and transaction coordinators load their state by replaying ``__consumer_offsets`` and
``__transaction_state``; a batch that no longer reads (a torn write the storage's recovery left) is skipped with a
warning, as Kafka's loader skips what it cannot read, and loading goes on.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

from kafkamock.broker.cluster import Partition, Topic
from kafkamock.records import CorruptRecordError, RecordBatch, decode_batches

log = logging.getLogger("kafkamock.broker")


def logged_batches(topic: Topic) -> Iterator[tuple[Partition, RecordBatch]]:
    """(partition, decoded batch) for every readable batch of ``topic``, partition by partition, in offset order."""
    for partition in topic.partitions:
        for stored in partition.log.batches():
            try:
                batches = decode_batches(stored.data)
            except CorruptRecordError as exc:
                log.warning("%s-%d: unreadable batch at %d skipped: %s", topic.name, partition.index,
                            stored.base_offset, exc)
                continue
            for batch in batches:
                yield partition, batch
