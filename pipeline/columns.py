"""Kafka records as Arrow columns, in the schema Spark's own Kafka source gives (then ours).
No pyspark import: the same code serves Spark's Python data source, mapInArrow and plain pyarrow."""
from __future__ import annotations

import numpy as np
import pyarrow as pa

KAFKA_DDL = "key binary, value binary, topic string, partition int, offset long, timestamp timestamp, timestampType int"
HEADERS_DDL = "headers array<struct<key:string,value:binary>>"
OURS_DDL = ("magic int, compression string, producerId long, producerEpoch int, sequence int, "
            "isTransactional boolean, isControl boolean, crcValid boolean, segment string, position long, "
            "corruption string")

HEADER_TYPE = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))
TIMESTAMP = pa.timestamp("us", tz="UTC")
_KAFKA = [("key", pa.binary()), ("value", pa.binary()), ("topic", pa.string()), ("partition", pa.int32()),
          ("offset", pa.int64()), ("timestamp", TIMESTAMP), ("timestampType", pa.int32())]
_OURS = [("magic", pa.int32()), ("compression", pa.string()), ("producerId", pa.int64()),
         ("producerEpoch", pa.int32()), ("sequence", pa.int32()), ("isTransactional", pa.bool_()),
         ("isControl", pa.bool_()), ("crcValid", pa.bool_()), ("segment", pa.string()), ("position", pa.int64()),
         ("corruption", pa.string())]


# Spark's timestamps hold the years 1 to 9999: a record's milliseconds outside them (a producer may
# write any long; 2^62 would not even fit in microseconds) are no time Spark can hold, and are NULL
EARLIEST_MS, LATEST_MS = -62_135_596_800_000, 253_402_300_799_999
NO_TIMESTAMP = -1  # Kafka's "no timestamp": every v0 message's, and a producer's that gave none


def timestamps(millis) -> pa.Array:
    """Records' milliseconds (a list, None for none, or an int64 array) as Spark's timestamps:
    microseconds, NULL for no timestamp and where Spark can hold no such time."""
    ms = pa.array(millis, pa.int64()) if not isinstance(millis, pa.Array) else millis
    values = ms.fill_null(NO_TIMESTAMP).to_numpy(zero_copy_only=False)
    missing = (values == NO_TIMESTAMP) | (values < EARLIEST_MS) | (values > LATEST_MS)
    micros = np.where(missing, 0, values) * 1000
    return pa.array(micros, TIMESTAMP, mask=missing if missing.any() else None)


def timestamp_micros(ms: int | None) -> int | None:
    """One timestamp as `timestamps` gives it."""
    return None if ms is None or ms == NO_TIMESTAMP or not EARLIEST_MS <= ms <= LATEST_MS else ms * 1000


def ddl(include_headers: bool) -> str:
    return ", ".join([KAFKA_DDL] + ([HEADERS_DDL] if include_headers else []) + [OURS_DDL])


def arrow_schema(include_headers: bool) -> pa.Schema:
    return pa.schema(_KAFKA + ([("headers", HEADER_TYPE)] if include_headers else []) + _OURS)


