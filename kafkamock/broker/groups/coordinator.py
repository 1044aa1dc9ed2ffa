"""The group coordinator: classic groups' rounds, committed offsets, KIP-211 expiry, and their records.

Kafka's GroupMetadataManager and OffsetMetadataManager in one place, on the core's clock. Handlers call one method
per API; a JoinGroup or SyncGroup that must wait for the rest of its group gets a ``Pending`` which the round
resolves (the broker wakes the parked request). Every change a restart must keep is written as a record of
``__consumer_offsets`` (``records.py``) to the partition the group id hashes to, and ``replay`` rebuilds the groups
from those records. KIP-848 groups (``consumer.py``) share the offsets, the records and the timers.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from kafkamock.broker.cluster import GROUP_METADATA_TOPIC, NO_LEADER, partition_for_key
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.groups import records
from kafkamock.broker.groups.classic import ClassicGroup, ClassicMember, ClassicState, Event
from kafkamock.broker.groups.consumer import ConsumerGroups, replay_record
from kafkamock.broker.groups.group_configs import GroupConfigs
from kafkamock.broker.groups.offsets import CommittedOffset, GroupOffsets
from kafkamock.broker.groups.pending import Pending
from kafkamock.broker.producers import BatchMetadata
from kafkamock.broker.share.groups import ShareGroups
from kafkamock.codec import DecodeError, codec_for
from kafkamock.records import CorruptRecordError, decode_batches, decode_control, encode_batch

log = logging.getLogger("kafkamock.groups")
SUBSCRIPTION_LATEST = 3
# How long a new member's parked JoinGroup may wait before the member is dropped (Kafka's fixed
# CLASSIC_GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS): its session does not apply while it has no generation.
NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000
E = ErrorCode


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
    """Every group of the cluster. ``broker`` gives the clock, the config, the timers and the log writes."""

    def __init__(self, broker) -> None:
        self.broker = broker
        self.groups: dict[str, Any] = {}                 # group id -> ClassicGroup | ConsumerGroup
        self.offsets: dict[str, GroupOffsets] = {}
        # TxnOffsetCommit's offsets until their transaction's marker: producer id -> group id -> GroupOffsets
        self.pending_txn: dict[int, dict[str, GroupOffsets]] = {}
        self.consumer = ConsumerGroups(self)              # the KIP-848 half
        self.share = ShareGroups(self)                    # KIP-932 share groups' membership
        self.configs = GroupConfigs(broker.config)        # GROUP config resources (share.*, consumer.*)
        self._replaying = False

    # -- helpers -------------------------------------------------------------------------------------------------

    @property
    def config(self):
        return self.broker.config

    def now(self) -> int:
        return self.broker.now_ms()

    def check_coordinator(self, request, group_id: str | None) -> None:
        """NOT_COORDINATOR unless the request reached the leader of the group's ``__consumer_offsets`` partition."""
        partition = self._partition(group_id or "")
        if partition.leader_id == NO_LEADER or not self.broker.cluster.nodes[partition.leader_id].up:
            raise KafkaError(E.COORDINATOR_NOT_AVAILABLE, "The coordinator is not available.")
        node = request.node if request.node is not None else self.broker.first_node()
        if node.node_id != partition.leader_id:
            raise KafkaError(E.NOT_COORDINATOR, f"This is not the correct coordinator for {group_id!r}.")

    def coordinator_id(self, group_id: str) -> int:
        """The node that coordinates ``group_id`` (the leader of its ``__consumer_offsets`` partition)."""
        return self._partition(group_id).leader_id

    def _partition(self, group_id: str):
        topic = self.broker.internal_topic(GROUP_METADATA_TOPIC)
        return topic.partitions[partition_for_key(group_id, len(topic.partitions))]

    def _write(self, group_id: str, entries: list[tuple[bytes, bytes | None]]) -> int:
        """Append records for a group to its ``__consumer_offsets`` partition (nothing while replaying them); the
        offset of the first (-1 when nothing was written)."""
        if self._replaying or not entries:
            return -1
        now = self.now()
        batch = encode_batch([{"key": k, "value": v, "timestamp": now} for k, v in entries])
        return self.broker.append_internal(self._partition(group_id), batch)[0]

    def _notify(self, pending: Pending | None, value: Any) -> None:
        if pending is not None and pending.value is None:
            pending.value = value
            self.broker.notify(pending)

    def _schedule(self, key: tuple, delay_ms: int, run) -> None:
        self.broker.timers.schedule(key, self.now() + delay_ms, run)

    def _unschedule(self, key: tuple) -> None:
        self.broker.timers.unschedule(key)

    def classic_group(self, group_id: str, *, create: bool = False) -> ClassicGroup | None:
        """The classic group ``group_id``; an empty group of the other kind is replaced when ``create``."""
        group = self.groups.get(group_id)
        if group is not None and group.kind != "classic":
            if create and group.is_empty():
                self._delete_group(group_id, write=True, keep_offsets=True)
                group = None
            else:
                raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a classic group.")
        if group is None and create:
            group = self.groups[group_id] = ClassicGroup(group_id, state_timestamp_ms=self.now())
        return group

    # -- JoinGroup -----------------------------------------------------------------------------------------------

    def join(self, body, version: int, client_id: str, client_host: str) -> dict | Pending:
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
        if existing is not None and existing.kind != "classic" and not existing.is_empty():
            # A classic member joining a KIP-848 group (Kafka's online migration path).
            return self.consumer.classic_join(existing, body, version, client_id, client_host)
        if existing is None and member_id:
            return join_error(E.UNKNOWN_MEMBER_ID, member_id)
        created = existing is None or existing.kind != "classic"
        group = self.classic_group(group_id, create=True)
        assert group is not None                # create=True makes the group when there is none
        if group.state is ClassicState.DEAD:
            return join_error(E.COORDINATOR_NOT_AVAILABLE, member_id)
        if not group.supports(body.protocol_type, protocols):
            answer: dict | Pending = join_error(E.INCONSISTENT_GROUP_PROTOCOL, member_id)
        elif not member_id:
            answer = self._join_new_member(group, version, instance_id, client_id, client_host, session,
                                           rebalance_timeout, body.protocol_type, protocols)
        else:
            answer = self._join_known_member(group, member_id, instance_id, version, client_id, client_host,
                                             session, rebalance_timeout, body.protocol_type, protocols)
        if created:
            # Kafka keeps the group it made for an unknown member even when the join failed or only handed out a
            # member id: it writes the new group, Empty, and DescribeGroups and ListGroups show it from then on.
            self._write(group_id, [records.record(records.GROUP_METADATA, {"group": group_id}, {
                "protocol_type": "", "generation": 0, "protocol": None, "leader": None,
                "current_state_timestamp": group.state_timestamp_ms, "members": []},
                records.GROUP_METADATA_VALUE_VERSION)])
        return answer

    def _full(self, group: ClassicGroup) -> bool:
        return len(group.members) + len(group.pending_members) >= self.config["group.max.size"]

    def _join_new_member(self, group, version, instance_id, client_id, client_host, session, rebalance_timeout,
                         protocol_type, protocols):
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

    def _join_known_member(self, group, member_id, instance_id, version, client_id, client_host, session,
                           rebalance_timeout, protocol_type, protocols):
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

    def _replace_static_member(self, group, instance_id, old_id, new_id, version, session, rebalance_timeout,
                               protocols):
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

    def _member_error(self, group, member_id: str, instance_id: str | None) -> ErrorCode:
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

    def _update_member_and_rebalance(self, group, member, session, rebalance_timeout, protocols) -> Pending:
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

    def _join_answer(self, group: ClassicGroup, member: ClassicMember) -> dict:
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

    def heartbeat(self, body, version: int) -> ErrorCode:
        group = self.groups.get(body.group_id)
        if group is not None and group.kind == "consumer":
            return self.consumer.classic_heartbeat(group, body, version)
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
        if group is None or group.kind != "classic":
            raise KafkaError(E.UNKNOWN_MEMBER_ID, f"Group {group_id} not found.")
        return group

    # -- SyncGroup -----------------------------------------------------------------------------------------------

    def sync(self, body, version: int) -> dict | Pending:
        group = self.groups.get(body.group_id)
        if group is not None and group.kind == "consumer":
            return self.consumer.classic_sync(group, body, version)
        if group is None or group.kind != "classic":
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

    def _sync_answer(self, group: ClassicGroup, member: ClassicMember) -> dict:
        return {"throttle_time_ms": 0, "error_code": E.NONE, "protocol_type": group.protocol_type,
                "protocol_name": group.protocol, "assignment": member.assignment}

    # -- LeaveGroup ----------------------------------------------------------------------------------------------

    def leave(self, group_id: str, identities: list[tuple[str, str | None, str | None]]) -> list[ErrorCode]:
        """One error per (member id, group instance id, reason); raises for the whole request."""
        consumer_group = self.groups.get(group_id)
        if consumer_group is not None and consumer_group.kind == "consumer":
            return self.consumer.classic_leave(consumer_group, identities)
        group = self._existing_classic(group_id)
        if group.state is ClassicState.DEAD:
            raise KafkaError(E.COORDINATOR_NOT_AVAILABLE)
        errors = []
        for member_id, instance_id, reason in identities:
            errors.append(self._leave_one(group, member_id or "", instance_id, reason))
        return errors

    def _leave_one(self, group: ClassicGroup, member_id: str, instance_id: str | None, reason: str | None):
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
                        version: int, transactional: bool = False):
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
        if group.kind != "classic":
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

    def commit(self, group_id: str, entries: Iterable[tuple[str, int, int, int, str | None]],
               expire_timestamp_ms: int | None) -> None:
        """Store offsets (topic, partition, offset, leader epoch, metadata) validated by the caller."""
        now = self.now()
        offsets = self.offsets.setdefault(group_id, GroupOffsets())
        stored = [(topic, partition, CommittedOffset(offset, leader_epoch, metadata or "", now, expire_timestamp_ms))
                  for topic, partition, offset, leader_epoch, metadata in entries]
        base = self._write(group_id, [_offset_record(group_id, t, p, c) for t, p, c in stored])
        for n, (topic, partition, committed) in enumerate(stored):
            offsets.put(topic, partition, replace(committed, record_offset=base + n if base >= 0 else -1))

    def txn_commit(self, group_id: str, producer_id: int, epoch: int,
                   entries: Iterable[tuple[str, int, int, int, str | None]]) -> None:
        """TxnOffsetCommit: offsets written as a transactional batch of the producer into the group's partition,
        pending until the transaction's marker there commits them (or aborts them away)."""
        now = self.now()
        stored = [(topic, partition, CommittedOffset(offset, leader_epoch, metadata or "", now, None))
                  for topic, partition, offset, leader_epoch, metadata in entries]
        if not stored:
            return
        batch = encode_batch([{"key": k, "value": v, "timestamp": now}
                              for k, v in (_offset_record(group_id, t, p, c) for t, p, c in stored)],
                             producer_id=producer_id, producer_epoch=epoch, transactional=True)
        partition = self._partition(group_id)
        base, last = self.broker.append_internal(partition, batch)
        partition.producers.record(producer_id, epoch, BatchMetadata(-1, -1, base, last, now), transactional=True)
        for n, (topic, partition_index, committed) in enumerate(stored):
            self._pend(group_id, producer_id, topic, partition_index, replace(committed, record_offset=base + n))

    def _pend(self, group_id: str, producer_id: int, topic: str, partition: int, committed: CommittedOffset) -> None:
        self.pending_txn.setdefault(producer_id, {}).setdefault(group_id, GroupOffsets()).put(topic, partition,
                                                                                              committed)

    def transaction_ended(self, partition_index: int, producer_id: int, commit: bool) -> None:
        """A COMMIT or ABORT marker reached ``__consumer_offsets`` partition ``partition_index``: the producer's
        pending offsets of the groups there become committed, or are dropped."""
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
                if group_id not in self.groups and not self._replaying:
                    self.groups[group_id] = ClassicGroup(group_id, state_timestamp_ms=self.now())
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
        if group is not None and group.kind == "consumer":
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
        group = self.groups.get(group_id)
        if group is None or group.state_name == "Dead":
            raise KafkaError(E.GROUP_ID_NOT_FOUND)
        if group.kind == "classic" and group.state is not ClassicState.EMPTY and not group.uses_consumer_protocol():
            raise KafkaError(E.NON_EMPTY_GROUP)
        offsets = self.offsets.get(group_id)
        results, written = [], []
        for topic, partitions in topics:
            subscribed = group.is_subscribed_to(topic)
            for partition in partitions:
                if subscribed:
                    results.append((topic, partition, E.GROUP_SUBSCRIBED_TO_TOPIC))
                    continue
                if offsets is not None and offsets.remove(topic, partition):
                    written.append(records.record(records.OFFSET_COMMIT, _offset_key(group_id, topic, partition),
                                                  None))
                results.append((topic, partition, E.NONE))
        self._write(group_id, written)
        return results

    # -- groups: describe, list, delete --------------------------------------------------------------------------

    def list_groups(self, states: set[str] | None, types: set[str] | None) -> list[Any]:
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
        self._delete_group(group_id, write=True)
        return E.NONE

    def _delete_group(self, group_id: str, *, write: bool, keep_offsets: bool = False) -> None:
        """Remove a group and its offsets, with tombstones for every record it had. ``keep_offsets``: an empty
        group of one kind gives way to the other kind, and its committed offsets stay (Kafka converts it)."""
        group = self.groups.pop(group_id, None)
        offsets = None if keep_offsets else self.offsets.pop(group_id, None)
        tombstones = [records.record(records.OFFSET_COMMIT, _offset_key(group_id, t, p), None)
                      for t, p, _ in (offsets.items() if offsets else [])]
        if group is not None:
            if group.kind == "classic":
                if group.state is not ClassicState.DEAD:
                    group.transition(Event.REMOVED, self.now())
                tombstones.append(records.record(records.GROUP_METADATA, {"group": group_id}, None))
                self._unschedule(("join", group_id))
                self._unschedule(("pending-sync", group_id))
            else:
                tombstones.extend(group.tombstones())
                group.removed(self)
        if write:
            self._write(group_id, tombstones)

    # -- KIP-211: the offsets cleanup ----------------------------------------------------------------------------

    def expire_offsets(self, now_ms: int) -> None:
        """The periodic cleanup (``offsets.retention.check.interval.ms``): expired offsets go, with tombstones;
        an empty group left without offsets goes too (Kafka's cleanupGroupMetadata)."""
        retention_ms = self.config["offsets.retention.minutes"] * 60_000
        removed_groups = 0
        removed_offsets = 0
        for group_id in list(self.groups.keys() | self.offsets.keys()):
            group = self.groups.get(group_id)
            offsets = self.offsets.get(group_id)
            all_gone = True
            if offsets:
                base = group.offsets_expire_by() if group is not None else (lambda o: o.commit_timestamp_ms)
                if base is None:
                    continue
                subscribed = group.is_subscribed_to if group is not None else (lambda topic: False)
                expired = offsets.expired(base, subscribed, now_ms, retention_ms)
                tombstones = []
                for topic, partition in expired:
                    offsets.remove(topic, partition)
                    tombstones.append(records.record(records.OFFSET_COMMIT, _offset_key(group_id, topic, partition),
                                                     None))
                removed_offsets += len(expired)
                self._write(group_id, tombstones)
                all_gone = not offsets
                if all_gone:
                    del self.offsets[group_id]
            if all_gone and group is not None and group.is_empty():
                self._delete_group(group_id, write=True)
                removed_groups += 1
        if removed_offsets or removed_groups:
            log.info("offsets cleanup: %d offset(s) expired, %d group(s) removed", removed_offsets, removed_groups)

    # -- records -------------------------------------------------------------------------------------------------

    def _write_group(self, group: ClassicGroup) -> None:
        value = {
            "protocol_type": group.protocol_type or "", "generation": group.generation,
            "protocol": group.protocol, "leader": group.leader_id if group.members else None,
            "current_state_timestamp": group.state_timestamp_ms,
            "members": [{"member_id": m.member_id, "group_instance_id": m.group_instance_id,
                         "client_id": m.client_id, "client_host": m.client_host,
                         "rebalance_timeout": m.rebalance_timeout_ms, "session_timeout": m.session_timeout_ms,
                         "subscription": m.metadata(group.protocol), "assignment": m.assignment}
                        for m in group.members.values()]}
        self._write(group.group_id, [records.record(records.GROUP_METADATA, {"group": group.group_id}, value,
                                                    records.GROUP_METADATA_VALUE_VERSION)])

    def write_records(self, group_id: str, entries: list[tuple[bytes, bytes | None]]) -> None:
        """For the KIP-848 groups: their records go through the same write path."""
        self._write(group_id, entries)

    def replay(self) -> None:
        """Rebuild groups and offsets from ``__consumer_offsets`` (a restart with a data dir)."""
        topic = self.broker.cluster.topics.get(GROUP_METADATA_TOPIC)
        if topic is None:
            return
        self._replaying = True
        loaded: dict[str, Any] = {}
        try:
            for partition in topic.partitions:
                for stored in partition.log.batches():
                    try:
                        batches = decode_batches(stored.data)
                    except CorruptRecordError as exc:
                        log.warning("__consumer_offsets-%d: unreadable batch at %d skipped: %s", partition.index,
                                    stored.base_offset, exc)
                        continue
                    for batch in batches:
                        if batch.is_control:
                            self._replay_marker(partition.index, batch)
                            continue
                        for rec in batch.records:
                            try:
                                kind, key, value = records.decode(rec.key, rec.value)
                            except (records.UnknownRecord, DecodeError, ValueError) as exc:
                                log.warning("__consumer_offsets-%d offset %d: record skipped: %s",
                                            partition.index, rec.offset, exc)
                                continue
                            if batch.is_transactional and kind == records.OFFSET_COMMIT and value is not None:
                                self._pend(key.group, batch.producer_id, key.topic, key.partition, CommittedOffset(
                                    value.offset, getattr(value, "leader_epoch", -1), value.metadata,
                                    value.commit_timestamp, None, rec.offset))
                                continue
                            self._apply(kind, key, value, loaded, rec.offset)
        finally:
            self._replaying = False
        for group in loaded.values():
            group_id = group.group_id
            if group.kind == "classic":
                if group.members:
                    group.state = ClassicState.STABLE
                    group.compute_subscribed_topics(parse_subscription)
                    for member in group.members.values():
                        self._heartbeat_ok(group, member)
                self.groups[group_id] = group
            else:
                group.loaded(self)
                self.groups[group_id] = group
        for group_id in self.offsets:
            if group_id not in self.groups:     # standalone commits: a group with no protocol type
                self.groups[group_id] = ClassicGroup(group_id, state_timestamp_ms=self.now())
        if self.groups:
            log.info("replayed %d group(s) and the offsets of %d from %s", len(self.groups), len(self.offsets),
                     GROUP_METADATA_TOPIC)

    def topic_deleted(self, name: str) -> None:
        """A topic was deleted. ``__consumer_offsets`` itself takes every group and offset with it (Kafka's
        coordinator resigns its partitions; FindCoordinator creates the topic again, empty); another topic's
        committed offsets are deleted with tombstones, as Kafka's onPartitionsDeleted does."""
        if name == GROUP_METADATA_TOPIC:
            self._unload()
            return
        for group_id, offsets in self.offsets.items():
            gone = [(topic, partition) for topic, partition, _ in offsets.items() if topic == name]
            for topic, partition in gone:
                offsets.remove(topic, partition)
            self._write(group_id, [records.record(records.OFFSET_COMMIT, _offset_key(group_id, topic, partition),
                                                  None) for topic, partition in gone])

    def _unload(self) -> None:
        """Forget every group (their timers, their parked JoinGroup and SyncGroup answered NOT_COORDINATOR) and
        every offset: what a restart on the deleted log would find."""
        for group in self.groups.values():
            if group.kind == "classic":
                for member in group.members.values():
                    self._notify(member.awaiting_join, join_error(E.NOT_COORDINATOR, member.member_id))
                    self._notify(member.awaiting_sync, sync_error(E.NOT_COORDINATOR))
        held = set(self.groups)
        self.broker.timers.unschedule_where(lambda key: isinstance(key, tuple) and len(key) > 1 and key[1] in held)
        if self.groups or self.offsets:
            log.warning("%s deleted: %d group(s) and the offsets of %d forgotten", GROUP_METADATA_TOPIC,
                        len(self.groups), len(self.offsets))
        self.groups.clear()
        self.offsets.clear()
        self.pending_txn.clear()

    def _replay_marker(self, partition_index: int, batch) -> None:
        for rec in batch.records:
            try:
                kind, _ = decode_control(rec.key, rec.value)
            except CorruptRecordError:
                continue
            if kind in ("COMMIT", "ABORT"):
                self.transaction_ended(partition_index, batch.producer_id, kind == "COMMIT")

    def _apply(self, kind: int, key, value, loaded: dict[str, Any], record_offset: int = -1) -> None:
        if kind in (records.OFFSET_COMMIT, records.OFFSET_COMMIT_LEGACY):
            if value is None:
                offsets = self.offsets.get(key.group)
                if offsets is not None:
                    offsets.remove(key.topic, key.partition)
                    if not offsets:
                        del self.offsets[key.group]
                return
            expire = getattr(value, "expire_timestamp", -1)
            committed = CommittedOffset(value.offset, getattr(value, "leader_epoch", -1), value.metadata,
                                        value.commit_timestamp, expire if expire >= 0 else None, record_offset)
            self.offsets.setdefault(key.group, GroupOffsets()).put(key.topic, key.partition, committed)
        elif kind == records.GROUP_METADATA:
            if value is None:
                loaded.pop(key.group, None)
                return
            group = ClassicGroup(key.group, generation=value.generation,
                                 protocol_type=value.protocol_type or None, protocol=value.protocol,
                                 leader_id=value.leader, state_timestamp_ms=getattr(value, "current_state_timestamp",
                                                                                    -1))
            for m in value.members:
                member = ClassicMember(m.member_id, getattr(m, "group_instance_id", None), m.client_id,
                                       m.client_host, getattr(m, "rebalance_timeout", m.session_timeout),
                                       m.session_timeout, value.protocol_type, [(value.protocol, bytes(m.subscription))],
                                       bytes(m.assignment))
                group.add_member(member)
            group.leader_id = value.leader if value.leader in group.members else group.leader_id
            loaded[key.group] = group
        else:
            replay_record(kind, key, value, loaded, self)


def _offset_key(group_id: str, topic: str, partition: int) -> dict:
    return {"group": group_id, "topic": topic, "partition": partition}


def _offset_record(group_id: str, topic: str, partition: int, committed: CommittedOffset):
    value = {"offset": committed.offset, "leader_epoch": committed.leader_epoch, "metadata": committed.metadata,
             "commit_timestamp": committed.commit_timestamp_ms}
    if committed.expire_timestamp_ms is not None:
        value["expire_timestamp"] = committed.expire_timestamp_ms
        version = records.OFFSET_COMMIT_VALUE_EXPIRING_VERSION
    else:
        version = records.OFFSET_COMMIT_VALUE_VERSION
    return records.record(records.OFFSET_COMMIT, _offset_key(group_id, topic, partition), value, version)


def join_error(code: ErrorCode, member_id: str) -> dict:
    return {"throttle_time_ms": 0, "error_code": code, "generation_id": -1, "protocol_type": None,
            "protocol_name": None, "leader": "", "skip_assignment": False, "member_id": member_id, "members": []}


def sync_error(code: ErrorCode) -> dict:
    return {"throttle_time_ms": 0, "error_code": code, "protocol_type": None, "protocol_name": None,
            "assignment": b""}
