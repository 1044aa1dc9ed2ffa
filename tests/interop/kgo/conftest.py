"""franz-go's own client integration suite (``pkg/kgo``, pinned in ``tests/kgo/go.mod``) against ``kafkamock serve``:
``test_kgo.py`` at one broker and three, ``test_kgo_faults.py`` under connection chaos and across kill -9 restarts,
``test_kgo_releases.py`` with the broker presenting itself as older Kafka releases (split so that pytest-xdist
spreads them over its workers).

Every test of the suite must pass and none may skip: the authentication tests get SCRAM and OAUTHBEARER listeners,
and the group, transaction and share-group tests run because kafkamock advertises what they ask for (JoinGroup v5+,
ConsumerGroupHeartbeat v1, ShareFetch/ShareAcknowledge v2). The one skip that stays is the suite's own:
TestIssueProduceBrokerTooOldFailsRecords skips when a broker advertises Produce v0-v2, which Kafka 4.x still does
(its ApiVersions keeps v0 so that older librdkafka can produce) and so does kafkamock, as the differential suite
checks against Kafka 4.3.1. An emulated older release may also skip what that release did not have. A test whose
failure can be a race of its own (``kgo_suite.KNOWN_RACES``, each with its race) is run once more, alone, when it is
all that failed; the report and the saved summary keep its first failure.

``KGO_RECORDS`` (default 5,000) sets the ETL tests' volume here; ``make kgo-full`` runs the suite's own default
(500,000). Summaries are kept in ``.cache/kgo/results`` for docs/compatibility.md's conformance section
(tools/docs_conformance.py).
"""

from __future__ import annotations

import pytest
from support import kgo_suite
from support.targets import missing_tool


@pytest.fixture(scope="session")
def kgo() -> kgo_suite.Suite:
    """The suite's test binary (built by `make kgo`, or here when it is missing or stale)."""
    if kgo_suite.go() is None:
        missing_tool("the kgo suite needs the Go toolchain (make kgo installs it)")
    return kgo_suite.build()
