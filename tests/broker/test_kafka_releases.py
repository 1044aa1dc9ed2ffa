"""``kafkamock.kafka.version`` / ``kafkamock serve --kafka-version``: the broker presents itself as an older Apache
Kafka release (kafka_releases.py), with that release's ApiVersions ranges and feature levels, read from the
release's own jars (tools/import_kafka_releases.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.broker_calls import call

from kafkamock.broker import Cluster
from kafkamock.broker.config import BrokerConfig
from kafkamock.broker.kafka_configs import ConfigError
from kafkamock.broker.kafka_releases import LATEST, RELEASES

REPO = Path(__file__).resolve().parents[2]
PRODUCE, FETCH, METADATA, CONSUMER_GROUP_HEARTBEAT, SHARE_FETCH = 0, 1, 3, 68, 78


@pytest.mark.kafka
def test_the_releases_file_is_what_the_releases_own_jars_say():
    result = subprocess.run([sys.executable, str(REPO / "tools" / "import_kafka_releases.py"), "--check"],
                            capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr


def test_by_default_the_broker_is_kafka_4_3_and_says_so_as_4_3_1_does():
    default, explicit = Cluster({}), Cluster({"kafkamock.kafka.version": LATEST})
    assert default.release.line == LATEST and default.advertised_versions() == explicit.advertised_versions()
    kafka = RELEASES[LATEST].apis
    for key, (low, high) in default.advertised_versions().items():     # what 4.3.1 lists, for what kafkamock serves
        assert kafka[key] == ((3, high) if key == PRODUCE else (low, high)), key
    assert default.advertised_versions()[PRODUCE][0] == 0               # listed from v0, as Kafka 4.x (KAFKA-18659)


@pytest.mark.parametrize("line", sorted(set(RELEASES) - {LATEST}))
def test_an_emulated_release_advertises_its_own_ranges_for_what_kafkamock_serves(line):
    release = RELEASES[line]
    broker = Cluster({"kafkamock.kafka.version": line})
    advertised = broker.advertised_versions()
    implemented = broker.implemented_versions()
    for key, (low, high) in release.apis.items():
        if key not in implemented:
            assert key not in advertised
            continue
        expected = (max(low, implemented[key][0]), min(high, implemented[key][1]))
        if key == PRODUCE and not release.before_4_0:
            expected = (0, expected[1])
        assert advertised.get(key) == expected, (key, release.apis[key], implemented[key])
    assert set(advertised) <= set(release.apis)                         # nothing the release did not have
    unserved = release.unserved(implemented)
    assert all(key not in implemented or high < implemented[key][0] for key, (_, high) in unserved.items())


def test_older_releases_have_their_own_protocol_and_features():
    v28, v39, v40, v41 = (Cluster({"kafkamock.kafka.version": v}) for v in ("2.8", "3.9", "4.0", "4.1"))
    assert v28.advertised_versions()[PRODUCE] == (0, 9) and v28.advertised_versions()[FETCH] == (0, 12)
    assert v28.advertised_versions()[METADATA] == (0, 11)       # Metadata v0-3 are read by the codec's 4.3 schema
    assert CONSUMER_GROUP_HEARTBEAT not in v28.advertised_versions() and v28.features.finalized() == {}
    assert v39.features.finalized() == {"metadata.version": 21}          # and transaction.version 0: KIP-890 part 1
    assert v39.features.level("transaction.version") == 0
    assert v40.features.finalized()["transaction.version"] == 2 and v40.features.finalized()["group.version"] == 1
    assert SHARE_FETCH not in v40.advertised_versions()
    assert v41.advertised_versions()[SHARE_FETCH] == (1, 1) and v41.features.level("share.version") == 0


def test_a_request_beyond_the_emulated_release_is_refused_as_that_release_refuses_it():
    """Fetch v17 is Kafka 3.9's newest; v18 (4.1) is not served by a broker presenting itself as 3.9: its
    ApiVersions does not list it and a request at it closes the connection, as an unknown version does."""
    broker = Cluster({"kafkamock.kafka.version": "3.9"})
    assert broker.supported_versions()[FETCH] == (0, 17)
    response = call(broker, "ApiVersions", 3, {"client_software_name": "t", "client_software_version": "1"})
    listed = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
    assert listed[FETCH] == (0, 17) and listed[PRODUCE] == (0, 11)
    assert {f.name: f.max_version_level for f in response.finalized_features} == {"metadata.version": 21}
    assert {f.name: (f.min_version, f.max_version) for f in response.supported_features} == {
        "kraft.version": (0, 1), "metadata.version": (1, 21), "transaction.version": (0, 0)}


def test_a_transaction_version_above_the_release_is_refused_at_start():
    with pytest.raises(ConfigError, match=r"kafkamock.transaction.version=2 is above what Kafka 3.9 supports"):
        Cluster({"kafkamock.kafka.version": "3.9", "kafkamock.transaction.version": 2})
    with pytest.raises(ConfigError, match="kafkamock presents itself as Kafka 2.8, 3.9, 4.0, 4.1, 4.2, 4.3"):
        BrokerConfig({"kafkamock.kafka.version": "3.5"})
