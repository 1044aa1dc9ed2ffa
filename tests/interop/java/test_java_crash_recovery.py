"""The Java producer (kafka-clients 4.3.1, idempotent, acks=all) streaming into a ``kafkamock serve --data-dir``
process that is killed with SIGKILL and started again on the same port and directory: every acknowledged record
is there once, at the offset the producer was told, in order."""

from __future__ import annotations

import pytest
from support.readback import check_exactly_once, create_topic, read_all
from support.serve_process import ServeProcess

pytestmark = [pytest.mark.java, pytest.mark.slow]


def test_java_idempotent_stream_survives_sigkill_and_restart(tmp_path, java_clients):
    sent = 3000
    with ServeProcess(["--data-dir", str(tmp_path)]) as broker:
        create_topic(broker.bootstrap, "jstorm", 3)
        run = java_clients.start("stream", broker.bootstrap, {
            "topic": "jstorm", "count": sent, "partitions": 3, "value_size": 40, "pace_ms": 1,
            "progress_every": 100, "delivery_timeout_ms": 60000,
            "config": {"reconnect.backoff.ms": "20", "reconnect.backoff.max.ms": "200", "retry.backoff.ms": "20"}})
        try:
            run.wait_progress(sent // 3)
            broker.kill()
            broker.start()
            result = run.result()
        finally:
            run.kill()
        assert result["failed"] == []
        acked = {i: (partition, offset) for i, partition, offset in result["acked"]}
        assert len(acked) == sent
        check_exactly_once(read_all(broker.bootstrap, "jstorm", 3), acked, sent)
