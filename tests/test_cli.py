"""The ``kafkamock`` command line: schemas, decode and encode, including frames and bad input."""

from __future__ import annotations

import json

from click.testing import CliRunner

from kafkamock.cli import main


def run(*args: str, input: str | bytes | None = None):
    return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)


def test_schemas_lists_apis_with_versions():
    result = run("schemas")
    assert result.exit_code == 0
    assert any(line.split()[:3] == ["78", "ShareFetch", "1-2"] for line in result.output.splitlines())
    rows = json.loads(run("schemas", "--json").output)
    assert {"api_key": 65, "api": "DescribeTransactions", "versions": "0", "flexible": "0",
            "unstable_latest": False} in rows


def test_encode_then_decode_body_round_trip():
    value = {"group_id": "g", "member_id": None, "is_renew_ack": True,
             "topics": [{"topic_id": "6ba7b810-9dad-11d1-80b4-00c04fd430c8", "partitions": [
                 {"partition_index": 3, "acknowledgement_batches": [
                     {"first_offset": 1, "last_offset": 2, "acknowledge_types": [4]}]}]}]}
    encoded = run("encode", "ShareAcknowledgeRequest", "2", json.dumps(value))
    assert encoded.exit_code == 0, encoded.output
    decoded = json.loads(run("decode", "ShareAcknowledgeRequest", "2", encoded.output.strip()).output)
    assert decoded["is_renew_ack"] is True and decoded["member_id"] is None
    assert decoded["topics"][0]["topic_id"] == value["topics"][0]["topic_id"]
    assert decoded["topics"][0]["partitions"][0]["acknowledgement_batches"][0]["acknowledge_types"] == [4]


def test_binary_input_from_stdin_and_bytes_as_base64():
    raw = run("encode", "SaslAuthenticateRequest", "2", '{"auth_bytes": "AAEC"}', "--binary")
    assert raw.stdout_bytes == bytes.fromhex("04 000102 00")
    decoded = run("decode", "SaslAuthenticateRequest", "2", "-", "--input-format", "binary", input=raw.stdout_bytes)
    assert json.loads(decoded.output) == {"auth_bytes": "AAEC"}


def test_request_and_response_frames():
    frame = run("encode", "--frame", "request", "--correlation-id", "5", "ApiVersions", "3", "{}").output.strip()
    out = json.loads(run("decode", "--frame", frame).output)
    assert out["api"] == "ApiVersions" and out["header"]["correlation_id"] == 5
    frame = run("encode", "--frame", "response", "--correlation-id", "6", "ApiVersions", "3",
                '{"api_keys": [{"api_key": 18, "min_version": 0, "max_version": 4}]}').output.strip()
    out = json.loads(run("decode", "--frame", "ApiVersions", "3", frame).output)
    assert out["header"] == {"correlation_id": 6} and out["body"]["api_keys"][0]["max_version"] == 4


def test_errors_are_clear_and_nonzero():
    bad = run("decode", "ShareFetchRequest", "2", "02")
    assert bad.exit_code == 1 and "cannot decode ShareFetchRequest v2 at byte" in bad.output
    bad = run("encode", "ShareFetchRequest", "2", '{"no_such": 1}')
    assert bad.exit_code == 1 and "no field 'no_such'" in bad.output
    bad = run("encode", "ShareFetchRequest", "2", "not json")
    assert bad.exit_code == 1 and "not JSON" in bad.output
    bad = run("decode", "ShareFetchRequest", "9", "00")
    assert bad.exit_code == 1 and "unsupported version" in bad.output
    for command in ("encode", "decode"):
        bad = run(command, "ShareFetchRequest", "2", "@/no/such/file.json")
        assert bad.exit_code == 1 and bad.output == "Error: cannot read /no/such/file.json: No such file or directory\n"


def test_serve_raises_the_open_files_limit_towards_the_hard_one():
    """A user's default soft limit (often 1024) is what segment files and sockets share: ``serve`` raises it."""
    import subprocess
    import sys

    code = ("import resource; from kafkamock.server.memory import raise_open_files_limit; "
            "print(raise_open_files_limit(4096), resource.getrlimit(resource.RLIMIT_NOFILE)[0])")
    out = subprocess.run(["bash", "-c", f'ulimit -Sn 256 && exec "{sys.executable}" -c "{code}"'],
                         capture_output=True, text=True, timeout=60, check=True)
    hard = subprocess.run(["bash", "-c", "ulimit -Hn"], capture_output=True, text=True).stdout.strip()
    expected = 4096 if hard == "unlimited" else min(4096, int(hard))
    assert out.stdout.split() == [str(expected), str(expected)]


