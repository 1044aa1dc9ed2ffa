"""Every share-partition of the cluster, and what ShareFetch / ShareAcknowledge do to them (Kafka's
SharePartitionManager), with the durable state of the KIP-932 seed page.

A share-partition (group, topic-partition) comes to life at its group's first ShareFetch of the partition, its start
offset (SPSO) chosen by the group's ``share.auto.offset.reset`` (latest, earliest, by_duration:<ISO-8601>). Its
acquisition locks run on the core's timers (one timer per share-partition, at its earliest lock deadline); when
records become Available again (a lock ran out, a release, a member left) the fetches waiting on the partition look
again.

Durability, as the seed page says: the state is written into the topic-partition itself as control batches through
``Broker.append_internal``, where Kafka 4.3's share coordinator writes to ``__share_group_state``: nothing while the
share-partition only starts and acquires (Kafka's persister gets its first write with the first acknowledgement,
release or expired lock; until then a restart starts it afresh, as Kafka's does), then a SHARE_CHECKPOINT (the whole
state, under a new checkpoint epoch), a SHARE_DELTA after each later change (acknowledgements, releases, expired
locks, aborted records archived), a new checkpoint after ``kafkamock.share.delta.chain.max`` deltas and when
retention or DeleteRecords passes the last one (the SPSO moves instead: recovery never needs a deleted batch).
Acquisitions are not written: an Acquired record is persisted as Available with its delivery count less one, which
is what it was before. A share snapshot file per share-partition (``storage/share_snapshot.py``) locates the latest
checkpoint; ``restore`` rebuilds snapshot -> checkpoint -> deltas. The control batches take offsets in the
partition, as transaction markers do, but hold no record for anyone: ShareFetch never acquires or returns them
(``fetching.py``), and the lag counts records only.
"""

from __future__ import annotations

import logging
import re
import uuid
from dataclasses import dataclass
from datetime import timedelta

