"""kafkamock's KRaft quorum, as DescribeQuorum shows it: every node is a voter of a static quorum (kraft.version 0,
as a cluster formatted with ``controller.quorum.voters`` has it, like the reference cluster's combined nodes), the
active controller (``ClusterMetadata.controller_id``) leads it, and the metadata log grows by one record per metadata
change. There is no Raft underneath: the leader's epoch starts at 1 and moves on each time another node becomes
the controller; a stopped voter keeps the log end offset and fetch time it had when it stopped. Voters cannot be
added or removed (AddRaftVoter and RemoveRaftVoter answer as Kafka does for a static quorum).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

from kafkamock.codec.messages import DescribeQuorumResponse

if TYPE_CHECKING:
    from kafkamock.broker.cluster import ClusterMetadata

METADATA_TOPIC = "__cluster_metadata"
METADATA_PARTITION = 0
ZERO_UUID = uuid.UUID(int=0)


class Quorum:
    def __init__(self, metadata: ClusterMetadata, now_ms: Callable[[], int]) -> None:
        self.metadata = metadata
        self.now_ms = now_ms
        self.high_watermark = 0
        self.leader, self.epoch = -1, 0
        self.stopped: dict[int, tuple[int, int]] = {}     # node id -> (log end offset, last fetch ms) when it stopped

    def appended(self) -> None:
        """A metadata change: one more record in the metadata log."""
        self.high_watermark += 1

    def observe(self) -> tuple[int, int]:
        """The leader and its epoch now (a new controller starts a new epoch)."""
        leader = self.metadata.controller_id
        if leader != self.leader:
            self.leader = leader
            if leader >= 0:
                self.epoch += 1
        return self.leader, self.epoch

    def node_stopped(self, node_id: int) -> None:
        self.stopped[node_id] = (self.high_watermark, self.now_ms())
        self.observe()

    def node_started(self, node_id: int) -> None:
        self.stopped.pop(node_id, None)
        self.observe()

    def voters(self) -> list[DescribeQuorumResponse.ReplicaState]:
        """Each voter's replica state, as the leader knows it (a zero directory id: a static quorum keeps none)."""
        now = self.now_ms()
        out = []
        for node_id in sorted(self.metadata.nodes):
            offset, fetched = self.stopped.get(node_id, (self.high_watermark, now))
            out.append(DescribeQuorumResponse.ReplicaState(
                replica_id=node_id, log_end_offset=offset, last_fetch_timestamp=fetched,
                last_caught_up_timestamp=fetched, replica_directory_id=ZERO_UUID))
        return out
