"""Write kafkamock/broker/kafka_configs.json: the facts of Apache Kafka 4.3.1's broker, topic and group configs.

Names, types, defaults (as DescribeConfigs writes them), validators (class, text, parameters), internal flags, how
each broker config updates dynamically (read-only, per-broker, cluster-wide) and the synonyms of each, read from
Kafka's own ConfigDefs by tools/DumpKafkaConfigs.java on the jars of ``make kafka``. No documentation text.

    make kafka && .venv/bin/python tools/import_kafka_configs.py            # rewrite the file
    .venv/bin/python tools/import_kafka_configs.py --check                  # exit 1 if it is not current

tests/broker/test_kafka_configs.py runs the check, so the file stays what Kafka 4.3.1 says.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "tools" / "DumpKafkaConfigs.java"
OUTPUT = REPO / "kafkamock" / "broker" / "kafka_configs.json"
CLASSPATH = REPO / ".cache" / "kafka" / "jars" / "classpath.txt"


def dump() -> dict:
    """Compile and run the dumper against Kafka's jars; the parsed JSON."""
    if not CLASSPATH.exists():
        raise SystemExit(f"{CLASSPATH} is missing: run `make kafka` first")
    jars = [line for line in CLASSPATH.read_text().splitlines()[1:] if line]
    cp = os.pathsep.join(jars)
    with tempfile.TemporaryDirectory() as classes:
        subprocess.run(["javac", "-d", classes, "-cp", cp, str(SOURCE)], check=True)
        result = subprocess.run(["java", "-cp", os.pathsep.join([classes, cp]), "DumpKafkaConfigs"],
                                check=True, capture_output=True, text=True)
    return json.loads(result.stdout)


def render(data: dict) -> str:
    return json.dumps(data, indent=1, sort_keys=False) + "\n"


def main(argv: list[str]) -> int:
    text = render(dump())
    if "--check" in argv:
        if OUTPUT.read_text() != text:
            print(f"{OUTPUT} is not what Kafka's ConfigDefs say: run tools/import_kafka_configs.py")
            return 1
        print(f"{OUTPUT.name} is current")
        return 0
    OUTPUT.write_text(text)
    print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
