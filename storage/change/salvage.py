"""Salvage: the intact batches among the bytes recovery cut off a segment, put back into the
partition as a segment of their own.

Kafka's recovery cuts a segment at its first bad batch and deletes what follows; `recover` keeps
the cut bytes in `<segment>.log.corrupt-<position>`. Past the damage those bytes often hold
batches that read whole: framing and CRC valid, every record decoding (as `verify` reads them).
Salvage writes them, unchanged, as a new segment named by the first one's base offset, between
the cut segment's end and the next segment, with its indexes (the `.txnindex` as recovery builds
it from the producers' state before it). The offsets it cannot give back (those the damaged
bytes held) are reported as the gap they leave, with each damaged range.

Batches are taken in their order, each only when its offsets rise above the previous one's and
lie below the next segment (a damaged base offset, which no CRC covers, may place a batch
anywhere); a batch already in the log (a salvage done before, or appends since the cut) is
passed over, so running it again changes nothing. The new segment's files are written whole,
its indexes before its `.log`: an interrupted salvage leaves no segment, and the next run
writes it.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from kafkacodec.runtime.errors import DecodeError, KafkaCodecError

from ..indexes import index
from ..diskio.durable import write_files_atomically
from ..segments.guarded import SkippedBytes, read_segment, segment_batches
from ..layout.logdir import Partition, Segment
from ..layout.names import segment_name
from ..state.producers import rebuild_txn_index
from ..segments.scan import iter_file_batches, scan_bytes
from ..indexes.txnindex import encode_txn_index

KEPT = re.compile(r"^(?P<log>.+\.log)\.corrupt-(?P<position>[0-9]+)(?:-[0-9]+)?$")  # what recover keeps
INT32_MAX = 2 ** 31 - 1


@dataclass
class Cut:
    """Bytes cut off a segment: where they are kept, and the segment they came from (and, for a
    cut not made yet, the offset after the batches it leaves)."""
    kept: Path
    segment: Segment
    data: bytes
    end_offset: int | None = None


@dataclass
class Salvage:
    """What salvage writes back from one cut (`segment` None: nothing to write)."""
    cut: Cut
    end_offset: int  # the offset after the cut segment's last batch
    segment: Path | None = None
    data: bytes = b""
    first_offset: int | None = None
    last_offset: int | None = None
    batches: int = 0
    records: int = 0
    damage: list[SkippedBytes] = field(default_factory=list)  # ranges of the kept bytes that do not read
    lost: list[tuple[int, int]] = field(default_factory=list)  # offset ranges no salvaged batch gives back
    left_out: list[str] = field(default_factory=list)  # intact batches that cannot go back, with why
    failed: bool = False  # the kept bytes could not be read

    def describe(self, dry_run: bool = False) -> list[str]:
        kept = self.cut.kept
        if self.segment is None:
            return [f"{kept}: nothing to salvage: {why}" for why in self.left_out]
        out = [f"{kept}: {'would salvage' if dry_run else 'salvaged'} offsets {self.first_offset}..{self.last_offset} "
               f"({self.batches} batch{'es' if self.batches != 1 else ''}, {self.records} records) "
               f"{'into' if not dry_run else 'as'} {self.segment}"]
        out += [f"{kept}: " + (f"offset {a} is" if a == b else f"offsets {a}..{b} are") +
                " not in the log (what the damaged bytes held of them is lost)" for a, b in self.lost]
        out += [d.describe() for d in self.damage]
        out += [f"{kept}: left out: {why}" for why in self.left_out]
        return out


def cuts_of(part: Partition, only: Path | None = None) -> list[Cut]:
    """The kept cut bytes of the partition's segments (of the segment `only`, when given)."""
    by_log = {s.log.name: s for s in part.segments}
    out = []
    for path in sorted(part.path.iterdir()):
        m = KEPT.match(path.name)
        if m is None or m["log"] not in by_log or (only is not None and by_log[m["log"]].log != only):
            continue
        if path.is_file() and not path.is_symlink():
            out.append(Cut(path, by_log[m["log"]], read_segment(path)))
    return out


