"""Kafka's segment lookups: by offset through the .index, by timestamp through the .timeindex,
each followed by a forward scan of batch headers from the position the index gives."""
from __future__ import annotations

from kafkacodec.records import Batch, read_batches

from . import index_search
from .index import NO_TIMESTAMP, TimeEntry
from .logdir import Segment
from .mapped import Mapped
from .scan import BatchInfo, iter_batches


def _position(seg: Segment, target: int) -> int:
    if seg.index is None:
        return 0
    with Mapped(seg.index) as m:
        return index_search.lookup_offset(m.buf, seg.base_offset, target).position


def _hint(seg: Segment, target: int) -> TimeEntry:
    if seg.time_index is None:
        return TimeEntry(NO_TIMESTAMP, seg.base_offset)
    with Mapped(seg.time_index) as m:
        return index_search.lookup_time(m.buf, seg.base_offset, target)


def _valid(items):
    for item in items:
        if not isinstance(item, BatchInfo):
            return  # damage ends the search, as it ends Kafka's
        yield item


def find_offset(seg: Segment, target: int) -> Batch | None:
    """The first batch whose last offset is at or after `target` (FileRecords.searchForOffsetWithSize),
    scanning from the largest index entry at or below it."""
    start = _position(seg, target)
    with Mapped(seg.log) as m:
        mm = m.buf
        for b in _valid(iter_batches(mm, start=start, verify=False)):  # headers only, up to the one
            if b.last_offset >= target:
                data = mm[b.position:b.position + b.size]  # a copy that outlives the map, CRC checked
                return next(iter(_as_batches(data, b.position)))
    return None


def _as_batches(data: bytes, position: int):
    for batch in read_batches(data):
        batch.position += position
        yield batch


def find_timestamp(seg: Segment, target: int) -> tuple[int, int] | None:
    """(timestamp, offset) of the first record whose timestamp is at or after `target`
    (LogSegment.findOffsetByTimestamp): the time index names an offset to start from, the offset
    index its position; batches whose max timestamp is below the target are passed over whole."""
    hint = _hint(seg, target)
    start = _position(seg, hint.offset)
    with Mapped(seg.log) as m:
        mm = m.buf
        for b in _valid(iter_batches(mm, start=start)):
            if b.max_timestamp >= target:
                for record in Batch(b.entry, b.position, b.size):
                    if record.timestamp >= target:
                        return record.timestamp, record.offset
    return None
