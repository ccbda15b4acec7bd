"""Verify segments: by default every record of every batch is decoded (decompressed within the
limits), so "ok" means everything reads; `quick` checks only what Kafka's recovery checks
(LogSegment.recover: framing, sizes, CRCs). Indexes are checked against the log as
`kafka-dump-log --verify-index-only` and `--index-sanity-check` do, the transaction index against
the markers, and producer snapshots are read.

One pass over each segment in file order: index entries are checked as the batches go by, so
time is linear and memory bounded by the largest batch (and a group of batches decoded at once),
whatever the file's size or its number of batches.
"""
from __future__ import annotations

import glob
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from kafkacodec.runtime.errors import DecodeError, LimitExceededError
from kafkacodec.runtime.limits import LIMITS

from ..indexes import index
from ..layout.logdir import Partition, Segment
from ..layout.names import kraft_snapshot_id
from .offset_gaps import first_offset, gap_problem, rewritten_by_cleaner, shows_compaction
from ..state.producers import ProducerState, check_marker, read_snapshot, state_at
from kafkacodec.codec.places import SIZE_AT
from ..segments.resync import find_resume
from ..segments.records_check import GROUP_BATCHES, GROUP_BYTES, decoded_records, placed
from ..diskio.safeio import FileProblem, open_regular, read_at
from ..segments.scan import BatchInfo, ScanResult, iter_file_batches
from ..indexes.txnindex import AbortedTxn, check_txn_index, read_txn_index_file

MAX_RELATIVE_OFFSET = 2 ** 31 - 1


INDEX_PROBLEMS = ("offset index", "time index", "transaction index")  # how problems `reindex` fixes begin


@dataclass
class SegmentReport:
    segment: Segment
    file_size: int = 0
    valid_bytes: int = 0  # the prefix that reads (deep) or that recovery keeps (quick)
    batches: int = 0  # valid batches, those after damage included
    records: int = 0  # records decoded (deep only)
    error: DecodeError | None = None  # the first damage; its batch starts at valid_bytes
    problems: list[str] = field(default_factory=list)
    # with skip_corrupt: every damaged range, and the valid batches after the first
    damaged: list[tuple[int, int, DecodeError]] = field(default_factory=list)
    batches_after_damage: int = 0
    last_offset: int | None = None
    # index entries that point into damaged bytes (or past them, where the log is not read): the
    # damage's consequence, said once with it rather than as a problem each
    index_entries_in_damage: int = 0
    # (first missing, last missing, position of the batch after) of each offset gap, and the v2
    # batches only the cleaner writes (storage.audit.offset_gaps): whether the gaps are damage or compaction
    gaps: list[tuple[int, int, int]] = field(default_factory=list)
    cleaned_batches: int = 0
    notes: list[str] = field(default_factory=list)  # said, not problems

    @property
    def is_valid(self) -> bool:
        return self.error is None

    @property
    def ok(self) -> bool:
        return self.error is None and not self.problems

    @property
    def truncated_bytes(self) -> int:
        return self.file_size - self.valid_bytes


