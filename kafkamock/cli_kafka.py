"""The everyday look at any Kafka broker (kafkamock or not) from the command line, over the Kafka protocol with
kafkamock's own clients: ``kafkamock topic create|list|describe|delete``, ``kafkamock produce``, ``kafkamock
consume``, ``kafkamock group list|describe``. Output is JSON (one object per line for records), for people and for
scripts alike; errors are one line with Kafka's error name."""

from __future__ import annotations

import base64
import functools
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import click
import trio

_SERVER = click.option("-b", "--bootstrap-server", "bootstrap", envvar="KAFKAMOCK_BOOTSTRAP",
                       default="127.0.0.1:9092", show_default=True,
                       help="Where the cluster is (host:port[,host:port]); or $KAFKAMOCK_BOOTSTRAP.")
_API_TIMEOUT = click.option("--api-timeout", "api_timeout_s", type=click.FloatRange(0.1), default=15.0,
                            show_default=True, help="Give up on an unreachable or unanswering cluster after this "
                                                    "many seconds.")


def BOOTSTRAP(command: Callable) -> Callable:
    """``-b/--bootstrap-server`` and ``--api-timeout``, passed on as one ``client`` settings dict."""
    def with_client(*args: Any, bootstrap: str, api_timeout_s: float, **kwargs: Any) -> Any:
        ms = int(api_timeout_s * 1000)
        client = {"bootstrap.servers": bootstrap, "default.api.timeout.ms": ms,
                  "request.timeout.ms": min(ms, 30000)}
        return command(*args, client=client, **kwargs)
    functools.update_wrapper(with_client, command)      # with the arguments click collected on ``command``
    return _SERVER(_API_TIMEOUT(with_client))


def _run(work: Callable[[], Awaitable[Any]]) -> Any:
    """Run one client call; Kafka errors and unreachable brokers as one line."""
    from kafkamock.client import KafkaConnectionError, KafkaError
    from kafkamock.server.errors import leaf

    try:
        return trio.run(work)
    except BaseException as exc:
        cause = leaf(exc, (KafkaError, KafkaConnectionError, OSError, TimeoutError, trio.TooSlowError))
        if cause is None:
            raise
        raise click.ClickException(str(cause) or type(cause).__name__) from None


def _with_admin(client: dict, call: Callable[[Any], Awaitable[Any]]) -> Any:
    """``call(admin)`` with an Admin of ``client``'s settings, through ``_run``."""
    from kafkamock.client import Admin

    async def work() -> Any:
        async with Admin(client) as admin:
            return await call(admin)
    return _run(work)


def _producer_settings(client: dict, acks: str) -> dict:
    """The producer's names for the same limits: Java's producer has max.block.ms and delivery.timeout.ms where
    other clients have default.api.timeout.ms."""
    ms = client["default.api.timeout.ms"]
    return {"bootstrap.servers": client["bootstrap.servers"], "acks": acks, "max.block.ms": ms,
            "request.timeout.ms": client["request.timeout.ms"],
            "delivery.timeout.ms": max(ms, client["request.timeout.ms"] + 5)}


def _echo(value: Any) -> None:
    click.echo(json.dumps(value, indent=1, default=str))


def _text(value: bytes | None) -> str | None:
    if value is None:
        return None
    try:
        return value.decode()
    except UnicodeDecodeError:
        return "base64:" + base64.b64encode(value).decode()


def key_values(items: tuple[str, ...], option: str = "--config") -> dict[str, str]:
    """``KEY=VALUE`` options (``--config``, ``--header``...) as a dict, or a one-line error naming the option."""
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise click.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint=option)
        out[key.strip()] = value.strip()
    return out


@click.group("topic")
def topic() -> None:
    """Create, list, describe and delete topics (CreateTopics, Metadata, DeleteTopics)."""


@topic.command("create")
@BOOTSTRAP
@click.argument("names", nargs=-1, required=True)
@click.option("-p", "--partitions", type=int, default=-1, help="Partitions (default: the broker's num.partitions).")
@click.option("-r", "--replication-factor", type=int, default=-1,
              help="Replicas (default: the broker's default.replication.factor).")
@click.option("-c", "--config", "settings", multiple=True, metavar="KEY=VALUE", help="A topic config (repeatable).")
def topic_create(client: dict, names: tuple[str, ...], partitions: int, replication_factor: int,
                 settings: tuple[str, ...]) -> None:
    from kafkamock.client.admin import NewTopic

    configs = key_values(settings)

    async def create(admin: Any) -> Any:
        return (await admin.create_topics([NewTopic(n, partitions, replication_factor, configs) for n in names])).all()
    created = _with_admin(client, create)
    _echo([{"name": t.name, "topic_id": str(t.topic_id), "partitions": t.num_partitions,
            "replication_factor": t.replication_factor} for t in created.values()])


@topic.command("list")
@BOOTSTRAP
@click.option("--internal", is_flag=True, help="Include internal topics (__consumer_offsets...).")
def topic_list(client: dict, internal: bool) -> None:
    _echo(sorted(_with_admin(client, lambda admin: admin.list_topics(include_internal=internal))))


