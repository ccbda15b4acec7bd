"""Reads that need no record: when the query's schema (one the user gives, as Spark's Python data
sources prune no columns themselves) has none of key, value, headers and timestamp, v2 batches
are read from their headers alone. Offsets come from the batch's first offset and count when
they follow one another (every batch a producer wrote; the cleaner's leave gaps), so nothing is
decompressed; the rest, and any damage, go through decode_slice as a full read would."""
from __future__ import annotations

from dataclasses import replace
from typing import Iterator

import numpy as np
import pyarrow as pa

from kafkacodec.generated.record_batch import RecordBatch
from kafkacodec.codec.records import CODEC_NAMES
from kafkacodec.runtime.errors import DecodeError
from kafkacodec.storage.state.producers import last_sequence
from kafkacodec.codec.places import MAGIC_AT
from kafkacodec.storage.segments.scan import frame_size

from .columns import arrow_schema
from .decode import Slice, decode_slice, left_out

# the columns a batch header gives for v2 batches
HEADER_COLUMNS = frozenset({"topic", "partition", "offset", "timestampType", "magic", "compression", "producerId",
                            "producerEpoch", "sequence", "isTransactional", "isControl", "crcValid", "segment",
                            "position", "corruption"})
ROWS_PER_BATCH = 1 << 17


def projected(batch: pa.RecordBatch, names: tuple[str, ...]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([batch.column(n) for n in names], names=list(names))


def header_rows(buf, spec: Slice, names: tuple[str, ...], segment: str, base_pos: int = 0
                ) -> Iterator[pa.RecordBatch]:
    """The columns `names` (all in HEADER_COLUMNS) of the records of buf[start_pos:end_pos]."""
    schema = arrow_schema(False)
    end = len(buf) if spec.end_pos is None else min(spec.end_pos - base_pos, len(buf))
    lo, hi = spec.start_offset, spec.end_offset
    pos = spec.start_pos - base_pos
    parts: list[tuple] = []  # (first offset, count, batch header, position) of the rows gathered
    gathered = 0

    def flush() -> Iterator[pa.RecordBatch]:
        nonlocal gathered
        if parts:
            yield _columns(parts, names, schema, spec, segment)
        parts.clear()
        gathered = 0

    def full(start: int, stop: int | None) -> Iterator[pa.RecordBatch]:
        """The bytes from `start` read as decode_slice reads them, projected."""
        yield from flush()
        sub = replace(spec, start_pos=base_pos + start, end_pos=None if stop is None else base_pos + stop)
        for batch in decode_slice(buf, sub, segment_name=segment, base_pos=base_pos):
            yield projected(batch, names)

    while pos < end:
        at = pos
        try:
            size = frame_size(buf, at, end)
            if buf[at + MAGIC_AT] < 2:
                raise DecodeError("a legacy entry")  # its records hold the offsets
            e, _ = RecordBatch.read(buf, at, at + size, verify=spec.options.verify_crc)
        except DecodeError:  # damage (or a legacy entry): found and handled as a full read does
            yield from full(at, spec.end_pos - base_pos if spec.end_pos is not None else None)
            return
        pos = at + size
        if lo is not None and e.last_offset < lo:
            continue
        if hi is not None and e.base_offset >= hi:
            break
        if left_out(spec, e):
            continue
        if e.records_count != e.last_offset_delta + 1:  # compacted: the gaps are in the records
            yield from full(at, pos)
            continue
        first = e.base_offset if lo is None else max(lo, e.base_offset)
        last = e.last_offset if hi is None else min(hi - 1, e.last_offset)
        parts.append((first, last - first + 1, e, base_pos + at))
        gathered += last - first + 1
        if gathered >= ROWS_PER_BATCH:
            yield from flush()
    yield from flush()


def _columns(parts: list[tuple], names: tuple[str, ...], schema: pa.Schema, spec: Slice, segment: str
             ) -> pa.RecordBatch:
    counts = np.array([n for _, n, _, _ in parts], dtype=np.int64)
    total = int(counts.sum())

    def per_batch(values, dtype) -> np.ndarray:
        return np.repeat(np.array(values, dtype=dtype), counts)

    def offsets() -> np.ndarray:
        starts = np.repeat(np.array([f for f, _, _, _ in parts], dtype=np.int64) - np.cumsum(counts) + counts, counts)
        return starts + np.arange(total, dtype=np.int64)

    def sequences() -> list:
        out = []
        for first, n, e, _ in parts:
            skip = first - e.base_offset
            out += [-1] * n if e.base_sequence < 0 else [last_sequence(e.base_sequence, skip + i) for i in range(n)]
        return out

    makers = {
        "topic": lambda: pa.array([spec.topic] * total, pa.string()),
        "partition": lambda: pa.array(np.full(total, spec.partition, dtype=np.int32)),
        "offset": lambda: pa.array(offsets()),
        "timestampType": lambda: pa.array(per_batch([int(e.timestamp_type) for _, _, e, _ in parts], np.int32)),
        "magic": lambda: pa.array(np.full(total, 2, dtype=np.int32)),
        "compression": lambda: pa.array(per_batch([CODEC_NAMES.get(int(e.compression), "?") for _, _, e, _ in parts],
                                                  object), pa.string()),
        "producerId": lambda: pa.array(per_batch([e.producer_id for _, _, e, _ in parts], np.int64)),
        "producerEpoch": lambda: pa.array(per_batch([e.producer_epoch for _, _, e, _ in parts], np.int32)),
        "sequence": lambda: pa.array(sequences(), pa.int32()),
        "isTransactional": lambda: pa.array(per_batch([e.is_transactional for _, _, e, _ in parts], np.bool_)),
        "isControl": lambda: pa.array(per_batch([e.is_control for _, _, e, _ in parts], np.bool_)),
        "crcValid": lambda: pa.array(per_batch([e.crc_valid for _, _, e, _ in parts], np.bool_)),
        "segment": lambda: pa.array([segment] * total, pa.string()),
        "position": lambda: pa.array(per_batch([p for _, _, _, p in parts], np.int64)),
        "corruption": lambda: pa.nulls(total, pa.string()),
    }
    arrays = [makers[n]().cast(schema.field(n).type) for n in names]
    return pa.RecordBatch.from_arrays(arrays, names=list(names))