class OffsetIndexCheck:
    """Each entry names the start of a batch and the last offset of a batch appended with it.

    Recovery writes each entry's own batch's last offset; the append path writes the largest
    offset of the whole appended set (several legacy entries in one produce), so an entry's offset
    may belong to a later batch, before the next entry's position. Entries come in file order, so
    each is settled by the batches between its position and the next entry's."""

    def __init__(self, entries: Iterable[index.OffsetEntry], base: int):
        self.entries, self.base, self.problems = iter(entries), base, []
        self.last_offset = self.last_position = None
        self.current = self.upcoming = None
        self.started = self.matched = False
        self.first_last_offset = None
        self.damaged_ranges: list[tuple[int, int]] = []
        self.in_damage = 0
        self._advance()
        self._advance()

    def _advance(self) -> None:
        """Settle nothing; move `upcoming` to `current` and read the next entry."""
        self.current, self.started, self.matched = self.upcoming, False, False
        while True:
            e = next(self.entries, None)
            if e is None or self.last_position is None or e.position > self.last_position:
                break
            self._note(e)
            self.problems.append(f"offset index: position {e.position} (offset {e.offset}) is not after the "
                                 f"previous entry's position {self.last_position}")
        if e is not None:
            self._note(e)
            self.last_position = e.position
        self.upcoming = e

    def _note(self, e: index.OffsetEntry) -> None:
        if self.last_offset is not None and e.offset <= self.last_offset:
            self.problems.append(f"offset index: offset {e.offset} is not larger than the previous {self.last_offset}")
        self.last_offset = e.offset

    def _limit(self) -> int | None:
        return self.upcoming.position if self.upcoming is not None else None

    def damaged(self, start: int, end: int) -> None:
        """Bytes start..end do not read: entries that point into them, or whose batches run into
        them, cannot be checked."""
        self.damaged_ranges.append((start, end))

    def _touches_damage(self, e: index.OffsetEntry) -> bool:
        limit = self._limit()
        return any(start <= e.position < end or e.position <= start and (limit is None or start < limit)
                   for start, end in self.damaged_ranges)

    def _settle(self) -> None:
        e = self.current
        if (not self.started or not self.matched) and self._touches_damage(e):
            self.in_damage += 1
        elif not self.started:
            self.problems.append(f"offset index: position {e.position} (offset {e.offset}) is not the start of a batch")
        elif not self.matched:
            self.problems.append(f"offset index: entry offset {e.offset} but the batch at position {e.position} "
                                 f"ends at offset {self.first_last_offset}")
        self._advance()

    def batch(self, position: int, last_offset: int) -> None:
        while self.current is not None and (position > self.current.position and not self.started
                                            or (limit := self._limit()) is not None and position >= limit):
            self._settle()
        e = self.current
        if e is None:
            return
        if position == e.position:
            self.started, self.first_last_offset = True, last_offset
        if self.started and last_offset == e.offset:
            self.matched = True

    def finish(self) -> list[str]:
        while self.current is not None:
            self._settle()
        if self.last_offset is not None and self.last_offset < self.base:
            self.problems.append(f"offset index: last offset {self.last_offset} is below the base offset {self.base}")
        return self.problems


class TimeIndexCheck:
    """Entry (T, O): T is the largest timestamp of the batches up to offset O; T never decreases."""

    def __init__(self, entries: Iterable[index.TimeEntry]):
        self.entries, self.problems = iter(entries), []
        self.largest, self.seen, self.previous = None, False, None
        self.damage_seen, self.known_until, self.in_damage = False, None, 0
        self.current = self._next()

    def _next(self) -> index.TimeEntry | None:
        e = next(self.entries, None)
        if e is not None:
            if self.previous is not None and e.timestamp < self.previous:
                self.problems.append(f"time index: timestamp {e.timestamp} is smaller than the previous "
                                     f"{self.previous}")
            self.previous = e.timestamp
        return e

    def damaged(self, last_offset_before: int | None) -> None:
        """Batches are missing after `last_offset_before`: the largest timestamp past it is unknown."""
        if not self.damage_seen:
            self.damage_seen, self.known_until = True, last_offset_before

    def _settle(self) -> None:
        e = self.current
        failed = not self.seen or self.largest != e.timestamp
        if failed and self.damage_seen and (self.known_until is None or e.offset > self.known_until):
            self.in_damage += 1
        elif not self.seen:
            self.problems.append(f"time index: offset {e.offset} is before the first batch")
        elif self.largest != e.timestamp:
            self.problems.append(f"time index: entry ({e.timestamp}, offset {e.offset}) but the largest timestamp "
                                 f"up to that offset is {self.largest}")
        self.current = self._next()

    def batch(self, last_offset: int, max_timestamp: int) -> None:
        while self.current is not None and last_offset > self.current.offset:
            self._settle()
        self.largest = max_timestamp if self.largest is None else max(self.largest, max_timestamp)
        self.seen = True

    def finish(self) -> list[str]:
        while self.current is not None:
            self._settle()
        return self.problems


