"""The README's PySpark test (examples/test_spark_pipeline.py) runs as a user runs it: pytest with kafkamock's
plugin, Spark's connector from ``KAFKAMOCK_SPARK_JARS``; and the README quotes it as it is."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.spark_sources import connector_jars

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "test_spark_pipeline.py"
pytestmark = pytest.mark.slow


def test_the_readme_pipeline_test_passes_under_pytest(tmp_path):
    env = {**os.environ, "KAFKAMOCK_SPARK_JARS": os.pathsep.join(connector_jars())}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
                          str(EXAMPLE)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "1 passed" in run.stdout


def test_the_readme_quotes_the_pipeline_test():
    body = EXAMPLE.read_text().split('"""', 2)[2].lstrip("\n")
    assert body in (ROOT / "README.md").read_text(), "README.md must quote examples/test_spark_pipeline.py"
