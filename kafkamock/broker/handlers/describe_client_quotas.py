"""DescribeClientQuotas (48): the quota entities a filter matches, as Kafka's broker answers from its metadata
image (ClientQuotasImage.describe): a bad filter is one top-level error with a message and no entries."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import DescribeClientQuotasRequest, DescribeClientQuotasResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 48


def handle(cluster: Cluster, request: Request[DescribeClientQuotasRequest]) -> DescribeClientQuotasResponse:
    body = request.body
    cluster.auth.require(request, AclOperation.DESCRIBE_CONFIGS, ResourceType.CLUSTER)   # as Kafka's KafkaApis
    try:
        matched = cluster.quotas.describe(body.components, body.strict)
    except KafkaError as exc:
        return DescribeClientQuotasResponse(throttle_time_ms=0, error_code=exc.code, error_message=exc.message,
                                            entries=None)
    entries = [DescribeClientQuotasResponse.EntryData(
        entity=[DescribeClientQuotasResponse.EntityData(entity_type=t, entity_name=n) for t, n in entity],
        values=[DescribeClientQuotasResponse.ValueData(key=k, value=v) for k, v in sorted(values.items())])
        for entity, values in matched]
    return DescribeClientQuotasResponse(throttle_time_ms=0, error_code=ErrorCode.NONE, error_message=None,
                                        entries=entries)


def error_response(cluster: Cluster, request: Request[DescribeClientQuotasRequest], code: ErrorCode,
                   message: str | None = None) -> DescribeClientQuotasResponse:
    return DescribeClientQuotasResponse(throttle_time_ms=0, error_code=code, error_message=None, entries=None)


HANDLER = ApiHandler(API_KEY, handle, error_response)
