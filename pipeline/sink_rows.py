"""One write task's rows, taken column by column: grouped per topic-partition, put in offset
order, cut into batches (at recordsPerBatch, and where the batch a row was read from changes),
each batch as records and the options of its first row. With the compiled writer the records
sections are written from Arrow's buffers; without it, only the records become Python objects.
No pyspark import."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kafkacodec.codec.records import EncodedRecords
from kafkacodec.generated.record_batch import RecordBatch
from kafkacodec.storage.layout.names import is_legal_topic


@dataclass
class PartitionRows:
    topic: str
    partition: int
    rows: pa.Table  # in offset order, offsets filled in
    assigned: bool  # the rows had no offsets: they were numbered from 0 here


class RowsError(ValueError):
    """Rows that cannot be written; the message says which."""


MAX_PARTITION = 2 ** 31 - 1
UNITS_PER_MS = {"s": 0, "ms": 1, "us": 1000, "ns": 1_000_000}  # 0: seconds, multiplied instead
BYTES = ("key", "value")  # binary columns; strings are taken as their UTF-8 bytes, as Spark's Kafka sink takes them


def _plain_types(table: pa.Table) -> pa.Table:
    """Dictionary columns decoded, and key and value as binary."""
    for i, name in enumerate(table.column_names):
        column = table[name]
        if pa.types.is_dictionary(column.type):
            column = column.cast(column.type.value_type)
        if name in BYTES and column.type != pa.binary():
            if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)
                    or pa.types.is_large_binary(column.type) or pa.types.is_null(column.type)):
                raise RowsError(f"the {name} column is {column.type}: give binary or string")
            column = column.cast(pa.binary())
        if column is not table[name]:
            table = table.set_column(i, name, column)
    return table


def _check_names(topic: str, partition: int) -> None:
    if not is_legal_topic(topic):  # a partition directory is named after it
        raise RowsError(f"{topic!r} is not a topic name Kafka accepts (1 to 249 of ASCII letters, digits, "
                        "'.', '_' and '-', and not '.' or '..')")
    if not 0 <= partition <= MAX_PARTITION:
        raise RowsError(f"partition {partition} of {topic!r} is outside 0 to {MAX_PARTITION}")


def partitions(batches: list[pa.RecordBatch]) -> Iterator[PartitionRows]:
    """The rows of `batches` per (topic, partition), in that order. Rows standing for damaged
    batches (a `corruption` reason, from onCorrupt=report) hold no record and are left out."""
    if not batches or not sum(b.num_rows for b in batches):
        return
    table = _plain_types(pa.Table.from_batches(batches))
    if "corruption" in table.column_names:
        reason = table["corruption"]
        if reason.null_count < len(reason):
            table = table.filter(pc.or_kleene(pc.is_null(reason), pc.equal(reason, "")))
    for name in ("topic", "partition"):
        if table[name].null_count:
            raise RowsError(f"a row has no {name}: every row names the topic-partition it goes to")
    keys = table.group_by(["topic", "partition"], use_threads=False).aggregate([]).sort_by(
        [("topic", "ascending"), ("partition", "ascending")])
    named = list(zip(keys["topic"].to_pylist(), keys["partition"].to_pylist()))
    for topic, partition in named:  # all checked before the first partition is written
        _check_names(topic, partition)
    for topic, partition in named:
        rows = table if keys.num_rows == 1 else table.filter(
            pc.and_(pc.equal(table["topic"], topic), pc.equal(table["partition"], partition)))
        offsets = rows["offset"] if "offset" in rows.column_names else None
        missing = 0 if offsets is None else offsets.null_count
        if 0 < missing < rows.num_rows:  # numbering them all would drop the offsets given
            raise RowsError(f"{topic}-{partition}: {missing} of its {rows.num_rows} rows have no offset: "
                            "give every row an offset, or none")
        assigned = offsets is None or missing > 0
        if assigned:
            numbered = pa.array(np.arange(rows.num_rows, dtype=np.int64))
            rows = rows.drop_columns(["offset"]) if offsets is not None else rows
            rows = rows.append_column("offset", numbered)
        else:
            if np.any(np.diff(offsets.to_numpy()) < 0):  # Spark's rows most often come in order
                rows = rows.take(pc.sort_indices(offsets))
            repeated = np.flatnonzero(np.diff(rows["offset"].to_numpy()) == 0)  # a batch's offsets must rise
            if len(repeated):
                raise RowsError(f"{topic}-{partition}: offset {rows['offset'][int(repeated[0])].as_py()} is given "
                                "to more than one row")
        if "headers" in rows.column_names and rows["headers"].combine_chunks().flatten().null_count:
            raise RowsError(f"{topic}-{partition}: a row has a null header (a header is a key and a value)")
        yield PartitionRows(topic, int(partition), rows, assigned)


def _filled(table: pa.Table, name: str, default, dtype) -> np.ndarray:
    if name not in table.column_names:
        return np.full(table.num_rows, default, dtype)
    column = table[name]
    if pa.types.is_timestamp(column.type):
        column = column.cast(pa.int64())  # in the column's own unit
    return column.fill_null(default).to_numpy().astype(dtype, copy=False)


def batch_starts(rows: pa.Table, records_per_batch: int) -> np.ndarray:
    """Where each batch starts: at row 0, where the (segment, position) a row was read from
    differs from the row before's (rows read from a log keep their batches), and every
    `records_per_batch` rows within those runs."""
    n = rows.num_rows
    changes = np.zeros(n, dtype=bool)
    changes[:1] = True
    if "segment" in rows.column_names and "position" in rows.column_names and n > 1:
        segment, position = rows["segment"], rows["position"]
        keyed = pc.and_(pc.is_valid(segment), pc.is_valid(position)).to_numpy(zero_copy_only=False)
        codes = pc.dictionary_encode(segment.combine_chunks().fill_null("")).indices.to_numpy()
        pos = position.fill_null(0).to_numpy()
        changes[1:] = ((keyed[1:] != keyed[:-1]) | (keyed[1:] & ((codes[1:] != codes[:-1]) | (pos[1:] != pos[:-1]))))
    runs = np.flatnonzero(changes)
    run_ends = np.append(runs[1:], n)
    return np.concatenate([np.arange(s, e, records_per_batch) for s, e in zip(runs, run_ends)])


def timestamps_ms(rows: pa.Table) -> np.ndarray:
    """Each record's timestamp in milliseconds (-1 when absent): a timestamp column floored to
    milliseconds as Spark's unix_millis floors, or a column of longs taken as milliseconds."""
    if "timestamp" in rows.column_names and pa.types.is_timestamp(rows["timestamp"].type):
        ticks = _filled(rows, "timestamp", 0, np.int64)
        per_ms = UNITS_PER_MS[rows["timestamp"].type.unit]
        millis = ticks * 1000 if per_ms == 0 else np.floor_divide(ticks, per_ms)
        millis[rows["timestamp"].is_null().to_numpy(zero_copy_only=False)] = -1
        return millis
    return _filled(rows, "timestamp", -1, np.int64)


