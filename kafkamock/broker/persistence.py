"""The cluster's metadata saved on every change and brought back at start (what Kafka keeps in its
``__cluster_metadata`` log, kept here as one snapshot): topics, partitions and leaders (``ClusterMetadata.snapshot``), the
dynamic broker configs of the cluster and of each node, and the parts each component persists (group configs,
client quotas, ACLs, SCRAM credentials, finalized features, the producer-id block). Partition logs recover in the
storage; ``recover_producer_state`` rebuilds each partition's producer state from its snapshot file and log.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from kafkamock.broker.cluster import ClusterMetadata, Partition
from kafkamock.broker.config import BrokerConfig
from kafkamock.broker.node import Node
from kafkamock.storage import DiskStorage, MemoryStorage, PartitionLog

log = logging.getLogger("kafkamock.broker")


class Persisted(Protocol):
    """A component that keeps part of the metadata snapshot."""

    def snapshot(self) -> Any: ...

    def restore(self, saved: Any) -> None: ...


class MetadataPersistence:
    """Saves the metadata snapshot on every change (``changed``) and restores it at start (``restore``).

    ``parts`` maps each snapshot key to its component and the value to restore when the snapshot lacks the key;
    ``optional`` parts are saved only while ``worth_saving`` says so (features: only once they were changed).
    ``after_change`` runs on every change, saved or not (the quorum's log end, timers whose interval moved)."""

    def __init__(self, storage: MemoryStorage | DiskStorage, metadata: ClusterMetadata, config: BrokerConfig,
                 nodes: Sequence[Node], parts: Mapping[str, tuple[Persisted, Any]], *,
                 after_change: Callable[[], None], worth_saving: Mapping[str, Callable[[], bool]] | None = None
                 ) -> None:
        self.storage, self.metadata, self.config, self.nodes = storage, metadata, config, nodes
        self.parts, self.after_change = parts, after_change
        self.worth_saving = worth_saving or {}
        self.restoring = False

    def changed(self) -> None:
        """Topics, partitions, leaders or configs changed: save the snapshot (a no-op while restoring it)."""
        if self.restoring:
            return
        self.after_change()
        if not self.storage.keeps_metadata:
            return
        snapshot = self.metadata.snapshot()
        for key, (part, _) in self.parts.items():
            saving = self.worth_saving.get(key)
            if saving is None or saving():
                snapshot[key] = part.snapshot()
        snapshot["broker_configs"] = {"": self.config.dynamic_layer(cluster_default=True)}
        for node in self.nodes:
            snapshot["broker_configs"][str(node.node_id)] = node.config.dynamic_layer(cluster_default=False)
        self.storage.save_metadata(snapshot)

    def restore(self, partition_restored: Callable[[Partition], None]) -> None:
        """Bring back what the storage holds (a new cluster writes its first snapshot instead); each partition of
        the restored topics is handed to ``partition_restored`` (log settings, producer state, share state)."""
        snapshot = self.storage.load_metadata()
        if snapshot is None:
            # A new cluster: Kafka 4.3's controller writes a cluster-level min.insync.replicas when it activates
            # (eligible leader replicas are on), taken from its own setting.
            self.config.replace_dynamic({"min.insync.replicas": self.config["min.insync.replicas"]},
                                        cluster_default=True)
            self.changed()
            return
        self.restoring = True
        try:
            configs = snapshot.get("broker_configs", {})
            self.config.replace_dynamic(configs.get("", {}), cluster_default=True)
            for node in self.nodes:
                node.config.replace_dynamic(configs.get(str(node.node_id), {}), cluster_default=False)
            self.metadata.restore(snapshot)
            self.storage.remove_strays({(t.name, p.index) for t in self.metadata.topics.values() for p in t.partitions})
            for key, (part, missing) in self.parts.items():
                part.restore(snapshot.get(key, missing))
            for topic in self.metadata.topics.values():
                for partition in topic.partitions:
                    partition_restored(partition)
        finally:
            self.restoring = False
        self.changed()
        log.info("restored %d topic(s) from %s", len(self.metadata.topics), getattr(self.storage, "root", "memory"))


def recover_producer_state(partition: Partition) -> None:
    """A partition's producer state after a restart: its newest snapshot file, then the batches after it (each
    header, and the marker a control batch holds), as Kafka's ProducerStateManager loads it."""
    plog = partition.log
    producer_snapshot = plog.store.load_producer_snapshot(plog.log_end_offset)
    if producer_snapshot is not None:
        partition.producers.load(producer_snapshot[1])
    for base_offset, header in plog.headers():
        partition.producers.replay(header, base_offset, _marker(plog, base_offset, header))
    partition.producers.changed = False


def _marker(plog: PartitionLog, base_offset: int, header: bytes | bytearray | memoryview) -> tuple[bool, int] | None:
    """(commit, coordinator epoch) of the transaction marker a stored control batch holds, else None."""
    from kafkamock.records import decode_batches, decode_control
    from kafkamock.records.layout import CONTROL_BIT, HEADER

    if not HEADER.unpack_from(header, 0)[5] & CONTROL_BIT:
        return None
    for stored in plog.batches(base_offset, base_offset + 1):
        try:
            for batch in decode_batches(stored.data):
                for rec in batch.records:
                    kind, value = decode_control(rec.key, rec.value)
                    if kind in ("COMMIT", "ABORT"):
                        return kind == "COMMIT", value.coordinator_epoch
        except Exception as exc:  # noqa: BLE001 - a corrupt control batch is skipped, as recovery would
            log.warning("control batch at offset %d unreadable: %s", base_offset, exc)
        break
    return None
