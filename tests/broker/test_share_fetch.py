"""ShareFetch and ShareAcknowledge in the core, on a ManualClock, with raw requests through the codec, as Kafka 4.3.1
answers them (checked by tests/differential/test_share_groups.py): acquisition in in-flight batches, long-poll,
acknowledgements piggy-backed and alone with Kafka's codes and words, lock expiry, KIP-1222 RENEW and its request
rules, share-session errors and what closing a session or its connection releases, the delivery limit, the KIP-1240
group configs taking effect, and the durable state (SHARE_CHECKPOINT / SHARE_DELTA control batches in the partition,
which ShareFetch never hands out; restart from a data dir, property-tested). No sockets, no sleeping."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from support.broker_calls import call
from support.share_state import as_persisted, assert_restored

from kafkamock.broker import Cluster, Waiter
from kafkamock.broker.errors import ErrorCode as E
from kafkamock.broker.share import RecordState
from kafkamock.records import decode_batches, decode_control, encode_batch
from kafkamock.storage import DiskStorage
from kafkamock.storage.log import PartitionLog

LOCK = 30_000
GROUP = "sg"


def make_broker(clock, storage=None, partitions=1, **config):
    b = Cluster({"group.share.delivery.count.limit": 3, "group.share.session.timeout.ms": 600_000,
                "group.share.max.session.timeout.ms": 600_000, **config},
               clock=clock, storage=storage)
    if "t" not in b.metadata.topics:
        b.metadata.create_topic("t", partitions, 1)
    return b


@pytest.fixture
def broker(clock):
    return make_broker(clock)


def topic_id(broker):
    return broker.metadata.topics["t"].topic_id


def produce(broker, values, partition=0):
    batch = encode_batch([{"value": v, "timestamp": broker.now_ms()} for v in values])
    answer = call(broker, "Produce", 9, {"transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": [
        {"name": "t", "partition_data": [{"index": partition, "records": batch}]}]})
    assert answer.responses[0].partition_responses[0].error_code == E.NONE


def join(broker, member):
    answer = call(broker, "ShareGroupHeartbeat", 1, {"group_id": GROUP, "member_id": member, "member_epoch": 0,
                                                     "rack_id": None, "subscribed_topic_names": ["t"]},
                  node_id=broker.groups.coordinator_id(GROUP))
    assert answer.error_code == E.NONE
    return answer


def share_fetch(broker, member, epoch, acks=None, *, version=2, wait=0, min_bytes=1, max_records=500,
                max_bytes=1 << 20, renew=False, mode=0, batch_size=500, partitions=(0,), forget=(), conn_id=1):
    acks = acks or {}
    body = {"group_id": GROUP, "member_id": member, "share_session_epoch": epoch, "max_wait_ms": wait,
            "min_bytes": min_bytes, "max_bytes": max_bytes, "max_records": max_records, "batch_size": batch_size,
            "share_acquire_mode": mode, "is_renew_ack": renew,
            "topics": [{"topic_id": topic_id(broker), "partitions": [
                {"partition_index": p, "acknowledgement_batches": acks.get(p, [])} for p in partitions]}],
            "forgotten_topics_data": [{"topic_id": topic_id(broker), "partitions": list(forget)}] if forget else []}
    return call(broker, "ShareFetch", version, body, conn_id=conn_id)


def share_ack(broker, member, epoch, acks, *, version=2, renew=False, conn_id=1):
    body = {"group_id": GROUP, "member_id": member, "share_session_epoch": epoch, "is_renew_ack": renew,
            "topics": [{"topic_id": topic_id(broker), "partitions": [
                {"partition_index": p, "acknowledgement_batches": batches} for p, batches in acks.items()]}]}
    return call(broker, "ShareAcknowledge", version, body, conn_id=conn_id)


def batch(first, last, *types):
    return {"first_offset": first, "last_offset": last, "acknowledge_types": list(types)}


def part(answer, index=0):
    return next(p for t in answer.responses for p in t.partitions if p.partition_index == index)


def acquired(answer, index=0):
    """The AcquiredRecords of a partition; an incremental answer leaves a partition with nothing new out."""
    found = [p for t in answer.responses for p in t.partitions if p.partition_index == index]
    return [(r.first_offset, r.last_offset, r.delivery_count) for p in found for r in p.acquired_records]


def values(answer, index=0):
    records = part(answer, index).records
    data = b"".join(bytes(r) for r in records) if isinstance(records, list) else bytes(records or b"")
    return [r.value for b in decode_batches(data) if not b.is_control for r in b.records]


def answered(waiter: Waiter):
    from support.broker_calls import decode_response

    assert waiter.done, "the share fetch is still waiting"
    return decode_response("ShareFetch", 2, waiter.result.body)


def opened(broker, member, conn_id=1):
    """Join and open the member's share session: the first fetch loads the share-partition (SPSO "latest")."""
    join(broker, member)
    first = share_fetch(broker, member, 0, conn_id=conn_id)
    assert first.error_code == E.NONE and first.responses == []      # still loading: not read by this request
    return first


def control_records(broker, index=0):
    """(offset, kind, value) of every control record of partition ``index`` of ``t``."""
    out = []
    for stored in broker.metadata.topics["t"].partitions[index].log.batches():
        for b in decode_batches(bytes(stored.data)):
            out += [(r.offset, *decode_control(r.key, r.value)) for r in b.records if b.is_control]
    return out


def control_kinds(broker, index=0):
    return [kind for _, kind, _ in control_records(broker, index)]


# -- acquiring and acknowledging ----------------------------------------------------------------------------------

def test_members_acquire_disjoint_records_and_a_release_wakes_a_waiting_fetch(broker):
    opened(broker, "a")
    join(broker, "b")
    produce(broker, [b"v%d" % n for n in range(10)])
    got = share_fetch(broker, "a", 1)
    assert got.acquisition_lock_timeout_ms == LOCK
    assert acquired(got) == [(0, 9, 1)] and values(got) == [b"v%d" % n for n in range(10)]
    waiting = share_fetch(broker, "b", 0, wait=5000)          # nothing left to acquire: b waits
    assert isinstance(waiting, Waiter) and not waiting.done
    released = share_ack(broker, "a", 2, {0: [batch(0, 4, 2)]})   # a gives 0-4 back
    assert released.error_code == E.NONE and part(released).error_code == E.NONE
    assert released.acquisition_lock_timeout_ms == LOCK
    assert acquired(answered(waiting)) == [(0, 4, 2)]         # b is answered at once, delivery count 2
    accepted = share_fetch(broker, "a", 3, {0: [batch(5, 9, 1)]})
    assert part(accepted).acknowledge_error_code == E.NONE
    share = broker.share.partitions[(GROUP, topic_id(broker), 0)]
    assert (share.start_offset, share.end_offset) == (0, 9)   # Kafka's end offset: the last offset acquired
    assert share_ack(broker, "b", 1, {0: [batch(0, 4, 1)]}).error_code == E.NONE
    assert (share.start_offset, share.cached) == (10, {})      # everything acknowledged: the SPSO moved on


