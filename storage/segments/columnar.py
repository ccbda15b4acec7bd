"""Records of many v2 batches decoded at once into flat numpy columns, and from there into Arrow
arrays, without a Python object per record.

Uncompressed records are read where they are; compressed ones are decompressed and joined. Where
the compiled readers are built, regular uncompressed batches take no object each: their headers
are read flat into one array (the generated `_flat_rows_compiled`), and the compiled columnar
reader generated from the schema walks their records once, filling every column as it goes,
group by group of batches when their CRCs are checked just before (while in cache). Without it (or where the records are irregular, for the errors
to be named), record starts are found by following every batch's chain of record lengths in
lockstep, one vectorised step per record index (a batch much longer than the others finishes one
record at a time), and the fields of all records are then read by the generated
`Record._columns`, field by field. Keys, values and header parts stay (start, size) pairs into
the buffer until Arrow copies them out.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

import crc32c
import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa
# Arrow is imported where arrays are handed out, not here: decoding by columns (deep verify, and
# every command that reaches it) needs numpy alone, and importing pyarrow adds about 60 ms to each
# command started; without the [columnar] extra it is never imported

from kafkacodec.codec.attribute_bits import COMPRESSION, LOG_APPEND_TIME
from kafkacodec.generated.record_batch import RecordBatch
from kafkacodec.runtime import kernels
from kafkacodec.runtime.errors import DecodeError, InvalidValueError, TruncatedError
from kafkacodec.runtime.limits import LIMITS
from kafkacodec.runtime.vectors import position_type

from kafkacodec.codec.places import LOG_OVERHEAD, MAGIC_AT, V2_HEADER
from .scan import file_frames
from ..diskio.windowed import WindowedFile

Record = RecordBatch.Record
_SLOT = RecordBatch.FLAT_SLOTS  # the header fields' columns in _flat_rows_compiled's rows
# records read together by Record._columns: as many as keep their bytes within a few MiB, so that
# the passes over them after the first find them in cache
CHUNK_RECORDS, CHUNK_RECORDS_MIN, CHUNK_BYTES = 16384, 2048, 8 << 20
# batches walked together by the compiled reader, each group's CRCs checked just before: their
# bytes are still in cache when its records are walked
WALK_BYTES = 2 << 20
ONE_WALK_BYTES = 32 << 20  # up to this, CRCs checked and records walked in one pass each


@dataclass
class Columns:
    """Every record of a list of batches, as arrays of equal length (header arrays aside)."""
    buffer: np.ndarray  # the bytes the fields point into: the batches' own, or their decompressed records
    batch: np.ndarray  # index of each record's batch in the list read
    offset: np.ndarray
    timestamp: np.ndarray
    fields: dict  # Record._columns: key/value starts and sizes, headers...

    def __len__(self) -> int:
        return len(self.offset)

    def arrow_bytes(self, name: str) -> pa.Array:
        """A byte field of the records (`key`, `value`) as an Arrow binary array, null where absent."""
        return binary_array(self._arrow_buffer(), self.fields[name], self.fields[name + ".size"])

    def arrow_headers(self, empty_as_null: bool = False) -> pa.Array:
        """Headers as list<struct<key: string, value: binary>>, Spark's Kafka type."""
        import pyarrow as pa
        f = self.fields
        buf = self._arrow_buffer()
        keys = binary_array(buf, f["headers.key"], f["headers.key.size"], pa.string())
        try:
            keys.validate(full=True)
        except pa.ArrowInvalid:  # not UTF-8, as Kafka would never write: replaced, as Java decodes it
            keys = pa.array([k.decode("utf-8", "replace") for k in keys.cast(pa.binary()).to_pylist()], pa.string())
        values = binary_array(buf, f["headers.value"], f["headers.value.size"])
        items = pa.StructArray.from_arrays([keys, values], ["key", "value"])
        first = f["headers"].astype(np.int32)
        mask = pa.array(f["headers_count"] == 0) if empty_as_null else None
        return pa.ListArray.from_arrays(pa.array(first), items, mask=mask)

    def _arrow_buffer(self) -> pa.Buffer:
        import pyarrow as pa
        return pa.py_buffer(self.buffer)


