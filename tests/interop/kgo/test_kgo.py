"""The whole kgo suite against kafkamock at one broker (replication factor 1) and three (3); see conftest.py."""

from __future__ import annotations

import pytest
from support import kgo_suite
from support.kgo_suite import RECORDS, check, labelled

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("brokers", [1, 3])
def test_the_whole_kgo_suite_passes(kgo, brokers, tmp_path):
    # The ports are held (socket activation) from the moment they are chosen: on a busy machine another process's
    # outgoing connection can take node 2's port in the second before the broker binds it.
    with kgo_suite.KgoBroker(brokers).hold_ports() as broker:
        label = labelled(f"kafkamock-{brokers}")
        results = kgo_suite.run(kgo, broker.suite_env(rf=brokers, records=RECORDS), label=label,
                                timeout_s=1800, log=tmp_path / "kgo.log")
    kgo_suite.save(results, {"brokers": brokers, "records": RECORDS})
    check(results)