def test_at_the_in_flight_limit_a_fetch_waits_until_an_acknowledgement_frees_room(broker):
    """Records are there to read, but the share-partition holds share.partition.max.record.locks in flight: the
    fetch is not answered empty at once (which would send a client spinning), it waits as Kafka's DelayedShareFetch
    does (the bytes it measures against MinBytes are those inside the in-flight window), and the acknowledgement
    that moves the start offset on answers it."""
    broker.groups.configs.set(GROUP, {"share.partition.max.record.locks": 100})
    opened(broker, "a")
    join(broker, "b")
    for first in (0, 100):
        produce(broker, [b"%d" % n for n in range(first, first + 100)])
    assert acquired(share_fetch(broker, "a", 1)) == [(0, 99, 1)]             # the limit: 100 in flight
    waiting = share_fetch(broker, "b", 0, wait=5000)
    assert isinstance(waiting, Waiter) and not waiting.done                   # 100-199 wait behind the limit
    assert share_ack(broker, "a", 2, {0: [batch(0, 99, 1)]}).error_code == E.NONE
    assert acquired(answered(waiting)) == [(100, 199, 1)]


def test_piggy_backed_acks_are_applied_before_the_fetch(broker):
    opened(broker, "a")
    produce(broker, [b"x", b"y", b"z"])
    assert acquired(share_fetch(broker, "a", 1)) == [(0, 2, 1)]
    again = share_fetch(broker, "a", 2, {0: [batch(0, 2, 2, 1, 2)]})   # per-offset types: release, accept, release
    assert part(again).acknowledge_error_code == E.NONE
    assert acquired(again) == [(0, 0, 2), (2, 2, 2)]
    assert values(again) == [b"x", b"y", b"z"]                  # the whole stored batch goes out


def test_a_waiting_fetch_reads_what_is_loaded_at_once_and_a_loading_partition_once_it_loads(clock):
    """Kafka's DelayedShareFetch: the share-partitions loaded already answer at once; one the request loads is read
    by the waiting request as soon as it is loaded, not at MaxWaitMs."""
    broker = Cluster({"group.share.session.timeout.ms": 600_000, "group.share.max.session.timeout.ms": 600_000},
                    clock=clock)
    broker.metadata.create_topic("t", 3, 1)
    broker.groups.configs.set(GROUP, {"share.auto.offset.reset": "earliest"})
    opened(broker, "a")
    produce(broker, [b"p0"], partition=0)
    produce(broker, [b"p1"], partition=1)
    produce(broker, [b"p2"], partition=2)
    got = share_fetch(broker, "a", 1, partitions=(0, 1), wait=5000)     # 1 is loading: 0 answers alone
    assert acquired(got, 0) == [(0, 0, 1)] and acquired(got, 1) == []
    assert acquired(share_fetch(broker, "a", 2, partitions=(), wait=5000), 1) == [(0, 0, 1)]
    waiting = share_fetch(broker, "a", 3, partitions=(2,), forget=(0, 1), wait=5000)
    assert isinstance(waiting, Waiter) and not waiting.done
    broker.tick()                                             # the load is done: no MaxWaitMs to wait out
    assert acquired(answered(waiting), 2) == [(0, 0, 1)] and values(answered(waiting), 2) == [b"p2"]


def test_lock_expiry_makes_records_available_again_with_the_next_delivery_count(broker, clock):
    opened(broker, "a")
    join(broker, "b")
    share_fetch(broker, "b", 0)
    produce(broker, [b"a", b"b"])
    assert acquired(share_fetch(broker, "a", 1)) == [(0, 1, 1)]
    waiting = share_fetch(broker, "b", 1, wait=60_000)
    clock.advance(LOCK - 1)
    broker.tick()
    assert not waiting.done
    clock.advance(1)
    broker.tick()                                             # the lock ran out: b gets the records
    assert acquired(answered(waiting)) == [(0, 1, 2)]
    late = share_ack(broker, "a", 2, {0: [batch(0, 1, 1)]})
    assert (part(late).error_code, part(late).error_message) == (
        E.INVALID_RECORD_STATE, "Member is not the owner of batch record")


def test_the_delivery_limit_archives_a_record(broker, clock):
    opened(broker, "a")
    produce(broker, [b"poison"])
    epoch = 1
    for delivery in (1, 2, 3):
        got = share_fetch(broker, "a", epoch)
        assert acquired(got) == [(0, 0, delivery)]
        assert share_ack(broker, "a", epoch + 1, {0: [batch(0, 0, 2)]}).error_code == E.NONE
        epoch += 2
    assert acquired(share_fetch(broker, "a", epoch)) == []    # archived after 3 deliveries
    assert broker.share.partitions[(GROUP, topic_id(broker), 0)].start_offset == 1


def test_a_later_fetch_starts_at_the_next_partition_so_none_is_starved(clock):
    """Kafka's PartitionRotateStrategy ROUND_ROBIN: request epoch e of a session of n partitions reads from its
    partition e % n on, so MaxRecords filled by one busy partition does not keep the others waiting."""
    broker = make_broker(clock, partitions=3)
    join(broker, "a")
    assert share_fetch(broker, "a", 0, partitions=(0, 1, 2)).responses == []     # loading
    order = [0, 1, 2]                                                             # the request's order
    for p in range(3):
        for first in (0, 5):
            produce(broker, [b"p%d-%d" % (p, n) for n in range(first, first + 5)], partition=p)
    firsts = []
    for epoch in range(1, 7):
        got = share_fetch(broker, "a", epoch, max_records=5, partitions=())
        firsts.append([(x.partition_index, x.acquired_records[0].first_offset)
                       for t in got.responses for x in t.partitions if x.acquired_records])
    assert firsts == [[(order[e % 3], 0 if e <= 3 else 5)] for e in range(1, 7)]


