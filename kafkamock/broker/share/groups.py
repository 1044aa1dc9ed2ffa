"""Share-group membership (KIP-932's ShareGroupHeartbeat and ShareGroupDescribe), as Kafka 4.3's GroupMetadataManager
runs it, on the group coordinator's timers.

A new group starts at group epoch 1 (Kafka's ModernGroup). A heartbeat updates its member; a change of subscription
or of the subscribed topics' metadata (a topic created, deleted or grown: the metadata hash) bumps the group epoch.
Partitions are assigned only once the group's share state for them is *initialized*: a heartbeat subscribing to
topics not yet initialized starts their initialization (Kafka's InitializeShareGroupState through the persister,
done here once the heartbeat is answered), and a later heartbeat that finds initialized partitions missing from the
target assignment bumps the epoch again. A new target assignment is computed when the group epoch is ahead of it, at
most once per ``share.assignment.interval.ms`` (the group config, else ``group.share.assignment.interval.ms``), by
the ``simple`` assignor; each member takes its target and the target's epoch at its next heartbeat (there is nothing
to revoke: share partitions are not owned). The previous member epoch is still accepted (a lost answer). A member is
fenced after ``share.session.timeout.ms`` without a heartbeat; a leave or a fence bumps the group epoch, and does not
touch the member's share sessions (their own connection or last request ends them). ``group.share.max.size`` bounds
the group. The groups live in the coordinator's table beside classic and KIP-848 groups, so ListGroups (type
``share``) and DeleteGroups see them. Not yet durable: share groups are not written to ``__consumer_offsets``
(Kafka's ShareGroup* records) so far.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.groups.assignors import SHARE_ASSIGNOR
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
Partitions = dict[uuid.UUID, frozenset[int]]


@dataclass
class ShareMember:
    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = 0
    client_id: str = ""
    client_host: str = ""
    rack_id: str | None = None
    subscribed_topic_names: list[str] = field(default_factory=list)
    assigned: Partitions = field(default_factory=dict)


@dataclass
class ShareGroup:
    group_id: str
    group_epoch: int = 1                   # ModernGroup starts at 1
    assignment_epoch: int = 0
    assignment_timestamp: int = 0
    metadata_hash: int = 0
    members: dict[str, ShareMember] = field(default_factory=dict)
    target: dict[str, Partitions] = field(default_factory=dict)
    initialized: dict[uuid.UUID, frozenset[int]] = field(default_factory=dict)
    initializing: dict[uuid.UUID, frozenset[int]] = field(default_factory=dict)
    dead: bool = False

    kind = "share"
    protocol_type = "share"

    def is_empty(self) -> bool:
        return not self.members

    @property
    def state_name(self) -> str:
        return "Dead" if self.dead else ("Stable" if self.members else "Empty")

    def subscribed_topics(self) -> set[str]:
        return {t for m in self.members.values() for t in m.subscribed_topic_names}

    def is_subscribed_to(self, topic: str) -> bool:
        return topic in self.subscribed_topics()

    def offsets_expire_by(self) -> None:
        """Share groups commit no offsets through OffsetCommit: KIP-211's cleanup has nothing to do here."""
        return None

    def validate_commit(self, member_id: str, instance_id: str | None, epoch: int, version: int,
                        transactional: bool) -> None:
        raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Group {self.group_id} is a share group: it commits no offsets.")

    def validate_offset_fetch(self, member_id: str, epoch: int) -> None:
        raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Group {self.group_id} is a share group.")

    def tombstones(self) -> list[GroupRecord]:
        return []

    def removed(self, coordinator: GroupCoordinator) -> None:
        self.dead = True
        for member_id in self.members:
            coordinator._unschedule(("share-session", self.group_id, member_id))
        # The share coordinator forgets the group's share-partitions: a callback the broker wires in when it builds
        # the group coordinator (a cross-coordinator call, not a lookup through the broker).
        coordinator.share_group_deleted(self.group_id)

    def loaded(self, coordinator: GroupCoordinator) -> None:
        """Nothing is replayed for share groups yet."""


def can_compute_assignment(timestamp_ms: int, interval_ms: int, now_ms: int) -> bool:
    """GroupMetadataManager.canComputeNextTargetAssignment."""
    return timestamp_ms == 0 or interval_ms == 0 or now_ms >= timestamp_ms + interval_ms or now_ms < timestamp_ms


