"""One share-partition: which records of a topic-partition a share group has in flight, and in what state.

Kafka's SharePartition in small, sans-IO: the caller passes the time and the offset ranges of the batches it read.
Records from the share-partition start offset (SPSO) up to the end offset (SPEO, the first offset never acquired) each
have a state (``state.py``), a delivery count, and while Acquired the member holding them and the deadline of its
acquisition lock. Acknowledged and Archived records at the start move the SPSO on.

The durable form follows the KIP-932 seed page: ``checkpoint`` gives the SHARE_CHECKPOINT value (runs of records with
the same in-memory state and delivery count, an Acquired record written as Available with its delivery count less
one, since an acquisition does not survive a restart); ``take_delta`` the SHARE_DELTA runs of what changed since;
``restore`` and ``apply_delta`` rebuild the state from them, in order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kafkamock.broker.share.state import ACK_EVENTS, AckType, Event, InvalidRecordState, RecordState, transition

NEVER = 2**63 - 1
S = RecordState


@dataclass(slots=True)
class InFlight:
    state: RecordState
    delivery_count: int
    member: str | None = None
    deadline: int = NEVER


@dataclass(frozen=True, slots=True)
class AcquiredRun:
    """Records handed to a member by one acquisition: ShareFetch's AcquiredRecords entry."""

    first_offset: int
    last_offset: int
    delivery_count: int


