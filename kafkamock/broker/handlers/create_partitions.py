"""CreatePartitions (37): grow topics to a new partition count, optionally with manual replica assignments.

As Kafka's controller (ControllerApis.createPartitions, ReplicationControlManager.createPartitions): a topic named
twice gets one INVALID_REQUEST result; an unknown topic is UNKNOWN_TOPIC_OR_PARTITION; a count that is not an
increase is INVALID_PARTITIONS; assignments must give one replica list per new partition, of registered,
distinct brokers, as many as the topic's replication factor (else INVALID_REPLICA_ASSIGNMENT). ``validate_only``
checks everything and changes nothing. The first replica of a manual assignment leads the new partition.

Kafka's controller writes one record per new partition into a list bounded by ``MAX_RECORDS_PER_USER_OP``
(10,000) shared by the whole request; a topic whose partitions would pass it fails as the list's overflow fails in
Kafka 4.3 (not an ApiException: UNKNOWN_SERVER_ERROR without a message), decided from the count before anything is
placed or allocated (so 2^31 - 1 partitions cost nothing), and, unlike Kafka's half-filled list, that topic gets no
partition at all.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import CreatePartitionsRequest, CreatePartitionsResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 37
MAX_RECORDS_PER_USER_OP = 10_000
Result = CreatePartitionsResponse.CreatePartitionsTopicResult


def _grow(cluster: Cluster, wanted: CreatePartitionsRequest.CreatePartitionsTopic, validate_only: bool,
          budget: list[int]) -> None:
    topic = cluster.metadata.topics.get(wanted.name)
    if topic is None:
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    current = len(topic.partitions)
    if wanted.count == current:
        raise KafkaError(ErrorCode.INVALID_PARTITIONS, f"Topic already has {current} partition(s).")
    if wanted.count < current:
        raise KafkaError(ErrorCode.INVALID_PARTITIONS,
                         f"The topic {wanted.name} currently has {current} partition(s); {wanted.count} would not "
                         "be an increase.")
    additional = wanted.count - current
    assignments = None
    if wanted.assignments is not None:
        if len(wanted.assignments) != additional:
            raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                             f"Attempted to add {additional} additional partition(s), but only "
                             f"{len(wanted.assignments)} assignment(s) were specified.")
    if additional > budget[0]:
        budget[0] = 0
        raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR)
    if wanted.assignments is not None:
        replication_factor = len(topic.partitions[0].replicas)
        assignments = [list(a.broker_ids) for a in wanted.assignments]
        for replicas in assignments:
            cluster.metadata.check_assignment(replicas, replication_factor)
    cluster.metadata.add_partitions(topic, wanted.count, validate_only=validate_only, assignments=assignments)
    budget[0] -= additional


def handle(cluster: Cluster, request: Request[CreatePartitionsRequest]) -> CreatePartitionsResponse:
    body = request.body
    counts = Counter(t.name for t in body.topics)
    results = [Result(name=name, error_code=ErrorCode.INVALID_REQUEST, error_message="Duplicate topic name.")
               for name, n in counts.items() if n > 1]
    budget = [MAX_RECORDS_PER_USER_OP]
    alterable = cluster.auth.authorized(request, AclOperation.ALTER, ResourceType.TOPIC, counts)
    for wanted in body.topics:
        if counts[wanted.name] > 1:
            continue
        result = Result(name=wanted.name, error_code=ErrorCode.NONE, error_message=None)
        try:
            if wanted.name not in alterable:
                raise KafkaError(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
            _grow(cluster, wanted, body.validate_only, budget)
        except KafkaError as exc:
            result.error_code, result.error_message = exc.code, exc.message
        results.append(result)
    return CreatePartitionsResponse(throttle_time_ms=0, results=results)


def error_response(cluster: Cluster, request: Request[CreatePartitionsRequest], code: ErrorCode,
                   message: str | None = None) -> CreatePartitionsResponse:
    return CreatePartitionsResponse(throttle_time_ms=0, results=[
        Result(name=t.name, error_code=code, error_message=None) for t in request.body.topics])


HANDLER = ApiHandler(API_KEY, handle, error_response)