class ShareGroups:
    """The share half of the coordinator: ``heartbeat`` and ``describe``."""

    def __init__(self, coordinator: GroupCoordinator) -> None:
        self.coordinator = coordinator

    @property
    def config(self) -> BrokerConfig:
        return self.coordinator.config

    @property
    def services(self) -> CoordinatorServices:
        return self.coordinator.services

    # -- ShareGroupHeartbeat --------------------------------------------------------------------------------------

    def heartbeat(self, body: messages.ShareGroupHeartbeatRequest, client_id: str, client_host: str
                  ) -> ShareGroupHeartbeatResponse:
        group_id, member_id, epoch = body.group_id, body.member_id or "", body.member_epoch
        self._validate(body, group_id, member_id, epoch)
        if epoch == LEAVE_EPOCH:
            group = self.group(group_id)
            if member_id not in group.members:
                raise KafkaError(E.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group_id}.")
            log.info("share group %s: member %s left", group_id, member_id)
            self._fence(group, member_id)
            return ShareGroupHeartbeatResponse(throttle_time_ms=0, error_code=E.NONE, error_message=None,
                                               member_id=member_id, member_epoch=LEAVE_EPOCH, heartbeat_interval_ms=0,
                                               assignment=None)
        group = self._group(group_id, create=epoch == 0)
        limit = self.config["group.share.max.size"]
        if len(group.members) >= limit and member_id not in group.members:
            raise KafkaError(E.GROUP_MAX_SIZE_REACHED, f"The share group has reached its maximum capacity of {limit} "
                                                       "members.")
        member = group.members.get(member_id)
        if member is None:
            if epoch != 0:
                raise KafkaError(E.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group_id}.")
            member = ShareMember(member_id)
        elif epoch > member.member_epoch:
            raise KafkaError(E.FENCED_MEMBER_EPOCH, f"The share group member has a greater member epoch ({epoch}) than "
                                                    f"the one known by the group coordinator ({member.member_epoch}). "
                                                    "The member must abandon all its partitions and rejoin.")
        elif epoch != 0 and epoch < member.member_epoch and epoch != member.previous_member_epoch:
            raise KafkaError(E.FENCED_MEMBER_EPOCH, f"The share group member has a smaller member epoch ({epoch}) than "
                                                    f"the one known by the group coordinator ({member.member_epoch}), "
                                                    "and it does not match the previous member epoch "
                                                    f"({member.previous_member_epoch}). The member must abandon all "
                                                    "its partitions and rejoin.")
        group.members[member_id] = member
        existing = self.services.metadata.topics_by_id
        for topic_id in [t for t in group.initialized if t not in existing]:     # deleted topics
            del group.initialized[topic_id]
        before = dict(member.assigned)
        bump = False
        if body.rack_id is not None:
            member.rack_id = body.rack_id
        member.client_id, member.client_host = client_id, client_host
        if body.subscribed_topic_names is not None and list(body.subscribed_topic_names) != \
                member.subscribed_topic_names:
            member.subscribed_topic_names = list(body.subscribed_topic_names)
            bump = True
        if group.assignment_epoch >= group.group_epoch:
            bump = bump or self._initialized_assignment_pending(group)
        metadata_hash = self._metadata_hash(group)
        if bump or metadata_hash != group.metadata_hash:
            group.metadata_hash = metadata_hash
            group.group_epoch += 1
            bump = True
        target_epoch, target = self._update_target(group, member_id)
        if bump or member.member_epoch != target_epoch:
            if member.member_epoch != target_epoch:
                member.previous_member_epoch = member.member_epoch
                member.member_epoch = target_epoch
            member.assigned = {t: ps for t, ps in target.items()
                               if t in self._topic_ids(member.subscribed_topic_names)}
        self._session_ok(group, member)
        full = epoch == 0 or body.subscribed_topic_names is not None
        assignment = member.assigned if full or member.assigned != before else None
        answer = self._answer(group_id, member.member_id, member.member_epoch, assignment)
        self._initialize(group)
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
        """getOrMaybeCreateShareGroup."""
        found = self.coordinator.groups.get(group_id)
        if found is not None and not isinstance(found, ShareGroup):
            raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group.")
        if found is None or found.dead:
            if not create:
                raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Share group {group_id} not found.")
            group = self.coordinator.groups[group_id] = ShareGroup(group_id)
            return group
        return found

    def group(self, group_id: str) -> ShareGroup:
        """An existing share group (GROUP_ID_NOT_FOUND in Kafka's words otherwise)."""
        group = self.coordinator.groups.get(group_id)
        if group is None or group.state_name == "Dead":
            raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
        if not isinstance(group, ShareGroup):
            raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group.")
        return group

    def empty_group(self, group_id: str, *, create: bool = True) -> ShareGroup:
        """The share group an offsets admin call may change: it must have no members (NON_EMPTY_GROUP)."""
        found = self.coordinator.groups.get(group_id)
        if isinstance(found, ShareGroup) and found.dead:
            found = None
        if found is None and not create:
            raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
        group = self._group(group_id, create=True)
        if group.members:
            raise KafkaError(E.NON_EMPTY_GROUP, f"The share group {group_id} has members.")
        return group

    # -- the target assignment ------------------------------------------------------------------------------------

    def _topic_ids(self, names: Iterable[str]) -> set[uuid.UUID]:
        topics = self.services.metadata.topics
        return {topics[n].topic_id for n in names if n in topics}

    def _metadata_hash(self, group: ShareGroup) -> int:
        """The subscribed topics' metadata (ModernGroup.computeMetadataHash): 0 when none exists."""
        topics = self.services.metadata.topics
        found = sorted((n, str(topics[n].topic_id), len(topics[n].partitions))
                       for n in group.subscribed_topics() if n in topics)
        return hash(tuple(found)) if found else 0

    def _initialized_assignment_pending(self, group: ShareGroup) -> bool:
        """initializedAssignmentPending: initialized partitions of subscribed topics the target does not cover."""
        if not group.members or not group.initialized:
            return False
        subscribed = self._topic_ids(group.subscribed_topics())
        if not subscribed:
            return False
        assigned: dict[uuid.UUID, set[int]] = {}
        for partitions in group.target.values():
            for topic_id, ps in partitions.items():
                assigned.setdefault(topic_id, set()).update(ps)
        return any(topic_id in subscribed and assigned.get(topic_id) != set(ps)
                   for topic_id, ps in group.initialized.items())

    def _update_target(self, group: ShareGroup, member_id: str) -> tuple[int, Partitions]:
        """maybeUpdateTargetAssignment: a new target when the group epoch is ahead of it and the assignment interval
        allows, over the initialized partitions only."""
        now = self.coordinator.now()
        interval = self.coordinator.configs.value(group.group_id, "share.assignment.interval.ms")
        if group.assignment_epoch < group.group_epoch and can_compute_assignment(group.assignment_timestamp,
                                                                                   interval, now):
            subscriptions = {m.member_id: frozenset(self._topic_ids(m.subscribed_topic_names))
                             for m in group.members.values()}
            wanted = set().union(*subscriptions.values()) if subscriptions else set()
            partitions = {t: ps for t, ps in group.initialized.items() if t in wanted}
            group.target = SHARE_ASSIGNOR.assign(subscriptions, partitions, group.target)
            group.assignment_epoch = group.group_epoch
            group.assignment_timestamp = now
        return group.assignment_epoch, group.target.get(member_id, {})

    def _initialize(self, group: ShareGroup) -> None:
        """The share state of subscribed partitions not yet initialized is initialized (Kafka: asynchronously, by the
        persister, once the heartbeat is answered; here nothing is written until a share-partition has state)."""
        topics = self.services.metadata.topics
        for name in group.subscribed_topics():
            topic = topics.get(name)
            if topic is None or name.startswith("__"):
                continue
            have = group.initialized.get(topic.topic_id, frozenset())
            if len(have) < len(topic.partitions):
                group.initialized[topic.topic_id] = frozenset(range(len(topic.partitions)))

    # -- members leaving ------------------------------------------------------------------------------------------

    def _fence(self, group: ShareGroup, member_id: str) -> None:
        """shareGroupFenceMember: the member goes and the group epoch moves on (the target is recomputed at the next
        heartbeat). Its share sessions stay: the connection they belong to, or their last request, ends them."""
        group.members.pop(member_id, None)
        group.target.pop(member_id, None)
        self.coordinator._unschedule(("share-session", group.group_id, member_id))
        group.metadata_hash = self._metadata_hash(group)
        group.group_epoch += 1

    def _session_ok(self, group: ShareGroup, member: ShareMember) -> None:
        def expired() -> None:
            if self.coordinator.groups.get(group.group_id) is group and member.member_id in group.members:
                log.info("share group %s: member %s fenced: its session timed out", group.group_id, member.member_id)
                self._fence(group, member.member_id)
        self.coordinator._schedule(("share-session", group.group_id, member.member_id),
                                   self.coordinator.configs.value(group.group_id, "share.session.timeout.ms"), expired)

    def _answer(self, group_id: str, member_id: str, epoch: int, assignment: Partitions | None
                ) -> ShareGroupHeartbeatResponse:
        interval = self.coordinator.configs.value(group_id, "share.heartbeat.interval.ms")
        return ShareGroupHeartbeatResponse(
            throttle_time_ms=0, error_code=E.NONE, error_message=None, member_id=member_id, member_epoch=epoch,
            heartbeat_interval_ms=interval,
            assignment=None if assignment is None else ShareGroupHeartbeatResponse.Assignment(topic_partitions=[
                ShareGroupHeartbeatResponse.TopicPartitions(topic_id=t, partitions=sorted(ps))
                for t, ps in sorted(assignment.items(), key=str)]))

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
        names = {t.topic_id: name for name, t in self.services.metadata.topics.items()}
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
