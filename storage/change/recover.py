"""Repair segments as Kafka's recovery does (LogSegment.recover): cut each .log at its first bad
batch and rebuild the indexes that disagree with the log. Unlike Kafka, nothing is thrown away:
the cut-off bytes are kept beside the segment in `<name>.log.corrupt-<position>` (`-2`, `-3`...
when that name is taken; never written over), which Kafka and this library pass over. Kafka then
deletes the producer snapshots past the new log end; they are set aside likewise, in
`<name>.snapshot.past-end-<log end>`.

A bad batch is one recovery's scan refuses (framing, size, CRC) or one whose records do not
decode. Indexes are rebuilt when missing, unreadable, inconsistent with the log (as `verify`
checks them), or after a cut; a `.txnindex` keeps the entries it has within the segment (the
cleaner keeps entries whose data it removed) and gains those the log's markers give.

A recovery is planned in full, journaled (storage.change.journal), then carried out step by step: the
snapshots past the cut set aside, the cut bytes saved and flushed, the log cut and flushed, the
indexes written; each step is done again or passed over when a crash interrupted it, so the next
run finishes the job."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from kafkacodec.runtime.errors import DecodeError, KafkaCodecError

from ..indexes import index
from . import journal
from ..diskio.durable import create_kept, rename_durably, truncate_durably, write_atomically
from ..segments.guarded import read_segment
from .journal import JournalProblem
from ..layout.logdir import Partition, Segment, open_partition, segment_of
from ..state.producers import MarkerRefused, check_marker, state_at
from ..segments.reader import Skipped, batches_of
from ..segments.records_check import GROUP_BATCHES, decoded_records
from ..diskio.safeio import FileProblem, check_regular, open_regular, read_at
from ..segments.scan import ScanResult, scan_bytes
from ..indexes.txnindex import AbortedTxn, encode_txn_index, read_txn_index_file
from ..audit.verify import check_offset_index, check_time_index

INDEX_SUFFIXES = (".index", ".timeindex", ".txnindex")


@dataclass
class Repair:
    """What recovery does to one segment."""
    segment: Segment
    file_size: int
    valid_bytes: int
    reason: str | None = None  # why the tail is cut
    kept_in: Path | None = None  # where the cut bytes go
    indexes: dict[str, str] = field(default_factory=dict)  # index file suffix -> why it is rebuilt
    cut: "CutContents | None" = None  # what the bytes cut off hold
    # the first cut of a partition: its new log end, and each producer snapshot past it with where
    # it is kept (Kafka deletes them after truncating: a broker would load a state of records gone)
    log_end: int | None = None
    snapshots: list[tuple[Path, Path]] = field(default_factory=list)

    @property
    def truncated_bytes(self) -> int:
        return self.file_size - self.valid_bytes

    def snapshots_said(self, dry_run: bool) -> str:
        kept = ", ".join(f"{src.name} in {dst}" for src, dst in self.snapshots)
        return (f"the producer snapshots past the new log end {self.log_end}, which Kafka deletes, "
                f"{'would be' if dry_run else 'are'} kept aside: {kept}")


@dataclass
class CutContents:
    """What bytes cut off a segment hold, as far as they still read: the batches among them that
    frame and match their CRC (resynchronised past damage, as `dump --skip-corrupt` reads), and
    the bytes that do not read at all."""
    batches: int = 0
    records: int = 0  # in the batches whose records decode
    first_offset: int | None = None
    last_offset: int | None = None
    unreadable_bytes: int = 0

    def __str__(self) -> str:
        if not self.batches:
            return "none of them reads as a batch"
        held = (f"offsets {self.first_offset}..{self.last_offset} in {self.batches} batch"
                f"{'es' if self.batches != 1 else ''} ({self.records} records readable)")
        return held + (f" and {self.unreadable_bytes} bytes that do not read" if self.unreadable_bytes else "")


def cut_contents(data: bytes) -> CutContents:
    out = CutContents()
    for item in batches_of(data, skip_corrupt=True):
        if isinstance(item, Skipped):
            out.unreadable_bytes += item.end - item.start
            continue
        out.batches += 1
        try:  # a wrapper's messages are expanded once, for their count and first offset
            records = list(item)
        except DecodeError:  # framed and CRC-valid, but its records do not read
            records = []
        out.records += len(records)
        if not item.is_legacy:
            first = item.entry.base_offset
        else:
            first = records[0].offset if records else item.last_offset
        out.first_offset = first if out.first_offset is None else min(out.first_offset, first)
        out.last_offset = item.last_offset if out.last_offset is None else max(out.last_offset, item.last_offset)
    return out


@dataclass(frozen=True)
class Failure:
    path: Path
    reason: str


@dataclass
class Plan:
    repairs: list[Repair] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)


def plan_partition(part: Partition) -> Plan:
    """Every segment of the partition that needs a cut or an index rebuilt. Kafka would also
    delete the segments after the first damaged one; they are kept here, each recovered alone."""
    plan = Plan()
    try:
        state, complete = state_at(part, part.segments[0].base_offset) if part.segments else (None, False)
    except KafkaCodecError as err:
        state, complete = None, False
        plan.failures.append(Failure(part.path, f"producer state unreadable, transaction indexes left as they are: "
                                                f"{err}"))
    producers = state if complete else None  # an unknown start would make up missing entries
    first_cut = None
    for seg in part.segments:
        try:
            data = read_segment(seg.log)
        except KafkaCodecError as err:
            plan.failures.append(Failure(seg.log, str(err)))
            producers = None
            continue
        scan, reason = valid_prefix(data)
        aborted = None
        if producers is not None:
            aborted = []
            for b in scan.batches:
                try:
                    if (t := producers.apply(b)) is not None:
                        aborted.append(t)
                except DecodeError:
                    producers = None  # a malformed marker: the state after it is unknown
                    aborted = None
                    break
        repair = Repair(seg, len(data), scan.valid_bytes, reason)
        if repair.truncated_bytes:
            repair.kept_in = _free_name(seg.log.with_name(f"{seg.log.name}.corrupt-{scan.valid_bytes}"))
            repair.cut = cut_contents(data[scan.valid_bytes:])
            if first_cut is None:
                first_cut = repair
                _snapshots_past_end(part, repair, _end_offset(scan, seg.base_offset))
        repair.indexes = _stale_indexes(seg, scan, aborted, cut=bool(repair.truncated_bytes))
        if repair.truncated_bytes or repair.indexes:
            plan.repairs.append(repair)
    return plan


def _snapshots_past_end(part: Partition, repair: Repair, log_end: int) -> None:
    """Kafka's recovery, having cut a segment, deletes the segments after it and the producer
    snapshots past the new log end (ProducerStateManager.truncateAndReload). The segments stay
    here, each recovered alone; the snapshots past the end are set aside, kept as cut bytes are,
    beside the partition's files under a name Kafka does not read."""
    repair.log_end = log_end
    for offset, path in sorted(part.snapshots.items()):
        if offset > log_end:
            repair.snapshots.append((path, _free_name(path.with_name(f"{path.name}.past-end-{log_end}"))))


