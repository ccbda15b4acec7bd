"""What Kafka 4.1's kafka-dump-log (kafka.tools.DumpLogSegments) prints for each kind of file,
line for line, read from Kafka's source rather than from its output.

Kafka's tool reads a log as FileLogInputStream does: it stops quietly when 17 bytes or fewer
are left or when the next batch does not fit (a torn write, or `--max-bytes` cutting a batch),
and fails on a size field below 14 (a zero-filled tail). A batch's line comes from its header
bytes alone, whatever its CRC (`isvalid: false`) or magic (2 and above are read as v2); its
records are read only under deep iteration. What makes Kafka's tool fail (an exception that
ends its run with exit status 1) raises `Crash` here, naming the file and the byte.

Lines come as (stream, text) pairs: "out" for stdout, "err" for stderr.
"""
from __future__ import annotations

import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import crc32c

from kafkacodec.codec.attribute_bits import COMPRESSION, CONTROL, DELETE_HORIZON, LOG_APPEND_TIME, TRANSACTIONAL
from kafkacodec.codec.records import CODEC_NAMES, TIMESTAMP_TYPES, Batch, read_batches
from kafkacodec.generated.producer_snapshot import ProducerSnapshot
from kafkacodec.generated.transaction_index import TransactionIndex
from kafkacodec.runtime.errors import DecodeError, LimitExceededError

from . import decoders
from .common import (INT32_MAX, Crash, Line, Options, Reports, absolute, int_option, java_integer, java_long,
                     java_path, kafka_frame, size_option)
from .index_listing import dump_offset_index, dump_time_index
from .record_text import DecoderFailure
from ..state.control_rules import KEY_SIZE, MARKER_TYPES, MARKER_VALUE_SIZE, ControlType, read_key, read_marker_value
from ..state.producers import decrement_sequence, increment_sequence, read_snapshot
from ..segments.resync import find_resume
from kafkacodec.codec.places import (HEADER_SIZE_UP_TO_MAGIC, LEGACY, LEGACY_CRC_FROM, LEGACY_TIMESTAMP,
                                     MAGIC_AT, V2, V2_CRC_FROM, V2_HEADER, layout_end, layout_struct)
from ..segments.scan import iter_file_batches
from ..diskio.windowed import WindowedFile

# the header fields a batch's line shows, read at their places in the schemas
_V2_LINE = layout_struct(V2, {"base_offset": "q", "partition_leader_epoch": "i", "crc": "I", "attributes": "h",
                              "last_offset_delta": "i", "base_timestamp": "q", "max_timestamp": "q",
                              "producer_id": "q", "producer_epoch": "h", "base_sequence": "i",
                              "records_count": "i"})
_LEGACY_LINE = layout_struct(LEGACY, {"offset": "q", "crc": "I", "attributes": "B"})
_LEGACY_TIMESTAMP = layout_struct(LEGACY_TIMESTAMP, {"timestamp": "q"})  # after the fixed fields, in magic 1


def dump_file(arg: str, opts: Options, reports: Reports, damage: "Damage | None" = None) -> Iterator[Line]:
    """The lines of one file named on the command line (`--files`), as Kafka's tool prints them;
    with `damage`, a log's damage is reported there and its listing goes on (our `dump`)."""
    shown = java_path(arg)
    yield "out", f"Dumping {shown}"
    name = shown.rsplit("/", 1)[-1]
    if "." not in name:
        raise Crash(f"{shown}: the name has no suffix, so the kind of file is unknown (Kafka's tool fails on it)")
    suffix = name[name.rindex("."):]
    path = Path(shown)
    if suffix in (".log", ".checkpoint"):
        yield from dump_log(path, shown, opts, reports, damage)
    elif suffix == ".index":
        yield from dump_offset_index(path, shown, opts, reports, damage)
    elif suffix == ".timeindex":
        yield from dump_time_index(path, shown, opts, reports, damage)
    elif suffix == ".snapshot":
        yield from dump_producer_snapshot(path, shown, damage)
    elif suffix == ".txnindex":
        yield from dump_txn_index(path, shown)
    else:
        yield "err", f"Ignoring unknown file {shown}"


