"""KIP-848 consumer groups: ConsumerGroupHeartbeat, ConsumerGroupDescribe, their records and timers.

The broker runs the rebalance, as Kafka 4.3.1's GroupMetadataManager does: a member's heartbeat says what it
subscribes to and what it owns; the group's epoch moves whenever membership, a subscription or the subscribed
topics' partitions change; a newer group epoch gets a new target assignment from the server-side assignor
(``assignors.py``), at most once per ``group.consumer.assignment.interval.ms``, and each member reconciles towards
it at its own pace (``reconciliation.py``: revoke first, then assign). Regular expressions are resolved after the
heartbeat that brought them (Kafka resolves them in the background), at most every ten seconds. Sessions
(``group.consumer.session.timeout.ms``) and revocations (the member's rebalance timeout) run on the core's
timers. Every change is a record of ``__consumer_offsets`` in Kafka's formats (types 3-8 and 16), and only a
record changes a group: an operation computes on a copy of the group (``ConsumerGroup.copy``) and produces records;
the coordinator appends them and replays each through ``ConsumerGroups.replay``, the function a restart replays the
log with; answers and timers then read the group the records left. Only soft state no record holds (a regex
resolution under way, when one last ran, the topic names it saw) is set directly.

A group's state is derived, as in Kafka's ConsumerGroup: Empty (no member), Assigning (the target is older than
the group epoch), Reconciling (a member is not yet at the target), Stable. A new group starts at epoch 1 with a
target of epoch 1 (Kafka 4.3's initial TargetAssignmentMetadata), so its first member joins at epoch 2.
"""

from __future__ import annotations

import enum
import functools
import logging
import uuid
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from kafkamock.broker.config import server_assignor_names
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.groups import records
from kafkamock.broker.groups.assignors import ASSIGNORS
from kafkamock.broker.groups.classic import ClassicGroup
from kafkamock.broker.groups.offsets import CommitCheck, ExpireBy
from kafkamock.broker.groups.reconciliation import Epochs, MemberState, Partitions, plain, reconcile
from kafkamock.broker.groups.records import GroupRecord
from kafkamock.broker.re2_pattern import CompiledPattern, Re2SyntaxError, compile_re2
from kafkamock.codec.messages import ConsumerGroupDescribeResponse, ConsumerGroupHeartbeatResponse

if TYPE_CHECKING:
    from kafkamock.broker.cluster import Topic
    from kafkamock.broker.config import BrokerConfig
    from kafkamock.broker.groups.coordinator import GroupCoordinator
    from kafkamock.broker.services import CoordinatorServices
    from kafkamock.codec import messages

log = logging.getLogger("kafkamock.groups")
E = ErrorCode
LEAVE_EPOCH, LEAVE_STATIC_EPOCH = -1, -2
CLASSIC_MEMBER_TYPE, CONSUMER_MEMBER_TYPE = 0, 1
INITIAL_EPOCH = 1                                  # a new group's epoch and target epoch (Kafka 4.3)
REGEX_REFRESH_MIN_INTERVAL_MS = 10_000             # Kafka's REGEX_BATCH_REFRESH_MIN_INTERVAL_MS
Progress = tuple[int, MemberState, Epochs, Epochs]  # a member's (epoch, state, assigned, pending revocation)


class RegexUpdate(enum.Enum):
    NO_CHANGE = 0
    UPDATED = 1
    UPDATED_AND_RESOLVED = 2


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
    subscribed_topic_names: list[str] = field(default_factory=list)   # a set in Kafka: kept sorted
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    rebalance_timeout_ms: int = -1
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: MemberState = MemberState.STABLE
    assigned: Epochs = field(default_factory=dict)              # partition -> the epoch it was assigned at
    pending_revocation: Epochs = field(default_factory=dict)
    classic: ClassicDetails | None = None         # set for a classic-protocol member (the migration path)

    def subscription(self) -> tuple[object, ...]:
        """What the member record holds (a change of any of it is written)."""
        return (self.instance_id, self.rack_id, self.client_id, self.client_host,
                tuple(self.subscribed_topic_names), self.subscribed_topic_regex, self.server_assignor,
                self.rebalance_timeout_ms, self.classic)

    def is_reconciled_to(self, epoch: int) -> bool:
        return self.state is MemberState.STABLE and self.member_epoch == epoch

    def copy(self) -> ConsumerMember:
        """A scratch copy (its containers too) an operation may change freely."""
        return replace(self, subscribed_topic_names=list(self.subscribed_topic_names),
                       assigned={t: dict(ps) for t, ps in self.assigned.items()},
                       pending_revocation={t: dict(ps) for t, ps in self.pending_revocation.items()})

    def assignment_epoch(self, topic_id: uuid.UUID, partition: int) -> int | None:
        """KIP-1251: the epoch a partition it holds (assigned, else revoking) was assigned at."""
        epoch = self.assigned.get(topic_id, {}).get(partition)
        return epoch if epoch is not None else self.pending_revocation.get(topic_id, {}).get(partition)

    def metadata_value(self) -> dict[str, Any]:
        return {"instance_id": self.instance_id, "rack_id": self.rack_id, "client_id": self.client_id,
                "client_host": self.client_host, "subscribed_topic_names": list(self.subscribed_topic_names),
                "subscribed_topic_regex": self.subscribed_topic_regex,
                "rebalance_timeout_ms": self.rebalance_timeout_ms, "server_assignor": self.server_assignor,
                "classic_member_metadata": None if self.classic is None else {
                    "session_timeout_ms": self.classic.session_timeout_ms,
                    "supported_protocols": [{"name": n, "metadata": m} for n, m in self.classic.protocols]}}

    def assignment_value(self) -> dict[str, Any]:
        return {"member_epoch": self.member_epoch, "previous_member_epoch": self.previous_member_epoch,
                "state": int(self.state), "assigned_partitions": _epochs_out(self.assigned),
                "partitions_pending_revocation": _epochs_out(self.pending_revocation)}


@dataclass(frozen=True)
class ResolvedRegex:
    topics: frozenset[str]
    timestamp_ms: int


