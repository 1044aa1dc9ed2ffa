"""The outcome of a coordinator operation, as Kafka's ``CoordinatorResult``: the records it writes and its answer.

An operation never changes coordinator state itself. It validates, decides, and returns the records that say what
changed; the runtime appends them to the coordinator's log and then replays each through the very function that
recovery replays the log with. Run time and restart therefore share one path, and a restart test exercises the code
every request exercises.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

RecordT = TypeVar("RecordT")
ResponseT = TypeVar("ResponseT")


@dataclass(frozen=True, slots=True)
class CoordinatorResult(Generic[RecordT, ResponseT]):
    """``records`` to append then replay (in order), and ``response`` for the caller once they are applied."""

    response: ResponseT
    records: Sequence[RecordT] = field(default_factory=tuple)
