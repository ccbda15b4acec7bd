"""The lines Kafka 3.x's kafka-dump-log prints (DumpLogSegments), so outputs can be diffed."""
from __future__ import annotations

import heapq
from bisect import bisect_right
from pathlib import Path
from typing import Iterator

from kafkacodec.records import TIMESTAMP_TYPES, Batch
from kafkacodec.runtime.errors import DecodeError

from . import decoders, index
from .decoders import Decoder
from .names import offset_from_name
from .producers import ProducerState, last_sequence, read_snapshot
from .reader import Skipped, batches_of
from .safeio import check_regular, read_whole
from .scan import iter_file_batches
from .txnindex import iter_txn_index


def _bool(value) -> str:
    return "true" if value else "false"


def batch_line(batch: Batch) -> str:
    e = batch.entry
    if batch.is_legacy:
        m = e.message
        return (f"offset: {e.offset} position: {batch.position} {TIMESTAMP_TYPES[int(m.timestamp_type)]}: "
                f"{-1 if m.magic == 0 else m.timestamp} size: {batch.size} magic: {m.magic} "
                f"compresscodec: {batch.compression} crc: {m.crc} isvalid: {_bool(m.crc_valid)}")
    horizon = f"OptionalLong[{e.base_timestamp}]" if e.has_delete_horizon else "OptionalLong.empty"
    return (f"baseOffset: {e.base_offset} lastOffset: {e.last_offset} count: {e.records_count} "
            f"baseSequence: {e.base_sequence} lastSequence: {last_sequence(e.base_sequence, e.last_offset_delta)} "
            f"producerId: {e.producer_id} producerEpoch: {e.producer_epoch} "
            f"partitionLeaderEpoch: {e.partition_leader_epoch} isTransactional: {_bool(e.is_transactional)} "
            f"isControl: {_bool(e.is_control)} deleteHorizonMs: {horizon} position: {batch.position} "
            f"{TIMESTAMP_TYPES[int(e.timestamp_type)]}: {e.max_timestamp} size: {batch.size} magic: {e.magic} "
            f"compresscodec: {batch.compression} crc: {e.crc} isvalid: {_bool(e.crc_valid)}")


def _control(record) -> str:
    """What Kafka's tool appends for a control record: the marker, a KRaft record's JSON, or
    the type's name and id."""
    key, value = record.key or b"", record.value or b""
    if len(key) < 4:
        return " controlType: UNKNOWN(-1)"
    kind = int.from_bytes(key[2:4], "big", signed=True)
    if kind in (0, 1) and len(value) >= 6:
        return f" endTxnMarker: {'ABORT' if kind == 0 else 'COMMIT'} coordinatorEpoch: " \
               f"{int.from_bytes(value[2:6], 'big', signed=True)}"
    if kind in decoders.KRAFT_CONTROL_VALUES:
        label, text = decoders.kraft_control_json(kind, bytes(value))
        if text is not None:
            return f" {label} {text}"
    names = decoders.CONTROL_TYPE_NAMES
    if kind not in names or kind in (0, 1):  # a marker too short to read: as any unknown type
        return " controlType: UNKNOWN(-1)"
    return f" controlType: {names[kind]}({kind})"


def _data_only(record, decoder: Decoder) -> str:
    """--skip-record-metadata: `| key: k payload: v`, and with no key Kafka's line starts ` payload:`."""
    key, payload = decoder(record)
    if key is not None:
        return f"| key: {key}" + (f" payload: {payload}" if payload is not None else "")
    return f" payload: {payload}" if payload is not None else ""


