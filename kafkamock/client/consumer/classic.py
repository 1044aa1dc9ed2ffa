"""The classic group protocol from a member's side: JoinGroup and SyncGroup in ``poll``, Heartbeat in the
background, LeaveGroup on close; the leader runs the assignor.

Eager assignors give up every partition before joining; cooperative ones (KIP-429) join while keeping them and give
up only what the new assignment takes away, then join again so the partitions can move. With KIP-983 the giving up
is a revoke request that the consumer completes at a later poll: an eager member joins once its revokes are done, a
cooperative one rejoins once they are.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

import trio

from kafkamock.client.cluster import COORDINATOR_MOVED, GROUP
from kafkamock.client.consumer.assignors import ASSIGNORS, COOPERATIVE, MemberSubscription, generation_of, user_data
from kafkamock.client.errors import KafkaError
from kafkamock.client.types import TopicPartition
from kafkamock.codec import DecodeError, Message, encode
from kafkamock.errors import ErrorCode

if TYPE_CHECKING:
    from kafkamock.client.consumer.consumer import Consumer
    from kafkamock.codec.messages import JoinGroupResponse

log = logging.getLogger(__name__)

MEMBERSHIP = "membership"         # JoinGroup waits for the other members: its own connection, so commits don't queue
SUBSCRIPTION_VERSION = 3          # what Java 4.x consumers send (owned partitions, generation, rack)
ASSIGNMENT_VERSION = 3
MEMBER_LOST = frozenset({ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.ILLEGAL_GENERATION})
FATAL = frozenset({ErrorCode.FENCED_INSTANCE_ID, ErrorCode.GROUP_MAX_SIZE_REACHED,
                   ErrorCode.INCONSISTENT_GROUP_PROTOCOL, ErrorCode.INVALID_SESSION_TIMEOUT,
                   ErrorCode.GROUP_AUTHORIZATION_FAILED, ErrorCode.INVALID_GROUP_ID, ErrorCode.UNSUPPORTED_VERSION})


def encode_subscription(topics: list[str], owned: list[TopicPartition], generation: int, assignor: str,
                        rack: str | None) -> bytes:
    by_topic: dict[str, list[int]] = {}
    for tp in sorted(owned):
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return SUBSCRIPTION_VERSION.to_bytes(2, "big") + encode("ConsumerProtocolSubscription", SUBSCRIPTION_VERSION, {
        "topics": sorted(topics), "user_data": user_data(assignor, generation),
        "owned_partitions": [{"topic": t, "partitions": ps} for t, ps in by_topic.items()],
        "generation_id": generation, "rack_id": rack or None})


def decode_subscription(member_id: str, instance_id: str | None, data: bytes, assignor: str) -> MemberSubscription:
    """A member's ConsumerProtocolSubscription, any version (a newer one is read as the newest we know: its new
    fields are at the end, as Kafka's compatibility rules require)."""
    version = int.from_bytes(data[:2], "big")
    body = data[2:]
    sub, _ = _decode_prefix("ConsumerProtocolSubscription", min(version, SUBSCRIPTION_VERSION), body)
    owned = [TopicPartition(t.topic, p) for t in sub.get("owned_partitions", []) for p in t.partitions]
    return MemberSubscription(member_id, list(sub.topics), owned,
                              generation_of(assignor, sub.user_data, sub.get("generation_id", -1)),
                              instance_id, sub.get("rack_id"))


def encode_assignment(partitions: list[TopicPartition]) -> bytes:
    by_topic: dict[str, list[int]] = {}
    for tp in sorted(partitions):
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return ASSIGNMENT_VERSION.to_bytes(2, "big") + encode("ConsumerProtocolAssignment", ASSIGNMENT_VERSION, {
        "assigned_partitions": [{"topic": t, "partitions": ps} for t, ps in by_topic.items()], "user_data": None})


def decode_assignment(data: bytes) -> list[TopicPartition]:
    if not data:
        return []
    version = int.from_bytes(data[:2], "big")
    assignment, _ = _decode_prefix("ConsumerProtocolAssignment", min(version, ASSIGNMENT_VERSION), data[2:])
    return [TopicPartition(t.topic, p) for t in assignment.assigned_partitions for p in t.partitions]


def _decode_prefix(name: str, version: int, data: bytes) -> tuple[Message, int]:
    from kafkamock.codec import codec_for

    return codec_for(name, version).decode_from(bytes(data), 0)


