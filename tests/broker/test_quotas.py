"""Client quotas in the broker core, on a ManualClock: DescribeClientQuotas / AlterClientQuotas (Kafka's entity
model, match types, errors, validate_only), Produce and Fetch byte-rate throttling over Kafka's sample windows,
and quotas surviving a restart with log.dirs."""

from __future__ import annotations

import pytest
from support.broker_calls import call, decode_response

from kafkamock import codec, records
from kafkamock.broker import Cluster, ConnectionInfo, ManualClock, Request, Respond
from kafkamock.broker.errors import ErrorCode as E

EXACT, DEFAULT, ANY = 0, 1, 2


def alter(broker, entries, validate_only=False, version=1):
    body = {"entries": [{"entity": [{"entity_type": t, "entity_name": n} for t, n in entity],
                         "ops": [{"key": k, "value": float(v or 0), "remove": v is None} for k, v in ops.items()]}
                        for entity, ops in entries], "validate_only": validate_only}
    return [(e.error_code, e.error_message) for e in call(broker, "AlterClientQuotas", version, body).entries]


def describe(broker, components, strict=False, version=1):
    body = {"components": [{"entity_type": t, "match_type": m, "match": n} for t, m, n in components],
            "strict": strict}
    response = call(broker, "DescribeClientQuotas", version, body)
    if response.error_code:
        return response.error_code, response.error_message
    return sorted(((tuple((d.entity_type, d.entity_name) for d in e.entity), {v.key: v.value for v in e["values"]})
                   for e in response.entries), key=repr)


@pytest.mark.parametrize("version", [0, 1])
def test_alter_and_describe_with_every_match_type(broker, version):
    assert alter(broker, [
        ([("user", "alice")], {"producer_byte_rate": 1024}),
        ([("user", None)], {"consumer_byte_rate": 2048}),
        ([("user", "alice"), ("client-id", "app")], {"producer_byte_rate": 10}),
        ([("client-id", None)], {"producer_byte_rate": 5}),
        ([("ip", "10.0.0.1")], {"connection_creation_rate": 3}),
    ], version=version) == [(E.NONE, None)] * 5
    assert describe(broker, [("user", EXACT, "alice")], version=version) == [
        ((("client-id", "app"), ("user", "alice")), {"producer_byte_rate": 10.0}),
        ((("user", "alice"),), {"producer_byte_rate": 1024.0})]
    assert describe(broker, [("user", EXACT, "alice")], strict=True) == [
        ((("user", "alice"),), {"producer_byte_rate": 1024.0})]
    assert describe(broker, [("user", DEFAULT, None)]) == [((("user", None),), {"consumer_byte_rate": 2048.0})]
    assert [e for e, _ in describe(broker, [("user", ANY, None)])] == [
        (("client-id", "app"), ("user", "alice")), (("user", "alice"),), (("user", None),)]
    assert len(describe(broker, [])) == 5
    assert describe(broker, [("ip", ANY, None)], strict=True) == [
        ((("ip", "10.0.0.1"),), {"connection_creation_rate": 3.0})]
    # removing the last key removes the entity
    assert alter(broker, [([("client-id", None)], {"producer_byte_rate": None})]) == [(E.NONE, None)]
    assert describe(broker, [("client-id", DEFAULT, None)]) == []


def test_describe_filter_errors_are_kafkas(broker):
    assert describe(broker, [("ip", ANY, None), ("user", ANY, None)]) == (
        E.INVALID_REQUEST, "Invalid entity filter component combination. IP filter component should not be used "
                           "with user or clientId filter component.")
    assert describe(broker, [("user", EXACT, None)]) == (
        E.INVALID_REQUEST, "Request specified MATCH_TYPE_EXACT, but set match string to null.")
    assert describe(broker, [("user", DEFAULT, "x")])[0] == E.INVALID_REQUEST
    assert describe(broker, [("user", ANY, None), ("user", ANY, None)])[0] == E.INVALID_REQUEST
    assert describe(broker, [("group", ANY, None)]) == (E.UNSUPPORTED_VERSION, "Unsupported entity type group")
    assert describe(broker, [("user", 7, None)]) == (E.UNSUPPORTED_VERSION, "Unknown match type 7")


