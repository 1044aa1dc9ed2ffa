"""The kgo suite against kafkamock while things break: client connections dying, and the broker killed with
SIGKILL and restarted on its data directory; see conftest.py."""

from __future__ import annotations

import os

import pytest
from support import kgo_suite
from support.kgo_suite import RECORDS, check, labelled

pytestmark = pytest.mark.slow
# A kill lands anywhere, including in the long JoinGroup a restart's rebalance makes (it waits out the members that
# died meanwhile, up to their 20 s session): the client retries a cut request only within that session timeout,
# counted from the first try, so kills closer than that can fail a join whatever the broker. 30 s apart, each
# rebalance ends before the next kill.
RESTART_EVERY_S = float(os.environ.get("KGO_RESTART_EVERY_S", "30"))


def test_the_kgo_suite_passes_under_connection_chaos(kgo, tmp_path):
    """KGO_TEST_CHAOS=1: every connection the suite's group and share clients open dies after 0.5-1.5 s,
    mid-request or not; produce retries, sequence rewinds, group and transaction state must all hold."""
    with kgo_suite.KgoBroker(1) as broker:
        env = {**broker.suite_env(rf=1, records=RECORDS), "KGO_TEST_CHAOS": "1"}
        results = kgo_suite.run(kgo, env, label=labelled("kafkamock-1-chaos"), timeout_s=900, log=tmp_path / "kgo.log")
    kgo_suite.save(results, {"brokers": 1, "records": RECORDS, "chaos": True})
    check(results)


def test_the_kgo_suite_passes_while_the_broker_is_killed_and_restarted(kgo, tmp_path):
    """kill -9 of ``kafkamock serve --data-dir`` every 30 s, restarted at once on the same directory and ports: the
    suite's ETL tests count every record they produced, consumed once, committed or shared, so a lost
    acknowledged record, committed offset, transaction or share acknowledgement fails them. The driver holds the
    listening ports as a socket-activating supervisor would (a broker down for the half second a restart takes
    would otherwise refuse connections, and franz-go reports a refused dial to a group's poll as an error)."""
    data = tmp_path / "data"
    with kgo_suite.KgoBroker(1, extra=("--data-dir", str(data))).hold_ports() as broker:
        with kgo_suite.Restarter(broker, RESTART_EVERY_S) as restarter:
            results = kgo_suite.run(kgo, broker.suite_env(rf=1, records=RECORDS), label=labelled("kafkamock-1-kill9"),
                                    timeout_s=900, log=tmp_path / "kgo.log")
    kgo_suite.save(results, {"brokers": 1, "records": RECORDS, "restart_every_s": RESTART_EVERY_S,
                             "restarts": restarter.restarts,
                             "longest_downtime_s": round(max(restarter.downtimes, default=0), 2)})
    assert restarter.restarts >= 2, restarter.restarts
    check(results)
