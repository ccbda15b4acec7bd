"""Repair a segment as Kafka's recovery does (LogSegment.recover): truncate the .log to its valid
prefix and rebuild its indexes. Unlike Kafka, nothing is thrown away: the cut-off bytes are kept
beside the segment in `<name>.log.corrupt-<position>`, which Kafka and this library pass over."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from . import index
from .files import write_atomically
from .logdir import Partition, Segment
from .producers import rebuild_txn_index
from .scan import scan_file
from .txnindex import encode_txn_index


@dataclass(frozen=True)
class Recovered:
    segment: Segment
    valid_bytes: int
    truncated_bytes: int
    kept_in: Path | None  # where the cut-off bytes went


def recover_segment(part: Partition, seg: Segment, interval: int = index.INDEX_INTERVAL_BYTES,
                    dry_run: bool = False) -> Recovered:
    scan = scan_file(seg.log)
    kept = None
    if scan.truncated_bytes and not dry_run:
        kept = seg.log.with_name(f"{seg.log.name}.corrupt-{scan.valid_bytes}")
        with open(seg.log, "rb") as f:
            f.seek(scan.valid_bytes)
            write_atomically(kept, f.read())  # saved before the cut, so a crash loses nothing
        os.truncate(seg.log, scan.valid_bytes)
    if not dry_run:
        offsets, times = index.rebuild(scan.batches, seg.base_offset, interval)
        stem = seg.log.with_suffix("")
        write_atomically(stem.with_suffix(".index"), index.encode_offset_index(offsets, seg.base_offset))
        write_atomically(stem.with_suffix(".timeindex"), index.encode_time_index(times, seg.base_offset))
        aborted, _ = rebuild_txn_index(part, seg.base_offset, scan.batches)
        if aborted or stem.with_suffix(".txnindex").exists():
            write_atomically(stem.with_suffix(".txnindex"), encode_txn_index(aborted))
    return Recovered(seg, scan.valid_bytes, scan.truncated_bytes, kept)


def recover_partition(part: Partition, dry_run: bool = False) -> list[Recovered]:
    """Every damaged segment of the partition. Kafka would also delete the segments after the
    first damaged one; they are kept here (verify still reports what they hold)."""
    out = []
    for seg in part.segments:
        if not scan_file(seg.log, keep_batches=False).is_valid:
            out.append(recover_segment(part, seg, dry_run=dry_run))
    return out
