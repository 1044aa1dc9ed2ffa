"""``kafkamock topic|produce|consume|group``: the everyday command-line look at a cluster over the Kafka protocol,
run against kafkamock and against Apache Kafka 4.3.1 (``kafka_target``) with the same expectations."""

from __future__ import annotations

import json
import uuid

import pytest
from click.testing import CliRunner

from kafkamock.cli import main


def cli(target, *args: str, input: str | None = None):
    """``kafkamock ARGS -b <target>``: the option goes after the subcommand (``topic create``, ``produce``)."""
    at = 2 if args[0] in ("topic", "group") else 1
    return CliRunner().invoke(main, [*args[:at], "-b", target.bootstrap_servers, *args[at:]], input=input)


def ok(result):
    assert result.exit_code == 0, result.output
    return result.output


def test_topics_records_and_groups_from_the_command_line(kafka_target):
    name, group = f"cli-{uuid.uuid4().hex[:8]}", f"g-{uuid.uuid4().hex[:8]}"
    created = json.loads(ok(cli(kafka_target, "topic", "create", name, "-p", "2", "-r", "1",
                                "-c", "retention.ms=600000")))
    assert [(t["name"], t["partitions"], t["replication_factor"]) for t in created] == [(name, 2, 1)]
    assert name in json.loads(ok(cli(kafka_target, "topic", "list")))
    placed = [json.loads(line) for line in ok(cli(kafka_target, "produce", name, "one", "two", "-k", "k",
                                                 "-H", "h=v")).splitlines()]
    assert [p["offset"] for p in placed] == [0, 1] and len({p["partition"] for p in placed}) == 1
    more = [json.loads(line) for line in ok(cli(kafka_target, "produce", name, "-p", "1",
                                                input="three\nfour\n")).splitlines()]
    assert [(p["partition"], p["offset"]) for p in more] == [(1, 0), (1, 1)] if placed[0]["partition"] == 0 else \
        [(1, 2), (1, 3)]
    (described,) = json.loads(ok(cli(kafka_target, "topic", "describe", name)))
    assert sum(p["latest_offset"] for p in described["partitions"]) == 4
    assert [p["leader"] is not None for p in described["partitions"]] == [True, True]
    read = [json.loads(line) for line in ok(cli(kafka_target, "consume", name, "--from-beginning", "-g", group,
                                                "-n", "4", "--timeout", "10")).splitlines()]
    assert sorted(r["value"] for r in read) == ["four", "one", "three", "two"]
    assert {(r["key"], tuple(map(tuple, r["headers"]))) for r in read if r["value"] in ("one", "two")} == {
        ("k", (("h", "v"),))}
    listed = json.loads(ok(cli(kafka_target, "group", "list")))
    assert any(g["group_id"] == group for g in listed)
    (described_group,) = json.loads(ok(cli(kafka_target, "group", "describe", group)))
    assert described_group["state"] == "Empty" and sum(described_group["offsets"].values()) == 4
    assert json.loads(ok(cli(kafka_target, "topic", "delete", name))) == {"deleted": [name]}
    gone = cli(kafka_target, "topic", "describe", name)
    assert gone.exit_code == 1 and "UNKNOWN_TOPIC_OR_PARTITION" in gone.output


@pytest.mark.parametrize("kafka_target", ["kafkamock"], indirect=True)
def test_errors_are_one_line(kafka_target):
    name = f"cli-{uuid.uuid4().hex[:8]}"
    ok(cli(kafka_target, "topic", "create", name))
    again = cli(kafka_target, "topic", "create", name)
    assert again.exit_code == 1 and again.output.count("\n") == 1 and "TOPIC_ALREADY_EXISTS" in again.output
    nowhere = CliRunner().invoke(main, ["topic", "list", "-b", "127.0.0.1:1", "--api-timeout", "1"])
    assert nowhere.exit_code == 1 and nowhere.output.count("\n") == 1
    assert nowhere.output.startswith("Error: list topics: NETWORK_EXCEPTION") and "127.0.0.1:1" in nowhere.output
