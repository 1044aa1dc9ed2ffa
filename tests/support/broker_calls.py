"""Calling the broker core the way the server does, for tests without sockets."""

from __future__ import annotations

from kafkamock import codec
from kafkamock.broker import Broker, Pending, Request


def call(broker: Broker, api: str, version: int, body: dict):
    """Encode and decode the request (so every field is present), handle it, and prove the response encodes.

    Returns the decoded response, or what the core returned when there is nothing to encode (None for acks=0,
    a Pending for a long-poll fetch).
    """
    name = f"{api}Request"
    decoded = codec.decode(name, version, codec.encode(name, version, body))
    key = codec.default_registry().api_key(api)
    result = broker.handle(Request(key, version, 1, "test", decoded))
    if result is None or isinstance(result, Pending):
        return result
    return codec.decode(f"{api}Response", version, codec.encode(f"{api}Response", version, result))
