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