def dump_kept_cut(path: Path, shown: str, opts: Options, reports: Reports, damage: "Damage") -> Iterator[Line]:
    """Bytes `recover` cut off a segment (`<segment>.log.corrupt-<position>`), listed as a log."""
    segment, kept = path.name.split(".log.corrupt-", 1)
    yield "out", f"Dumping {shown}"
    lines = dump_log(path, shown, opts, reports, damage)
    next(lines)  # the segment's header: these bytes start elsewhere in it
    yield "out", f"Bytes cut from {segment}.log at byte {kept.split('-')[0]}"
    yield from lines


@contextmanager
def _opened(path: Path, shown: str) -> Iterator[WindowedFile]:
    try:  # a FileProblem (a directory, a FIFO, a device) is left to the command to judge
        f = WindowedFile(path).__enter__()
    except OSError as err:
        raise Crash(f"{shown}: {err.strerror or err}") from None
    try:
        yield f
    finally:
        f.__exit__(None, None, None)


def log_header(name: str, shown: str) -> str:
    if name.endswith(".checkpoint"):
        if name == "bootstrap.checkpoint":
            return "KRaft bootstrap snapshot"
        offset = java_long(name[0:20], shown)
        epoch = java_integer(name[21:31], 32)
        if epoch is None:
            raise Crash(f"{shown}: {name[21:31]!r} is not an epoch (Kafka reads it from the file name)")
        return f"Snapshot end offset: {offset}, epoch: {epoch}"
    return f"Log starting offset: {java_long(name.split('.')[0], shown)}"


def frames(f: WindowedFile, end: int, shown: str, pos: int = 0) -> Iterator[tuple[int, bytes]]:
    """(position, bytes with the 12-byte prefix) of each batch Kafka's reader gives from `pos`,
    read through a window: memory is about a window or the largest batch, whatever the file."""
    buf, base = b"", pos
    while True:
        if end - pos > HEADER_SIZE_UP_TO_MAGIC and pos + HEADER_SIZE_UP_TO_MAGIC > base + len(buf):
            buf, base = f.load(pos), pos
        size = kafka_frame(buf, pos - base, pos, end, shown)
        if size is None:
            return  # the end, a torn write, or --max-bytes cutting a batch
        if pos + size > base + len(buf):
            buf, base = f.load(pos, size), pos
            if len(buf) < size:
                raise Crash(f"{shown}: byte {pos}: the file ended while it was read")
        yield pos, buf[pos - base:pos - base + size]
        pos += size


class Damage:
    """How our `dump` goes on where Kafka's tool stops or says nothing: each problem goes to
    `report` (in the words `verify` uses, at the byte it names) and the listing goes on: past a
    batch whose records do not read, and with `skip_corrupt` past bytes that do not frame, from
    the next batch whose CRC matches."""

    def __init__(self, report: Callable[[str], None], skip_corrupt: bool = False,
                 note: Callable[[str], None] = lambda text: None):
        self.report, self.skip_corrupt, self.note = report, skip_corrupt, note

    def why(self, path: Path, pos: int, end: int, shown: str) -> str:
        """What `verify` says of the bytes from `pos` to `end`: where they start, and why the
        batch there does not read (read as verify reads it)."""
        reason = "the batch does not read"
        for item in iter_file_batches(path, start=pos, verify=True):
            if isinstance(item, DecodeError):
                item.file = None
                reason = str(item)
            break
        return f"{shown}: invalid from byte {pos} ({end - pos} bytes): {reason}"


def dump_log(path: Path, shown: str, opts: Options, reports: Reports, damage: Damage | None = None) -> Iterator[Line]:
    """A .log or a KRaft .checkpoint; what Kafka's tool fails on raises Crash, unless `damage`."""
    max_bytes = int_option(opts.max_bytes, "max-bytes")
    problem = getattr(opts.parser, "problem", None)
    if problem is not None and opts.deep:
        raise Crash(problem)
    try:
        header = log_header(path.name, shown)
    except Crash:
        if damage is None:
            raise
        header = "Log starting offset: unknown (the file name is not a 20-digit offset)"  # ours: a renamed copy
    yield "out", header
    with _opened(path, shown) as f:
        yield from _log_lines(f, path, shown, min(f.size, size_option(max_bytes, "max-bytes", shown)),
                              max_bytes == INT32_MAX, opts, reports, damage)


