"""Spark figures: rows/s of kafka-log, through the Python data source and through the JVM reader
(count, count through a schema of batch-header columns, a full scan aggregating every column,
sum(length(value)), an offset range, compact-table's latest value per key, and writing) beside the
same jobs over the same rows read from (or written as) Parquet, in the same session and run. The
rates of the offset-range row are of the whole table's records."""
from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path

from kafkacodec.pipeline.jvm import JvmReaderUnavailable
from kafkacodec.pipeline.reading import read
from kafkacodec.storage.change.writer import PartitionWriter

PARTITIONS, RECORDS_PER_PARTITION, PER_BATCH = 4, 250_000, 500


def build(root: Path) -> int:
    for p in range(PARTITIONS):
        rng = random.Random(p)  # random values, which Parquet cannot dictionary-encode either
        with PartitionWriter(root / f"bench-{p}", segment_bytes=64 << 20) as w:
            for b in range(RECORDS_PER_PARTITION // PER_BATCH):
                w.append([{"key": None if i % 10 == 0 else b"key-%08d" % (b * PER_BATCH + i),
                           "value": rng.randbytes(100), "timestamp": 1_700_000_000_000 + b * PER_BATCH + i,
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
    return local_table(measure)


def local_table(measure_in, app: str = "kafkacodec bench") -> list[dict]:
    """`measure_in(spark, tmp)`'s figures in a local[2] session of their own."""
    from kafkacodec.pipeline.export import session
    spark = session("local[2]", app=app)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            return measure_in(spark, Path(tmp))
    finally:
        spark.stop()


def measure(spark, tmp: Path) -> list[dict]:
    """The figures in `spark`'s session, over files written under `tmp` (a path its executors see)."""
    spark.conf.set("spark.sql.shuffle.partitions", "2")
    root = tmp / "logs"
    records = build(root)
    logs = read(spark, root, reader="python", includeHeaders=True)
    logs.write.parquet(str(tmp / "parquet"))
    parquet = spark.read.parquet(str(tmp / "parquet"))
    assert logs.count() == parquet.count() == records
    from kafkacodec.pipeline.latest import latest_per_key
    narrow = read(spark, root, reader="python", schema="topic string, partition int, offset long")
    import arrow_floor
    arrow_floor.write_ipc(root, tmp / "ipc")
    arrow_floor.register(spark)
    floor = spark.read.format("arrow-floor").load(str(tmp / "ipc"))
    lo = RECORDS_PER_PARTITION // 2
    hi = lo + RECORDS_PER_PARTITION // 100
    ranged_options = {"includeHeaders": True, "startingOffsets": f'{{"bench": {{"0": {lo}}}}}',
                      "endingOffsets": f'{{"bench": {{"0": {hi}}}}}', "assign": '{"bench": [0]}'}
    ranged = read(spark, root, reader="python", **ranged_options)
    ranged_parquet = parquet.where(f"partition = 0 and offset >= {lo} and offset < {hi}")
    try:  # the JVM reader of the same files, where this machine can build it
        jvm_logs = read(spark, root, reader="jvm", includeHeaders=True)
        jvm_narrow = read(spark, root, reader="jvm", schema="topic string, partition int, offset long")
        jvm_ranged = read(spark, root, reader="jvm", **ranged_options)
        assert jvm_logs.exceptAll(logs).count() == 0 and logs.exceptAll(jvm_logs).count() == 0
    except JvmReaderUnavailable:
        jvm_logs = jvm_narrow = jvm_ranged = None
    written = iter(range(1000))
    rows = []
    for workload, job, log_input, jvm_input, parquet_input in (
            ("count()", lambda df: df.count(), logs, jvm_logs, parquet),
            ("count() of the same Arrow batches from IPC files, decoding nothing (Spark's side alone)",
             lambda df: df.count(), floor, None, parquet),
            ("count(), a schema without key, value, headers (batch headers alone)", lambda df: df.count(),
             narrow, jvm_narrow, parquet),
            ("full scan, every column aggregated", lambda df: df.selectExpr(*FULL_SCAN).collect(), logs,
             jvm_logs, parquet),
            ("sum(length(value))", lambda df: df.selectExpr("sum(length(value))").collect(), logs, jvm_logs,
             parquet),
            ("an offset range of 1% of a partition, every column aggregated",
             lambda df: df.selectExpr(*FULL_SCAN).collect(), ranged, jvm_ranged, ranged_parquet),
            ("latest value per key (compact-table's query)",
             lambda df: latest_per_key(df).write.format("noop").mode("overwrite").save(), logs, jvm_logs,
             parquet)):
        t_logs = _best(lambda: job(log_input))
        t_parquet = _best(lambda: job(parquet_input))
        t_jvm = _best(lambda: job(jvm_input)) if jvm_input is not None else None
        rows.append({"workload": workload, "records": records, "kafka_log_rps": records / t_logs,
                     "parquet_rps": records / t_parquet, "slowdown": t_logs / t_parquet,
                     "jvm_rps": t_jvm and records / t_jvm, "jvm_slowdown": t_jvm and t_jvm / t_parquet})
    # writing: the same rows (read from Parquet) as segments, and as Parquet
    t_logs = _best(lambda: parquet.write.format("kafka-log").option("compression", "lz4").mode("overwrite")
                   .save(str(tmp / f"out-{next(written)}")))
    t_parquet = _best(lambda: parquet.write.mode("overwrite").parquet(str(tmp / f"out-{next(written)}")))
    rows.append({"workload": "write every row (Parquet's rows as lz4 segments, and as Parquet)",
                 "records": records, "kafka_log_rps": records / t_logs, "parquet_rps": records / t_parquet,
                 "slowdown": t_logs / t_parquet})
    return rows
