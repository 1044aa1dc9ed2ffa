"""The KIP-848 group protocol (``group.protocol=consumer``) from a member's side: ConsumerGroupHeartbeat carries
the subscription and the partitions owned, and brings back the assignment; the broker computes it.

The member reconciles: partitions the assignment no longer holds are revoke requests the consumer completes at a
later poll (KIP-983), and the heartbeat after the revoke reports them gone, which lets the broker hand them on. The
broker waits for that up to the rebalance timeout (max.poll.interval.ms) and then fences the member: its partitions
are lost.
"""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING

import trio

from kafkamock.client.cluster import COORDINATOR_MOVED, GROUP
from kafkamock.client.errors import KafkaError
from kafkamock.client.types import TopicPartition
from kafkamock.errors import ErrorCode

if TYPE_CHECKING:
    from kafkamock.client.consumer.consumer import Consumer

log = logging.getLogger(__name__)

FENCED = frozenset({ErrorCode.FENCED_MEMBER_EPOCH, ErrorCode.UNKNOWN_MEMBER_ID})
FATAL = frozenset({ErrorCode.GROUP_AUTHORIZATION_FAILED, ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                   ErrorCode.UNSUPPORTED_ASSIGNOR, ErrorCode.UNRELEASED_INSTANCE_ID, ErrorCode.GROUP_MAX_SIZE_REACHED,
                   ErrorCode.UNSUPPORTED_VERSION, ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REGULAR_EXPRESSION,
                   ErrorCode.INVALID_GROUP_ID})
LEAVE, LEAVE_STATIC = -1, -2