from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.java_long import java_long
from kafkamock.broker.share import fetching
from kafkamock.broker.share.fetching import EMPTY, ShareRead
from kafkamock.broker.share.partition import NEVER, SharePartition
from kafkamock.broker.share.state import InvalidAckRequest, InvalidRecordState
from kafkamock.records import decode_batches, decode_control, share_checkpoint_batch, share_delta_batch
from kafkamock.records.layout import CONTROL_BIT, HEADER, MAGIC_OFFSET, TRANSACTIONAL_BIT
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
        self.loaded: set[Key] = set()       # share-partitions a node has in its cache (Kafka's SharePartitionCache)

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
                "max_in_flight": lambda: self.group_config(group_id, "share.partition.max.record.locks"),
                "renew_enabled": lambda: self.group_config(group_id, "share.renew.acknowledge.enable")}

    # -- share-partitions -----------------------------------------------------------------------------------------

    def share_partition(self, group_id: str, topic, partition) -> SharePartition:
        key = (group_id, topic.topic_id, partition.index)
        share = self.partitions.get(key)
        if share is None:
            share = self.partitions[key] = self._new(group_id, self._initial_offset(group_id, partition))
            log.info("share group %s: share-partition %s-%d starts at offset %d", group_id, topic.name,
                     partition.index, share.start_offset)
        return share

    def load(self, group_id: str, topic, partition) -> bool:
        """A ShareFetch needs the share-partition: True if its node has it loaded already; else it is loaded now
        (started, or rebuilt from its durable state as Kafka reads it back from the persister) and False."""
        key = (group_id, topic.topic_id, partition.index)
        if key in self.loaded:
            return True
        share = self.partitions.get(key)
        if share is not None:
            share = self.partitions[key] = share.reloaded(**self._limits(group_id))
            self._forget_controls(share, partition.log)
        self.share_partition(group_id, topic, partition)
        self.loaded.add(key)
        return False

    def acquirable(self, group_id: str, topic, partition) -> bool:
        """canAcquireRecords: not at ``share.partition.max.record.locks``, or released records to hand out."""
        return self.share_partition(group_id, topic, partition).can_acquire()

    def release_session(self, group_id: str, member_id: str, node) -> None:
        """SharePartitionManager.releaseSession: the session goes; what its member holds in the session's
        share-partitions is released."""
        session = node.share_sessions.remove(group_id, member_id)
        if session is not None:
            self.member_left(group_id, member_id, only=set(session.partitions))

    def connection_closed(self, conn_id: int) -> None:
        """A client connection closed: on each node, the share session it opened goes as if its member left, and a
        group left without share sessions there has its share-partitions unloaded (Kafka's ShareSessionCache
        disconnect listener, onMemberLeave and onGroupEmpty)."""
        for node in self.broker.nodes:
            key, group_id = node.share_sessions.disconnected(conn_id)
            if key is not None:
                self.release_session(key[0], key[1], node)
            if group_id is not None and not node.share_sessions.members(group_id):
                self.loaded.difference_update([k for k in self.loaded if k[0] == group_id])

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

    def available_bytes(self, group_id: str, topic, partition, max_bytes: int, enough: int) -> int:
        """Bytes a fetch could read for acquisition from now (what MinBytes is measured against), counted up to
        ``enough``."""
        share = self.share_partition(group_id, topic, partition)
        _, views = fetching.read(partition.log, share, max_bytes=max_bytes, limit=self.limit(group_id, partition),
                                 enough_bytes=enough)
        return fetching.data_bytes(views)

    def fetch(self, group_id: str, member_id: str, topic, partition, *, max_records: int, max_bytes: int,
              record_limit: bool, batch_size: int, at_least_one: bool = True) -> ShareRead:
        share = self.share_partition(group_id, topic, partition)
        limit = self.limit(group_id, partition)
        offset, views = fetching.read(partition.log, share, max_bytes=max_bytes, limit=limit,
                                      at_least_one=at_least_one, max_records=max_records)
        if not views:
            return EMPTY
        read = fetching.acquire(share, member_id, offset, views, max_records=max_records, now_ms=self.broker.now_ms(),
                                record_limit=record_limit, batch_size=batch_size,
                                aborted=self._aborted(group_id, partition, share, limit))
        key = (group_id, topic.topic_id, partition.index)
        if share.pending_changes:                   # aborted records archived (read_committed)
            self._persist(key, share, partition)
        self._schedule_locks(key, share, partition)
        return read

    # -- acknowledgements -----------------------------------------------------------------------------------------

    def acknowledge_request(self, request, group_id: str, member_id: str, parts, version: int, renew: bool,
                            leaders: set[int]) -> dict:
        """One request's acknowledgements, as KafkaApis.handleAcknowledgements: ``parts`` are (topic id, partition,
        AcknowledgementBatches); returns (error code, message, current leader) per (topic id, partition). An unknown
        topic id is UNKNOWN_TOPIC_ID; malformed batches INVALID_REQUEST; a partition the topic lacks, or whose
        share-partition is not loaded, UNKNOWN_TOPIC_OR_PARTITION; the share-partition's own refusals carry its
        words. Partitions without batches are answered NONE only when another partition acknowledged something."""
        from kafkamock.broker.cluster import NotLeader
        from kafkamock.broker.handlers.share_fetch import check_read

        out: dict = {}
        empty = []
        interested = []
        for topic_id, index, batches in parts:
            key = (topic_id, index)
            topic = self.broker.cluster.topics_by_id.get(topic_id)
            if topic is None:
                out[key] = (ErrorCode.UNKNOWN_TOPIC_ID, None, None)
                continue
            try:
                acks = validated_acks(batches, version, renew)
                check_read(self.broker, request, topic_id)
                if topic.partition_at(index) is None:
                    raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None)
                if not acks:
                    empty.append(key)
                    continue
                interested.append((key, topic, acks))
            except KafkaError as exc:
                out[key] = (exc.code, exc.message, None)
        for key, topic, acks in interested:
            try:
                partition = self.broker.lead(request, topic, key[1], missing=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
                self.acknowledge(group_id, member_id, topic, partition, acks)
                out[key] = (ErrorCode.NONE, None, None)
            except NotLeader as exc:
                out[key] = (exc.code, exc.message, (exc.leader_id, exc.leader_epoch))
                if exc.leader_id >= 0:
                    leaders.add(exc.leader_id)
            except KafkaError as exc:
                out[key] = (exc.code, exc.message, None)
        if interested:
            out.update((key, (ErrorCode.NONE, None, None)) for key in empty)
        return out

    def acknowledge(self, group_id: str, member_id: str, topic, partition, acks: list[Ack]) -> None:
        """Apply one partition's acknowledgement batches, all or nothing (SharePartitionManager.acknowledge): a
        share-partition its node has not loaded is UNKNOWN_TOPIC_OR_PARTITION; the share-partition's refusals are
        INVALID_RECORD_STATE or INVALID_REQUEST, in Kafka's words."""
        key = (group_id, topic.topic_id, partition.index)
        share = self.partitions.get(key)
        if share is None or key not in self.loaded:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition.")
        try:
            share.acknowledge_all(member_id, [(a.first, a.last, list(a.types)) for a in acks], self.broker.now_ms())
        except InvalidRecordState as exc:
            raise KafkaError(ErrorCode.INVALID_RECORD_STATE, str(exc)) from None
        except InvalidAckRequest as exc:
            raise KafkaError(ErrorCode.INVALID_REQUEST, str(exc)) from None
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
        written = self.checkpoint_offsets.pop(key, None)
        self.loaded.discard(key)
        self.broker.timers.unschedule(("share-locks", *key))
        partition = self._partition(key)
        if share is None or partition is None or written is None:      # nothing of it in the log
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
        share.reported = (start_offset, 0)
        self.loaded.discard(key)
        self._checkpoint(key, share, partition)

    def of_group(self, group_id: str) -> list[tuple[Key, SharePartition]]:
        return [(k, s) for k, s in self.partitions.items() if k[0] == group_id]

    def summary(self, key: Key, partition) -> tuple[int, int, int]:
        """(start offset, leader epoch, lag) as Kafka's ReadShareGroupStateSummary and KIP-1226 lag give them: what
        the persister last received (-1 and no lag before the first acknowledgement), the lag being the partition's
        end offset less the start offset less the records past it whose delivery is complete. Lag counts records:
        the share-state control batches past the start offset, which Kafka's partition does not have, are left
        out."""
        share = self.partitions.get(key)
        if share is None or share.reported is None:
            return -1, 0, -1
        start, complete = share.reported
        if start == -1:                 # altered to "not initialized": no lag, as Kafka answers it
            return start, partition.leader_epoch, -1
        end = partition.log.high_watermark
        controls = len(share_control_offsets(partition.log, start, end))
        lag = end - start - complete - controls
        # Kafka computes it in a Java long: a start offset altered to an extreme value wraps, it does not fail
        return start, partition.leader_epoch, java_long(lag)

    # -- locks and persistence ------------------------------------------------------------------------------------

    def _partition(self, key: Key):
        topic = self.broker.cluster.topics_by_id.get(key[1])
        return None if topic is None else topic.partition_at(key[2])

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
        """Write what changed: the first write of a share-partition, and every ``kafkamock.share.delta.chain.max``
        deltas, is a checkpoint; the others are deltas (none when nothing changed)."""
        written = key in self.checkpoint_offsets
        if not written or share.delta_index >= self.broker.config["kafkamock.share.delta.chain.max"]:
            if written or share.dirty:
                self._checkpoint(key, share, partition)
            return
        delta = share.take_delta()
        if delta is not None:
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
        """Retention or DeleteRecords moved the log start: share-partitions whose SPSO it passed move on (the next
        write carries it), and one whose last checkpoint it removed writes a new one, so recovery never needs a
        deleted batch."""
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
        (the whole log when a file did not read back or points past the log end), each SHARE_CHECKPOINT then the
        SHARE_DELTAs chained to it by epoch and index; a checkpoint with SPSO -1 is a tombstone."""
        plog = partition.log
        snapshots = plog.store.load_share_snapshots()
        if snapshots is None or any(s.checkpoint_offset >= plog.log_end_offset for s in snapshots):
            start = plog.log_start_offset
        else:
            start = max(min((s.checkpoint_offset for s in snapshots), default=plog.log_start_offset),
                        plog.log_start_offset)
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
            self._forget_controls(share, plog)
            self.partitions[key] = share
            self.checkpoint_offsets[key] = offsets[group_id]
            log.info("share group %s: share-partition %s-%d restored: SPSO %d, SPEO %d, checkpoint epoch %d, "
                     "%d delta(s)", group_id, topic.name, partition.index, share.start_offset, share.spe_offset,
                     share.checkpoint_epoch, share.delta_index)

    def _forget_controls(self, share: SharePartition, plog) -> None:
        """The control batches between a rebuilt share-partition's SPSO and SPEO hold no record: out of its cache."""
        holes = share_control_offsets(plog, share.start_offset, share.spe_offset)
        if holes:
            share.forget(holes)


def share_control_offsets(plog, first: int, end: int) -> list[int]:
    """Offsets in ``[first, end)`` of the SHARE_CHECKPOINT / SHARE_DELTA batches: control batches no transaction
    wrote (transaction markers are the only other control batches a data partition holds)."""
    out = []
    for base_offset, header in plog.headers(first):
        if base_offset >= end:
            break
        if base_offset >= first and _is_share_state(header):
            out.append(base_offset)
    return out


def _is_share_state(header) -> bool:
    if len(header) < HEADER.size or header[MAGIC_OFFSET] != 2:     # legacy messages have no control batches
        return False
    attributes = HEADER.unpack_from(header, 0)[5]
    return bool(attributes & CONTROL_BIT) and not attributes & TRANSACTIONAL_BIT


def _share_control_records(plog, start: int):
    """(base offset, kind, value) of each SHARE_CHECKPOINT / SHARE_DELTA record at or after ``start``."""
    for base_offset, header in plog.headers(start):
        if base_offset < start or not _is_share_state(header):
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


def validated_acks(batches, version: int, renew: bool = False) -> list[Ack]:
    """A partition's AcknowledgementBatches as ``Ack``s, checked as Kafka's KafkaApis.validateAcknowledgementBatches
    does (INVALID_REQUEST, no message): first <= last, each batch starting at or after the last offset of the one
    before, one type or one per offset, every type known at this version (RENEW, 4, only from v2: KIP-1222), and
    RENEW only in a request that says IsRenewAck."""
    highest = 4 if version >= 2 else 3
    acks: list[Ack] = []
    previous_last = -1
    for batch in batches:
        first, last, types = batch.first_offset, batch.last_offset, tuple(batch.acknowledge_types)
        if first > last or first < previous_last or not types or (len(types) > 1 and last - first != len(types) - 1) \
                or any(not 0 <= t <= highest for t in types) or (4 in types and not renew):
            raise KafkaError(ErrorCode.INVALID_REQUEST, None)
        previous_last = last
        acks.append(Ack(first, last, types))
    return acks
