"""Offsets for rows written without them. Each write task numbers its rows of a partition from 0,
as it cannot know how many rows other tasks hold; the job's commit then gives a partition written
by several tasks one run of offsets from 0: the rows of the task with the lowest id first, each
task's rows in the order they came, so that the same DataFrame written again gets the same
offsets. A task's batches move up by the rows of the tasks before it: a v2 batch's base offset
lies outside its CRC, and its index entries are relative to its segment's base offset, so the
batches are rewritten in place and the segments renamed; the producer state (.txnindex files and
snapshots) is replayed from the partition's batches once they are gathered."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from kafkacodec.runtime.errors import DecodeError
from kafkacodec.storage.layout import names
from kafkacodec.storage.layout.logdir import open_partition
from kafkacodec.storage.state.producers import ProducerState, snapshot_path
from kafkacodec.storage.diskio.safeio import os_problem
from kafkacodec.codec.places import LOG_OVERHEAD, MAGIC_AT, V2, layout_struct
from kafkacodec.storage.segments.scan import iter_file_batches
from kafkacodec.storage.indexes.txnindex import encode_txn_index

# a batch's header up to its magic byte, and its base offset, read and written at their places
_HEAD = layout_struct(V2, {"base_offset": "q", "batch_length": "i", "magic": "B"})
_BASE_OFFSET = layout_struct(V2, {"base_offset": "q"})


@dataclass
class Piece:
    """What one task wrote of one partition: its offsets (after any shift), whether they were
    assigned by the task, the task's folder, and how far the commit moves them up."""
    first: int
    last: int
    assigned: bool
    folder: Path
    shift: int = 0


def assign(pieces: list[Piece]) -> str | None:
    """Shift the pieces of a partition written without offsets (in task order) to follow one
    another from 0; a problem to report when only some of them were written without offsets."""
    assigned = [p.assigned for p in pieces]
    if not any(assigned) or len(pieces) == 1:
        return None
    if not all(assigned):
        return (f"the rows of {sum(assigned)} of its {len(pieces)} tasks had no offsets and the others' had: "
                "give every row an offset, or none")
    start = 0
    for p in pieces:
        p.shift = start - p.first
        p.first, p.last = p.first + p.shift, p.last + p.shift
        start = p.last + 1
    return None


def renumber(folder: Path, shift: int) -> None:
    """Move every batch of the partition directory `folder` (v2 batches, as the sink writes them)
    `shift` offsets up, its segments renamed to match; its .txnindex and snapshot files go, as
    rebuild_producer_files makes the gathered partition's."""
    part = open_partition(folder)
    for seg in reversed(part.segments):  # the highest first: a new name may be an older one of the folder
        if shift:
            _shift_batches(seg.log, shift)
            new = names.segment_name(seg.base_offset + shift)
            for f in (seg.log, seg.index, seg.time_index):
                if f is not None:
                    _rename(f, f.with_name(new + f.suffix))
        if seg.txn_index is not None:
            _remove(seg.txn_index)
    for path in part.snapshots.values():
        _remove(path)


def _shift_batches(log: Path, shift: int) -> None:
    try:
        fd = os.open(log, os.O_RDWR)
    except OSError as err:
        raise os_problem(log, err) from None
    try:
        size, pos = os.fstat(fd).st_size, 0
        while pos < size:
            head = os.pread(fd, _HEAD.size, pos)
            if len(head) < _HEAD.size or head[MAGIC_AT] < 2:
                raise DecodeError("not a v2 batch, whose offsets the commit could assign", pos, "batch", str(log))
            base, length, _ = _HEAD.unpack(head)
            os.pwrite(fd, _BASE_OFFSET.pack(base + shift), pos)
            pos += LOG_OVERHEAD + length
    except OSError as err:
        raise os_problem(log, err) from None
    finally:
        os.close(fd)


def rebuild_producer_files(directory: Path) -> None:
    """The .txnindex files and producer-state snapshots of a gathered partition, replayed from its
    first batch as Kafka's recovery replays them: each segment's aborted transactions, and a
    snapshot at each segment's end, where a writer takes one (at each roll, and at close)."""
    state = None
    for seg in open_partition(directory).segments:
        state = state or ProducerState(end_offset=seg.base_offset)
        aborted = []
        for batch in iter_file_batches(seg.log):
            if isinstance(batch, DecodeError):
                raise batch
            entry = state.apply(batch)
            if entry is not None:
                aborted.append(entry)
        if aborted:
            _write(seg.log.with_suffix(names.TXN_INDEX), encode_txn_index(aborted))
        _write(snapshot_path(directory, state.end_offset), state.to_snapshot())


def _write(path: Path, data: bytes) -> None:
    try:
        path.write_bytes(data)
    except OSError as err:
        raise os_problem(path, err) from None


def _rename(src: Path, dst: Path) -> None:
    try:
        src.replace(dst)
    except OSError as err:
        raise os_problem(dst, err) from None


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError as err:
        raise os_problem(path, err) from None