def plan(part: Partition, cuts: list[Cut]) -> list[Salvage]:
    """What salvage would write back from each cut, the partition's segments as they are. Kept
    bytes that cannot be read within this run's limits give a Salvage with nothing to write,
    saying why."""
    out = []
    for cut in cuts:
        try:
            out.append(_plan_one(part, cut))
        except KafkaCodecError as err:
            failed = Salvage(cut, cut.end_offset if cut.end_offset is not None else -1)
            failed.left_out.append(f"its bytes cannot be read: {err}")
            failed.failed = True
            out.append(failed)
    return out


def _plan_one(part: Partition, cut: Cut) -> Salvage:
    seg = cut.segment
    end = cut.end_offset if cut.end_offset is not None else _end_offset(seg)
    after = [s for s in part.segments if s.base_offset > seg.base_offset]
    upper = after[0].base_offset if after else None
    present = [(upper, _end_offset(after[0]))] if after else []  # a salvage done before starts there
    out = Salvage(cut, end)
    taken: list = []
    last = end - 1
    holes: list[tuple[int, int]] = []  # damaged byte ranges seen since the last batch taken
    for item in segment_batches(Segment(seg.base_offset, cut.kept), cut.data, skip_corrupt=True):
        if isinstance(item, SkippedBytes):
            out.damage.append(item)
            holes.append((item.start, item.end))
            continue
        first, final = item.base_offset, item.last_offset
        if final < end or any(b <= first and final < e for b, e in present):
            continue  # in the log already: salvaged before, or the segment has grown since
        why = None
        if first <= last:
            why = f"its offsets {first}..{final} do not rise above {last}, the last before it"
        elif upper is not None and final >= upper:
            why = f"its offsets {first}..{final} reach the next segment, at {upper}"
        elif taken and final - taken[0].base_offset > INT32_MAX:
            why = f"its offsets {first}..{final} are more than 2^31-1 above the salvaged segment's base"
        if why is not None:
            out.left_out.append(f"the batch at byte {item.position} of {cut.kept.name}: {why}")
            continue
        if first > last + 1 and (holes or not taken):
            out.lost.append((last + 1, first - 1))
        holes = []
        taken.append(item)
        last = final
    if not taken:
        return out
    out.data = b"".join(bytes(cut.data[b.position:b.position + b.size]) for b in taken)
    out.first_offset, out.last_offset = taken[0].base_offset, last
    out.batches = len(taken)
    out.records = sum(_count(b) for b in taken)
    out.segment = seg.log.with_name(segment_name(out.first_offset) + ".log")
    if os.path.lexists(out.segment):
        out.left_out.append(f"{out.segment} exists already")
        out.segment = None
    return out


def write(part: Partition, salvage: Salvage) -> None:
    """The salvaged segment written into the partition, indexes first, each file whole."""
    base, log = salvage.first_offset, salvage.segment
    batches = scan_bytes(salvage.data).batches
    offsets, times = index.rebuild(batches, base)
    files = {log.with_suffix(".index"): index.encode_offset_index(offsets, base),
             log.with_suffix(".timeindex"): index.encode_time_index(times, base)}
    aborted, _ = rebuild_txn_index(part, base, batches)
    if aborted:
        files[log.with_suffix(".txnindex")] = encode_txn_index(aborted)
    files[log] = salvage.data  # renamed into place last: no segment until its indexes are there
    write_files_atomically(files)  # a failure is a FileProblem naming the file


def _end_offset(seg: Segment) -> int:
    """The offset after the segment's last batch that frames and matches its CRC (its base offset
    when none), from the batch headers."""
    end = seg.base_offset
    for item in iter_file_batches(seg.log):
        if isinstance(item, DecodeError):
            break
        end = max(end, item.last_offset + 1)
    return end


def end_offset_of(data: bytes, base: int) -> int:
    """As _end_offset, of a segment's bytes."""
    return max((b.last_offset + 1 for b in scan_bytes(data).batches), default=base)


def _count(batch) -> int:
    try:
        return sum(1 for _ in batch)
    except KafkaCodecError:
        return 0