def test_max_bytes_is_shared_evenly_and_only_the_first_read_may_exceed_it(clock):
    """PartitionMaxBytesStrategy UNIFORM: each partition read gets MaxBytes / n; the log read hands out one whole
    batch past its limit only while no partition has returned data (KIP-74)."""
    broker = make_broker(clock, partitions=2)
    join(broker, "a")
    assert share_fetch(broker, "a", 0, partitions=(0, 1)).responses == []
    first, second = 0, 1
    for p in range(2):
        for _ in range(4):
            produce(broker, [b"%d" % p * 100], partition=p)
    size = len(encode_batch([{"value": b"0" * 100, "timestamp": broker.now_ms()}]))
    both = share_fetch(broker, "a", 1, max_bytes=4 * size + 10, partitions=())
    assert [acquired(both, p) for p in (0, 1)] == [[(0, 1, 1)], [(0, 1, 1)]]      # two batches each, not 4 + 0
    small = share_fetch(broker, "a", 2, max_bytes=size // 2, partitions=())         # epoch 2: the first one first
    assert (acquired(small, first), acquired(small, second)) == ([(2, 2, 1)], [])


def test_record_limit_mode_max_records_and_batch_size(broker):
    opened(broker, "a")
    produce(broker, [b"%d" % n for n in range(6)])
    assert acquired(share_fetch(broker, "a", 1, max_records=2, mode=1)) == [(0, 1, 1)]
    assert acquired(share_fetch(broker, "a", 2, max_records=1, mode=0)) == [(2, 5, 1)]   # the batch is completed
    share_ack(broker, "a", 3, {0: [batch(0, 5, 3)]})             # the first state write: a checkpoint at 6
    for first in (7, 9, 11):                                   # three batches of two records
        produce(broker, [b"%d" % first, b"%d" % (first + 1)])
    assert acquired(share_fetch(broker, "a", 4, batch_size=4)) == [(7, 10, 1), (11, 12, 1)]   # log batch boundaries


def test_leaving_the_group_keeps_the_session_and_a_closed_connection_releases(broker):
    opened(broker, "a", conn_id=1)
    join(broker, "b")
    share_fetch(broker, "b", 0, conn_id=2)
    produce(broker, [b"1", b"2"])
    assert acquired(share_fetch(broker, "a", 1, conn_id=1)) == [(0, 1, 1)]
    call(broker, "ShareGroupHeartbeat", 1, {"group_id": GROUP, "member_id": "a", "member_epoch": -1,
                                            "rack_id": None, "subscribed_topic_names": None})
    assert acquired(share_fetch(broker, "b", 1, conn_id=2)) == []   # a's records stay a's: it left the group only
    assert part(share_ack(broker, "a", 2, {0: [batch(0, 0, 1)]})).error_code == E.NONE   # its session works
    broker.share.connection_closed(1)                           # a's connection closes: its session goes
    assert share_fetch(broker, "a", 3, conn_id=1).error_code == E.SHARE_SESSION_NOT_FOUND
    assert acquired(share_fetch(broker, "b", 2, conn_id=2)) == [(1, 1, 2)]   # and what a held is released
    broker.share.connection_closed(2)                           # the group's last session: unloaded
    assert not any(k[0] == GROUP for k in broker.share.loaded)


def test_closing_the_share_session_releases_what_the_member_holds(broker):
    opened(broker, "a")
    join(broker, "b")
    share_fetch(broker, "b", 0, conn_id=2)
    produce(broker, [b"1", b"2"])
    assert acquired(share_fetch(broker, "a", 1)) == [(0, 1, 1)]
    assert share_ack(broker, "a", -1, {0: [batch(0, 0, 1)]}).error_code == E.NONE   # 0 accepted, 1 still held
    assert acquired(share_fetch(broker, "b", 1, conn_id=2)) == [(1, 1, 2)]          # released by the close
    assert share_fetch(broker, "a", 2).error_code == E.SHARE_SESSION_NOT_FOUND


# -- KIP-1222 RENEW -----------------------------------------------------------------------------------------------

def test_renew_restarts_the_lock_and_keeps_the_record_acquired(broker, clock):
    opened(broker, "a")
    join(broker, "b")
    share_fetch(broker, "b", 0)
    produce(broker, [b"slow"])
    assert acquired(share_fetch(broker, "a", 1)) == [(0, 0, 1)]
    clock.advance(LOCK - 1000)
    broker.tick()
    renewed = share_ack(broker, "a", 2, {0: [batch(0, 0, 4)]}, renew=True)
    assert renewed.error_code == E.NONE and part(renewed).error_code == E.NONE
    assert renewed.acquisition_lock_timeout_ms == LOCK
    clock.advance(LOCK - 1)                                   # past the first deadline, before the renewed one
    broker.tick()
    assert acquired(share_fetch(broker, "b", 1)) == []        # still a's
    by_fetch = share_fetch(broker, "a", 3, {0: [batch(0, 0, 4)]}, renew=True, wait=0, min_bytes=0, max_records=0,
                           max_bytes=0)
    assert by_fetch.error_code == E.NONE and part(by_fetch).acknowledge_error_code == E.NONE
    assert acquired(by_fetch) == []                           # a renew request acquires nothing
    clock.advance(LOCK)
    broker.tick()                                             # no more renewals: the lock runs out
    assert acquired(share_fetch(broker, "b", 2)) == [(0, 0, 2)]


def test_renew_rules_give_invalid_request(broker):
    opened(broker, "a")
    produce(broker, [b"r"])
    share_fetch(broker, "a", 1)
    bad = share_fetch(broker, "a", 2, {0: [batch(0, 0, 4)]}, renew=True)   # limits not zero: the code alone
    assert (bad.error_code, bad.error_message, bad.acquisition_lock_timeout_ms) == (E.INVALID_REQUEST, None, 0)
    no_flag = share_ack(broker, "a", 2, {0: [batch(0, 0, 4)]})
    assert (part(no_flag).error_code, part(no_flag).error_message) == (E.INVALID_REQUEST, None)
    at_v1 = share_ack(broker, "a", 3, {0: [batch(0, 0, 4)]}, version=1)
    assert part(at_v1).error_code == E.INVALID_REQUEST       # RENEW is unknown at v1
    unknown = share_ack(broker, "a", 4, {0: [batch(0, 0, 5)]})
    assert part(unknown).error_code == E.INVALID_REQUEST
    assert share_ack(broker, "a", 5, {0: [batch(0, 0, 1)]}).responses[0].partitions[0].error_code == E.NONE


# -- KIP-1240 group configs taking effect ----------------------------------------------------------------------------

def test_group_configs_set_the_delivery_limit_the_record_locks_and_renewing(broker):
    broker.groups.configs.set(GROUP, {"share.delivery.count.limit": 2, "share.partition.max.record.locks": 100,
                                      "share.renew.acknowledge.enable": "false"})
    opened(broker, "a")
    produce(broker, [b"%d" % n for n in range(150)])
    assert acquired(share_fetch(broker, "a", 1, max_records=500)) == [(0, 149, 1)]   # one batch: whole
    refused = share_ack(broker, "a", 2, {0: [batch(0, 149, 4)]}, renew=True)
    assert (part(refused).error_code, part(refused).error_message) == (
        E.INVALID_RECORD_STATE, "Renewing acquisition locks is not enabled for the group.")
    share_ack(broker, "a", 3, {0: [batch(0, 149, 2)]})
    assert acquired(share_fetch(broker, "a", 4)) == [(0, 149, 2)]
    share_ack(broker, "a", 5, {0: [batch(0, 149, 2)]})         # the second delivery was the last (limit 2)
    assert acquired(share_fetch(broker, "a", 6)) == []
    assert control_kinds(broker) == ["SHARE_CHECKPOINT", "SHARE_DELTA"]   # at 150 and 151: the releases
    produce(broker, [b"%d" % n for n in range(150, 300)])
    assert acquired(share_fetch(broker, "a", 7)) == [(152, 301, 1)]
    produce(broker, [b"more"])
    assert acquired(share_fetch(broker, "a", 8)) == []          # 150 in flight: past the 100 record locks


# -- bad input ------------------------------------------------------------------------------------------------------

def test_share_session_and_acknowledgement_errors(broker):
    join(broker, "a")
    assert share_fetch(broker, "a", 3).error_code == E.SHARE_SESSION_NOT_FOUND
    assert share_fetch(broker, "a", 0, {0: [batch(0, 0, 1)]}).error_code == E.INVALID_REQUEST
    assert share_fetch(broker, "a", 0).error_code == E.NONE
    assert share_fetch(broker, "a", 5).error_code == E.INVALID_SHARE_SESSION_EPOCH
    assert share_ack(broker, "a", 0, {0: [batch(0, 0, 1)]}).error_code == E.INVALID_SHARE_SESSION_EPOCH
    produce(broker, [b"1", b"2", b"3"])
    share_fetch(broker, "a", 1)

    def refused(epoch, *batches, index=0):
        p = part(share_ack(broker, "a", epoch, {index: list(batches)}), index)
        return p.error_code, p.error_message
    assert refused(2, batch(5, 5, 1)) == (E.INVALID_REQUEST, "Batch record not found. The first offset in request "
                                                             "is past acquired records.")
    assert refused(3, batch(0, 6, 1)) == (E.INVALID_REQUEST, "Batch record not found. The last offset in request is "
                                                             "past acquired records.")
    assert refused(4, batch(2, 1, 1)) == (E.INVALID_REQUEST, None)
    assert refused(5, batch(0, 1, 1), batch(1, 2, 1)) == (     # touching batches pass the request check
        E.INVALID_RECORD_STATE, "The offset cannot be acknowledged. The offset is not acquired.")
    assert refused(6, batch(0, 2, 1, 1)) == (E.INVALID_REQUEST, None)
    assert refused(7, batch(0, 0, 1), index=7) == (E.UNKNOWN_TOPIC_OR_PARTITION, None)
    assert refused(8, batch(0, 2, 1)) == (E.NONE, None)         # nothing was half-applied
    assert share_ack(broker, "a", -1, {}).error_code == E.NONE                          # -1 closes
    assert share_fetch(broker, "a", 9).error_code == E.SHARE_SESSION_NOT_FOUND


def test_a_session_naming_what_does_not_exist_fails_the_whole_fetch(broker):
    import uuid as _uuid
    opened(broker, "a")
    body = {"group_id": GROUP, "member_id": "a", "share_session_epoch": 1, "max_wait_ms": 0, "min_bytes": 1,
            "max_bytes": 1 << 20, "max_records": 10, "batch_size": 10, "share_acquire_mode": 0, "is_renew_ack": False,
            "topics": [{"topic_id": _uuid.UUID(int=7), "partitions": [{"partition_index": 0,
                                                                       "acknowledgement_batches": []}]}],
            "forgotten_topics_data": []}
    assert call(broker, "ShareFetch", 2, body).error_code == E.UNKNOWN_SERVER_ERROR
    assert share_fetch(broker, "a", 2).error_code == E.UNKNOWN_SERVER_ERROR          # the session still names it
    body.update(share_session_epoch=3, topics=[], forgotten_topics_data=[{"topic_id": _uuid.UUID(int=7),
                                                                          "partitions": [0]}])
    assert call(broker, "ShareFetch", 2, body).error_code == E.NONE
    body.update(group_id="", share_session_epoch=0, forgotten_topics_data=[], topics=[{
        "topic_id": topic_id(broker), "partitions": [{"partition_index": 0, "acknowledgement_batches": []}]}])
    assert part(call(broker, "ShareFetch", 2, body)).error_code == E.UNKNOWN_SERVER_ERROR   # the group "": no load


def test_share_session_limit(clock):
    broker = make_broker(clock, **{"group.share.max.share.sessions": 1})
    join(broker, "a")
    join(broker, "b")
    assert share_fetch(broker, "a", 0).error_code == E.NONE
    assert share_fetch(broker, "b", 0).error_code == E.SHARE_SESSION_LIMIT_REACHED


# -- durable state --------------------------------------------------------------------------------------------------

def test_state_is_written_as_control_batches_that_consumers_skip(broker):
    opened(broker, "a")
    produce(broker, [b"1", b"2", b"3"])
    assert control_records(broker) == []                      # starting and acquiring write nothing (as Kafka)
    share_fetch(broker, "a", 1)
    share_ack(broker, "a", 2, {0: [batch(0, 0, 1), batch(1, 1, 2), batch(2, 2, 3)]})
    share_ack(broker, "a", 3, {0: [batch(0, 0, 1)]})           # refused: nothing changes, nothing is written
    [(offset, kind, value)] = control_records(broker)
    assert (offset, kind, value.checkpoint_epoch, value.start_offset, value.end_offset) == (
        3, "SHARE_CHECKPOINT", 1, 1, 3)                        # 0 is done: the SPSO moved past it
    assert [(r.base_offset, r.last_offset, r.state, r.delivery_count) for r in value.states] == [
        (1, 1, 0, 1), (2, 2, 4, 1)]
    assert (value.summary_start_offset, value.delivery_complete_count) == (0, 2)   # from before the move, as Kafka
    fetched = call(broker, "Fetch", 12, {
        "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20, "isolation_level": 0,
        "session_id": 0, "session_epoch": -1, "rack_id": "", "forgotten_topics_data": [],
        "topics": [{"topic": "t", "partitions": [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20,
                                                  "current_leader_epoch": -1, "log_start_offset": -1,
                                                  "last_fetched_epoch": -1}]}]})
    records = fetched.responses[0].partitions[0].records
    data = b"".join(bytes(r) for r in records) if isinstance(records, list) else bytes(records)
    got = decode_batches(data)                                 # Fetch hands the checkpoint over as a control batch,
    assert [r.value for b in got if not b.is_control for r in b.records] == [b"1", b"2", b"3"]   # which consumers
    assert [b.base_offset for b in got if b.is_control] == [3]                  # skip, as transaction markers
    again = share_fetch(broker, "a", 4)                       # the released record again, never the checkpoint
    assert acquired(again) == [(1, 1, 2)] and values(again) == [b"1", b"2", b"3"]


