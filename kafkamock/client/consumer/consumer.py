"""kafkamock's consumer: subscribe (classic or KIP-848 groups) or assign, poll, seek, commit — and KIP-983's
delayed revocation, which no other client has.

    async with Consumer({"bootstrap.servers": bootstrap, "group.id": "g", "enable.auto.commit": False}) as c:
        c.subscribe(["orders"])
        while True:
            records = await c.poll(1.0)
            start_processing(records)
            await c.commit(finished_offsets())
            pending = c.to_be_revoked_partitions() & partitions_still_processing()
            if pending:
                c.delay_revoke(pending)          # revoked at the poll after next; false once lost
            for tp in c.lost_partitions():
                abandon(tp)

Fetching runs ahead of ``poll`` (one Fetch in flight per leader) so a poll loop is not a round trip per call; the
records of a partition are only returned while the consumer owns it and at the position it is at, so a seek, a
revoke or a loss drops whatever was fetched before.
"""

from __future__ import annotations

import inspect
import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import trio

from kafkamock.client.cluster import KafkaClient
from kafkamock.client.config import CONSUMER, parse
from kafkamock.client.connection import KafkaConnectionError
from kafkamock.client.consumer.assignors import assignor_names
from kafkamock.client.consumer.classic import ClassicMembership
from kafkamock.client.consumer.consumer_protocol import ConsumerProtocolMembership
from kafkamock.client.consumer.group_offsets import commit_offsets, fetch_committed
from kafkamock.client.consumer.revocation import REVOKE_NEXT, Ownership
from kafkamock.client.errors import CommitFailedError, KafkaError
from kafkamock.client.fetched import deliverable_batches
from kafkamock.client.offsets import EARLIEST, LATEST
from kafkamock.client.security import security_from
from kafkamock.client.types import ConsumerGroupMetadata, ConsumerRecord, OffsetAndMetadata, TopicPartition
from kafkamock.errors import ErrorCode
from kafkamock.records import CorruptRecordError

log = logging.getLogger(__name__)

LEADER_MOVED = frozenset({ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.LEADER_NOT_AVAILABLE,
                          ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.UNKNOWN_LEADER_EPOCH,
                          ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_ID,
                          ErrorCode.KAFKA_STORAGE_ERROR, ErrorCode.REPLICA_NOT_AVAILABLE,
                          ErrorCode.OFFSET_NOT_AVAILABLE})


@dataclass
class _Buffered:
    """Records fetched for a partition at ``fetch_offset``, not yet returned; ``next_offset`` follows the batches
    read (control and aborted batches included)."""

    records: list
    next_offset: int
    fetch_offset: int
    start: int = 0                 # records[start:] are still to be returned


