"""The group coordinator: classic groups' rounds, committed offsets, KIP-211 expiry, and their records.

Kafka's GroupMetadataManager and OffsetMetadataManager in one place, on the core's clock. Handlers call one method
per API; a JoinGroup or SyncGroup that must wait for the rest of its group gets a ``Pending`` which the round
resolves (the broker wakes the parked request). KIP-848 groups (``consumer.py``) share the offsets, the records and
the timers.

One state path, as Kafka 4's coordinator shards: an operation that changes what ``__consumer_offsets`` keeps builds
the records (``records.GroupRecord``) that say so, usually as a ``CoordinatorResult``; ``_append_and_replay``
appends them to the partition the group id hashes to and then applies each, read back from the bytes written, with
``replay_record``, the very function ``replay`` runs over the log at a restart. Committed and pending offsets, the
existence of groups (created, deleted, converted) and the KIP-848 groups' records change only there. A classic
group's GroupMetadata snapshot is the exception Kafka makes too: the round keeps that group in memory (members,
waiting requests, timers, generation) and writes the snapshot after the fact, appended without replay (Kafka's
CoordinatorResult with an append future, ``replayRecords`` false); only loading the log replays it.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from kafkamock.broker.cluster import GROUP_METADATA_TOPIC, NO_LEADER, Partition, partition_for_key
from kafkamock.broker.coordinator_log import logged_batches
from kafkamock.broker.coordinator_result import CoordinatorResult
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.groups import records
from kafkamock.broker.groups.classic import ClassicGroup, ClassicMember, ClassicState, Event
from kafkamock.broker.groups.consumer import ConsumerGroup, ConsumerGroups
from kafkamock.broker.groups.group_configs import GroupConfigs
from kafkamock.broker.groups.offsets import CommitCheck, CommittedOffset, ExpireBy, GroupOffsets
from kafkamock.broker.groups.pending import Pending
from kafkamock.broker.groups.records import GroupRecord, LoggedRecord
from kafkamock.broker.producers import BatchMetadata
from kafkamock.broker.share.groups import ShareGroup, ShareGroups
from kafkamock.codec import DecodeError, codec_for
from kafkamock.records import CorruptRecordError, RecordBatch, decode_control, encode_batch

if TYPE_CHECKING:
    from kafkamock.broker.config import BrokerConfig
    from kafkamock.broker.request import Request
    from kafkamock.broker.services import CoordinatorServices
    from kafkamock.codec import messages

log = logging.getLogger("kafkamock.groups")
SUBSCRIPTION_LATEST = 3
# How long a new member's parked JoinGroup may wait before the member is dropped (Kafka's fixed
# CLASSIC_GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS): its session does not apply while it has no generation.
NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000
NO_PRODUCER_ID = -1                  # a record written outside any transaction
E = ErrorCode
ResponseT = TypeVar("ResponseT")
OffsetEntry = tuple[str, int, int, int, str | None]   # (topic, partition, offset, leader epoch, metadata)
Group = ClassicGroup | ConsumerGroup | ShareGroup      # what the coordinator's table holds, by group id
TimerKey = tuple[str, ...]                            # (what, group id[, member id])
Answer = dict[str, Any]                               # a response body (JoinGroup's, SyncGroup's)


def parse_subscription(metadata: bytes) -> set[str] | None:
    """The topics of a ConsumerProtocolSubscription (None when it cannot be read). A version newer than the
    schema's is read as the newest known one, and trailing bytes are allowed, as Kafka's ConsumerProtocol does."""
    if len(metadata) < 2:
        return None
    version = int.from_bytes(metadata[:2], "big", signed=True)
    if version < 0:
        return None
    try:
        subscription_codec = codec_for("ConsumerProtocolSubscription", min(version, SUBSCRIPTION_LATEST))
        subscription, _ = subscription_codec.decode_from(bytes(metadata[2:]), 0)
    except Exception:  # noqa: BLE001 - any malformed subscription means "unknown"
        return None
    return set(subscription.topics)


class GroupCoordinator:
    """Every group of the cluster. ``services`` gives the clock, the config, the timers and the log writes."""

    def __init__(self, services: CoordinatorServices, *,
                 share_group_deleted: Callable[[str], None] | None = None) -> None:
        self.services = services
        self.groups: dict[str, Group] = {}
        self.offsets: dict[str, GroupOffsets] = {}
        # TxnOffsetCommit's offsets until their transaction's marker: producer id -> group id -> GroupOffsets
        self.pending_txn: dict[int, dict[str, GroupOffsets]] = {}
        # What the share coordinator must forget when a share group is deleted (its share-partitions). Wired by
        # the broker that builds both coordinators.
        self.share_group_deleted: Callable[[str], None] = share_group_deleted or (lambda group_id: None)
        self.consumer = ConsumerGroups(self)              # the KIP-848 half
        self.share = ShareGroups(self)                    # KIP-932 share groups' membership
        # GROUP config resources (share.*, consumer.*); the share coordinator reads them through the callback the
        # cluster hands it (``group_config``).
        self.configs = GroupConfigs(services.config)

    # -- helpers -------------------------------------------------------------------------------------------------

    @property
    def config(self) -> BrokerConfig:
        return self.services.config

    def now(self) -> int:
        return self.services.now_ms()

    def check_coordinator(self, request: Request, group_id: str | None) -> None:
        """NOT_COORDINATOR unless the request reached the leader of the group's ``__consumer_offsets`` partition."""
        partition = self._partition(group_id or "")
        if partition.leader_id == NO_LEADER or not self.services.metadata.nodes[partition.leader_id].up:
            raise KafkaError(E.COORDINATOR_NOT_AVAILABLE, "The coordinator is not available.")
        node = request.node if request.node is not None else self.services.first_node()
        if node.node_id != partition.leader_id:
            raise KafkaError(E.NOT_COORDINATOR, f"This is not the correct coordinator for {group_id!r}.")

    def coordinator_id(self, group_id: str) -> int:
        """The node that coordinates ``group_id`` (the leader of its ``__consumer_offsets`` partition)."""
        return self._partition(group_id).leader_id

    def _partition(self, group_id: str) -> Partition:
        topic = self.services.internal_topic(GROUP_METADATA_TOPIC)
        return topic.partitions[partition_for_key(group_id, len(topic.partitions))]

    # -- the one way state changes: append the records, then replay them ------------------------------------------

    def _append(self, group_id: str, written: Sequence[GroupRecord], *, transaction: tuple[int, int] | None = None
                ) -> list[tuple[int, LoggedRecord]]:
        """Append ``written`` as one batch to the group's ``__consumer_offsets`` partition (a transactional batch of
        ``transaction`` = (producer id, epoch) when given); each record as the log now holds it, with its offset.
        An append that fails raises before anything is applied."""
        if not written:
            return []
        now = self.now()
        encoded = [r.encode() for r in written]
        producer_id, epoch = transaction if transaction is not None else (NO_PRODUCER_ID, -1)
        batch = encode_batch([{"key": k, "value": v, "timestamp": now} for k, v in encoded],
                             producer_id=producer_id, producer_epoch=epoch, transactional=transaction is not None)
        partition = self._partition(group_id)
        base, last = self.services.append_internal(partition, batch)
        if transaction is not None:      # the log's producer state: the open transaction holds the LSO back
            partition.producers.record(producer_id, epoch, BatchMetadata(-1, -1, base, last, now), transactional=True)
        return [(base + n, records.decode(k, v)) for n, (k, v) in enumerate(encoded)]

    def _append_and_replay(self, group_id: str, written: Sequence[GroupRecord], *,
                           transaction: tuple[int, int] | None = None) -> None:
        """Append the records, then apply each through ``replay_record``, exactly as a restart applies them."""
        producer_id = transaction[0] if transaction is not None else NO_PRODUCER_ID
        for offset, logged in self._append(group_id, written, transaction=transaction):
            self.replay_record(logged, offset, producer_id)

    def _run(self, group_id: str, result: CoordinatorResult[GroupRecord, ResponseT], *,
             transaction: tuple[int, int] | None = None) -> ResponseT:
        """An operation's outcome: its records appended and replayed, then its response."""
        self._append_and_replay(group_id, result.records, transaction=transaction)
        return result.response

    def write_records(self, group_id: str, written: Sequence[GroupRecord]) -> None:
        """For the KIP-848 and share groups: their records go through the same append and replay."""
        self._append_and_replay(group_id, written)

    def _notify(self, pending: Pending | None, value: Answer) -> None:
        if pending is not None and pending.value is None:
            pending.value = value
            self.services.notify(pending)

    def _schedule(self, key: TimerKey, delay_ms: int, run: Callable[[], None]) -> None:
        self.services.timers.schedule(key, self.now() + delay_ms, run)

    def _unschedule(self, key: TimerKey) -> None:
        self.services.timers.unschedule(key)

    def classic_group(self, group_id: str, *, create: bool = False) -> ClassicGroup | None:
        """The classic group ``group_id``; an empty group of the other kind is replaced when ``create``. A group
        is created by its record: an Empty GroupMetadata (Kafka's newEmptyGroupMetadataRecord), replayed."""
        group = self.groups.get(group_id)
        if group is not None and not isinstance(group, ClassicGroup):
            if create and group.is_empty():
                self._delete_group(group_id, keep_offsets=True)
                group = None
            else:
                raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a classic group.")
        if group is None and create:
            self._append_and_replay(group_id, [_empty_group_record(group_id, self.now())])
            group = self._classic(group_id)
        return group

    def _classic(self, group_id: str) -> ClassicGroup | None:
        """The table's group ``group_id`` if it is a classic group."""
        group = self.groups.get(group_id)
        return group if isinstance(group, ClassicGroup) else None

    # -- JoinGroup -----------------------------------------------------------------------------------------------

    def join(self, body: messages.JoinGroupRequest, version: int, client_id: str, client_host: str
             ) -> Answer | Pending:
        group_id = body.group_id
        member_id = body.member_id or ""
        instance_id = body.group_instance_id if version >= 5 else None
        if not group_id:
            return join_error(E.INVALID_GROUP_ID, member_id)
        config = self.config
        session = body.session_timeout_ms
        if not config["group.min.session.timeout.ms"] <= session <= config["group.max.session.timeout.ms"]:
            return join_error(E.INVALID_SESSION_TIMEOUT, member_id)
        rebalance_timeout = body.rebalance_timeout_ms if version >= 1 else session
        protocols = [(p.name, bytes(p.metadata)) for p in body.protocols]
        existing = self.groups.get(group_id)
        if isinstance(existing, ShareGroup):
            # Kafka's classicGroupJoin: a group of a kind no classic member can join (no member id handed out).
            return join_error(E.INCONSISTENT_GROUP_PROTOCOL, "")
        if isinstance(existing, ConsumerGroup) and not existing.is_empty():
            # A classic member joining a KIP-848 group (Kafka's online migration path).
            return self.consumer.classic_join(existing, body, version, client_id, client_host)
        if existing is None and member_id:
            return join_error(E.UNKNOWN_MEMBER_ID, member_id)
        # Kafka keeps the group it makes for an unknown member even when the join fails or only hands out a member
        # id: the new group's record (Empty) is written, and DescribeGroups and ListGroups show it from then on.
        group = self.classic_group(group_id, create=True)
        assert group is not None                # create=True makes the group when there is none
        if group.state is ClassicState.DEAD:
            return join_error(E.COORDINATOR_NOT_AVAILABLE, member_id)
        if not group.supports(body.protocol_type, protocols):
            answer: Answer | Pending = join_error(E.INCONSISTENT_GROUP_PROTOCOL, member_id)
        elif not member_id:
            answer = self._join_new_member(group, version, instance_id, client_id, client_host, session,
                                           rebalance_timeout, body.protocol_type, protocols)
        else:
            answer = self._join_known_member(group, member_id, instance_id, version, client_id, client_host,
                                             session, rebalance_timeout, body.protocol_type, protocols)
        return answer

    def _full(self, group: ClassicGroup) -> bool:
        max_size: int = self.config["group.max.size"]
        return len(group.members) + len(group.pending_members) >= max_size

    def _join_new_member(self, group: ClassicGroup, version: int, instance_id: str | None, client_id: str,
                         client_host: str, session: int, rebalance_timeout: int, protocol_type: str,
                         protocols: list[tuple[str, bytes]]) -> Answer | Pending:
        new_id = f"{instance_id if instance_id is not None else client_id}-{uuid.uuid4()}"
        if instance_id is not None:
            old_id = group.static_member_id(instance_id)
            if old_id is not None:
                return self._replace_static_member(group, instance_id, old_id, new_id, version, session,
                                                   rebalance_timeout, protocols)
        if self._full(group):
            return join_error(E.GROUP_MAX_SIZE_REACHED, "")
        if instance_id is None and version >= 4:
            # KIP-394: hand the id out first; the member joins with it, or the pending id expires.
            group.pending_members.add(new_id)
            self._schedule(("pending-member", group.group_id, new_id), session,
                           lambda: self._pending_member_expired(group, new_id))
            return join_error(E.MEMBER_ID_REQUIRED, new_id)
        member = ClassicMember(new_id, instance_id, client_id, client_host, rebalance_timeout, session,
                               protocol_type, protocols)
        return self._add_member_and_rebalance(group, member)

    def _join_known_member(self, group: ClassicGroup, member_id: str, instance_id: str | None, version: int,
                           client_id: str, client_host: str, session: int, rebalance_timeout: int,
                           protocol_type: str, protocols: list[tuple[str, bytes]]) -> Answer | Pending:
        if member_id in group.pending_members and instance_id is None:
            if group.has_member(member_id):
                group.pending_members.discard(member_id)
            else:
                self._unschedule(("pending-member", group.group_id, member_id))
                member = ClassicMember(member_id, None, client_id, client_host, rebalance_timeout, session,
                                       protocol_type, protocols)
                return self._add_member_and_rebalance(group, member)
        error = self._member_error(group, member_id, instance_id)
        if error:
            return join_error(error, member_id)
        member = group.members[member_id]
        state = group.state
        if state is ClassicState.PREPARING_REBALANCE:
            return self._update_member_and_rebalance(group, member, session, rebalance_timeout, protocols)
        if state is ClassicState.COMPLETING_REBALANCE:
            if member.matches(protocols):      # the same join again (a lost answer): the same generation
                return self._join_answer(group, member)
            return self._update_member_and_rebalance(group, member, session, rebalance_timeout, protocols)
        if state is ClassicState.STABLE:
            if member.member_id == group.leader_id or not member.matches(protocols):
                return self._update_member_and_rebalance(group, member, session, rebalance_timeout, protocols)
            return self._join_answer(group, member)
        return join_error(E.UNKNOWN_MEMBER_ID, member_id)

    def _replace_static_member(self, group: ClassicGroup, instance_id: str, old_id: str, new_id: str, version: int,
                               session: int, rebalance_timeout: int, protocols: list[tuple[str, bytes]]
                               ) -> Answer | Pending:
        """KIP-345: a static member rejoined with a new id; the old one is fenced (Kafka's
        updateStaticMemberThenRebalanceOrCompleteJoin). In a Stable group whose selected protocol the rejoin does
        not change there is no rebalance: the member gets the current generation back. Below JoinGroup v9 the
        answer names the leader as it was before the rejoin (the old id when the member led), so a restarted
        leader syncs as a follower and gets its assignment; v9 names the new leader and says skip_assignment."""
        old = group.members[old_id]
        self._notify(old.awaiting_join, join_error(E.FENCED_INSTANCE_ID, old_id))
        self._notify(old.awaiting_sync, sync_error(E.FENCED_INSTANCE_ID))
        old.awaiting_join = old.awaiting_sync = None
        self._unschedule(("heartbeat", group.group_id, old_id))
        current_leader = group.leader_id
        member = group.replace_static_member(instance_id, old_id, new_id)
        member.protocols = protocols
        member.session_timeout_ms, member.rebalance_timeout_ms = session, rebalance_timeout
        self._heartbeat_ok(group, member)
        if group.state is ClassicState.STABLE:
            if group.protocol == group.select_protocol():
                self._write_group(group)
                answer = self._join_answer(group, member)
                if version >= 9:
                    answer["skip_assignment"] = member.member_id == group.leader_id
                else:
                    answer.update(leader=current_leader or "", members=[])
                return answer
            pending = member.awaiting_join = Pending()
            self._prepare_rebalance(group, f"static member {new_id} ({instance_id}) changes the group's protocol")
            return pending
        pending = member.awaiting_join = Pending()
        if group.state is ClassicState.COMPLETING_REBALANCE:
            self._prepare_rebalance(group, f"static member {new_id} ({instance_id}) rejoined")
        else:
            self._maybe_complete_join(group)
        return pending

    def _member_error(self, group: ClassicGroup, member_id: str, instance_id: str | None) -> ErrorCode:
        """Kafka's validateMember: a static member must be the instance's current member; any other must exist."""
        if instance_id is not None:
            current = group.static_member_id(instance_id)
            if current is None:
                return E.UNKNOWN_MEMBER_ID
            if current != member_id:
                return E.FENCED_INSTANCE_ID
        elif not group.has_member(member_id):
            return E.UNKNOWN_MEMBER_ID
        return E.NONE

    def _add_member_and_rebalance(self, group: ClassicGroup, member: ClassicMember) -> Pending:
        pending = member.awaiting_join = Pending()
        member.is_new = True
        group.add_member(member)
        group.new_member_added = True
        self._heartbeat_ok(group, member, NEW_MEMBER_JOIN_TIMEOUT_MS)
        if group.state in (ClassicState.STABLE, ClassicState.COMPLETING_REBALANCE, ClassicState.EMPTY):
            self._prepare_rebalance(group, f"{member.member_id} joined")
        else:
            self._maybe_complete_join(group)
        return pending

    def _update_member_and_rebalance(self, group: ClassicGroup, member: ClassicMember, session: int,
                                     rebalance_timeout: int, protocols: list[tuple[str, bytes]]) -> Pending:
        if member.awaiting_join is not None:
            self._notify(member.awaiting_join, join_error(E.REBALANCE_IN_PROGRESS, member.member_id))
        member.protocols = protocols
        member.session_timeout_ms, member.rebalance_timeout_ms = session, rebalance_timeout
        pending = member.awaiting_join = Pending()
        if group.state in (ClassicState.STABLE, ClassicState.COMPLETING_REBALANCE, ClassicState.EMPTY):
            self._prepare_rebalance(group, f"{member.member_id} rejoined")
        else:
            self._maybe_complete_join(group)
        return pending

    def _join_answer(self, group: ClassicGroup, member: ClassicMember) -> Answer:
        leader = member.member_id == group.leader_id
        return {"throttle_time_ms": 0, "error_code": E.NONE, "generation_id": group.generation,
                "protocol_type": group.protocol_type, "protocol_name": group.protocol,
                "leader": group.leader_id or "", "skip_assignment": False, "member_id": member.member_id,
                "members": [{"member_id": m.member_id, "group_instance_id": m.group_instance_id,
                             "metadata": m.metadata(group.protocol)} for m in group.members.values()]
                if leader else []}

    # -- the rebalance round -------------------------------------------------------------------------------------

    def _prepare_rebalance(self, group: ClassicGroup, reason: str) -> None:
        if group.state is ClassicState.COMPLETING_REBALANCE:
            for member in group.members.values():   # the assignment in the making is void, and so is the last one
                member.assignment = b""
                if member.awaiting_sync is not None:
                    self._notify(member.awaiting_sync, sync_error(E.REBALANCE_IN_PROGRESS))
                    member.awaiting_sync = None
                    self._heartbeat_ok(group, member)     # answered: its session counts again from now
        self._unschedule(("pending-sync", group.group_id))
        initial = group.state is ClassicState.EMPTY
        group.transition(Event.REBALANCE, self.now())
        group.new_member_added = False
        timeout = group.max_rebalance_timeout()
        if initial and self.config["group.initial.rebalance.delay.ms"] > 0:
            delay = min(self.config["group.initial.rebalance.delay.ms"], timeout)
            group.initial_delay_left = max(timeout - delay, 0)
            self._schedule(("join", group.group_id), delay, lambda: self._initial_delay_over(group))
        else:
            group.initial_delay_left = None
            self._schedule(("join", group.group_id), timeout, lambda: self._complete_join(group))
        log.info("group %s rebalancing (generation %d): %s", group.group_id, group.generation, reason)
        self._maybe_complete_join(group)     # everyone (or no one) left has joined already: no need to wait

    def _initial_delay_over(self, group: ClassicGroup) -> None:
        """group.initial.rebalance.delay.ms: wait again while new members keep coming, within the rebalance
        timeout (Kafka's InitialDelayedJoin)."""
        left = group.initial_delay_left or 0
        if group.new_member_added and left > 0:
            group.new_member_added = False
            delay = min(self.config["group.initial.rebalance.delay.ms"], left)
            group.initial_delay_left = left - delay
            self._schedule(("join", group.group_id), delay, lambda: self._initial_delay_over(group))
            return
        group.initial_delay_left = None
        self._complete_join(group)

    def _maybe_complete_join(self, group: ClassicGroup) -> None:
        if group.state is ClassicState.PREPARING_REBALANCE and group.all_joined() \
                and group.initial_delay_left is None:
            self._complete_join(group)

    def _complete_join(self, group: ClassicGroup) -> None:
        if group.state is not ClassicState.PREPARING_REBALANCE or self.groups.get(group.group_id) is not group:
            return
        self._unschedule(("join", group.group_id))
        for member in group.not_rejoined():
            if member.group_instance_id is None:      # static members keep their place while away
                self._remove_member(group, member)
        if group.members and all(m.awaiting_join is None for m in group.members.values()):
            # Only static members are left and none rejoined: Kafka waits another rebalance timeout (their
            # sessions run out meanwhile) rather than start a generation nobody joined.
            log.info("group %s could not complete its rebalance: no member rejoined", group.group_id)
            self._schedule(("join", group.group_id), group.max_rebalance_timeout(), lambda: self._complete_join(group))
            return
        now = self.now()
        group.generation += 1
        if group.members:
            if group.leader_id not in group.members or group.members[group.leader_id].awaiting_join is None:
                joined = [m for m in group.members.values() if m.awaiting_join is not None]
                group.leader_id = (joined[0] if joined else next(iter(group.members.values()))).member_id
            group.protocol = group.select_protocol()
            group.transition(Event.JOINED, now)
        else:
            group.protocol = None
            group.transition(Event.JOINED_EMPTY, now)
        group.compute_subscribed_topics(parse_subscription)
        if not group.members:
            self._write_group(group)
            log.info("group %s is empty (generation %d)", group.group_id, group.generation)
            return
        group.pending_sync = set(group.members)
        for member in group.members.values():
            pending, member.awaiting_join = member.awaiting_join, None
            self._notify(pending, self._join_answer(group, member))
            self._heartbeat_ok(group, member)
            member.is_new = False
        generation = group.generation
        self._schedule(("pending-sync", group.group_id), group.max_rebalance_timeout(),
                       lambda: self._pending_sync_expired(group, generation))
        log.info("group %s generation %d: %d member(s), protocol %s, leader %s", group.group_id, generation,
                 len(group.members), group.protocol, group.leader_id)

    def _pending_sync_expired(self, group: ClassicGroup, generation: int) -> None:
        """Members that did not send SyncGroup within the rebalance timeout leave, and the group rebalances."""
        if group.generation != generation or not group.pending_sync or \
                group.state not in (ClassicState.COMPLETING_REBALANCE, ClassicState.STABLE):
            return
        for member_id in list(group.pending_sync):
            member = group.members.get(member_id)
            if member is not None:
                self._remove_member(group, member)
        group.pending_sync.clear()
        self._prepare_rebalance(group, "members did not sync in time")

    def _remove_member(self, group: ClassicGroup, member: ClassicMember) -> None:
        self._unschedule(("heartbeat", group.group_id, member.member_id))
        # A parked JoinGroup of a member that leaves or times out: UNKNOWN_MEMBER_ID with no member id, so the
        # client joins again as a new member (Kafka's removeMemberAndUpdateClassicGroup).
        self._notify(member.awaiting_join, join_error(E.UNKNOWN_MEMBER_ID, ""))
        self._notify(member.awaiting_sync, sync_error(E.UNKNOWN_MEMBER_ID))
        group.remove_member(member.member_id)

    def _remove_member_and_update(self, group: ClassicGroup, member: ClassicMember, reason: str) -> None:
        self._remove_member(group, member)
        if group.state in (ClassicState.STABLE, ClassicState.COMPLETING_REBALANCE):
            self._prepare_rebalance(group, reason)
        elif group.state is ClassicState.PREPARING_REBALANCE:
            self._maybe_complete_join(group)

    # -- heartbeats and session timeouts --------------------------------------------------------------------------

    def _heartbeat_ok(self, group: ClassicGroup, member: ClassicMember, timeout_ms: int | None = None) -> None:
        """The member's session (its heartbeat expiry) starts again from now."""
        member_id = member.member_id
        self._schedule(("heartbeat", group.group_id, member_id),
                       member.session_timeout_ms if timeout_ms is None else timeout_ms,
                       lambda: self._session_expired(group, member_id))

    def _session_expired(self, group: ClassicGroup, member_id: str) -> None:
        member = group.members.get(member_id)
        if member is None or self.groups.get(group.group_id) is not group:
            return
        if member.heartbeat_satisfied():
            # Waiting for its round counts as alive; the round's end starts its session again (Kafka does not
            # reschedule here either).
            return
        log.info("group %s: member %s's session timed out", group.group_id, member_id)
        self._remove_member_and_update(group, member, f"{member_id}'s session timed out")

    def _pending_member_expired(self, group: ClassicGroup, member_id: str) -> None:
        """KIP-394: an id handed out but never joined with expires after the session timeout (the group stays)."""
        if member_id in group.pending_members:
            group.pending_members.discard(member_id)
            self._maybe_complete_join(group)

    def heartbeat(self, body: messages.HeartbeatRequest, version: int) -> ErrorCode:
        consumer_group = self.groups.get(body.group_id)
        if isinstance(consumer_group, ConsumerGroup):
            return self.consumer.classic_heartbeat(consumer_group, body, version)
        group = self._existing_classic(body.group_id)
        if group.state is ClassicState.DEAD:
            return E.COORDINATOR_NOT_AVAILABLE
        instance_id = body.group_instance_id if version >= 3 else None
        error = self._member_error(group, body.member_id, instance_id)
        if error:
            return error
        if body.generation_id != group.generation:
            return E.ILLEGAL_GENERATION
        if group.state is ClassicState.EMPTY:
            return E.UNKNOWN_MEMBER_ID
        self._heartbeat_ok(group, group.members[body.member_id])
        return E.REBALANCE_IN_PROGRESS if group.state is ClassicState.PREPARING_REBALANCE else E.NONE

    def _existing_classic(self, group_id: str) -> ClassicGroup:
        group = self.groups.get(group_id)
        if not isinstance(group, ClassicGroup):
            raise KafkaError(E.UNKNOWN_MEMBER_ID, f"Group {group_id} not found.")
        return group

    # -- SyncGroup -----------------------------------------------------------------------------------------------

    def sync(self, body: messages.SyncGroupRequest, version: int) -> Answer | Pending:
        group = self.groups.get(body.group_id)
        if isinstance(group, ConsumerGroup):
            return self.consumer.classic_sync(group, body, version)
        if not isinstance(group, ClassicGroup):
            return sync_error(E.UNKNOWN_MEMBER_ID)
        if group.state is ClassicState.DEAD:
            return sync_error(E.COORDINATOR_NOT_AVAILABLE)
        instance_id = body.group_instance_id if version >= 3 else None
        error = self._member_error(group, body.member_id, instance_id)
        if error:
            return sync_error(error)
        if body.generation_id != group.generation:
            return sync_error(E.ILLEGAL_GENERATION)
        if version >= 5 and (body.protocol_type != group.protocol_type or body.protocol_name != group.protocol):
            # v5+ must name both, and they must be the group's (SyncGroupRequest.areMandatoryProtocolTypeAndNamePresent)
            return sync_error(E.INCONSISTENT_GROUP_PROTOCOL)
        member = group.members[body.member_id]
        if group.state is ClassicState.EMPTY:
            return sync_error(E.UNKNOWN_MEMBER_ID)
        if group.state is ClassicState.PREPARING_REBALANCE:
            return sync_error(E.REBALANCE_IN_PROGRESS)
        group.pending_sync.discard(member.member_id)
        if group.state is ClassicState.STABLE:
            return self._sync_answer(group, member)
        pending = member.awaiting_sync = Pending()
        if member.member_id == group.leader_id:
            assignments = {a.member_id: bytes(a.assignment) for a in body.assignments}
            for m in group.members.values():
                m.assignment = assignments.get(m.member_id, b"")
            self._write_group(group)
            group.transition(Event.ASSIGNED, self.now())
            for m in group.members.values():
                waiting, m.awaiting_sync = m.awaiting_sync, None
                if waiting is not None:          # answered: its session counts from now (Kafka's propagate)
                    self._notify(waiting, self._sync_answer(group, m))
                    self._heartbeat_ok(group, m)
        return pending

    def _sync_answer(self, group: ClassicGroup, member: ClassicMember) -> Answer:
        return {"throttle_time_ms": 0, "error_code": E.NONE, "protocol_type": group.protocol_type,
                "protocol_name": group.protocol, "assignment": member.assignment}

    # -- LeaveGroup ----------------------------------------------------------------------------------------------

    def leave(self, group_id: str, identities: list[tuple[str, str | None, str | None]]) -> list[ErrorCode]:
        """One error per (member id, group instance id, reason); raises for the whole request."""
        consumer_group = self.groups.get(group_id)
        if isinstance(consumer_group, ConsumerGroup):
            return self.consumer.classic_leave(consumer_group, identities)
        group = self._existing_classic(group_id)
        if group.state is ClassicState.DEAD:
            raise KafkaError(E.COORDINATOR_NOT_AVAILABLE)
        errors = []
        for member_id, instance_id, reason in identities:
            errors.append(self._leave_one(group, member_id or "", instance_id, reason))
        return errors

    def _leave_one(self, group: ClassicGroup, member_id: str, instance_id: str | None, reason: str | None
                   ) -> ErrorCode:
        why = f"{member_id or instance_id} left" + (f" ({reason})" if reason else "")
        if instance_id is None:
            if member_id in group.pending_members and not group.has_member(member_id):
                group.pending_members.discard(member_id)
                self._unschedule(("pending-member", group.group_id, member_id))
                self._maybe_complete_join(group)
                return E.NONE
            member = group.members.get(member_id)
            if member is None:
                return E.UNKNOWN_MEMBER_ID
        else:
            current = group.static_member_id(instance_id)
            if current is None:
                return E.UNKNOWN_MEMBER_ID
            if member_id and member_id != current:
                return E.FENCED_INSTANCE_ID
            member = group.members[current]
        self._remove_member_and_update(group, member, why)
        return E.NONE

    # -- offsets -------------------------------------------------------------------------------------------------

    def validate_commit(self, group_id: str, generation: int, member_id: str, instance_id: str | None,
                        version: int, transactional: bool = False) -> CommitCheck | None:
        """Check who commits (Kafka's validateOffsetCommit of each group kind; a standalone commit creates its
        group): raises KafkaError, or returns None or a per-partition check ``(topic, topic id, partition) ->
        None | (ErrorCode, message)`` (KIP-1251: a consumer-group member committing with an older epoch)."""
        group = self.groups.get(group_id)
        if group is None:
            # Kafka's validateOffsetCommit (the empty group id is a group like any other here, as in Kafka): without a generation it is a simple (standalone) group, created now;
            # with one, v9+ says the group is not found and older versions ILLEGAL_GENERATION.
            if generation >= 0:
                if version >= 9:
                    raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
                raise KafkaError(E.ILLEGAL_GENERATION, f"Group {group_id} has no generation {generation}.")
            self.groups[group_id] = ClassicGroup(group_id, state_timestamp_ms=self.now())
            return None
        if not isinstance(group, ClassicGroup):
            return group.validate_commit(member_id, instance_id, generation, version, transactional)
        # Kafka's ClassicGroup.validateOffsetCommit, in its order.
        if group.state is ClassicState.DEAD:
            raise KafkaError(E.COORDINATOR_NOT_AVAILABLE)
        if generation < 0 and group.state is ClassicState.EMPTY:
            return None                              # an admin or standalone commit
        if generation >= 0 or member_id or instance_id is not None:
            error = self._member_error(group, member_id, instance_id)
            if error:
                raise KafkaError(error)
            if generation != group.generation:
                raise KafkaError(E.ILLEGAL_GENERATION)
        elif not transactional and group.state is not ClassicState.EMPTY:
            raise KafkaError(E.UNKNOWN_MEMBER_ID)    # no member named: only into an Empty group
        if not transactional and group.state is ClassicState.COMPLETING_REBALANCE:
            raise KafkaError(E.REBALANCE_IN_PROGRESS)
        if not transactional and group.state in (ClassicState.STABLE, ClassicState.PREPARING_REBALANCE):
            self._heartbeat_ok(group, group.members[member_id])   # a commit keeps the session (Kafka)
        return None

    def commit(self, group_id: str, entries: Iterable[OffsetEntry], expire_timestamp_ms: int | None) -> None:
        """Store offsets (topic, partition, offset, leader epoch, metadata) validated by the caller."""
        self._run(group_id, self._offset_commits(group_id, entries, expire_timestamp_ms))

    def txn_commit(self, group_id: str, producer_id: int, epoch: int, entries: Iterable[OffsetEntry]) -> None:
        """TxnOffsetCommit: the offsets' records go as a transactional batch of the producer into the group's
        partition; replayed, they are pending until the transaction's marker there commits them (or aborts them
        away)."""
        self._run(group_id, self._offset_commits(group_id, entries, None), transaction=(producer_id, epoch))

    def _offset_commits(self, group_id: str, entries: Iterable[OffsetEntry], expire_timestamp_ms: int | None
                        ) -> CoordinatorResult[GroupRecord, None]:
        """One OffsetCommit record per partition, committed now (Kafka's commitOffset / commitTransactionalOffset)."""
        now = self.now()
        return CoordinatorResult(None, [
            _offset_record(group_id, topic, partition,
                           CommittedOffset(offset, leader_epoch, metadata or "", now, expire_timestamp_ms))
            for topic, partition, offset, leader_epoch, metadata in entries])

    def _pend(self, group_id: str, producer_id: int, topic: str, partition: int, committed: CommittedOffset) -> None:
        self.pending_txn.setdefault(producer_id, {}).setdefault(group_id, GroupOffsets()).put(topic, partition,
                                                                                              committed)

    def transaction_ended(self, partition_index: int, producer_id: int, commit: bool) -> None:
        """A COMMIT or ABORT marker in ``__consumer_offsets`` partition ``partition_index``, just appended by the
        transaction coordinator or read back at a restart (Kafka's replayEndTransactionMarker): the producer's
        pending offsets of the groups there become committed, or are dropped. The transaction coordinator is handed
        this method as its ``offsets_marker`` where the broker builds both."""
        groups = self.pending_txn.get(producer_id)
        if not groups:
            return
        for group_id in [g for g in groups if self._partition(g).index == partition_index]:
            pending = groups.pop(group_id)
            if commit:
                offsets = self.offsets.setdefault(group_id, GroupOffsets())
                for topic, partition, committed in pending.items():
                    # as Kafka's OffsetMetadataManager: a plain commit written after this one stays
                    existing = offsets.get(topic, partition)
                    if existing is None or committed.record_offset > existing.record_offset:
                        offsets.put(topic, partition, committed)
                self._simple_group(group_id)
        if not groups:
            del self.pending_txn[producer_id]

    def has_pending_offset(self, group_id: str, topic: str, partition: int) -> bool:
        """A transactional commit of this offset awaits its marker (OffsetFetch RequireStable: UNSTABLE_OFFSET_COMMIT)."""
        return any(group_id in groups and groups[group_id].get(topic, partition) is not None
                   for groups in self.pending_txn.values())

    def fetch_offsets(self, group_id: str, topics: list[tuple[str, list[int]]] | None, member_id: str | None = None,
                      member_epoch: int = -1) -> list[tuple[str, int, CommittedOffset | None]]:
        """(topic, partition, committed or None) for the partitions asked (all of the group's when ``topics`` is
        None). A group that does not exist has no offsets (no error), as in Kafka."""
        group = self.groups.get(group_id)
        if isinstance(group, ConsumerGroup):
            # Kafka's ConsumerGroup.validateOffsetFetch: a null member id with no epoch is an admin fetch; an
            # empty one is a member id like any other (UNKNOWN_MEMBER_ID).
            group.validate_offset_fetch(member_id, member_epoch)
        offsets = self.offsets.get(group_id)
        if topics is None:
            if offsets is None:
                return []
            return [(t, p, o) for t, p, o in offsets.items()]
        return [(t, p, offsets.get(t, p) if offsets is not None else None) for t, ps in topics for p in ps]

    def delete_offsets(self, group_id: str, topics: list[tuple[str, list[int]]]) -> list[tuple[str, int, ErrorCode]]:
        """OffsetDelete: GROUP_ID_NOT_FOUND / NON_EMPTY_GROUP for the request, GROUP_SUBSCRIBED_TO_TOPIC per
        partition of a topic the members still subscribe to (Kafka's validateOffsetDelete)."""
        return self._run(group_id, self._offset_deletes(group_id, topics))

    def _offset_deletes(self, group_id: str, topics: list[tuple[str, list[int]]]
                        ) -> CoordinatorResult[GroupRecord, list[tuple[str, int, ErrorCode]]]:
        group = self.groups.get(group_id)
        if group is None or group.state_name == "Dead":
            raise KafkaError(E.GROUP_ID_NOT_FOUND)
        if isinstance(group, ClassicGroup) and group.state is not ClassicState.EMPTY \
                and not group.uses_consumer_protocol():
            raise KafkaError(E.NON_EMPTY_GROUP)
        offsets = self.offsets.get(group_id)
        results: list[tuple[str, int, ErrorCode]] = []
        tombstones: dict[tuple[str, int], GroupRecord] = {}      # one per partition, however often it is named
        for topic, partitions in topics:
            subscribed = group.is_subscribed_to(topic)
            for partition in partitions:
                if subscribed:
                    results.append((topic, partition, E.GROUP_SUBSCRIBED_TO_TOPIC))
                    continue
                if offsets is not None and offsets.get(topic, partition) is not None:
                    tombstones.setdefault((topic, partition), _offset_tombstone(group_id, topic, partition))
                results.append((topic, partition, E.NONE))
        return CoordinatorResult(results, list(tombstones.values()))

    # -- groups: describe, list, delete --------------------------------------------------------------------------

    def list_groups(self, states: set[str] | None, types: set[str] | None) -> list[Group]:
        found = []
        for group in self.groups.values():
            if states and group.state_name.lower() not in states:
                continue
            if types and group.kind not in types:
                continue
            found.append(group)
        return found

    def delete_group(self, group_id: str) -> ErrorCode:
        group = self.groups.get(group_id)
        if group is None or group.state_name == "Dead":
            return E.GROUP_ID_NOT_FOUND
        if not group.is_empty():
            return E.NON_EMPTY_GROUP
        self._delete_group(group_id)
        return E.NONE

    def _delete_group(self, group_id: str, *, keep_offsets: bool = False) -> None:
        """Delete a group with tombstones for every record it had, its offsets' first (Kafka's deleteGroups);
        replaying them removes the group and its offsets. ``keep_offsets``: an empty group of one kind gives way
        to the other kind, and its committed offsets stay (Kafka converts it)."""
        group = self.groups.get(group_id)
        if isinstance(group, ShareGroup):
            # Kafka's deleteShareGroups before the tombstones: the group's share state is being deleted (a record),
            # and the share coordinator forgets its share-partitions (the persister's deleteState).
            self.share.delete_state(group_id)
        offsets = None if keep_offsets else self.offsets.get(group_id)
        tombstones = [_offset_tombstone(group_id, t, p) for t, p, _ in (offsets.items() if offsets else [])]
        if group is not None:
            if isinstance(group, ClassicGroup):
                tombstones.append(records.record(records.GROUP_METADATA, {"group": group_id}, None))
            else:
                tombstones.extend(group.tombstones())
        self._append_and_replay(group_id, tombstones)

    def drop_group(self, group_id: str) -> None:
        """A group's tombstone was replayed: the group leaves the table."""
        group = self.groups.pop(group_id, None)
        if group is not None:
            self._group_removed(group)

    def _group_removed(self, group: Group) -> None:
        """A group left the table: a classic group is Dead (a late timer or request finds it so) and its round's
        timers go; a KIP-848 or share group is marked dead and its members' timers go."""
        if isinstance(group, ClassicGroup):
            if group.state is not ClassicState.DEAD:
                group.transition(Event.REMOVED, self.now())
            self._unschedule(("join", group.group_id))
            self._unschedule(("pending-sync", group.group_id))
        else:
            group.removed(self)

    def _simple_group(self, group_id: str) -> None:
        """Offsets committed for a group that does not exist make a simple group: an Empty classic group with no
        protocol type (Kafka's getOrMaybeCreateClassicGroup from its offsets' replay)."""
        if group_id not in self.groups:
            self.groups[group_id] = ClassicGroup(group_id, state_timestamp_ms=self.now())

    # -- KIP-211: the offsets cleanup ----------------------------------------------------------------------------

    def expire_offsets(self, now_ms: int) -> None:
        """The periodic cleanup (``offsets.retention.check.interval.ms``): expired offsets go, with tombstones;
        an empty group left without offsets goes too (Kafka's cleanupGroupMetadata)."""
        retention_ms = self.config["offsets.retention.minutes"] * 60_000
        removed_groups = 0
        removed_offsets = 0
        for group_id in list(self.groups.keys() | self.offsets.keys()):
            group = self.groups.get(group_id)
            if isinstance(group, ShareGroup):           # Kafka's ShareGroup.shouldExpire: never
                continue
            offsets = self.offsets.get(group_id)
            all_gone = True
            if offsets:
                base: ExpireBy | None = group.offsets_expire_by() if group is not None \
                    else (lambda o: o.commit_timestamp_ms)
                if base is None:
                    continue
                subscribed: Callable[[str], bool] = group.is_subscribed_to if group is not None \
                    else (lambda topic: False)
                expired = offsets.expired(base, subscribed, now_ms, retention_ms)
                self._append_and_replay(group_id, [_offset_tombstone(group_id, t, p) for t, p in expired])
                removed_offsets += len(expired)
                all_gone = group_id not in self.offsets
            if all_gone and group is not None and group.is_empty():
                self._delete_group(group_id)
                removed_groups += 1
        if removed_offsets or removed_groups:
            log.info("offsets cleanup: %d offset(s) expired, %d group(s) removed", removed_offsets, removed_groups)

    def topic_deleted(self, name: str, topic_id: uuid.UUID | None = None) -> None:
        """A topic was deleted. ``__consumer_offsets`` itself takes every group and offset with it (Kafka's
        coordinator resigns its partitions; FindCoordinator creates the topic again, empty); another topic's
        committed offsets are deleted with tombstones, as Kafka's onPartitionsDeleted does, and the share groups'
        share-state bookkeeping forgets the topic (``topic_id``; Kafka's maybeCleanupShareGroupState)."""
        if name == GROUP_METADATA_TOPIC:
            self._unload()
            return
        for group_id, offsets in list(self.offsets.items()):
            self._append_and_replay(group_id, [_offset_tombstone(group_id, topic, partition)
                                               for topic, partition, _ in offsets.items() if topic == name])
        if topic_id is not None:
            self.share.topic_deleted(topic_id)

    def _unload(self) -> None:
        """Forget every group (their timers, their parked JoinGroup and SyncGroup answered NOT_COORDINATOR) and
        every offset: what a restart on the deleted log would find."""
        for group in self.groups.values():
            if isinstance(group, ClassicGroup):
                for member in group.members.values():
                    self._notify(member.awaiting_join, join_error(E.NOT_COORDINATOR, member.member_id))
                    self._notify(member.awaiting_sync, sync_error(E.NOT_COORDINATOR))
        held = set(self.groups)
        self.services.timers.unschedule_where(lambda key: isinstance(key, tuple) and len(key) > 1 and key[1] in held)
        if self.groups or self.offsets:
            log.warning("%s deleted: %d group(s) and the offsets of %d forgotten", GROUP_METADATA_TOPIC,
                        len(self.groups), len(self.offsets))
        self.groups.clear()
        self.offsets.clear()
        self.pending_txn.clear()

    # -- records: what the round writes, and replay -------------------------------------------------------------

    def _write_group(self, group: ClassicGroup) -> None:
        """The classic group's GroupMetadata snapshot, appended without replay: the round already changed the group
        in memory (Kafka's CoordinatorResult with an append future, which the runtime does not replay). Loading the
        log replays it (``_replay_group_metadata``)."""
        self._append(group.group_id, [_group_record(group)])

    def replay(self) -> None:
        """Load groups and offsets from ``__consumer_offsets`` (a restart with a data dir): each record goes through
        ``replay_record`` as it did when it was written, each marker through ``transaction_ended``; then the loaded
        groups' timers start (Kafka's onLoaded)."""
        topic = self.services.metadata.topics.get(GROUP_METADATA_TOPIC)
        if topic is None:
            return
        for partition, batch in logged_batches(topic):
            if batch.is_control:
                self._replay_marker(partition.index, batch)
                continue
            producer_id = batch.producer_id if batch.is_transactional else NO_PRODUCER_ID
            for rec in batch.records:
                try:
                    logged = records.decode(rec.key, rec.value)
                except (records.UnknownRecord, DecodeError, ValueError) as exc:
                    log.warning("__consumer_offsets-%d offset %d: record skipped: %s", partition.index, rec.offset,
                                exc)
                    continue
                self.replay_record(logged, rec.offset, producer_id)
        self._loaded()

    def _loaded(self) -> None:
        """After loading the log: every member's session starts again, as Kafka's coordinator does on load."""
        for group in self.groups.values():
            if isinstance(group, ClassicGroup):
                for member in group.members.values():
                    self._heartbeat_ok(group, member)
            else:
                group.loaded(self)
        for group_id in list(self.offsets):     # a log cut between a group's tombstone and its successor's records
            self._simple_group(group_id)
        if self.groups:
            log.info("replayed %d group(s) and the offsets of %d from %s", len(self.groups), len(self.offsets),
                     GROUP_METADATA_TOPIC)

    def _replay_marker(self, partition_index: int, batch: RecordBatch) -> None:
        for rec in batch.records:
            try:
                kind, _ = decode_control(rec.key, rec.value)
            except CorruptRecordError:
                continue
            if kind in ("COMMIT", "ABORT"):
                self.transaction_ended(partition_index, batch.producer_id, kind == "COMMIT")

    def replay_record(self, record: LoggedRecord, offset: int, producer_id: int = NO_PRODUCER_ID) -> None:
        """Apply one record of ``__consumer_offsets`` (Kafka's GroupCoordinatorShard.replay), right after its append
        at run time and when the log is loaded alike: the only place committed and pending offsets, the groups'
        existence and the KIP-848 and share groups' records change state. ``offset`` is the record's place in the log,
        ``producer_id`` the transactional producer that wrote it (NO_PRODUCER_ID outside a transaction)."""
        kind, key, value = record
        if kind in (records.OFFSET_COMMIT, records.OFFSET_COMMIT_LEGACY):
            self._replay_offset_commit(key, value, offset, producer_id)
        elif kind == records.GROUP_METADATA:
            self._replay_group_metadata(key, value)
        elif kind in records.SHARE_GROUP_RECORD_TYPES:
            self.share.replay(kind, key, value)
        else:
            self.consumer.replay(kind, key, value)

    def _replay_offset_commit(self, key: Any, value: Any, offset: int, producer_id: int) -> None:
        """Kafka's OffsetMetadataManager.replay: a tombstone removes the committed offset; a value is committed, or
        pending in its producer's transaction; a group that does not exist becomes a simple group."""
        group_id = key.group
        if value is None:
            offsets = self.offsets.get(group_id)
            if offsets is not None and offsets.remove(key.topic, key.partition) and not offsets:
                del self.offsets[group_id]
            return
        expire = value.expire_timestamp        # (a version without it reads -1, its default)
        committed = CommittedOffset(value.offset, value.leader_epoch, value.metadata,
                                    value.commit_timestamp, None if expire == -1 else expire, offset)
        self._simple_group(group_id)
        if producer_id != NO_PRODUCER_ID:
            self._pend(group_id, producer_id, key.topic, key.partition, committed)
        else:
            self.offsets.setdefault(group_id, GroupOffsets()).put(key.topic, key.partition, committed)

    def _replay_group_metadata(self, key: Any, value: Any) -> None:
        """Kafka's GroupMetadataManager.replay of a GroupMetadata record: a tombstone removes the group; a value is
        the classic group as it was written, Stable with its members (Empty without), the members' subscriptions
        read for KIP-211."""
        group_id = key.group
        if value is None:
            self.drop_group(group_id)
            return
        group = ClassicGroup(group_id, generation=value.generation, protocol_type=value.protocol_type or None,
                             protocol=value.protocol, leader_id=value.leader,
                             state_timestamp_ms=value.current_state_timestamp)
        for m in value.members:
            # A v0 record has no rebalance timeout (it reads -1): Kafka's ClassicGroup.fromRecord takes the
            # session timeout then.
            rebalance_timeout = m.session_timeout if m.rebalance_timeout == -1 else m.rebalance_timeout
            group.add_member(ClassicMember(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                                           rebalance_timeout, m.session_timeout, value.protocol_type,
                                           [(value.protocol, bytes(m.subscription))], bytes(m.assignment)))
        group.leader_id = value.leader if value.leader in group.members else group.leader_id
        if group.members:
            group.state = ClassicState.STABLE
        group.compute_subscribed_topics(parse_subscription)
        self.groups[group_id] = group


