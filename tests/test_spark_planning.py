"""The connector's option parsing and offset planning, without Spark or sockets."""

from __future__ import annotations

import pytest

from kafkamock.spark.options import KafkaOptionError, read_options, write_options
from kafkamock.spark.planning import OffsetRange, rate_limit, split

B = {"kafka.bootstrap.servers": "127.0.0.1:9092"}


def test_defaults_follow_sparks_kafka_source():
    batch = read_options({**B, "subscribe": "a, b"}, streaming=False)
    assert (batch.starting, batch.ending, batch.fail_on_data_loss, batch.include_headers) == (
        "earliest", "latest", True, False)
    assert batch.subscription.topics == ("a", "b")
    stream = read_options({**B, "subscribePattern": "orders-.*", "maxOffsetsPerTrigger": "10"}, streaming=True)
    assert (stream.starting, stream.max_offsets_per_trigger) == ("latest", 10)
    assert stream.client.isolation_level == 0 and stream.client.allow_auto_create_topics


def test_offsets_json_and_assign():
    opts = read_options({**B, "assign": '{"t":[0,2]}', "startingOffsets": '{"t":{"0":5,"2":-2}}',
                         "endingOffsets": '{"t":{"0":-1,"2":9}}'}, streaming=False)
    assert opts.subscription.partitions == (("t", 0), ("t", 2))
    assert opts.starting == {("t", 0): 5, ("t", 2): -2} and opts.ending == {("t", 0): -1, ("t", 2): 9}


@pytest.mark.parametrize(("options", "streaming", "named"), [
    ({"subscribe": "t"}, False, "kafka.bootstrap.servers"),
    ({**B}, False, "'assign', 'subscribe', 'subscribePattern'"),
    ({**B, "subscribe": "t", "subscribePattern": "x"}, False, "given: 'subscribe', 'subscribePattern'"),
    ({**B, "assign": "[0]"}, False, "option 'assign'"),
    ({**B, "subscribePattern": "("}, False, "option 'subscribePattern'"),
    ({**B, "subscribe": "t", "startingOffsets": "latest"}, False, "option 'startingOffsets'"),
    ({**B, "subscribe": "t", "endingOffsets": "earliest"}, False, "option 'endingOffsets'"),
    ({**B, "subscribe": "t", "endingOffsets": "latest"}, True, "option 'endingOffsets'"),
    ({**B, "subscribe": "t", "startingOffsets": '{"t":{"0":-3}}'}, True, "option 'startingOffsets'"),
    ({**B, "subscribe": "t", "failOnDataLoss": "maybe"}, False, "option 'failOnDataLoss'"),
    ({**B, "subscribe": "t", "minPartitions": "0"}, False, "option 'minPartitions'"),
    ({**B, "subscribe": "t", "kafka.auto.offset.reset": "earliest"}, False, "kafka.auto.offset.reset"),
    ({**B, "subscribe": "t", "kafka.isolation.level": "dirty"}, False, "kafka.isolation.level"),
    ({"kafka.bootstrap.servers": "nohost", "subscribe": "t"}, False, "kafka.bootstrap.servers"),
])
def test_bad_options_name_the_option(options, streaming, named):
    with pytest.raises(KafkaOptionError, match=named.replace("(", r"\(").replace(")", r"\)")):
        read_options(options, streaming=streaming)


def test_write_options():
    opts = write_options({**B, "topic": "out", "kafka.compression.type": "zstd", "kafka.acks": "all"})
    assert (opts.topic, opts.client.compression, opts.client.idempotent) == ("out", "zstd", True)
    assert not write_options({**B, "kafka.acks": "1", "kafka.enable.idempotence": "false"}).client.idempotent
    with pytest.raises(KafkaOptionError, match="kafka.enable.idempotence"):
        write_options({**B, "kafka.acks": "1", "kafka.enable.idempotence": "true"})


def test_min_partitions_cuts_ranges_in_proportion():
    ranges = [OffsetRange("t", 0, 0, 100), OffsetRange("t", 1, 10, 40), OffsetRange("t", 2, 5, 5)]
    assert split(ranges, None) == ranges[:2]                            # empty ranges make no task
    parts = split(ranges, 8)
    assert len(parts) >= 8
    for p in (0, 1):
        mine = [r for r in parts if r.partition == p]
        assert mine[0].start == ranges[p].start and mine[-1].end == ranges[p].end
        assert all(a.end == b.start for a, b in zip(mine, mine[1:], strict=False))
    assert split([OffsetRange("t", 0, 0, 2)], 5) == [OffsetRange("t", 0, 0, 1), OffsetRange("t", 0, 1, 2)]


def test_max_offsets_per_trigger_shares_the_limit_by_backlog():
    start = {("t", 0): 0, ("t", 1): 100, ("t", 2): 7}
    latest = {("t", 0): 300, ("t", 1): 200, ("t", 2): 7}
    end = rate_limit(start, latest, 40)
    assert sum(end[tp] - start[tp] for tp in start) == 40
    assert end[("t", 0)] - 0 > end[("t", 1)] - 100 and end[("t", 2)] == 7
    assert rate_limit(start, latest, 10_000) == latest
