"""kafkamock's share consumer (KIP-932 share groups, KIP-1222 RENEW), modelled on Kafka 4.3's KafkaShareConsumer.

    async with ShareConsumer({"bootstrap.servers": bootstrap, "group.id": "workers",
                              "share.acknowledgement.mode": "explicit"}) as consumer:
        consumer.subscribe(["jobs"])
        for record in await consumer.poll(1.0):
            consumer.acknowledge(record, AcknowledgeType.RENEW)     # still working: keep the lock
        await consumer.commit_sync()                                 # the renewal goes out (ShareAcknowledge v2)
        for record in await consumer.poll(1.0):                      # the renewed records come back
            consumer.acknowledge(record, AcknowledgeType.ACCEPT)

Membership is a ShareGroupHeartbeat loop to the share group's coordinator, found as Java finds it (FindCoordinator
with key type GROUP: key type SHARE names the share-state coordinator of a "group:topicId:partition" key); the member
id is a client-made Uuid, as Java 4.x's. Records come from one share session per partition leader (ShareFetch epoch 0 opens it, each request
carries the next epoch, -1 closes it); acknowledgements ride on the next ShareFetch to the node the records came
from, or go in a ShareAcknowledge for ``commit_sync``/``commit_async``/``close``. As in Java, a record acknowledged
with RENEW stays with this consumer: the next poll sends the renewal (a ShareFetch with IsRenewAck, which acquires
nothing) and then returns the renewed records again, fetching nothing new until they are back in the application's
hands.
"""

from __future__ import annotations

import base64
import logging
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

import trio

from kafkamock.client.cluster import COORDINATOR_MOVED, GROUP, KafkaClient
from kafkamock.client.config import SHARE_CONSUMER, parse
from kafkamock.client.connection import KafkaConnection, KafkaConnectionError
from kafkamock.client.errors import IllegalStateError, KafkaError
from kafkamock.client.security import security_from
from kafkamock.client.types import ConsumerRecord, TopicPartition
from kafkamock.errors import ErrorCode
from kafkamock.records import CorruptRecordError, decode_batches

log = logging.getLogger(__name__)

SHARE_FETCH, SHARE_ACKNOWLEDGE = 78, 79
GAP = 0                                   # AcknowledgeTypes' "gap": an acquired offset that holds no record
INITIAL_EPOCH, FINAL_EPOCH, MAX_EPOCH = 0, -1, 2**31 - 1
LEAVE_EPOCH = -1
LEADER_MOVED = frozenset({ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.LEADER_NOT_AVAILABLE,
                          ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.UNKNOWN_LEADER_EPOCH,
                          ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_ID,
                          ErrorCode.KAFKA_STORAGE_ERROR, ErrorCode.REPLICA_NOT_AVAILABLE})
FENCED = frozenset({ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_MEMBER_EPOCH})


class AcknowledgeType(IntEnum):
    """How a record was processed (Java's AcknowledgeType; the values are the wire's)."""

    ACCEPT = 1      # processed: never delivered again
    RELEASE = 2     # not processed: deliver again (to anyone), delivery count + 1
    REJECT = 3      # unprocessable: never delivered again
    RENEW = 4       # KIP-1222: still processing; restart the acquisition lock, keep the record


AcknowledgementCommitCallback = Callable[[dict[TopicPartition, set[int]], BaseException | None], Any]


@dataclass(eq=False)
class _Delivery:
    """A record acquired by this member: its node (acknowledgements go to the session it came from) and the
    application's acknowledgement, None until given."""

    record: ConsumerRecord
    node_id: int
    ack: int | None = None

    @property
    def key(self) -> tuple[TopicPartition, int]:
        return self.record.topic_partition, self.record.offset


@dataclass(eq=False)
class _Session:
    """This member's share session on one node: the epoch its next request carries and the partitions the
    broker has in it. One request at a time (the epochs must follow each other)."""

    node_id: int
    epoch: int = INITIAL_EPOCH
    partitions: set[tuple[Any, int]] = field(default_factory=set)
    lock: trio.Lock = field(default_factory=trio.Lock)

    def advance(self) -> None:
        self.epoch = 1 if self.epoch == MAX_EPOCH else self.epoch + 1

    def reset(self) -> None:
        self.epoch, self.partitions = INITIAL_EPOCH, set()


# {(node id, partition): {offset: acknowledge type}}: acknowledgements taken from the application, not yet sent
Pending = dict[tuple[int, TopicPartition], dict[int, int]]