def record_lines(batch: Batch, print_data: bool, skip_metadata: bool = False,
                 decoder: Decoder = decoders.utf8) -> Iterator[str]:
    """One line per record; keys and payloads through `decoder` (UTF-8 text unless a topic
    decoder is chosen)."""
    e = batch.entry
    if skip_metadata:
        if batch.is_legacy or not e.is_control:
            yield from (_data_only(r, decoder) for r in batch)
        return
    if batch.is_legacy:
        m = e.message
        messages = [x.message for x in m.value.entries] if m.compression else [m]
        for record, msg in zip(batch, messages):
            line = (f"| offset: {record.offset} {TIMESTAMP_TYPES[record.timestamp_type]}: {record.timestamp} "
                    f"keySize: {-1 if record.key is None else len(record.key)} "
                    f"valueSize: {-1 if record.value is None else len(record.value)} "
                    f"isValid: {_bool(msg.crc_valid)} crc: {msg.crc}}}")  # the stray '}' is Kafka's
            yield line + _data(record, print_data, decoder)
        return
    ts_type = TIMESTAMP_TYPES[int(e.timestamp_type)]
    for record in batch:
        line = (f"| offset: {record.offset} {ts_type}: {record.timestamp} "
                f"keySize: {-1 if record.key is None else len(record.key)} "
                f"valueSize: {-1 if record.value is None else len(record.value)} "
                f"sequence: {last_sequence(e.base_sequence, record.offset_delta)} "
                f"headerKeys: [{','.join(h.key for h in record.headers)}]")
        if e.is_control:
            yield line + _control(record)  # never the data of a control record
        else:
            yield line + _data(record, print_data, decoder)


def _data(record, print_data: bool, decoder: Decoder) -> str:
    if not print_data:
        return ""
    key, payload = decoder(record)
    return (f" key: {key}" if key is not None else "") + (f" payload: {payload}" if payload is not None else "")


def dump_log(path: Path, shown_as: str, deep: bool, print_data: bool, max_bytes: int | None,
             damage: list | None = None, skip_metadata: bool = False,
             summary: "DumpSummary | None" = None, decoder: Decoder = decoders.utf8,
             skip_corrupt: bool = False) -> Iterator[str]:
    """The lines for a .log; damage found is appended to `damage` (the first only, unless
    `skip_corrupt` reads on after each damaged range)."""
    data = read_whole(path)
    previous = None
    yield f"Dumping {shown_as}"
    try:
        yield f"Log starting offset: {offset_from_name(path.name)}"
    except ValueError:  # a copy under another name: the listing does not need the base offset
        yield "Log starting offset: unknown (the file name is not a 20-digit offset)"
    end = len(data) if max_bytes is None else min(len(data), max_bytes)
    valid = 0
    try:
        for batch in batches_of(data, end, verify=False, skip_corrupt=skip_corrupt):
            if isinstance(batch, Skipped):
                if damage is not None:
                    batch.error.file = batch.error.file or shown_as
                    damage.append(f"{batch.error} (bytes {batch.start}..{batch.end} skipped)")
                continue
            yield batch_line(batch)
            if deep or print_data:
                try:
                    lines = list(record_lines(batch, print_data, skip_metadata, decoder))
                except DecodeError as err:
                    if not skip_corrupt:
                        raise
                    err.file = err.file or shown_as
                    damage.append(f"{err} (records of the batch at byte {batch.position} skipped)")
                    lines = []
                yield from lines
                for record in (batch if lines else ()):  # deep iteration checks that offsets run on by one
                    if previous is not None and record.offset != previous + 1 and summary is not None:
                        summary.non_consecutive.setdefault(str(path.resolve()), []).append((previous, record.offset))
                    previous = record.offset
            valid = batch.position + batch.size
    except DecodeError as err:  # what follows the valid batches counts as invalid bytes, as in Kafka
        if damage is not None:
            err.file = err.file or shown_as
            damage.append(err)
    if max_bytes is None and valid < len(data):
        yield f"Found {len(data) - valid} invalid bytes at the end of {path.name}"


