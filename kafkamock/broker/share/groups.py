"""Share-group membership (KIP-932's ShareGroupHeartbeat and ShareGroupDescribe), as Kafka 4.3's GroupMetadataManager
runs it, on the group coordinator's timers, durable in ``__consumer_offsets``.

A new group starts at group epoch 1 with a target of epoch 1 (Kafka's ModernGroup and its initial
TargetAssignmentMetadata). A heartbeat updates its member; a change of subscription or of the subscribed topics'
metadata (a topic created, deleted or grown: the metadata hash) bumps the group epoch. Partitions are assigned only
once the group's share state for them is *initialized*: a heartbeat subscribing to topics not yet initialized marks
them initializing and starts their initialization (Kafka's InitializeShareGroupState through the persister, done here
once the heartbeat is answered, which then marks them initialized), and a later heartbeat that finds initialized
partitions missing from the target assignment bumps the epoch again. An initialization that never completed (a crash
in between) is retried after ``group.share.initialize.retry.interval.ms``. A new target assignment is computed when
the group epoch is ahead of it, at most once per ``share.assignment.interval.ms`` (the group config, else
``group.share.assignment.interval.ms``), by the ``simple`` assignor; each member takes its target and the target's
epoch at its next heartbeat (there is nothing to revoke: share partitions are not owned). The previous member epoch is
still accepted (a lost answer). A member is fenced after ``share.session.timeout.ms`` without a heartbeat; a leave or
a fence bumps the group epoch, and does not touch the member's share sessions (their own connection or last request
ends them). ``group.share.max.size`` bounds the group. The groups live in the coordinator's table beside classic and
KIP-848 groups, so ListGroups (type ``share``) and DeleteGroups see them.

One state path, as for KIP-848 groups (``groups/consumer.py``): every change is one of Kafka's share group records in
``__consumer_offsets`` (types 10-15: ShareGroupMemberMetadata, ShareGroupMetadata, ShareGroupTargetAssignmentMetadata,
ShareGroupTargetAssignmentMember, ShareGroupCurrentMemberAssignment, ShareGroupStatePartitionMetadata). An operation
computes on a copy of the group (``ShareGroup.copy``) and only produces records; the coordinator appends them and
replays each through ``ShareGroups.replay``, the function loading the log at a restart runs. A heartbeat that changes
nothing writes nothing. After a restart the groups come back with their epochs, targets and members, and every
member's session timer starts again (Kafka's onLoaded): a member that does not come back is fenced when it runs out.
A share group never expires with the offsets cleanup (Kafka's ShareGroup.shouldExpire); DeleteGroups first moves its
initialized topics to *deleting* and has the share coordinator forget them, then writes its tombstones.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.groups import records
from kafkamock.broker.groups.assignors import SHARE_ASSIGNOR
from kafkamock.broker.groups.consumer import metadata_hash, partitions_in, partitions_out
from kafkamock.codec.messages import ShareGroupDescribeResponse, ShareGroupHeartbeatResponse

if TYPE_CHECKING:
    from kafkamock.broker.config import BrokerConfig
    from kafkamock.broker.groups.coordinator import GroupCoordinator
    from kafkamock.broker.groups.records import GroupRecord
    from kafkamock.broker.services import CoordinatorServices
    from kafkamock.codec import messages

NOT_ASKED = -(2**31)

log = logging.getLogger("kafkamock.groups")
E = ErrorCode
LEAVE_EPOCH = -1
INITIAL_EPOCH = 1                  # a new group's epoch and target epoch (ModernGroup, TargetAssignmentMetadata.INITIAL)
STABLE = 0                         # MemberState.STABLE's record value: a share member is never in another state
UNKNOWN_TOPIC_NAME = "<UNKNOWN>"   # the name Kafka's attachTopicName writes for a topic it cannot find
Partitions = dict[uuid.UUID, frozenset[int]]


class Initializing(NamedTuple):
    """Partitions whose share state is being initialized, and since when (the replay's time, as Kafka's
    InitMapValue: an initialization older than the retry interval is started again)."""

    partitions: frozenset[int]
    since_ms: int


@dataclass(eq=False)
class ShareMember:
    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = 0
    client_id: str = ""
    client_host: str = ""
    rack_id: str | None = None
    subscribed_topic_names: list[str] = field(default_factory=list)     # a set in Kafka: kept sorted
    assigned: Partitions = field(default_factory=dict)

    def subscription(self) -> tuple[object, ...]:
        """What the member record holds (a change of any of it is written)."""
        return self.rack_id, self.client_id, self.client_host, tuple(self.subscribed_topic_names)

    def progress(self) -> tuple[int, int, Partitions]:
        """What the current-assignment record holds."""
        return self.member_epoch, self.previous_member_epoch, self.assigned

    def copy(self) -> ShareMember:
        return ShareMember(self.member_id, self.member_epoch, self.previous_member_epoch, self.client_id,
                           self.client_host, self.rack_id, list(self.subscribed_topic_names), dict(self.assigned))


@dataclass(eq=False)
class ShareGroup:
    group_id: str
    group_epoch: int = INITIAL_EPOCH
    assignment_epoch: int = INITIAL_EPOCH
    assignment_timestamp: int = 0
    metadata_hash: int = 0
    members: dict[str, ShareMember] = field(default_factory=dict)
    target: dict[str, Partitions] = field(default_factory=dict)
    # ShareGroupStatePartitionMetadata: the share-partitions whose state is initialized (they may be assigned),
    # being initialized, and being deleted (whole topics).
    initialized: Partitions = field(default_factory=dict)
    initializing: dict[uuid.UUID, Initializing] = field(default_factory=dict)
    deleting: frozenset[uuid.UUID] = frozenset()
    dead: bool = False

    kind = "share"
    protocol_type = "share"

    def copy(self) -> ShareGroup:
        """A scratch copy an operation computes on (it replaces members, never changes them in place): the live
        group changes only when its records are replayed."""
        return ShareGroup(self.group_id, self.group_epoch, self.assignment_epoch, self.assignment_timestamp,
                          self.metadata_hash, dict(self.members), dict(self.target), dict(self.initialized),
                          dict(self.initializing), self.deleting, self.dead)

    def is_empty(self) -> bool:
        return not self.members

    @property
    def state_name(self) -> str:
        return "Dead" if self.dead else ("Stable" if self.members else "Empty")

    def subscribed_topics(self) -> set[str]:
        return {t for m in self.members.values() for t in m.subscribed_topic_names}

    def is_subscribed_to(self, topic: str) -> bool:
        return topic in self.subscribed_topics()

    def has_share_state(self) -> bool:
        return bool(self.initialized or self.initializing or self.deleting)

    def offsets_expire_by(self) -> None:
        """Share groups commit no offsets through OffsetCommit: KIP-211's cleanup has nothing to do here."""
        return None

    def validate_commit(self, member_id: str, instance_id: str | None, epoch: int, version: int,
                        transactional: bool) -> None:
        raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Group {self.group_id} is a share group: it commits no offsets.")

    def validate_offset_fetch(self, member_id: str, epoch: int) -> None:
        raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Group {self.group_id} is a share group.")

    # -- records (Kafka's GroupCoordinatorRecordHelpers for share groups) ----------------------------------------

    def _member_key(self, member_id: str) -> dict[str, Any]:
        return {"group_id": self.group_id, "member_id": member_id}

    def group_record(self) -> GroupRecord:
        return records.record(records.SHARE_GROUP_METADATA, {"group_id": self.group_id},
                              {"epoch": self.group_epoch, "metadata_hash": self.metadata_hash})

    def member_record(self, member: ShareMember) -> GroupRecord:
        return records.record(records.SHARE_GROUP_MEMBER_METADATA, self._member_key(member.member_id), {
            "rack_id": member.rack_id, "client_id": member.client_id, "client_host": member.client_host,
            "subscribed_topic_names": sorted(member.subscribed_topic_names)})

    def assignment_record(self, member: ShareMember) -> GroupRecord:
        return records.record(records.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT, self._member_key(member.member_id), {
            "member_epoch": member.member_epoch, "previous_member_epoch": member.previous_member_epoch,
            "state": STABLE, "assigned_partitions": partitions_out(member.assigned)})

    def target_member_record(self, member_id: str) -> GroupRecord:
        return records.record(records.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER, self._member_key(member_id),
                              {"topic_partitions": partitions_out(self.target.get(member_id, {}))})

    def target_metadata_record(self) -> GroupRecord:
        return records.record(records.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA, {"group_id": self.group_id},
                              {"assignment_epoch": self.assignment_epoch,
                               "assignment_timestamp": self.assignment_timestamp})

    def state_record(self, names: Mapping[uuid.UUID, str]) -> GroupRecord:
        """ShareGroupStatePartitionMetadata: the three sets as they are now (``names``: topic id -> name)."""
        def topics(partitions: Mapping[uuid.UUID, frozenset[int]]) -> list[dict[str, Any]]:
            return [{"topic_id": t, "topic_name": names.get(t, UNKNOWN_TOPIC_NAME), "partitions": sorted(ps)}
                    for t, ps in sorted(partitions.items(), key=lambda i: str(i[0]))]
        return records.record(records.SHARE_GROUP_STATE_PARTITION_METADATA, {"group_id": self.group_id}, {
            "initializing_topics": topics({t: i.partitions for t, i in self.initializing.items()}),
            "initialized_topics": topics(self.initialized),
            "deleting_topics": [{"topic_id": t, "topic_name": names.get(t, UNKNOWN_TOPIC_NAME)}
                                for t in sorted(self.deleting, key=str)]})

    def member_tombstones(self, member_id: str) -> list[GroupRecord]:
        """A member leaving, in Kafka's order (shareGroupFenceMember)."""
        key = self._member_key(member_id)
        return [records.record(records.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT, key, None),
                records.record(records.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER, key, None),
                records.record(records.SHARE_GROUP_MEMBER_METADATA, key, None)]

    def tombstones(self) -> list[GroupRecord]:
        """The group deleted, in Kafka's order (ShareGroup.createGroupTombstoneRecords)."""
        key = {"group_id": self.group_id}
        members = list(self.members)
        targets = members + [m for m in self.target if m not in self.members]
        out = [records.record(records.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT, self._member_key(m), None)
               for m in members]
        out.extend(records.record(records.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER, self._member_key(m), None)
                   for m in targets)
        out.append(records.record(records.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA, key, None))
        out.extend(records.record(records.SHARE_GROUP_MEMBER_METADATA, self._member_key(m), None) for m in members)
        out.append(records.record(records.SHARE_GROUP_STATE_PARTITION_METADATA, key, None))
        out.append(records.record(records.SHARE_GROUP_METADATA, key, None))
        return out

    # -- what the coordinator calls when the group leaves the table or the log is loaded -------------------------

    def removed(self, coordinator: GroupCoordinator) -> None:
        """Its tombstone was replayed: a late timer or request finds it dead. (The share-partitions' state is the
        deleting operation's business, as Kafka's persister call is, not the replay's.)"""
        self.dead = True
        for member_id in self.members:
            coordinator._unschedule(("share-session", self.group_id, member_id))

    def loaded(self, coordinator: GroupCoordinator) -> None:
        """After loading the log: every member's session starts again (Kafka's onLoaded); a member that does not
        heartbeat again is fenced when it runs out."""
        for member_id in self.members:
            coordinator.share.session_ok(self.group_id, member_id)