def record_columns(rows: pa.Table, millis: np.ndarray) -> dict:
    """Python lists of each record's key, value, timestamp, offset and headers (a list of
    (key, value) pairs), from the columns that have them."""
    n = rows.num_rows
    out = {"key": rows["key"].to_pylist() if "key" in rows.column_names else [None] * n,
           "value": rows["value"].to_pylist(), "timestamp": millis.tolist(),
           "offset": rows["offset"].to_numpy().astype(np.int64).tolist()}
    out["headers"] = _headers(rows["headers"].combine_chunks()) if "headers" in rows.column_names else [()] * n
    return out


def _headers(column: pa.ListArray) -> list:
    """Each record's headers as a list of (key, value) pairs; empty for none (or a null list)."""
    counts = column.value_lengths().fill_null(0).to_numpy()
    ends = np.cumsum(counts)
    items = column.flatten()  # the valid lists' items, in order
    pairs = list(zip(items.field("key").to_pylist(), items.field("value").to_pylist()))
    return [pairs[a:b] if a != b else () for a, b in zip((ends - counts).tolist(), ends.tolist())]


def _binary(column, n: int, kind=pa.binary()) -> tuple | None:
    """(positions, sizes with -1 for null, bytes) of a binary column for the columnar writer (all
    null when absent); None for a column of another type."""
    if column is None:
        return np.zeros(n, np.int64), np.full(n, -1, np.int64), np.empty(0, np.uint8)
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if array.type != kind:
        return None
    _, offsets, data = array.buffers()
    offsets = np.frombuffer(offsets, np.int32, n + 1, array.offset * 4).astype(np.int64)
    sizes = np.diff(offsets)
    if array.null_count:
        sizes[array.is_null().to_numpy(zero_copy_only=False)] = -1
    return offsets[:-1], sizes, np.frombuffer(data, np.uint8) if data is not None else np.empty(0, np.uint8)


