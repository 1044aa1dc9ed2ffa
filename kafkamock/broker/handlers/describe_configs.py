"""DescribeConfigs (32): the configs of TOPIC (2), BROKER (4) and GROUP (32) resources, with where each value comes
from.

As Kafka's ConfigHelper answers:

- TOPIC "<name>": every topic config with its effective value. ``config_source`` is the first of its synonyms —
  the topic's own value (DYNAMIC_TOPIC_CONFIG 1), then its broker synonym (``retention.ms`` ->
  ``log.retention.ms``) set dynamically for this broker (DYNAMIC_BROKER_CONFIG 2), as the cluster default
  (DYNAMIC_DEFAULT_BROKER_CONFIG 3), statically (STATIC_BROKER_CONFIG 4), or its default (DEFAULT_CONFIG 5); a
  config with no synonym and no topic value is DEFAULT_CONFIG. Synonyms before the first one named as the
  topic config's broker synonym are left out, as Kafka does: ``retention.ms`` lists ``log.retention.ms`` and
  after it ``log.retention.minutes``/``hours`` (its fallbacks), so with only ``log.retention.hours`` set (or at
  its default) it has no synonym, DEFAULT_CONFIG, and the value derived from the hours. An illegal name is
  INVALID_TOPIC_EXCEPTION, an unknown topic UNKNOWN_TOPIC_OR_PARTITION.
- BROKER "<the id of the node asked>": every broker config with its own value (null for ``log.retention.ms``,
  ``log.roll.ms``, ``log.roll.jitter.ms`` and ``log.flush.interval.ms`` when unset: they have no default), its
  synonyms being the levels that set it or its fallbacks (the per-broker level is that node's own); ``node.id``
  is the id of the node asked.
  BROKER "": only the configs set as the dynamic cluster default. Another id, or a name that is not a number:
  INVALID_REQUEST.
- GROUP "<group id>": every group config, DYNAMIC_GROUP_CONFIG (8) where the group sets it, else DEFAULT_CONFIG
  with its broker synonym's value; "" is INVALID_REQUEST.
- ``configuration_keys`` (null or empty: all) filters the configs; names it lists that do not exist are left out.
- ``synonyms`` only when ``include_synonyms``; ``documentation`` is always null here; ``config_type`` is Kafka's
  ConfigType id (v3+). Sensitive values are null. ``read_only`` is true only for broker configs that cannot
  change at runtime here.
- A resource type Kafka does not know fails the whole request: every resource gets INVALID_REQUEST.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kafkamock.broker.acls import AclOperation
from kafkamock.broker.cluster import validate_topic_name
from kafkamock.broker.config import (
    BROKER_CONFIGS,
    CONFIG_SOURCE_IDS,
    CONFIG_TYPE_IDS,
    TOPIC_CONFIGS,
    BrokerConfig,
    ConfigDef,
    format_value,
    read_only,
    topic_config_synonyms,
    topic_config_value,
)
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.groups.group_configs import GROUP_CONFIGS
from kafkamock.broker.handlers.alter_configs import (
    BROKER,
    GROUP,
    RESOURCE_TYPES,
    TOPIC,
    authorize_config,
    check_broker_name,
)
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import DescribeConfigsRequest, DescribeConfigsResponse
from kafkamock.errors import default_message

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request
    from kafkamock.broker.node import Node

API_KEY = 32
INVALID_REQUEST_MESSAGE = default_message(ErrorCode.INVALID_REQUEST)
Synonym = tuple[str, Any, str]
"""(config name, value, source), as ``BrokerConfig.synonyms`` lists them."""
ConfigResult = DescribeConfigsResponse.DescribeConfigsResourceResult


def _entry(name: str, value: Any, definition: ConfigDef, synonyms: list[Synonym],
           include_synonyms: bool, read_only: bool, known: bool = True) -> ConfigResult:
    # A broker config Kafka does not define (kafkamock's own, set on this broker) is described as Kafka describes
    # an unknown property it was given: type UNKNOWN, and so (KafkaConfig.maybeSensitive) sensitive, value hidden.
    type_ = definition.type if known else "UNKNOWN"
    sensitive = type_ in ("PASSWORD", "UNKNOWN") or definition.sensitive

    def shown(v: Any) -> str | None:
        return None if sensitive or v is None else format_value(v, definition.type)

    return ConfigResult(
        name=name, value=shown(value), read_only=read_only,
        config_source=CONFIG_SOURCE_IDS[synonyms[0][2] if synonyms else "DEFAULT_CONFIG"],
        is_sensitive=sensitive,
        synonyms=[DescribeConfigsResponse.DescribeConfigsSynonym(name=n, value=shown(v), source=CONFIG_SOURCE_IDS[s])
                  for n, v, s in synonyms] if include_synonyms else [],
        config_type=CONFIG_TYPE_IDS[type_], documentation=None,
    )


def _topic_configs(cluster: Cluster, request: Request[DescribeConfigsRequest], name: str, include_synonyms: bool
                   ) -> list[tuple[str, ConfigResult]]:
    validate_topic_name(name)
    topic = cluster.metadata.topics.get(name)
    if topic is None:
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "")
    out = []
    for config_name, definition in TOPIC_CONFIGS.items():
        if definition.kafka is not None and definition.kafka.internal and config_name not in topic.configs:
            continue
        synonyms = topic_config_synonyms(config_name, topic.configs, request.arrived_on.config)
        value, _ = topic_config_value(config_name, topic.configs, request.arrived_on.config)
        out.append((config_name, _entry(config_name, value, definition, synonyms, include_synonyms, False)))
    return out


def _broker_configs(cluster: Cluster, request: Request[DescribeConfigsRequest], name: str, include_synonyms: bool
                    ) -> list[tuple[str, ConfigResult]]:
    cluster_default = check_broker_name(cluster, request, name, describe=True)
    node = request.arrived_on
    config = node.config
    out = []
    for config_name, definition in BROKER_CONFIGS.items():
        # Kafka lists its public configs, and any other property the broker was given (ConfigHelperUtils).
        given = config_name in config.static or config_name in config.dynamic
        if (definition.kafka is None or definition.kafka.internal) and not given:
            continue
        synonyms = config.synonyms(config_name)
        value = config.values[config_name]      # its own value: None for a derived config left unset
        if cluster_default:
            # The "" resource shows only the dynamic cluster defaults, and only that level as synonyms.
            if config_name not in config.dynamic_default:
                continue
            synonyms = [s for s in synonyms if s[2] == "DYNAMIC_DEFAULT_BROKER_CONFIG"]
            value = config.dynamic_default[config_name]
        elif config_name in _NODE_SET:
            value, synonyms = _NODE_SET[config_name](node, config, synonyms)
        out.append((config_name, _entry(config_name, value, definition, synonyms, include_synonyms,
                                        read_only(config_name), known=definition.kafka is not None)))
    return out


def _node_id(node: Node, config: BrokerConfig, synonyms: list[Synonym]) -> tuple[Any, list[Synonym]]:
    """Every node has its node.id set (node k of a cluster is node.id + k - 1), as a Kafka node's properties must."""
    return node.node_id, [("node.id", node.node_id, "STATIC_BROKER_CONFIG")]


