"""GROUP config resources (type 32) in the core: IncrementalAlterConfigs / AlterConfigs set a group's configs within
the broker's bounds, DescribeConfigs shows them with their sources, the share and consumer groups run with them, and
they survive a restart on a data dir."""

from __future__ import annotations

import pytest
from support.broker_calls import call

from kafkamock.broker import Cluster
from kafkamock.broker.config import BrokerConfig
from kafkamock.broker.errors import ErrorCode as E
from kafkamock.broker.kafka_configs import ConfigError
from kafkamock.storage import DiskStorage

GROUP = 32
SET, DELETE, APPEND = 0, 1, 2


def alter(broker, name, *configs, validate_only=False):
    answer = call(broker, "IncrementalAlterConfigs", 1, {"resources": [{
        "resource_type": GROUP, "resource_name": name,
        "configs": [{"name": n, "config_operation": op, "value": v} for n, op, v in configs]}],
        "validate_only": validate_only})
    return answer.responses[0].error_code, answer.responses[0].error_message


def describe(broker, name, synonyms=False):
    answer = call(broker, "DescribeConfigs", 4, {"resources": [{"resource_type": GROUP, "resource_name": name,
                                                                "configuration_keys": None}],
                                                 "include_synonyms": synonyms, "include_documentation": False})
    result = answer.results[0]
    return result.error_code, {c.name: (c.value, c.config_source) for c in result.configs}


def test_set_describe_and_delete_group_configs(clock):
    broker = Cluster(clock=clock)
    code, configs = describe(broker, "g")
    assert code == E.NONE
    assert configs["share.auto.offset.reset"] == ("latest", 5)
    assert configs["share.record.lock.duration.ms"] == ("30000", 5)       # the broker synonym's value
    assert alter(broker, "g", ("share.auto.offset.reset", SET, "earliest"),
                 ("share.record.lock.duration.ms", SET, "20000"))[0] == E.NONE
    _, configs = describe(broker, "g")
    assert configs["share.auto.offset.reset"] == ("earliest", 8)          # DYNAMIC_GROUP_CONFIG
    assert configs["share.record.lock.duration.ms"] == ("20000", 8)
    assert broker.share.lock_duration_ms("g") == 20_000
    assert alter(broker, "g", ("share.record.lock.duration.ms", DELETE, None))[0] == E.NONE
    assert describe(broker, "g")[1]["share.record.lock.duration.ms"] == ("30000", 5)
    assert alter(broker, "g", ("share.isolation.level", SET, "read_committed"), validate_only=True)[0] == E.NONE
    assert describe(broker, "g")[1]["share.isolation.level"] == ("read_uncommitted", 5)   # validate_only


def test_bad_group_configs_get_kafkas_codes(clock):
    broker = Cluster(clock=clock)
    assert alter(broker, "g", ("share.record.lock.duration.ms", SET, "1000")) == (
        E.INVALID_CONFIG, "share.record.lock.duration.ms must be greater than or equal to "
                          "group.share.min.record.lock.duration.ms")
    assert alter(broker, "g", ("consumer.session.timeout.ms", SET, "999999"))[0] == E.INVALID_CONFIG
    assert alter(broker, "g", ("share.auto.offset.reset", SET, "middle"))[0] == E.INVALID_CONFIG
    assert alter(broker, "g", ("share.auto.offset.reset", SET, "by_duration:PT1H"))[0] == E.NONE
    assert alter(broker, "g", ("share.auto.offset.reset", SET, "by_duration:1h"))[0] == E.INVALID_CONFIG
    assert alter(broker, "g", ("no.such.config", SET, "1"))[0] == E.INVALID_CONFIG
    assert alter(broker, "g", ("streams.num.standby.replicas", SET, "1"))[0] == E.INVALID_CONFIG
    assert alter(broker, "g", ("share.isolation.level", APPEND, "x"))[0] == E.INVALID_CONFIG
    assert alter(broker, "", ("share.isolation.level", SET, "read_committed"))[0] == E.INVALID_REQUEST
    assert describe(broker, "")[0] == E.INVALID_REQUEST


def test_groups_run_with_their_configs(clock):
    broker = Cluster({"group.share.min.heartbeat.interval.ms": 1000, "group.consumer.min.heartbeat.interval.ms": 1000},
                    clock=clock)
    broker.metadata.create_topic("t", 1, 1)
    alter(broker, "sg", ("share.heartbeat.interval.ms", SET, "2000"))
    answer = call(broker, "ShareGroupHeartbeat", 1, {"group_id": "sg", "member_id": "m", "member_epoch": 0,
                                                     "rack_id": None, "subscribed_topic_names": ["t"]})
    assert answer.heartbeat_interval_ms == 2000
    alter(broker, "cg", ("consumer.heartbeat.interval.ms", SET, "3000"))
    answer = call(broker, "ConsumerGroupHeartbeat", 0, {
        "group_id": "cg", "member_id": "c", "member_epoch": 0, "instance_id": None, "rack_id": None,
        "rebalance_timeout_ms": 30000, "subscribed_topic_names": ["t"], "server_assignor": None,
        "topic_partitions": []})
    assert answer.error_code == E.NONE and answer.heartbeat_interval_ms == 3000


