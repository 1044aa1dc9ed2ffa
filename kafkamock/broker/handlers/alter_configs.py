"""AlterConfigs (33): replace the whole set of dynamic configs of a TOPIC (2), BROKER (4) or GROUP (32) resource.

Configs left out of the request are removed, so the topic (or broker) falls back to the next level: for a topic,
its broker synonym, then the default. IncrementalAlterConfigs (``incremental_alter_configs.py``) shares this
module's resource checks and ``apply``.

Checks, in Kafka's order (ConfigAdminManager.preprocess on the broker, then the controller's
ConfigurationControlManager and ControllerConfigurationValidator), each failing only its own resource:

- a resource named twice: INVALID_REQUEST for each ("Each resource must appear at most once.");
- a config named twice: INVALID_REQUEST; a null value: INVALID_REQUEST ("Null value not supported for : x");
- resource types other than TOPIC, BROKER and GROUP: INVALID_REQUEST;
- GROUP: "" is INVALID_REQUEST; an unknown group config, a refused value or one outside the broker's min/max
  bounds is INVALID_CONFIG (``groups/group_configs.py``); the group need not exist;
- BROKER: the name is "" (the cluster-wide default, DYNAMIC_DEFAULT_BROKER_CONFIG) or this broker's node id
  (DYNAMIC_BROKER_CONFIG), else INVALID_REQUEST; a value its definition refuses is INVALID_REQUEST too, as Kafka
  answers broker configs (KAFKA-13609);
- TOPIC: "" is INVALID_REQUEST, an illegal name INVALID_TOPIC_EXCEPTION; an unknown config or a refused value is
  INVALID_CONFIG; then an unknown topic is UNKNOWN_TOPIC_OR_PARTITION.

kafkamock departs from Kafka in two places: an unknown broker config name is INVALID_CONFIG (Kafka stores it),
and most broker configs can be changed at runtime (Kafka refuses its static-only ones), since kafkamock's configs
are meant to be settable through the admin APIs; the few that cannot (``node.id``, ``log.dirs``...) are refused.
``validate_only`` changes nothing.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from kafkamock.broker.acls import CLUSTER_NAME, AclOperation, ResourceType
from kafkamock.broker.cluster import Topic, validate_topic_name
from kafkamock.broker.config import (
    BROKER_CONFIGS,
    TOPIC_CONFIGS,
    ConfigDef,
    ConfigError,
    check_limit,
    config_definition,
    cross_config_error,
    dynamic_names_error,
    dynamic_update_error,
    parse_value,
)
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.groups.group_configs import GROUP_CONFIGS
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import (
    AlterConfigsRequest,
    AlterConfigsResponse,
    DescribeConfigsRequest,
    IncrementalAlterConfigsRequest,
)

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

    # a request of the config APIs, which share this module's checks
    ConfigRequest: TypeAlias = (Request[AlterConfigsRequest] | Request[IncrementalAlterConfigsRequest]
                                | Request[DescribeConfigsRequest])

API_KEY = 33
TOPIC, BROKER, GROUP = 2, 4, 32
RESOURCE_TYPES = {2: "TOPIC", 4: "BROKER", 8: "BROKER_LOGGER", 16: "CLIENT_METRICS", 32: "GROUP"}

# A config entry of AlterConfigs or IncrementalAlterConfigs (the checks both make take either).
ConfigEntry = TypeVar("ConfigEntry", AlterConfigsRequest.AlterableConfig,
                      IncrementalAlterConfigsRequest.AlterableConfig)


@dataclass
class Resource:
    """A config resource resolved against the cluster: where its dynamic configs live."""

    type: int
    name: str
    topic: Topic | None = None          # TOPIC: None when the topic does not exist (reported after validation)
    cluster_default: bool = False       # BROKER "": the cluster-wide default level
    current: dict[str, Any] = field(default_factory=dict)  # its dynamic configs now (parsed values)

    @property
    def definitions(self) -> dict[str, ConfigDef]:
        return {TOPIC: TOPIC_CONFIGS, GROUP: GROUP_CONFIGS}.get(self.type, BROKER_CONFIGS)


def check_broker_name(cluster: Cluster, request: ConfigRequest, name: str, *, describe: bool = False) -> bool:
    """True for the cluster default (""), False for the id of the node the request arrived on (Kafka's admin client
    sends a broker's configs to that broker); INVALID_REQUEST for anything else."""
    if name == "":
        return True
    try:
        node_id = int(name)
    except ValueError:
        what = "Broker" if describe else "Node"
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"{what} id must be an integer, but it is: {name}") from None
    own = request.arrived_on.node_id
    if node_id != own:
        expected = f"{own} or empty string" if describe else f"{own}"
        raise KafkaError(ErrorCode.INVALID_REQUEST,
                         f"Unexpected broker id, expected {expected}, but received {name}")
    return False


