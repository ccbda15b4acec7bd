"""Kafka's segment lookups: by offset through the .index, by timestamp through the .timeindex,
each followed by a forward scan of batch headers from the position the index gives."""
from __future__ import annotations

import mmap
from contextlib import contextmanager

from kafkacodec.records import Batch, read_batches

from . import index
from .logdir import Segment
from .scan import BatchInfo, iter_batches


@contextmanager
def _mapped(seg: Segment):
    with open(seg.log, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        yield mm


def _entries(seg: Segment):
    offsets = index.read_offset_index(seg.index.read_bytes(), seg.base_offset) if seg.index else []
    times = index.read_time_index(seg.time_index.read_bytes(), seg.base_offset) if seg.time_index else []
    return offsets, times


def _valid(items):
    for item in items:
        if not isinstance(item, BatchInfo):
            return  # damage ends the search, as it ends Kafka's
        yield item


def find_offset(seg: Segment, target: int) -> Batch | None:
    """The first batch whose last offset is at or after `target` (FileRecords.searchForOffsetWithSize),
    scanning from the largest index entry at or below it."""
    offsets, _ = _entries(seg)
    start = index.lookup_offset(offsets, seg.base_offset, target).position
    with _mapped(seg) as mm:
        for b in _valid(iter_batches(mm, start=start)):
            if b.last_offset >= target:
                data = mm[b.position:b.position + b.size]  # a copy that outlives the map
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
    offsets, times = _entries(seg)
    hint = index.lookup_time(times, seg.base_offset, target)
    start = index.lookup_offset(offsets, seg.base_offset, hint.offset).position
    with _mapped(seg) as mm:
        for b in _valid(iter_batches(mm, start=start)):
            if b.max_timestamp >= target:
                for record in Batch(b.entry, b.position, b.size):
                    if record.timestamp >= target:
                        return record.timestamp, record.offset
    return None
