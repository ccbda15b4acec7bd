"""Scan a segment as Kafka's recovery does (LogSegment.recover): batch framing, size and CRC only.

The scan reports the valid prefix, the position of the first invalid byte and why; it does not
decompress or iterate records, exactly as recovery does not. Deeper checks belong to reading.
One difference, on purpose: Kafka's file reader hands any magic of 2 or more to the v2 parser, so
a batch with magic 3..127 and a matching CRC survives its recovery; here it is invalid.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from kafkacodec.generated.legacy_log_entry import LegacyLogEntry
from kafkacodec.generated.record_batch import RecordBatch
from kafkacodec.runtime.errors import DecodeError, InvalidValueError, TruncatedError

from .mapped import Mapped

LOG_OVERHEAD = 12  # offset and size fields in front of every batch or entry
HEADER_SIZE_UP_TO_MAGIC = 17
MIN_RECORD_OVERHEAD = 14  # the smallest legacy message; smaller sizes are corrupt


@dataclass(frozen=True)
class BatchInfo:
    """What recovery knows of a batch without reading its records."""
    position: int
    size: int
    magic: int
    last_offset: int
    max_timestamp: int
    entry: RecordBatch | LegacyLogEntry


@dataclass
class ScanResult:
    file_size: int
    valid_bytes: int = 0
    batches: list[BatchInfo] = field(default_factory=list)
    error: DecodeError | None = None  # the first problem; its batch starts at valid_bytes

    @property
    def truncated_bytes(self) -> int:
        return self.file_size - self.valid_bytes

    @property
    def is_valid(self) -> bool:
        return self.error is None


def frame_size(buf, pos: int, end: int) -> int:
    """The whole size of the batch starting at `pos` (offset and size fields included), from its
    size field, checked as FileLogInputStream checks it: at least the minimum, within `end`."""
    if end - pos < LOG_OVERHEAD:
        raise TruncatedError(f"{end - pos} bytes left, too few for a batch's offset and size", pos, "log")
    size = int.from_bytes(buf[pos + 8:pos + 12], "big", signed=True)
    if size < MIN_RECORD_OVERHEAD:
        raise InvalidValueError(f"found record size {size} smaller than minimum record overhead "
                                f"({MIN_RECORD_OVERHEAD})", pos + 8, "log/size")
    if pos + LOG_OVERHEAD + size > end:
        raise TruncatedError(f"batch of {LOG_OVERHEAD + size} bytes extends past the end of the file "
                             f"({end - pos} bytes left)", pos, "log")
    return LOG_OVERHEAD + size


def batch_positions(buf, start: int = 0, end: int | None = None) -> list[int]:
    """Where each batch of buf[start:end] begins, from the framing alone (sizes, nothing else)."""
    end = len(buf) if end is None else end
    out, pos = [], start
    while pos < end:
        out.append(pos)
        pos += frame_size(buf, pos, end)
    return out


def batch_at(buf, pos: int, end: int, verify: bool = True) -> BatchInfo:
    """The batch starting at `pos`, validated as FileLogInputStream and ensureValid do (the CRC
    only with `verify`)."""
    stop = pos + frame_size(buf, pos, end)
    magic = buf[pos + 16]
    if magic < 2:
        entry, _ = LegacyLogEntry.read(buf, pos, stop, verify=verify)
        m = entry.message
        return BatchInfo(pos, stop - pos, magic, entry.offset, -1 if m.magic == 0 else m.timestamp, entry)
    entry, _ = RecordBatch.read(buf, pos, stop, verify=verify)
    return BatchInfo(pos, stop - pos, magic, entry.last_offset, entry.max_timestamp, entry)


def iter_batches(buf, end: int | None = None, start: int = 0,
                 verify: bool = True) -> Iterator[BatchInfo | DecodeError]:
    """Valid batches in order from `start`; the first invalid one is yielded as its error, and
    iteration ends. Without `verify` CRCs are not checked (framing still is)."""
    end = len(buf) if end is None else end
    pos = start
    while pos < end:
        if end - pos <= HEADER_SIZE_UP_TO_MAGIC:
            yield TruncatedError(f"{end - pos} bytes at the end are too few for a batch header", pos, "log")
            return
        try:
            info = batch_at(buf, pos, end, verify)
        except DecodeError as err:  # positioned at the field that failed; the batch starts at pos
            yield err
            return
        yield info
        pos += info.size


def scan_bytes(buf, keep_batches: bool = True, verify: bool = True) -> ScanResult:
    result = ScanResult(file_size=len(buf))
    for item in iter_batches(buf, verify=verify):
        if isinstance(item, DecodeError):
            result.error = item
            break
        result.valid_bytes = item.position + item.size
        if keep_batches:
            result.batches.append(item)
    return result


def scan_file(path: str | Path, keep_batches: bool = True, verify: bool = True) -> ScanResult:
    """Scan a .log file through a read-only memory map; errors name the file. Kept batches decode
    their records lazily from the buffer, which must outlive the map: then the file is read into
    memory. A plain scan streams through the map, its resident memory bounded (mapped.Mapped)."""
    path = Path(path)
    with Mapped(path) as m:
        if keep_batches:
            result = scan_bytes(bytes(m.buf), keep_batches, verify)
        else:
            result = ScanResult(file_size=len(m.buf))
            for item in iter_batches(m.buf, verify=verify):
                if isinstance(item, DecodeError):
                    result.error = item
                    break
                result.valid_bytes = item.position + item.size
                m.done_up_to(result.valid_bytes)
    if result.error is not None:
        result.error.file = str(path)
    return result


def next_valid_batch(buf, start: int, end: int | None = None) -> int | None:
    """The first position after `start` where a whole batch with a matching CRC begins, or None:
    where reading can go on after damage (storage.resync, in time linear in the bytes searched)."""
    from .resync import next_valid_batch as search

    return search(buf, start, end)
