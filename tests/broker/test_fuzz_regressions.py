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


def test_corrupt_raw_snappy_is_a_record_error_not_a_crash(broker):
    import pytest
    from fuzz.harness import batch_with_payload

    from kafkamock.records import CorruptRecordError
    from kafkamock.records.compression import decompress

    for garbage in (b"", b"\x05\xff\xff"):
        with pytest.raises(CorruptRecordError):
            decompress("snappy", garbage)
    response = call(broker, "Produce", 3, {"acks": -1, "timeout_ms": 1000, "topic_data": [
        {"name": "t", "partition_data": [{"index": 0, "records": batch_with_payload("snappy", b"", 1)}]}]})
    # the broker's mapping of a batch whose records cannot be read (as for every other codec)
    assert response.responses[0].partition_responses[0].error_code in (E.CORRUPT_MESSAGE, E.INVALID_RECORD)


def test_a_refused_bomb_logs_its_message_not_the_exception(broker, caplog):
    """A refused batch is logged with the error's text: the exception's traceback would pin the frames that
    decompressed it (a 24 MB gzip bomb per record) for as long as a handler keeps the record, as pytest's does
    for a whole test: an hour of fuzzing held 21 GB that way."""
    import gzip
    import logging

    from fuzz.harness import batch_with_payload

    bomb = gzip.compress(b"\0" * (24 << 20))
    with caplog.at_level(logging.WARNING, logger="kafkamock.broker.produce"):
        response = call(broker, "Produce", 9, {"acks": -1, "timeout_ms": 1000, "topic_data": [
            {"name": "t", "partition_data": [{"index": 0, "records": batch_with_payload("gzip", bomb, 1)}]}]})
    assert response.responses[0].partition_responses[0].error_code in (E.CORRUPT_MESSAGE, E.INVALID_RECORD)
    (record,) = [r for r in caplog.records if r.name == "kafkamock.broker.produce"]
    assert "refused" in record.getMessage()
    assert not any(isinstance(arg, BaseException) for arg in record.args)
