"""The contract every API handler keeps, declared once: what it takes, what it gives back, how it refuses a request.

A handler module ends with ``HANDLER = ApiHandler(API_KEY, handle, ...)``; the broker's dispatch reads only that
declaration (``handlers.BY_KEY``), never the module's attributes or a function's signature.

- ``handle(cluster, request)``: the request (its decoded body, version, connection, and the node it arrived on, which
  the dispatch always sets) in; out a ``HandlerResult``: a response body, ``None`` for no response (acks=0), a
  ``Waiter`` (the request waits), or an ``Outcome`` (``Respond``, ``Wait``, ``Close``, ``NoResponse``).
- ``error_response(cluster, request, code, message)``: the whole request refused with one error (an authorization
  failure, a feature gate, a fault the control API pushed, a response that cannot be encoded). ``message`` goes
  where the response has room for it. Without one of its own, a handler answers with the response's top-level
  ErrorCode (``top_level_error``).
- ``partitioned``: a fault pushed for the whole request sets its error on every partition of the response (the
  handler answers partition by partition), rather than refusing it with ``error_response``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from kafkamock.broker.errors import ErrorCode
from kafkamock.broker.outcome import Outcome, Waiter
from kafkamock.codec.message import Struct
from kafkamock.codec.messages import STRUCTS

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

HandlerResult = Outcome | Waiter | Struct | None
"""A response body (an instance of the API's generated response class), no response (None), a wait, or an outcome:
``outcome.as_outcome`` makes it an ``Outcome``."""


class Handle(Protocol):
    def __call__(self, cluster: Cluster, request: Request, /) -> HandlerResult: ...


class ErrorResponse(Protocol):
    def __call__(self, cluster: Cluster, request: Request, code: ErrorCode, message: str | None = None, /
                 ) -> Struct: ...


def top_level_error(cluster: Cluster, request: Request, code: ErrorCode, message: str | None = None) -> Struct:
    """The response's top-level ErrorCode (and ErrorMessage, where the version has it), every other field at its
    default: the error answer of an API whose handler declares none."""
    spec = cluster.registry.responses[request.api_key]
    present = {f.name for f in spec.fields if f.present(request.version)}
    if "ErrorCode" not in present:
        raise ValueError(f"{spec.name} v{request.version} has no top-level ErrorCode")
    body = STRUCTS[spec.name, spec.name](error_code=code)
    if "ThrottleTimeMs" in present:
        body["throttle_time_ms"] = 0
    if message is not None and "ErrorMessage" in present:
        body["error_message"] = message
    return body


@dataclass(frozen=True, slots=True)
class ApiHandler:
    """One API's handler as its module declares it: ``HANDLER = ApiHandler(API_KEY, handle, ...)``."""

    api_key: int
    handle: Handle
    error_response: ErrorResponse = top_level_error
    partitioned: bool = False