class SharePartition:
    """The in-flight records of one (group, topic, partition)."""

    def __init__(self, group_id: str, start_offset: int, *, lock_duration_ms: Callable[[], int],
                 delivery_limit: Callable[[], int], max_in_flight: Callable[[], int]):
        self.group_id = group_id
        self.start_offset = start_offset          # SPSO
        self.end_offset = start_offset            # SPEO: the first offset never acquired
        self.records: dict[int, InFlight] = {}    # every offset in [SPSO, SPEO)
        self.lock_duration_ms = lock_duration_ms
        self.delivery_limit = delivery_limit
        self.max_in_flight = max_in_flight
        self.checkpoint_epoch = 0
        self.delta_index = 0
        self._changed: set[int] = set()
        self._persisted_start = start_offset

    # -- acquiring ----------------------------------------------------------------------------------------------------

    def acquire(self, member: str, batches: Iterable[tuple[int, int]], max_records: int, now_ms: int, *,
                whole_batches: bool = False) -> list[AcquiredRun]:
        """Acquire for ``member`` up to ``max_records`` Available records among the offsets of ``batches`` (the
        (first, last) offsets of the batches read from the log, in order): each gets its delivery count raised and
        a lock until now + ``group.share.record.lock.duration.ms``. New offsets past the SPEO are acquired only
        while the records in flight stay within ``group.share.partition.max.record.locks``.

        ``whole_batches`` is KIP-1206's batch-optimized mode: ``max_records`` is checked only between batches, so
        a batch once started is acquired to its end (MaxRecords "can be exceeded for alignment of batch
        boundaries"); otherwise (record-limit mode) never more than ``max_records``."""
        deadline = now_ms + self.lock_duration_ms()
        limit = self.start_offset + self.max_in_flight()
        runs: list[AcquiredRun] = []
        taken = 0
        for first, last in batches:
            if taken >= max_records:
                break
            for offset in range(max(first, self.start_offset), last + 1):
                if taken >= max_records and not whole_batches:
                    break
                record = self.records.get(offset)
                if record is None:
                    if offset < self.end_offset or offset >= limit:
                        continue
                    for gap in range(self.end_offset, offset):        # offsets the log does not have: gaps
                        self.records[gap] = InFlight(S.ARCHIVED, 0)
                        self._changed.add(gap)
                    record = self.records[offset] = InFlight(S.AVAILABLE, 0)
                    self.end_offset = offset + 1
                if record.state is not S.AVAILABLE:
                    continue
                record.state = transition(record.state, Event.ACQUIRE)
                record.delivery_count += 1
                record.member, record.deadline = member, deadline
                self._changed.add(offset)
                taken += 1
                if runs and runs[-1].last_offset == offset - 1 and runs[-1].delivery_count == record.delivery_count:
                    runs[-1] = AcquiredRun(runs[-1].first_offset, offset, record.delivery_count)
                else:
                    runs.append(AcquiredRun(offset, offset, record.delivery_count))
        self._advance()
        return runs

    def acquirable(self, first: int, last: int) -> bool:
        """Whether ``acquire`` would take anything among ``first..last`` now (an Available record, or a new offset
        within ``group.share.partition.max.record.locks``)."""
        first = max(first, self.start_offset)
        if last >= self.end_offset and self.end_offset < self.start_offset + self.max_in_flight():
            return True
        return any(self.records[o].state is S.AVAILABLE for o in range(first, min(last + 1, self.end_offset))
                   if o in self.records)

    # -- acknowledging ------------------------------------------------------------------------------------------------

    def acknowledge(self, member: str, first: int, last: int, ack_type: AckType | int, now_ms: int) -> None:
        """Apply one acknowledgement batch of ``member`` to offsets ``first..last`` (``acknowledge_all``)."""
        self.acknowledge_all(member, [(first, last, ack_type)], now_ms)

    def acknowledge_all(self, member: str, runs: Iterable[tuple[int, int, AckType | int]], now_ms: int) -> None:
        """Apply ``member``'s acknowledgements ``(first, last, type)``, all or nothing: every offset must be Acquired
        by that member (else InvalidRecordState: Kafka's INVALID_RECORD_STATE, and nothing changes). RENEW
        (KIP-1222) restarts the lock for the current lock duration and leaves the state Acquired."""
        checked = []
        for first, last, ack_type in runs:
            try:
                event = ACK_EVENTS[AckType(ack_type)]
            except (ValueError, KeyError):
                raise InvalidRecordState(f"unknown acknowledgement type {ack_type}") from None
            if last < first:
                raise InvalidRecordState(f"last offset {last} is before first offset {first}")
            for offset in range(first, last + 1):
                record = self.records.get(offset)
                if record is None or record.state is not S.ACQUIRED or record.member != member:
                    raise InvalidRecordState(f"offset {offset} is not acquired by member {member}")
            checked.append((first, last, event))
        for first, last, event in checked:
            for offset in range(first, last + 1):
                self._apply(offset, self.records[offset], event, now_ms)
        self._advance()

    def expire_locks(self, now_ms: int) -> int:
        """Acquired records whose lock ran out become Available again (Archived at the delivery limit)."""
        expired = [o for o, r in self.records.items() if r.state is S.ACQUIRED and r.deadline <= now_ms]
        for offset in expired:
            self._apply(offset, self.records[offset], Event.LOCK_EXPIRED, now_ms)
        self._advance()
        return len(expired)

    def release_member(self, member: str, now_ms: int) -> int:
        """A member left (or its share session closed): what it held is released."""
        held = [o for o, r in self.records.items() if r.state is S.ACQUIRED and r.member == member]
        for offset in held:
            self._apply(offset, self.records[offset], Event.RELEASE, now_ms)
        self._advance()
        return len(held)

    def next_deadline(self) -> int:
        return min((r.deadline for r in self.records.values() if r.state is S.ACQUIRED), default=NEVER)

    def _apply(self, offset: int, record: InFlight, event: Event, now_ms: int) -> None:
        if event in (Event.RELEASE, Event.LOCK_EXPIRED) and record.delivery_count >= self.delivery_limit():
            event = Event.LIMIT_REACHED
        record.state = transition(record.state, event)
        if record.state is S.ACQUIRED:                      # RENEW
            record.deadline = now_ms + self.lock_duration_ms()
        else:
            record.member, record.deadline = None, NEVER
        self._changed.add(offset)

    def _advance(self) -> None:
        """Move the SPSO past the finished records at the start."""
        while self.start_offset < self.end_offset:
            record = self.records.get(self.start_offset)
            if record is None or record.state not in (S.ACKNOWLEDGED, S.ARCHIVED):
                break
            del self.records[self.start_offset]
            self._changed.discard(self.start_offset)
            self.start_offset += 1

    def move_start(self, offset: int) -> None:
        """The log start moved past the SPSO (retention, DeleteRecords): what lies before it is gone."""
        if offset <= self.start_offset:
            return
        for gone in range(self.start_offset, min(offset, self.end_offset)):
            self.records.pop(gone, None)
            self._changed.discard(gone)
        self.start_offset = offset
        self.end_offset = max(self.end_offset, offset)
        self._advance()

    def state_of(self, offset: int) -> tuple[RecordState, int] | None:
        record = self.records.get(offset)
        return None if record is None else (record.state, record.delivery_count)

    # -- the durable form (the KIP-932 seed page) ------------------------------------------------------------------------

    def _runs(self, offsets: Iterable[int]) -> list[dict[str, int]]:
        """Runs of consecutive offsets with the same in-memory state and delivery count, as persisted: Acquired is
        written as Available with the delivery count less one."""
        runs: list[dict[str, int]] = []
        key = None
        for offset in sorted(offsets):
            record = self.records[offset]
            here = (record.state, record.delivery_count)
            if runs and key == here and runs[-1]["last_offset"] == offset - 1:
                runs[-1]["last_offset"] = offset
                continue
            key = here
            state, count = here
            if state is S.ACQUIRED:
                state, count = S.AVAILABLE, count - 1
            runs.append({"base_offset": offset, "last_offset": offset, "state": int(state), "delivery_count": count})
        return runs

    def checkpoint(self) -> dict[str, Any]:
        """The next SHARE_CHECKPOINT value: the whole state, under a new checkpoint epoch."""
        self.checkpoint_epoch += 1
        self.delta_index = 0
        self._changed.clear()
        self._persisted_start = self.start_offset
        return {"group_id": self.group_id, "checkpoint_epoch": self.checkpoint_epoch,
                "start_offset": self.start_offset, "end_offset": self.end_offset,
                "states": self._runs(self.records)}

    def take_delta(self) -> dict[str, Any] | None:
        """The next SHARE_DELTA value (the runs that changed since the last checkpoint or delta, and the SPSO), or
        None if nothing did."""
        changed = [o for o in self._changed if o in self.records]
        if not changed and self.start_offset == self._persisted_start:
            return None
        self._changed.clear()
        self._persisted_start = self.start_offset
        self.delta_index += 1
        return {"group_id": self.group_id, "checkpoint_epoch": self.checkpoint_epoch,
                "delta_index": self.delta_index, "start_offset": self.start_offset, "states": self._runs(changed)}

    @property
    def pending_changes(self) -> bool:
        return bool(self._changed)

    @classmethod
    def restore(cls, checkpoint, **limits) -> SharePartition:
        """Rebuild from a SHARE_CHECKPOINT value (then ``apply_delta`` each later delta of the same epoch, in order)."""
        partition = cls(checkpoint.group_id, checkpoint.start_offset, **limits)
        partition.end_offset = checkpoint.end_offset
        partition.checkpoint_epoch = checkpoint.checkpoint_epoch
        for offset in range(checkpoint.start_offset, checkpoint.end_offset):
            partition.records[offset] = InFlight(S.AVAILABLE, 0)
        partition._apply_runs(checkpoint.states)
        partition._advance()
        partition._changed.clear()
        partition._persisted_start = partition.start_offset
        return partition

    def apply_delta(self, delta) -> None:
        if delta.checkpoint_epoch != self.checkpoint_epoch:
            raise ValueError(f"delta of checkpoint epoch {delta.checkpoint_epoch}, not {self.checkpoint_epoch}")
        self.delta_index = delta.delta_index
        self.move_start(delta.start_offset)
        self._apply_runs(delta.states)
        self._advance()
        self._changed.clear()
        self._persisted_start = self.start_offset

    def _apply_runs(self, runs) -> None:
        for run in runs:
            for offset in range(max(run.base_offset, self.start_offset), run.last_offset + 1):
                self.records[offset] = InFlight(RecordState(run.state), run.delivery_count)
                self.end_offset = max(self.end_offset, offset + 1)
        for offset in range(self.start_offset, self.end_offset):
            self.records.setdefault(offset, InFlight(S.AVAILABLE, 0))
