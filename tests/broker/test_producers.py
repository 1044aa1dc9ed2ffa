"""Producer state per partition: what a partition no producer with an id wrote to holds, and that the first write
gives it state of its own."""

from __future__ import annotations

import pytest

from kafkamock.broker.producers import BatchMetadata, ProducerStates


def test_partitions_without_producers_share_read_only_empties_and_a_write_gives_one_its_own():
    a, b = ProducerStates(), ProducerStates()
    assert a.entries is b.entries and a.ongoing is b.ongoing and a.aborted is b.aborted
    with pytest.raises(TypeError):
        a.entries[1] = None                 # type: ignore[index]   # read-only: nothing writes into the shared one
    a.record(7, 0, BatchMetadata(0, 0, 0, 0, 1_000), transactional=True)
    assert list(a.entries) == [7] and a.ongoing == {7: 0}
    assert b.entries == {} and b.ongoing == {} and b.first_unstable_offset() is None
    aborted = a.end_transaction(7, 0, commit=False, marker_offset=1, coordinator_epoch=0, timestamp=1_000)
    assert a.aborted == [aborted] and a.ongoing == {} and b.aborted == ()
    assert b.expire(10**12, 1, log_start_offset=5) == 0 and b.aborted == ()
    assert a.expire(10**12, 1, log_start_offset=5) == 1 and a.aborted == [] and a.entries == {}