@topic.command("describe")
@BOOTSTRAP
@click.argument("names", nargs=-1, required=True)
def topic_describe(client: dict, names: tuple[str, ...]) -> None:
    from kafkamock.client import TopicPartition

    async def describe(admin: Any) -> Any:
        described = (await admin.describe_topics(names)).all()
        tps = [TopicPartition(n, p.partition) for n, d in described.items() for p in d.partitions]
        earliest = (await admin.list_offsets({tp: "earliest" for tp in tps})).all()
        latest = (await admin.list_offsets({tp: "latest" for tp in tps})).all()
        return described, earliest, latest
    described, earliest, latest = _with_admin(client, describe)
    _echo([{"name": name, "topic_id": str(d.topic_id), "internal": d.internal, "partitions": [
        {"partition": p.partition, "leader": p.leader.id if p.leader else None, "replicas": [n.id for n in p.replicas],
         "isr": [n.id for n in p.isr], "earliest_offset": earliest[TopicPartition(name, p.partition)].offset,
         "latest_offset": latest[TopicPartition(name, p.partition)].offset} for p in d.partitions]}
        for name, d in described.items()])


@topic.command("delete")
@BOOTSTRAP
@click.argument("names", nargs=-1, required=True)
def topic_delete(client: dict, names: tuple[str, ...]) -> None:
    async def delete(admin: Any) -> Any:
        return (await admin.delete_topics(names)).all()
    _with_admin(client, delete)
    _echo({"deleted": list(names)})


@click.command("produce")
@BOOTSTRAP
@click.argument("topic_name", metavar="TOPIC")
@click.argument("values", nargs=-1)
@click.option("-k", "--key", help="The key of every record.")
@click.option("-p", "--partition", type=int, help="The partition (default: by key as Kafka's partitioner).")
@click.option("-H", "--header", "headers", multiple=True, metavar="NAME=VALUE", help="A header (repeatable).")
@click.option("--acks", type=click.Choice(["0", "1", "all", "-1"]), default="all", show_default=True)
def produce(client: dict, topic_name: str, values: tuple[str, ...], key: str | None, partition: int | None,
            headers: tuple[str, ...], acks: str) -> None:
    """Produce VALUES (or, without any, each line of standard input) to TOPIC; prints each record's partition and
    offset."""
    from kafkamock.client import Producer

    lines = list(values) if values else [line.rstrip("\n") for line in sys.stdin]
    pairs = [(name, value.encode()) for name, value in key_values(headers, "--header").items()]

    async def work() -> Any:
        async with Producer(_producer_settings(client, acks)) as producer:
            handles = [await producer.send(topic_name, value=v.encode(), key=key.encode() if key is not None else None,
                                           partition=partition, headers=pairs) for v in lines]
            await producer.flush()
            return [await h for h in handles]
    for meta in _run(work):
        click.echo(json.dumps({"topic": topic_name, "partition": meta.partition, "offset": meta.offset}))


@click.command("consume")
@BOOTSTRAP
@click.argument("topics", nargs=-1, required=True)
@click.option("-g", "--group", help="Consume as this group, committing its offsets (default: no group, assign all).")
@click.option("--from-beginning", is_flag=True, help="Start at the earliest offset (default: the latest).")
@click.option("-n", "--count", type=int, help="Stop after this many records.")
@click.option("--timeout", "timeout_s", type=float, default=5.0, show_default=True,
              help="Stop after this many seconds without a record.")
def consume(client: dict, topics: tuple[str, ...], group: str | None, from_beginning: bool, count: int | None,
            timeout_s: float) -> None:
    """Print the records of TOPICS, one JSON object per line (key, value and headers as text, or base64:...)."""
    from kafkamock.client import Consumer, TopicPartition, partition_counts

    settings: dict[str, Any] = {**client, "auto.offset.reset": "earliest" if from_beginning else "latest"}
    if group:
        settings["group.id"] = group

    async def work() -> int:
        seen = 0
        async with Consumer(settings) as consumer:
            if group:
                consumer.subscribe(list(topics))
            else:
                counts = await partition_counts(consumer.client, list(topics))
                consumer.assign([TopicPartition(t, p) for t in topics for p in range(counts[t])])
            while count is None or seen < count:
                records = await consumer.poll(timeout_s)
                if not records:
                    break
                for r in records[: None if count is None else count - seen]:
                    click.echo(json.dumps({"topic": r.topic, "partition": r.partition, "offset": r.offset,
                                           "timestamp": r.timestamp, "key": _text(r.key), "value": _text(r.value),
                                           "headers": [[h, _text(v)] for h, v in r.headers]}))
                    seen += 1
            if group:
                await consumer.commit()
        return seen
    _run(work)


@click.group("group")
def group() -> None:
    """List and describe consumer groups (ListGroups, DescribeGroups / ConsumerGroupDescribe, OffsetFetch)."""


@group.command("list")
@BOOTSTRAP
def group_list(client: dict) -> None:
    _echo([{"group_id": g.group_id, "type": g.type, "state": g.state, "protocol": g.protocol}
           for g in sorted(_with_admin(client, lambda admin: admin.list_groups()), key=lambda g: g.group_id)])


@group.command("describe")
@BOOTSTRAP
@click.argument("group_ids", nargs=-1, required=True)
def group_describe(client: dict, group_ids: tuple[str, ...]) -> None:
    async def describe(admin: Any) -> Any:
        described = (await admin.describe_consumer_groups(group_ids)).all()
        return described, {g: await admin.list_consumer_group_offsets(g) for g in group_ids}
    described, offsets = _with_admin(client, describe)
    _echo([{"group_id": g, "type": d.type, "state": d.state, "assignor": d.partition_assignor,
            "coordinator": d.coordinator.id if d.coordinator else None,
            "members": [{"member_id": m.member_id, "client_id": m.client_id, "host": m.host,
                         "assignment": sorted(f"{tp.topic}-{tp.partition}" for tp in m.assignment)}
                        for m in d.members],
            "offsets": {f"{tp.topic}-{tp.partition}": o.offset for tp, o in sorted(offsets[g].items())
                        if o is not None}}
           for g, d in described.items()])