@dataclass(eq=False)
class ConsumerGroup:
    group_id: str
    group_epoch: int = INITIAL_EPOCH
    assignment_epoch: int = INITIAL_EPOCH
    assignment_timestamp_ms: int = 0             # when the target was last computed (0: never)
    metadata_hash: int = 0
    creation_time_ms: int = -1
    members: dict[str, ConsumerMember] = field(default_factory=dict)
    target: dict[str, Partitions] = field(default_factory=dict)      # member id -> target assignment
    regexes: dict[str, ResolvedRegex] = field(default_factory=dict)  # regular expression -> what it matched
    regex_refresh_ms: int = 0                    # when the regexes were last resolved
    # Soft state (in no record): every topic name at each regex's last resolution (a new one triggers a refresh;
    # none after a restart, as Kafka's regexes then carry an older metadata version), and whether a resolution
    # is under way (it runs after the heartbeat).
    regex_names_seen: dict[str, frozenset[str]] = field(default_factory=dict)
    regex_refreshing: bool = False
    dead: bool = False

    kind: ClassVar[Literal["consumer"]] = "consumer"
    protocol_type = "consumer"

    # -- what every group kind answers ---------------------------------------------------------------------------

    def is_empty(self) -> bool:
        return not self.members

    def copy(self) -> ConsumerGroup:
        """A scratch copy an operation computes on: the live group changes only when its records are replayed."""
        return replace(self, members={member_id: m.copy() for member_id, m in self.members.items()},
                       target=dict(self.target), regexes=dict(self.regexes),
                       regex_names_seen=dict(self.regex_names_seen))

    @property
    def state_name(self) -> str:
        if self.dead:
            return "Dead"
        if not self.members:
            return "Empty"
        if self.group_epoch > self.assignment_epoch:
            return "Assigning"
        if any(not m.is_reconciled_to(self.assignment_epoch) for m in self.members.values()):
            return "Reconciling"
        return "Stable"

    def static_member(self, instance_id: str | None) -> ConsumerMember | None:
        if instance_id is None:
            return None
        return next((m for m in self.members.values() if m.instance_id == instance_id), None)

    def regex_topics(self, regex: str | None) -> frozenset[str]:
        resolved = self.regexes.get(regex) if regex else None
        return resolved.topics if resolved is not None else frozenset()

    def member_topics(self, member: ConsumerMember) -> set[str]:
        return set(member.subscribed_topic_names) | set(self.regex_topics(member.subscribed_topic_regex))

    def subscribed_topics(self) -> set[str]:
        topics: set[str] = set()
        for member in self.members.values():
            topics |= self.member_topics(member)
        return topics

    def num_subscribed(self, regex: str) -> int:
        return sum(1 for m in self.members.values() if m.subscribed_topic_regex == regex)

    def is_subscribed_to(self, topic: str) -> bool:
        return topic in self.subscribed_topics()

    def offsets_expire_by(self) -> ExpireBy:
        """KIP-211 for consumer groups (Kafka's ConsumerGroup.offsetExpirationCondition): by commit time, and only
        offsets of topics no member subscribes to (an Empty group subscribes to none)."""
        return lambda offset: offset.commit_timestamp_ms

    def validate_commit(self, member_id: str, instance_id: str | None, epoch: int, version: int,
                        transactional: bool) -> CommitCheck | None:
        """Kafka's ConsumerGroup.validateOffsetCommit: an admin or standalone commit (epoch < 0) only into an
        empty group; a member commits with OffsetCommit v9+ (v8 cannot carry an epoch) at its current epoch, or
        (KIP-1251) at an older one for the partitions assigned to it at or before that epoch. Returns None or a
        per-partition check ``(topic name, topic id, partition) -> ErrorCode``."""
        if epoch < 0 and not self.members:
            return None
        if transactional and epoch < 0 and not member_id and instance_id is None:
            return None
        member = self.members.get(member_id)
        if member is None:
            raise KafkaError(E.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {self.group_id}.")
        classic = member.classic is not None
        if not transactional and not classic and version < 9:
            raise KafkaError(E.UNSUPPORTED_VERSION, "OffsetCommit version 9 or above must be used by members "
                                                    "using the consumer group protocol")
        if epoch == member.member_epoch:
            return None
        error = E.ILLEGAL_GENERATION if classic else E.STALE_MEMBER_EPOCH
        if epoch > member.member_epoch:
            what = "generation id" if classic else "member epoch"
            raise KafkaError(error, f"Received {what} {epoch} is newer than current member epoch "
                                    f"{member.member_epoch}.")

        def check(topic: str, topic_id: uuid.UUID | None, partition: int) -> tuple[ErrorCode, str] | None:
            assigned_at = member.assignment_epoch(topic_id, partition) if topic_id is not None else None
            if assigned_at is None:
                return error, f"Partition {topic}-{partition} is not assigned or pending revocation for member."
            if epoch < assigned_at:
                what = "generation id" if classic else "member epoch"
                return error, (f"Received {what} {epoch} is older than assignment epoch {assigned_at} for "
                               f"partition {topic}-{partition}.")
            return None
        return check

    def validate_offset_fetch(self, member_id: str | None, epoch: int) -> None:
        """Kafka's ConsumerGroup.validateOffsetFetch."""
        if member_id is None and epoch < 0:
            return
        member = self.members.get(member_id or "")
        if member is None:
            raise KafkaError(E.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {self.group_id}.")
        if epoch != member.member_epoch:
            if member.classic is not None:
                raise KafkaError(E.ILLEGAL_GENERATION, f"The received generation id {epoch} does not match the "
                                                       f"expected member epoch {member.member_epoch}.")
            raise KafkaError(E.STALE_MEMBER_EPOCH, f"The received member epoch {epoch} does not match the "
                                                   f"expected member epoch {member.member_epoch}.")

    # -- partition ownership -------------------------------------------------------------------------------------

    def owners(self) -> dict[tuple[uuid.UUID, int], str]:
        """(topic id, partition) -> the member that holds it (assigned or still revoking)."""
        owners: dict[tuple[uuid.UUID, int], str] = {}
        for member in self.members.values():
            for held in (member.assigned, member.pending_revocation):
                for topic_id, partitions in held.items():
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

    def group_record(self) -> GroupRecord:
        return records.record(records.CONSUMER_GROUP_METADATA, {"group_id": self.group_id},
                              {"epoch": self.group_epoch, "metadata_hash": self.metadata_hash,
                               "creation_time_ms": self.creation_time_ms})

    def member_records(self, member: ConsumerMember) -> list[GroupRecord]:
        key = {"group_id": self.group_id, "member_id": member.member_id}
        return [records.record(records.CONSUMER_GROUP_MEMBER_METADATA, key, member.metadata_value())]

    def assignment_record(self, member: ConsumerMember) -> GroupRecord:
        key = {"group_id": self.group_id, "member_id": member.member_id}
        return records.record(records.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT, key, member.assignment_value())

    def target_member_record(self, member_id: str) -> GroupRecord:
        return records.record(records.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER,
                              {"group_id": self.group_id, "member_id": member_id},
                              {"topic_partitions": partitions_out(self.target.get(member_id, {}))})

    def target_metadata_record(self) -> GroupRecord:
        return records.record(records.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA, {"group_id": self.group_id},
                              {"assignment_epoch": self.assignment_epoch,
                               "assignment_timestamp": self.assignment_timestamp_ms})

    def regex_record(self, regex: str) -> GroupRecord:
        key = {"group_id": self.group_id, "regular_expression": regex}
        resolved = self.regexes.get(regex)
        if resolved is None:
            return records.record(records.CONSUMER_GROUP_REGULAR_EXPRESSION, key, None)
        return records.record(records.CONSUMER_GROUP_REGULAR_EXPRESSION, key, {
            "topics": sorted(resolved.topics), "version": 0, "timestamp": resolved.timestamp_ms})

    def member_tombstones(self, member_id: str) -> list[GroupRecord]:
        key = {"group_id": self.group_id, "member_id": member_id}
        return [records.record(records.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT, key, None),
                records.record(records.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER, key, None),
                records.record(records.CONSUMER_GROUP_MEMBER_METADATA, key, None)]

    def tombstones(self) -> list[GroupRecord]:
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

    def removed(self, coordinator: GroupCoordinator) -> None:
        self.dead = True
        for member_id in self.members:
            coordinator.consumer.unschedule_member(self.group_id, member_id)

    def loaded(self, coordinator: GroupCoordinator) -> None:
        """After a replay: every member's session starts again, as Kafka's coordinator does on load."""
        for member in self.members.values():
            coordinator.consumer.session_ok(self, member)
            if member.state is MemberState.UNREVOKED_PARTITIONS:
                coordinator.consumer.schedule_revocation(self, member)


def metadata_hash(topics: Mapping[str, Topic], names: Iterable[str]) -> int:
    """A hash of the subscribed topics' ids and partition counts (KIP-1101's metadata hash, ModernGroup's
    computeMetadataHash): a change bumps the group epoch. Stable across restarts, as the one in the group's record
    must be; 0 when no subscribed topic exists."""
    parts = []
    for name in sorted(names):
        topic = topics.get(name)
        if topic is not None:
            parts.append(f"{name}:{topic.topic_id}:{len(topic.partitions)}")
    return zlib.crc32("|".join(parts).encode()) if parts else 0


def partitions_out(partitions: Mapping[uuid.UUID, frozenset[int]]) -> list[dict[str, Any]]:
    """Partitions as the group records hold them: by topic id, sorted, empty topics left out."""
    return [{"topic_id": t, "partitions": sorted(ps)} for t, ps in sorted(partitions.items(), key=lambda i: str(i[0]))
            if ps]


def _epochs_out(epochs: Epochs) -> list[dict[str, Any]]:
    out = []
    for topic_id, partitions in sorted(epochs.items(), key=lambda i: str(i[0])):
        if partitions:
            ordered = sorted(partitions)
            out.append({"topic_id": topic_id, "partitions": ordered,
                        "assignment_epochs": [partitions[p] for p in ordered]})
    return out


class _TopicPartitions(Protocol):
    """A (topic id, partitions) entry of a heartbeat or a record."""

    @property
    def topic_id(self) -> uuid.UUID: ...

    @property
    def partitions(self) -> list[int]: ...


def partitions_in(entries: Iterable[_TopicPartitions] | None) -> Partitions:
    """A record's or heartbeat's (topic id, partitions) entries, merged by topic."""
    out: Partitions = {}
    for entry in entries or ():
        if entry.partitions:
            out[entry.topic_id] = out.get(entry.topic_id, frozenset()) | frozenset(entry.partitions)
    return out


def _epochs_in(entries: Iterable[_TopicPartitions] | None, default_epoch: int) -> Epochs:
    """A record's partitions with their assignment epochs (records written before KIP-1251 have none: the member
    epoch stands in, as Kafka does)."""
    out: Epochs = {}
    for entry in entries or ():
        epochs = getattr(entry, "assignment_epochs", None)
        if epochs is None or len(epochs) != len(entry.partitions):
            epochs = [default_epoch] * len(entry.partitions)
        out.setdefault(entry.topic_id, {}).update(zip(entry.partitions, epochs, strict=True))
    return out


def _owned(entries: Iterable[_TopicPartitions] | None) -> Partitions | None:
    return None if entries is None else partitions_in(entries)


def _is_subset(owned: Partitions | None, assigned: Epochs) -> bool:
    """Kafka's isSubset: every partition the member reports is assigned to it (an unknown report is not)."""
    if owned is None:
        return False
    return all(topic_id in assigned and all(p in assigned[topic_id] for p in ps) for topic_id, ps in owned.items())


def _regex(pattern: str) -> CompiledPattern:
    """A SubscribedTopicRegex compiled with RE2 (linear-time, as Kafka's RE2/J), or INVALID_REGULAR_EXPRESSION with
    Kafka's message."""
    try:
        return compile_re2(pattern)
    except Re2SyntaxError as exc:
        raise KafkaError(E.INVALID_REGULAR_EXPRESSION,
                         f"SubscribedTopicRegex `{pattern}` is not a valid regular expression: {exc.description}.") \
            from None


@functools.lru_cache(maxsize=8)
def _serves_consumer_protocol(protocols: str) -> bool:
    """``group.coordinator.rebalance.protocols`` lists ``consumer`` (parsed once a value: ApiVersions asks each time)."""
    return "consumer" in {p.strip().lower() for p in protocols.split(",")}


class ConsumerGroups:
    """The KIP-848 half of the coordinator: ``heartbeat`` and ``describe``; offsets, records and timers are the
    coordinator's."""

    def __init__(self, coordinator: GroupCoordinator) -> None:
        self.coordinator = coordinator

    @property
    def services(self) -> CoordinatorServices:
        return self.coordinator.services

    @property
    def config(self) -> BrokerConfig:
        return self.coordinator.config

    def enabled(self) -> bool:
        """Whether ``group.coordinator.rebalance.protocols`` serves KIP-848's protocol."""
        return _serves_consumer_protocol(self.config["group.coordinator.rebalance.protocols"])

    def now(self) -> int:
        return self.coordinator.now()

    def live(self, group_id: str) -> ConsumerGroup | None:
        """The consumer group the coordinator holds as ``group_id`` (None when there is none, or another kind)."""
        group = self.coordinator.groups.get(group_id)
        return group if isinstance(group, ConsumerGroup) and not group.dead else None

    def _write(self, group_id: str, written: list[GroupRecord]) -> ConsumerGroup | None:
        """Append and replay an operation's records; the group as they left it."""
        self.coordinator.write_records(group_id, written)
        return self.live(group_id)

    # -- timers --------------------------------------------------------------------------------------------------
    # Timers name the group and member by id, and look the live group up when they fire: what an operation
    # computes is a scratch copy, and the group it finds may have been replaced (deleted, converted) meanwhile.

    def session_ok(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        timeout = member.classic.session_timeout_ms if member.classic is not None else \
            self.coordinator.configs.value(group.group_id, "consumer.session.timeout.ms")
        group_id, member_id = group.group_id, member.member_id
        self.coordinator._schedule(("consumer-session", group_id, member_id), timeout,
                                   lambda: self._fence(group_id, member_id, None, "its session timed out"))

    def schedule_revocation(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        """Kafka's scheduleConsumerGroupRebalanceTimeout: fenced unless it leaves this epoch in time."""
        timeout = member.rebalance_timeout_ms
        group_id, epoch, member_id = group.group_id, member.member_epoch, member.member_id
        self.coordinator._schedule(("consumer-revocation", group_id, member_id), timeout,
                                   lambda: self._fence(group_id, member_id, epoch,
                                                       f"it did not leave epoch {epoch} within {timeout} ms"))

    def unschedule_member(self, group_id: str, member_id: str) -> None:
        self.coordinator._unschedule(("consumer-session", group_id, member_id))
        self.coordinator._unschedule(("consumer-revocation", group_id, member_id))

    def _revocation_timer(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        """After a member's assignment changed: its rebalance timeout runs while it must revoke (a classic
        member has none: its rejoin does the revoking)."""
        if member.classic is not None:
            return
        if member.state is MemberState.UNREVOKED_PARTITIONS:
            self.schedule_revocation(group, member)
        else:
            self.coordinator._unschedule(("consumer-revocation", group.group_id, member.member_id))

    def _fence(self, group_id: str, member_id: str, epoch: int | None, why: str) -> None:
        """A timer ran out: the member goes, if it is still there (at ``epoch``, for a revocation)."""
        group = self.live(group_id)
        member = group.members.get(member_id) if group is not None else None
        if group is None or member is None or (epoch is not None and member.member_epoch != epoch):
            return
        log.info("group %s: member %s fenced: %s", group_id, member_id, why)
        self._remove_member(group, member_id)

    # -- the heartbeat -------------------------------------------------------------------------------------------

    def heartbeat(self, body: messages.ConsumerGroupHeartbeatRequest, version: int, client_id: str, client_host: str,
                  describable: Callable[[frozenset[str]], set[str]]) -> ConsumerGroupHeartbeatResponse:
        """ConsumerGroupHeartbeat: join (epoch 0), heartbeat (the current epoch), leave (-1) or leave for now as
        a static member (-2). Returns the response body; errors raise KafkaError. ``describable`` says which
        topics the requester may DESCRIBE: the group's regular expressions resolve to those only.

        The heartbeat computes on a copy of the group and only produces records (Kafka's consumerGroupHeartbeat);
        replaying them changes the group, and the answer is read from the group they left."""
        group_id, member_id, epoch = body.group_id, body.member_id or "", body.member_epoch
        instance_id = body.instance_id
        regex = body.subscribed_topic_regex if version >= 1 else None
        self._validate(body, version, member_id, epoch, regex)
        if epoch in (LEAVE_EPOCH, LEAVE_STATIC_EPOCH):
            return self._leave(self._existing(group_id), member_id, instance_id, epoch)
        joining = epoch == 0
        group = self._group(group_id, create=joining).copy()
        if len(group.members) >= self.config["group.consumer.max.size"] and \
                (not member_id or member_id not in group.members):
            raise KafkaError(E.GROUP_MAX_SIZE_REACHED, f"The consumer group has reached its maximum capacity of "
                                                       f"{self.config['group.consumer.max.size']} members.")
        if not member_id:
            member_id = str(uuid.uuid4())          # v0: the coordinator names the member
        owned = _owned(body.topic_partitions)
        written: list[GroupRecord] = []
        replaced: str | None = None
        if instance_id is None:
            member = self._dynamic_member(group, member_id, epoch, owned, joining)
        else:
            member, replaced = self._static_member(group, member_id, epoch, instance_id, owned, joining, written)
        before = (member.member_epoch, member.state, member.assigned, member.pending_revocation)
        old = replace(member)
        member.client_id, member.client_host, member.classic = client_id, client_host, None
        if instance_id is not None:
            member.instance_id = instance_id
        if body.rack_id is not None:
            member.rack_id = body.rack_id
        if body.rebalance_timeout_ms != -1:
            member.rebalance_timeout_ms = body.rebalance_timeout_ms
        if body.server_assignor is not None:
            member.server_assignor = body.server_assignor
        if body.subscribed_topic_names is not None:
            member.subscribed_topic_names = sorted(set(body.subscribed_topic_names))
        if regex is not None:
            member.subscribed_topic_regex = regex or None
        new_member = member.member_id not in group.members
        names_changed = False
        if new_member or member.subscription() != old.subscription():
            written.extend(group.member_records(member))
            names_changed = member.subscribed_topic_names != old.subscribed_topic_names
        regex_update, resolve = self._update_regexes(group, old, member, written)
        created = False
        if new_member:
            if not group.members and group.creation_time_ms < 0:
                group.creation_time_ms = self.now()
                created = True
            group.members[member.member_id] = member
        subscription_changed = names_changed or regex_update is not RegexUpdate.NO_CHANGE
        moved = self._advance(group, member, owned,
                              names_changed or regex_update is RegexUpdate.UPDATED_AND_RESOLVED,
                              subscription_changed, written, before, created)
        live = self._write(group_id, written)
        assert live is not None                  # a member record or the group's existence keeps it
        if replaced is not None:
            self.unschedule_member(group_id, replaced)
        member = live.members[member.member_id]
        if moved:
            self._revocation_timer(live, member)
        self.session_ok(live, member)
        if resolve is not None:
            self._start_resolution(live, resolve, describable)
        answer = ConsumerGroupHeartbeatResponse(
            throttle_time_ms=0, error_code=E.NONE, error_message=None, member_id=member.member_id,
            member_epoch=member.member_epoch,
            heartbeat_interval_ms=self.coordinator.configs.value(group_id, "consumer.heartbeat.interval.ms"),
            assignment=None)
        full = body.rebalance_timeout_ms != -1 and owned is not None and \
            (body.subscribed_topic_names is not None or regex is not None)
        if joining or full or member.assigned != before[2]:
            answer.assignment = ConsumerGroupHeartbeatResponse.Assignment(topic_partitions=[
                ConsumerGroupHeartbeatResponse.TopicPartitions(topic_id=t, partitions=sorted(ps))
                for t, ps in sorted(plain(member.assigned).items(), key=lambda i: str(i[0])) if ps])
        return answer

    def _validate(self, body: messages.ConsumerGroupHeartbeatRequest, version: int, member_id: str, epoch: int,
                  regex: str | None) -> None:
        """Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid, in its order."""
        if version >= 1 or epoch > 0 or epoch == LEAVE_EPOCH:
            if not member_id:
                raise KafkaError(E.INVALID_REQUEST, "MemberId can't be empty.")
        if not body.group_id:
            raise KafkaError(E.INVALID_REQUEST, "GroupId can't be empty.")
        if body.instance_id is not None and not body.instance_id:
            raise KafkaError(E.INVALID_REQUEST, "InstanceId can't be empty.")
        if body.rack_id is not None and not body.rack_id:
            raise KafkaError(E.INVALID_REQUEST, "RackId can't be empty.")
        if epoch == 0:
            if body.rebalance_timeout_ms == -1:
                raise KafkaError(E.INVALID_REQUEST, "RebalanceTimeoutMs must be provided in first request.")
            if body.topic_partitions is None or body.topic_partitions:
                raise KafkaError(E.INVALID_REQUEST, "TopicPartitions must be empty when (re-)joining.")
            if body.subscribed_topic_names is None and regex is None:
                raise KafkaError(E.INVALID_REQUEST, "Either SubscribedTopicNames or SubscribedTopicRegex must be "
                                                    "non-null when (re-)joining.")
        elif epoch == LEAVE_STATIC_EPOCH:
            if body.instance_id is None:
                raise KafkaError(E.INVALID_REQUEST, "InstanceId can't be null.")
        elif epoch < LEAVE_STATIC_EPOCH:
            raise KafkaError(E.INVALID_REQUEST, "MemberEpoch is invalid.")
        if body.server_assignor is not None and body.server_assignor not in self._assignors():
            raise KafkaError(E.UNSUPPORTED_ASSIGNOR,
                             f"ServerAssignor {body.server_assignor} is not supported. Supported assignors: "
                             f"{', '.join(self._assignors())}.")

    def _assignors(self) -> list[str]:
        return server_assignor_names(self.config["group.consumer.assignors"])

    def _existing(self, group_id: str) -> ConsumerGroup:
        """Kafka's consumerGroup(groupId): the group, which must be a consumer group."""
        group = self.coordinator.groups.get(group_id)
        if group is None or getattr(group, "dead", False):
            raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
        if not isinstance(group, ConsumerGroup):
            raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
        return group

    def _group(self, group_id: str, *, create: bool) -> ConsumerGroup:
        """Kafka's getOrMaybeCreateConsumerGroup: a joining member creates the group, or replaces an empty
        classic group (its offsets stay)."""
        coordinator = self.coordinator
        group = coordinator.groups.get(group_id)
        if group is None and not create:
            raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Consumer group {group_id} not found.")
        if group is not None and not isinstance(group, ConsumerGroup):
            if create and isinstance(group, ClassicGroup) and group.is_empty() and not group.members:
                coordinator._delete_group(group_id, keep_offsets=True)
                group = None
            elif create and isinstance(group, ClassicGroup):
                return self._upgrade(group)
            else:
                raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
        if group is None:
            # As Kafka's getOrMaybeCreateConsumerGroup: the new group, Empty and without records yet, is in the table
            # at once (a join that then fails leaves it, Empty); its records, replayed, make everything else.
            group = coordinator.groups[group_id] = ConsumerGroup(group_id)
        return group

    def _upgrade(self, classic: ClassicGroup) -> ConsumerGroup:
        """Kafka's online upgrade (validateOnlineUpgrade, convertToConsumerGroup): a KIP-848 member joining a
        classic group that runs the consumer protocol turns it into a consumer group whose members stay classic
        members, at the classic generation as their epoch, with their last assignment as current and target.
        Parked JoinGroup and SyncGroup requests are answered REBALANCE_IN_PROGRESS so those members rejoin. The
        consumer group is built aside; the classic group's tombstone and its records, replayed, swap them."""
        from kafkamock.broker.groups.coordinator import join_error, parse_subscription, sync_error  # noqa: PLC0415
        from kafkamock.codec import codec_for  # noqa: PLC0415

        group_id = classic.group_id
        if classic.protocol_type != "consumer":
            raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Cannot upgrade classic group {group_id} to consumer group "
                                                   f"because the group does not use the consumer embedded protocol.")
        if len(classic.members) > self.config["group.consumer.max.size"]:
            raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Cannot upgrade classic group {group_id} to consumer group "
                                                   f"because the group size exceeds the consumer group maximum "
                                                   f"size.")
        topics = self.services.metadata.topics
        group = ConsumerGroup(group_id, group_epoch=classic.generation, assignment_epoch=classic.generation,
                              creation_time_ms=self.now())
        for old in classic.members.values():
            assigned: Partitions = {}
            if old.assignment:
                try:
                    version = max(0, min(int.from_bytes(old.assignment[:2], "big", signed=True), 3))
                    decoded, _ = codec_for("ConsumerProtocolAssignment", version).decode_from(
                        bytes(old.assignment[2:]), 0)
                except Exception:  # noqa: BLE001 - Kafka's SchemaException
                    raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Cannot upgrade classic group {group_id} to consumer "
                                                           f"group because the embedded consumer protocol is "
                                                           f"malformed.") from None
                if decoded.user_data:
                    raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Cannot upgrade classic group {group_id} to consumer "
                                                           f"group because an unsupported custom assignor is in use."
                                                           f" Please refer to the documentation or switch to a "
                                                           f"default assignor before re-attempting the upgrade.")
                for entry in decoded.assigned_partitions:
                    if entry.topic in topics and entry.partitions:
                        assigned[topics[entry.topic].topic_id] = frozenset(entry.partitions)
            metadata = old.metadata(classic.protocol) if classic.protocol else \
                (old.protocols[0][1] if old.protocols else b"")
            subscribed = parse_subscription(metadata)
            if subscribed is None:
                raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Cannot upgrade classic group {group_id} to consumer group "
                                                       f"because the embedded consumer protocol is malformed.")
            member = ConsumerMember(old.member_id, instance_id=old.group_instance_id, client_id=old.client_id,
                                    client_host=old.client_host, subscribed_topic_names=sorted(subscribed),
                                    rebalance_timeout_ms=old.rebalance_timeout_ms,
                                    member_epoch=classic.generation, previous_member_epoch=classic.generation,
                                    assigned={t: dict.fromkeys(ps, classic.generation) for t, ps in
                                              assigned.items()},
                                    classic=ClassicDetails(old.session_timeout_ms, list(old.protocols)))
            group.members[member.member_id] = member
            group.target[member.member_id] = assigned
        group.metadata_hash = self._metadata_hash(group)
        coordinator = self.coordinator
        for old in classic.members.values():
            coordinator._notify(old.awaiting_join, join_error(E.REBALANCE_IN_PROGRESS, old.member_id))
            coordinator._notify(old.awaiting_sync, sync_error(E.REBALANCE_IN_PROGRESS))
            coordinator._unschedule(("heartbeat", group_id, old.member_id))
        coordinator._delete_group(group_id, keep_offsets=True)
        written = [r for m in group.members.values() for r in group.member_records(m)]
        written.append(group.group_record())
        written.extend(group.target_member_record(m) for m in group.members)
        written.append(group.target_metadata_record())
        written.extend(group.assignment_record(m) for m in group.members.values())
        live = self._write(group_id, written)        # replaying them makes the consumer group
        assert live is not None
        for member in live.members.values():
            self.session_ok(live, member)
        log.info("group %s: converted the classic group to a consumer group", group_id)
        return live

    def _dynamic_member(self, group: ConsumerGroup, member_id: str, epoch: int, owned: Partitions | None,
                        joining: bool) -> ConsumerMember:
        member = group.members.get(member_id)
        if member is None:
            if not joining:
                raise KafkaError(E.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group "
                                                      f"{group.group_id}.")
            return ConsumerMember(member_id)
        self._check_epoch(member, epoch, owned)
        return member

    def _check_epoch(self, member: ConsumerMember, epoch: int, owned: Partitions | None) -> None:
        """Kafka's throwIfConsumerGroupMemberEpochIsInvalid."""
        if epoch == 0:
            return
        if epoch > member.member_epoch:
            raise KafkaError(E.FENCED_MEMBER_EPOCH, f"The consumer group member has a greater member epoch ({epoch})"
                                                    f" than the one known by the group coordinator "
                                                    f"({member.member_epoch}). The member must abandon all its "
                                                    f"partitions and rejoin.")
        if epoch < member.member_epoch and (epoch != member.previous_member_epoch or
                                            not _is_subset(owned, member.assigned)):
            raise KafkaError(E.FENCED_MEMBER_EPOCH, f"The consumer group member has a smaller member epoch ({epoch})"
                                                    f" than the one known by the group coordinator "
                                                    f"({member.member_epoch}). The member must abandon all its "
                                                    f"partitions and rejoin.")

    def _static_member(self, group: ConsumerGroup, member_id: str, epoch: int, instance_id: str,
                       owned: Partitions | None, joining: bool, written: list[GroupRecord]
                       ) -> tuple[ConsumerMember, str | None]:
        """Kafka's getOrMaybeSubscribeStaticConsumerGroupMember: a joining instance is new, or replaces the
        member that left with epoch -2 (taking its assignment over, at epoch 0). Returns the member and the id of
        the one it replaced (whose timers go once the records are written)."""
        existing = group.static_member(instance_id)
        if joining:
            if existing is None:
                return group.members.get(member_id) or ConsumerMember(member_id), None
            if existing.classic is None and existing.member_epoch != LEAVE_STATIC_EPOCH:
                raise KafkaError(E.UNRELEASED_INSTANCE_ID, f"Static member {member_id} with instance id "
                                                           f"{instance_id} cannot join the group because the "
                                                           f"instance id is owned by {existing.member_id} member.")
            return self._replace_static(group, existing, member_id, written), existing.member_id
        if existing is None:
            raise KafkaError(E.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
        if existing.member_id != member_id:
            raise KafkaError(E.FENCED_INSTANCE_ID, f"Static member {member_id} with instance id {instance_id} was "
                                                   f"fenced by member {existing.member_id}.")
        self._check_epoch(existing, epoch, owned)
        return existing, None

    def _replace_static(self, group: ConsumerGroup, old: ConsumerMember, member_id: str,
                        written: list[GroupRecord]) -> ConsumerMember:
        """KIP-848's static rejoin: the new member takes the old one's place and assignment at epoch 0 (in the
        scratch ``group``, and in the records)."""
        written.extend(group.member_tombstones(old.member_id))
        del group.members[old.member_id]
        target = group.target.pop(old.member_id, {})
        member = replace(old, member_id=member_id, member_epoch=0, previous_member_epoch=0)
        group.members[member_id] = member
        group.target[member_id] = target
        written.extend(group.member_records(member))
        written.append(group.target_member_record(member_id))
        written.append(group.assignment_record(member))
        log.info("group %s: static member %s replaced %s", group.group_id, member_id, old.member_id)
        return member

    def _leave(self, group: ConsumerGroup, member_id: str, instance_id: str | None, epoch: int
               ) -> ConsumerGroupHeartbeatResponse:
        """Kafka's consumerGroupLeave: -1 removes the member; -2 keeps a static member's place (its assignment
        stays, its partitions' epochs reset to 0) until it comes back or its session runs out."""
        answer = ConsumerGroupHeartbeatResponse(
            throttle_time_ms=0, error_code=E.NONE, error_message=None, member_id=member_id, member_epoch=epoch,
            heartbeat_interval_ms=0, assignment=None)
        if instance_id is None:
            if member_id not in group.members:
                raise KafkaError(E.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group "
                                                      f"{group.group_id}.")
            log.info("group %s: member %s left", group.group_id, member_id)
            self._remove_member(group, member_id)
            return answer
        member = group.static_member(instance_id)
        if member is None:
            raise KafkaError(E.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
        if member.member_id != member_id:
            raise KafkaError(E.FENCED_INSTANCE_ID, f"Static member {member_id} with instance id {instance_id} was "
                                                   f"fenced by member {member.member_id}.")
        if epoch == LEAVE_STATIC_EPOCH:
            left = replace(member, member_epoch=LEAVE_STATIC_EPOCH, pending_revocation={},
                           assigned={t: dict.fromkeys(ps, 0) for t, ps in member.assigned.items()})
            self._write(group.group_id, [group.assignment_record(left)])
            log.info("group %s: static member %s left for now", group.group_id, member_id)
            answer.member_id = member.member_id
            return answer
        log.info("group %s: static member %s left", group.group_id, member_id)
        self._remove_member(group, member.member_id)
        return answer

    def _remove_member(self, live: ConsumerGroup, member_id: str) -> None:
        """Kafka's consumerGroupFenceMember: the member's records go, unused regular expressions too, and the
        group epoch moves (the target follows on a later heartbeat)."""
        group = live.copy()
        del group.members[member_id]
        group.target.pop(member_id, None)
        written = group.member_tombstones(member_id)
        for regex in [r for r in group.regexes if not group.num_subscribed(r)]:
            del group.regexes[regex]
            written.append(group.regex_record(regex))
        group.group_epoch += 1
        group.metadata_hash = self._metadata_hash(group)
        written.append(group.group_record())
        self._write(group.group_id, written)
        self.unschedule_member(group.group_id, member_id)

    # -- subscriptions and assignment ----------------------------------------------------------------------------

    def _update_regexes(self, group: ConsumerGroup, old: ConsumerMember, member: ConsumerMember,
                        written: list[GroupRecord]) -> tuple[RegexUpdate, frozenset[str] | None]:
        """Kafka's maybeUpdateRegularExpressions: note a changed regex (a new one is validated and must be
        resolved first; one the group already resolved counts at once), and say which regexes to resolve when a
        resolution is due (the caller starts it once the heartbeat's records are written)."""
        now = self.now()
        before, after = old.subscribed_topic_regex, member.subscribed_topic_regex
        update = RegexUpdate.NO_CHANGE
        require = False
        subscribed = {m.subscribed_topic_regex for m in group.members.values() if m.subscribed_topic_regex}
        if before != after:
            update = RegexUpdate.UPDATED
            if before and group.num_subscribed(before) == 1 and group.members.get(old.member_id) is not None:
                group.regexes.pop(before, None)              # it was the last member on it
                written.append(group.regex_record(before))
            if after:
                if group.num_subscribed(after) == 0:
                    _regex(after)
                    require = True
                elif after in group.regexes:
                    update = RegexUpdate.UPDATED_AND_RESOLVED
            elif before:
                update = RegexUpdate.UPDATED_AND_RESOLVED
        if not require and not subscribed:
            return update, None
        if group.regex_refreshing or now <= group.regex_refresh_ms + REGEX_REFRESH_MIN_INTERVAL_MS:
            return update, None
        wanted = set(subscribed)
        if before and group.num_subscribed(before) == 1 and group.members.get(old.member_id) is not None:
            wanted.discard(before)
        if after:
            wanted.add(after)
        names = frozenset(self.services.metadata.topics)
        require = require or len(wanted) != len(group.regexes) or \
            any(not names <= group.regex_names_seen.get(r, frozenset()) for r in group.regexes) or \
            now > group.regex_refresh_ms + self.config["group.consumer.regex.refresh.interval.ms"]
        return update, frozenset(wanted) if require and wanted else None

    def _start_resolution(self, group: ConsumerGroup, regexes: frozenset[str],
                          describable: Callable[[frozenset[str]], set[str]]) -> None:
        """Resolve ``regexes`` right after the heartbeat (Kafka resolves them in the background)."""
        group.regex_refreshing = True
        group_id, started_ms = group.group_id, self.now()
        self.coordinator._schedule(("consumer-regex", group_id), 0,
                                   lambda: self._resolve_regexes(group_id, regexes, describable, started_ms))

    def _resolve_regexes(self, group_id: str, regexes: frozenset[str],
                         describable: Callable[[frozenset[str]], set[str]], started_ms: int) -> None:
        """Kafka's TopicRegexResolver and handleRegularExpressionsResult, after the heartbeat that asked: each
        regex matches whole topic names (internal topics included), only those the asking member may DESCRIBE;
        a changed result moves the group epoch."""
        live = self.live(group_id)
        if live is None:
            return
        live.regex_refreshing = False
        live.regex_refresh_ms = started_ms
        names = frozenset(self.services.metadata.topics)
        matched = {regex: frozenset(filter(_regex(regex).fullmatch, names)) for regex in regexes}
        allowed = describable(frozenset().union(*matched.values())) if matched else set()
        group = live.copy()
        written = []
        resolved = []
        bump = False
        for regex, topics in matched.items():
            if not group.num_subscribed(regex):
                continue
            topics = frozenset(topics & allowed)
            previous = group.regexes.get(regex)
            if (previous.topics if previous is not None else frozenset()) != topics:
                bump = True
            group.regexes[regex] = ResolvedRegex(topics, started_ms)
            resolved.append(regex)
            written.append(group.regex_record(regex))
        metadata_hash = self._metadata_hash(group)
        if metadata_hash != group.metadata_hash:
            bump = True
        if bump:
            group.group_epoch += 1
            group.metadata_hash = metadata_hash
            written.append(group.group_record())
        live = self._write(group_id, written)
        if live is not None:
            live.regex_names_seen.update(dict.fromkeys(resolved, names))

    def _metadata_hash(self, group: ConsumerGroup) -> int:
        return metadata_hash(self.services.metadata.topics, group.subscribed_topics())

    def _subscribed_ids(self, group: ConsumerGroup, member: ConsumerMember) -> frozenset[uuid.UUID]:
        topics = self.services.metadata.topics
        return frozenset(topics[n].topic_id for n in group.member_topics(member) if n in topics)

    def _advance(self, group: ConsumerGroup, member: ConsumerMember, owned: Partitions | None, bump: bool,
                 subscription_changed: bool, written: list[GroupRecord], before: Progress, created: bool = False
                 ) -> bool:
        """The common tail of every member request (Kafka's steps 1-3), on the scratch group: the group epoch,
        the target (at most once per assignment interval), the member's reconciliation, and their records
        (``created``: the group's record carries its new creation time). Whether the member's assignment moved."""
        metadata_hash = self._metadata_hash(group)
        if metadata_hash != group.metadata_hash:
            group.metadata_hash = metadata_hash
            bump = True
        if bump:
            group.group_epoch += 1
        if bump or created:
            written.append(group.group_record())
        if group.group_epoch > group.assignment_epoch and self._may_assign(group):
            self._assign(group)
            written.extend(group.target_member_record(m) for m in group.target)
            written.append(group.target_metadata_record())
        moved = self._reconcile(group, member, owned, subscription_changed)
        if (member.member_epoch, member.state, member.assigned, member.pending_revocation) != before:
            written.append(group.assignment_record(member))
        return moved

    def _may_assign(self, group: ConsumerGroup) -> bool:
        """Kafka's canComputeNextTargetAssignment: at once the first time, then once per interval (the group's
        consumer.assignment.interval.ms, else the broker's)."""
        interval = self.coordinator.configs.value(group.group_id, "consumer.assignment.interval.ms")
        return group.assignment_timestamp_ms == 0 or interval == 0 or \
            self.now() >= group.assignment_timestamp_ms + interval

    def _assign(self, group: ConsumerGroup) -> None:
        topics = self.services.metadata.topics
        subscriptions: dict[str, frozenset[uuid.UUID]] = {}
        partitions: dict[uuid.UUID, int] = {}
        for member in group.members.values():
            ids = set()
            for name in group.member_topics(member):
                topic = topics.get(name)
                if topic is not None:
                    ids.add(topic.topic_id)
                    partitions[topic.topic_id] = len(topic.partitions)
            subscriptions[member.member_id] = frozenset(ids)
        assignor = ASSIGNORS[group.preferred_assignor(self._assignors()[0])]
        group.target = assignor.assign(subscriptions, partitions, group.target,
                                       {m.member_id: m.instance_id for m in group.members.values()})
        group.assignment_epoch = group.group_epoch
        group.assignment_timestamp_ms = self.now()
        log.info("group %s epoch %d: target assignment by %s for %d member(s)", group.group_id,
                 group.group_epoch, assignor.name, len(group.members))

    def _reconcile(self, group: ConsumerGroup, member: ConsumerMember, owned: Partitions | None,
                   subscription_changed: bool = False) -> bool:
        """Kafka's maybeReconcile: the member's next state (whether it changed: its rebalance timeout then runs
        while it must revoke, ``_revocation_timer``)."""
        owners = group.owners()
        result = reconcile(member, group.assignment_epoch, group.target.get(member.member_id, {}), owned,
                           lambda t, p: (t, p) in owners, self._subscribed_ids(group, member),
                           subscription_changed)
        if result is None:
            return False
        changed = (result.epoch, result.previous_epoch, result.state, result.assigned, result.pending_revocation) \
            != (member.member_epoch, member.previous_member_epoch, member.state, member.assigned,
                member.pending_revocation)
        member.member_epoch, member.previous_member_epoch = result.epoch, result.previous_epoch
        member.state, member.assigned, member.pending_revocation = result.state, result.assigned, \
            result.pending_revocation
        return changed

    # -- classic members of a consumer group (Kafka's online migration) ----------------------------------------

    def classic_join(self, live: ConsumerGroup, body: messages.JoinGroupRequest, version: int, client_id: str,
                     client_host: str) -> dict[str, Any]:
        """JoinGroup into a non-empty KIP-848 group: the member joins as a classic member. The coordinator
        assigns (no leader, no member list); its generation is its member epoch (Kafka's
        classicGroupJoinToConsumerGroup). Computed on a copy; the records, replayed, change the group."""
        from kafkamock.broker.groups.coordinator import join_error, parse_subscription  # noqa: PLC0415

        group = live.copy()
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
        names_changed = sorted(topics) != sorted(member.subscribed_topic_names)
        before = (member.member_epoch, member.state, member.assigned, member.pending_revocation)
        member.classic = ClassicDetails(body.session_timeout_ms, protocols)
        member.subscribed_topic_names, member.rebalance_timeout_ms = sorted(topics), rebalance_timeout
        written = group.member_records(member)
        moved = self._advance(group, member, self._owned_from_subscription(protocols[0][1]),
                              created or names_changed, names_changed, written, before)
        after = self._write(group.group_id, written)
        assert after is not None
        member = after.members[member_id]
        if moved:
            self._revocation_timer(after, member)
        self.session_ok(after, member)
        assert member.classic is not None                   # its member record says it is a classic member
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
        topics = self.services.metadata.topics
        owned: Partitions = {}
        for entry in decoded.owned_partitions or ():
            topic = topics.get(entry.topic)
            if topic is not None and entry.partitions:
                owned[topic.topic_id] = frozenset(entry.partitions)
        return owned

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

    def classic_sync(self, group: ConsumerGroup, body: messages.SyncGroupRequest, version: int) -> dict[str, Any]:
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
        by_id = self.services.metadata.topics_by_id
        version_out = member.classic.subscription_version
        assignment = version_out.to_bytes(2, "big") + codec.encode("ConsumerProtocolAssignment", version_out, {
            "assigned_partitions": [{"topic": by_id[t].name, "partitions": sorted(ps)}
                                    for t, ps in sorted(plain(member.assigned).items(), key=lambda i: str(i[0]))
                                    if t in by_id],
            "user_data": None})
        return {"throttle_time_ms": 0, "error_code": E.NONE, "protocol_type": "consumer",
                "protocol_name": member.classic.protocol, "assignment": assignment}

    def classic_heartbeat(self, group: ConsumerGroup, body: messages.HeartbeatRequest, version: int) -> ErrorCode:
        """Heartbeat of a classic member: REBALANCE_IN_PROGRESS when its assignment must change, so it rejoins."""
        try:
            member = self._classic_member(group, body.member_id, body.group_instance_id if version >= 3 else None)
        except KafkaError as exc:
            return exc.code
        if body.generation_id != member.member_epoch:
            return E.ILLEGAL_GENERATION
        self.session_ok(group, member)
        # Kafka's classicGroupHeartbeatToConsumerGroup: rejoin when the target moved past the member, when it
        # must revoke, or when the partitions it waits for have all been released.
        if member.member_epoch < group.assignment_epoch or member.state is MemberState.UNREVOKED_PARTITIONS:
            return E.REBALANCE_IN_PROGRESS
        if member.state is MemberState.UNRELEASED_PARTITIONS:
            owners = group.owners()
            waiting = any((t, p) in owners for t, ps in group.target.get(member.member_id, {}).items() for p in ps
                          if p not in member.assigned.get(t, {}))
            if not waiting:
                return E.REBALANCE_IN_PROGRESS
        return E.NONE

    def classic_leave(self, group: ConsumerGroup, identities: Iterable[tuple[str, str | None, str | None]]
                      ) -> list[ErrorCode]:
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

    def describe(self, group_id: str) -> ConsumerGroupDescribeResponse.DescribedGroup:
        """One ConsumerGroupDescribe entry (the handler fills in the authorized operations)."""
        group = self.coordinator.groups.get(group_id)
        described = ConsumerGroupDescribeResponse.DescribedGroup

        def not_found(message: str) -> ConsumerGroupDescribeResponse.DescribedGroup:
            return described(error_code=E.GROUP_ID_NOT_FOUND, error_message=message, group_id=group_id,
                             group_state="", group_epoch=0, assignment_epoch=0, assignor_name="", members=[],
                             authorized_operations=-(2**31))
        if group is None or getattr(group, "dead", False):
            return not_found(f"Group {group_id} not found.")
        if not isinstance(group, ConsumerGroup):
            return not_found(f"Group {group_id} is not a consumer group.")
        by_id = self.services.metadata.topics_by_id

        def shown(partitions: Partitions) -> ConsumerGroupDescribeResponse.Assignment:
            return ConsumerGroupDescribeResponse.Assignment(topic_partitions=[
                ConsumerGroupDescribeResponse.TopicPartitions(topic_id=t, topic_name=by_id[t].name,
                                                              partitions=sorted(ps))
                for t, ps in sorted(partitions.items(), key=lambda i: str(i[0])) if t in by_id and ps])

        def held(m: ConsumerMember) -> Partitions:      # assigned and still revoking: the member has both
            out = plain(m.assigned)
            for t, ps in plain(m.pending_revocation).items():
                out[t] = out.get(t, frozenset()) | ps
            return out
        members = [ConsumerGroupDescribeResponse.Member(
            member_id=m.member_id, instance_id=m.instance_id, rack_id=m.rack_id, member_epoch=m.member_epoch,
            client_id=m.client_id, client_host=m.client_host,
            subscribed_topic_names=sorted(m.subscribed_topic_names),
            subscribed_topic_regex=m.subscribed_topic_regex or "", assignment=shown(held(m)),
            target_assignment=shown(group.target.get(m.member_id, {})),
            member_type=CONSUMER_MEMBER_TYPE if m.classic is None else CLASSIC_MEMBER_TYPE)
            for m in group.members.values()]
        return described(error_code=E.NONE, error_message=None, group_id=group_id, group_state=group.state_name,
                         group_epoch=group.group_epoch, assignment_epoch=group.assignment_epoch,
                         assignor_name=group.preferred_assignor(self._assignors()[0]), members=members,
                         authorized_operations=-(2**31))

    # -- replay --------------------------------------------------------------------------------------------------

    def replay(self, kind: int, key: Any, value: Any) -> None:
        """Apply one KIP-848 record of ``__consumer_offsets`` (Kafka's GroupMetadataManager.replay of each consumer
        group record type), right after its append at run time and when the log is loaded alike."""
        groups = self.coordinator.groups
        group_id = key.group_id
        found = groups.get(group_id)
        group = found if isinstance(found, ConsumerGroup) else None     # a group of another kind gives way
        if group is None:
            if value is None:
                return
            group = groups[group_id] = ConsumerGroup(group_id)
        member_id: str = getattr(key, "member_id", "")      # a string in the member records' keys (types 5, 7, 8)
        if kind == records.CONSUMER_GROUP_METADATA:
            if value is None:
                self.coordinator.drop_group(group_id)
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
            member.subscribed_topic_names = sorted(set(value.subscribed_topic_names))
            member.subscribed_topic_regex = value.subscribed_topic_regex or None
            member.rebalance_timeout_ms, member.server_assignor = value.rebalance_timeout_ms, value.server_assignor
            classic = value.classic_member_metadata
            member.classic = None if classic is None else ClassicDetails(
                classic.session_timeout_ms, [(p.name, bytes(p.metadata)) for p in classic.supported_protocols])
        elif kind == records.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT:
            existing = group.members.get(member_id)
            if value is None or existing is None:
                return
            existing.member_epoch, existing.previous_member_epoch = value.member_epoch, value.previous_member_epoch
            existing.state = MemberState(value.state) if value.state in MemberState._value2member_map_ \
                else MemberState.STABLE
            existing.assigned = _epochs_in(value.assigned_partitions, value.member_epoch)
            existing.pending_revocation = _epochs_in(value.partitions_pending_revocation, value.member_epoch)
        elif kind == records.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER:
            if value is None:
                group.target.pop(member_id, None)
            else:
                group.target[member_id] = partitions_in(value.topic_partitions)
        elif kind == records.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA:
            if value is not None:
                group.assignment_epoch = value.assignment_epoch
                group.assignment_timestamp_ms = max(0, getattr(value, "assignment_timestamp", 0))
        elif kind == records.CONSUMER_GROUP_REGULAR_EXPRESSION:
            regex = key.regular_expression
            if value is None:
                group.regexes.pop(regex, None)
                group.regex_names_seen.pop(regex, None)
            else:
                group.regexes[regex] = ResolvedRegex(frozenset(value.topics), value.timestamp)
                group.regex_refresh_ms = max(group.regex_refresh_ms, value.timestamp)
        # Partition metadata (type 4) is what Kafka before 4.1 wrote; the metadata hash replaced it.
