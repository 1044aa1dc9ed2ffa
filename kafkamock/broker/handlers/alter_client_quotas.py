"""AlterClientQuotas (49): set or remove quota values per entity, each entry answered on its own (Kafka's
ClientQuotaControlManager): INVALID_REQUEST with Kafka's message for a bad entity, key or value; ``validate_only``
checks and changes nothing. kafkamock refuses the keys it does not enforce (see ``quotas.ENFORCED``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import AlterClientQuotasRequest, AlterClientQuotasResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 49


def _entity(components: list[AlterClientQuotasRequest.EntityData]) -> list[AlterClientQuotasResponse.EntityData]:
    return [AlterClientQuotasResponse.EntityData(entity_type=c.entity_type, entity_name=c.entity_name)
            for c in components]


def handle(cluster: Cluster, request: Request[AlterClientQuotasRequest]) -> AlterClientQuotasResponse:
    body = request.body
    cluster.auth.require(request, AclOperation.ALTER_CONFIGS, ResourceType.CLUSTER)      # as Kafka's KafkaApis
    results = cluster.quotas.alter(body.entries, body.validate_only)
    return AlterClientQuotasResponse(throttle_time_ms=0, entries=[
        AlterClientQuotasResponse.EntryData(error_code=code, error_message=message, entity=_entity(entity))
        for entity, code, message in results])


def error_response(cluster: Cluster, request: Request[AlterClientQuotasRequest], code: ErrorCode,
                   message: str | None = None) -> AlterClientQuotasResponse:
    return AlterClientQuotasResponse(throttle_time_ms=0, entries=[
        AlterClientQuotasResponse.EntryData(error_code=code, error_message=None, entity=_entity(e.entity))
        for e in request.body.entries])


HANDLER = ApiHandler(API_KEY, handle, error_response)