class ClassicMembership:
    """One member of a classic group. The consumer calls ``ensure_active`` from ``poll``; ``run`` heartbeats."""

    protocol = "classic"

    def __init__(self, consumer: Consumer):
        self.consumer = consumer
        assert consumer.group_id is not None
        self.group_id: str = consumer.group_id
        self.instance_id: str | None = consumer.settings["group.instance.id"]
        self.member_id = ""
        self.generation = -1
        self.assignor: str | None = None
        self.leader = False
        self.joining = False
        self.rejoin_needed = True
        self.fatal: KafkaError | None = None
        self._wake = trio.Event()
        self._joined = trio.Event()
        self.syncing = False
        self._synced = trio.Event()

    @property
    def cooperative(self) -> bool:
        return (self.assignor or self.consumer.assignors[0]) in COOPERATIVE

    # -- identity for commits -------------------------------------------------------------------------------------

    def commit_identity(self) -> tuple[int, str, str | None]:
        return self.generation, self.member_id, self.instance_id

    def request_rejoin(self) -> None:
        """A revoke completed, the subscription or the topics changed, or the group asked for a rebalance."""
        if not self.rejoin_needed:
            self.rejoin_needed = True
            if not self.cooperative:          # eager: everything is given up before the join
                self.consumer._request_revoke(self.consumer.ownership.owned())

    def revokes_completed(self, revoked: set[TopicPartition]) -> None:
        if revoked and self.cooperative:
            self.rejoin_needed = True

    # -- poll side ------------------------------------------------------------------------------------------------

    async def ensure_active(self, deadline: float) -> None:
        """Join the group when a rebalance is due, unless an eager member still has revokes to complete."""
        if self.fatal is not None:
            raise self.fatal
        if not self.rejoin_needed:
            return
        if not self.cooperative and self.consumer.ownership.owned():
            self.consumer._request_revoke(self.consumer.ownership.owned())
            return
        if not self.joining:
            # The join runs on its own: JoinGroup waits for every member, and a poll must not wait past its timeout
            # (two consumers polled in turn by one task would wait for each other).
            self.joining = True
            self._joined = trio.Event()
            self.consumer._start_background(self._join_in_background)
        with trio.move_on_at(deadline):
            await self._joined.wait()
        if self.fatal is not None:
            raise self.fatal

    async def sync_finished(self) -> None:
        """Until the SyncGroup under way (if any) is answered: between JoinGroup and SyncGroup answers the
        coordinator refuses commits (REBALANCE_IN_PROGRESS), before the JoinGroup answer it takes them."""
        if self.syncing:
            await self._synced.wait()

    async def _join_in_background(self) -> None:
        try:
            await self._join_and_sync()
        except (KafkaError, OSError, ConnectionError) as exc:
            if self.fatal is None and isinstance(exc, KafkaError) and not exc.retriable:
                self.fatal = exc
            log.info("joining group %r failed: %s", self.group_id, exc)
        finally:
            self.joining = False
            self._joined.set()
            self.consumer._wake_poll()

    async def _join_and_sync(self) -> None:
        consumer = self.consumer
        client = consumer.client
        settings = consumer.settings
        try:
            while self.rejoin_needed:
                topics = await consumer._subscribed_topics()
                owned = sorted(consumer.ownership.owned())
                protocols = [{"name": name, "metadata": encode_subscription(
                    topics, owned, self.generation, name, settings["client.rack"])} for name in consumer.assignors]
                conn = await client.coordinator(self.group_id, GROUP, MEMBERSHIP)
                response = await conn.request("JoinGroup", {
                    "group_id": self.group_id, "session_timeout_ms": settings["session.timeout.ms"],
                    "rebalance_timeout_ms": settings["max.poll.interval.ms"], "member_id": self.member_id,
                    "group_instance_id": self.instance_id, "protocol_type": "consumer", "protocols": protocols,
                    "reason": "kafkamock consumer joining"})
                code = response.error_code
                if code == ErrorCode.MEMBER_ID_REQUIRED:
                    self.member_id = response.member_id
                    continue
                if code:
                    await self._join_error(code, "JoinGroup")
                    continue
                self.member_id, self.generation = response.member_id, response.generation_id
                self.assignor = response.protocol_name
                self.leader = response.leader == response.member_id
                self.syncing, self._synced = True, trio.Event()
                try:
                    assignments = []
                    if self.leader:
                        assignments = await self._assign(response.members)
                    conn = await client.coordinator(self.group_id, GROUP, MEMBERSHIP)
                    sync = await conn.request("SyncGroup", {
                        "group_id": self.group_id, "generation_id": self.generation, "member_id": self.member_id,
                        "group_instance_id": self.instance_id, "protocol_type": "consumer",
                        "protocol_name": self.assignor, "assignments": assignments})
                finally:
                    self.syncing = False
                    self._synced.set()
                if sync.error_code:
                    await self._join_error(sync.error_code, "SyncGroup")
                    continue
                self.rejoin_needed = False
                try:
                    assigned = decode_assignment(sync.assignment)
                except DecodeError as exc:
                    raise KafkaError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, f"the assignment cannot be read: {exc}",
                                     what="SyncGroup") from None
                consumer._assignment_received(set(assigned), revoke_missing=True)
                self._wake.set()
        finally:
            self.joining = False

    async def _join_error(self, code: int, what: str) -> None:
        if code in FATAL:
            self.fatal = KafkaError(code, what=f"{what} of group {self.group_id!r}")
            raise self.fatal
        if code in MEMBER_LOST:
            self._membership_lost(code)
        elif code in COORDINATOR_MOVED:
            self.consumer.client.forget_coordinator(self.group_id, GROUP)
        elif code not in (ErrorCode.REBALANCE_IN_PROGRESS, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS):
            raise KafkaError(code, what=f"{what} of group {self.group_id!r}")
        self.rejoin_needed = True
        await trio.sleep(self.consumer.client.retry_backoff_s)

    def _membership_lost(self, code: int) -> None:
        """The group no longer knows this member (or this generation): every owned partition is lost."""
        if code == ErrorCode.UNKNOWN_MEMBER_ID:
            self.member_id = ""
        self.generation = -1
        self.rejoin_needed = True
        self.consumer._partitions_lost(None)

    async def _assign(self, members: Iterable[JoinGroupResponse.JoinGroupResponseMember]) -> list[dict]:
        assignor = self.assignor or self.consumer.assignors[0]
        subscriptions = [decode_subscription(m.member_id, m.group_instance_id, m.metadata, assignor)
                         for m in members]
        topics = sorted({t for s in subscriptions for t in s.topics})
        counts = await self.consumer._partition_counts(topics)
        result = ASSIGNORS[assignor](subscriptions, counts)
        return [{"member_id": mid, "assignment": encode_assignment(tps)} for mid, tps in result.items()]

    # -- background -----------------------------------------------------------------------------------------------

    async def run(self) -> None:
        """Heartbeat every heartbeat.interval.ms while the member is in a stable group; leave the group when the
        application stops polling for longer than max.poll.interval.ms (its partitions are then lost)."""
        settings = self.consumer.settings
        interval = settings["heartbeat.interval.ms"] / 1000
        while True:
            with trio.move_on_after(interval):
                await self._wake.wait()
            self._wake = trio.Event()
            if self.joining or self.rejoin_needed or not self.member_id or self.generation < 0:
                continue
            if trio.current_time() - self.consumer.last_poll > settings["max.poll.interval.ms"] / 1000:
                log.warning("consumer of group %r: poll not called for over max.poll.interval.ms; leaving the group",
                            self.group_id)
                await self.leave("the consumer poll timeout has expired")
                self._membership_lost(ErrorCode.UNKNOWN_MEMBER_ID)
                continue
            try:
                conn = await self.consumer.client.coordinator(self.group_id, GROUP, MEMBERSHIP)
                response = await conn.request("Heartbeat", {
                    "group_id": self.group_id, "generation_id": self.generation, "member_id": self.member_id,
                    "group_instance_id": self.instance_id})
            except (KafkaError, OSError, ConnectionError) as exc:
                log.info("heartbeat of group %r failed: %s", self.group_id, exc)
                self.consumer.client.forget_coordinator(self.group_id, GROUP)
                continue
            code = response.error_code
            if code == 0 or self.joining:
                continue
            if code == ErrorCode.REBALANCE_IN_PROGRESS:
                self.request_rejoin()
                self.consumer._wake_poll()
            elif code in MEMBER_LOST:
                self._membership_lost(code)
                self.consumer._wake_poll()
            elif code in COORDINATOR_MOVED:
                self.consumer.client.forget_coordinator(self.group_id, GROUP)
            elif code in FATAL:
                self.fatal = KafkaError(code, what=f"heartbeat of group {self.group_id!r}")
                self.consumer._wake_poll()

    async def leave(self, reason: str = "the consumer is closing") -> None:
        """LeaveGroup (a static member stays: its session timeout decides, as in Kafka)."""
        if not self.member_id or self.instance_id is not None:
            return
        try:
            conn = await self.consumer.client.coordinator(self.group_id, GROUP, MEMBERSHIP)
            if conn.version_for("LeaveGroup") >= 3:
                body = {"group_id": self.group_id, "members": [
                    {"member_id": self.member_id, "group_instance_id": None, "reason": reason}]}
            else:
                body = {"group_id": self.group_id, "member_id": self.member_id}
            await conn.request("LeaveGroup", body)
        except (KafkaError, OSError, ConnectionError) as exc:
            log.info("LeaveGroup of group %r failed: %s", self.group_id, exc)
        self.generation = -1
