"""A copy of a partition directory built where it cannot be mistaken for a finished one: in a
hidden work directory beside its target, renamed into place when complete, removed on failure."""
from __future__ import annotations

import shutil
from pathlib import Path

from . import index
from .files import write_atomically
from .logdir import Partition, Segment
from .scan import scan_bytes


def segment_files(seg: Segment) -> list[Path]:
    """The .log of a segment and whichever of its index files exist."""
    return [p for p in (seg.log, seg.index, seg.time_index, seg.txn_index) if p is not None]


class PartitionCopy:
    """`with PartitionCopy(part, out, leave_out) as copy:` out/<partition directory> holds every
    file of the partition but those in `leave_out`, plus what `copy` writes, once the block ends
    without an error; before that, and after an error, there is nothing at the target."""

    def __init__(self, part: Partition, out: Path, leave_out: set[Path]):
        self.part, self.leave_out = part, leave_out
        self.target = out / part.path.name
        self.work = out / f".{part.path.name}.cleaning"

    def __enter__(self) -> "PartitionCopy":
        if self.target.exists():
            raise FileExistsError(f"{self.target} exists")
        if self.work.exists():
            shutil.rmtree(self.work)
        self.work.mkdir(parents=True)
        try:
            for f in sorted(self.part.path.iterdir()):
                if f.is_file() and f not in self.leave_out:
                    shutil.copy2(f, self.work / f.name)
        except BaseException:
            shutil.rmtree(self.work, ignore_errors=True)
            raise
        return self

    def segment(self, base: int, data: bytes) -> None:
        """A segment of these bytes at `base`, with its offset and time indexes rebuilt."""
        stem = f"{base:020d}"
        write_atomically(self.work / f"{stem}.log", data)
        offsets, times = index.rebuild(scan_bytes(data).batches, base)
        write_atomically(self.work / f"{stem}.index", index.encode_offset_index(offsets, base))
        write_atomically(self.work / f"{stem}.timeindex", index.encode_time_index(times, base))

    def copy(self, path: Path) -> None:
        shutil.copy2(path, self.work / path.name)

    def __exit__(self, kind, *exc) -> None:
        if kind is None:
            self.work.rename(self.target)
        else:
            shutil.rmtree(self.work, ignore_errors=True)
