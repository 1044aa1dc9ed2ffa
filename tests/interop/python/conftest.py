"""Fixtures for the real-client conformance tests (helpers live in client_support.py)."""

from __future__ import annotations

import pytest
from client_support import WireLog, WireRequest, WireResponse

from kafkamock.codec import DecodeError, UnsupportedVersionError
from kafkamock.server import connection


@pytest.fixture
def wire_log(monkeypatch) -> WireLog:
    """Record every request frame decoded and every response encoded by the broker's connections."""
    log = WireLog()
    decode = connection.read_request

    def recording_decode(frame, *args, **kwargs):
        try:
            header, body = decode(frame, *args, **kwargs)
        except UnsupportedVersionError as exc:
            client_id = exc.header.get("client_id") if isinstance(exc.header, dict) else None
            log.add_request(WireRequest(exc.api_key, exc.api_version, client_id, refused=str(exc)))
            raise
        except DecodeError as exc:
            log.add_request(WireRequest(None, None, None, refused=str(exc)))
            raise
        log.add_request(WireRequest(header.request_api_key, header.request_api_version, header.client_id, body))
        return header, body

    def recording(encode):
        def recording_encode(api_key, version, correlation_id, body, *args, **kwargs):
            log.add_response(WireResponse(api_key, version, correlation_id, body))
            return encode(api_key, version, correlation_id, body, *args, **kwargs)
        return recording_encode

    monkeypatch.setattr(connection, "read_request", recording_decode)
    # Responses go out through encode_response_parts (scatter-gather); encode_response answers refused versions.
    for name in ("encode_response", "encode_response_parts"):
        monkeypatch.setattr(connection, name, recording(getattr(connection, name)))
    return log

