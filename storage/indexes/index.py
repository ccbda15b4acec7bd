"""Offset and time indexes: reading (with a preallocated zero tail), Kafka's lookups, sanity
checks, and the rebuild that Kafka's recovery performs (LogSegment.recover)."""
from __future__ import annotations

import bisect
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from kafkacodec.generated.offset_index import OffsetIndex
from kafkacodec.generated.time_index import TimeIndex
from kafkacodec.runtime.errors import InvalidValueError, TruncatedError

from ..diskio.safeio import open_regular, read_at
from kafkacodec.codec.places import layout_end
from ..segments.scan import LOG_OVERHEAD, MIN_RECORD_OVERHEAD, BatchInfo

OFFSET_ENTRY, TIME_ENTRY = layout_end(OffsetIndex.Entry.LAYOUT), layout_end(TimeIndex.Entry.LAYOUT)  # bytes a slot
INDEX_INTERVAL_BYTES = 4096  # index.interval.bytes default
NO_TIMESTAMP = -1
CHUNK_ENTRIES = 8192  # entries decoded at a time by the streaming readers
MAX_SEGMENT_BYTES = 2 ** 31 - 1  # Kafka's positions in a segment are 32-bit (segment.bytes is an int)
Read = Callable[[int, int], bytes]  # (position, n) -> up to n bytes of a file from position


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


def max_entries(segment_size: int) -> int:
    """The most index entries a segment of `segment_size` bytes can explain: at most one per batch,
    and a batch takes at least 26 bytes (its offset and size fields and the smallest message)."""
    return segment_size // (LOG_OVERHEAD + MIN_RECORD_OVERHEAD) + 1


def iter_offset_index(path: str | Path, base_offset: int, max_entries: int, read: Read | None = None,
                      size: int | None = None) -> Iterator[OffsetEntry]:
    """The entries of a .index file as read_offset_index gives those of its bytes, read in chunks:
    memory stays bounded and a preallocated or sparse file is read up to its zero-filled tail only.
    Raises InvalidValueError naming the file and the byte for a size that is not a whole number of
    entries, or for more live entries than `max_entries` (what the segment can explain). A file
    that is not local (an object store's) is read with `read` and has `size` bytes; `path` then
    only names it."""
    i = 0
    for chunk in _chunks(path, OFFSET_ENTRY, "offset index", max_entries, read, size):
        for e in OffsetIndex.from_bytes(chunk).entries:
            if e.relative_offset == 0 and (i > 0 or e.position == 0):
                return
            _check_count(path, i, max_entries, OFFSET_ENTRY, "offset index")
            yield OffsetEntry(base_offset + e.relative_offset, e.position)
            i += 1


def iter_time_index(path: str | Path, base_offset: int, max_entries: int, read: Read | None = None,
                    size: int | None = None) -> Iterator[TimeEntry]:
    """The entries of a .timeindex file as read_time_index gives those of its bytes, read in
    chunks; arguments and errors as for iter_offset_index."""
    i = 0
    for chunk in _chunks(path, TIME_ENTRY, "time index", max_entries, read, size):
        for e in TimeIndex.from_bytes(chunk).entries:
            if e.timestamp == 0 and e.relative_offset == 0:
                return
            _check_count(path, i, max_entries, TIME_ENTRY, "time index")
            yield TimeEntry(e.timestamp, base_offset + e.relative_offset)
            i += 1


def check_index_size(path: str | Path, size: int, entry_size: int, what: str) -> None:
    """Kafka's sanity check of an index file's length: whole entries only."""
    if size % entry_size:
        raise InvalidValueError(f"{what} of {size} bytes is not a multiple of {entry_size}", size - size % entry_size,
                                what.replace(" ", "_"), str(path))


def _check_count(path, i: int, limit: int, entry_size: int, what: str) -> None:
    if i >= limit:
        raise too_many_entries(path, what, limit, entry_size)


def too_many_entries(path, what: str, limit: int, entry_size: int) -> InvalidValueError:
    """The error for an index with more entries than its segment explains (`limit`, max_entries):
    at the byte of the first entry too many."""
    return InvalidValueError(f"{what} holds more than {limit} entries, more than its segment can explain "
                             "(one per batch at most)", limit * entry_size, what.replace(" ", "_"), str(path))


def _chunks(path, entry_size: int, what: str, max_entries: int, read: Read | None,
            size: int | None) -> Iterator[bytes]:
    """The file's bytes, CHUNK_ENTRIES entries at a time, up to one entry past `max_entries` (enough
    for the count to be checked): a sparse file of any size costs one chunk when its tail is zero."""
    if read is not None:
        yield from _chunks_read(read, size, path, entry_size, what, max_entries)
        return
    with open_regular(path) as f:
        yield from _chunks_read(lambda pos, n: read_at(f, pos, n, path), os.fstat(f.fileno()).st_size, path,
                                entry_size, what, max_entries)


def _chunks_read(read: Read, size: int, path, entry_size: int, what: str, max_entries: int) -> Iterator[bytes]:
    check_index_size(path, size, entry_size, what)
    end = min(size, (max_entries + 1) * entry_size)
    for pos in range(0, end, CHUNK_ENTRIES * entry_size):
        want = min(CHUNK_ENTRIES * entry_size, end - pos)
        chunk = read(pos, want)
        if len(chunk) < want:
            raise TruncatedError(f"{what} ended at byte {pos + len(chunk)} while it was read (it had {size} bytes)",
                                 pos + len(chunk), what.replace(" ", "_"), str(path))
        yield chunk


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
