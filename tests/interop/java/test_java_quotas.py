"""The Java Admin's alterClientQuotas / describeClientQuotas (kafka-clients 4.3.1) against kafkamock: Kafka's
entity model with default entities, the three filter kinds, validate-only, and per-entity errors."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.java


def test_java_admin_alters_and_describes_client_quotas(kafka_broker, java_clients):
    bootstrap = kafka_broker.bootstrap_servers
    results = java_clients.admin(bootstrap, [
        {"op": "alterClientQuotas", "entries": [
            {"entity": {"user": "alice"}, "ops": {"producer_byte_rate": 1048576}},
            {"entity": {"user": None, "client-id": "etl"}, "ops": {"consumer_byte_rate": 2048}},
            {"entity": {"ip": "10.1.2.3"}, "ops": {"connection_creation_rate": 5}},
            {"entity": {"user": "bad"}, "ops": {"producer_byte_rate": -1}},
        ]},
        {"op": "alterClientQuotas", "validate_only": True, "entries": [
            {"entity": {"client-id": "only-checked"}, "ops": {"producer_byte_rate": 10}}]},
        {"op": "describeClientQuotas", "components": [{"type": "user", "name": "alice"}]},
        {"op": "describeClientQuotas", "components": [{"type": "user", "default": True}]},
        {"op": "describeClientQuotas", "components": [{"type": "client-id"}]},
        {"op": "describeClientQuotas", "components": []},
        {"op": "alterClientQuotas", "entries": [{"entity": {"user": "alice"}, "ops": {"producer_byte_rate": None}}]},
        {"op": "describeClientQuotas", "components": [{"type": "user"}], "strict": True},
    ], check=False)
    altered = results[0]["result"]
    assert altered["{user=alice}"] == altered["{client-id=etl, user=null}"] == altered["{ip=10.1.2.3}"] == "ok"
    assert altered["{user=bad}"]["kafka_error"] == "INVALID_REQUEST"
    assert altered["{user=bad}"]["message"] == "Quota producer_byte_rate must be greater than 0"
    assert results[1]["result"] == {"{client-id=only-checked}": "ok"}
    assert results[2]["result"] == {"{user=alice}": {"producer_byte_rate": 1048576.0}}
    assert results[3]["result"] == {"{client-id=etl, user=null}": {"consumer_byte_rate": 2048.0}}
    assert results[4]["result"] == {"{client-id=etl, user=null}": {"consumer_byte_rate": 2048.0}}
    assert set(results[5]["result"]) == {"{user=alice}", "{client-id=etl, user=null}", "{ip=10.1.2.3}"}
    assert results[6]["result"] == {"{user=alice}": "ok"}
    assert results[7]["result"] == {}
