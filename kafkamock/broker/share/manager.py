"""Every share-partition of the cluster, and what ShareFetch / ShareAcknowledge do to them (Kafka's
SharePartitionManager), with their durable state.

A share-partition (group, topic-partition) comes to life at its group's first ShareFetch of the partition, its start
offset (SPSO) chosen by the group's ``share.auto.offset.reset`` (latest, earliest, by_duration:<ISO-8601>). Its
acquisition locks run on the core's timers (one timer per share-partition, at its earliest lock deadline); when
records become Available again (a lock ran out, a release, a member left) the fetches waiting on the partition look
again.

Durability: as Kafka 4.3's share coordinator, the state goes to the internal topic ``__share_group_state`` (created
on first use with Kafka's settings: ``share.coordinator.state.topic.*``, cleanup ``delete``, retention -1), in the
partition ``abs(hash("group:topicId:partition")) % partitions`` that FindCoordinator's share keys name, so the
topic-partitions themselves hold only their records (no offset is spent on share state). Each record is keyed by
the topic id and partition and holds the KIP-932 page's values: a SHARE_CHECKPOINT (the whole state, under a new
checkpoint epoch) when the share-partition starts and after ``kafkamock.share.delta.chain.max`` deltas, a SHARE_DELTA
after each acknowledgement, released lock or departed member. Acquisitions are not written: an Acquired record is
persisted as Available with its delivery count less one, which is what it was before. Once every share-partition
of a state partition has a newer checkpoint, the records before the oldest of them are deleted (Kafka's share
coordinator prunes the same way); ``restore_all`` rebuilds each checkpoint and the deltas chained to it.
"""

from __future__ import annotations

import logging
import re
import struct
import uuid
from dataclasses import dataclass
from datetime import timedelta

from kafkamock.broker.cluster import kafka_uuid_string, partition_for_key
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.share import fetching
from kafkamock.broker.share.fetching import EMPTY, ShareRead
from kafkamock.broker.share.partition import NEVER, SharePartition
from kafkamock.broker.share.state import InvalidAckRequest, InvalidRecordState
from kafkamock.records import decode_batches, decode_control, encode_batch
from kafkamock.records.control import control_key, control_value

log = logging.getLogger("kafkamock.share")
Key = tuple[str, uuid.UUID, int]
READ_COMMITTED = "read_committed"
DELETED = -1        # a SHARE_CHECKPOINT with SPSO -1 is a tombstone: the share-partition was deleted
STATE_TOPIC = "__share_group_state"
STATE_KEY = struct.Struct(">16si")     # after the control key (version, type): topic id, partition


def coordinator_key(group_id: str, topic_id: uuid.UUID, partition: int) -> str:
    """Kafka's SharePartitionKey.asCoordinatorKey: ``group:topicId:partition`` (the id in Kafka's base64)."""
    return f"{group_id}:{kafka_uuid_string(topic_id)}:{partition}"


def state_record(kind: str, topic_id: uuid.UUID, partition: int, value: dict) -> dict:
    """One ``__share_group_state`` record: SHARE_CHECKPOINT or SHARE_DELTA ``value`` of (topic, partition)."""
    return {"key": control_key(kind) + STATE_KEY.pack(topic_id.bytes, partition),
            "value": control_value(kind, value)}


