"""The broker's own scheduled work, on the core's timers: Kafka's log retention, flusher, cleaner and checkpoint
tasks, producer-id expiry and producer snapshots, plus the periodic tasks the coordinators hand in (offset expiry,
transaction timeouts). Nothing here sleeps: each task runs when ``Timers.tick`` reaches it, on the broker's clock.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from kafkamock.broker.cluster import ClusterMetadata, Partition, Topic
from kafkamock.broker.config import BrokerConfig
from kafkamock.broker.timers import NEVER, Timers
from kafkamock.storage import DiskStorage, MemoryStorage, cleaner

log = logging.getLogger("kafkamock.broker")


class Housekeeping:
    """The periodic tasks of one cluster's logs (``log_start_moved`` hears a retention that moved a log's start)."""

    def __init__(self, metadata: ClusterMetadata, config: BrokerConfig, storage: MemoryStorage | DiskStorage, timers: Timers,
                 *, log_start_moved: Callable[[Partition, Topic], None]) -> None:
        self.metadata, self.config, self.storage, self.timers = metadata, config, storage, timers
        self.log_start_moved = log_start_moved

    def schedule(self, now: int, coordinator_tasks: Iterable[tuple[str, str, Callable[[int], None]]]) -> None:
        """Start the log tasks, and the coordinators' ``(name, interval config, task)``, on the timers."""
        config = self.config
        first = now + config["log.initial.task.delay.ms"]
        self.timers.every("log-retention", lambda: config["log.retention.check.interval.ms"], self._retention,
                          first_ms=first)
        self.timers.every("log-flusher", self._flush_interval, self._flush,
                          first_ms=now + min(self._flush_interval(), NEVER - now))
        self.timers.every("log-cleaner", lambda: config["log.cleaner.backoff.ms"] if config["log.cleaner.enable"]
                          else NEVER, self._clean, first_ms=now + config["log.cleaner.backoff.ms"])
        self.timers.every("checkpoints", lambda: config["log.flush.offset.checkpoint.interval.ms"] or NEVER,
                          self._checkpoint, first_ms=first)
        for name, interval, task in (
                *coordinator_tasks,
                ("producer-id-expiration", "producer.id.expiration.check.interval.ms", self._expire_producers)):
            # mypy cannot infer a lambda whose default argument binds the loop variable (python/mypy#15459)
            self.timers.every(name, lambda key=interval: config[key], task,  # type: ignore[misc]
                              first_ms=now + config[interval])

    def _retention(self, now: int) -> None:
        for topic in list(self.metadata.topics.values()):
            for partition in topic.partitions:
                before = partition.log.log_start_offset
                if partition.log.delete_old_segments(now):
                    log.info("retention deleted segments of %s-%d; log start offset %d -> %d", topic.name,
                             partition.index, before, partition.log.log_start_offset)
                    self.log_start_moved(partition, topic)
                partition.log.store.maintain(now)

    def _expire_producers(self, now: int) -> None:
        """``producer.id.expiration.ms``: forget idle producers (none with an open transaction), per partition."""
        expiration = self.config["producer.id.expiration.ms"]
        removed = sum(p.producers.expire(now, expiration, p.log.log_start_offset) for p in self.metadata.partitions())
        if removed:
            log.info("producer state of %d idle producer(s) expired", removed)

    def _flush_interval(self) -> int:
        """How often the flusher looks: ``log.flush.scheduler.interval.ms``, or sooner when a topic's ``flush.ms`` asks
        for it (in Kafka a topic's flush.ms does nothing until the scheduler interval is lowered too; here an
        accepted config takes effect)."""
        wanted = [p.log.config.flush_ms for p in self.metadata.partitions() if p.log.config.flush_ms < NEVER]
        scheduler: int = self.config["log.flush.scheduler.interval.ms"]
        return max(1, min([scheduler, *wanted]))

    def _flush(self, now: int) -> None:
        for partition in self.metadata.partitions():
            partition.log.maybe_flush(now)

    def _checkpoint(self, now: int) -> None:
        """``log.flush.offset.checkpoint.interval.ms``: the storage's checkpoint files, then producer snapshots."""
        self.storage.write_checkpoints()
        self.snapshot_producers(now)

    def _clean(self, now: int) -> None:
        if not self.config["log.cleaner.enable"]:
            return
        for topic in list(self.metadata.topics.values()):
            for partition in topic.partitions:
                if partition.log.config.compact:
                    result = cleaner.clean(partition.log, now)
                    if result is not None and (result.records_removed or result.segments):
                        log.info("compacted %s-%d: %d record(s) and %d tombstone(s) removed up to offset %d",
                                 topic.name, partition.index, result.records_removed, result.tombstones_removed,
                                 result.end_offset)

    def snapshot_producers(self, _now: int) -> None:
        """Producer snapshot files at the log end of every partition with producer state (Kafka writes them on
        roll and at shutdown; here also with the periodic checkpoints), so the state outlives its batches."""
        for partition in self.metadata.partitions():
            producers = partition.producers
            if producers.changed and partition.log.store.durable:
                partition.log.store.save_producer_snapshot(partition.log.log_end_offset, producers.snapshot())
                producers.changed = False