def test_records_after_the_state_are_acquired_around_its_control_batches(broker):
    """A record produced after a state write lands past its control batch: an acquisition never spans one, and the
    control batches are neither returned nor counted as lag."""
    opened(broker, "a")
    produce(broker, [b"a"])                                    # 0
    assert acquired(share_fetch(broker, "a", 1)) == [(0, 0, 1)]
    share_ack(broker, "a", 2, {0: [batch(0, 0, 1)]})           # checkpoint at 1
    produce(broker, [b"b"])                                    # 2
    assert acquired(share_fetch(broker, "a", 3)) == [(2, 2, 1)]
    share_ack(broker, "a", 4, {0: [batch(2, 2, 2)]})           # released: a delta at 3
    produce(broker, [b"c"])                                    # 4
    again = share_fetch(broker, "a", 5)
    assert acquired(again) == [(2, 2, 2), (4, 4, 1)] and values(again) == [b"b", b"c"]
    assert not any(b.is_control for b in decode_batches(b"".join(bytes(r) for t in again.responses
                                                                  for p in t.partitions for r in [p.records])))
    share = broker.share.partitions[(GROUP, topic_id(broker), 0)]
    assert share.state_of(3) is None and share.start_offset == 2
    share_ack(broker, "a", 6, {0: [batch(2, 2, 1), batch(4, 4, 1)]})          # a delta at 5
    assert [o for o, *_ in control_records(broker)] == [1, 3, 5] and share.start_offset == 5   # past the records
    assert describe_offsets(broker)[1][("t", 0)] == (2, 0, E.NONE)          # lag 0: the records are all done
    waiting = share_fetch(broker, "a", 7, wait=5000)          # MinBytes 1: the control batches do not count
    assert isinstance(waiting, Waiter) and not waiting.done


