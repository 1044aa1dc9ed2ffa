"""DescribeUserScramCredentials (50): which SCRAM mechanisms (and iteration counts) users have, as Kafka's
broker answers from its metadata image: every user when the list is null or empty; a user named twice is
DUPLICATE_RESOURCE, a user without credentials RESOURCE_NOT_FOUND."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.broker.security.scram import TYPES, ScramCredentials
from kafkamock.codec.messages import DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 50
Result = DescribeUserScramCredentialsResponse.DescribeUserScramCredentialsResult


def _infos(store: ScramCredentials, user: str) -> list[DescribeUserScramCredentialsResponse.CredentialInfo]:
    return [DescribeUserScramCredentialsResponse.CredentialInfo(mechanism=TYPES[m], iterations=c.iterations)
            for m, c in store.of_user(user).items()]


def handle(cluster: Cluster, request: Request[DescribeUserScramCredentialsRequest]
           ) -> DescribeUserScramCredentialsResponse:
    cluster.auth.require(request, AclOperation.DESCRIBE, ResourceType.CLUSTER)    # as Kafka's KafkaApis
    store = cluster.scram_credentials
    wanted = request.body.users
    results = []
    if not wanted:
        results = [Result(user=u, error_code=ErrorCode.NONE, error_message=None, credential_infos=_infos(store, u))
                   for u in store.users()]
    else:
        counts = Counter(u.name for u in wanted)
        for name in dict.fromkeys(u.name for u in wanted):
            if counts[name] > 1:
                results.append(Result(user=name, error_code=ErrorCode.DUPLICATE_RESOURCE, credential_infos=[],
                                      error_message="Cannot describe SCRAM credentials for the same user twice in a "
                                                    "single request"))
            elif not store.of_user(name):
                results.append(Result(user=name, error_code=ErrorCode.RESOURCE_NOT_FOUND, credential_infos=[],
                                      error_message="Attempt to describe a user credential that does not exist"))
            else:
                results.append(Result(user=name, error_code=ErrorCode.NONE, error_message=None,
                                      credential_infos=_infos(store, name)))
    return DescribeUserScramCredentialsResponse(throttle_time_ms=0, error_code=ErrorCode.NONE, error_message=None,
                                                results=results)


HANDLER = ApiHandler(API_KEY, handle)
