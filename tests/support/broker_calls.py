"""Calling the broker core the way the server does, for tests without sockets."""

from __future__ import annotations

from kafkamock import codec
from kafkamock.broker import Close, Cluster, ConnectionInfo, Request, Respond, Wait


def call(broker: Cluster, api: str, version: int, body: dict, *, node_id: int | None = None,
         principal: str = "User:ANONYMOUS", host: str = "127.0.0.1", client_id: str = "test", conn_id: int = 1):
    """Encode and decode the request (so every field is present), handle it on node ``node_id`` (default: the
    first), on connection ``conn_id``, and prove the response encodes.

    Returns the decoded response; None for no response (acks=0); the ``Waiter`` of a request that waits (a
    long-poll fetch); the ``Close`` of a request that closes its connection.
    """
    name = f"{api}Request"
    decoded = codec.decode(name, version, codec.encode(name, version, body))
    key = codec.default_registry().api_key(api)
    node = broker.metadata.nodes[node_id] if node_id is not None else None
    outcome = broker.handle(Request(key, version, 1, client_id, decoded, node=node,
                                     connection=ConnectionInfo(conn_id, peer=f"{host}:50000", principal=principal)))
    if isinstance(outcome, Wait):
        return outcome.waiter
    if isinstance(outcome, Close):
        return outcome
    if not isinstance(outcome, Respond):
        return None
    return decode_response(api, version, outcome.body)


def decode_response(api: str, version: int, body):
    return codec.decode(f"{api}Response", version, codec.encode(f"{api}Response", version, body))