def _deltas(values: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> np.ndarray | None:
    """Each value less the first of its batch; None where a difference leaves 64 bits."""
    firsts = np.repeat(values[starts], counts)
    deltas = values - firsts  # wraps where it overflows: then its sign differs from the operands'
    if len(values) and -2 ** 62 < values.min() and values.max() < 2 ** 62:
        return deltas  # no difference of these overflows
    return None if ((values ^ firsts) & (values ^ deltas) < 0).any() else deltas


def writer_columns(rows: pa.Table, millis: np.ndarray, starts: np.ndarray) -> tuple | None:
    """The columnar writer's (columns, data) for every record of `rows` (RecordBatch.Record.
    _pack_columns_compiled), deltas taken from the first record of each batch at `starts`; None
    for columns of other types or values whose deltas might not fit."""
    n = rows.num_rows
    names = rows.column_names
    counts = np.diff(np.append(starts, n))
    cols = {"timestamp_delta": _deltas(np.asarray(millis, np.int64), starts, counts),
            "offset_delta": _deltas(rows["offset"].to_numpy().astype(np.int64), starts, counts),
            "headers": np.zeros(n + 1, np.int64)}
    if cols["timestamp_delta"] is None or cols["offset_delta"] is None:
        return None
    fields = {"key": _binary(rows["key"] if "key" in names else None, n), "value": _binary(rows["value"], n),
              "headers.key": _binary(None, 0, pa.string()), "headers.value": _binary(None, 0)}
    if "headers" in names:
        column = rows["headers"].combine_chunks()
        item = column.type.value_type if pa.types.is_list(column.type) else None
        if item is None or not pa.types.is_struct(item) or \
                [(f.name, f.type) for f in item] != [("key", pa.string()), ("value", pa.binary())]:
            return None  # whatever its fields' nullability, Spark's header type is this one
        np.cumsum(column.value_lengths().fill_null(0).to_numpy(), out=cols["headers"][1:])
        items = column.flatten()
        fields["headers.key"] = _binary(items.field("key"), len(items), pa.string())
        fields["headers.value"] = _binary(items.field("value"), len(items))
    if any(found is None for found in fields.values()):
        return None
    data = {}
    for name, (positions, sizes, buffer) in fields.items():
        cols[name], cols[name + ".size"], data[name] = positions, sizes, buffer
    return cols, data


def batch_options(rows: pa.Table, starts: np.ndarray, compression: str) -> list[dict]:
    """write_batch's options for each batch, from its first row's producer and batch columns."""
    producer = _filled(rows, "producerId", -1, np.int64)[starts]
    epoch = _filled(rows, "producerEpoch", -1, np.int64)[starts]
    sequence = _filled(rows, "sequence", -1, np.int64)[starts]
    transactional = _filled(rows, "isTransactional", False, bool)[starts]
    control = _filled(rows, "isControl", False, bool)[starts]
    append_time = _filled(rows, "timestampType", 0, np.int64)[starts] == 1
    out = []
    for i in range(len(starts)):
        options: dict = {"compression": compression}
        if producer[i] >= 0:
            options.update(producer_id=int(producer[i]), producer_epoch=int(epoch[i]),
                           base_sequence=int(sequence[i]), is_transactional=bool(transactional[i]))
        if control[i]:
            options["is_control"] = True
        if append_time[i]:
            options["timestamp_type"] = "LogAppendTime"
        out.append(options)
    return out


def batches(part: PartitionRows, records_per_batch: int, compression: str) -> Iterator[tuple[object, dict]]:
    """(records, write_batch options) for each batch of one partition's rows: a records section
    the compiled writer wrote from the columns, or, without it, records as dicts."""
    rows = part.rows
    starts = batch_starts(rows, records_per_batch)
    options = batch_options(rows, starts, compression)
    millis = timestamps_ms(rows)
    pack = RecordBatch.Record._pack_columns_compiled
    columns = None if pack is None else writer_columns(rows, millis, starts)
    offsets = rows["offset"].to_numpy()
    cols = None
    names = ("key", "value", "timestamp", "offset", "headers")
    stops = starts[1:].tolist() + [rows.num_rows]
    for i, (start, stop) in enumerate(zip(starts.tolist(), stops)):
        body = None if columns is None else pack(*columns, start, stop)
        if body is not None:
            yield EncodedRecords(body, stop - start, int(offsets[start]), int(offsets[stop - 1]), int(millis[start]),
                                 int(millis[start:stop].max())), options[i]
            continue
        if cols is None:  # what the compiled writer leaves to the generated one (or no compiled writer)
            cols = record_columns(rows, millis)
        yield [dict(zip(names, r)) for r in zip(*(cols[n][start:stop] for n in names))], options[i]
