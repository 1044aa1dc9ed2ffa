"""The connector's option parsing and offset planning, without Spark or sockets."""

from __future__ import annotations

import pytest

from kafkamock.spark.options import ByTimestamp, KafkaOptionError, read_options, time_string_ms, write_options
from kafkamock.spark.planning import OffsetRange, held_back, rate_limit, split

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
    opts = write_options({**B, "topic": "out", "kafka.compression.type": "zstd", "kafka.acks": "all",
                          "kafka.linger.ms": "50"})
    assert opts.topic == "out"
    assert {k: opts.client.producer[k] for k in ("compression.type", "acks", "linger.ms")} == {
        "compression.type": "zstd", "acks": "all", "linger.ms": "50"}
    # As Java: acks other than all turns idempotence off unless it was asked for, then it is an error.
    assert write_options({**B, "kafka.acks": "1"}).client.producer["enable.idempotence"] == "false"
    with pytest.raises(KafkaOptionError, match="kafka.enable.idempotence"):
        write_options({**B, "kafka.acks": "1", "kafka.enable.idempotence": "true"})


def test_read_settings_reach_the_consumer_fields():
    opts = read_options({**B, "subscribe": "t", "kafka.fetch.max.bytes": "1000", "kafka.fetch.min.bytes": "10",
                         "kafka.fetch.max.wait.ms": "7", "kafka.max.partition.fetch.bytes": "99",
                         "kafka.isolation.level": "read_committed", "kafka.client.rack": "r1",
                         "kafka.request.timeout.ms": "1500"}, streaming=False).client
    assert (opts.fetch_max_bytes, opts.fetch_min_bytes, opts.fetch_max_wait_ms, opts.max_partition_fetch_bytes,
            opts.isolation_level, opts.client_rack, opts.request_timeout_s) == (1000, 10, 7, 99, 1, "r1", 1.5)


def test_timestamps_and_their_precedence():
    opts = read_options({**B, "subscribe": "t", "startingTimestamp": "5", "startingOffsetsByTimestamp": '{"t":{"0":1}}',
                         "endingOffsetsByTimestamp": '{"t":{"0":9}}', "startingOffsetsByTimestampStrategy": "LATEST"},
                        streaming=False)
    assert opts.starting == ByTimestamp(everywhere=5, no_match="latest")
    assert opts.ending == ByTimestamp(per_partition=((("t", 0), 9),), no_match="latest")
    assert opts.starting.timestamps([("t", 0), ("t", 1)]) == {("t", 0): 5, ("t", 1): 5}


@pytest.mark.parametrize(("raw", "ms"), [("250", 250), ("250ms", 250), ("10s", 10_000), ("15m", 900_000),
                                         ("2h", 7_200_000), ("1d", 86_400_000), (" 3 min ", 180_000)])
def test_time_strings_as_spark_reads_them(raw, ms):
    assert time_string_ms(raw, "maxTriggerDelay") == ms


def test_max_records_per_partition_then_min_partitions():
    ranges = [OffsetRange("t", 0, 0, 30), OffsetRange("t", 1, 0, 10)]
    capped = split(ranges, None, 8)
    assert [r.size for r in capped] == [7, 7, 8, 8, 5, 5] and all(r.size <= 8 for r in capped)
    assert len(split(ranges, 10, 8)) >= 10
    assert split(ranges, 2, 100) == ranges


def test_min_offsets_per_trigger_holds_a_batch_back_until_the_delay():
    start, latest = {("t", 0): 10}, {("t", 0): 15}
    assert held_back(start, latest, 10, now_ms=1_000, last_trigger_ms=500, max_delay_ms=60_000)
    assert not held_back(start, {("t", 0): 20}, 10, now_ms=1_000, last_trigger_ms=500, max_delay_ms=60_000)
    assert not held_back(start, latest, 10, now_ms=61_000, last_trigger_ms=1_000, max_delay_ms=60_000)
    assert not held_back(start, latest, 10, now_ms=1_000, last_trigger_ms=0, max_delay_ms=1_000)


def test_rate_limit_never_starves_a_small_partition():
    start = {("t", 0): 0, ("t", 1): 0}
    end = rate_limit(start, {("t", 0): 10_000, ("t", 1): 1}, 100)
    assert end == {("t", 0): 99, ("t", 1): 1}


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


def test_unknown_options_and_paths_are_refused():
    with pytest.raises(KafkaOptionError, match="did you mean 'maxOffsetsPerTrigger'"):
        read_options({**B, "subscribe": "t", "maxOffsetPerTrigger": "5"}, streaming=True)
    with pytest.raises(KafkaOptionError, match="has no path: name topics with subscribe"):
        read_options({**B, "subscribe": "t", "path": "t"}, streaming=False)
    with pytest.raises(KafkaOptionError, match="not an option of a Kafka sink"):
        write_options({**B, "topic": "t", "startingOffsets": "earliest"})
    assert write_options({**B, "topic": "t", "checkpointLocation": "/tmp/x"}).topic == "t"