def test_alter_errors_per_entry_and_validate_only(broker):
    results = alter(broker, [
        ([], {"producer_byte_rate": 1}),
        ([("ip", "1.2.3.4"), ("user", "a")], {"connection_creation_rate": 1}),
        ([("user", "a")], {"connection_creation_rate": 1}),
        ([("user", "b")], {"producer_byte_rate": -5}),
        ([("user", "c")], {"producer_byte_rate": 1.5}),
        ([("ip", "not-an-ip")], {"connection_creation_rate": 1}),
        ([("user", "")], {"producer_byte_rate": 1}),
        ([("group", "g")], {"producer_byte_rate": 1}),
        ([("user", "d")], {"request_percentage": 50}),
        ([("user", "ok")], {"producer_byte_rate": 100}),
    ])
    assert [code for code, _ in results] == [E.INVALID_REQUEST] * 9 + [E.NONE]
    assert [message for _, message in results[:8]] == [
        "Invalid empty client quota entity",
        "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId",
        "Invalid configuration key connection_creation_rate",
        "Quota producer_byte_rate must be greater than 0",
        "producer_byte_rate cannot be a fractional value.",
        "not-an-ip is not a valid IP or resolvable host.",
        "Empty user not supported",
        "Unhandled client quota entity type: group"]
    assert "does not enforce request_percentage" in results[8][1]
    assert alter(broker, [([("user", "v")], {"producer_byte_rate": 7})], validate_only=True) == [(E.NONE, None)]
    assert describe(broker, [("user", EXACT, "v")]) == []
    assert describe(broker, [("user", EXACT, "ok")]) == [((("user", "ok"),), {"producer_byte_rate": 100.0})]


def produce_request(broker, client_id, size_hint=1000, principal="User:ANONYMOUS", acks=-1):
    data = records.encode_batch([{"key": None, "value": b"x" * size_hint, "timestamp": broker.now_ms()}])
    body = {"acks": acks, "timeout_ms": 1000, "topic_data": [
        {"name": "t", "partition_data": [{"index": 0, "records": data}]}]}
    frame = codec.encode_request("Produce", 9, correlation_id=1, client_id=client_id, body=body)
    _, decoded = codec.decode_request(frame)
    info = ConnectionInfo(1, "127.0.0.1:5000", principal=principal)
    request = Request(0, 9, 1, client_id, decoded, info, size=len(frame) - 4)
    return request, broker.handle(request)


def test_produce_byte_rate_throttles_as_kafkas_rate_over_sample_windows(broker, clock):
    assert alter(broker, [([("client-id", "slow")], {"producer_byte_rate": 1000})]) == [(E.NONE, None)]
    request, outcome = produce_request(broker, "slow")
    size = request.size
    # One sample so far: Kafka's Rate divides by at least (quota.window.num - 1) = 10 full 1 s windows.
    total, throttles = size, []
    while total <= 10 * 1000:
        request, outcome = produce_request(broker, "slow")
        total += request.size
        throttles.append(decode_response("Produce", 9, outcome.body).throttle_time_ms)
    assert throttles[:-1] == [0] * (len(throttles) - 1)
    expected = round((total / 10.0 - 1000) / 1000 * 10_000)
    assert throttles[-1] == expected > 0
    assert request.mute_until_ms == broker.now_ms() + expected
    # another client id is not throttled; nor is the same one once the windows have passed
    other, outcome = produce_request(broker, "fast")
    assert decode_response("Produce", 9, outcome.body).throttle_time_ms == 0 and other.mute_until_ms == 0
    clock.advance(11_000)
    request, outcome = produce_request(broker, "slow")
    assert decode_response("Produce", 9, outcome.body).throttle_time_ms == 0


