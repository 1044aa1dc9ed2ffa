"""KIP-848 consumer groups: ConsumerGroupHeartbeat, ConsumerGroupDescribe, their records and timers.

The broker runs the rebalance: a member's heartbeat says what it subscribes to and what it owns; the group's epoch
moves whenever membership, a subscription or the subscribed topics' partitions change; a new epoch gets a new
target assignment from the server-side assignor (``assignors.py``), and each member reconciles towards it at its
own pace (``reconciliation.py``: revoke first, then assign). Sessions (``group.consumer.session.timeout.ms``) and
revocations (the member's rebalance timeout) run on the core's timers; every change is a record of
``__consumer_offsets`` in Kafka's formats (types 3-8 and 16), so a restart replays the group.

A group's state is derived, as in Kafka's ConsumerGroup: Empty (no member), Assigning (the target is older than
the group epoch), Reconciling (a member is not yet at the target), Stable.
"""

from __future__ import annotations

import logging
import re
import uuid
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kafkamock.broker.config import server_assignor_names
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.groups import records
from kafkamock.broker.groups.assignors import ASSIGNORS
from kafkamock.broker.groups.reconciliation import MemberState, Partitions, reconcile

log = logging.getLogger("kafkamock.groups")
E = ErrorCode
LEAVE_EPOCH, LEAVE_STATIC_EPOCH = -1, -2
CLASSIC_MEMBER_TYPE, CONSUMER_MEMBER_TYPE = 0, 1


@dataclass
class ClassicDetails:
    """What a classic member of a KIP-848 group brought with its JoinGroup."""
    session_timeout_ms: int
    protocols: list[tuple[str, bytes]]             # (name, ConsumerProtocolSubscription) in its order

    @property
    def protocol(self) -> str:
        return self.protocols[0][0] if self.protocols else ""

    @property
    def subscription_version(self) -> int:
        metadata = self.protocols[0][1] if self.protocols else b""
        return max(0, min(int.from_bytes(metadata[:2], "big", signed=True), 3)) if len(metadata) >= 2 else 0


@dataclass(eq=False)
class ConsumerMember:
    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: list[str] = field(default_factory=list)
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    rebalance_timeout_ms: int = -1
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: MemberState = MemberState.STABLE
    assigned: Partitions = field(default_factory=dict)
    pending_revocation: Partitions = field(default_factory=dict)
    classic: ClassicDetails | None = None         # set for a classic-protocol member (the migration path)

    def metadata_value(self) -> dict:
        return {"instance_id": self.instance_id, "rack_id": self.rack_id, "client_id": self.client_id,
                "client_host": self.client_host, "subscribed_topic_names": list(self.subscribed_topic_names),
                "subscribed_topic_regex": self.subscribed_topic_regex,
                "rebalance_timeout_ms": self.rebalance_timeout_ms, "server_assignor": self.server_assignor,
                "classic_member_metadata": None if self.classic is None else {
                    "session_timeout_ms": self.classic.session_timeout_ms,
                    "supported_protocols": [{"name": n, "metadata": m} for n, m in self.classic.protocols]}}

    def assignment_value(self) -> dict:
        return {"member_epoch": self.member_epoch, "previous_member_epoch": self.previous_member_epoch,
                "state": int(self.state), "assigned_partitions": _partitions_out(self.assigned),
                "partitions_pending_revocation": _partitions_out(self.pending_revocation)}