def check_offset_index(entries: list[index.OffsetEntry], scan: ScanResult, base: int) -> list[str]:
    """OffsetIndexCheck over a scan's batches; the entries into its damage, if any, said in one line."""
    check = OffsetIndexCheck(entries, base)
    for b in scan.batches:
        check.batch(b.position, b.last_offset)
    if scan.error is not None:
        check.damaged(scan.valid_bytes, scan.file_size)
    return check.finish() + _into_damage(check.in_damage, "offset")


def check_time_index(entries: list[index.TimeEntry], scan: ScanResult, base: int) -> list[str]:
    """TimeIndexCheck over a scan's batches; the entries past its damage, if any, said in one line."""
    check = TimeIndexCheck(entries)
    for b in scan.batches:
        check.batch(b.last_offset, b.max_timestamp)
    if scan.error is not None:
        check.damaged(scan.batches[-1].last_offset if scan.batches else None)
    return check.finish() + _into_damage(check.in_damage, "time")


def _into_damage(entries: int, which: str) -> list[str]:
    return [f"{which} index: {entries} entr{'y points' if entries == 1 else 'ies point'} into the damaged bytes or "
            "past them, unchecked"] if entries else []


def check_txn_entries(entries: list[AbortedTxn], rebuilt: list[AbortedTxn], base: int,
                      earlier_markers: dict[tuple[int, int], int] | None = None) -> list[str]:
    """Every aborted transaction the log's markers give must be in the index, or a read-committed
    consumer would see its records. Entries the log no longer explains are not flagged: the
    cleaner removes aborted data from compacted topics and keeps their entries.

    The cleaner keeps each entry as the broker wrote it, while a rebuild from the compacted log
    starts the transaction at its first batch left and the last stable offset at the first batch
    left of another open one: an entry of the same producer and marker is right when its first
    offset is at or before the rebuilt one but after the producer's previous marker
    (`earlier_markers`: (producer, marker offset) -> that offset, where the log shows one; a
    consumer would take the records of an earlier transaction for aborted), and its last stable
    offset is at or before the rebuilt one (a later one could end a fetch's search for aborted
    transactions too soon)."""
    problems = check_txn_index(entries, base)
    present = set(entries)
    by_marker = {(t.producer_id, t.last_offset): t for t in entries}
    earlier_markers = earlier_markers or {}
    for t in rebuilt:
        if t in present:
            continue
        kept = by_marker.get((t.producer_id, t.last_offset))
        if kept is None:
            problems.append(f"transaction index: lacks the aborted transaction of producer {t.producer_id} "
                            f"(offsets {t.first_offset}..{t.last_offset}, last stable offset {t.last_stable_offset})")
            continue
        earlier = earlier_markers.get((t.producer_id, t.last_offset))
        if kept.first_offset > t.first_offset or earlier is not None and kept.first_offset <= earlier:
            bound = f", after the producer's previous marker at {earlier}" if earlier is not None else ""
            problems.append(f"transaction index: the aborted transaction of producer {t.producer_id} ending at "
                            f"{t.last_offset} begins at {kept.first_offset}, but the log has its first batch at "
                            f"{t.first_offset} (its entry must begin at or before it{bound})")
        if kept.last_stable_offset > t.last_stable_offset:
            problems.append(f"transaction index: the aborted transaction of producer {t.producer_id} ending at "
                            f"{t.last_offset} has last stable offset {kept.last_stable_offset}, but the log "
                            f"gives {t.last_stable_offset} (an entry's may be earlier, never later)")
    return problems


