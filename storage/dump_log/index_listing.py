"""kafka-dump-log's .index and .timeindex listings (Kafka 4.1), each entry checked against the
segment's .log as Kafka's tool checks it.

Every physical slot counts, as in Kafka's mapped index: slot 0 is read even when it is zeros,
and a listing stops at the first later slot whose offset is the base offset (the zero-filled
tail of a preallocated index). An entry is checked by reading the batch at the position it names,
whatever is there, so a position inside a batch or past the end is Kafka's error too.
"""
from __future__ import annotations

import struct
from pathlib import Path
from typing import Iterator

from kafkacodec.codec.records import read_batches
from kafkacodec.generated.offset_index import OffsetIndex
from kafkacodec.generated.record_batch import RecordBatch
from kafkacodec.generated.time_index import TimeIndex
from kafkacodec.runtime.errors import DecodeError

from ..indexes import index
from .common import Crash, Line, Options, Reports, absolute, int_option, java_long, kafka_frame, size_option
from ..diskio.safeio import open_regular, read_at
from kafkacodec.codec.places import MAGIC_AT, V2_HEADER, layout_struct

# an index slot's fields at their places in the schemas: (relative offset, position) and
# (timestamp, relative offset)
OFFSET_ENTRY = layout_struct(OffsetIndex.Entry.LAYOUT, {"relative_offset": "i", "position": "i"})
TIME_ENTRY = layout_struct(TimeIndex.Entry.LAYOUT, {"timestamp": "q", "relative_offset": "i"})
OFFSET_SLOT, TIME_SLOT = OFFSET_ENTRY.size, TIME_ENTRY.size
# a batch's first offset and its last offset delta, read from its header
_BASE_OFFSET = layout_struct(RecordBatch.LAYOUT, {"base_offset": "q"})
_LAST_DELTA = layout_struct(RecordBatch.LAYOUT, {"last_offset_delta": "i"})
WARM_BYTES = 8192  # AbstractIndex's warm section: the newest entries, searched first


class _Log:
    """The segment's .log, read where an index points."""

    def __init__(self, path: Path, shown: str):
        self.shown = str(path)
        self.file = _open(path, " (the .log beside the index)")
        self.size = self.file.seek(0, 2)

    def close(self) -> None:
        self.file.close()

    def header(self, pos: int, end: int) -> tuple[int, int] | None:
        """(last offset, size) of the batch at `pos` if it lies whole before `end`, as Kafka's
        reader gives it; None when none does."""
        head = read_at(self.file, pos, max(0, min(end - pos, V2_HEADER)), self.shown)
        size = kafka_frame(head, 0, pos, end, self.shown)
        if size is None:
            return None
        base = _BASE_OFFSET.unpack_from(head)[0]
        if head[MAGIC_AT] < 2:
            return base, size
        if len(head) < _LAST_DELTA.size:
            raise Crash(f"{self.shown}: byte {pos}: the batch is too short for its last offset delta")
        return base + _LAST_DELTA.unpack_from(head)[0], size

    def batch_at(self, pos: int, window: int) -> int:
        """The last offset of the batch at `pos`, read within `window` bytes (--max-message-size)."""
        if pos < 0 or pos > self.size:
            raise Crash(f"{self.shown}: an index entry names byte {pos}, outside the log's {self.size} bytes")
        found = self.header(pos, min(self.size, pos + window))
        if found is None:
            raise Crash(f"{self.shown}: byte {pos}: no whole batch within {window} bytes of the position an index "
                        "entry names")
        return found[0]

    def max_timestamp(self, pos: int, size: int) -> int:
        """The largest record timestamp of the batch at `pos` (-1 when none is larger)."""
        data = read_at(self.file, pos, size, self.shown)
        try:
            return max([-1] + [r.timestamp for b in read_batches(data, verify=False) for r in b])
        except DecodeError as err:
            raise Crash(f"{self.shown}: byte {pos + (err.position or 0)}: the batch at byte {pos}: "
                        f"{err.message}") from None


