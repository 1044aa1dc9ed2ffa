"""RemoveRaftVoter (81): remove a controller from the KRaft voter set (KIP-853; Admin.removeRaftVoter).

Kafka's broker forwards it to the active controller (ControllerApis.handleRemoveRaftVoter, with ALTER on the
cluster), whose Raft client checks, in order (KafkaRaftClient.handleRemoveVoterRequest, RemoveVoterHandler): a
cluster id that is given must be the cluster's (INCONSISTENT_CLUSTER_ID); the voter needs an id of 0 or more and a
directory id (INVALID_REQUEST "Remove voter request didn't include a valid voter"); then a quorum at
``kraft.version`` 0 cannot change its voters: UNSUPPORTED_VERSION "Cluster doesn't support removing voter because
the kraft.version feature is 0". kafkamock's quorum is such a static quorum (``quorum.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.errors import ErrorCode
from kafkamock.broker.features import KRAFT_VERSION
from kafkamock.broker.handlers.add_raft_voter import voter_refusal
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import RemoveRaftVoterRequest, RemoveRaftVoterResponse
from kafkamock.errors import default_message

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 81


def answer(code: int, message: str | None) -> RemoveRaftVoterResponse:
    return RemoveRaftVoterResponse(throttle_time_ms=0, error_code=code, error_message=message)


def handle(cluster: Cluster, request: Request[RemoveRaftVoterRequest]) -> RemoveRaftVoterResponse:
    refused = voter_refusal(cluster, request, "Remove")
    if refused is not None:
        return answer(*refused)
    return answer(ErrorCode.UNSUPPORTED_VERSION, "Cluster doesn't support removing voter because the kraft.version "
                                                  f"feature is {cluster.features.level(KRAFT_VERSION)}")


def error_response(cluster: Cluster, request: Request[RemoveRaftVoterRequest], code: ErrorCode,
                   message: str | None = None) -> RemoveRaftVoterResponse:
    """Kafka's getErrorResponse: the error with its own message."""
    return answer(code, default_message(code))


HANDLER = ApiHandler(API_KEY, handle, error_response)
