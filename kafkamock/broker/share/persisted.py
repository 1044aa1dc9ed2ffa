"""A share-partition's durable state and the one function that changes it: replaying its records.

The KIP-932 seed page writes a share-partition's state into its topic-partition as SHARE_CHECKPOINT (the whole state,
under a new checkpoint epoch) and SHARE_DELTA (what changed, chained to the checkpoint by epoch and index) control
records. ``PersistedShareState`` is what those records describe: the SPSO, the SPEO, the runs of records with a
state other than "Available, never delivered" and their delivery counts, and what DescribeShareGroupOffsets reports.
As Kafka's ShareCoordinatorShard changes its ShareGroupOffset only in ``replay(ShareSnapshot / ShareUpdate)``, the
state changes only through ``replay``: at run time right after the share manager appends a record, and at recovery
for each record read back from the log, so both build the same value from the same records. The acquisition cache
(locks, Acquired records, members) is not durable and lives in ``SharePartition``, which is initialized from this
state when a share-partition is recovered.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from operator import attrgetter
from typing import Any, NamedTuple

from kafkamock.broker.share.state import RecordState
from kafkamock.records import share_checkpoint_batch, share_delta_batch

DELETED = -1        # a SHARE_CHECKPOINT with SPSO -1 is a tombstone: the share-partition was deleted
NO_SUMMARY = -1     # the summary fields' value before anything was reported
NEVER_DELIVERED = (int(RecordState.AVAILABLE), 0)   # (state, delivery count) of a record no run covers


class StateRun(NamedTuple):
    """Offsets ``base_offset..last_offset`` in one persisted state (an Acquired record is written as Available with
    its delivery count less one). A tuple: a long state has many, and replaying builds them by the thousand."""

    base_offset: int
    last_offset: int
    state: int
    delivery_count: int


as_run: Callable[[Iterable[int]], StateRun] = partial(tuple.__new__, StateRun)
"""A ``StateRun`` from its four fields in an iterable, without the Python-level ``__new__`` of a NamedTuple (the
hot paths build one per changed run)."""


def as_values(runs: Iterable[StateRun]) -> list[dict[str, int]]:
    """The runs as the control-record value's ``states`` array."""
    return [{"base_offset": b, "last_offset": last, "state": s, "delivery_count": c} for b, last, s, c in runs]


@dataclass(frozen=True, slots=True)
class ShareCheckpoint:
    """A SHARE_CHECKPOINT value: the whole state over ``start_offset..end_offset - 1`` (SPSO -1: a tombstone)."""

    group_id: str
    checkpoint_epoch: int
    start_offset: int
    end_offset: int
    states: tuple[StateRun, ...]
    summary_start_offset: int = NO_SUMMARY
    delivery_complete_count: int = NO_SUMMARY

    def batch(self, timestamp: int) -> bytes:
        """The control batch that carries it."""
        return share_checkpoint_batch(self.group_id, self.checkpoint_epoch, self.start_offset, self.end_offset,
                                      as_values(self.states), timestamp=timestamp,
                                      summary_start_offset=self.summary_start_offset,
                                      delivery_complete_count=self.delivery_complete_count)


@dataclass(frozen=True, slots=True)
class ShareDelta:
    """A SHARE_DELTA value: the runs that changed and the SPSO, the ``delta_index``-th of its checkpoint's chain."""

    group_id: str
    checkpoint_epoch: int
    delta_index: int
    start_offset: int
    states: tuple[StateRun, ...]
    summary_start_offset: int = NO_SUMMARY
    delivery_complete_count: int = NO_SUMMARY

    def batch(self, timestamp: int) -> bytes:
        """The control batch that carries it."""
        return share_delta_batch(self.group_id, self.checkpoint_epoch, self.delta_index, self.start_offset,
                                 as_values(self.states), timestamp=timestamp,
                                 summary_start_offset=self.summary_start_offset,
                                 delivery_complete_count=self.delivery_complete_count)


ShareStateRecord = ShareCheckpoint | ShareDelta


def from_control(kind: str, value: Any) -> ShareStateRecord | None:
    """The record a decoded SHARE_CHECKPOINT / SHARE_DELTA control record carries (None for other control types)."""
    if kind not in ("SHARE_CHECKPOINT", "SHARE_DELTA"):
        return None
    states = tuple(StateRun(r.base_offset, r.last_offset, r.state, r.delivery_count) for r in value.states)
    if kind == "SHARE_CHECKPOINT":
        return ShareCheckpoint(value.group_id, value.checkpoint_epoch, value.start_offset, value.end_offset, states,
                               value.summary_start_offset, value.delivery_complete_count)
    return ShareDelta(value.group_id, value.checkpoint_epoch, value.delta_index, value.start_offset, states,
                      value.summary_start_offset, value.delivery_complete_count)


@dataclass(frozen=True, slots=True)
class PersistedShareState:
    """What a share-partition's checkpoint and its deltas say, as Kafka's ShareGroupOffset: the records from
    ``start_offset`` (SPSO) to ``end_offset`` (SPEO, exclusive); ``runs`` (sorted, disjoint, adjacent runs of one
    state merged) hold those whose persisted state is not "Available, never delivered", which the others are.
    ``checkpoint_offset`` is where the chain's checkpoint is in the log (what the share snapshot file points at, and
    what retention must not pass); ``summary`` what DescribeShareGroupOffsets reported last (start offset, records
    past it whose delivery is complete), None before the first report."""

    group_id: str
    checkpoint_epoch: int
    delta_index: int
    checkpoint_offset: int
    start_offset: int
    end_offset: int
    runs: tuple[StateRun, ...]
    summary: tuple[int, int] | None