class _NoLog:
    """In place of a missing .log, for our `dump` (Kafka's tool fails): nothing is checked."""

    def close(self) -> None:
        pass


def _log_of(path: Path, shown: str, damage) -> "_Log | _NoLog":
    if damage is not None and not path.exists():
        damage.note(f"{path} is missing: the entries of the index beside it are listed unchecked")
        return _NoLog()
    return _Log(path, shown)


class _Slots:
    """An index file's fixed-size slots, read by pread in chunks (sequentially) or one by one
    (searches): a preallocated 1 GiB index costs the slots actually read, not its size."""
    CHUNK = 64 << 10

    def __init__(self, path: Path, entry: struct.Struct, shown: str):
        if not path.exists():
            raise Crash(f"{path}: no such index file (Kafka's tool would create it empty and fail)")
        self.file = _open(path)
        self.size = self.file.seek(0, 2)
        self.entry, self.width, self.shown, self.n = entry, entry.size, shown, self.size // entry.size

    def close(self) -> None:
        self.file.close()

    def slot(self, i: int) -> tuple[int, int]:
        return self.entry.unpack(read_at(self.file, i * self.width, self.width, self.shown))

    def __iter__(self) -> Iterator[tuple[int, int]]:
        per = self.CHUNK // self.width
        for first in range(0, self.n, per):
            chunk = read_at(self.file, first * self.width, min(per, self.n - first) * self.width, self.shown)
            yield from self.entry.iter_unpack(chunk)


class _NoSlots:
    n = size = 0

    def close(self) -> None:
        pass


def _open(path: Path, what: str = ""):
    """A regular file opened for reading; the system's refusal ends Kafka's run (a Crash), while a
    FileProblem (not a regular file) is left to the command to judge."""
    try:
        return open_regular(path)
    except OSError as err:
        raise Crash(f"{path}: {err.strerror or err}{what}") from None


def _names(path: Path, shown: str) -> tuple[int, Path]:
    prefix = path.name.split(".")[0]
    return java_long(prefix, shown), path.with_name(prefix + ".log")


def _bounded(slots, log, damage, kind: str, rel_at: int):
    """For our `dump`: at most as many live entries as the segment can explain (Kafka has no
    such bound; junk would be listed and checked entry by entry). `rel_at`: where in a slot its
    relative offset is."""
    if damage is None or isinstance(log, _NoLog):
        return slots
    explained = index.max_entries(log.size)
    for i, slot in enumerate(slots):  # the live ones: up to the first later slot at the base offset
        if i > 0 and slot[rel_at] == 0:
            break
        if i == explained:
            raise Crash(f"{slots.shown}: byte {explained * slots.width}: {kind}: {kind.replace('_', ' ')} holds "
                        f"more than {explained} entries, more than its segment's {log.size} bytes explain")
    return slots


def dump_offset_index(path: Path, shown: str, opts: Options, reports: Reports, damage=None) -> Iterator[Line]:
    base, log_path = _names(path, shown)
    log = _log_of(log_path, shown, damage)
    slots = None
    try:
        slots = _Slots(path, OFFSET_ENTRY, shown)
        if slots.n == 0:
            yield "out", f"{shown} is empty."
            return
        if opts.index_sanity_check:
            last = base + slots.slot(slots.n - 1)[0]
            if last < base:
                raise Crash(f"{absolute(shown)}: corrupt index: the last offset {last} is less than the base "
                            f"offset {base}")
            if slots.size % OFFSET_SLOT:
                raise Crash(f"{absolute(shown)}: corrupt index: {slots.size} bytes is not a multiple of {OFFSET_SLOT}")
            yield "out", f"{shown} passed sanity check."
            return
        key = absolute(shown)
        window = None
        for i, (rel, pos) in enumerate(_bounded(slots, log, damage, "offset_index", 0)):
            offset = base + rel
            if i > 0 and offset == base:
                return
            if not isinstance(log, _NoLog):
                if window is None:
                    window = size_option(int_option(opts.max_message_size, "max-message-size"), "max-message-size",
                                         shown)
                found = log.batch_at(pos, window)
                if found != offset:
                    reports.offset_mismatches.setdefault(key, []).append((offset, found))
            if not opts.verify_index_only:
                yield "out", f"offset: {offset} position: {pos}"
    finally:
        log.close()
        if slots is not None:
            slots.close()


