"""The ``kafkamock`` command: inspect the schemas and turn Kafka frames into JSON and back."""

from __future__ import annotations

import json
import os
import string
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from kafkamock.codec import CodecError, Registry, default_registry
from kafkamock.codec.framing import decode_request, decode_response, encode_request, encode_response
from kafkamock.codec.jsonform import from_json, to_json

if TYPE_CHECKING:
    from kafkamock.broker import Cluster


def _registry(schema_dir: str | None) -> Registry:
    return Registry.from_directory(schema_dir) if schema_dir else default_registry()


def _read_bytes(path: str) -> bytes:
    """An ``@path`` argument's file, or a one-line error naming it."""
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise click.ClickException(f"cannot read {path}: {exc.strerror or exc}") from None


def _read_input(data: str | None, mode: str) -> bytes:
    """DATA is hex text, ``-`` for standard input, ``@path`` for a file; hex or binary is detected unless forced."""
    if data is None or data == "-":
        raw = sys.stdin.buffer.read()
    elif data.startswith("@"):
        raw = _read_bytes(data[1:])
    else:
        raw = data.encode()
    if mode == "binary":
        return raw
    text = raw.decode("ascii", "replace")
    compact = "".join(text.split())
    looks_hex = len(compact) % 2 == 0 and all(c in string.hexdigits for c in compact)
    if mode == "hex" or looks_hex:
        if not looks_hex:
            raise click.ClickException("input is not valid hex")
        return bytes.fromhex(compact)
    return raw


schema_dir_option = click.option("--schemas", "schema_dir", type=click.Path(exists=True, file_okay=False),
                                 help="Use this directory of Kafka schema files instead of kafkamock's own.")
mode_option = click.option("--input-format", "mode", type=click.Choice(["auto", "hex", "binary"]), default="auto",
                           show_default=True, help="How to read DATA.")


@click.group()
@click.version_option(package_name="kafkamock")
def main() -> None:
    """kafkamock: Apache Kafka's wire protocol for tests and tooling."""


@main.command()
@schema_dir_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def schemas(schema_dir: str | None, as_json: bool) -> None:
    """List the APIs and their version ranges."""
    reg = _registry(schema_dir)
    rows = []
    for key, spec in sorted(reg.requests.items()):
        if spec.valid_versions.empty:
            continue
        rows.append({"api_key": key, "api": spec.api_name, "versions": str(spec.valid_versions),
                     "flexible": str(spec.flexible_versions.intersect(spec.valid_versions)),
                     "unstable_latest": spec.latest_version_unstable})
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    click.echo(f"{'key':>4}  {'API':<28} {'versions':<9} {'flexible':<9}")
    for r in rows:
        note = "  (latest unstable)" if r["unstable_latest"] else ""
        click.echo(f"{r['api_key']:>4}  {r['api']:<28} {r['versions']:<9} {r['flexible']:<9}{note}")


@main.command()
@click.argument("args", nargs=-1)
@click.option("--frame", is_flag=True, help="DATA is a size-prefixed frame (a request frame names its own API).")
@mode_option
@schema_dir_option
def decode(args: tuple[str, ...], frame: bool, mode: str, schema_dir: str | None) -> None:
    """Decode DATA to JSON.

    \b
      kafkamock decode MESSAGE VERSION DATA        a message body, e.g. ShareFetchRequest 2 0267...
      kafkamock decode --frame DATA                a request frame (header included)
      kafkamock decode --frame API VERSION DATA    a response frame of that API and version
    """
    reg = _registry(schema_dir)
    try:
        if frame and len(args) <= 1:
            header, body = decode_request(_read_input(args[0] if args else None, mode), registry=reg)
            spec = reg.request(header.request_api_key)
            out = {"header": to_json(reg.message("RequestHeader"), header), "api": spec.api_name,
                   "body": to_json(spec, body)}
        elif frame and len(args) in (2, 3):
            spec = reg.response(args[0])
            header, body = decode_response(args[0], _version(args[1]),
                                           _read_input(args[2] if len(args) > 2 else None, mode), registry=reg)
            out = {"header": to_json(reg.message("ResponseHeader"), header), "body": to_json(spec, body)}
        elif not frame and len(args) in (2, 3):
            codec = reg.codec(args[0], _version(args[1]))
            out = to_json(codec.spec, codec.decode(_read_input(args[2] if len(args) > 2 else None, mode)))
        else:
            raise click.UsageError("expected MESSAGE VERSION [DATA], or --frame [DATA], or --frame API VERSION [DATA]")
    except CodecError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(json.dumps(out, indent=2, ensure_ascii=False))


