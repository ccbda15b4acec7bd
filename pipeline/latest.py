"""The current value of every key per topic-partition, over any amount of data: the Spark side of
storage.state.latest (the same rules: latest offset wins, tombstones delete, no key or control record
is no value; read the source with isolationLevel=read_committed to leave aborted data out)."""
from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from .export import write_table
from .reading import read

KEPT = ["offset", "timestamp", "value"]


def latest_per_key(df: DataFrame) -> DataFrame:
    """One row per (topic, partition, key): the key's latest record, unless that is a tombstone.
    Works on any DataFrame with Kafka's columns (from kafka-log, or from a table written by it);
    `headers` and the batch columns are carried when present."""
    columns = set(df.columns)
    kept = KEPT + [c for c in ("headers", "timestampType", "producerId", "segment", "position") if c in columns]
    keyed = df.where(F.col("key").isNotNull())
    if "isControl" in columns:
        keyed = keyed.where(~F.col("isControl"))
    last = keyed.groupBy("topic", "partition", "key").agg(
        F.max_by(F.struct(*kept), F.col("offset")).alias("last"))
    return last.where(F.col("last.value").isNotNull()).select("topic", "partition", "key", "last.*")


def compact_table(spark, logdir: str, out: str, fmt: str = "parquet", mode: str = "errorifexists",
                  read_committed: bool = True, reader: str = "auto") -> list[tuple[str, int, int]]:
    """Write the latest value of every key of every topic-partition under `logdir` as a table;
    returns (topic, partitions, keys) per topic."""
    df = read(spark, logdir, reader=reader, includeHeaders=True,
              isolationLevel="read_committed" if read_committed else "read_uncommitted")
    write_table(latest_per_key(df), out, fmt, mode)
    written = spark.read.format(fmt).load(out)
    return [(r["topic"], r["partitions"], r["keys"]) for r in written.groupBy("topic").agg(
        F.countDistinct("partition").alias("partitions"), F.count("key").alias("keys")).orderBy("topic").collect()]