def lookup(slots, base: int, target: int) -> int:
    """The position of the largest offset index slot at or below `target` (0 when none), searched
    as AbstractIndex searches: the warm section of the newest slots first."""
    def offset(i):
        return base + slots.slot(i)[0]

    n = slots.n
    if n == 0 or offset(0) > target:
        return 0
    first_hot = max(0, n - 1 - WARM_BYTES // OFFSET_SLOT)
    lo, hi = (first_hot, n - 1) if offset(first_hot) <= target else (0, first_hot)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if offset(mid) <= target:
            lo = mid
        else:
            hi = mid - 1
    return slots.slot(lo)[1]


def dump_time_index(path: Path, shown: str, opts: Options, reports: Reports, damage=None) -> Iterator[Line]:
    base, log_path = _names(path, shown)
    log = _log_of(log_path, shown, damage)
    offsets = slots = None
    try:
        offsets_path = path.with_name(path.name.split(".")[0] + ".index")
        offsets = _NoSlots() if isinstance(log, _NoLog) or (damage is not None and not offsets_path.exists()) \
            else _Slots(offsets_path, OFFSET_ENTRY, shown)
        slots = _Slots(path, TIME_ENTRY, shown)
        if opts.index_sanity_check:
            if slots.n:
                first_ts, (last_ts, last_rel) = slots.slot(0)[0], slots.slot(slots.n - 1)
                if last_ts < first_ts:
                    raise Crash(f"{absolute(shown)}: corrupt time index: the last timestamp {last_ts} is less than "
                                f"the first {first_ts}")
                if base + last_rel < base:
                    raise Crash(f"{absolute(shown)}: corrupt time index: the last offset {base + last_rel} is less "
                                f"than the base offset {base}")
            if slots.size % TIME_SLOT:
                raise Crash(f"{absolute(shown)}: corrupt time index: {slots.size} bytes is not a multiple of "
                            f"{TIME_SLOT}")
            yield "out", f"{shown} passed sanity check."
            return
        key, previous = absolute(shown), -1
        for i, (ts, rel) in enumerate(_bounded(slots, log, damage, "time_index", 1)):
            offset = base + rel
            if i > 0 and offset == base:
                return
            if not isinstance(log, _NoLog):
                _check_time_entry(log, lookup(offsets, base, offset), ts, offset, previous, key, reports)
            if not opts.verify_index_only:
                yield "out", f"timestamp: {ts} offset: {offset}"
            previous = ts
    finally:
        for opened in (log, offsets, slots):
            if opened is not None:
                opened.close()


def _check_time_entry(log: _Log, pos: int, ts: int, offset: int, previous: int, key: str, reports: Reports) -> None:
    """From `pos`, the first batch whose last offset reaches `offset` must end there and have
    `ts` as its largest record timestamp."""
    while True:
        found = log.header(pos, log.size)
        if found is None:
            reports.not_found.setdefault(key, []).append((offset, -1))
            return
        last, size = found
        if last >= offset:
            break
        pos += size
    if last != offset:
        reports.not_found.setdefault(key, []).append((offset, last))
        return
    largest = log.max_timestamp(pos, size)
    if largest != ts:
        reports.time_mismatches.setdefault(key, []).append((ts, largest))
    if previous >= ts:
        reports.out_of_order.setdefault(key, []).append((ts, previous))
