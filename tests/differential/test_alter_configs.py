"""Alter/IncrementalAlterConfigs: what each broker and topic config of Kafka 4.3.1 answers to a good value, a value
of the wrong type and a value below its range, at the node level and the cluster level, and the requests' own
validation (unknown names, duplicate keys, null values, unknown operations, APPEND/SUBTRACT on non-lists).

Broker changes are sent with ``validate_only``, so the shared brokers keep their settings; topic changes apply to a
topic of the scenario's own.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import kafkamock.broker

FACTS = json.loads((Path(kafkamock.broker.__file__).parent / "kafka_configs.json").read_text())
BROKER = [c for c in FACTS["broker"] if not c["internal"]]
TOPIC = [c for c in FACTS["topic"] if not c["internal"]]
TOPIC_RESOURCE, BROKER_RESOURCE = 2, 4
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
WRONG_TYPE = {"BOOLEAN": "maybe", "INT": "x1", "SHORT": "70000", "LONG": "1.5", "DOUBLE": "one"}


def _good(config: dict) -> str:
    """A value the config accepts: its default, or a plain one of its type."""
    if config["default"] not in (None, ""):
        return config["default"]
    return {"BOOLEAN": "true", "INT": "1", "SHORT": "1", "LONG": "1", "DOUBLE": "0.5", "LIST": "a"}.get(
        config["type"], "x")


def _below(config: dict) -> str | None:
    v = config["validator"] or {}
    if v.get("class") == "Range" and v.get("min") is not None and config["type"] in ("INT", "SHORT", "LONG"):
        low = int(v["min"])
        if low > -(2 ** 31):
            return str(low - 1)
    return None


def _incremental(run, resource_type: int, name: str, configs: list[tuple[str, int, str | None]], *,
                 validate_only: bool, label: str):
    r = run.call("IncrementalAlterConfigs", 1, {
        "resources": [{"resource_type": resource_type, "resource_name": name,
                       "configs": [{"name": n, "config_operation": op, "value": v} for n, op, v in configs]}],
        "validate_only": validate_only}, see=False)
    res = r.responses[0]
    run.see(label, [res.error_code, res.error_message])


@pytest.mark.parametrize("config", BROKER, ids=[c["name"] for c in BROKER])
def test_alter_broker_config(differ, request, config):
    name = config["name"]

    def scenario(run):
        _incremental(run, BROKER_RESOURCE, "1", [(name, SET, _good(config))], validate_only=True, label="node")
        _incremental(run, BROKER_RESOURCE, "", [(name, SET, _good(config))], validate_only=True, label="cluster")
        if config["type"] in WRONG_TYPE:
            _incremental(run, BROKER_RESOURCE, "", [(name, SET, WRONG_TYPE[config["type"]])], validate_only=True,
                         label="wrong type")
        if _below(config) is not None:
            _incremental(run, BROKER_RESOURCE, "", [(name, SET, _below(config))], validate_only=True,
                         label="below range")

    differ.check(request.node.name, scenario)


def _topic(run) -> str:
    topic = run.name("cfg")
    run.create_topic(topic, 1)
    return topic


@pytest.mark.parametrize("config", TOPIC, ids=[c["name"] for c in TOPIC])
def test_alter_topic_config(differ, request, config):
    name = config["name"]

    def scenario(run):
        topic = _topic(run)
        _incremental(run, TOPIC_RESOURCE, topic, [(name, SET, _good(config))], validate_only=False, label="set")
        if config["type"] in WRONG_TYPE:
            _incremental(run, TOPIC_RESOURCE, topic, [(name, SET, WRONG_TYPE[config["type"]])], validate_only=False,
                         label="wrong type")
        if _below(config) is not None:
            _incremental(run, TOPIC_RESOURCE, topic, [(name, SET, _below(config))], validate_only=False,
                         label="below range")
        _incremental(run, TOPIC_RESOURCE, topic, [(name, DELETE, None)], validate_only=False, label="delete")

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("case", [
    "unknown topic config", "unknown broker config", "duplicate keys", "null value", "unknown operation",
    "append to non-list", "subtract from non-list", "append to list", "unknown topic", "bad topic name",
    "default topic resource", "broker id not a number", "other broker id", "unknown resource type",
    "two resources same name", "delete unknown name", "min.insync.replicas node level",
    "min.insync.replicas cluster delete", "cleanup.policy append compact",
])
def test_incremental_alter_configs_request_checks(differ, request, case):
    def scenario(run):
        topic = _topic(run)
        resources = {
            "unknown topic config": (TOPIC_RESOURCE, topic, [("retention.msx", SET, "1")]),
            "unknown broker config": (BROKER_RESOURCE, "1", [("log.retention.msx", SET, "1")]),
            "duplicate keys": (TOPIC_RESOURCE, topic, [("retention.ms", SET, "1"), ("retention.ms", SET, "2")]),
            "null value": (TOPIC_RESOURCE, topic, [("retention.ms", SET, None)]),
            "unknown operation": (TOPIC_RESOURCE, topic, [("retention.ms", 7, "1")]),
            "append to non-list": (TOPIC_RESOURCE, topic, [("retention.ms", APPEND, "1")]),
            "subtract from non-list": (BROKER_RESOURCE, "1", [("log.retention.ms", SUBTRACT, "1")]),
            "append to list": (TOPIC_RESOURCE, topic, [("cleanup.policy", APPEND, "compact")]),
            "unknown topic": (TOPIC_RESOURCE, run.name("missing"), [("retention.ms", SET, "1")]),
            "bad topic name": (TOPIC_RESOURCE, "bad/name", [("retention.ms", SET, "1")]),
            "default topic resource": (TOPIC_RESOURCE, "", [("retention.ms", SET, "1")]),
            "broker id not a number": (BROKER_RESOURCE, "one", [("log.retention.ms", SET, "1")]),
            "other broker id": (BROKER_RESOURCE, "7", [("log.retention.ms", SET, "1")]),
            "unknown resource type": (9, "x", [("a", SET, "1")]),
            "delete unknown name": (TOPIC_RESOURCE, topic, [("no.such.config", DELETE, None)]),
            "min.insync.replicas node level": (BROKER_RESOURCE, "1", [("min.insync.replicas", SET, "1")]),
            "min.insync.replicas cluster delete": (BROKER_RESOURCE, "", [("min.insync.replicas", DELETE, None)]),
            "cleanup.policy append compact": (TOPIC_RESOURCE, topic, [("cleanup.policy", APPEND, "compact,delete")]),
        }
        if case == "two resources same name":
            entries = [{"resource_type": TOPIC_RESOURCE, "resource_name": topic,
                        "configs": [{"name": "retention.ms", "config_operation": SET, "value": "1"}]}] * 2
        else:
            rtype, rname, configs = resources[case]
            entries = [{"resource_type": rtype, "resource_name": rname,
                        "configs": [{"name": n, "config_operation": op, "value": v} for n, op, v in configs]}]
        r = run.call("IncrementalAlterConfigs", 1, {"resources": entries, "validate_only": True}, see=False)
        run.see("responses", [[x.error_code, x.error_message, x.resource_type, x.resource_name == topic]
                              for x in r.responses])

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("case", ["replace topic configs", "unknown topic config", "bad value", "broker read-only",
                                  "broker dynamic", "cluster per-broker", "null value"])
def test_alter_configs_legacy(differ, request, case):
    """AlterConfigs v2 (replaces every dynamic config of the resource)."""
    def scenario(run):
        topic = _topic(run)
        rtype, rname, configs = {
            "replace topic configs": (TOPIC_RESOURCE, topic, [("retention.ms", "1000"), ("cleanup.policy", "compact")]),
            "unknown topic config": (TOPIC_RESOURCE, topic, [("retention.msx", "1")]),
            "bad value": (TOPIC_RESOURCE, topic, [("retention.ms", "soon")]),
            "broker read-only": (BROKER_RESOURCE, "1", [("num.partitions", "2")]),
            "broker dynamic": (BROKER_RESOURCE, "1", [("log.retention.ms", "1000"), ("min.insync.replicas", "1")]),
            "cluster per-broker": (BROKER_RESOURCE, "", [("listeners", "PLAINTEXT://127.0.0.1:1"),
                                                         ("min.insync.replicas", "1")]),
            "null value": (TOPIC_RESOURCE, topic, [("retention.ms", None)]),
        }[case]
        r = run.call("AlterConfigs", 2, {"resources": [{"resource_type": rtype, "resource_name": rname,
                                                       "configs": [{"name": n, "value": v} for n, v in configs]}],
                                         "validate_only": rtype == BROKER_RESOURCE}, see=False)
        run.see("response", [[x.error_code, x.error_message] for x in r.responses])
        if rtype == TOPIC_RESOURCE:
            d = run.call("DescribeConfigs", 4, {"resources": [{"resource_type": TOPIC_RESOURCE, "resource_name": topic,
                                                               "configuration_keys": ["retention.ms", "cleanup.policy"]}],
                                                "include_synonyms": False, "include_documentation": False}, see=False)
            run.see("after", {c.name: [c.value, c.config_source] for c in d.results[0].configs})

    differ.check(request.node.name, scenario)


GROUP_RESOURCE = 32


@pytest.mark.parametrize("case", ["consumer assignment interval", "consumer assignment interval beyond the max",
                                  "consumer session below the min", "streams session timeout", "unknown group config",
                                  "empty group name"])
def test_alter_group_configs(differ, request, case):
    def scenario(run):
        group = "" if case == "empty group name" else run.name("g")
        name, value = {
            "consumer assignment interval": ("consumer.assignment.interval.ms", "0"),
            "consumer assignment interval beyond the max": ("consumer.assignment.interval.ms", "99999999"),
            "consumer session below the min": ("consumer.session.timeout.ms", "1000"),
            "streams session timeout": ("streams.session.timeout.ms", "50000"),
            "unknown group config": ("consumer.session.timeout.msx", "1"),
            "empty group name": ("consumer.session.timeout.ms", "50000"),
        }[case]
        _incremental(run, GROUP_RESOURCE, group, [(name, SET, value)], validate_only=False, label="set")
        if group:
            def shown():
                r = run.call("DescribeConfigs", 4, {
                    "resources": [{"resource_type": GROUP_RESOURCE, "resource_name": group,
                                   "configuration_keys": [name]}],
                    "include_synonyms": False, "include_documentation": False}, see=False)
                return [[c.name, c.value, c.config_source] for c in r.results[0].configs]
            if case == "consumer assignment interval":     # Kafka's brokers learn group configs asynchronously
                run.until("the group config described", lambda: shown() and shown()[0][2] == 8)
            run.see("described", shown())

    differ.check(request.node.name, scenario)
