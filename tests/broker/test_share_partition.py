"""The share-partition core (KIP-932, KIP-1222): record states as a table, acquisition locks on the caller's clock,
delivery counts and the delivery limit, RENEW, the SPSO/SPEO, and the durable form of the seed page, with its worked
example (SPSO=110, SPEO=121) as a golden SHARE_CHECKPOINT. Pure core: no broker, no sockets, no sleeping."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.share_state import assert_restored

from kafkamock.broker.share import AckType, RecordState, SharePartition
from kafkamock.broker.share.persisted import (
    PersistedShareState,
    ShareCheckpoint,
    ShareDelta,
    ShareStateRecord,
    as_values,
    from_control,
    replay,
)
from kafkamock.broker.share.state import InvalidAckRequest, InvalidRecordState, allowed
from kafkamock.records import decode_batches, decode_control, share_checkpoint_batch, split_batches

LOCK = 30_000
S = RecordState


def partition(start: int = 0, *, limit: int = 5, locks: int = 2000) -> SharePartition:
    return SharePartition("G1", start, lock_duration_ms=lambda: LOCK, delivery_limit=lambda: limit,
                          max_in_flight=lambda: locks)


def runs(acquired) -> list[tuple[int, int, int]]:
    return [(r.first_offset, r.last_offset, r.delivery_count) for r in acquired]


def decoded(batch: bytes):
    (b,) = decode_batches(batch)
    assert b.is_control and not b.is_transactional
    (rec,) = b.records
    return decode_control(rec.key, rec.value)


def read_back(record: ShareStateRecord) -> ShareStateRecord:
    """The record as recovery reads it: encoded into its control batch, decoded."""
    found = from_control(*decoded(record.batch(0)))
    assert found is not None
    return found


def as_value(record: ShareStateRecord) -> dict:
    """The record as the control-record value it encodes (``share_checkpoint_batch`` / ``share_delta_batch``)."""
    fields = {name: getattr(record, name) for name in record.__dataclass_fields__}
    return {**fields, "states": as_values(record.states)}


class Chain:
    """What the share manager does with a share-partition's writes, without a log: the first write a checkpoint,
    then deltas; each replayed into the persisted state as it is "appended" (at offsets 0, 1, ...)."""

    def __init__(self) -> None:
        self.state: PersistedShareState | None = None
        self.written: list[ShareStateRecord] = []

    def _write(self, sp: SharePartition, record: ShareStateRecord | None) -> ShareStateRecord | None:
        if record is not None:
            self.state = replay(self.state, record, len(self.written))
            self.written.append(record)
            sp.written()
        return record

    def checkpoint(self, sp: SharePartition) -> ShareCheckpoint:
        record = sp.checkpoint_record(self.state.checkpoint_epoch + 1 if self.state is not None else 1)
        self._write(sp, record)
        return record

    def delta(self, sp: SharePartition) -> ShareDelta | None:
        assert self.state is not None
        record = sp.delta_record(self.state.checkpoint_epoch, self.state.delta_index + 1)
        self._write(sp, record)
        return record

    def recovered(self) -> PersistedShareState | None:
        """The state replayed from the records as read back from their control batches."""
        state = None
        for offset, record in enumerate(self.written):
            state = replay(state, read_back(record), offset)
        return state


def test_the_state_moves_kafka_allows():
    assert allowed(S.AVAILABLE, S.ACQUIRED) and not allowed(S.AVAILABLE, S.ACKNOWLEDGED)
    assert all(allowed(S.ACQUIRED, s) for s in (S.AVAILABLE, S.ACKNOWLEDGED, S.ARCHIVED))
    for state in (S.ACKNOWLEDGED, S.ARCHIVED):              # final states take nothing
        assert not any(allowed(state, s) for s in S)
    assert not allowed(S.ACQUIRED, S.ACQUIRED)               # RENEW is a new lock, not a move


def test_acquire_accept_release_reject_and_the_start_offset():
    sp = partition(100)
    assert runs(sp.acquire("m1", [(100, 104)], 500, 0)) == [(100, 104, 1)]
    assert (sp.start_offset, sp.end_offset, sp.spe_offset) == (100, 104, 105)   # Kafka's end: the last acquired
    assert sp.acquire("m2", [(100, 104)], 500, 0) == []          # nothing Available: all held by m1
    sp.acknowledge("m1", 100, 101, AckType.ACCEPT, 10)
    assert sp.start_offset == 102                                # acknowledged records at the start are done
    sp.acknowledge("m1", 102, 102, AckType.RELEASE, 10)
    sp.acknowledge("m1", 103, 103, AckType.REJECT, 10)
    assert sp.state_of(102) == (S.AVAILABLE, 1) and sp.state_of(103) == (S.ARCHIVED, 1)
    assert sp.next_fetch_offset() == 102                         # back to the released record
    assert runs(sp.acquire("m2", [(100, 104), (105, 106)], 500, 20, fetch_offset=102)) == [
        (102, 102, 2), (105, 106, 1)]
    with pytest.raises(InvalidRecordState, match="Member is not the owner of offset"):
        sp.acknowledge("m1", 102, 102, AckType.ACCEPT, 30)       # m2 holds it now
    with pytest.raises(InvalidRecordState, match="Member is not the owner of offset"):
        sp.acknowledge_all("m2", [(102, 102, [1]), (104, 104, [1])], 30)   # 104 is m1's: all or nothing
    assert sp.state_of(102) == (S.ACQUIRED, 2)
    for first_part in ([(105, 106, [1])], [(105, 105, [2])], [(106, 106, [1]), (105, 105, [3])]):
        with pytest.raises(InvalidRecordState):              # a whole batch, one split by the request: all back
            sp.acknowledge_all("m2", [*first_part, (104, 104, [1])], 30)
        assert [sp.state_of(o) for o in (102, 105, 106)] == [(S.ACQUIRED, 2), (S.ACQUIRED, 1), (S.ACQUIRED, 1)]
    with pytest.raises(InvalidAckRequest, match="first offset in request is past acquired records"):
        sp.acknowledge("m2", 107, 107, AckType.ACCEPT, 30)
    with pytest.raises(InvalidAckRequest, match="last offset in request is past acquired records"):
        sp.acknowledge("m2", 105, 108, AckType.ACCEPT, 30)
    with pytest.raises(InvalidRecordState, match="not found in the cache"):
        partition(0).acknowledge("m", 0, 0, AckType.ACCEPT, 0)
    sp.acknowledge("m2", 50, 60, AckType.ACCEPT, 30)             # all before the SPSO: already done, ignored


def test_locks_expire_renew_restarts_them_and_the_delivery_limit_archives():
    sp = partition(limit=2)
    sp.acquire("m1", [(0, 1)], 500, 0)
    assert sp.next_deadline() == LOCK
    sp.acknowledge("m1", 1, 1, AckType.RENEW, 20_000)            # KIP-1222: a new lock, same state and count
    assert sp.state_of(1) == (S.ACQUIRED, 1)
    assert sp.expire_locks(LOCK) == 1                            # offset 0's lock ran out, offset 1's was renewed
    assert sp.state_of(0) == (S.AVAILABLE, 1) and sp.state_of(1) == (S.ACQUIRED, 1)
    assert sp.next_deadline() == 20_000 + LOCK
    assert runs(sp.acquire("m2", [(0, 1)], 500, LOCK)) == [(0, 0, 2)]
    assert sp.expire_locks(20_000 + LOCK) == 1                   # offset 1 back to Available
    assert sp.expire_locks(2 * LOCK) == 1                        # offset 0 at the limit: archived, not redelivered
    assert sp.state_of(0) is None and sp.start_offset == 1
    sp.acquire("m3", [(0, 1)], 500, 2 * LOCK, fetch_offset=1)
    sp.acknowledge("m3", 1, 1, AckType.RELEASE, 2 * LOCK)        # a release at the limit archives too
    assert sp.start_offset == 2 and not sp.cached
    disabled = SharePartition("G1", 0, lock_duration_ms=lambda: LOCK, delivery_limit=lambda: 5,
                              max_in_flight=lambda: 2000, renew_enabled=lambda: False)
    disabled.acquire("m", [(0, 0)], 500, 0)
    with pytest.raises(InvalidRecordState, match="Renewing acquisition locks is not enabled for the group."):
        disabled.acknowledge("m", 0, 0, AckType.RENEW, 1)


def test_record_limits_locks_batch_sizes_and_member_release():
    sp = partition(locks=3)
    assert runs(sp.acquire("m1", [(0, 9)], 2, 0, record_limit=True)) == [(0, 1, 1)]   # MaxRecords, record-limit
    assert sp.state_of(2) == (S.AVAILABLE, 0) and sp.next_fetch_offset() == 2          # the rest waits
    assert runs(sp.acquire("m1", [(0, 9)], 50, 0, fetch_offset=2)) == [(2, 9, 1)]      # batch-optimized: to its end
    assert runs(partition(locks=3).acquire("m1", [(0, 4), (5, 9)], 50, 0)) == [(0, 4, 1)]   # max.record.locks
    batches = partition()
    assert runs(batches.acquire("m", [(0, 1), (2, 3), (4, 5)], 500, 0, batch_size=3)) == [(0, 3, 1), (4, 5, 1)]
    sp.acknowledge("m1", 5, 5, AckType.GAP, 2)                   # the client says 5 had no record
    assert sp.state_of(5) == (S.ARCHIVED, 1)
    assert sp.release_member("m1", 3) == 9                       # what m1 holds goes back when its session ends
    assert sp.state_of(3) == (S.AVAILABLE, 1)


def test_the_seed_pages_worked_example_is_the_golden_checkpoint():
    """KIP-932 seed page: SPSO=110, SPEO=121, record 110 acquired (delivery count 2), 111-112 available (1), 113-118
    acquired (1), 119 acknowledged, 120 acquired (1) -> the SHARE_CHECKPOINT the page prints."""
    sp = partition(110)
    sp.acquire("m", [(110, 120)], 500, 0)                         # all acquired once
    sp.acknowledge("m", 110, 112, AckType.RELEASE, 1)             # 110-112 available, count 1
    sp.acknowledge("m", 119, 119, AckType.ACCEPT, 1)
    assert runs(sp.acquire("m", [(110, 120)], 1, 2, record_limit=True)) == [(110, 110, 2)]
    assert (sp.start_offset, sp.spe_offset) == (110, 121)
    record = sp.checkpoint_record(1)
    value = as_value(record)
    assert value == {"group_id": "G1", "checkpoint_epoch": 1, "start_offset": 110, "end_offset": 121, "states": [
        {"base_offset": 110, "last_offset": 110, "state": 0, "delivery_count": 1},
        {"base_offset": 111, "last_offset": 112, "state": 0, "delivery_count": 1},
        {"base_offset": 113, "last_offset": 118, "state": 0, "delivery_count": 0},
        {"base_offset": 119, "last_offset": 119, "state": 2, "delivery_count": 1},
        {"base_offset": 120, "last_offset": 120, "state": 0, "delivery_count": 0},
    ], "summary_start_offset": 110, "delivery_complete_count": 1}   # tagged: what DescribeShareGroupOffsets reports
    assert record.batch(5) == share_checkpoint_batch(**value, timestamp=5)      # the control batch of that value
    empty = as_value(partition(100).checkpoint_record(1))         # the page's first example
    assert empty == {"group_id": "G1", "checkpoint_epoch": 1, "start_offset": 100, "end_offset": 100, "states": [],
                     "summary_start_offset": -1, "delivery_complete_count": -1}
    kind, written = decoded(record.batch(5))
    assert kind == "SHARE_CHECKPOINT" and written.start_offset == 110 and len(written.states) == 5
    assert (written.summary_start_offset, written.delivery_complete_count) == (110, 1)
    state = replay(None, from_control(kind, written), 0)
    assert state is not None
    restored = SharePartition.from_persisted(state, lock_duration_ms=lambda: LOCK, delivery_limit=lambda: 5,
                                             max_in_flight=lambda: 2000)
    assert [restored.state_of(o) for o in (110, 113, 119, 120)] == [
        (S.AVAILABLE, 1), (S.AVAILABLE, 0), (S.ACKNOWLEDGED, 1), (S.AVAILABLE, 0)]
    assert restored.reported == (110, 1)
    # a restart hands the records out again with the counts the seed's rule implies, batch by persisted run
    assert runs(restored.acquire("m2", [(110, 120)], 500, 0)) == [(110, 112, 2), (113, 118, 1), (120, 120, 1)]


def test_deltas_chain_to_their_checkpoint():
    sp = partition(0)
    sp.acquire("m", [(0, 9)], 500, 0)
    chain = Chain()
    checkpoint = read_back(chain.checkpoint(sp))
    assert chain.delta(sp) is None
    sp.acknowledge("m", 0, 3, AckType.ACCEPT, 1)
    sp.acknowledge("m", 5, 5, AckType.REJECT, 1)
    first = chain.delta(sp)
    assert first is not None and (first.delta_index, first.start_offset) == (1, 4)
    assert as_value(first)["states"] == [{"base_offset": 5, "last_offset": 5, "state": 4, "delivery_count": 1}]
    sp.acknowledge("m", 4, 4, AckType.RELEASE, 2)
    second = chain.delta(sp)
    assert second is not None
    deltas = [read_back(d) for d in (first, second)]
    state = replay(None, checkpoint, 0)
    for offset, delta in enumerate(deltas, 1):
        state = replay(state, delta, offset)
    assert state is not None and state == chain.state             # recovery's replay is run time's
    rebuilt = SharePartition.from_persisted(state, lock_duration_ms=lambda: LOCK, delivery_limit=lambda: 5,
                                            max_in_flight=lambda: 2000)
    expected = {o: (S.AVAILABLE, c - 1) if s is S.ACQUIRED else (s, c) for o, (s, c) in
                ((o, sp.state_of(o)) for o in range(sp.start_offset, sp.spe_offset))}
    assert (rebuilt.start_offset, rebuilt.spe_offset) == (sp.start_offset, sp.spe_offset)
    assert {o: rebuilt.state_of(o) for o in range(rebuilt.start_offset, rebuilt.spe_offset)} == expected
    other_epoch, blank = Chain(), partition(0)
    other_epoch.checkpoint(blank)
    other_epoch.checkpoint(blank)
    with pytest.raises(ValueError):
        replay(other_epoch.state, deltas[0], 9)


ACTIONS = st.lists(st.tuples(st.sampled_from(["acquire", "ack", "expire", "leave"]), st.sampled_from("ab"),
                             st.integers(0, 19), st.integers(0, 4), st.sampled_from(list(AckType))), max_size=40)


@settings(max_examples=200, deadline=None)
@given(ACTIONS)
def test_any_history_keeps_the_invariants_and_survives_checkpoint_and_deltas(actions):
    sp = partition(0, limit=3, locks=12)
    chain = Chain()
    chain.checkpoint(sp)
    now = 0
    for kind, member, offset, width, ack in actions:
        now += 7_000
        if kind == "acquire":
            start = sp.next_fetch_offset()
            sp.acquire(member, [(start, start + width)], 1 + width, now, fetch_offset=start)
        elif kind == "ack":
            try:
                sp.acknowledge(member, offset, offset + width, ack, now)
            except (InvalidRecordState, InvalidAckRequest):
                pass
        elif kind == "expire":
            sp.expire_locks(now)
        else:
            sp.release_member(member, now)
        chain.delta(sp)
        # invariants: the cached batches tile [their first, SPEO) in order, the SPSO's record is unfinished, counts
        # within the limit, a member exactly on Acquired records
        states = [(o, st_) for k in sp._keys for o, st_ in sp.cached[k].states()]
        assert [o for o, _ in states] == list(range(states[0][0], sp.spe_offset)) if states else sp.spe_offset \
            == sp.start_offset
        if states:
            assert sp.state_of(sp.start_offset)[0] in (S.AVAILABLE, S.ACQUIRED)
        assert sp.spe_offset - sp.start_offset <= 12 + 20
        assert all(s.delivery_count <= 3 for _, s in states)
        assert all(bool(s.member) == (s.state is S.ACQUIRED) for _, s in states)
    state = chain.recovered()
    assert state is not None and state == chain.state             # recovery's replay is run time's
    rebuilt = SharePartition.from_persisted(state, lock_duration_ms=lambda: LOCK, delivery_limit=lambda: 3,
                                            max_in_flight=lambda: 12)
    assert_restored(rebuilt, sp)


# -- the share groups' assignor ------------------------------------------------------------------------------------------

def test_simple_share_assignor_covers_every_partition_and_shares_as_kafkas_builder_does():
    import uuid

    from kafkamock.broker.groups.assignors import SHARE_ASSIGNOR

    t1, t2 = uuid.UUID(int=1), uuid.UUID(int=2)
    few = SHARE_ASSIGNOR.assign({"a": frozenset({t1}), "b": frozenset({t1})}, {t1: 4}, {})
    assert sorted(len(few[m][t1]) for m in "ab") == [2, 2] and few["a"][t1] | few["b"][t1] == set(range(4))
    many = SHARE_ASSIGNOR.assign({m: frozenset({t1}) for m in "abcde"}, {t1: 2}, {})
    holders = [sum(p in many[m][t1] for m in "abcde") for p in range(2)]
    assert sorted(holders) == [3, 3]               # each partition to ceil(5/2) = 3 members: 6 assignments
    assert sorted(len(many[m][t1]) for m in "abcde") == [1, 1, 1, 1, 2]
    mixed = SHARE_ASSIGNOR.assign({"a": frozenset({t1}), "b": frozenset({t2})}, {t1: 1, t2: 3}, {})
    assert mixed["a"] == {t1: frozenset({0})} and mixed["b"] == {t2: frozenset({0, 1, 2})}
    sticky = SHARE_ASSIGNOR.assign({"a": frozenset({t1}), "b": frozenset({t1})}, {t1: 4},
                                   {"a": {t1: frozenset({3, 2})}})
    assert sticky["a"][t1] == {2, 3} and sticky["b"][t1] == {0, 1}


# -- reading a log for a share group --------------------------------------------------------------------------------------

def test_read_for_share_acquires_control_batches_with_the_data_as_kafka_does():
    from kafkamock.broker.share import fetching
    from kafkamock.records import encode_batch, end_txn_marker_batch
    from kafkamock.storage import PartitionLog

    plog = PartitionLog()

    def append(data: bytes) -> None:
        buffer = bytearray(data)
        (view,), _ = split_batches(buffer)
        base = plog.log_end_offset
        view.set_base_offset(base)
        plog.append(buffer, base, base + view.last_offset_delta, view.max_timestamp, 0, 0, view.record_count)

    def read(sp, member, max_records, limit=None, **kw):
        offset, views = fetching.read(plog, sp, max_bytes=1 << 20, limit=limit or plog.high_watermark)
        return fetching.acquire(sp, member, offset, views, max_records=max_records, now_ms=0,
                                record_limit=kw.get("record_limit", False), batch_size=kw.get("batch_size", 500))

    append(encode_batch([{"value": b"a%d" % n, "timestamp": 1} for n in range(3)]))          # 0-2
    append(end_txn_marker_batch(True, producer_id=1, producer_epoch=0, coordinator_epoch=0, timestamp=1))   # 3
    append(encode_batch([{"value": b"b%d" % n, "timestamp": 1} for n in range(2)]))          # 4-5
    sp = partition(0)
    first = read(sp, "m1", 4)
    assert runs(first.acquired) == [(0, 3, 1)]            # to the end of the batch holding the 4th offset: the marker
    values = [r.value for b in decode_batches(b"".join(bytes(x) for x in first.records)) for r in b.records
              if not b.is_control]
    assert values == [b"a0", b"a1", b"a2"]                           # whole batches, up to the last acquired
    assert runs(read(sp, "m2", 10).acquired) == [(4, 5, 1)]
    assert read(sp, "m2", 10).acquired == []                        # everything is in flight
    sp.acknowledge_all("m1", [(0, 2, [1]), (3, 3, [0])], 1)         # the marker's offset: a gap for the client
    sp.acknowledge("m2", 4, 5, AckType.ACCEPT, 1)
    assert (sp.start_offset, sp.cached) == (6, {})
    limited = partition(0)
    assert runs(read(limited, "m", 10, limit=2).acquired) == [(0, 2, 1)]   # a batch read below the limit, whole
    few = partition(0)                                              # record-limit: exactly MaxRecords
    assert runs(read(few, "m", 2, record_limit=True).acquired) == [(0, 1, 1)]
    grouped = partition(0)                                          # BatchSize groups whole log batches
    assert runs(read(grouped, "m", 10, batch_size=2).acquired) == [(0, 2, 1), (3, 5, 1)]


def test_a_share_read_stops_once_it_holds_what_the_acquisition_or_min_bytes_can_use():
    """Kafka's read fills MaxBytes and the acquisition drops what is past MaxRecords; here the read stops once it
    holds every in-flight offset and MaxRecords new ones (or MinBytes of data), so a partition of one-record batches
    costs what is handed out, not a megabyte of batches parsed. What is acquired is the same."""
    from kafkamock.broker.share import fetching
    from kafkamock.records import encode_batch
    from kafkamock.storage import PartitionLog

    plog = PartitionLog()
    for n in range(5000):
        buffer = bytearray(encode_batch([{"value": b"%d" % n, "timestamp": 1}]))
        (view,), _ = split_batches(buffer)
        view.set_base_offset(n)
        plog.append(buffer, n, n, 1, 0, 0, 1)
    whole = partition(0)
    _, everything = fetching.read(plog, whole, max_bytes=1 << 20, limit=plog.high_watermark)
    assert len(everything) == 5000
    bounded = partition(0)
    offset, views = fetching.read(plog, bounded, max_bytes=1 << 20, limit=plog.high_watermark, max_records=10)
    assert 10 <= len(views) <= 64
    got = fetching.acquire(bounded, "m", offset, views, max_records=10, now_ms=0, record_limit=False, batch_size=500)
    same = fetching.acquire(whole, "m", 0, everything, max_records=10, now_ms=0, record_limit=False, batch_size=500)
    assert runs(got.acquired) == runs(same.acquired) == [(0, 9, 1)]
    bounded.release_member("m", 1)                                  # 0-9 Available again, in flight: read all of them
    offset, views = fetching.read(plog, bounded, max_bytes=1 << 20, limit=plog.high_watermark, max_records=500)
    assert views[0].base_offset == 0 and 510 <= len(views) <= 1000
    _, enough = fetching.read(plog, partition(0), max_bytes=1 << 20, limit=plog.high_watermark, enough_bytes=1)
    assert 1 <= len(enough) <= 64
