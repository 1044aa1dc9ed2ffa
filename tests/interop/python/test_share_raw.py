"""Share-group requests from a raw socket against a live kafkamock: the bad ones (wrong share-session epochs, acks for
offsets not acquired, RENEW at v1, IsRenewAck with limits, malformed acknowledgement batches, a ShareFetch that
cannot be decoded) get Kafka's error codes or a closed connection, and the broker keeps serving the group. A share
session belongs to the connection that opened it, as in Kafka."""

from __future__ import annotations

import pytest
from client_support import RawClient
from confluent_kafka import Producer

pytestmark = pytest.mark.kafkamock(config={"group.share.delivery.count.limit": 3})

NONE, INVALID_REQUEST, INVALID_RECORD_STATE = 0, 42, 121
SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH = 122, 123


def fetch_body(topic_id, epoch, acks=(), *, renew=False, wait=0, records=100, min_bytes=1, max_bytes=1 << 20):
    return {"group_id": "raw-sg", "member_id": "m1", "share_session_epoch": epoch, "max_wait_ms": wait,
            "min_bytes": min_bytes, "max_bytes": max_bytes, "max_records": records, "batch_size": 100,
            "share_acquire_mode": 0, "is_renew_ack": renew,
            "topics": [{"topic_id": topic_id, "partitions": [{"partition_index": 0,
                                                              "acknowledgement_batches": list(acks)}]}],
            "forgotten_topics_data": []}


def ack_body(topic_id, epoch, acks, renew=False):
    return {"group_id": "raw-sg", "member_id": "m1", "share_session_epoch": epoch, "is_renew_ack": renew,
            "topics": [{"topic_id": topic_id, "partitions": [{"partition_index": 0,
                                                              "acknowledgement_batches": list(acks)}]}]}


def batch(first, last, *types):
    return {"first_offset": first, "last_offset": last, "acknowledge_types": list(types)}


def test_bad_share_requests_get_kafkas_codes_and_the_broker_keeps_serving(kafka_broker):
    bootstrap = kafka_broker.bootstrap_servers
    kafka_broker.create_topic("raw-share", 1)
    topic_id = kafka_broker.call(lambda: kafka_broker.cluster.metadata.topics["raw-share"].topic_id)
    with RawClient(bootstrap) as raw:
        _, joined = raw.request("ShareGroupHeartbeat", 1, {"group_id": "raw-sg", "member_id": "m1",
                                                           "member_epoch": 0, "rack_id": None,
                                                           "subscribed_topic_names": ["raw-share"]})
        assert joined.error_code == NONE and joined.member_epoch == 2      # a new group starts at epoch 1
        assert raw.request("ShareFetch", 2, fetch_body(topic_id, 4))[1].error_code == SHARE_SESSION_NOT_FOUND
        assert raw.request("ShareFetch", 2, fetch_body(topic_id, 0))[1].error_code == NONE
        assert raw.request("ShareFetch", 2, fetch_body(topic_id, 9))[1].error_code == INVALID_SHARE_SESSION_EPOCH
        producer = Producer({"bootstrap.servers": bootstrap})
        producer.produce("raw-share", b"one", partition=0)
        assert producer.flush(10) == 0
        _, got = raw.request("ShareFetch", 2, fetch_body(topic_id, 1, wait=5000))
        acquired = [(r.first_offset, r.last_offset) for r in got.responses[0].partitions[0].acquired_records]
        assert len(acquired) == 1
        offset = acquired[0][0]
        cases = [   # (api, version, body, where the code is, expected)
            ("ShareAcknowledge", 2, ack_body(topic_id, 2, [batch(offset + 5, offset + 5, 1)]), "partition",
             INVALID_REQUEST),                                   # past the acquired records, in Kafka's words
            ("ShareAcknowledge", 1, ack_body(topic_id, 3, [batch(offset, offset, 4)]), "partition", INVALID_REQUEST),
            ("ShareAcknowledge", 2, ack_body(topic_id, 4, [batch(offset, offset, 9)]), "partition", INVALID_REQUEST),
            ("ShareAcknowledge", 2, ack_body(topic_id, 5, [batch(offset, offset - 1, 1)]), "partition",
             INVALID_REQUEST),
            ("ShareFetch", 2, fetch_body(topic_id, 6, [batch(offset, offset, 4)], renew=True), "top", INVALID_REQUEST),
        ]
        for api, version, body, where, expected in cases:
            _, answer = raw.request(api, version, body)
            code = answer.error_code if where == "top" else answer.responses[0].partitions[0].error_code
            assert code == expected, (api, version, body, answer)
        # A renew request as KIP-1222 wants it (limits at 0), then the record is accepted: the broker still serves.
        _, renewed = raw.request("ShareFetch", 2, fetch_body(topic_id, 6, [batch(offset, offset, 4)], renew=True,
                                                             wait=0, records=0, min_bytes=0, max_bytes=0))
        assert renewed.error_code == NONE
        assert renewed.responses[0].partitions[0].acknowledge_error_code == NONE
        _, accepted = raw.request("ShareAcknowledge", 2, ack_body(topic_id, 7, [batch(offset, offset, 1)]))
        assert accepted.error_code == NONE and accepted.responses[0].partitions[0].error_code == NONE
        assert accepted.acquisition_lock_timeout_ms == 30_000
    with RawClient(bootstrap) as raw:                   # garbage where a ShareFetch should be: that connection closes
        raw.send_frame(b"\x00\x00\x00\x0a" + b"\x00\x4e\x00\x02" + b"\xff" * 6)
        assert raw.closed_by_peer()
    with RawClient(bootstrap) as raw:                   # and the next client is served: the session went with the
        assert raw.request("ShareFetch", 2, fetch_body(topic_id, -1))[1].error_code == SHARE_SESSION_NOT_FOUND
        assert raw.request("ShareFetch", 2, fetch_body(topic_id, 0))[1].error_code == NONE    # first connection
        assert raw.request("ShareFetch", 2, fetch_body(topic_id, -1))[1].error_code == NONE   # -1 closes it
        assert raw.request("ShareFetch", 2, fetch_body(topic_id, -1))[1].error_code == SHARE_SESSION_NOT_FOUND
