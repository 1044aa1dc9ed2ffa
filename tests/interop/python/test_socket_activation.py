"""``kafkamock serve`` under socket activation (systemd's LISTEN_FDS protocol, kafkamock/server/activation.py): it
serves the listening sockets a supervisor hands it, so across a kill -9 and restart a client that connects while
the broker is down waits in the accept queue and is answered by the restarted broker, never refused."""

from __future__ import annotations

import socket
import threading
import time

import pytest
from support.serve_process import ServeProcess, free_port

from kafkamock.codec import decode_response, encode_request

pytestmark = pytest.mark.slow


def api_versions(port: int, correlation_id: int = 7, timeout: float = 30.0) -> int:
    """One ApiVersions v3 round trip on a fresh connection; the number of APIs listed."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(encode_request("ApiVersions", 3, correlation_id, "activation-test",
                                    {"client_software_name": "t", "client_software_version": "1"}))
        size = int.from_bytes(sock.recv(4, socket.MSG_WAITALL), "big")
        frame = size.to_bytes(4, "big") + sock.recv(size, socket.MSG_WAITALL)
    header, body = decode_response("ApiVersions", 3, frame)
    assert header.correlation_id == correlation_id and body.error_code == 0
    return len(body.api_keys)


def test_a_connection_made_while_the_broker_is_down_is_answered_after_the_restart(tmp_path):
    port = free_port(2)
    with ServeProcess(["--data-dir", str(tmp_path)], brokers=2, port=port).hold([port, port + 1]) as broker:
        assert api_versions(port) > 50 and api_versions(port + 1) > 50
        assert "serving the inherited listening socket" in broker.log()
        broker.kill()
        answered: list[int] = []
        during = threading.Thread(target=lambda: answered.append(api_versions(port + 1)))
        during.start()                 # connects now: the held port accepts, nobody answers yet
        time.sleep(0.2)
        assert during.is_alive() and not answered
        broker.start()
        during.join(timeout=30)
        assert answered and answered[0] > 50


def test_without_held_sockets_the_port_refuses_while_the_broker_is_down(tmp_path):
    """The control: the same restart without a supervisor holding the port refuses connections in between."""
    with ServeProcess(["--data-dir", str(tmp_path)]) as broker:
        assert api_versions(broker.port) > 50
        broker.kill()
        with pytest.raises(ConnectionRefusedError):
            api_versions(broker.port, timeout=5)
        broker.start()
        assert api_versions(broker.port) > 50


def test_inherited_sockets_are_taken_only_when_meant_for_this_process(monkeypatch):
    from kafkamock.server.activation import inherited_sockets

    assert inherited_sockets({"LISTEN_PID": "1", "LISTEN_FDS": "1"}) == {}         # another process's
    env = {"LISTEN_FDS": "2"}
    assert inherited_sockets(env) == {} and env == {}                             # no pid: none, and unset