def _log_lines(f: WindowedFile, path: Path, shown: str, end: int, count_rest: bool, opts: Options,
               reports: Reports, damage: Damage | None) -> Iterator[Line]:
    shown_at = valid = 0  # the position printed: Kafka's sum of the sizes listed
    state = {"last": -1, "key": absolute(shown)}
    pos, reported = 0, False
    while True:
        try:
            for pos, view in frames(f, end, shown, pos):
                yield from _batch(path, view, pos, shown_at, opts, reports, state, damage, shown)
                if opts.progress is not None:
                    opts.progress(len(view))
                shown_at, valid, pos = shown_at + len(view), pos + len(view), pos + len(view)
            break
        except Crash:
            if damage is None:
                raise
            resume = find_resume(f.read, pos, end) if damage.skip_corrupt else None
            damage.report(damage.why(path, pos, f.size, shown) +
                          ("" if resume is None else f" (bytes {pos}..{resume} skipped)"))
            if resume is None:
                reported = True
                break
            pos = shown_at = resume  # positions from here are the file's
    if end - valid > 0 and count_rest:
        yield "out", f"Found {end - valid} invalid bytes at the end of {path.name}"
    if damage is not None and not reported and valid < end == f.size:  # a tail that does not frame
        damage.report(damage.why(path, valid, f.size, shown))


def _batch(path: Path, view: bytes, pos: int, shown_at: int, opts: Options, reports: Reports, state: dict,
           damage: Damage | None, shown: str) -> Iterator[Line]:
    line = batch_line(view, shown_at, shown, pos)
    yield "out", line
    if damage is not None and (line.endswith("isvalid: false") or view[MAGIC_AT] > 2):  # Kafka lists magic 3+ as v2
        damage.report(damage.why(path, pos, pos + len(view), shown))
    if not opts.deep:
        return
    try:
        lines, offsets = record_lines(view, opts, shown, pos)
    except Crash as err:
        if damage is None:
            raise
        damage.report(str(err))
        return
    for text in lines:
        yield "out", text
    for offset in offsets:
        if state["last"] != -1 and offset != state["last"] + 1:
            reports.non_consecutive.setdefault(state["key"], []).append((state["last"], offset))
        state["last"] = offset


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _codec(attributes: int, shown: str, pos: int) -> str:
    codec = attributes & COMPRESSION
    if codec not in CODEC_NAMES:
        raise Crash(f"{shown}: byte {pos}: unknown compression type id {codec}")
    return CODEC_NAMES[codec]


def batch_line(b: bytes, position: int, shown: str, at: int) -> str:
    """The line for the batch in `b` (its bytes, prefix included), from its header alone."""
    magic = b[MAGIC_AT]
    if magic >= 2:
        if len(b) < V2_HEADER:
            raise Crash(f"{shown}: byte {at}: a {len(b)}-byte batch is shorter than a v2 batch header ({V2_HEADER})")
        base, leader_epoch, crc, attrs, delta, base_ts, max_ts, pid, epoch, base_seq, count = _V2_LINE.unpack_from(b)
        last_seq = -1 if base_seq == -1 else increment_sequence(base_seq, delta)
        horizon = f"OptionalLong[{base_ts}]" if attrs & DELETE_HORIZON else "OptionalLong.empty"
        return (f"baseOffset: {base} lastOffset: {base + delta} count: {count} baseSequence: {base_seq} "
                f"lastSequence: {last_seq} producerId: {pid} producerEpoch: {epoch} "
                f"partitionLeaderEpoch: {leader_epoch} isTransactional: {_bool(attrs & TRANSACTIONAL)} "
                f"isControl: {_bool(attrs & CONTROL)} deleteHorizonMs: {horizon} position: {position} "
                f"{'LogAppendTime' if attrs & LOG_APPEND_TIME else 'CreateTime'}: {max_ts} size: {len(b)} "
                f"magic: {magic} compresscodec: {_codec(attrs, shown, at)} crc: {crc} "
                f"isvalid: {_bool(crc32c.crc32c(b[V2_CRC_FROM:]) == crc)}")
    # a legacy entry: offset, size, then the message: crc, magic, attributes, timestamp (magic 1)
    offset, crc, attrs = _LEGACY_LINE.unpack_from(b)
    ts_type, ts = "NoTimestampType", -1
    if magic == 1:  # the 14 bytes a size must have hold the timestamp
        ts_type = "LogAppendTime" if attrs & LOG_APPEND_TIME else "CreateTime"
        ts = _LEGACY_TIMESTAMP.unpack_from(b)[0]
    return (f"offset: {offset} position: {position} {ts_type}: {ts} size: {len(b)} magic: {magic} "
            f"compresscodec: {_codec(attrs, shown, at)} crc: {crc} "
            f"isvalid: {_bool(zlib.crc32(b[LEGACY_CRC_FROM:]) == crc)}")


