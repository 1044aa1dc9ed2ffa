"""ApiVersions (18): the versions this broker implements; v3+ also names the client software."""

from __future__ import annotations

import re

from kafkamock.broker.errors import ErrorCode

API_KEY = 18
_SOFTWARE = re.compile(r"^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$")


def supported(broker) -> list[dict]:
    return [{"api_key": key, "min_version": low, "max_version": high}
            for key, (low, high) in broker.advertised_versions().items()]


def handle(broker, request) -> dict:
    body = request.body
    error = ErrorCode.NONE
    if request.version >= 3:
        name, version = body.client_software_name, body.client_software_version
        if not _SOFTWARE.match(name or "") or not _SOFTWARE.match(version or ""):
            error = ErrorCode.INVALID_REQUEST
        else:
            request.connection.software_name, request.connection.software_version = name, version
    return {"error_code": error, "api_keys": supported(broker), "throttle_time_ms": 0}
