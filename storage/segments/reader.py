"""Read a partition's batches and records across its segments. Damage ends the reading of its
segment only: it is reported, and reading goes on with the next segment."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

from kafkacodec.codec.records import Batch, read_batches
from kafkacodec.runtime.errors import DecodeError

from ..layout.logdir import Partition, Segment
from .resync import next_valid_batch
from .scan import file_frames, iter_file_batches
from ..diskio.windowed import WindowedFile

OnDamage = Callable[["Damage"], None]


@dataclass(frozen=True)
class Damage:
    segment: Segment
    position: int  # where the batch that could not be read starts
    error: DecodeError


@dataclass(frozen=True)
class Skipped:
    """Bytes passed over after damage: from the first bad batch to the next valid one."""
    start: int
    end: int
    error: DecodeError


def batches_of(data: bytes, end: int | None = None, verify: bool = True,
               skip_corrupt: bool = False) -> Iterator[Batch | Skipped]:
    """The batches of a segment's bytes. Damage ends them, raising its DecodeError, or with
    `skip_corrupt` is yielded as the range skipped up to the next batch whose CRC matches."""
    end = len(data) if end is None else end
    pos = 0
    while pos < end:
        start = pos
        try:
            for batch in read_batches(data, pos, end, verify):
                start = batch.position + batch.size
                yield batch
            return
        except DecodeError as err:
            if not skip_corrupt:
                raise
            resume = next_valid_batch(data, start, end)
            yield Skipped(start, end if resume is None else resume, err)
            if resume is None:
                return
            pos = resume


def segment_batches(seg: Segment, verify: bool = True) -> Iterator[Batch | Damage]:
    """Batches of one segment, each copied out of the window it was read in, so that it keeps no
    window alive; then its damage. Memory stays bounded whatever the file's size, and a file
    truncated underneath ends in damage where it ends (windowed.WindowedFile)."""
    pos = 0
    try:
        with WindowedFile(seg.log) as f:
            for buf, at, pos, size in file_frames(f):  # positions in the file
                try:
                    batch = next(read_batches(buf[at:at + size], verify=verify))
                except DecodeError as err:  # positions in the batch's own bytes
                    err.position = pos + (err.position or 0)
                    raise
                batch.position = pos
                yield batch
                pos += size
    except DecodeError as err:
        err.file = str(seg.log)
        yield Damage(seg, pos, err)


def partition_batches(part: Partition, verify: bool = True, on_damage: OnDamage | None = None
                      ) -> Iterator[tuple[Segment, Batch]]:
    """Every readable batch of the partition with its segment; damage goes to `on_damage`."""
    for seg in part.segments:
        for item in segment_batches(seg, verify):
            if isinstance(item, Damage):
                if on_damage is not None:
                    on_damage(item)
                break
            yield seg, item


def partition_records(part: Partition, verify: bool = True, on_damage: OnDamage | None = None):
    """Every record of the partition in offset order, as (batch, record) pairs; a batch whose
    records do not decode is reported and passed over."""
    for seg, batch in partition_batches(part, verify, on_damage):
        try:
            records = list(batch)
        except DecodeError as err:
            err.file = str(seg.log)
            if on_damage is not None:
                on_damage(Damage(seg, batch.position, err))
            continue
        for record in records:
            yield batch, record


def log_end_offset(part: Partition) -> int | None:
    """The offset after the last valid batch (after damage: where recovery would end the log)."""
    for seg in reversed(part.segments):
        last = None
        for item in iter_file_batches(seg.log):  # CRCs checked: the end recovery would keep
            if isinstance(item, DecodeError):
                break
            last = item.last_offset
        if last is not None:
            return last + 1
    return part.segments[-1].base_offset if part.segments else None