def record_lines(b: bytes, opts: Options, shown: str, at: int) -> tuple[list[str], list[int]]:
    """The record lines of one batch and the offsets of its records."""
    try:
        (batch,) = read_batches(b, verify=False)
        records = list(batch)
        lines = [_record_line(batch, r, i, opts, shown) for i, r in enumerate(records)]
    except DecodeError as err:
        where = at + (err.position or 0)
        raise Crash(f"{shown}: byte {where}: the records of the batch at byte {at} do not read: "
                    f"{err.message}") from None
    return lines, [r.offset for r in records]


def _record_line(batch: Batch, record, i: int, opts: Options, shown: str) -> str:
    e = batch.entry
    control = not batch.is_legacy and e.is_control
    line, prefix = "", "| "
    if not opts.skip_metadata:
        ts_type = TIMESTAMP_TYPES[int(e.timestamp_type if not batch.is_legacy else e.message.timestamp_type)]
        line = (f"| offset: {record.offset} {ts_type}: {record.timestamp} "
                f"keySize: {-1 if record.key is None else len(record.key)} "
                f"valueSize: {-1 if record.value is None else len(record.value)}")
        if not batch.is_legacy:
            delta = record.offset - e.base_offset
            seq = increment_sequence(e.base_sequence, delta) if e.base_sequence >= 0 else -1
            line += f" sequence: {seq} headerKeys: [{','.join(h.key for h in record.headers)}]"
        else:
            m = e.message
            msg = m.value.entries[i].message if m.compression else m
            line += f" isValid: {_bool(msg.crc_valid)} crc: {msg.crc}}}"  # the stray '}' is Kafka's
        if control:
            line += control_suffix(record, shown)
        prefix = " "
    if opts.print_data and not control:
        try:
            key, payload = opts.parser(record)
        except DecoderFailure as err:
            raise Crash(f"{shown}: {err}") from None
        if key is not None:
            line += f"{prefix}key: {key}"
        if payload is not None:
            line += f" payload: {payload}"
    return line


def control_suffix(record, shown: str) -> str:
    """What Kafka 4.1's tool appends to a control record's line; malformed ones end its run."""
    key, value = record.key, record.value
    where = f"{shown}: control record at offset {record.offset}"
    fields = None if key is None else read_key(bytes(key))[0]
    if fields is None:
        raise Crash(f"{where}: its key has {0 if key is None else len(key)} bytes, fewer than {KEY_SIZE}")
    version, kind = fields
    if version < 0:
        raise Crash(f"{where}: invalid key version {version}")
    if kind in MARKER_TYPES:
        fields = None if value is None else read_marker_value(bytes(value))[0]
        if fields is None:
            raise Crash(f"{where}: a transaction marker's value needs {MARKER_VALUE_SIZE} bytes, it has "
                        f"{0 if value is None else len(value)}")
        marker_version, epoch = fields
        if marker_version < 0:
            raise Crash(f"{where}: invalid transaction marker version {marker_version}")
        return f" endTxnMarker: {ControlType(kind).name.upper()} coordinatorEpoch: {epoch}"
    if kind in decoders.KRAFT_CONTROL_LABELS:
        label, text = decoders.kraft_control_json(kind, bytes(value or b""))
        if text is None:
            raise Crash(f"{where}: its {label} value does not decode")
        return f" {label} {text}"
    return f" controlType: UNKNOWN({kind})"


