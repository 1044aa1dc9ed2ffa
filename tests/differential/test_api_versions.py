"""ApiVersions: kafkamock advertises Kafka 4.3.1's version range for every API, and the same feature levels."""

from __future__ import annotations

import pytest

from kafkamock.codec import default_registry

REGISTRY = default_registry()
API_NAMES = sorted({spec.name.removesuffix("Request") for spec in REGISTRY.schemas if spec.type == "request"},
                   key=lambda n: REGISTRY.api_key(n))


def _api_versions(run):
    if "api_versions" not in run.target.cache:
        run.target.cache["api_versions"] = run.call("ApiVersions", 4, {
            "client_software_name": "differential", "client_software_version": "1"}, see=False)
    return run.target.cache["api_versions"]


@pytest.mark.parametrize("api", API_NAMES)
def test_api_version_range(differ, request, api):
    """One API's advertised range (absent: not served), from ApiVersions v4."""
    key = REGISTRY.api_key(api)

    def scenario(run):
        served = {k.api_key: (k.min_version, k.max_version) for k in _api_versions(run).api_keys}
        run.see(api, served.get(key))

    differ.check(request.node.name, scenario)


def test_api_versions_header_and_features(differ, request):
    """The rest of ApiVersions v4: error code, supported and finalized features, their epoch's presence."""
    def scenario(run):
        r = _api_versions(run)
        run.see("error_code", r.error_code)
        run.see("supported_features", {f.name: [f.min_version, f.max_version] for f in r.supported_features})
        run.see("finalized_features", {f.name: [f.min_version_level, f.max_version_level]
                                       for f in r.finalized_features})
        run.see("zk_migration_ready", r.zk_migration_ready)
        run.see("finalized_features_epoch_known", r.finalized_features_epoch >= 0)

    differ.check(request.node.name, scenario)


# Kafka's names of the APIs its broker listener serves that kafkamock has no schemas for (see known.toml).
OTHER_APIS = {38: "CreateDelegationToken", 39: "RenewDelegationToken", 40: "ExpireDelegationToken",
              41: "DescribeDelegationToken", 71: "GetTelemetrySubscriptions", 72: "PushTelemetry",
              83: "InitializeShareGroupState", 84: "ReadShareGroupState", 85: "WriteShareGroupState",
              86: "DeleteShareGroupState", 87: "ReadShareGroupStateSummary", 88: "StreamsGroupHeartbeat",
              89: "StreamsGroupDescribe"}


def _api_name(key: int) -> str:
    try:
        return REGISTRY.request(key).name.removesuffix("Request")
    except Exception:
        return OTHER_APIS.get(key, f"api-{key}")


def test_api_keys_served(differ, request):
    """The set of APIs served: kafkamock serves none Kafka does not, and lacks the ones listed in known.toml."""
    def scenario(run):
        served = {k.api_key for k in _api_versions(run).api_keys}
        run.see("served", {_api_name(key): True for key in sorted(served)})

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("version", [0, 3, 4])
def test_api_versions_unsupported_version_answer(differ, request, version):
    """An ApiVersions request of a version the broker does not know is answered at v0 with
    UNSUPPORTED_VERSION and the ApiVersions range (Kafka's fallback); a known version is answered normally."""
    from support.differential import Conn  # noqa: F401

    def scenario(run):
        conn = run.new_conn()
        r = conn.call("ApiVersions", version, {"client_software_name": "differential",
                                                "client_software_version": "1"})
        run.see("error_code", r.error_code)
        run.see("api_versions_entry", [(k.api_key, k.min_version, k.max_version) for k in r.api_keys
                                       if k.api_key == 18])

    differ.check(request.node.name, scenario)
