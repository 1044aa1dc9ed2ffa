"""Write kafkamock/broker/kafka_releases.json: what a broker of each Apache Kafka release that ``kafkamock serve
--kafka-version`` emulates advertises in ApiVersions (its API version ranges and its feature levels), read by
tools/DumpKafkaRelease.java from that release's own kafka-clients (and kafka-server-common) jars, which Maven
resolves into ``.cache/kafka-releases`` (no text is copied).

    .venv/bin/python tools/import_kafka_releases.py            # rewrite the file
    .venv/bin/python tools/import_kafka_releases.py --check    # exit 1 if it is not what the jars say
    .venv/bin/python tools/import_kafka_releases.py --fetch    # only resolve the jars (make kafka does)

tests/broker/test_kafka_releases.py runs the check.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUTPUT = REPO / "kafkamock" / "broker" / "kafka_releases.json"
JARS = REPO / ".cache" / "kafka-releases"
# The release line a user names -> (the newest patch release of it, the listener type its brokers serve). 2.8's
# brokers ran on ZooKeeper (KRaft was early access); from 3.9 on, a KRaft broker.
RELEASES: dict[str, tuple[str, str]] = {
    "2.8": ("2.8.2", "ZK_BROKER"), "3.9": ("3.9.1", "BROKER"), "4.0": ("4.0.2", "BROKER"),
    "4.1": ("4.1.2", "BROKER"), "4.2": ("4.2.1", "BROKER"), "4.3": ("4.3.1", "BROKER")}


def jars(version: str, listener: str) -> list[Path]:
    """The release's jars, resolved with Maven once."""
    artifacts = ["kafka-clients"] + (["kafka-server-common"] if listener == "BROKER" else [])
    out = []
    for artifact in artifacts:
        jar = JARS / version / f"{artifact}-{version}.jar"
        if not jar.exists():
            mvn = shutil.which("mvn")
            if mvn is None:
                raise SystemExit("Maven is needed to resolve the releases' jars (make java installs it)")
            subprocess.run([mvn, "-q", "-B", "-Dstyle.color=never", "dependency:copy", f"-Dartifact=org.apache.kafka:{artifact}:{version}",
                            f"-DoutputDirectory={jar.parent}"], check=True, cwd=REPO)
        out.append(jar)
    return out


def dump(version: str, listener: str) -> dict:
    classpath = os.pathsep.join(str(j) for j in jars(version, listener))
    result = subprocess.run(["java", "-cp", classpath, str(REPO / "tools" / "DumpKafkaRelease.java"), listener],
                            check=True, capture_output=True, text=True)
    found = json.loads(result.stdout)
    if found["kafka_version"] != version:
        raise SystemExit(f"the jars of {version} say they are Kafka {found['kafka_version']}")
    return found


def render() -> str:
    """One release per block, an API or a feature per line."""
    blocks = []
    for line, (version, listener) in RELEASES.items():
        found = dump(version, listener)
        apis = ",\n".join(f'   "{key}": {json.dumps(r)}' for key, r in found["apis"].items())
        features = ",\n".join(f'   "{name}": {json.dumps(f)}' for name, f in found["features"].items())
        blocks.append(f' "{line}": {{\n  "kafka_version": "{found["kafka_version"]}", "listener": "{listener}",\n'
                      f'  "apis": {{\n{apis}\n  }},\n  "features": {{{chr(10) + features + chr(10) + "  " if features else ""}}}\n }}')
    return "{\n" + ",\n".join(blocks) + "\n}\n"


def main(argv: list[str]) -> int:
    if "--fetch" in argv:           # `make kafka`: resolve the jars now, so the check runs offline later
        for version, listener in RELEASES.values():
            jars(version, listener)
        return 0
    text = render()
    if "--check" in argv:
        if not OUTPUT.exists() or OUTPUT.read_text() != text:
            print(f"{OUTPUT} is not what the releases' jars say: run tools/import_kafka_releases.py")
            return 1
        print(f"{OUTPUT.name} is current")
        return 0
    OUTPUT.write_text(text)
    print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
