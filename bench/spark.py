"""Spark figures: rows/s of the kafka-log source (count, count through a schema of batch-header
columns, a full scan aggregating every column, an offset range, compact-table's latest value
per key, and writing) beside the same jobs over the same rows read from (or written as) Parquet,
in the same session and run. The rates of the offset-range row are of the whole table's records."""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

from kafkacodec.storage.change.writer import PartitionWriter

PARTITIONS, RECORDS_PER_PARTITION, PER_BATCH = 4, 250_000, 500


def build(root: Path) -> int:
    for p in range(PARTITIONS):
        with PartitionWriter(root / f"bench-{p}", segment_bytes=64 << 20) as w:
            for b in range(RECORDS_PER_PARTITION // PER_BATCH):
                w.append([{"key": None if i % 10 == 0 else b"key-%08d" % (b * PER_BATCH + i),
                           "value": b"v" * (80 + i % 64), "timestamp": 1_700_000_000_000 + b * PER_BATCH + i,
                           "headers": [("trace", b"%016x" % i), ("src", b"bench")] if i % 3 == 0 else []}
                          for i in range(PER_BATCH)], compression="lz4")
    return PARTITIONS * RECORDS_PER_PARTITION


FULL_SCAN = ["sum(length(key)) as k", "sum(length(value)) as v", "max(offset) as o", "max(timestamp) as t",
             "sum(size(headers)) as h", "count(distinct topic, partition) as p"]


def _best(fn, runs: int = 2) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def table() -> list[dict]:
    """The figures in local[2]."""
    from kafkacodec.pipeline.export import session
    spark = session("local[2]", app="kafkacodec bench")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            return measure(spark, Path(tmp))
    finally:
        spark.stop()


def measure(spark, tmp: Path) -> list[dict]:
    """The figures in `spark`'s session, over files written under `tmp` (a path its executors see)."""
    spark.conf.set("spark.sql.shuffle.partitions", "2")
    root = tmp / "logs"
    records = build(root)
    logs = spark.read.format("kafka-log").option("includeHeaders", "true").load(str(root))
    logs.write.parquet(str(tmp / "parquet"))
    parquet = spark.read.parquet(str(tmp / "parquet"))
    assert logs.count() == parquet.count() == records
    from kafkacodec.pipeline.latest import latest_per_key
    narrow = spark.read.format("kafka-log").schema("topic string, partition int, offset long").load(str(root))
    import arrow_floor
    arrow_floor.write_ipc(root, tmp / "ipc")
    arrow_floor.register(spark)
    floor = spark.read.format("arrow-floor").load(str(tmp / "ipc"))
    lo = RECORDS_PER_PARTITION // 2
    hi = lo + RECORDS_PER_PARTITION // 100
    ranged = (spark.read.format("kafka-log").option("includeHeaders", "true")
              .option("startingOffsets", f'{{"bench": {{"0": {lo}}}}}')
              .option("endingOffsets", f'{{"bench": {{"0": {hi}}}}}').option("assign", '{"bench": [0]}')
              .load(str(root)))
    ranged_parquet = parquet.where(f"partition = 0 and offset >= {lo} and offset < {hi}")
    written = iter(range(1000))
    rows = []
    for workload, job, log_input, parquet_input in (
            ("count()", lambda df: df.count(), logs, parquet),
            ("count() of the same Arrow batches from IPC files, decoding nothing (Spark's side alone)",
             lambda df: df.count(), floor, parquet),
            ("count(), a schema without key, value, headers (batch headers alone)", lambda df: df.count(),
             narrow, parquet),
            ("full scan, every column aggregated", lambda df: df.selectExpr(*FULL_SCAN).collect(), logs,
             parquet),
            ("an offset range of 1% of a partition, every column aggregated",
             lambda df: df.selectExpr(*FULL_SCAN).collect(), ranged, ranged_parquet),
            ("latest value per key (compact-table's query)",
             lambda df: latest_per_key(df).write.format("noop").mode("overwrite").save(), logs, parquet)):
        t_logs = _best(lambda: job(log_input))
        t_parquet = _best(lambda: job(parquet_input))
        rows.append({"workload": workload, "records": records, "kafka_log_rps": records / t_logs,
                     "parquet_rps": records / t_parquet, "slowdown": t_logs / t_parquet})
    # writing: the same rows (read from Parquet) as segments, and as Parquet
    t_logs = _best(lambda: parquet.write.format("kafka-log").option("compression", "lz4").mode("overwrite")
                   .save(str(tmp / f"out-{next(written)}")))
    t_parquet = _best(lambda: parquet.write.mode("overwrite").parquet(str(tmp / f"out-{next(written)}")))
    rows.append({"workload": "write every row (Parquet's rows as lz4 segments, and as Parquet)",
                 "records": records, "kafka_log_rps": records / t_logs, "parquet_rps": records / t_parquet,
                 "slowdown": t_logs / t_parquet})
    return rows
