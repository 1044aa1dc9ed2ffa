"""The ``kafkamock`` command: inspect the schemas and turn Kafka frames into JSON and back."""

from __future__ import annotations

import json
import string
import sys
from pathlib import Path

import click

from kafkamock.codec import CodecError, Registry, default_registry
from kafkamock.codec.framing import decode_request, decode_response, encode_request, encode_response
from kafkamock.codec.jsonform import from_json, to_json


def _registry(schema_dir: str | None) -> Registry:
    return Registry.from_directory(schema_dir) if schema_dir else default_registry()


def _read_input(data: str | None, mode: str) -> bytes:
    """DATA is hex text, ``-`` for standard input, ``@path`` for a file; hex or binary is detected unless forced."""
    if data is None or data == "-":
        raw = sys.stdin.buffer.read()
    elif data.startswith("@"):
        raw = Path(data[1:]).read_bytes()
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
    text = sys.stdin.read() if value == "-" else Path(value[1:]).read_text() if value.startswith("@") else value
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
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=9092, show_default=True, type=int, help="Port to listen on (0: any free port).")
@click.option("--config", "settings", multiple=True, metavar="KEY=VALUE",
              help="A broker config with Kafka's name, e.g. --config auto.create.topics.enable=false.")
@click.option("--config-file", type=click.Path(exists=True, dir_okay=False),
              help="A TOML file of broker configs (Kafka names as keys).")
@click.option("--log-level", default="INFO", show_default=True,
              type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False))
def serve(host: str, port: int, settings: tuple[str, ...], config_file: str | None, log_level: str) -> None:
    """Run a broker until Ctrl-C or SIGTERM."""
    import logging
    import signal
    import tomllib

    import trio

    from kafkamock.broker import Broker
    from kafkamock.broker.config import BrokerConfig, ConfigError
    from kafkamock.server import Server

    logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    overrides: dict[str, object] = {}
    if config_file:
        with open(config_file, "rb") as fh:
            try:
                overrides.update(tomllib.load(fh))
            except tomllib.TOMLDecodeError as exc:
                raise click.ClickException(f"{config_file}: {exc}") from None
    for item in settings:
        key, sep, value = item.partition("=")
        if not sep:
            raise click.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint="--config")
        overrides[key.strip()] = value.strip()
    try:
        config = BrokerConfig(overrides)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    from kafkamock.server.memory import keep_freed_memory

    keep_freed_memory()
    server = Server(Broker(config))

    async def run() -> None:
        async with trio.open_nursery() as nursery:
            try:
                address = await nursery.start(server.serve, host, port)
            except OSError as exc:
                raise click.ClickException(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
            click.echo(f"kafkamock broker ready: bootstrap.servers={address} "
                       f"cluster.id={server.broker.cluster.cluster_id}", err=False)
            with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for signum in signals:
                    logging.getLogger("kafkamock").info("received %s, stopping", signal.Signals(signum).name)
                    nursery.cancel_scope.cancel()
                    break

    trio.run(run)


def _version(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise click.BadParameter(f"version must be an integer, not {text!r}") from None


if __name__ == "__main__":  # pragma: no cover
    main()
