"""Every API's whole-request error answer (``Cluster.error_response``): what the core sends for a fault pushed by
the control API, a feature gate, and a response that cannot be serialized (UNKNOWN_SERVER_ERROR, as Kafka). It
must exist and encode for any request of every served API and version."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import values

from kafkamock import codec
from kafkamock.broker import Cluster, ConnectionInfo, Request, handlers
from kafkamock.broker.errors import ErrorCode

REGISTRY = codec.default_registry()
SERVED = sorted((key, v) for key in handlers.BY_KEY for v in REGISTRY.requests[key].valid_versions
                if key in codec.api_versions())


@pytest.mark.parametrize(("key", "version"), SERVED, ids=[f"{REGISTRY.requests[k].api_name}-v{v}" for k, v in SERVED])
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_request_has_an_error_answer_that_encodes(key, version, data):
    spec = REGISTRY.requests[key]
    body = codec.decode(spec.name, version, codec.encode(spec.name, version, data.draw(values(spec, version))))
    broker = Cluster()
    request = Request(key, version, 1, "test", body, connection=ConnectionInfo(1, peer="127.0.0.1:5"))
    answer = broker.unencodable(request)
    decoded = codec.decode(REGISTRY.responses[key].name, version,
                           codec.encode(REGISTRY.responses[key].name, version, answer))
    codes = {v for k, v in _walk(decoded) if k == "error_code"}
    assert codes <= {ErrorCode.NONE, ErrorCode.UNKNOWN_SERVER_ERROR}, codes     # (0: a field absent at this version)


def _walk(value, key=None):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _walk(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from _walk(v, key)
    else:
        yield key, value