def read_state_record(key: bytes | None, value: bytes | None):
    """(kind, topic id, partition, value) of a ``__share_group_state`` record, or None for anything else."""
    if key is None or len(key) != 4 + STATE_KEY.size:
        return None
    kind, decoded = decode_control(key[:4], value)
    if kind not in ("SHARE_CHECKPOINT", "SHARE_DELTA") or decoded is None:
        return None
    topic_bytes, partition = STATE_KEY.unpack_from(key, 4)
    return kind, uuid.UUID(bytes=topic_bytes), partition, decoded


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
            self._checkpoint(key, share, partition)
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
                self.release_session(*key, node)
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

    def available_bytes(self, group_id: str, topic, partition, max_bytes: int) -> int:
        """Bytes a fetch could read for acquisition from now (what MinBytes is measured against)."""
        share = self.share_partition(group_id, topic, partition)
        _, views = fetching.read(partition.log, share, max_bytes=max_bytes, limit=self.limit(group_id, partition))
        return sum(v.size for v in views)

    def fetch(self, group_id: str, member_id: str, topic, partition, *, max_records: int, max_bytes: int,
              record_limit: bool, batch_size: int) -> ShareRead:
        share = self.share_partition(group_id, topic, partition)
        limit = self.limit(group_id, partition)
        offset, views = fetching.read(partition.log, share, max_bytes=max_bytes, limit=limit)
        if not views:
            return EMPTY
        read = fetching.acquire(share, member_id, offset, views, max_records=max_records, now_ms=self.broker.now_ms(),
                                record_limit=record_limit, batch_size=batch_size,
                                aborted=self._aborted(group_id, partition, share, limit))
        key = (group_id, topic.topic_id, partition.index)
        if share.pending_changes:
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
                if index >= len(topic.partitions):
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
        self.checkpoint_offsets.pop(key, None)
        self.loaded.discard(key)
        self.broker.timers.unschedule(("share-locks", *key))
        if share is None:
            return
        self._write(key, "SHARE_CHECKPOINT", {"group_id": key[0], "checkpoint_epoch": share.checkpoint_epoch + 1,
                                              "start_offset": DELETED, "end_offset": DELETED, "states": []})

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
        end offset less the start offset less the records past it whose delivery is complete."""
        share = self.partitions.get(key)
        if share is None or share.reported is None:
            return -1, 0, -1
        start, complete = share.reported
        return start, partition.leader_epoch, partition.log.high_watermark - start - complete

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
        if delta is not None:
            self._write(key, "SHARE_DELTA", delta)

    def _checkpoint(self, key: Key, share: SharePartition, partition=None) -> None:
        self.checkpoint_offsets[key] = self._write(key, "SHARE_CHECKPOINT", share.checkpoint())
        self._prune(self.state_partition(key))

    def state_partition(self, key: Key):
        """The ``__share_group_state`` partition holding a share-partition's state (created on first use)."""
        topic = self.broker.internal_topic(STATE_TOPIC)
        return topic.partitions[partition_for_key(coordinator_key(*key), len(topic.partitions))]

    def _write(self, key: Key, kind: str, value: dict) -> int:
        """Append one state record; returns its offset in its ``__share_group_state`` partition."""
        data = encode_batch([{**state_record(kind, key[1], key[2], value), "timestamp": self.broker.now_ms()}])
        offset, _ = self.broker.append_internal(self.state_partition(key), data)
        return offset

    def _prune(self, state_partition) -> None:
        """Delete the state records no share-partition of ``state_partition`` needs any longer: everything before
        the oldest of their latest checkpoints."""
        index = state_partition.index
        needed = [offset for key, offset in self.checkpoint_offsets.items()
                  if self.state_partition(key).index == index]
        if needed and min(needed) > state_partition.log.log_start_offset:
            state_partition.log.delete_before(min(needed), self.broker.now_ms())

    def log_start_moved(self, partition, topic) -> None:
        """Retention or DeleteRecords moved the log start: share-partitions whose SPSO it passed move on (and
        write it down)."""
        start = partition.log.log_start_offset
        for key, share in list(self.partitions.items()):
            if key[1] == topic.topic_id and key[2] == partition.index and share.start_offset < start:
                share.move_start(start)
                self._persist(key, share, partition)

    # -- recovery -------------------------------------------------------------------------------------------------

    def restore_all(self) -> None:
        """Rebuild every share-partition from ``__share_group_state``: each SHARE_CHECKPOINT, then the SHARE_DELTAs
        chained to it by epoch and index (a checkpoint with SPSO -1 is a tombstone)."""
        topic = self.broker.cluster.topics.get(STATE_TOPIC)
        if topic is None:
            return
        found: dict[Key, SharePartition] = {}
        offsets: dict[Key, int] = {}
        for state_partition in topic.partitions:
            for offset, kind, topic_id, index, value in _state_records(state_partition.log):
                key = (value.group_id, topic_id, index)
                if kind == "SHARE_CHECKPOINT" and value.start_offset == DELETED:
                    found.pop(key, None)
                    offsets.pop(key, None)
                elif kind == "SHARE_CHECKPOINT":
                    current = found.get(key)
                    if current is None or value.checkpoint_epoch > current.checkpoint_epoch:
                        found[key] = SharePartition.restore(value, **self._limits(value.group_id))
                        offsets[key] = offset
                else:
                    current = found.get(key)
                    if current is not None and value.checkpoint_epoch == current.checkpoint_epoch \
                            and value.delta_index == current.delta_index + 1:
                        current.apply_delta(value)
        for key, share in found.items():
            partition = self._partition(key)
            if partition is None:
                continue
            share.move_start(partition.log.log_start_offset)
            self.partitions[key] = share
            self.checkpoint_offsets[key] = offsets[key]
            log.info("share group %s: share-partition %s-%d restored: SPSO %d, SPEO %d, checkpoint epoch %d, "
                     "%d delta(s)", key[0], partition.topic, partition.index, share.start_offset, share.end_offset,
                     share.checkpoint_epoch, share.delta_index)


def _state_records(plog):
    """(offset, kind, topic id, partition, value) of each share-state record of a ``__share_group_state`` log."""
    for stored in plog.batches():
        try:
            for batch in decode_batches(stored.data):
                if batch.is_control:
                    continue
                for record in batch.records:
                    found = read_state_record(record.key, record.value)
                    if found is not None:
                        yield (record.offset, *found)
        except Exception as exc:  # noqa: BLE001 - an unreadable batch is skipped, as recovery would
            log.warning("__share_group_state batch at offset %d unreadable: %s", stored.base_offset, exc)


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
