"""Decode a byte range of a segment into Arrow record batches, with Kafka's offset bounds,
read-committed filtering and a choice of what to do with damaged batches."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

import pyarrow as pa

from kafkacodec.records import read_batches
from kafkacodec.runtime.errors import DecodeError
from kafkacodec.storage.producers import last_sequence
from kafkacodec.storage.scan import frame_size

from .columns import ColumnBuilder

ON_CORRUPT = ("fail", "skip", "report")
LOG_APPEND_TIME = 1
INT32_MAX = 2 ** 31 - 1


class CorruptSegmentError(DecodeError):
    """A damaged batch met with onCorrupt=fail."""


@dataclass(frozen=True)
class Slice:
    """One task's work: a byte range of one segment and the bounds to apply. Picklable."""
    path: str
    topic: str
    partition: int
    start_pos: int = 0
    end_pos: int | None = None  # None: to the end of the file
    start_offset: int | None = None
    end_offset: int | None = None  # exclusive
    aborted: tuple[tuple[int, int, int], ...] = ()  # (producer id, first offset, marker offset)
    options: "ReadOptions" = field(default_factory=lambda: ReadOptions())
    uri: str = ""  # what the query loaded; the task opens its filesystem from it


@dataclass(frozen=True)
class ReadOptions:
    include_headers: bool = False
    verify_crc: bool = True
    on_corrupt: str = "fail"
    read_committed: bool = False
    rows_per_batch: int = 10_000


def _aborted(spec: Slice, pid: int, offset: int) -> bool:
    return any(p == pid and first <= offset <= last for p, first, last in spec.aborted)


def decode_slice(buf, spec: Slice, segment_name: str | None = None, base_pos: int = 0) -> Iterator[pa.RecordBatch]:
    """Arrow batches of the records in buf[start_pos:end_pos] that pass the slice's bounds; `buf`
    starts at byte `base_pos` of the file, which positions and errors report."""
    opts = spec.options
    out = ColumnBuilder(spec.topic, spec.partition, segment_name or spec.path, opts.include_headers)
    c = out.cols
    end = len(buf) if spec.end_pos is None else min(spec.end_pos - base_pos, len(buf))
    lo = spec.start_offset
    hi = spec.end_offset
    pos = spec.start_pos - base_pos

    def damaged(err: DecodeError, at: int) -> None:
        """Fail, or report the batch at `at`; the error's position is one in `buf`."""
        err.file = spec.path
        err.position = base_pos + (at if err.position is None else err.position)
        if opts.on_corrupt == "fail":
            raise CorruptSegmentError(err.message, err.position, err.path, spec.path) from err
        if opts.on_corrupt == "report":
            out.add_corruption(None, base_pos + at, str(err))

    while pos < end:
        at = pos
        try:
            size = frame_size(buf, at, end)
        except DecodeError as err:
            damaged(err, at)
            break  # the framing is lost: nothing after it can be found, as in recovery
        try:
            batch = next(read_batches(buf[at:at + size], verify=opts.verify_crc))
            # decompress and decode now, so damage inside is caught here
            records = batch.entry.records.items if not batch.is_legacy else batch.records()
        except DecodeError as err:
            err.position = at + (err.position or 0)  # it was found in the batch's own bytes
            damaged(err, at)
            pos = at + size
            continue
        pos = at + size
        if lo is not None and batch.last_offset < lo:
            continue
        if hi is not None and batch.base_offset >= hi:
            break
        e = batch.entry
        legacy = batch.is_legacy
        if legacy:
            pid, epoch, txn, control = -1, -1, False, False
            ts_type = None
        else:
            pid, epoch, txn, control = e.producer_id, e.producer_epoch, e.is_transactional, e.is_control
            ts_type = int(e.timestamp_type)
            if opts.read_committed and (control or (txn and _aborted(spec, pid, e.base_offset))):
                continue
        inside = (lo is None or batch.base_offset >= lo) and (hi is None or batch.last_offset < hi)
        if not legacy and inside:
            kept = _v2_columns(c, e, records, ts_type, opts.include_headers)
        else:
            kept = _record_columns(c, e, records, legacy, ts_type, lo, hi, opts.include_headers)
        out.add_batch_rows(kept, (batch.magic, batch.compression, pid, epoch, txn, control, batch.crc_valid,
                                  base_pos + at))
        if len(out) >= opts.rows_per_batch:
            yield out.flush()
    if len(out):
        yield out.flush()


def _v2_columns(c: dict, e, items: list, ts_type: int, include_headers: bool) -> int:
    """A whole v2 batch, column by column: one tight pass per column is cheaper in Python than
    one loop appending to every column."""
    n = len(items)
    c["key"] += [r.key for r in items]
    c["value"] += [r.value for r in items]
    base = e.base_offset
    deltas = [r.offset_delta for r in items]
    c["offset"] += [base + d for d in deltas]
    if ts_type == LOG_APPEND_TIME:
        c["timestamp"] += [e.max_timestamp] * n
    else:
        first = e.base_timestamp
        c["timestamp"] += [first + r.timestamp_delta for r in items]
    c["timestampType"] += [ts_type] * n
    seq = e.base_sequence
    if seq < 0:
        c["sequence"] += [-1] * n
    elif seq <= INT32_MAX - e.last_offset_delta:
        c["sequence"] += [seq + d for d in deltas]
    else:
        c["sequence"] += [last_sequence(seq, d) for d in deltas]
    if include_headers:
        c["headers"] += [[(h.key, h.value) for h in r.headers] or None for r in items]
    return n


def _record_columns(c: dict, e, records: list, legacy: bool, ts_type, lo, hi, include_headers: bool) -> int:
    """Record by record, for legacy entries and for batches cut by the offset bounds."""
    kept = 0
    for r in records:
        off = r.offset
        if (lo is not None and off < lo) or (hi is not None and off >= hi):
            continue
        kept += 1
        c["key"].append(r.key)
        c["value"].append(r.value)
        c["offset"].append(off)
        c["timestamp"].append(r.timestamp)
        if legacy:
            c["timestampType"].append(r.timestamp_type)
            c["sequence"].append(-1)
            if include_headers:
                c["headers"].append(None)
        else:
            c["timestampType"].append(ts_type)
            c["sequence"].append(last_sequence(e.base_sequence, off - e.base_offset))
            if include_headers:
                c["headers"].append([(h.key, h.value) for h in r.headers] or None)
    return kept