@dataclass(eq=False)
class ConsumerGroup:
    group_id: str
    group_epoch: int = 0
    assignment_epoch: int = 0
    metadata_hash: int = 0
    creation_time_ms: int = -1
    members: dict[str, ConsumerMember] = field(default_factory=dict)
    target: dict[str, Partitions] = field(default_factory=dict)      # member id -> target assignment
    regexes: dict[str, frozenset[str]] = field(default_factory=dict)  # regular expression -> topics it matched
    dead: bool = False

    kind = "consumer"
    protocol_type = "consumer"

    # -- what every group kind answers ---------------------------------------------------------------------------

    def is_empty(self) -> bool:
        return not self.members

    @property
    def state_name(self) -> str:
        if self.dead:
            return "Dead"
        if not self.members:
            return "Empty"
        if self.group_epoch > self.assignment_epoch:
            return "Assigning"
        if any(m.member_epoch != self.assignment_epoch or m.state is not MemberState.STABLE
               for m in self.members.values()):
            return "Reconciling"
        return "Stable"

    def subscribed_topics(self) -> set[str]:
        topics: set[str] = set()
        for member in self.members.values():
            topics.update(member.subscribed_topic_names)
            if member.subscribed_topic_regex is not None:
                topics.update(self.regexes.get(member.subscribed_topic_regex, ()))
        return topics

    def is_subscribed_to(self, topic: str) -> bool:
        return topic in self.subscribed_topics()

    def offsets_expire_by(self):
        """KIP-211 for consumer groups (Kafka's ConsumerGroup.offsetExpirationCondition): by commit time, and only
        offsets of topics no member subscribes to (an Empty group subscribes to none)."""
        return lambda offset: offset.commit_timestamp_ms

    def validate_commit(self, member_id: str, instance_id: str | None, epoch: int, version: int,
                        transactional: bool) -> None:
        """Kafka's ConsumerGroup.validateOffsetCommit: an admin or standalone commit (epoch < 0) only into an
        empty group; a member commits at its current epoch, with OffsetCommit v9+ (v8 cannot carry an epoch)."""
        if epoch < 0 and not self.members:
            return
        member = self.members.get(member_id)
        if member is None:
            raise KafkaError(E.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {self.group_id}.")
        if member.classic is not None:
            if epoch != member.member_epoch:          # a classic member's generation is its member epoch
                raise KafkaError(E.ILLEGAL_GENERATION, f"Generation {epoch} is not {member.member_epoch}.")
            return
        if not transactional and version < 9:
            raise KafkaError(E.UNSUPPORTED_VERSION, "OffsetCommit version 9 or above must be used by members "
                                                    "using the consumer group protocol")
        _check_epoch(epoch, member.member_epoch)

    def validate_offset_fetch(self, member_id: str, epoch: int) -> None:
        if epoch < 0 and not member_id:
            return
        member = self.members.get(member_id)
        if member is None:
            raise KafkaError(E.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {self.group_id}.")
        _check_epoch(epoch, member.member_epoch)

    # -- partition ownership -------------------------------------------------------------------------------------

    def owner_epochs(self) -> dict[tuple[uuid.UUID, int], str]:
        """(topic id, partition) -> the member that owns it (assigned or still revoking)."""
        owners: dict[tuple[uuid.UUID, int], str] = {}
        for member in self.members.values():
            for owned in (member.assigned, member.pending_revocation):
                for topic_id, partitions in owned.items():
                    for p in partitions:
                        owners[(topic_id, p)] = member.member_id
        return owners

    def preferred_assignor(self, default: str) -> str:
        """The assignor most members ask for (the configured default when none asks)."""
        votes: dict[str, int] = {}
        for member in self.members.values():
            if member.server_assignor:
                votes[member.server_assignor] = votes.get(member.server_assignor, 0) + 1
        return max(sorted(votes), key=lambda name: votes[name]) if votes else default

    # -- records ------------------------------------------------------------------------------------------------

    def group_record(self):
        return records.record(records.CONSUMER_GROUP_METADATA, {"group_id": self.group_id},
                              {"epoch": self.group_epoch, "metadata_hash": self.metadata_hash,
                               "creation_time_ms": self.creation_time_ms})

    def member_records(self, member: ConsumerMember) -> list:
        key = {"group_id": self.group_id, "member_id": member.member_id}
        return [records.record(records.CONSUMER_GROUP_MEMBER_METADATA, key, member.metadata_value())]

    def assignment_record(self, member: ConsumerMember):
        key = {"group_id": self.group_id, "member_id": member.member_id}
        return records.record(records.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT, key, member.assignment_value())

    def target_records(self, now_ms: int) -> list:
        out = [records.record(records.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER,
                              {"group_id": self.group_id, "member_id": m},
                              {"topic_partitions": _partitions_out(partitions)})
               for m, partitions in self.target.items()]
        out.append(records.record(records.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA, {"group_id": self.group_id},
                                  {"assignment_epoch": self.assignment_epoch, "assignment_timestamp": now_ms}))
        return out

    def member_tombstones(self, member_id: str) -> list:
        key = {"group_id": self.group_id, "member_id": member_id}
        return [records.record(records.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT, key, None),
                records.record(records.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER, key, None),
                records.record(records.CONSUMER_GROUP_MEMBER_METADATA, key, None)]

    def tombstones(self) -> list:
        out = []
        for member_id in list(self.members) + [m for m in self.target if m not in self.members]:
            out.extend(self.member_tombstones(member_id))
        for regex in self.regexes:
            out.append(records.record(records.CONSUMER_GROUP_REGULAR_EXPRESSION,
                                      {"group_id": self.group_id, "regular_expression": regex}, None))
        out.append(records.record(records.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA, {"group_id": self.group_id},
                                  None))
        out.append(records.record(records.CONSUMER_GROUP_METADATA, {"group_id": self.group_id}, None))
        return out

    def removed(self, coordinator) -> None:
        self.dead = True
        for member_id in self.members:
            coordinator.consumer.unschedule_member(self.group_id, member_id)

    def loaded(self, coordinator) -> None:
        """After a replay: every member's session starts again, as Kafka's coordinator does on load."""
        for member in self.members.values():
            coordinator.consumer.session_ok(self, member)
            if member.state is MemberState.UNREVOKED_PARTITIONS:
                coordinator.consumer.schedule_revocation(self, member)


def _check_epoch(received: int, expected: int) -> None:
    if received > expected:
        raise KafkaError(E.FENCED_MEMBER_EPOCH, f"The member epoch {received} is newer than {expected}.")
    if received < expected:
        raise KafkaError(E.STALE_MEMBER_EPOCH, f"The member epoch {received} is older than {expected}.")


def _partitions_out(partitions: Partitions) -> list[dict]:
    return [{"topic_id": t, "partitions": sorted(ps)} for t, ps in sorted(partitions.items(), key=lambda i: str(i[0]))
            if ps]


def _partitions_in(entries) -> Partitions:
    out: Partitions = {}
    for entry in entries or ():
        if entry.partitions:
            out[entry.topic_id] = out.get(entry.topic_id, frozenset()) | frozenset(entry.partitions)
    return out


def _regex(pattern: str) -> re.Pattern:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise KafkaError(E.INVALID_REGULAR_EXPRESSION, f"SubscribedTopicRegex {pattern!r} is invalid: {exc}") \
            from exc


class ConsumerGroups:
    """The KIP-848 half of the coordinator: ``heartbeat`` and ``describe``; offsets, records and timers are the
    coordinator's."""

    def __init__(self, coordinator) -> None:
        self.coordinator = coordinator

    @property
    def broker(self):
        return self.coordinator.broker

    @property
    def config(self):
        return self.coordinator.config

    def enabled(self) -> bool:
        """Whether ``group.coordinator.rebalance.protocols`` serves KIP-848's protocol."""
        return "consumer" in {p.strip().lower() for p in self.config["group.coordinator.rebalance.protocols"]
                              .split(",")}

    # -- timers --------------------------------------------------------------------------------------------------

    def session_ok(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        timeout = member.classic.session_timeout_ms if member.classic is not None else \
            self.coordinator.configs.value(group.group_id, "consumer.session.timeout.ms")
        self.coordinator._schedule(("consumer-session", group.group_id, member.member_id), timeout,
                                   lambda: self._fence(group, member.member_id, "its session timed out"))

    def schedule_revocation(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        timeout = member.rebalance_timeout_ms if member.rebalance_timeout_ms > 0 else \
            self.coordinator.configs.value(group.group_id, "consumer.session.timeout.ms")
        epoch = member.member_epoch

        def expired():
            current = group.members.get(member.member_id)
            if current is member and member.state is MemberState.UNREVOKED_PARTITIONS and \
                    member.member_epoch == epoch:
                self._fence(group, member.member_id, "it did not revoke its partitions within its rebalance timeout")
        self.coordinator._schedule(("consumer-revocation", group.group_id, member.member_id), timeout, expired)

    def unschedule_member(self, group_id: str, member_id: str) -> None:
        self.coordinator._unschedule(("consumer-session", group_id, member_id))
        self.coordinator._unschedule(("consumer-revocation", group_id, member_id))

    def _fence(self, group: ConsumerGroup, member_id: str, why: str) -> None:
        if self.coordinator.groups.get(group.group_id) is not group or member_id not in group.members:
            return
        log.info("group %s: member %s fenced: %s", group.group_id, member_id, why)
        self._remove_member(group, member_id)

    # -- the heartbeat -------------------------------------------------------------------------------------------

    def heartbeat(self, body, version: int, client_id: str, client_host: str,
                  describable: Callable[[frozenset[str]], set[str]]) -> dict:
        """ConsumerGroupHeartbeat: join (epoch 0), heartbeat (the current epoch), leave (-1) or leave for now as
        a static member (-2). Returns the response body; errors raise KafkaError. ``describable`` says which
        topics the requester may DESCRIBE: the group's regular expressions resolve to those only."""
        group_id, member_id, epoch = body.group_id, body.member_id or "", body.member_epoch
        instance_id = body.instance_id
        regex = body.subscribed_topic_regex if version >= 1 else None
        self._validate(body, version, group_id, member_id, epoch, instance_id, regex)
        group = self._group(group_id, create=epoch == 0)
        if epoch in (LEAVE_EPOCH, LEAVE_STATIC_EPOCH):
            return self._leave(group, member_id, instance_id, epoch)
        if epoch == 0 and not member_id:
            member_id = str(uuid.uuid4())          # v0: the coordinator names the member
        member, created = self._member(group, member_id, instance_id, epoch, body.topic_partitions)
        written: list = []
        changed = created
        if created and not group.members and group.creation_time_ms < 0:
            group.creation_time_ms = self.coordinator.now()
        if created:
            member.client_id, member.client_host = client_id, client_host
        if body.rebalance_timeout_ms != -1 and body.rebalance_timeout_ms != member.rebalance_timeout_ms:
            member.rebalance_timeout_ms = body.rebalance_timeout_ms
            changed = True
        if body.subscribed_topic_names is not None and list(body.subscribed_topic_names) != \
                member.subscribed_topic_names:
            member.subscribed_topic_names = list(body.subscribed_topic_names)
            changed = True
        if regex is not None and (regex or None) != member.subscribed_topic_regex:
            member.subscribed_topic_regex = regex or None
            changed = True
        if body.server_assignor is not None and body.server_assignor != member.server_assignor:
            member.server_assignor = body.server_assignor
            changed = True
        if body.rack_id is not None and body.rack_id != member.rack_id:
            member.rack_id = body.rack_id
            changed = True
        if member.member_id not in group.members:
            if len(group.members) >= self.config["group.consumer.max.size"]:
                raise KafkaError(E.GROUP_MAX_SIZE_REACHED,
                                 f"The consumer group has reached its maximum capacity of "
                                 f"{self.config['group.consumer.max.size']} members.")
            group.members[member.member_id] = member
        if changed:
            written.extend(group.member_records(member))
        owned = _partitions_in(body.topic_partitions) if body.topic_partitions is not None else None
        if epoch == 0:
            owned = owned or {}
        before = (member.assigned, member.pending_revocation)
        written.extend(self._refresh_regexes(group, describable))
        self._advance(group, member, owned, changed, written)
        after = (member.assigned, member.pending_revocation)
        full = epoch == 0 or (body.rebalance_timeout_ms != -1 and owned is not None and
                              (body.subscribed_topic_names is not None or regex is not None))
        answer = {"throttle_time_ms": 0, "error_code": E.NONE, "error_message": None,
                  "member_id": member.member_id, "member_epoch": member.member_epoch,
                  "heartbeat_interval_ms": self.coordinator.configs.value(group.group_id,
                                                                          "consumer.heartbeat.interval.ms"),
                  "assignment": None}
        if full or before != after:
            answer["assignment"] = {"topic_partitions": _partitions_out(member.assigned)}
        return answer

    def _validate(self, body, version, group_id, member_id, epoch, instance_id, regex) -> None:
        """Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid."""
        if not group_id:
            raise KafkaError(E.INVALID_REQUEST, "GroupId can't be empty.")
        if version >= 1 and not member_id:
            raise KafkaError(E.INVALID_REQUEST, "MemberId can't be empty.")
        if body.rack_id is not None and not body.rack_id:
            raise KafkaError(E.INVALID_REQUEST, "RackId can't be empty.")
        if instance_id is not None and not instance_id:
            raise KafkaError(E.INVALID_REQUEST, "InstanceId can't be empty.")
        if epoch > 0:
            if not member_id:
                raise KafkaError(E.INVALID_REQUEST, "MemberId can't be empty.")
        elif epoch == 0:
            if body.rebalance_timeout_ms == -1:
                raise KafkaError(E.INVALID_REQUEST, "RebalanceTimeoutMs must be provided in first request.")
            if body.topic_partitions:
                raise KafkaError(E.INVALID_REQUEST, "TopicPartitions must be empty when (re-)joining.")
            if body.subscribed_topic_names is None and regex is None:
                raise KafkaError(E.INVALID_REQUEST,
                                 "SubscribedTopicNames or SubscribedTopicRegex must be set in first request.")
        elif epoch == LEAVE_STATIC_EPOCH:
            if instance_id is None:
                raise KafkaError(E.INVALID_REQUEST, "InstanceId can't be null.")
        elif epoch != LEAVE_EPOCH:
            raise KafkaError(E.INVALID_REQUEST, f"MemberEpoch is invalid: {epoch}.")
        if regex:
            _regex(regex)
        if body.server_assignor is not None and body.server_assignor not in self._assignors():
            raise KafkaError(E.UNSUPPORTED_ASSIGNOR,
                             f"ServerAssignor {body.server_assignor} is not supported. Supported assignors: "
                             f"{', '.join(self._assignors())}.")

    def _assignors(self) -> list[str]:
        return server_assignor_names(self.config["group.consumer.assignors"])

    def _group(self, group_id: str, *, create: bool) -> ConsumerGroup:
        coordinator = self.coordinator
        group = coordinator.groups.get(group_id)
        if group is not None and group.kind != "consumer":
            if create and group.is_empty() and not group.members:
                coordinator._delete_group(group_id, write=True, keep_offsets=True)
                group = None
            else:
                raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
        if group is None:
            if not create:
                raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
            group = coordinator.groups[group_id] = ConsumerGroup(group_id)
        return group

    def _member(self, group: ConsumerGroup, member_id: str, instance_id: str | None, epoch: int,
                owned_entries) -> tuple[ConsumerMember, bool]:
        """The member a heartbeat speaks for, new or existing, with Kafka's epoch and static-member checks."""
        if instance_id is not None:
            current_id = next((m.member_id for m in group.members.values() if m.instance_id == instance_id), None)
            if epoch == 0:
                if current_id is None or current_id == member_id:
                    existing = group.members.get(member_id)
                    return (existing, False) if existing is not None else \
                        (ConsumerMember(member_id, instance_id=instance_id), True)
                old = group.members[current_id]
                if old.member_epoch != LEAVE_STATIC_EPOCH:
                    raise KafkaError(E.UNRELEASED_INSTANCE_ID,
                                     f"Static member {current_id} with instance id {instance_id} is not released.")
                return self._replace_static(group, old, member_id), False
            if current_id is None:
                raise KafkaError(E.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
            if current_id != member_id:
                raise KafkaError(E.FENCED_INSTANCE_ID, f"Instance id {instance_id} belongs to another member.")
        member = group.members.get(member_id)
        if epoch == 0:
            if member is None:
                return ConsumerMember(member_id, instance_id=instance_id), True
            return member, False
        if member is None:
            raise KafkaError(E.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group.group_id}.")
        if epoch > member.member_epoch:
            raise KafkaError(E.FENCED_MEMBER_EPOCH, f"The consumer group member has a greater member epoch "
                                                    f"({epoch}) than the one known by the group coordinator "
                                                    f"({member.member_epoch}).")
        if epoch < member.member_epoch:
            # The member missed the answer that bumped it: accepted if it owns only what it was given.
            owned = _partitions_in(owned_entries) if owned_entries is not None else None
            if epoch != member.previous_member_epoch or owned is None or \
                    any(not ps <= member.assigned.get(t, frozenset()) for t, ps in owned.items()):
                raise KafkaError(E.FENCED_MEMBER_EPOCH, f"The consumer group member has a smaller member epoch "
                                                        f"({epoch}) than the one known by the group coordinator "
                                                        f"({member.member_epoch}).")
        return member, False

    def _replace_static(self, group: ConsumerGroup, old: ConsumerMember, member_id: str) -> ConsumerMember:
        """KIP-848's static rejoin: the new member takes the old one's place, assignment and epoch, without a
        rebalance."""
        self.unschedule_member(group.group_id, old.member_id)
        written = group.member_tombstones(old.member_id)
        del group.members[old.member_id]
        target = group.target.pop(old.member_id, {})
        member = ConsumerMember(member_id, instance_id=old.instance_id, rack_id=old.rack_id,
                                client_id=old.client_id, client_host=old.client_host,
                                subscribed_topic_names=list(old.subscribed_topic_names),
                                subscribed_topic_regex=old.subscribed_topic_regex,
                                server_assignor=old.server_assignor, rebalance_timeout_ms=old.rebalance_timeout_ms,
                                member_epoch=old.previous_member_epoch, previous_member_epoch=old.previous_member_epoch,
                                state=old.state, assigned=old.assigned, pending_revocation=old.pending_revocation)
        group.members[member_id] = member
        group.target[member_id] = target
        written.extend(group.member_records(member))
        written.append(records.record(records.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER,
                                      {"group_id": group.group_id, "member_id": member_id},
                                      {"topic_partitions": _partitions_out(target)}))
        written.append(group.assignment_record(member))
        self.coordinator.write_records(group.group_id, written)
        log.info("group %s: static member %s replaced %s", group.group_id, member_id, old.member_id)
        return member

    def _leave(self, group: ConsumerGroup, member_id: str, instance_id: str | None, epoch: int) -> dict:
        member = group.members.get(member_id)
        if instance_id is not None:
            current = next((m for m in group.members.values() if m.instance_id == instance_id), None)
            if current is None:
                raise KafkaError(E.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
            if current.member_id != member_id:
                raise KafkaError(E.FENCED_INSTANCE_ID, f"Instance id {instance_id} belongs to another member.")
            member = current
        if member is None:
            raise KafkaError(E.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group.group_id}.")
        if epoch == LEAVE_STATIC_EPOCH:
            # A static member leaves for now: it keeps its assignment until its session runs out.
            member.previous_member_epoch = member.member_epoch
            member.member_epoch = LEAVE_STATIC_EPOCH
            self.coordinator.write_records(group.group_id, [group.assignment_record(member)])
            log.info("group %s: static member %s left for now", group.group_id, member_id)
        else:
            log.info("group %s: member %s left", group.group_id, member_id)
            self._remove_member(group, member.member_id)
        return {"throttle_time_ms": 0, "error_code": E.NONE, "error_message": None, "member_id": member_id,
                "member_epoch": epoch, "heartbeat_interval_ms": 0, "assignment": None}

    def _remove_member(self, group: ConsumerGroup, member_id: str) -> None:
        self.unschedule_member(group.group_id, member_id)
        del group.members[member_id]
        group.target.pop(member_id, None)
        written = group.member_tombstones(member_id)
        group.group_epoch += 1
        used = {m.subscribed_topic_regex for m in group.members.values()}
        for regex in [r for r in group.regexes if r not in used]:
            del group.regexes[regex]
            written.append(records.record(records.CONSUMER_GROUP_REGULAR_EXPRESSION,
                                          {"group_id": group.group_id, "regular_expression": regex}, None))
        group.metadata_hash = self._metadata_hash(group)
        written.append(group.group_record())
        self.coordinator.write_records(group.group_id, written)

    # -- subscriptions and assignment ----------------------------------------------------------------------------

    def _refresh_regexes(self, group: ConsumerGroup, describable: Callable[[frozenset[str]], set[str]]) -> list:
        """Resolve the members' regular expressions against the topics (Kafka matches the whole name, and never
        an internal topic), keeping only the topics the heartbeating member may DESCRIBE, as Kafka's
        TopicRegexResolver does with the request that triggers the refresh; a record for each whose matches
        changed. Classic members (online migration) subscribe by name and refresh nothing."""
        written = []
        wanted = {m.subscribed_topic_regex for m in group.members.values() if m.subscribed_topic_regex}
        names = [t.name for t in self.broker.cluster.topics.values() if not t.internal]
        resolved = {regex: frozenset(filter(_regex(regex).fullmatch, names)) for regex in wanted}
        allowed = describable(frozenset().union(*resolved.values())) if resolved else set()
        for regex, matches in resolved.items():
            matched = matches & allowed
            if group.regexes.get(regex) != matched:
                group.regexes[regex] = matched
                written.append(records.record(records.CONSUMER_GROUP_REGULAR_EXPRESSION,
                                              {"group_id": group.group_id, "regular_expression": regex},
                                              {"topics": sorted(matched), "version": 0,
                                               "timestamp": self.coordinator.now()}))
        return written

    def _metadata_hash(self, group: ConsumerGroup) -> int:
        """A hash of the subscribed topics' ids and partition counts (KIP-1101): a change bumps the epoch."""
        topics = self.broker.cluster.topics
        parts = []
        for name in sorted(group.subscribed_topics()):
            topic = topics.get(name)
            if topic is not None:
                parts.append(f"{name}:{topic.topic_id}:{len(topic.partitions)}")
        return zlib.crc32("|".join(parts).encode()) if parts else 0

    def _assign(self, group: ConsumerGroup) -> None:
        topics = self.broker.cluster.topics
        subscriptions: dict[str, frozenset[uuid.UUID]] = {}
        partitions: dict[uuid.UUID, int] = {}
        for member in group.members.values():
            names = set(member.subscribed_topic_names)
            if member.subscribed_topic_regex:
                names |= group.regexes.get(member.subscribed_topic_regex, frozenset())
            ids = set()
            for name in names:
                topic = topics.get(name)
                if topic is not None and not topic.internal:
                    ids.add(topic.topic_id)
                    partitions[topic.topic_id] = len(topic.partitions)
            subscriptions[member.member_id] = frozenset(ids)
        assignor = ASSIGNORS[group.preferred_assignor(self._assignors()[0])]
        group.target = assignor.assign(subscriptions, partitions, group.target)
        group.assignment_epoch = group.group_epoch
        log.info("group %s epoch %d: target assignment by %s for %d member(s)", group.group_id,
                 group.group_epoch, assignor.name, len(group.members))

    def _reconcile(self, group: ConsumerGroup, member: ConsumerMember, owned: Partitions | None) -> None:
        owners = group.owner_epochs()
        result = reconcile(member, group.assignment_epoch, group.target.get(member.member_id, {}), owned,
                           lambda t, p: owners.get((t, p), member.member_id) == member.member_id)
        if result is None:
            return
        was_unrevoked = member.state is MemberState.UNREVOKED_PARTITIONS
        if result.epoch != member.member_epoch:
            member.previous_member_epoch = member.member_epoch
        member.member_epoch, member.state = result.epoch, result.state
        member.assigned, member.pending_revocation = result.assigned, result.pending_revocation
        if member.state is MemberState.UNREVOKED_PARTITIONS and not was_unrevoked:
            self.schedule_revocation(group, member)
        elif member.state is not MemberState.UNREVOKED_PARTITIONS:
            self.coordinator._unschedule(("consumer-revocation", group.group_id, member.member_id))

    # -- classic members of a consumer group (Kafka's online migration) ----------------------------------------

    def classic_join(self, group: ConsumerGroup, body, version: int, client_id: str, client_host: str) -> dict:
        """JoinGroup into a non-empty KIP-848 group: the member joins as a classic member. The coordinator
        assigns (no leader, no member list); its generation is its member epoch (Kafka's
        classicGroupJoinToConsumerGroup)."""
        from kafkamock.broker.groups.coordinator import join_error, parse_subscription  # noqa: PLC0415

        member_id = body.member_id or ""
        instance_id = body.group_instance_id if version >= 5 else None
        protocols = [(p.name, bytes(p.metadata)) for p in body.protocols]
        if body.protocol_type != "consumer" or not protocols:
            return join_error(E.INCONSISTENT_GROUP_PROTOCOL, member_id)
        config = self.config
        if not config["group.min.session.timeout.ms"] <= body.session_timeout_ms <= \
                config["group.max.session.timeout.ms"]:
            return join_error(E.INVALID_SESSION_TIMEOUT, member_id)
        if not member_id and instance_id is None and version >= 4:
            return join_error(E.MEMBER_ID_REQUIRED, f"{client_id}-{uuid.uuid4()}")
        if not member_id:
            member_id = f"{instance_id or client_id}-{uuid.uuid4()}"
        member = group.members.get(member_id)
        if member is not None and member.classic is None:
            return join_error(E.UNKNOWN_MEMBER_ID, member_id)
        if instance_id is not None:
            holder = next((m for m in group.members.values() if m.instance_id == instance_id), None)
            if holder is not None and holder.member_id != member_id:
                return join_error(E.FENCED_INSTANCE_ID, member_id)
        topics = parse_subscription(protocols[0][1])
        if topics is None:
            return join_error(E.INCONSISTENT_GROUP_PROTOCOL, member_id)
        created = member is None
        if member is None:
            if len(group.members) >= config["group.consumer.max.size"]:
                return join_error(E.GROUP_MAX_SIZE_REACHED, member_id)
            member = ConsumerMember(member_id, instance_id=instance_id, client_id=client_id,
                                    client_host=client_host)
            group.members[member_id] = member
        rebalance_timeout = body.rebalance_timeout_ms if version >= 1 else body.session_timeout_ms
        changed = created or sorted(topics) != sorted(member.subscribed_topic_names) or \
            rebalance_timeout != member.rebalance_timeout_ms
        member.classic = ClassicDetails(body.session_timeout_ms, protocols)
        member.subscribed_topic_names, member.rebalance_timeout_ms = sorted(topics), rebalance_timeout
        written = group.member_records(member)
        self._advance(group, member, self._owned_from_subscription(protocols[0][1]), changed, written)
        return {"throttle_time_ms": 0, "error_code": E.NONE, "generation_id": member.member_epoch,
                "protocol_type": "consumer", "protocol_name": member.classic.protocol, "leader": "",
                "skip_assignment": False, "member_id": member_id, "members": []}

    def _owned_from_subscription(self, metadata: bytes) -> Partitions:
        """The partitions a classic member says it still owns (ConsumerProtocolSubscription v1+): none for an
        eager member, which gave everything up before it rejoined."""
        from kafkamock.codec import codec_for  # noqa: PLC0415

        version = int.from_bytes(metadata[:2], "big", signed=True) if len(metadata) >= 2 else 0
        if version < 1:
            return {}
        try:
            decoded, _ = codec_for("ConsumerProtocolSubscription", min(version, 3)).decode_from(bytes(metadata[2:]),
                                                                                              0)
        except Exception:  # noqa: BLE001 - an unreadable subscription owns nothing
            return {}
        topics = self.broker.cluster.topics
        owned: Partitions = {}
        for entry in decoded.owned_partitions or ():
            topic = topics.get(entry.topic)
            if topic is not None and entry.partitions:
                owned[topic.topic_id] = frozenset(entry.partitions)
        return owned

    def _advance(self, group: ConsumerGroup, member: ConsumerMember, owned: Partitions | None, changed: bool,
                 written: list) -> None:
        """The common tail of every member request: epochs, target, reconciliation, records, session."""
        bump = changed
        metadata_hash = self._metadata_hash(group)
        if metadata_hash != group.metadata_hash:
            group.metadata_hash = metadata_hash
            bump = True
        if bump:
            group.group_epoch += 1
            written.append(group.group_record())
        if group.group_epoch > group.assignment_epoch:
            self._assign(group)
            written.extend(group.target_records(self.coordinator.now()))
        before = (member.member_epoch, member.state, member.assigned, member.pending_revocation)
        self._reconcile(group, member, owned)
        if (member.member_epoch, member.state, member.assigned, member.pending_revocation) != before or changed:
            written.append(group.assignment_record(member))
        self.coordinator.write_records(group.group_id, written)
        self.session_ok(group, member)

    def _classic_member(self, group: ConsumerGroup, member_id: str, instance_id: str | None) -> ConsumerMember:
        member = group.members.get(member_id)
        if instance_id is not None:
            holder = next((m for m in group.members.values() if m.instance_id == instance_id), None)
            if holder is None:
                raise KafkaError(E.UNKNOWN_MEMBER_ID)
            if holder.member_id != member_id:
                raise KafkaError(E.FENCED_INSTANCE_ID)
        if member is None or member.classic is None:
            raise KafkaError(E.UNKNOWN_MEMBER_ID)
        return member

    def classic_sync(self, group: ConsumerGroup, body, version: int) -> dict:
        """SyncGroup of a classic member: its current assignment as a ConsumerProtocolAssignment."""
        from kafkamock import codec  # noqa: PLC0415
        from kafkamock.broker.groups.coordinator import sync_error  # noqa: PLC0415

        try:
            member = self._classic_member(group, body.member_id, body.group_instance_id if version >= 3 else None)
        except KafkaError as exc:
            return sync_error(exc.code)
        if body.generation_id != member.member_epoch:
            return sync_error(E.ILLEGAL_GENERATION)
        assert member.classic is not None                   # _classic_member refuses a member without it
        if version >= 5 and (body.protocol_type != "consumer" or body.protocol_name != member.classic.protocol):
            return sync_error(E.INCONSISTENT_GROUP_PROTOCOL)
        self.session_ok(group, member)
        by_id = self.broker.cluster.topics_by_id
        version_out = member.classic.subscription_version
        assignment = version_out.to_bytes(2, "big") + codec.encode("ConsumerProtocolAssignment", version_out, {
            "assigned_partitions": [{"topic": by_id[t].name, "partitions": sorted(ps)}
                                    for t, ps in sorted(member.assigned.items(), key=lambda i: str(i[0]))
                                    if t in by_id and ps],
            "user_data": None})
        return {"throttle_time_ms": 0, "error_code": E.NONE, "protocol_type": "consumer",
                "protocol_name": member.classic.protocol, "assignment": assignment}

    def classic_heartbeat(self, group: ConsumerGroup, body, version: int) -> ErrorCode:
        """Heartbeat of a classic member: REBALANCE_IN_PROGRESS when its assignment must change, so it rejoins."""
        try:
            member = self._classic_member(group, body.member_id, body.group_instance_id if version >= 3 else None)
        except KafkaError as exc:
            return exc.code
        if body.generation_id != member.member_epoch:
            return E.ILLEGAL_GENERATION
        self.session_ok(group, member)
        target = group.target.get(member.member_id, {})
        settled = member.state is MemberState.STABLE and member.member_epoch == group.assignment_epoch and \
            {t: ps for t, ps in member.assigned.items() if ps} == {t: ps for t, ps in target.items() if ps}
        return E.NONE if settled and group.group_epoch == group.assignment_epoch else E.REBALANCE_IN_PROGRESS

    def classic_leave(self, group: ConsumerGroup, identities) -> list[ErrorCode]:
        errors = []
        for member_id, instance_id, _reason in identities:
            if instance_id is not None:
                holder = next((m for m in group.members.values() if m.instance_id == instance_id), None)
                if holder is None:
                    errors.append(E.UNKNOWN_MEMBER_ID)
                    continue
                if member_id and holder.member_id != member_id:
                    errors.append(E.FENCED_INSTANCE_ID)
                    continue
                member_id = holder.member_id
            if member_id not in group.members:
                errors.append(E.UNKNOWN_MEMBER_ID)
                continue
            log.info("group %s: classic member %s left", group.group_id, member_id)
            self._remove_member(group, member_id)
            errors.append(E.NONE)
        return errors

    # -- ConsumerGroupDescribe -----------------------------------------------------------------------------------

    def describe(self, group_id: str) -> dict:
        """One ConsumerGroupDescribe entry (the handler fills in the authorized operations)."""
        group = self.coordinator.groups.get(group_id)
        base: dict[str, Any] = {"error_code": E.NONE, "error_message": None, "group_id": group_id,
                                "group_state": "", "group_epoch": 0, "assignment_epoch": 0, "assignor_name": "",
                                "members": [], "authorized_operations": -(2**31)}
        if group is None or getattr(group, "dead", False):
            return {**base, "error_code": E.GROUP_ID_NOT_FOUND, "error_message": f"Group {group_id} not found."}
        if group.kind != "consumer":
            return {**base, "error_code": E.GROUP_ID_NOT_FOUND,
                    "error_message": f"Group {group_id} is not a consumer group."}
        by_id = self.broker.cluster.topics_by_id

        def shown(partitions: Partitions) -> dict:
            return {"topic_partitions": [
                {"topic_id": t, "topic_name": by_id[t].name, "partitions": sorted(ps)}
                for t, ps in sorted(partitions.items(), key=lambda i: str(i[0])) if t in by_id and ps]}
        members = [{"member_id": m.member_id, "instance_id": m.instance_id, "rack_id": m.rack_id,
                    "member_epoch": m.member_epoch, "client_id": m.client_id, "client_host": m.client_host,
                    "subscribed_topic_names": sorted(m.subscribed_topic_names),
                    "subscribed_topic_regex": m.subscribed_topic_regex,
                    "assignment": shown(m.assigned), "target_assignment": shown(group.target.get(m.member_id, {})),
                    "member_type": CONSUMER_MEMBER_TYPE if m.classic is None else CLASSIC_MEMBER_TYPE}
                   for m in group.members.values()]
        return {**base, "group_state": group.state_name, "group_epoch": group.group_epoch,
                "assignment_epoch": group.assignment_epoch,
                "assignor_name": group.preferred_assignor(self._assignors()[0]), "members": members,
                "authorized_operations": -(2**31)}


# -- replay -----------------------------------------------------------------------------------------------------

def replay_record(kind: int, key, value, loaded: dict[str, Any], coordinator) -> None:
    """Apply one KIP-848 record of ``__consumer_offsets`` to the groups being rebuilt."""
    group_id = key.group_id
    group = loaded.get(group_id)
    if group is not None and group.kind != "consumer":
        if value is None:
            return
        group = None
    if group is None:
        if value is None:
            return
        group = loaded[group_id] = ConsumerGroup(group_id)
    member_id: str = getattr(key, "member_id", "")      # a string in the member records' keys (types 5, 7, 8)
    if kind == records.CONSUMER_GROUP_METADATA:
        if value is None:
            loaded.pop(group_id, None)
            return
        group.group_epoch, group.metadata_hash = value.epoch, value.metadata_hash
        group.creation_time_ms = value.creation_time_ms
    elif kind == records.CONSUMER_GROUP_MEMBER_METADATA:
        if value is None:
            group.members.pop(member_id, None)
            return
        member = group.members.setdefault(member_id, ConsumerMember(member_id))
        member.instance_id, member.rack_id = value.instance_id, value.rack_id
        member.client_id, member.client_host = value.client_id, value.client_host
        member.subscribed_topic_names = list(value.subscribed_topic_names)
        member.subscribed_topic_regex = value.subscribed_topic_regex
        member.rebalance_timeout_ms, member.server_assignor = value.rebalance_timeout_ms, value.server_assignor
        classic = value.classic_member_metadata
        member.classic = None if classic is None else ClassicDetails(
            classic.session_timeout_ms, [(p.name, bytes(p.metadata)) for p in classic.supported_protocols])
    elif kind == records.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT:
        member = group.members.get(member_id)
        if value is None or member is None:
            return
        member.member_epoch, member.previous_member_epoch = value.member_epoch, value.previous_member_epoch
        member.state = MemberState(value.state) if value.state in MemberState._value2member_map_ \
            else MemberState.STABLE
        member.assigned = _partitions_in(value.assigned_partitions)
        member.pending_revocation = _partitions_in(value.partitions_pending_revocation)
    elif kind == records.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER:
        if value is None:
            group.target.pop(member_id, None)
        else:
            group.target[member_id] = _partitions_in(value.topic_partitions)
    elif kind == records.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA:
        if value is not None:
            group.assignment_epoch = value.assignment_epoch
    elif kind == records.CONSUMER_GROUP_REGULAR_EXPRESSION:
        if value is None:
            group.regexes.pop(key.regular_expression, None)
        else:
            group.regexes[key.regular_expression] = frozenset(value.topics)
    # Partition metadata (type 4) is what Kafka before 4.1 wrote; the metadata hash replaced it.
