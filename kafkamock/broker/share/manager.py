"""Every share-partition of the cluster, and what ShareFetch / ShareAcknowledge do to them (Kafka's
SharePartitionManager), with the durable state of the KIP-932 seed page.

A share-partition (group, topic-partition) comes to life at its group's first ShareFetch of the partition, its start
offset (SPSO) chosen by the group's ``share.auto.offset.reset`` (latest, earliest, by_duration:<ISO-8601>). Its
acquisition locks run on the core's timers (one timer per share-partition, at its earliest lock deadline); when
records become Available again (a lock ran out, a release, a member left) the fetches waiting on the partition look
again.

Durability, as the seed page says: the state is written into the topic-partition itself as control batches through
``CoordinatorServices.append_internal``, where Kafka 4.3's share coordinator writes to ``__share_group_state``:
nothing while the share-partition only starts and acquires (Kafka's persister gets its first write with the first
acknowledgement, release or expired lock; until then a restart starts it afresh, as Kafka's does), then a
SHARE_CHECKPOINT (the whole state, under a new checkpoint epoch), a SHARE_DELTA after each later change
(acknowledgements, releases, expired locks, aborted records archived: one per request and partition), a new
checkpoint after ``kafkamock.share.delta.chain.max`` deltas and when retention or DeleteRecords passes the last one
(the SPSO moves instead: recovery never needs a deleted batch). Acquisitions are not written: an Acquired record is
persisted as Available with its delivery count less one, which is what it was before.

One state path, as Kafka's ShareCoordinatorShard: an operation changes the in-memory acquisition cache
(``SharePartition``) and ``write_state`` returns the records that say what changed durably; ``_append`` writes each
and replays it through ``_replay`` (``persisted.replay``), the only thing that changes the ``PersistedShareState``.
``restore`` rebuilds the same state by replaying the same records read back from the log (a share snapshot file per
share-partition, ``storage/share_snapshot.py``, locates the latest checkpoint), then initializes each
share-partition's cache from it. The control batches take offsets in the partition, as transaction markers do, but
hold no record for anyone: ShareFetch never acquires or returns them (``fetching.py``), and the lag counts records
only.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.java_long import java_long
from kafkamock.broker.share import fetching
from kafkamock.broker.share.fetching import EMPTY, ShareRead
from kafkamock.broker.share.partition import NEVER, Limits, SharePartition
from kafkamock.broker.share.persisted import (
    DELETED,
    NotInChain,
    PersistedShareState,
    ShareCheckpoint,
    ShareStateRecord,
    from_control,
    replay,
)
from kafkamock.broker.share.state import InvalidAckRequest, InvalidRecordState
from kafkamock.durations import parse_duration_ms
from kafkamock.records import decode_batches, decode_control
from kafkamock.records.layout import CONTROL_BIT, HEADER, MAGIC_OFFSET, TRANSACTIONAL_BIT
from kafkamock.storage.share_snapshot import ShareSnapshot

if TYPE_CHECKING:
    from kafkamock.broker.cluster import Partition, Topic
    from kafkamock.broker.node import Node
    from kafkamock.broker.producers import AbortedTxn
    from kafkamock.broker.services import CoordinatorServices
    from kafkamock.storage.log import PartitionLog

log = logging.getLogger("kafkamock.share")
Key = tuple[str, uuid.UUID, int]
GroupConfig = Callable[[str, str], Any]
"""A group's config value (``GroupConfigs.value``: the group's own, clamped into the broker's bounds, else the
default)."""
READ_COMMITTED = "read_committed"
__all__ = ["Ack", "GroupConfig", "Key", "ShareManager", "share_control_offsets"]


@dataclass(frozen=True, slots=True)
class Ack:
    """One AcknowledgementBatch: offsets ``first..last`` with one type, or one type per offset."""

    first: int
    last: int
    types: tuple[int, ...]


class ShareManager:
    """The share-partitions, keyed (group id, topic id, partition index): their acquisition caches
    (``partitions``) and their durable states (``persisted``)."""

    def __init__(self, services: CoordinatorServices, group_config: GroupConfig) -> None:
        self.services = services
        self.group_config = group_config
        self.partitions: dict[Key, SharePartition] = {}
        self.persisted: dict[Key, PersistedShareState] = {}
        self.loaded: set[Key] = set()       # share-partitions a node has in its cache (Kafka's SharePartitionCache)

    @property
    def checkpoint_offsets(self) -> dict[Key, int]:
        """Where each written share-partition's latest checkpoint is in its topic-partition."""
        return {key: state.checkpoint_offset for key, state in self.persisted.items()}

    # -- configs --------------------------------------------------------------------------------------------------

    def lock_duration_ms(self, group_id: str) -> int:
        return int(self.group_config(group_id, "share.record.lock.duration.ms"))

    def _new(self, group_id: str, start: int) -> SharePartition:
        return SharePartition(group_id, start, **self._limits(group_id))

    def _limits(self, group_id: str) -> Limits:
        """The group configs a share-partition runs with, read live (KIP-1240: a change applies at once)."""
        config = self.group_config
        return {"lock_duration_ms": lambda: self.lock_duration_ms(group_id),
                "delivery_limit": lambda: int(config(group_id, "share.delivery.count.limit")),
                "max_in_flight": lambda: int(config(group_id, "share.partition.max.record.locks")),
                "renew_enabled": lambda: bool(config(group_id, "share.renew.acknowledge.enable"))}

    # -- share-partitions -----------------------------------------------------------------------------------------

    def share_partition(self, group_id: str, topic: Topic, partition: Partition) -> SharePartition:
        key = (group_id, topic.topic_id, partition.index)
        share = self.partitions.get(key)
        if share is None:
            share = self.partitions[key] = self._new(group_id, self._initial_offset(group_id, partition))
            log.info("share group %s: share-partition %s-%d starts at offset %d", group_id, topic.name,
                     partition.index, share.start_offset)
        return share

    def load(self, group_id: str, topic: Topic, partition: Partition) -> bool:
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

    def release_session(self, group_id: str, member_id: str, node: Node) -> None:
        """SharePartitionManager.releaseSession: the session goes; what its member holds in the session's
        share-partitions is released."""
        session = node.share_sessions.remove(group_id, member_id)
        if session is not None:
            self.member_left(group_id, member_id, only=set(session.partitions))

    def connection_closed(self, conn_id: int) -> None:
        """A client connection closed: on each node, the share session it opened goes as if its member left, and a
        group left without share sessions there has its share-partitions unloaded (Kafka's ShareSessionCache
        disconnect listener, onMemberLeave and onGroupEmpty)."""
        for node in list(self.services.metadata.nodes.values()):
            key, group_id = node.share_sessions.disconnected(conn_id)
            if key is not None:
                self.release_session(key[0], key[1], node)
            if group_id is not None and not node.share_sessions.members(group_id):
                self.loaded.difference_update([k for k in self.loaded if k[0] == group_id])

    def _initial_offset(self, group_id: str, partition: Partition) -> int:
        """``share.auto.offset.reset``: latest (the high watermark), earliest (the log start), or by_duration (the
        first offset at or after now - duration, else the high watermark)."""
        plog = partition.log
        reset = str(self.group_config(group_id, "share.auto.offset.reset"))
        if reset == "earliest":
            return plog.log_start_offset
        if reset.startswith("by_duration:"):
            found = plog.offset_for_timestamp(self.services.now_ms() - parse_duration_ms(reset.split(":", 1)[1]))
            return found[0] if found is not None else plog.high_watermark
        return plog.high_watermark

    def read_committed(self, group_id: str) -> bool:
        """Whether the group reads only committed records (``share.isolation.level``), read once per request."""
        return bool(self.group_config(group_id, "share.isolation.level") == READ_COMMITTED)

    @staticmethod
    def limit(partition: Partition, read_committed: bool) -> int:
        """How far a share group reads: the high watermark, or the last stable offset under read_committed."""
        plog = partition.log
        if read_committed:
            return partition.producers.last_stable_offset(plog.high_watermark)
        return plog.high_watermark

    @staticmethod
    def _aborted(partition: Partition, share: SharePartition, limit: int, read_committed: bool
                 ) -> list[AbortedTxn] | None:
        if not read_committed or not partition.producers.aborted:
            return None
        return partition.producers.aborted_between(share.start_offset, limit)

    # -- ShareFetch -----------------------------------------------------------------------------------------------

    def available_bytes(self, share: SharePartition, partition: Partition, read_committed: bool, max_bytes: int,
                        enough: int) -> int:
        """Bytes a fetch could read for acquisition from now (what MinBytes is measured against), counted up to
        ``enough``."""
        _, views = fetching.read(partition.log, share, max_bytes=max_bytes,
                                 limit=self.limit(partition, read_committed), enough_bytes=enough)
        return fetching.data_bytes(views)

    def fetch(self, key: Key, share: SharePartition, partition: Partition, member_id: str, read_committed: bool, *,
              max_records: int, max_bytes: int, record_limit: bool, batch_size: int, at_least_one: bool = True
              ) -> ShareRead:
        """Read ``share`` (the share-partition ``key``, from ``share_partition``) and acquire for ``member_id``."""
        limit = self.limit(partition, read_committed)
        offset, views = fetching.read(partition.log, share, max_bytes=max_bytes, limit=limit,
                                      at_least_one=at_least_one, max_records=max_records)
        if not views:
            return EMPTY
        read = fetching.acquire(share, member_id, offset, views, max_records=max_records,
                                now_ms=self.services.now_ms(), record_limit=record_limit, batch_size=batch_size,
                                aborted=self._aborted(partition, share, limit, read_committed))
        if share.pending_changes:                   # aborted records archived (read_committed)
            self._append(key, partition, share, self.write_state(key, share))
        self._schedule_locks(key, share)
        return read

    # -- acknowledgements -----------------------------------------------------------------------------------------

    def acknowledge(self, group_id: str, member_id: str, topic: Topic, partition: Partition, acks: list[Ack]
                    ) -> None:
        """Apply one partition's acknowledgement batches, all or nothing (SharePartitionManager.acknowledge): a
        share-partition its node has not loaded is UNKNOWN_TOPIC_OR_PARTITION; the share-partition's refusals are
        INVALID_RECORD_STATE or INVALID_REQUEST, in Kafka's words."""
        key = (group_id, topic.topic_id, partition.index)
        share = self.partitions.get(key)
        if share is None or key not in self.loaded:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition.")
        try:
            share.acknowledge_all(member_id, [(a.first, a.last, list(a.types)) for a in acks],
                                  self.services.now_ms())
        except InvalidRecordState as exc:
            raise KafkaError(ErrorCode.INVALID_RECORD_STATE, str(exc)) from None
        except InvalidAckRequest as exc:
            raise KafkaError(ErrorCode.INVALID_REQUEST, str(exc)) from None
        self._changed(key, share, partition, released=True)

    def member_left(self, group_id: str, member_id: str, only: set[tuple[uuid.UUID, int]] | None = None) -> None:
        """A member left its group or was fenced, or closed its share session (``only``: that session's
        (topic id, partition) keys): what it holds there is released, as Kafka's onMemberLeave and
        releaseSession do."""
        now = self.services.now_ms()
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
        self.partitions.pop(key, None)
        self.loaded.discard(key)
        self.services.timers.unschedule(("share-locks", *key))
        persisted = self.persisted.get(key)
        if persisted is None:                                  # nothing of it in the log
            return
        partition = self._partition(key)
        if partition is None:                                  # its log went with its topic
            del self.persisted[key]
            return
        self._append(key, partition, None, [ShareCheckpoint(key[0], persisted.checkpoint_epoch + 1, DELETED,
                                                            DELETED, ())])

    def reset(self, group_id: str, topic: Topic, partition: Partition, start_offset: int) -> None:
        """AlterShareGroupOffsets: the share-partition starts over at ``start_offset`` (the group is empty)."""
        key = (group_id, topic.topic_id, partition.index)
        share = self.partitions[key] = self._new(group_id, start_offset)
        share.reported = (start_offset, 0)
        self.loaded.discard(key)
        self._append(key, partition, share, self.write_state(key, share, checkpoint=True))

    def of_group(self, group_id: str) -> list[tuple[Key, SharePartition]]:
        return [(k, s) for k, s in self.partitions.items() if k[0] == group_id]

    def summary(self, key: Key, partition: Partition) -> tuple[int, int, int]:
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

    # -- locks ----------------------------------------------------------------------------------------------------

    def _partition(self, key: Key) -> Partition | None:
        topic = self.services.metadata.topics_by_id.get(key[1])
        return None if topic is None else topic.partition_at(key[2])

    def _schedule_locks(self, key: Key, share: SharePartition) -> None:
        deadline = share.next_deadline()
        timers = self.services.timers
        if deadline >= NEVER:
            timers.unschedule(("share-locks", *key))
        elif timers.scheduled(("share-locks", *key)) != deadline:
            timers.schedule(("share-locks", *key), deadline, lambda: self._locks_due(key))

    def _locks_due(self, key: Key) -> None:
        share, partition = self.partitions.get(key), self._partition(key)
        if share is None or partition is None:
            return
        expired = share.expire_locks(self.services.now_ms())
        if expired:
            log.debug("share group %s: %d acquisition lock(s) of %s-%d ran out", key[0], expired, partition.topic,
                      partition.index)
        self._changed(key, share, partition, released=bool(expired))

    def _changed(self, key: Key, share: SharePartition, partition: Partition, *, released: bool) -> None:
        """After a state change: persist it, re-arm the lock timer, wake fetches if records became Available."""
        self._append(key, partition, share, self.write_state(key, share))
        self._schedule_locks(key, share)
        if released:
            self.services.appended(partition)

    # -- the durable state: records written, then replayed --------------------------------------------------------

    def write_state(self, key: Key, share: SharePartition, *, checkpoint: bool = False) -> list[ShareStateRecord]:
        """The records that write down what changed in ``share`` (Kafka's ShareCoordinatorShard.writeState): the
        first write of a share-partition, every ``kafkamock.share.delta.chain.max`` deltas and a ``checkpoint``
        asked for are a checkpoint; the others a delta (none when nothing changed)."""
        persisted = self.persisted.get(key)
        if checkpoint or persisted is None \
                or persisted.delta_index >= self.services.config["kafkamock.share.delta.chain.max"]:
            if checkpoint or persisted is not None or share.dirty:
                epoch = persisted.checkpoint_epoch + 1 if persisted is not None else 1
                return [share.checkpoint_record(epoch)]
            return []
        delta = share.delta_record(persisted.checkpoint_epoch, persisted.delta_index + 1)
        return [] if delta is None else [delta]

    def _append(self, key: Key, partition: Partition, share: SharePartition | None,
                records: list[ShareStateRecord]) -> None:
        """Write ``records`` into the topic-partition, replaying each as it lands; ``share`` then has nothing
        pending. A checkpoint's place goes into the share snapshot file (a tombstone's removes it)."""
        if not records:
            return
        store = partition.log.store
        for record in records:
            offset, _ = self.services.append_internal(partition, record.batch(self.services.now_ms()), notify=False)
            self._replay(key, record, offset)
            if isinstance(record, ShareCheckpoint):
                if record.start_offset == DELETED:
                    store.remove_share_snapshot(key[0])
                elif store.durable:
                    store.save_share_snapshot(ShareSnapshot(key[0], record.checkpoint_epoch, offset))
        if share is not None:
            share.written()

    def _replay(self, key: Key, record: ShareStateRecord, offset: int) -> None:
        """The only change of a durable state: ``record``, at ``offset`` of the topic-partition, replayed (at run
        time just after it was appended, at recovery as it is read back). A record that does not continue the
        chain raises NotInChain and changes nothing (recovery skips it; run time never writes one)."""
        state = replay(self.persisted.get(key), record, offset)
        if state is None:
            self.persisted.pop(key, None)
        else:
            self.persisted[key] = state

    def log_start_moved(self, partition: Partition, topic: Topic) -> None:
        """Retention or DeleteRecords moved the log start: share-partitions whose SPSO it passed move on (the next
        write carries it), and one whose last checkpoint it removed writes a new one, so recovery never needs a
        deleted batch."""
        start = partition.log.log_start_offset
        for key, share in list(self.partitions.items()):
            if key[1] != topic.topic_id or key[2] != partition.index:
                continue
            if share.start_offset < start:
                share.move_start(start)
            persisted = self.persisted.get(key)
            if persisted is not None and persisted.checkpoint_offset < start:
                self._append(key, partition, share, self.write_state(key, share, checkpoint=True))

    # -- recovery -------------------------------------------------------------------------------------------------

    def restore(self, topic: Topic, partition: Partition) -> None:
        """Rebuild a topic-partition's share-partitions from its log: from the share snapshot files' checkpoints
        (the whole log when a file did not read back or points past the log end), each SHARE_CHECKPOINT then the
        SHARE_DELTAs chained to it by epoch and index, replayed as at run time (a checkpoint with SPSO -1 is a
        tombstone; a record out of the chain is skipped); then each share-partition's cache starts from its
        state."""
        plog = partition.log
        snapshots = plog.store.load_share_snapshots()
        if snapshots is None or any(s.checkpoint_offset >= plog.log_end_offset for s in snapshots):
            start = plog.log_start_offset
        else:
            start = max(min((s.checkpoint_offset for s in snapshots), default=plog.log_start_offset),
                        plog.log_start_offset)
        for base_offset, record in _share_state_records(plog, start):
            try:
                self._replay((record.group_id, topic.topic_id, partition.index), record, base_offset)
            except NotInChain:
                continue
        for key, state in list(self.persisted.items()):
            if key[1:] != (topic.topic_id, partition.index):
                continue
            share = SharePartition.from_persisted(state, **self._limits(key[0]))
            share.move_start(plog.log_start_offset)
            self._forget_controls(share, plog)
            self.partitions[key] = share
            log.info("share group %s: share-partition %s-%d restored: SPSO %d, SPEO %d, checkpoint epoch %d, "
                     "%d delta(s)", key[0], topic.name, partition.index, share.start_offset, share.spe_offset,
                     state.checkpoint_epoch, state.delta_index)

    def _forget_controls(self, share: SharePartition, plog: PartitionLog) -> None:
        """The control batches between a rebuilt share-partition's SPSO and SPEO hold no record: out of its cache."""
        holes = share_control_offsets(plog, share.start_offset, share.spe_offset)
        if holes:
            share.forget(holes)


