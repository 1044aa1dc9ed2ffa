"""OffsetFetch (9): a group's committed offsets, v1-v10 (``groups/coordinator.py``).

v8+ asks for several groups at once, each with its own error; v9+ may name a KIP-848 member and its epoch
(STALE_MEMBER_EPOCH when behind); v10 names topics by id. A group with no offset answers -1 for each partition
asked (or no topic when all were asked), never an error, as Kafka does. ``RequireStable`` (v7+) matters once
transactional commits are pending (UNSTABLE_OFFSET_COMMIT). A group needs DESCRIBE (else
GROUP_AUTHORIZATION_FAILED for it) and offsets are shown only for topics with DESCRIBE: a topic asked for is
TOPIC_AUTHORIZATION_FAILED on its partitions, and one not asked for is left out, as Kafka's handleOffsetFetchRequest.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeVar

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import OffsetFetchRequest, OffsetFetchResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request
    from kafkamock.broker.groups.offsets import CommittedOffset

API_KEY = 9
# A partition's answer: OffsetFetchResponsePartition before v8, OffsetFetchResponsePartitions from v8 (the same
# fields, a struct of their own in each).
P = TypeVar("P", OffsetFetchResponse.OffsetFetchResponsePartition, OffsetFetchResponse.OffsetFetchResponsePartitions)
AskedTopic = OffsetFetchRequest.OffsetFetchRequestTopic | OffsetFetchRequest.OffsetFetchRequestTopics


def _partition(cls: type[P], index: int, committed: CommittedOffset | None, code: ErrorCode = ErrorCode.NONE) -> P:
    if committed is None:
        return cls(partition_index=index, committed_offset=-1, committed_leader_epoch=-1, metadata="", error_code=code)
    return cls(partition_index=index, committed_offset=committed.offset, committed_leader_epoch=committed.leader_epoch,
               metadata=committed.metadata, error_code=code)


def _fetch_group(cluster: Cluster, request: Request[OffsetFetchRequest], cls: type[P], group_id: str,
                 topics: Sequence[AskedTopic] | None, member_id: str | None, member_epoch: int, by_id: bool,
                 require_stable: bool = False) -> tuple[ErrorCode, list[tuple[str, uuid.UUID | None, list[P]]]]:
    """(error, [(topic name, topic id, partition answers)]) for one group: the id (not None) names the topic in the
    answer (v10, ``by_id``), else the name does. Before v8 ``topics`` are the request's OffsetFetchRequestTopic,
    the same without the topic id that only v10 reads."""
    if not cluster.auth.authorize(request, AclOperation.DESCRIBE, ResourceType.GROUP, group_id):
        return ErrorCode.GROUP_AUTHORIZATION_FAILED, []
    metadata = cluster.metadata
    denied: list[tuple[str, uuid.UUID | None, list[P]]] = []
    asked: list[tuple[str, list[int]]] | None = None
    unknown: list[tuple[str, uuid.UUID | None, list[P]]] = []
    names_to_ids: dict[str, uuid.UUID | None] = {}          # each topic asked for: its id when v10 names it by id
    if topics is not None:
        asked = []
        for t in topics:
            if by_id and isinstance(t, OffsetFetchRequest.OffsetFetchRequestTopics):
                topic = metadata.topics_by_id.get(t.topic_id)
                if topic is None:
                    unknown.append(("", t.topic_id, [_partition(cls, p, None, ErrorCode.UNKNOWN_TOPIC_ID)
                                                     for p in t.partition_indexes]))
                    continue
                names_to_ids[topic.name] = t.topic_id
                asked.append((topic.name, list(t.partition_indexes)))
            else:
                names_to_ids[t.name] = None
                asked.append((t.name, list(t.partition_indexes)))
        describable = cluster.auth.authorized(request, AclOperation.DESCRIBE, ResourceType.TOPIC, names_to_ids)
        denied = [(name, names_to_ids[name], [_partition(cls, p, None, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                                              for p in indexes])
                  for name, indexes in asked if name not in describable]
        asked = [(name, indexes) for name, indexes in asked if name in describable]
    try:
        cluster.groups.check_coordinator(request, group_id)
        found = cluster.groups.fetch_offsets(group_id, asked, member_id, member_epoch)
    except KafkaError as exc:
        return exc.code, []
    by_topic: dict[str, list[P]] = {}
    for name, index, committed in found:
        if require_stable and cluster.groups.has_pending_offset(group_id, name, index):
            by_topic.setdefault(name, []).append(_partition(cls, index, None, ErrorCode.UNSTABLE_OFFSET_COMMIT))
            continue
        by_topic.setdefault(name, []).append(_partition(cls, index, committed))
    answers: list[tuple[str, uuid.UUID | None, list[P]]] = []
    if topics is None:       # all of the group's topics: the ones the principal may not describe are left out
        describable = cluster.auth.authorized(request, AclOperation.DESCRIBE, ResourceType.TOPIC, by_topic)
        by_topic = {name: parts for name, parts in by_topic.items() if name in describable}
    for name, partitions in by_topic.items():
        if name in names_to_ids:
            topic_id = names_to_ids[name]
        elif by_id:
            topic = metadata.topics.get(name)
            if topic is None:
                continue              # the topic is gone: v10 cannot name it
            topic_id = topic.topic_id
        else:
            topic_id = None
        answers.append((name, topic_id, partitions))
    return ErrorCode.NONE, answers + denied + unknown


def _group_topic(name: str, topic_id: uuid.UUID | None,
                 partitions: list[OffsetFetchResponse.OffsetFetchResponsePartitions]
                 ) -> OffsetFetchResponse.OffsetFetchResponseTopics:
    """A topic of a group's answer (v8+): by id in v10, else by name."""
    if topic_id is not None:
        return OffsetFetchResponse.OffsetFetchResponseTopics(topic_id=topic_id, partitions=partitions)
    return OffsetFetchResponse.OffsetFetchResponseTopics(name=name, partitions=partitions)