# Which ACL resource guards a config resource, and the error when it refuses (Kafka's ConfigHelper and
# ControllerApis.authorizeAlterResource); the message is Kafka's default one for the error.
_GUARDS = {TOPIC: (ResourceType.TOPIC, ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed."),
           GROUP: (ResourceType.GROUP, ErrorCode.GROUP_AUTHORIZATION_FAILED, "Group authorization failed.")}
_CLUSTER_GUARD = (ResourceType.CLUSTER, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.")


def authorize_config(cluster: Cluster, request: ConfigRequest, resource_type: int, name: str, operation: AclOperation) -> None:
    """DESCRIBE_CONFIGS / ALTER_CONFIGS on the topic or group named, on the cluster for broker-wide resources."""
    acl_type, code, message = _GUARDS.get(resource_type, _CLUSTER_GUARD)
    if not cluster.auth.authorize(request, operation, acl_type, name if acl_type != ResourceType.CLUSTER else CLUSTER_NAME):
        raise KafkaError(code, message)


def resolve(cluster: Cluster, request: Request[AlterConfigsRequest] | Request[IncrementalAlterConfigsRequest],
            resource_type: int, name: str) -> Resource:
    """The resource a request names, or KafkaError (its existence, for topics, is checked by ``apply``)."""
    if resource_type == BROKER:
        cluster_default = check_broker_name(cluster, request, name)
        return Resource(BROKER, name, cluster_default=cluster_default,
                        current=request.arrived_on.config.dynamic_layer(cluster_default=cluster_default))
    if resource_type == TOPIC:
        if name == "":
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Default topic resources are not allowed.")
        validate_topic_name(name)
        topic = cluster.metadata.topics.get(name)
        return Resource(TOPIC, name, topic=topic, current=dict(topic.configs) if topic else {})
    if resource_type == GROUP:
        if not name:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Default group resources are not allowed.")
        return Resource(GROUP, name, current=cluster.groups.configs.of(name))
    if resource_type in RESOURCE_TYPES:
        raise KafkaError(ErrorCode.INVALID_REQUEST,
                         f"kafkamock does not support {RESOURCE_TYPES[resource_type]} config resources")
    raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unknown resource type {resource_type}")


def check_names(configs: Sequence[ConfigEntry], null_allowed: Callable[[ConfigEntry], bool] = lambda c: False
                ) -> None:
    """Kafka's first checks on a resource's config entries: no name twice, no null value where one is needed."""
    if any(n > 1 for n in Counter(c.name for c in configs).values()):
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")
    nulls = [c.name for c in configs if c.value is None and not null_allowed(c)]
    if nulls:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Null value not supported for : " + ", ".join(nulls))


def parse_all(resource: Resource, raw: dict[str, Any], cluster: Cluster) -> dict[str, Any]:
    """Parse and validate the resource's complete new set of dynamic configs (string or already-parsed values)."""
    if resource.type == GROUP:
        group_configs: dict[str, Any] = cluster.groups.configs.parse(raw)
        return group_configs
    parsed: dict[str, Any] = {}
    if resource.type == BROKER:
        error = dynamic_names_error(list(raw))
        if error is not None:
            raise KafkaError(ErrorCode.INVALID_REQUEST, error)
    for name, value in raw.items():
        definition = resource.definitions.get(name) if resource.type == TOPIC else config_definition(name)
        if definition is None:
            kind = "topic" if resource.type == TOPIC else "broker"
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown {kind} config name: {name}")
        try:
            parsed[name] = parse_value(definition, value, limits=resource.type != BROKER)
        except ConfigError as exc:
            code = ErrorCode.INVALID_CONFIG if resource.type == TOPIC else ErrorCode.INVALID_REQUEST
            raise KafkaError(code, str(exc)) from None
    if resource.type == BROKER:
        error = (dynamic_update_error(list(raw), cluster_default=resource.cluster_default)
                 or ip_overrides_error(parsed) or cross_config_error(parsed, cluster.config))
        if error is not None:
            raise KafkaError(ErrorCode.INVALID_REQUEST, error)
        elr_error = min_isr_error(resource, parsed)
        if elr_error is not None:
            raise KafkaError(ErrorCode.INVALID_CONFIG, elr_error)
        try:                                  # what kafkamock cannot serve, after every check Kafka makes
            for name, value in parsed.items():
                definition = config_definition(name)
                if definition is not None:
                    check_limit(definition, value)
        except ConfigError as exc:
            raise KafkaError(ErrorCode.INVALID_REQUEST, str(exc)) from None
    return parsed


def ip_overrides_error(parsed: dict[str, Any]) -> str | None:
    """``max.connections.per.ip.overrides`` read as Kafka reads it (Csv.parseCsvMap: each entry split at its last
    colon), with the Java message a malformed entry gets."""
    value = parsed.get("max.connections.per.ip.overrides")
    if not value:
        return None
    for entry in re.split(r"\s*,\s*", str(value)):
        if ":" not in entry:
            return (f"Error parsing configuration property 'max.connections.per.ip.overrides': "
                    f"begin 0, end -1, length {len(entry)}")
        count = entry.rsplit(":", 1)[1].strip()
        if not re.fullmatch(r"[+-]?[0-9]+", count):
            return f'For input string: "{count}"'
    return None


def min_isr_error(resource: Resource, parsed: dict[str, Any]) -> str | None:
    """With eligible leader replicas on (Kafka 4.3's default), min.insync.replicas lives at the cluster level only:
    a node may not set it and the cluster value may not be removed (ConfigurationControlManager)."""
    if not resource.cluster_default and "min.insync.replicas" in parsed \
            and parsed["min.insync.replicas"] != resource.current.get("min.insync.replicas"):
        return "Broker-level min.insync.replicas cannot be altered while ELR is enabled."
    if resource.cluster_default and "min.insync.replicas" in resource.current and "min.insync.replicas" not in parsed:
        return "Cluster-level min.insync.replicas cannot be removed while ELR is enabled."
    return None


def apply(cluster: Cluster, request: Request[AlterConfigsRequest] | Request[IncrementalAlterConfigsRequest],
          resource: Resource, new_configs: dict[str, Any], validate_only: bool
          ) -> None:
    """Install ``new_configs`` (parsed) as the resource's complete set of dynamic configs (every log and timer
    takes the new values at once)."""
    if resource.type == TOPIC:
        if resource.topic is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{resource.name}' does not exist.")
        if not validate_only:
            resource.topic.configs.clear()
            resource.topic.configs.update(new_configs)
            cluster.configs_changed()
    elif resource.type == GROUP:
        if not validate_only:
            cluster.groups.configs.set(resource.name, new_configs)
            cluster.metadata_changed()
    elif not validate_only:
        request.arrived_on.config.replace_dynamic(new_configs, cluster_default=resource.cluster_default)
        cluster.configs_changed()


def duplicate_resources(resources: Iterable[AlterConfigsRequest.AlterConfigsResource
                                            | IncrementalAlterConfigsRequest.AlterConfigsResource]
                        ) -> set[tuple[int, str]]:
    counts = Counter((r.resource_type, r.resource_name) for r in resources)
    return {key for key, n in counts.items() if n > 1}


def response(resource_type: int, name: str, code: ErrorCode = ErrorCode.NONE, message: str | None = None
             ) -> AlterConfigsResponse.AlterConfigsResourceResponse:
    return AlterConfigsResponse.AlterConfigsResourceResponse(error_code=code, error_message=message,
                                                             resource_type=resource_type, resource_name=name)


def handle(cluster: Cluster, request: Request[AlterConfigsRequest]) -> AlterConfigsResponse:
    body = request.body
    duplicates = duplicate_resources(body.resources)
    responses = []
    for r in body.resources:
        try:
            if (r.resource_type, r.resource_name) in duplicates:
                raise KafkaError(ErrorCode.INVALID_REQUEST, "Each resource must appear at most once.")
            authorize_config(cluster, request, r.resource_type, r.resource_name, AclOperation.ALTER_CONFIGS)
            check_names(r.configs)
            resource = resolve(cluster, request, r.resource_type, r.resource_name)
            new_configs = parse_all(resource, {c.name: c.value for c in r.configs}, cluster)
            apply(cluster, request, resource, new_configs, body.validate_only)
            responses.append(response(r.resource_type, r.resource_name))
        except KafkaError as exc:
            responses.append(response(r.resource_type, r.resource_name, exc.code, exc.message))
    return AlterConfigsResponse(throttle_time_ms=0, responses=responses)


def error_response(cluster: Cluster, request: Request[AlterConfigsRequest], code: ErrorCode,
                   message: str | None = None) -> AlterConfigsResponse:
    return AlterConfigsResponse(throttle_time_ms=0, responses=[response(r.resource_type, r.resource_name, code)
                                                               for r in request.body.resources])


HANDLER = ApiHandler(API_KEY, handle, error_response)
