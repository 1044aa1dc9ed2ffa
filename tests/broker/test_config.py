"""Broker configs as a user sets them (``--config``, ``--config-file``, ``start_broker(config=...)``): what is
refused says why in one line, a likely misspelling names the config meant."""

from __future__ import annotations

import pytest

from kafkamock.broker.config import BrokerConfig, ConfigError


@pytest.mark.parametrize(("overrides", "message"), [
    ({"auto.create.topic.enable": "false"},
     "Unknown broker config auto.create.topic.enable (did you mean auto.create.topics.enable?)"),
    ({"no.such.thing": "1"}, "Unknown broker config no.such.thing"),
    ({"log.preallocate": "true"},
     "log.preallocate=true is not supported by kafkamock: kafkamock writes segment files as they grow; it does not "
     "preallocate them"),
    ({"num.partitions": "x"}, "Invalid value x for configuration num.partitions: Not a number of type INT"),
])
def test_a_refused_config_says_why_in_one_line(overrides, message):
    with pytest.raises(ConfigError) as raised:
        BrokerConfig(overrides)
    assert str(raised.value) == message


def test_start_broker_names_an_unknown_topic_config():
    from kafkamock.testing import start_broker

    with start_broker() as broker:
        with pytest.raises(ConfigError, match=r"^Unknown topic config name: retention\.msx \(did you mean "
                                              r"retention\.ms\?\)$"):
            broker.create_topic("t", config={"retention.msx": 1})
        broker.create_topic("t", config={"retention.ms": 1000})
        assert broker.call(lambda: broker.cluster.metadata.topics["t"].configs["retention.ms"]) == 1000


def test_a_test_broker_starts_its_classic_groups_at_once_unless_told_otherwise():
    from kafkamock.testing import start_broker

    with start_broker() as fast, start_broker(config={"group.initial.rebalance.delay.ms": 3000}) as kafka_like:
        assert fast.call(lambda: fast.cluster.config["group.initial.rebalance.delay.ms"]) == 0
        assert kafka_like.call(lambda: kafka_like.cluster.config["group.initial.rebalance.delay.ms"]) == 3000
