"""CreateTopics (19): partitions, replication, manual assignments and configs; validate-only as Kafka does it."""

from __future__ import annotations

from kafkamock.broker.config import (
    CONFIG_SOURCE_IDS,
    TOPIC_CONFIGS,
    ConfigError,
    format_value,
    parse_value,
    topic_config_value,
)
from kafkamock.broker.errors import ErrorCode, KafkaError

API_KEY = 19


def _configs(raw_configs) -> dict:
    configs = {}
    for c in raw_configs:
        definition = TOPIC_CONFIGS.get(c.name)
        if definition is None:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown topic config name: {c.name}")
        if c.value is None:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Null value not supported for topic config {c.name}")
        try:
            configs[c.name] = parse_value(definition, c.value)
        except ConfigError as exc:
            raise KafkaError(ErrorCode.INVALID_CONFIG, str(exc)) from None
    return configs


def handle(broker, request) -> dict:
    body = request.body
    names = [t.name for t in body.topics]
    results = []
    for wanted in body.topics:
        result = {"name": wanted.name, "error_code": ErrorCode.NONE, "error_message": None,
                  "num_partitions": -1, "replication_factor": -1, "configs": None}
        try:
            if names.count(wanted.name) > 1:
                raise KafkaError(ErrorCode.INVALID_REQUEST, "Create topics request from client contains duplicate "
                                                            f"topic name {wanted.name}")
            configs = _configs(wanted.configs)
            if wanted.assignments:
                if wanted.num_partitions != -1 or wanted.replication_factor != -1:
                    raise KafkaError(ErrorCode.INVALID_REQUEST, "Both numPartitions or replicationFactor and "
                                                                "replicasAssignments were set.")
                count = len(wanted.assignments)
                rf = len(wanted.assignments[0].broker_ids)
                known = {n.node_id for n in broker.cluster.nodes}
                for a in wanted.assignments:
                    if not a.broker_ids or any(b not in known for b in a.broker_ids) or \
                            len(set(a.broker_ids)) != len(a.broker_ids):
                        raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                         f"Invalid replica assignment {a.broker_ids} for partition {a.partition_index}")
            else:
                count = broker.config["num.partitions"] if wanted.num_partitions == -1 else wanted.num_partitions
                rf = broker.config["default.replication.factor"] if wanted.replication_factor == -1 \
                    else wanted.replication_factor
            topic = broker.cluster.create_topic(wanted.name, count, rf, configs,
                                                validate_only=request.version >= 1 and body.validate_only)
            result.update(topic_id=topic.topic_id, num_partitions=count, replication_factor=rf, configs=[
                {"name": name, "value": format_value(value), "read_only": False,
                 "config_source": CONFIG_SOURCE_IDS[source], "is_sensitive": False}
                for name in TOPIC_CONFIGS
                for value, source in [topic_config_value(name, topic.configs, broker.config)]
            ])
        except KafkaError as exc:
            result.update(error_code=exc.code, error_message=exc.message)
        results.append(result)
    return {"throttle_time_ms": 0, "topics": results}
