"""Time and size retention (cleanup.policy=delete) as Kafka's UnifiedLog.deleteOldSegments decides
it, offline: which segments a broker would delete now, and a copy of the log without them.

Rules implemented (Kafka 3.x/4.x):
- `retention.ms`: a segment is due when now - its largest timestamp > retention.ms. The largest
  timestamp is the last entry of the segment's time index (what the broker loads), or the log
  file's modification time when the index is missing or empty.
- `retention.bytes`: while the partition's size (the sum of its .log files) minus retention.bytes
  is at least a segment's size, that segment is due, oldest first.
- Only a prefix of the segments goes: the first segment not due stops the search. The last
  segment goes too when due, unless it is empty; the broker then rolls a new, empty segment at the
  log end offset, and so does the copy.
- A value of -1 turns a rule off. The high watermark is taken to be the log end offset (offline,
  everything is committed).
Not implemented: deletion below a log start offset moved by DeleteRecords, and tiered storage's
local retention (local.retention.ms/bytes).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kafkacodec.codec.attribute_bits import COMPRESSION
from kafkacodec.codec.records import legacy_records
from kafkacodec.runtime.errors import DecodeError

from ..indexes import index_search
from ..indexes.index import TIME_ENTRY, max_entries
from ..layout.logdir import Partition, Segment
from ..diskio.safeio import check_regular
from ..segments.guarded import OnSkip, SkippedBytes, read_segment
from ..segments.reader import Skipped, batches_of
from ..segments.scan import iter_file_batches
from .staging import PartitionCopy, segment_files

DEFAULT_RETENTION_MS = 7 * 24 * 3600 * 1000  # log.retention.hours=168
NO_TIMESTAMP = -1


@dataclass(frozen=True)
class RetentionConfig:
    retention_ms: int = DEFAULT_RETENTION_MS
    retention_bytes: int = -1


@dataclass(frozen=True)
class SegmentFacts:
    segment: Segment
    size: int  # of the .log file
    largest_timestamp: int  # as the broker sees it: time index, else file modification time
    records: int
    next_offset: int  # the offset after its last batch (its base offset when it is empty)


@dataclass(frozen=True)
class Deletion:
    facts: SegmentFacts
    reason: str  # "retention.ms" or "retention.bytes"


def largest_timestamp(seg: Segment) -> int:
    """The broker's LogSegment.largestTimestamp: the time index's last entry, else the file's mtime."""
    if seg.time_index is not None and seg.time_index.exists():
        with index_search.IndexFile(seg.time_index, TIME_ENTRY, "time index") as f:  # its last entry only
            n = index_search.time_entries(f)
            f.check_entries(n, max_entries(check_regular(seg.log)))
            last = index_search.last_time_entry(f, seg.base_offset, n)
        if last is not None and last.timestamp >= 0:
            return last.timestamp
    return int(seg.log.stat().st_mtime * 1000)


def segment_facts(seg: Segment) -> SegmentFacts:
    """Size, largest timestamp, record count and next offset, from the batch headers (legacy
    compressed wrappers are expanded to count their messages); damage raises."""
    def batches():
        for info in iter_file_batches(seg.log, verify=False):
            if isinstance(info, DecodeError):
                raise info
            yield info
    return facts_from(seg, check_regular(seg.log), batches())


def retention_facts(seg: Segment, skip_corrupt: bool = False, on_skip: OnSkip | None = None) -> SegmentFacts:
    """segment_facts, reading past damage when told (from the batch headers, as segment_facts
    reads them; what is passed over goes to `on_skip`)."""
    if not skip_corrupt:
        return segment_facts(seg)
    data = read_segment(seg.log)

    def batches():
        for item in batches_of(data, verify=False, skip_corrupt=True):
            if not isinstance(item, Skipped):
                yield item
            elif on_skip is not None:
                on_skip(SkippedBytes(seg.log, item.start, item.end, item.error.message))
    return facts_from(seg, len(data), batches())


def facts_from(seg: Segment, size: int, batches) -> SegmentFacts:
    """A segment's facts from its batches (whatever reads them, and however it treats damage)."""
    records, next_offset = 0, seg.base_offset
    for info in batches:
        e = info.entry
        if info.magic >= 2:
            records += e.records_count
        else:
            records += len(legacy_records(e)) if e.message.attributes & COMPRESSION else 1
        next_offset = info.last_offset + 1
    return SegmentFacts(seg, size, largest_timestamp(seg), records, next_offset)


def deletions(part: Partition, config: RetentionConfig, now_ms: int, facts_of=None) -> list[Deletion]:
    """The segments a broker would delete now, oldest first, each with the rule that takes it
    (`facts_of(segment)` reads a segment's facts: segment_facts, which refuses damage, by default)."""
    facts = [(facts_of or segment_facts)(s) for s in part.segments]
    by_time = _prefix(facts, lambda f: now_ms - f.largest_timestamp > config.retention_ms) \
        if config.retention_ms >= 0 else 0
    by_size = 0
    total = sum(f.size for f in facts)
    if config.retention_bytes >= 0 and total >= config.retention_bytes:
        diff = total - config.retention_bytes

        def over(f: SegmentFacts) -> bool:
            nonlocal diff
            if diff - f.size >= 0:
                diff -= f.size
                return True
            return False
        by_size = _prefix(facts, over)
    return [Deletion(f, "retention.ms" if i < by_time else "retention.bytes")
            for i, f in enumerate(facts[:max(by_time, by_size)])]


def _prefix(facts: list[SegmentFacts], due) -> int:
    """How many segments from the oldest are due, stopping at the first that is not; the last
    segment never goes while it is empty."""
    n = 0
    for i, f in enumerate(facts):
        if (i == len(facts) - 1 and f.size == 0) or not due(f):
            break
        n += 1
    return n


def copy_without(part: Partition, deleted: list[Deletion], out: Path) -> Path:
    """The partition directory copied to out/<topic>-<partition>, without the deleted segments
    (and their indexes, and producer snapshots below the new log start offset); a new empty
    segment at the log end offset when every segment goes. Nothing is at the target unless the
    copy completed (staging.PartitionCopy)."""
    gone = {d.facts.segment.base_offset for d in deleted}
    kept = [s for s in part.segments if s.base_offset not in gone]
    start = kept[0].base_offset if kept else deleted[-1].facts.next_offset
    leave_out = {p for d in deleted for p in segment_files(d.facts.segment)}
    leave_out |= {p for offset, p in part.snapshots.items() if offset < start}
    with PartitionCopy(part, out, leave_out) as copy:
        if not kept:  # the broker rolls a new active segment before deleting the last one
            copy.segment(start, b"")
    return copy.target
