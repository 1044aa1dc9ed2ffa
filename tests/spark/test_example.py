"""examples/orders_pipeline.py, run as a user runs it (``make run`` does the same against 127.0.0.1:9092)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.spark_sources import connector_jars

pytestmark = pytest.mark.slow
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "orders_pipeline.py"


@pytest.mark.parametrize("connector", ["kafka", "kafkamock"])
def test_orders_pipeline_totals_every_order_per_minute(kafka_broker, connector):
    env = {**os.environ, "KAFKAMOCK_SPARK_JARS": os.pathsep.join(connector_jars())}
    result = subprocess.run([sys.executable, str(EXAMPLE), "--bootstrap-servers", kafka_broker.bootstrap_servers,
                             "--orders", "300", "--wait", "10", "--connector", connector],
                            capture_output=True, text=True, timeout=600, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert "produced 300 orders" in out
    assert re.search(r"streaming query done: 300 orders in 2 micro-batches \[250, 50\]", out), out
    minutes = re.findall(r"\|(2026-01-01 00:0\d)\|(\d+) +\|", out)
    assert [m for m, _ in minutes] == [f"2026-01-01 00:0{i}" for i in range(5)]
    assert sum(int(n) for _, n in minutes) == 300
    assert "5 minutes, 300 orders" in out


def test_make_run_serves_runs_the_pipeline_and_stops_cleanly_on_ctrl_c(tmp_path):
    """``make run``'s script: the broker's log goes to a file the ready line names (not into Spark's output), the
    pipeline runs against the broker, and Ctrl-C (SIGINT to the whole foreground group) ends it with status 0."""
    import signal
    import socket

    classpath = tmp_path / "classpath.txt"
    classpath.write_text("\n".join(connector_jars()) + "\n")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tmp_path / "broker.log"
    process = subprocess.Popen([sys.executable, str(EXAMPLE.parents[1] / "tools" / "make_run.py"), "--port", str(port),
                                "--jars", str(classpath), "--log", str(log)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    lines = []
    try:
        for line in process.stdout:
            lines.append(line)
            if line.startswith("kafkamock is serving"):
                break
        assert lines and lines[0].startswith("kafkamock broker ready: ") and f" log={log}" in lines[0], lines
        assert any("produced 1000 orders" in line for line in lines), lines
        assert not any(" INFO kafkamock" in line for line in lines)                  # the log is in the file
        os.killpg(process.pid, signal.SIGINT)
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert "received SIGINT, stopping" in log.read_text()