class Consumer:
    """A Kafka consumer, as a trio async context manager (``kafkamock.client.blocking.Consumer`` blocks instead).

    Settings are the Java consumer's (see ``kafkamock.client.config.CONSUMER``). A rebalance listener (an object
    with any of ``on_partitions_revoked``, ``on_partitions_assigned``, ``on_partitions_lost``, plain or async)
    still works; KIP-983's methods make it unnecessary.
    """

    def __init__(self, config: Mapping[str, Any] | None = None, **settings: Any):
        self.settings = parse(CONSUMER, {**(config or {}), **settings}, "consumer")
        s = self.settings
        self.group_id: str | None = s["group.id"]
        self.assignors = assignor_names(s["partition.assignment.strategy"])
        if s["heartbeat.interval.ms"] >= s["session.timeout.ms"]:
            raise ValueError("consumer: heartbeat.interval.ms must be lower than session.timeout.ms")
        if s["group.protocol"] == "consumer":
            for name in ("session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy"):
                if name in (config or {}) or name in settings:
                    raise ValueError(f"consumer: {name!r} is set by the broker under group.protocol=consumer "
                                     f"(use the group configs, or group.remote.assignor)")
        elif s["group.remote.assignor"] is not None:
            raise ValueError("consumer: 'group.remote.assignor' needs group.protocol=consumer")
        if s["group.instance.id"] is not None and not self.group_id:
            raise ValueError("consumer: 'group.instance.id' needs a group.id")
        self.read_committed = s["isolation.level"] == "read_committed"
        self.client = KafkaClient(s["bootstrap.servers"], client_id=s["client.id"], security=security_from(s),
                                  retry_backoff_s=s["retry.backoff.ms"] / 1000,
                                  api_timeout_s=s["default.api.timeout.ms"] / 1000)
        self.ownership = Ownership()
        self.membership: ClassicMembership | ConsumerProtocolMembership | None = None
        self.last_poll = 0.0
        self.polled = trio.Event()
        self._topics: list[str] = []
        self._pattern: re.Pattern | None = None
        self._listener: Any = None
        self._assigned_manually: set[TopicPartition] = set()
        self._positions: dict[TopicPartition, int] = {}
        self._leader_epochs: dict[TopicPartition, int] = {}
        self._buffers: dict[TopicPartition, _Buffered] = {}
        self._generation: dict[TopicPartition, int] = {}       # bumped when a fetch in flight must be dropped
        self._paused: set[TopicPartition] = set()
        self._pending_reset: dict[TopicPartition, str] = {}
        self._in_flight: set[int] = set()
        self._fetch_error: BaseException | None = None
        self._wakeup = trio.Event()
        self._lost_pending: set[TopicPartition] = set()
        self._next_auto_commit = 0.0
        self._commit_tasks = 0
        self._nursery: trio.Nursery | None = None
        self._nursery_cm: Any = None
        self._closed = False
        self._known_topics: dict[str, int] = {}
        self._next_metadata = 0.0
        self._membership_scope: trio.CancelScope | None = None
        self._background: set[trio.CancelScope] = set()

    # -- lifecycle ------------------------------------------------------------------------------------------------

    async def __aenter__(self) -> Consumer:
        await self.client.__aenter__()
        self._nursery_cm = trio.open_nursery()
        self._nursery = await self._nursery_cm.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        try:
            if not self._closed and exc[0] is None:
                await self.close()
        finally:
            assert self._nursery is not None
            self._nursery.cancel_scope.cancel()
            await self._nursery_cm.__aexit__(None, None, None)
            await self.client.__aexit__(None, None, None)

    async def close(self) -> None:
        """Commit (when auto-commit is on), revoke every partition, leave the group, stop fetching."""
        if self._closed:
            return
        self._closed = True
        if self.membership is not None:
            owned = self.ownership.owned()
            if self.settings["enable.auto.commit"] and owned:
                try:
                    await self._commit_positions(owned)
                except KafkaError as exc:
                    log.warning("auto-commit on close failed: %s", exc)
            if owned:
                await self._call_listener("on_partitions_revoked", owned)
            await self.membership.leave()
        self.ownership.clear()
        assert self._nursery is not None
        self._nursery.cancel_scope.cancel()

    # -- subscription ---------------------------------------------------------------------------------------------

    def subscribe(self, topics: Iterable[str] | str | re.Pattern, listener: Any = None) -> None:
        """Join the group (``group.id``) for ``topics``, a list of names or a pattern (``re.Pattern``, or a string
        starting with ``^``). Under group.protocol=consumer a pattern is sent to the broker (RE2 syntax)."""
        if not self.group_id:
            raise ValueError("subscribe needs a group.id (use assign without one)")
        if self._assigned_manually:
            raise ValueError("subscribe and assign cannot be mixed: unsubscribe first")
        if isinstance(topics, re.Pattern) or (isinstance(topics, str) and topics.startswith("^")):
            self._pattern = topics if isinstance(topics, re.Pattern) else re.compile(topics)
            self._topics = []
        else:
            names = [topics] if isinstance(topics, str) else list(topics)
            if not names or any(not t for t in names):
                raise ValueError("subscribe needs topic names")
            self._topics, self._pattern = sorted(set(names)), None
        self._listener = listener
        if self.membership is None:
            self.membership = (ConsumerProtocolMembership(self) if self.settings["group.protocol"] == "consumer"
                               else ClassicMembership(self))
            assert self._nursery is not None, "use the Consumer as an async context manager"
            self._nursery.start_soon(self._run_membership, self.membership)
        else:
            self.membership.request_rejoin()

    def _start_background(self, fn: Callable[[], Any]) -> None:
        """Run ``fn`` under the group membership's scope (unsubscribe and close cancel it)."""
        assert self._nursery is not None

        async def run() -> None:
            with trio.CancelScope() as scope:
                self._background.add(scope)
                try:
                    await fn()
                finally:
                    self._background.discard(scope)
        self._nursery.start_soon(run)

    async def _run_membership(self, membership: Any) -> None:
        with trio.CancelScope() as scope:
            self._membership_scope = scope
            await membership.run()

    def subscription(self) -> set[str]:
        return set(self._topics) if self._pattern is None else set(self._known_topics)

    def subscription_spec(self) -> tuple[tuple[str, ...], str | None]:
        """(topic names, regex) as the KIP-848 heartbeat sends them."""
        if self._pattern is not None:
            return (), self._pattern.pattern
        return tuple(self._topics), None

    def assign(self, partitions: Iterable[TopicPartition | tuple[str, int]]) -> None:
        """Read ``partitions`` without a group (commits still go to ``group.id`` when there is one)."""
        if self.membership is not None:
            raise ValueError("subscribe and assign cannot be mixed: unsubscribe first")
        wanted = {TopicPartition(*tp) for tp in partitions}
        for tp in self._assigned_manually - wanted:
            self._forget(tp)
        self._assigned_manually = wanted

    async def unsubscribe(self) -> None:
        """Leave the group (revoking what is owned) or drop the manual assignment."""
        if self.membership is not None:
            owned = self.ownership.owned()
            if owned:
                if self.settings["enable.auto.commit"]:
                    await self._commit_positions(owned)
                await self._call_listener("on_partitions_revoked", owned)
            await self.membership.leave()
            self.ownership.clear()
            for tp in owned:
                self._forget(tp)
            self.membership = None
            if self._membership_scope is not None:
                self._membership_scope.cancel()
            for scope in list(self._background):
                scope.cancel()
        for tp in list(self._assigned_manually):
            self._forget(tp)
        self._assigned_manually = set()
        self._topics, self._pattern = [], None

    def assignment(self) -> set[TopicPartition]:
        return set(self._assigned_manually) if self.membership is None else self.ownership.owned()

    # -- KIP-983 ------------------------------------------------------------------------------------------------

    def to_be_revoked_partitions(self) -> set[TopicPartition]:
        """Partitions that will be revoked in the next poll (KIP-983's revoke-next list)."""
        return self.ownership.pending(REVOKE_NEXT)

    def lost_partitions(self) -> set[TopicPartition]:
        """Partitions that were lost during the last poll: stop processing and committing them."""
        return set(self.ownership.lost)

    def delay_revoke(self, partitions: Iterable[TopicPartition | tuple[str, int]]) -> bool:
        """Revoke ``partitions`` at the poll after the next one instead; False (nothing changes) when some of them
        are no longer owned — lost, or already revoked."""
        return self.ownership.delay(TopicPartition(*tp) for tp in partitions)

    # -- positions ------------------------------------------------------------------------------------------------

    def seek(self, partition: TopicPartition | tuple[str, int], offset: int) -> None:
        tp = TopicPartition(*partition)
        self._require_assigned(tp)
        if offset < 0:
            raise ValueError(f"seek offset must be >= 0, not {offset}")
        self._drop_fetched(tp)
        self._pending_reset.pop(tp, None)
        self._positions[tp] = offset

    def seek_to_beginning(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        self._seek_to("earliest", partitions)

    def seek_to_end(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        self._seek_to("latest", partitions)

    def _seek_to(self, where: str, partitions: Iterable[TopicPartition] | None) -> None:
        for tp in (self.assignment() if partitions is None else [TopicPartition(*p) for p in partitions]):
            self._require_assigned(tp)
            self._drop_fetched(tp)
            self._positions.pop(tp, None)
            self._pending_reset[tp] = where

    async def position(self, partition: TopicPartition | tuple[str, int]) -> int:
        """The offset of the next record ``poll`` returns for ``partition`` (resolved now if not known yet)."""
        tp = TopicPartition(*partition)
        self._require_assigned(tp)
        if tp not in self._positions:
            await self._resolve_positions([tp])
        return self._positions[tp]

    async def committed(self, partitions: Iterable[TopicPartition | tuple[str, int]]) -> dict[
            TopicPartition, OffsetAndMetadata | None]:
        if not self.group_id:
            raise ValueError("committed needs a group.id")
        member_id, epoch = None, -1
        if isinstance(self.membership, ConsumerProtocolMembership):
            epoch, member_id, _ = self.membership.commit_identity()
        return await fetch_committed(self.client, self.group_id, [TopicPartition(*tp) for tp in partitions],
                                     require_stable=self.read_committed, member_id=member_id, member_epoch=epoch,
                                     timeout_s=self.settings["default.api.timeout.ms"] / 1000)

    def pause(self, partitions: Iterable[TopicPartition | tuple[str, int]]) -> None:
        for p in partitions:
            tp = TopicPartition(*p)
            self._require_assigned(tp)
            self._paused.add(tp)

    def resume(self, partitions: Iterable[TopicPartition | tuple[str, int]]) -> None:
        for p in partitions:
            self._paused.discard(TopicPartition(*p))

    def paused(self) -> set[TopicPartition]:
        return set(self._paused)

    def group_metadata(self) -> ConsumerGroupMetadata:
        if not self.group_id:
            raise ValueError("group_metadata needs a group.id")
        if self.membership is None:
            return ConsumerGroupMetadata(self.group_id, -1, "", self.settings["group.instance.id"])
        generation, member_id, instance = self.membership.commit_identity()
        return ConsumerGroupMetadata(self.group_id, generation, member_id, instance)

    # -- commits --------------------------------------------------------------------------------------------------

    async def commit(self, offsets: Mapping[TopicPartition | tuple[str, int], OffsetAndMetadata | int] | None = None
                     ) -> None:
        """Commit ``offsets`` (the offset of the next record to read), or the positions of every partition the
        consumer holds. Raises CommitFailedError when the group has moved on without this member."""
        if not self.group_id:
            raise ValueError("commit needs a group.id")
        if offsets is None:
            await self._commit_positions(self.assignment())
            return
        await self._commit({TopicPartition(*tp): (om if isinstance(om, OffsetAndMetadata) else OffsetAndMetadata(om))
                            for tp, om in offsets.items()})

    def commit_async(self, offsets: Mapping[TopicPartition | tuple[str, int], OffsetAndMetadata | int] | None = None,
                     callback: Callable[[dict, BaseException | None], Any] | None = None) -> None:
        """Commit in the background; ``callback(offsets, error_or_None)`` runs when it is done. Commits complete in
        the order they were made (Java's guarantee), since they go out one after another on one connection."""
        if not self.group_id:
            raise ValueError("commit_async needs a group.id")
        if offsets is None:
            wanted = {tp: OffsetAndMetadata(self._positions[tp], "", self._leader_epochs.get(tp, -1))
                      for tp in self.assignment() if tp in self._positions}
        else:
            wanted = {TopicPartition(*tp): (om if isinstance(om, OffsetAndMetadata) else OffsetAndMetadata(om))
                      for tp, om in offsets.items()}

        async def run() -> None:
            error: BaseException | None = None
            try:
                await self._commit(wanted)
            except (KafkaError, KafkaConnectionError) as exc:
                error = exc
                if callback is None:
                    log.warning("async commit failed: %s", exc)
            finally:
                self._commit_tasks -= 1
            if callback is not None:
                result = callback(wanted, error)
                if inspect.isawaitable(result):
                    await result
        self._commit_tasks += 1
        assert self._nursery is not None
        self._nursery.start_soon(run)

    async def _commit_positions(self, partitions: Iterable[TopicPartition]) -> None:
        await self._commit({tp: OffsetAndMetadata(self._positions[tp], "", self._leader_epochs.get(tp, -1))
                            for tp in partitions if tp in self._positions})

    async def _commit(self, offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        """A commit made while this member waits for its SyncGroup answer waits for it and goes out with the new
        generation: the coordinator answers REBALANCE_IN_PROGRESS in that window, and under KIP-983 committing
        during a rebalance is the normal case (cooperative members keep their partitions through it; an eager one
        joins only once its revokes are done). Before the JoinGroup answer the current generation still commits.
        Java fails such a commit and has the caller poll."""
        assert self.group_id
        deadline = trio.current_time() + self.settings["default.api.timeout.ms"] / 1000
        while True:
            membership = self.membership
            if isinstance(membership, ClassicMembership) and membership.syncing:
                with trio.move_on_at(deadline):
                    await membership.sync_finished()
            generation, member_id, instance = (-1, "", None) if membership is None else membership.commit_identity()
            try:
                await commit_offsets(self.client, self.group_id, offsets, generation=generation, member_id=member_id,
                                     instance_id=instance, timeout_s=max(0.0, deadline - trio.current_time()))
                return
            except CommitFailedError as exc:
                # Sent just before the JoinGroup answer, it met the coordinator completing the rebalance: go again
                # once this member has the new generation (or is about to).
                moved_on = membership is not None and (membership.commit_identity() != (generation, member_id,
                                                                                         instance))
                if not (exc.code == ErrorCode.REBALANCE_IN_PROGRESS and isinstance(membership, ClassicMembership)
                        and (membership.syncing or moved_on) and trio.current_time() < deadline):
                    raise

    # -- poll -----------------------------------------------------------------------------------------------------

    async def poll(self, timeout_s: float = 0.0) -> list[ConsumerRecord]:
        """Records of the partitions the consumer holds, at most max.poll.records; waits up to ``timeout_s`` for
        some. Also where the consumer's group work happens, in KIP-983's order: revokes due now complete first
        (auto-commit, listener), then the group is joined or rebalanced; a revoke requested during the call ends it
        early, so the application sees ``to_be_revoked_partitions()`` at once."""
        if self._closed:
            raise RuntimeError("the consumer is closed")
        if self.membership is None and not self._assigned_manually:
            raise ValueError("poll needs a subscription or an assignment")
        deadline = trio.current_time() + max(0.0, timeout_s)
        self.last_poll = trio.current_time()
        self.polled.set()
        self.polled = trio.Event()
        if self.membership is not None:
            due = self.ownership.start_poll()
            self._apply_lost()
            if due:
                await self._complete_revoke(due)
        await self._maybe_auto_commit()
        revoke_seen = self.to_be_revoked_partitions()
        while True:
            if self._fetch_error is not None:
                error, self._fetch_error = self._fetch_error, None
                raise error
            if self.membership is not None:
                await self._maybe_refresh_topics()
                await self.membership.ensure_active(deadline)
                self._apply_lost()
            await self._resolve_positions(self._fetchable(include_paused=True))
            records = self._drain()
            if records or self.ownership.lost or self.to_be_revoked_partitions() - revoke_seen:
                return records
            if trio.current_time() >= deadline:
                return records
            self._start_fetches()
            with trio.move_on_at(deadline):
                await self._wakeup.wait()
            self._wakeup = trio.Event()

    def _wake_poll(self) -> None:
        self._wakeup.set()

    async def _maybe_auto_commit(self) -> None:
        if not (self.settings["enable.auto.commit"] and self.group_id and self.membership is not None):
            return
        now = trio.current_time()
        if now >= self._next_auto_commit:
            self._next_auto_commit = now + self.settings["auto.commit.interval.ms"] / 1000
            if self._positions and self._commit_tasks == 0:
                self.commit_async()

    # -- group callbacks (from the memberships) --------------------------------------------------------------------

    def _assignment_received(self, target: set[TopicPartition], *, revoke_missing: bool) -> None:
        owned = self.ownership.owned()
        added = self.ownership.add(target)
        if revoke_missing:
            self._request_revoke(owned - target)
        if added:
            for tp in added:
                self._generation[tp] = self._generation.get(tp, 0) + 1
            assert self._nursery is not None
            self._nursery.start_soon(self._call_listener, "on_partitions_assigned", added)
        self._wake_poll()

    def _request_revoke(self, partitions: set[TopicPartition]) -> None:
        fresh = self.ownership.request_revoke(partitions)
        if fresh:
            log.info("consumer of group %r: revoke requested for %s", self.group_id, sorted(map(str, fresh)))
            self._wake_poll()

    def _partitions_lost(self, partitions: set[TopicPartition] | None) -> None:
        """Membership ended: recorded now, applied by the next poll (lost partitions are named by the poll during
        which they were lost)."""
        owned = self.ownership.owned() if partitions is None else partitions
        self._lost_pending |= owned
        self._wake_poll()

    def _apply_lost(self) -> None:
        if not self._lost_pending:
            return
        pending, self._lost_pending = self._lost_pending, set()
        lost = self.ownership.lose(pending)
        for tp in lost:
            self._forget(tp)
        if lost:
            log.info("consumer of group %r: partitions lost %s", self.group_id, sorted(map(str, lost)))
            assert self._nursery is not None
            self._nursery.start_soon(self._call_listener, "on_partitions_lost", lost)

    async def _complete_revoke(self, revoked: set[TopicPartition]) -> None:
        if self.settings["enable.auto.commit"]:
            try:
                await self._commit_positions(revoked)
            except KafkaError as exc:
                log.warning("auto-commit of revoked partitions failed: %s", exc)
        await self._call_listener("on_partitions_revoked", revoked)
        for tp in revoked:
            self._forget(tp)
        assert self.membership is not None
        self.membership.revokes_completed(revoked)

    async def _call_listener(self, name: str, partitions: set[TopicPartition]) -> None:
        method = getattr(self._listener, name, None)
        if method is None:
            return
        result = method(set(partitions))
        if inspect.isawaitable(result):
            await result

    # -- topics ---------------------------------------------------------------------------------------------------

    async def _subscribed_topics(self) -> list[str]:
        if self._pattern is None:
            return list(self._topics)
        await self._maybe_refresh_topics(force=True)
        return sorted(self._known_topics)

    async def _partition_counts(self, topics: list[str]) -> dict[str, int]:
        if not topics:
            return {}
        response = await self.client.metadata(topics, auto_create=False)
        return {t.name: len(t.partitions) for t in response.topics if t.error_code == 0}

    async def _maybe_refresh_topics(self, force: bool = False) -> None:
        """Every metadata.max.age.ms: the topics a pattern matches and the partition counts; a change rejoins
        (a new topic, or more partitions, must be assigned)."""
        now = trio.current_time()
        if not force and now < self._next_metadata:
            return
        self._next_metadata = now + self.settings["metadata.max.age.ms"] / 1000
        if self._pattern is not None:
            response = await self.client.metadata(None)
            known = {t.name: len(t.partitions) for t in response.topics if t.error_code == 0
                     and self._pattern.fullmatch(t.name)
                     and not (t.is_internal and self.settings["exclude.internal.topics"])}
        else:
            if not self._topics:
                return
            response = await self.client.metadata(self._topics,
                                                  auto_create=self.settings["allow.auto.create.topics"])
            known = {t.name: len(t.partitions) for t in response.topics if t.error_code == 0}
        if self._known_topics and known != self._known_topics and self.membership is not None:
            self.membership.request_rejoin()
        self._known_topics = known

    # -- fetching -------------------------------------------------------------------------------------------------

    def _require_assigned(self, tp: TopicPartition) -> None:
        if tp not in self.assignment():
            raise ValueError(f"{tp} is not assigned to this consumer")

    def _fetchable(self, *, include_paused: bool = False) -> list[TopicPartition]:
        return [tp for tp in self.assignment() if include_paused or tp not in self._paused]

    def _forget(self, tp: TopicPartition) -> None:
        self._drop_fetched(tp)
        self._positions.pop(tp, None)
        self._pending_reset.pop(tp, None)
        self._paused.discard(tp)

    def _drop_fetched(self, tp: TopicPartition) -> None:
        self._buffers.pop(tp, None)
        self._generation[tp] = self._generation.get(tp, 0) + 1

    async def _resolve_positions(self, partitions: Iterable[TopicPartition]) -> None:
        """Positions for partitions that have none: the group's committed offset, else auto.offset.reset."""
        missing = [tp for tp in partitions if tp not in self._positions]
        if not missing:
            return
        to_reset: dict[TopicPartition, str] = {}
        committed_lookup = [tp for tp in missing if tp not in self._pending_reset]
        if committed_lookup and self.group_id:
            committed = await self.committed(committed_lookup)
            for tp, om in committed.items():
                if om is not None:
                    self._positions[tp] = om.offset
                    self._leader_epochs[tp] = om.leader_epoch
        policy = self.settings["auto.offset.reset"]
        for tp in missing:
            if tp in self._positions:
                continue
            where = self._pending_reset.get(tp, policy)
            if where == "none":
                raise KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE, "no committed offset and auto.offset.reset is none",
                                 what=f"position of {tp}")
            to_reset[tp] = where
        await self._reset(to_reset)

    async def _reset(self, wanted: dict[TopicPartition, str]) -> None:
        if not wanted:
            return
        from kafkamock.client.offsets import list_offsets
        from kafkamock.durations import parse_duration_ms

        specs: dict[tuple[str, int], int] = {}
        for tp, where in wanted.items():
            if where == "earliest":
                specs[(tp.topic, tp.partition)] = EARLIEST
            elif where == "latest":
                specs[(tp.topic, tp.partition)] = LATEST
            else:                           # by_duration:<ISO-8601>: the first record newer than now - duration
                specs[(tp.topic, tp.partition)] = int(time.time() * 1000) - parse_duration_ms(where.split(":", 1)[1])
        found = await list_offsets(self.client, specs, isolation_level=1 if self.read_committed else 0)
        latest_needed = {k: LATEST for k, v in found.items() if v < 0}
        if latest_needed:
            found.update(await list_offsets(self.client, latest_needed,
                                            isolation_level=1 if self.read_committed else 0))
        for key, offset in found.items():
            tp = TopicPartition(*key)
            if tp in wanted and tp not in self._positions:
                self._positions[tp] = offset
                self._pending_reset.pop(tp, None)

    def _drain(self) -> list[ConsumerRecord]:
        out: list[ConsumerRecord] = []
        limit = self.settings["max.poll.records"]
        owned = self.assignment()
        for tp, buffered in list(self._buffers.items()):
            if tp in self._paused or tp not in owned:
                continue
            take = min(len(buffered.records) - buffered.start, limit - len(out))
            if take > 0:
                out.extend(buffered.records[buffered.start:buffered.start + take])
                buffered.start += take
                last = out[-1]
                self._positions[tp] = last.offset + 1
                self._leader_epochs[tp] = last.leader_epoch
            if buffered.start >= len(buffered.records):
                del self._buffers[tp]
                self._positions[tp] = max(self._positions.get(tp, 0), buffered.next_offset)
            if len(out) >= limit:
                break
        if out:
            self._start_fetches()          # fetch ahead while the application works on these
        return out

    def _start_fetches(self) -> None:
        by_leader: dict[int, list[TopicPartition]] = {}
        for tp in self._fetchable():
            if tp in self._buffers or tp not in self._positions:
                continue
            leader = self.client.leaders.get(tp)
            if leader is None:
                leader = -1
            by_leader.setdefault(leader, []).append(tp)
        assert self._nursery is not None
        for leader, tps in by_leader.items():
            if leader not in self._in_flight:
                self._in_flight.add(leader)
                self._nursery.start_soon(self._fetch, leader, tps)

    async def _fetch(self, leader: int, partitions: list[TopicPartition]) -> None:
        s = self.settings
        try:
            if leader < 0:
                await self.client.metadata(list({tp.topic for tp in partitions}))
                return
            conn = await self.client.broker(leader)
            started = {tp: (self._positions[tp], self._generation.get(tp, 0)) for tp in partitions
                       if tp in self._positions}
            topics: dict[str, list[dict]] = {}
            for tp, (offset, _) in started.items():
                topics.setdefault(tp.topic, []).append({
                    "partition": tp.partition, "current_leader_epoch": -1, "fetch_offset": offset,
                    "last_fetched_epoch": -1, "log_start_offset": -1,
                    "partition_max_bytes": s["max.partition.fetch.bytes"]})
            if conn.version_for("Fetch") >= 13 and any(t not in self.client.topic_ids for t in topics):
                await self.client.metadata(list(topics))
            response = await conn.request("Fetch", {
                "replica_id": -1, "max_wait_ms": s["fetch.max.wait.ms"], "min_bytes": s["fetch.min.bytes"],
                "max_bytes": s["fetch.max.bytes"], "isolation_level": 1 if self.read_committed else 0,
                "session_id": 0, "session_epoch": -1,
                "topics": [{"topic": t, "topic_id": self.client.topic_ids.get(t), "partitions": ps}
                           for t, ps in topics.items()],
                "forgotten_topics_data": [], "rack_id": s["client.rack"]})
            if response.error_code:
                raise KafkaError(response.error_code, what="fetch")
            names = self.client.topic_names
            refresh = False
            for t in response.responses:
                name = t.topic or names.get(t.topic_id, "")
                for p in t.partitions:
                    tp = TopicPartition(name, p.partition_index)
                    if tp not in started:
                        continue
                    offset, generation = started[tp]
                    if self._generation.get(tp, 0) != generation or self._positions.get(tp) != offset:
                        continue                    # seeked, revoked or lost meanwhile
                    if p.error_code:
                        refresh |= self._fetch_failed(tp, p.error_code)
                        continue
                    self._take(tp, offset, p)
        except (KafkaConnectionError, OSError) as exc:
            log.info("fetch from broker %s failed: %s", leader, exc)
            await self.client.metadata(list({tp.topic for tp in partitions}))
            await trio.sleep(self.client.retry_backoff_s)
        except (KafkaError, CorruptRecordError) as exc:
            self._fetch_error = exc
        else:
            if refresh:
                await self.client.metadata(list({tp.topic for tp in partitions}))
                await trio.sleep(self.client.retry_backoff_s)
        finally:
            self._in_flight.discard(leader)
            self._wake_poll()

    def _fetch_failed(self, tp: TopicPartition, code: int) -> bool:
        if code in LEADER_MOVED:
            return True
        if code == ErrorCode.OFFSET_OUT_OF_RANGE:
            policy = self.settings["auto.offset.reset"]
            if policy == "none":
                self._fetch_error = KafkaError(code, "auto.offset.reset is none",
                                               what=f"fetch {tp} at offset {self._positions.get(tp)}")
            else:
                log.info("%s: offset %s out of range, resetting to %s", tp, self._positions.get(tp), policy)
                self._positions.pop(tp, None)
                self._pending_reset[tp] = policy if not policy.startswith("by_duration") else "earliest"
            return False
        self._fetch_error = KafkaError(code, what=f"fetch {tp}")
        return False

    def _take(self, tp: TopicPartition, offset: int, data: Any) -> None:
        batches, after = deliverable_batches(data.records, data.aborted_transactions, self.read_committed)
        kd, vd = self.settings["key.deserializer"], self.settings["value.deserializer"]
        records: list[ConsumerRecord] = []
        append, topic, partition = records.append, tp.topic, tp.partition
        for batch in batches:
            ts_type = 1 if batch.timestamp_type == "LogAppendTime" else 0
            epoch = batch.partition_leader_epoch
            log_append_time = batch.max_timestamp
            for r in batch.records:
                if r.offset < offset:
                    continue
                key, value = r.key, r.value
                if kd is not None and key is not None:
                    key = kd(key)
                if vd is not None and value is not None:
                    value = vd(value)
                append(ConsumerRecord(topic, partition, r.offset, log_append_time if ts_type else r.timestamp,
                                      ts_type, key, value, r.headers, epoch))
        if after > offset:
            self._buffers[tp] = _Buffered(records, after, offset)
        elif data.records and len(data.records) >= self.settings["max.partition.fetch.bytes"]:
            self._fetch_error = KafkaError(ErrorCode.RECORD_LIST_TOO_LARGE,
                                           "a batch is larger than max.partition.fetch.bytes",
                                           what=f"fetch {tp} at offset {offset}")