def _guarded(entries: Iterable, problems: list[str]) -> Iterator:
    """The entries of an index file until it turns out damaged; then its reason, as a problem of
    the segment (a damaged index never stops the check of its log)."""
    try:
        yield from entries
    except (DecodeError, FileProblem) as err:
        problems.append(str(err))


class _IndexChecks:
    """The segment's offset and time indexes, read in bounded chunks and checked as its batches go
    by; a damaged index file ends its own check with the reason, never the segment's."""

    def __init__(self, seg: Segment, file_size: int):
        most = index.max_entries(file_size)
        self.problems: list[str] = []
        self.offsets = self.times = None
        if seg.index is not None:
            self.offsets = OffsetIndexCheck(_guarded(index.iter_offset_index(seg.index, seg.base_offset, most),
                                                     self.problems), seg.base_offset)
        if seg.time_index is not None:
            self.times = TimeIndexCheck(_guarded(index.iter_time_index(seg.time_index, seg.base_offset, most),
                                                 self.problems))

    def batch(self, b: BatchInfo) -> None:
        if self.offsets is not None:
            self.offsets.batch(b.position, b.last_offset)
        if self.times is not None:
            self.times.batch(b.last_offset, b.max_timestamp)

    def damaged(self, start: int, end: int, last_offset_before: int | None) -> None:
        if self.offsets is not None:
            self.offsets.damaged(start, end)
        if self.times is not None:
            self.times.damaged(last_offset_before)

    @property
    def in_damage(self) -> int:
        return sum(check.in_damage for check in (self.offsets, self.times) if check is not None)

    def finish(self) -> list[str]:
        found = [p for check in (self.offsets, self.times) if check is not None for p in check.finish()]
        return self.problems + found


@dataclass(frozen=True)
class Damaged:
    """Bytes that do not read: from the start of a bad batch to where reading resumes."""
    start: int
    end: int
    error: DecodeError


def checked_batches(path: Path, file_size: int, quick: bool = False,
                    skip_corrupt: bool = False) -> Iterator[BatchInfo | Damaged | int]:
    """The valid batches of a segment file in order, each damaged range as a Damaged, and, in deep
    mode, after each group of batches the number of records it decoded (an int) and an OverLimit
    for each batch whose records exceed the decoding limits (not damage: they are not checked), in
    either mode one before each batch larger than LIMITS.max_batch_bytes (never decoded). Without
    `skip_corrupt` the first damage ends it; with it, reading goes on after a batch whose records
    do not read, or, after bad framing or a bad CRC, from the next batch whose CRC matches."""
    start = 0
    while start < file_size:
        pending: list[BatchInfo] = []
        pending_bytes, damage, resume = 0, None, None
        at = start
        for item in iter_file_batches(path, start):
            if isinstance(item, DecodeError):  # named already by iter_file_batches
                damage = (at, item)
            elif item.size > LIMITS.max_batch_bytes:  # the readers refuse it unread, as the limit says
                if pending:  # in order: the index checks follow positions
                    bad = yield from _decoded(pending, path)
                    pending, pending_bytes = [], 0
                    if bad is not None:
                        damage, resume = bad
                        break
                yield OverLimit(item.position, too_large(item, path))
                yield item
            elif quick:
                yield item
            else:
                pending.append(item)
                pending_bytes += item.size
            if not isinstance(item, DecodeError):
                at = item.position + item.size
            if pending and (damage is not None or pending_bytes >= GROUP_BYTES or len(pending) >= GROUP_BATCHES):
                bad = yield from _decoded(pending, path)
                if bad is not None:  # its framing and CRC are fine: reading goes on after it
                    damage, resume = bad
                pending, pending_bytes = [], 0
            if damage is not None:
                break
        if pending:
            bad = yield from _decoded(pending, path)
            if bad is not None:
                damage, resume = bad
        if damage is None:
            return
        if resume is None and skip_corrupt:
            resume = _resume_after(path, damage[0], file_size)
        yield Damaged(damage[0], file_size if resume is None else resume, damage[1])
        if not skip_corrupt or resume is None:
            return
        start = resume


