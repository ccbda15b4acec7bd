"""Find what a path holds: a log-dirs root, one partition directory, or one segment file.

Directories and files Kafka itself would not load as live data (partitions pending deletion,
future and stray replicas, `.deleted`/`.cleaned`/`.swap` files) are listed as skipped, with why.
"""
from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from . import names
from ..diskio.safeio import FileProblem, kind_of, os_problem


@dataclass
class Segment:
    base_offset: int
    log: Path
    index: Path | None = None
    time_index: Path | None = None
    txn_index: Path | None = None


@dataclass
class Partition:
    topic: str
    partition: int
    path: Path
    segments: list[Segment] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)
    snapshots: dict[int, Path] = field(default_factory=dict)  # producer state, by offset


@dataclass
class LogDir:
    path: Path
    partitions: list[Partition] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)

    def topics(self) -> list[str]:
        return sorted({p.topic for p in self.partitions})


def open_partition(path: Path, topic: str | None = None, partition: int | None = None) -> Partition:
    """The segments of a partition directory, in offset order, with their index files."""
    if topic is None:
        parsed = names.parse_partition_dir(path.name)
        topic, partition = (parsed.topic, parsed.partition) if parsed else (path.name, -1)
    part = Partition(topic, partition, path)
    files = names.sort_partition_files(f.name for f in _entries(path) if _regular_file(f))
    for base, by_suffix in files.segments.items():
        seg = Segment(base, path / by_suffix[names.LOG])
        seg.index, seg.time_index, seg.txn_index = (
            path / by_suffix[s] if s in by_suffix else None for s in (names.INDEX, names.TIME_INDEX, names.TXN_INDEX))
        part.segments.append(seg)
    part.snapshots = {offset: path / name for offset, name in files.snapshots.items()}
    part.skipped = [(path / name, why) for name, why in files.skipped]
    return part


def open_log_dir(path: Path) -> LogDir:
    """Every live partition directory of a log-dirs root, sorted by topic and partition."""
    root = LogDir(path)
    entries = _entries(path)
    for f in sorted(p for p in entries if names.is_segment_log(p.name) and not p.is_dir()):
        root.skipped.append((f, "a segment file outside any partition directory (Kafka does not read it)"))
    for p in sorted(p for p in entries if not p.is_dir()):
        why = _not_a_directory(p)
        if why is not None:
            root.skipped.append((p, why))
    for d in sorted(p for p in entries if p.is_dir()):
        parsed = names.parse_partition_dir(d.name)
        why = names.partition_dir_skip(parsed, _listing(d) if parsed is not None else None)
        if why is not None:
            root.skipped.append((d, why))
        else:
            root.partitions.append(open_partition(d, parsed.topic, parsed.partition))
    root.partitions.sort(key=lambda p: (p.topic, p.partition))
    return root


def _not_a_directory(path: Path) -> str | None:
    """Why an entry of a log dir that is no directory is said to be passed over, as Kafka passes
    it over: a symbolic link that leads nowhere, or to a file, named as a partition directory;
    None for files (a broker keeps its own there, rotated logs named as partitions among them)."""
    try:
        os.stat(path)
    except OSError as err:
        if not os.path.islink(path):
            raise os_problem(path, err) from None
        where = "which does not exist" if err.errno == errno.ENOENT else f"which cannot be followed ({err.strerror})"
        return f"a symbolic link to {os.readlink(path)}, {where} (Kafka passes it over: whatever it held is not read)"
    if not os.path.islink(path) or names.parse_partition_dir(path.name) is None:
        return None
    return (f"named as a partition directory but a symbolic link to {os.readlink(path)}, not a directory (Kafka "
            "passes it over: nothing is read)")


def _listing(path: Path) -> tuple[list[str], list[str]]:
    """The names of a directory's files and of its subdirectories named as partitions."""
    entries = _entries(path)
    return [p.name for p in entries], [p.name for p in entries if names.parse_partition_dir(p.name) and p.is_dir()]


def is_partition_dir(path: Path) -> bool:
    """A directory holding segment files (a partition), rather than a log-dirs root: see
    names.is_partition_listing (a stray server.log at a root does not make it a partition)."""
    return names.is_partition_listing(*_listing(path))


def partitions_at(path: Path) -> list[Partition]:
    """The partitions of `path`, a partition directory or a log-dirs root."""
    return [open_partition(path)] if is_partition_dir(path) else open_log_dir(path).partitions


def at_path(path: Path) -> LogDir:
    """What a path the user names holds: one segment file (a partition of one segment, named by
    its directory when that is a partition's), a partition directory, or a log-dirs root."""
    if path.is_file():
        parsed = names.parse_partition_dir(path.resolve().parent.name)
        topic, number = (parsed.topic, parsed.partition) if parsed else (path.resolve().parent.name, -1)
        return LogDir(path.parent, [Partition(topic, number, path.parent, [segment_of(path)])])
    if is_partition_dir(path):
        return LogDir(path.parent, [open_partition(path)])
    return open_log_dir(path)


def _entries(path: Path) -> list[Path]:
    """What a directory holds; a path that is no directory is a FileProblem saying what it is."""
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISDIR(mode):
            kind = kind_of(mode) if kind_of(mode) not in (None, "not a regular file") else "a file"
            raise FileProblem(path, f"is {kind}, neither a directory nor a segment file")
        return list(path.iterdir())
    except OSError as err:
        raise os_problem(path, err) from None


def _regular_file(path: Path) -> bool:
    """Whether a partition directory's entry is a regular file (symbolic links followed). One that a
    reader would take for a segment, an index or a snapshot but that is a FIFO, a device or a
    dangling link is a FileProblem (Kafka would pass over it, and a copy holding one lacks the data
    it names); a directory so named is passed over, as Kafka's log loading does."""
    try:
        mode = os.stat(path).st_mode
    except OSError as err:
        if not path.name.endswith((*names.SEGMENT_SUFFIXES, names.SNAPSHOT)):
            return False
        raise os_problem(path, err) from None
    if stat.S_ISREG(mode):
        return True
    if stat.S_ISDIR(mode):
        return False
    if path.name.endswith((*names.SEGMENT_SUFFIXES, names.SNAPSHOT)):
        raise FileProblem(path, f"is {kind_of(mode)}, not a regular file")
    return False


def segment_of(path: Path) -> Segment:
    """The segment of one .log file with whichever of its index files exist. Its base offset is
    the offset in its name or, for a file renamed by hand (`suspect.log`), the offset of its
    first batch (0 when it has none): the index files beside it are relative to that."""
    try:
        base = names.offset_from_name(path.name)
    except ValueError:
        base = names.first_offset_in(path)
    stem = path.with_suffix("")
    return Segment(base, path, *(p if p.is_file() else None
                                 for p in (stem.with_suffix(".index"), stem.with_suffix(".timeindex"),
                                           stem.with_suffix(".txnindex"))))