def test_a_fetch_reads_the_control_batches_after_the_acquired_records_once(broker, monkeypatch):
    """The state written after each acknowledgement lies where the next fetch starts: one read notes that it holds
    no record, and fetches with nothing new then read no log at all (each used to parse the batches again, on every
    partition of the request); what is produced after them is acquired as before."""
    opened(broker, "a")
    produce(broker, [b"a"])                                    # 0
    assert acquired(share_fetch(broker, "a", 1)) == [(0, 0, 1)]
    share_ack(broker, "a", 2, {0: [batch(0, 0, 1)]})           # checkpoint at 1
    log = broker.metadata.topics["t"].partitions[0].log
    reads = []
    original = PartitionLog.read

    def read(self, *args, **kw):
        if self is log:
            reads.append(args)
        return original(self, *args, **kw)
    monkeypatch.setattr(PartitionLog, "read", read)
    assert acquired(share_fetch(broker, "a", 3)) == []         # reads the checkpoint once
    assert len(reads) >= 1
    reads.clear()
    assert acquired(share_fetch(broker, "a", 4)) == [] and acquired(share_fetch(broker, "a", 5)) == []
    assert reads == []
    share = broker.share.partitions[(GROUP, topic_id(broker), 0)]
    assert share.state_only == (1, 2)
    produce(broker, [b"b"])                                    # 2
    got = share_fetch(broker, "a", 6)
    assert acquired(got) == [(2, 2, 1)] and values(got) == [b"b"]
    share_ack(broker, "a", 7, {0: [batch(2, 2, 1)]})           # a delta at 3
    assert acquired(share_fetch(broker, "a", 8)) == [] and share.state_only == (3, 4)
    produce(broker, [b"c"])                                    # 4
    again = share_fetch(broker, "a", 9)
    assert acquired(again) == [(4, 4, 1)] and values(again) == [b"c"]


def test_a_restart_rebuilds_the_state_from_checkpoint_and_deltas(clock, tmp_path):
    broker = make_broker(clock, DiskStorage(tmp_path), **{"kafkamock.share.delta.chain.max": 2})
    opened(broker, "a")
    produce(broker, [b"%d" % n for n in range(6)])
    share_fetch(broker, "a", 1)                               # 0-5 acquired (delivery 1)
    share_ack(broker, "a", 2, {0: [batch(0, 0, 1)]})          # the first write, a checkpoint: 0 acknowledged
    share_ack(broker, "a", 3, {0: [batch(1, 1, 2)]})          # delta 1: 1 released (delivery 1)
    share_ack(broker, "a", 4, {0: [batch(2, 2, 3)]})          # delta 2: 2 rejected
    share_ack(broker, "a", 5, {0: [batch(3, 3, 1)]})          # chain full: a checkpoint
    assert [(o, kind) for o, kind, _ in control_records(broker)] == [
        (6, "SHARE_CHECKPOINT"), (7, "SHARE_DELTA"), (8, "SHARE_DELTA"), (9, "SHARE_CHECKPOINT")]
    assert list(tmp_path.glob("t-0/*.sharestate"))            # the share snapshot file locates the last checkpoint
    share_fetch(broker, "a", 6)                               # 1 acquired again (delivery 2), not written
    live = broker.share.partitions[(GROUP, topic_id(broker), 0)]
    # No close: the process dies here (kill -9). A new broker on the same directory rebuilds the state.
    restarted = make_broker(clock, DiskStorage(tmp_path))
    share = restarted.share.partitions[(GROUP, topic_id(restarted), 0)]
    assert share.start_offset == 1 and restarted.share.checkpoint_offsets[(GROUP, topic_id(restarted), 0)] == 9
    assert [share.state_of(o) for o in range(1, 6)] == [
        (0, 1), (4, 1), (2, 1), (0, 0), (0, 0)]               # Available; the acquired ones as delivery count - 1
    assert share.reported == live.reported == (1, 2)          # what DescribeShareGroupOffsets reports, kept
    opened(restarted, "b")
    got = share_fetch(restarted, "b", 1)
    assert acquired(got) == [(1, 1, 2), (4, 5, 1)]            # 2 rejected, 3 accepted: never again
    share_ack(restarted, "b", 2, {0: [batch(1, 1, 1), batch(4, 5, 1)]})
    assert [(o, kind) for o, kind, _ in control_records(restarted)][-1] == (10, "SHARE_DELTA")   # the chain goes on


def test_a_restart_without_share_snapshots_scans_the_log(clock, tmp_path):
    """A share snapshot file that does not read back (or points past the log end) sends recovery through the whole
    log: the checkpoints are there."""
    broker = make_broker(clock, DiskStorage(tmp_path))
    opened(broker, "a")
    produce(broker, [b"x", b"y"])
    share_fetch(broker, "a", 1)
    share_ack(broker, "a", 2, {0: [batch(0, 0, 1), batch(1, 1, 2)]})
    (snapshot,) = tmp_path.glob("t-0/*.sharestate")
    snapshot.write_bytes(b"garbage")
    restarted = make_broker(clock, DiskStorage(tmp_path))
    share = restarted.share.partitions[(GROUP, topic_id(restarted), 0)]
    assert (share.start_offset, share.state_of(1)) == (1, (0, 1))