def new_member_id() -> str:
    """A member id as Java 4.x makes one (``Uuid.randomUuid().toString()``: URL-safe base64, no padding)."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()


def acknowledgement_batches(acks: Mapping[int, int]) -> list[dict]:
    """AcknowledgementBatches: runs of consecutive offsets with one type each (gaps are type 0)."""
    batches: list[dict] = []
    for offset in sorted(acks):
        kind = acks[offset]
        last = batches[-1] if batches else None
        if last is not None and last["last_offset"] == offset - 1 and last["acknowledge_types"] == [kind]:
            last["last_offset"] = offset
        else:
            batches.append({"first_offset": offset, "last_offset": offset, "acknowledge_types": [kind]})
    return batches


class ShareConsumer:
    """A share-group consumer, as a trio async context manager (``kafkamock.client.blocking.ShareConsumer``
    blocks instead). Settings are the Java share consumer's (``kafkamock.client.config.SHARE_CONSUMER``)."""

    def __init__(self, config: Mapping[str, Any] | None = None, **settings: Any):
        self.settings = s = parse(SHARE_CONSUMER, {**(config or {}), **settings}, "share consumer")
        if not s["group.id"]:
            raise ValueError("share consumer: 'group.id' is required")
        self.group_id: str = s["group.id"]
        self.explicit = s["share.acknowledgement.mode"] == "explicit"
        self.record_limit = s["share.acquire.mode"] == "record_limit"
        self.client = KafkaClient(s["bootstrap.servers"], client_id=s["client.id"], security=security_from(s),
                                  retry_backoff_s=s["retry.backoff.ms"] / 1000,
                                  api_timeout_s=s["default.api.timeout.ms"] / 1000)
        self.member_id = new_member_id()
        self.member_epoch = 0
        self._topics: list[str] = []
        self._topics_sent: list[str] | None = None
        self._assigned_ids: dict[Any, list[int]] = {}          # the last assignment, by topic id
        self._heartbeat_interval_s = 5.0
        self._membership_wake = trio.Event()
        self._assignment_changed = trio.Event()
        self._fatal: BaseException | None = None
        self._sessions: dict[int, _Session] = {}
        self._delivered: dict[tuple[TopicPartition, int], _Delivery] = {}    # returned by the last poll
        self._buffer: deque[_Delivery] = deque()                             # fetched, not yet returned
        self._pending: Pending = {}
        self._renewing: dict[tuple[TopicPartition, int], _Delivery] = {}     # RENEW taken, not yet answered
        self._renewed: dict[tuple[TopicPartition, int], _Delivery] = {}      # renewed, returned at the next poll
        self._acks_done = trio.Event()
        self._completed: list[tuple[dict[TopicPartition, set[int]], BaseException | None]] = []
        self._callback: AcknowledgementCommitCallback | None = None
        self._lock_timeout_ms: int | None = None
        self._fetch_error: BaseException | None = None
        self._metadata_stale = True
        self._metadata_at = 0.0
        self._nursery: trio.Nursery | None = None
        self._nursery_cm: Any = None
        self._closed = False

    # -- lifecycle ------------------------------------------------------------------------------------------------

    async def __aenter__(self) -> ShareConsumer:
        await self.client.__aenter__()
        self._nursery_cm = trio.open_nursery()
        self._nursery = await self._nursery_cm.__aenter__()
        self._nursery.start_soon(self._membership_loop)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        try:
            if not self._closed and exc[0] is None:
                await self.close()
        finally:
            self._closed = True
            assert self._nursery is not None
            self._nursery.cancel_scope.cancel()
            await self._nursery_cm.__aexit__(None, None, None)
            await self.client.__aexit__(None, None, None)

    async def close(self, timeout_s: float | None = None) -> None:
        """Send what was acknowledged (implicit mode: accept the last poll's records), close every share session
        (ShareAcknowledge with epoch -1: the broker releases what this member still holds there) and leave the
        group (a heartbeat with member epoch -1)."""
        if self._closed:
            return
        self._closed = True
        timeout = self.settings["default.api.timeout.ms"] / 1000 if timeout_s is None else timeout_s
        with trio.move_on_after(timeout):
            if not self.explicit:
                self._accept_all_delivered()
            self._take_acknowledged()
            pending, self._pending = self._pending, {}
            by_node = _by_node(pending)
            async with trio.open_nursery() as nursery:
                for node_id in set(by_node) | {n for n, s in self._sessions.items() if s.epoch != INITIAL_EPOCH}:
                    nursery.start_soon(self._acknowledge_node, node_id, by_node.get(node_id, {}), True)
            if self._topics and self.member_epoch > 0:
                await self._leave()
        self._topics, self._assigned_ids = [], {}
        self._fire_callbacks()
        assert self._nursery is not None
        self._nursery.cancel_scope.cancel()

    # -- subscription ---------------------------------------------------------------------------------------------

    def subscribe(self, topics: Iterable[str] | str) -> None:
        """Join the share group for ``topics`` (replacing an earlier subscription); the coordinator assigns the
        partitions, shared with the group's other members."""
        self._ensure_open()
        names = [topics] if isinstance(topics, str) else list(topics)
        if not names or any(not isinstance(t, str) or not t.strip() for t in names):
            raise ValueError("subscribe needs topic names")
        self._topics = sorted(set(names))
        self._metadata_stale = True
        self._wake_membership()

    def subscription(self) -> set[str]:
        return set(self._topics)

    async def unsubscribe(self) -> None:
        """Send what was acknowledged, close the share sessions and leave the group."""
        self._ensure_open()
        if not self._topics:
            return
        if not self.explicit:
            self._accept_all_delivered()
        self._take_acknowledged()
        await self._flush_pending()
        self._delivered.clear()
        self._buffer.clear()
        async with trio.open_nursery() as nursery:
            for node_id, session in self._sessions.items():
                if session.epoch != INITIAL_EPOCH:
                    nursery.start_soon(self._acknowledge_node, node_id, {}, True)
        self._topics, self._topics_sent, self._assigned_ids = [], None, {}
        if self.member_epoch > 0:
            await self._leave()
        self.member_epoch = 0
        self._fire_callbacks()

    def acquisition_lock_timeout_ms(self) -> int | None:
        """The broker's acquisition lock duration (AcquisitionLockTimeoutMs of its last answer); None before."""
        return self._lock_timeout_ms

    def set_acknowledgement_commit_callback(self, callback: AcknowledgementCommitCallback | None) -> None:
        """``callback({TopicPartition: {offsets}}, exception or None)`` once per partition whose acknowledgements
        completed, called from poll, commit_sync, commit_async's next call and close (Java's
        AcknowledgementCommitCallback)."""
        self._callback = callback

    # -- acknowledgements -----------------------------------------------------------------------------------------

    def acknowledge(self, record: ConsumerRecord, type: AcknowledgeType | int = AcknowledgeType.ACCEPT) -> None:
        """Acknowledge a record of the last poll (explicit mode only). The last acknowledgement before it is sent
        wins. RENEW keeps the record: it comes back at the next poll with a fresh lock, to be acknowledged again."""
        self._ensure_open()
        if not self.explicit:
            raise IllegalStateError("acknowledge() needs share.acknowledgement.mode=explicit; in implicit mode "
                                    "the next poll, commit or close accepts the records of the last poll")
        kind = AcknowledgeType(type)
        delivery = self._delivered.get((record.topic_partition, record.offset))
        if delivery is None:
            raise IllegalStateError(f"The record cannot be acknowledged: {record.topic_partition} offset "
                                    f"{record.offset} is not a record of the last poll (or was already sent)")
        if kind == AcknowledgeType.RENEW and not self._renew_supported(delivery.node_id):
            raise KafkaError(ErrorCode.UNSUPPORTED_VERSION, f"broker {delivery.node_id} speaks ShareFetch/"
                             "ShareAcknowledge v1 only; RENEW (KIP-1222) needs v2", what="acknowledge with RENEW")
        delivery.ack = int(kind)

    async def commit_sync(self, timeout_s: float | None = None) -> dict[TopicPartition, KafkaError | None]:
        """Send every acknowledgement not sent yet in ShareAcknowledge requests and wait for the answers:
        ``{partition: None or the KafkaError it failed with}`` (implicit mode: the last poll's records are
        accepted first)."""
        self._ensure_open()
        self._fire_callbacks()
        if not self.explicit:
            self._accept_all_delivered()
        self._take_acknowledged()
        timeout = self.settings["default.api.timeout.ms"] / 1000 if timeout_s is None else timeout_s
        pending, self._pending = self._pending, {}
        results: dict[TopicPartition, KafkaError | None] = {}
        with trio.move_on_after(timeout) as scope:
            results = await self._acknowledge_all(pending)
        if scope.cancelled_caught:
            for (_, tp), acks in pending.items():
                if tp not in results:
                    results[tp] = self._complete(tp, acks, KafkaError(ErrorCode.REQUEST_TIMED_OUT, what="commit_sync"))
        self._fire_callbacks()
        return results

    def commit_async(self) -> None:
        """Send the acknowledgements without waiting; their outcome goes to the acknowledgement commit callback."""
        self._ensure_open()
        self._fire_callbacks()
        if not self.explicit:
            self._accept_all_delivered()
        self._take_acknowledged()
        pending, self._pending = self._pending, {}
        if pending:
            assert self._nursery is not None
            self._nursery.start_soon(self._acknowledge_all, pending)

    # -- poll -----------------------------------------------------------------------------------------------------

    async def poll(self, timeout_s: float = 0.0) -> list[ConsumerRecord]:
        """Records acquired for this member (at most ``max.poll.records``), each with its ``delivery_count``.

        Implicit mode accepts the previous poll's records; explicit mode requires every one of them to be
        acknowledged (IllegalStateError otherwise). Renewed records come back first; while a renewal is under way
        nothing new is fetched."""
        self._ensure_open()
        if not self._topics:
            raise IllegalStateError("Consumer is not subscribed to any topics.")
        self._raise_fatal()
        self._fire_callbacks()
        if not self.explicit:
            self._accept_all_delivered()
        elif any(d.ack is None for d in self._delivered.values()):
            waiting = sum(1 for d in self._delivered.values() if d.ack is None)
            raise IllegalStateError(f"All records must be acknowledged in explicit acknowledgement mode: {waiting} "
                                    f"record(s) of the last poll were not")
        self._take_acknowledged()
        deadline = trio.current_time() + max(0.0, timeout_s)
        try:
            while True:
                self._raise_fatal()
                if self._renewed:
                    return await self._deliver(list(self._renewed.values()), renewed=True)
                if self._renewing:
                    if any(t == AcknowledgeType.RENEW for acks in self._pending.values() for t in acks.values()):
                        await self._renew_round()
                    else:                                # a commit_async carries the renewal: wait for it
                        with trio.move_on_at(deadline):
                            await self._acks_done.wait()
                    if trio.current_time() >= deadline and not self._renewed:
                        return []
                    continue
                if self._buffer:
                    return await self._deliver([self._buffer.popleft() for _ in
                                                range(min(len(self._buffer), self.settings["max.poll.records"]))])
                remaining_ms = max(0, int((deadline - trio.current_time()) * 1000))
                if not await self._fetch_round(min(self.settings["fetch.max.wait.ms"], remaining_ms)):
                    with trio.move_on_at(deadline):
                        await self._assignment_changed.wait()
                if self._fetch_error is not None:
                    error, self._fetch_error = self._fetch_error, None
                    raise error
                if not self._buffer and trio.current_time() >= deadline:
                    return []
        finally:
            self._fire_callbacks()

    async def _deliver(self, deliveries: list[_Delivery], *, renewed: bool = False) -> list[ConsumerRecord]:
        """Hand records to the application; acknowledgements still waiting go out in a ShareAcknowledge (no fetch
        is due to carry them)."""
        if renewed:
            self._renewed.clear()
        for d in deliveries:
            d.ack = None
            self._delivered[d.key] = d
        await self._flush_pending()
        return [d.record for d in deliveries]

    def _accept_all_delivered(self) -> None:
        for d in self._delivered.values():
            if d.ack is None:
                d.ack = AcknowledgeType.ACCEPT

    def _take_acknowledged(self) -> None:
        """Move the acknowledged records of the last poll to the acknowledgements to send."""
        for key, d in list(self._delivered.items()):
            if d.ack is not None:
                self._pending.setdefault((d.node_id, key[0]), {})[key[1]] = d.ack
                del self._delivered[key]
                if d.ack == AcknowledgeType.RENEW:
                    self._renewing[key] = d

    def _complete(self, tp: TopicPartition, acks: Mapping[int, int], error: KafkaError | None) -> KafkaError | None:
        """Acknowledgements of ``tp`` answered: renewed records are kept for the next poll (a refused renewal ends
        the delivery, as in Java); the callback hears of it."""
        for offset, kind in acks.items():
            if kind == AcknowledgeType.RENEW:
                delivery = self._renewing.pop((tp, offset), None)
                if delivery is not None and error is None:
                    self._renewed[(tp, offset)] = delivery
        self._completed.append(({tp: set(acks)}, error))
        self._acks_done.set()
        self._acks_done = trio.Event()
        return error

    def _fire_callbacks(self) -> None:
        completed, self._completed = self._completed, []
        if self._callback is not None:
            for offsets, error in completed:
                self._callback(offsets, error)

    # -- share sessions -------------------------------------------------------------------------------------------

    def _session(self, node_id: int) -> _Session:
        session = self._sessions.get(node_id)
        if session is None:
            session = self._sessions[node_id] = _Session(node_id)
        return session

    def _renew_supported(self, node_id: int) -> bool:
        conn = self.client._connections.get(node_id)
        if conn is None:
            return True                 # not known yet: the request decides
        return (conn.versions.get(SHARE_FETCH, (0, 0))[1] >= 2
                and conn.versions.get(SHARE_ACKNOWLEDGE, (0, 0))[1] >= 2)

    async def _assigned(self) -> dict[TopicPartition, Any]:
        """{partition: topic id} of the current assignment (topic ids named through metadata)."""
        names = self.client.topic_names
        if any(t not in names for t in self._assigned_ids) or self._metadata_due():
            await self._refresh_metadata()
            names = self.client.topic_names
        return {TopicPartition(names[t], p): t for t, ps in self._assigned_ids.items() if t in names for p in ps}

    def _metadata_due(self) -> bool:
        return self._metadata_stale or \
            trio.current_time() - self._metadata_at > self.settings["metadata.max.age.ms"] / 1000

    async def _refresh_metadata(self) -> None:
        try:
            await self.client.metadata(self._topics or None)
            self._metadata_stale = False
            self._metadata_at = trio.current_time()
        except (KafkaConnectionError, KafkaError) as exc:
            log.info("share consumer %s: metadata refresh failed: %s", self.member_id, exc)
            await trio.sleep(self.client.retry_backoff_s)

    async def _fetch_round(self, wait_ms: int) -> bool:
        """One ShareFetch per node that leads an assigned partition (acknowledgements piggy-backed), a
        ShareAcknowledge to nodes that only have acknowledgements; False when there was nothing to send."""
        assigned = await self._assigned()
        wanted: dict[int, dict[TopicPartition, Any]] = {}
        for tp, topic_id in assigned.items():
            leader = self.client.leaders.get((tp.topic, tp.partition))
            if leader is None or leader < 0:
                self._metadata_stale = True
                continue
            wanted.setdefault(leader, {})[tp] = topic_id
        pending, self._pending = self._pending, {}
        by_node = _by_node(pending)
        nodes = set(wanted) | set(by_node) | {n for n, s in self._sessions.items() if s.partitions}
        if not nodes:
            return False
        async with trio.open_nursery() as nursery:
            for node_id in nodes:
                nursery.start_soon(self._fetch_node, node_id, wanted.get(node_id, {}), by_node.get(node_id, {}),
                                   wait_ms)
        return True

    async def _fetch_node(self, node_id: int, wanted: dict[TopicPartition, Any],
                          acks: dict[TopicPartition, dict[int, int]], wait_ms: int) -> None:
        session = self._session(node_id)
        want = {(topic_id, tp.partition) for tp, topic_id in wanted.items()}
        acking_only = {tp: a for tp, a in acks.items() if (self._topic_id(tp), tp.partition) not in want}
        if acking_only:                  # no longer fetched from this node: a ShareAcknowledge, not a piggy-back
            await self._acknowledge_node(node_id, acking_only, False)
            acks = {tp: a for tp, a in acks.items() if tp not in acking_only}
        if not want and not session.partitions:
            return
        async with session.lock:
            if session.epoch == INITIAL_EPOCH:
                for tp, a in acks.items():           # Java: no acknowledgements on an opening request
                    self._complete(tp, a, KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER,
                                                     "the share session was opened again", what=f"acknowledge {tp}"))
                acks = {}
                if not want:
                    return
            add = want if session.epoch == INITIAL_EPOCH else want - session.partitions
            forget = set() if session.epoch == INITIAL_EPOCH else session.partitions - want
            topics: dict[Any, dict[int, dict]] = {}
            for topic_id, index in add:
                topics.setdefault(topic_id, {})[index] = {"partition_index": index, "acknowledgement_batches": []}
            for tp, a in acks.items():
                key = (self._topic_id(tp), tp.partition)
                entry = topics.setdefault(key[0], {}).setdefault(key[1], {"partition_index": key[1]})
                entry["acknowledgement_batches"] = acknowledgement_batches(a)
            max_records = self.settings["max.poll.records"]
            body = {"group_id": self.group_id, "member_id": self.member_id, "share_session_epoch": session.epoch,
                    "max_wait_ms": wait_ms, "min_bytes": self.settings["fetch.min.bytes"],
                    "max_bytes": self.settings["fetch.max.bytes"], "max_records": max_records,
                    "batch_size": max_records, "topics": _topics_field(topics),
                    "forgotten_topics_data": _forgotten_field(forget)}
            await self._share_fetch(session, body, acks, add, forget)

    async def _renew_round(self) -> None:
        """KIP-1222: the acknowledgements of each node with a RENEW in a ShareFetch with IsRenewAck (MaxWaitMs,
        MinBytes, MaxBytes and MaxRecords 0: it acquires nothing)."""
        renewing = {n for (n, _), acks in self._pending.items() if AcknowledgeType.RENEW in acks.values()}
        taken = {k: v for k, v in self._pending.items() if k[0] in renewing}
        for k in taken:
            del self._pending[k]
        async with trio.open_nursery() as nursery:
            for node_id, acks in _by_node(taken).items():
                nursery.start_soon(self._renew_node, node_id, acks)

    async def _renew_node(self, node_id: int, acks: dict[TopicPartition, dict[int, int]]) -> None:
        session = self._session(node_id)
        async with session.lock:
            if session.epoch == INITIAL_EPOCH or not self._renew_supported(node_id):
                code, why = (ErrorCode.NOT_LEADER_OR_FOLLOWER, "the share session was opened again") \
                    if session.epoch == INITIAL_EPOCH else (ErrorCode.UNSUPPORTED_VERSION, "RENEW needs ShareFetch v2")
                for tp, a in acks.items():
                    self._complete(tp, a, KafkaError(code, why, what=f"renew {tp}"))
                return
            topics: dict[Any, dict[int, dict]] = {}
            for tp, a in acks.items():
                topics.setdefault(self._topic_id(tp), {})[tp.partition] = {
                    "partition_index": tp.partition, "acknowledgement_batches": acknowledgement_batches(a)}
            body = {"group_id": self.group_id, "member_id": self.member_id, "share_session_epoch": session.epoch,
                    "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 0, "max_records": 0, "batch_size": 0,
                    "is_renew_ack": True, "topics": _topics_field(topics), "forgotten_topics_data": []}
            added = {(self._topic_id(tp), tp.partition) for tp in acks}
            await self._share_fetch(session, body, acks, added - session.partitions, set())

    async def _share_fetch(self, session: _Session, body: dict, acks: dict[TopicPartition, dict[int, int]],
                           add: set, forget: set) -> None:
        """Send one ShareFetch in ``session`` (its lock held) and take in the answer."""
        try:
            conn = await self.client.broker(session.node_id)
            version = conn.version_for("ShareFetch")
            if version >= 2:
                body["share_acquire_mode"] = 1 if self.record_limit else 0
            elif self.record_limit or body.get("is_renew_ack"):
                raise KafkaError(ErrorCode.UNSUPPORTED_VERSION, f"broker {session.node_id} speaks ShareFetch v{version}; "
                                 + ("share.acquire.mode=record_limit" if self.record_limit else "RENEW")
                                 + " needs v2", what="ShareFetch")
            else:
                body.pop("is_renew_ack", None)
            response = await self._request(conn, "ShareFetch", body)
        except (KafkaError, KafkaConnectionError, trio.TooSlowError) as exc:
            error = _as_kafka_error(exc, "ShareFetch")
            session.reset()
            self._metadata_stale = True
            for tp, a in acks.items():
                self._complete(tp, a, error)
            if isinstance(exc, KafkaError) and exc.code == ErrorCode.UNSUPPORTED_VERSION:
                self._fetch_error = exc
            return
        if response.error_code:
            error = KafkaError(response.error_code, response.error_message, what="ShareFetch")
            log.info("share consumer %s: %s; the session on node %d starts again", self.member_id, error,
                     session.node_id)
            session.reset()
            if response.error_code == ErrorCode.UNKNOWN_TOPIC_ID:
                self._metadata_stale = True
            for tp, a in acks.items():
                self._complete(tp, a, error)
            if not error.retriable and response.error_code not in (ErrorCode.SHARE_SESSION_NOT_FOUND,
                                                                   ErrorCode.INVALID_SHARE_SESSION_EPOCH,
                                                                   ErrorCode.UNKNOWN_TOPIC_ID):
                self._fetch_error = error
            await trio.sleep(self.client.retry_backoff_s)
            return
        session.advance()
        session.partitions = (session.partitions - forget) | add
        if getattr(response, "acquisition_lock_timeout_ms", 0) > 0:
            self._lock_timeout_ms = response.acquisition_lock_timeout_ms
        self._learn_endpoints(response)
        answered: set[TopicPartition] = set()
        names = self.client.topic_names
        for topic in response.responses:
            name = names.get(topic.topic_id)
            if name is None:
                self._metadata_stale = True
                continue
            for p in topic.partitions:
                tp = TopicPartition(name, p.partition_index)
                if tp in acks:
                    answered.add(tp)
                    code = p.acknowledge_error_code
                    self._complete(tp, acks[tp], KafkaError(code, p.acknowledge_error_message, what=f"acknowledge {tp}")
                                   if code else None)
                    if code in LEADER_MOVED:
                        self._leader_moved(tp, p.current_leader)
                if p.error_code:
                    if p.error_code in LEADER_MOVED:
                        self._leader_moved(tp, p.current_leader)
                    else:
                        self._fetch_error = KafkaError(p.error_code, p.error_message, what=f"share fetch {tp}")
                    continue
                if p.acquired_records:
                    self._take(tp, session.node_id, p)
        for tp in set(acks) - answered:
            self._complete(tp, acks[tp], KafkaError(
                ErrorCode.UNKNOWN_SERVER_ERROR, "Acknowledgement not successful due to invalid response from broker",
                what=f"acknowledge {tp}"))

    async def _acknowledge_all(self, pending: Pending) -> dict[TopicPartition, KafkaError | None]:
        results: dict[TopicPartition, KafkaError | None] = {}
        async with trio.open_nursery() as nursery:
            for node_id, acks in _by_node(pending).items():
                nursery.start_soon(self._acknowledge_node, node_id, acks, False, results)
        return results

    async def _flush_pending(self) -> None:
        pending, self._pending = self._pending, {}
        if pending:
            await self._acknowledge_all(pending)

    async def _acknowledge_node(self, node_id: int, acks: dict[TopicPartition, dict[int, int]], final: bool,
                                results: dict[TopicPartition, KafkaError | None] | None = None) -> None:
        """A ShareAcknowledge to ``node_id`` (``final``: with epoch -1, closing the session)."""
        results = {} if results is None else results
        session = self._session(node_id)
        async with session.lock:
            if session.epoch == INITIAL_EPOCH:
                for tp, a in acks.items():
                    results[tp] = self._complete(tp, a, KafkaError(
                        ErrorCode.NOT_LEADER_OR_FOLLOWER, "no share session is open there", what=f"acknowledge {tp}"))
                return
            renew = any(AcknowledgeType.RENEW in a.values() for a in acks.values())
            topics: dict[Any, dict[int, dict]] = {}
            for tp, a in acks.items():
                topics.setdefault(self._topic_id(tp), {})[tp.partition] = {
                    "partition_index": tp.partition, "acknowledgement_batches": acknowledgement_batches(a)}
            body: dict[str, Any] = {"group_id": self.group_id, "member_id": self.member_id,
                                    "share_session_epoch": FINAL_EPOCH if final else session.epoch,
                                    "topics": _topics_field(topics)}
            try:
                conn = await self.client.broker(node_id)
                if conn.version_for("ShareAcknowledge") >= 2:
                    body["is_renew_ack"] = renew
                elif renew:
                    raise KafkaError(ErrorCode.UNSUPPORTED_VERSION,
                                     f"broker {node_id} speaks ShareAcknowledge v1; RENEW needs v2", what="ShareAcknowledge")
                response = await self._request(conn, "ShareAcknowledge", body)
            except (KafkaError, KafkaConnectionError, trio.TooSlowError) as exc:
                error = _as_kafka_error(exc, "ShareAcknowledge")
                if error.code != ErrorCode.UNSUPPORTED_VERSION:
                    session.reset()
                for tp, a in acks.items():
                    results[tp] = self._complete(tp, a, error)
                return
            if final:
                session.reset()
            if response.error_code:
                error = KafkaError(response.error_code, response.error_message, what="ShareAcknowledge")
                session.reset()
                for tp, a in acks.items():
                    results[tp] = self._complete(tp, a, error)
                return
            if not final:
                session.advance()
            if getattr(response, "acquisition_lock_timeout_ms", 0) > 0:
                self._lock_timeout_ms = response.acquisition_lock_timeout_ms
            self._learn_endpoints(response)
            names = self.client.topic_names
            answered = set()
            for topic in response.responses:
                for p in topic.partitions:
                    tp = TopicPartition(names.get(topic.topic_id, "?"), p.partition_index)
                    if tp not in acks:
                        continue
                    answered.add(tp)
                    partition_error = (KafkaError(p.error_code, p.error_message, what=f"acknowledge {tp}")
                                       if p.error_code else None)
                    if p.error_code in LEADER_MOVED:
                        self._leader_moved(tp, p.current_leader)
                    results[tp] = self._complete(tp, acks[tp], partition_error)
            for tp in set(acks) - answered:
                results[tp] = self._complete(tp, acks[tp], KafkaError(
                    ErrorCode.UNKNOWN_SERVER_ERROR, "Acknowledgement not successful due to invalid response from broker",
                    what=f"acknowledge {tp}"))

    async def _request(self, conn: KafkaConnection, api: str, body: dict) -> Any:
        """One request, not cancelled half-way (a lost answer would leave records acquired and the session epoch
        unknown), bounded by ``request.timeout.ms`` plus the time the broker may hold a fetch."""
        limit = self.settings["request.timeout.ms"] / 1000 + body.get("max_wait_ms", 0) / 1000
        with trio.CancelScope(shield=True):
            with trio.fail_after(limit):
                return await conn.request(api, body)

    def _take(self, tp: TopicPartition, node_id: int, data: Any) -> None:
        """The acquired records of one partition into the buffer; acquired offsets without a record (control
        records, compacted away) are acknowledged as gaps, as Java's ShareCompletedFetch does."""
        try:
            batches = decode_batches(bytes(data.records or b""))
        except CorruptRecordError as exc:
            self._fetch_error = KafkaError(ErrorCode.CORRUPT_MESSAGE, str(exc), what=f"share fetch {tp}")
            batches = []
        found = {}
        for batch in batches:
            if batch.is_control:
                continue
            for r in batch.records:
                found[r.offset] = (batch, r)
        kd, vd = self.settings["key.deserializer"], self.settings["value.deserializer"]
        gaps = {}
        for run in data.acquired_records:
            for offset in range(run.first_offset, run.last_offset + 1):
                hit = found.get(offset)
                if hit is None:
                    gaps[offset] = GAP
                    continue
                batch, r = hit
                ts_type = 1 if batch.timestamp_type == "LogAppendTime" else 0
                try:
                    key = r.key if kd is None or r.key is None else kd(r.key)
                    value = r.value if vd is None or r.value is None else vd(r.value)
                except Exception as exc:          # Java: the record is released and the poll throws
                    gaps[offset] = AcknowledgeType.RELEASE
                    self._fetch_error = exc
                    continue
                record = ConsumerRecord(tp.topic, tp.partition, offset,
                                        batch.max_timestamp if ts_type == 1 else r.timestamp, ts_type, key, value,
                                        tuple(r.headers), batch.partition_leader_epoch, run.delivery_count)
                self._buffer.append(_Delivery(record, node_id))
        if gaps:
            self._pending.setdefault((node_id, tp), {}).update(gaps)

    def _topic_id(self, tp: TopicPartition) -> Any:
        return self.client.topic_ids.get(tp.topic)

    def _learn_endpoints(self, response: Any) -> None:
        for e in getattr(response, "node_endpoints", None) or ():
            self.client.brokers[e.node_id] = (e.host, e.port)

    def _leader_moved(self, tp: TopicPartition, current: Any) -> None:
        """NOT_LEADER_OR_FOLLOWER and the like: follow the leader the broker named, else ask the metadata; the
        partition leaves the old node's session at the next fetch and joins the new one's."""
        leader = getattr(current, "leader_id", -1) if current is not None else -1
        if leader is not None and leader >= 0 and leader in self.client.brokers:
            self.client.leaders[(tp.topic, tp.partition)] = leader
        else:
            self.client.leaders.pop((tp.topic, tp.partition), None)
            self._metadata_stale = True

    # -- membership -----------------------------------------------------------------------------------------------

    def _wake_membership(self) -> None:
        self._membership_wake.set()

    async def _membership_loop(self) -> None:
        """ShareGroupHeartbeat at the interval the coordinator gives; fenced members rejoin with epoch 0."""
        while True:
            if not self._topics or self._closed:
                await self._membership_wake.wait()
                self._membership_wake = trio.Event()
                continue
            self._membership_wake = trio.Event()
            wait = self._heartbeat_interval_s
            try:
                await self._heartbeat()
            except KafkaError as exc:
                if exc.code in FENCED:
                    log.info("share consumer %s fenced (%s): rejoining", self.member_id, exc.name)
                    self.member_epoch, self._topics_sent = 0, None
                    wait = 0
                elif exc.code in COORDINATOR_MOVED or exc.retriable:
                    self.client.forget_coordinator(self.group_id, GROUP)
                    wait = self.client.retry_backoff_s
                else:
                    self._fatal = exc
                    return
            except (KafkaConnectionError, trio.TooSlowError) as exc:
                log.info("share consumer %s: heartbeat failed: %s", self.member_id, exc)
                self.client.forget_coordinator(self.group_id, GROUP)
                wait = self.client.retry_backoff_s
            with trio.move_on_after(wait):
                await self._membership_wake.wait()

    async def _heartbeat(self) -> None:
        conn = await self.client.coordinator(self.group_id, GROUP)
        topics = list(self._topics)
        send_topics = topics if self.member_epoch == 0 or topics != self._topics_sent else None
        body = {"group_id": self.group_id, "member_id": self.member_id, "member_epoch": self.member_epoch,
                "rack_id": self.settings["client.rack"] or None, "subscribed_topic_names": send_topics}
        with trio.fail_after(self.settings["request.timeout.ms"] / 1000):
            response = await conn.request("ShareGroupHeartbeat", body)
        if response.error_code:
            raise KafkaError(response.error_code, response.error_message, what="ShareGroupHeartbeat")
        if topics != self._topics:                     # subscribe() meanwhile: send the new list at once
            self._wake_membership()
        self._topics_sent = topics
        self.member_epoch = response.member_epoch
        if response.heartbeat_interval_ms > 0:
            self._heartbeat_interval_s = response.heartbeat_interval_ms / 1000
        if response.assignment is not None:
            self._assigned_ids = {t.topic_id: sorted(t.partitions) for t in response.assignment.topic_partitions}
            log.info("share consumer %s: epoch %d, assigned %s", self.member_id, self.member_epoch,
                     {str(k): v for k, v in self._assigned_ids.items()})
            self._assignment_changed.set()
            self._assignment_changed = trio.Event()

    async def _leave(self) -> None:
        """A heartbeat with member epoch -1: the coordinator removes the member at once."""
        try:
            conn = await self.client.coordinator(self.group_id, GROUP)
            with trio.fail_after(self.settings["request.timeout.ms"] / 1000):
                response = await conn.request("ShareGroupHeartbeat", {
                    "group_id": self.group_id, "member_id": self.member_id, "member_epoch": LEAVE_EPOCH,
                    "rack_id": None, "subscribed_topic_names": None})
            if response.error_code and response.error_code not in FENCED:
                log.info("share consumer %s: leaving the group: %s", self.member_id,
                         KafkaError(response.error_code, response.error_message, what="ShareGroupHeartbeat"))
        except (KafkaError, KafkaConnectionError, trio.TooSlowError) as exc:
            log.info("share consumer %s: leaving the group failed: %s", self.member_id, exc)
        self.member_epoch = 0

    # -- helpers --------------------------------------------------------------------------------------------------

    def _ensure_open(self) -> None:
        if self._closed:
            raise IllegalStateError("This share consumer has already been closed.")
        if self._nursery is None:
            raise IllegalStateError("use the ShareConsumer as an async context manager")

    def _raise_fatal(self) -> None:
        if self._fatal is not None:
            raise self._fatal


