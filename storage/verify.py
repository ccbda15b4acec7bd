"""Verify segments and their indexes against the log, as `kafka-dump-log --verify-index-only`
and `--index-sanity-check` do, plus the checks recovery applies to the log itself."""
from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from itertools import accumulate, islice, takewhile
from pathlib import Path

from kafkacodec.runtime.errors import DecodeError

from . import index
from .logdir import Partition, Segment
from .producers import ProducerState, state_at
from .scan import ScanResult, iter_batches, next_valid_batch, scan_file
from .txnindex import AbortedTxn, check_txn_index, read_txn_index


@dataclass
class SegmentReport:
    segment: Segment
    scan: ScanResult
    problems: list[str] = field(default_factory=list)
    # with skip_corrupt: every damaged range after the valid prefix, and the batches between them
    damaged: list[tuple[int, int, DecodeError]] = field(default_factory=list)
    batches_after_damage: int = 0

    @property
    def ok(self) -> bool:
        return self.scan.is_valid and not self.problems


def check_offset_index(entries: list[index.OffsetEntry], scan: ScanResult, base: int) -> list[str]:
    """Each entry names the start of a batch and the last offset of a batch appended with it.

    Recovery writes each entry's own batch's last offset; the append path writes the largest
    offset of the whole appended set (several legacy entries in one produce), so an entry's offset
    may belong to a later batch, before the next entry's position."""
    at = {b.position: i for i, b in enumerate(scan.batches)}
    problems, last = [], None
    for n, e in enumerate(entries):
        if last is not None and e.offset <= last:
            problems.append(f"offset index: offset {e.offset} is not larger than the previous {last}")
        last = e.offset
        if e.position not in at:
            problems.append(f"offset index: position {e.position} (offset {e.offset}) is not the start of a batch")
            continue
        limit = max(entries[n + 1].position if n + 1 < len(entries) else scan.valid_bytes, e.position + 1)
        covered = takewhile(lambda b: b.position < limit, islice(scan.batches, at[e.position], None))
        if not any(b.last_offset == e.offset for b in covered):
            problems.append(f"offset index: entry offset {e.offset} but the batch at position {e.position} "
                            f"ends at offset {scan.batches[at[e.position]].last_offset}")
    if entries and entries[-1].offset < base:
        problems.append(f"offset index: last offset {entries[-1].offset} is below the base offset {base}")
    return problems


def check_time_index(entries: list[index.TimeEntry], scan: ScanResult, base: int) -> list[str]:
    """Entry (T, O): T is the largest timestamp of the batches up to offset O; T never decreases."""
    # the largest timestamp of the batches ending at or before each last offset, found by bisection
    ordered = sorted(scan.batches, key=lambda b: b.last_offset)
    last_offsets = [b.last_offset for b in ordered]
    running = list(accumulate((b.max_timestamp for b in ordered), max))
    problems, prev = [], None
    for e in entries:
        if prev is not None and e.timestamp < prev:
            problems.append(f"time index: timestamp {e.timestamp} is smaller than the previous {prev}")
        prev = e.timestamp
        n = bisect_right(last_offsets, e.offset)
        if not n:
            problems.append(f"time index: offset {e.offset} is before the first batch")
        elif running[n - 1] != e.timestamp:
            problems.append(f"time index: entry ({e.timestamp}, offset {e.offset}) but the largest timestamp "
                            f"up to that offset is {running[n - 1]}")
    return problems


def check_txn_entries(entries: list[AbortedTxn], rebuilt: list[AbortedTxn], base: int) -> list[str]:
    """Every aborted transaction the log's markers give must be in the index, or a read-committed
    consumer would see its records. Entries the log no longer explains are not flagged: the
    cleaner removes aborted data from compacted topics and keeps their entries."""
    problems = check_txn_index(entries, base)
    present = set(entries)
    for t in rebuilt:
        if t not in present:
            problems.append(f"transaction index: lacks the aborted transaction of producer {t.producer_id} "
                            f"(offsets {t.first_offset}..{t.last_offset}, last stable offset {t.last_stable_offset})")
    return problems