def test_a_restart_skips_the_control_batches_inside_the_state(clock, tmp_path):
    """Control batches between the SPSO and the SPEO (records produced after a state write) come back out of the
    in-flight cache, as the live state has them: the SPSO can move past them."""
    broker = make_broker(clock, DiskStorage(tmp_path))
    opened(broker, "a")
    produce(broker, [b"a", b"b"])                              # 0-1
    assert acquired(share_fetch(broker, "a", 1)) == [(0, 1, 1)]
    share_ack(broker, "a", 2, {0: [batch(1, 1, 1)]})           # checkpoint at 2 (0 still acquired)
    produce(broker, [b"c"])                                    # 3
    assert acquired(share_fetch(broker, "a", 3)) == [(3, 3, 1)]
    share_ack(broker, "a", 4, {0: [batch(3, 3, 2)]})           # delta at 4: 3 released
    restarted = make_broker(clock, DiskStorage(tmp_path))
    share = restarted.share.partitions[(GROUP, topic_id(restarted), 0)]
    assert [share.state_of(o) for o in range(0, 4)] == [(0, 0), (2, 1), None, (0, 1)]
    opened(restarted, "b")
    assert acquired(share_fetch(restarted, "b", 1)) == [(0, 0, 1), (3, 3, 2)]
    share_ack(restarted, "b", 2, {0: [batch(0, 0, 1), batch(3, 3, 1)]})
    share = restarted.share.partitions[(GROUP, topic_id(restarted), 0)]
    assert share.start_offset == 4 and not share.cached        # past the records and the control batch among them


ACTIONS = st.lists(st.one_of(
    st.tuples(st.just("produce"), st.integers(1, 3)),
    st.tuples(st.just("fetch"), st.sampled_from("ab"), st.integers(1, 4)),
    st.tuples(st.just("ack"), st.sampled_from("ab"), st.integers(0, 3), st.sampled_from([1, 2, 3])),
    st.tuples(st.just("ack"), st.sampled_from("ab"), st.integers(0, 3), st.sampled_from([1, 2, 3])),
    st.tuples(st.just("expire"),),
    st.tuples(st.just("close"), st.sampled_from("ab"))), max_size=25)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ACTIONS)
def test_any_history_restores_from_the_partitions_control_batches(actions):
    """Property: whatever members did (records produced between state writes, acknowledgements of any kind,
    expired locks, closed sessions, checkpoints every 2 deltas), a broker restarted on the data directory rebuilds
    each share-partition from the share snapshot, the checkpoint and its deltas in the partition: the same SPSO,
    every record in the state the seed's rule gives, what DescribeShareGroupOffsets reports, and no control batch in
    flight."""
    import tempfile
    from pathlib import Path

    from kafkamock.broker.clock import ManualClock

    with tempfile.TemporaryDirectory() as tmp:
        clock = ManualClock()
        broker = make_broker(clock, DiskStorage(Path(tmp)), **{"kafkamock.share.delta.chain.max": 2,
                                                                "group.share.record.lock.duration.ms": 15_000})
        restarted = None
        try:
            restarted = _live_then_restarted(broker, clock, Path(tmp), actions)
        finally:
            for b in (broker, restarted):
                if b is not None:
                    b.close()


def _live_then_restarted(broker, clock, directory, actions):
    from kafkamock.broker.share.manager import share_control_offsets

    broker.groups.configs.set(GROUP, {"share.auto.offset.reset": "earliest"})
    epochs, held, conn = {}, {"a": [], "b": []}, {"a": 1, "b": 2}
    for m in "ab":
        join(broker, m)
        share_fetch(broker, m, 0, conn_id=conn[m])
        epochs[m] = 1
    for action in [("produce", 3), ("fetch", "a", 2), *actions]:
        kind, *args = action
        if kind == "produce":
            produce(broker, [b"v"] * args[0])
        elif kind == "fetch":
            m, n = args
            got = share_fetch(broker, m, epochs[m], max_records=n, mode=1, conn_id=conn[m])
            epochs[m] += 1
            held[m] += [o for f, last, _ in acquired(got) for o in range(f, last + 1)]
        elif kind == "ack":
            m, i, kind_ = args
            if held[m]:
                o = held[m].pop(i % len(held[m]))
                share_ack(broker, m, epochs[m], {0: [batch(o, o, kind_)]}, conn_id=conn[m])
                epochs[m] += 1
        elif kind == "expire":
            clock.advance(15_000)
            broker.tick()
            held = {"a": [], "b": []}
        else:
            (m,) = args
            broker.share.connection_closed(conn[m])
            held[m] = []
            join(broker, m)
            share_fetch(broker, m, 0, conn_id=conn[m])
            epochs[m] = 1
    key = (GROUP, topic_id(broker), 0)
    live = broker.share.partitions[key]
    restarted = make_broker(clock, DiskStorage(directory))     # no close first: as after kill -9
    rebuilt = restarted.share.partitions.get(key)
    if key not in broker.share.checkpoint_offsets:             # nothing ever written: starts afresh, as Kafka's
        event("nothing written")
        assert rebuilt is None
        return restarted
    plog = broker.metadata.topics["t"].partitions[0].log
    event(f"{min(len(share_control_offsets(plog, live.start_offset, live.spe_offset)), 2)} control batch(es) in "
          f"flight, {min(len(share_control_offsets(plog, 0, plog.log_end_offset)), 3)}+ in the log")
    assert rebuilt is not None
    controls = set(share_control_offsets(plog, 0, plog.log_end_offset))
    assert_restored(rebuilt, live, controls)
    assert rebuilt.reported == live.reported                    # what DescribeShareGroupOffsets reports
    assert not any(rebuilt.state_of(o) for o in controls)
    # A new member then gets exactly the records whose delivery is not complete (those near the delivery limit a
    # few at a time), and never a control batch.
    pending = {o for o in range(rebuilt.start_offset, plog.log_end_offset) if o not in controls
               and (as_persisted(rebuilt.state_of(o)) or (RecordState.AVAILABLE,))[0] is RecordState.AVAILABLE}
    opened(restarted, "c", conn_id=3)
    got: set[int] = set()
    for epoch in range(1, 20):
        more = {o for f, last, _ in acquired(share_fetch(restarted, "c", epoch, max_records=1000, conn_id=3))
                for o in range(f, last + 1)}
        if not more:
            break
        got |= more
    assert got == pending
    return restarted


# -- the share-group offsets admin APIs (keys 90-92) ------------------------------------------------------------------

def describe_offsets(broker, topics=None, version=1):
    body = {"groups": [{"group_id": GROUP, "topics": None if topics is None else [
        {"topic_name": t, "partitions": ps} for t, ps in topics.items()]}]}
    group = call(broker, "DescribeShareGroupOffsets", version, body).groups[0]
    return group.error_code, {(t.topic_name, p.partition_index): (p.start_offset, p.lag, p.error_code)
                              for t in group.topics for p in t.partitions}