def busy_port():
    import socket

    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    held.listen()
    return held, held.getsockname()[1]


def test_a_busy_or_impossible_port_is_one_line():
    held, port = busy_port()
    with held:
        for args, said in ((["--port", str(port)], f"cannot listen on 127.0.0.1:{port} (listener PLAINTEXT of node 1)"),
                           (["--port", "0", "--control-port", str(port)],
                            f"cannot serve the control API on 127.0.0.1:{port}")):
            result = CliRunner().invoke(main, ["serve", *args])
            assert result.exit_code == 1, result.output
            assert result.output.strip().splitlines() == [f"Error: {said}: Address already in use"]
    for option in ("--port", "--control-port"):
        result = CliRunner().invoke(main, ["serve", option, "70000"])
        assert result.exit_code == 2 and "70000 is not in the range 0<=x<=65535" in result.output


def test_control_host_is_where_the_control_api_listens():
    """``--control-host`` is bound (a name is resolved: ``localhost`` serves on the loopback address), and a name
    that does not resolve is a one-line error naming it."""
    import json
    import signal
    import subprocess
    import sys
    import urllib.request

    process = subprocess.Popen([sys.executable, "-m", "kafkamock", "serve", "--port", "0", "--control-port", "0",
                                "--control-host", "localhost"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True)
    try:
        url = process.stdout.readline().split("control=")[1].split()[0]
        assert url.startswith("http://127.0.0.1:")
        assert json.loads(urllib.request.urlopen(f"{url}/v1/cluster", timeout=10).read())["nodes"][0]["node_id"] == 1
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    result = CliRunner().invoke(main, ["serve", "--port", "0", "--control-port", "0",
                                       "--control-host", "no-such-host.invalid"])
    assert result.exit_code == 1
    (line,) = result.output.strip().splitlines()
    assert line.startswith("Error: cannot serve the control API on no-such-host.invalid:0: ")


def test_start_broker_on_a_busy_port_raises_a_listen_error_naming_it():
    import errno

    import pytest

    from kafkamock.testing import ListenError, start_broker

    held, port = busy_port()
    with held, pytest.raises(ListenError) as raised:
        start_broker(port=port)
    assert str(raised.value) == f"cannot listen on 127.0.0.1:{port} (listener PLAINTEXT of node 1): Address already in use"
    assert isinstance(raised.value, OSError) and raised.value.errno == errno.EADDRINUSE


def test_a_config_file_takes_kafkas_dotted_names_as_toml_writes_them():
    """``auto.create.topics.enable = false`` is, in TOML, a table ``auto`` holding ``create``...: the dotted path is
    the config's name (quoted keys and [tables] too)."""
    import tomllib

    from kafkamock.broker.config import BrokerConfig
    from kafkamock.cli import _flat

    text = ('auto.create.topics.enable = false\nnum.partitions = 3\n"log.retention.ms" = 1000\n'
            '[group.consumer]\nheartbeat.interval.ms = 6000\n')
    flat = _flat(tomllib.loads(text))
    assert flat == {"auto.create.topics.enable": False, "num.partitions": 3, "log.retention.ms": 1000,
                    "group.consumer.heartbeat.interval.ms": 6000}
    config = BrokerConfig(flat)
    assert (config["auto.create.topics.enable"], config["num.partitions"], config["log.retention.ms"],
            config["group.consumer.heartbeat.interval.ms"]) == (False, 3, 1000, 6000)


def test_serve_tls_removes_its_throwaway_keys_when_stopped(tmp_path):
    import os
    import signal
    import subprocess
    import sys

    env = {**os.environ, "TMPDIR": str(tmp_path)}
    process = subprocess.Popen([sys.executable, "-m", "kafkamock", "serve", "--port", "0", "--tls"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        ready = process.stdout.readline()
        ca = ready.split("ssl.ca.location=")[1].split()[0]
        assert ca.startswith(str(tmp_path)) and os.path.exists(ca)
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    assert list(tmp_path.iterdir()) == []


def test_a_keystore_kafkamock_cannot_read_is_one_line(tmp_path):
    keystore = tmp_path / "broker.jks"
    keystore.write_bytes(b"\xfe\xed\xfe\xed")
    result = CliRunner().invoke(main, ["serve", "--port", "0", "--config", "listeners=SSL://127.0.0.1:0",
                                       "--config", f"ssl.keystore.location={keystore}",
                                       "--config", "ssl.keystore.type=JKS", "--config", "ssl.keystore.password=x"])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "Error: TLS listener SSL: JKS keystores are Java-only; set listener.name.ssl.ssl.keystore.type (or "
        "ssl.keystore.type) to PEM or PKCS12"]