def segment_columns(path, verify: bool = True, group_bytes: int = 8 << 20) -> Iterator[Columns]:
    """The records of a segment file by columns, group by group of batches (`group_bytes` or one
    batch, whichever is more), copied out of the windows the file is read through: resident
    memory is bounded by a group and its columns, whatever the file's size. Legacy entries are
    refused (the columnar reader is for v2 batches); damage raises DecodeError naming the file and
    position, and so does a file truncated underneath."""
    with WindowedFile(path) as f:
        pieces, size, end = [], 0, 0  # (window, start in it, size) of each batch of the group
        try:
            for buf, at, pos, n in file_frames(f):
                if buf[at + MAGIC_AT] < 2:
                    raise InvalidValueError(f"magic {buf[at + MAGIC_AT]} entry: the columnar reader reads "
                                            "v2 batches only", pos + MAGIC_AT, "log")
                pieces.append((buf, at, n))
                size, end = size + n, pos + n
                if size >= group_bytes:
                    yield _group_columns(path, end - size, pieces, verify)
                    pieces, size = [], 0
        except DecodeError as err:
            raise err.with_context(file=str(path))
        if pieces:
            yield _group_columns(path, end - size, pieces, verify)


def _group_columns(path, start: int, pieces: list, verify: bool) -> Columns:
    """read_columns of a group of batches that starts at `start` in the file, copied into one
    buffer (the windows they were read in can go)."""
    first, last = pieces[0], pieces[-1]
    if first[0] is last[0]:  # one window holds them all, one after the other
        data = first[0][first[1]:last[1] + last[2]]
    else:
        data = b"".join(memoryview(buf)[at:at + n] for buf, at, n in pieces)
    positions, at = [], 0
    for _, _, n in pieces:
        positions.append(at)
        at += n
    try:
        return read_columns(data, positions, verify)
    except DecodeError as err:
        raise err.with_context(file=str(path), offset=start)


def read_columns(buf, positions, verify: bool = True, batches: list[RecordBatch] | None = None) -> Columns:
    """Decode every record of the v2 batches starting at `positions` of `buf` (bytes, memoryview...),
    in the order given; `batches`, when the caller has read their headers from `buf` already.
    Raises DecodeError for the first damage; its position is exact for uncompressed batches, a
    position in the joined decompressed sections otherwise, so callers that must say where
    re-read the batches one by one. A position outside the buffer is a DecodeError naming it."""
    for p in positions:
        if not 0 <= p < len(buf):
            raise (InvalidValueError if p < 0 else TruncatedError)(
                f"batch position {p} is outside the buffer of {len(buf)} bytes", p, "log")
    if batches is None:
        found = _flat_columns(buf, positions, verify)
        if found is not None:
            return found
    unverified = batches is None and verify  # checked group by group, just before the walk
    if batches is None:
        batches = _headers(buf, positions, verify)
    counts = np.fromiter((b.records_count for b in batches), np.int64, len(batches))  # checked by _starts
    # in place where the records sections are uncompressed and follow one another in the buffer
    data = buf
    starts = np.asarray(positions, np.int64) + V2_HEADER
    ends = starts + np.fromiter((b.batch_length for b in batches), np.int64, len(batches)) - (
        V2_HEADER - LOG_OVERHEAD)
    if any(b.attributes & COMPRESSION for b in batches) or (starts[1:] < ends[:-1]).any():
        if unverified:
            _check_crcs(batches)
        return batch_columns(batches)
    return _decode(data, starts, ends, batches, counts, unverified)


def _headers(buf, positions, verify: bool) -> list[RecordBatch]:
    """The batches at `positions`, their CRCs not checked yet, unless a batch is damaged: then
    those before it are checked first, so that the first damage is the one raised."""
    batches = []
    for p in positions:
        try:
            batches.append(RecordBatch.read(buf, p, verify=False)[0])
        except DecodeError:
            if verify:
                _check_crcs(batches)
            raise
    return batches


def _check_crcs(batches: list[RecordBatch]) -> None:
    """Each batch's CRC, in order: ChecksumError for the first that does not match."""
    for b in batches:
        b._verify()


def batch_columns(batches: list[RecordBatch]) -> Columns:
    """Every record of v2 batches whose headers are read already, from their records sections
    (decompressed where compressed) joined into one buffer; DecodeError for the first damage."""
    counts = np.fromiter((b.records_count for b in batches), np.int64, len(batches))
    sections = [b.records_bytes() for b in batches]
    sizes = np.fromiter((len(s) for s in sections), np.int64, len(sections))
    ends = np.cumsum(sizes)
    return _decode(b"".join(sections), ends - sizes, ends, batches, counts)


