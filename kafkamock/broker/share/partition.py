"""One share-partition: which records of a topic-partition a share group has in flight, and in what state.

Kafka 4.3's SharePartition in small, sans-IO: the caller passes the time and the offset ranges of the batches a log
read returned. As Kafka keeps them, the records in flight are a sorted map of *in-flight batches* (the ranges handed
out by acquisitions): a batch has one state for all its records until something touches part of it (a subset
acknowledgement, a per-offset acknowledgement, a partial re-acquisition), then a state per offset. Each state has a
delivery count and, while Acquired, the member holding it and the deadline of its acquisition lock. ``start_offset``
is the SPSO; ``end_offset`` is Kafka's: the last offset ever acquired (the next fetch starts after it), equal to the
SPSO while nothing is in flight. Errors carry Kafka's words: INVALID_RECORD_STATE (``InvalidRecordState``) and
INVALID_REQUEST (``InvalidAckRequest``) for acknowledgements of offsets not in flight.

This is the in-memory acquisition cache; the durable state is ``persisted.PersistedShareState``, which the share
manager changes only by replaying the records it writes. A change worth writing (an acknowledgement, a release, an
expired lock, an archived record, a moved SPSO) is remembered here until the manager writes it: ``checkpoint_record``
gives the SHARE_CHECKPOINT of the whole state (runs of records with the same state and delivery count, an Acquired
record written as Available with its delivery count less one, since an acquisition does not survive a restart; the
KIP-932 seed page's form), ``delta_record`` the SHARE_DELTA of what changed since the last write, and ``written``
says they are in the log. Acquisitions are not written down (a restart forgets them, as the seed page says). A
recovered share-partition starts from the replayed persisted state (``from_persisted``).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import NotRequired, TypedDict, Unpack

from kafkamock.broker.share.persisted import (
    NEVER_DELIVERED,
    NO_SUMMARY,
    PersistedShareState,
    ShareCheckpoint,
    ShareDelta,
    StateRun,
    as_run,
)
from kafkamock.broker.share.state import AckType, InvalidAckRequest, InvalidRecordState, RecordState, allowed
from kafkamock.broker.timers import NEVER

S = RecordState
EMPTY_MEMBER = ""
INCREASE, NO_OP = 1, 0
ACK_STATES = {AckType.GAP: S.ARCHIVED, AckType.ACCEPT: S.ACKNOWLEDGED, AckType.RELEASE: S.AVAILABLE,
              AckType.REJECT: S.ARCHIVED}
MIN_THROTTLE_LIMIT = 2


class Limits(TypedDict):
    """The group configs a share-partition runs with, read live (KIP-1240: a change applies at once)."""

    lock_duration_ms: Callable[[], int]
    delivery_limit: Callable[[], int]
    max_in_flight: Callable[[], int]
    renew_enabled: NotRequired[Callable[[], bool]]


@dataclass(slots=True)
class InFlight:
    """Kafka's InFlightState: one record's (or a whole batch's) state."""

    state: RecordState
    delivery_count: int
    member: str = EMPTY_MEMBER
    deadline: int = NEVER

    def update(self, new_state: RecordState, ops: int, max_delivery: int, member: str) -> bool:
        """InFlightState.tryUpdateState: False where the state table refuses the move. Making a record Available
        at the delivery limit archives it instead."""
        if new_state is S.AVAILABLE and self.delivery_count >= max_delivery:
            new_state = S.ARCHIVED
        if not allowed(self.state, new_state):
            return False
        self.state = new_state
        if new_state is not S.ARCHIVED:
            self.delivery_count += ops
        self.member = member
        if new_state is not S.ACQUIRED:
            self.deadline = NEVER
        return True

    def copy(self) -> InFlight:
        return InFlight(self.state, self.delivery_count, self.member, self.deadline)


COMPLETE = frozenset({S.ACKNOWLEDGED, S.ARCHIVED})


class InFlightBatch:
    """Kafka's InFlightBatch: offsets ``first..last`` with one state (``batch``) or one per offset (``offsets``)."""

    __slots__ = ("batch", "first", "last", "offsets")

    def __init__(self, first: int, last: int, state: InFlight):
        self.first, self.last = first, last
        self.batch: InFlight | None = state
        self.offsets: dict[int, InFlight] | None = None

    def split(self) -> None:
        """maybeInitializeOffsetStateUpdate: from now on a state per offset, each starting as the batch's."""
        if self.offsets is None:
            assert self.batch is not None
            self.offsets = {o: self.batch.copy() for o in range(self.first, self.last + 1)}
            self.batch = None

    @property
    def whole(self) -> InFlight:
        """The batch's one state (before ``split``)."""
        assert self.batch is not None
        return self.batch

    @property
    def per_offset(self) -> dict[int, InFlight]:
        """The per-offset states (after ``split``)."""
        assert self.offsets is not None
        return self.offsets

    def state_at(self, offset: int) -> InFlight:
        return self.whole if self.offsets is None else self.offsets[offset]

    def states(self) -> Iterable[tuple[int, InFlight]]:
        if self.offsets is not None:
            return self.offsets.items()
        return ((o, self.whole) for o in range(self.first, self.last + 1))


@dataclass(frozen=True, slots=True)
class AcquiredRun:
    """Records handed to a member by one acquisition: ShareFetch's AcquiredRecords entry."""

    first_offset: int
    last_offset: int
    delivery_count: int


_Snapshot = tuple[int, int, bool, set[int], dict[int, "InFlightBatch | tuple[InFlightBatch, InFlight]"]]
"""What ``SharePartition._snapshot`` keeps to roll an acknowledgement back: the offsets, the flag, the changed
offsets and copies of the batches it touched."""


class SharePartition:
    """The in-flight records of one (group, topic, partition)."""

    def __init__(self, group_id: str, start_offset: int, *, lock_duration_ms: Callable[[], int],
                 delivery_limit: Callable[[], int], max_in_flight: Callable[[], int],
                 renew_enabled: Callable[[], bool] = lambda: True):
        self.group_id = group_id
        self.start_offset = start_offset          # SPSO
        self.end_offset = start_offset            # Kafka's endOffset: the last offset acquired so far
        self.cached: dict[int, InFlightBatch] = {}
        self._keys: list[int] = []                # the cached batches' first offsets, sorted
        self.find_next = False                    # whether released records may lie before end_offset + 1
        self.lock_duration_ms = lock_duration_ms
        self.delivery_limit = delivery_limit
        self.max_in_flight = max_in_flight
        self.renew_enabled = renew_enabled
        self._changed: set[int] = set()           # offsets whose durable state changed since the last write
        self._written_start = start_offset        # the SPSO of the last write (or load)
        # What Kafka's persister last received (start offset, records past it whose delivery is complete), as
        # DescribeShareGroupOffsets reports it: written by acknowledgements, releases and expired locks with the
        # start offset from before they move it; None until the first such write.
        self.reported: tuple[int, int] | None = None
        # Soft state, a cache of the log's layout (fetching.read keeps it): offsets first..end-1 hold only share-state
        # batches, which no fetch acquires. Every acknowledgement writes one after the records it is about, so
        # without it each ShareFetch would read and parse those batches again on every partition it asks for.
        self.state_only: tuple[int, int] | None = None

    # -- the cache ------------------------------------------------------------------------------------------------

    def _put(self, batch: InFlightBatch) -> None:
        if batch.first not in self.cached:
            bisect.insort(self._keys, batch.first)
        self.cached[batch.first] = batch

    def _floor(self, offset: int) -> InFlightBatch | None:
        i = bisect.bisect_right(self._keys, offset)
        return self.cached[self._keys[i - 1]] if i else None

    def _sub(self, low: int, high: int) -> list[InFlightBatch]:
        """The cached batches whose first offset is within ``low..high``."""
        i, j = bisect.bisect_left(self._keys, low), bisect.bisect_right(self._keys, high)
        return [self.cached[k] for k in self._keys[i:j]]

    def _clear(self, upto_key: int | None = None) -> None:
        """Forget every cached batch (or those whose first offset is at most ``upto_key``)."""
        j = len(self._keys) if upto_key is None else bisect.bisect_right(self._keys, upto_key)
        for k in self._keys[:j]:
            del self.cached[k]
        del self._keys[:j]

    @property
    def last_cached(self) -> int | None:
        return self.cached[self._keys[-1]].last if self._keys else None

    def in_flight(self) -> int:
        """numInFlightRecords."""
        return self.end_offset - self.start_offset + 1 if self.cached else 0

    # -- fetching -------------------------------------------------------------------------------------------------

    def next_fetch_offset(self) -> int:
        """Where the next log read starts: the first Available record when released ones may exist, else past
        the last offset acquired (SharePartition.nextFetchOffset)."""
        last = self.last_cached
        if last is None or self.start_offset > last:
            self.find_next = False
            return self.end_offset
        if not self.find_next:
            return self.end_offset + 1
        for key in self._keys:
            for offset, state in self.cached[key].states():
                if state.state is S.AVAILABLE:
                    return offset
        self.find_next = False
        return self.end_offset + 1

    def can_acquire(self) -> bool:
        return self.next_fetch_offset() != self.end_offset + 1 or self.in_flight() < self.max_in_flight()

    def acquire(self, member: str, batches: list[tuple[int, int]], max_records: int, now_ms: int, *,
                record_limit: bool = False, batch_size: int = 500, fetch_offset: int | None = None
                ) -> list[AcquiredRun]:
        """SharePartition.acquire over the (base, last) offsets of the batches a log read from ``fetch_offset``
        returned: cached batches that are Available again are re-acquired (whole, or per offset once split), new
        offsets become new in-flight batches (batch-optimized mode: whole log batches, grouped into runs of at
        least ``batch_size`` records; record-limit mode: never more than ``max_records``)."""
        if max_records <= 0 or not batches:
            return []
        last_batch = batches[-1][1]
        if last_batch < self.start_offset:
            return []
        fetch_offset = batches[0][0] if fetch_offset is None else fetch_offset
        max_records, last_to_acquire = self._limits(fetch_offset, max_records, last_batch)
        if max_records <= 0:
            return []
        first_base = base = batches[0][0]
        floor = self._floor(base)
        if floor is None:
            base = max(base, self.start_offset)
        elif floor.last >= base:
            base = floor.first
        deadline = now_ms + self.lock_duration_ms()
        sub = self._sub(min(first_base, base), last_to_acquire)
        if not sub:
            return self._acquire_new(member, batches, record_limit, base, last_to_acquire, batch_size, max_records,
                                     deadline)[0]
        result: list[AcquiredRun] = []
        count = 0
        limit = self.delivery_limit()
        for batch in sub:
            if count >= max_records:
                break
            full = batch.first >= first_base and batch.last <= last_to_acquire
            remaining = max_records - count
            subset_limit = record_limit and batch.last - batch.first + 1 > remaining
            throttle = self._throttled(batch, first_base, last_to_acquire, limit)
            if throttle and count > 0:
                max_records = 0
                break
            if not full or batch.offsets is not None or subset_limit or throttle:
                if batch.offsets is None:
                    if batch.whole.state is not S.AVAILABLE:
                        continue
                    batch.split()
                taken = self._acquire_offsets(member, record_limit, remaining, first_base, last_to_acquire, batch,
                                              result, deadline, limit)
                count += taken
                if throttle and taken > 0:
                    max_records = 0
                    break
                continue
            state = batch.whole
            if state.state is not S.AVAILABLE or not state.update(S.ACQUIRED, INCREASE, limit, member):
                continue
            state.deadline = deadline
            result.append(AcquiredRun(batch.first, batch.last, state.delivery_count))
            count += batch.last - batch.first + 1
        last_cached = sub[-1].last
        if count < max_records and last_cached < last_to_acquire:
            more, taken = self._acquire_new(member, batches, record_limit, last_cached + 1, last_to_acquire,
                                            batch_size, max_records - count, deadline)
            result += more
        return result

    def _limits(self, fetch_offset: int, max_records: int, last_offset: int) -> tuple[int, int]:
        """lastOffsetAndMaxRecordsToAcquire: ``group.share.partition.max.record.locks`` caps the records in
        flight (a read between in-flight batches may still re-acquire up to the end offset)."""
        wanted = min(max_records, self.max_in_flight() - self.in_flight())
        if wanted <= 0 and fetch_offset <= self.end_offset:
            return min(max_records, self.end_offset - fetch_offset + 1), min(last_offset, self.end_offset)
        return wanted, last_offset

    def _throttled(self, batch: InFlightBatch, first: int, last: int, limit: int) -> bool:
        """shouldThrottleRecordsDelivery: Available records this close to the delivery limit go out in smaller
        and smaller groups, so a record that keeps failing does not take its neighbours with it."""
        threshold = max(MIN_THROTTLE_LIMIT, -(-limit // 2))
        if batch.offsets is None:
            return batch.whole.state is S.AVAILABLE and batch.whole.delivery_count >= threshold
        counts = [s.delivery_count for o, s in batch.offsets.items() if first <= o <= last and s.state is S.AVAILABLE]
        return max(counts, default=0) >= threshold

    def _acquire_new(self, member: str, batches: list[tuple[int, int]], record_limit: bool, first: int, last: int,
                     batch_size: int, max_records: int, deadline: int) -> tuple[list[AcquiredRun], int]:
        """acquireNewBatchRecords + createBatches: offsets never acquired before."""
        if not self.cached and self.end_offset > first:
            first = self.end_offset
        last_acquired = last
        if max_records < last_acquired - first + 1:
            last_acquired = _last_of_batch_with(batches, first + max_records - 1)
        runs: list[tuple[int, int]] = []
        current = first
        if not record_limit and last_acquired - first + 1 > batch_size:
            for base, _ in batches:
                if base > last_acquired:
                    break
                if base - current >= batch_size:
                    runs.append((current, base - 1))
                    current = base
        runs.append((current, last_acquired))
        if record_limit and last_acquired - first + 1 > max_records:
            # Only the first MaxRecords records are acquired; the rest of the batch waits, Available, in the cache.
            batch = InFlightBatch(first, last_acquired, InFlight(S.ACQUIRED, 1, member, deadline))
            cut = first + max_records - 1
            batch.split()
            for offset, state in batch.per_offset.items():
                if offset > cut:
                    state.state, state.delivery_count, state.member, state.deadline = S.AVAILABLE, 0, EMPTY_MEMBER, NEVER
            self.find_next = True
            self._put(batch)
            acquired = [AcquiredRun(first, cut, 1)]
        else:
            for a, b in runs:
                self._put(InFlightBatch(a, b, InFlight(S.ACQUIRED, 1, member, deadline)))
            acquired = [AcquiredRun(a, b, 1) for a, b in runs]
        if self._keys[0] == first:
            self.start_offset = first
        if last_acquired > self.end_offset:
            self.end_offset = last_acquired
        taken = acquired[-1].last_offset - first + 1 if record_limit else last_acquired - first + 1
        return acquired, taken

    def _acquire_offsets(self, member: str, record_limit: bool, max_records: int, first: int, last: int,
                         batch: InFlightBatch, result: list[AcquiredRun], deadline: int, limit: int) -> int:
        """acquireSubsetBatchRecords: Available offsets of a split batch, one by one (merged into runs)."""
        count, throttled_max = 0, -1
        threshold = max(MIN_THROTTLE_LIMIT, -(-limit // 2))
        offsets: list[AcquiredRun] = []
        for offset, state in batch.per_offset.items():
            if offset < first:
                continue
            if offset > last:
                break
            if state.state is not S.AVAILABLE:
                continue
            if limit > 2 and state.delivery_count == limit - 1 and count > 0:
                break                                   # its last attempt goes out alone, next time
            if state.delivery_count >= threshold and throttled_max < 0:
                throttled_max = max(1, len(batch.per_offset) >> (state.delivery_count - threshold + 1))
            if not state.update(S.ACQUIRED, INCREASE, limit, member):
                continue
            state.deadline = deadline
            offsets.append(AcquiredRun(offset, offset, state.delivery_count))
            count += 1
            if state.delivery_count == limit and limit > 2:
                break
            if record_limit and count == max_records:
                break
            if throttled_max > 0 and count == throttled_max:
                break
        result.extend(_merge_runs(offsets))
        return count

    # -- acknowledging ------------------------------------------------------------------------------------------------

    def acknowledge(self, member: str, first: int, last: int, ack_type: AckType | int, now_ms: int) -> None:
        """Apply one acknowledgement batch of ``member`` to offsets ``first..last`` (``acknowledge_all``)."""
        self.acknowledge_all(member, [(first, last, [int(ack_type)])], now_ms)

    def acknowledge_all(self, member: str, batches: Iterable[tuple[int, int, list[int]]], now_ms: int) -> None:
        """SharePartition.acknowledge: ``member``'s acknowledgement batches ``(first, last, types)`` (one type for
        the range, or one per offset), all or nothing: the first refusal (InvalidRecordState, InvalidAckRequest, in
        Kafka's words) rolls every change back. RENEW (KIP-1222) restarts the lock for the current lock duration
        and leaves the records Acquired, unless ``share.renew.acknowledge.enable`` is off."""
        snapshot = self._snapshot()
        try:
            for first, last, types in batches:
                self._acknowledge_one(member, first, last, [int(t) for t in types], now_ms, snapshot[-1])
        except (InvalidRecordState, InvalidAckRequest):
            self._rollback(snapshot)
            raise
        self._report()
        self._advance()

    def _acknowledge_one(self, member: str, first: int, last: int, types: list[int], now_ms: int,
                         saved: dict) -> None:
        if any(t != 0 and t not in AckType.__members__.values() for t in types):
            raise InvalidAckRequest(f"Invalid acknowledge type: {types}")
        if last < self.start_offset:
            return                                      # already archived
        floor = self._floor(first)
        if floor is None:
            if first < self.start_offset <= last:
                floor = self._floor(self.start_offset)
            if floor is None:
                raise InvalidRecordState("Batch record not found. The request batch offsets are not found in the "
                                         "cache.")
        sub = self._sub(floor.first, last)
        if sub[-1].last < first:
            raise InvalidAckRequest("Batch record not found. The first offset in request is past acquired records.")
        if last > sub[-1].last:
            raise InvalidAckRequest("Batch record not found. The last offset in request is past acquired records.")
        per_offset = len(types) > 1
        for batch in sub:
            if batch.last < self.start_offset:
                continue
            if batch.offsets is None:                   # what a refusal restores, copied before any change
                if batch.first not in saved:
                    saved[batch.first] = _copy_batch(batch)
            else:
                for offset in range(max(first, batch.first), min(last, batch.last) + 1):
                    if offset not in saved:
                        saved[offset] = (batch, batch.offsets[offset].copy())
            if batch.offsets is None:
                if batch.whole.member == EMPTY_MEMBER:
                    raise InvalidRecordState("The batch cannot be acknowledged. The batch is not in the acquired "
                                             "state.")
                if batch.whole.member != member:
                    raise InvalidRecordState("Member is not the owner of batch record")
            full = batch.first >= first and batch.last <= last
            start_within = batch.first < self.start_offset <= batch.last
            if not full or batch.offsets is not None or per_offset or start_within:
                if batch.offsets is None:
                    if batch.whole.state is not S.ACQUIRED:
                        raise InvalidRecordState("The batch cannot be acknowledged. The subset batch is not in the "
                                                 "acquired state.")
                    batch.split()
                self._acknowledge_offsets(member, first, last, types, batch, now_ms)
            else:
                self._acknowledge_batch(batch, types[0], now_ms)

    def _acknowledge_offsets(self, member: str, first: int, last: int, types: list[int], batch: InFlightBatch,
                             now_ms: int) -> None:
        states = batch.per_offset
        for offset in range(max(first, self.start_offset, batch.first), min(last, batch.last) + 1):
            state = states[offset]
            if state.state is not S.ACQUIRED:
                raise InvalidRecordState("The offset cannot be acknowledged. The offset is not acquired.")
            if state.member != member:
                raise InvalidRecordState("Member is not the owner of offset")
            kind = types[offset - first] if len(types) > 1 else types[0]
            if kind == AckType.RENEW:
                if not self.renew_enabled():
                    raise InvalidRecordState("Renewing acquisition locks is not enabled for the group.")
                state.deadline = now_ms + self.lock_duration_ms()
                continue
            state.update(ACK_STATES[AckType(kind)], NO_OP, self.delivery_limit(), EMPTY_MEMBER)
            self._changed.add(offset)
            if state.state is S.AVAILABLE:
                self.find_next = True

    def _acknowledge_batch(self, batch: InFlightBatch, kind: int, now_ms: int) -> None:
        state = batch.whole
        if state.state is not S.ACQUIRED:
            raise InvalidRecordState("The batch cannot be acknowledged. The batch is not in the acquired state.")
        if kind == AckType.RENEW:
            if not self.renew_enabled():
                raise InvalidRecordState("Renewing acquisition locks is not enabled for the group.")
            state.deadline = now_ms + self.lock_duration_ms()
            return
        if not state.update(ACK_STATES[AckType(kind)], NO_OP, self.delivery_limit(), EMPTY_MEMBER):
            raise InvalidRecordState("Unable to acknowledge records for the batch")
        self._changed.update(range(batch.first, batch.last + 1))
        if state.state is S.AVAILABLE:
            self.find_next = True

    def _snapshot(self) -> _Snapshot:
        """What acknowledging may change: the offsets and flags, and (filled as they are touched) copies of the
        batches it changes; acknowledging splits batches in place but never adds or drops one."""
        saved: dict[int, InFlightBatch | tuple[InFlightBatch, InFlight]] = {}
        return self.start_offset, self.end_offset, self.find_next, set(self._changed), saved

    def _rollback(self, snapshot: _Snapshot) -> None:
        self.start_offset, self.end_offset, self.find_next, self._changed, saved = snapshot
        for offset, kept in saved.items():              # offsets' states first: a whole batch put back wins
            if isinstance(kept, tuple):
                kept[0].per_offset[offset] = kept[1]
        self.cached.update((first, kept) for first, kept in saved.items() if isinstance(kept, InFlightBatch))

    # -- locks and members ----------------------------------------------------------------------------------------

    def expire_locks(self, now_ms: int) -> int:
        """Acquired records whose lock ran out become Available again (Archived at the delivery limit, or before
        the SPSO)."""
        expired = 0
        limit = self.delivery_limit()
        for key in list(self._keys):
            batch = self.cached[key]
            if batch.offsets is None and batch.whole.state is S.ACQUIRED and batch.whole.deadline <= now_ms \
                    and batch.first < self.start_offset <= batch.last:
                batch.split()
            if batch.offsets is None:
                state = batch.whole
                if state.state is S.ACQUIRED and state.deadline <= now_ms:
                    target = S.ARCHIVED if batch.last < self.start_offset else S.AVAILABLE
                    if state.update(target, NO_OP, limit, EMPTY_MEMBER):
                        expired += batch.last - batch.first + 1
                        self._changed.update(range(batch.first, batch.last + 1))
                        self.find_next = self.find_next or state.state is S.AVAILABLE
                continue
            for offset, state in batch.offsets.items():
                if state.state is S.ACQUIRED and state.deadline <= now_ms:
                    target = S.ARCHIVED if offset < self.start_offset else S.AVAILABLE
                    if state.update(target, NO_OP, limit, EMPTY_MEMBER):
                        expired += 1
                        self._changed.add(offset)
                        self.find_next = self.find_next or state.state is S.AVAILABLE
        if expired:
            self._report()
            self._advance()
        return expired

    def release_member(self, member: str, now_ms: int) -> int:
        """releaseAcquiredRecords: a member's share session closed (or it left): what it holds is released."""
        released = 0
        limit = self.delivery_limit()
        for key in list(self._keys):
            batch = self.cached[key]
            if batch.offsets is None and batch.whole.state is S.ACQUIRED and batch.whole.member == member \
                    and batch.first < self.start_offset <= batch.last:
                batch.split()
            if batch.offsets is None:
                state = batch.whole
                if state.state is S.ACQUIRED and state.member == member:
                    state.update(S.ARCHIVED if batch.last < self.start_offset else S.AVAILABLE, NO_OP, limit,
                                 EMPTY_MEMBER)
                    released += batch.last - batch.first + 1
                    self._changed.update(range(batch.first, batch.last + 1))
                    self.find_next = self.find_next or state.state is S.AVAILABLE
                continue
            for offset, state in batch.offsets.items():
                if state.state is S.ACQUIRED and state.member == member:
                    state.update(S.ARCHIVED if offset < self.start_offset else S.AVAILABLE, NO_OP, limit,
                                 EMPTY_MEMBER)
                    released += 1
                    self._changed.add(offset)
                    self.find_next = self.find_next or state.state is S.AVAILABLE
        if released:
            self._report()
            self._advance()
        return released

    def archive(self, first: int, last: int, runs: list[AcquiredRun]) -> list[AcquiredRun]:
        """An aborted transaction's batch just acquired under read_committed: its offsets are archived and left out
        of ``runs`` (filterAbortedTransactionalAcquiredRecords)."""
        floor = self._floor(first)
        for batch in self._sub(floor.first if floor is not None else first, last):
            if batch.offsets is None and (batch.first < first or batch.last > last):
                batch.split()
            for offset, state in list(batch.states()):
                if first <= offset <= last and state.state is S.ACQUIRED:
                    state.state, state.member, state.deadline = S.ARCHIVED, EMPTY_MEMBER, NEVER
                    self._changed.add(offset)
        out = []
        for run in runs:
            if run.first_offset < first:
                out.append(AcquiredRun(run.first_offset, min(run.last_offset, first - 1), run.delivery_count))
            if run.last_offset > last:
                out.append(AcquiredRun(max(run.first_offset, last + 1), run.last_offset, run.delivery_count))
        self._advance()
        return out

    def complete_count(self) -> int:
        """deliveryCompleteCount: records from the SPSO on whose delivery is complete (Acknowledged, Archived)."""
        start, count = self.start_offset, 0
        for b in self.cached.values():
            if b.offsets is None:
                if b.whole.state in COMPLETE and b.last >= start:
                    count += b.last - max(b.first, start) + 1
            else:
                count += sum(1 for o, s in b.offsets.items() if s.state in COMPLETE and o >= start)
        return count

    def _report(self) -> None:
        self.reported = (self.start_offset, self.complete_count())

    def next_deadline(self) -> int:
        return min((s.deadline for b in self.cached.values() for _, s in _distinct(b) if s.state is S.ACQUIRED),
                   default=NEVER)

    # -- the start offset -----------------------------------------------------------------------------------------

    def _advance(self) -> None:
        """maybeUpdateCachedStateAndOffsets: past the finished (Acknowledged, Archived) records at the start."""
        if not self.cached:
            return
        floor = self._floor(self.start_offset)
        if floor is None:
            return
        state = floor.batch if floor.offsets is None else floor.offsets.get(self.start_offset)
        if state is None or state.state not in (S.ACKNOWLEDGED, S.ARCHIVED):
            return
        last_done = -1
        for key in self._keys:
            batch = self.cached[key]
            done = True
            for offset, s in batch.states():
                if s.state not in (S.ACKNOWLEDGED, S.ARCHIVED):
                    done = False
                    break
                last_done = offset
            if not done:
                break
        if last_done == -1:
            return
        last_cached = self.last_cached
        if last_done == last_cached:
            self.start_offset = self.end_offset = last_cached + 1
            self._clear()
            self._forget_changes_before(self.start_offset)
            return
        entry = self._floor(last_done)
        assert entry is not None
        if last_done == entry.last:
            higher = self._keys[bisect.bisect_right(self._keys, last_done)]
            self.start_offset = max(self.start_offset, higher)
            remove_upto: int | None = entry.first
        else:
            self.start_offset = max(self.start_offset, last_done + 1)
            i = self._keys.index(entry.first)
            remove_upto = self._keys[i - 1] if i > 0 else None
        if remove_upto is not None:
            self._clear(remove_upto)
        self._forget_changes_before(self.start_offset)

    def _forget_changes_before(self, offset: int) -> None:
        self._changed = {o for o in self._changed if o >= offset}

    def move_start(self, offset: int) -> None:
        """updateCacheAndOffsets: the log start moved past the SPSO (retention, DeleteRecords); Available records
        before it are archived, what is Acquired stays until it is acknowledged or its lock runs out."""
        if offset <= self.start_offset:
            return
        if not self.cached:
            self.start_offset = self.end_offset = offset
            return
        for key in list(self._keys):
            batch = self.cached[key]
            if batch.first >= offset:
                break
            if batch.offsets is None and batch.last >= offset:
                batch.split()
            if batch.offsets is None:
                if batch.whole.state is S.AVAILABLE:
                    batch.whole.state, batch.whole.member = S.ARCHIVED, EMPTY_MEMBER
                continue
            for o, s in batch.offsets.items():
                if o < offset and s.state is S.AVAILABLE:
                    s.state, s.member = S.ARCHIVED, EMPTY_MEMBER
        self.start_offset = offset
        if self.end_offset < self.start_offset:
            self.end_offset = self.start_offset

    def state_of(self, offset: int) -> tuple[RecordState, int] | None:
        batch = self._floor(offset)
        if batch is None or offset > batch.last or offset < self.start_offset:
            return None
        state = batch.state_at(offset)
        return state.state, state.delivery_count

    # -- the durable form (the KIP-932 seed page) ------------------------------------------------------------------------

    @property
    def spe_offset(self) -> int:
        """The seed page's SPEO: the first offset never acquired (the SPSO when nothing past it is in flight, as
        after the log start moved past every cached batch)."""
        last = self.last_cached
        if last is None or self.start_offset > last:
            return max(self.start_offset, self.end_offset)
        return self.end_offset + 1

    def _runs(self, offsets: Iterable[int]) -> tuple[StateRun, ...]:
        """Runs of consecutive offsets with the same in-memory state and delivery count, as persisted: Acquired is
        written as Available with the delivery count less one; offsets between in-flight batches are gaps
        (Archived)."""
        runs: list[list[int]] = []
        key = None
        for offset in sorted(offsets):
            found = self.state_of(offset)
            state, count = found if found is not None else (S.ARCHIVED, 0)
            if runs and key == (state, count) and runs[-1][1] == offset - 1:
                runs[-1][1] = offset
                continue
            key = (state, count)
            if state is S.ACQUIRED:
                state, count = S.AVAILABLE, count - 1
            runs.append([offset, offset, int(state), count])
        return tuple(map(as_run, runs))

    def checkpoint_record(self, epoch: int) -> ShareCheckpoint:
        """The SHARE_CHECKPOINT of the whole state under checkpoint ``epoch`` (what changed so far stays pending
        until ``written``)."""
        start, end = self.start_offset, self.spe_offset
        return ShareCheckpoint(self.group_id, epoch, start, end, self._runs(range(start, end)), *self._summary())

    def delta_record(self, epoch: int, index: int) -> ShareDelta | None:
        """The SHARE_DELTA ``index`` of checkpoint ``epoch``: the runs that changed since the last write, and the
        SPSO; None if nothing did."""
        changed = [o for o in self._changed if self.start_offset <= o < self.spe_offset]
        if not changed and self.start_offset == self._written_start:
            return None
        return ShareDelta(self.group_id, epoch, index, self.start_offset, self._runs(changed), *self._summary())

    def written(self) -> None:
        """The records of what changed are in the log: nothing is pending."""
        self._changed.clear()
        self._written_start = self.start_offset

    def _summary(self) -> tuple[int, int]:
        """What DescribeShareGroupOffsets reports (``reported``), written with the state so a restart keeps it."""
        return self.reported if self.reported is not None else (NO_SUMMARY, NO_SUMMARY)

    @property
    def pending_changes(self) -> bool:
        return bool(self._changed)

    @property
    def dirty(self) -> bool:
        """Something to write down: records whose state changed, or a start offset moved, since the last write."""
        return bool(self._changed) or self.start_offset != self._written_start

    @classmethod
    def from_persisted(cls, state: PersistedShareState, **limits: Unpack[Limits]) -> SharePartition:
        """A recovered share-partition: its in-flight batches are the persisted runs, each its own batch (records
        never delivered between them too), as Kafka loads the persister's state batches; nothing is acquired."""
        partition = cls(state.group_id, state.start_offset, **limits)
        partition.reported = state.summary
        partition._load(state.runs, state.end_offset)
        return partition

    def reloaded(self, **limits: Unpack[Limits]) -> SharePartition:
        """This share-partition as its node would load it back from its durable state (what an unloaded
        share-partition is when a fetch needs it again): in-flight batches as the persisted runs, acquisitions
        forgotten; what it has not written yet is still to write."""
        again = SharePartition(self.group_id, self.start_offset, **limits)
        again.reported = self.reported
        again._load(self._runs(range(self.start_offset, self.spe_offset)), self.spe_offset)
        again._changed = set(self._changed)
        again._written_start = self._written_start
        return again

    def _load(self, runs: Iterable[StateRun], end: int) -> None:
        """The cache of a share-partition loaded from persisted ``runs`` (sorted, disjoint) over SPSO..``end``:
        consecutive offsets in one persisted state make one in-flight batch, records the runs leave out are
        Available, never delivered; then past the finished records at the start."""
        self._clear()
        start = self.start_offset
        pending: list[int] | None = None            # [first, last, state, delivery count] of the batch being built

        def add(first: int, last: int, state: int, count: int) -> None:
            nonlocal pending
            if pending is not None and pending[2:] == [state, count] and pending[1] + 1 == first:
                pending[1] = last
                return
            if pending is not None:
                self._put(InFlightBatch(pending[0], pending[1], InFlight(S(pending[2]), pending[3])))
            pending = [first, last, state, count]

        upper = max(end, start)
        offset = start
        for run in runs:
            first = max(run.base_offset, start)
            if run.last_offset < first:
                continue
            if first > offset:
                add(offset, first - 1, *NEVER_DELIVERED)
            add(first, run.last_offset, run.state, run.delivery_count)
            offset = run.last_offset + 1
            upper = max(upper, offset)
        if offset < upper:
            add(offset, upper - 1, *NEVER_DELIVERED)
        if pending is not None:
            self._put(InFlightBatch(pending[0], pending[1], InFlight(S(pending[2]), pending[3])))
        self.end_offset = upper - 1 if self.cached else start
        self.find_next = True
        self._advance()
        self._changed.clear()
        self._written_start = self.start_offset

    def forget(self, offsets: Iterable[int]) -> None:
        """Take offsets that hold no record for any consumer out of the cache (the share-state control batches a
        restore brought back as runs): the log reads skip them, so an in-flight entry there would never finish.
        Their batches are split around them; the SPSO moves to the first cached batch past them."""
        for offset in sorted(offsets):
            batch = self._floor(offset)
            if batch is None or offset > batch.last:
                continue
            del self.cached[batch.first]
            self._keys.remove(batch.first)
            for first, last in ((batch.first, offset - 1), (offset + 1, batch.last)):
                if first <= last:
                    self._put(_piece(batch, first, last))
            self._changed.discard(offset)
        last_cached = self.last_cached
        if last_cached is None:
            self.end_offset = self.start_offset
            return
        self.start_offset = max(self.start_offset, self._keys[0])
        self.end_offset = min(self.end_offset, last_cached)


def _distinct(batch: InFlightBatch) -> Iterable[tuple[int, InFlight]]:
    if batch.offsets is not None:
        return batch.offsets.items()
    return [(batch.first, batch.whole)]


def _piece(batch: InFlightBatch, first: int, last: int) -> InFlightBatch:
    """Offsets ``first..last`` of ``batch`` as a batch of their own, with their states."""
    if batch.offsets is None:
        return InFlightBatch(first, last, batch.whole.copy())
    piece = InFlightBatch(first, last, batch.offsets[first].copy())
    offsets = batch.offsets
    piece.offsets = {o: offsets[o].copy() for o in range(first, last + 1) if o in offsets}
    piece.batch = None
    return piece


def _copy_batch(batch: InFlightBatch) -> InFlightBatch:
    return _piece(batch, batch.first, batch.last)


def _last_of_batch_with(batches: list[tuple[int, int]], offset: int) -> int:
    """lastOffsetFromBatchWithRequestOffset: the last offset of the batch holding ``offset`` (else ``offset``)."""
    previous = None
    for base, last in batches:
        if offset >= base:
            previous = (base, last)
            continue
        break
    if previous is not None and offset <= previous[1]:
        return previous[1]
    return offset


def _merge_runs(runs: list[AcquiredRun]) -> list[AcquiredRun]:
    """ShareFetchUtils.accumulateAcquiredRecords: consecutive offsets with one delivery count, one range."""
    out: list[AcquiredRun] = []
    for run in runs:
        if out and out[-1].last_offset + 1 == run.first_offset and out[-1].delivery_count == run.delivery_count:
            out[-1] = AcquiredRun(out[-1].first_offset, run.last_offset, run.delivery_count)
        else:
            out.append(run)
    return out