def too_large(item: BatchInfo, path: Path) -> LimitExceededError:
    """Why the readers refuse a batch over LIMITS.max_batch_bytes (kafkacodec.codec.records.read_batches)."""
    return LimitExceededError(f"batch of {item.size} bytes is larger than the limit of {LIMITS.max_batch_bytes} "
                              "(--max-batch-bytes; kafkacodec.runtime.limits.LIMITS.max_batch_bytes)",
                              item.position + SIZE_AT, "log/size", str(path))


@dataclass(frozen=True)
class OverLimit:
    """A batch whose records were not decoded: they exceed a limit (not damage)."""
    position: int
    error: DecodeError


def _decoded(pending: list[BatchInfo], path: Path):
    """Decode a group: yield its readable batches, then the records count; return the damage of
    the first batch that does not read, as ((its position, error), where reading resumes), or None."""
    found = decoded_records(pending)
    for b, err in found.over_limit:
        yield OverLimit(b.position, err)
    yield from pending[:found.bad]
    yield found.records
    if found.bad is None:
        return None
    b = pending[found.bad]
    return (b.position, placed(found.error, b, path)), b.position + b.size


def _resume_after(path: Path, position: int, file_size: int) -> int | None:
    with open_regular(path) as f:
        return find_resume(lambda pos, size: read_at(f, pos, size, path), position, file_size)


def verify_segment(seg: Segment, previous_last_offset: int | None = None,
                   producers: ProducerState | None = None, skip_corrupt: bool = False,
                   quick: bool = False, markers: dict[int, int] | None = None) -> SegmentReport:
    """The log and its indexes; with the producer state before the segment, the .txnindex too
    (the state is advanced past the segment, and `markers`, each producer's latest marker
    offset, with it). Every record is decoded unless `quick`. With `skip_corrupt`, every damaged
    range is reported, not only the first."""
    report = SegmentReport(seg)
    with open_regular(seg.log) as f:  # a file that cannot be read is not damage: FileProblem
        report.file_size = f.seek(0, 2)
    indexes = _IndexChecks(seg, report.file_size)
    rebuilt, txn_problem, last = [], None, previous_last_offset
    markers = {} if markers is None else markers
    earlier_markers: dict[tuple[int, int], int] = {}
    after_damage = False
    for item in checked_batches(seg.log, report.file_size, quick, skip_corrupt):
        if type(item) is not BatchInfo:  # the rare items first tested for the common one
            if isinstance(item, int):
                report.records += item
            elif isinstance(item, OverLimit):
                report.problems.append(f"log: batch at position {item.position}: records not checked: "
                                       f"{item.error.message} (a larger limit reads them; this is not damage)")
            else:
                if report.error is None:
                    report.error = item.error
                if skip_corrupt:
                    report.damaged.append((item.start, item.end, item.error))
                indexes.damaged(item.start, item.end, last)
                after_damage = True  # the offsets of the damaged batches are unknown: no gap to tell
            continue
        report.batches += 1
        if report.error is None:
            report.valid_bytes = item.position + item.size
        else:
            report.batches_after_damage += 1
        first = item.entry.base_offset if item.magic >= 2 else item.last_offset  # a wrapper's first: unknown here
        if last is not None and first <= last:  # base offsets lie outside the CRC: only order tells
            report.problems.append(f"log: batch at position {item.position} holds offsets {first}..{item.last_offset}, "
                                   f"not after the previous batch's last offset {last}")
        if not seg.base_offset <= item.last_offset <= seg.base_offset + MAX_RELATIVE_OFFSET:
            report.problems.append(f"log: batch at position {item.position} ends at offset {item.last_offset}, "
                                   f"outside the segment's offsets {seg.base_offset}..{seg.base_offset + MAX_RELATIVE_OFFSET}"
                                   " (indexes hold offsets relative to the base offset as 4-byte numbers)")
        known = first_offset(item)
        if last is not None and known is not None and known > last + 1 and not after_damage:
            report.gaps.append((last + 1, known - 1, item.position))
        report.cleaned_batches += rewritten_by_cleaner(item) or item.position == 0 and known is not None \
            and known > seg.base_offset  # the cleaner keeps a segment's base offset, not always its first records
        after_damage = False
        last = report.last_offset = item.last_offset
        indexes.batch(item)
        if txn_problem is None:
            try:  # a marker recovery refuses is found whether the producers' state is known or not
                if producers is None:
                    check_marker(item)
                elif (t := producers.apply(item)) is not None:
                    rebuilt.append(t)
                    if t.producer_id in markers:
                        earlier_markers[(t.producer_id, t.last_offset)] = markers[t.producer_id]
            except DecodeError as err:
                txn_problem = f"log: batch at position {item.position}: {err}"
            if item.magic >= 2 and item.entry.is_control and item.entry.producer_id >= 0:
                markers[item.entry.producer_id] = item.entry.base_offset  # emptied or not, a transaction ended there
    report.problems += indexes.finish()
    report.index_entries_in_damage = indexes.in_damage
    report.problems += [txn_problem] if txn_problem else _check_transactions(seg, report.file_size, rebuilt,
                                                                             producers is not None, earlier_markers)
    return report


