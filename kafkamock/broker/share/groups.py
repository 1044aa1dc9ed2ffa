"""Share-group membership (KIP-932's ShareGroupHeartbeat and ShareGroupDescribe), on the group coordinator's timers.

A share group hands partitions to members without exclusive ownership, so there is nothing to revoke: a change of
members or subscriptions bumps the group epoch, the ``simple`` assignor computes the target at once, and every member
takes its target (and the group epoch) at its next heartbeat. A member is fenced after
``share.session.timeout.ms`` (the group config, else ``group.share.session.timeout.ms``) without a heartbeat; ``group.share.max.size`` bounds the group. The groups live in
the coordinator's table beside classic and KIP-848 groups, so ListGroups (type ``share``) and DeleteGroups see them.
Not yet durable: share groups are not written to ``__consumer_offsets`` (Kafka's ShareGroup* records) so far.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field

from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.groups.assignors import SHARE_ASSIGNOR

NOT_ASKED = -(2**31)

log = logging.getLogger("kafkamock.groups")
E = ErrorCode
LEAVE_EPOCH = -1
Partitions = dict[uuid.UUID, frozenset[int]]


@dataclass
class ShareMember:
    member_id: str
    member_epoch: int = 0
    client_id: str = ""
    client_host: str = ""
    rack_id: str | None = None
    subscribed_topic_names: list[str] = field(default_factory=list)
    assigned: Partitions = field(default_factory=dict)


@dataclass
class ShareGroup:
    group_id: str
    group_epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, ShareMember] = field(default_factory=dict)
    target: dict[str, Partitions] = field(default_factory=dict)
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

    def offsets_expire_by(self):
        """Share groups commit no offsets through OffsetCommit: KIP-211's cleanup has nothing to do here."""
        return None

    def validate_commit(self, member_id, instance_id, epoch, version, transactional) -> None:
        raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Group {self.group_id} is a share group: it commits no offsets.")

    def validate_offset_fetch(self, member_id: str, epoch: int) -> None:
        raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Group {self.group_id} is a share group.")

    def tombstones(self) -> list:
        return []

    def removed(self, coordinator) -> None:
        self.dead = True
        for member_id in self.members:
            coordinator._unschedule(("share-session", self.group_id, member_id))
        coordinator.broker.share.group_deleted(self.group_id)

    def loaded(self, coordinator) -> None:
        """Nothing is replayed for share groups yet."""


