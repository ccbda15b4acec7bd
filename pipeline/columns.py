"""Kafka records as Arrow columns, in the schema Spark's own Kafka source gives (then ours).
No pyspark import: the same code serves Spark's Python data source, mapInArrow and plain pyarrow."""
from __future__ import annotations

import pyarrow as pa

KAFKA_DDL = "key binary, value binary, topic string, partition int, offset long, timestamp timestamp, timestampType int"
HEADERS_DDL = "headers array<struct<key:string,value:binary>>"
OURS_DDL = ("magic int, compression string, producerId long, producerEpoch int, sequence int, "
            "isTransactional boolean, isControl boolean, crcValid boolean, segment string, position long, "
            "corruption string")

HEADER_TYPE = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))
_KAFKA = [("key", pa.binary()), ("value", pa.binary()), ("topic", pa.string()), ("partition", pa.int32()),
          ("offset", pa.int64()), ("timestamp", pa.timestamp("us", tz="UTC")), ("timestampType", pa.int32())]
_OURS = [("magic", pa.int32()), ("compression", pa.string()), ("producerId", pa.int64()),
         ("producerEpoch", pa.int32()), ("sequence", pa.int32()), ("isTransactional", pa.bool_()),
         ("isControl", pa.bool_()), ("crcValid", pa.bool_()), ("segment", pa.string()), ("position", pa.int64()),
         ("corruption", pa.string())]


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
        ts = pa.array(c["timestamp"], pa.int64())
        arrays = {
            "key": pa.array(c["key"], pa.binary()), "value": pa.array(c["value"], pa.binary()),
            "topic": pa.array([self.topic] * n, pa.string()),
            "partition": pa.array([self.partition] * n, pa.int32()),
            "offset": pa.array(c["offset"], pa.int64()),
            "timestamp": pa.compute.multiply(ts, 1000).cast(pa.timestamp("us", tz="UTC")),
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
