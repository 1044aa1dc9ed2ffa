"""Every share-partition of the cluster, and what ShareFetch / ShareAcknowledge do to them (Kafka's
SharePartitionManager), with the durable state of the KIP-932 seed page.

A share-partition (group, topic-partition) comes to life at its group's first ShareFetch of the partition, its start
offset (SPSO) chosen by the group's ``share.auto.offset.reset`` (latest, earliest, by_duration:<ISO-8601>). Its
acquisition locks run on the core's timers (one timer per share-partition, at its earliest lock deadline); when
records become Available again (a lock ran out, a release, a member left) the fetches waiting on the partition look
again.

Durability, as the seed page says: the state is written into the topic-partition itself as control batches through
``Broker.append_internal`` — a SHARE_CHECKPOINT when the share-partition starts, after
``kafkamock.share.delta.chain.max`` deltas, and when the log start passes the last checkpoint (retention or
DeleteRecords must not take the state needed for recovery: the SPSO moves instead); a SHARE_DELTA after each
acknowledgement, released lock or departed member. Acquisitions are not written: an Acquired record is persisted as
Available with its delivery count less one, which is what it was before. A share snapshot file per share-partition
(``storage/share_snapshot.py``) locates the latest checkpoint; ``restore`` rebuilds snapshot -> checkpoint -> deltas.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta

from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.share.fetching import EMPTY, ShareRead, acquire, candidates
from kafkamock.broker.share.partition import NEVER, SharePartition
from kafkamock.broker.share.state import InvalidRecordState, RecordState
from kafkamock.records import decode_batches, decode_control, share_checkpoint_batch, share_delta_batch, split_batches
from kafkamock.records.layout import CONTROL_BIT, HEADER
from kafkamock.storage.share_snapshot import ShareSnapshot

log = logging.getLogger("kafkamock.share")
Key = tuple[str, uuid.UUID, int]
READ_COMMITTED = "read_committed"
DELETED = -1        # a SHARE_CHECKPOINT with SPSO -1 is a tombstone: the share-partition was deleted


@dataclass(frozen=True, slots=True)
class Ack:
    """One AcknowledgementBatch: offsets ``first..last`` with one type, or one type per offset."""

    first: int
    last: int
    types: tuple[int, ...]


def parse_duration_ms(text: str) -> int:
    """An ISO-8601 duration as Java's Duration.parse reads it (``PnDTnHnMn.nS``, optionally signed), in ms."""
    match = re.fullmatch(r"([-+]?)P(?:([-+]?\d+)D)?(?:T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+(?:[.,]\d+)?)S)?)?",
                         text.strip(), re.IGNORECASE)
    if match is None or text.strip().upper().endswith("T") or not any(match.groups()[1:]):
        raise ValueError(f"{text!r} is not an ISO-8601 duration")
    sign, days, hours, minutes, seconds = match.groups()
    total = timedelta(days=int(days or 0), hours=int(hours or 0), minutes=int(minutes or 0),
                      seconds=float((seconds or "0").replace(",", ".")))
    ms = int(total / timedelta(milliseconds=1))
    return -ms if sign == "-" else ms


