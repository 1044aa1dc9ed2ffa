"""What a coordinator may ask of the broker around it: a narrow, typed set of services.

The group, transaction and share coordinators receive a ``CoordinatorServices`` (the ``Cluster`` provides one)
instead of the whole broker, so none can reach into another coordinator, a handler or the I/O shell through it, and a
test can hand one a small fake. What one coordinator must tell another (a transaction marker reaching
``__consumer_offsets``, a group's config read by the share coordinator) is wired explicitly where the broker builds
them, never looked up at run time.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from kafkamock.broker.cluster import ClusterMetadata, Partition, Topic
    from kafkamock.broker.config import BrokerConfig
    from kafkamock.broker.node import Node
    from kafkamock.broker.timers import Timers


class CoordinatorServices(Protocol):
    """Clock, configuration, timers, cluster lookups, the internal append and the waiters' notification."""

    @property
    def config(self) -> BrokerConfig: ...

    @property
    def metadata(self) -> ClusterMetadata: ...

    @property
    def timers(self) -> Timers: ...

    def now_ms(self) -> int: ...

    def first_node(self) -> Node: ...

    def internal_topic(self, name: str) -> Topic:
        """``__consumer_offsets`` or ``__transaction_state``, created on first use."""
        ...

    def append_internal(self, partition: Partition, data: bytes | bytearray, *, notify: bool = True
                        ) -> tuple[int, int]:
        """Append a batch the broker writes itself; returns its (base offset, last offset)."""
        ...

    def appended(self, partition: Partition) -> None:
        """A partition's log grew (fetches waiting on it look again)."""
        ...

    def notify(self, key: Hashable) -> None:
        """What ``key`` names changed: the waiters on it look again."""
        ...
