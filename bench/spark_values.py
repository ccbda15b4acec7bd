"""Spark figures for typed values: the time kafka-log takes to give Avro values as a struct of the
subject's schema (valueFormat=avro: every value read with its writer's schema and resolved to the
latest) beside the time it takes to give the same values as bytes, in the same session. Half the
records are of the subject's first version, half of its second (a field added with a default)."""
from __future__ import annotations

import io
import json
import random
import struct
from pathlib import Path

from kafkacodec.pipeline.reading import read
from kafkacodec.storage.change.writer import PartitionWriter
from spark import _best, local_table

PARTITIONS, RECORDS_PER_PARTITION, PER_BATCH = 2, 500_000, 500
V1 = {"type": "record", "name": "Click", "namespace": "bench", "fields": [
    {"name": "id", "type": "long"}, {"name": "user", "type": "string"}, {"name": "price", "type": "double"},
    {"name": "campaign", "type": ["null", "string"], "default": None},
    {"name": "tags", "type": {"type": "array", "items": "string"}}]}
V2 = dict(V1, fields=V1["fields"] + [{"name": "country", "type": "string", "default": "FR"}])


def _schemas(root: Path) -> None:
    with PartitionWriter(root / "_schemas-0") as w:
        for version, schema in ((1, V1), (2, V2)):
            key = {"keytype": "SCHEMA", "subject": "clicks-value", "version": version, "magic": 1}
            value = {"subject": "clicks-value", "version": version, "id": version,
                     "schema": json.dumps(schema, separators=(",", ":")), "deleted": False}
            w.append([{"key": json.dumps(key).encode(), "value": json.dumps(value).encode(),
                       "timestamp": 1_700_000_000_000}])


def build(root: Path) -> int:
    import fastavro

    parsed = {1: fastavro.parse_schema(V1), 2: fastavro.parse_schema(V2)}
    _schemas(root)
    for p in range(PARTITIONS):
        rng = random.Random(p)
        with PartitionWriter(root / f"clicks-{p}", segment_bytes=64 << 20) as w:
            for b in range(RECORDS_PER_PARTITION // PER_BATCH):
                version = 1 if b % 2 == 0 else 2
                records = []
                for i in range(PER_BATCH):
                    value = {"id": b * PER_BATCH + i, "user": "user-%06d" % rng.randrange(10 ** 6),
                             "price": rng.random() * 100, "campaign": None if i % 3 else "spring",
                             "tags": ["t%d" % rng.randrange(9) for _ in range(rng.randrange(3))], "country": "DE"}
                    out = io.BytesIO()
                    out.write(b"\x00" + struct.pack(">i", version))
                    fastavro.schemaless_writer(out, parsed[version], value)
                    records.append({"key": None, "value": out.getvalue(),
                                    "timestamp": 1_700_000_000_000 + b * PER_BATCH + i})
                w.append(records, compression="lz4")
    return PARTITIONS * RECORDS_PER_PARTITION


EVERY_FIELD = ("sum(valueDecoded.id)", "sum(length(valueDecoded.user))", "sum(size(valueDecoded.tags))",
               "count(valueDecoded.campaign)", "count(valueDecoded.country)")
ONE_FIELD = ("sum(valueDecoded.id)",)


def _timed(queries: dict) -> dict:
    for query in queries.values():  # each warmed once: the JVM's compiler has seen every reader's code
        query()
    return {name: _best(query, runs=3) for name, query in queries.items()}


def measure(spark, tmp: Path) -> list[dict]:
    root = tmp / "values"
    records = build(root)
    out = []
    for reader in ("jvm", "python"):
        binary = read(spark, root, reader=reader, subscribe="clicks")
        typed = read(spark, root, reader=reader, subscribe="clicks", valueFormat="avro")
        assert typed.where("valueError is not null").count() == 0
        # every field used, as a query over the values would; and one field, which costs Spark least
        # on top of the decoding (each reader decodes whole values either way)
        t = _timed({"binary": lambda: binary.selectExpr("sum(length(value))").collect(),
                    "every": lambda: typed.selectExpr(*EVERY_FIELD).collect(),
                    "one": lambda: typed.selectExpr(*ONE_FIELD).collect()})
        for query in ("every", "one"):
            out.append({"workload": f"{reader} reader: {query} field of the "
                                    "decoded struct, beside sum(length(value))", "records": records,
                        "binary_rps": records / t["binary"], "typed_rps": records / t[query],
                        "slowdown": t[query] / t["binary"]})
    # what Spark itself spends on the every-field query over a struct, whoever decodes it: the same
    # struct written to Parquet, every field beside one
    read(spark, root, subscribe="clicks", valueFormat="avro").select("valueDecoded").write.parquet(str(tmp / "pq"))
    parquet = spark.read.parquet(str(tmp / "pq"))
    t = _timed({"one": lambda: parquet.selectExpr(*ONE_FIELD).collect(),
                "every": lambda: parquet.selectExpr(*EVERY_FIELD).collect()})
    out.append({"workload": "Parquet of the decoded struct: every field, beside one field (the bytes column)",
                "records": records, "binary_rps": records / t["one"], "typed_rps": records / t["every"],
                "slowdown": t["every"] / t["one"]})
    return out


def table() -> list[dict]:
    return local_table(measure, app="kafkacodec bench values")
