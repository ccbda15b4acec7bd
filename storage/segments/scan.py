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

from .bigbatch import check_large_batch
from kafkacodec.codec.places import HEADER_SIZE_UP_TO_MAGIC, LEGACY_MIN_MESSAGE, LOG_OVERHEAD, MAGIC_AT, SIZE_AT
from ..diskio.safeio import read_whole
from ..diskio.windowed import WindowedFile

MIN_RECORD_OVERHEAD = LEGACY_MIN_MESSAGE  # the smallest legacy message; smaller sizes are corrupt


@dataclass(slots=True)
class BatchInfo:
    """What recovery knows of a batch without reading its records."""
    position: int
    size: int
    magic: int
    last_offset: int
    max_timestamp: int
    entry: RecordBatch | LegacyLogEntry | None  # None for a batch checked in parts (scan_file)
    # the file position of byte 0 of the buffer `entry` was read from: positions in errors that
    # decoding its records raises are relative to that buffer
    origin: int = 0


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
    return checked_size(int.from_bytes(buf[pos + SIZE_AT:pos + LOG_OVERHEAD], "big", signed=True), pos, end - pos)


def checked_size(size: int, pos: int, left: int) -> int:
    """The whole size of a batch at `pos` from its size field, with `left` bytes from `pos` to
    the end of the file; raises as FileLogInputStream refuses it."""
    if size < MIN_RECORD_OVERHEAD:
        raise InvalidValueError(f"found record size {size} smaller than minimum record overhead "
                                f"({MIN_RECORD_OVERHEAD})", pos + SIZE_AT, "log/size")
    if LOG_OVERHEAD + size > left:
        raise TruncatedError(f"batch of {LOG_OVERHEAD + size} bytes extends past the end of the file "
                             f"({left} bytes left)", pos, "log")
    return LOG_OVERHEAD + size


def batch_positions(buf, start: int = 0, end: int | None = None) -> list[int]:
    """Where each batch of buf[start:end] begins, from the framing alone (sizes, nothing else)."""
    end = len(buf) if end is None else end
    out, pos = [], start
    while pos < end:
        out.append(pos)
        pos += frame_size(buf, pos, end)
    return out


def batch_at(buf, pos: int, end: int, verify: bool = True, origin: int = 0) -> BatchInfo:
    """The batch starting at `pos`, validated as FileLogInputStream and ensureValid do (the CRC
    only with `verify`); `buf` starts at file position `origin`, which the batch's position
    includes (errors raised are positioned in `buf`)."""
    stop = pos + frame_size(buf, pos, end)
    magic = buf[pos + MAGIC_AT]
    if magic < 2:
        entry, _ = LegacyLogEntry.read(buf, pos, stop, verify=verify)
        m = entry.message
        return BatchInfo(origin + pos, stop - pos, magic, entry.offset, -1 if m.magic == 0 else m.timestamp, entry,
                         origin)
    entry, _ = RecordBatch.read(buf, pos, stop, verify=verify)
    return BatchInfo(origin + pos, stop - pos, magic, entry.last_offset, entry.max_timestamp, entry, origin)


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


def file_frames(f: WindowedFile, start: int = 0, header: int = LOG_OVERHEAD) -> Iterator[tuple[bytes, int, int, int]]:
    """(buf, at, position, size) for each batch of an open file from `start`: its bytes are
    buf[at:at + size] and it starts at `position` in the file. Framing only, as frame_size checks
    it, with at least `header` bytes at each batch's start; the first problem raises its
    DecodeError, positioned in the file. Batches are read a window at a time; one that runs past
    the window is read again from its start, whole. A file that shrinks underneath ends in a
    TruncatedError where it ends now."""
    pos = base = start
    buf = b""
    while pos < f.size:
        at = pos - base
        left = len(buf) - at
        if left < header:
            if base + len(buf) < f.size:  # the window ends before the file
                buf, base = f.load(pos), pos
                continue
            raise TruncatedError(f"{left} bytes at the end are too few for a batch header" if header > LOG_OVERHEAD
                                 else f"{left} bytes left, too few for a batch's offset and size", pos, "log")
        size = int.from_bytes(buf[at + SIZE_AT:at + LOG_OVERHEAD], "big", signed=True) + LOG_OVERHEAD
        if MIN_RECORD_OVERHEAD + LOG_OVERHEAD <= size <= left:
            yield buf, at, pos, size
            pos += size
            continue
        size = checked_size(size - LOG_OVERHEAD, pos, f.size - pos)  # sizes no batch can have raise here
        buf, base = f.load(pos, size), pos  # when the file shrank, the next round raises


