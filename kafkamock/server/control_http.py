"""The control API over HTTP+JSON (``kafkamock serve --control-port P``), for tests written in any language.

A Starlette app served by hypercorn on the broker's own trio loop, so every call runs between requests, on the
same thread as the core. The routes map one to one onto ``kafkamock.broker.control.Control``; this part of the
contract is kept stable (more may be added)::

    GET    /v1/nodes                                   [{"node_id", "host", "port", "up", "rack"}]
    POST   /v1/nodes/{id}/stop | /start                the node, after the change
    POST   /v1/nodes/{id}/drop-connections             close every connection to that node
    POST   /v1/partitions/{topic}/{partition}/leader   {"node_id": N} -> the partition
    GET    /v1/partitions/{topic}/{partition}/batches[?from=&limit=]   stored batches (header fields, base64 data)
    POST   /v1/faults                                  {"api_key", "error_code", "count", optional "node_id",
                                                       "topic", "partition", "latency_ms", "close_connection"}
    GET    /v1/faults   DELETE /v1/faults
    GET    /v1/requests[?api_key=&node_id=]            the request log   DELETE /v1/requests
    GET    /v1/topics   GET /v1/topics/{name}          partitions with leaders, ISR and offsets
    GET    /v1/cluster

Errors are ``{"error": "..."}`` with a 4xx status.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import trio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from kafkamock.broker.control import Control, ControlError
from kafkamock.server.errors import ListenError, leaf, reason

log = logging.getLogger("kafkamock.control")
# A route's action: the request in, what to answer as JSON out.
Action = Callable[[Request], Awaitable[Any]]


def build_app(control: Control) -> Starlette:
    async def body(request: Request) -> dict:
        raw = await request.body()
        if not raw.strip():
            return {}
        try:
            value = json.loads(raw)
        except ValueError as exc:
            raise ControlError(f"the body is not JSON: {exc}") from None
        if not isinstance(value, dict):
            raise ControlError("the body must be a JSON object")
        return value

    def route(path: str, methods: list[str], action: Action, status: int = 200) -> Route:
        async def endpoint(request: Request) -> JSONResponse:
            try:
                result = await action(request)
            except ControlError as exc:
                return JSONResponse({"error": str(exc)}, status_code=exc.status)
            except TypeError as exc:   # an unknown or missing field for the model's method
                return JSONResponse({"error": f"bad request: {exc}"}, status_code=400)
            return JSONResponse(result, status_code=status)
        return Route(path, endpoint, methods=methods)

    async def push_fault(request: Request) -> Any:
        fields = await body(request)
        if "api_key" not in fields:
            raise ControlError("a fault needs api_key")
        allowed = {"api_key", "error_code", "count", "node_id", "topic", "partition", "latency_ms",
                   "close_connection"}
        unknown = sorted(set(fields) - allowed)
        if unknown:
            raise ControlError(f"unknown field(s) {unknown}; a fault takes {sorted(allowed)}")
        return control.push_fault(**fields)

    async def move_leader(request: Request) -> Any:
        fields = await body(request)
        if "node_id" not in fields:
            raise ControlError('expected {"node_id": N}')
        p = request.path_params
        return control.move_leader(p["topic"], p["partition"], fields["node_id"])

    def node(action: Callable[[str], object]) -> Action:
        async def run(request: Request) -> Any:
            return action(request.path_params["node_id"])
        return run

    def plain(action: Callable[[], object]) -> Action:
        async def run(request: Request) -> Any:
            return action()
        return run

    async def requests(request: Request) -> Any:
        q = request.query_params
        return control.requests(api_key=q.get("api_key"), node_id=q.get("node_id"))

    async def topic(request: Request) -> Any:
        return control.topic(request.path_params["name"])

    async def batches(request: Request) -> Any:
        p, q = request.path_params, request.query_params
        found = control.stored_batches(p["topic"], p["partition"], q.get("from"), q.get("limit", 1000))
        for entry in found:
            entry["data"] = base64.b64encode(entry["data"]).decode()
        return found

    async def create_topic(request: Request) -> Any:
        fields = await body(request)
        allowed = {"name", "partitions", "replication_factor", "configs"}
        unknown = sorted(set(fields) - allowed)
        if "name" not in fields or unknown:
            raise ControlError(f"a topic takes {sorted(allowed)} (name required)")
        return control.create_topic(**fields)

    async def produce(request: Request) -> Any:
        fields = await body(request)
        if not isinstance(fields.get("records"), list) or set(fields) - {"records", "partition"}:
            raise ControlError('expected {"records": [...], "partition": N (optional)}')
        records = [_record_from_json(r) if isinstance(r, dict) else r for r in fields["records"]]
        return control.produce(request.path_params["name"], records, fields.get("partition"))

    async def records(request: Request) -> Any:
        q = request.query_params
        found = control.records(request.path_params["name"], q.get("partition"), q.get("from", 0),
                                q.get("limit", 1000))
        return [json_record(r) for r in found]

    async def group(request: Request) -> Any:
        return control.group(request.path_params["group_id"])

    async def not_found(request: Request, exc: HTTPException) -> JSONResponse:
        return JSONResponse({"error": f"{exc.detail}: {request.method} {request.url.path}"},
                            status_code=exc.status_code)

    routes = [
        route("/v1/nodes", ["GET"], plain(control.nodes)),
        route("/v1/nodes/{node_id}/stop", ["POST"], node(control.stop_node)),
        route("/v1/nodes/{node_id}/start", ["POST"], node(control.start_node)),
        route("/v1/nodes/{node_id}/drop-connections", ["POST"], node(control.drop_connections)),
        route("/v1/partitions/{topic}/{partition}/leader", ["POST"], move_leader),
        route("/v1/partitions/{topic}/{partition}/batches", ["GET"], batches),
        route("/v1/faults", ["POST"], push_fault, status=201),
        route("/v1/faults", ["GET"], plain(control.faults)),
        route("/v1/faults", ["DELETE"], plain(control.clear_faults)),
        route("/v1/requests", ["GET"], requests),
        route("/v1/requests", ["DELETE"], plain(control.clear_requests)),
        route("/v1/topics", ["GET"], plain(control.topics)),
        route("/v1/topics", ["POST"], create_topic, status=201),
        route("/v1/topics/{name}/records", ["POST"], produce, status=201),
        route("/v1/topics/{name}/records", ["GET"], records),
        route("/v1/groups", ["GET"], plain(control.groups)),
        route("/v1/groups/{group_id}", ["GET"], group),
        route("/v1/topics/{name}", ["GET"], topic),
        route("/v1/cluster", ["GET"], plain(control.cluster)),
    ]
    return Starlette(routes=routes, exception_handlers={HTTPException: not_found})  # type: ignore[dict-item]


def json_record(record: dict) -> dict:
    """A decoded record for JSON: key, value and header values as text, or as ``<name>_base64`` where they are
    not UTF-8."""
    out = {k: record[k] for k in ("partition", "offset", "timestamp")}
    for name in ("key", "value"):
        out.update(_json_bytes(name, record[name]))
    out["headers"] = [dict(name=h, **_json_bytes("value", v)) for h, v in record["headers"]]
    return out


def _record_from_json(record: dict) -> dict:
    """A record to produce, from JSON: ``<name>_base64`` fields carry bytes (what ``json_record`` writes)."""
    out = {}
    for name, value in record.items():
        if name.endswith("_base64"):
            try:
                value = base64.b64decode(value, validate=True)
            except (ValueError, TypeError):
                raise ControlError(f"{name} is not base64") from None
            name = name.removesuffix("_base64")
        out[name] = value
    return out


def _json_bytes(name: str, value: bytes | None) -> dict:
    if value is None:
        return {name: None}
    try:
        return {name: value.decode()}
    except UnicodeDecodeError:
        return {f"{name}_base64": base64.b64encode(value).decode()}


async def serve_control(control: Control, host: str, port: int, *,
                        task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED) -> None:
    """Serve the control API until cancelled; reports ``http://host:port`` once listening."""
    from hypercorn.config import Config
    from hypercorn.trio import serve

    config = Config()
    config.bind = [f"{host}:{port}"]
    config.accesslog = None
    config.errorlog = logging.getLogger("kafkamock.control.http")
    config.graceful_timeout = 0
    async with trio.open_nursery() as nursery:
        app: Any = build_app(control)
        try:
            binds = await nursery.start(lambda task_status: serve(app, config, task_status=task_status))
        except (OSError, BaseExceptionGroup) as exc:
            cause = leaf(exc, (OSError,))
            if not isinstance(cause, OSError):
                raise
            raise ListenError(f"cannot serve the control API on {host}:{port}: {reason(cause)}", cause) from None
        url = binds[0] if binds else f"http://{host}:{port}"
        task_status.started(url)
