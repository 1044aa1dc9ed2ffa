"""Import message schemas from an Apache Kafka release into kafkamock's schemas/ directory.

Kafka publishes its protocol as JSON files (``common/message/*.json`` inside ``kafka-clients-<v>.jar``). This
tool keeps the protocol facts of the messages we ship (names, types, versions, tags, defaults, flags) and
drops Kafka's comments and ``about`` texts; the descriptions in schemas/ are written separately, in our words.

    python tools/import_kafka_schemas.py path/to/kafka-clients-4.3.0.jar schemas/
"""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

# Make the repository importable when run as a script.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kafkamock.schema.loader import strip_comments  # noqa: E402

APIS = """
Produce Fetch ListOffsets Metadata OffsetCommit OffsetFetch FindCoordinator JoinGroup Heartbeat LeaveGroup
SyncGroup DescribeGroups ListGroups SaslHandshake ApiVersions CreateTopics DeleteTopics DeleteRecords
InitProducerId OffsetForLeaderEpoch AddPartitionsToTxn AddOffsetsToTxn EndTxn WriteTxnMarkers TxnOffsetCommit
DescribeConfigs AlterConfigs SaslAuthenticate CreatePartitions DeleteGroups IncrementalAlterConfigs OffsetDelete
DescribeCluster DescribeProducers DescribeTransactions ListTransactions ConsumerGroupHeartbeat
ConsumerGroupDescribe DescribeTopicPartitions ShareGroupHeartbeat ShareGroupDescribe ShareFetch ShareAcknowledge
DescribeAcls CreateAcls DeleteAcls AlterReplicaLogDirs DescribeLogDirs ElectLeaders AlterPartitionReassignments
ListPartitionReassignments DescribeQuorum UpdateFeatures UnregisterBroker ListConfigResources AddRaftVoter RemoveRaftVoter
""".split()
EXTRA = ["RequestHeader", "ResponseHeader", "ConsumerProtocolSubscription", "ConsumerProtocolAssignment",
         "ControlRecordTypeSchema", "EndTxnMarker"]

# Header versions that differ from the default rule (flexible -> request header 2 / response header 1).
HEADER_VERSIONS = {"ApiVersionsResponse": {"0+": 0}}
# kafkamock's extension: removed versions still served with kafkamock.legacy.protocol.enable (magic 0/1 clients).
LEGACY_VERSIONS = {"ProduceRequest": "0-2", "ProduceResponse": "0-2", "FetchRequest": "0-3", "FetchResponse": "0-3"}

# Key order used when writing a schema back out.
MESSAGE_KEYS = ["apiKey", "type", "listeners", "name", "validVersions", "deprecatedVersions", "flexibleVersions",
                "latestVersionUnstable", "headerVersions", "legacyVersions", "fields", "commonStructs"]
FIELD_KEYS = ["name", "type", "versions", "nullableVersions", "flexibleVersions", "default", "ignorable", "mapKey",
              "entityType", "zeroCopy", "tag", "taggedVersions", "fields"]


def _fields(fields: list[dict], indent: str) -> list[str]:
    lines = []
    for i, field in enumerate(fields):
        comma = "," if i < len(fields) - 1 else ""
        scalars = ", ".join(f'"{k}": {json.dumps(field[k])}' for k in FIELD_KEYS if k in field and k != "fields")
        unknown = set(field) - set(FIELD_KEYS) - {"about"}
        if unknown:
            raise SystemExit(f"{field['name']}: unexpected keys {sorted(unknown)}")
        if "fields" in field:
            lines.append(f"{indent}{{ {scalars}, \"fields\": [")
            lines.extend(_fields(field["fields"], indent + "  "))
            lines.append(f"{indent}]}}{comma}")
        else:
            lines.append(f"{indent}{{ {scalars} }}{comma}")
    return lines


def render(spec: dict, source: str) -> str:
    lines = [f"// {spec['name']}: protocol definition from Apache Kafka {source} (Apache License 2.0).", "{"]
    keys = [k for k in MESSAGE_KEYS if k in spec]
    unknown = set(spec) - set(MESSAGE_KEYS) - {"about"}
    if unknown:
        raise SystemExit(f"{spec['name']}: unexpected keys {sorted(unknown)}")
    for j, key in enumerate(keys):
        comma = "," if j < len(keys) - 1 else ""
        if key == "fields":
            lines.append('  "fields": [')
            lines.extend(_fields(spec["fields"], "    "))
            lines.append(f"  ]{comma}")
        elif key == "commonStructs":
            lines.append('  "commonStructs": [')
            for i, struct in enumerate(spec["commonStructs"]):
                c = "," if i < len(spec["commonStructs"]) - 1 else ""
                lines.append(f'    {{ "name": {json.dumps(struct["name"])}, "versions": '
                             f'{json.dumps(struct["versions"])}, "fields": [')
                lines.extend(_fields(struct["fields"], "      "))
                lines.append(f"    ]}}{c}")
            lines.append(f"  ]{comma}")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(spec[key])}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(jar: str, out: str, source: str = "4.3.0") -> None:
    wanted = [f"{a}{kind}" for a in APIS for kind in ("Request", "Response")] + EXTRA
    out_dir = Path(out)
    with zipfile.ZipFile(jar) as z:
        for name in wanted:
            spec = json.loads(strip_comments(z.read(f"common/message/{name}.json").decode()))
            if name in HEADER_VERSIONS:
                spec["headerVersions"] = HEADER_VERSIONS[name]
            if name in LEGACY_VERSIONS:
                spec["legacyVersions"] = LEGACY_VERSIONS[name]
            (out_dir / f"{name}.json").write_text(render(spec, source))
    print(f"wrote {len(wanted)} schemas to {out_dir}")


if __name__ == "__main__":
    main(*sys.argv[1:])