def _check_transactions(seg: Segment, file_size: int, rebuilt: list[AbortedTxn], known: bool,
                        earlier_markers: dict[tuple[int, int], int]) -> list[str]:
    if seg.txn_index is None:
        return [f"transaction index: missing, but the log aborts {len(rebuilt)} transaction"
                f"{'s' if len(rebuilt) != 1 else ''}"] if rebuilt else []
    try:
        entries = read_txn_index_file(seg.txn_index, file_size)
    except DecodeError as err:
        err.file = err.file or str(seg.txn_index)
        return [str(err)]
    except FileProblem as err:
        return [str(err)]
    return check_txn_entries(entries, rebuilt if known else [], seg.base_offset, earlier_markers)


def verify_partition(part: Partition, on_segment=None, skip_corrupt: bool = False,
                     quick: bool = False, offset_gaps: bool | None = False) -> list[SegmentReport]:
    """Every segment in order (`on_segment(report)` after each, for progress), then the snapshots.
    Gaps between offsets are problems with `offset_gaps` True, not with False (a compacted topic),
    and with None unless the partition shows compaction (storage.audit.offset_gaps)."""
    reports, last = [], None
    producers, markers = None, {}
    if part.segments:
        state, complete = state_at(part, part.segments[0].base_offset)
        producers = state if complete else None  # an unknown start would make up missing entries
    for seg in part.segments:
        r = verify_segment(seg, last, producers, skip_corrupt, quick, markers)
        if reports and last is not None:  # a gap after the previous segment's end may be its damage
            after = [g for g in r.gaps if g[0] == last + 1]
            kept = _cut_by_recover(reports[-1].segment)
            if after and kept:
                first, final, _ = after[0]
                r.notes.append(f"{seg.log}: offsets {first}..{final} are not in the log: `recover` cut them from "
                               f"{reports[-1].segment.log.name} (kept in {', '.join(k.name for k in kept)})")
            if after and (kept or _ends_damaged(reports[-1])):  # the damaged or cut bytes held those offsets
                r.gaps.remove(after[0])
        reports.append(r)
        if on_segment is not None:
            on_segment(r)
        if r.last_offset is not None:
            last = r.last_offset
    if offset_gaps is True or offset_gaps is None and not shows_compaction(
            part.topic, part.partition, part.path.parent, sum(r.cleaned_batches for r in reports)):
        for r in reports:
            r.problems += [gap_problem(*gap, part.topic) for gap in r.gaps]
    for offset, path in sorted(part.snapshots.items()):
        try:
            ProducerState.from_snapshot(read_snapshot(path), offset)
        except (DecodeError, FileProblem) as err:
            owner = next((r for r in reversed(reports) if r.segment.base_offset <= offset), None)
            if owner is not None:  # a snapshot without segments has nothing to be wrong about
                owner.problems.append(f"producer snapshot {path.name}: {err}")
    if reports:
        reports[-1].problems += _kraft_snapshot_problems(part.path, quick)
    return reports