def test_quota_precedence_user_over_client_and_shared_user_sensor(broker):
    assert alter(broker, [([("user", "alice")], {"producer_byte_rate": 100}),
                          ([("client-id", None)], {"producer_byte_rate": 10**9})]) == [(E.NONE, None)] * 2
    # alice's user-level quota is shared by all her client ids: two clients together exceed it
    request, _ = produce_request(broker, "a", principal="User:alice")
    request2, outcome = produce_request(broker, "b", principal="User:alice")
    assert request.mute_until_ms > 0 or request2.mute_until_ms > 0
    # bob falls to the client-id default, far above
    request, outcome = produce_request(broker, "a", principal="User:bob")
    assert request.mute_until_ms == 0


def test_throttled_fetch_returns_no_data_and_acks0_still_mutes(broker):
    produce_request(broker, "reader", size_hint=50_000)
    assert alter(broker, [([("client-id", "reader")], {"consumer_byte_rate": 100}),
                          ([("client-id", "w")], {"producer_byte_rate": 100})]) == [(E.NONE, None)] * 2
    body = {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 10**7, "session_epoch": -1,
            "topics": [{"topic": "t", "partitions": [{"partition": 0, "fetch_offset": 0,
                                                      "partition_max_bytes": 10**7}]}]}
    decoded = codec.decode("FetchRequest", 12, codec.encode("FetchRequest", 12, body))
    request = Request(1, 12, 2, "reader", decoded, ConnectionInfo(2))
    outcome = broker.handle(request)
    assert isinstance(outcome, Respond)
    response = decode_response("Fetch", 12, outcome.body)
    assert response.throttle_time_ms > 0 and response.responses == [] and request.mute_until_ms > 0
    request, outcome = produce_request(broker, "w", size_hint=5000, acks=0)
    assert outcome.__class__.__name__ == "NoResponse" and request.mute_until_ms > broker.now_ms()



def fetch_batches(broker, client_id, max_bytes=10**7) -> tuple[int, int]:
    """(record batches in a Fetch from offset 0 of t-0, throttle_time_ms)."""
    body = {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": max_bytes, "session_epoch": -1,
            "topics": [{"topic": "t", "partitions": [{"partition": 0, "fetch_offset": 0,
                                                      "partition_max_bytes": 10**7}]}]}
    response = call(broker, "Fetch", 12, body, client_id=client_id)
    data = [p.records for t in response.responses for p in t.partitions]
    return (len(records.split_batches(bytes(data[0]))[0]) if data else 0), response.throttle_time_ms


def test_fetch_is_capped_to_what_the_quota_window_holds(broker, clock):
    """KafkaApis caps a consumer's fetch at quota * (quota.window.num - 1) * window seconds
    (getMaxValueInQuotaWindow): 1,000 B/s over 10 full 1 s windows lets one fetch carry 10,000 bytes, so three
    3 kB batches come back, unthrottled, where an uncapped fetch of all five would owe a throttle and get nothing."""
    for _ in range(5):
        produce_request(broker, "w", size_hint=3000)
    assert alter(broker, [([("client-id", "capped")], {"consumer_byte_rate": 1000})]) == [(E.NONE, None)]
    assert fetch_batches(broker, "free") == (5, 0)
    assert fetch_batches(broker, "capped") == (3, 0)
    assert fetch_batches(broker, "capped")[1] > 0          # a second fetch at once is over the rate
    clock.advance(11_000)
    assert fetch_batches(broker, "capped", max_bytes=4000) == (1, 0)    # the request's own limit still holds


def test_fetch_max_bytes_broker_config_caps_every_fetch(clock):
    broker = Cluster({"fetch.max.bytes": 4096}, clock=clock)
    broker.metadata.create_topic("t", 1, 1)
    for _ in range(3):
        produce_request(broker, "w", size_hint=3000)
    assert fetch_batches(broker, "any") == (1, 0)

def test_quotas_survive_a_restart(tmp_path):
    broker = Cluster({"log.dirs": str(tmp_path)}, ManualClock())
    assert alter(broker, [([("user", None), ("client-id", "x")], {"consumer_byte_rate": 4096})]) == [(E.NONE, None)]
    broker.close()
    again = Cluster({"log.dirs": str(tmp_path)}, ManualClock())
    assert describe(again, []) == [((("client-id", "x"), ("user", None)), {"consumer_byte_rate": 4096.0})]
