"""Regressions for what the broker fuzzer (tests/fuzz) found, each as its smallest request through the core and
the codec (a response the codec cannot encode used to cost the client its connection and log an error)."""

from __future__ import annotations

import uuid

from support.broker_calls import call

from kafkamock.broker.errors import ErrorCode as E


def test_metadata_v10_v11_with_a_topic_id_or_null_name_is_invalid_request(broker):
    some_id = uuid.uuid4()
    for version in (10, 11):
        response = call(broker, "Metadata", version, {"topics": [{"topic_id": some_id, "name": None}],
                                                      "allow_auto_topic_creation": True})
        assert [(t.name, t.error_code) for t in response.topics] == [("", E.INVALID_REQUEST)]
        response = call(broker, "Metadata", version, {"topics": [{"topic_id": some_id, "name": "t"}]})
        assert [(t.name, t.error_code) for t in response.topics] == [("t", E.INVALID_REQUEST)]
    response = call(broker, "Metadata", 12, {"topics": [{"topic_id": some_id, "name": None}]})
    assert [(t.name, t.error_code) for t in response.topics] == [(None, E.UNKNOWN_TOPIC_ID)]
