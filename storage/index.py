"""Offset and time indexes: reading (with a preallocated zero tail), Kafka's lookups, sanity
checks, and the rebuild that Kafka's recovery performs (LogSegment.recover)."""
from __future__ import annotations

import bisect
from dataclasses import dataclass

from kafkacodec.generated.offset_index import OffsetIndex
from kafkacodec.generated.time_index import TimeIndex
from kafkacodec.runtime.errors import InvalidValueError

from .scan import BatchInfo

OFFSET_ENTRY, TIME_ENTRY = 8, 12
INDEX_INTERVAL_BYTES = 4096  # index.interval.bytes default
NO_TIMESTAMP = -1


@dataclass(frozen=True)
class OffsetEntry:
    offset: int  # absolute
    position: int


@dataclass(frozen=True)
class TimeEntry:
    timestamp: int
    offset: int  # absolute


def read_offset_index(data: bytes, base_offset: int) -> list[OffsetEntry]:
    """Entries up to the zero-filled tail of a preallocated file: a slot after the first whose
    relative offset is 0 ends the index, as Kafka's dump tool decides, and so does an all-zero
    first slot (Kafka never indexes position 0: the first batch of a segment gets no entry)."""
    if len(data) % OFFSET_ENTRY:
        raise InvalidValueError(f"offset index of {len(data)} bytes is not a multiple of {OFFSET_ENTRY}", len(data),
                                "offset_index")
    out = []
    for i, e in enumerate(OffsetIndex.from_bytes(data).entries):
        if e.relative_offset == 0 and (i > 0 or e.position == 0):
            break
        out.append(OffsetEntry(base_offset + e.relative_offset, e.position))
    return out


def read_time_index(data: bytes, base_offset: int) -> list[TimeEntry]:
    """Entries up to the zero-filled tail: the first slot holding timestamp 0 at relative offset 0.
    (A segment whose largest timestamp is 0 at its base offset reads as empty: the two are the
    same bytes.)"""
    if len(data) % TIME_ENTRY:
        raise InvalidValueError(f"time index of {len(data)} bytes is not a multiple of {TIME_ENTRY}", len(data),
                                "time_index")
    out = []
    for e in TimeIndex.from_bytes(data).entries:
        if e.timestamp == 0 and e.relative_offset == 0:
            break
        out.append(TimeEntry(e.timestamp, base_offset + e.relative_offset))
    return out


def lookup_offset(entries: list[OffsetEntry], base_offset: int, target: int) -> OffsetEntry:
    """The largest entry at or below `target`, or (base offset, 0) when there is none."""
    i = bisect.bisect_right([e.offset for e in entries], target)
    return entries[i - 1] if i else OffsetEntry(base_offset, 0)


def lookup_time(entries: list[TimeEntry], base_offset: int, target: int) -> TimeEntry:
    """The largest entry with timestamp at or below `target`, or (-1, base offset)."""
    i = bisect.bisect_right([e.timestamp for e in entries], target)
    return entries[i - 1] if i else TimeEntry(NO_TIMESTAMP, base_offset)


def rebuild(batches: list[BatchInfo], base_offset: int,
            interval: int = INDEX_INTERVAL_BYTES) -> tuple[list[OffsetEntry], list[TimeEntry]]:
    """The entries Kafka's recovery writes for these valid batches, in order."""
    offsets: list[OffsetEntry] = []
    times: list[TimeEntry] = []
    valid_bytes = last_entry_at = 0
    max_ts, max_ts_offset = NO_TIMESTAMP, -1

    def append_time(ts: int, offset: int) -> None:
        # only when the maximum grows; an empty index counts as (-1, base offset)
        if ts > (times[-1].timestamp if times else NO_TIMESTAMP):
            times.append(TimeEntry(ts, offset))

    for b in batches:
        if b.max_timestamp > max_ts:
            max_ts, max_ts_offset = b.max_timestamp, b.last_offset
        if valid_bytes - last_entry_at > interval:
            offsets.append(OffsetEntry(b.last_offset, valid_bytes))
            append_time(max_ts, max_ts_offset)
            last_entry_at = valid_bytes
        valid_bytes += b.size
    append_time(max_ts, max_ts_offset)  # the final entry, as on roll, close and after recovery
    return offsets, times


def encode_offset_index(entries: list[OffsetEntry], base_offset: int) -> bytes:
    return OffsetIndex(entries=[OffsetIndex.Entry(relative_offset=e.offset - base_offset, position=e.position)
                                for e in entries]).to_bytes()


def encode_time_index(entries: list[TimeEntry], base_offset: int) -> bytes:
    return TimeIndex(entries=[TimeIndex.Entry(timestamp=e.timestamp, relative_offset=e.offset - base_offset)
                              for e in entries]).to_bytes()
