"""Find what a path holds: a log-dirs root, one partition directory, or one segment file.

Directories and files Kafka itself would not load as live data (partitions pending deletion,
future and stray replicas, `.deleted`/`.cleaned`/`.swap` files) are listed as skipped, with why.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from . import names


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
    by_base: dict[int, Segment] = {}
    for f in sorted(path.iterdir()):
        if not f.is_file():
            continue
        if names.is_transient(f.name):
            part.skipped.append((f, "in flight (Kafka removes or renames it at load)"))
            continue
        suffix = f.suffix
        if suffix == names.SNAPSHOT:
            try:
                part.snapshots[names.offset_from_name(f.name)] = f
            except ValueError:
                part.skipped.append((f, "name is not a 20-digit offset"))
            continue
        if suffix not in (names.LOG, names.INDEX, names.TIME_INDEX, names.TXN_INDEX):
            continue
        try:
            base = names.offset_from_name(f.name)
        except ValueError:
            part.skipped.append((f, "name is not a 20-digit offset"))
            continue
        seg = by_base.setdefault(base, Segment(base, path / (names.segment_name(base) + names.LOG)))
        if suffix == names.INDEX:
            seg.index = f
        elif suffix == names.TIME_INDEX:
            seg.time_index = f
        elif suffix == names.TXN_INDEX:
            seg.txn_index = f
    for base in sorted(by_base):
        seg = by_base[base]
        if seg.log.exists():
            part.segments.append(seg)
        else:
            part.skipped.append((seg.index or seg.time_index or seg.txn_index, "index without a .log (orphan)"))
    return part


def open_log_dir(path: Path) -> LogDir:
    """Every live partition directory of a log-dirs root, sorted by topic and partition."""
    root = LogDir(path)
    for d in sorted(p for p in path.iterdir() if p.is_dir()):
        parsed = names.parse_partition_dir(d.name)
        if parsed is None:
            root.skipped.append((d, "not a partition directory"))
        elif parsed.kind != "live":
            root.skipped.append((d, f"{parsed.kind} replica directory (not live data)"))
        else:
            root.partitions.append(open_partition(d, parsed.topic, parsed.partition))
    root.partitions.sort(key=lambda p: (p.topic, p.partition))
    return root
