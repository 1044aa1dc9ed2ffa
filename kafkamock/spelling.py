"""The known name closest to a misspelt one, for the "did you mean ...?" of an error message.

The codec (an unknown message field), the broker's configs and the Spark options each word their own message;
this is the one place that decides what counts as close.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(name: str, known: Iterable[str], *, cutoff: float = 0.6) -> str | None:
    """The known name most like ``name`` (``difflib``'s ratio at least ``cutoff``), or None."""
    matches = difflib.get_close_matches(name, sorted(known), n=1, cutoff=cutoff)
    return matches[0] if matches else None