@main.command()
@click.argument("name")
@click.argument("version", type=int)
@click.argument("value", default="-")
@click.option("--frame", type=click.Choice(["request", "response"]), help="Write a size-prefixed frame; NAME is the API.")
@click.option("--correlation-id", type=int, default=0, show_default=True)
@click.option("--client-id", default="kafkamock", show_default=True)
@click.option("--binary", is_flag=True, help="Write raw bytes instead of hex.")
@schema_dir_option
def encode(name: str, version: int, value: str, frame: str | None, correlation_id: int, client_id: str,
           binary: bool, schema_dir: str | None) -> None:
    """Encode a JSON VALUE (``-`` for standard input, ``@path`` for a file) as hex.

    \b
      kafkamock encode ApiVersionsRequest 3 '{"client_software_name": "me"}'
      kafkamock encode --frame request ApiVersions 3 '{}'
    """
    reg = _registry(schema_dir)
    if value == "-":
        text = sys.stdin.read()
    elif value.startswith("@"):
        text = _read_bytes(value[1:]).decode("utf-8", "replace")
    else:
        text = value
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise click.ClickException(f"VALUE is not JSON: {exc}") from None
    try:
        if frame == "request":
            spec = reg.request(name)
            data = encode_request(name, version, correlation_id, client_id, from_json(spec, version, obj),
                                  registry=reg)
        elif frame == "response":
            spec = reg.response(name)
            data = encode_response(name, version, correlation_id, from_json(spec, version, obj), registry=reg)
        else:
            codec = reg.codec(name, version)
            data = codec.encode(from_json(codec.spec, version, obj))
    except CodecError as exc:
        raise click.ClickException(str(exc)) from None
    if binary:
        sys.stdout.buffer.write(data)
    else:
        click.echo(data.hex())


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (0.0.0.0: every interface; see advertised.listeners).")
@click.option("--port", default=9092, show_default=True, type=click.IntRange(0, 65535),
              help="Port of the first broker; broker k listens on port + k - 1 (0: free ports).")
@click.option("--brokers", default=1, show_default=True, type=click.IntRange(1, 64),
              help="How many brokers the cluster has (node ids node.id, node.id + 1, ...).")
@click.option("--data-dir", type=click.Path(file_okay=False),
              help="Keep the logs on disk in Kafka's layout, recovered at start (= --config log.dirs=DIR).")
@click.option("--control-port", type=click.IntRange(0, 65535), help="Serve the control API (HTTP+JSON) on this port (0: a free port).")
@click.option("--control-host", default="127.0.0.1", show_default=True,
              help="Address the control API listens on (0.0.0.0 for a broker in a container).")
@click.option("--config", "settings", multiple=True, metavar="KEY=VALUE",
              help="A broker config with Kafka's name, e.g. --config auto.create.topics.enable=false.")
@click.option("--config-file", type=click.Path(exists=True, dir_okay=False),
              help="A TOML file of broker configs (Kafka names as keys).")
@click.option("--tls", is_flag=True,
              help="Serve TLS with a throwaway CA and a server certificate for 127.0.0.1/localhost, made at each "
                   "start; the ready line prints ssl.ca.location=<CA file> for clients to trust.")
@click.option("--scram-user", "scram_users", multiple=True, metavar="NAME:PASSWORD",
              help="Add a SCRAM-SHA-256 and SCRAM-SHA-512 user (repeatable); serves SASL (SASL_SSL with --tls).")
@click.option("--kafka-version", metavar="X.Y",
              help="Present the broker as this Apache Kafka release: its ApiVersions ranges and feature levels "
                   "(2.8, 3.9, 4.0, 4.1, 4.2 or 4.3, the default; = --config kafkamock.kafka.version=X.Y).")
@click.option("--topic", "topics", multiple=True, metavar="NAME[:PARTITIONS[:REPLICATION]]",
              help="Create this topic at start, if it does not exist yet (repeatable), e.g. --topic orders:3.")