class DumpSummary:
    """What Kafka's tool reports on stderr after all files, kept in the order it prints them."""

    def __init__(self):
        self.non_consecutive: dict[str, list[tuple[int, int]]] = {}
        self.offset_mismatches: dict[str, list[tuple[int, int]]] = {}
        self.time_mismatches: dict[str, list[tuple[int, int]]] = {}
        self.out_of_order: dict[str, list[tuple[int, int]]] = {}
        self.not_found: list[tuple[int, int]] = []

    def lines(self) -> Iterator[str]:
        for path, pairs in self.offset_mismatches.items():
            yield f"Mismatches in :{path}"
            for found in reversed(pairs):  # Kafka prepends to a list, so the last found prints first
                yield f"  Index offset: {found[0]}, log offset: {found[1]}"
        for path, pairs in self.time_mismatches.items():
            yield f"Found timestamp mismatch in :{path}"
            yield from (f"  Index timestamp: {a}, log timestamp: {b}" for a, b in pairs)
        for path, pairs in self.out_of_order.items():
            yield f"Found out of order timestamp in :{path}"
            yield from (f"  Index timestamp: {a}, Previously indexed timestamp: {b}" for a, b in pairs)
        if self.not_found:
            yield "The following indexed offsets are not found in the log."
            yield from (f"Indexed offset: {a}, found log offset: {b}" for a, b in self.not_found)
        for path, pairs in self.non_consecutive.items():
            yield f"Non-consecutive offsets in {path}"
            yield from (f"  {a} is followed by {b}" for a, b in reversed(pairs))  # prepended in Kafka too


def dump_index(path: Path, shown_as: str, verify_only: bool = False, sanity_check: bool = False,
               summary: DumpSummary | None = None) -> Iterator[str]:
    """Entries of a .index or .timeindex, checked against the .log beside it as Kafka's tool checks.
    The index is read up to its zero-filled tail and refused when it holds more entries than the
    .log can explain (index.max_entries); the .log is read once, whatever the number of entries."""
    base = offset_from_name(path.name)
    yield f"Dumping {shown_as}"
    offset_index = path.suffix == ".index"
    log = path.with_suffix(".log")
    has_log = log.exists()
    bound = index.max_entries(check_regular(log) if has_log else index.MAX_SEGMENT_BYTES)
    read = index.iter_offset_index if offset_index else index.iter_time_index
    entries = read(path, base, bound)
    if sanity_check:
        first = last = None
        for e in entries:
            first, last = first or e, e
        yield f"{shown_as} is empty." if first is None else (
            _sanity(first, last, base, offset_index) or f"{shown_as} passed sanity check.")
        return
    if not has_log:  # nothing to check the entries against: they are listed as they come
        empty = True
        for e in entries:
            empty = False
            if not verify_only:
                yield _index_line(e)
        if empty:
            yield f"{shown_as} is empty."
        return
    entries = list(entries)  # as many as the segment can explain, at most
    if not entries:
        yield f"{shown_as} is empty."
        return
    summary = summary if summary is not None else DumpSummary()
    key = str(path.resolve())
    if offset_index:
        _check_offset_entries(entries, log, key, summary)
    else:
        offsets = list(index.iter_offset_index(path.with_suffix(".index"), base, bound)) \
            if path.with_suffix(".index").exists() else []
        _check_time_entries(entries, offsets, log, key, summary)
    if not verify_only:
        yield from map(_index_line, entries)


def _index_line(e) -> str:
    if isinstance(e, index.OffsetEntry):
        return f"offset: {e.offset} position: {e.position}"
    return f"timestamp: {e.timestamp} offset: {e.offset}"


def _valid_batches(log: Path):
    """The valid prefix of the log, batch headers only: what an index can point into."""
    for b in iter_file_batches(log, verify=False):
        if isinstance(b, DecodeError):
            return
        yield b


def _check_offset_entries(entries: list, log: Path, key: str, summary: DumpSummary) -> None:
    """Kafka's tool compares each entry with the first batch at its position only, so an
    append-path entry for several legacy entries reads as a mismatch here, as it does there
    (verify knows better)."""
    wanted: dict[int, list[int]] = {}
    for i, e in enumerate(entries):
        wanted.setdefault(e.position, []).append(i)
    found = [-1] * len(entries)
    for b in _valid_batches(log):
        for i in wanted.get(b.position, ()):
            found[i] = b.last_offset
    for e, last in zip(entries, found):
        if last != e.offset:
            summary.offset_mismatches.setdefault(key, []).append((e.offset, last))


