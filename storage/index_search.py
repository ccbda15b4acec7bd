"""Kafka's index lookups on the index files' bytes as they are (a memory map), reading O(log n)
entries: one binary search for where the zero-filled tail begins, one for the target. The result
is the one `index.lookup_offset` / `index.lookup_time` give on the whole index."""
from __future__ import annotations

from kafkacodec.generated.offset_index import OffsetIndex
from kafkacodec.generated.time_index import TimeIndex

from .index import NO_TIMESTAMP, OFFSET_ENTRY, TIME_ENTRY, OffsetEntry, TimeEntry


def offset_entry(buf, i: int) -> tuple[int, int]:
    """(relative offset, position) of slot `i`."""
    e, _ = OffsetIndex.Entry.read(buf, i * OFFSET_ENTRY, (i + 1) * OFFSET_ENTRY)
    return e.relative_offset, e.position


def time_entry(buf, i: int) -> tuple[int, int]:
    """(timestamp, relative offset) of slot `i`."""
    e, _ = TimeIndex.Entry.read(buf, i * TIME_ENTRY, (i + 1) * TIME_ENTRY)
    return e.timestamp, e.relative_offset


def _first(lo: int, hi: int, past) -> int:
    """The first i in [lo, hi) for which past(i) holds (past is monotone), or hi."""
    while lo < hi:
        mid = (lo + hi) // 2
        if past(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def offset_entries(buf) -> int:
    """Slots before the zero-filled tail (as index.read_offset_index decides)."""
    slots = len(buf) // OFFSET_ENTRY
    if not slots or offset_entry(buf, 0) == (0, 0):
        return 0
    return _first(1, slots, lambda i: offset_entry(buf, i)[0] == 0)


def time_entries(buf) -> int:
    return _first(0, len(buf) // TIME_ENTRY, lambda i: time_entry(buf, i) == (0, 0))


def lookup_offset(buf, base_offset: int, target: int) -> OffsetEntry:
    """The largest entry at or below `target`, or (base offset, 0) when there is none."""
    n = offset_entries(buf)
    i = _first(0, n, lambda i: base_offset + offset_entry(buf, i)[0] > target)
    if not i:
        return OffsetEntry(base_offset, 0)
    relative, position = offset_entry(buf, i - 1)
    return OffsetEntry(base_offset + relative, position)


def lookup_time(buf, base_offset: int, target: int) -> TimeEntry:
    """The largest entry with timestamp at or below `target`, or (-1, base offset)."""
    n = time_entries(buf)
    i = _first(0, n, lambda i: time_entry(buf, i)[0] > target)
    if not i:
        return TimeEntry(NO_TIMESTAMP, base_offset)
    timestamp, relative = time_entry(buf, i - 1)
    return TimeEntry(timestamp, base_offset + relative)
