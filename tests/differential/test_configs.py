"""Configs: DescribeConfigs for every broker, topic and group config of Kafka 4.3.1 (value, source, read-only,
sensitive, type, synonyms), and what Alter/IncrementalAlterConfigs answer to good and bad values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import kafkamock.broker

FACTS = json.loads((Path(kafkamock.broker.__file__).parent / "kafka_configs.json").read_text())
BROKER = [c["name"] for c in FACTS["broker"] if not c["internal"]]
TOPIC = [c["name"] for c in FACTS["topic"] if not c["internal"]]
GROUP = [c["name"] for c in FACTS["group"] if not c["internal"]]
TOPIC_RESOURCE, BROKER_RESOURCE, GROUP_RESOURCE = 2, 4, 32


def _entry(entry) -> dict | None:
    if entry is None:
        return None
    return {"value": entry.value, "read_only": entry.read_only, "source": entry.config_source,
            "sensitive": entry.is_sensitive, "type": entry.config_type, "documentation": entry.documentation,
            "synonyms": [[s.name, s.value, s.source] for s in entry.synonyms]}


def _describe(run, resource_type: int, name: str, cache_key: str) -> dict:
    if cache_key not in run.target.cache:
        r = run.call("DescribeConfigs", 4, {
            "resources": [{"resource_type": resource_type, "resource_name": name, "configuration_keys": None}],
            "include_synonyms": True, "include_documentation": False}, see=False)
        result = r.results[0]
        run.target.cache[cache_key] = (result.error_code, result.error_message,
                                       {c.name: c for c in result.configs})
    return run.target.cache[cache_key]


@pytest.mark.parametrize("name", BROKER)
def test_describe_broker_config(differ, request, name):
    def scenario(run):
        error, message, configs = _describe(run, BROKER_RESOURCE, "1", "describe-broker-1")
        run.see("error", [error, message])
        run.see(name, _entry(configs.get(name)))

    differ.check(request.node.name, scenario)


def test_describe_broker_config_names(differ, request):
    """The set of names a broker's DescribeConfigs lists (internal configs included where Kafka lists them)."""
    def scenario(run):
        _, _, configs = _describe(run, BROKER_RESOURCE, "1", "describe-broker-1")
        known = set(BROKER)
        run.see("names outside Kafka's public broker configs", sorted(set(configs) - known))
        run.see("public names missing", sorted(known - set(configs)))

    differ.check(request.node.name, scenario)


def _topic_for_configs(run) -> str:
    if "config-topic" not in run.target.cache:
        topic = "differential-config-topic"
        run.create_topic(topic, 1)
        run.target.cache["config-topic"] = topic
    return run.target.cache["config-topic"]


@pytest.mark.parametrize("name", TOPIC)
def test_describe_topic_config(differ, request, name):
    def scenario(run):
        topic = _topic_for_configs(run)
        error, message, configs = _describe(run, TOPIC_RESOURCE, topic, "describe-topic")
        run.see("error", [error, message])
        run.see(name, _entry(configs.get(name)))

    differ.check(request.node.name, scenario)


def test_describe_topic_config_names(differ, request):
    def scenario(run):
        topic = _topic_for_configs(run)
        _, _, configs = _describe(run, TOPIC_RESOURCE, topic, "describe-topic")
        run.see("names", sorted(configs))

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("name", GROUP)
def test_describe_group_config(differ, request, name):
    def scenario(run):
        error, message, configs = _describe(run, GROUP_RESOURCE, "differential-config-group", "describe-group")
        run.see("error", [error, message])
        run.see(name, _entry(configs.get(name)))

    differ.check(request.node.name, scenario)


def test_describe_group_config_names(differ, request):
    def scenario(run):
        _, _, configs = _describe(run, GROUP_RESOURCE, "differential-config-group", "describe-group")
        run.see("names", sorted(configs))

    differ.check(request.node.name, scenario)
