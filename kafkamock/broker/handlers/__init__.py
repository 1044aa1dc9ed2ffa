"""One module per API, named after it (kfake's layout): ``handlers/produce.py`` holds Produce and nothing else.

Each module has ``API_KEY`` and ``handle(broker, request)``; ``BY_KEY`` is what the broker advertises.
"""

from __future__ import annotations

from types import ModuleType

from kafkamock.broker.handlers import (
    api_versions,
    create_topics,
    fetch,
    find_coordinator,
    init_producer_id,
    list_offsets,
    metadata,
    produce,
)

MODULES: tuple[ModuleType, ...] = (
    api_versions, create_topics, fetch, find_coordinator, init_producer_id, list_offsets, metadata, produce,
)
BY_KEY: dict[int, ModuleType] = {m.API_KEY: m for m in MODULES}