def _decode(data, starts: np.ndarray, ends: np.ndarray, batches: list[RecordBatch], counts: np.ndarray,
            unverified: bool = False) -> Columns:
    """The columns of the batches' records, whose sections are [starts, ends) of `data`; with
    `unverified`, the batches' CRCs are checked first (the first damage raised, whatever the
    records hold)."""
    u8 = np.frombuffer(data, np.uint8)
    kind = position_type(len(u8))
    starts, ends = starts.astype(kind), ends.astype(kind)
    fields = _walked_fields(u8, starts, ends, counts,
                            (lambda lo, hi: _check_crcs(batches[lo:hi]) or True) if unverified else None)
    if fields is None:
        if unverified:  # again, for a group walked before: checking is idempotent, and this is rare
            _check_crcs(batches)
        record_pos = Record._starts(u8, data, starts, ends, counts)  # each batch's records fill its section
        fields = _fields(u8, record_pos, np.repeat(ends, counts))
    head = np.array([(b.base_offset, b.base_timestamp, b.max_timestamp, b.attributes) for b in batches],
                    np.int64).reshape(-1, 4)
    return _columns(u8, fields, counts, head[:, 0], head[:, 1], head[:, 2], head[:, 3])


def _columns(u8, fields: dict, counts, base_offset, base_timestamp, max_timestamp, attributes) -> Columns:
    """The records' columns from their fields and their batches' header fields (arrays, one
    item a batch)."""
    batch = np.repeat(np.arange(len(counts), dtype=np.int32), counts)
    offset = np.repeat(base_offset, counts) + fields["offset_delta"]
    timestamp = np.repeat(base_timestamp, counts) + fields["timestamp_delta"]
    append_time = np.repeat((attributes & LOG_APPEND_TIME) != 0, counts)
    if append_time.any():  # the batch's max timestamp stands for every record's
        timestamp[append_time] = np.repeat(max_timestamp, counts)[append_time]
    return Columns(u8, batch, offset, timestamp, fields)


def _flat_columns(buf, positions, verify: bool) -> Columns | None:
    """read_columns of regular batches without an object each: their headers read flat by the
    compiled reader, their CRCs checked and their records walked group by group. None where
    that reader is not built or anything is not regular (a batch that is compressed, damaged or
    not followed by the next, a CRC that does not match): the careful path names what is."""
    rows_of = RecordBatch._flat_rows_compiled
    if rows_of is None or Record._columns_compiled is None or not len(positions):
        return None
    u8 = np.frombuffer(buf, np.uint8)
    starts = np.asarray(positions, np.int64)
    found = rows_of(u8, starts, np.full(len(starts), len(u8), np.int64))
    if found is None:
        return None
    rows = found[0]
    attributes = rows[:, _SLOT["attributes"]]
    first = rows[:, _SLOT["records"]]
    ends = first + rows[:, _SLOT["records.size"]]
    if (attributes & COMPRESSION).any() or (first[1:] < ends[:-1]).any():
        return None
    check = None
    if verify:
        view = memoryview(buf)
        spans = rows[:, [_SLOT["crc.from"], _SLOT["crc.end"], _SLOT["crc"]]].tolist()

        def check(lo: int, hi: int) -> bool:
            return all(crc32c.crc32c(view[at:end]) == stored for at, end, stored in spans[lo:hi])
    counts = rows[:, _SLOT["records_count"]]
    fields = _walked_fields(u8, first.astype(position_type(len(u8))), ends, counts, check)
    if fields is None:
        return None
    return _columns(u8, fields, counts, rows[:, _SLOT["base_offset"]], rows[:, _SLOT["base_timestamp"]],
                    rows[:, _SLOT["max_timestamp"]], attributes)