@click.option("--log-level", default="INFO", show_default=True,
              type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False))
@click.option("--log-file", type=click.Path(dir_okay=False),
              help="Write the broker's log to this file (appended) instead of standard error; the ready line names it.")
def serve(host: str, port: int, brokers: int, data_dir: str | None, control_port: int | None, control_host: str,
          settings: tuple[str, ...], config_file: str | None, tls: bool, scram_users: tuple[str, ...],
          kafka_version: str | None, topics: tuple[str, ...], log_level: str, log_file: str | None) -> None:
    """Run a cluster until Ctrl-C or SIGTERM.

    Without --config listeners=..., one listener on --host/--port: PLAINTEXT, or SSL (--tls), SASL_PLAINTEXT
    (--scram-user) or SASL_SSL (both). With listeners configured, --tls only supplies the certificates."""
    import logging
    import shutil
    import tomllib

    try:
        logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                            filename=log_file)
    except OSError as exc:
        raise click.BadParameter(f"cannot write {log_file}: {exc.strerror or exc}", param_hint="--log-file") from None
    from kafkamock.server.memory import raise_open_files_limit

    raise_open_files_limit()            # before the storage sizes its pool of open segment files from it
    overrides: dict[str, object] = {}
    if config_file:
        with open(config_file, "rb") as fh:
            try:
                overrides.update(_flat(tomllib.load(fh)))
            except tomllib.TOMLDecodeError as exc:
                raise click.ClickException(f"{config_file}: {exc}") from None
    from kafkamock.cli_kafka import key_values

    overrides.update(key_values(settings))
    if data_dir is not None:
        if overrides.get("log.dirs", data_dir) != data_dir:
            raise click.BadParameter("--data-dir and --config log.dirs name different directories",
                                     param_hint="--data-dir")
        overrides["log.dirs"] = data_dir
    if kafka_version is not None:
        if overrides.get("kafkamock.kafka.version", kafka_version) != kafka_version:
            raise click.BadParameter("--kafka-version and --config kafkamock.kafka.version name different releases",
                                     param_hint="--kafka-version")
        overrides["kafkamock.kafka.version"] = kafka_version
    users = []
    for item in scram_users:
        name, sep, password = item.partition(":")
        if not sep or not name or not password:
            raise click.BadParameter(f"expected NAME:PASSWORD, got {item!r}", param_hint="--scram-user")
        users.append((name, password))
    throwaway_dir: list[str] = []          # --tls: the throwaway CA's directory, removed when the broker stops
    try:
        _serve(overrides, host, port, brokers, control_port, control_host, tls, users, topics, throwaway_dir,
               f" log={os.path.abspath(log_file)}" if log_file else "")
    finally:
        for directory in throwaway_dir:
            shutil.rmtree(directory, ignore_errors=True)