# an aborted transaction's fields at their places; Kafka reads only the version's first byte
_TXN = layout_struct(TransactionIndex.AbortedTxn.LAYOUT, {"version": "b", "producer_id": "q", "first_offset": "q",
                                                          "last_offset": "q", "last_stable_offset": "q"})
TXN_ENTRY = layout_end(TransactionIndex.AbortedTxn.LAYOUT)
CHUNK_ENTRIES = 4096  # entries read at once: memory stays small whatever the file's size


def _txn_entries(f: WindowedFile) -> Iterator[tuple[int, bytes]]:
    """(position, bytes) of each whole entry; a partial last one is passed over, as Kafka does."""
    whole = f.size - f.size % TXN_ENTRY
    for at in range(0, whole, TXN_ENTRY * CHUNK_ENTRIES):
        chunk = f.read(at, min(TXN_ENTRY * CHUNK_ENTRIES, whole - at))
        for i in range(0, len(chunk) - TXN_ENTRY + 1, TXN_ENTRY):
            yield at + i, chunk[i:i + TXN_ENTRY]


def dump_txn_index(path: Path, shown: str) -> Iterator[Line]:
    java_long(path.name[:path.name.index(".")], shown)
    if not path.exists():
        return  # Kafka's TransactionIndex treats a missing file as empty
    with _opened(path, shown) as f:
        for at, e in _txn_entries(f):  # every version is checked before any entry is printed, as in Kafka
            version = _TXN.unpack_from(e)[0]
            if version > 0:
                raise Crash(f"{shown}: byte {at}: unexpected aborted transaction version "
                            f"{version}, current version is 0")
        for _, e in _txn_entries(f):
            version, pid, first, last, lso = _TXN.unpack_from(e)
            yield "out", (f"version: {version} producerId: {pid} firstOffset: {first} lastOffset: {last} "
                          f"lastStableOffset: {lso}")


_SNAPSHOT_CRC_FROM, _ = ProducerSnapshot.LAYOUT["producer_count"]  # the CRC covers the file from there on
_SNAPSHOT_VERSION = layout_struct(ProducerSnapshot.LAYOUT, {"version": "h"})


def dump_producer_snapshot(path: Path, shown: str, damage: "Damage | None" = None) -> Iterator[Line]:
    """Kafka says a corrupt snapshot on stderr and goes on (exit 0); with `damage` (our `dump`)
    it is reported as damage."""
    for stream, line in _snapshot_lines(path, shown):
        if stream == "err" and damage is not None:
            damage.report(f"{shown}: {line}")
        else:
            yield stream, line


def _snapshot_lines(path: Path, shown: str) -> Iterator[Line]:
    try:
        data = read_snapshot(path)  # bounded: a file larger than any snapshot is refused unread
    except LimitExceededError as err:
        raise Crash(str(err)) from None
    except OSError as err:
        raise Crash(f"{shown}: {err.strerror or err}") from None
    version = _SNAPSHOT_VERSION.unpack_from(data)[0] if len(data) >= _SNAPSHOT_VERSION.size else None
    if version not in (None, 1):  # a file too short to hold one is the reader's below to name
        yield "err", f"Snapshot failed schema validation: Snapshot contained an unknown file version {version}"
        return
    try:
        snap = ProducerSnapshot.from_bytes(data, verify=False)
    except DecodeError as err:
        yield "err", f"Snapshot failed schema validation: {err.message}"
        return
    computed = crc32c.crc32c(data[_SNAPSHOT_CRC_FROM:])
    if computed != snap.crc:
        yield "err", f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {snap.crc}. Computed crc: {computed}"
        return
    for p in snap.producers:
        txn = f"OptionalLong[{p.current_txn_first_offset}]" if p.current_txn_first_offset >= 0 else "OptionalLong.empty"
        line = (f"producerId: {p.producer_id} producerEpoch: {p.producer_epoch} coordinatorEpoch: "
                f"{p.coordinator_epoch} currentTxnFirstOffset: {txn} lastTimestamp: {p.timestamp} ")
        if p.last_offset >= 0:
            line += (f"firstSequence: {decrement_sequence(p.last_sequence, p.offset_delta)} lastSequence: "
                     f"{p.last_sequence} lastOffset: {p.last_offset} offsetDelta: {p.offset_delta} "
                     f"timestamp: {p.timestamp}")
        yield "out", line
