"""Kafka's index lookups on the index files as they are (bytes, or an IndexFile read slot by
slot), reading O(log n) entries: one binary search for where the zero-filled tail begins, one for
the target. The result is the one `index.lookup_offset` / `index.lookup_time` give on the whole
index."""
from __future__ import annotations

import os
from pathlib import Path

from kafkacodec.generated.offset_index import OffsetIndex
from kafkacodec.generated.time_index import TimeIndex
from kafkacodec.runtime.errors import TruncatedError

from .index import (NO_TIMESTAMP, OFFSET_ENTRY, TIME_ENTRY, OffsetEntry, TimeEntry, check_index_size,
                    too_many_entries)
from ..diskio.safeio import open_regular, read_at


class IndexFile:
    """`with IndexFile(path, entry_size, what) as f:` f is an index file as the searches here take
    it, a length and slices, read when asked for (pread) a block at a time, the blocks last read
    kept: a search reads O(log n) slots whatever the file's size, its last steps from a block read
    already, and nothing is mapped. Regular files of whole entries only."""

    BLOCK, BLOCKS_KEPT = 4096, 32

    def __init__(self, path: str | Path, entry_size: int, what: str):
        self.path, self.entry_size, self.what = path, entry_size, what
        self._file = None
        self._size = 0
        self._blocks: dict[int, bytes] = {}

    def __enter__(self) -> "IndexFile":
        self._file = open_regular(self.path)
        try:
            self._size = os.fstat(self._file.fileno()).st_size
            check_index_size(self.path, self._size, self.entry_size, self.what)
        except BaseException:
            self._file.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self._file.close()

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, part: slice) -> bytes:
        start, stop = part.start, part.stop
        first = start - start % self.BLOCK
        if stop <= first + self.BLOCK:  # within one block (a slot across two is read as it is)
            block = self._blocks.get(first)
            if block is None:
                if len(self._blocks) >= self.BLOCKS_KEPT:
                    del self._blocks[next(iter(self._blocks))]
                block = self._blocks[first] = self._read(first, min(self.BLOCK, self._size - first))
            data = block[start - first:stop - first]
        else:
            data = self._read(start, stop - start)
        if len(data) < stop - start:
            raise TruncatedError(f"{self.what} ended at byte {start + len(data)} while it was read (it had "
                                 f"{self._size} bytes)", start + len(data), None, str(self.path))
        return data

    def _read(self, position: int, n: int) -> bytes:
        return read_at(self._file, position, n, self.path)

    def check_entries(self, live: int, max_entries: int) -> None:
        """Refuse more live entries than the segment can explain (index.max_entries)."""
        if live > max_entries:
            raise too_many_entries(self.path, self.what, max_entries, self.entry_size)


def offset_entry(buf, i: int) -> tuple[int, int]:
    """(relative offset, position) of slot `i`."""
    e, _ = OffsetIndex.Entry.read(buf[i * OFFSET_ENTRY:(i + 1) * OFFSET_ENTRY])
    return e.relative_offset, e.position


def time_entry(buf, i: int) -> tuple[int, int]:
    """(timestamp, relative offset) of slot `i`."""
    e, _ = TimeIndex.Entry.read(buf[i * TIME_ENTRY:(i + 1) * TIME_ENTRY])
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


def last_time_entry(buf, base_offset: int, n: int | None = None) -> TimeEntry | None:
    """The last entry before the zero-filled tail (a segment's largest timestamp), or None; `n`
    as for lookup_offset."""
    n = time_entries(buf) if n is None else n
    if not n:
        return None
    timestamp, relative = time_entry(buf, n - 1)
    return TimeEntry(timestamp, base_offset + relative)


def lookup_offset(buf, base_offset: int, target: int, n: int | None = None) -> OffsetEntry:
    """The largest entry at or below `target`, or (base offset, 0) when there is none; `n`, the
    live entries (offset_entries) when the caller has counted them."""
    n = offset_entries(buf) if n is None else n
    i = _first(0, n, lambda i: base_offset + offset_entry(buf, i)[0] > target)
    if not i:
        return OffsetEntry(base_offset, 0)
    relative, position = offset_entry(buf, i - 1)
    return OffsetEntry(base_offset + relative, position)


def lookup_time(buf, base_offset: int, target: int, n: int | None = None) -> TimeEntry:
    """The largest entry with timestamp at or below `target`, or (-1, base offset); `n` as for
    lookup_offset."""
    n = time_entries(buf) if n is None else n
    i = _first(0, n, lambda i: time_entry(buf, i)[0] > target)
    if not i:
        return TimeEntry(NO_TIMESTAMP, base_offset)
    timestamp, relative = time_entry(buf, i - 1)
    return TimeEntry(timestamp, base_offset + relative)