class ColumnBuilder:
    """Collects records column by column and hands them out as Arrow record batches."""

    def __init__(self, topic: str, partition: int, segment: str, include_headers: bool):
        self.topic, self.partition, self.segment = topic, partition, segment
        self.include_headers = include_headers
        self.schema = arrow_schema(include_headers)
        self._reset()

    def _reset(self) -> None:
        self.cols: dict[str, list] = {name: [] for name in self.schema.names
                                      if name not in ("topic", "partition", "segment")}

    def __len__(self) -> int:
        return len(self.cols["offset"])

    def add_batch_rows(self, n: int, batch_fields: tuple) -> None:
        """Extend the per-batch columns by `n` rows of the same values."""
        magic, compression, pid, epoch, txn, control, crc_valid, position = batch_fields
        c = self.cols
        c["magic"] += [magic] * n
        c["compression"] += [compression] * n
        c["producerId"] += [pid] * n
        c["producerEpoch"] += [epoch] * n
        c["isTransactional"] += [txn] * n
        c["isControl"] += [control] * n
        c["crcValid"] += [crc_valid] * n
        c["position"] += [position] * n
        c["corruption"] += [None] * n

    def add_corruption(self, offset: int | None, position: int, reason: str) -> None:
        """A row standing for a batch that could not be read (onCorrupt=report)."""
        c = self.cols
        for name, value in (("key", None), ("value", None), ("offset", offset), ("timestamp", None),
                            ("timestampType", None), ("magic", None), ("compression", None), ("producerId", None),
                            ("producerEpoch", None), ("sequence", None), ("isTransactional", None),
                            ("isControl", None), ("crcValid", False), ("position", position),
                            ("corruption", reason)):
            c[name].append(value)
        if self.include_headers:
            c["headers"].append(None)

    def flush(self) -> pa.RecordBatch:
        n = len(self)
        c = self.cols
        arrays = {
            "key": pa.array(c["key"], pa.binary()), "value": pa.array(c["value"], pa.binary()),
            "topic": pa.array([self.topic] * n, pa.string()),
            "partition": pa.array([self.partition] * n, pa.int32()),
            "offset": pa.array(c["offset"], pa.int64()),
            "timestamp": timestamps(c["timestamp"]),
            "timestampType": pa.array(c["timestampType"], pa.int32()),
            "segment": pa.array([self.segment] * n, pa.string()),
        }
        if self.include_headers:
            arrays["headers"] = pa.array(c["headers"], HEADER_TYPE)
        for name, typ in _OURS:
            if name not in arrays:
                arrays[name] = pa.array(c[name], typ)
        for values in c.values():  # emptied in place: callers keep a reference to the lists
            values.clear()
        return pa.RecordBatch.from_arrays([arrays[name] for name in self.schema.names], schema=self.schema)


INT32_MAX = 2 ** 31 - 1


def batch_from_columns(cols, batches: list, schema: pa.Schema, topic: str, partition: int, segment: str,
                       base_pos: int, include_headers: bool) -> pa.RecordBatch:
    """The records of `batches` (kafkacodec.codec.records.Batch of v2 batches, read by columns into
    `cols`) as one Arrow batch of `schema`: per-record arrays straight from the columns, per-batch
    values repeated by each batch's record count."""
    n = len(cols)
    entries = [b.entry for b in batches]
    counts = np.fromiter((e.records_count for e in entries), np.int64, len(entries))

    def per_batch(values, typ):
        return pa.array(np.repeat(np.asarray(values), counts), typ)

    base_seq = np.repeat(np.fromiter((e.base_sequence for e in entries), np.int64, len(entries)), counts)
    delta = cols.offset - np.repeat(np.fromiter((e.base_offset for e in entries), np.int64, len(entries)), counts)
    # sequences wrap past 2^31-1 to 0 (producers.last_sequence); -1 where the batch has none
    seq = base_seq + delta
    seq[seq > INT32_MAX] -= INT32_MAX + 1
    seq[base_seq < 0] = -1
    codec_names = pa.array(sorted({b.compression for b in batches}), pa.string())
    codec_index = {name: i for i, name in enumerate(codec_names.to_pylist())}
    arrays = {
        "key": cols.arrow_bytes("key"), "value": cols.arrow_bytes("value"),
        "topic": pa.repeat(pa.scalar(topic, pa.string()), n),
        "partition": pa.repeat(pa.scalar(partition, pa.int32()), n),
        "offset": pa.array(cols.offset, pa.int64()),
        "timestamp": timestamps(pa.array(cols.timestamp, pa.int64())),
        "timestampType": per_batch([int(e.timestamp_type) for e in entries], pa.int32()),
        "magic": pa.repeat(pa.scalar(2, pa.int32()), n),
        "compression": pa.DictionaryArray.from_arrays(
            per_batch([codec_index[b.compression] for b in batches], pa.int32()), codec_names).cast(pa.string()),
        "producerId": per_batch([e.producer_id for e in entries], pa.int64()),
        "producerEpoch": per_batch([e.producer_epoch for e in entries], pa.int32()),
        "sequence": pa.array(seq, pa.int32()),
        "isTransactional": per_batch([e.is_transactional for e in entries], pa.bool_()),
        "isControl": per_batch([e.is_control for e in entries], pa.bool_()),
        "crcValid": per_batch([e.crc_valid for e in entries], pa.bool_()),
        "segment": pa.repeat(pa.scalar(segment, pa.string()), n),
        "position": per_batch([base_pos + b.position for b in batches], pa.int64()),
        "corruption": pa.nulls(n, pa.string()),
    }
    if include_headers:
        arrays["headers"] = cols.arrow_headers(empty_as_null=True)
    return pa.RecordBatch.from_arrays([arrays[name] for name in schema.names], schema=schema)
