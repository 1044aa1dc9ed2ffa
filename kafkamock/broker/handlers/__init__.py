"""One module per API, named after it (kfake's layout): ``handlers/produce.py`` holds Produce and nothing else.

Each module has ``API_KEY`` and ``handle(broker, request)``; ``BY_KEY`` is what the broker advertises.
"""

from __future__ import annotations

from types import ModuleType

from kafkamock.broker.handlers import (
    add_offsets_to_txn,
    add_partitions_to_txn,
    alter_client_quotas,
    alter_configs,
    alter_share_group_offsets,
    alter_user_scram_credentials,
    api_versions,
    consumer_group_describe,
    consumer_group_heartbeat,
    create_acls,
    create_partitions,
    create_topics,
    delete_acls,
    delete_groups,
    delete_records,
    delete_share_group_offsets,
    delete_topics,
    describe_acls,
    describe_client_quotas,
    describe_cluster,
    describe_configs,
    describe_groups,
    describe_producers,
    describe_share_group_offsets,
    describe_topic_partitions,
    describe_transactions,
    describe_user_scram_credentials,
    end_txn,
    fetch,
    find_coordinator,
    heartbeat,
    incremental_alter_configs,
    init_producer_id,
    join_group,
    leave_group,
    list_groups,
    list_offsets,
    list_transactions,
    metadata,
    offset_commit,
    offset_delete,
    offset_fetch,
    offset_for_leader_epoch,
    produce,
    sasl_authenticate,
    sasl_handshake,
    share_acknowledge,
    share_fetch,
    share_group_describe,
    share_group_heartbeat,
    sync_group,
    txn_offset_commit,
    write_txn_markers,
)

MODULES: tuple[ModuleType, ...] = (
    api_versions, create_topics, fetch, find_coordinator, init_producer_id, list_offsets, metadata, produce,
    delete_topics, create_partitions, delete_records, offset_for_leader_epoch, describe_configs, alter_configs,
    incremental_alter_configs, describe_cluster, describe_topic_partitions, describe_acls, create_acls, delete_acls,
    join_group, sync_group, heartbeat, leave_group, offset_commit, offset_fetch, describe_groups, list_groups,
    delete_groups, offset_delete, consumer_group_heartbeat, consumer_group_describe,
    add_partitions_to_txn, add_offsets_to_txn, end_txn, write_txn_markers, txn_offset_commit, describe_producers,
    describe_transactions, list_transactions,
    share_group_heartbeat, share_group_describe, share_fetch, share_acknowledge,
    describe_share_group_offsets, alter_share_group_offsets, delete_share_group_offsets,
    describe_client_quotas, alter_client_quotas,
    sasl_handshake, sasl_authenticate, describe_user_scram_credentials, alter_user_scram_credentials,
)
BY_KEY: dict[int, ModuleType] = {m.API_KEY: m for m in MODULES}
