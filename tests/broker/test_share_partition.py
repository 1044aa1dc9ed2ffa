"""The share-partition core (KIP-932, KIP-1222): record states as a table, acquisition locks on the caller's clock,
delivery counts and the delivery limit, RENEW, the SPSO/SPEO, and the durable form of the seed page, with its worked
example (SPSO=110, SPEO=121) as a golden SHARE_CHECKPOINT. Pure core: no broker, no sockets, no sleeping."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkamock.broker.share import AckType, RecordState, SharePartition
from kafkamock.broker.share.state import TRANSITIONS, Event, InvalidRecordState, transition
from kafkamock.records import decode_batches, decode_control, share_checkpoint_batch, share_delta_batch, split_batches

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


def test_the_state_table():
    assert transition(S.AVAILABLE, Event.ACQUIRE) is S.ACQUIRED
    assert transition(S.ACQUIRED, Event.RENEW) is S.ACQUIRED
    assert transition(S.ACQUIRED, Event.LIMIT_REACHED) is S.ARCHIVED
    for state in (S.ACKNOWLEDGED, S.ARCHIVED):              # final states take nothing
        assert not [e for (s, e) in TRANSITIONS if s is state]
    with pytest.raises(InvalidRecordState):
        transition(S.AVAILABLE, Event.ACCEPT)


def test_acquire_accept_release_reject_and_the_start_offset():
    sp = partition(100)
    assert runs(sp.acquire("m1", [(100, 104)], 500, 0)) == [(100, 104, 1)]
    assert (sp.start_offset, sp.end_offset) == (100, 105)
    assert sp.acquire("m2", [(100, 104)], 500, 0) == []          # nothing Available: all held by m1
    sp.acknowledge("m1", 100, 101, AckType.ACCEPT, 10)
    assert sp.start_offset == 102                                # acknowledged records at the start are done
    sp.acknowledge("m1", 102, 102, AckType.RELEASE, 10)
    sp.acknowledge("m1", 103, 103, AckType.REJECT, 10)
    assert sp.state_of(102) == (S.AVAILABLE, 1) and sp.state_of(103) == (S.ARCHIVED, 1)
    assert runs(sp.acquire("m2", [(100, 106)], 500, 20)) == [(102, 102, 2), (105, 106, 1)]
    with pytest.raises(InvalidRecordState):
        sp.acknowledge("m1", 102, 102, AckType.ACCEPT, 30)       # m2 holds it now
    with pytest.raises(InvalidRecordState):
        sp.acknowledge("m2", 104, 105, AckType.ACCEPT, 30)       # 104 is m1's: all or nothing
    assert sp.state_of(105) == (S.ACQUIRED, 1)
    with pytest.raises(InvalidRecordState):
        sp.acknowledge("m2", 105, 105, 9, 30)                    # an unknown type


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
    sp.acquire("m3", [(0, 1)], 500, 2 * LOCK)
    sp.acknowledge("m3", 1, 1, AckType.RELEASE, 2 * LOCK)        # a release at the limit archives too
    assert sp.start_offset == 2 and not sp.records


def test_record_limits_locks_gaps_and_member_release():
    sp = partition(locks=3)
    assert runs(sp.acquire("m1", [(0, 9)], 2, 0)) == [(0, 1, 1)]          # MaxRecords
    assert runs(sp.acquire("m1", [(0, 9)], 50, 0)) == [(2, 2, 1)]         # group.share.partition.max.record.locks
    sp.acknowledge("m1", 0, 2, AckType.ACCEPT, 1)
    assert runs(sp.acquire("m1", [(3, 3), (5, 7)], 50, 1)) == [(3, 3, 1), (5, 5, 1)]   # 3 in flight at most
    assert sp.state_of(4) == (S.ARCHIVED, 0)                                # no batch there: a gap
    sp.acknowledge("m1", 5, 5, AckType.GAP, 2)                              # the client says 5 had no record
    assert sp.state_of(5) == (S.ARCHIVED, 1)
    assert sp.release_member("m1", 3) == 1                                  # 3 goes back when m1 leaves
    assert sp.state_of(3) == (S.AVAILABLE, 1)


def test_the_seed_pages_worked_example_is_the_golden_checkpoint():
    """KIP-932 seed page: SPSO=110, SPEO=121, record 110 acquired (delivery count 2), 111-112 available (1), 113-118
    acquired (1), 119 acknowledged, 120 acquired (1) -> the SHARE_CHECKPOINT the page prints."""
    sp = partition(110)
    sp.acquire("m", [(110, 120)], 500, 0)                         # all acquired once
    sp.acknowledge("m", 110, 112, AckType.RELEASE, 1)             # 110-112 available, count 1
    sp.acknowledge("m", 119, 119, AckType.ACCEPT, 1)
    assert runs(sp.acquire("m", [(110, 110)], 1, 2)) == [(110, 110, 2)]
    assert (sp.start_offset, sp.end_offset) == (110, 121)
    value = sp.checkpoint()
    assert value == {"group_id": "G1", "checkpoint_epoch": 1, "start_offset": 110, "end_offset": 121, "states": [
        {"base_offset": 110, "last_offset": 110, "state": 0, "delivery_count": 1},
        {"base_offset": 111, "last_offset": 112, "state": 0, "delivery_count": 1},
        {"base_offset": 113, "last_offset": 118, "state": 0, "delivery_count": 0},
        {"base_offset": 119, "last_offset": 119, "state": 2, "delivery_count": 1},
        {"base_offset": 120, "last_offset": 120, "state": 0, "delivery_count": 0},
    ]}
    empty = partition(100).checkpoint()                           # the page's first example
    assert empty == {"group_id": "G1", "checkpoint_epoch": 1, "start_offset": 100, "end_offset": 100, "states": []}
    kind, written = decoded(share_checkpoint_batch(**value, timestamp=5))
    assert kind == "SHARE_CHECKPOINT" and written.start_offset == 110 and len(written.states) == 5
    restored = SharePartition.restore(written, lock_duration_ms=lambda: LOCK, delivery_limit=lambda: 5,
                                      max_in_flight=lambda: 2000)
    assert [restored.state_of(o) for o in (110, 113, 119, 120)] == [
        (S.AVAILABLE, 1), (S.AVAILABLE, 0), (S.ACKNOWLEDGED, 1), (S.AVAILABLE, 0)]
    # a restart hands the records out again with the counts the seed's rule implies
    assert runs(restored.acquire("m2", [(110, 120)], 500, 0)) == [(110, 112, 2), (113, 118, 1), (120, 120, 1)]


def test_deltas_chain_to_their_checkpoint():
    sp = partition(0)
    sp.acquire("m", [(0, 9)], 500, 0)
    checkpoint = decoded(share_checkpoint_batch(**sp.checkpoint(), timestamp=0))[1]
    assert sp.take_delta() is None
    sp.acknowledge("m", 0, 3, AckType.ACCEPT, 1)
    sp.acknowledge("m", 5, 5, AckType.REJECT, 1)
    first = sp.take_delta()
    assert (first["delta_index"], first["start_offset"]) == (1, 4)
    assert first["states"] == [{"base_offset": 5, "last_offset": 5, "state": 4, "delivery_count": 1}]
    sp.acknowledge("m", 4, 4, AckType.RELEASE, 2)
    second = sp.take_delta()
    deltas = [decoded(share_delta_batch(**d, timestamp=0))[1] for d in (first, second)]
    rebuilt = SharePartition.restore(checkpoint, lock_duration_ms=lambda: LOCK, delivery_limit=lambda: 5,
                                     max_in_flight=lambda: 2000)
    for delta in deltas:
        rebuilt.apply_delta(delta)
    expected = {o: (s, c - 1 if s is S.ACQUIRED else c) for o, (s, c) in
                ((o, sp.state_of(o)) for o in range(sp.start_offset, sp.end_offset))}
    expected = {o: (S.AVAILABLE if s is S.ACQUIRED else s, c) for o, (s, c) in expected.items()}
    assert (rebuilt.start_offset, rebuilt.end_offset) == (sp.start_offset, sp.end_offset)
    assert {o: rebuilt.state_of(o) for o in range(rebuilt.start_offset, rebuilt.end_offset)} == expected
    other_epoch = partition(0)
    other_epoch.checkpoint()
    other_epoch.checkpoint()
    with pytest.raises(ValueError):
        other_epoch.apply_delta(deltas[0])


ACTIONS = st.lists(st.tuples(st.sampled_from(["acquire", "ack", "expire", "leave"]), st.sampled_from("ab"),
                             st.integers(0, 19), st.integers(0, 4), st.sampled_from(list(AckType))), max_size=40)


@settings(max_examples=200, deadline=None)
@given(ACTIONS)
def test_any_history_keeps_the_invariants_and_survives_checkpoint_and_deltas(actions):
    sp = partition(0, limit=3, locks=12)
    checkpoint = decoded(share_checkpoint_batch(**sp.checkpoint(), timestamp=0))[1]
    deltas = []
    now = 0
    for kind, member, offset, width, ack in actions:
        now += 7_000
        if kind == "acquire":
            sp.acquire(member, [(offset, offset + width)], 1 + width, now)
        elif kind == "ack":
            try:
                sp.acknowledge(member, offset, offset + width, ack, now)
            except InvalidRecordState:
                pass
        elif kind == "expire":
            sp.expire_locks(now)
        else:
            sp.release_member(member, now)
        delta = sp.take_delta()
        if delta is not None:
            deltas.append(decoded(share_delta_batch(**delta, timestamp=0))[1])
        # invariants: every offset in [SPSO, SPEO) is tracked, the first one is unfinished, counts within the limit
        assert set(sp.records) == set(range(sp.start_offset, sp.end_offset))
        if sp.records:
            assert sp.records[sp.start_offset].state in (S.AVAILABLE, S.ACQUIRED)
        assert sp.end_offset - sp.start_offset <= 12 + 20
        assert all(r.delivery_count <= 3 for r in sp.records.values())
        assert all((r.member is not None) == (r.state is S.ACQUIRED) for r in sp.records.values())
    rebuilt = SharePartition.restore(checkpoint, lock_duration_ms=lambda: LOCK, delivery_limit=lambda: 3,
                                     max_in_flight=lambda: 12)
    for delta in deltas:
        rebuilt.apply_delta(delta)
    assert (rebuilt.start_offset, rebuilt.end_offset) == (sp.start_offset, sp.end_offset)
    for o in range(sp.start_offset, sp.end_offset):
        state, count = sp.state_of(o)
        assert rebuilt.state_of(o) == ((S.AVAILABLE, count - 1) if state is S.ACQUIRED else (state, count))


# -- the share groups' assignor ------------------------------------------------------------------------------------------

def test_simple_share_assignor_covers_every_partition_and_shares_when_members_outnumber_them():
    import uuid

    from kafkamock.broker.groups.assignors import SHARE_ASSIGNOR

    t1, t2 = uuid.UUID(int=1), uuid.UUID(int=2)
    few = SHARE_ASSIGNOR.assign({"a": frozenset({t1}), "b": frozenset({t1})}, {t1: 4}, {})
    assert sorted(len(few[m][t1]) for m in "ab") == [2, 2] and few["a"][t1] | few["b"][t1] == set(range(4))
    many = SHARE_ASSIGNOR.assign({m: frozenset({t1}) for m in "abcde"}, {t1: 2}, {})
    assert all(len(many[m][t1]) == 1 for m in "abcde")                    # nobody idle
    holders = [sum(p in many[m][t1] for m in "abcde") for p in range(2)]
    assert sorted(holders) == [2, 3]                                      # shared, balanced
    mixed = SHARE_ASSIGNOR.assign({"a": frozenset({t1}), "b": frozenset({t2})}, {t1: 1, t2: 3}, {})
    assert mixed["a"] == {t1: frozenset({0})} and mixed["b"] == {t2: frozenset({0, 1, 2})}
    sticky = SHARE_ASSIGNOR.assign({"a": frozenset({t1}), "b": frozenset({t1})}, {t1: 4},
                                   {"a": {t1: frozenset({3, 2})}})
    assert sticky["a"][t1] == {2, 3} and sticky["b"][t1] == {0, 1}


# -- reading a log for a share group --------------------------------------------------------------------------------------

def read_for_share(plog, sp, member, *, max_records, max_bytes, limit, now_ms, whole_batches=False, batch_size=0):
    from kafkamock.broker.share.fetching import acquire, candidates

    data = candidates(plog, sp, max_bytes=max_bytes, limit=limit)
    return acquire(sp, member, data, max_records=max_records, limit=limit, now_ms=now_ms, whole_batches=whole_batches,
                   batch_size=batch_size)


def test_read_for_share_acquires_data_batches_and_leaves_control_batches_as_gaps():
    from kafkamock.records import encode_batch, end_txn_marker_batch
    from kafkamock.storage import PartitionLog

    plog = PartitionLog()

    def append(data: bytes) -> None:
        buffer = bytearray(data)
        (view,), _ = split_batches(buffer)
        base = plog.log_end_offset
        view.set_base_offset(base)
        plog.append(buffer, base, base + view.last_offset_delta, view.max_timestamp, 0, 0, view.record_count)

    append(encode_batch([{"value": b"a%d" % n, "timestamp": 1} for n in range(3)]))          # 0-2
    append(end_txn_marker_batch(True, producer_id=1, producer_epoch=0, coordinator_epoch=0, timestamp=1))   # 3
    append(encode_batch([{"value": b"b%d" % n, "timestamp": 1} for n in range(2)]))          # 4-5
    sp = partition(0)
    first = read_for_share(plog, sp, "m1", max_records=4, max_bytes=1 << 20, limit=plog.high_watermark, now_ms=0)
    assert runs(first.acquired) == [(0, 2, 1), (4, 4, 1)]
    assert sp.state_of(3) == (S.ARCHIVED, 0)                        # the marker's offset is a gap
    values = [r.value for b in decode_batches(b"".join(bytes(x) for x in first.records)) for r in b.records]
    assert values == [b"a0", b"a1", b"a2", b"b0", b"b1"]            # whole batches; the client keeps what it acquired
    second = read_for_share(plog, sp, "m2", max_records=10, max_bytes=1 << 20, limit=plog.high_watermark, now_ms=0)
    assert runs(second.acquired) == [(5, 5, 1)]
    assert read_for_share(plog, sp, "m2", max_records=10, max_bytes=1 << 20, limit=plog.high_watermark,
                          now_ms=0).acquired == []                  # everything is in flight
    sp.acknowledge("m1", 0, 2, AckType.ACCEPT, 1)
    assert sp.start_offset == 4                                     # 0-2 done, 3 a gap
    limited = partition(0)
    assert runs(read_for_share(plog, limited, "m", max_records=10, max_bytes=1 << 20, limit=2, now_ms=0).acquired) \
        == [(0, 1, 1)]                                              # nothing at or past the limit (an LSO, say)
    whole = partition(0)                                            # batch-optimized: the started batch to its end
    assert runs(read_for_share(plog, whole, "m", max_records=2, max_bytes=1 << 20, limit=plog.high_watermark,
                               now_ms=0, whole_batches=True).acquired) == [(0, 2, 1)]
    split = partition(0)                                            # BatchSize: ranges of at most 2 records
    assert runs(read_for_share(plog, split, "m", max_records=10, max_bytes=1 << 20, limit=plog.high_watermark,
                               now_ms=0, batch_size=2).acquired) == [(0, 1, 1), (2, 2, 1), (4, 5, 1)]
