"""`kafkacodec export`: a log dir to a Parquet (or Delta) table through Spark, with a stage
progress display and a summary of what was read."""
from __future__ import annotations

import os
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from . import jvm
from .registration import register

FORMATS = ("parquet", "delta")
TIMESTAMP_TYPE_CONF = "spark.sql.parquet.outputTimestampType"


def session(master: str | None = None, app: str = "kafkacodec export"):
    """A SparkSession: the given master, or a quiet local one on loopback using every core."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession  # pyspark: an optional extra, loaded once a session is asked for
    builder = SparkSession.builder.appName(app)
    if master is None or master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = (builder.master(master or "local[*]").config("spark.ui.enabled", "false")
                   .config("spark.sql.shuffle.partitions", str(os.cpu_count() or 2)))
    else:
        builder = builder.master(master)
    spark = (jvm.configure(builder).config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


@contextmanager
def stage_progress(spark, console: Console):
    """Spark's stages as progress bars (tasks done of tasks), polled from its status tracker."""
    tracker = spark.sparkContext.statusTracker()
    stop = threading.Event()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True, disable=not console.is_terminal) as bars:
        shown: dict[int, int] = {}

        def poll():
            while not stop.wait(0.25):
                for sid in tracker.getActiveStageIds():
                    info = tracker.getStageInfo(sid)
                    if info is None:
                        continue
                    if sid not in shown:
                        shown[sid] = bars.add_task(f"stage {sid}: {info.name[:40]}", total=info.numTasks)
                    bars.update(shown[sid], completed=info.numCompletedTasks, total=info.numTasks)
                for sid, task in shown.items():
                    info = tracker.getStageInfo(sid)
                    if info is not None and info.numCompletedTasks == info.numTasks:
                        bars.update(task, completed=info.numTasks)

        thread = threading.Thread(target=poll, daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()


@dataclass
class Summary:
    topics: list[tuple[str, int, int, int]] = field(default_factory=list)  # topic, partitions, records, bytes
    corrupt_batches: int = 0
    invalid_bytes: int = 0
    aborted_transactions: int = 0
    damaged: list[tuple[str, int, str]] = field(default_factory=list)
    lag: list[tuple[str, str, int, int]] = field(default_factory=list)  # group, topic, partitions, total lag
    reader: str = ""  # which read the records: "jvm" or "python"
    undecoded: list[tuple[str, int, int, str]] = field(default_factory=list)  # segment, position, offset, why

    def table(self) -> Table:
        t = Table("topic", "partitions", "records", "bytes")
        for topic, parts, records, size in self.topics:
            t.add_row(topic, str(parts), f"{records:,}", f"{size:,}")
        return t

    def lag_table(self) -> Table:
        t = Table("consumer group", "topic", "partitions", "lag (records)")
        for group, topic, parts, lag in self.lag:
            t.add_row(group, topic, str(parts), "?" if lag is None else f"{lag:,}")
        return t


def write_table(df, out: str, fmt: str, mode: str) -> None:
    """Write a DataFrame as Parquet or Delta, saying clearly when Delta is not on the classpath."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}")
    writer = df.write.mode(mode)
    if fmt == "parquet":
        # INT96, Spark's default, carries no statistics: readers could not skip row groups by time
        conf, previous = df.sparkSession.conf, df.sparkSession.conf.get(TIMESTAMP_TYPE_CONF, None)
        conf.set(TIMESTAMP_TYPE_CONF, "TIMESTAMP_MICROS")
        try:
            writer.parquet(out)
        finally:
            conf.unset(TIMESTAMP_TYPE_CONF) if previous is None else conf.set(TIMESTAMP_TYPE_CONF, previous)
        return
    try:
        writer.format("delta").save(out)
    except Exception as err:  # the Delta jars come with the cluster or with --packages
        if "DATA_SOURCE_NOT_FOUND" in str(err) or "Failed to find the data source: delta" in str(err):
            raise RuntimeError("the delta format needs Delta Lake on the Spark classpath (spark-submit "
                               "--packages io.delta:delta-spark_2.13:<version>, or a cluster that has it)") from err
        raise


def export(spark, logdir: str, out: str, fmt: str = "parquet", mode: str = "errorifexists",
           include_headers: bool = True, reader: str = "auto", options: dict | None = None) -> Summary:
    """Read every record, transaction markers included (`isControl`), damaged batches reported as
    rows with `corruption` set, and write the table; then gather the summary from the segments
    table and the written rows. `options`: more of kafka-log's (subscribe, valueFormat, ...)."""
    from .plan import named_topics
    from .reading import read, reader_of  # pyarrow: loaded once a session exists, as pyspark is
    options = dict(options or {})
    df = read(spark, logdir, reader=reader, includeHeaders=include_headers, includeControlRecords=True,
              onCorrupt="report", **options)
    write_table(df, out, fmt, mode)
    written = spark.read.format(fmt).load(out)
    segments = spark.read.format("kafka-log-segments").load(logdir)
    summary = Summary(reader=reader_of(df))
    from pyspark.sql import functions as F  # pyspark: an optional extra (see session)
    per_topic = segments.groupBy("topic").agg(
        F.countDistinct("partition").alias("partitions"), F.sum("sizeBytes").alias("bytes"),
        F.sum("invalidBytes").alias("invalid"), F.sum("abortedTransactions").alias("aborted"))
    chosen = named_topics({k.lower(): v for k, v in options.items()})  # the summary's topics: those read
    sizes = {r["topic"]: (r["partitions"], r["bytes"], r["invalid"], r["aborted"]) for r in per_topic.collect()
             if chosen is None or r["topic"] in chosen}
    counts = {r["topic"]: r["count"] for r in written.where("corruption is null").groupBy("topic").count().collect()}
    for topic in sorted(sizes):
        parts, size, invalid, aborted = sizes[topic]
        summary.topics.append((topic, parts, counts.get(topic, 0), size))
        summary.invalid_bytes += invalid or 0
        summary.aborted_transactions += aborted or 0
    offsets = spark.read.format("kafka-consumer-offsets").load(logdir)
    summary.lag = [(r["group"], r["topic"], r["partitions"], r["lag"]) for r in offsets.groupBy("group", "topic")
                   .agg(F.count("partition").alias("partitions"), F.sum("lag").alias("lag"))
                   .orderBy("group", "topic").collect()]
    bad = written.where("corruption is not null").select("segment", "position", "corruption").collect()
    summary.corrupt_batches = len(bad)
    for name in ("keyError", "valueError"):  # written as they are, with their bytes; said here
        if name in written.columns:
            summary.undecoded += [(r["segment"], r["position"], r["offset"], f"{name[:-5]}: {r[name]}")
                                  for r in written.where(f"{name} is not null").select(
                                      "segment", "position", "offset", name).orderBy("segment", "offset").collect()]
    summary.damaged = [(r["segment"], r["position"], r["corruption"]) for r in bad]
    return summary