def _kraft_snapshot_problems(directory: Path, quick: bool) -> list[str]:
    """A KRaft metadata log's `.checkpoint` snapshots, read as its segments are (a replay that
    meets a damaged one passes it over and needs the log from further back)."""
    problems = []
    for path in sorted(p for p in directory.iterdir() if kraft_snapshot_id(p.name) is not None):
        try:
            with open_regular(path) as f:
                size = f.seek(0, 2)
            damage = next((d for d in checked_batches(path, size, quick) if isinstance(d, Damaged)), None)
        except (DecodeError, FileProblem) as err:
            problems.append(f"KRaft snapshot {path.name}: {err}")
            continue
        if damage is not None:
            problems.append(f"KRaft snapshot {path.name}: invalid from byte {damage.start}: {_reason(damage.error, path)}")
    return problems


def _cut_by_recover(seg: Segment) -> list[Path]:
    """The files where `recover` kept bytes it cut from the segment's end."""
    return sorted(seg.log.parent.glob(f"{glob.escape(seg.log.name)}.corrupt-*"))


def _ends_damaged(report: SegmentReport) -> bool:
    return report.error is not None and (not report.damaged or report.damaged[-1][1] >= report.file_size)


def describe(report: SegmentReport) -> list[str]:
    """One line per problem, naming the file and, for damage, the byte where the bad batch starts."""
    out = []
    log = report.segment.log
    pointing = _pointing_into(report.index_entries_in_damage)
    if report.damaged:
        out += [f"{log}: bytes {start}..{end} damaged: {_reason(err, log)}" for start, end, err in report.damaged]
        first_seen_by_recovery = not getattr(report.damaged[0][2], "in_records", False)
        out.append(f"{log}: {report.batches_after_damage} valid batches after the first damage"
                   + (" (recovery would truncate them)" if first_seen_by_recovery else "") + pointing)
    elif report.error is not None:
        out.append(f"{log}: invalid from byte {report.valid_bytes} ({report.truncated_bytes} bytes): "
                   f"{_reason(report.error, log)}" + pointing)
    out += [f"{log.with_suffix('')}: {p}" for p in report.problems]
    return out


def _pointing_into(entries: int) -> str:
    if not entries:
        return ""
    return (f"; {entries} index entr{'y points' if entries == 1 else 'ies point'} into the damaged bytes or past "
            "them, unchecked (`recover` rebuilds the indexes)")


def _reason(err, log: Path) -> str:
    """An error's text without the file name when it is the segment's own (the line names it)."""
    text = str(err)
    return text[len(str(log)) + 2:] if text.startswith(f"{log}: ") else text


def index_problems(seg: Segment, part: Partition) -> dict[str, list[str]]:
    """What verify finds wrong with each index file of the segment, by suffix (.index, .timeindex,
    .txnindex): checked against the log's batches as their framing and CRCs read (records are not
    decoded), the transaction index with the producers' state before the segment when it is
    known. An index that differs from the one recovery would build may still be right: a broker's
    append path indexes a multi-batch append by its last offset, and the cleaner keeps the
    .txnindex entries the broker wrote."""
    state, complete = state_at(part, seg.base_offset)
    report = verify_segment(seg, producers=state if complete else None, quick=True)
    found: dict[str, list[str]] = {".index": [], ".timeindex": [], ".txnindex": []}
    for problem in report.problems:
        for prefix, suffix in zip(INDEX_PROBLEMS, found):
            if problem.startswith(prefix):
                found[suffix].append(problem)
    return found
