"""Kafka's timestamps (milliseconds since the epoch, -1 for none) as ISO 8601 text in UTC."""
from __future__ import annotations

import datetime as dt


def iso_millis(ms: int | None) -> str | None:
    """`2020-09-13T12:26:40.000Z`; None for no time (None or negative: Kafka's -1) and for a time
    beyond the calendar Python knows."""
    if ms is None or ms < 0:
        return None
    try:
        return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).isoformat(timespec="milliseconds")[:-6] + "Z"
    except (OverflowError, ValueError, OSError):
        return None