def _by_node(pending: Pending) -> dict[int, dict[TopicPartition, dict[int, int]]]:
    out: dict[int, dict[TopicPartition, dict[int, int]]] = {}
    for (node_id, tp), acks in pending.items():
        if acks:
            out.setdefault(node_id, {}).setdefault(tp, {}).update(acks)
    return out


def _topics_field(topics: Mapping[Any, Mapping[int, dict]]) -> list[dict]:
    return [{"topic_id": t, "partitions": [dict(p, acknowledgement_batches=p.get("acknowledgement_batches", []))
                                           for _, p in sorted(ps.items())]} for t, ps in topics.items()]


def _forgotten_field(forget: Iterable[tuple[Any, int]]) -> list[dict]:
    by_topic: dict[Any, list[int]] = {}
    for topic_id, index in forget:
        by_topic.setdefault(topic_id, []).append(index)
    return [{"topic_id": t, "partitions": sorted(ps)} for t, ps in by_topic.items()]


def _as_kafka_error(exc: BaseException, what: str) -> KafkaError:
    if isinstance(exc, KafkaError):
        return exc
    if isinstance(exc, trio.TooSlowError):
        return KafkaError(ErrorCode.REQUEST_TIMED_OUT, "no answer within request.timeout.ms", what=what)
    return KafkaError(ErrorCode.NETWORK_EXCEPTION, str(exc), what=what)
