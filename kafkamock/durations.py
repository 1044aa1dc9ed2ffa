"""ISO-8601 durations as Java's ``Duration.parse`` reads them, for the ``by_duration:<duration>`` offset resets.

Both sides need it: the broker for a share group's ``share.auto.offset.reset`` (and its validation as a group config)
and the client for a consumer's ``auto.offset.reset``. It lives here, outside ``broker`` and ``client``, so neither
imports the other.
"""

from __future__ import annotations

import re
from datetime import timedelta

_DURATION = re.compile(
    r"([-+]?)P(?:([-+]?\d+)D)?(?:T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+(?:[.,]\d+)?)S)?)?", re.IGNORECASE)


def parse_duration_ms(text: str) -> int:
    """An ISO-8601 duration as Java's Duration.parse reads it (``PnDTnHnMn.nS``, optionally signed), in ms."""
    match = _DURATION.fullmatch(text.strip())
    if match is None or text.strip().upper().endswith("T") or not any(match.groups()[1:]):
        raise ValueError(f"{text!r} is not an ISO-8601 duration")
    sign, days, hours, minutes, seconds = match.groups()
    total = timedelta(days=int(days or 0), hours=int(hours or 0), minutes=int(minutes or 0),
                      seconds=float((seconds or "0").replace(",", ".")))
    ms = int(total / timedelta(milliseconds=1))
    return -ms if sign == "-" else ms
