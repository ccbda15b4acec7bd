"""The segments time and size retention keeps, copied without their damage: what `clean --policy
delete` writes. Retention itself reads batch headers only (storage.change.retention); a copy that a
broker will serve must hold no batch whose framing or CRC is bad or whose records do not decode,
so every kept segment is read in full here. Damage is refused (a DecodeError naming the file and
the byte), or with `skip_corrupt` left out of the copy, reported, and kept in the copy beside its
segment as `<segment>.log.corrupt-<position>`, as compaction does."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kafkacodec.runtime.errors import DecodeError

from ..segments.guarded import SkippedBytes, read_segment, segment_batches
from ..layout.logdir import Partition, Segment
from ..state.producers import ABORT, marker_of, rebuild_txn_index
from .retention import Deletion
from ..diskio.safeio import read_bounded
from ..segments.scan import scan_bytes
from .staging import PartitionCopy, segment_files
from ..indexes.txnindex import AbortedTxn, read_txn_index

MAX_TXN_INDEX_BYTES = 1 << 30  # 34-byte entries, one per aborted transaction of a segment


@dataclass
class RetainedCopy:
    target: Path | None  # the copied partition directory; None when only checked
    skipped: list[SkippedBytes] = field(default_factory=list)  # damage left out of the kept segments
    kept_files: list[Path] = field(default_factory=list)  # in the copy, where each of them is kept, in order

    @property
    def skipped_bytes(self) -> int:
        return sum(s.end - s.start for s in self.skipped)


def copy_retained(part: Partition, deleted: list[Deletion], out: Path | None,
                  skip_corrupt: bool = False) -> RetainedCopy:
    """The partition copied to out/<partition directory> without the deleted segments (and the
    producer snapshots below the new log start), a new empty segment at the log end when every
    segment goes; each kept segment with its damage left out when `skip_corrupt`. Without `out`
    nothing is written: the kept segments are only read, for their damage. One segment in memory
    at a time; nothing is at the target unless the copy completed."""
    gone = {d.facts.segment.base_offset for d in deleted}
    kept = [s for s in part.segments if s.base_offset not in gone]
    report = RetainedCopy(None)
    if out is None:
        for seg in kept:
            report.skipped += _intact(seg, read_segment(seg.log), skip_corrupt)[1]
        return report
    start = kept[0].base_offset if kept else deleted[-1].facts.next_offset
    # every segment's log and indexes are written below: unchanged, or rebuilt without damage
    leave_out = {p for s in part.segments for p in segment_files(s)}
    leave_out |= {p for d in deleted for p in segment_files(d.facts.segment)}
    leave_out |= {p for offset, p in part.snapshots.items() if offset < start}
    with PartitionCopy(part, out, leave_out) as copy:
        for seg in kept:
            raw = read_segment(seg.log)
            data, skipped = _intact(seg, raw, skip_corrupt)
            if not skipped:
                for p in (seg.log, seg.index, seg.time_index, seg.txn_index):
                    if p is not None:
                        copy.copy(p)
                continue
            for s in skipped:
                report.kept_files.append(copy.target / copy.keep(f"{seg.log.name}.corrupt-{s.start}",
                                                                 raw[s.start:s.end]).name)
            report.skipped += skipped
            copy.segment(seg.base_offset, data)
            entries = _txn_entries(part, seg, data)
            if entries:
                copy.txn_index(seg.base_offset, entries)
        if not kept:  # the broker rolls a new active segment before deleting the last one
            copy.segment(start, b"")
    report.target = copy.target
    return report


def _txn_entries(part: Partition, seg: Segment, data: bytes) -> list[AbortedTxn]:
    """The .txnindex of a segment rewritten without its damage: an entry for each ABORT marker it
    still holds, the one its own .txnindex had, else the one recovery builds from the producers'
    state before it. An entry whose marker went with the damage goes too: a cleaner reading it
    would take its transaction for open ever after."""
    batches = scan_bytes(data).batches
    aborts = set()
    for b in batches:
        e = b.entry
        if b.magic >= 2 and e.is_control and e.producer_id >= 0:
            try:
                marker = marker_of(e)
            except DecodeError:
                continue
            if marker is not None and marker.kind == ABORT:
                aborts.add(e.base_offset)
    if not aborts:
        return []
    by_marker: dict[int, AbortedTxn] = {}
    rebuilt, complete = rebuild_txn_index(part, seg.base_offset, batches)
    if complete:
        by_marker.update((t.last_offset, t) for t in rebuilt)
    if seg.txn_index is not None:
        try:
            existing = read_txn_index(read_bounded(seg.txn_index, MAX_TXN_INDEX_BYTES, "transaction index"))
        except DecodeError as err:
            raise err.with_context(file=str(seg.txn_index)) from None
        by_marker.update((t.last_offset, t) for t in existing)
    return [by_marker[k] for k in sorted(by_marker) if k in aborts]


def _intact(seg: Segment, raw: bytes, skip_corrupt: bool) -> tuple[bytes, list[SkippedBytes]]:
    """The segment's bytes without its damaged ranges, and those ranges; damage raises unless
    `skip_corrupt`."""
    parts, skipped, at = [], [], 0
    for item in segment_batches(seg, raw, skip_corrupt):
        if isinstance(item, SkippedBytes):
            parts.append(raw[at:item.start])
            skipped.append(item)
            at = item.end
    if not skipped:
        return raw, []
    parts.append(raw[at:])
    return b"".join(parts), skipped
