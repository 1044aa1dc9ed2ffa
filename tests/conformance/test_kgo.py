"""franz-go's own client integration suite (``pkg/kgo``, pinned in ``tests/kgo/go.mod``) against ``kafkamock serve``:
at one broker (replication factor 1) and three (3), under connection chaos, and while the broker is kill -9'ed and
restarted on its data directory. Every test of the suite must pass and none may skip: the authentication tests get
SCRAM and OAUTHBEARER listeners, and the group, transaction and share-group tests run because kafkamock advertises
what they ask for (JoinGroup v5+, ConsumerGroupHeartbeat v1, ShareFetch/ShareAcknowledge v2).

The one skip that stays is the suite's own: TestIssueProduceBrokerTooOldFailsRecords skips when a broker advertises
Produce v0-v2, which Kafka 4.x still does (its ApiVersions keeps v0 so that older librdkafka can produce) and so
does kafkamock, as the differential suite checks against Kafka 4.3.1.

``KGO_RECORDS`` (default 5,000) sets the ETL tests' volume here; ``make kgo-full`` runs the suite's own default
(500,000). Summaries are kept in ``.cache/kgo/results`` for the README's conformance section.
"""

from __future__ import annotations

import os

import pytest
from support import kgo_suite
from support.targets import missing_tool

pytestmark = pytest.mark.slow

RECORDS = int(os.environ.get("KGO_RECORDS", "5000"))
# Skips a conforming broker still gets, with why.
EXPECTED_SKIPS = {"TestIssueProduceBrokerTooOldFailsRecords":
                  "Kafka 4.x advertises Produce v0-v2 (and kafkamock with it); the test needs a broker that does not"}


@pytest.fixture(scope="module")
def suite() -> kgo_suite.Suite:
    if kgo_suite.go() is None:
        missing_tool("the kgo suite needs the Go toolchain (make kgo installs it)")
    return kgo_suite.build()


def check(results: kgo_suite.Results) -> None:
    assert not results.of("fail") and results.exit_code == 0, results.report()
    unexpected = {o.name: o.reason for o in results.of("skip") if o.name not in EXPECTED_SKIPS}
    assert not unexpected, f"tests skipped on kafkamock: {unexpected}"
    assert len(results.top("pass")) >= 150, results.summary()["tests"]   # the whole suite ran, not a filter


@pytest.mark.parametrize("brokers", [1, 3])
def test_the_whole_kgo_suite_passes(suite, brokers, tmp_path):
    with kgo_suite.KgoBroker(brokers) as broker:
        results = kgo_suite.run(suite, broker.suite_env(rf=brokers, records=RECORDS), label=f"kafkamock-{brokers}",
                                timeout_s=900, log=tmp_path / "kgo.log")
    kgo_suite.save(results, {"brokers": brokers, "records": RECORDS})
    check(results)


def test_the_kgo_suite_passes_under_connection_chaos(suite, tmp_path):
    """KGO_TEST_CHAOS=1: every connection the suite's clients open dies after 0.5-1.5 s, mid-request or not;
    produce retries, sequence rewinds, group and transaction state must all hold."""
    with kgo_suite.KgoBroker(1) as broker:
        env = {**broker.suite_env(rf=1, records=RECORDS), "KGO_TEST_CHAOS": "1"}
        results = kgo_suite.run(suite, env, label="kafkamock-1-chaos", timeout_s=900, log=tmp_path / "kgo.log")
    kgo_suite.save(results, {"brokers": 1, "records": RECORDS, "chaos": True})
    check(results)


RESTART_EVERY_S = float(os.environ.get("KGO_RESTART_EVERY_S", "8"))


def test_the_kgo_suite_passes_while_the_broker_is_killed_and_restarted(suite, tmp_path):
    """kill -9 of ``kafkamock serve --data-dir`` every few seconds, restarted at once on the same directory and
    ports: the suite's ETL tests count every record they produced, consumed once, committed or shared, so a lost
    acknowledged record, committed offset, transaction or share acknowledgement fails them."""
    data = tmp_path / "data"
    with kgo_suite.KgoBroker(1, extra=("--data-dir", str(data))) as broker:
        with kgo_suite.Restarter(broker, RESTART_EVERY_S) as restarter:
            results = kgo_suite.run(suite, broker.suite_env(rf=1, records=RECORDS), label="kafkamock-1-kill9",
                                    timeout_s=900, log=tmp_path / "kgo.log")
    kgo_suite.save(results, {"brokers": 1, "records": RECORDS, "restart_every_s": RESTART_EVERY_S,
                             "restarts": restarter.restarts})
    assert restarter.restarts >= 5, restarter.restarts
    check(results)
