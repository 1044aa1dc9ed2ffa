"""Resolve the tests' Java artifacts with Maven into a cache directory, once; the tests then run offline.

Usage: ``python tests/java/fetch_jars.py {clients|kafka|spark} DEST`` (the Makefile uses ``.cache/java``,
``.cache/kafka`` and ``.cache/spark``; ``tests/support/oracle.py`` and ``tests/support/kafka_cluster.py`` call
``main`` themselves).

- ``clients`` (pom-clients.xml): Apache Kafka's kafka-clients 4.3.1 with Jackson, for the codec's oracle
  (KafkaOracle.java: the generated ``*Data`` classes and their JSON converters) and the real Java producer,
  consumer and Admin (ClientScenarios.java).
- ``kafka`` (pom-kafka.xml): Apache Kafka 4.3.1's broker (``kafka_2.13``) and its runtime dependencies, the
  reference broker the differential suite runs beside kafkamock.
- ``spark`` (pom-spark.xml): Spark's own Kafka connector (``spark-sql-kafka-0-10``) at the pinned pyspark's version,
  with what pyspark's jars lack, for ``format("kafka")`` (``kafkamock.spark.session``, ``make run``).

``mvn dependency:copy-dependencies`` copies the runtime closure into ``DEST/jars``; ``DEST/jars/classpath.txt``
lists the jars, one absolute path per line, and records the pom's SHA-256, so a changed pom resolves again and an
unchanged one costs nothing (no Maven, no network).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
POMS = {"clients": HERE / "pom-clients.xml", "kafka": HERE / "pom-kafka.xml", "spark": HERE / "pom-spark.xml"}
KAFKA_VERSION = "4.3.1"
SPARK_VERSION = "4.2.0"     # pyproject.toml pins the same pyspark for the tests
# Jars each kind must hold; kafka-clients' kafka/kafka-version.properties must say KAFKA_VERSION (the Kafka kinds).
REQUIRED = {"clients": (f"kafka-clients-{KAFKA_VERSION}.jar",),
            "kafka": (f"kafka-clients-{KAFKA_VERSION}.jar", f"kafka_2.13-{KAFKA_VERSION}.jar"),
            "spark": (f"spark-sql-kafka-0-10_2.13-{SPARK_VERSION}.jar",
                      f"spark-token-provider-kafka-0-10_2.13-{SPARK_VERSION}.jar")}
STAMP = "# pom sha256 "


def _pom_digest(pom: Path) -> str:
    return hashlib.sha256(pom.read_bytes()).hexdigest()


def _listed(classpath_file: Path, digest: str) -> list[Path] | None:
    """The jars of an up-to-date classpath.txt, or None when it is missing, stale or names a missing jar."""
    if not classpath_file.exists():
        return None
    lines = classpath_file.read_text().splitlines()
    if not lines or lines[0] != STAMP + digest:
        return None
    jars = [Path(line) for line in lines[1:] if line]
    return jars if jars and all(p.exists() for p in jars) else None


def _check_version(kind: str, jars: list[Path]) -> None:
    names = {p.name: p for p in jars}
    missing = [name for name in REQUIRED[kind] if name not in names]
    if missing:
        raise SystemExit(f"fetch_jars: Maven resolved no {', '.join(missing)} for {kind}")
    if kind == "spark":
        return                  # the connector brings the kafka-clients its Spark release was built with
    jar = names[f"kafka-clients-{KAFKA_VERSION}.jar"]
    with zipfile.ZipFile(jar) as z:
        props = z.read("kafka/kafka-version.properties").decode()
    if f"version={KAFKA_VERSION}" not in props:
        raise SystemExit(f"fetch_jars: {jar.name} is not Kafka {KAFKA_VERSION}: {props!r}")


def resolve(kind: str, dest: Path) -> list[Path]:
    """Run Maven for ``kind`` into ``dest/jars`` unless its classpath.txt is current; return the jars."""
    pom = POMS[kind]
    jars_dir = dest / "jars"
    classpath_file = jars_dir / "classpath.txt"
    digest = _pom_digest(pom)
    listed = _listed(classpath_file, digest)
    if listed is not None:
        print(f"fetch_jars: {kind} up to date ({len(listed)} jars in {jars_dir})")
        return listed
    mvn = shutil.which("mvn")
    if mvn is None:
        raise SystemExit("fetch_jars: Maven (mvn) is not installed; install it (Debian: apt-get install maven)")
    staging = dest / f"jars.{os.getpid()}.part"
    shutil.rmtree(staging, ignore_errors=True)
    print(f"fetch_jars: resolving {pom.name} with Maven into {jars_dir}")
    result = subprocess.run(
        [mvn, "-q", "-B", "-f", str(pom), "dependency:copy-dependencies", "-DincludeScope=runtime",
         f"-DoutputDirectory={staging}"],
        capture_output=True, text=True)
    if result.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise SystemExit(f"fetch_jars: Maven failed for {pom.name}:\n{result.stdout[-4000:]}{result.stderr[-4000:]}")
    jars_dir.parent.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(jars_dir, ignore_errors=True)
    staging.rename(jars_dir)
    jars = sorted(jars_dir.glob("*.jar"))
    _check_version(kind, jars)
    tmp = classpath_file.with_name(f"classpath.{os.getpid()}.tmp")
    tmp.write_text(STAMP + digest + "\n" + "".join(f"{p}\n" for p in jars))
    tmp.replace(classpath_file)
    print(f"fetch_jars: {len(jars)} jars ready in {jars_dir}")
    return jars


def main(argv: list[str] | None = None) -> list[Path]:
    """Resolve and return the jar paths (the classpath). Also usable as a library."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2 or argv[0] not in POMS:
        raise SystemExit("usage: python tests/java/fetch_jars.py {clients|kafka|spark} DEST")
    return resolve(argv[0], Path(argv[1]).resolve())


if __name__ == "__main__":
    main()