def iter_file_batches(path: str | Path, start: int = 0, verify: bool = True, max_loaded: int | None = None,
                      window: int | None = None) -> Iterator[BatchInfo | DecodeError]:
    """Every batch of a segment file from `start` (a batch's start), as iter_batches gives those
    of a buffer: valid batches in order, positioned in the file, then the first invalid one as
    its DecodeError (naming the file and the byte), and iteration ends. Without `verify` CRCs are
    not checked (framing still is).

    The file is read through a window of a few MiB (windowed.WindowedFile), never mapped, so a
    truncation underneath the reader ends it with a TruncatedError instead of a signal. Each
    batch's `entry` decodes its records lazily from the window it was read from (`origin` is that
    window's file position): keeping a batch keeps its window. A batch larger than `max_loaded`
    bytes is checked in parts and given with entry None; by default every batch is read whole,
    so memory is about a window or the largest batch, whichever is more. `window` is the size of a
    window (windowed.WINDOW_BYTES by default; smaller for reading a few batches)."""
    path = Path(path)
    with WindowedFile(path, window) as f:
        for item in _file_items(f, start, verify, max_loaded):
            if isinstance(item, DecodeError):
                item.file = str(path)
            yield item


def _file_items(f: WindowedFile, pos: int, verify: bool, max_loaded: int | None):
    """iter_file_batches' items, without the file named. Batches are read in place in each
    window, as iter_batches reads a buffer; the framing is looked at apart only where a batch
    runs past the window (file_frames' rules)."""
    need = 0
    while pos < f.size:
        buf, base = f.load(pos, need), pos
        end, at, need = len(buf), 0, 0
        final = base + end >= f.size
        while end - at > HEADER_SIZE_UP_TO_MAGIC:
            try:
                info = batch_at(buf, at, end, verify, base)
            except DecodeError as err:  # positioned in the window
                size = int.from_bytes(buf[at + SIZE_AT:at + LOG_OVERHEAD], "big", signed=True)
                if final or at + LOG_OVERHEAD + size <= end:
                    yield err.with_context(offset=base)  # not for want of the rest of the window
                    return
                break
            yield info
            at += info.size
        pos = base + at
        if final:
            if at < end:
                yield TruncatedError(f"{end - at} bytes at the end are too few for a batch header", pos, "log")
            return
        if end - at <= HEADER_SIZE_UP_TO_MAGIC:
            continue  # the next window starts with this batch's header
        try:
            size = int.from_bytes(buf[at + SIZE_AT:at + LOG_OVERHEAD], "big", signed=True)
            size = checked_size(size, pos, f.size - pos)
            if max_loaded is None or size <= max_loaded:
                need = size  # the next window holds the batch whole
                continue
            magic, last_offset, max_timestamp = check_large_batch(f.read, pos, size, verify, f.window)
        except DecodeError as err:  # positioned in the file
            yield err
            return
        yield BatchInfo(pos, size, magic, last_offset, max_timestamp, None, pos)
        pos += size


def valid_file_batches(path: str | Path, result: ScanResult, verify: bool = True) -> Iterator[BatchInfo]:
    """The valid batches of a file, read as iter_file_batches reads them, for a single pass that
    keeps none of them; `result` gets the valid bytes and the first error, as from scan_file."""
    for item in iter_file_batches(path, verify=verify):
        if isinstance(item, DecodeError):
            result.error = item
            return
        result.valid_bytes = item.position + item.size
        yield item


def scan_file(path: str | Path, keep_batches: bool = True, verify: bool = True) -> ScanResult:
    """Scan a .log file; errors name the file. Kept batches decode their records lazily from the
    buffer they were read from: then the file is read whole, in one read, so that positions in
    them are positions in the file. A plain scan streams through a window (iter_file_batches):
    its memory stays bounded whatever the size of the file or of its batches (a batch larger than
    the window has its CRC computed in chunks)."""
    path = Path(path)
    if keep_batches:
        result = scan_bytes(read_whole(path), keep_batches, verify)
    else:
        with WindowedFile(path) as f:
            result = ScanResult(file_size=f.size)
            for item in _file_items(f, 0, verify, f.window):
                if isinstance(item, DecodeError):
                    result.error = item
                    break
                result.valid_bytes = item.position + item.size
    if result.error is not None:
        result.error.file = str(path)
    return result
