"""Decode a byte range of a segment into Arrow record batches, with Kafka's offset bounds,
read-committed filtering and a choice of what to do with damaged batches."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

import pyarrow as pa

from kafkacodec.generated.record_batch import RecordBatch
from kafkacodec.codec.records import Batch, read_batches
from kafkacodec.runtime.errors import DecodeError
from kafkacodec.storage.segments.columnar import read_columns
from kafkacodec.storage.state.producers import last_sequence
from kafkacodec.codec.places import MAGIC_AT
from kafkacodec.storage.segments.scan import frame_size

from .columns import ColumnBuilder, batch_from_columns

ON_CORRUPT = ("fail", "skip", "report")
LOG_APPEND_TIME = 1
INT32_MAX = 2 ** 31 - 1
# batches read by columns together: the more batches, the more records each vectorised step
# covers; the bounds keep a group's decompressed records and columns to tens of MiB
GROUP_BYTES = 16 << 20
GROUP_RECORDS = 1 << 16


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
    include_control: bool = False  # transaction markers (control batches) as rows; Spark's Kafka source gives none
    rows_per_batch: int = 65_536  # Arrow batches handed to Spark: larger ones cost it less per row
    columns: tuple[str, ...] | None = None  # a schema the user gave: only these, in this order
    typed: tuple = ()  # keys and values as typed columns (values.columns.TypedColumn), added at the end


def is_aborted(spec: Slice, pid: int, offset: int) -> bool:
    return any(p == pid and first <= offset <= last for p, first, last in spec.aborted)


def left_out(spec: Slice, e) -> bool:
    """Whether a read gives no row for the v2 batch `e`: a control batch (transaction markers, KRaft's
    control records) unless includeControlRecords, and with read_committed a batch of an aborted
    transaction."""
    opts = spec.options
    if e.is_control:
        return not opts.include_control
    return opts.read_committed and e.is_transactional and is_aborted(spec, e.producer_id, e.base_offset)


def decode_slice(buf, spec: Slice, segment_name: str | None = None, base_pos: int = 0) -> Iterator[pa.RecordBatch]:
    """Arrow batches of the records in buf[start_pos:end_pos] that pass the slice's bounds; `buf`
    starts at byte `base_pos` of the file, which positions and errors report.

    Whole v2 batches go through the columnar reader, many at a time; legacy entries, batches cut
    by the offset bounds, and any group in which the columnar reader meets damage go record by
    record, where damage is found and handled batch by batch."""
    opts = spec.options
    segment = segment_name or spec.path
    out = ColumnBuilder(spec.topic, spec.partition, segment, opts.include_headers)
    end = len(buf) if spec.end_pos is None else min(spec.end_pos - base_pos, len(buf))
    lo = spec.start_offset
    hi = spec.end_offset
    pos = spec.start_pos - base_pos
    whole: list[Batch] = []  # v2 batches inside the bounds, waiting to be read by columns
    waiting = records = 0  # their bytes and records

    def damaged(err: DecodeError, at: int) -> None:
        """Fail, or report the batch at `at`; the error's position is one in `buf`."""
        err.file = spec.path
        err.position = base_pos + (at if err.position is None else err.position)
        if opts.on_corrupt == "fail":
            raise CorruptSegmentError(err.message, err.position, err.path, spec.path) from err
        if opts.on_corrupt == "report":
            out.add_corruption(None, base_pos + at, str(err))

    def by_records(at: int, size: int) -> None:
        """The batch at `at`, record by record into `out`."""
        try:
            batch = next(read_batches(buf[at:at + size], verify=opts.verify_crc))
            # decompress and decode now, so damage inside is caught here
            records = batch.entry.records.items if not batch.is_legacy else batch.records()
        except DecodeError as err:
            err.position = at + (err.position or 0)  # it was found in the batch's own bytes
            damaged(err, at)
            return
        e = batch.entry
        legacy = batch.is_legacy
        if legacy:
            pid, epoch, txn, control = -1, -1, False, False
            ts_type = None
        else:
            pid, epoch, txn, control = e.producer_id, e.producer_epoch, e.is_transactional, e.is_control
            ts_type = int(e.timestamp_type)
        inside = (lo is None or batch.base_offset >= lo) and (hi is None or batch.last_offset < hi)
        if not legacy and inside:
            kept = _v2_columns(out.cols, e, records, ts_type, opts.include_headers)
        else:
            kept = _record_columns(out.cols, e, records, legacy, ts_type, lo, hi, opts.include_headers)
        out.add_batch_rows(kept, (batch.magic, batch.compression, pid, epoch, txn, control, batch.crc_valid,
                                  base_pos + at))

    def read_whole() -> Iterator[pa.RecordBatch]:
        """The waiting whole batches by columns, after the rows collected before them."""
        nonlocal waiting, records
        if len(out):
            yield out.flush()
        try:
            cols = read_columns(buf, [b.position for b in whole], batches=[b.entry for b in whole])
        except DecodeError:  # somewhere in these batches: find it, and keep the others, one by one
            for b in whole:
                by_records(b.position, b.size)
        else:
            rows = batch_from_columns(cols, whole, out.schema, spec.topic, spec.partition, segment, base_pos,
                                      opts.include_headers)
            for i in range(0, rows.num_rows, opts.rows_per_batch):
                yield rows.slice(i, opts.rows_per_batch)
        whole.clear()
        waiting = records = 0

    while pos < end:
        at = pos
        try:
            size = frame_size(buf, at, end)
        except DecodeError as err:
            damaged(err, at)
            break  # the framing is lost: nothing after it can be found, as in recovery
        pos = at + size
        if buf[at + MAGIC_AT] < 2:
            by_records(at, size)
        else:
            try:
                e, _ = RecordBatch.read(buf, at, pos, verify=opts.verify_crc)
            except DecodeError as err:
                damaged(err, at)
                continue
            if lo is not None and e.last_offset < lo:
                continue
            if hi is not None and e.base_offset >= hi:
                break
            if left_out(spec, e):
                continue
            if (lo is None or e.base_offset >= lo) and (hi is None or e.last_offset < hi):
                whole.append(Batch(e, at, size))
                waiting += size
                records += max(e.records_count, 0)
                if waiting >= GROUP_BYTES or records >= GROUP_RECORDS:
                    yield from read_whole()
                continue
            if whole:
                yield from read_whole()
            by_records(at, size)
        if len(out) >= opts.rows_per_batch:
            yield out.flush()
    if whole:
        yield from read_whole()
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
