"""The kgo suite against kafkamock presenting itself as older Apache Kafka releases (``--kafka-version``); see
conftest.py."""

from __future__ import annotations

import pytest
from support import kgo_suite
from support.kgo_suite import RECORDS, check

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("release", ["2.8", "3.9", "4.0"])
def test_the_kgo_suite_passes_against_an_emulated_release(kgo, release, tmp_path):
    """The client negotiates the older release's versions (franz-go picks the highest each side has) and skips
    only what that release lacked (share groups before 4.2, KIP-848 before 4.0); 4.3 is test_kgo.py's run."""
    with kgo_suite.KgoBroker(1, extra=("--kafka-version", release)) as broker:
        results = kgo_suite.run(kgo, broker.suite_env(rf=1, records=RECORDS), label=f"kafkamock-1-as-{release}",
                                timeout_s=900, log=tmp_path / "kgo.log")
    kgo_suite.save(results, {"brokers": 1, "records": RECORDS, "kafka_version": release})
    check(results, release=release)