def plan_segment_file(path: Path) -> Plan:
    """A single .log file, whatever its name (its base offset from its first batch when the name
    is not an offset): its indexes are the files beside it with the same stem."""
    check_regular(path)  # a file argument that cannot be used is the command's error, not a failed repair
    try:
        part = _alone(path)
    except KafkaCodecError as err:
        return Plan(failures=[Failure(path, str(err))])
    return plan_partition(part)


def _alone(log: Path) -> Partition:
    """A partition of one segment file; with its partition's producer snapshots when it is one of
    that partition's segments (the producers' state before it then comes from them)."""
    seg = segment_of(log)
    part = open_partition(log.parent)
    snapshots = part.snapshots if any(s.log == log for s in part.segments) else {}
    return Partition(log.parent.name, -1, log.parent, [seg], snapshots=snapshots)


def valid_prefix(data: bytes) -> tuple[ScanResult, str | None]:
    """The scan of the bytes up to the first batch recovery refuses or whose records do not
    decode, and why it is refused (None when every batch reads)."""
    scan = scan_bytes(data)
    for start in range(0, len(scan.batches), GROUP_BATCHES):
        found = decoded_records(scan.batches[start:start + GROUP_BATCHES])  # batches over a limit are kept
        if found.bad is not None:
            i = start + found.bad
            b, err = scan.batches[i], found.error
            cut = ScanResult(len(data), b.position, scan.batches[:i], err)
            return _refused_marker(cut, data) or (cut, f"byte {b.position}: records do not decode: {err.message}")
    return _refused_marker(scan, data) or (scan, str(scan.error) if scan.error is not None else None)