class ShareGroups:
    """The share half of the coordinator: ``heartbeat`` and ``describe``."""

    def __init__(self, coordinator) -> None:
        self.coordinator = coordinator

    @property
    def config(self):
        return self.coordinator.config

    def heartbeat(self, body, client_id: str, client_host: str) -> dict:
        group_id, member_id, epoch = body.group_id, body.member_id or "", body.member_epoch
        self._validate(body, group_id, member_id, epoch)
        group = self._group(group_id, create=epoch == 0)
        if epoch == LEAVE_EPOCH:
            if member_id not in group.members:
                raise KafkaError(E.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group_id}.")
            self._remove(group, member_id)
            return self._answer(group_id, member_id, LEAVE_EPOCH, None)
        member = group.members.get(member_id)
        changed = False
        if epoch == 0:
            if member is None:
                if len(group.members) >= self.config["group.share.max.size"]:
                    raise KafkaError(E.GROUP_MAX_SIZE_REACHED, f"The share group has reached its maximum capacity "
                                                               f"of {self.config['group.share.max.size']} members.")
                member = group.members[member_id] = ShareMember(member_id, client_id=client_id,
                                                                client_host=client_host)
                changed = True
        elif member is None:
            raise KafkaError(E.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group_id}.")
        elif epoch != member.member_epoch:
            raise KafkaError(E.FENCED_MEMBER_EPOCH, f"The share group member has a member epoch ({epoch}) different "
                                                    f"from the one known by the coordinator "
                                                    f"({member.member_epoch}).")
        if body.subscribed_topic_names is not None and list(body.subscribed_topic_names) != \
                member.subscribed_topic_names:
            member.subscribed_topic_names = list(body.subscribed_topic_names)
            changed = True
        if body.rack_id is not None and body.rack_id != member.rack_id:
            member.rack_id = body.rack_id
        if changed:
            group.group_epoch += 1
        if group.assignment_epoch < group.group_epoch:
            self._assign(group)
        self._session_ok(group, member)
        assignment = None
        if member.member_epoch != group.assignment_epoch or epoch == 0:
            member.member_epoch = group.assignment_epoch
            member.assigned = group.target.get(member.member_id, {})
            assignment = member.assigned
        return self._answer(group_id, member.member_id, member.member_epoch, assignment)

    def _validate(self, body, group_id: str, member_id: str, epoch: int) -> None:
        """Kafka's throwIfShareGroupHeartbeatRequestIsInvalid."""
        if not group_id:
            raise KafkaError(E.INVALID_REQUEST, "GroupId can't be empty.")
        if not member_id:
            raise KafkaError(E.INVALID_REQUEST, "MemberId can't be empty.")
        if body.rack_id is not None and not body.rack_id:
            raise KafkaError(E.INVALID_REQUEST, "RackId can't be empty.")
        if epoch == 0 and not body.subscribed_topic_names:
            raise KafkaError(E.INVALID_REQUEST, "SubscribedTopicNames must be set in first request.")
        if epoch < LEAVE_EPOCH:
            raise KafkaError(E.INVALID_REQUEST, f"MemberEpoch is invalid: {epoch}.")

    def _group(self, group_id: str, *, create: bool) -> ShareGroup:
        coordinator = self.coordinator
        group = coordinator.groups.get(group_id)
        if group is not None and group.kind != "share":
            raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group.")
        if group is None:
            if not create:
                raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
            group = coordinator.groups[group_id] = ShareGroup(group_id)
        return group

    def empty_group(self, group_id: str, *, create: bool = True) -> ShareGroup:
        """The share group an offsets admin call may change: it must have no members (NON_EMPTY_GROUP)."""
        group = self.coordinator.groups.get(group_id)
        if group is not None and group.dead:
            group = None
        if group is None and not create:
            raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
        group = self._group(group_id, create=True)
        if group.members:
            raise KafkaError(E.NON_EMPTY_GROUP, f"The share group {group_id} has members.")
        return group

    def _assign(self, group: ShareGroup) -> None:
        topics = self.coordinator.broker.cluster.topics
        by_name = {name: t for name, t in topics.items() if not name.startswith("__")}
        subscriptions = {m.member_id: frozenset(by_name[t].topic_id for t in m.subscribed_topic_names if t in by_name)
                         for m in group.members.values()}
        partitions = {t.topic_id: len(t.partitions) for name, t in by_name.items()
                      if any(name in m.subscribed_topic_names for m in group.members.values())}
        group.target = SHARE_ASSIGNOR.assign(subscriptions, partitions, group.target)
        group.assignment_epoch = group.group_epoch

    def _remove(self, group: ShareGroup, member_id: str) -> None:
        """A member leaves or is fenced: its share sessions close and what it acquired is released."""
        group.members.pop(member_id, None)
        group.target.pop(member_id, None)
        self.coordinator._unschedule(("share-session", group.group_id, member_id))
        broker = self.coordinator.broker
        for node in broker.nodes:
            node.share_sessions.close_member(group.group_id, member_id)
        broker.share.member_left(group.group_id, member_id)
        group.group_epoch += 1
        self._assign(group)

    def _session_ok(self, group: ShareGroup, member: ShareMember) -> None:
        def expired():
            if self.coordinator.groups.get(group.group_id) is group and member.member_id in group.members:
                log.info("share group %s: member %s fenced: its session timed out", group.group_id, member.member_id)
                self._remove(group, member.member_id)
        self.coordinator._schedule(("share-session", group.group_id, member.member_id),
                                   self.coordinator.configs.value(group.group_id, "share.session.timeout.ms"), expired)

    def _answer(self, group_id: str, member_id: str, epoch: int, assignment: Partitions | None) -> dict:
        interval = self.coordinator.configs.value(group_id, "share.heartbeat.interval.ms")
        return {"throttle_time_ms": 0, "error_code": E.NONE, "error_message": None, "member_id": member_id,
                "member_epoch": epoch, "heartbeat_interval_ms": interval,
                "assignment": None if assignment is None else {"topic_partitions": [
                    {"topic_id": t, "partitions": sorted(ps)} for t, ps in sorted(assignment.items(), key=str)]}}

    def describe(self, group_id: str) -> dict:
        """One ShareGroupDescribe entry: GROUP_ID_NOT_FOUND for no group or another kind (the handler fills in the
        authorized operations)."""
        group = self.coordinator.groups.get(group_id)
        if group is None or group.kind != "share" or group.dead:
            return {"error_code": E.GROUP_ID_NOT_FOUND, "error_message": f"Group {group_id} not found.",
                    "group_id": group_id, "group_state": "Dead", "group_epoch": -1, "assignment_epoch": -1,
                    "assignor_name": "", "members": [], "authorized_operations": -2147483648}
        names = {t.topic_id: name for name, t in self.coordinator.broker.cluster.topics.items()}
        return {"error_code": E.NONE, "error_message": None, "group_id": group_id, "group_state": group.state_name,
                "group_epoch": group.group_epoch, "assignment_epoch": group.assignment_epoch,
                "assignor_name": SHARE_ASSIGNOR.name,
                "authorized_operations": NOT_ASKED,
                "members": [{"member_id": m.member_id, "rack_id": m.rack_id, "member_epoch": m.member_epoch,
                             "client_id": m.client_id, "client_host": m.client_host,
                             "subscribed_topic_names": m.subscribed_topic_names,
                             "assignment": {"topic_partitions": [
                                 {"topic_id": t, "topic_name": names.get(t, ""), "partitions": sorted(ps)}
                                 for t, ps in sorted(m.assigned.items(), key=str)]}}
                            for m in group.members.values()]}