def _check_time_entries(entries: list, offsets: list, log: Path, key: str, summary: DumpSummary) -> None:
    """Each entry (T, O): from the position the offset index gives for O, the first batch whose last
    offset is at least O must end at O, and T must be the largest timestamp of its records.
    Searches are answered in one pass over the log: each joins when the pass reaches its start
    position, waiting in a heap by O for the first batch that reaches it."""
    keys = [o.offset for o in offsets]
    starts = []
    for e in entries:
        n = bisect_right(keys, e.offset)
        starts.append(offsets[n - 1].position if n else 0)
    order = sorted(range(len(entries)), key=starts.__getitem__)
    found: list[tuple[int, int] | None] = [None] * len(entries)  # (last offset, largest timestamp)
    waiting: list[tuple[int, int]] = []
    joined = 0
    for b in _valid_batches(log):
        while joined < len(order) and starts[order[joined]] <= b.position:
            heapq.heappush(waiting, (entries[order[joined]].offset, order[joined]))
            joined += 1
        largest = None
        while waiting and waiting[0][0] <= b.last_offset:
            target, i = heapq.heappop(waiting)
            if target == b.last_offset and largest is None:
                largest = max((r.timestamp for r in Batch(b.entry, b.position, b.size)), default=-1)
            found[i] = (b.last_offset, largest)
    previous = None
    for e, got in zip(entries, found):
        if got is None or got[0] != e.offset:
            summary.not_found.append((e.offset, -1 if got is None else got[0]))
        elif got[1] != e.timestamp:
            summary.time_mismatches.setdefault(key, []).append((e.timestamp, got[1]))
        if previous is not None and previous >= e.timestamp:
            summary.out_of_order.setdefault(key, []).append((e.timestamp, previous))
        previous = e.timestamp


def _sanity(first, last, base: int, offset_index: bool) -> str | None:
    """Kafka's sanityCheck: the last entry not below the base offset, timestamps not decreasing."""
    if last.offset < base:
        return f"Corrupt index found, last offset {last.offset} is smaller than the base offset {base}"
    if not offset_index and last.timestamp < first.timestamp:
        return f"Corrupt time index found, last timestamp {last.timestamp} is smaller than the first {first.timestamp}"
    return None


def dump_txn_index(path: Path, shown_as: str) -> Iterator[str]:
    """One line per aborted transaction; an entry of an unknown version raises, as in Kafka."""
    yield f"Dumping {shown_as}"
    log = path.with_suffix(".log")  # the segment bounds the entries; read in chunks either way
    for t in iter_txn_index(path, index.max_entries(check_regular(log)) if log.exists() else None):
        yield (f"version: {t.version} producerId: {t.producer_id} firstOffset: {t.first_offset} "
               f"lastOffset: {t.last_offset} lastStableOffset: {t.last_stable_offset}")


def dump_snapshot(path: Path, shown_as: str) -> Iterator[str]:
    """One line per producer; the batch part only when the producer's last batch is known (Kafka
    then ends the line with a space). A corrupt snapshot raises its DecodeError."""
    yield f"Dumping {shown_as}"
    state = ProducerState.from_snapshot(read_snapshot(path), offset_from_name(path.name))
    for p in state.producers.values():
        txn = "OptionalLong.empty" if p.txn_first_offset is None else f"OptionalLong[{p.txn_first_offset}]"
        line = (f"producerId: {p.producer_id} producerEpoch: {p.epoch} coordinatorEpoch: {p.coordinator_epoch} "
                f"currentTxnFirstOffset: {txn} lastTimestamp: {p.last_timestamp} ")
        if p.last_offset >= 0:
            line += (f"firstSequence: {p.first_sequence} lastSequence: {p.last_sequence} lastOffset: {p.last_offset} "
                     f"offsetDelta: {p.offset_delta} timestamp: {p.last_timestamp}")
        yield line
