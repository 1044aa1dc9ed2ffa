"""IncrementalAlterConfigs (44): SET (0), DELETE (1), APPEND (2) and SUBTRACT (3) single configs of a TOPIC (2),
BROKER (4) or GROUP (32) resource, leaving the others as they are.

The resource checks and the install step are AlterConfigs' (``alter_configs.py``). Operations, as Kafka's
ConfigurationControlManager applies them: SET replaces the value; DELETE removes the dynamic value (deleting one
that is not set, or an unknown name, is a no-op); APPEND adds each comma-separated item not yet in the list and
SUBTRACT removes each, both starting from the current dynamic value or else the config's default, and both only
for LIST configs (else INVALID_CONFIG: "Can't APPEND to key x because its type is not LIST." for a topic, "Config
value append is not allowed for config key: x" for a broker). Only DELETE may carry a null value; an unknown
operation is INVALID_REQUEST. The resulting set is validated as a whole, then installed, unless ``validate_only``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation
from kafkamock.broker.config import format_value
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.alter_configs import (
    BROKER,
    Resource,
    apply,
    authorize_config,
    check_names,
    duplicate_resources,
    parse_all,
    resolve,
)
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 44
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
OPERATIONS = {SET: "SET", DELETE: "DELETE", APPEND: "APPEND", SUBTRACT: "SUBTRACT"}


def _list_items(value: str | None) -> list[str]:
    return [p for p in (value or "").split(",") if p]


def edit(resource: Resource, configs: list[IncrementalAlterConfigsRequest.AlterableConfig]) -> dict[str, str | None]:
    """The resource's new set of dynamic configs (raw strings) after applying ``configs`` in order."""
    values: dict[str, str | None] = {name: format_value(v) for name, v in resource.current.items()}
    for c in configs:
        op = c.config_operation
        if op not in OPERATIONS:
            # Kafka's OpType.forId throws for an unknown id, which surfaces as UNKNOWN_SERVER_ERROR without a
            # message.
            raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, None)
        if op == SET:
            values[c.name] = c.value
        elif op == DELETE:
            values.pop(c.name, None)
        else:
            definition = resource.definitions.get(c.name)
            if definition is None or definition.type != "LIST":
                if resource.type == BROKER and definition is None:
                    message = f"Unknown broker config name: {c.name}"
                elif resource.type == BROKER:  # checked on the broker, in its words
                    message = f"Config value {OPERATIONS[op].lower()} is not allowed for config key: {c.name}"
                else:                          # checked by the controller, for topics
                    message = f"Can't {OPERATIONS[op]} to key {c.name} because its type is not LIST."
                raise KafkaError(ErrorCode.INVALID_CONFIG, message)
            items = _list_items(values[c.name] if c.name in values else format_value(definition.default))
            assert c.value is not None      # check_names refused a null value for every operation but DELETE
            for item in c.value.split(","):
                if op == APPEND and item not in items:
                    items.append(item)
                elif op == SUBTRACT and item in items:
                    items.remove(item)
            values[c.name] = ",".join(items)
    return values


def response(resource_type: int, name: str, code: ErrorCode = ErrorCode.NONE, message: str | None = None
             ) -> IncrementalAlterConfigsResponse.AlterConfigsResourceResponse:
    return IncrementalAlterConfigsResponse.AlterConfigsResourceResponse(
        error_code=code, error_message=message, resource_type=resource_type, resource_name=name)


def handle(cluster: Cluster, request: Request[IncrementalAlterConfigsRequest]) -> IncrementalAlterConfigsResponse:
    body = request.body
    duplicates = duplicate_resources(body.resources)
    responses = []
    for r in body.resources:
        try:
            if (r.resource_type, r.resource_name) in duplicates:
                raise KafkaError(ErrorCode.INVALID_REQUEST, "Each resource must appear at most once.")
            authorize_config(cluster, request, r.resource_type, r.resource_name, AclOperation.ALTER_CONFIGS)
            check_names(r.configs, null_allowed=lambda c: c.config_operation == DELETE)
            resource = resolve(cluster, request, r.resource_type, r.resource_name)
            new_configs = parse_all(resource, edit(resource, r.configs), cluster)
            apply(cluster, request, resource, new_configs, body.validate_only)
            responses.append(response(r.resource_type, r.resource_name))
        except KafkaError as exc:
            responses.append(response(r.resource_type, r.resource_name, exc.code, exc.message))
    return IncrementalAlterConfigsResponse(throttle_time_ms=0, responses=responses)


def error_response(cluster: Cluster, request: Request[IncrementalAlterConfigsRequest], code: ErrorCode,
                   message: str | None = None) -> IncrementalAlterConfigsResponse:
    """IncrementalAlterConfigsRequest.getErrorResponse: every resource with the error (ApiError's message: none
    for UNKNOWN_SERVER_ERROR)."""
    return IncrementalAlterConfigsResponse(throttle_time_ms=0, responses=[
        response(r.resource_type, r.resource_name, code, message) for r in request.body.resources])


HANDLER = ApiHandler(API_KEY, handle, error_response)