def _serve(overrides: dict[str, object], host: str, port: int, brokers: int, control_port: int | None,
           control_host: str, tls: bool, users: list[tuple[str, str]], topics: tuple[str, ...],
           throwaway_dir: list[str], ready_log: str) -> None:
    """``serve`` once its options are read: the cluster until a signal stops it."""
    import logging
    import signal

    import trio

    from kafkamock.broker import Cluster
    from kafkamock.broker.config import BrokerConfig, ConfigError
    from kafkamock.broker.kafka_releases import LATEST
    from kafkamock.server import Server
    from kafkamock.server.errors import ListenError, leaf

    ready_extra = _secure_defaults(overrides, host, port, tls, bool(users), throwaway_dir)
    try:
        config = BrokerConfig(overrides)
        broker = Cluster(config, brokers=brokers, host=host, port=port)
        for name, password in users:
            broker.scram_credentials.set_password(name, password)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"cannot open the data directory: {exc}") from None
    _create_topics(broker, topics)
    if broker.release.line != LATEST:
        unserved = broker.release.unserved(broker.implemented_versions())
        logging.getLogger("kafkamock").info(
            "presenting the broker as Apache Kafka %s (%s); of its ApiVersions, kafkamock leaves out %s",
            broker.release.line, broker.release.kafka_version,
            ", ".join(f"{broker.registry.requests[k].api_name if k in broker.registry.requests else f'API {k}'} "
                      f"v{low}{'' if low == high else f'-{high}'}" for k, (low, high) in sorted(unserved.items()))
            or "nothing")
    from kafkamock.server.memory import keep_freed_memory, settle_garbage_collector, warm_heap

    kept = keep_freed_memory()
    settle_garbage_collector()
    from kafkamock.server.activation import inherited_sockets

    server = Server(broker, inherited_sockets())
    heap = warm_heap() if kept and not broker.storage.durable else None   # on disk, frames are freed and reused
    if heap is not None:
        server.before_large_frame = heap.taking

    async def run() -> None:
        async with trio.open_nursery() as nursery:
            address = await nursery.start(server.serve, host, port)
            ready = f"kafkamock broker ready: bootstrap.servers={address} cluster.id={broker.metadata.cluster_id}"
            first = broker.listeners[0]
            if first.security_protocol != "PLAINTEXT" or len(broker.listeners) > 1:
                ready += f" security.protocol={first.security_protocol}"
            ready += ready_extra + ready_log
            for listener in broker.listeners[1:]:
                ready += f" listener.{listener.name}={server.bootstrap_by_listener[listener.name]}"
            if control_port is not None:
                from kafkamock.server.control_http import serve_control

                url = await nursery.start(serve_control, broker.control, control_host, control_port)
                ready += f" control={url}"
            # Listen for the signals before saying ready: a supervisor may stop the broker as soon as it reads the
            # line, and a SIGTERM before the receiver is open would kill it without a clean stop.
            with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                click.echo(ready)
                async for signum in signals:
                    logging.getLogger("kafkamock").info("received %s, stopping", signal.Signals(signum).name)
                    nursery.cancel_scope.cancel()
                    break

    try:
        trio.run(run)
    except BaseException as exc:            # a busy port, a keystore that will not load: one line, no groups
        cause = leaf(exc, (ListenError, ConfigError))
        if cause is None:
            raise
        raise click.ClickException(str(cause)) from None


def _create_topics(broker: Cluster, specs: tuple[str, ...]) -> None:
    """``--topic NAME[:PARTITIONS[:REPLICATION]]``: each topic not already there (a data directory keeps them)."""
    from kafkamock.broker.control import ControlError

    for spec in specs:
        name, *numbers = spec.split(":")
        if not name or len(numbers) > 2 or not all(n.isdigit() for n in numbers):
            raise click.BadParameter(f"expected NAME[:PARTITIONS[:REPLICATION]], got {spec!r}", param_hint="--topic")
        if name in broker.metadata.topics:
            continue
        partitions = int(numbers[0]) if numbers else 1                  # create_topic's defaults
        replication_factor = int(numbers[1]) if len(numbers) > 1 else 1
        try:
            broker.control.create_topic(name, partitions, replication_factor)
        except ControlError as exc:
            raise click.BadParameter(f"{spec}: {exc}", param_hint="--topic") from None


def _flat(table: dict, prefix: str = "") -> dict[str, object]:
    """A TOML file's configs by Kafka name: ``auto.create.topics.enable = false`` is TOML for nested tables
    (``[auto.create.topics] enable = false`` likewise), and its dotted path is the config's name."""
    out: dict[str, object] = {}
    for key, value in table.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _secure_defaults(overrides: dict[str, object], host: str, port: int, tls: bool, scram: bool,
                     made: list[str]) -> str:
    """``--tls`` / ``--scram-user``: the listener, certificates and mechanisms they imply, added to ``overrides``
    where the user set nothing; returns what the ready line adds (the CA file clients must trust)."""
    import tempfile

    extra = ""
    if not overrides.get("listeners") and (tls or scram):
        protocol = {(True, False): "SSL", (False, True): "SASL_PLAINTEXT", (True, True): "SASL_SSL"}[(tls, scram)]
        bind = f"[{host}]" if ":" in host else host
        overrides["listeners"] = f"{protocol}://{bind}:{port}"
        if overrides.get("advertised.listeners"):      # a bare advertised address now names this listener
            name, _, rest = str(overrides["advertised.listeners"]).partition("://")
            if rest and name.upper() == "PLAINTEXT":
                overrides["advertised.listeners"] = f"{protocol}://{rest}"
    if scram:
        overrides.setdefault("sasl.enabled.mechanisms", "SCRAM-SHA-256,SCRAM-SHA-512")
    if tls:
        from kafkamock.server.tls import throwaway

        made.append(tempfile.mkdtemp(prefix="kafkamock-tls-"))
        files = throwaway(made[-1])
        for key, value in files.broker_config().items():
            overrides.setdefault(key, value)
        extra += f" ssl.ca.location={files.ca}"
    if scram:
        extra += f" sasl.mechanisms={overrides['sasl.enabled.mechanisms']}"
    return extra