def _refused_marker(scan: ScanResult, data: bytes) -> tuple[ScanResult, str] | None:
    """The scan cut after the first transaction marker Kafka refuses before the scan's end, when
    batches follow it: Kafka's recovery counts a batch valid before it reads its marker, so it
    keeps the marker's batch and cuts the rest of the segment."""
    for i, b in enumerate(scan.batches):
        try:
            check_marker(b)
        except MarkerRefused as err:
            end = b.position + b.size
            if end >= scan.valid_bytes and scan.error is None:
                return None  # the segment's last batch: nothing after it to cut
            err.position = b.position
            return (ScanResult(len(data), end, scan.batches[:i + 1], err),
                    f"byte {b.position}: {err.message}")
        except DecodeError:
            return None  # a record that stops a broker's recovery: it cuts nothing (verify says so)
    return None


def _stale_indexes(seg: Segment, scan: ScanResult, aborted: list[AbortedTxn] | None, cut: bool) -> dict[str, str]:
    """The index files to rebuild, each with why."""
    stem = seg.log.with_suffix("")
    out = {}
    explained = index.max_entries(scan.file_size)
    for suffix, entries_of, check in ((".index", index.iter_offset_index, check_offset_index),
                                      (".timeindex", index.iter_time_index, check_time_index)):
        path = stem.with_suffix(suffix)
        if cut:
            out[suffix] = "the log was cut"
            continue
        if not os.path.lexists(path):
            out[suffix] = "missing"
            continue
        try:
            # read as verify reads it: up to a preallocated zero tail, whatever the file's size
            entries = list(entries_of(path, seg.base_offset, explained))
        except KafkaCodecError as err:
            out[suffix] = f"unreadable ({err})"
            continue
        problems = check(entries, scan, seg.base_offset)
        if problems:
            out[suffix] = problems[0]
    txn = stem.with_suffix(".txnindex")
    try:
        existing = _read_txn(txn, scan.file_size)
    except KafkaCodecError as err:
        out[".txnindex"] = f"unreadable ({err})"
        return out
    merged = merge_txn_entries(existing, aborted or [], seg.base_offset, _end_offset(scan, seg.base_offset))
    if merged != existing:
        missing = len({t.last_offset for t in merged} - {t.last_offset for t in existing})
        out[".txnindex"] = (f"lacks {missing} aborted transaction{'s' if missing != 1 else ''} of the log"
                            if missing else "holds entries the log cannot have (after its end, or out of order)")
    return out


def _read_txn(path: Path, segment_size: int) -> list[AbortedTxn]:
    """As verify reads it: no more entries than a segment of `segment_size` bytes explains."""
    if not os.path.lexists(path):
        return []
    return read_txn_index_file(path, segment_size)


def _end_offset(scan: ScanResult, base: int) -> int:
    return max((b.last_offset + 1 for b in scan.batches), default=base)


def merge_txn_entries(existing: list[AbortedTxn], rebuilt: list[AbortedTxn], base: int, end: int) -> list[AbortedTxn]:
    """The entries of a segment's .txnindex: those it has whose marker lies in the segment, and
    those the log's markers give (which win for the same marker), in marker order."""
    by_marker = {t.last_offset: t for t in existing if base <= t.last_offset < end and t.first_offset <= t.last_offset}
    by_marker.update({t.last_offset: t for t in rebuilt})
    return [by_marker[k] for k in sorted(by_marker)]


def _free_name(path: Path) -> Path:
    n, candidate = 1, path
    while os.path.lexists(candidate):
        n += 1
        candidate = path.with_name(f"{path.name}-{n}")
    return candidate


# -- carrying a plan out ---------------------------------------------------------------------
def carry_out(root: Path, plan: Plan, single: bool) -> list[str]:
    """Journal the plan, then do it; returns one line per segment repaired."""
    if not plan.repairs:
        return []
    state = {"kind": "recover", "steps": [_step(r, single, root) for r in plan.repairs]}
    journal.record(root, state)
    done = [_do(step, root) for step in state["steps"]]
    journal.clear(root)
    return done


