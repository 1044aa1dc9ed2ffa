"""Write the facts kafkamock takes from Apache Kafka 4.3.1 itself, read by small Java programs on the jars of
``make kafka`` (no documentation text is copied):

- kafkamock/broker/kafka_configs.json (tools/DumpKafkaConfigs.java): every broker, topic and group config's name,
  type, default (as DescribeConfigs writes it), validator (class, text, parameters), internal flag, how a broker
  config updates dynamically (read-only, per-broker, cluster-wide) and its synonyms, from Kafka's ConfigDefs;
- kafkamock/kafka_errors.json (tools/DumpKafkaErrors.java): every protocol error's code, name, default message
  and retriability, from Kafka's Errors.

    make kafka && .venv/bin/python tools/import_kafka_facts.py            # rewrite the files
    .venv/bin/python tools/import_kafka_facts.py --check                  # exit 1 if one is not current

tests/test_kafka_facts.py runs the check, so the files stay what Kafka 4.3.1 says.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# (Java program, the file it writes)
DUMPERS = [("DumpKafkaConfigs", REPO / "kafkamock" / "broker" / "kafka_configs.json"),
           ("DumpKafkaErrors", REPO / "kafkamock" / "kafka_errors.json")]
CLASSPATH = REPO / ".cache" / "kafka" / "jars" / "classpath.txt"


def dump(main: str) -> dict:
    """Compile and run one dumper against Kafka's jars; the parsed JSON."""
    if not CLASSPATH.exists():
        raise SystemExit(f"{CLASSPATH} is missing: run `make kafka` first")
    jars = [line for line in CLASSPATH.read_text().splitlines()[1:] if line]
    cp = os.pathsep.join(jars)
    with tempfile.TemporaryDirectory() as classes:
        subprocess.run(["javac", "-d", classes, "-cp", cp, str(REPO / "tools" / f"{main}.java")], check=True)
        result = subprocess.run(["java", "-cp", os.pathsep.join([classes, cp]), main],
                                check=True, capture_output=True, text=True)
    return json.loads(result.stdout)


def render(data: dict) -> str:
    return json.dumps(data, indent=1, sort_keys=False) + "\n"


def main(argv: list[str]) -> int:
    stale = 0
    for program, output in DUMPERS:
        text = render(dump(program))
        if "--check" in argv:
            if not output.exists() or output.read_text() != text:
                print(f"{output} is not what Kafka 4.3.1 says: run tools/import_kafka_facts.py")
                stale += 1
            else:
                print(f"{output.name} is current")
        else:
            output.write_text(text)
            print(f"wrote {output}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