class NotInChain(ValueError):
    """A record that does not continue the state: a delta of another checkpoint epoch, one past the next index, or
    one without a checkpoint; a checkpoint of an epoch not after the current one. Recovery skips it."""


def replay(state: PersistedShareState | None, record: ShareStateRecord, offset: int) -> PersistedShareState | None:
    """The state after ``record`` (written at ``offset``): a checkpoint replaces it (a tombstone ends it: None), a
    delta moves the SPSO forward and overwrites the runs it carries. Runs before the SPSO are dropped."""
    if isinstance(record, ShareCheckpoint):
        if record.start_offset == DELETED:
            return None
        if state is not None and record.checkpoint_epoch <= state.checkpoint_epoch:
            raise NotInChain(f"checkpoint epoch {record.checkpoint_epoch} after {state.checkpoint_epoch}")
        start = record.start_offset
        return PersistedShareState(record.group_id, record.checkpoint_epoch, 0, offset, start,
                                   _end(max(record.end_offset, start), record.states, start),
                                   _overlaid((), record.states, start), _summary(record, None))
    if state is None or record.checkpoint_epoch != state.checkpoint_epoch \
            or record.delta_index != state.delta_index + 1:
        raise NotInChain(f"delta {record.checkpoint_epoch}.{record.delta_index} after "
                         f"{'nothing' if state is None else f'{state.checkpoint_epoch}.{state.delta_index}'}")
    start = max(state.start_offset, record.start_offset)
    return PersistedShareState(state.group_id, state.checkpoint_epoch, record.delta_index, state.checkpoint_offset,
                               start, _end(max(state.end_offset, start), record.states, start),
                               _overlaid(state.runs, record.states, start),
                               _summary(record, state.summary))


def _summary(record: ShareStateRecord, before: tuple[int, int] | None) -> tuple[int, int] | None:
    if record.summary_start_offset == NO_SUMMARY:
        return before
    return record.summary_start_offset, record.delivery_complete_count


def _end(end: int, runs: Sequence[StateRun], start: int) -> int:
    """The SPEO: past the last run at or after the SPSO, if that is further (the runs are sorted)."""
    return max(end, runs[-1].last_offset + 1) if runs and runs[-1].last_offset >= start else end


def _overlaid(runs: tuple[StateRun, ...], changes: Sequence[StateRun], start: int) -> tuple[StateRun, ...]:
    """``runs`` from offset ``start`` on (one straddling it cut), with ``changes`` (sorted, disjoint) written over
    them. Only the runs around the changed offsets are looked at (a delta touches a few records of a long state)."""
    k = bisect.bisect_left(runs, start, key=_last)              # the first run ending at or after start
    if k < len(runs) and runs[k].base_offset < start:
        first = runs[k]
        runs = (StateRun(start, first.last_offset, first.state, first.delivery_count),) + runs[k + 1:]
        k = 0
    if changes and changes[0].last_offset < start:
        changes = [c for c in changes if c.last_offset >= start]
    if not changes:
        return runs[k:] if k else runs
    low, high = max(changes[0].base_offset, start), changes[-1].last_offset
    i = max(bisect.bisect_left(runs, low - 1, key=_last), k)  # with the runs just before and after: they may merge
    j = max(bisect.bisect_right(runs, high + 1, key=_base), i)
    return runs[k:i] + tuple(_swept(list(runs[i:j]), changes, start)) + runs[j:]


def _swept(old: list[StateRun], changes: Sequence[StateRun], start: int) -> list[StateRun]:
    """``old`` (sorted, disjoint) with ``changes`` written over it, merged, without "never delivered" runs."""
    pieces: list[StateRun] = []
    k, n = 0, len(old)
    if not n and (not changes or changes[0].base_offset >= start):
        pieces, changes = list(changes), ()                     # nothing to write over (a checkpoint's runs)
    for change in changes:
        base = max(change.base_offset, start)
        while k < n and old[k].last_offset < base:              # before the change: as it was
            pieces.append(old[k])
            k += 1
        if k < n and old[k].base_offset < base:                 # straddling its start: the part before it
            pieces.append(StateRun(old[k].base_offset, base - 1, old[k].state, old[k].delivery_count))
        pieces.append(change if change.base_offset == base else
                      StateRun(base, change.last_offset, change.state, change.delivery_count))
        while k < n and old[k].last_offset <= change.last_offset:   # under it: gone
            k += 1
        if k < n and old[k].base_offset <= change.last_offset:      # straddling its end: the part after it
            old[k] = StateRun(change.last_offset + 1, old[k].last_offset, old[k].state, old[k].delivery_count)
    pieces += old[k:]
    out: list[StateRun] = []
    for run in pieces:
        base, last, state, count = run
        if (state, count) == NEVER_DELIVERED:                  # no run: what a record is without one
            continue
        if out:
            before = out[-1]
            if before.last_offset + 1 == base and before.state == state and before.delivery_count == count:
                out[-1] = as_run((before.base_offset, last, state, count))
                continue
        out.append(run)
    return out


_last = attrgetter("last_offset")
_base = attrgetter("base_offset")
