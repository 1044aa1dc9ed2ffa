"""Which Apache Kafka KIPs kafkamock serves, how fully, where, and which tests prove it: one ``Kip`` per KIP the
package names.

The table users read, ``docs/kips.md``, is generated from these entries (``python -m kafkamock.kips >
docs/kips.md``), and ``tests/test_kips.py`` keeps both honest: it fails when the code names a KIP that has no entry
here, when an entry names a module or a test that does not exist, or when the document no longer matches
``render()``. A ``NOT_SERVED`` entry lists the modules that name (or refuse) the KIP.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

KIP_URL = "https://cwiki.apache.org/confluence/display/KAFKA/KIP-{}"


class Status(enum.Enum):
    FULL = "full"                  # kafkamock serves what the KIP specifies for clients
    PARTIAL = "partial"            # served in part: the note says what is not
    NOT_SERVED = "not served"      # the code only names it: the note says why


@dataclass(frozen=True, slots=True)
class Behaviour:
    """One thing the KIP asks for, and the tests that would fail without it."""

    what: str
    tests: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Kip:
    number: int
    title: str                     # as Apache Kafka names the KIP
    changes: str                   # what it changes on the wire or in the broker, in one sentence
    status: Status
    modules: tuple[str, ...]       # dotted module names inside kafkamock
    tests: tuple[str, ...]         # pytest node ids, tests/path/test_file.py::test_name
    behaviours: tuple[Behaviour, ...] = ()
    note: str = ""

    @property
    def url(self) -> str:
        return KIP_URL.format(self.number)

    def all_tests(self) -> tuple[str, ...]:
        """The entry's tests, then its behaviours' tests, each once."""
        seen = dict.fromkeys(self.tests)
        for behaviour in self.behaviours:
            seen.update(dict.fromkeys(behaviour.tests))
        return tuple(seen)


SEED = (1222, 360, 932, 983, 211)
"""The KIPs kafkamock was specified against: first in ``KIPS``, in this order, each with its behaviours."""

# Test files cited more than once.
_SHARE_FETCH = "tests/broker/test_share_fetch.py::"
_SHARE_PARTITION = "tests/broker/test_share_partition.py::"
_SHARE_CONSUMER = "tests/client/test_share_consumer.py::"
_SHARE_DIFF = "tests/differential/test_share_groups.py::"
_TXN = "tests/broker/test_transactions.py::"
_TXN_DIFF = "tests/differential/test_transactions.py::"
_CLASSIC = "tests/broker/test_classic_groups.py::"
_CONSUMER_GROUPS = "tests/broker/test_consumer_groups.py::"
_CLUSTER_APIS = "tests/broker/test_cluster_apis.py::"
_KIP983 = "tests/client/test_kip983.py::"
_EXAMPLES = "tests/client/test_client_examples.py::test_the_example_runs"

KIPS: tuple[Kip, ...] = (
    # -- the seed KIPs -------------------------------------------------------------------------------------------
    Kip(
        1222, "Acquisition lock timeout renewal in share consumer explicit mode",
        "Adds the RENEW acknowledgement type (4) and an IsRenewAck flag to ShareFetch and ShareAcknowledge v2, so a "
        "share consumer still working on a record can restart its acquisition lock without changing its state.",
        Status.FULL,
        ("kafkamock.broker.share.partition", "kafkamock.broker.share.state", "kafkamock.broker.share.manager",
         "kafkamock.broker.handlers.share_fetch", "kafkamock.broker.handlers.share_acknowledge",
         "kafkamock.client.share_consumer"),
        (_SHARE_FETCH + "test_renew_restarts_the_lock_and_keeps_the_record_acquired",
         _SHARE_CONSUMER + "test_renew_keeps_a_record_past_its_lock_from_another_consumer_then_accept",
         _EXAMPLES),
        behaviours=(
            Behaviour("RENEW restarts the lock of acquired records for the group's current "
                      "share.record.lock.duration.ms; the records stay Acquired with their delivery count",
                      (_SHARE_PARTITION + "test_locks_expire_renew_restarts_them_and_the_delivery_limit_archives",
                       _SHARE_FETCH + "test_renew_restarts_the_lock_and_keeps_the_record_acquired",
                       _SHARE_DIFF + "test_renew_keeps_records_past_the_lock")),
            Behaviour("ShareAcknowledge v2 answers a renewal with the lock duration it gave, as "
                      "AcquisitionLockTimeoutMs",
                      (_SHARE_FETCH + "test_renew_restarts_the_lock_and_keeps_the_record_acquired",
                       _SHARE_DIFF + "test_renew_by_share_acknowledge")),
            Behaviour("A ShareFetch with IsRenewAck applies its acknowledgements and acquires nothing; its MaxWaitMs, "
                      "MinBytes, MaxBytes and MaxRecords must be 0, else the whole request is INVALID_REQUEST "
                      "(the code alone)",
                      (_SHARE_FETCH + "test_renew_restarts_the_lock_and_keeps_the_record_acquired",
                       _SHARE_FETCH + "test_renew_rules_give_invalid_request",
                       _SHARE_DIFF + "test_renew_by_share_fetch")),
            Behaviour("RENEW is INVALID_REQUEST for the partition in a request without IsRenewAck, and at "
                      "ShareFetch/ShareAcknowledge v1, where neither the type nor the flag exists",
                      (_SHARE_FETCH + "test_renew_rules_give_invalid_request",
                       "tests/codec/test_codec_golden.py::"
                       "test_non_ignorable_field_at_a_version_without_it_is_an_error")),
            Behaviour("ShareFetch v2 and ShareAcknowledge v2 carry IsRenewAck in Kafka 4.3's layout (ShareFetch after "
                      "KIP-1206's ShareAcquireMode), and ApiVersions lists both up to v2",
                      ("tests/codec/test_codec_golden.py::test_share_fetch_v2_golden_both_ways",
                       "tests/codec/test_codec_golden.py::test_api_versions_from_schemas")),
            Behaviour("A group with share.renew.acknowledge.enable=false refuses RENEW with INVALID_RECORD_STATE and "
                      "Kafka's message",
                      (_SHARE_FETCH + "test_group_configs_set_the_delivery_limit_the_record_locks_and_renewing",
                       _SHARE_PARTITION + "test_locks_expire_renew_restarts_them_and_the_delivery_limit_archives",
                       _SHARE_DIFF + "test_renew_disabled_by_group_config")),
            Behaviour("Without a renewal, a lock that runs out makes the record Available again, redelivered with the "
                      "next delivery count",
                      (_SHARE_FETCH + "test_lock_expiry_makes_records_available_again_with_the_next_delivery_count",
                       _SHARE_CONSUMER + "test_without_renew_an_expired_lock_redelivers_with_delivery_count_two")),
            Behaviour("kafkamock's ShareConsumer: acknowledge(record, RENEW) keeps the record from other consumers "
                      "past its lock; the renewal goes out with commit_sync (ShareAcknowledge v2) or the next poll (a "
                      "ShareFetch v2 with IsRenewAck) and the record comes back at the following poll",
                      (_SHARE_CONSUMER + "test_renew_keeps_a_record_past_its_lock_from_another_consumer_then_accept",
                       _EXAMPLES)),
            Behaviour("kafkamock's ShareConsumer refuses RENEW with UNSUPPORTED_VERSION towards a broker that serves "
                      "ShareFetch/ShareAcknowledge v1 only",
                      (_SHARE_CONSUMER + "test_renew_against_a_broker_with_share_v1_only_is_unsupported_version",)),
            Behaviour("Java's KafkaShareConsumer renews against kafkamock, alone and in a group with kafkamock's own "
                      "share consumer",
                      ("tests/interop/java/test_java_share.py::test_renew_keeps_a_slow_record_from_other_consumers",
                       "tests/interop/java/test_java_share_mixed.py::"
                       "test_kafkamock_and_java_share_consumers_renew_in_one_group")),
        ),
    ),
    Kip(
        360, "Improve reliability of idempotent/transactional producer",
        "Lets InitProducerId (v3+) carry the producer's current id and epoch so a producer that lost its state bumps "
        "its epoch instead of failing, with the coordinator keeping the last epoch to recognise a retried bump and "
        "fence everything else, and keeps producer state after its batches are deleted.",
        Status.FULL,
        ("kafkamock.broker.transactions.coordinator", "kafkamock.broker.transactions.records",
         "kafkamock.broker.handlers.init_producer_id", "kafkamock.broker.producers",
         "kafkamock.storage.producer_snapshot", "kafkamock.client.producer"),
        ("tests/interop/python/test_transactions_raw.py::test_kip360_init_producer_id_rules",
         "tests/codec/test_codec_golden.py::test_init_producer_id_v3_epoch_bump_fields",
         _EXAMPLES),
        behaviours=(
            Behaviour("InitProducerId without an expected producer (a new instance) bumps the epoch of the "
                      "transactional id's producer and forgets the last epoch",
                      (_TXN + "test_a_new_instance_bumps_the_epoch_and_forgets_the_last_epoch",
                       _TXN_DIFF + "test_init_producer_id_transactional_new_then_again")),
            Behaviour("With the current (producer id, epoch) the epoch is bumped and the old one kept as the last "
                      "epoch; a retry with that old epoch gets the same answer without a second bump",
                      (_TXN + "test_the_current_epoch_bumps_and_a_retry_of_that_bump_returns_the_same",
                       _TXN + "test_a_retried_bump_leaves_the_transaction_empty",
                       _TXN_DIFF + "test_init_producer_id_kip360_bump_and_retry")),
            Behaviour("Any other epoch or producer id is PRODUCER_FENCED (INVALID_PRODUCER_EPOCH for InitProducerId "
                      "before v4)",
                      (_TXN + "test_any_other_epoch_or_producer_id_is_fenced",
                       _TXN_DIFF + "test_init_producer_id_kip360_fenced")),
            Behaviour("An exhausted epoch moves the transactional id to a new producer id at epoch 0, and a retry "
                      "with the old id and epoch is recognised",
                      (_TXN + "test_an_exhausted_epoch_moves_to_a_new_producer_id_and_the_retry_is_recognised",
                       _TXN + "test_kip890_v5_end_at_an_exhausted_epoch_writes_markers_with_the_old_id_then_rotates")),
            Behaviour("A producer id without an epoch (or the reverse) is INVALID_REQUEST; an idempotent producer "
                      "asking for a bump gets a fresh producer id",
                      (_TXN + "test_half_an_expected_producer_is_invalid_and_idempotent_producers_get_fresh_ids",
                       _TXN_DIFF + "test_init_producer_id_idempotent_bump_and_half_an_expected_producer")),
            Behaviour("InitProducerId on an open transaction fences and aborts it (CONCURRENT_TRANSACTIONS); at "
                      "transaction version 2 the fenced instance may recover with its old epoch, at version 1 it may "
                      "not",
                      (_TXN + "test_init_on_an_open_transaction_aborts_it_with_a_fenced_epoch",
                       _TXN + "test_the_fence_on_transaction_version_2_moves_the_epoch_once_and_the_fenced_instance_"
                              "may_recover",
                       _TXN + "test_timed_out_transaction_on_transaction_version_1_forgets_the_last_epoch",
                       _TXN_DIFF + "test_init_producer_id_on_an_open_transaction_fences_and_aborts",
                       _TXN_DIFF + "test_init_producer_id_fence_with_the_zombies_expected_producer")),
            Behaviour("The last epoch and previous producer id are written as TransactionLogValue v1's tagged fields, "
                      "so the rules outlive a restart",
                      ("tests/codec/test_coordinator_records.py::test_transaction_log_records_match_kafkas_bytes",
                       _TXN + "test_restart_keeps_open_and_finished_transactions")),
            Behaviour("A producer's state outlives its batches (retention, DeleteRecords) until "
                      "producer.id.expiration.ms, also across a restart through Kafka's producer snapshot files",
                      (_TXN + "test_producer_state_outlives_its_batches_across_a_restart",
                       "tests/client/test_producer.py::test_kip360_producer_state_really_lost")),
            Behaviour("An expired transactional id is unknown again: an expected producer on it gets a fresh "
                      "producer id, not a fence",
                      (_TXN + "test_transactional_ids_expire_and_come_back_with_a_new_producer_id",
                       _TXN_DIFF + "test_init_producer_id_expected_producer_on_a_new_transactional_id")),
            Behaviour("kafkamock's Producer recovers from UNKNOWN_PRODUCER_ID or an abortable sequence error by "
                      "asking InitProducerId for a new epoch with its id and epoch and restarting its sequences",
                      ("tests/client/test_producer.py::test_kip360_pushed_error_bumps_the_epoch",
                       "tests/client/test_producer_transactions.py::"
                       "test_kip360_abortable_error_then_abort_bumps_the_epoch",
                       _EXAMPLES)),
        ),
    ),
    Kip(
        932, "Queues for Kafka",
        "Adds share groups: members heartbeat to a group coordinator, and records are acquired under time-limited "
        "locks, acknowledged one by one and redelivered up to a delivery limit through ShareFetch and "
        "ShareAcknowledge, with each share-partition's state kept durable by the broker.",
        Status.PARTIAL,
        ("kafkamock.broker.share", "kafkamock.broker.share.manager", "kafkamock.broker.share.partition",
         "kafkamock.broker.share.state", "kafkamock.broker.share.fetching", "kafkamock.broker.share.groups",
         "kafkamock.broker.share.sessions", "kafkamock.records.control", "kafkamock.storage.share_snapshot",
         "kafkamock.broker.groups.assignors", "kafkamock.broker.groups.group_configs",
         "kafkamock.broker.handlers.share_group_heartbeat", "kafkamock.broker.handlers.share_group_describe",
         "kafkamock.broker.handlers.share_fetch", "kafkamock.broker.handlers.share_acknowledge",
         "kafkamock.broker.handlers.describe_share_group_offsets",
         "kafkamock.broker.handlers.alter_share_group_offsets",
         "kafkamock.broker.handlers.delete_share_group_offsets", "kafkamock.client.share_consumer"),
        (_SHARE_FETCH + "test_members_acquire_disjoint_records_and_a_release_wakes_a_waiting_fetch",
         "tests/broker/test_share_groups.py::test_members_share_partitions_as_the_simple_assignor_does",
         _SHARE_CONSUMER + "test_implicit_mode_several_consumers_share_the_records_and_none_comes_twice",
         "tests/interop/java/test_java_share.py::test_explicit_mode_accept_release_reject"),
        behaviours=(
            Behaviour("Nothing is written while a share-partition only starts and acquires; its first "
                      "acknowledgement, release, expired lock or archived aborted batch writes a SHARE_CHECKPOINT "
                      "control batch into the topic-partition itself",
                      (_SHARE_FETCH + "test_state_is_written_as_control_batches_that_consumers_skip",)),
            Behaviour("Each later change writes a SHARE_DELTA chained to its checkpoint's epoch; after "
                      "kafkamock.share.delta.chain.max deltas a fresh SHARE_CHECKPOINT starts a new chain",
                      (_SHARE_PARTITION + "test_deltas_chain_to_their_checkpoint",
                       _SHARE_FETCH + "test_a_restart_rebuilds_the_state_from_checkpoint_and_deltas")),
            Behaviour("Checkpoint and delta values have the KIP-932 page's layout (control types 5 and 6), the page's "
                      "worked example encoding to its checkpoint; Acquired records are written as Available with "
                      "their delivery count less one",
                      (_SHARE_PARTITION + "test_the_seed_pages_worked_example_is_the_golden_checkpoint",
                       "tests/records/test_records.py::test_control_batches",
                       _SHARE_PARTITION + "test_deltas_chain_to_their_checkpoint")),
            Behaviour("ShareFetch never acquires or returns the share-state batches; Fetch hands them over as control "
                      "batches, which plain consumers skip on their way to the end of the partition",
                      (_SHARE_FETCH + "test_state_is_written_as_control_batches_that_consumers_skip",
                       _SHARE_FETCH + "test_records_after_the_state_are_acquired_around_its_control_batches",
                       "tests/interop/python/test_share_python_clients.py::"
                       "test_plain_consumers_skip_share_state_batches_and_reach_the_end")),
            Behaviour("A share snapshot file per share-partition locates its latest checkpoint; one that does not "
                      "read back sends recovery through the whole log",
                      ("tests/storage/test_disk.py::"
                       "test_share_snapshots_locate_checkpoints_and_a_bad_one_sends_recovery_through_the_log",
                       "tests/storage/test_disk.py::"
                       "test_a_share_snapshot_of_a_group_id_too_long_for_a_file_name_is_kept_under_its_digest",
                       _SHARE_FETCH + "test_a_restart_without_share_snapshots_scans_the_log")),
            Behaviour("A restart rebuilds every share-partition from snapshot, checkpoint and deltas, whatever the "
                      "members did; after a crash exactly the unacknowledged records come back",
                      (_SHARE_FETCH + "test_a_restart_rebuilds_the_state_from_checkpoint_and_deltas",
                       _SHARE_FETCH + "test_a_restart_skips_the_control_batches_inside_the_state",
                       _SHARE_FETCH + "test_any_history_restores_from_the_partitions_control_batches",
                       _SHARE_PARTITION + "test_any_history_keeps_the_invariants_and_survives_checkpoint_and_deltas",
                       "tests/interop/python/test_share_durability.py::"
                       "test_a_crash_gives_back_exactly_the_unacknowledged_records")),
            Behaviour("Retention or DeleteRecords past the last checkpoint moves the share-partition start offset and "
                      "writes a new checkpoint, so recovery never needs a deleted batch",
                      (_SHARE_FETCH + "test_delete_records_moves_the_spso_and_keeps_a_checkpoint_for_recovery",)),
            Behaviour("DeleteShareGroupOffsets writes a tombstone checkpoint (start offset -1) that keeps the deleted "
                      "state away after a restart; DeleteGroups removes an empty share group and its state",
                      (_SHARE_FETCH + "test_describe_alter_and_delete_share_group_offsets",
                       _SHARE_FETCH + "test_delete_groups_removes_an_empty_share_group_and_its_state")),
            Behaviour("Records produced after a state write land past its control batch: what a group acquires, its "
                      "delivery counts and start offsets are Kafka 4.3.1's, only the offsets run ahead",
                      (_SHARE_FETCH + "test_records_after_the_state_are_acquired_around_its_control_batches",
                       _SHARE_DIFF + "test_records_produced_after_share_state_is_written")),
            Behaviour("Acquisition locks, releases and the delivery limit: a release or an expired lock redelivers "
                      "with the next delivery count, and share.delivery.count.limit archives the record",
                      (_SHARE_FETCH + "test_the_delivery_limit_archives_a_record",
                       _SHARE_PARTITION + "test_acquire_accept_release_reject_and_the_start_offset",
                       "tests/interop/java/test_java_share.py::test_the_delivery_limit_archives_a_record")),
        ),
        note="The durable share-partition state is the KIP-932 page's SHARE_CHECKPOINT / SHARE_DELTA control batches "
             "in the topic-partition (the design this project follows), not shipped Kafka's share coordinator: "
             "`__share_group_state` is never created and its inter-broker RPCs (InitializeShareGroupState, "
             "ReadShareGroupState, WriteShareGroupState, DeleteShareGroupState, ReadShareGroupStateSummary) are not "
             "served, and the control batches take offsets, so records produced after a state write sit further on "
             "than on Kafka. Share group membership is Kafka's ShareGroup* records in `__consumer_offsets`, so a "
             "restart keeps groups and members (each member's session starts again at the load); only the simple "
             "share assignor is served.",
    ),
    Kip(
        983, "Full speed async processing during rebalance",
        "Proposes a consumer API (no wire change) that turns a revocation into a request the application completes at "
        "a later poll, so it can keep processing every other partition at full speed and commit what it processed "
        "of a revoked partition before that partition moves.",
        Status.FULL,
        ("kafkamock.client.consumer.revocation", "kafkamock.client.consumer.consumer",
         "kafkamock.client.consumer.classic", "kafkamock.client.consumer.consumer_protocol"),
        (_KIP983 + "test_delayed_revoke_in_a_cooperative_rebalance_moves_the_partition_one_poll_later",
         _KIP983 + "test_a_partition_lost_to_a_session_timeout_cannot_be_delayed",
         _EXAMPLES),
        behaviours=(
            Behaviour("A revoke the group asks for is listed by to_be_revoked_partitions() and completes at the start "
                      "of the next poll, when the partition leaves the assignment",
                      (_KIP983 + "test_delayed_revoke_in_a_cooperative_rebalance_moves_the_partition_one_poll_later",)),
            Behaviour("delay_revoke(partitions) pushes the revoke one poll further, and may be called again at each "
                      "poll; meanwhile the partitions stay in the consumer's assignment",
                      (_KIP983 + "test_delayed_revoke_in_a_cooperative_rebalance_moves_the_partition_one_poll_later",)),
            Behaviour("No record of a partition is returned after its revoke completed",
                      (_KIP983 + "test_delayed_revoke_in_a_cooperative_rebalance_moves_the_partition_one_poll_later",)),
            Behaviour("The member that takes a delayed partition over starts at the offsets committed before its "
                      "revoke: no record is processed twice or missed",
                      (_KIP983 + "test_delayed_revoke_in_a_cooperative_rebalance_moves_the_partition_one_poll_later",
                       _EXAMPLES)),
            Behaviour("Under the classic protocol a cooperative member rejoins once its revokes are done; under "
                      "KIP-848 the heartbeat after the revoke reports the partitions gone, which lets the broker hand "
                      "them on",
                      (_KIP983 + "test_delayed_revoke_in_a_cooperative_rebalance_moves_the_partition_one_poll_later",)),
            Behaviour("Partitions lost before their revoke (session timeout, fencing) leave the assignment at once, "
                      "are named by lost_partitions() for the poll during which they were lost, and can no longer be "
                      "delayed (delay_revoke returns False)",
                      (_KIP983 + "test_a_partition_lost_to_a_session_timeout_cannot_be_delayed",)),
        ),
        note="A consumer API that is under discussion and in no Kafka release: only kafkamock's own Consumer offers "
             "it (to_be_revoked_partitions, delay_revoke, lost_partitions); the broker needs nothing new.",
    ),
    Kip(
        211, "Revise Expiration Semantics of Consumer Group Offsets",
        "Makes committed offsets expire offsets.retention.minutes after their group became empty rather than after "
        "each commit, keeps a live group's offsets of the topics it subscribes to, and drops OffsetCommit's "
        "per-request retention time from v5.",
        Status.FULL,
        ("kafkamock.broker.groups.offsets", "kafkamock.broker.groups.coordinator",
         "kafkamock.broker.groups.classic", "kafkamock.broker.groups.consumer",
         "kafkamock.broker.handlers.offset_commit"),
        ("tests/interop/python/test_groups_durability.py::test_kip211_every_row_of_the_expiration_table_end_to_end",),
        behaviours=(
            Behaviour("A Stable group keeps the offsets of the topics its members subscribe to, however old their "
                      "commits",
                      (_CLASSIC + "test_stable_group_keeps_offsets_past_the_retention",
                       "tests/interop/python/test_groups_durability.py::"
                       "test_kip211_every_row_of_the_expiration_table_end_to_end")),
            Behaviour("An Empty group with a protocol type loses its offsets offsets.retention.minutes after it "
                      "became Empty (not after the commit), and the group goes with them",
                      (_CLASSIC + "test_empty_group_loses_offsets_retention_after_it_became_empty",)),
            Behaviour("Offsets of a topic no member of a Stable group subscribes to expire by commit time",
                      (_CLASSIC + "test_unsubscribed_topics_of_a_stable_group_expire_by_commit_time",)),
            Behaviour("KIP-848 consumer groups expire by commit time the offsets of topics no member subscribes to "
                      "(an Empty group subscribes to none)",
                      (_CONSUMER_GROUPS + "test_kip211_consumer_group_offsets_of_unsubscribed_topics_expire_by_"
                                          "commit_time",)),
            Behaviour("Standalone offsets (a group with no protocol type) expire by commit time, and a group left "
                      "with no offsets is deleted",
                      (_CLASSIC + "test_standalone_offsets_expire_by_commit_time",
                       "tests/differential/test_offsets.py::test_empty_group_with_only_expired_offsets_goes")),
            Behaviour("OffsetCommit v2-v4's RetentionTimeMs (not -1) gives each offset its own expire timestamp, "
                      "written as OffsetCommitValue v1; v5+ no longer carries it",
                      (_CLASSIC + "test_v2_to_v4_commits_with_a_retention_expire_per_offset",
                       _CLASSIC + "test_v2_to_v4_retention_records_carry_the_expire_timestamp",
                       "tests/differential/test_offsets.py::test_offsets_with_their_own_retention_expire",
                       "tests/differential/test_offsets.py::test_a_retention_past_the_end_of_time_wraps_as_a_java_long",
                       "tests/codec/test_codec_golden.py::test_offset_commit_v4_carries_retention_time",
                       "tests/codec/test_codec_golden.py::test_ignorable_field_at_a_version_without_it_is_dropped")),
            Behaviour("Expired offsets are removed with tombstones in `__consumer_offsets`: live offsets come back "
                      "after a restart, expired ones and their groups stay gone",
                      (_CLASSIC + "test_groups_and_offsets_survive_a_restart_and_expired_groups_stay_gone",)),
        ),
    ),
    # -- the rest, by number -------------------------------------------------------------------------------------
    Kip(
        74, "Add Fetch Response Size Limit in Bytes",
        "Adds a response-wide MaxBytes to Fetch (v3) and has the broker always return the first batch whole, even "
        "over the limits, so a consumer can always make progress.",
        Status.FULL,
        ("kafkamock.storage.log", "kafkamock.broker.handlers.fetch"),
        ("tests/broker/test_core.py::test_fetch_byte_limits_return_at_least_one_batch",
         "tests/storage/test_segments.py::test_read_limits_keep_the_first_batch_whole"),
    ),
    Kip(
        98, "Exactly Once Delivery and Transactional Messaging",
        "Adds idempotent and transactional producers: producer ids, epochs and sequence numbers on record batches, a "
        "transaction coordinator with its log, COMMIT/ABORT control markers, and read_committed fetches bounded by "
        "the last stable offset with an aborted-transaction index.",
        Status.FULL,
        ("kafkamock.broker.transactions.coordinator", "kafkamock.broker.transactions.state",
         "kafkamock.broker.producers", "kafkamock.records.control",
         "kafkamock.broker.handlers.add_partitions_to_txn", "kafkamock.broker.handlers.add_offsets_to_txn",
         "kafkamock.broker.handlers.end_txn", "kafkamock.broker.handlers.txn_offset_commit",
         "kafkamock.broker.handlers.write_txn_markers", "kafkamock.client.producer"),
        (_TXN + "test_the_state_table_refuses_what_kafka_refuses",
         _TXN + "test_commit_writes_markers_and_read_committed_waits_for_them",
         _TXN + "test_abort_is_reported_to_read_committed_readers",
         _TXN + "test_txn_offsets_are_pending_until_the_commit_marker",
         _TXN + "test_restart_keeps_open_and_finished_transactions",
         "tests/records/test_records.py::test_control_batches",
         "tests/interop/python/test_transactions_raw.py::test_markers_lso_and_aborted_index",
         "tests/interop/python/test_transactions_python_clients.py::"
         "test_confluent_consume_transform_produce_is_exactly_once_with_an_abort_in_the_middle",
         "tests/client/test_consumer.py::test_read_committed_skips_aborted_transactions_and_stops_at_the_open_one"),
    ),
    Kip(
        110, "Add Codec for ZStandard Compression",
        "Adds zstd as a record batch compression codec, accepted from Produce v7 and sent only to Fetch v10+.",
        Status.FULL,
        ("kafkamock.records.compression", "kafkamock.broker.log_validator", "kafkamock.broker.handlers.fetch"),
        ("tests/interop/python/test_legacy_formats.py::test_produce_v3_to_v6_refuses_zstd",
         "tests/interop/python/test_legacy_formats.py::test_legacy_fetch_of_zstd_batches_is_refused_per_partition",
         "tests/records/test_records_oracle.py::test_v2_compressed_payload_framing"),
    ),
    Kip(
        219, "Improve quota communication",
        "Has a throttled broker answer at once with throttle_time_ms and then read nothing more from that "
        "connection for that long, instead of delaying the response.",
        Status.FULL,
        ("kafkamock.broker.quotas", "kafkamock.server.connection"),
        ("tests/broker/test_quotas.py::test_produce_byte_rate_throttles_as_kafkas_rate_over_sample_windows",
         "tests/broker/test_quotas.py::test_throttled_fetch_returns_no_data_and_acks0_still_mutes",
         "tests/interop/python/test_limits.py::test_a_throttled_librdkafka_producer_reports_the_brokers_throttle_time"),
    ),
    Kip(
        227, "Introduce Incremental FetchRequests to Increase Partition Scalability",
        "Adds fetch sessions: the broker remembers a consumer's partitions, so later Fetch requests name only what "
        "changed and responses list only partitions with something new.",
        Status.FULL,
        ("kafkamock.broker.fetch_sessions", "kafkamock.broker.handlers.fetch"),
        ("tests/broker/test_core.py::test_incremental_fetch_sessions",
         "tests/differential/test_produce_fetch.py::test_fetch_sessions"),
    ),
    Kip(
        320, "Allow fetchers to detect and handle log truncation",
        "Lets consumers call OffsetForLeaderEpoch and send their last fetched epoch in Fetch, so the leader reports "
        "where that epoch ends (a diverging epoch) and a truncated log is detected.",
        Status.FULL,
        ("kafkamock.broker.handlers.offset_for_leader_epoch", "kafkamock.broker.handlers.fetch",
         "kafkamock.storage.log"),
        ("tests/broker/test_admin_handlers.py::test_offset_for_leader_epoch",
         "tests/broker/test_admin_handlers.py::test_offset_for_leader_epoch_new_epoch_without_records",
         "tests/storage/test_segments.py::test_leader_epoch_cache",
         "tests/differential/test_produce_fetch.py::test_offset_for_leader_epoch",
         "tests/differential/test_produce_fetch.py::test_fetch_edges"),
    ),
    Kip(
        345, "Introduce static membership protocol to reduce consumer rebalances",
        "Adds group.instance.id to JoinGroup, SyncGroup, Heartbeat, OffsetCommit and LeaveGroup, so a restarted "
        "member takes its old place without a rebalance and its previous incarnation is fenced.",
        Status.FULL,
        ("kafkamock.broker.groups.coordinator", "kafkamock.broker.groups.classic",
         "kafkamock.broker.handlers.join_group", "kafkamock.broker.handlers.leave_group",
         "kafkamock.broker.groups.consumer"),
        (_CLASSIC + "test_static_member_rejoins_with_a_new_id_and_the_old_one_is_fenced",
         _CLASSIC + "test_a_static_leader_rejoining_below_v9_keeps_the_generation_and_syncs_as_a_follower",
         _CLASSIC + "test_a_static_rejoin_that_changes_the_selected_protocol_rebalances",
         _CONSUMER_GROUPS + "test_static_member_leaves_for_now_and_a_new_instance_takes_over",
         "tests/differential/test_groups_classic.py::test_static_member_leave_by_instance",
         "tests/client/test_admin.py::test_remove_a_static_member_from_a_classic_group"),
    ),
    Kip(
        368, "Allow SASL Connections to Periodically Re-Authenticate",
        "Gives an authenticated SASL session a lifetime (SaslAuthenticate v1's SessionLifetimeMs): the broker closes "
        "an expired connection unless the client authenticated again on it, with the same mechanism and principal.",
        Status.FULL,
        ("kafkamock.broker.security.session", "kafkamock.broker.security.mechanisms",
         "kafkamock.broker.handlers.sasl_authenticate", "kafkamock.broker.handlers.sasl_handshake",
         "kafkamock.broker.core", "kafkamock.client.connection"),
        ("tests/broker/test_security_core.py::test_plain_success_sets_the_principal_and_session_lifetime",
         "tests/broker/test_security_core.py::test_expiry_and_reauthentication_keep_mechanism_and_principal",
         "tests/broker/test_security_core.py::test_no_reauthentication_without_a_session_lifetime",
         "tests/broker/test_security_core.py::test_oauthbearer_session_is_capped_by_the_token",
         "tests/interop/python/test_security_clients.py::test_expired_session_closes_unless_reauthenticated",
         "tests/interop/python/test_security_clients.py::test_librdkafka_reauthenticates_on_the_same_connection",
         "tests/client/test_client_security_live.py::test_the_client_re_authenticates_before_its_session_ends"),
    ),
    Kip(
        394, "Require member.id for initial join group request",
        "Has JoinGroup v4+ answer a member without an id MEMBER_ID_REQUIRED with an id to join with, so a client "
        "that retries does not leave unknown members behind; an id never joined with expires.",
        Status.FULL,
        ("kafkamock.broker.groups.coordinator", "kafkamock.broker.groups.classic",
         "kafkamock.broker.handlers.join_group"),
        ("tests/interop/python/test_groups.py::test_member_id_required_then_rejoin_with_the_given_id",
         _CLASSIC + "test_members_join_after_the_initial_delay_and_the_leader_assigns",
         _CLASSIC + "test_a_failed_first_join_leaves_an_empty_group",
         "tests/differential/test_groups_classic.py::test_member_id_required_then_expires"),
    ),
    Kip(
        429, "Kafka Consumer Incremental Rebalance Protocol",
        "Adds cooperative rebalancing for the classic protocol: members keep their partitions through a rebalance "
        "and give up only those the new assignment moves, which a second rebalance then assigns.",
        Status.FULL,
        ("kafkamock.client.consumer.assignors", "kafkamock.client.consumer.classic"),
        ("tests/client/test_consumer.py::test_two_members_split_the_partitions_with_each_assignor",
         _KIP983 + "test_delayed_revoke_in_a_cooperative_rebalance_moves_the_partition_one_poll_later",
         "tests/interop/java/test_java_consumer_mixed.py::test_a_kafkamock_and_a_java_member_share_a_group"),
        note="A client-side protocol: kafkamock's own Consumer offers cooperative-sticky; the broker's classic "
             "groups carry any member's protocol as Kafka's do.",
    ),
    Kip(
        455, "Create an Administrative API for Replica Reassignment",
        "Adds AlterPartitionReassignments and ListPartitionReassignments to move partitions to new replica lists, "
        "follow the moves in progress and cancel them.",
        Status.FULL,
        ("kafkamock.broker.cluster", "kafkamock.broker.handlers.alter_partition_reassignments",
         "kafkamock.broker.handlers.list_partition_reassignments"),
        (_CLUSTER_APIS + "test_reassignments_complete_at_once_as_kafka_ends_them",
         _CLUSTER_APIS + "test_reassignment_to_a_stopped_node_stays_in_progress_until_it_starts",
         _CLUSTER_APIS + "test_cancelling_a_reassignment_reverts_it",
         _CLUSTER_APIS + "test_reassignment_validation",
         _CLUSTER_APIS + "test_reassignment_state_survives_a_restart",
         "tests/differential/test_cluster_apis.py::test_reassign_partition"),
        note="A reassignment changes the cluster's state directly (replicas are always in sync, there is no "
             "replication traffic), so it completes at once unless a target node is stopped.",
    ),
    Kip(
        467, "Augment ProduceResponse error messaging for specific culprit records",
        "Lets a ProduceResponse name the records of a batch that were refused, with their index and a message, so "
        "a client fails only those records.",
        Status.FULL,
        ("kafkamock.broker.log_validator", "kafkamock.broker.handlers.produce"),
        ("tests/broker/test_produce_validation.py::test_compacted_topics_refuse_records_without_a_key",
         "tests/differential/test_produce_fetch.py::test_produce_record_errors_on_a_compacted_topic",
         "tests/differential/test_produce_fetch.py::test_produce_record_errors_for_timestamps_and_keys",
         "tests/differential/test_clients.py::test_librdkafka_fails_only_the_keyless_records_on_a_compacted_topic"),
    ),
    Kip(
        500, "Replace ZooKeeper with a Self-Managed Metadata Quorum",
        "Replaces ZooKeeper with a Raft-based controller quorum that keeps the cluster's metadata in a log.",
        Status.NOT_SERVED,
        ("kafkamock.broker.handlers.unregister_broker",),
        (),
        note="Named only as where UnregisterBroker comes from (that API is served: see the handler). kafkamock has "
             "neither ZooKeeper nor a KRaft metadata log: cluster metadata is a JSON file, and the quorum that "
             "DescribeQuorum shows is emulated (see KIP-595).",
    ),
    Kip(
        511, "Collect and Expose Client's Name and Version in the Brokers",
        "Adds the client's software name and version to ApiVersions (v3), and has a broker answer an ApiVersions "
        "of a version it does not serve with UNSUPPORTED_VERSION in a v0 body that lists its ranges, so the "
        "client can retry at a version both know.",
        Status.FULL,
        ("kafkamock.broker.handlers.api_versions", "kafkamock.server.connection"),
        ("tests/differential/test_bad_input.py::test_api_versions_client_software",
         "tests/differential/test_api_versions.py::test_api_versions_unsupported_version_answer",
         "tests/interop/python/test_bad_input.py::test_unsupported_api_versions_version_gets_a_v0_answer",
         "tests/interop/python/test_emulated_releases.py::"
         "test_api_versions_above_the_release_gets_the_v0_answer_with_its_ranges"),
    ),
    Kip(
        518, "Allow listing consumer groups per state",
        "Adds a states filter to ListGroups (v4) and each group's state to its answer.",
        Status.FULL,
        ("kafkamock.broker.handlers.list_groups",),
        ("tests/differential/test_groups_classic.py::test_list_groups_each_version",
         "tests/client/test_admin.py::test_consumer_group_calls_on_a_librdkafka_group"),
    ),
    Kip(
        534, "Retain tombstones and transaction markers for approximately delete.retention.ms milliseconds",
        "Has the log cleaner stamp a delete horizon into the header of a batch whose tombstones it keeps, so "
        "tombstones (and transaction markers) go delete.retention.ms after the first pass, across restarts.",
        Status.PARTIAL,
        ("kafkamock.storage.cleaner",),
        ("tests/storage/test_compaction.py::test_tombstones_stay_for_delete_retention_ms_after_the_first_pass",
         "tests/storage/test_compaction.py::test_a_tombstone_horizon_survives_a_restart",
         "tests/storage/test_compaction.py::test_control_batches_stay"),
        note="Tombstones follow the KIP; control batches are never cleaned: transaction markers stay in a "
             "compacted log for good, and the records of aborted transactions are not discarded by compaction.",
    ),
    Kip(
        584, "Versioning scheme for features",
        "Adds cluster feature flags with supported and finalized levels, listed by ApiVersions and changed with "
        "UpdateFeatures.",
        Status.FULL,
        ("kafkamock.broker.features", "kafkamock.broker.handlers.update_features",
         "kafkamock.broker.handlers.api_versions"),
        (_CLUSTER_APIS + "test_update_features_refusals",
         _CLUSTER_APIS + "test_update_features_takes_effect",
         _CLUSTER_APIS + "test_updated_features_survive_a_restart",
         "tests/client/test_admin.py::test_describe_cluster_and_features",
         "tests/differential/test_cluster_apis.py::test_update_features_take_effect"),
    ),
    Kip(
        588, "Allow producers to recover gracefully from transaction timeouts",
        "Adds PRODUCER_FENCED, distinct from INVALID_PRODUCER_EPOCH, for InitProducerId v4+, EndTxn v2+ and the "
        "other transaction calls, so a producer whose transaction timed out can abort and recover with its old "
        "epoch rather than treat it as fatal.",
        Status.FULL,
        ("kafkamock.broker.transactions.coordinator", "kafkamock.broker.handlers.init_producer_id",
         "kafkamock.broker.handlers.end_txn"),
        (_TXN + "test_any_other_epoch_or_producer_id_is_fenced",
         _TXN + "test_timed_out_transaction_is_aborted_and_its_producer_fenced",
         _TXN_DIFF + "test_init_producer_id_kip360_fenced",
         _TXN_DIFF + "test_timed_out_transaction_is_aborted_with_a_bumped_epoch"),
    ),
    Kip(
        595, "A Raft Protocol for the Metadata Quorum",
        "Adds Raft to Kafka for the metadata quorum (Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch of the metadata "
        "log) and DescribeQuorum for admins.",
        Status.PARTIAL,
        ("kafkamock.broker.handlers.describe_quorum", "kafkamock.broker.quorum"),
        (_CLUSTER_APIS + "test_describe_quorum_every_node_a_voter",
         _CLUSTER_APIS + "test_describe_quorum_follows_the_controller",
         _CLUSTER_APIS + "test_describe_quorum_other_partitions_are_unknown"),
        note="DescribeQuorum is served over an emulated static quorum (every node a voter, the controller its "
             "leader, one metadata record per change); there is no Raft underneath, and the controllers' own RPCs "
             "(Vote, BeginQuorumEpoch, EndQuorumEpoch, FetchSnapshot) are not served.",
    ),
    Kip(
        612, "Ability to Limit Connection Creation Rate on Brokers",
        "Lets a broker limit how fast it accepts connections, broker-wide, per listener "
        "(max.connection.creation.rate) and per IP (the connection_creation_rate quota), throttling the excess.",
        Status.PARTIAL,
        ("kafkamock.broker.connections", "kafkamock.broker.quotas"),
        ("tests/broker/test_quotas.py::test_alter_and_describe_with_every_match_type",
         "tests/broker/test_quotas.py::test_alter_errors_per_entry_and_validate_only"),
        note="The per-IP connection_creation_rate quota is enforced (a connection over it is closed once its "
             "throttle time has passed); max.connection.creation.rate, broker-wide or per listener, is refused at "
             "any value but its default. No test yet drives connections over the IP rate.",
    ),
    Kip(
        664, "Provide tooling to detect and abort hanging transactions",
        "Adds DescribeProducers, DescribeTransactions and ListTransactions (the shipped form of KIP-360's "
        "DescribeTransactionState), and lets an admin abort a hanging transaction with WriteTxnMarkers.",
        Status.FULL,
        ("kafkamock.broker.handlers.describe_producers", "kafkamock.broker.handlers.describe_transactions",
         "kafkamock.broker.handlers.list_transactions", "kafkamock.broker.handlers.write_txn_markers"),
        (_TXN + "test_describe_and_list_transactions_and_describe_producers",
         _TXN + "test_write_txn_markers_aborts_a_hanging_transaction",
         _TXN + "test_describe_transactions_errors_carry_zeros_and_partitions_come_in_hash_order",
         _TXN + "test_describe_producers_topic_errors_carry_kafkas_messages",
         "tests/client/test_admin.py::test_an_open_transaction_described_listed_and_aborted",
         "tests/interop/java/test_java_transactions.py::test_describe_and_list_transactions_and_describe_producers"),
    ),
    Kip(
        684, "Support mutual TLS authentication on SASL_SSL listeners",
        "Lets a SASL_SSL listener ask for client certificates, through the listener-prefixed ssl.client.auth only, "
        "while SASL still names the principal.",
        Status.FULL,
        ("kafkamock.server.tls",),
        ("tests/interop/python/test_security_clients.py::test_ssl_mutual_tls_principal_from_the_certificate",
         "tests/interop/python/test_security_clients.py::test_sasl_ssl_scram_sha_512_confluent_and_kafka_python"),
        note="The cited tests cover mutual TLS on an SSL listener and SASL over TLS; none yet sets ssl.client.auth "
             "on a SASL_SSL listener to check that only the listener-prefixed setting counts there.",
    ),
    Kip(
        714, "Client metrics and observability",
        "Adds client telemetry: GetTelemetrySubscriptions and PushTelemetry, with client-metrics config resources "
        "saying what clients push.",
        Status.NOT_SERVED,
        ("kafkamock.broker.handlers.list_config_resources",),
        (_CLUSTER_APIS + "test_list_config_resources",),
        note="kafkamock has no client telemetry: the telemetry APIs are not served, and ListConfigResources (v0 "
             "lists client-metrics resources only) lists none.",
    ),
    Kip(
        848, "The Next Generation of the Consumer Rebalance Protocol",
        "Moves consumer group rebalancing to the broker: members send ConsumerGroupHeartbeat with their "
        "subscriptions (names or an RE2 regular expression), a server-side assignor computes a target, and each "
        "member reconciles towards it by member epochs, revoking before anything is assigned.",
        Status.FULL,
        ("kafkamock.broker.groups.consumer", "kafkamock.broker.groups.reconciliation",
         "kafkamock.broker.groups.assignors", "kafkamock.broker.groups.coordinator",
         "kafkamock.broker.groups.group_configs", "kafkamock.broker.re2_pattern",
         "kafkamock.broker.handlers.consumer_group_heartbeat", "kafkamock.broker.handlers.consumer_group_describe",
         "kafkamock.client.consumer.consumer_protocol", "kafkamock.client.admin"),
        (_CONSUMER_GROUPS + "test_join_assigns_everything_to_the_first_member",
         _CONSUMER_GROUPS + "test_a_second_member_gets_partitions_only_after_the_first_revokes_them",
         _CONSUMER_GROUPS + "test_session_timeout_fences_a_silent_member",
         _CONSUMER_GROUPS + "test_a_member_that_never_revokes_is_fenced_after_its_rebalance_timeout",
         _CONSUMER_GROUPS + "test_regex_subscriptions_and_new_partitions_bump_the_epoch",
         _CONSUMER_GROUPS + "test_a_classic_member_of_a_consumer_group_rejoins_only_when_the_target_passes_it",
         _CONSUMER_GROUPS + "test_groups_replay_after_a_restart",
         "tests/broker/test_re2_pattern.py::test_catastrophic_patterns_are_answered",
         "tests/interop/python/test_groups.py::test_consumer_protocol_heartbeats_share_partitions",
         "tests/interop/java/test_java_groups.py::test_consumer_group_kip848_two_java_members_share_then_hand_over"),
    ),
    Kip(
        853, "KRaft Controller Membership Changes",
        "Makes the KRaft voter set dynamic: AddRaftVoter and RemoveRaftVoter change it once kraft.version is 1.",
        Status.PARTIAL,
        ("kafkamock.broker.handlers.add_raft_voter", "kafkamock.broker.handlers.remove_raft_voter",
         "kafkamock.broker.features"),
        (_CLUSTER_APIS + "test_raft_voters_cannot_change_in_a_static_quorum",
         _CLUSTER_APIS + "test_update_features_kraft_version_unchanged_is_fine",
         "tests/differential/test_cluster_apis.py::test_add_raft_voter"),
        note="kafkamock's emulated quorum is static: kraft.version stays 0, so AddRaftVoter and RemoveRaftVoter "
             "give Kafka's answers for a static quorum (their checks, then the refusal) and the voters never change.",
    ),
    Kip(
        890, "Transactions Server-Side Defense",
        "Has the broker verify that a partition is in the producer's transaction before its first transactional "
        "write (part 1), then lets Produce v12 and TxnOffsetCommit v5 add partitions themselves and EndTxn v5 end "
        "every transaction with a new epoch (part 2, transaction.version 2).",
        Status.FULL,
        ("kafkamock.broker.transactions.coordinator", "kafkamock.broker.transactions.state",
         "kafkamock.broker.producers", "kafkamock.broker.features", "kafkamock.broker.handlers.produce",
         "kafkamock.broker.handlers.add_partitions_to_txn", "kafkamock.broker.handlers.txn_offset_commit",
         "kafkamock.broker.handlers.end_txn", "kafkamock.client.producer"),
        (_TXN + "test_verification_tells_each_client_what_it_knows",
         _TXN + "test_kip890_part2_implicit_adds_and_the_feature_level",
         _TXN + "test_kip890_v5_ends_with_a_new_epoch_and_a_retry_succeeds",
         _TXN + "test_end_txn_follows_kafkas_two_tables",
         _TXN + "test_write_txn_markers_of_transaction_version_2_need_a_newer_epoch",
         _TXN_DIFF + "test_tv2_produce_adds_partitions_and_end_txn_bumps_the_epoch",
         _TXN_DIFF + "test_tv2_commit_after_abort_and_double_commit",
         "tests/client/test_producer_transactions.py::test_transaction_version_1_adds_partitions_explicitly",
         "tests/interop/python/test_transactions_raw.py::test_bad_transaction_requests"),
    ),
    Kip(
        896, "Remove old client protocol API versions in Kafka 4.0",
        "Removes the protocol versions clients before 2.1 used, among them Produce v0-2 and Fetch v0-3 and with "
        "them the magic 0/1 message formats on the wire.",
        Status.FULL,
        ("kafkamock.schema.loader", "kafkamock.broker.config", "kafkamock.broker.legacy", "kafkamock.records.legacy",
         "kafkamock.broker.kafka_releases"),
        ("tests/interop/python/test_legacy_formats.py::test_kafka_4_lists_produce_from_v0_but_serves_v3_up",
         "tests/broker/test_kafka_releases.py::test_older_releases_have_their_own_protocol_and_features",
         "tests/interop/python/test_legacy_formats.py::test_produce_v3_plus_refuses_legacy_message_sets",
         "tests/interop/python/test_kafka_python.py::test_api_version_0_10_producer_is_refused_like_kafka_4",
         "tests/codec/test_codec_legacy.py::test_the_legacy_versions_are_produce_0_to_2_and_fetch_0_to_3",
         "tests/interop/python/test_legacy_formats.py::"
         "test_old_kafka_python_produces_magic_0_and_1_through_produce_v1_and_v2"),
        note="As Kafka 4.x by default; kafkamock.legacy.protocol.enable (or --kafka-version 2.8 / 3.9) also "
             "serves the removed Produce and Fetch versions, as Kafka 3.x did. The other removed versions are not "
             "decoded, so a broker presenting itself as 2.8 or 3.9 leaves them out of its ranges.",
    ),
    Kip(
        939, "Support Participation in 2PC",
        "Lets a transactional producer take part in an external two-phase commit (InitProducerId v6's Enable2Pc and "
        "KeepPreparedTxn, transaction.two.phase.commit.enable).",
        Status.NOT_SERVED,
        ("kafkamock.broker.handlers.init_producer_id", "kafkamock.broker.config"),
        (_TXN_DIFF + "test_init_producer_id_v6_is_not_served",),
        note="Named where it is refused: InitProducerId v6's two-phase commit fields get Kafka's answers for a "
             "broker with transaction.two.phase.commit.enable off, and kafkamock refuses to turn that setting on.",
    ),
    Kip(
        951, "Leader discovery optimisations for the client",
        "Has NOT_LEADER_OR_FOLLOWER answers in Produce (v10+) and Fetch (v12+/v16+) carry the current leader and its "
        "endpoint, so a client goes there without a metadata round trip.",
        Status.FULL,
        ("kafkamock.broker.cluster", "kafkamock.broker.handlers.produce", "kafkamock.broker.handlers.fetch"),
        ("tests/broker/test_cluster.py::test_only_the_leader_serves_and_says_who_leads",
         "tests/broker/test_cluster.py::test_leader_epoch_fencing_comes_before_the_leader_check",
         _SHARE_FETCH + "test_a_node_that_does_not_lead_the_partition_names_the_leader",
         "tests/interop/java/test_failover.py::test_java_and_librdkafka_clients_follow_leaders_through_moves_stops_"
         "and_starts"),
    ),
    Kip(
        966, "Eligible Leader Replicas",
        "Keeps a set of eligible leader replicas beside the ISR so a clean leader can be elected after the ISR "
        "shrank, and adds DescribeTopicPartitions, which reports them with paging.",
        Status.PARTIAL,
        ("kafkamock.broker.handlers.describe_topic_partitions",),
        ("tests/broker/test_admin_handlers.py::test_describe_topic_partitions_lists_every_topic_sorted",
         "tests/broker/test_admin_handlers.py::test_describe_topic_partitions_pages_with_a_cursor",
         "tests/broker/test_admin_handlers.py::test_describe_topic_partitions_errors"),
        note="DescribeTopicPartitions is served with Kafka's paging; the eligible-leader-replica lists are always "
             "empty (replicas share one log and are always in sync), and eligible.leader.replicas.version is only "
             "recorded.",
    ),
    Kip(
        1043, "Administration of groups",
        "Makes group administration aware of group types: admin tools list groups of every type, and DescribeGroups "
        "v6 answers GROUP_ID_NOT_FOUND for a group that does not exist or is not a classic group.",
        Status.FULL,
        ("kafkamock.broker.handlers.describe_groups", "kafkamock.broker.handlers.list_groups"),
        (_CLASSIC + "test_errors_kafka_answers",
         _CONSUMER_GROUPS + "test_group_max_size_and_protocol_exclusivity",
         "tests/differential/test_groups_consumer.py::test_consumer_group_describe_errors"),
    ),
    Kip(
        1050, "Consistent error handling for Transactions",
        "Adds TRANSACTION_ABORTABLE for transactional writes the client can recover from by aborting, answered to "
        "Produce v11+ and TxnOffsetCommit v4+ (older clients keep their old codes).",
        Status.FULL,
        ("kafkamock.broker.handlers.produce", "kafkamock.broker.handlers.txn_offset_commit"),
        (_TXN + "test_kip890_part2_implicit_adds_and_the_feature_level",
         _TXN + "test_verification_tells_each_client_what_it_knows"),
    ),
    Kip(
        1071, "Streams Rebalance Protocol",
        "Adds streams groups, rebalanced by the broker through StreamsGroupHeartbeat and described by "
        "StreamsGroupDescribe, with their own group configs.",
        Status.NOT_SERVED,
        ("kafkamock.broker.config", "kafkamock.broker.groups.group_configs"),
        ("tests/broker/test_group_configs.py::test_bad_group_configs_get_kafkas_codes",),
        note="kafkamock serves no streams groups: the Streams* APIs and the streams.version feature are absent, "
             "group.coordinator.rebalance.protocols may not name streams, and streams.* group configs are described "
             "as Kafka describes them but refused when set.",
    ),
    Kip(
        1101, "Trigger rebalance on rack topology changes",
        "Keeps a hash of the subscribed topics' metadata (partitions and the racks of their replicas) in a consumer "
        "group, so a change of it bumps the group epoch and triggers a new assignment.",
        Status.PARTIAL,
        ("kafkamock.broker.groups.consumer",),
        (_CONSUMER_GROUPS + "test_regex_subscriptions_and_new_partitions_bump_the_epoch",),
        note="A change of a subscribed topic's id or partition count bumps the epoch; racks are not hashed (every "
             "node has the same broker.rack, so there is no rack topology to change), and the hash is not Kafka's, "
             "so the metadata hash written in ConsumerGroupMetadata records differs from Kafka's.",
    ),
    Kip(
        1142, "Allow to list non-existent group which has dynamic config",
        "Turns ListClientMetricsResources into ListConfigResources (v1 takes resource types), so groups that have "
        "configs but do not exist, topics, brokers and broker loggers can be listed.",
        Status.FULL,
        ("kafkamock.broker.handlers.list_config_resources",),
        (_CLUSTER_APIS + "test_list_config_resources",
         "tests/differential/test_cluster_apis.py::test_list_config_resources",
         "tests/interop/java/test_java_cluster_apis.py::test_java_admin_lists_config_resources"),
    ),
    Kip(
        1152, "Add transactional ID pattern filter to ListTransactions API",
        "Adds a transactional id pattern, an RE2/J regular expression that must match the whole id, to "
        "ListTransactions (v2).",
        Status.FULL,
        ("kafkamock.broker.handlers.list_transactions", "kafkamock.broker.re2_pattern"),
        (_TXN + "test_describe_and_list_transactions_and_describe_producers",
         _TXN_DIFF + "test_list_transactions_pattern",
         "tests/broker/test_re2_pattern.py::test_as_re2j_answers",
         "tests/interop/python/test_hostile_requests.py::"
         "test_a_catastrophic_transactional_id_pattern_holds_no_other_client"),
    ),
    Kip(
        1206, "Strict max fetch records in share fetch",
        "Adds ShareAcquireMode to ShareFetch v2: record_limit never acquires more than MaxRecords, where "
        "batch_optimized (the default) completes the batches it started.",
        Status.FULL,
        ("kafkamock.broker.handlers.share_fetch", "kafkamock.broker.share.partition",
         "kafkamock.client.share_consumer"),
        (_SHARE_FETCH + "test_record_limit_mode_max_records_and_batch_size",
         _SHARE_PARTITION + "test_record_limits_locks_batch_sizes_and_member_release",
         "tests/codec/test_codec_golden.py::test_share_fetch_v2_golden_both_ways"),
    ),
    Kip(
        1226, "Introducing Share Partition Lag Persistence and Retrieval",
        "Adds each share-partition's lag (records still to be delivered or in flight) to DescribeShareGroupOffsets "
        "v1, computed from the persisted start offset and delivery-complete count.",
        Status.FULL,
        ("kafkamock.broker.handlers.describe_share_group_offsets", "kafkamock.broker.share.manager"),
        (_SHARE_FETCH + "test_describe_alter_and_delete_share_group_offsets",
         _SHARE_FETCH + "test_records_after_the_state_are_acquired_around_its_control_batches"),
    ),
    Kip(
        1240, "Additional group configurations for share groups",
        "Adds per-group share.delivery.count.limit, share.partition.max.record.locks and "
        "share.renew.acknowledge.enable, bounded by broker configs, taking effect on live share-partitions.",
        Status.FULL,
        ("kafkamock.broker.groups.group_configs", "kafkamock.broker.share.manager",
         "kafkamock.broker.share.partition"),
        (_SHARE_FETCH + "test_group_configs_set_the_delivery_limit_the_record_locks_and_renewing",
         "tests/broker/test_group_configs.py::test_kip_1240_share_configs_are_validated_as_kafka_validates_them",
         _SHARE_DIFF + "test_renew_disabled_by_group_config"),
    ),
    Kip(
        1251, "Assignment epochs for consumer groups",
        "Records the epoch at which each partition was assigned to a KIP-848 member, so an offset commit with an "
        "older member epoch is accepted for the partitions assigned at or before it and refused otherwise.",
        Status.FULL,
        ("kafkamock.broker.groups.consumer", "kafkamock.broker.groups.reconciliation",
         "kafkamock.broker.groups.coordinator", "kafkamock.broker.handlers.offset_commit"),
        (_CONSUMER_GROUPS + "test_offset_commit_and_fetch_check_the_member_epoch",
         "tests/differential/test_offsets.py::test_consumer_member_commits_and_fetches",
         "tests/codec/test_coordinator_records.py::test_current_member_assignment_epochs_null_empty_and_set",
         "tests/interop/python/test_groups.py::test_consumer_protocol_heartbeats_share_partitions"),
    ),
)


# -- docs/kips.md -----------------------------------------------------------------------------------------------------

def _link(kip: Kip) -> str:
    return f"[KIP-{kip.number}]({kip.url})"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _section(kip: Kip) -> list[str]:
    lines = [f"## KIP-{kip.number}: {kip.title}", "",
             f"{_link(kip)}, status: **{kip.status.value}**", "",
             kip.changes, ""]
    if kip.note:
        lines += [f"Note: {kip.note}", ""]
    lines += ["Modules:", ""]
    lines += [f"- `{module}`" for module in kip.modules] + [""]
    if kip.tests:
        lines += ["Tests:", ""]
        lines += [f"- `{test}`" for test in kip.tests] + [""]
    if kip.behaviours:
        lines += ["Behaviours:", ""]
        for number, behaviour in enumerate(kip.behaviours, 1):
            lines.append(f"{number}. {behaviour.what}")
            lines += [f"   - `{test}`" for test in behaviour.tests]
        lines.append("")
    return lines


def render() -> str:
    """The Markdown of docs/kips.md."""
    counts = {status: sum(k.status is status for k in KIPS) for status in Status}
    lines = [
        "# KIP conformance",
        "",
        "Generated from `kafkamock/kips.py` by `python -m kafkamock.kips > docs/kips.md`; do not edit it by hand. "
        "`tests/test_kips.py` fails when this file and the entries drift apart, when the code names a KIP without "
        "an entry, or when an entry names a module or a test that does not exist. Status **full**: kafkamock serves "
        "what the KIP specifies for clients; **partial**: the note says what is not served; **not served**: the "
        "code only names the KIP, and the note says why. The first five are the KIPs kafkamock was specified "
        "against, each with its behaviours; the rest follow by number.",
        "",
        f"{len(KIPS)} KIPs: " + ", ".join(f"{counts[s]} {s.value}" for s in Status) + ".",
        "",
        "| KIP | Title | Status | Modules (in `kafkamock`) | Tests |",
        "|---|---|---|---|---|",
    ]
    for kip in KIPS:
        modules = ", ".join(f"`{m.removeprefix('kafkamock.')}`" for m in kip.modules)
        lines.append(f"| {_link(kip)} | {_cell(kip.title)} | {kip.status.value} | {modules} | "
                     f"{len(kip.all_tests())} |")
    lines.append("")
    for kip in KIPS:
        lines += _section(kip)
    return "\n".join(lines).rstrip("\n") + "\n"


if __name__ == "__main__":
    print(render(), end="")
