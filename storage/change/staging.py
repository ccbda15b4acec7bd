"""A copy of a partition directory built where it cannot be mistaken for a finished one: in a
hidden work directory beside its target, renamed into place when complete, removed on failure.
Only kept bytes are flushed here (create_kept); a command that must survive a power loss
publishes the copies through storage.change.replace, which flushes them before they replace anything."""
from __future__ import annotations

from pathlib import Path

from ..indexes import index
from ..diskio.durable import create_kept, remove_tree
from ..layout.logdir import Partition, Segment
from ..diskio.safeio import FileProblem, copy_file, os_problem
from ..segments.scan import scan_bytes
from ..indexes.txnindex import encode_txn_index


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
            raise FileProblem(self.target, "exists; a cleaned copy is never written over anything")
        remove_tree(self.work)  # left by an interrupted copy: a copy only, the partition has it all
        try:
            self.work.mkdir(parents=True)
            for f in sorted(self.part.path.iterdir()):
                if f.is_file() and f not in self.leave_out:
                    copy_file(f, self.work / f.name)
        except OSError as err:
            remove_tree(self.work)
            raise os_problem(getattr(err, "filename", None) or self.work, err) from None
        except BaseException:
            remove_tree(self.work)
            raise
        return self

    def segment(self, base: int, data: bytes) -> None:
        """A segment of these bytes at `base`, with its offset and time indexes rebuilt."""
        stem = f"{base:020d}"
        offsets, times = index.rebuild(scan_bytes(data).batches, base)
        self._write(f"{stem}.log", data)
        self._write(f"{stem}.index", index.encode_offset_index(offsets, base))
        self._write(f"{stem}.timeindex", index.encode_time_index(times, base))

    def txn_index(self, base: int, entries) -> None:
        """The segment's .txnindex of these aborted transactions."""
        self._write(f"{base:020d}.txnindex", encode_txn_index(entries))

    def copy(self, path: Path) -> None:
        copy_file(path, self.work / path.name)

    def keep(self, name: str, data: bytes) -> Path:
        """Bytes kept aside (damage passed over) in a file of their own, never over another."""
        return create_kept(self.work / name, data)

    def _write(self, name: str, data: bytes) -> None:
        try:
            with open(self.work / name, "xb") as f:  # the work directory is ours: nothing to replace
                f.write(data)
        except OSError as err:
            raise os_problem(self.work / name, err) from None

    def __exit__(self, kind, *exc) -> None:
        if kind is None:
            try:
                self.work.rename(self.target)
            except OSError as err:
                remove_tree(self.work)
                raise os_problem(self.target, err) from None
        else:
            remove_tree(self.work)
