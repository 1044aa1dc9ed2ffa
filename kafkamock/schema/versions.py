"""Version ranges as Kafka's schema language writes them: ``"3"``, ``"0-4"``, ``"2+"`` and ``"none"``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

MAX_VERSION = 0x7FFF
_RANGE = re.compile(r"^\s*(\d+)\s*(?:(\+)|-\s*(\d+))?\s*$")


@dataclass(frozen=True, slots=True)
class Versions:
    """An inclusive range of versions; ``Versions.NONE`` is empty."""

    lowest: int
    highest: int

    NONE: ClassVar[Versions]
    ALL: ClassVar[Versions]

    @classmethod
    def parse(cls, text: object) -> Versions:
        """Parse a range, raising ``ValueError`` with the reason on a malformed one."""
        if not isinstance(text, str):
            raise ValueError(f"version range must be a string, not {text!r}")
        if text.strip() == "none":
            return cls.NONE
        m = _RANGE.match(text)
        if not m:
            raise ValueError(f"malformed version range {text!r}")
        low = int(m.group(1))
        high = MAX_VERSION if m.group(2) else int(m.group(3)) if m.group(3) is not None else low
        if low > MAX_VERSION or high > MAX_VERSION:
            raise ValueError(f"version range {text!r} exceeds {MAX_VERSION}")
        if high < low:
            raise ValueError(f"version range {text!r} is backwards")
        return cls(low, high)

    @property
    def empty(self) -> bool:
        return self.highest < self.lowest

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.lowest <= version <= self.highest

    def contains_range(self, other: Versions) -> bool:
        return other.empty or (not self.empty and self.lowest <= other.lowest and other.highest <= self.highest)

    def intersect(self, other: Versions) -> Versions:
        low, high = max(self.lowest, other.lowest), min(self.highest, other.highest)
        return Versions(low, high) if low <= high else Versions.NONE

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.lowest, self.highest + 1))

    def __str__(self) -> str:
        if self.empty:
            return "none"
        if self.highest == MAX_VERSION:
            return f"{self.lowest}+"
        if self.lowest == self.highest:
            return str(self.lowest)
        return f"{self.lowest}-{self.highest}"


Versions.NONE = Versions(0, -1)
Versions.ALL = Versions(0, MAX_VERSION)