def test_describe_alter_and_delete_share_group_offsets(clock, tmp_path):
    broker = make_broker(clock, DiskStorage(tmp_path))
    assert describe_offsets(broker) == (E.NONE, {})                                 # no group: nothing
    opened(broker, "a")
    assert describe_offsets(broker) == (E.NONE, {("t", 0): (-1, -1, E.NONE)})      # nothing written yet
    produce(broker, [b"1", b"2", b"3"])
    share_fetch(broker, "a", 1)
    share_ack(broker, "a", 2, {0: [batch(0, 0, 1)]})
    assert describe_offsets(broker) == (E.NONE, {("t", 0): (0, 2, E.NONE)})   # as written: from before the move
    assert describe_offsets(broker, {"t": [0], "nope": [0]}, version=0)[1] == {
        ("t", 0): (0, -1, E.NONE), ("nope", 0): (-1, -1, E.NONE)}
    alter = {"group_id": GROUP, "topics": [{"topic_name": "t", "partitions": [{"partition_index": 0,
                                                                               "start_offset": 2}]}]}
    refused = call(broker, "AlterShareGroupOffsets", 0, alter)
    assert (refused.error_code, refused.error_message) == (E.NON_EMPTY_GROUP, "The group is not empty.")
    delete = {"group_id": GROUP, "topics": [{"topic_name": "t"}]}
    assert call(broker, "DeleteShareGroupOffsets", 0, delete).error_code == E.NON_EMPTY_GROUP
    call(broker, "ShareGroupHeartbeat", 1, {"group_id": GROUP, "member_id": "a", "member_epoch": -1,
                                            "rack_id": None, "subscribed_topic_names": None})
    altered = call(broker, "AlterShareGroupOffsets", 0, alter)
    assert altered.error_code == E.NONE and altered.responses[0].partitions[0].error_code == E.NONE
    assert describe_offsets(broker)[1][("t", 0)] == (2, 1, E.NONE)
    deleted = call(broker, "DeleteShareGroupOffsets", 0, {"group_id": GROUP, "topics": [{"topic_name": "nope"},
                                                                                        {"topic_name": "t"}]})
    assert [(r.topic_name, r.error_code) for r in deleted.responses] == [
        ("t", E.NONE), ("nope", E.UNKNOWN_TOPIC_OR_PARTITION)]                      # the deleted ones first
    assert describe_offsets(broker) == (E.NONE, {})
    restarted = make_broker(clock, DiskStorage(tmp_path))      # the tombstone keeps the deleted state away
    assert not restarted.share.partitions


def test_delete_records_moves_the_spso_and_keeps_a_checkpoint_for_recovery(clock, tmp_path):
    broker = make_broker(clock, DiskStorage(tmp_path))
    opened(broker, "a")
    produce(broker, [b"%d" % n for n in range(4)])           # 0-3
    assert acquired(share_fetch(broker, "a", 1)) == [(0, 3, 1)]
    share_ack(broker, "a", 2, {0: [batch(0, 1, 2)]})          # 0-1 released: the first checkpoint, at 4
    produce(broker, [b"4", b"5"])                             # 5-6
    deleted = call(broker, "DeleteRecords", 2, {"topics": [{"name": "t", "partitions": [
        {"partition_index": 0, "offset": 5}]}], "timeout_ms": 1000})
    assert deleted.topics[0].partitions[0].low_watermark == 5
    share = broker.share.partitions[(GROUP, topic_id(broker), 0)]
    assert share.start_offset == 5                            # the released 0-1 are gone with the log
    assert broker.share.checkpoint_offsets[(GROUP, topic_id(broker), 0)] == 7   # a new checkpoint after the start
    restarted = make_broker(clock, DiskStorage(tmp_path))
    again = restarted.share.partitions[(GROUP, topic_id(restarted), 0)]
    assert again.start_offset == 5 and [again.state_of(o) for o in (5, 6)] == [None, None]   # never delivered
    opened(restarted, "b")
    assert acquired(share_fetch(restarted, "b", 1)) == [(5, 6, 1)]


def delete_records(broker, offset):
    deleted = call(broker, "DeleteRecords", 2, {"topics": [{"name": "t", "partitions": [
        {"partition_index": 0, "offset": offset}]}], "timeout_ms": 1000})
    assert deleted.topics[0].partitions[0].low_watermark == offset


def test_the_persisted_state_at_run_time_is_what_replaying_the_log_rebuilds(clock, monkeypatch):
    """One state path: the durable state the manager holds at run time changes only by replaying the records it
    appends, and after every step (acquisitions, acknowledgements, expired locks, a release at the delivery limit,
    the log start moving past the SPSO and then past the checkpoint) it equals, field by field, the state a fresh
    manager rebuilds by replaying the partition's control batches."""
    from kafkamock.broker.share import manager as share_manager

    replayed = []                                       # the run-time replays: (offset, record type)
    recovering = []
    real_replay = share_manager.replay

    def spy(state, record, offset):
        if not recovering:
            replayed.append((offset, type(record).__name__))
        return real_replay(state, record, offset)

    monkeypatch.setattr(share_manager, "replay", spy)
    broker = make_broker(clock, **{"kafkamock.share.delta.chain.max": 3, "group.share.record.lock.duration.ms": 15_000})
    topic = broker.metadata.topics["t"]
    key = (GROUP, topic.topic_id, 0)

    def rebuilt():
        recovering.append(True)
        fresh = share_manager.ShareManager(broker, group_config=broker.groups.configs.value)
        fresh.restore(topic, topic.partitions[0])
        recovering.pop()
        assert fresh.persisted.keys() <= {key}
        return fresh.persisted.get(key)

    def run(expect_write: bool, action):
        """Do ``action``; check that it wrote (and replayed) a record or left the durable state alone, and that the
        state held at run time is what recovery rebuilds."""
        before, count = broker.share.persisted.get(key), len(replayed)
        result = action()
        after = broker.share.persisted.get(key)
        assert (len(replayed) > count) == expect_write
        if not expect_write:
            assert after is before                      # nothing replayed: the durable state did not change
        assert after == rebuilt()                       # run time and recovery: the same value
        return result

    opened(broker, "a")
    join(broker, "b")
    share_fetch(broker, "b", 0, conn_id=2)
    produce(broker, [b"%d" % n for n in range(10)])                                          # 0-9
    got = run(False, lambda: share_fetch(broker, "a", 1, max_records=4, mode=1))
    assert acquired(got) == [(0, 3, 1)]                     # acquisitions write nothing
    run(True, lambda: share_ack(broker, "a", 2, {0: [batch(0, 2, 1, 2, 3)]}))   # accept, release, reject: checkpoint
    got = run(False, lambda: share_fetch(broker, "b", 1, max_records=3, mode=1, conn_id=2))
    assert acquired(got) == [(1, 1, 2), (4, 5, 1)]
    clock.advance(15_000)
    run(True, broker.tick)                                  # every lock ran out: delta 1
    state = broker.share.persisted[key]
    assert (state.start_offset, state.delta_index) == (1, 1)
    assert [(r.base_offset, r.last_offset, r.state, r.delivery_count) for r in state.runs] == [
        (1, 1, 0, 2), (2, 2, 4, 1), (3, 5, 0, 1)]           # delivered twice, rejected, delivered once
    got = run(False, lambda: share_fetch(broker, "a", 3, max_records=5, mode=1))
    assert acquired(got) == [(1, 1, 3)]                     # its last delivery, alone
    run(True, lambda: broker.share.connection_closed(1))    # a's session goes: 1 released at the limit, archived
    run(False, lambda: delete_records(broker, 5))           # the SPSO moves; the next write carries it
    got = run(False, lambda: share_fetch(broker, "b", 2, max_records=10, conn_id=2))
    assert acquired(got) == [(5, 5, 2), (6, 9, 1)]
    run(True, lambda: share_ack(broker, "b", 3, {0: [batch(5, 6, 1)]}, conn_id=2))               # delta 3
    assert broker.share.persisted[key].start_offset == 7
    produce(broker, [b"late"] * 3)                                                           # 14-16
    run(True, lambda: delete_records(broker, 12))           # past the checkpoint at 10: a new checkpoint
    state = broker.share.persisted[key]
    assert (state.checkpoint_epoch, state.delta_index, state.checkpoint_offset, state.start_offset) == (2, 0, 17, 12)
    assert replayed == [(10, "ShareCheckpoint"), (11, "ShareDelta"), (12, "ShareDelta"), (13, "ShareDelta"),
                        (17, "ShareCheckpoint")]            # each record appended, replayed as it landed
    assert [(o, kind) for o, kind, _ in control_records(broker)] == [
        (12, "SHARE_DELTA"), (13, "SHARE_DELTA"), (17, "SHARE_CHECKPOINT")]   # from the log start (12) on