def _broker_id(node: Node, config: BrokerConfig, synonyms: list[Synonym]) -> tuple[Any, list[Synonym]]:
    """KRaft's broker.id is the node.id, copied into the node's properties (AbstractKafkaConfig.populateSynonyms)."""
    return node.node_id, [("broker.id", node.node_id, "STATIC_BROKER_CONFIG"), ("broker.id", -1, "DEFAULT_CONFIG")]


def _listeners(node: Node, config: BrokerConfig, synonyms: list[Synonym]) -> tuple[Any, list[Synonym]]:
    """Without ``listeners``, a node listens where --host/--port put it: that is its configured listener."""
    if synonyms and synonyms[0][2] != "DEFAULT_CONFIG":
        return config.values["listeners"], synonyms
    value = f"PLAINTEXT://{node.host}:{node.port}"
    return value, [("listeners", value, "STATIC_BROKER_CONFIG"), *synonyms]


_NODE_SET: dict[str, Callable[[Node, BrokerConfig, list[Synonym]], tuple[Any, list[Synonym]]]] = {
    "node.id": _node_id, "broker.id": _broker_id, "listeners": _listeners}


def _group_configs(cluster: Cluster, name: str, include_synonyms: bool) -> list[tuple[str, ConfigResult]]:
    """A group's configs as Kafka's ConfigHelper shows them: set on the group (DYNAMIC_GROUP_CONFIG), else the
    default; synonyms the group's own value, then its broker synonym's levels (``groups/group_configs.py``)."""
    if not name:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Group name must not be empty")
    configs = cluster.groups.configs
    out = []
    for config_name, definition in GROUP_CONFIGS.items():
        value = configs.shown(name, config_name)
        synonyms = configs.synonyms(name, config_name)
        out.append((config_name, _entry(config_name, value, definition, synonyms, include_synonyms, False)))
    return out


