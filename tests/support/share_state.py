"""Comparing a share-partition rebuilt from its durable state with the live one it was written from."""

from __future__ import annotations

from collections.abc import Collection

from kafkamock.broker.share import RecordState, SharePartition


def as_persisted(state):
    """A record's state as a restart must bring it back: Acquired as Available with its delivery count less one (the
    KIP-932 page's rule); Available and never delivered is the same as not in flight."""
    if state is not None and state[0] is RecordState.ACQUIRED:
        state = (RecordState.AVAILABLE, state[1] - 1)
    return None if state in (None, (RecordState.AVAILABLE, 0)) else state


def assert_restored(rebuilt: SharePartition, live: SharePartition, holes: Collection[int] = ()) -> None:
    """The rebuilt share-partition is the live one with its acquisitions forgotten: the same SPSO, and every offset
    past it in the state the seed's rule gives. An acquisition that moved the live SPSO over ``holes`` (offsets
    holding no record: share-state control batches) was not written, so the rebuilt SPSO may stay before them."""
    assert rebuilt.start_offset <= live.start_offset
    assert set(range(rebuilt.start_offset, live.start_offset)) <= set(holes)
    for offset in range(live.start_offset, max(live.spe_offset, rebuilt.spe_offset)):
        assert as_persisted(rebuilt.state_of(offset)) == as_persisted(live.state_of(offset)), offset