class ConsumerProtocolMembership:
    protocol = "consumer"

    def __init__(self, consumer: Consumer):
        self.consumer = consumer
        assert consumer.group_id is not None
        self.group_id: str = consumer.group_id
        self.instance_id: str | None = consumer.settings["group.instance.id"]
        self.member_id = str(uuid.uuid4())           # KIP-848 v1: the member names itself
        self.epoch = 0
        self.interval = consumer.settings["heartbeat.interval.ms"] / 1000
        self.fatal: KafkaError | None = None
        self.joined = trio.Event()
        self._sent_subscription: object = None
        self._sent_owned: set[TopicPartition] | None = None
        self._wake = trio.Event()
        self.rejoin_needed = True

    def commit_identity(self) -> tuple[int, str, str | None]:
        return self.epoch, self.member_id, self.instance_id

    def request_rejoin(self) -> None:
        """The subscription changed: the next heartbeat sends it."""
        self._sent_subscription = None
        self._wake.set()

    def revokes_completed(self, revoked: set[TopicPartition]) -> None:
        if revoked:
            self._wake.set()                          # report the smaller ownership at once

    async def ensure_active(self, deadline: float) -> None:
        if self.fatal is not None:
            raise self.fatal
        if self.epoch == 0:
            self._wake.set()
            with trio.move_on_at(deadline):
                await self.joined.wait()

    async def run(self) -> None:
        settings = self.consumer.settings
        while True:
            if self.epoch != 0 or self._sent_subscription is not None:
                with trio.move_on_after(self.interval):
                    await self._wake.wait()
            self._wake = trio.Event()
            if self.fatal is not None:
                return
            if self.epoch > 0 and trio.current_time() - self.consumer.last_poll > settings["max.poll.interval.ms"] / 1000:
                log.warning("consumer of group %r: poll not called for over max.poll.interval.ms; leaving the group",
                            self.group_id)
                await self.leave()
                self._fenced()
                self.consumer._wake_poll()
                await self.consumer.polled.wait()     # rejoin once the application polls again
                continue
            try:
                await self._heartbeat()
            except (OSError, ConnectionError) as exc:
                log.info("heartbeat of group %r failed: %s", self.group_id, exc)
                self.consumer.client.forget_coordinator(self.group_id, GROUP)
                await trio.sleep(self.consumer.client.retry_backoff_s)

    async def _heartbeat(self) -> None:
        consumer = self.consumer
        settings = consumer.settings
        joining = self.epoch == 0
        subscription = consumer.subscription_spec()
        body: dict = {"group_id": self.group_id, "member_id": self.member_id, "member_epoch": self.epoch,
                      "instance_id": self.instance_id, "rack_id": settings["client.rack"] or None,
                      "rebalance_timeout_ms": -1, "subscribed_topic_names": None, "subscribed_topic_regex": None,
                      "server_assignor": None, "topic_partitions": None}
        if joining or subscription != self._sent_subscription:
            names, regex = subscription
            body["subscribed_topic_names"] = list(names) if regex is None else None
            body["subscribed_topic_regex"] = regex
            if regex is not None and names:
                body["subscribed_topic_names"] = []
        if joining:
            body["rebalance_timeout_ms"] = settings["max.poll.interval.ms"]
            body["server_assignor"] = settings["group.remote.assignor"]
            if body["subscribed_topic_names"] is None:
                body["subscribed_topic_names"] = []
        owned = consumer.ownership.owned()
        if joining or owned != self._sent_owned:
            await consumer.client.metadata(list({tp.topic for tp in owned}) or [])
            ids = consumer.client.topic_ids
            by_topic: dict = {}
            for tp in sorted(owned):
                by_topic.setdefault(ids[tp.topic], []).append(tp.partition)
            body["topic_partitions"] = [{"topic_id": t, "partitions": ps} for t, ps in by_topic.items()]
        conn = await consumer.client.coordinator(self.group_id, GROUP)
        response = await conn.request("ConsumerGroupHeartbeat", body)
        code = response.error_code
        if code:
            if code in FENCED:
                log.info("member of group %r fenced (%s): its partitions are lost; rejoining", self.group_id,
                         ErrorCode(code).name)
                self._fenced()
                consumer._wake_poll()
            elif code in COORDINATOR_MOVED or code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
                consumer.client.forget_coordinator(self.group_id, GROUP)
                await trio.sleep(consumer.client.retry_backoff_s)
                self._wake.set()
            elif code in FATAL:
                self.fatal = KafkaError(code, response.error_message,
                                        what=f"ConsumerGroupHeartbeat of group {self.group_id!r}")
                consumer._wake_poll()
            else:
                log.warning("ConsumerGroupHeartbeat of group %r: %s", self.group_id, ErrorCode(code).name)
                await trio.sleep(consumer.client.retry_backoff_s)
            return
        self._sent_subscription = subscription
        self._sent_owned = owned
        self.member_id = response.member_id or self.member_id
        self.epoch = response.member_epoch
        if response.heartbeat_interval_ms > 0:
            self.interval = response.heartbeat_interval_ms / 1000
        if response.assignment is not None:
            by_id = consumer.client.topic_names
            unknown = [t.topic_id for t in response.assignment.topic_partitions if t.topic_id not in by_id]
            if unknown:
                await consumer.client.metadata(None)
                by_id = consumer.client.topic_names
            target = {TopicPartition(by_id[t.topic_id], p) for t in response.assignment.topic_partitions
                      if t.topic_id in by_id for p in t.partitions}
            consumer._assignment_received(target, revoke_missing=True)
            if consumer.ownership.owned() != owned:
                self._wake.set()                      # report the new ownership without waiting an interval
        self.rejoin_needed = False
        self.joined.set()

    def _fenced(self) -> None:
        self.epoch = 0
        self._sent_subscription = None
        self._sent_owned = None
        self.joined = trio.Event()
        self.rejoin_needed = True
        self.consumer._partitions_lost(None)

    async def leave(self) -> None:
        if self.epoch <= 0:
            return
        epoch = LEAVE_STATIC if self.instance_id is not None else LEAVE
        try:
            conn = await self.consumer.client.coordinator(self.group_id, GROUP)
            await conn.request("ConsumerGroupHeartbeat", {
                "group_id": self.group_id, "member_id": self.member_id, "member_epoch": epoch,
                "instance_id": self.instance_id, "rack_id": None, "rebalance_timeout_ms": -1,
                "subscribed_topic_names": None, "subscribed_topic_regex": None, "server_assignor": None,
                "topic_partitions": None})
        except (KafkaError, OSError, ConnectionError) as exc:
            log.info("leaving group %r failed: %s", self.group_id, exc)
        self.epoch = epoch
