"""The package as users install it: the wheel and the sdist build with their metadata (dependencies, extras, the
``kafkamock`` command, the pytest plugin), and the wheel alone carries everything the broker reads at run time
(Kafka's message schemas, the config and release tables, the error codes)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_wheel_and_sdist_build_and_the_wheel_runs_a_broker_on_its_own(tmp_path):
    source = tmp_path / "source"           # a copy: setuptools writes build/ and *.egg-info into the tree it builds
    shutil.copytree(ROOT / "kafkamock", source / "kafkamock", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE", "NOTICE"):
        if (ROOT / name).exists():
            shutil.copy(ROOT / name, source / name)
    out = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--wheel", "--sdist", "--outdir",
                          str(tmp_path / "dist"), str(source)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("kafkamock-*.whl")
    (sdist,) = (tmp_path / "dist").glob("kafkamock-*.tar.gz")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        metadata = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        entry_points = zf.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
        zf.extractall(tmp_path / "unpacked")
    assert {"kafkamock/kafka_errors.json", "kafkamock/broker/kafka_configs.json", "kafkamock/broker/kafka_releases.json",
            "kafkamock/py.typed", "kafkamock/schemas/ProduceRequest.json"} <= names
    assert len([n for n in names if n.startswith("kafkamock/schemas/")]) > 150
    # the compiled record framing walk and message decoder (a C compiler is there wherever the tests run)
    for module in ("kafkamock/records/_framing.", "kafkamock/codec/_decode."):
        assert [n for n in names if n.startswith(module) and n.endswith(".so")], module
    assert "kafkamock = kafkamock.cli:main" in entry_points and "kafkamock = kafkamock.pytest_plugin" in entry_points
    for line in ("Requires-Python: >=3.11", "Provides-Extra: spark", "Requires-Dist: trio>=0.25",
                 "License: Apache-2.0", "Classifier: Framework :: Pytest"):
        assert line in metadata, line
    with tarfile.open(sdist) as tf:
        members = {m.name.split("/", 1)[1] for m in tf.getmembers() if "/" in m.name}
    assert {"pyproject.toml", "setup.py", "README.md", "kafkamock/schemas/ProduceRequest.json",
            "kafkamock/records/_framing.c", "kafkamock/codec/_decode.c"} <= members
    # The unpacked wheel, not this checkout, serves a broker that answers a real request.
    code = ("import kafkamock, json; from kafkamock.testing import start_broker; "
            "from kafkamock.client import KafkaClient; "
            "b = start_broker(); print(json.dumps([kafkamock.__file__, b.bootstrap_servers])); b.stop()")
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         cwd=tmp_path, env={"PYTHONPATH": str(tmp_path / "unpacked"), "PATH": "/usr/bin:/bin"})
    assert ran.returncode == 0, ran.stderr[-2000:]
    where, bootstrap = json.loads(ran.stdout.strip().splitlines()[-1])
    assert where.startswith(str(tmp_path / "unpacked")) and bootstrap.startswith("127.0.0.1:")