def _plain(partitions: Mapping[uuid.UUID, Iterable[int]]) -> Partitions:
    return {t: frozenset(ps) for t, ps in partitions.items() if ps}


def _union(a: Mapping[uuid.UUID, frozenset[int]], b: Mapping[uuid.UUID, frozenset[int]]) -> Partitions:
    out = dict(a)
    for topic_id, partitions in b.items():
        out[topic_id] = out.get(topic_id, frozenset()) | partitions
    return out


def can_compute_assignment(timestamp_ms: int, interval_ms: int, now_ms: int) -> bool:
    """GroupMetadataManager.canComputeNextTargetAssignment."""
    return timestamp_ms == 0 or interval_ms == 0 or now_ms >= timestamp_ms + interval_ms or now_ms < timestamp_ms


class ShareGroups:
    """The share half of the coordinator: ``heartbeat`` and ``describe``, the share-state bookkeeping the share
    admin APIs change, and ``replay`` of the share group records."""

    def __init__(self, coordinator: GroupCoordinator) -> None:
        self.coordinator = coordinator

    @property
    def config(self) -> BrokerConfig:
        return self.coordinator.config

    @property
    def services(self) -> CoordinatorServices:
        return self.coordinator.services

    def live(self, group_id: str) -> ShareGroup | None:
        """The share group the coordinator holds as ``group_id`` (None when there is none, or another kind)."""
        group = self.coordinator.groups.get(group_id)
        return group if isinstance(group, ShareGroup) and not group.dead else None

    def _write(self, group_id: str, written: list[GroupRecord]) -> ShareGroup | None:
        """Append and replay an operation's records (nothing when there are none); the group as they left it."""
        self.coordinator.write_records(group_id, written)
        return self.live(group_id)

    def _names(self) -> dict[uuid.UUID, str]:
        return {topic_id: topic.name for topic_id, topic in self.services.metadata.topics_by_id.items()}

    # -- ShareGroupHeartbeat --------------------------------------------------------------------------------------

    def heartbeat(self, body: messages.ShareGroupHeartbeatRequest, client_id: str, client_host: str
                  ) -> ShareGroupHeartbeatResponse:
        """Join (epoch 0), heartbeat or leave (-1). Computes on a copy of the group and produces records (Kafka's
        shareGroupHeartbeat: the member, the group epoch, the target, the member's assignment, the partitions to
        initialize); the answer is read from the group their replay left."""
        group_id, member_id, epoch = body.group_id, body.member_id or "", body.member_epoch
        self._validate(body, group_id, member_id, epoch)
        if epoch == LEAVE_EPOCH:
            return self._leave(group_id, member_id)
        live = self._group(group_id, create=epoch == 0)
        limit = self.config["group.share.max.size"]
        if len(live.members) >= limit and member_id not in live.members:
            raise KafkaError(E.GROUP_MAX_SIZE_REACHED, f"The share group has reached its maximum capacity of {limit} "
                                                       "members.")
        old = live.members.get(member_id)
        if old is None:
            if epoch != 0:
                raise KafkaError(E.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group_id}.")
        elif epoch > old.member_epoch:
            raise KafkaError(E.FENCED_MEMBER_EPOCH, f"The share group member has a greater member epoch ({epoch}) than "
                                                    f"the one known by the group coordinator ({old.member_epoch}). "
                                                    "The member must abandon all its partitions and rejoin.")
        elif epoch != 0 and epoch < old.member_epoch and epoch != old.previous_member_epoch:
            raise KafkaError(E.FENCED_MEMBER_EPOCH, f"The share group member has a smaller member epoch ({epoch}) than "
                                                    f"the one known by the group coordinator ({old.member_epoch}), "
                                                    "and it does not match the previous member epoch "
                                                    f"({old.previous_member_epoch}). The member must abandon all "
                                                    "its partitions and rejoin.")
        group = live.copy()
        member = old.copy() if old is not None else ShareMember(member_id)
        if body.rack_id is not None:
            member.rack_id = body.rack_id
        member.client_id, member.client_host = client_id, client_host
        if body.subscribed_topic_names is not None:
            member.subscribed_topic_names = sorted(set(body.subscribed_topic_names))
        written: list[GroupRecord] = []
        # 1. The member, and the group epoch when its subscription, the initialized partitions the target lacks, or
        # the subscribed topics' metadata say so.
        bump = False
        if old is None or member.subscription() != old.subscription():
            written.append(group.member_record(member))
            bump = member.subscribed_topic_names != (old.subscribed_topic_names if old is not None else [])
        group.members[member_id] = member
        subscribed = group.subscribed_topics()     # the live group's too unless this member's subscription changed
        if not bump and live.assignment_epoch >= live.group_epoch:
            bump = self._initialized_assignment_pending(live, subscribed)
        new_hash = metadata_hash(self.services.metadata.topics, subscribed)
        if bump or new_hash != group.metadata_hash:
            group.group_epoch += 1
            group.metadata_hash = new_hash
            bump = True
            written.append(group.group_record())
        # 2. The target, when the group epoch is ahead of it and the interval allows.
        self._update_target(group, written)
        # 3. The member takes its target (filtered by its subscription) and the target's epoch.
        target_epoch = group.assignment_epoch
        if bump or member.member_epoch != target_epoch:
            if member.member_epoch != target_epoch:
                member.previous_member_epoch = member.member_epoch
                member.member_epoch = target_epoch
            own = self._topic_ids(member.subscribed_topic_names)
            member.assigned = {t: ps for t, ps in group.target.get(member_id, {}).items() if t in own}
        if old is None or member.progress() != old.progress():
            written.append(group.assignment_record(member))
        # 4. Subscribed partitions without share state start initializing (maybeCreateInitializeShareGroupState-
        # Request: their record is the heartbeat's; the persister's answer writes the next).
        initialize = self._to_initialize(group, subscribed)
        if initialize:
            self._mark_initializing(group, initialize)
            written.append(group.state_record(self._names()))
        held = old.assigned if old is not None else None    # the replay changes the live member in place
        after = self._write(group_id, written)
        assert after is not None                   # a member's records or the group's existence keep it
        member = after.members[member_id]
        self.session_ok(group_id, member_id)
        full = epoch == 0 or body.subscribed_topic_names is not None
        changed = held is None or member.assigned != held
        answer = self._answer(group_id, member_id, member.member_epoch, member.assigned if full or changed else None)
        if initialize:
            self.finish_initializing(group_id, initialize)
        return answer

    def _validate(self, body: messages.ShareGroupHeartbeatRequest, group_id: str, member_id: str, epoch: int
                  ) -> None:
        """Kafka's throwIfShareGroupHeartbeatRequestIsInvalid."""
        if not member_id:
            raise KafkaError(E.INVALID_REQUEST, "MemberId can't be empty.")
        if not group_id:
            raise KafkaError(E.INVALID_REQUEST, "GroupId can't be empty.")
        if body.rack_id is not None and not body.rack_id:
            raise KafkaError(E.INVALID_REQUEST, "RackId can't be empty.")
        if epoch == 0 and not body.subscribed_topic_names:
            raise KafkaError(E.INVALID_REQUEST, "SubscribedTopicNames must be set in first request.")
        if epoch < LEAVE_EPOCH:
            raise KafkaError(E.INVALID_REQUEST, "MemberEpoch is invalid.")

    def _group(self, group_id: str, *, create: bool) -> ShareGroup:
        """getOrMaybeCreateShareGroup: a new group is not in the table; its records, replayed, put it there."""
        found = self.coordinator.groups.get(group_id)
        if found is not None and not isinstance(found, ShareGroup):
            raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group.")
        if found is None or found.dead:
            if not create:
                raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Share group {group_id} not found.")
            return ShareGroup(group_id)
        return found

    def group(self, group_id: str) -> ShareGroup:
        """An existing share group (GROUP_ID_NOT_FOUND in Kafka's words otherwise)."""
        group = self.coordinator.groups.get(group_id)
        if group is None or group.state_name == "Dead":
            raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
        if not isinstance(group, ShareGroup):
            raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group.")
        return group

    def empty_group(self, group_id: str, *, create: bool = True) -> ShareGroup | None:
        """The share group an offsets admin call may change: it must have no members (NON_EMPTY_GROUP). None when
        there is none yet and ``create``: the call's records make it."""
        found = self.coordinator.groups.get(group_id)
        if found is not None and not isinstance(found, ShareGroup):
            raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group.")
        group = self.live(group_id)
        if group is None:
            if not create:
                raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
            return None
        if group.members:
            raise KafkaError(E.NON_EMPTY_GROUP, f"The share group {group_id} has members.")
        return group

    # -- the target assignment ------------------------------------------------------------------------------------

    def _topic_ids(self, names: Iterable[str]) -> set[uuid.UUID]:
        topics = self.services.metadata.topics
        return {topics[n].topic_id for n in names if n in topics}

    def _initialized_assignment_pending(self, group: ShareGroup, topics: Iterable[str]) -> bool:
        """initializedAssignmentPending: initialized partitions of the subscribed ``topics`` the target does not
        cover."""
        if not group.members or not group.initialized:
            return False
        subscribed = self._topic_ids(topics)
        if not subscribed:
            return False
        for topic_id, partitions in group.initialized.items():
            if topic_id in subscribed:
                covered: set[int] = set()
                for target in group.target.values():
                    covered.update(target.get(topic_id, ()))
                if covered != partitions:
                    return True
        return False

    def _update_target(self, group: ShareGroup, written: list[GroupRecord]) -> None:
        """maybeUpdateTargetAssignment: a new target when the group epoch is ahead of it and the assignment interval
        allows, over the initialized partitions only. As Kafka's TargetAssignmentBuilder, a member's target record
        is written when its target changed, then the target's epoch and time."""
        now = self.coordinator.now()
        interval = self.coordinator.configs.value(group.group_id, "share.assignment.interval.ms")
        if group.assignment_epoch >= group.group_epoch or \
                not can_compute_assignment(group.assignment_timestamp, interval, now):
            return
        subscriptions = {m.member_id: frozenset(self._topic_ids(m.subscribed_topic_names))
                         for m in group.members.values()}
        wanted = set().union(*subscriptions.values()) if subscriptions else set()
        partitions = {t: ps for t, ps in group.initialized.items() if t in wanted}
        target = {m: _plain(ps) for m, ps in SHARE_ASSIGNOR.assign(subscriptions, partitions, group.target).items()}
        before = group.target
        group.target = {**before, **target}
        written.extend(group.target_member_record(m) for m in target if target[m] != _plain(before.get(m, {})))
        group.assignment_epoch, group.assignment_timestamp = group.group_epoch, now
        written.append(group.target_metadata_record())

    # -- share state: initializing, initialized, deleting (ShareGroupStatePartitionMetadata) -----------------------

    def _to_initialize(self, group: ShareGroup, subscribed: Iterable[str]) -> Partitions:
        """subscribedTopicsChangeMap: the ``subscribed`` topics' partitions neither initialized nor being
        initialized (since less than ``group.share.initialize.retry.interval.ms``)."""
        topics = self.services.metadata.topics
        have = group.initialized
        if group.initializing:
            now = self.coordinator.now()
            retry_ms = self.config["group.share.initialize.retry.interval.ms"]
            have = _union(have, {t: i.partitions for t, i in group.initializing.items()
                                 if now - i.since_ms < retry_ms})
        out: Partitions = {}
        for name in subscribed:
            topic = topics.get(name)
            if topic is None or name.startswith("__"):
                continue
            done = have.get(topic.topic_id, frozenset())
            if len(done) < len(topic.partitions):
                out[topic.topic_id] = frozenset(range(len(topic.partitions))) - done
        return out

    def _mark_initializing(self, group: ShareGroup, partitions: Partitions) -> None:
        """addInitializingTopicsRecords, on the scratch group: the partitions join those being initialized (now),
        and leave the topics being deleted."""
        now = self.coordinator.now()
        for topic_id, ps in partitions.items():
            current = group.initializing.get(topic_id)
            group.initializing[topic_id] = Initializing((current.partitions if current else frozenset()) | ps, now)
        group.deleting = group.deleting - partitions.keys()

    def begin_initializing(self, group_id: str, partitions: Partitions) -> None:
        """AlterShareGroupOffsets: the partitions are being initialized (the group is created by this record when
        there is none)."""
        if not partitions:
            return
        live = self.live(group_id)
        group = live.copy() if live is not None else ShareGroup(group_id)
        self._mark_initializing(group, partitions)
        self._write(group_id, [group.state_record(self._names())])

    def finish_initializing(self, group_id: str, partitions: Partitions) -> None:
        """initializeShareGroupState: the persister initialized ``partitions``; they are initialized (so they may
        be assigned) and no longer initializing."""
        live = self.live(group_id)
        done = _plain(partitions)
        if live is None or not done:
            return
        group = live.copy()
        group.initialized = _union(group.initialized, done)
        for topic_id, ps in done.items():
            current = group.initializing.pop(topic_id, None)
            if current is not None and current.partitions - ps:
                group.initializing[topic_id] = Initializing(current.partitions - ps, current.since_ms)
        self._write(group_id, [group.state_record(self._names())])

    def begin_deleting(self, group_id: str, topic_ids: Iterable[uuid.UUID]) -> None:
        """DeleteShareGroupOffsets (sharePartitionsEligibleForOffsetDeletion): the topics are no longer initialized,
        their state is being deleted."""
        live = self.live(group_id)
        ids = frozenset(topic_ids)
        if live is None or not ids:
            return
        group = live.copy()
        for topic_id in ids:
            group.initialized.pop(topic_id, None)
        group.deleting = group.deleting | ids
        self._write(group_id, [group.state_record(self._names())])

    def finish_deleting(self, group_id: str, topic_ids: Iterable[uuid.UUID]) -> None:
        """completeDeleteShareGroupOffsets: the persister deleted the topics' state."""
        live = self.live(group_id)
        ids = frozenset(topic_ids)
        if live is None or not ids & live.deleting:
            return
        group = live.copy()
        group.deleting = group.deleting - ids
        self._write(group_id, [group.state_record(self._names())])

    def delete_state(self, group_id: str) -> None:
        """DeleteGroups of a share group, before its tombstones (shareGroupBuildPartitionDeleteRequest, then the
        persister's deleteState): every initialized or initializing topic is being deleted, and the share
        coordinator forgets the group's share-partitions."""
        live = self.live(group_id)
        if live is not None and live.has_share_state():
            group = live.copy()
            existing = self.services.metadata.topics_by_id      # a topic already gone is no longer retried
            group.deleting = frozenset(t for t in group.deleting if t in existing) | group.initialized.keys() | \
                group.initializing.keys()
            group.initialized, group.initializing = {}, {}
            self._write(group_id, [group.state_record(self._names())])
        self.coordinator.share_group_deleted(group_id)

    def topic_deleted(self, topic_id: uuid.UUID) -> None:
        """maybeCleanupShareGroupState: a deleted topic leaves every share group's share-state bookkeeping."""
        for live in [g for g in self.coordinator.groups.values() if isinstance(g, ShareGroup) and not g.dead]:
            if topic_id in live.initialized or topic_id in live.initializing or topic_id in live.deleting:
                group = live.copy()
                group.initialized.pop(topic_id, None)
                group.initializing.pop(topic_id, None)
                group.deleting = group.deleting - {topic_id}
                self._write(group.group_id, [group.state_record(self._names())])

    # -- members leaving ------------------------------------------------------------------------------------------

    def _leave(self, group_id: str, member_id: str) -> ShareGroupHeartbeatResponse:
        """shareGroupLeave."""
        group = self.group(group_id)
        if member_id not in group.members:
            raise KafkaError(E.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group_id}.")
        log.info("share group %s: member %s left", group_id, member_id)
        self._fence(group, member_id)
        return ShareGroupHeartbeatResponse(throttle_time_ms=0, error_code=E.NONE, error_message=None,
                                           member_id=member_id, member_epoch=LEAVE_EPOCH, heartbeat_interval_ms=0,
                                           assignment=None)

    def _fence(self, live: ShareGroup, member_id: str) -> None:
        """shareGroupFenceMember: the member's tombstones, then the group epoch moves on with the metadata hash of
        the members left (the target is recomputed at the next heartbeat). Its share sessions stay: the connection
        they belong to, or their last request, ends them."""
        group = live.copy()
        del group.members[member_id]
        group.target.pop(member_id, None)
        written = group.member_tombstones(member_id)
        group.group_epoch += 1
        group.metadata_hash = metadata_hash(self.services.metadata.topics, group.subscribed_topics())
        written.append(group.group_record())
        self._write(group.group_id, written)
        self.coordinator._unschedule(("share-session", group.group_id, member_id))

    def session_ok(self, group_id: str, member_id: str) -> None:
        """(Re)start the member's session timer (scheduleShareGroupSessionTimeout). The timer names the group and
        member by id and looks the live group up when it fires."""
        self.coordinator._schedule(("share-session", group_id, member_id),
                                   self.coordinator.configs.value(group_id, "share.session.timeout.ms"),
                                   lambda: self._session_expired(group_id, member_id))

    def _session_expired(self, group_id: str, member_id: str) -> None:
        group = self.live(group_id)
        if group is not None and member_id in group.members:
            log.info("share group %s: member %s fenced: its session timed out", group_id, member_id)
            self._fence(group, member_id)

    def _answer(self, group_id: str, member_id: str, epoch: int, assignment: Partitions | None
                ) -> ShareGroupHeartbeatResponse:
        interval = self.coordinator.configs.value(group_id, "share.heartbeat.interval.ms")
        return ShareGroupHeartbeatResponse(
            throttle_time_ms=0, error_code=E.NONE, error_message=None, member_id=member_id, member_epoch=epoch,
            heartbeat_interval_ms=interval,
            assignment=None if assignment is None else ShareGroupHeartbeatResponse.Assignment(topic_partitions=[
                ShareGroupHeartbeatResponse.TopicPartitions(topic_id=t, partitions=sorted(ps))
                for t, ps in sorted(assignment.items(), key=str)]))

    # -- replay --------------------------------------------------------------------------------------------------

    def replay(self, kind: int, key: Any, value: Any) -> None:
        """Apply one share group record of ``__consumer_offsets`` (Kafka's GroupMetadataManager.replay of each share
        group record type), right after its append at run time and when the log is loaded alike. A value record
        makes the group when there is none (getOrMaybeCreatePersistedShareGroup); a tombstone for a group that is
        not there is ignored."""
        groups = self.coordinator.groups
        group_id = key.group_id
        found = groups.get(group_id)
        group = found if isinstance(found, ShareGroup) else None       # a group of another kind gives way
        if group is None:
            if value is None:
                return
            group = groups[group_id] = ShareGroup(group_id)
        member_id: str = getattr(key, "member_id", "")                # in the member records' keys (10, 13, 14)
        if kind == records.SHARE_GROUP_METADATA:
            if value is None:
                self.coordinator.drop_group(group_id)
                return
            group.group_epoch, group.metadata_hash = value.epoch, value.metadata_hash
        elif kind == records.SHARE_GROUP_MEMBER_METADATA:
            if value is None:
                group.members.pop(member_id, None)
                return
            member = group.members.setdefault(member_id, ShareMember(member_id))
            member.rack_id, member.client_id, member.client_host = value.rack_id, value.client_id, value.client_host
            member.subscribed_topic_names = sorted(set(value.subscribed_topic_names))
        elif kind == records.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT:
            existing = group.members.get(member_id)
            if value is None:
                if existing is not None:      # leaving: its member record's tombstone follows
                    existing.member_epoch = existing.previous_member_epoch = LEAVE_EPOCH
                    existing.assigned = {}
                return
            member = existing if existing is not None else group.members.setdefault(member_id, ShareMember(member_id))
            member.member_epoch, member.previous_member_epoch = value.member_epoch, value.previous_member_epoch
            member.assigned = partitions_in(value.assigned_partitions)
        elif kind == records.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER:
            if value is None:
                group.target.pop(member_id, None)
            else:
                group.target[member_id] = partitions_in(value.topic_partitions)
        elif kind == records.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA:
            if value is None:
                group.assignment_epoch = -1
            else:
                group.assignment_epoch = value.assignment_epoch
                group.assignment_timestamp = max(0, getattr(value, "assignment_timestamp", 0))
        elif kind == records.SHARE_GROUP_STATE_PARTITION_METADATA:
            if value is None:
                group.initialized, group.initializing, group.deleting = {}, {}, frozenset()
                return
            now = self.coordinator.now()
            group.initializing = {t: Initializing(ps, now)
                                  for t, ps in partitions_in(value.initializing_topics).items()}
            group.initialized = partitions_in(value.initialized_topics)
            group.deleting = frozenset(t.topic_id for t in value.deleting_topics)

    # -- ShareGroupDescribe ---------------------------------------------------------------------------------------

    def describe(self, group_id: str) -> ShareGroupDescribeResponse.DescribedGroup:
        """One ShareGroupDescribe entry: GROUP_ID_NOT_FOUND for no group or another kind (the handler fills in the
        authorized operations)."""
        described = ShareGroupDescribeResponse.DescribedGroup
        try:
            group = self.group(group_id)
        except KafkaError as exc:
            return described(error_code=exc.code, error_message=exc.message, group_id=group_id, group_state="",
                             group_epoch=0, assignment_epoch=0, assignor_name="", members=[],
                             authorized_operations=NOT_ASKED)
        names = self._names()
        return described(
            error_code=E.NONE, error_message=None, group_id=group_id, group_state=group.state_name,
            group_epoch=group.group_epoch, assignment_epoch=group.assignment_epoch,
            assignor_name=SHARE_ASSIGNOR.name,
            authorized_operations=NOT_ASKED,
            members=[ShareGroupDescribeResponse.Member(
                member_id=m.member_id, rack_id=m.rack_id, member_epoch=m.member_epoch, client_id=m.client_id,
                client_host=m.client_host, subscribed_topic_names=m.subscribed_topic_names,
                assignment=ShareGroupDescribeResponse.Assignment(topic_partitions=[
                    ShareGroupDescribeResponse.TopicPartitions(topic_id=t, topic_name=names.get(t, ""),
                                                               partitions=sorted(ps))
                    for t, ps in sorted(m.assigned.items(), key=str)]))
                for m in group.members.values()])