def test_group_configs_survive_a_restart(clock, tmp_path):
    broker = Cluster(clock=clock, storage=DiskStorage(tmp_path))
    alter(broker, "g", ("share.auto.offset.reset", SET, "earliest"))
    again = Cluster(clock=clock, storage=DiskStorage(tmp_path))
    assert describe(again, "g")[1]["share.auto.offset.reset"] == ("earliest", 8)


def test_kip_1240_share_configs_are_validated_as_kafka_validates_them(clock):
    broker = Cluster(clock=clock)
    assert alter(broker, "g", ("share.delivery.count.limit", SET, "7"), ("share.partition.max.record.locks", SET, "200"),
                 ("share.renew.acknowledge.enable", SET, "FALSE"), ("share.assignment.interval.ms", SET, "0")) == (
        E.NONE, None)
    assert broker.groups.configs.value("g", "share.renew.acknowledge.enable") is False
    cases = {
        ("share.delivery.count.limit", "1"):
            "Invalid value 1 for configuration share.delivery.count.limit: Value must be at least 2",
        ("share.delivery.count.limit", "11"):
            "share.delivery.count.limit must be less than or equal to group.share.max.delivery.count.limit",
        ("share.delivery.count.limit", "x"):
            "Invalid value x for configuration share.delivery.count.limit: Not a number of type INT",
        ("share.partition.max.record.locks", "4001"):
            "share.partition.max.record.locks must be less than or equal to group.share.max.partition.max.record.locks",
        ("share.renew.acknowledge.enable", "maybe"):
            "Invalid value maybe for configuration share.renew.acknowledge.enable: Expected value to be either true or "
            "false",
        ("share.isolation.level", "READ_COMMITTED"):
            "Invalid value READ_COMMITTED for configuration share.isolation.level: String must be one of: "
            "read_committed, read_uncommitted",
        ("share.assignment.interval.ms", "15001"):
            "share.assignment.interval.ms must be less than or equal to group.share.max.assignment.interval.ms",
        ("share.unknown.config", "1"): "Unknown group config name: share.unknown.config",
    }
    for (name, value), message in cases.items():
        assert alter(broker, "h", (name, SET, value)) == (E.INVALID_CONFIG, message), name


def test_group_values_are_clamped_into_the_brokers_bounds_and_described_with_synonyms(clock):
    broker = Cluster(clock=clock)
    assert alter(broker, "g", ("share.delivery.count.limit", SET, "9"))[0] == E.NONE
    broker.config.replace_dynamic({"group.share.max.delivery.count.limit": 6}, cluster_default=True)
    assert broker.groups.configs.value("g", "share.delivery.count.limit") == 6      # GroupConfig.evaluate
    answer = call(broker, "DescribeConfigs", 4, {"resources": [{"resource_type": GROUP, "resource_name": "g",
                                                                "configuration_keys": ["share.delivery.count.limit",
                                                                                       "share.isolation.level"]}],
                                                 "include_synonyms": True, "include_documentation": False})
    configs = {c.name: (c.value, c.config_source, [(s.name, s.value, s.source) for s in c.synonyms])
               for c in answer.results[0].configs}
    assert configs["share.delivery.count.limit"] == ("9", 8, [("share.delivery.count.limit", "9", 8),
                                                              ("group.share.delivery.count.limit", "5", 5)])
    assert configs["share.isolation.level"] == ("read_uncommitted", 5,
                                                [("share.isolation.level", "read_uncommitted", 5)])


@pytest.mark.parametrize("overrides, message", [
    ({"group.consumer.heartbeat.interval.ms": 1000},
     "group.consumer.heartbeat.interval.ms must be greater than or equal to group.consumer.min.heartbeat.interval.ms"),
    ({"group.share.session.timeout.ms": 90_000},
     "group.share.session.timeout.ms must be less than or equal to group.share.max.session.timeout.ms"),
    ({"group.consumer.heartbeat.interval.ms": 45_000, "group.consumer.max.heartbeat.interval.ms": 60_000},
     "group.consumer.heartbeat.interval.ms must be less than group.consumer.session.timeout.ms"),
])
def test_a_broker_does_not_start_with_group_configs_kafka_refuses_together(overrides, message):
    """Each value is valid alone; together they break GroupCoordinatorConfig's requirements, and Kafka 4.3.1
    refuses to format or start (an IllegalArgumentException with this message)."""
    with pytest.raises(ConfigError, match=f"^{message}$"):
        BrokerConfig(overrides)


def test_lowering_the_minimum_with_the_interval_starts():
    config = BrokerConfig({"group.consumer.heartbeat.interval.ms": 1000, "group.consumer.min.heartbeat.interval.ms": 500})
    assert config["group.consumer.heartbeat.interval.ms"] == 1000