def _describe(cluster: Cluster, request: Request[DescribeConfigsRequest],
              resource: DescribeConfigsRequest.DescribeConfigsResource, include_synonyms: bool
              ) -> DescribeConfigsResponse.DescribeConfigsResult:
    result = DescribeConfigsResponse.DescribeConfigsResult(
        error_code=ErrorCode.NONE, error_message="", resource_type=resource.resource_type,
        resource_name=resource.resource_name, configs=[])
    try:
        authorize_config(cluster, request, resource.resource_type, resource.resource_name,
                         AclOperation.DESCRIBE_CONFIGS)
        if resource.resource_type == TOPIC:
            configs = _topic_configs(cluster, request, resource.resource_name, include_synonyms)
        elif resource.resource_type == BROKER:
            configs = _broker_configs(cluster, request, resource.resource_name, include_synonyms)
        elif resource.resource_type == GROUP:
            configs = _group_configs(cluster, resource.resource_name, include_synonyms)
        else:
            raise KafkaError(ErrorCode.INVALID_REQUEST,
                             f"kafkamock does not support {RESOURCE_TYPES[resource.resource_type]} config resources")
    except KafkaError as exc:
        # Kafka leaves the message empty for an unknown topic and sets it for exceptions.
        result.error_code, result.error_message = exc.code, exc.message
        return result
    keys = resource.configuration_keys
    result.configs = [entry for name, entry in configs if not keys or name in keys]
    return result


def _failed(resource: DescribeConfigsRequest.DescribeConfigsResource, code: ErrorCode, message: str | None
            ) -> DescribeConfigsResponse.DescribeConfigsResult:
    return DescribeConfigsResponse.DescribeConfigsResult(
        error_code=code, error_message=message, resource_type=resource.resource_type,
        resource_name=resource.resource_name, configs=[])


def handle(cluster: Cluster, request: Request[DescribeConfigsRequest]) -> DescribeConfigsResponse:
    body, version = request.body, request.version
    include_synonyms = body.include_synonyms if version >= 1 else False
    if any(r.resource_type not in RESOURCE_TYPES for r in body.resources):
        return DescribeConfigsResponse(throttle_time_ms=0, results=[
            _failed(r, ErrorCode.INVALID_REQUEST, INVALID_REQUEST_MESSAGE) for r in body.resources])
    return DescribeConfigsResponse(throttle_time_ms=0, results=[_describe(cluster, request, r, include_synonyms)
                                                                for r in body.resources])


def error_response(cluster: Cluster, request: Request[DescribeConfigsRequest], code: ErrorCode,
                   message: str | None = None) -> DescribeConfigsResponse:
    """Kafka's DescribeConfigsRequest.getErrorResponse: every resource with the error and its message, the
    error's default text when there is none (ApiError.messageWithFallback)."""
    message = message or default_message(code)
    return DescribeConfigsResponse(throttle_time_ms=0, results=[_failed(r, code, message)
                                                                for r in request.body.resources])


HANDLER = ApiHandler(API_KEY, handle, error_response)