def _offset_key(group_id: str, topic: str, partition: int) -> dict[str, Any]:
    return {"group": group_id, "topic": topic, "partition": partition}


def _offset_tombstone(group_id: str, topic: str, partition: int) -> GroupRecord:
    return records.record(records.OFFSET_COMMIT, _offset_key(group_id, topic, partition), None)


def _offset_record(group_id: str, topic: str, partition: int, committed: CommittedOffset) -> GroupRecord:
    value: dict[str, Any] = {"offset": committed.offset, "leader_epoch": committed.leader_epoch,
                             "metadata": committed.metadata, "commit_timestamp": committed.commit_timestamp_ms}
    if committed.expire_timestamp_ms is not None:
        value["expire_timestamp"] = committed.expire_timestamp_ms
        version = records.OFFSET_COMMIT_VALUE_EXPIRING_VERSION
    else:
        version = records.OFFSET_COMMIT_VALUE_VERSION
    return records.record(records.OFFSET_COMMIT, _offset_key(group_id, topic, partition), value, version)


def _empty_group_record(group_id: str, now_ms: int) -> GroupRecord:
    """A new classic group, Empty (Kafka's newEmptyGroupMetadataRecord)."""
    return records.record(records.GROUP_METADATA, {"group": group_id}, {
        "protocol_type": "", "generation": 0, "protocol": None, "leader": None, "current_state_timestamp": now_ms,
        "members": []}, records.GROUP_METADATA_VALUE_VERSION)


