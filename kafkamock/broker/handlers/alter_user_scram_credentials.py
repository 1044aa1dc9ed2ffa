"""AlterUserScramCredentials (51): upsert or delete users' SCRAM credentials, with Kafka's ScramControlManager
checks: a user named twice in one request is DUPLICATE_RESOURCE, an empty name or too few/many iterations
UNACCEPTABLE_CREDENTIAL, an unknown mechanism UNSUPPORTED_SASL_MECHANISM, deleting a missing credential
RESOURCE_NOT_FOUND. The client sends the salted password; the broker keeps StoredKey and ServerKey only. All
accepted changes apply together and are persisted with the cluster metadata."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.broker.security.scram import (
    MECHANISMS,
    CredentialError,
    ScramCredential,
    check_name_and_mechanism,
    check_upsertion,
)
from kafkamock.codec.messages import AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 51
TWICE = "A user credential cannot be altered twice in the same request"
Result = AlterUserScramCredentialsResponse.AlterUserScramCredentialsResult


def handle(cluster: Cluster, request: Request[AlterUserScramCredentialsRequest]) -> AlterUserScramCredentialsResponse:
    body = request.body
    cluster.auth.require(request, AclOperation.ALTER, ResourceType.CLUSTER)       # as Kafka's KafkaApis
    store = cluster.scram_credentials
    errors: dict[str, tuple[ErrorCode, str]] = {}
    # user name -> the request's deletion / upsertion entry
    deletions: dict[str, AlterUserScramCredentialsRequest.ScramCredentialDeletion] = {}
    upsertions: dict[str, AlterUserScramCredentialsRequest.ScramCredentialUpsertion] = {}
    for deletion in body.deletions:
        name = deletion.name
        if name in errors:
            continue
        if deletions.pop(name, None) is not None:
            errors[name] = (ErrorCode.DUPLICATE_RESOURCE, TWICE)
            continue
        try:
            check_name_and_mechanism(name, deletion.mechanism)
            if store.get(name, MECHANISMS[deletion.mechanism]) is None:
                raise CredentialError(ErrorCode.RESOURCE_NOT_FOUND,
                                      "Attempt to delete a user credential that does not exist")
            deletions[name] = deletion
        except CredentialError as exc:
            errors[name] = (exc.code, exc.message)
    for upsertion in body.upsertions:
        name = upsertion.name
        if name in errors:
            continue
        if deletions.pop(name, None) is not None or upsertions.pop(name, None) is not None:
            errors[name] = (ErrorCode.DUPLICATE_RESOURCE, TWICE)
            continue
        try:
            check_upsertion(name, upsertion.mechanism, upsertion.iterations)
            upsertions[name] = upsertion
        except CredentialError as exc:
            errors[name] = (exc.code, exc.message)
    results: list[Result] = []
    for name, deletion in deletions.items():
        store.delete(name, MECHANISMS[deletion.mechanism])
        results.append(Result(user=name, error_code=ErrorCode.NONE, error_message=None))
    for name, upsertion in upsertions.items():
        mechanism = MECHANISMS[upsertion.mechanism]
        store.put(name, mechanism, ScramCredential.from_salted_password(
            mechanism, bytes(upsertion.salt), bytes(upsertion.salted_password), upsertion.iterations))
        results.append(Result(user=name, error_code=ErrorCode.NONE, error_message=None))
    for name, (code, message) in errors.items():
        results.append(Result(user=name, error_code=code, error_message=message))
    if deletions or upsertions:
        store.commit()
    return AlterUserScramCredentialsResponse(throttle_time_ms=0, results=results)


def error_response(cluster: Cluster, request: Request[AlterUserScramCredentialsRequest], code: ErrorCode,
                   message: str | None = None) -> AlterUserScramCredentialsResponse:
    """Every user the request names gets the error (Kafka's AlterUserScramCredentialsRequest.getErrorResponse)."""
    names = dict.fromkeys([d.name for d in request.body.deletions] + [u.name for u in request.body.upsertions])
    return AlterUserScramCredentialsResponse(throttle_time_ms=0, results=[
        Result(user=n, error_code=code, error_message=None) for n in names])


HANDLER = ApiHandler(API_KEY, handle, error_response)