@main.group()
@click.option("--control", "url", envvar="KAFKAMOCK_CONTROL", required=True, metavar="URL",
              help="The control API of a running broker (the control=... of its ready line); or $KAFKAMOCK_CONTROL.")
@click.pass_context
def ctl(ctx: click.Context, url: str) -> None:
    """Drive a running broker through its control API (kafkamock serve --control-port)."""
    ctx.obj = url.rstrip("/")


def _call(ctx: click.Context, method: str, path: str, body: dict | None = None) -> None:
    import urllib.error
    import urllib.request

    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(ctx.obj + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            payload = json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        try:
            message = json.loads(exc.read()).get("error", exc.reason)
        except ValueError:
            message = exc.reason
        raise click.ClickException(f"{method} {path}: {exc.code} {message}") from None
    except urllib.error.URLError as exc:
        raise click.ClickException(f"cannot reach the control API at {ctx.obj}: {exc.reason}") from None
    click.echo(json.dumps(payload, indent=2))


@ctl.command("nodes")
@click.pass_context
def ctl_nodes(ctx: click.Context) -> None:
    """List the nodes."""
    _call(ctx, "GET", "/v1/nodes")


@ctl.command("stop-node")
@click.argument("node_id", type=int)
@click.pass_context
def ctl_stop_node(ctx: click.Context, node_id: int) -> None:
    """Stop a node: its leaderships move to other in-sync replicas, its connections close."""
    _call(ctx, "POST", f"/v1/nodes/{node_id}/stop")


@ctl.command("start-node")
@click.argument("node_id", type=int)
@click.pass_context
def ctl_start_node(ctx: click.Context, node_id: int) -> None:
    """Start a stopped node again (it takes back the partitions it prefers to lead)."""
    _call(ctx, "POST", f"/v1/nodes/{node_id}/start")


@ctl.command("drop-connections")
@click.argument("node_id", type=int)
@click.pass_context
def ctl_drop(ctx: click.Context, node_id: int) -> None:
    """Close every connection to a node."""
    _call(ctx, "POST", f"/v1/nodes/{node_id}/drop-connections")


@ctl.command("move-leader")
@click.argument("topic")
@click.argument("partition", type=int)
@click.argument("node_id", type=int)
@click.pass_context
def ctl_move_leader(ctx: click.Context, topic: str, partition: int, node_id: int) -> None:
    """Make NODE_ID the leader of TOPIC-PARTITION (with a leader-epoch bump)."""
    _call(ctx, "POST", f"/v1/partitions/{topic}/{partition}/leader", {"node_id": node_id})


@ctl.command("fault")
@click.argument("api")
@click.option("--error", "error_code", default="NONE", show_default=True,
              help="Error code, by number or name (NOT_LEADER_OR_FOLLOWER).")
@click.option("--count", default=1, show_default=True, type=int, help="How many requests it affects.")
@click.option("--node", "node_id", type=int, help="Only requests to this node.")
@click.option("--topic", help="Only this topic's partitions.")
@click.option("--partition", type=int, help="Only this partition (with --topic).")
@click.option("--latency-ms", default=0, show_default=True, type=int, help="Delay before the request is handled.")
@click.option("--close-connection", is_flag=True, help="Close the connection instead of answering.")
@click.pass_context
def ctl_fault(ctx: click.Context, api: str, error_code: str, count: int, node_id: int | None, topic: str | None,
              partition: int | None, latency_ms: int, close_connection: bool) -> None:
    """Inject a fault into the next COUNT requests of API (a key or a name: 0, Produce)."""
    body: dict = {"api_key": api, "error_code": error_code, "count": count, "latency_ms": latency_ms,
                  "close_connection": close_connection}
    for name, value in (("node_id", node_id), ("topic", topic), ("partition", partition)):
        if value is not None:
            body[name] = value
    _call(ctx, "POST", "/v1/faults", body)


@ctl.command("clear-faults")
@click.pass_context
def ctl_clear_faults(ctx: click.Context) -> None:
    """Drop every pending fault."""
    _call(ctx, "DELETE", "/v1/faults")


@ctl.command("requests")
@click.option("--api", help="Only this API (key or name).")
@click.option("--node", "node_id", type=int, help="Only requests to this node.")
@click.pass_context
def ctl_requests(ctx: click.Context, api: str | None, node_id: int | None) -> None:
    """Print the request log."""
    import urllib.parse

    query = urllib.parse.urlencode({k: v for k, v in (("api_key", api), ("node_id", node_id)) if v is not None})
    _call(ctx, "GET", "/v1/requests" + (f"?{query}" if query else ""))


@ctl.command("topics")
@click.argument("name", required=False)
@click.pass_context
def ctl_topics(ctx: click.Context, name: str | None) -> None:
    """List the topics with their partitions' leaders, ISR and offsets (or one topic)."""
    _call(ctx, "GET", f"/v1/topics/{name}" if name else "/v1/topics")


@ctl.command("faults")
@click.pass_context
def ctl_faults(ctx: click.Context) -> None:
    """List the pushed faults not yet spent."""
    _call(ctx, "GET", "/v1/faults")


@ctl.command("cluster")
@click.pass_context
def ctl_cluster(ctx: click.Context) -> None:
    """The cluster id, controller, nodes and storage."""
    _call(ctx, "GET", "/v1/cluster")


@ctl.command("create-topic")
@click.argument("name")
@click.option("--partitions", default=1, show_default=True, type=click.IntRange(1))
@click.option("--replication-factor", default=1, show_default=True, type=click.IntRange(1))
@click.option("--config", "settings", multiple=True, metavar="KEY=VALUE", help="A topic config (repeatable).")
@click.pass_context
def ctl_create_topic(ctx: click.Context, name: str, partitions: int, replication_factor: int,
                     settings: tuple[str, ...]) -> None:
    """Create a topic."""
    from kafkamock.cli_kafka import key_values

    _call(ctx, "POST", "/v1/topics", {"name": name, "partitions": partitions,
                                      "replication_factor": replication_factor, "configs": key_values(settings)})


@ctl.command("produce")
@click.argument("topic")
@click.argument("values", nargs=-1, required=True)
@click.option("--key", help="The key of every record (text).")
@click.option("--partition", type=int, help="The partition (default: by key as Kafka's partitioner, else 0).")
@click.pass_context
def ctl_produce(ctx: click.Context, topic: str, values: tuple[str, ...], key: str | None,
                partition: int | None) -> None:
    """Append records with these VALUES (text) to TOPIC; prints each record's partition and offset."""
    _call(ctx, "POST", f"/v1/topics/{topic}/records",
          {"records": [{"key": key, "value": v} for v in values], "partition": partition})


@ctl.command("records")
@click.argument("topic")
@click.option("--partition", type=int, help="One partition (default: all, in turn).")
@click.option("--from", "from_offset", default=0, show_default=True, type=int)
@click.option("--limit", default=1000, show_default=True, type=int)
@click.pass_context
def ctl_records(ctx: click.Context, topic: str, partition: int | None, from_offset: int, limit: int) -> None:
    """The records TOPIC holds, decoded (keys, values and headers as text, or base64 when not UTF-8)."""
    query = f"?from={from_offset}&limit={limit}" + (f"&partition={partition}" if partition is not None else "")
    _call(ctx, "GET", f"/v1/topics/{topic}/records{query}")


@ctl.command("groups")
@click.argument("group_id", required=False)
@click.pass_context
def ctl_groups(ctx: click.Context, group_id: str | None) -> None:
    """List the groups with their type, state, members and committed offsets (or one group)."""
    _call(ctx, "GET", f"/v1/groups/{group_id}" if group_id else "/v1/groups")


def _kafka_commands() -> None:
    """``topic``, ``produce``, ``consume`` and ``group``: any Kafka broker, over the Kafka protocol."""
    from kafkamock import cli_kafka

    for command in (cli_kafka.topic, cli_kafka.produce, cli_kafka.consume, cli_kafka.group):
        main.add_command(command)


_kafka_commands()


def _version(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise click.BadParameter(f"version must be an integer, not {text!r}") from None


if __name__ == "__main__":  # pragma: no cover
    main()
