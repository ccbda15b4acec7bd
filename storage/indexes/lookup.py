"""Kafka's segment lookups: by offset through the .index, by timestamp through the .timeindex,
each followed by a forward scan of batch headers from the position the index gives. Files are
read, never mapped: the index slot by slot (index_search.IndexFile), the log through a small
window (scan.iter_file_batches)."""
from __future__ import annotations

from kafkacodec.codec.records import Batch, read_batches
from kafkacodec.runtime.errors import DecodeError

from . import index_search
from .index import NO_TIMESTAMP, OFFSET_ENTRY, TIME_ENTRY, TimeEntry, max_entries
from ..layout.logdir import Segment
from ..diskio.safeio import check_regular, open_regular, read_at
from ..segments.scan import BatchInfo, iter_file_batches

SEARCH_WINDOW = 64 << 10  # the index names a position a few KiB (index.interval.bytes) before the batch


def _position(seg: Segment, target: int) -> int:
    if seg.index is None:
        return 0
    with index_search.IndexFile(seg.index, OFFSET_ENTRY, "offset index") as f:
        n = index_search.offset_entries(f)
        f.check_entries(n, max_entries(check_regular(seg.log)))
        return index_search.lookup_offset(f, seg.base_offset, target, n).position


def _hint(seg: Segment, target: int) -> TimeEntry:
    if seg.time_index is None:
        return TimeEntry(NO_TIMESTAMP, seg.base_offset)
    with index_search.IndexFile(seg.time_index, TIME_ENTRY, "time index") as f:
        n = index_search.time_entries(f)
        f.check_entries(n, max_entries(check_regular(seg.log)))
        return index_search.lookup_time(f, seg.base_offset, target, n)


def _valid(items):
    for item in items:
        if not isinstance(item, BatchInfo):
            return  # damage ends the search, as it ends Kafka's
        yield item


def find_offset(seg: Segment, target: int) -> Batch | None:
    """The first batch whose last offset is at or after `target` (FileRecords.searchForOffsetWithSize),
    scanning from the largest index entry at or below it."""
    start = _position(seg, target)
    for b in _valid(iter_file_batches(seg.log, start, verify=False, window=SEARCH_WINDOW)):  # headers only
        if b.last_offset >= target:
            with open_regular(seg.log) as f:  # the batch alone, read again, CRC checked
                data = read_at(f, b.position, b.size, seg.log)
            return next(iter(_as_batches(data, b.position, seg.log)))
    return None


def _as_batches(data: bytes, position: int, log=None):
    """The batch read again at `position`; its errors name the file and the byte in it."""
    try:
        for batch in read_batches(data):
            batch.position += position
            yield batch
    except DecodeError as err:
        err.position = position + (err.position or 0)
        err.file = err.file or (None if log is None else str(log))
        raise


def find_timestamp(seg: Segment, target: int) -> tuple[int, int] | None:
    """(timestamp, offset) of the first record whose timestamp is at or after `target`
    (LogSegment.findOffsetByTimestamp): the time index names an offset to start from, the offset
    index its position; batches whose max timestamp is below the target are passed over whole."""
    hint = _hint(seg, target)
    start = _position(seg, hint.offset)
    for b in _valid(iter_file_batches(seg.log, start, window=SEARCH_WINDOW)):
        if b.max_timestamp >= target:
            for record in Batch(b.entry, b.position, b.size):
                if record.timestamp >= target:
                    return record.timestamp, record.offset
    return None