# -- group configs: share.auto.offset.reset, share.isolation.level, share.record.lock.duration.ms ------------------

def test_share_auto_offset_reset_earliest_and_by_duration(clock):
    broker = make_broker(clock)
    produce(broker, [b"old"])                                  # offset 0, at t0
    clock.advance(3_600_000)
    produce(broker, [b"new"])                                  # offset 1, an hour later
    broker.groups.configs.set(GROUP, {"share.auto.offset.reset": "by_duration:PT30M"})
    opened(broker, "a")
    assert acquired(share_fetch(broker, "a", 1)) == [(1, 1, 1)]     # only what came in the last 30 minutes
    broker.share.group_deleted(GROUP)
    broker.groups.configs.set(GROUP, {"share.auto.offset.reset": "earliest"})
    opened(broker, "b")
    assert acquired(share_fetch(broker, "b", 1)) == [(0, 1, 1)]


def test_read_committed_share_groups_stop_at_the_lso_and_archive_aborted_records(clock):
    broker = Cluster({"transaction.state.log.num.partitions": 1, "offsets.topic.num.partitions": 1,
                     "group.share.session.timeout.ms": 600_000, "group.share.max.session.timeout.ms": 600_000},
                    clock=clock)
    broker.metadata.create_topic("t", 1, 1)
    broker.groups.configs.set(GROUP, {"share.isolation.level": "read_committed", "share.auto.offset.reset": "earliest"})
    init = call(broker, "InitProducerId", 5, {"transactional_id": "tx", "transaction_timeout_ms": 60_000,
                                              "producer_id": -1, "producer_epoch": -1})
    pid, epoch = init.producer_id, init.producer_epoch

    def txn(values, seq, commit):
        call(broker, "AddPartitionsToTxn", 3, {"v3_and_below_transactional_id": "tx", "v3_and_below_producer_id": pid,
                                               "v3_and_below_producer_epoch": epoch, "v3_and_below_topics": [
                                                   {"name": "t", "partitions": [0]}]})
        # (timestamps of now: old ones would roll a segment per batch, and a fetch reads one segment, as Kafka's)
        data = encode_batch([{"value": v, "timestamp": clock.now_ms()} for v in values], producer_id=pid,
                            producer_epoch=epoch, base_sequence=seq, transactional=True)
        call(broker, "Produce", 9, {"transactional_id": "tx", "acks": -1, "timeout_ms": 1000, "topic_data": [
            {"name": "t", "partition_data": [{"index": 0, "records": data}]}]})
        if commit is not None:
            call(broker, "EndTxn", 4, {"transactional_id": "tx", "producer_id": pid, "producer_epoch": epoch,
                                       "committed": commit})

    txn([b"aborted-1", b"aborted-2"], 0, False)                # 0-1, marker 2
    txn([b"kept"], 2, True)                                    # 3, marker 4
    txn([b"open"], 3, None)                                    # 5: still open, the LSO
    opened(broker, "a")
    got = share_fetch(broker, "a", 1)
    assert acquired(got) == [(2, 4, 1)]          # the markers too (the client acknowledges them as gaps)
    share = broker.share.partitions[(GROUP, topic_id(broker), 0)]
    assert share.start_offset == 2 and share.state_of(1) is None     # the aborted 0-1: archived at once


def test_delete_groups_removes_an_empty_share_group_and_its_state(broker):
    opened(broker, "a")
    assert broker.share.of_group(GROUP)
    deleted = call(broker, "DeleteGroups", 2, {"groups_names": [GROUP]})
    assert deleted.results[0].error_code == E.NON_EMPTY_GROUP
    call(broker, "ShareGroupHeartbeat", 1, {"group_id": GROUP, "member_id": "a", "member_epoch": -1,
                                            "rack_id": None, "subscribed_topic_names": None})
    assert call(broker, "DeleteGroups", 2, {"groups_names": [GROUP]}).results[0].error_code == E.NONE
    assert not broker.share.of_group(GROUP)
    described = call(broker, "ShareGroupDescribe", 1, {"group_ids": [GROUP], "include_authorized_operations": False})
    assert (described.groups[0].error_code, described.groups[0].error_message) == (
        E.GROUP_ID_NOT_FOUND, f"Group {GROUP} not found.")


def test_a_node_that_does_not_lead_the_partition_names_the_leader(clock):
    broker = Cluster({"group.share.session.timeout.ms": 600_000, "group.share.max.session.timeout.ms": 600_000},
                    clock=clock, brokers=2)
    broker.metadata.create_topic("t", 1, 1)
    leader = broker.metadata.topics["t"].partitions[0].leader_id
    other = next(n for n in broker.metadata.nodes if n != leader)
    join(broker, "a")
    body = {"group_id": GROUP, "member_id": "a", "share_session_epoch": 0, "max_wait_ms": 0, "min_bytes": 1,
            "max_bytes": 1 << 20, "max_records": 10, "batch_size": 10, "share_acquire_mode": 0, "is_renew_ack": False,
            "topics": [{"topic_id": topic_id(broker), "partitions": [{"partition_index": 0,
                                                                      "acknowledgement_batches": []}]}],
            "forgotten_topics_data": []}
    wrong = call(broker, "ShareFetch", 2, body, node_id=other)
    p = part(wrong)
    assert p.error_code == E.NOT_LEADER_OR_FOLLOWER and p.current_leader.leader_id == leader
    assert [n.node_id for n in wrong.node_endpoints] == [leader]
    call(broker, "ShareFetch", 2, body, node_id=leader)        # loads the share-partition
    body["share_session_epoch"] = 0
    right = call(broker, "ShareFetch", 2, body, node_id=leader)
    assert part(right).error_code == E.NONE
