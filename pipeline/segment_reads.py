"""A partition's files as the Spark planner reads them through a file system (local or not): index
entries, aborted transactions, batches from a position, and the offsets found from them."""
from __future__ import annotations

from kafkacodec.codec.records import read_batches
from kafkacodec.runtime.errors import DecodeError
from kafkacodec.storage.indexes import index
from kafkacodec.storage.indexes.txnindex import AbortedTxn, iter_txn_index
from kafkacodec.storage.segments.scan import LOG_OVERHEAD, frame_size

from .files import PartitionFiles, SegmentFiles, filesystem, read_at


def read_indexes(uri: str, seg: SegmentFiles) -> tuple[list, list]:
    """The segment's offset and time index entries (empty where a file is missing), read up to
    their zero-filled tail, at most as many as the segment can explain (index.max_entries)."""
    bound = index.max_entries(seg.size)
    offsets = _read_index(uri, seg.index, index.iter_offset_index, seg.base_offset, bound) if seg.index else []
    times = _read_index(uri, seg.time_index, index.iter_time_index, seg.base_offset, bound) if seg.time_index else []
    return offsets, times


def _read_index(uri: str, path: str, entries, base_offset: int, bound: int) -> list:
    fs, _ = filesystem(uri)
    with fs.open_input_file(path) as f:
        return list(entries(path, base_offset, bound, lambda pos, n: read_at(f, n, pos), f.size()))


def read_aborted(uri: str, seg: SegmentFiles) -> list[AbortedTxn]:
    """The entries of the segment's .txnindex, refused when more than the segment can explain."""
    fs, _ = filesystem(uri)
    with fs.open_input_file(seg.txn_index) as f:
        return list(iter_txn_index(seg.txn_index, index.max_entries(seg.size), lambda pos, n: read_at(f, n, pos),
                                   f.size()))


def batches_from(uri: str, seg: SegmentFiles, position: int):
    """Batches of a segment from a batch-start position, read one at a time; damage ends it."""
    fs, _ = filesystem(uri)
    with fs.open_input_file(seg.log) as f:
        pos = position
        while pos + LOG_OVERHEAD <= seg.size:
            try:
                # the size field is in the first 12 bytes; the rest of the file is what is left
                size = frame_size(read_at(f, LOG_OVERHEAD, pos), 0, seg.size - pos)
                batch = next(read_batches(read_at(f, size, pos)))
            except DecodeError:
                return
            batch.position = pos
            yield batch
            pos += size


def offset_for_timestamp(uri: str, part: PartitionFiles, target: int) -> int | None:
    """The first offset whose record timestamp is at or after `target` (Kafka's ListOffsets by
    timestamp): the first segment whose largest timestamp reaches it, its time index for where to
    start, then batch headers and records."""
    for seg in part.segments:
        offsets, times = read_indexes(uri, seg)
        if times and times[-1].timestamp < target:
            continue  # the time index's last entry is the segment's largest timestamp
        hint = index.lookup_time(times, seg.base_offset, target)
        start = index.lookup_offset(offsets, seg.base_offset, hint.offset).position
        for batch in batches_from(uri, seg, start):
            if batch.is_legacy or batch.entry.max_timestamp >= target:
                for r in batch:
                    if r.timestamp is not None and r.timestamp >= target:
                        return r.offset
    return None


def log_end_offset(uri: str, part: PartitionFiles) -> int | None:
    """The offset after the partition's last valid batch (the log end offset a broker would
    recover), read from the last index entry on; None for a partition with no segment."""
    if not part.segments:
        return None
    seg = part.segments[-1]
    offsets, _ = read_indexes(uri, seg)
    start = offsets[-1].position if offsets else 0
    end = seg.base_offset
    for batch in batches_from(uri, seg, start):
        end = batch.last_offset + 1
    return end
