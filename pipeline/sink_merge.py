"""The job commit's gathering of one partition: the segments its tasks wrote, in offset order,
moved into the partition's staging directory, consecutive ones joined while together they fit in
`segmentBytes`, so that a partition written by many tasks has the segments one writer would
have given it (a segment larger than that alone stays alone)."""
from __future__ import annotations

import shutil
from pathlib import Path

from kafkacodec.storage.indexes import index
from kafkacodec.storage.layout import names
from kafkacodec.storage.layout.logdir import Segment, open_partition
from kafkacodec.storage.diskio.safeio import os_problem
from kafkacodec.storage.segments.scan import scan_file

JOINING = ".cleaned"  # a suffix Kafka's log loading removes, were a joined segment ever seen unfinished


def move_segments(folders: list[Path], target: Path, segment_bytes: int) -> None:
    """`folders`: each task's directory for this partition, in the order of their offsets."""
    groups: list[list[Segment]] = []
    group_bytes = 0
    for folder in folders:
        for seg in open_partition(folder).segments:
            size = seg.log.stat().st_size
            if groups and group_bytes + size <= segment_bytes:
                groups[-1].append(seg)
                group_bytes += size
            else:
                groups.append([seg])
                group_bytes = size
    for group in groups:
        if len(group) == 1:
            for f in (group[0].log, group[0].index, group[0].time_index, group[0].txn_index):
                if f is not None:
                    _move(f, target / f.name)
        else:
            _join(group, target)
    for folder in folders:  # the producer-state snapshots the tasks took
        for f in sorted(folder.glob("*" + names.SNAPSHOT)):
            _move(f, target / f.name)


def _move(src: Path, dst: Path) -> None:
    try:
        src.replace(dst)
    except OSError as err:
        raise os_problem(dst, err) from None


def _join(group: list[Segment], target: Path) -> None:
    base = group[0].base_offset
    stem = target / names.segment_name(base)
    joining = stem.with_name(stem.name + names.LOG + JOINING)
    path = joining
    try:
        with open(joining, "wb") as out:
            for seg in group:
                with open(seg.log, "rb") as part:
                    shutil.copyfileobj(part, out, 1 << 20)
        offsets, times = index.rebuild(scan_file(joining).batches, base)
        for path, data in ((stem.with_name(stem.name + names.INDEX), index.encode_offset_index(offsets, base)),
                           (stem.with_name(stem.name + names.TIME_INDEX), index.encode_time_index(times, base))):
            path.write_bytes(data)
        aborted = b"".join(seg.txn_index.read_bytes() for seg in group if seg.txn_index is not None)
        if aborted:  # entries name absolute offsets, so the tasks' entries join as they are
            path = stem.with_name(stem.name + names.TXN_INDEX)
            path.write_bytes(aborted)
        path = stem.with_name(stem.name + names.LOG)
        joining.replace(path)
    except OSError as err:
        raise os_problem(path, err) from None
