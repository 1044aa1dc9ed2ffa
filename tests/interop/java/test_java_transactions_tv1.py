"""The Java transaction tests of test_java_transactions.py again, with kafkamock finalizing ``transaction.version`` 1:
the Java 4.3 client then speaks KIP-890 part 1 (AddPartitionsToTxn and AddOffsetsToTxn from the producer, EndTxn
v4, the broker verifying a transaction's first write), as it does with a Kafka 3.x broker."""

from __future__ import annotations

import pytest
from test_java_transactions import (  # noqa: F401 - collected again under this module's marker
    test_a_new_producer_with_the_same_transactional_id_fences_the_zombie,
    test_a_transaction_open_past_its_timeout_is_aborted_and_its_producer_fenced,
    test_admin_fence_producers_fences_the_running_producer,
    test_describe_and_list_transactions_and_describe_producers,
    test_read_committed_sees_only_committed_transactions_and_read_uncommitted_sees_all,
    test_send_offsets_to_transaction_commits_the_groups_offsets_with_the_transaction,
)

pytestmark = [pytest.mark.java, pytest.mark.kafkamock(config={
    "group.initial.rebalance.delay.ms": 0,
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": 100,
    "kafkamock.transaction.version": 1,
})]
