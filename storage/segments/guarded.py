"""Reading a partition for a command that changes files. Damage is refused, as a DecodeError
naming the file and the byte where the bad batch starts, unless the caller asks to skip it: then
reading goes on from the next valid batch, and every range passed over is reported (file, bytes,
why), for the command to keep aside. A batch counts as damaged when its framing or CRC is bad or
when its records do not decode, since a command that rewrites records must read every one."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from kafkacodec.codec.records import Batch
from kafkacodec.runtime.errors import DecodeError

from ..layout.logdir import Partition, Segment
from .reader import Skipped, batches_of
from .records_check import decoded_records
from ..diskio.safeio import read_whole


@dataclass(frozen=True)
class SkippedBytes:
    log: Path
    start: int
    end: int
    reason: str

    def describe(self) -> str:
        return f"{self.log}: bytes {self.start}..{self.end} ({self.end - self.start} bytes) skipped: {self.reason}"


OnSkip = Callable[[SkippedBytes], None]


def read_segment(log: Path) -> bytes:
    """The whole .log file (a regular file only; failures as FileProblems naming it)."""
    return read_whole(log)


def segment_batches(seg: Segment, data: bytes | None = None, skip_corrupt: bool = False,
                    deep: bool = True) -> Iterator[Batch | SkippedBytes]:
    """The batches of a segment in order (records decoded first when `deep`); damage raises, or
    with `skip_corrupt` is yielded as the bytes passed over."""
    data = read_segment(seg.log) if data is None else data
    items = batches_of(data, verify=True, skip_corrupt=skip_corrupt)
    while True:
        try:
            item = next(items)
        except StopIteration:
            return
        except DecodeError as err:
            raise err.with_context(file=str(seg.log)) from None
        if isinstance(item, Skipped):
            yield SkippedBytes(seg.log, item.start, item.end, item.error.message)
            continue
        if deep:  # the same rule as verify's: every record reads, offsets rise within the batch
            found = decoded_records([item])
            if found.over_limit:  # not damage: never skipped, nor cut; a larger limit reads it
                raise found.over_limit[0][1].with_context(file=str(seg.log))
            bad, err = found.bad, found.error
            if bad is not None:
                if not skip_corrupt:
                    raise DecodeError(f"records do not decode: {err.message}", item.position, err.path,
                                      str(seg.log)) from None
                yield SkippedBytes(seg.log, item.position, item.position + item.size,
                                   f"records do not decode: {err.message}")
                continue
        yield item


def partition_batches(part: Partition, skip_corrupt: bool = False, on_skip: OnSkip | None = None,
                      deep: bool = True) -> Iterator[tuple[Segment, Batch]]:
    """Every batch of the partition with its segment; skipped bytes go to `on_skip`."""
    for seg in part.segments:
        for item in segment_batches(seg, skip_corrupt=skip_corrupt, deep=deep):
            if isinstance(item, SkippedBytes):
                if on_skip is not None:
                    on_skip(item)
                continue
            yield seg, item
