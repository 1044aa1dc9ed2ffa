"""CreateTopics (19): partitions, replication, manual assignments and configs; validate-only as Kafka does it.

As Kafka's controller (ReplicationControlManager.createTopic): a manual assignment needs NumPartitions and
ReplicationFactor at -1 (else INVALID_REQUEST), one entry per partition numbered 0..n-1 with no partition twice,
every replica list of registered, distinct nodes, all of the same length, not all stopped
(INVALID_REPLICA_ASSIGNMENT); the first replica that is up leads. Without one, -1 takes ``num.partitions`` /
``default.replication.factor``, 0 or below -1 is INVALID_PARTITIONS / INVALID_REPLICATION_FACTOR, and replicas are
placed round-robin over the nodes that are up (more replicas than nodes up: INVALID_REPLICATION_FACTOR).

Limits, as Kafka 4.x's controller sets them, decided before anything is allocated: more than 10,000 partitions in
the whole request (ReplicationControlManager.validateTotalNumberOfPartitions) fails every topic with
POLICY_VIOLATION "Excessively large number of partitions per request."; more than 10,000 metadata records (one
per topic, per partition and per config, ``MAX_RECORDS_PER_USER_OP``) fails every topic with POLICY_VIOLATION
"Unable to perform excessively large batch operation." and creates nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.config import (
    CONFIG_SOURCE_IDS,
    TOPIC_CONFIGS,
    ConfigError,
    format_value,
    parse_value,
    topic_config_value,
)
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import CreateTopicsRequest, CreateTopicsResponse

if TYPE_CHECKING:
    from kafkamock.broker.config import BrokerConfig
    from kafkamock.broker.core import Cluster, Request

API_KEY = 19
MAX_PARTITIONS_PER_BATCH = 10_000
MAX_RECORDS_PER_USER_OP = 10_000

Result = CreateTopicsResponse.CreatableTopicResult


def _configs(raw_configs: list[CreateTopicsRequest.CreatableTopicConfig]) -> dict[str, Any]:
    configs: dict[str, Any] = {}                # parsed config values, of each config's own type
    for c in raw_configs:
        definition = TOPIC_CONFIGS.get(c.name)
        if definition is None:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown topic config name: {c.name}")
        if c.value is None:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Null value not supported for topic configs: {c.name}")
        try:
            configs[c.name] = parse_value(definition, c.value)
        except ConfigError as exc:
            raise KafkaError(ErrorCode.INVALID_CONFIG, str(exc)) from None
    return configs


def _requested_partitions(topics: list[CreateTopicsRequest.CreatableTopic], default: int) -> int:
    """Kafka's upper bound of the partitions a request creates (a topic that fails later still counts)."""
    total = 0
    for t in topics:
        if t.assignments:
            total += len(t.assignments)
        elif t.num_partitions == -1:
            total += default
        elif t.num_partitions > 0:
            total += t.num_partitions
    return total


def _whole_request_error(topics: list[CreateTopicsRequest.CreatableTopic], message: str) -> CreateTopicsResponse:
    return CreateTopicsResponse(throttle_time_ms=0, topics=[
        Result(name=t.name, error_code=ErrorCode.POLICY_VIOLATION, error_message=message, num_partitions=-1,
               replication_factor=-1, configs=[]) for t in topics])


def handle(cluster: Cluster, request: Request[CreateTopicsRequest]) -> CreateTopicsResponse:
    body = request.body
    config = cluster.node_config(request)
    if _requested_partitions(body.topics, config["num.partitions"]) > MAX_PARTITIONS_PER_BATCH:
        return _whole_request_error(body.topics, "Excessively large number of partitions per request.")
    validate_only = request.version >= 1 and body.validate_only
    results, records = _create(cluster, request, config, validate_only=True)
    if records > MAX_RECORDS_PER_USER_OP:
        return _whole_request_error(body.topics, "Unable to perform excessively large batch operation.")
    if validate_only:
        return CreateTopicsResponse(throttle_time_ms=0, topics=results)
    results, _ = _create(cluster, request, config, validate_only=False)
    return CreateTopicsResponse(throttle_time_ms=0, topics=results)