def _group_record(group: ClassicGroup) -> GroupRecord:
    """A classic group's GroupMetadata snapshot (Kafka's newGroupMetadataRecord)."""
    return records.record(records.GROUP_METADATA, {"group": group.group_id}, {
        "protocol_type": group.protocol_type or "", "generation": group.generation,
        "protocol": group.protocol, "leader": group.leader_id if group.members else None,
        "current_state_timestamp": group.state_timestamp_ms,
        "members": [{"member_id": m.member_id, "group_instance_id": m.group_instance_id,
                     "client_id": m.client_id, "client_host": m.client_host,
                     "rebalance_timeout": m.rebalance_timeout_ms, "session_timeout": m.session_timeout_ms,
                     "subscription": m.metadata(group.protocol), "assignment": m.assignment}
                    for m in group.members.values()]}, records.GROUP_METADATA_VALUE_VERSION)


def join_error(code: ErrorCode, member_id: str) -> Answer:
    return {"throttle_time_ms": 0, "error_code": code, "generation_id": -1, "protocol_type": None,
            "protocol_name": None, "leader": "", "skip_assignment": False, "member_id": member_id, "members": []}


def sync_error(code: ErrorCode) -> Answer:
    return {"throttle_time_ms": 0, "error_code": code, "protocol_type": None, "protocol_name": None,
            "assignment": b""}
