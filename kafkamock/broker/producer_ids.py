"""Producer ids, handed out in blocks whose end is persisted before any id of the block is used, so no id repeats
after a restart (Kafka's ProducerIdsRecord and its ProducerIdManager)."""

from __future__ import annotations

from collections.abc import Callable

PRODUCER_ID_BLOCK = 1000
FIRST_PRODUCER_ID = 1000


class ProducerIds:
    """The next producer id and the end of the current block; ``block_taken`` persists a new block's end."""

    def __init__(self, block_taken: Callable[[], None]) -> None:
        self.next_id = FIRST_PRODUCER_ID
        self.block_end = FIRST_PRODUCER_ID
        self._block_taken = block_taken

    def take(self) -> int:
        if self.next_id >= self.block_end:
            self.block_end = self.next_id + PRODUCER_ID_BLOCK
            self._block_taken()
        pid = self.next_id
        self.next_id += 1
        return pid

    def snapshot(self) -> int:
        return self.block_end

    def restore(self, block_end: int | None) -> None:
        """After a restart, ids start at the persisted block's end: the ids before it may have been handed out."""
        self.next_id = self.block_end = FIRST_PRODUCER_ID if block_end is None else int(block_end)