class ShareManager:
    """The share-partitions, keyed (group id, topic id, partition index)."""

    def __init__(self, broker) -> None:
        self.broker = broker
        self.partitions: dict[Key, SharePartition] = {}
        self.checkpoint_offsets: dict[Key, int] = {}

    # -- configs --------------------------------------------------------------------------------------------------

    def group_config(self, group_id: str, name: str):
        return self.broker.groups.configs.value(group_id, name)

    def lock_duration_ms(self, group_id: str) -> int:
        return self.group_config(group_id, "share.record.lock.duration.ms")

    def _new(self, group_id: str, start: int) -> SharePartition:
        return SharePartition(group_id, start, **self._limits(group_id))

    def _limits(self, group_id: str) -> dict:
        """The group configs a share-partition runs with, read live (KIP-1240: a change applies at once)."""
        return {"lock_duration_ms": lambda: self.lock_duration_ms(group_id),
                "delivery_limit": lambda: self.group_config(group_id, "share.delivery.count.limit"),
                "max_in_flight": lambda: self.group_config(group_id, "share.partition.max.record.locks")}

    # -- share-partitions -----------------------------------------------------------------------------------------

    def share_partition(self, group_id: str, topic, partition) -> SharePartition:
        key = (group_id, topic.topic_id, partition.index)
        share = self.partitions.get(key)
        if share is None:
            share = self.partitions[key] = self._new(group_id, self._initial_offset(group_id, partition))
            log.info("share group %s: share-partition %s-%d starts at offset %d", group_id, topic.name,
                     partition.index, share.start_offset)
            self._checkpoint(key, share, partition)
        return share

    def _initial_offset(self, group_id: str, partition) -> int:
        """``share.auto.offset.reset``: latest (the high watermark), earliest (the log start), or by_duration (the
        first offset at or after now - duration, else the high watermark)."""
        plog = partition.log
        reset = str(self.group_config(group_id, "share.auto.offset.reset"))
        if reset == "earliest":
            return plog.log_start_offset
        if reset.startswith("by_duration:"):
            found = plog.offset_for_timestamp(self.broker.now_ms() - parse_duration_ms(reset.split(":", 1)[1]))
            return found[0] if found is not None else plog.high_watermark
        return plog.high_watermark

    def limit(self, group_id: str, partition) -> int:
        """How far a share group reads: the high watermark, or the last stable offset under read_committed."""
        plog = partition.log
        if self.group_config(group_id, "share.isolation.level") == READ_COMMITTED:
            return partition.producers.last_stable_offset(plog.high_watermark)
        return plog.high_watermark

    def _aborted(self, group_id: str, partition, share: SharePartition, limit: int):
        if self.group_config(group_id, "share.isolation.level") != READ_COMMITTED or not partition.producers.aborted:
            return None
        return partition.producers.aborted_between(share.start_offset, limit)

    # -- ShareFetch -----------------------------------------------------------------------------------------------

    def available_bytes(self, group_id: str, topic, partition, max_bytes: int) -> int:
        """Bytes of the batches a fetch could acquire from now (what MinBytes is measured against)."""
        share = self.share_partition(group_id, topic, partition)
        limit = self.limit(group_id, partition)
        data = candidates(partition.log, share, max_bytes=max_bytes, limit=limit,
                          aborted=self._aborted(group_id, partition, share, limit))
        return sum(v.size for v in data)

    def fetch(self, group_id: str, member_id: str, topic, partition, *, max_records: int, max_bytes: int,
              whole_batches: bool, batch_size: int) -> ShareRead:
        share = self.share_partition(group_id, topic, partition)
        limit = self.limit(group_id, partition)
        data = candidates(partition.log, share, max_bytes=max_bytes, limit=limit,
                          aborted=self._aborted(group_id, partition, share, limit))
        if not data:
            return EMPTY
        read = acquire(share, member_id, data, max_records=max_records, limit=limit, now_ms=self.broker.now_ms(),
                       whole_batches=whole_batches, batch_size=batch_size)
        if read.acquired:
            self._schedule_locks((group_id, topic.topic_id, partition.index), share, partition)
        return read

    # -- acknowledgements -----------------------------------------------------------------------------------------

    def acknowledge(self, group_id: str, member_id: str, topic, partition, acks: list[Ack]) -> None:
        """Apply one partition's acknowledgement batches, all or nothing: INVALID_RECORD_STATE if any offset is not
        Acquired by ``member_id`` (Kafka rolls the whole partition's acknowledgements back)."""
        key = (group_id, topic.topic_id, partition.index)
        share = self.partitions.get(key)
        if share is None:
            raise KafkaError(ErrorCode.INVALID_RECORD_STATE, "No records of this partition are acquired.")
        runs = [run for a in acks for run in ([(a.first, a.last, a.types[0])] if len(a.types) == 1 else
                                              [(a.first + k, a.first + k, t) for k, t in enumerate(a.types)])]
        try:
            share.acknowledge_all(member_id, _merge(runs), self.broker.now_ms())
        except InvalidRecordState as exc:
            raise KafkaError(ErrorCode.INVALID_RECORD_STATE, str(exc)) from None
        self._changed(key, share, partition, released=True)

    def member_left(self, group_id: str, member_id: str, only=None) -> None:
        """A member left its group or was fenced, or closed its share session (``only``: that session's
        (topic id, partition) keys): what it holds there is released, as Kafka's onMemberLeave and
        releaseSession do."""
        now = self.broker.now_ms()
        for key, share in list(self.partitions.items()):
            if key[0] != group_id or (only is not None and key[1:] not in only):
                continue
            if share.release_member(member_id, now):
                partition = self._partition(key)
                if partition is not None:
                    self._changed(key, share, partition, released=True)

    def group_deleted(self, group_id: str) -> None:
        """DeleteGroups removed an empty share group: its share-partitions go, a later group starts afresh."""
        for key in [k for k in self.partitions if k[0] == group_id]:
            self.delete(key)

    def delete(self, key: Key) -> None:
        """Forget a share-partition, durably: a tombstone checkpoint (SPSO and SPEO -1, no runs) ends its chain, so
        a restart does not bring it back; the next ShareFetch starts it afresh by ``share.auto.offset.reset``."""
        share = self.partitions.pop(key, None)
        self.checkpoint_offsets.pop(key, None)
        self.broker.timers.unschedule(("share-locks", *key))
        partition = self._partition(key)
        if share is None or partition is None:
            return
        tombstone = share_checkpoint_batch(key[0], share.checkpoint_epoch + 1, DELETED, DELETED, [],
                                           timestamp=self.broker.now_ms())
        self.broker.append_internal(partition, tombstone, notify=False)
        partition.log.store.remove_share_snapshot(key[0])

    def reset(self, group_id: str, topic, partition, start_offset: int) -> None:
        """AlterShareGroupOffsets: the share-partition starts over at ``start_offset`` (the group is empty)."""
        key = (group_id, topic.topic_id, partition.index)
        old = self.partitions.get(key)
        share = self.partitions[key] = self._new(group_id, start_offset)
        share.checkpoint_epoch = old.checkpoint_epoch if old is not None else 0
        self._checkpoint(key, share, partition)

    def of_group(self, group_id: str) -> list[tuple[Key, SharePartition]]:
        return [(k, s) for k, s in self.partitions.items() if k[0] == group_id]

    def lag(self, group_id: str, share: SharePartition, partition) -> int:
        """KIP-1226's lag: offsets from the SPSO to the read limit whose delivery is not complete."""
        limit = self.limit(group_id, partition)
        pending = sum(1 for r in share.records.values() if r.state in (RecordState.AVAILABLE, RecordState.ACQUIRED))
        for stored in partition.log.batches(max(share.end_offset, share.start_offset), limit):
            views, _ = split_batches(stored.data)
            for view in views:                  # not yet read: the data records up to the limit (no control batch)
                if not view.is_control:
                    pending += min(view.last_offset, limit - 1) - max(view.base_offset, share.end_offset) + 1
        return pending

    # -- locks and persistence ------------------------------------------------------------------------------------

    def _partition(self, key: Key):
        topic = self.broker.cluster.topics_by_id.get(key[1])
        if topic is None or key[2] >= len(topic.partitions):
            return None
        return topic.partitions[key[2]]

    def _schedule_locks(self, key: Key, share: SharePartition, partition) -> None:
        deadline = share.next_deadline()
        timers = self.broker.timers
        if deadline >= NEVER:
            timers.unschedule(("share-locks", *key))
        elif timers.scheduled(("share-locks", *key)) != deadline:
            timers.schedule(("share-locks", *key), deadline, lambda: self._locks_due(key))

    def _locks_due(self, key: Key) -> None:
        share, partition = self.partitions.get(key), self._partition(key)
        if share is None or partition is None:
            return
        expired = share.expire_locks(self.broker.now_ms())
        if expired:
            log.debug("share group %s: %d acquisition lock(s) of %s-%d ran out", key[0], expired, partition.topic,
                      partition.index)
        self._changed(key, share, partition, released=bool(expired))

    def _changed(self, key: Key, share: SharePartition, partition, *, released: bool) -> None:
        """After a state change: persist it, re-arm the lock timer, wake fetches if records became Available."""
        self._persist(key, share, partition)
        self._schedule_locks(key, share, partition)
        if released:
            self.broker.appended(partition)

    def _persist(self, key: Key, share: SharePartition, partition) -> None:
        if share.delta_index >= self.broker.config["kafkamock.share.delta.chain.max"]:
            self._checkpoint(key, share, partition)
            return
        delta = share.take_delta()
        if delta is None:
            return
        self.broker.append_internal(partition, share_delta_batch(**delta, timestamp=self.broker.now_ms()),
                                    notify=False)

    def _checkpoint(self, key: Key, share: SharePartition, partition) -> None:
        value = share.checkpoint()
        offset, _ = self.broker.append_internal(
            partition, share_checkpoint_batch(**value, timestamp=self.broker.now_ms()), notify=False)
        self.checkpoint_offsets[key] = offset
        if partition.log.store.durable:
            partition.log.store.save_share_snapshot(ShareSnapshot(key[0], value["checkpoint_epoch"], offset))

    def log_start_moved(self, partition, topic) -> None:
        """Retention or DeleteRecords moved the log start: share-partitions whose SPSO it passed move on, and one
        whose last checkpoint it removed writes a new one, so recovery never needs a deleted batch."""
        start = partition.log.log_start_offset
        for key, share in list(self.partitions.items()):
            if key[1] != topic.topic_id or key[2] != partition.index:
                continue
            if share.start_offset < start:
                share.move_start(start)
            if self.checkpoint_offsets.get(key, start) < start:
                self._checkpoint(key, share, partition)

    # -- recovery -------------------------------------------------------------------------------------------------

    def restore(self, topic, partition) -> None:
        """Rebuild a topic-partition's share-partitions from its log: from the share snapshot files' checkpoints
        (else the log start), each SHARE_CHECKPOINT then the SHARE_DELTAs chained to it by epoch and index."""
        plog = partition.log
        snapshots = plog.store.load_share_snapshots()
        start = min((s.checkpoint_offset for s in snapshots), default=plog.log_start_offset)
        start = max(start, plog.log_start_offset)
        found: dict[str, SharePartition] = {}
        offsets: dict[str, int] = {}
        for base_offset, kind, value in _share_control_records(plog, start):
            group_id = value.group_id
            if kind == "SHARE_CHECKPOINT" and value.start_offset == DELETED:
                found.pop(group_id, None)
                offsets.pop(group_id, None)
            elif kind == "SHARE_CHECKPOINT":
                current = found.get(group_id)
                if current is None or value.checkpoint_epoch > current.checkpoint_epoch:
                    found[group_id] = SharePartition.restore(value, **self._limits(group_id))
                    offsets[group_id] = base_offset
            else:
                current = found.get(group_id)
                if current is not None and value.checkpoint_epoch == current.checkpoint_epoch \
                        and value.delta_index == current.delta_index + 1:
                    current.apply_delta(value)
        for group_id, share in found.items():
            key = (group_id, topic.topic_id, partition.index)
            share.move_start(plog.log_start_offset)
            self.partitions[key] = share
            self.checkpoint_offsets[key] = offsets[group_id]
            log.info("share group %s: share-partition %s-%d restored: SPSO %d, SPEO %d, checkpoint epoch %d, "
                     "%d delta(s)", group_id, topic.name, partition.index, share.start_offset, share.end_offset,
                     share.checkpoint_epoch, share.delta_index)