def _step(r: Repair, single: bool, root: Path) -> dict:
    """A repair as the journal holds it: paths relative to the log dir, so that the log dir can be
    moved or copied before the next run finishes it, and a copy never finishes the original's."""
    def relative(path: Path) -> str:
        return os.path.relpath(os.path.realpath(path), os.path.realpath(root))
    return {"log": relative(r.segment.log), "single": single, "size": r.file_size, "valid": r.valid_bytes,
            "kept": relative(r.kept_in) if r.kept_in else None, "indexes": sorted(r.indexes),
            "snapshots": [[relative(src), relative(dst)] for src, dst in r.snapshots]}


def describe(state: dict) -> str:
    logs = [s["log"] for s in state.get("steps", [])]
    return f"recover of {len(logs)} segment(s) ({', '.join(logs)}); `kafkacodec recover` finishes it"


def resume(root: Path, state: dict, dry_run: bool) -> list[str]:
    if dry_run:
        return [f"would finish an interrupted recover: {describe(state)}"]
    return ["finished an interrupted recover: " + _do(step, root) for step in state["steps"]]


def _do(step: dict, root: Path) -> str:
    """One segment: the cut bytes kept, the log cut, the indexes written. Each part is done
    again, or passed over, from whatever state a crash left."""
    log, valid = Path(root) / step["log"], step["valid"]
    said = []
    # the snapshots first: one kept past a cut made would give a broker a state of records gone
    for src, dst in ((Path(root) / a, Path(root) / b) for a, b in step.get("snapshots", [])):
        if os.path.lexists(src):
            rename_durably(src, dst)
        elif not os.path.lexists(dst):
            raise JournalProblem(f"{src}: the producer snapshot to set aside is gone, and {dst} does not hold it")
    if step.get("snapshots"):
        said.append("producer snapshots past the new log end kept aside: " +
                    ", ".join(str(Path(root) / b) for _, b in step["snapshots"]))
    if step["kept"] is not None:
        kept = Path(root) / step["kept"]
        size = check_regular(log)
        if size > valid:
            if not os.path.lexists(kept):
                with open_regular(log) as f:
                    create_kept(kept, read_at(f, valid, size - valid, log))
            elif check_regular(kept) != size - valid:
                raise JournalProblem(f"{log}: {size - valid} bytes to cut, but {kept} holds "
                                     f"{check_regular(kept)}; resolve it by hand")
            truncate_durably(log, valid)
        elif size < valid:
            raise JournalProblem(f"{log}: {size} bytes, shorter than the {valid} bytes recovery keeps")
        said.append(f"cut to {valid} bytes, the {step['size'] - valid} bytes cut off kept in {kept}")
    if step["indexes"]:
        for path, data in _rebuilt(log, step["single"], step["indexes"]).items():
            write_atomically(path, data)
        said.append(f"rebuilt {', '.join(log.with_suffix(s).name for s in step['indexes'])}")
    return f"{log}: {'; '.join(said)}"


def _rebuilt(log: Path, single: bool, suffixes: list[str]) -> dict[Path, bytes]:
    """The index files of a segment as the log is now (cut already)."""
    part = _alone(log) if single else open_partition(log.parent)
    seg = next((s for s in part.segments if s.log == log), None)
    if seg is None:
        raise JournalProblem(f"{log}: the segment to recover is gone")
    scan, _ = valid_prefix(read_segment(log))
    base, stem = seg.base_offset, log.with_suffix("")
    out = {}
    offsets, times = index.rebuild(scan.batches, base)
    if ".index" in suffixes:
        out[stem.with_suffix(".index")] = index.encode_offset_index(offsets, base)
    if ".timeindex" in suffixes:
        out[stem.with_suffix(".timeindex")] = index.encode_time_index(times, base)
    if ".txnindex" in suffixes:
        state, complete = state_at(part, base)
        rebuilt = []
        if complete:
            for b in scan.batches:
                try:
                    if (t := state.apply(b)) is not None:
                        rebuilt.append(t)
                except DecodeError:
                    break
        try:
            existing = _read_txn(stem.with_suffix(".txnindex"), scan.file_size)
        except (DecodeError, FileProblem):
            existing = []  # unreadable: what the log gives replaces it
        out[stem.with_suffix(".txnindex")] = encode_txn_index(
            merge_txn_entries(existing, rebuilt, base, _end_offset(scan, base)))
    return out