def _walked_fields(u8, starts, ends, counts, check=None) -> dict | None:
    """The fields of every record from the compiled columnar reader, one walk of each batch's
    records; with `check(lo, hi)`, group by group of batches, each group's CRCs checked first
    (False: one does not match, or it raises for the first): their bytes are then in cache when
    their records are walked. None where the reader is not built, a CRC does not match or the
    records are not regular."""
    read = Record._columns_compiled
    if read is None:
        return None
    starts64, ends64, counts64 = starts.astype(np.int64), ends.astype(np.int64), counts.astype(np.int64)
    # in groups only to check CRCs just before, and only where the whole would not stay in a
    # last-level cache between the two passes: more arrays made and joined cost more otherwise
    whole = int(ends64[-1] - starts64[0]) if len(starts64) else 0
    group = WALK_BYTES if check is not None and whole > ONE_WALK_BYTES else 1 << 62
    parts, lo = [], 0
    while lo < len(starts64):
        hi = max(int(np.searchsorted(ends64, starts64[lo] + group, "right")), lo + 1)
        if check is not None and not check(lo, hi):
            return None
        found = read(u8, starts64[lo:hi], ends64[lo:hi], counts64[lo:hi], LIMITS.max_items)
        if found is None:
            return None
        parts.append((found, int(counts64[lo:hi].sum())))
        lo = hi
    if not parts:
        parts.append((read(u8, starts64, ends64, counts64, LIMITS.max_items), 0))
    found = _joined(parts)
    for name in [n for n in found if n + ".size" in found]:  # byte fields' positions, in the reader's type
        found[name] = found[name].astype(starts.dtype, copy=False)
    return found


def _fields(u8, record_pos, record_end) -> dict:
    """Record._columns over chunks of records small enough that their bytes and the passes'
    temporaries stay in cache (each record's length is checked inside)."""
    n = len(record_pos)
    span = int(record_pos.max()) - int(record_pos.min()) + 1 if n else 1
    step = min(CHUNK_RECORDS, max(CHUNK_RECORDS_MIN, CHUNK_BYTES * n // span))
    parts = [(Record._columns(u8, record_pos[i:i + step], record_end[i:i + step])[0], min(step, n - i))
             for i in range(0, n, step)] or [(Record._columns(u8, record_pos, record_end)[0], 0)]
    return _joined(parts)


def _joined(parts: list[tuple[dict, int]]) -> dict:
    """The columns of consecutive groups of records, each given with its number of records, as
    one: a repeated field's first-item indexes (a record column, without a dot in its name, one
    longer than the group) shifted by the items of the groups before."""
    if len(parts) == 1:
        return parts[0][0]
    first, n = parts[0]
    out = {}
    for name in first:
        if "." not in name and first[name].size == n + 1:
            shifted, before = [], 0
            for part, _ in parts:
                shifted.append(part[name][:-1] + before)
                before += int(part[name][-1])
            shifted.append(np.array([before], np.int64))
            out[name] = np.concatenate(shifted)
        else:
            out[name] = np.concatenate([part[name] for part, _ in parts])
    return out


def binary_array(buffer: pa.Buffer, starts: np.ndarray, sizes: np.ndarray, kind: pa.DataType | None = None):
    """Arrow array of the slices [start, start + size) of `buffer`, null where size < 0."""
    import pyarrow as pa
    kind = pa.binary() if kind is None else kind
    n = len(starts)
    narrow = buffer.size < 2 ** 31
    spans_type = kind if narrow else (pa.large_string() if kind == pa.string() else pa.large_binary())
    if kernels.compiled is not None:  # one memcpy per slice
        offsets, data = kernels.compiled.gather(np.frombuffer(buffer, np.uint8), np.ascontiguousarray(starts, np.int64),
                                                np.ascontiguousarray(sizes, np.int64), not narrow,
                                                pa.allocate_buffer)
        buffers = [pa.py_buffer(offsets), data]
    else:
        buffers = _taken(buffer, starts, sizes, spans_type, narrow).buffers()[1:]
    present = sizes >= 0
    validity = None if present.all() else pa.py_buffer(np.packbits(present, bitorder="little"))
    taken = pa.Array.from_buffers(spans_type, n, [validity, *buffers])
    return taken if narrow else taken.cast(kind)


def _taken(buffer: pa.Buffer, starts: np.ndarray, sizes: np.ndarray, spans_type, narrow: bool):
    """The slices, copied out by Arrow: they lie in order in the buffer, so one binary array over
    the whole buffer can alternate them with the gaps between them, and taking every other
    element copies the slices out in C++."""
    import pyarrow as pa
    n = len(starts)
    bounds = np.empty(2 * n + 1, np.int32 if narrow else np.int64)
    bounds[0:2 * n:2] = starts
    bounds[1:2 * n:2] = starts + np.maximum(sizes, 0)
    bounds[2 * n] = bounds[2 * n - 1] if n else 0
    if n and (np.diff(bounds) < 0).any():  # Arrow trusts offsets: never hand it ones that go back
        raise ValueError("slices out of order")
    spans = pa.Array.from_buffers(spans_type, 2 * n, [None, pa.py_buffer(bounds), buffer])
    return spans.take(pa.array(np.arange(0, 2 * n, 2, dtype=np.int32)))