def damaged_ranges(buf, scan: ScanResult) -> tuple[list[tuple[int, int, DecodeError]], int]:
    """Every damaged range of a segment, reading on after each from the next batch whose CRC
    matches (which Kafka's recovery cannot do), and how many valid batches lie after the first."""
    ranges, found, pos, error = [], 0, scan.valid_bytes, scan.error
    while error is not None:
        resume = next_valid_batch(buf, pos)
        ranges.append((pos, len(buf) if resume is None else resume, error))
        error = None
        if resume is None:
            break
        for item in iter_batches(buf, start=resume):
            if isinstance(item, DecodeError):  # its batch starts after the last good one
                error, pos = item, resume
                break
            found += 1
            resume = item.position + item.size
    return ranges, found


def verify_segment(seg: Segment, previous_last_offset: int | None = None,
                   producers: ProducerState | None = None, skip_corrupt: bool = False) -> SegmentReport:
    """The log and its indexes; with the producer state before the segment, the .txnindex too
    (the state is advanced past the segment). With `skip_corrupt`, every damaged range too."""
    report = SegmentReport(seg, scan_file(seg.log))
    if skip_corrupt and report.scan.error is not None:
        report.damaged, report.batches_after_damage = damaged_ranges(seg.log.read_bytes(), report.scan)
        for _, _, err in report.damaged:
            err.file = err.file or str(seg.log)
    scan = report.scan
    last = previous_last_offset
    for b in scan.batches:
        if last is not None and b.last_offset <= last:
            report.problems.append(f"log: batch at position {b.position} ends at offset {b.last_offset}, "
                                   f"not after the previous batch's {last}")
        last = b.last_offset
    for path, read, check in ((seg.index, index.read_offset_index, check_offset_index),
                              (seg.time_index, index.read_time_index, check_time_index)):
        if path is None:
            continue
        try:
            entries = read(path.read_bytes(), seg.base_offset)
        except DecodeError as err:
            err.file = err.file or str(path)
            report.problems.append(str(err))
            continue
        report.problems += check(entries, scan, seg.base_offset)
    report.problems += _check_transactions(seg, scan, producers)
    return report


def _check_transactions(seg: Segment, scan: ScanResult, producers: ProducerState | None) -> list[str]:
    rebuilt = []
    if producers is not None:
        for b in scan.batches:
            try:
                if (t := producers.apply(b)) is not None:
                    rebuilt.append(t)
            except DecodeError as err:
                return [f"log: batch at position {b.position}: {err}"]
    if seg.txn_index is None:
        return [f"transaction index: missing, but the log aborts {len(rebuilt)} transaction"
                f"{'s' if len(rebuilt) != 1 else ''}"] if rebuilt else []
    try:
        entries = read_txn_index(seg.txn_index.read_bytes())
    except DecodeError as err:
        err.file = err.file or str(seg.txn_index)
        return [str(err)]
    return check_txn_entries(entries, rebuilt, seg.base_offset)


def verify_partition(part: Partition, on_segment=None, skip_corrupt: bool = False) -> list[SegmentReport]:
    """Every segment in order (`on_segment(report)` after each, for progress), then the snapshots."""
    reports, last = [], None
    producers = None
    if part.segments:
        state, complete = state_at(part, part.segments[0].base_offset)
        producers = state if complete else None  # an unknown start would make up missing entries
    for seg in part.segments:
        r = verify_segment(seg, last, producers, skip_corrupt)
        reports.append(r)
        if on_segment is not None:
            on_segment(r)
        if r.scan.batches:
            last = r.scan.batches[-1].last_offset
    for offset, path in sorted(part.snapshots.items()):
        try:
            ProducerState.from_snapshot(path.read_bytes(), offset)
        except DecodeError as err:
            owner = next((r for r in reversed(reports) if r.segment.base_offset <= offset), None)
            if owner is not None:  # a snapshot without segments has nothing to be wrong about
                owner.problems.append(f"producer snapshot {path.name}: {err}")
    return reports


def describe(report: SegmentReport) -> list[str]:
    """One line per problem, naming the file and, for damage, the byte where the bad batch starts."""
    out = []
    if report.damaged:
        out += [f"{report.segment.log}: bytes {start}..{end} damaged: {err}" for start, end, err in report.damaged]
        out.append(f"{report.segment.log}: {report.batches_after_damage} valid batches after the first damage "
                   "(recovery would truncate them)")
    elif report.scan.error is not None:
        out.append(f"{report.segment.log}: invalid from byte {report.scan.valid_bytes} "
                   f"({report.scan.truncated_bytes} bytes): {report.scan.error}")
    out += [f"{report.segment.log.with_suffix('')}: {p}" for p in report.problems]
    return out
