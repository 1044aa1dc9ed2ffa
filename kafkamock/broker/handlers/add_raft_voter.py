"""AddRaftVoter (80): add a controller to the KRaft voter set (KIP-853; Admin.addRaftVoter).

Kafka's broker forwards it to the active controller (ControllerApis.handleAddRaftVoter, with ALTER on the
cluster), whose Raft client checks, in order (KafkaRaftClient.handleAddVoterRequest, AddVoterHandler): a cluster id
that is given must be the cluster's (INCONSISTENT_CLUSTER_ID); the voter needs an id of 0 or more and a directory id
(INVALID_REQUEST "Add voter request didn't include a valid voter"); its endpoints must include the controllers'
default listener (INVALID_REQUEST, naming the endpoints given); then a quorum at ``kraft.version`` 0 cannot change
its voters: UNSUPPORTED_VERSION "Cluster doesn't support adding voter because the kraft.version feature is 0".
kafkamock's quorum is such a static quorum (``quorum.py``), so that is where a well-formed request ends. The
default listener is the first of ``controller.listener.names``, else CONTROLLER (the reference cluster's name).
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation
from kafkamock.broker.errors import ErrorCode
from kafkamock.broker.features import KRAFT_VERSION
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.broker.java_hash_order import java_hash_order, java_string_hash
from kafkamock.codec.messages import AddRaftVoterRequest, AddRaftVoterResponse, RemoveRaftVoterRequest
from kafkamock.errors import default_message

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 80
ZERO_UUID = uuid.UUID(int=0)


def answer(code: ErrorCode, message: str | None) -> AddRaftVoterResponse:
    return AddRaftVoterResponse(throttle_time_ms=0, error_code=code, error_message=message)


def voter_refusal(cluster: Cluster, request: Request[AddRaftVoterRequest] | Request[RemoveRaftVoterRequest], verb: str
                  ) -> tuple[ErrorCode, str] | None:
    """The checks Add- and RemoveRaftVoter share, in Kafka's order: ALTER on the cluster; INCONSISTENT_CLUSTER_ID
    for a given cluster id that is not this cluster's; INVALID_REQUEST for a voter without an id of 0 or more and a
    directory id. The error and its message; None when the request passes them."""
    cluster.auth.require_cluster(request, AclOperation.ALTER)
    body = request.body
    if body.cluster_id is not None and body.cluster_id != cluster.metadata.cluster_id:
        return (ErrorCode.INCONSISTENT_CLUSTER_ID,
                f'The given id "{body.cluster_id}" doesn\'t match the cluster id "{cluster.metadata.cluster_id}"')
    if body.voter_id < 0 or body.voter_directory_id == ZERO_UUID:
        return ErrorCode.INVALID_REQUEST, f"{verb} voter request didn't include a valid voter"
    return None


def default_listener(cluster: Cluster) -> str:
    names = [n.strip() for n in str(cluster.config["controller.listener.names"] or "").split(",") if n.strip()]
    return (names[0] if names else "CONTROLLER").upper()


def _endpoints(listeners: list[AddRaftVoterRequest.Listener]) -> str:
    """Kafka's Endpoints.toString: a HashMap (sized for the listeners given) of listener names, upper-cased, to
    unresolved addresses."""
    found: dict[str, str] = {}
    for listener in listeners:
        host = f"[{listener.host}]" if ":" in listener.host else listener.host
        found[listener.name.upper()] = f"{host}/<unresolved>:{listener.port}"
    order = java_hash_order(found, java_string_hash, initial_capacity=len(listeners))
    entries = ", ".join(f"ListenerName({name})={found[name]}" for name in order)
    return f"Endpoints(endpoints={{{entries}}})"


def handle(cluster: Cluster, request: Request[AddRaftVoterRequest]) -> AddRaftVoterResponse:
    refused = voter_refusal(cluster, request, "Add")
    if refused is not None:
        return answer(*refused)
    body = request.body
    listener = default_listener(cluster)
    if listener not in {entry.name.upper() for entry in body.listeners}:
        return answer(ErrorCode.INVALID_REQUEST, f"Add voter request didn't include the endpoint "
                                                  f"({_endpoints(body.listeners)}) for the default listener "
                                                  f"ListenerName({listener})")
    return answer(ErrorCode.UNSUPPORTED_VERSION, "Cluster doesn't support adding voter because the kraft.version "
                                                  f"feature is {cluster.features.level(KRAFT_VERSION)}")


def error_response(cluster: Cluster, request: Request[AddRaftVoterRequest], code: ErrorCode,
                   message: str | None = None) -> AddRaftVoterResponse:
    """Kafka's getErrorResponse: the error with its own message."""
    return answer(code, default_message(code))


HANDLER = ApiHandler(API_KEY, handle, error_response)