def share_control_offsets(plog: PartitionLog, first: int, end: int) -> list[int]:
    """Offsets in ``[first, end)`` of the SHARE_CHECKPOINT / SHARE_DELTA batches: control batches no transaction
    wrote (transaction markers are the only other control batches a data partition holds)."""
    out = []
    for base_offset, header in plog.headers(first):
        if base_offset >= end:
            break
        if base_offset >= first and _is_share_state(header):
            out.append(base_offset)
    return out


def _is_share_state(header: bytes | bytearray | memoryview) -> bool:
    if len(header) < HEADER.size or header[MAGIC_OFFSET] != 2:     # legacy messages have no control batches
        return False
    attributes = HEADER.unpack_from(header, 0)[5]
    return bool(attributes & CONTROL_BIT) and not attributes & TRANSACTIONAL_BIT


def _share_state_records(plog: PartitionLog, start: int) -> Iterator[tuple[int, ShareStateRecord]]:
    """(base offset, record) of each SHARE_CHECKPOINT / SHARE_DELTA record at or after ``start``."""
    for base_offset, header in plog.headers(start):
        if base_offset < start or not _is_share_state(header):
            continue
        for stored in plog.batches(base_offset, base_offset + 1):
            try:
                for batch in decode_batches(stored.data):
                    for entry in batch.records:
                        record = from_control(*decode_control(entry.key, entry.value))
                        if record is not None:
                            yield base_offset, record
            except Exception as exc:  # noqa: BLE001 - an unreadable control batch is skipped, as recovery would
                log.warning("control batch at offset %d unreadable: %s", base_offset, exc)
            break
