"""The connection edge's own work between a frame and the core: decoding the request and encoding the answer."""

from __future__ import annotations

import struct

from kafkamock.broker import Cluster, Request
from kafkamock.broker.features import SAFE_DOWNGRADE, FeatureUpdate
from kafkamock.codec import encode_request
from kafkamock.codec.framing import encode_response_parts
from kafkamock.server.connection import encode_answer, read_request

API_VERSIONS = 18


def _api_versions(cluster: Cluster, version: int, correlation_id: int) -> tuple[bytes, bytes]:
    """(the edge's frame, the codec's own encoding of the same answer) for one ApiVersions request."""
    frame = bytearray(encode_request("ApiVersions", version, correlation_id, "c",
                                     {"client_software_name": "t", "client_software_version": "1"}))
    header, body = read_request(frame)
    request = Request(API_VERSIONS, version, correlation_id, header.client_id, body,
                      cluster.new_connection(1, "127.0.0.1:1"), cluster.first_node())
    answer = cluster.handle(request).body
    sent = b"".join(bytes(p) for p in encode_answer(API_VERSIONS, version, correlation_id, answer))
    return sent, b"".join(bytes(p) for p in encode_response_parts(API_VERSIONS, version, correlation_id, answer))


def test_an_api_versions_answer_keeps_its_encoding_until_what_it_lists_changes():
    cluster = Cluster()
    first, expected = _api_versions(cluster, 3, 7)
    assert first == expected
    again, _ = _api_versions(cluster, 3, 8)              # the kept encoding, under this request's correlation id
    assert again[8:] == first[8:] and struct.unpack_from(">i", again, 4) == (8,)
    for version in (0, 1, 2, 4):                         # every version its own encoding of the same answer
        sent, expected = _api_versions(cluster, version, 9)
        assert sent == expected
    cluster.features.update([FeatureUpdate("transaction.version", 1, SAFE_DOWNGRADE)], False, 1)
    changed, expected = _api_versions(cluster, 3, 8)
    assert changed == expected and changed != again      # a new epoch and level: a new answer, encoded anew
