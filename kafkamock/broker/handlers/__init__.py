"""One module per API, named after it (kfake's layout): ``handlers/produce.py`` holds Produce and nothing else.

Each module has ``API_KEY`` and ``handle(broker, request)``; ``BY_KEY`` is what the broker advertises.
"""

from __future__ import annotations

from types import ModuleType

from kafkamock.broker.handlers import (
    alter_configs,
    api_versions,
    create_partitions,
    create_topics,
    delete_records,
    delete_topics,
    describe_cluster,
    describe_configs,
    describe_topic_partitions,
    fetch,
    find_coordinator,
    incremental_alter_configs,
    init_producer_id,
    list_offsets,
    metadata,
    offset_for_leader_epoch,
    produce,
)

MODULES: tuple[ModuleType, ...] = (
    api_versions, create_topics, fetch, find_coordinator, init_producer_id, list_offsets, metadata, produce,
    delete_topics, create_partitions, delete_records, offset_for_leader_epoch, describe_configs, alter_configs,
    incremental_alter_configs, describe_cluster, describe_topic_partitions,
)
BY_KEY: dict[int, ModuleType] = {m.API_KEY: m for m in MODULES}