def _merge(runs: Iterable[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Consecutive offsets with one type become one range."""
    out: list[tuple[int, int, int]] = []
    for first, last, kind in runs:
        if out and out[-1][2] == kind and out[-1][1] + 1 == first:
            out[-1] = (out[-1][0], last, kind)
        else:
            out.append((first, last, kind))
    return out


def _share_control_records(plog, start: int):
    """(base offset, kind, value) of each SHARE_CHECKPOINT / SHARE_DELTA record at or after ``start``."""
    for base_offset, header in plog.headers():
        if base_offset < start or not HEADER.unpack_from(header, 0)[5] & CONTROL_BIT:
            continue
        for stored in plog.batches(base_offset, base_offset + 1):
            try:
                for batch in decode_batches(stored.data):
                    for record in batch.records:
                        kind, value = decode_control(record.key, record.value)
                        if kind in ("SHARE_CHECKPOINT", "SHARE_DELTA"):
                            yield base_offset, kind, value
            except Exception as exc:  # noqa: BLE001 - an unreadable control batch is skipped, as recovery would
                log.warning("control batch at offset %d unreadable: %s", base_offset, exc)
            break


def validated_acks(batches, version: int) -> list[Ack]:
    """A partition's AcknowledgementBatches as ``Ack``s, checked as Kafka's KafkaApis.validateAcknowledgementBatches
    does (INVALID_REQUEST): first <= last, batches ascending without overlap, one type or one per offset, and
    every type known at this version (RENEW, 4, only from v2: KIP-1222)."""
    highest = 4 if version >= 2 else 3
    acks: list[Ack] = []
    for batch in batches:
        first, last, types = batch.first_offset, batch.last_offset, tuple(batch.acknowledge_types)
        if first > last:
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"First offset {first} is after last offset {last}.")
        if acks and first <= acks[-1].last:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Acknowledgement batches overlap or are out of order.")
        if len(types) not in (1, last - first + 1):
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"{len(types)} acknowledge types for offsets {first}-{last}.")
        if any(not 0 <= t <= highest for t in types):
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"Invalid acknowledge type in {list(types)} at version "
                                                        f"{version}.")
        acks.append(Ack(first, last, types))
    return acks