def handle(cluster: Cluster, request: Request[OffsetFetchRequest]) -> OffsetFetchResponse:
    body, version = request.body, request.version
    if version >= 8:
        groups = []
        for g in body.groups:
            code, found = _fetch_group(cluster, request, OffsetFetchResponse.OffsetFetchResponsePartitions, g.group_id,
                                       g.topics, g.member_id if version >= 9 else None,
                                       g.member_epoch if version >= 9 else -1, version >= 10, body.require_stable)
            groups.append(OffsetFetchResponse.OffsetFetchResponseGroup(
                group_id=g.group_id, topics=[_group_topic(*t) for t in found], error_code=code))
        return OffsetFetchResponse(throttle_time_ms=0, groups=groups)
    code, found_v0 = _fetch_group(cluster, request, OffsetFetchResponse.OffsetFetchResponsePartition, body.group_id,
                                  body.topics, None, -1, False, version >= 7 and body.require_stable)
    if version < 2 and code:            # no top-level error: each partition asked for carries it
        return OffsetFetchResponse(throttle_time_ms=0, topics=_v0_error_topics(body, code), error_code=ErrorCode.NONE)
    return OffsetFetchResponse(throttle_time_ms=0, topics=[
        OffsetFetchResponse.OffsetFetchResponseTopic(name=name, partitions=partitions)
        for name, _, partitions in found_v0], error_code=code)


def _v0_error_topics(body: OffsetFetchRequest, code: ErrorCode) -> list[OffsetFetchResponse.OffsetFetchResponseTopic]:
    return [OffsetFetchResponse.OffsetFetchResponseTopic(name=t.name, partitions=[
        _partition(OffsetFetchResponse.OffsetFetchResponsePartition, p, None, code) for p in t.partition_indexes])
        for t in body.topics or []]


def error_response(cluster: Cluster, request: Request[OffsetFetchRequest], code: ErrorCode,
                   message: str | None = None) -> OffsetFetchResponse:
    body, version = request.body, request.version
    if version >= 8:
        return OffsetFetchResponse(throttle_time_ms=0, groups=[
            OffsetFetchResponse.OffsetFetchResponseGroup(group_id=g.group_id, topics=[], error_code=code)
            for g in body.groups])
    if version < 2:
        return OffsetFetchResponse(throttle_time_ms=0, topics=_v0_error_topics(body, code))
    return OffsetFetchResponse(throttle_time_ms=0, topics=[], error_code=code)


HANDLER = ApiHandler(API_KEY, handle, error_response)