def _create(cluster: Cluster, request: Request[CreateTopicsRequest], config: BrokerConfig, *, validate_only: bool
            ) -> tuple[list[Result], int]:
    """One result per requested topic, and the metadata records the topics created make (one per topic, per
    partition and per config given); with ``validate_only`` nothing is created (or allocated)."""
    body = request.body
    names = [t.name for t in body.topics]
    # CREATE on the cluster creates any topic, else CREATE on each; the configs are shown with DESCRIBE_CONFIGS.
    creatable = set(names) if cluster.auth.authorize(request, AclOperation.CREATE, ResourceType.CLUSTER) else \
        cluster.auth.authorized(request, AclOperation.CREATE, ResourceType.TOPIC, names)
    describable = cluster.auth.authorized(request, AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, names)
    results: list[Result] = []
    records = 0
    answered: set[str] = set()
    plain: list[CreateTopicsResponse.CreatableTopicConfigs] | None = None
    for wanted in body.topics:
        if wanted.name in answered:          # Kafka answers a name given twice once (its results are keyed by name)
            continue
        answered.add(wanted.name)
        result = Result(name=wanted.name, error_code=ErrorCode.NONE, error_message=None, num_partitions=-1,
                        replication_factor=-1, configs=[])
        try:
            if names.count(wanted.name) > 1:
                raise KafkaError(ErrorCode.INVALID_REQUEST, "Duplicate topic name.")
            if wanted.name not in creatable:
                raise KafkaError(ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Authorization failed.")
            configs = _configs(wanted.configs)
            assignments = None
            if wanted.assignments:
                if wanted.replication_factor != -1:
                    raise KafkaError(ErrorCode.INVALID_REQUEST, "A manual partition assignment was specified, but "
                                                                "replication factor was not set to -1.")
                if wanted.num_partitions != -1:
                    raise KafkaError(ErrorCode.INVALID_REQUEST, "A manual partition assignment was specified, but "
                                                                "numPartitions was not set to -1.")
                by_index: dict[int, list[int]] = {}
                first_rf = None
                for a in wanted.assignments:
                    if a.partition_index in by_index:
                        raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, "Found multiple manual partition "
                                         f"assignments for partition {a.partition_index}")
                    cluster.metadata.check_assignment(list(a.broker_ids), first_rf)
                    first_rf = len(a.broker_ids)
                    by_index[a.partition_index] = list(a.broker_ids)
                if sorted(by_index) != list(range(len(by_index))):
                    raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                     "partitions should be a consecutive 0-based integer sequence")
                assignments = [by_index[i] for i in range(len(by_index))]
                count = len(assignments)
                rf = len(assignments[0])     # check_assignment saw to every list being as long
            else:
                if wanted.replication_factor < -1 or wanted.replication_factor == 0:
                    raise KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, "Replication factor must be larger "
                                                                           "than 0, or -1 to use the default value.")
                if wanted.num_partitions < -1 or wanted.num_partitions == 0:
                    raise KafkaError(ErrorCode.INVALID_PARTITIONS, "Number of partitions was set to an invalid "
                                                                   "non-positive value.")
                count = config["num.partitions"] if wanted.num_partitions == -1 else wanted.num_partitions
                rf = config["default.replication.factor"] if wanted.replication_factor == -1 \
                    else wanted.replication_factor
            topic = cluster.metadata.create_topic(wanted.name, count, rf or 1, configs, assignments=assignments,
                                                validate_only=validate_only)
            if topic.configs:
                shown = _shown_configs(topic.configs, config)
            else:                            # the same list for every topic without configs of its own
                shown = plain = plain if plain is not None else _shown_configs({}, config)
            result.topic_id, result.num_partitions, result.replication_factor = topic.topic_id, count, rf
            result.configs = shown
            records += 1 + count + len(configs)
            if wanted.name not in describable:
                result.configs, result.topic_config_error_code = None, ErrorCode.TOPIC_AUTHORIZATION_FAILED
        except KafkaError as exc:
            result.error_code, result.error_message = exc.code, exc.message
        results.append(result)
    return results, records


def _shown_configs(overrides: Mapping[str, Any], config: BrokerConfig
                   ) -> list[CreateTopicsResponse.CreatableTopicConfigs]:
    """A created topic's configs as the answer shows them: every topic config with its value and source, the
    internal ones only when the topic sets them."""
    return [
        CreateTopicsResponse.CreatableTopicConfigs(
            name=name, value=format_value(value, definition.type), read_only=False,
            config_source=CONFIG_SOURCE_IDS[source], is_sensitive=False)
        for name, definition in TOPIC_CONFIGS.items()
        if not (definition.kafka is not None and definition.kafka.internal and name not in overrides)
        for value, source in [topic_config_value(name, overrides, config)]
    ]


def error_response(cluster: Cluster, request: Request[CreateTopicsRequest], code: ErrorCode,
                   message: str | None = None) -> CreateTopicsResponse:
    return CreateTopicsResponse(throttle_time_ms=0, topics=[
        Result(name=t.name, error_code=code, error_message=None, num_partitions=-1, replication_factor=-1, configs=[])
        for t in request.body.topics])


HANDLER = ApiHandler(API_KEY, handle, error_response)
